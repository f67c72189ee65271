/* What the runtime says of an address, kept in the guest (specs/cudart.yaml:
 * cudaPointerGetAttributes, `cache: {group: pointers, thread_state:
 * [device]}`): tests/cuda/settle_ci.sh runs this natively and through the
 * runtime stub against tests/cuda/fake_device.c (which knows its live
 * cudaMalloc allocations) and requires the same output and exactly the
 * answers marked "kept" given in the guest: asked again of the same address
 * on the same device, kept; another address, or anything asked after a
 * call that makes or frees memory, asked. A kept answer after cudaFree
 * would print device memory where native prints what the address is now. */
#include <stdio.h>

#include <cuda_runtime_api.h>

static void show(const char *what, const void *p)
{
    struct cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        printf("%s: %d\n", what, (int)e);
        return;
    }
    printf("%s: type %d, device %d, device pointer %s, host pointer %s\n", what, (int)a.type,
           a.device, a.devicePointer == p ? "itself" : a.devicePointer ? "another" : "none",
           a.hostPointer == p ? "itself" : a.hostPointer ? "another" : "none");
}

int main(void)
{
    char *a = NULL, *b = NULL;
    if (cudaSetDevice(0) || cudaMalloc((void **)&a, 4096)) {
        printf("setup failed\n");
        return 1;
    }
    show("A", a);
    show("A again", a);                           /* kept 1 */
    show("A+16", a + 16);                         /* another address: asked */
    show("A+16 again", a + 16);                   /* kept 2 */
    printf("cudaMalloc(B): %d\n", (int)cudaMalloc((void **)&b, 8192));
    show("A after another allocation", a);        /* asked */
    show("A again", a);                           /* kept 3 */
    printf("cudaFree(A): %d\n", (int)cudaFree(a));
    show("A after cudaFree", a);                  /* asked: no allocation now */
    show("B", b);
    show("B again", b);                           /* kept 4 */
    printf("cudaFree(B): %d\n", (int)cudaFree(b));
    show("B after cudaFree", b);                  /* asked */
    return 0;
}
