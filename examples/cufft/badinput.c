/* Bad input to cuFFT: a forged plan, a destroyed plan, memory the client
 * never allocated, a work area smaller than the plan needs. Each must give
 * cuFFT's own error value (the stub's refusals use CUFFT_INVALID_PLAN and
 * CUFFT_INVALID_VALUE), never a crash; prints one line per case.
 *   badinput hold      allocates, prints the address, holds it until stdin ends
 *   badinput ADDRESS   transforms at another client's address (and has no
 *                      memory of its own) (tests/fftrand/foreign.sh) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static void show(const char *what, const char *fn, cufftResult r)
{
    printf("%s: %s: %d\n", what, fn, (int)r);
}

static int hold(void)
{
    void *p = NULL;
    CK_FIRST(cudaMalloc(&p, 4096));
    printf("%p\n", p);
    fflush(stdout);
    while (getchar() != EOF) {
    }
    CKR(cudaFree(p));
    return 0;
}

static int foreign(const char *address)
{
    cufftComplex *p = (cufftComplex *)(uintptr_t)strtoull(address, NULL, 16);
    cufftHandle plan;
    CKF(cufftPlan1d(&plan, 64, CUFFT_C2C, 1));
    show("another client's memory", "cufftExecC2C", cufftExecC2C(plan, p, p, CUFFT_FORWARD));
    CKF(cufftDestroy(plan));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) return strcmp(argv[1], "hold") ? foreign(argv[1]) : hold();
    cufftComplex *d = NULL;
    CK_FIRST(cudaMalloc((void **)&d, 64 * sizeof *d));
    cufftHandle forged = 0x4242;
    show("forged plan", "cufftExecC2C", cufftExecC2C(forged, d, d, CUFFT_FORWARD));
    show("forged plan", "cufftSetStream", cufftSetStream(forged, 0));
    show("forged plan", "cufftDestroy", cufftDestroy(forged));
    show("negative plan", "cufftGetSize", cufftGetSize(-1, &(size_t){0}));

    cufftHandle plan;
    CKF(cufftCreate(&plan));
    CKF(cufftSetAutoAllocation(plan, 0));
    size_t ws = 0;
    CKF(cufftMakePlan1d(plan, 1024 * 1024 + 7, CUFFT_C2C, 1, &ws)); /* a size that needs a work area */
    /* memory no allocation of this client holds (a host address) */
    static cufftComplex host[64];
    show("unallocated memory", "cufftExecC2C", cufftExecC2C(plan, host, host, CUFFT_FORWARD));
    /* a work area of one byte for a plan that needs ws bytes */
    void *small = NULL;
    CKR(cudaMalloc(&small, 1));
    show("work area too small", "cufftSetWorkArea", ws > 1 ? cufftSetWorkArea(plan, small) : CUFFT_INVALID_VALUE);
    show("real plan", "cufftGetSize", cufftGetSize(plan, &ws));
    CKF(cufftDestroy(plan));
    show("destroyed plan", "cufftGetSize", cufftGetSize(plan, &ws));
    CKR(cudaFree(small));
    CKR(cudaFree(d));
    printf("every bad input failed cleanly: yes\n");
    return 0;
}
