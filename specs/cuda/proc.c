/* cuGetProcAddress / cuGetProcAddress_v2 of the CUDA driver stub: the
 * stub's own entry point for every (name, version, per-thread) the real
 * driver resolves. The table is CUDA_PROC_TABLE of cuda_wire.h, which apigen
 * derives from cudaTypedefs.h's PFN_<name>_v<version>[_ptds|_ptsz] typedefs
 * (specs/cuda.yaml api.proc_table); each entry is checked here, at compile
 * time, to have the typedef's type. */
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

#include <cudaTypedefs.h>

/* CUDA 12.0 added cuGetProcAddress_v2, which tells why a symbol was not
 * found; before, only cuGetProcAddress, which does not: a stand-in for the
 * lookup below, whose answer the v1 entry point drops. */
#ifndef APIGEN_HAS_TYPE_CUdriverProcAddressQueryResult
typedef enum {
    CU_GET_PROC_ADDRESS_SUCCESS,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
} CUdriverProcAddressQueryResult;
#endif

typedef struct proc {
    const char *name;
    int version;
    int per_thread; /* the _ptds / _ptsz form (a variant suffix) */
    void *fn;
} proc;

#define X(name, ver, pt, sym, pfn)                                                                 \
    _Static_assert(__builtin_types_compatible_p(pfn, __typeof__(&sym)), #pfn " is not " #sym);
CUDA_PROC_TABLE(X)
#undef X

#define X(name, ver, pt, sym, pfn) {#name, ver, pt != 0, (void *)&sym},
static const proc procs_[] = {CUDA_PROC_TABLE(X)};
#undef X
#define NPROCS (sizeof procs_ / sizeof procs_[0])

/* first entry of name (the table is sorted by name), or NPROCS */
static size_t first(const char *name)
{
    size_t lo = 0, hi = NPROCS;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(procs_[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < NPROCS && strcmp(procs_[lo].name, name) == 0 ? lo : NPROCS;
}

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *found)
{
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    /* NVIDIA's runtime asks for "" at version 0 first thing; the real driver
     * answers success with no function (trace of driver 580). */
    if (!*symbol) return CUDA_SUCCESS;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    size_t i = first(symbol);
    if (i == NPROCS) {
        if (found) *found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    const proc *best = NULL, *best_pt = NULL;
    for (; i < NPROCS && strcmp(procs_[i].name, symbol) == 0; i++) {
        if (procs_[i].version > cudaVersion) continue;
        const proc **b = procs_[i].per_thread ? &best_pt : &best;
        if (!*b || procs_[i].version >= (*b)->version) *b = &procs_[i];
    }
    if (per_thread && best_pt) best = best_pt;
    if (!best) {
        if (found) *found = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = best->fn;
    if (found) *found = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

/* Answered in the guest, so the per-call trace would not show them: traced here. */
static CUresult traced(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *found)
{
    CUresult e = lookup(symbol, pfn, cudaVersion, flags, found);
    if (apigen_tracing())
        apigen_trace("cuGetProcAddress(\"%s\", %d, 0x%llx) = %d%s", symbol ? symbol : "(null)",
                     cudaVersion, (unsigned long long)flags, (int)e,
                     e == CUDA_SUCCESS && pfn && !*pfn ? " (no function)" : "");
    return e;
}

#ifdef APIGEN_HAS_FN_cuGetProcAddress_v2
APIGEN_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                           cuuint64_t flags,
                                           CUdriverProcAddressQueryResult *symbolStatus)
{
    return traced(symbol, pfn, cudaVersion, flags, symbolStatus);
}
#endif

APIGEN_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                        cuuint64_t flags)
{
    return traced(symbol, pfn, cudaVersion, flags, NULL);
}

/* The private tables live in export_tables.c (apigen_cuda_export_table). */
APIGEN_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    return apigen_cuda_export_table(ppExportTable, pExportTableId);
}
