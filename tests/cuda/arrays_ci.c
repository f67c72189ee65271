/* arrays_ci: CUDA arrays of every kind through the runtime's copy calls,
 * run natively and through the cudart stub with tests/cuda/fake_arrays.c as
 * the device (CI has no GPU); tests/cuda/arrays_ci.sh compares the two
 * outputs and the program checks every byte itself (exit 1 on a mismatch).
 * Covers 1D, 2D, 3D, 1D/2D layered, cubemap, layered cubemap and
 * surface-load-store arrays (host -> array -> array -> device -> array ->
 * host with cudaMemcpy3D/3DAsync/3DPeer), a face of one layer of a layered
 * cubemap by position, the 2D and 1D to/from/between-array calls with
 * offsets, the levels of mipmapped arrays (cudaGetMipmappedArrayLevel), the
 * edges (a region one element past an array's end is refused) and copies
 * larger than the stub's 4 MiB boxes (whole slices, bands of rows, with a
 * tail), from pageable and pinned host memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* driver_functions.h's helpers (C++-only header guards aside) */
#define make_cudaExtent(w, h, d) ((struct cudaExtent){(w), (h), (d)})
#define make_cudaPos(x, y, z) ((struct cudaPos){(x), (y), (z)})
#define make_cudaPitchedPtr(p, pitch, xs, ys) ((struct cudaPitchedPtr){(p), (pitch), (xs), (ys)})
/* the deprecated 1D array copies are exercised too */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int bad_;

static void check(const char *what, cudaError_t e, cudaError_t want)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != want) {
        printf("  MISMATCH: want %s\n", cudaGetErrorName(want));
        bad_ = 1;
    }
}

static void same(const char *what, const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == b[i]) i++;
    unsigned long sum = 0;
    for (size_t k = 0; k < n; k++) sum = sum * 31 + a[k];
    if (i == n) {
        printf("%s: %zu bytes ok (sum %08lx)\n", what, n, sum & 0xffffffffUL);
    } else {
        printf("%s: MISMATCH at byte %zu of %zu (%u, want %u)\n", what, i, n, a[i], b[i]);
        bad_ = 1;
    }
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

static struct cudaMemcpy3DParms parms(void)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.kind = cudaMemcpyDefault;
    return p;
}

/* Host -> a -> b (3D) -> device -> c (3DAsync) -> host (3DPeer to device,
 * then a plain copy), each array of extent x (depth: layers or faces). */
static void round_trip(const char *name, struct cudaChannelFormatDesc desc, struct cudaExtent x,
                       unsigned flags)
{
    cudaArray_t a = NULL, b = NULL, c = NULL;
    size_t elem = (desc.x + desc.y + desc.z + desc.w) / 8;
    size_t h = x.height ? x.height : 1, d = x.depth ? x.depth : 1, row = x.width * elem;
    size_t n = row * h * d;
    char what[128];
    snprintf(what, sizeof what, "%s: cudaMalloc3DArray", name);
    check(what, cudaMalloc3DArray(&a, &desc, x, flags), cudaSuccess);
    check(what, cudaMalloc3DArray(&b, &desc, x, flags), cudaSuccess);
    check(what, cudaMalloc3DArray(&c, &desc, x, flags), cudaSuccess);
    struct cudaChannelFormatDesc gd;
    struct cudaExtent gx;
    unsigned gf = 0;
    snprintf(what, sizeof what, "%s: cudaArrayGetInfo", name);
    check(what, cudaArrayGetInfo(&gd, &gx, &gf, a), cudaSuccess);
    printf("%s: extent %zux%zux%zu flags 0x%x bits %d,%d,%d,%d\n", name, gx.width, gx.height,
           gx.depth, gf, gd.x, gd.y, gd.z, gd.w);
    unsigned char *src = malloc(n), *back = calloc(1, n);
    void *dev = NULL;
    fill(src, n, (unsigned)n);
    cudaMalloc(&dev, n);
    struct cudaExtent ex = make_cudaExtent(x.width, h, d);
    struct cudaMemcpy3DParms p = parms();
    p.srcPtr = make_cudaPitchedPtr(src, row, x.width, h);
    p.dstArray = a;
    p.extent = ex;
    snprintf(what, sizeof what, "%s: host -> array", name);
    check(what, cudaMemcpy3D(&p), cudaSuccess);
    p = parms();
    p.srcArray = a;
    p.dstArray = b;
    p.extent = ex;
    snprintf(what, sizeof what, "%s: array -> array", name);
    check(what, cudaMemcpy3D(&p), cudaSuccess);
    p = parms();
    p.srcArray = b;
    p.dstPtr = make_cudaPitchedPtr(dev, row, x.width, h);
    p.extent = ex;
    snprintf(what, sizeof what, "%s: array -> device", name);
    check(what, cudaMemcpy3D(&p), cudaSuccess);
    p = parms();
    p.srcPtr = make_cudaPitchedPtr(dev, row, x.width, h);
    p.dstArray = c;
    p.extent = ex;
    snprintf(what, sizeof what, "%s: device -> array (async)", name);
    check(what, cudaMemcpy3DAsync(&p, 0), cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(0), cudaSuccess);
    struct cudaMemcpy3DPeerParms pp;
    memset(&pp, 0, sizeof pp);
    pp.srcArray = c;
    pp.dstPtr = make_cudaPitchedPtr(dev, row, x.width, h);
    pp.extent = ex;
    check(what, cudaMemset(dev, 0, n), cudaSuccess);
    snprintf(what, sizeof what, "%s: array -> device (peer)", name);
    check(what, cudaMemcpy3DPeer(&pp), cudaSuccess);
    check("cudaMemcpy", cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost), cudaSuccess);
    snprintf(what, sizeof what, "%s: through three arrays and a device buffer", name);
    same(what, back, src, n);
    memset(back, 0, n);
    p = parms();
    p.srcArray = c;
    p.dstPtr = make_cudaPitchedPtr(back, row, x.width, h);
    p.extent = ex;
    snprintf(what, sizeof what, "%s: array -> host (async, pageable)", name);
    check(what, cudaMemcpy3DAsync(&p, 0), cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(0), cudaSuccess);
    snprintf(what, sizeof what, "%s: back on the host", name);
    same(what, back, src, n);
    /* one element past the end: refused, on both sides */
    p = parms();
    p.srcPtr = make_cudaPitchedPtr(src, row, x.width, h);
    p.dstArray = a;
    p.dstPos = make_cudaPos(1, 0, 0);
    p.extent = ex;
    snprintf(what, sizeof what, "%s: one element past the end", name);
    check(what, cudaMemcpy3D(&p), cudaErrorInvalidValue);
    cudaGetLastError();
    cudaFree(dev);
    cudaFreeArray(a);
    cudaFreeArray(b);
    cudaFreeArray(c);
    free(src);
    free(back);
}

/* Face f of layer l of a layered cubemap, by position, into a host buffer
 * with a pitch and an offset of its own. */
static void cube_face(void)
{
    const size_t w = 16, layers = 3, elem = 4, f = 4, l = 1;
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    cudaArray_t a = NULL;
    check("cubemap layered: cudaMalloc3DArray",
          cudaMalloc3DArray(&a, &desc, make_cudaExtent(w, w, 6 * layers), cudaArrayCubemap | cudaArrayLayered),
          cudaSuccess);
    size_t n = w * elem * w * 6 * layers;
    unsigned char *all = malloc(n), *face = calloc(1, 200 * (w + 2));
    fill(all, n, 77);
    struct cudaMemcpy3DParms p = parms();
    p.srcPtr = make_cudaPitchedPtr(all, w * elem, w, w);
    p.dstArray = a;
    p.extent = make_cudaExtent(w, w, 6 * layers);
    check("cubemap layered: every face", cudaMemcpy3D(&p), cudaSuccess);
    p = parms();
    p.srcArray = a;
    p.srcPos = make_cudaPos(0, 0, l * 6 + f);
    p.dstPtr = make_cudaPitchedPtr(face, 200, w, w + 2);
    p.dstPos = make_cudaPos(8, 2, 0); /* bytes on a pointer side */
    p.extent = make_cudaExtent(w, w, 1);
    check("cubemap layered: face 4 of layer 1", cudaMemcpy3D(&p), cudaSuccess);
    int ok = 1;
    for (size_t y = 0; y < w; y++)
        ok &= !memcmp(face + (2 + y) * 200 + 8, all + ((l * 6 + f) * w + y) * w * elem, w * elem);
    printf("cubemap layered: face 4 of layer 1 %s\n", ok ? "ok" : "MISMATCH");
    bad_ |= !ok;
    cudaFreeArray(a);
    free(all);
    free(face);
}

/* The 2D and 1D calls with offsets (bytes) into a 2D array. */
static void calls_2d(void)
{
    const size_t w = 40, h = 24, elem = 2, rowb = w * elem;
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t a = NULL, b = NULL;
    check("2D: cudaMallocArray", cudaMallocArray(&a, &desc, w, h, 0), cudaSuccess);
    check("2D: cudaMallocArray (surface load/store)",
          cudaMallocArray(&b, &desc, w, h, cudaArraySurfaceLoadStore), cudaSuccess);
    unsigned char src[rowb * h], out[rowb * h], want[rowb * h];
    fill(src, sizeof src, 5);
    memset(want, 0, sizeof want);
    check("2D: zero a", cudaMemcpy2DToArray(a, 0, 0, want, rowb, rowb, h, cudaMemcpyHostToDevice), cudaSuccess);
    /* a 20-byte x 10-row block at (6 bytes, 3) from a pitched source */
    check("cudaMemcpy2DToArray", cudaMemcpy2DToArray(a, 6, 3, src + 2, 50, 20, 10, cudaMemcpyHostToDevice),
          cudaSuccess);
    for (size_t y = 0; y < 10; y++) memcpy(want + (3 + y) * rowb + 6, src + 2 + y * 50, 20);
    check("cudaMemcpy2DFromArray", cudaMemcpy2DFromArray(out, rowb, a, 0, 0, rowb, h, cudaMemcpyDeviceToHost),
          cudaSuccess);
    same("2D: block placed", out, want, sizeof out);
    check("cudaMemcpy2DToArrayAsync",
          cudaMemcpy2DToArrayAsync(a, 0, 20, src, rowb, rowb, 4, cudaMemcpyDefault, 0), cudaSuccess);
    memcpy(want + 20 * rowb, src, 4 * rowb);
    check("cudaMemcpy2DArrayToArray", cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, rowb, h, cudaMemcpyDeviceToDevice),
          cudaSuccess);
    memset(out, 0, sizeof out);
    check("cudaMemcpy2DFromArrayAsync",
          cudaMemcpy2DFromArrayAsync(out, rowb, b, 0, 0, rowb, h, cudaMemcpyDefault, 0), cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(0), cudaSuccess);
    same("2D: through a surface array", out, want, sizeof out);
    /* the deprecated 1D forms: 100 bytes from (10, 2) on, across rows */
    check("cudaMemcpyToArray", cudaMemcpyToArray(a, 10, 2, src, 100, cudaMemcpyHostToDevice), cudaSuccess);
    memcpy(want + 2 * rowb + 10, src, 100);
    check("cudaMemcpyArrayToArray", cudaMemcpyArrayToArray(b, 0, 0, a, 0, 0, sizeof want, cudaMemcpyDeviceToDevice),
          cudaSuccess);
    memset(out, 0, sizeof out);
    check("cudaMemcpyFromArray", cudaMemcpyFromArray(out, b, 0, 0, sizeof out, cudaMemcpyDeviceToHost),
          cudaSuccess);
    same("1D calls", out, want, sizeof out);
    check("cudaMemcpy2DToArray one row too many",
          cudaMemcpy2DToArray(a, 0, 1, src, rowb, rowb, h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    cudaGetLastError();
    check("cudaMemcpy2DFromArray one byte too wide",
          cudaMemcpy2DFromArray(out, rowb + 2, a, 2, 0, rowb, 1, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    cudaGetLastError();
    cudaFreeArray(a);
    cudaFreeArray(b);
}

/* Every level of a 2D and of a layered mipmapped array, each filled and read
 * back; a level past the last is refused. */
static void mipmaps(const char *name, struct cudaExtent x, unsigned levels, unsigned flags)
{
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaMipmappedArray_t m = NULL;
    char what[128];
    snprintf(what, sizeof what, "%s: cudaMallocMipmappedArray", name);
    check(what, cudaMallocMipmappedArray(&m, &desc, x, levels, flags), cudaSuccess);
    for (unsigned l = 0; l < levels; l++) {
        cudaArray_t a = NULL;
        struct cudaExtent e;
        snprintf(what, sizeof what, "%s: cudaGetMipmappedArrayLevel %u", name, l);
        check(what, cudaGetMipmappedArrayLevel(&a, m, l), cudaSuccess);
        check(what, cudaArrayGetInfo(NULL, &e, NULL, a), cudaSuccess);
        size_t h = e.height ? e.height : 1, d = e.depth ? e.depth : 1, n = e.width * 4 * h * d;
        printf("%s: level %u %zux%zux%zu\n", name, l, e.width, e.height, e.depth);
        unsigned char *src = malloc(n), *back = calloc(1, n);
        fill(src, n, l);
        struct cudaMemcpy3DParms p = parms();
        p.srcPtr = make_cudaPitchedPtr(src, e.width * 4, e.width, h);
        p.dstArray = a;
        p.extent = make_cudaExtent(e.width, h, d);
        check(what, cudaMemcpy3D(&p), cudaSuccess);
        p = parms();
        p.srcArray = a;
        p.dstPtr = make_cudaPitchedPtr(back, e.width * 4, e.width, h);
        p.extent = make_cudaExtent(e.width, h, d);
        check(what, cudaMemcpy3D(&p), cudaSuccess);
        same(what, back, src, n);
        free(src);
        free(back);
    }
    cudaArray_t a = NULL;
    snprintf(what, sizeof what, "%s: level past the last", name);
    check(what, cudaGetMipmappedArrayLevel(&a, m, levels), cudaErrorInvalidValue);
    cudaGetLastError();
    snprintf(what, sizeof what, "%s: cudaFreeMipmappedArray", name);
    check(what, cudaFreeMipmappedArray(m), cudaSuccess);
}

/* Copies larger than the stub's boxes: slice by slice (a tail of 1 slice),
 * and one slice larger than a box (bands of rows), from pageable and from
 * pinned memory, with a host side that has a pitch and an offset. */
static void large(const char *name, size_t w, size_t h, size_t d, int pinned)
{
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
    cudaArray_t a = NULL;
    char what[128];
    snprintf(what, sizeof what, "%s: cudaMalloc3DArray", name);
    check(what, cudaMalloc3DArray(&a, &desc, make_cudaExtent(w, h, d), 0), cudaSuccess);
    size_t pitch = w * 16 + 48, n = pitch * (h + 1) * d + 32;
    unsigned char *src, *back;
    if (pinned) {
        cudaMallocHost((void **)&src, n);
        cudaMallocHost((void **)&back, n);
    } else {
        src = malloc(n);
        back = malloc(n);
    }
    fill(src, n, 9);
    memset(back, 0xee, n);
    struct cudaMemcpy3DParms p = parms();
    p.srcPtr = make_cudaPitchedPtr(src, pitch, w, h + 1);
    p.srcPos = make_cudaPos(32, 1, 0);
    p.dstArray = a;
    p.extent = make_cudaExtent(w - 2, h - 1, d);
    snprintf(what, sizeof what, "%s: host -> array", name);
    check(what, cudaMemcpy3D(&p), cudaSuccess);
    p = parms();
    p.srcArray = a;
    p.dstPtr = make_cudaPitchedPtr(back, pitch, w, h + 1);
    p.dstPos = make_cudaPos(32, 1, 0);
    p.extent = make_cudaExtent(w - 2, h - 1, d);
    snprintf(what, sizeof what, "%s: array -> host", name);
    check(what, cudaMemcpy3DAsync(&p, 0), cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(0), cudaSuccess);
    int ok = 1;
    for (size_t z = 0; z < d; z++)
        for (size_t y = 1; y < h; y++) {
            size_t at = (z * (h + 1) + y) * pitch;
            ok &= !memcmp(back + at + 32, src + at + 32, (w - 2) * 16);
            ok &= back[at + 31] == 0xee && back[at + 32 + (w - 2) * 16] == 0xee;
        }
    printf("%s: %zu MiB region %s\n", name, (w - 2) * 16 * (h - 1) * d >> 20,
           ok ? "ok, and nothing around it written" : "MISMATCH");
    bad_ |= !ok;
    cudaFreeArray(a);
    if (pinned) {
        cudaFreeHost(src);
        cudaFreeHost(back);
    } else {
        free(src);
        free(back);
    }
}

/* The 2D calls with more than a box of host memory (the stub sends them as
 * 3D copies in boxes), synchronous and async, with offsets. */
static void large_2d(void)
{
    const size_t w = 2048, h = 600, elem = 8, rowb = w * elem, pitch = rowb + 64;
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t a = NULL;
    check("large 2D calls: cudaMallocArray", cudaMallocArray(&a, &desc, w, h, 0), cudaSuccess);
    unsigned char *src = malloc(pitch * h), *back = malloc(pitch * h);
    fill(src, pitch * h, 3);
    memset(back, 0xee, pitch * h);
    check("large cudaMemcpy2DToArray",
          cudaMemcpy2DToArray(a, 16, 1, src, pitch, rowb - 16, h - 1, cudaMemcpyHostToDevice), cudaSuccess);
    check("large cudaMemcpy2DFromArrayAsync",
          cudaMemcpy2DFromArrayAsync(back, pitch, a, 16, 1, rowb - 16, h - 1, cudaMemcpyDefault, 0),
          cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(0), cudaSuccess);
    int ok = 1;
    for (size_t y = 0; y < h - 1; y++)
        ok &= !memcmp(back + y * pitch, src + y * pitch, rowb - 16) && back[y * pitch + rowb - 16] == 0xee;
    memset(back, 0xee, pitch * h);
    check("large cudaMemcpy2DToArrayAsync",
          cudaMemcpy2DToArrayAsync(a, 0, 0, src + 8, pitch, rowb, h, cudaMemcpyDefault, 0), cudaSuccess);
    check("large cudaMemcpy2DFromArray",
          cudaMemcpy2DFromArray(back, pitch, a, 0, 0, rowb, h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t y = 0; y < h; y++) ok &= !memcmp(back + y * pitch, src + 8 + y * pitch, rowb);
    check("large cudaMemcpy2DToArray one row too many",
          cudaMemcpy2DToArray(a, 0, 1, src, pitch, rowb, h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    cudaGetLastError();
    printf("large 2D calls: %zu MiB %s\n", rowb * h >> 20, ok ? "ok" : "MISMATCH");
    bad_ |= !ok;
    cudaFreeArray(a);
    free(src);
    free(back);
}

int main(void)
{
    struct cudaChannelFormatDesc f1 = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    struct cudaChannelFormatDesc u4 = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    struct cudaChannelFormatDesc f2 = cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindFloat);
    round_trip("1D", f1, make_cudaExtent(1000, 0, 0), 0);
    round_trip("2D", u4, make_cudaExtent(37, 19, 0), 0);
    round_trip("3D", f2, make_cudaExtent(13, 11, 7), 0);
    round_trip("1D layered", f1, make_cudaExtent(100, 0, 5), cudaArrayLayered);
    round_trip("2D layered", u4, make_cudaExtent(20, 9, 4), cudaArrayLayered);
    round_trip("cubemap", f1, make_cudaExtent(16, 16, 6), cudaArrayCubemap);
    round_trip("cubemap layered", u4, make_cudaExtent(8, 8, 12), cudaArrayCubemap | cudaArrayLayered);
    round_trip("2D surface", f2, make_cudaExtent(33, 17, 0), cudaArraySurfaceLoadStore);
    round_trip("3D surface", u4, make_cudaExtent(9, 8, 5), cudaArraySurfaceLoadStore);
    cube_face();
    calls_2d();
    mipmaps("mipmapped 2D", make_cudaExtent(64, 32, 0), 4, 0);
    mipmaps("mipmapped 3D", make_cudaExtent(16, 16, 8), 3, 0);
    mipmaps("mipmapped 2D layered", make_cudaExtent(32, 32, 3), 3, cudaArrayLayered);
    large("large 3D (slices)", 256, 64, 83, 0);
    large("large 2D (bands of rows)", 1024, 700, 1, 0);
    large("large 3D (pinned)", 256, 64, 50, 1);
    large_2d();
    printf("%s\n", bad_ ? "FAILED" : "all checks passed");
    return bad_;
}
