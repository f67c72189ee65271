/* Results of reductions in both pointer modes: cublasSdot, cublasIsamax and
 * cublasSnrm2 write to a host variable in host pointer mode and to device
 * memory in device pointer mode (fetched with cublasGetVector); cublasSrotg
 * reads and writes its four scalars where the mode says. */
#include <math.h>

#include "common.h"

enum { N = 7 };

int main(void)
{
    cublasHandle_t h;
    CK_FIRST(cublasCreate_v2(&h));
    CK(cublasInit());
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i * i % 5) - 2.0f;
        y[i] = 0.5f * (float)(N - i);
    }
    float *dx, *dy, *dres;
    int *dimax;
    CK(cublasAlloc(N, sizeof(float), (void **)&dx));
    CK(cublasAlloc(N, sizeof(float), (void **)&dy));
    CK(cublasAlloc(4, sizeof(float), (void **)&dres));
    CK(cublasAlloc(1, sizeof(int), (void **)&dimax));
    CK(cublasSetVector(N, sizeof(float), x, 1, dx, 1));
    CK(cublasSetVector(N, sizeof(float), y, 1, dy, 1));

    /* host pointer mode */
    float dot = 0, nrm = 0;
    int imax = 0;
    CK(cublasSdot_v2(h, N, dx, 1, dy, 1, &dot));
    CK(cublasIsamax_v2(h, N, dx, 1, &imax));
    CK(cublasSnrm2_v2(h, N, dx, 1, &nrm));
    printf("host mode:   dot %.4f  isamax %d  nrm2 %.4f\n", dot, imax, nrm);
    float a = 3.0f, b = 4.0f, c = 0, s = 0;
    CK(cublasSrotg_v2(h, &a, &b, &c, &s));
    printf("host mode:   rotg r %.4f z %.4f c %.4f s %.4f\n", a, b, c, s);

    /* device pointer mode */
    CK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    CK(cublasSdot_v2(h, N, dx, 1, dy, 1, dres));
    CK(cublasIsamax_v2(h, N, dx, 1, dimax));
    CK(cublasSnrm2_v2(h, N, dx, 1, dres + 1));
    float dvals[4];
    int dimaxv = 0;
    CK(cublasGetVector(2, sizeof(float), dres, 1, dvals, 1));
    CK(cublasGetVector(1, sizeof(int), dimax, 1, &dimaxv, 1));
    float ddot = dvals[0], dnrm = dvals[1];
    printf("device mode: dot %.4f  isamax %d  nrm2 %.4f\n", ddot, dimaxv, dnrm);
    float ab[4] = {3.0f, 4.0f, 0, 0};
    CK(cublasSetVector(4, sizeof(float), ab, 1, dres, 1));
    CK(cublasSrotg_v2(h, dres, dres + 1, dres + 2, dres + 3));
    CK(cublasGetVector(4, sizeof(float), dres, 1, dvals, 1));
    printf("device mode: rotg r %.4f z %.4f c %.4f s %.4f\n", dvals[0], dvals[1], dvals[2],
           dvals[3]);

    /* the CPU's answers */
    double rdot = 0, rn = 0;
    int rimax = 1;
    for (int i = 0; i < N; i++) {
        rdot += (double)x[i] * y[i];
        rn += (double)x[i] * x[i];
        if (fabsf(x[i]) > fabsf(x[rimax - 1])) rimax = i + 1;
    }
    int ok = fabs(dot - rdot) < 1e-3 && fabs(ddot - rdot) < 1e-3 && imax == rimax &&
             dimaxv == rimax && fabs(nrm - sqrt(rn)) < 1e-3 && fabs(dnrm - sqrt(rn)) < 1e-3 &&
             fabsf(a - 5.0f) < 1e-4f && fabsf(dvals[0] - 5.0f) < 1e-4f && fabsf(c - dvals[2]) < 1e-6f;
    printf("CPU:         dot %.4f  isamax %d  nrm2 %.4f\n", rdot, rimax, sqrt(rn));
    printf("results match the CPU and each other: %s\n", ok ? "yes" : "NO");
    CK(cublasFree(dx));
    CK(cublasFree(dy));
    CK(cublasFree(dres));
    CK(cublasFree(dimax));
    CK(cublasDestroy_v2(h));
    CK(cublasShutdown());
    return ok ? 0 : 1;
}
