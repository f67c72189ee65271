/* The stand-in driver's private tables (cuGetExportTable), part of
 * cuda_fake_driver: the three that NVIDIA's libraries ask for in driver mode
 * and whose entries the driver stub implements (docs/export-tables.md),
 * each entry acting as the traces of the real driver showed it:
 * CONTEXT_IDENTITY [51] gives one object per stream and [39] answers a
 * number for it; the compile cache's lookups miss; cuFFT's [7] calls back
 * once per function of a module. The stub answers the first on the server
 * (this file's table, through host_private.c) and the others in the guest,
 * so tests/cuda/driver/private_tables_ci.c prints the same natively and
 * forwarded only if the forwarding keeps every value. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))

/* ---- 21318c60 CONTEXT_IDENTITY: [51] and [39] -------------------------------- */

struct context_object {
    uint64_t flag; /* 1, as the real object's first word */
    CUcontext ctx;
    CUstream stream;
};
static struct context_object objects_[4];

/* (context, stream, void **object): one object per stream */
static CUresult object_of(CUcontext ctx, CUstream stream, void **out)
{
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < 4; i++)
        if ((objects_[i].ctx == ctx && objects_[i].stream == stream) || !objects_[i].ctx) {
            objects_[i] = (struct context_object){1, ctx, stream};
            *out = &objects_[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult object_query(CUcontext ctx, struct context_object *o, unsigned long long *v)
{
    if (!o || o->ctx != ctx || !v) return CUDA_ERROR_INVALID_VALUE;
    *v = o->stream ? 14 : 7; /* the real driver's answers */
    return CUDA_SUCCESS;
}

static const void *ctxid_[93];

/* ---- da9151d3 the compile cache: every lookup misses --------------------------- */

static CUresult cache_open(void **e, int kind, const void *code, size_t n)
{
    (void)n;
    if (!e || !code || (kind != 1 && kind != 2)) return CUDA_ERROR_INVALID_VALUE;
    *e = calloc(1, 16);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult cache_close(void *e)
{
    free(e);
    return CUDA_SUCCESS;
}
static CUresult cache_lookup(void *e) { return e ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE; }
static CUresult cache_store(void *e, uint64_t z, const void *data, size_t n)
{
    (void)z, (void)n;
    return e && data ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static const void *const cache_[7] = {(const void *)(uintptr_t)0x38, (const void *)&cache_open,
                                      (const void *)&cache_close, (const void *)&cache_lookup,
                                      (const void *)&cache_store, NULL, NULL};

/* ---- 6e163fbe (cuFFT's) [7]: callback(data, function) per function ------------- */

static unsigned each_function(CUcontext ctx, CUmodule m, void (*cb)(void *, CUfunction), void *data)
{
    (void)ctx;
    unsigned n = 0;
    if (cuModuleGetFunctionCount(&n, m) != CUDA_SUCCESS || !n) return 0;
    CUfunction fs[8];
    if (n > 8 || cuModuleEnumerateFunctions(fs, n, m) != CUDA_SUCCESS) return 0;
    for (unsigned i = 0; i < n; i++) cb(data, fs[i]);
    return n;
}
static const void *fft_[99];

FAKE CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    static const unsigned char ctxid[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                                            0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
    static const unsigned char cache[16] = {0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41,
                                            0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28};
    static const unsigned char fft[16] = {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
                                          0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e};
    if (!table || !id) return CUDA_ERROR_INVALID_VALUE;
    *table = NULL;
    if (memcmp(id->bytes, ctxid, 16) == 0) {
        ctxid_[0] = (const void *)(uintptr_t)(93 * sizeof(void *));
        ctxid_[39] = (const void *)&object_query;
        ctxid_[51] = (const void *)&object_of;
        *table = ctxid_;
    } else if (memcmp(id->bytes, cache, 16) == 0) {
        *table = cache_;
    } else if (memcmp(id->bytes, fft, 16) == 0) {
        fft_[0] = (const void *)(uintptr_t)(99 * sizeof(void *));
        fft_[7] = (const void *)&each_function;
        *table = fft_;
    }
    return *table ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
