/* A fake libcudnn.so.9 for CI (no GPU): "device memory" is host memory of the
 * process that loads it (tests/cudnn/fake_cudart.c's cudaMalloc), and the
 * calls the examples make compute on it in plain C: the legacy convolution
 * forward, backward data and backward filter (float, NCHW), the algorithm
 * rankings and workspace sizes, and the backend API as a generic attribute
 * store whose execution plan runs one convolution forward graph. It checks
 * what cuDNN checks for those calls (NULL and unknown descriptors, a
 * workspace smaller than the algorithm needs, element counts and types that
 * do not fit an attribute), so the examples' bad-input paths answer the same
 * natively and forwarded. Loaded natively by an example and by the server
 * alike (tests/cudnn/diff.sh); every other symbol answers
 * CUDNN_STATUS_NOT_SUPPORTED (fake_weak.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#define EXPORT __attribute__((visibility("default")))
#define BAD CUDNN_STATUS_BAD_PARAM
#define OK CUDNN_STATUS_SUCCESS
#define WS_FWD 4096 /* the workspace every fake algorithm needs, bytes */

/* ---- handle, errors ----------------------------------------------------------- */
struct cudnnContext {
    uint32_t magic;
    cudaStream_t stream;
};
#define MAGIC_H 0xd1a9u

static int valid_h(cudnnHandle_t h) { return h && h->magic == MAGIC_H; }

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    if (!handle) return BAD;
    struct cudnnContext *c = calloc(1, sizeof *c);
    if (!c) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    c->magic = MAGIC_H;
    *handle = c;
    return OK;
}

EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    if (!valid_h(h)) return BAD;
    h->magic = 0;
    free(h);
    return OK;
}

EXPORT size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    if (!valid_h(h)) return BAD;
    h->stream = s;
    return OK;
}

EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *s)
{
    if (!valid_h(h) || !s) return BAD;
    *s = h->stream;
    return OK;
}

EXPORT const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case OK: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case BAD: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED: return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN (fake)";
    }
}

/* ---- legacy descriptors (4 dimensions, float) --------------------------------- */
struct cudnnTensorStruct { uint32_t magic; cudnnDataType_t dt; int nb, dim[8], stride[8]; };
struct cudnnFilterStruct { uint32_t magic; cudnnDataType_t dt; int k, c, r, s; };
struct cudnnConvolutionStruct { uint32_t magic; int pad_h, pad_w, u, v, dh, dw; cudnnConvolutionMode_t mode; };
#define MAGIC_T 0x7e45u
#define MAGIC_F 0xf11eu
#define MAGIC_C 0xc0a7u

/* At most FAKE_CUDNN_MAX_LIVE legacy descriptors live at once: the next
 * create fails as a host allocation would (tests/cudnn/step_loop.c makes
 * one fail, the one error a queued create can meet) */
#define FAKE_CUDNN_MAX_LIVE 512
static int live_descs;
#define CREATE(fn, type, mg)                                                      \
    EXPORT cudnnStatus_t fn(type *d)                                              \
    {                                                                             \
        if (!d) return BAD;                                                       \
        if (live_descs >= FAKE_CUDNN_MAX_LIVE)                                    \
            return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;            \
        *d = calloc(1, sizeof **d);                                               \
        if (!*d) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;       \
        (*d)->magic = mg;                                                      \
        live_descs++;                                                             \
        return OK;                                                                \
    }
#define DESTROY(fn, type, mg)                                                     \
    EXPORT cudnnStatus_t fn(type d)                                               \
    {                                                                             \
        if (!d) return OK; /* cuDNN accepts NULL */                               \
        if (d->magic != mg) return BAD;                                        \
        d->magic = 0;                                                             \
        free(d);                                                                  \
        live_descs--;                                                             \
        return OK;                                                                \
    }
CREATE(cudnnCreateTensorDescriptor, cudnnTensorDescriptor_t, MAGIC_T)
CREATE(cudnnCreateFilterDescriptor, cudnnFilterDescriptor_t, MAGIC_F)
CREATE(cudnnCreateConvolutionDescriptor, cudnnConvolutionDescriptor_t, MAGIC_C)
DESTROY(cudnnDestroyTensorDescriptor, cudnnTensorDescriptor_t, MAGIC_T)
DESTROY(cudnnDestroyFilterDescriptor, cudnnFilterDescriptor_t, MAGIC_F)
DESTROY(cudnnDestroyConvolutionDescriptor, cudnnConvolutionDescriptor_t, MAGIC_C)

static int vt(cudnnTensorDescriptor_t t) { return t && t->magic == MAGIC_T && t->nb == 4; }
static int vf(cudnnFilterDescriptor_t f) { return f && f->magic == MAGIC_F && f->k > 0; }
static int vc(cudnnConvolutionDescriptor_t c) { return c && c->magic == MAGIC_C && c->u > 0; }

EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t t, cudnnTensorFormat_t f,
                                               cudnnDataType_t dt, int n, int c, int h, int w)
{
    if (!t || t->magic != MAGIC_T || f != CUDNN_TENSOR_NCHW || n < 1 || c < 1 || h < 1 || w < 1)
        return BAD;
    t->dt = dt;
    t->nb = 4;
    int d[4] = {n, c, h, w}, s[4] = {c * h * w, h * w, w, 1};
    memcpy(t->dim, d, sizeof d);
    memcpy(t->stride, s, sizeof s);
    return OK;
}

EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t t, cudnnDataType_t dt, int nb,
                                               const int dimA[], const int strideA[])
{
    if (!t || t->magic != MAGIC_T || nb < 3 || nb > 8 || !dimA || !strideA) return BAD;
    for (int i = 0; i < nb; i++)
        if (dimA[i] < 1 || strideA[i] < 1) return BAD;
    t->dt = dt;
    t->nb = nb;
    memcpy(t->dim, dimA, (size_t)nb * sizeof(int));
    memcpy(t->stride, strideA, (size_t)nb * sizeof(int));
    return OK;
}

EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t t, int req, cudnnDataType_t *dt,
                                               int *nb, int dimA[], int strideA[])
{
    if (!t || t->magic != MAGIC_T || !dt || !nb || req < 0) return BAD;
    *dt = t->dt;
    *nb = t->nb;
    for (int i = 0; i < req && i < t->nb; i++) {
        if (dimA) dimA[i] = t->dim[i];
        if (strideA) strideA[i] = t->stride[i];
    }
    return OK;
}

EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t f, cudnnDataType_t dt,
                                               cudnnTensorFormat_t fmt, int k, int c, int h, int w)
{
    if (!f || f->magic != MAGIC_F || fmt != CUDNN_TENSOR_NCHW || k < 1 || c < 1 || h < 1 || w < 1)
        return BAD;
    f->dt = dt;
    f->k = k, f->c = c, f->r = h, f->s = w;
    return OK;
}

EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t c, int pad_h, int pad_w,
                                                    int u, int v, int dh, int dw,
                                                    cudnnConvolutionMode_t mode, cudnnDataType_t ct)
{
    (void)ct;
    if (!c || c->magic != MAGIC_C || u < 1 || v < 1 || dh != 1 || dw != 1 || pad_h < 0 || pad_w < 0 ||
        mode != CUDNN_CROSS_CORRELATION)
        return c && c->magic == MAGIC_C ? CUDNN_STATUS_NOT_SUPPORTED : BAD;
    c->pad_h = pad_h, c->pad_w = pad_w, c->u = u, c->v = v, c->dh = dh, c->dw = dw, c->mode = mode;
    return OK;
}

static int out_dim(int in, int pad, int k, int stride) { return (in + 2 * pad - k) / stride + 1; }

EXPORT cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t c,
                                                          const cudnnTensorDescriptor_t x,
                                                          const cudnnFilterDescriptor_t f, int *n,
                                                          int *k, int *h, int *w)
{
    if (!vc(c) || !vt(x) || !vf(f) || !n || !k || !h || !w || x->dim[1] != f->c) return BAD;
    *n = x->dim[0];
    *k = f->k;
    *h = out_dim(x->dim[2], c->pad_h, f->r, c->u);
    *w = out_dim(x->dim[3], c->pad_w, f->s, c->v);
    return OK;
}

/* the shapes of one convolution agree (and are float) */
static int conv_ok(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t f, cudnnConvolutionDescriptor_t c,
                   cudnnTensorDescriptor_t y)
{
    return vt(x) && vf(f) && vc(c) && vt(y) && x->dt == CUDNN_DATA_FLOAT && y->dt == CUDNN_DATA_FLOAT &&
           x->dim[1] == f->c && y->dim[0] == x->dim[0] && y->dim[1] == f->k &&
           y->dim[2] == out_dim(x->dim[2], c->pad_h, f->r, c->u) &&
           y->dim[3] == out_dim(x->dim[3], c->pad_w, f->s, c->v);
}

/* the rankings: two algorithms, both exact here, the first needs WS_FWD bytes */
static cudnnStatus_t rank(cudnnHandle_t h, int ok, int req, int *ret, void *perf, size_t size,
                          int algo0, int algo1)
{
    if (!valid_h(h) || !ok || req < 1 || !ret || !perf) return BAD;
    int n = req < 2 ? req : 2;
    for (int i = 0; i < n; i++) {
        /* every cudnnConvolution*AlgoPerf_t starts algo, status, time, memory */
        cudnnConvolutionFwdAlgoPerf_t p;
        memset(&p, 0, sizeof p);
        p.algo = (cudnnConvolutionFwdAlgo_t)(i ? algo1 : algo0);
        p.status = OK;
        p.time = 0.5f + (float)i;
        p.memory = i ? 0 : WS_FWD;
        p.determinism = CUDNN_DETERMINISTIC;
        p.mathType = CUDNN_DEFAULT_MATH;
        memcpy((char *)perf + (size_t)i * size, &p, size < sizeof p ? size : sizeof p);
    }
    *ret = n;
    return OK;
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t f, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
    const int req, int *ret, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    return rank(h, conv_ok(x, f, c, y), req, ret, perf, sizeof *perf,
                CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h, const cudnnFilterDescriptor_t f,
    const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
    const int req, int *ret, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    return rank(h, conv_ok(dx, f, c, dy), req, ret, perf, sizeof *perf, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw,
    const int req, int *ret, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    return rank(h, conv_ok(x, dw, c, dy), req, ret, perf, sizeof *perf, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0);
}

/* algorithm 0 of each direction needs no workspace, every other WS_FWD */
static size_t ws_of(int algo) { return algo == 0 ? 0 : WS_FWD; }

EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t f, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
    cudnnConvolutionFwdAlgo_t algo, size_t *size)
{
    if (!valid_h(h) || !conv_ok(x, f, c, y) || !size) return BAD;
    *size = ws_of(algo);
    return OK;
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h, const cudnnFilterDescriptor_t f,
    const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *size)
{
    if (!valid_h(h) || !conv_ok(dx, f, c, dy) || !size) return BAD;
    *size = ws_of(algo);
    return OK;
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t f,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *size)
{
    if (!valid_h(h) || !conv_ok(x, f, c, dy) || !size) return BAD;
    *size = ws_of(algo);
    return OK;
}

/* y = alpha * conv(x, w) + beta * y; dir 1: dx = alpha * conv^T(dy, w) + beta * dx;
 * dir 2: dw = alpha * corr(x, dy) + beta * dw */
static void conv_run(int dir, int n, int c, int h, int w, int k, int r, int s, int ph, int pw, int u, int v,
                     int oh, int ow, const float *x, const float *f, float *y, float alpha, float beta)
{
    size_t nout = dir == 0 ? (size_t)n * k * oh * ow : dir == 1 ? (size_t)n * c * h * w : (size_t)k * c * r * s;
    float *acc = calloc(nout, sizeof *acc);
    if (!acc) return;
    for (int in = 0; in < n; in++)
        for (int ik = 0; ik < k; ik++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++)
                    for (int ic = 0; ic < c; ic++)
                        for (int ir = 0; ir < r; ir++)
                            for (int is = 0; is < s; is++) {
                                int iy = oy * u - ph + ir, ix = ox * v - pw + is;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                size_t xi = ((size_t)(in * c + ic) * h + iy) * w + ix;
                                size_t fi = ((size_t)(ik * c + ic) * r + ir) * s + is;
                                size_t yi = ((size_t)(in * k + ik) * oh + oy) * ow + ox;
                                if (dir == 0) acc[yi] += x[xi] * f[fi];
                                else if (dir == 1) acc[xi] += y[yi] * f[fi];
                                else acc[fi] += x[xi] * y[yi];
                            }
    float *out = dir == 0 ? y : dir == 1 ? (float *)x : (float *)f;
    for (size_t i = 0; i < nout; i++) out[i] = alpha * acc[i] + (beta != 0 ? beta * out[i] : 0);
    free(acc);
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
    const void *x, const cudnnFilterDescriptor_t fd, const void *f, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss, const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
    if (!valid_h(h) || !conv_ok(xd, fd, cd, yd) || !alpha || !beta || !x || !f || !y) return BAD;
    if (wss < ws_of(algo) || (ws_of(algo) && !ws)) return BAD;
    conv_run(0, xd->dim[0], xd->dim[1], xd->dim[2], xd->dim[3], fd->k, fd->r, fd->s, cd->pad_h, cd->pad_w,
             cd->u, cd->v, yd->dim[2], yd->dim[3], x, f, y, *(const float *)alpha, *(const float *)beta);
    return OK;
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t fd,
    const void *f, const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t wss, const void *beta, const cudnnTensorDescriptor_t dxd,
    void *dx)
{
    if (!valid_h(h) || !conv_ok(dxd, fd, cd, dyd) || !alpha || !beta || !f || !dy || !dx) return BAD;
    if (wss < ws_of(algo) || (ws_of(algo) && !ws)) return BAD;
    conv_run(1, dxd->dim[0], dxd->dim[1], dxd->dim[2], dxd->dim[3], fd->k, fd->r, fd->s, cd->pad_h, cd->pad_w,
             cd->u, cd->v, dyd->dim[2], dyd->dim[3], dx, f, (float *)dy, *(const float *)alpha,
             *(const float *)beta);
    return OK;
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
    const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t dyd, const void *dy,
    const cudnnConvolutionDescriptor_t cd, cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t wss,
    const void *beta, const cudnnFilterDescriptor_t fd, void *dw)
{
    if (!valid_h(h) || !conv_ok(xd, fd, cd, dyd) || !alpha || !beta || !x || !dy || !dw) return BAD;
    if (wss < ws_of(algo) || (ws_of(algo) && !ws)) return BAD;
    conv_run(2, xd->dim[0], xd->dim[1], xd->dim[2], xd->dim[3], fd->k, fd->r, fd->s, cd->pad_h, cd->pad_w,
             cd->u, cd->v, dyd->dim[2], dyd->dim[3], x, dw, (float *)dy, *(const float *)alpha,
             *(const float *)beta);
    return OK;
}

/* ---- the backend API: descriptors are attribute stores -------------------------- */
#define MAXATTR 24
typedef struct attr {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    int64_t count;
    void *bytes;
} attr;
typedef struct bdesc {
    uint32_t magic;
    cudnnBackendDescriptorType_t type;
    int finalized;
    attr a[MAXATTR];
    int na;
} bdesc;
#define MAGIC_B 0xbacdu

static bdesc *bd(cudnnBackendDescriptor_t d)
{
    bdesc *b = d;
    return b && b->magic == MAGIC_B ? b : NULL;
}

static size_t elem_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_VOID_PTR: case CUDNN_TYPE_BACKEND_DESCRIPTOR:
    case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_BOOLEAN: case CUDNN_TYPE_CHAR: return 1;
    case CUDNN_TYPE_FRACTION: return 16;
    default: return (unsigned)t <= CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE ? 4 : 0;
    }
}

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d)
{
    if (!d) return BAD;
    bdesc *b = calloc(1, sizeof *b);
    if (!b) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    b->magic = MAGIC_B;
    b->type = type;
    *d = b;
    return OK;
}

static void clear(bdesc *b)
{
    for (int i = 0; i < b->na; i++) free(b->a[i].bytes);
    b->na = 0;
}

EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    bdesc *b = bd(d);
    if (!b) return BAD;
    clear(b);
    b->magic = 0;
    free(b);
    return OK;
}

static attr *find(bdesc *b, cudnnBackendAttributeName_t n)
{
    for (int i = 0; i < b->na; i++)
        if (b->a[i].name == n) return &b->a[i];
    return NULL;
}

static cudnnStatus_t put(bdesc *b, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t t, int64_t count,
                         const void *el)
{
    attr *a = find(b, n);
    if (!a) {
        if (b->na == MAXATTR) return CUDNN_STATUS_NOT_SUPPORTED;
        a = &b->a[b->na++];
        a->name = n;
    }
    free(a->bytes);
    size_t len = (size_t)count * elem_size(t);
    a->bytes = malloc(len ? len : 1);
    if (!a->bytes) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    memcpy(a->bytes, el, len);
    a->type = t;
    a->count = count;
    return OK;
}

EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t n,
                                             cudnnBackendAttributeType_t t, int64_t count, const void *el)
{
    bdesc *b = bd(d);
    if (!b || b->finalized || count < 0 || count > 64 || !elem_size(t) || (count && !el)) return BAD;
    /* descriptors and handles named must be live ones */
    for (int64_t i = 0; i < count; i++) {
        void *p;
        memcpy(&p, (const char *)el + i * 8, t == CUDNN_TYPE_BACKEND_DESCRIPTOR || t == CUDNN_TYPE_HANDLE ? 8 : 0);
        if (t == CUDNN_TYPE_BACKEND_DESCRIPTOR && !bd(p)) return BAD;
        if (t == CUDNN_TYPE_HANDLE && !valid_h(p)) return BAD;
    }
    return put(b, n, t, count, el);
}

static int64_t i64(bdesc *b, cudnnBackendAttributeName_t n, int i, int64_t dflt)
{
    attr *a = b ? find(b, n) : NULL;
    if (!a || a->type != CUDNN_TYPE_INT64 || i >= a->count) return dflt;
    int64_t v;
    memcpy(&v, (char *)a->bytes + 8 * i, 8);
    return v;
}

static void *ptr(bdesc *b, cudnnBackendAttributeName_t n, int i)
{
    attr *a = b ? find(b, n) : NULL;
    if (!a || elem_size(a->type) != 8 || i >= a->count) return NULL;
    void *p;
    memcpy(&p, (char *)a->bytes + 8 * i, 8);
    return p;
}

/* the one graph the fake runs: a float convolution forward of 4-D tensors */
static bdesc *conv_op(bdesc *graph)
{
    bdesc *op = bd(ptr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 0));
    if (!op || op->type != CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) return NULL;
    bdesc *x = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, 0));
    bdesc *w = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, 0));
    bdesc *y = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, 0));
    bdesc *c = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, 0));
    if (!x || !w || !y || !c || i64(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 0, 0) != 2) return NULL;
    for (int i = 0; i < 4; i++)
        if (i64(x, CUDNN_ATTR_TENSOR_DIMENSIONS, i, 0) < 1 || i64(w, CUDNN_ATTR_TENSOR_DIMENSIONS, i, 0) < 1 ||
            i64(y, CUDNN_ATTR_TENSOR_DIMENSIONS, i, 0) < 1)
            return NULL;
    return op;
}

EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    bdesc *b = bd(d);
    if (!b || b->finalized) return BAD;
    switch (b->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        if (!find(b, CUDNN_ATTR_TENSOR_DIMENSIONS) || !find(b, CUDNN_ATTR_TENSOR_STRIDES) ||
            !find(b, CUDNN_ATTR_TENSOR_UNIQUE_ID))
            return BAD;
        break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        if (!conv_op(b)) return CUDNN_STATUS_NOT_SUPPORTED;
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        if (!bd(ptr(b, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0))) return BAD;
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
        bdesc *cfg = bd(ptr(b, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0));
        if (!cfg || !cfg->finalized || !valid_h(ptr(b, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, 0))) return BAD;
        int64_t ws = WS_FWD;
        cudnnStatus_t s = put(b, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &ws);
        if (s) return s;
        break;
    }
    default:
        break;
    }
    b->finalized = 1;
    return OK;
}

EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t n,
                                             cudnnBackendAttributeType_t t, int64_t req, int64_t *count, void *el)
{
    bdesc *b = bd(d);
    if (!b || !count || req < 0 || (req && !el) || !elem_size(t)) return BAD;
    if (b->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && n == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
        /* one configuration: its engine runs the heuristics' graph. cuDNN
         * fills the ENGINECFG descriptors the caller created */
        if (!b->finalized || t != CUDNN_TYPE_BACKEND_DESCRIPTOR) return BAD;
        *count = 1;
        if (req >= 1) {
            bdesc *cfg = bd(((void **)el)[0]);
            if (!cfg || cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) return BAD;
            clear(cfg);
            void *graph = ptr(b, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);
            cudnnStatus_t s = put(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
            if (s) return s;
            cfg->finalized = 1;
        }
        return OK;
    }
    if (!b->finalized) return CUDNN_STATUS_NOT_INITIALIZED; /* cuDNN 9 (H200, 2026-11-28) */
    attr *a = find(b, n);
    if (!a) return CUDNN_STATUS_NOT_SUPPORTED;
    if (a->type != t) return BAD;
    /* cuDNN 9 counts the elements it wrote when asked for fewer (H200) */
    *count = req > 0 && req < a->count ? req : a->count;
    memcpy(el, a->bytes, (size_t)(req < a->count ? req : a->count) * elem_size(t));
    return OK;
}

EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan_, cudnnBackendDescriptor_t pack_)
{
    bdesc *plan = bd(plan_), *pack = bd(pack_);
    if (!valid_h(h) || !plan || !pack || !plan->finalized || !pack->finalized ||
        plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || pack->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        return BAD;
    bdesc *cfg = bd(ptr(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0));
    bdesc *op = conv_op(bd(ptr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0)));
    if (!op) return CUDNN_STATUS_EXECUTION_FAILED;
    if (!ptr(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, 0)) return BAD; /* WS_FWD bytes needed */
    bdesc *x = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, 0));
    bdesc *w = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, 0));
    bdesc *y = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, 0));
    bdesc *c = bd(ptr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, 0));
    attr *ids = find(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS), *ps = find(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    if (!ids || !ps || ids->count != ps->count) return BAD;
    void *data[3] = {0};
    bdesc *ts[3] = {x, w, y};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < ids->count; i++)
            if (i64(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, i, -1) == i64(ts[k], CUDNN_ATTR_TENSOR_UNIQUE_ID, 0, -2))
                data[k] = ptr(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, i);
    if (!data[0] || !data[1] || !data[2]) return BAD;
    float alpha = 1, beta = 0;
    attr *aa = find(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA), *ba = find(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA);
    if (aa && aa->type == CUDNN_TYPE_FLOAT) memcpy(&alpha, aa->bytes, 4);
    if (ba && ba->type == CUDNN_TYPE_FLOAT) memcpy(&beta, ba->bytes, 4);
#define D(t, i) ((int)i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, i, 1))
    conv_run(0, D(x, 0), D(x, 1), D(x, 2), D(x, 3), D(w, 0), D(w, 2), D(w, 3),
             (int)i64(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 0, 0), (int)i64(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 1, 0),
             (int)i64(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 0, 1), (int)i64(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 1, 1),
             D(y, 2), D(y, 3), data[0], data[1], data[2], alpha, beta);
#undef D
    return OK;
}

/* ---- layers: activation, pooling, softmax, batch normalization (float NCHW) ---- */

struct cudnnActivationStruct { uint32_t magic; cudnnActivationMode_t mode; double coef; };
struct cudnnPoolingStruct { uint32_t magic; cudnnPoolingMode_t mode; int wh, ww, ph, pw, sh, sw; };
#define MAGIC_A 0xac71u
#define MAGIC_P 0x9001u
CREATE(cudnnCreateActivationDescriptor, cudnnActivationDescriptor_t, MAGIC_A)
CREATE(cudnnCreatePoolingDescriptor, cudnnPoolingDescriptor_t, MAGIC_P)
DESTROY(cudnnDestroyActivationDescriptor, cudnnActivationDescriptor_t, MAGIC_A)
DESTROY(cudnnDestroyPoolingDescriptor, cudnnPoolingDescriptor_t, MAGIC_P)

static size_t count4(cudnnTensorDescriptor_t t) { return (size_t)t->dim[0] * t->dim[1] * t->dim[2] * t->dim[3]; }
static int same4(cudnnTensorDescriptor_t a, cudnnTensorDescriptor_t b)
{
    return vt(a) && vt(b) && a->dt == CUDNN_DATA_FLOAT && memcmp(a->dim, b->dim, 4 * sizeof(int)) == 0;
}
static float blend(const void *alpha, const void *beta, float v, float old)
{
    float b = *(const float *)beta;
    return *(const float *)alpha * v + (b != 0 ? b * old : 0);
}

EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t a, cudnnActivationMode_t mode,
                                                 cudnnNanPropagation_t nan, double coef)
{
    (void)nan;
    if (!a || a->magic != MAGIC_A) return BAD;
    if (mode != CUDNN_ACTIVATION_RELU) return CUDNN_STATUS_NOT_SUPPORTED;
    a->mode = mode;
    a->coef = coef;
    return OK;
}

EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t h, cudnnActivationDescriptor_t a, const void *alpha,
                                           const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
                                           const cudnnTensorDescriptor_t yd, void *y)
{
    if (!valid_h(h) || !a || a->magic != MAGIC_A || !same4(xd, yd) || !alpha || !beta || !x || !y) return BAD;
    const float *xs = x;
    float *ys = y;
    for (size_t i = 0; i < count4(xd); i++) ys[i] = blend(alpha, beta, xs[i] > 0 ? xs[i] : 0, ys[i]);
    return OK;
}

EXPORT cudnnStatus_t cudnnActivationBackward(cudnnHandle_t h, cudnnActivationDescriptor_t a, const void *alpha,
                                            const cudnnTensorDescriptor_t yd, const void *y,
                                            const cudnnTensorDescriptor_t dyd, const void *dy,
                                            const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
                                            const cudnnTensorDescriptor_t dxd, void *dx)
{
    if (!valid_h(h) || !a || a->magic != MAGIC_A || !same4(xd, yd) || !same4(xd, dyd) || !same4(xd, dxd) ||
        !alpha || !beta || !x || !y || !dy || !dx)
        return BAD;
    const float *ys = y, *dys = dy;
    float *dxs = dx;
    for (size_t i = 0; i < count4(xd); i++) dxs[i] = blend(alpha, beta, ys[i] > 0 ? dys[i] : 0, dxs[i]);
    return OK;
}

EXPORT cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t p, cudnnPoolingMode_t mode,
                                                cudnnNanPropagation_t nan, int wh, int ww, int ph, int pw, int sh,
                                                int sw)
{
    (void)nan;
    if (!p || p->magic != MAGIC_P || wh < 1 || ww < 1 || ph < 0 || pw < 0 || sh < 1 || sw < 1) return BAD;
    if (mode != CUDNN_POOLING_MAX) return CUDNN_STATUS_NOT_SUPPORTED;
    p->mode = mode, p->wh = wh, p->ww = ww, p->ph = ph, p->pw = pw, p->sh = sh, p->sw = sw;
    return OK;
}

EXPORT cudnnStatus_t cudnnGetPooling2dForwardOutputDim(const cudnnPoolingDescriptor_t p,
                                                      const cudnnTensorDescriptor_t x, int *n, int *c, int *h,
                                                      int *w)
{
    if (!p || p->magic != MAGIC_P || p->wh < 1 || !vt(x) || !n || !c || !h || !w) return BAD;
    *n = x->dim[0], *c = x->dim[1];
    *h = (x->dim[2] + 2 * p->ph - p->wh) / p->sh + 1;
    *w = (x->dim[3] + 2 * p->pw - p->ww) / p->sw + 1;
    return OK;
}

EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t h, const cudnnPoolingDescriptor_t p, const void *alpha,
                                        const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
                                        const cudnnTensorDescriptor_t yd, void *y)
{
    int n, c, oh, ow;
    if (!valid_h(h) || cudnnGetPooling2dForwardOutputDim(p, xd, &n, &c, &oh, &ow) != OK || !vt(yd) ||
        yd->dim[0] != n || yd->dim[1] != c || yd->dim[2] != oh || yd->dim[3] != ow || !alpha || !beta || !x || !y)
        return BAD;
    const float *xs = x;
    float *ys = y;
    int H = xd->dim[2], W = xd->dim[3];
    for (int i = 0; i < n * c; i++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                float m = -INFINITY;
                for (int a = 0; a < p->wh; a++)
                    for (int b = 0; b < p->ww; b++) {
                        int iy = oy * p->sh - p->ph + a, ix = ox * p->sw - p->pw + b;
                        if (iy >= 0 && iy < H && ix >= 0 && ix < W) m = fmaxf(m, xs[((size_t)i * H + iy) * W + ix]);
                    }
                size_t o = ((size_t)i * oh + oy) * ow + ox;
                ys[o] = blend(alpha, beta, m, ys[o]);
            }
    return OK;
}

EXPORT cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                                        const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
                                        const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
    if (!valid_h(h) || !same4(xd, yd) || !alpha || !beta || !x || !y) return BAD;
    if (algo != CUDNN_SOFTMAX_ACCURATE || mode != CUDNN_SOFTMAX_MODE_CHANNEL) return CUDNN_STATUS_NOT_SUPPORTED;
    const float *xs = x;
    float *ys = y;
    int N = xd->dim[0], C = xd->dim[1], P = xd->dim[2] * xd->dim[3];
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++) {
            float m = -INFINITY, s = 0;
            for (int c = 0; c < C; c++) m = fmaxf(m, xs[((size_t)n * C + c) * P + p]);
            for (int c = 0; c < C; c++) s += expf(xs[((size_t)n * C + c) * P + p] - m);
            for (int c = 0; c < C; c++) {
                size_t i = ((size_t)n * C + c) * P + p;
                ys[i] = blend(alpha, beta, expf(xs[i] - m) / s, ys[i]);
            }
        }
    return OK;
}

EXPORT cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t bn, const cudnnTensorDescriptor_t x,
                                                  cudnnBatchNormMode_t mode)
{
    if (!bn || bn->magic != MAGIC_T || !vt(x)) return BAD;
    if (mode != CUDNN_BATCHNORM_SPATIAL) return CUDNN_STATUS_NOT_SUPPORTED;
    return cudnnSetTensor4dDescriptor(bn, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, x->dim[1], 1, 1);
}

static int bn_ok(cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnTensorDescriptor_t xd,
                 cudnnTensorDescriptor_t yd, cudnnTensorDescriptor_t bnd, double eps)
{
    return valid_h(h) && mode == CUDNN_BATCHNORM_SPATIAL && same4(xd, yd) && vt(bnd) && bnd->dim[1] == xd->dim[1] &&
           bnd->dim[0] == 1 && bnd->dim[2] == 1 && bnd->dim[3] == 1 && eps >= CUDNN_BN_MIN_EPSILON;
}

/* the *Ex form's workspace: zDesc and activationDesc are optional (NULL: no
 * residual add, no activation), as in cuDNN; the fake needs no workspace */
EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(cudnnHandle_t h,
    cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t xd,
    const cudnnTensorDescriptor_t zd, const cudnnTensorDescriptor_t yd, const cudnnTensorDescriptor_t bnd,
    const cudnnActivationDescriptor_t ad, size_t *size)
{
    if (!bn_ok(h, mode, xd, yd, bnd, CUDNN_BN_MIN_EPSILON) || !size) return BAD;
    if (zd && !vt(zd)) return BAD;
    if (ad && ad->magic != MAGIC_A) return BAD;
    if (ops != CUDNN_BATCHNORM_OPS_BN && !ad) return BAD; /* an activation needs its descriptor */
    /* the fake needs none; a size that depends on the shape shows an answer
     * given for other descriptors (tests/cudnn/step_loop.c) */
    *size = count4(xd) * sizeof(float);
    return OK;
}

EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(cudnnHandle_t h, cudnnBatchNormMode_t mode,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnTensorDescriptor_t yd, void *y, const cudnnTensorDescriptor_t bnd, const void *scale,
    const void *bias, double factor, void *rmean, void *rvar, double eps, void *smean, void *sinv)
{
    if (!bn_ok(h, mode, xd, yd, bnd, eps) || !alpha || !beta || !x || !y || !scale || !bias) return BAD;
    const float *xs = x, *sc = scale, *bi = bias;
    float *ys = y, *rm = rmean, *rv = rvar, *sm = smean, *si = sinv;
    int N = xd->dim[0], C = xd->dim[1], P = xd->dim[2] * xd->dim[3], m = N * P;
    for (int c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < P; p++) s += xs[((size_t)n * C + c) * P + p];
        double mean = s / m;
        for (int n = 0; n < N; n++)
            for (int p = 0; p < P; p++) {
                double d = xs[((size_t)n * C + c) * P + p] - mean;
                q += d * d;
            }
        double inv = 1.0 / sqrt(q / m + eps);
        for (int n = 0; n < N; n++)
            for (int p = 0; p < P; p++) {
                size_t i = ((size_t)n * C + c) * P + p;
                ys[i] = blend(alpha, beta, (float)(sc[c] * (xs[i] - mean) * inv + bi[c]), ys[i]);
            }
        if (rm && rv) {
            rm[c] = (float)((1 - factor) * rm[c] + factor * mean);
            rv[c] = (float)((1 - factor) * rv[c] + factor * (m > 1 ? q / (m - 1) : 0));
        }
        if (sm && si) {
            sm[c] = (float)mean;
            si[c] = (float)inv;
        }
    }
    return OK;
}

EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t h, cudnnBatchNormMode_t mode,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnTensorDescriptor_t yd, void *y, const cudnnTensorDescriptor_t bnd, const void *scale,
    const void *bias, const void *emean, const void *evar, double eps)
{
    if (!bn_ok(h, mode, xd, yd, bnd, eps) || !alpha || !beta || !x || !y || !scale || !bias || !emean || !evar)
        return BAD;
    const float *xs = x, *sc = scale, *bi = bias, *em = emean, *ev = evar;
    float *ys = y;
    int N = xd->dim[0], C = xd->dim[1], P = xd->dim[2] * xd->dim[3];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < P; p++) {
                size_t i = ((size_t)n * C + c) * P + p;
                ys[i] = blend(alpha, beta, (float)(sc[c] * (xs[i] - em[c]) / sqrt(ev[c] + eps) + bi[c]), ys[i]);
            }
    return OK;
}

/* ---- Find: the same ranking as Get_v7 (the fake's "timings" are fixed) --------- */
EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t f, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
    const int req, int *ret, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    return cudnnGetConvolutionForwardAlgorithm_v7(h, x, f, c, y, req, ret, perf);
}

EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t h, const cudnnTensorDescriptor_t xd,
    const void *x, const cudnnFilterDescriptor_t fd, const void *f, const cudnnConvolutionDescriptor_t cd,
    const cudnnTensorDescriptor_t yd, void *y, const int req, int *ret, cudnnConvolutionFwdAlgoPerf_t *perf,
    void *ws, size_t wss)
{
    /* runs each candidate into y, as cuDNN does; only those that fit wss */
    cudnnStatus_t s = cudnnGetConvolutionForwardAlgorithm_v7(h, xd, fd, cd, yd, req, ret, perf);
    if (s != OK) return s;
    if (!x || !f || !y) return BAD;
    for (int i = 0; i < *ret; i++)
        if (perf[i].memory > wss || (perf[i].memory && !ws)) perf[i].status = CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
    return OK;
}
