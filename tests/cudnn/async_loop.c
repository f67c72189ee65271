/* Queued cuDNN calls (specs/cudnn.yaml: api.errors.async next_call):
 * LOOPS iterations of cudnnSetStream + cudnnConvolutionForward on
 * cudaMalloc memory (y += conv(x, w) each time, algorithm 0, no
 * workspace), then y checked against the CPU; then one convolution cuDNN
 * refuses (an algorithm that needs a workspace, given none:
 * CUDNN_STATUS_BAD_PARAM) and the next sync cuDNN call. stdout is the same
 * natively and forwarded: the bad call's error (returned by the call
 * natively, by the next call when it was queued) and that it is reported
 * once. stderr says which call returned it, for tests/cuda/async_rt.sh. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

enum { N = 1, C = 2, H = 5, W = 4, K = 3, R = 3, S = 3, PAD = 1, LOOPS = 50 };

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(void)
{
    cudnnHandle_t h;
    cudnnStatus_t s0 = cudnnCreate(&h);
    if (s0 != CUDNN_STATUS_SUCCESS) {
        printf("cudnnCreate: %s: no usable GPU, stopping\n", cudnnGetErrorString(s0));
        return 2;
    }
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CK(cudnnCreateTensorDescriptor(&xd));
    CK(cudnnCreateTensorDescriptor(&yd));
    CK(cudnnCreateFilterDescriptor(&wd));
    CK(cudnnCreateConvolutionDescriptor(&cd));
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    CK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W));
    CK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    CK(cudnnSetConvolution2dDescriptor(cd, PAD, PAD, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT));
    enum { NX = N * C * H * W, NW = K * C * R * S, NY = N * K * H * W };
    float x[NX], w[NW], y[NY] = {0}, want[NY] = {0};
    for (int i = 0; i < NX; i++) x[i] = (float)((i * 7) % 5) - 2.0f;
    for (int i = 0; i < NW; i++) w[i] = (float)((i * 5) % 3) - 1.0f;
    for (int k = 0; k < K; k++) /* small integers: exact in float */
        for (int oy = 0; oy < H; oy++)
            for (int ox = 0; ox < W; ox++) {
                float s = 0;
                for (int c = 0; c < C; c++)
                    for (int r = 0; r < R; r++)
                        for (int q = 0; q < S; q++) {
                            int iy = oy - PAD + r, ix = ox - PAD + q;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            s += x[(c * H + iy) * W + ix] * w[((k * C + c) * R + r) * S + q];
                        }
                want[(k * H + oy) * W + ox] = LOOPS * s;
            }
    float *gx, *gw, *gy;
    CK(cudaMalloc((void **)&gx, sizeof x));
    CK(cudaMalloc((void **)&gw, sizeof w));
    CK(cudaMalloc((void **)&gy, sizeof y));
    CK(cudaMemcpy(gx, x, sizeof x, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gw, w, sizeof w, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gy, y, sizeof y, cudaMemcpyHostToDevice));
    float one = 1.0f;
    /* what a framework does per operation: the stream, then the convolution */
    for (int i = 0; i < LOOPS; i++) {
        CK(cudnnSetStream(h, st));
        CK(cudnnConvolutionForward(h, &one, xd, gx, wd, gw, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                   NULL, 0, &one, yd, gy));
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(y, gy, sizeof y, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < NY; i++) ok &= y[i] == want[i];
    printf("%d x (cudnnSetStream, cudnnConvolutionForward): y matches the CPU: %s\n", LOOPS,
           ok ? "yes" : "NO");

    /* an algorithm that needs a workspace, given none: refused */
    size_t need = 0;
    CK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd,
                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &need));
    printf("the second algorithm needs a workspace: %s\n", need > 0 ? "yes" : "NO");
    cudnnStatus_t bad = cudnnConvolutionForward(h, &one, xd, gx, wd, gw, cd,
                                                CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, 0,
                                                &one, yd, gy);
    cudaStream_t got = NULL;
    cudnnStatus_t next = cudnnGetStream(h, &got);
    cudnnStatus_t after = cudnnGetStream(h, &got);
    printf("the refused convolution's error: %s\n",
           cudnnGetErrorString(bad != CUDNN_STATUS_SUCCESS ? bad : next));
    printf("reported once (the call after: %s), by the convolution or the next call: %s\n",
           cudnnGetErrorString(after),
           (bad != CUDNN_STATUS_SUCCESS) != (next != CUDNN_STATUS_SUCCESS) ? "yes" : "NO");
    fprintf(stderr, "reported by: %s\n", bad != CUDNN_STATUS_SUCCESS ? "the call" : "the next call");
    CK(cudnnDestroy(h));
    return ok ? 0 : 1;
}
