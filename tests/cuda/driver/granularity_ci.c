/* cuMemGetAllocationGranularity kept in the guest (specs/cuda.yaml `cache:
 * session`: its properties, one plain struct, travel by copy and join the
 * key): tests/cuda/settle_ci.sh runs this natively and forwarded over the
 * stand-in driver, requires the same output and counts the answers kept
 * (marked "kept"): the same properties and option asked again; another
 * option, other properties, an error (never kept) and a NULL pointer ask. */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static void ask(const char *what, const CUmemAllocationProp *p, CUmemAllocationGranularity_flags o)
{
    size_t g = 0;
    CUresult e = cuMemGetAllocationGranularity(&g, p, o);
    printf("%s: %d, granularity %zu\n", what, (int)e, e == CUDA_SUCCESS ? g : 0);
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) {
        printf("setup failed\n");
        return 1;
    }
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    ask("minimum", &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    for (int i = 0; i < 3; i++)
        ask("minimum again", &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM); /* kept 1-3 */
    ask("recommended", &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    ask("recommended again", &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED); /* kept 4 */
    CUmemAllocationProp other = p;
    other.location.id = 3;
    ask("device 3", &other, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    ask("device 3 again", &other, CU_MEM_ALLOC_GRANULARITY_MINIMUM); /* an error: asked */
    ask("no properties", NULL, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    ask("exportable", &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    ask("exportable again", &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM); /* kept 5 */
    return 0;
}
