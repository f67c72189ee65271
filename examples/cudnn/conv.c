/* A convolution forward and backward with cuDNN's legacy API: tensor,
 * filter and convolution descriptors, the algorithms cuDNN recommends
 * (cudnnGet*Algorithm_v7: arrays of perf results), workspaces from
 * cudaMalloc, a stream from cudaStreamCreate set on the handle. Prints the
 * descriptors as cuDNN reads them back and whether y, dx and dw match a CPU
 * reference. */
#include <string.h>

#include "common.h"

enum { N = 2, C = 3, H = 6, W = 5, K = 4, R = 3, S = 3, PAD = 1 };

int main(void)
{
    cudnnHandle_t h;
    CK_FIRST(cudnnCreate(&h));
    printf("cuDNN major version: %d\n", (int)(cudnnGetVersion() / 10000));
    cudaStream_t st;
    CKRT(cudaStreamCreate(&st));
    CK(cudnnSetStream(h, st));
    cudaStream_t back = NULL;
    CK(cudnnGetStream(h, &back));
    printf("stream set on the handle: %s\n", back == st ? "yes" : "NO");

    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CK(cudnnCreateTensorDescriptor(&xd));
    CK(cudnnCreateTensorDescriptor(&yd));
    CK(cudnnCreateFilterDescriptor(&wd));
    CK(cudnnCreateConvolutionDescriptor(&cd));
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    CK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    CK(cudnnSetConvolution2dDescriptor(cd, PAD, PAD, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT));
    int on, oc, oh, ow;
    CK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
    printf("output: %d x %d x %d x %d\n", on, oc, oh, ow);
    int dimA[4] = {on, oc, oh, ow}, strideA[4] = {oc * oh * ow, oh * ow, ow, 1};
    CK(cudnnSetTensorNdDescriptor(yd, CUDNN_DATA_FLOAT, 4, dimA, strideA));
    cudnnDataType_t dt;
    int nb = 0, gd[8] = {0}, gs[8] = {0};
    CK(cudnnGetTensorNdDescriptor(yd, 8, &dt, &nb, gd, gs));
    printf("y as cuDNN has it: float %s, %d dims %d %d %d %d, strides %d %d %d %d\n",
           dt == CUDNN_DATA_FLOAT ? "yes" : "NO", nb, gd[0], gd[1], gd[2], gd[3], gs[0], gs[1],
           gs[2], gs[3]);

    size_t nx = N * C * H * W, nw = K * C * R * S, ny = (size_t)on * oc * oh * ow;
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(ny * 4), *dy = malloc(ny * 4);
    float *dx = malloc(nx * 4), *dw = malloc(nw * 4), *ry = malloc(ny * 4), *rdx = malloc(nx * 4),
          *rdw = malloc(nw * 4);
    for (size_t i = 0; i < nx; i++) x[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
    for (size_t i = 0; i < nw; i++) w[i] = (float)((i * 5) % 9) * 0.125f - 0.5f;
    for (size_t i = 0; i < ny; i++) dy[i] = (float)((i * 3) % 7) * 0.5f - 1.5f;
    float *gx, *gw, *gy, *gdy, *gdx, *gdw;
    CKRT(cudaMalloc((void **)&gx, nx * 4));
    CKRT(cudaMalloc((void **)&gw, nw * 4));
    CKRT(cudaMalloc((void **)&gy, ny * 4));
    CKRT(cudaMalloc((void **)&gdy, ny * 4));
    CKRT(cudaMalloc((void **)&gdx, nx * 4));
    CKRT(cudaMalloc((void **)&gdw, nw * 4));
    CKRT(cudaMemcpy(gx, x, nx * 4, cudaMemcpyHostToDevice));
    CKRT(cudaMemcpy(gw, w, nw * 4, cudaMemcpyHostToDevice));
    CKRT(cudaMemcpy(gdy, dy, ny * 4, cudaMemcpyHostToDevice));

    /* forward: the algorithm cuDNN ranks first, its workspace */
    cudnnConvolutionFwdAlgoPerf_t fp[8];
    int nfp = 0;
    CK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &nfp, fp));
    printf("forward algorithms ranked: %s\n", nfp > 0 ? "some" : "none");
    if (nfp < 1) return 1;
    size_t ws = 0;
    CK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, fp[0].algo, &ws));
    void *gws = NULL;
    if (ws) CKRT(cudaMalloc(&gws, ws));
    float one = 1.0f, zero = 0.0f;
    /* the timed searches: their order may differ run to run, only whether
     * they answer is printed */
    cudnnConvolutionFwdAlgoPerf_t found[8];
    int nfound = 0, nfound_ex = 0, usable = 0;
    CK(cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, 8, &nfound, found));
    CK(cudnnFindConvolutionForwardAlgorithmEx(h, xd, gx, wd, gw, cd, yd, gy, 8, &nfound_ex, found, gws, ws));
    for (int i = 0; i < nfound_ex; i++) usable += found[i].status == CUDNN_STATUS_SUCCESS;
    printf("forward algorithms found by timing: %s; with the workspace: %s\n", nfound > 0 ? "some" : "none",
           usable > 0 ? "some usable" : "none usable");
    CK(cudnnConvolutionForward(h, &one, xd, gx, wd, gw, cd, fp[0].algo, gws, ws, &zero, yd, gy));
    CKRT(cudaStreamSynchronize(st));
    CKRT(cudaMemcpy(y, gy, ny * 4, cudaMemcpyDeviceToHost));
    ref_conv(N, C, H, W, K, R, S, PAD, oh, ow, x, w, ry);
    int ok = report("forward y", y, ry, ny);
    if (gws) CKRT(cudaFree(gws));

    /* backward data and filter */
    cudnnConvolutionBwdDataAlgoPerf_t bdp[8];
    cudnnConvolutionBwdFilterAlgoPerf_t bfp[8];
    int nbd = 0, nbf = 0;
    CK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, 8, &nbd, bdp));
    CK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, 8, &nbf, bfp));
    printf("backward algorithms ranked: %s\n", nbd > 0 && nbf > 0 ? "some" : "none");
    if (nbd < 1 || nbf < 1) return 1;
    size_t wsd = 0, wsf = 0;
    CK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, bdp[0].algo, &wsd));
    CK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, bfp[0].algo, &wsf));
    size_t wsb = wsd > wsf ? wsd : wsf;
    if (wsb) CKRT(cudaMalloc(&gws, wsb));
    CK(cudnnConvolutionBackwardData(h, &one, wd, gw, yd, gdy, cd, bdp[0].algo, wsb ? gws : NULL,
                                    wsd, &zero, xd, gdx));
    CK(cudnnConvolutionBackwardFilter(h, &one, xd, gx, yd, gdy, cd, bfp[0].algo, wsb ? gws : NULL,
                                      wsf, &zero, wd, gdw));
    CKRT(cudaStreamSynchronize(st));
    CKRT(cudaMemcpy(dx, gdx, nx * 4, cudaMemcpyDeviceToHost));
    CKRT(cudaMemcpy(dw, gdw, nw * 4, cudaMemcpyDeviceToHost));
    ref_conv_bwd(N, C, H, W, K, R, S, PAD, oh, ow, x, w, dy, rdx, rdw);
    ok &= report("backward data dx", dx, rdx, nx);
    ok &= report("backward filter dw", dw, rdw, nw);

    if (wsb) CKRT(cudaFree(gws));
    CKRT(cudaFree(gx));
    CKRT(cudaFree(gw));
    CKRT(cudaFree(gy));
    CKRT(cudaFree(gdy));
    CKRT(cudaFree(gdx));
    CKRT(cudaFree(gdw));
    CK(cudnnDestroyConvolutionDescriptor(cd));
    CK(cudnnDestroyFilterDescriptor(wd));
    CK(cudnnDestroyTensorDescriptor(yd));
    CK(cudnnDestroyTensorDescriptor(xd));
    CK(cudnnDestroy(h));
    CKRT(cudaStreamDestroy(st));
    free(x); free(w); free(y); free(dy); free(dx); free(dw); free(ry); free(rdx); free(rdw);
    return ok ? 0 : 1;
}
