/* Shared by the cuDNN examples: status checks that print cuDNN's own text
 * for a failure, and the exit codes the tests read. */
#ifndef CUDNN_EXAMPLE_COMMON_H
#define CUDNN_EXAMPLE_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

/* The first call that needs a GPU: on a machine without one it fails, and
 * the program says so and exits 2 (tests/cudnn/diff.sh expects that path
 * there, natively and forwarded alike). */
#define CK_FIRST(call)                                                                 \
    do {                                                                               \
        cudnnStatus_t s_ = (call);                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                              \
            printf("%s: %s (%d): no usable GPU, stopping\n", #call,                   \
                   cudnnGetErrorString(s_), (int)s_);                                  \
            return 2;                                                                  \
        }                                                                              \
    } while (0)

#define CK(call)                                                                       \
    do {                                                                               \
        cudnnStatus_t s_ = (call);                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                              \
            printf("line %d: %s: %s (%d)\n", __LINE__, #call, cudnnGetErrorString(s_),  \
                   (int)s_);                                                           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

#define CKRT(call)                                                                     \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("line %d: %s: %s (%d)\n", __LINE__, #call, cudaGetErrorName(e_),     \
                   (int)e_);                                                           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* Largest difference between two float arrays. */
static inline float max_diff(const float *a, const float *b, size_t n)
{
    float d = 0;
    for (size_t i = 0; i < n; i++) d = fmaxf(d, fabsf(a[i] - b[i]));
    return d;
}

static inline int report(const char *what, const float *got, const float *want, size_t n)
{
    float d = max_diff(got, want, n);
    int ok = d < 1e-3f;
    printf("%s: matches the CPU reference: %s\n", what, ok ? "yes" : "NO");
    if (!ok) printf("  largest difference %g\n", (double)d);
    return ok;
}

/* A 2D cross-correlation (cuDNN's CUDNN_CROSS_CORRELATION), NCHW and KCRS,
 * stride 1, dilation 1, padding pad: y = conv(x, w); dx = conv^T(dy, w);
 * dw = corr(x, dy). */
static inline void ref_conv(int n, int c, int h, int w, int k, int r, int s, int pad, int oh, int ow,
                            const float *x, const float *f, float *y)
{
    for (int in = 0; in < n; in++)
        for (int ik = 0; ik < k; ik++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    float acc = 0;
                    for (int ic = 0; ic < c; ic++)
                        for (int ir = 0; ir < r; ir++)
                            for (int is = 0; is < s; is++) {
                                int iy = oy - pad + ir, ix = ox - pad + is;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                acc += x[((in * c + ic) * h + iy) * w + ix] *
                                       f[((ik * c + ic) * r + ir) * s + is];
                            }
                    y[((in * k + ik) * oh + oy) * ow + ox] = acc;
                }
}

static inline void ref_conv_bwd(int n, int c, int h, int w, int k, int r, int s, int pad, int oh,
                                int ow, const float *x, const float *f, const float *dy,
                                float *dx, float *dw)
{
    for (int i = 0; i < n * c * h * w; i++) dx[i] = 0;
    for (int i = 0; i < k * c * r * s; i++) dw[i] = 0;
    for (int in = 0; in < n; in++)
        for (int ik = 0; ik < k; ik++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    float g = dy[((in * k + ik) * oh + oy) * ow + ox];
                    for (int ic = 0; ic < c; ic++)
                        for (int ir = 0; ir < r; ir++)
                            for (int is = 0; is < s; is++) {
                                int iy = oy - pad + ir, ix = ox - pad + is;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                dx[((in * c + ic) * h + iy) * w + ix] +=
                                    g * f[((ik * c + ic) * r + ir) * s + is];
                                dw[((ik * c + ic) * r + ir) * s + is] +=
                                    g * x[((in * c + ic) * h + iy) * w + ix];
                            }
                }
}

#endif
