/* Hand-written guest code for specs/cudnn.yaml.
 *
 * cudnnGetErrorString returns a string the caller never frees: the stub
 * asks the server's library once per status value (apigenCudnnStatusText)
 * and keeps the answer for the life of the process (apigen_kept_text), so
 * the text is exactly cuDNN's. Without a server it says so instead of
 * inventing cuDNN's wording. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "cudnn_wire.h"

static bool status_text(long status, char *buf, size_t n)
{
    return apigenCudnnStatusText((cudnnStatus_t)status, buf, (unsigned int)n) ==
           CUDNN_STATUS_SUCCESS;
}

APIGEN_EXPORT const char *cudnnGetErrorString(cudnnStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, status_text);
    return s ? s : "apigen: no cuDNN server to ask for this status's text";
}

/* `reads:` (specs/cudnn.yaml defaults.params): how many bytes of a host
 * scalar the caller's object holds. cuDNN's alpha and beta are a double for
 * double tensors and a float for every other type; cudnnSetTensor's value is
 * one element of the tensor's type. The descriptor's type is kept from the
 * setters below (wrap: guest); a descriptor the guest has not seen set (a
 * derived one) is asked of the server once. A descriptor the server does
 * not know answers 4 bytes, and the call itself then fails on it. So the
 * stub never reads past the caller's float. kind: 0 a tensor descriptor, 1
 * a filter descriptor. */
#define TYPES 4096 /* descriptors whose type is kept; past that, asked each time */
typedef struct {
    uintptr_t desc; /* 0: free; the descriptor's id, its low bit the kind */
    cudnnDataType_t dt;
} type_entry;
static type_entry types[TYPES];
static pthread_mutex_t types_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(uintptr_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) % TYPES;
}

static uintptr_t key_of(const void *desc, unsigned kind)
{
    return (uintptr_t)desc << 1 | (kind & 1);
}

static void type_note(const void *desc, unsigned kind, cudnnDataType_t dt)
{
    if (!desc) return;
    uintptr_t k = key_of(desc, kind);
    pthread_mutex_lock(&types_mu);
    for (size_t i = slot_of(k), n = 0; n < TYPES; i = (i + 1) % TYPES, n++)
        if (types[i].desc == k || types[i].desc == 0) {
            types[i].desc = k;
            types[i].dt = dt;
            break;
        }
    pthread_mutex_unlock(&types_mu);
}

/* linear probing with deletion: the entries after a removed one move up */
static void type_forget(const void *desc, unsigned kind)
{
    if (!desc) return;
    uintptr_t k = key_of(desc, kind);
    pthread_mutex_lock(&types_mu);
    size_t i = slot_of(k), n = 0;
    while (n < TYPES && types[i].desc && types[i].desc != k) i = (i + 1) % TYPES, n++;
    if (n < TYPES && types[i].desc == k) {
        types[i].desc = 0;
        for (size_t j = (i + 1) % TYPES; types[j].desc; j = (j + 1) % TYPES) {
            type_entry ej = types[j];
            types[j].desc = 0;
            for (size_t h = slot_of(ej.desc);; h = (h + 1) % TYPES)
                if (!types[h].desc) {
                    types[h] = ej;
                    break;
                }
        }
    }
    pthread_mutex_unlock(&types_mu);
}

static int type_known(const void *desc, unsigned kind, cudnnDataType_t *dt)
{
    uintptr_t k = key_of(desc, kind);
    int found = 0;
    pthread_mutex_lock(&types_mu);
    for (size_t i = slot_of(k), n = 0; n < TYPES && types[i].desc; i = (i + 1) % TYPES, n++)
        if (types[i].desc == k) {
            *dt = types[i].dt;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&types_mu);
    return found;
}

static cudnnDataType_t desc_type(const void *desc, unsigned kind, int *ok)
{
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    if (desc && type_known(desc, kind, &dt)) {
        *ok = 1;
        return dt;
    }
    int nb = 0, dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
    cudnnStatus_t s;
    apigen_hold_deferred(true); /* a queued call's error is the application's next call's */
    if (kind == 0) {
        s = cudnnGetTensorNdDescriptor((cudnnTensorDescriptor_t)desc, CUDNN_DIM_MAX, &dt, &nb, dims, strides);
    } else {
        cudnnTensorFormat_t fmt;
        s = cudnnGetFilterNdDescriptor((cudnnFilterDescriptor_t)desc, CUDNN_DIM_MAX, &dt, &fmt, &nb, dims);
    }
    apigen_hold_deferred(false);
    *ok = s == CUDNN_STATUS_SUCCESS;
    if (*ok) type_note(desc, kind, dt);
    return dt;
}

size_t cudnn_scalar_bytes(const void *desc, unsigned kind)
{
    int ok;
    cudnnDataType_t dt = desc_type(desc, kind, &ok);
    return ok && dt == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float);
}

size_t cudnn_elem_bytes(const void *desc, unsigned kind)
{
    int ok;
    cudnnDataType_t dt = desc_type(desc, kind, &ok);
    if (!ok) return 4;
    switch (dt) {
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64: return 8;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN:
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2: return 1;
    default: return 4;
    }
}

/* the generated forwarders of the wrapped functions (wrap: {guest: true}) */
cudnnStatus_t cudnn_fwd_cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t, cudnnTensorFormat_t, cudnnDataType_t,
                                                   int, int, int, int);
cudnnStatus_t cudnn_fwd_cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t, cudnnDataType_t, int, int, int, int,
                                                     int, int, int, int);
cudnnStatus_t cudnn_fwd_cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t, cudnnDataType_t, int, const int[],
                                                   const int[]);
cudnnStatus_t cudnn_fwd_cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t, cudnnTensorFormat_t, cudnnDataType_t,
                                                     int, const int[]);
cudnnStatus_t cudnn_fwd_cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t, cudnnDataType_t, cudnnTensorFormat_t,
                                                   int, int, int, int);
cudnnStatus_t cudnn_fwd_cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t, cudnnDataType_t, cudnnTensorFormat_t,
                                                   int, const int[]);
cudnnStatus_t cudnn_fwd_cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t);
cudnnStatus_t cudnn_fwd_cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t);
cudnnStatus_t cudnn_fwd_cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
                                                      cudnnBatchNormMode_t);
cudnnStatus_t cudnn_fwd_cudnnDeriveNormTensorDescriptor(cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
                                                        const cudnnTensorDescriptor_t, cudnnNormMode_t, int);
cudnnStatus_t cudnn_fwd_cudnnInitTransformDest(const cudnnTensorTransformDescriptor_t, const cudnnTensorDescriptor_t,
                                               cudnnTensorDescriptor_t, size_t *);

/* The setters note the type they set; a failed set leaves the descriptor as
 * it was, so its entry goes (asked again next time). A tensor descriptor's
 * setter also notes its arguments: what the descriptor holds, for the size
 * queries answered in the guest (below). */
static cudnnStatus_t noted(cudnnStatus_t s, const void *desc, unsigned kind, cudnnDataType_t dt)
{
    if (s == CUDNN_STATUS_SUCCESS) type_note(desc, kind, dt);
    else type_forget(desc, kind);
    return s;
}

APIGEN_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f,
                                                      cudnnDataType_t dt, int n, int c, int h, int w)
{
    return noted(cudnn_fwd_cudnnSetTensor4dDescriptor(d, f, dt, n, c, h, w), d, 0, dt);
}

APIGEN_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int n,
                                                        int c, int h, int w, int ns, int cs, int hs, int ws)
{
    return noted(cudnn_fwd_cudnnSetTensor4dDescriptorEx(d, dt, n, c, h, w, ns, cs, hs, ws), d, 0, dt);
}

APIGEN_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int nb,
                                                      const int dimA[], const int strideA[])
{
    return noted(cudnn_fwd_cudnnSetTensorNdDescriptor(d, dt, nb, dimA, strideA), d, 0, dt);
}

APIGEN_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f,
                                                        cudnnDataType_t dt, int nb, const int dimA[])
{
    return noted(cudnn_fwd_cudnnSetTensorNdDescriptorEx(d, f, dt, nb, dimA), d, 0, dt);
}

APIGEN_EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dt,
                                                      cudnnTensorFormat_t f, int k, int c, int h, int w)
{
    return noted(cudnn_fwd_cudnnSetFilter4dDescriptor(d, dt, f, k, c, h, w), d, 1, dt);
}

APIGEN_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dt,
                                                      cudnnTensorFormat_t f, int nb, const int filterDimA[])
{
    return noted(cudnn_fwd_cudnnSetFilterNdDescriptor(d, dt, f, nb, filterDimA), d, 1, dt);
}

static void live_forget(const void *desc); /* below: descriptors this process created */

/* what ends a descriptor or sets its type another way: forgotten */
APIGEN_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
    type_forget(d, 0);
    cudnnStatus_t s = cudnn_fwd_cudnnDestroyTensorDescriptor(d); /* asks live_has first */
    if (s == CUDNN_STATUS_SUCCESS) live_forget(d);
    return s;
}

APIGEN_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d)
{
    type_forget(d, 1);
    cudnnStatus_t s = cudnn_fwd_cudnnDestroyFilterDescriptor(d);
    if (s == CUDNN_STATUS_SUCCESS) live_forget(d);
    return s;
}

APIGEN_EXPORT cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derived,
                                                         const cudnnTensorDescriptor_t x, cudnnBatchNormMode_t mode)
{
    type_forget(derived, 0);
    return cudnn_fwd_cudnnDeriveBNTensorDescriptor(derived, x, mode);
}

APIGEN_EXPORT cudnnStatus_t cudnnDeriveNormTensorDescriptor(cudnnTensorDescriptor_t scale_bias,
                                                           cudnnTensorDescriptor_t mean_var,
                                                           const cudnnTensorDescriptor_t x, cudnnNormMode_t mode,
                                                           int groups)
{
    type_forget(scale_bias, 0);
    type_forget(mean_var, 0);
    return cudnn_fwd_cudnnDeriveNormTensorDescriptor(scale_bias, mean_var, x, mode, groups);
}

APIGEN_EXPORT cudnnStatus_t cudnnInitTransformDest(const cudnnTensorTransformDescriptor_t t,
                                                  const cudnnTensorDescriptor_t src, cudnnTensorDescriptor_t dest,
                                                  size_t *size)
{
    type_forget(dest, 0);
    return cudnn_fwd_cudnnInitTransformDest(t, src, dest, size);
}

/* ---- tensor and filter descriptors this process created and has not destroyed -------
 * A set or destroy on one of them may be queued; on any other (destroyed, forged, made
 * by another process) it goes sync, so the server's refusal is the call's error at
 * the call, as cuDNN's own would be (the guest vouches for any id of its session,
 * a freed one too). Ids are unique in a session, so one set serves both kinds. */
#define LIVE 8192
static uintptr_t live[LIVE]; /* 0: free */
static size_t nlive;
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;

static void live_note(const void *desc)
{
    uintptr_t k = (uintptr_t)desc;
    pthread_mutex_lock(&live_mu);
    if (k && nlive < LIVE - 1) /* one slot stays free: probes end */
        for (size_t i = slot_of(k) % LIVE;; i = (i + 1) % LIVE) {
            if (live[i] == k) break;
            if (!live[i]) {
                live[i] = k;
                nlive++;
                break;
            }
        }
    pthread_mutex_unlock(&live_mu);
}

static bool live_has(const void *desc)
{
    uintptr_t k = (uintptr_t)desc;
    bool found = false;
    pthread_mutex_lock(&live_mu);
    for (size_t i = slot_of(k) % LIVE; k && live[i]; i = (i + 1) % LIVE)
        if (live[i] == k) {
            found = true;
            break;
        }
    pthread_mutex_unlock(&live_mu);
    return found;
}

static void live_forget(const void *desc)
{
    uintptr_t k = (uintptr_t)desc;
    pthread_mutex_lock(&live_mu);
    size_t i = slot_of(k) % LIVE;
    while (k && live[i] && live[i] != k) i = (i + 1) % LIVE;
    if (k && live[i] == k) { /* linear probing: the entries after it move up */
        live[i] = 0;
        nlive--;
        for (size_t j = (i + 1) % LIVE; live[j]; j = (j + 1) % LIVE) {
            uintptr_t kj = live[j];
            live[j] = 0;
            for (size_t h = slot_of(kj) % LIVE;; h = (h + 1) % LIVE)
                if (!live[h]) {
                    live[h] = kj;
                    break;
                }
        }
    }
    pthread_mutex_unlock(&live_mu);
}

/* ---- a sync call now and then ----------------------------------------------------------
 * An error a queued cuDNN call meets reaches the program at the thread's next synchronous
 * cuDNN call (api.errors.async: next_call), not at a runtime call. With its descriptors
 * queued and its size queries kept, a training step may make no synchronous cuDNN call
 * at all, so a failed convolution would go unreported. The per-operation calls this
 * file lets go without a round trip (a variant pack's create) therefore go
 * synchronously every SYNC_EVERY-th time on each thread: an error reaches the program
 * within that many operations (the kept sizes: the runtime's RT_MEMO_ASK_EVERY, the
 * same rule for memoized queries). Still needed with async_repeats (docs/internals.md
 * "Errors of queued calls"): cuDNN's compute calls are queued without a check, as their
 * descriptors are made per operation and their ids never repeat. */
#define SYNC_EVERY 16
static _Thread_local unsigned since_sync;

static bool sync_due(void)
{
    if (++since_sync < SYNC_EVERY) return false;
    since_sync = 0;
    return true;
}

/* ---- descriptor creates: the first of each kind sync, the rest queued ----------------
 * cuDNN 9 loads the sub-library that holds a descriptor kind (ops, cnn, adv) at its
 * first use, and a program may probe for one by creating a descriptor
 * (CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, NOT_SUPPORTED). So each create goes
 * synchronously until one succeeded in this process; from then on its code is loaded
 * and the one failure left is host memory running out, which a queued create returns
 * at the next sync call (specs/cudnn.yaml). FIRST_SYNC(F, T) defines F's async_check
 * F_queued and its guest wrapper (wrap: guest), which notes the first success and
 * hands the new descriptor to NOTE. */
#define FIRST_SYNC(F, T, NOTE)                                                           \
    static atomic_bool F##_loaded;                                                       \
    bool F##_queued(T *d)                                                                \
    {                                                                                    \
        (void)d;                                                                         \
        return atomic_load(&F##_loaded);                                                 \
    }                                                                                    \
    cudnnStatus_t cudnn_fwd_##F(T *);                                                    \
    APIGEN_EXPORT cudnnStatus_t F(T *d)                                                  \
    {                                                                                    \
        cudnnStatus_t s = cudnn_fwd_##F(d);                                              \
        if (s == CUDNN_STATUS_SUCCESS) atomic_store(&F##_loaded, true);                  \
        if (s == CUDNN_STATUS_SUCCESS && d) NOTE(*d);                                    \
        return s;                                                                        \
    }
#define NOTE_NONE(d) (void)(d)
FIRST_SYNC(cudnnCreateTensorDescriptor, cudnnTensorDescriptor_t, live_note)
FIRST_SYNC(cudnnCreateFilterDescriptor, cudnnFilterDescriptor_t, live_note)
FIRST_SYNC(cudnnCreateActivationDescriptor, cudnnActivationDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateAttnDescriptor, cudnnAttnDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateCTCLossDescriptor, cudnnCTCLossDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateConvolutionDescriptor, cudnnConvolutionDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateDropoutDescriptor, cudnnDropoutDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateLRNDescriptor, cudnnLRNDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateOpTensorDescriptor, cudnnOpTensorDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreatePoolingDescriptor, cudnnPoolingDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateRNNDataDescriptor, cudnnRNNDataDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateRNNDescriptor, cudnnRNNDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateReduceTensorDescriptor, cudnnReduceTensorDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateSeqDataDescriptor, cudnnSeqDataDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateSpatialTransformerDescriptor, cudnnSpatialTransformerDescriptor_t, NOTE_NONE)
FIRST_SYNC(cudnnCreateTensorTransformDescriptor, cudnnTensorTransformDescriptor_t, NOTE_NONE)

/* a destroy is queued for a live descriptor, and for NULL (cuDNN accepts it) */
bool cudnn_destroy_tensor_queued(cudnnTensorDescriptor_t d)
{
    return !d || live_has(d);
}

bool cudnn_destroy_filter_queued(cudnnFilterDescriptor_t d)
{
    return !d || live_has(d);
}

/* ---- which setters and finalizes may be queued (async_check) ------------------------
 * A queued call returns success at once; its error, if any, reaches the
 * thread's next sync cuDNN call. So a call is queued only when nothing cuDNN
 * documents refusing is in its arguments: the descriptor is not NULL, the
 * format is NCHW or NHWC, the data type one of the floating-point ones
 * (the vectorized integer types have layout rules of their own), 4 to
 * CUDNN_DIM_MAX dimensions of at least 1, strides of at least 1, at most
 * 2^31 - 1 elements and as far between the first and the last one. Any
 * other call goes sync, and cuDNN's own answer is the call's. */
static bool float_type(cudnnDataType_t dt)
{
    return dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_DOUBLE || dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16;
}

static bool plain_format(cudnnTensorFormat_t f)
{
    return f == CUDNN_TENSOR_NCHW || f == CUDNN_TENSOR_NHWC;
}

static bool dims_ok(int nb, const int dim[], const int stride[])
{
    if (nb < 4 || nb > CUDNN_DIM_MAX || !dim) return false;
    int64_t elems = 1, last = 0;
    for (int i = 0; i < nb; i++) {
        if (dim[i] < 1 || (stride && stride[i] < 1)) return false;
        elems *= dim[i];
        if (stride) last += (int64_t)(dim[i] - 1) * stride[i];
        if (elems > INT32_MAX || last >= INT32_MAX) return false;
    }
    return true;
}

bool cudnn_tensor4d_queued(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f, cudnnDataType_t dt, int n, int c,
                           int h, int w)
{
    int dim[4] = {n, c, h, w};
    return d && live_has(d) && plain_format(f) && float_type(dt) && dims_ok(4, dim, NULL);
}

bool cudnn_tensor4d_ex_queued(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int n, int c, int h, int w, int ns,
                              int cs, int hs, int ws)
{
    int dim[4] = {n, c, h, w}, stride[4] = {ns, cs, hs, ws};
    return d && live_has(d) && float_type(dt) && dims_ok(4, dim, stride);
}

bool cudnn_tensor_nd_queued(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int nb, const int dimA[],
                            const int strideA[])
{
    return d && live_has(d) && strideA && float_type(dt) && dims_ok(nb, dimA, strideA);
}

bool cudnn_tensor_nd_ex_queued(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f, cudnnDataType_t dt, int nb,
                               const int dimA[])
{
    return d && live_has(d) && plain_format(f) && float_type(dt) && dims_ok(nb, dimA, NULL);
}

bool cudnn_filter4d_queued(cudnnFilterDescriptor_t d, cudnnDataType_t dt, cudnnTensorFormat_t f, int k, int c,
                           int h, int w)
{
    int dim[4] = {k, c, h, w};
    return d && live_has(d) && plain_format(f) && float_type(dt) && dims_ok(4, dim, NULL);
}

bool cudnn_filter_nd_queued(cudnnFilterDescriptor_t d, cudnnDataType_t dt, cudnnTensorFormat_t f, int nb,
                            const int filterDimA[])
{
    return d && live_has(d) && plain_format(f) && float_type(dt) && dims_ok(nb, filterDimA, NULL);
}

/* Variant packs the guest created, until destroyed: how many unique ids and
 * data pointers were set (-1: none yet) and whether it was finalized. cuDNN
 * finalizes a pack whose counts agree, once; such a finalize is queued,
 * any other goes sync. A pack not in the table (the table full, a pack made
 * elsewhere) goes sync too. */
#define PACKS 256 /* live at once: one per execution in flight */
static struct {
    uintptr_t id; /* 0: free */
    int64_t nids, nptrs;
    bool finalized;
} packs[PACKS];
static pthread_mutex_t packs_mu = PTHREAD_MUTEX_INITIALIZER;

static int pack_find_locked(uintptr_t id)
{
    for (int i = 0; i < PACKS && id; i++)
        if (packs[i].id == id) return i;
    return -1;
}

static void pack_note(uintptr_t id)
{
    pthread_mutex_lock(&packs_mu);
    int i = pack_find_locked(id);
    for (int k = 0; k < PACKS && i < 0; k++)
        if (!packs[k].id) i = k;
    if (i >= 0) {
        packs[i].id = id;
        packs[i].nids = packs[i].nptrs = -1;
        packs[i].finalized = false;
    }
    pthread_mutex_unlock(&packs_mu);
}

static void pack_forget(uintptr_t id)
{
    pthread_mutex_lock(&packs_mu);
    int i = pack_find_locked(id);
    if (i >= 0) packs[i].id = 0;
    pthread_mutex_unlock(&packs_mu);
}

bool cudnn_finalize_queued(cudnnBackendDescriptor_t d)
{
    pthread_mutex_lock(&packs_mu);
    int i = pack_find_locked((uintptr_t)d);
    bool ok = i >= 0 && !packs[i].finalized && packs[i].nids >= 0 && packs[i].nids == packs[i].nptrs;
    pthread_mutex_unlock(&packs_mu);
    return ok;
}

cudnnStatus_t cudnn_fwd_cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
cudnnStatus_t cudnn_fwd_cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t);
cudnnStatus_t cudnn_fwd_cudnnBackendFinalize(cudnnBackendDescriptor_t);
cudnnStatus_t cudnn_fwd_cudnnBackendSetAttribute(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                                 cudnnBackendAttributeType_t, int64_t, const void *);

/* a variant pack's create: queued after one succeeded (as FIRST_SYNC above) */
static atomic_bool packs_loaded;

bool cudnn_pack_create_queued(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d)
{
    (void)d;
    /* asked only for variant packs (the spec's async_if comes after it in the
     * condition, so count those alone) */
    return atomic_load(&packs_loaded) && (type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !sync_due());
}

APIGEN_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                        cudnnBackendDescriptor_t *d)
{
    cudnnStatus_t s = cudnn_fwd_cudnnBackendCreateDescriptor(type, d);
    if (s == CUDNN_STATUS_SUCCESS && d && type == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR) {
        atomic_store(&packs_loaded, true);
        pack_note((uintptr_t)*d);
    }
    return s;
}

APIGEN_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    pack_forget((uintptr_t)d);
    return cudnn_fwd_cudnnBackendDestroyDescriptor(d);
}

APIGEN_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                                    cudnnBackendAttributeType_t type, int64_t count,
                                                    const void *elems)
{
    cudnnStatus_t s = cudnn_fwd_cudnnBackendSetAttribute(d, name, type, count, elems);
    if (s == CUDNN_STATUS_SUCCESS &&
        (name == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS || name == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS)) {
        pthread_mutex_lock(&packs_mu);
        int i = pack_find_locked((uintptr_t)d);
        if (i >= 0 && name == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) packs[i].nids = count;
        if (i >= 0 && name == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS) packs[i].nptrs = count;
        pthread_mutex_unlock(&packs_mu);
    }
    return s;
}

APIGEN_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    cudnnStatus_t s = cudnn_fwd_cudnnBackendFinalize(d);
    if (s == CUDNN_STATUS_SUCCESS) {
        pthread_mutex_lock(&packs_mu);
        int i = pack_find_locked((uintptr_t)d);
        if (i >= 0) packs[i].finalized = true;
        pthread_mutex_unlock(&packs_mu);
    }
    return s;
}
