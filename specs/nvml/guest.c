/* Hand-written guest code for specs/nvml.yaml.
 *
 * nvmlErrorString returns a string the caller never frees: the stub asks the
 * server's library once per error value (apigenNvmlErrorString) and keeps the
 * answer for the life of the process, so the text is exactly NVML's. Without
 * a server it says so instead of inventing NVML's wording. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

#define KNOWN 1024 /* NVML's codes are 0..999 (NVML_ERROR_UNKNOWN) */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *known[KNOWN];
static _Thread_local char odd[256]; /* a value past KNOWN: this thread's last */

APIGEN_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    unsigned k = (unsigned)result;
    pthread_mutex_lock(&mu);
    const char *s = k < KNOWN ? known[k] : NULL;
    pthread_mutex_unlock(&mu);
    if (s) return s;
    char buf[256] = {0};
    if (apigenNvmlErrorString(result, buf, sizeof buf) != NVML_SUCCESS)
        return "apigen: no NVML server to ask for this error's text";
    buf[sizeof buf - 1] = 0;
    size_t len = strlen(buf) + 1;
    char *d = k < KNOWN ? malloc(len) : NULL;
    if (d) memcpy(d, buf, len);
    if (!d) {
        memcpy(odd, buf, sizeof odd);
        return odd;
    }
    pthread_mutex_lock(&mu);
    if (!known[k]) known[k] = d;
    else free(d);
    s = known[k];
    pthread_mutex_unlock(&mu);
    return s;
}

/* nvmlInternalGetExportTable(table, id): NVML's private tables of internal
 * entry points, asked by a 16-byte id (nvidia-smi asks one; its tables are
 * not documented and this stub has none). Each id asked is logged once, so a
 * run shows which tables a tool needs; the answer is NVML_ERROR_NOT_SUPPORTED
 * and *table NULL. APIGEN_NVML_EXPORT_TABLE=empty (an experiment for
 * tests/gpu/nvml.sh) answers success with a table whose entries are all NULL
 * instead: whether a tool copes with that is what the experiment shows. */
APIGEN_EXPORT nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *id)
{
    static const void *empty[512];
    static unsigned char seen[8][16];
    static unsigned nseen;
    if (!table || !id) return NVML_ERROR_INVALID_ARGUMENT;
    *table = NULL;
    const unsigned char *u = id;
    int fresh = 1;
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < nseen && fresh; i++) fresh = memcmp(seen[i], u, 16) != 0;
    if (fresh && nseen < 8) memcpy(seen[nseen++], u, 16);
    pthread_mutex_unlock(&mu);
    const char *mode = getenv("APIGEN_NVML_EXPORT_TABLE");
    int give_empty = mode && strcmp(mode, "empty") == 0;
    if (fresh)
        apigen_log("nvmlInternalGetExportTable: not supported: NVML's private table "
                   "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x "
                   "is not forwarded%s", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
                   u[10], u[11], u[12], u[13], u[14], u[15],
                   give_empty ? " (APIGEN_NVML_EXPORT_TABLE=empty: an empty table instead)" : "");
    if (!give_empty) return NVML_ERROR_NOT_SUPPORTED;
    *table = empty;
    return NVML_SUCCESS;
}

/* Structs that point to the caller's array: their fields travel as the
 * arguments of an internal call (apigen_nvml.h), the array as an array. The
 * stub knows version 1 of each only (the header it was made from). */
APIGEN_EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device,
                                                                 nvmlProcessDetailList_t *plist)
{
    if (!plist) return NVML_ERROR_INVALID_ARGUMENT;
    if (plist->version != nvmlProcessDetailList_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    return apigenNvmlProcessDetailList(device, plist->version, plist->mode,
                                       &plist->numProcArrayEntries, plist->procArray);
}

APIGEN_EXPORT nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                                 nvmlProcessesUtilizationInfo_t *info)
{
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    if (info->version != nvmlProcessesUtilizationInfo_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    return apigenNvmlProcessesUtilization(device, info->version, &info->lastSeenTimeStamp,
                                          &info->processSamplesCount, info->procUtilArray);
}
