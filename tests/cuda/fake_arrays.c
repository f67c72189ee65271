/* CUDA arrays of the stand-in device (tests/cuda/fake_device.c's library;
 * CI has no GPU): 1D, 2D, 3D, layered, cubemap, layered cubemap and
 * surface-load-store arrays, mipmapped arrays and their levels, and the
 * runtime's copies to, from and between them, with CUDA's bounds (a region
 * past an array's edge is cudaErrorInvalidValue). An array is host memory
 * of this process, rows of width * element bytes, slices of max(height, 1)
 * rows, max(depth, 1) slices (a cubemap's 6 faces, a layered array's layers
 * are its slices, as CUDA's copies address them). tests/cuda/arrays_ci.c
 * runs the same calls natively (this library preloaded into the program) and
 * forwarded (preloaded into the server) and compares. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* driver_functions.h's helpers (C++-only header guards aside) */
#define make_cudaExtent(w, h, d) ((struct cudaExtent){(w), (h), (d)})
#define make_cudaPos(x, y, z) ((struct cudaPos){(x), (y), (z)})
#define make_cudaPitchedPtr(p, pitch, xs, ys) ((struct cudaPitchedPtr){(p), (pitch), (xs), (ys)})
#define FAKE __attribute__((visibility("default")))
/* the deprecated 1D array copies are faked too */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

typedef struct fake_array {
    uint32_t magic;
    struct cudaChannelFormatDesc desc;
    struct cudaExtent extent; /* as allocated: 0 height / depth for 1D / 2D */
    unsigned flags;
    size_t elem, w, h, d; /* h, d at least 1 */
    unsigned char *data;
} fake_array;
#define ARRAY_MAGIC 0xa11a7e5u

typedef struct fake_mipmap {
    uint32_t magic;
    unsigned levels;
    fake_array **level;
} fake_mipmap;
#define MIPMAP_MAGIC 0x31b3a9u

static fake_array *arr(cudaArray_const_t a)
{
    fake_array *f = (fake_array *)(uintptr_t)a;
    return f && f->magic == ARRAY_MAGIC ? f : NULL;
}

static cudaError_t new_array(fake_array **out, const struct cudaChannelFormatDesc *desc,
                             struct cudaExtent x, unsigned flags)
{
    if (!out || !desc) return cudaErrorInvalidValue;
    size_t bits = (size_t)desc->x + desc->y + desc->z + desc->w;
    if (!bits || bits % 8 || !x.width) return cudaErrorInvalidValue;
    if ((flags & cudaArrayCubemap) &&
        (x.width != x.height || !x.depth || x.depth % 6 || (!(flags & cudaArrayLayered) && x.depth != 6)))
        return cudaErrorInvalidValue;
    if ((flags & cudaArrayLayered) && !x.depth) return cudaErrorInvalidValue;
    fake_array *f = calloc(1, sizeof *f);
    if (!f) return cudaErrorMemoryAllocation;
    f->magic = ARRAY_MAGIC;
    f->desc = *desc;
    f->extent = x;
    f->flags = flags;
    f->elem = bits / 8;
    f->w = x.width;
    f->h = x.height ? x.height : 1;
    f->d = x.depth ? x.depth : 1;
    if (!(f->data = calloc(f->w * f->h * f->d, f->elem))) {
        free(f);
        return cudaErrorMemoryAllocation;
    }
    *out = f;
    return cudaSuccess;
}

FAKE cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                   struct cudaExtent extent, unsigned int flags)
{
    fake_array *f = NULL;
    if (!array) return cudaErrorInvalidValue;
    cudaError_t e = new_array(&f, desc, extent, flags);
    if (e == cudaSuccess) *array = (cudaArray_t)f;
    return e;
}
FAKE cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                 size_t width, size_t height, unsigned int flags)
{
    return cudaMalloc3DArray(array, desc, make_cudaExtent(width, height, 0), flags);
}
static void drop(fake_array *f)
{
    f->magic = 0;
    free(f->data);
    free(f);
}
FAKE cudaError_t cudaFreeArray(cudaArray_t array)
{
    fake_array *f = arr(array);
    if (!array) return cudaSuccess;
    if (!f) return cudaErrorInvalidResourceHandle;
    drop(f);
    return cudaSuccess;
}
FAKE cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                  unsigned int *flags, cudaArray_t array)
{
    fake_array *f = arr(array);
    if (!f) return cudaErrorInvalidResourceHandle;
    if (desc) *desc = f->desc;
    if (extent) *extent = f->extent;
    if (flags) *flags = f->flags;
    return cudaSuccess;
}

/* Level l: each dimension halved l times (at least 1); a layered array's
 * layers stay (CUDA mipmaps width, height and a 3D array's depth only). */
FAKE cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *m, const struct cudaChannelFormatDesc *desc,
                                          struct cudaExtent extent, unsigned int numLevels,
                                          unsigned int flags)
{
    if (!m || !numLevels || numLevels > 32) return cudaErrorInvalidValue;
    fake_mipmap *mm = calloc(1, sizeof *mm);
    if (!mm || !(mm->level = calloc(numLevels, sizeof *mm->level))) {
        free(mm);
        return cudaErrorMemoryAllocation;
    }
    mm->magic = MIPMAP_MAGIC;
    for (unsigned l = 0; l < numLevels; l++) {
        struct cudaExtent x = extent;
        x.width = extent.width >> l ? extent.width >> l : 1;
        if (extent.height) x.height = extent.height >> l ? extent.height >> l : 1;
        if (extent.depth && !(flags & (cudaArrayLayered | cudaArrayCubemap)))
            x.depth = extent.depth >> l ? extent.depth >> l : 1;
        cudaError_t e = new_array(&mm->level[l], desc, x, flags);
        if (e != cudaSuccess) {
            while (l--) drop(mm->level[l]);
            free(mm->level);
            free(mm);
            return e;
        }
        mm->levels++;
    }
    *m = (cudaMipmappedArray_t)mm;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *levelArray, cudaMipmappedArray_const_t m,
                                            unsigned int level)
{
    const fake_mipmap *mm = (const fake_mipmap *)(uintptr_t)m;
    if (!mm || mm->magic != MIPMAP_MAGIC) return cudaErrorInvalidResourceHandle;
    if (!levelArray || level >= mm->levels) return cudaErrorInvalidValue;
    *levelArray = (cudaArray_t)mm->level[level];
    return cudaSuccess;
}
FAKE cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t m)
{
    fake_mipmap *mm = (fake_mipmap *)(uintptr_t)m;
    if (!mm) return cudaSuccess;
    if (mm->magic != MIPMAP_MAGIC) return cudaErrorInvalidResourceHandle;
    for (unsigned l = 0; l < mm->levels; l++) drop(mm->level[l]);
    mm->magic = 0;
    free(mm->level);
    free(mm);
    return cudaSuccess;
}

/* One side of a copy: its first byte and its row and slice pitches, after
 * checking that a region of wb bytes x h rows x d slices at (xb bytes, y, z)
 * lies inside an array. */
typedef struct {
    unsigned char *p;
    size_t pitch, slice;
} side;

static int array_side(const fake_array *f, size_t xb, size_t y, size_t z, size_t wb, size_t h,
                      size_t d, side *s)
{
    size_t rowb = f->w * f->elem;
    if (xb % f->elem || wb % f->elem || xb > rowb || wb > rowb - xb || y > f->h || h > f->h - y ||
        z > f->d || d > f->d - z)
        return 0;
    s->pitch = rowb;
    s->slice = rowb * f->h;
    s->p = f->data + z * s->slice + y * s->pitch + xb;
    return 1;
}

static void copy_box(side d, side s, size_t wb, size_t h, size_t depth)
{
    for (size_t z = 0; z < depth; z++)
        for (size_t y = 0; y < h; y++)
            memmove(d.p + z * d.slice + y * d.pitch, s.p + z * s.slice + y * s.pitch, wb);
}

static int bad_kind(enum cudaMemcpyKind k)
{
    return (unsigned)k > (unsigned)cudaMemcpyDefault;
}

FAKE cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    if (!p || bad_kind(p->kind)) return cudaErrorInvalidValue;
    const fake_array *sa = arr(p->srcArray), *da = arr(p->dstArray);
    if ((p->srcArray && !sa) || (p->dstArray && !da)) return cudaErrorInvalidResourceHandle;
    if ((!sa && !p->srcPtr.ptr) || (!da && !p->dstPtr.ptr)) return cudaErrorInvalidValue;
    size_t elem = sa ? sa->elem : da ? da->elem : 1;
    if (sa && da && sa->elem != da->elem) return cudaErrorInvalidValue;
    size_t wb = p->extent.width * elem, h = p->extent.height, d = p->extent.depth;
    if (!wb || !h || !d) return cudaSuccess; /* nothing to copy */
    side s, t;
    if (sa) {
        if (!array_side(sa, p->srcPos.x * elem, p->srcPos.y, p->srcPos.z, wb, h, d, &s))
            return cudaErrorInvalidValue;
    } else {
        if (p->srcPtr.pitch < p->srcPos.x + wb) return cudaErrorInvalidValue;
        s.pitch = p->srcPtr.pitch;
        s.slice = p->srcPtr.pitch * p->srcPtr.ysize;
        s.p = (unsigned char *)p->srcPtr.ptr + p->srcPos.z * s.slice + p->srcPos.y * s.pitch + p->srcPos.x;
    }
    if (da) {
        if (!array_side(da, p->dstPos.x * elem, p->dstPos.y, p->dstPos.z, wb, h, d, &t))
            return cudaErrorInvalidValue;
    } else {
        if (p->dstPtr.pitch < p->dstPos.x + wb) return cudaErrorInvalidValue;
        t.pitch = p->dstPtr.pitch;
        t.slice = p->dstPtr.pitch * p->dstPtr.ysize;
        t.p = (unsigned char *)p->dstPtr.ptr + p->dstPos.z * t.slice + p->dstPos.y * t.pitch + p->dstPos.x;
    }
    copy_box(t, s, wb, h, d);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy3D(p);
}
FAKE cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    if (!p) return cudaErrorInvalidValue;
    struct cudaMemcpy3DParms q;
    memset(&q, 0, sizeof q);
    q.srcArray = p->srcArray, q.srcPos = p->srcPos, q.srcPtr = p->srcPtr;
    q.dstArray = p->dstArray, q.dstPos = p->dstPos, q.dstPtr = p->dstPtr;
    q.extent = p->extent;
    q.kind = cudaMemcpyDeviceToDevice;
    return cudaMemcpy3D(&q);
}
FAKE cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy3DPeer(p);
}

/* The 2D forms: offsets and widths in bytes. */
static cudaError_t copy2d(fake_array *da, size_t dx, size_t dy, void *dp, size_t dpitch,
                          const fake_array *sa, size_t sx, size_t sy, const void *sp, size_t spitch,
                          size_t wb, size_t h, enum cudaMemcpyKind kind)
{
    if (bad_kind(kind)) return cudaErrorInvalidValue;
    if (!wb || !h) return cudaSuccess;
    side s, t;
    if (sa) {
        if (!array_side(sa, sx, sy, 0, wb, h, 1, &s)) return cudaErrorInvalidValue;
    } else {
        if (!sp || spitch < wb) return cudaErrorInvalidValue;
        s = (side){(unsigned char *)(uintptr_t)sp, spitch, 0};
    }
    if (da) {
        if (!array_side(da, dx, dy, 0, wb, h, 1, &t)) return cudaErrorInvalidValue;
    } else {
        if (!dp || dpitch < wb) return cudaErrorInvalidValue;
        t = (side){dp, dpitch, 0};
    }
    copy_box(t, s, wb, h, 1);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                     size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    fake_array *d = arr(dst);
    if (!d) return cudaErrorInvalidResourceHandle;
    return copy2d(d, wOffset, hOffset, NULL, 0, NULL, 0, 0, src, spitch, width, height, kind);
}
FAKE cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                          const void *src, size_t spitch, size_t width, size_t height,
                                          enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}
FAKE cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width, size_t height,
                                       enum cudaMemcpyKind kind)
{
    const fake_array *s = arr(src);
    if (!s) return cudaErrorInvalidResourceHandle;
    return copy2d(NULL, 0, 0, dst, dpitch, s, wOffset, hOffset, NULL, 0, width, height, kind);
}
FAKE cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset, size_t width, size_t height,
                                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}
FAKE cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                          cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                          size_t width, size_t height, enum cudaMemcpyKind kind)
{
    fake_array *d = arr(dst);
    const fake_array *s = arr(src);
    if (!d || !s) return cudaErrorInvalidResourceHandle;
    return copy2d(d, wOffsetDst, hOffsetDst, NULL, 0, s, wOffsetSrc, hOffsetSrc, NULL, 0, width,
                  height, kind);
}

/* The deprecated 1D forms: count bytes from (wOffset, hOffset) on, row after
 * row of the array's first slice. */
static int linear(const fake_array *f, size_t w, size_t h, size_t count, unsigned char **p)
{
    size_t rowb = f->w * f->elem, at = h * rowb + w;
    if (w >= rowb || h >= f->h || count > rowb * f->h - at) return 0;
    *p = f->data + at;
    return 1;
}
FAKE cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                   size_t count, enum cudaMemcpyKind kind)
{
    fake_array *d = arr(dst);
    unsigned char *p;
    if (!d) return cudaErrorInvalidResourceHandle;
    if (bad_kind(kind) || (count && !src) || !linear(d, wOffset, hOffset, count, &p))
        return cudaErrorInvalidValue;
    if (count) memmove(p, src, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                     size_t count, enum cudaMemcpyKind kind)
{
    const fake_array *s = arr(src);
    unsigned char *p;
    if (!s) return cudaErrorInvalidResourceHandle;
    if (bad_kind(kind) || (count && !dst) || !linear(s, wOffset, hOffset, count, &p))
        return cudaErrorInvalidValue;
    if (count) memmove(dst, p, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                        size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpyToArray(dst, wOffset, hOffset, src, count, kind);
}
FAKE cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset,
                                          size_t hOffset, size_t count, enum cudaMemcpyKind kind,
                                          cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpyFromArray(dst, src, wOffset, hOffset, count, kind);
}
FAKE cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                        cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                        size_t count, enum cudaMemcpyKind kind)
{
    fake_array *d = arr(dst);
    const fake_array *s = arr(src);
    unsigned char *dp, *sp;
    if (!d || !s) return cudaErrorInvalidResourceHandle;
    if (bad_kind(kind) || !linear(d, wOffsetDst, hOffsetDst, count, &dp) ||
        !linear(s, wOffsetSrc, hOffsetSrc, count, &sp))
        return cudaErrorInvalidValue;
    if (count) memmove(dp, sp, count);
    return cudaSuccess;
}

/* Plain 2D copies between pitched pointers: the runtime stub sends a 3D copy
 * of pointers as one 2D copy per slice. */
FAKE cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind)
{
    return copy2d(NULL, 0, 0, dst, dpitch, NULL, 0, 0, src, spitch, width, height, kind);
}
FAKE cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
