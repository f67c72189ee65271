/* A function's attribute set again to the value it has costs no round trip
 * through the runtime stub (specs/cudart/guest.c, runtime/setmemo.c):
 * tests/cuda/settle_ci.sh runs this natively and forwarded over the
 * stand-in device (fake_launch_limits.c keeps the functions' limits),
 * requires the same output, and counts the cudaFuncSetAttribute calls
 * answered in the guest (marked "kept"): a repeat of a successful set is
 * kept, a set of another function leaves it kept, another value, a refusal
 * and cudaDeviceReset make the next one go to the runtime. */
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "hand_fatbin.h"

static void k_add(int *p, int n)
{
    (void)p, (void)n;
}
static void k_heavy(int *p, int n)
{
    (void)p, (void)n;
}
static void k_nobody(int *p, int n)
{
    (void)p, (void)n;
}

static void set(const char *what, void (*k)(int *, int), int v)
{
    cudaError_t e =
        cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, v);
    printf("%s: cudaFuncSetAttribute(%d) %s\n", what, v, cudaGetErrorName(e));
}

static void show(const char *what, void (*k)(int *, int))
{
    struct cudaFuncAttributes a = {0};
    cudaError_t e = cudaFuncGetAttributes(&a, (const void *)k);
    printf("  %s: max dynamic shared memory %d (%s)\n", what, a.maxDynamicSharedSizeBytes,
           cudaGetErrorName(e));
}

static void **register_kernels(void)
{
    void **h = hand_fatbin_begin();
    __cudaRegisterFunction(h, (const char *)k_add, (char *)"k_add", "k_add", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(h, (const char *)k_heavy, (char *)"k_heavy", "k_heavy", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);
    return h;
}

int main(void)
{
    register_kernels();
    printf("cudaSetDevice(0): %s\n", cudaGetErrorName(cudaSetDevice(0)));
    show("at first", k_add);
    set("before a launch", k_add, 65536);
    for (int i = 0; i < 5; i++)
        set("before the next", k_add, 65536); /* kept 1-5 */
    show("after six", k_add);
    set("another function", k_heavy, 32768);
    set("the first again", k_add, 65536); /* kept 6 */
    show("the other", k_heavy);
    set("another value", k_add, 98304);
    show("after it", k_add);
    set("back", k_add, 65536);
    set("back again", k_add, 65536); /* kept 7 */
    set("more than the device has", k_add, 1 << 30);
    set("after the refusal", k_add, 65536); /* asked */
    set("and again", k_add, 65536);         /* kept 8 */
    set("a function nobody registered", k_nobody, 65536);
    set("and again", k_nobody, 65536); /* a refusal is not kept */
    printf("cudaDeviceReset: %s\n", cudaGetErrorName(cudaDeviceReset()));
    set("after the reset", k_add, 65536); /* asked: the reset forgot what functions took */
    show("after it", k_add);
    return 0;
}
