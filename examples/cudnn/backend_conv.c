/* A convolution forward through cuDNN's backend (graph) API, as the
 * cudnn-frontend builds it: tensor and convolution descriptors, a
 * convolution operation, an operation graph, the heuristics' engine
 * configurations (descriptors the program creates and cuDNN fills: a
 * descriptor array in, the same descriptors out), an execution plan whose
 * workspace size is read back, and a variant pack of device pointers
 * (cudaMalloc) with the workspace. Prints what it reads back and whether y
 * matches a CPU reference. */
#include <stdint.h>
#include <string.h>

#include "common.h"

enum { N = 1, C = 2, H = 5, W = 4, K = 3, R = 3, S = 3, PAD = 1, MAXCFG = 8 };

static cudnnStatus_t make_tensor(int64_t uid, const int64_t dims[4], cudnnBackendDescriptor_t *t)
{
    int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int64_t align = 4;
    cudnnStatus_t s;
    if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, t))) return s;
    if ((s = cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt)) ||
        (s = cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims)) ||
        (s = cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides)) ||
        (s = cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)) ||
        (s = cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align)))
        return s;
    return cudnnBackendFinalize(*t);
}

int main(void)
{
    cudnnHandle_t h;
    CK_FIRST(cudnnCreate(&h));
    int64_t xdim[4] = {N, C, H, W}, wdim[4] = {K, C, R, S}, ydim[4] = {N, K, H, W};
    cudnnBackendDescriptor_t xt, wt, yt, conv, op, graph, heur, plan = NULL, pack;
    CK(make_tensor('x', xdim, &xt));
    CK(make_tensor('w', wdim, &wt));
    CK(make_tensor('y', ydim, &yt));

    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv));
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t sdims = 2, pad[2] = {PAD, PAD}, one2[2] = {1, 1};
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sdims));
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2));
    CK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2));
    CK(cudnnBackendFinalize(conv));
    int64_t got[4] = {0}, ngot = 0;
    CK(cudnnBackendGetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 4, &ngot, got));
    printf("paddings read back: %lld of them, %lld %lld\n", (long long)ngot, (long long)got[0],
           (long long)got[1]);

    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op));
    float alpha = 1.0f, beta = 0.0f;
    CK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xt));
    CK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wt));
    CK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yt));
    CK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
    CK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
    CK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    CK(cudnnBackendFinalize(op));

    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    CK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
    CK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
    CK(cudnnBackendFinalize(graph));

    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
    CK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
    CK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm));
    CK(cudnnBackendFinalize(heur));
    int64_t ncfg = 0;
    CK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &ncfg, NULL));
    printf("engine configurations: %s\n", ncfg > 0 ? "some" : "none");
    if (ncfg < 1) return 1;
    if (ncfg > MAXCFG) ncfg = MAXCFG;
    cudnnBackendDescriptor_t cfg[MAXCFG];
    for (int i = 0; i < ncfg; i++) CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]));
    cudnnBackendDescriptor_t cfg_in[MAXCFG];
    memcpy(cfg_in, cfg, sizeof cfg);
    int64_t nfilled = 0;
    CK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ncfg, &nfilled, cfg));
    printf("configurations filled into the program's descriptors: %s\n",
           nfilled >= 1 && memcmp(cfg, cfg_in, sizeof cfg) == 0 ? "yes" : "NO");

    /* the first configuration that finalizes into a plan */
    for (int i = 0; i < nfilled && i < ncfg && !plan; i++) {
        CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
        CK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
        CK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]));
        if (cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS) {
            CK(cudnnBackendDestroyDescriptor(plan));
            plan = NULL;
        }
    }
    printf("execution plan: %s\n", plan ? "finalized" : "NONE");
    if (!plan) return 1;
    int64_t wsize = -1, nws = 0;
    CK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &nws, &wsize));
    printf("workspace size known: %s\n", nws == 1 && wsize >= 0 ? "yes" : "NO");

    size_t nx = N * C * H * W, nw = K * C * R * S, ny = N * K * H * W;
    float x[N * C * H * W], w[K * C * R * S], y[N * K * H * W], ry[N * K * H * W];
    for (size_t i = 0; i < nx; i++) x[i] = (float)((i * 3) % 7) - 2.0f;
    for (size_t i = 0; i < nw; i++) w[i] = (float)((i * 5) % 4) * 0.5f - 0.75f;
    float *gx, *gw, *gy;
    void *gws = NULL;
    CKRT(cudaMalloc((void **)&gx, nx * 4));
    CKRT(cudaMalloc((void **)&gw, nw * 4));
    CKRT(cudaMalloc((void **)&gy, ny * 4));
    CKRT(cudaMalloc(&gws, wsize > 0 ? (size_t)wsize : 1));
    CKRT(cudaMemcpy(gx, x, nx * 4, cudaMemcpyHostToDevice));
    CKRT(cudaMemcpy(gw, w, nw * 4, cudaMemcpyHostToDevice));
    CKRT(cudaMemset(gy, 0, ny * 4));

    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    int64_t uids[3] = {'x', 'w', 'y'};
    void *ptrs[3] = {gx, gw, gy};
    CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids));
    CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs));
    CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &gws));
    CK(cudnnBackendFinalize(pack));
    CK(cudnnBackendExecute(h, plan, pack));
    CKRT(cudaDeviceSynchronize());
    CKRT(cudaMemcpy(y, gy, ny * 4, cudaMemcpyDeviceToHost));
    ref_conv(N, C, H, W, K, R, S, PAD, H, W, x, w, ry);
    int ok = report("backend convolution y", y, ry, ny);

    CK(cudnnBackendDestroyDescriptor(pack));
    CK(cudnnBackendDestroyDescriptor(plan));
    for (int i = 0; i < ncfg; i++) CK(cudnnBackendDestroyDescriptor(cfg[i]));
    CK(cudnnBackendDestroyDescriptor(heur));
    CK(cudnnBackendDestroyDescriptor(graph));
    CK(cudnnBackendDestroyDescriptor(op));
    CK(cudnnBackendDestroyDescriptor(conv));
    CK(cudnnBackendDestroyDescriptor(yt));
    CK(cudnnBackendDestroyDescriptor(wt));
    CK(cudnnBackendDestroyDescriptor(xt));
    CKRT(cudaFree(gx));
    CKRT(cudaFree(gw));
    CKRT(cudaFree(gy));
    CKRT(cudaFree(gws));
    CK(cudnnDestroy(h));
    return ok ? 0 : 1;
}
