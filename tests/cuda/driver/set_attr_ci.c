/* A function's attribute set again to the value it has costs no round trip
 * (specs/cuda/set_attr.c): tests/cuda/settle_ci.sh runs this natively and
 * through the driver stub against tests/cuda/driver/fake_driver.c, requires
 * the same output, and counts the cuKernelSetAttribute calls answered in the
 * guest (marked "kept"): a repeat of a successful set is kept; a set through
 * the kernel's CUfunction, a failed set and the library's unload make the
 * next one go to the driver, whose answer (and the attribute it reads back)
 * must be the native one. The attribute asked twice in a row: the second
 * answer is the guest's (6 of each kind), and every first one after a set
 * the driver's, the value native. */
#include <stdio.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n"
                            ".version 8.0\n.target sm_80\n.address_size 64\n";
static const CUfunction_attribute max_dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;

static void set_kernel(const char *what, CUkernel k, CUdevice d, int v)
{
    printf("%s: cuKernelSetAttribute(%d) %d\n", what, v,
           (int)cuKernelSetAttribute(max_dyn, v, k, d));
}

static void show(const char *what, CUkernel k, CUfunction f, CUdevice d)
{
    int kv = -1, fv = -1, blocks = -1;
    CUresult ke = cuKernelGetAttribute(&kv, max_dyn, k, d),
             fe = cuFuncGetAttribute(&fv, max_dyn, f);
    CUresult oe = cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 65536);
    int kv2 = -1, fv2 = -1; /* asked again: answered in the guest (cache group functions) */
    CUresult ke2 = cuKernelGetAttribute(&kv2, max_dyn, k, d), fe2 = cuFuncGetAttribute(&fv2, max_dyn, f);
    printf("  %s: kernel's limit %d (%d), function's %d (%d), 128 threads with 64 KiB: %d blocks "
           "(%d); again %d (%d), %d (%d)\n",
           what, kv, (int)ke, fv, (int)fe, blocks, (int)oe, kv2, (int)ke2, fv2, (int)fe2);
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0) ||
        cuLibraryGetKernel(&k, lib, "_Z2k1Pi") || cuKernelGetFunction(&f, k)) {
        printf("setup failed\n");
        return 1;
    }
    show("at first", k, f, d);
    set_kernel("a training step's set", k, d, 65536);
    for (int i = 0; i < 5; i++)
        set_kernel("the next step's", k, d, 65536); /* kept 1-5 */
    show("after six", k, f, d);
    set_kernel("another value", k, d, 98304);
    show("after it", k, f, d);
    set_kernel("back", k, d, 65536);
    set_kernel("back again", k, d, 65536); /* kept 6 */
    set_kernel("more than the device has", k, d, 1 << 30);
    set_kernel("after the refusal", k, d, 65536); /* asked: a refusal drops what was kept */
    set_kernel("and again", k, d, 65536);         /* kept 7 */
    printf("through the kernel's function: cuFuncSetAttribute(32768) %d\n",
           (int)cuFuncSetAttribute(f, max_dyn, 32768));
    show("after it", k, f, d);
    set_kernel("the kernel's old value", k, d, 65536); /* asked: the function's set changed it */
    show("after it", k, f, d);
    printf("the function's again: %d\n", (int)cuFuncSetAttribute(f, max_dyn, 32768));
    set_kernel("the kernel's once more", k, d, 32768);
    set_kernel("and again", k, d, 32768); /* kept 8 */
    show("after it", k, f, d);
    set_kernel("another device", k, 1, 32768);
    set_kernel("a NULL kernel", NULL, d, 32768);
    printf("cuLibraryUnload: %d\n", (int)cuLibraryUnload(lib));
    set_kernel("after the unload", k, d, 32768); /* asked: the driver refuses it */
    set_kernel("and again", k, d, 32768);        /* asked: a refusal is not kept */
    return 0;
}
