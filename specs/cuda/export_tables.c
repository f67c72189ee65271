/* cuGetExportTable: the driver's private tables, asked for by UUID by
 * NVIDIA's runtime and libraries. This is the placeholder the driver stub
 * builds with: every table is unknown; each UUID is logged once and
 * refused. The private-interface work replaces this file with the tables
 * themselves (same function). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

#define MAX_SEEN 64
static unsigned char seen_[MAX_SEEN][16];
static unsigned nseen_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

CUresult apigen_cuda_export_table(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (!ppExportTable || !pExportTableId) return CUDA_ERROR_INVALID_VALUE;
    *ppExportTable = NULL;
    const unsigned char *u = (const unsigned char *)pExportTableId->bytes;
    int fresh = 1;
    pthread_mutex_lock(&lock_);
    for (unsigned i = 0; i < nseen_; i++)
        if (memcmp(seen_[i], u, 16) == 0) fresh = 0;
    if (fresh && nseen_ < MAX_SEEN) memcpy(seen_[nseen_++], u, 16);
    pthread_mutex_unlock(&lock_);
    if (fresh)
        apigen_log("cuda: cuGetExportTable: no table for %02x%02x%02x%02x-%02x%02x-%02x%02x-"
                   "%02x%02x-%02x%02x%02x%02x%02x%02x: CUDA_ERROR_INVALID_VALUE",
                   u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                   u[12], u[13], u[14], u[15]);
    return CUDA_ERROR_INVALID_VALUE;
}
