/* Host side of the private-table entries the driver stub forwards
 * (apigen_cuda.h, "CONTEXT_IDENTITY"): the server calls its own driver's
 * table. Only entries whose arguments are handles and plain values are
 * forwarded, with the arguments the real callers were seen to pass
 * (docs/export-tables.md); the object [51] gives is a handle, so [39] only
 * ever receives an object this server's driver handed out. */
#define _GNU_SOURCE 1
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

static const CUuuid context_identity_ = {{(char)0x21, (char)0x31, (char)0x8c, (char)0x60, (char)0x97,
                                          (char)0x14, (char)0x32, (char)0x48, (char)0x8c, (char)0xa6,
                                          (char)0x41, (char)0xff, (char)0x73, (char)0x24, (char)0xc8,
                                          (char)0xf2}};

/* The driver's table, kept once the driver gave it (the same static table
 * every time; CuPy asks [51] and [39] per GEMM); a refusal (before cuInit)
 * is asked again next time. */
static _Atomic(const void *) table_;

/* Entry `slot` of the server driver's CONTEXT_IDENTITY table, or NULL with
 * the reason in *e (word 0 is the table's size in bytes). */
static void *context_identity_entry(unsigned slot, CUresult *e)
{
    const void *table = atomic_load(&table_);
    *e = CUDA_SUCCESS;
    if (!table && (*e = cuGetExportTable(&table, &context_identity_)) == CUDA_SUCCESS)
        atomic_store(&table_, table);
    if (*e != CUDA_SUCCESS) return NULL;
    const uintptr_t *words = table;
    if (!words || words[0] / sizeof(void *) <= slot || !words[slot]) {
        apigen_log("cuda: the server's driver has no CONTEXT_IDENTITY entry [%u] (its table "
                   "holds %zu bytes): CUDA_ERROR_NOT_SUPPORTED",
                   slot, words ? (size_t)words[0] : (size_t)0);
        *e = CUDA_ERROR_NOT_SUPPORTED;
        return NULL;
    }
    return (void *)words[slot];
}

/* The object's first bytes, read so that a bad address costs an error, not
 * the session: the guest keeps a copy beside the id for callers that look. */
static void read_head(const void *object, unsigned char *head, size_t n)
{
    struct iovec local = {head, n}, remote = {(void *)object, n};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0); /* stops at an unmapped page */
    if (got < 0) got = 0;
    memset(head + got, 0, n - (size_t)got);
}

CUresult apigenCudaContextObjectGet(CUcontext ctx, CUstream stream, apigenCudaContextObject *object,
                                    unsigned char *head, size_t headSize)
{
    *object = NULL;
    memset(head, 0, headSize);
    /* the guest keeps a copy of the first bytes, no more: the rest of the
     * server's memory is not the client's to read */
    if (headSize > APIGEN_CUDA_CONTEXT_OBJECT_HEAD) return CUDA_ERROR_INVALID_VALUE;
    CUresult e;
    CUresult (*get)(CUcontext, CUstream, void **) =
        (CUresult(*)(CUcontext, CUstream, void **))(uintptr_t)context_identity_entry(51, &e);
    if (!get) return e;
    /* room beyond the one pointer seen written */
    void *out[8] = {NULL};
    e = get(ctx, stream, out);
    if (e != CUDA_SUCCESS) return e;
    void *obj = out[0];
    if (!obj) return CUDA_ERROR_INVALID_VALUE; /* nothing the guest could name later */
    read_head(obj, head, headSize);
    *object = obj;
    return CUDA_SUCCESS;
}

CUresult apigenCudaContextObjectQuery(CUcontext ctx, apigenCudaContextObject object,
                                      unsigned long long *value)
{
    CUresult e;
    CUresult (*query)(CUcontext, void *, unsigned long long *) =
        (CUresult(*)(CUcontext, void *, unsigned long long *))(uintptr_t)context_identity_entry(39, &e);
    if (!query) return e;
    return query(ctx, object, value);
}
