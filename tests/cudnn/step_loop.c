/* What a PyTorch training step asks of cuDNN per operation, LOOPS times
 * (tests/cuda/async_rt.sh counts its round trips):
 * - a convolution through the backend API with a cached execution plan (the
 *   plan is built once, before the loop, as PyTorch's benchmark cache
 *   keeps it): a variant pack created, its unique ids, data pointers and
 *   workspace set, finalized, executed, destroyed (cudnn-frontend's
 *   VariantPackBuilder and PyTorch's run_conv_plan);
 * - a batch norm through the legacy API on the convolution's output: three
 *   tensor descriptors created and set (cudnnSetTensorNdDescriptor, as
 *   PyTorch's TensorDescriptor), the workspace size asked, the forward
 *   training run, the descriptors destroyed (PyTorch's cudnn_batch_norm).
 * y (the convolution) is checked against the CPU exactly (small integers),
 * z (the batch norm) within 1e-4, and z's bytes are printed as a checksum
 * (and the workspace size cuDNN answered, which the stub keeps after the
 * first time),
 * so stdout is the same natively and forwarded only if every queued call
 * ran with the same arguments in the same order.
 * Then a convolution cuDNN refuses (no workspace) and more convolutions with
 * no call that must answer synchronously: its error must reach the program
 * within 16 of them (natively at the call).
 * Then descriptors are created until the fake refuses one (it keeps at most
 * FAKE_CUDNN_MAX_LIVE: a host allocation failure, the one error a queued
 * create can meet) and the next sync cuDNN call is made: natively the
 * create returns CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, forwarded
 * (queued) the next call does; stderr says which (tests/cuda/async_rt.sh).
 * Over NVIDIA's cuDNN (tests/gpu/cudnn.sh) no create fails, and it says so. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

enum { N = 2, C = 2, H = 5, W = 4, K = 3, R = 3, S = 3, PAD = 1, LOOPS = 40, MAXCFG = 4, MANY = 600 };

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

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

/* the plan PyTorch's benchmark cache keeps: built once */
static cudnnStatus_t make_plan(cudnnHandle_t h, cudnnBackendDescriptor_t *plan)
{
    int64_t xdim[4] = {N, C, H, W}, wdim[4] = {K, C, R, S}, ydim[4] = {N, K, H, W};
    cudnnBackendDescriptor_t xt, wt, yt, conv, op, graph, heur, cfg[MAXCFG];
    cudnnStatus_t s;
    if ((s = make_tensor('x', xdim, &xt)) || (s = make_tensor('w', wdim, &wt)) || (s = make_tensor('y', ydim, &yt)))
        return s;
    if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv))) return s;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t sdims = 2, pad[2] = {PAD, PAD}, one2[2] = {1, 1};
    if ((s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp)) ||
        (s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)) ||
        (s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sdims)) ||
        (s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad)) ||
        (s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad)) ||
        (s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2)) ||
        (s = cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2)) ||
        (s = cudnnBackendFinalize(conv)))
        return s;
    if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op))) return s;
    float alpha = 1.0f, beta = 0.0f;
    if ((s = cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xt)) ||
        (s = cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wt)) ||
        (s = cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yt)) ||
        (s = cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv)) ||
        (s = cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha)) ||
        (s = cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta)) ||
        (s = cudnnBackendFinalize(op)))
        return s;
    if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph)) ||
        (s = cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op)) ||
        (s = cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)) ||
        (s = cudnnBackendFinalize(graph)))
        return s;
    cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
    if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur)) ||
        (s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph)) ||
        (s = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm)) ||
        (s = cudnnBackendFinalize(heur)))
        return s;
    for (int i = 0; i < MAXCFG; i++)
        if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]))) return s;
    int64_t nfilled = 0;
    if ((s = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, MAXCFG,
                                      &nfilled, cfg)))
        return s;
    *plan = NULL;
    for (int i = 0; i < nfilled && i < MAXCFG && !*plan; i++) {
        if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan)) ||
            (s = cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)) ||
            (s = cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                          1, &cfg[i])))
            return s;
        if (cudnnBackendFinalize(*plan) != CUDNN_STATUS_SUCCESS) {
            cudnnBackendDestroyDescriptor(*plan);
            *plan = NULL;
        }
    }
    return *plan ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

/* a legacy tensor descriptor as PyTorch's TensorDescriptor::set makes it */
static cudnnStatus_t tensor_nd(cudnnTensorDescriptor_t *t, int n, int c, int hh, int ww)
{
    int dims[4] = {n, c, hh, ww}, strides[4] = {c * hh * ww, hh * ww, ww, 1};
    cudnnStatus_t s = cudnnCreateTensorDescriptor(t);
    return s ? s : cudnnSetTensorNdDescriptor(*t, CUDNN_DATA_FLOAT, 4, dims, strides);
}

/* one convolution as PyTorch runs a cached plan: the first failing status */
static cudnnStatus_t one_conv(cudnnHandle_t h, cudnnBackendDescriptor_t plan, void *ptrs[3], void *ws)
{
    cudnnBackendDescriptor_t pack;
    int64_t uids[3] = {'x', 'y', 'w'};
    cudnnStatus_t s;
    if ((s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack))) return s;
    if ((ws && (s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws))) ||
        (s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs)) ||
        (s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids)) ||
        (s = cudnnBackendFinalize(pack)) || (s = cudnnBackendExecute(h, plan, pack)))
        return s;
    return cudnnBackendDestroyDescriptor(pack);
}

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
    cudnnBackendDescriptor_t plan;
    CK(make_plan(h, &plan));
    int64_t wsize = 0, nws = 0;
    CK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &nws, &wsize));

    enum { NX = N * C * H * W, NW = K * C * R * S, NY = N * K * H * W };
    float x[NX], w[NW], y[NY], want[NY], z[NY], scale[K], bias[K];
    for (int i = 0; i < NX; i++) x[i] = (float)((i * 7) % 5) - 2.0f;
    for (int i = 0; i < NW; i++) w[i] = (float)((i * 5) % 3) - 1.0f;
    for (int k = 0; k < K; k++) scale[k] = 1.0f + 0.5f * (float)k, bias[k] = 0.25f * (float)k;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int oy = 0; oy < H; oy++)
                for (int ox = 0; ox < W; ox++) {
                    float s = 0;
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < R; r++)
                            for (int q = 0; q < S; q++) {
                                int iy = oy - PAD + r, ix = ox - PAD + q;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                s += x[((n * C + c) * H + iy) * W + ix] * w[((k * C + c) * R + r) * S + q];
                            }
                    want[((n * K + k) * H + oy) * W + ox] = s;
                }
    float *gx, *gw, *gy, *gz, *gscale, *gbias;
    void *gws;
    CK(cudaMalloc((void **)&gx, sizeof x));
    CK(cudaMalloc((void **)&gw, sizeof w));
    CK(cudaMalloc((void **)&gy, sizeof y));
    CK(cudaMalloc((void **)&gz, sizeof z));
    CK(cudaMalloc((void **)&gscale, sizeof scale));
    CK(cudaMalloc((void **)&gbias, sizeof bias));
    CK(cudaMalloc(&gws, wsize > 0 ? (size_t)wsize : 1));
    CK(cudaMemcpy(gx, x, sizeof x, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gw, w, sizeof w, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gscale, scale, sizeof scale, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gbias, bias, sizeof bias, cudaMemcpyHostToDevice));
    float one = 1.0f, zero = 0.0f;
    /* another shape's workspace, before and after the loop (fresh descriptors
     * each time): a size kept for one shape is never given for another */
    size_t other_ws[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        cudnnTensorDescriptor_t xd, wd;
        CK(tensor_nd(&xd, N, K, H, W + 1));
        CK(tensor_nd(&wd, 1, K, 1, 1));
        CK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN,
                                                                     xd, NULL, xd, wd, NULL, &other_ws[k]));
        CK(cudnnDestroyTensorDescriptor(xd));
        CK(cudnnDestroyTensorDescriptor(wd));
        if (k == 0) printf("another shape's workspace size: %zu bytes\n", other_ws[0]);
    }
    size_t first_ws = (size_t)-1;
    int ws_same = 1;
    for (int i = 0; i < LOOPS; i++) {
        /* the convolution: a variant pack per execution */
        CK(cudnnSetStream(h, st));
        cudnnBackendDescriptor_t pack;
        int64_t uids[3] = {'x', 'y', 'w'};
        void *ptrs[3] = {gx, gy, gw};
        CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
        CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &gws));
        CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs));
        CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids));
        CK(cudnnBackendFinalize(pack));
        CK(cudnnBackendExecute(h, plan, pack));
        CK(cudnnBackendDestroyDescriptor(pack));
        /* the batch norm: descriptors per call */
        CK(cudnnSetStream(h, st));
        cudnnTensorDescriptor_t xd, yd, wd;
        CK(tensor_nd(&xd, N, K, H, W));
        CK(tensor_nd(&yd, N, K, H, W));
        CK(tensor_nd(&wd, 1, K, 1, 1));
        size_t bnws = 1;
        CK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN,
                                                                     xd, NULL, yd, wd, NULL, &bnws));
        if (first_ws == (size_t)-1) first_ws = bnws;
        ws_same &= bnws == first_ws;
        CK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, gy, yd, gz, wd, gscale,
                                                  gbias, 0.1, NULL, NULL, 1e-5, NULL, NULL));
        CK(cudnnDestroyTensorDescriptor(xd));
        CK(cudnnDestroyTensorDescriptor(yd));
        CK(cudnnDestroyTensorDescriptor(wd));
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(y, gy, sizeof y, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(z, gz, sizeof z, cudaMemcpyDeviceToHost));
    int ok = 1, zok = 1;
    for (int i = 0; i < NY; i++) ok &= y[i] == want[i];
    uint32_t sum = 2166136261u; /* FNV-1a of z's bytes */
    for (int k = 0; k < K; k++) {
        double m = 0, v = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) m += want[(n * K + k) * H * W + p];
        m /= N * H * W;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) v += (want[(n * K + k) * H * W + p] - m) * (want[(n * K + k) * H * W + p] - m);
        v /= N * H * W;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < H * W; p++) {
                int j = (n * K + k) * H * W + p;
                double e = scale[k] * (want[j] - m) / sqrt(v + 1e-5) + bias[k];
                zok &= fabs(z[j] - e) < 1e-4;
            }
    }
    const unsigned char *zb = (const unsigned char *)z;
    for (size_t i = 0; i < sizeof z; i++) sum = (sum ^ zb[i]) * 16777619u;
    printf("%d x (variant pack: create, 3 attributes, finalize, execute, destroy; batch norm: 3 tensor "
           "descriptors created and set, workspace size, forward training, 3 destroyed)\n", LOOPS);
    printf("y matches the CPU: %s; z matches the CPU: %s; z's bytes: %08x\n", ok ? "yes" : "NO", zok ? "yes" : "NO",
           (unsigned)sum);
    printf("the batch norm's workspace size, the same every time: %s, %zu bytes; the other shape's again: %zu bytes\n",
           ws_same ? "yes" : "NO", first_ws, other_ws[1]);

    /* a convolution cuDNN refuses (its variant pack has no workspace, which the
     * plan needs), then more convolutions, none of which must answer
     * synchronously: forwarded, the error reaches the program within 16 of
     * them (specs/cudnn/guest.c SYNC_EVERY), natively at the execution */
    {
        void *ptrs[3] = {gx, gy, gw};
        cudnnStatus_t first = wsize > 0 ? one_conv(h, plan, ptrs, NULL) : CUDNN_STATUS_SUCCESS;
        int at = first != CUDNN_STATUS_SUCCESS ? 0 : -1;
        for (int i = 1; i <= 32 && at < 0 && wsize > 0; i++) {
            cudnnStatus_t s = one_conv(h, plan, ptrs, gws);
            if (s != CUDNN_STATUS_SUCCESS) first = s, at = i;
        }
        if (wsize == 0)
            printf("the plan needs no workspace: no refused convolution to report\n");
        else
            printf("a convolution without its workspace: %s, reported within 16 convolutions: %s\n",
                   cudnnGetErrorString(first), at >= 0 && at <= 16 ? "yes" : "NO");
    }

    /* descriptors until the library runs out of memory for one */
    static cudnnTensorDescriptor_t many[MANY];
    cudnnStatus_t bad = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < MANY && bad == CUDNN_STATUS_SUCCESS; i++) bad = cudnnCreateTensorDescriptor(&many[i]);
    cudaStream_t got = NULL;
    cudnnStatus_t next = cudnnGetStream(h, &got);
    cudnnStatus_t after = cudnnGetStream(h, &got);
    if (bad == CUDNN_STATUS_SUCCESS && next == CUDNN_STATUS_SUCCESS) { /* a real library: memory did not run out */
        printf("every create succeeded (the library did not run out of memory)\n");
        fprintf(stderr, "reported by: none\n");
        return ok ? 0 : 1;
    }
    printf("the refused create's error: %s\n", cudnnGetErrorString(bad != CUDNN_STATUS_SUCCESS ? bad : next));
    printf("reported once (the call after: %s), by the create or the next call: %s\n", cudnnGetErrorString(after),
           (bad != CUDNN_STATUS_SUCCESS) != (next != CUDNN_STATUS_SUCCESS) ? "yes" : "NO");
    fprintf(stderr, "reported by: %s\n", bad != CUDNN_STATUS_SUCCESS ? "the call" : "the next call");
    return ok && zok ? 0 : 1;
}
