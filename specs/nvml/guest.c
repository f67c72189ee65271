/* Hand-written guest code for specs/nvml.yaml.
 *
 * nvmlErrorString returns a string the caller never frees: the stub asks the
 * server's library once per error value (apigenNvmlErrorString) and keeps the
 * answer for the life of the process (apigen_kept_text), so the text is
 * exactly NVML's. Without a server it says so instead of inventing NVML's
 * wording. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

static bool error_text(long result, char *buf, size_t n)
{
    return apigenNvmlErrorString((nvmlReturn_t)result, buf, (unsigned int)n) == NVML_SUCCESS;
}

APIGEN_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)result, error_text);
    return s ? s : "apigen: no NVML server to ask for this error's text";
}

/* nvmlInternalGetExportTable(table, id): NVML's private tables of internal
 * entry points, asked by a 16-byte id. nvidia-smi asks one table,
 * c4fe3e6c-c98f-6c4e-a327-ee696e12f7c4 (its bytes in memory order), and refuses
 * to run without it ("Mismatch in versions between nvidia-smi and NVML").
 * The table's first word is its size in bytes, and nvidia-smi calls an entry
 * only when the size covers it (docs/nvml.md has the evidence). The stub
 * answers that id with specs/nvml/smiprocs.c's table: the process lists
 * nvidia-smi reads through entries 213-215 (its Processes box, -q and
 * --query-compute-apps show the guest's processes, identical to native on
 * the H200, 2026-11-26), the handle by index of entry 81, and every other
 * entry up to 215 a function that reads no argument, logs once and answers
 * NVML_ERROR_NOT_SUPPORTED (nvidia-smi 580 calls one, 26, and prints the same
 * rows as without it). Any other id is NVML_ERROR_NOT_SUPPORTED with *table
 * NULL. Each id asked is logged once. APIGEN_NVML_EXPORT_TABLE chooses
 * another answer for nvidia-smi's id: =empty a table whose size word is 0
 * (no entry offered: nvidia-smi runs on public NVML alone and shows no
 * process), =none NVML_ERROR_NOT_SUPPORTED, =probe specs/nvml/probe.c's
 * table of logging entries (an experiment). */
const void *nvml_probe_table(void); /* probe.c */
const void *nvml_procs_table(void); /* smiprocs.c */

static const unsigned char smi_table_id[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
                                               0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* guards seen, below */

APIGEN_EXPORT nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *id)
{
    static const void *const empty[512]; /* size word 0: no entry offered */
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
    int give = memcmp(u, smi_table_id, 16) == 0 && !(mode && strcmp(mode, "none") == 0);
    int probe = give && mode && strcmp(mode, "probe") == 0;
    int empty_table = give && mode && strcmp(mode, "empty") == 0;
    /* the id's bytes in memory order (as a GUID with its first three fields
     * little-endian: 6c3efec4-8fc9-4e6c-a327-ee696e12f7c4 for nvidia-smi's) */
    if (fresh)
        apigen_log("nvmlInternalGetExportTable: %s "
                   "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x%s",
                   probe         ? "answered with the probe table (APIGEN_NVML_EXPORT_TABLE=probe):"
                   : empty_table ? "answered with an empty table (size 0, no entries):"
                   : give        ? "answered with the process-list table:"
                                 : "not supported: NVML's private table",
                   u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
                   u[13], u[14], u[15], give ? "" : " is not forwarded");
    if (!give) return NVML_ERROR_NOT_SUPPORTED;
    *table = probe ? nvml_probe_table() : empty_table ? (const void *)empty : nvml_procs_table();
    return NVML_SUCCESS;
}

/* Structs that point to the caller's array: their fields travel as the
 * arguments of an internal call (apigen_nvml.h), the array as an array. The
 * stub knows version 1 of each only (the header it was made from). */
#ifdef APIGEN_HAS_FN_nvmlDeviceGetRunningProcessDetailList
APIGEN_EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device,
                                                                 nvmlProcessDetailList_t *plist)
{
    if (!plist) return NVML_ERROR_INVALID_ARGUMENT;
    if (plist->version != nvmlProcessDetailList_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    return apigenNvmlProcessDetailList(device, plist->version, plist->mode,
                                       &plist->numProcArrayEntries, plist->procArray);
}
#endif

/* nvmlDeviceReadPRMCounters_v1 (declared in nvml.h 13.4, not 13.0:
 * apigen_nvml.h): the list carries no version; its array travels both ways. */
APIGEN_EXPORT nvmlReturn_t nvmlDeviceReadPRMCounters_v1(nvmlDevice_t device,
                                                        nvmlPRMCounterList_v1_t *counterList)
{
    if (!counterList) return NVML_ERROR_INVALID_ARGUMENT;
    return apigenNvmlReadPRMCounters(device, counterList->numCounters, counterList->counters);
}

#ifdef APIGEN_HAS_FN_nvmlDeviceGetProcessesUtilizationInfo
APIGEN_EXPORT nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                                 nvmlProcessesUtilizationInfo_t *info)
{
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    if (info->version != nvmlProcessesUtilizationInfo_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    return apigenNvmlProcessesUtilization(device, info->version, &info->lastSeenTimeStamp,
                                          &info->processSamplesCount, info->procUtilArray);
}
#endif

/* nvmlSystemGetProcessName(pid, name, length): NVML reads a process's name
 * from /proc where NVML runs (a container without the host's /proc gets no
 * names: NVIDIA/nvidia-docker#1460), and the pids a guest sees are its own
 * (the server shows each session process as its guest's process:
 * specs/nvml/host.c). So the stub reads the name here, where the guest's
 * processes run, by NVML's rule as observed: argv[0], the first string of
 * /proc/PID/cmdline, cropped to length (nvml.h: "cropped to provided
 * length"). tests/gpu/nvml.sh compares it with the real library's answer.
 * NVML's own state comes first: before nvmlInit (on the server) it answers
 * NVML_ERROR_UNINITIALIZED, which a count asks. */
APIGEN_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
    unsigned int n;
    nvmlReturn_t r = nvmlDeviceGetCount_v2(&n);
    if (r == NVML_ERROR_UNINITIALIZED || r == NVML_ERROR_DRIVER_NOT_LOADED) return r;
    if (!name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? NVML_ERROR_NOT_FOUND
             : errno == EACCES ? NVML_ERROR_NO_PERMISSION
                               : NVML_ERROR_UNKNOWN;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0; /* argv[0]: up to the first NUL */
    snprintf(name, length, "%s", buf);
    return NVML_SUCCESS;
}
