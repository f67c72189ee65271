/* The legacy API's layers a small CNN uses, each against a CPU reference:
 * activation (ReLU) forward and backward, max pooling forward, softmax over
 * channels, batch normalization forward in training (batch statistics,
 * running averages, saved mean and inverse variance) and inference mode.
 * Device memory from cudaMalloc, alpha/beta as host floats. */
#include <string.h>

#include "common.h"

enum { N = 2, C = 3, H = 4, W = 4 };
#define NX (N * C * H * W)

static int upload(float **g, const float *h, size_t n)
{
    if (cudaMalloc((void **)g, n * 4) != cudaSuccess) return 0;
    return cudaMemcpy(*g, h, n * 4, cudaMemcpyHostToDevice) == cudaSuccess;
}

static int download(float *h, const float *g, size_t n)
{
    return cudaMemcpy(h, g, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess;
}

int main(void)
{
    cudnnHandle_t h;
    CK_FIRST(cudnnCreate(&h));
    cudnnTensorDescriptor_t xd, pd, bnd;
    CK(cudnnCreateTensorDescriptor(&xd));
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    float x[NX], y[NX], r[NX], dy[NX];
    for (int i = 0; i < NX; i++) x[i] = (float)((i * 7) % 13) * 0.25f - 1.5f;
    for (int i = 0; i < NX; i++) dy[i] = (float)((i * 5) % 11) * 0.5f - 2.0f;
    float *gx, *gy, *gdy, *gdx;
    if (!upload(&gx, x, NX) || !upload(&gy, y, NX) || !upload(&gdy, dy, NX) || !upload(&gdx, dy, NX)) {
        printf("device memory: NO\n");
        return 1;
    }
    float one = 1, zero = 0;
    int ok = 1;

    /* ReLU forward and backward */
    cudnnActivationDescriptor_t act;
    CK(cudnnCreateActivationDescriptor(&act));
    CK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    CK(cudnnActivationForward(h, act, &one, xd, gx, &zero, xd, gy));
    CKRT(cudaDeviceSynchronize());
    if (!download(y, gy, NX)) return 1;
    for (int i = 0; i < NX; i++) r[i] = x[i] > 0 ? x[i] : 0;
    ok &= report("relu forward", y, r, NX);
    CK(cudnnActivationBackward(h, act, &one, xd, gy, xd, gdy, xd, gx, &zero, xd, gdx));
    CKRT(cudaDeviceSynchronize());
    float dx[NX];
    if (!download(dx, gdx, NX)) return 1;
    for (int i = 0; i < NX; i++) r[i] = x[i] > 0 ? dy[i] : 0;
    ok &= report("relu backward", dx, r, NX);

    /* 2x2 max pooling, stride 2 */
    cudnnPoolingDescriptor_t pool;
    CK(cudnnCreatePoolingDescriptor(&pool));
    CK(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    int pn, pc, ph, pw;
    CK(cudnnGetPooling2dForwardOutputDim(pool, xd, &pn, &pc, &ph, &pw));
    printf("pooled: %d x %d x %d x %d\n", pn, pc, ph, pw);
    CK(cudnnCreateTensorDescriptor(&pd));
    CK(cudnnSetTensor4dDescriptor(pd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, pn, pc, ph, pw));
    CK(cudnnPoolingForward(h, pool, &one, xd, gx, &zero, pd, gy));
    CKRT(cudaDeviceSynchronize());
    int np = pn * pc * ph * pw;
    if (!download(y, gy, (size_t)np)) return 1;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < ph; i++)
                for (int j = 0; j < pw; j++) {
                    float m = -1e30f;
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2; b++)
                            m = fmaxf(m, x[((n * C + c) * H + 2 * i + a) * W + 2 * j + b]);
                    r[((n * C + c) * ph + i) * pw + j] = m;
                }
    ok &= report("max pooling forward", y, r, (size_t)np);

    /* softmax over the channels of each pixel */
    CK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, xd, gx, &zero, xd, gy));
    CKRT(cudaDeviceSynchronize());
    if (!download(y, gy, NX)) return 1;
    for (int n = 0; n < N; n++)
        for (int p = 0; p < H * W; p++) {
            float m = -1e30f, s = 0;
            for (int c = 0; c < C; c++) m = fmaxf(m, x[(n * C + c) * H * W + p]);
            for (int c = 0; c < C; c++) s += expf(x[(n * C + c) * H * W + p] - m);
            for (int c = 0; c < C; c++) r[(n * C + c) * H * W + p] = expf(x[(n * C + c) * H * W + p] - m) / s;
        }
    ok &= report("softmax forward (channels)", y, r, NX);

    /* batch normalization, spatial: per channel over N, H, W */
    CK(cudnnCreateTensorDescriptor(&bnd));
    CK(cudnnDeriveBNTensorDescriptor(bnd, xd, CUDNN_BATCHNORM_SPATIAL));
    float scale[C] = {1.0f, 0.5f, 2.0f}, bias[C] = {0.0f, 1.0f, -1.0f}, rm[C] = {0.5f, 0.0f, -0.5f},
          rv[C] = {1.0f, 2.0f, 0.5f}, sm[C], siv[C], mean[C], var[C];
    float *gscale, *gbias, *grm, *grv, *gsm, *gsiv;
    if (!upload(&gscale, scale, C) || !upload(&gbias, bias, C) || !upload(&grm, rm, C) || !upload(&grv, rv, C) ||
        !upload(&gsm, sm, C) || !upload(&gsiv, siv, C))
        return 1;
    /* the *Ex workspace query with its optional descriptors absent (NULL
     * zDesc and activationDesc: PyTorch's way), then with an activation */
    size_t bnws = 1;
    cudnnStatus_t st = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, xd, NULL, xd, bnd, NULL, &bnws);
    printf("batchnorm Ex workspace, no z, no activation: %s%s\n", cudnnGetErrorString(st),
           st == CUDNN_STATUS_SUCCESS && bnws >= ((size_t)1 << 30) ? " (absurd size)" : "");
    bnws = 1;
    st = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                  CUDNN_BATCHNORM_OPS_BN_ACTIVATION, xd, NULL, xd,
                                                                  bnd, act, &bnws);
    printf("batchnorm Ex workspace with an activation: %s%s\n", cudnnGetErrorString(st),
           st == CUDNN_STATUS_SUCCESS && bnws >= ((size_t)1 << 30) ? " (absurd size)" : "");
    const double eps = 1e-5, factor = 0.25;
    CK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, gx, xd, gy, bnd, gscale,
                                              gbias, factor, grm, grv, eps, gsm, gsiv));
    CKRT(cudaDeviceSynchronize());
    float got_rm[C], got_rv[C];
    if (!download(y, gy, NX) || !download(got_rm, grm, C) || !download(got_rv, grv, C) || !download(sm, gsm, C) ||
        !download(siv, gsiv, C))
        return 1;
    const int m = N * H * W;
    float want_rm[C], want_rv[C], want_siv[C];
    for (int c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) s += x[(n * C + c) * H * W + p];
        mean[c] = (float)(s / m);
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) {
                double d = x[(n * C + c) * H * W + p] - mean[c];
                q += d * d;
            }
        var[c] = (float)(q / m);
        want_siv[c] = (float)(1.0 / sqrt(var[c] + eps));
        want_rm[c] = (float)((1 - factor) * rm[c] + factor * mean[c]);
        want_rv[c] = (float)((1 - factor) * rv[c] + factor * q / (m - 1)); /* unbiased */
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) {
                int i = (n * C + c) * H * W + p;
                r[i] = scale[c] * (x[i] - mean[c]) * want_siv[c] + bias[c];
            }
    }
    ok &= report("batch norm training y", y, r, NX);
    ok &= report("batch norm saved mean", sm, mean, C);
    ok &= report("batch norm saved inverse variance", siv, want_siv, C);
    ok &= report("batch norm running mean", got_rm, want_rm, C);
    ok &= report("batch norm running variance", got_rv, want_rv, C);
    CK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, gx, xd, gy, bnd, gscale,
                                               gbias, grm, grv, eps));
    CKRT(cudaDeviceSynchronize());
    if (!download(y, gy, NX)) return 1;
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) {
                int i = (n * C + c) * H * W + p;
                r[i] = (float)(scale[c] * (x[i] - got_rm[c]) / sqrt(got_rv[c] + eps) + bias[c]);
            }
    ok &= report("batch norm inference y", y, r, NX);

    float *all[] = {gx, gy, gdy, gdx, gscale, gbias, grm, grv, gsm, gsiv};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) CKRT(cudaFree(all[i]));
    CK(cudnnDestroyActivationDescriptor(act));
    CK(cudnnDestroyPoolingDescriptor(pool));
    CK(cudnnDestroyTensorDescriptor(bnd));
    CK(cudnnDestroyTensorDescriptor(pd));
    CK(cudnnDestroyTensorDescriptor(xd));
    CK(cudnnDestroy(h));
    return ok ? 0 : 1;
}
