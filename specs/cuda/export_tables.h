/* The driver's private tables (cuGetExportTable) as apigen's guest stub
 * answers them: declarations shared by export_tables.c, the driver stub's
 * other guest code and the tests. docs/export-tables.md says what each
 * table and entry is and why the stub answers as it does. */
#ifndef APIGEN_CUDA_EXPORT_TABLES_H
#define APIGEN_CUDA_EXPORT_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* Every ABI form declared, as the stub's cuda_wire.h does: the file calls
 * the versioned names (cuCtxGetId, cuDevicePrimaryCtxRelease_v2) itself. */
#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>

/* cuGetExportTable's body: the table for pExportTableId, or NULL and an
 * error (CUDA_ERROR_INVALID_VALUE for an unknown UUID, logged once). */
CUresult apigen_cuda_export_table(const void **ppExportTable, const CUuuid *pExportTableId);

/* A context is gone (cuCtxDestroy, the last cuDevicePrimaryCtxRelease,
 * cuDevicePrimaryCtxReset): drop its context-local storage, calling each
 * value's destructor as the real driver does. Safe to call for a context
 * that has none. The driver stub's context calls call this. */
void apigen_cuda_export_context_gone(CUcontext ctx);

/* ctx_id.c: the server's number of a context the stub made and destroyed
 * (CUDART_INTERFACE [2]), taken out of the ids cuCtxGetId answers. */
void apigen_cuda_ctx_id_burned(unsigned long long server_id);
/* the forwarded cuCtxGetId: the server's number, as it is */
CUresult cuda_fwd_cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);

/* The integrity check's answer (table d4082055, entry 1) for the given
 * inputs: HMAC-MD2 of the version record and every device's UUID and PCI
 * ids. `cudart_table`, `integrity_table` and `integrity_fn` are the
 * addresses the runtime was handed; devices come from cuDeviceGetCount,
 * cuDeviceGet, cuDeviceGetUuid and cuDeviceGetAttribute. */
CUresult apigen_cuda_integrity_answer(unsigned int version, uint64_t unix_seconds,
                                      const void *cudart_table, const void *integrity_table,
                                      const void *integrity_fn, unsigned char out[16]);

/* The pieces, exposed for the unit tests. */
void apigen_cuda_md2(const unsigned char *msg, size_t len, unsigned char out[16]);
void apigen_cuda_integrity_hmac(const unsigned char *msg, size_t len, unsigned char out[16]);

/* Context-local storage (table c693336e) as the runtime calls it. */
typedef void (*apigen_cuda_cls_dtor)(CUcontext ctx, void *key, void *value);
CUresult apigen_cuda_cls_put(CUcontext ctx, void *key, void *value, apigen_cuda_cls_dtor dtor);
CUresult apigen_cuda_cls_delete(CUcontext ctx, void *key);
CUresult apigen_cuda_cls_get(void **value, CUcontext ctx, void *key);

#endif
