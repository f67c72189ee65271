/* CUDA arrays through the driver stub's 2D/3D copies (specs/cuda/copy3d.c),
 * run natively and forwarded with the same stand-in driver
 * (tests/cuda/driver/fake_arrays.c; CI has no GPU) and the outputs compared
 * (tests/cuda/driver_fake_diff.sh). 1D, 2D, 3D, layered, cubemap and
 * surface arrays host -> array -> array -> device -> array -> host;
 * copies with more than a 4 MiB box of host memory (whole slices, bands of
 * rows, both with tails; cuMemcpy2D and cuMemcpy3D, sync and async, with
 * offsets and pitches); a region past an array's edge refused with nothing
 * copied. Exit 1 when a check fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

static int bad_;

static void check(const char *what, CUresult e, CUresult want)
{
    printf("%s: %d\n", what, (int)e);
    if (e != want) {
        printf("  MISMATCH: want %d\n", (int)want);
        bad_ = 1;
    }
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i * 2654435761u + seed) >> 11);
}

static CUDA_MEMCPY3D host_side(CUDA_MEMCPY3D c, int src, void *p, size_t pitch, size_t height)
{
    if (src) c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = p, c.srcPitch = pitch, c.srcHeight = height;
    else c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = p, c.dstPitch = pitch, c.dstHeight = height;
    return c;
}
static CUDA_MEMCPY3D array_side(CUDA_MEMCPY3D c, int src, CUarray a)
{
    if (src) c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = a;
    else c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a;
    return c;
}

static void kind(const char *name, size_t w, size_t h, size_t d, unsigned ch, unsigned flags)
{
    CUDA_ARRAY3D_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    ad.Width = w, ad.Height = h, ad.Depth = d, ad.Format = CU_AD_FORMAT_FLOAT, ad.NumChannels = ch;
    ad.Flags = flags;
    CUarray a = NULL, b = NULL;
    char what[128];
    snprintf(what, sizeof what, "%s: cuArray3DCreate", name);
    check(what, cuArray3DCreate(&a, &ad), CUDA_SUCCESS);
    check(what, cuArray3DCreate(&b, &ad), CUDA_SUCCESS);
    size_t row = w * 4 * ch, hh = h ? h : 1, dd = d ? d : 1, n = row * hh * dd;
    unsigned char *src = malloc(n), *back = calloc(1, n);
    fill(src, n, (unsigned)n);
    CUdeviceptr dev = 0;
    cuMemAlloc(&dev, n);
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.WidthInBytes = row, c.Height = hh, c.Depth = dd;
    CUDA_MEMCPY3D p = array_side(host_side(c, 1, src, row, hh), 0, a);
    snprintf(what, sizeof what, "%s: host -> array", name);
    check(what, cuMemcpy3D(&p), CUDA_SUCCESS);
    p = array_side(array_side(c, 1, a), 0, b);
    snprintf(what, sizeof what, "%s: array -> array", name);
    check(what, cuMemcpy3D(&p), CUDA_SUCCESS);
    p = array_side(c, 1, b);
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE, p.dstDevice = dev, p.dstPitch = row, p.dstHeight = hh;
    snprintf(what, sizeof what, "%s: array -> device", name);
    check(what, cuMemcpy3D(&p), CUDA_SUCCESS);
    p = array_side(c, 0, a);
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE, p.srcDevice = dev, p.srcPitch = row, p.srcHeight = hh;
    cuMemcpy3D(&p);
    p = host_side(array_side(c, 1, a), 0, back, row, hh);
    snprintf(what, sizeof what, "%s: array -> host (async)", name);
    check(what, cuMemcpy3DAsync(&p, NULL), CUDA_SUCCESS);
    cuStreamSynchronize(NULL);
    printf("%s: %zu bytes %s\n", name, n, memcmp(src, back, n) ? "MISMATCH" : "ok");
    bad_ |= memcmp(src, back, n) != 0;
    p = array_side(host_side(c, 1, src, row, hh), 0, a);
    p.dstXInBytes = 4 * ch;
    snprintf(what, sizeof what, "%s: one element past the end", name);
    check(what, cuMemcpy3D(&p), CUDA_ERROR_INVALID_VALUE);
    cuMemFree(dev);
    cuArrayDestroy(a);
    cuArrayDestroy(b);
    free(src);
    free(back);
}

/* w x h x d float4 array; the host side has a pitch, a height and an
 * offset of its own; the region is all but an element column and a row. */
static void large(const char *name, size_t w, size_t h, size_t d, int twod)
{
    CUDA_ARRAY3D_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    ad.Width = w, ad.Height = h, ad.Depth = d, ad.Format = CU_AD_FORMAT_FLOAT, ad.NumChannels = 4;
    CUarray a = NULL;
    char what[128];
    snprintf(what, sizeof what, "%s: cuArray3DCreate", name);
    check(what, cuArray3DCreate(&a, &ad), CUDA_SUCCESS);
    size_t dd = d ? d : 1, pitch = w * 16 + 64, hh = h + 2, n = pitch * hh * dd;
    unsigned char *src = malloc(n), *back = malloc(n);
    fill(src, n, 3);
    memset(back, 0xee, n);
    size_t wb = (w - 1) * 16, rows = h - 1;
    if (twod) {
        CUDA_MEMCPY2D m;
        memset(&m, 0, sizeof m);
        m.srcMemoryType = CU_MEMORYTYPE_HOST, m.srcHost = src, m.srcPitch = pitch, m.srcXInBytes = 32, m.srcY = 1;
        m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = a, m.dstXInBytes = 16, m.dstY = 1;
        m.WidthInBytes = wb, m.Height = rows;
        snprintf(what, sizeof what, "%s: cuMemcpy2D host -> array", name);
        check(what, cuMemcpy2D(&m), CUDA_SUCCESS);
        CUDA_MEMCPY2D r;
        memset(&r, 0, sizeof r);
        r.srcMemoryType = CU_MEMORYTYPE_ARRAY, r.srcArray = a, r.srcXInBytes = 16, r.srcY = 1;
        r.dstMemoryType = CU_MEMORYTYPE_HOST, r.dstHost = back, r.dstPitch = pitch, r.dstXInBytes = 32, r.dstY = 1;
        r.WidthInBytes = wb, r.Height = rows;
        snprintf(what, sizeof what, "%s: cuMemcpy2DAsync array -> host", name);
        check(what, cuMemcpy2DAsync(&r, NULL), CUDA_SUCCESS);
        cuStreamSynchronize(NULL);
        m.dstY = 2; /* one row past the end: refused, nothing copied */
        snprintf(what, sizeof what, "%s: one row past the end", name);
        check(what, cuMemcpy2D(&m), CUDA_ERROR_INVALID_VALUE);
    } else {
        CUDA_MEMCPY3D c;
        memset(&c, 0, sizeof c);
        c.WidthInBytes = wb, c.Height = rows, c.Depth = dd;
        CUDA_MEMCPY3D p = array_side(host_side(c, 1, src, pitch, hh), 0, a);
        p.srcXInBytes = 32, p.srcY = 1, p.dstXInBytes = 16, p.dstY = 1;
        snprintf(what, sizeof what, "%s: cuMemcpy3D host -> array", name);
        check(what, cuMemcpy3D(&p), CUDA_SUCCESS);
        CUDA_MEMCPY3D q = host_side(array_side(c, 1, a), 0, back, pitch, hh);
        q.srcXInBytes = 16, q.srcY = 1, q.dstXInBytes = 32, q.dstY = 1;
        snprintf(what, sizeof what, "%s: cuMemcpy3D array -> host", name);
        check(what, cuMemcpy3D(&q), CUDA_SUCCESS);
        p.dstZ = 1; /* one slice past the end: refused, nothing copied */
        snprintf(what, sizeof what, "%s: one slice past the end", name);
        check(what, cuMemcpy3D(&p), CUDA_ERROR_INVALID_VALUE);
    }
    int ok = 1;
    for (size_t z = 0; z < dd; z++)
        for (size_t y = 1; y <= rows; y++) {
            size_t at = (z * hh + y) * pitch + 32;
            ok &= !memcmp(back + at, src + at, wb) && back[at - 1] == 0xee && back[at + wb] == 0xee;
        }
    printf("%s: %zu MiB region %s\n", name, wb * rows * dd >> 20, ok ? "ok, nothing around it written" : "MISMATCH");
    bad_ |= !ok;
    cuArrayDestroy(a);
    free(src);
    free(back);
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    check("cuInit", cuInit(0), CUDA_SUCCESS);
    check("cuDeviceGet", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    check("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
    kind("1D", 1000, 0, 0, 1, 0);
    kind("2D", 37, 19, 0, 2, 0);
    kind("3D", 13, 11, 7, 4, 0);
    kind("1D layered", 100, 0, 5, 1, CUDA_ARRAY3D_LAYERED);
    kind("2D layered", 20, 9, 4, 4, CUDA_ARRAY3D_LAYERED);
    kind("cubemap", 16, 16, 6, 1, CUDA_ARRAY3D_CUBEMAP);
    kind("layered cubemap", 8, 8, 12, 2, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED);
    kind("surface", 33, 17, 0, 2, CUDA_ARRAY3D_SURFACE_LDST);
    large("large 3D (slices)", 256, 64, 41, 0);
    large("large 3D (bands of rows)", 1024, 700, 2, 0);
    large("large 2D (bands of rows)", 1024, 700, 0, 1);
    check("cuCtxDestroy", cuCtxDestroy(ctx), CUDA_SUCCESS);
    printf("%s\n", bad_ ? "FAILED" : "all checks passed");
    return bad_;
}
