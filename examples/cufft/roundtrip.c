/* cuFFT round trips over the runtime's memory and a stream of the runtime:
 * (1) a batched 1D C2C transform, forward then inverse, the forward result
 * checked against a DFT on the CPU and the round trip against the input;
 * (2) a 2D R2C then C2R through cufftMakePlanMany with a work area of the
 * program's own (cufftSetAutoAllocation 0, cufftGetSize, cufftSetWorkArea).
 * Prints the values it checks; a line with NO is a mismatch (exit 1). */
#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846 /* not in strict C11's math.h */
#endif
#include <stdlib.h>

#include "common.h"

#define N 16
#define BATCH 2
#define NX 8
#define NY 6

static int check(const char *what, double err, double tol)
{
    printf("%s: max error %s %g: %s\n", what, err <= tol ? "<=" : ">", tol, err <= tol ? "OK" : "NO");
    return err <= tol;
}

int main(void)
{
    int ok = 1, version = 0, major = 0;
    CKF(cufftGetVersion(&version));
    CKF(cufftGetProperty(MAJOR_VERSION, &major));
    printf("cuFFT version %d (major %d)\n", version, major);

    cufftComplex h[BATCH * N], f[BATCH * N], b[BATCH * N];
    for (int i = 0; i < BATCH * N; i++) {
        h[i].x = (float)((i * 7) % 11) - 5.0f;
        h[i].y = (float)((i * 3) % 5) - 2.0f;
    }
    cufftComplex *d = NULL;
    CK_FIRST(cudaMalloc((void **)&d, sizeof h));
    cudaStream_t stream;
    CKR(cudaStreamCreate(&stream));
    CKR(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));

    /* (1) C2C, batched, on the program's stream */
    cufftHandle plan;
    CKF(cufftPlan1d(&plan, N, CUFFT_C2C, BATCH));
    CKF(cufftSetStream(plan, stream));
    CKF(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
    CKR(cudaStreamSynchronize(stream));
    CKR(cudaMemcpy(f, d, sizeof f, cudaMemcpyDeviceToHost));
    double err = 0;
    for (int bt = 0; bt < BATCH; bt++)
        for (int k = 0; k < N; k++) {
            double re = 0, im = 0;
            for (int j = 0; j < N; j++) {
                double a = -2.0 * M_PI * j * k / N;
                re += h[bt * N + j].x * cos(a) - h[bt * N + j].y * sin(a);
                im += h[bt * N + j].x * sin(a) + h[bt * N + j].y * cos(a);
            }
            err = fmax(err, fmax(fabs(re - f[bt * N + k].x), fabs(im - f[bt * N + k].y)));
        }
    printf("C2C forward, batch 0: X[0] = (%.3f, %.3f), X[1] = (%.3f, %.3f)\n", f[0].x, f[0].y,
           f[1].x, f[1].y);
    ok &= check("C2C forward against the CPU's DFT", err, 1e-3);
    CKF(cufftExecC2C(plan, d, d, CUFFT_INVERSE));
    CKR(cudaStreamSynchronize(stream));
    CKR(cudaMemcpy(b, d, sizeof b, cudaMemcpyDeviceToHost));
    err = 0;
    for (int i = 0; i < BATCH * N; i++)
        err = fmax(err, fmax(fabs(b[i].x / N - h[i].x), fabs(b[i].y / N - h[i].y)));
    ok &= check("C2C round trip (inverse / N) against the input", err, 1e-4);
    CKF(cufftDestroy(plan));

    /* (2) R2C then C2R, 2D, through MakePlanMany and a work area of our own */
    float r[NX * NY], rb[NX * NY];
    for (int i = 0; i < NX * NY; i++) r[i] = (float)((i * 5) % 9) - 4.0f;
    float *dr = NULL;
    cufftComplex *dc = NULL;
    CKR(cudaMalloc((void **)&dr, sizeof r));
    CKR(cudaMalloc((void **)&dc, sizeof(cufftComplex) * NX * (NY / 2 + 1)));
    CKR(cudaMemcpy(dr, r, sizeof r, cudaMemcpyHostToDevice));
    int n[2] = {NX, NY};
    cufftHandle fwd, inv;
    size_t ws_f = 0, ws_i = 0, ws = 0;
    CKF(cufftCreate(&fwd));
    CKF(cufftCreate(&inv));
    CKF(cufftSetAutoAllocation(fwd, 0));
    CKF(cufftSetAutoAllocation(inv, 0));
    CKF(cufftMakePlanMany(fwd, 2, n, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C, 1, &ws_f));
    CKF(cufftMakePlanMany(inv, 2, n, NULL, 1, 0, NULL, 1, 0, CUFFT_C2R, 1, &ws_i));
    CKF(cufftGetSize(fwd, &ws));
    printf("R2C work size reported by MakePlanMany and GetSize agree: %s\n",
           ws == ws_f ? "OK" : "NO");
    ok &= ws == ws_f;
    size_t wmax = ws_f > ws_i ? ws_f : ws_i;
    void *work = NULL;
    CKR(cudaMalloc(&work, wmax ? wmax : 1));
    CKF(cufftSetWorkArea(fwd, work));
    CKF(cufftSetWorkArea(inv, work));
    CKF(cufftSetStream(fwd, stream));
    CKF(cufftSetStream(inv, stream));
    CKF(cufftExecR2C(fwd, dr, dc));
    cufftComplex spec[NX * (NY / 2 + 1)];
    CKR(cudaStreamSynchronize(stream));
    CKR(cudaMemcpy(spec, dc, sizeof spec, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < NX * NY; i++) sum += r[i];
    printf("R2C: DC term (%.3f, %.3f), sum of the input %.3f\n", spec[0].x, spec[0].y, sum);
    ok &= check("R2C DC term against the sum", fabs(spec[0].x - sum) + fabs(spec[0].y), 1e-3);
    CKF(cufftExecC2R(inv, dc, dr));
    CKR(cudaStreamSynchronize(stream));
    CKR(cudaMemcpy(rb, dr, sizeof rb, cudaMemcpyDeviceToHost));
    err = 0;
    for (int i = 0; i < NX * NY; i++) err = fmax(err, fabs(rb[i] / (NX * NY) - r[i]));
    ok &= check("R2C/C2R round trip against the input", err, 1e-4);
    CKF(cufftDestroy(fwd));
    CKF(cufftDestroy(inv));
    CKR(cudaFree(work));
    CKR(cudaFree(dr));
    CKR(cudaFree(dc));
    CKR(cudaFree(d));
    CKR(cudaStreamDestroy(stream));
    printf("every result matched: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
