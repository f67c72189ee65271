/* A queued cuDNN call that fails on the server (docs/internals.md "Errors of
 * queued calls"), over the fake cuDNN of tests/cudnn: a convolution with an
 * algorithm that needs a workspace, given none (CUDNN_STATUS_BAD_PARAM).
 * cuDNN's compute calls are queued without a check (their descriptors are
 * made per operation: nothing to key on), so forwarded the refusal comes with
 * the next cuDNN call, natively with the call:
 *  - "value": the refused convolution and the next cuDNN call;
 *  - "launch": the same after the program synchronized through the runtime
 *    and read y (unchanged by the refused call both ways);
 *  - "last" (argv[1]): one more and then only the runtime: the program never
 *    learns it forwarded; the server logs the function and status when the
 *    thread's connection ends (tests/cuda/async_fail.sh checks).
 * stdout is the same natively and forwarded; stderr says where each error
 * came. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

enum { N = 1, C = 2, H = 5, W = 4, K = 3, R = 3, S = 3, PAD = 1 };

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static const char *where(cudnnStatus_t call, cudnnStatus_t next)
{
    return call != CUDNN_STATUS_SUCCESS && next == CUDNN_STATUS_SUCCESS   ? "the call"
           : call == CUDNN_STATUS_SUCCESS && next != CUDNN_STATUS_SUCCESS ? "the next call"
                                                                          : "NOBODY OR TWICE";
}

int main(int argc, char **argv)
{
    int last = argc > 1 && strcmp(argv[1], "last") == 0;
    cudnnHandle_t h;
    cudnnStatus_t s0 = cudnnCreate(&h);
    if (s0 != CUDNN_STATUS_SUCCESS) {
        printf("cudnnCreate: %s: no usable GPU, stopping\n", cudnnGetErrorString(s0));
        return 2;
    }
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    CK(cudnnSetStream(h, st));
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
    float x[NX], w[NW], y[NY], got[NY];
    for (int i = 0; i < NX; i++) x[i] = (float)((i * 7) % 5) - 2.0f;
    for (int i = 0; i < NW; i++) w[i] = (float)((i * 5) % 3) - 1.0f;
    for (int i = 0; i < NY; i++) y[i] = (float)i;
    float *gx, *gw, *gy;
    CK(cudaMalloc((void **)&gx, sizeof x));
    CK(cudaMalloc((void **)&gw, sizeof w));
    CK(cudaMalloc((void **)&gy, sizeof y));
    CK(cudaMemcpy(gx, x, sizeof x, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gw, w, sizeof w, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gy, y, sizeof y, cudaMemcpyHostToDevice));
    float one = 1.0f;
    const cudnnConvolutionFwdAlgo_t needs_ws = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    cudaStream_t got_st;

    cudnnStatus_t v = cudnnConvolutionForward(h, &one, xd, gx, wd, gw, cd, needs_ws, NULL, 0, &one, yd, gy);
    cudnnStatus_t vn = cudnnGetStream(h, &got_st);
    printf("a convolution without the workspace it needs: %s\n",
           cudnnGetErrorString(v != CUDNN_STATUS_SUCCESS ? v : vn));
    fprintf(stderr, "value refused by: %s\n", where(v, vn));

    cudnnStatus_t f = cudnnConvolutionForward(h, &one, xd, gx, wd, gw, cd, needs_ws, NULL, 0, &one, yd, gy);
    cudaError_t sync = cudaStreamSynchronize(st);
    CK(cudaMemcpy(got, gy, sizeof got, cudaMemcpyDeviceToHost));
    cudnnStatus_t next = cudnnGetStream(h, &got_st);
    printf("the runtime's synchronization after the failed call: %s\n", cudaGetErrorName(sync));
    printf("y after the failed call: %s\n",
           memcmp(got, y, sizeof y) == 0 ? "as before it (nothing ran)" : "WRONG");
    printf("the failed call's error: %s\n", cudnnGetErrorString(f != CUDNN_STATUS_SUCCESS ? f : next));
    fprintf(stderr, "launch failure reported by: %s\n", where(f, next));
    if (last) { /* no cuDNN call after it: natively the call said it */
        cudnnStatus_t l =
            cudnnConvolutionForward(h, &one, xd, gx, wd, gw, cd, needs_ws, NULL, 0, &one, yd, gy);
        CK(cudaDeviceSynchronize());
        fprintf(stderr, "last call: %d\n", (int)l);
        return 0;
    }
    CK(cudnnDestroy(h));
    return 0;
}
