/* fake_nvml.c: a test double of libnvidia-ml.so.1 with two deterministic
 * GPUs, so that CI (no GPU, no driver) runs the whole NVML path: the example
 * natively against this library, and forwarded (stub -> apigen-server-nvml ->
 * this library). Every other function of nvml.h answers
 * NVML_ERROR_NOT_SUPPORTED (fake_weak.c, generated from generated/nvml/nvml.map).
 * The values are invented; only their equality natively and forwarded counts.
 *
 * Processes: GPU 0 runs the processes that initialized this library while
 * APIGEN_FAKE_NVML_PROCS names a folder (each registers its pid there at
 * nvmlInit and leaves at its last nvmlShutdown; a dead one is not listed),
 * natively the application, forwarded the server's session processes; plus
 * the pids of APIGEN_FAKE_NVML_OTHERS (comma-separated: processes that are
 * not apigen's). Each holds GPU 0's used memory. Without either, no process
 * runs. nvmlSystemGetProcessName reads /proc as NVML does (argv[0] of
 * /proc/PID/cmdline, cropped to the caller's length). */
#define _GNU_SOURCE /* kill, pid_t under -std=c11 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#include "apigen_nvml.h" /* the real library's exports nvml.h of 13.0 lacks */

#define EXPORT __attribute__((visibility("default")))
#define NGPU 2

struct nvmlDevice_st {
    unsigned index;
    const char *name, *bus_id;
    char uuid[48];
    unsigned long long total, used;
    unsigned gpu_util, mem_util, power_limit_mw, persistence;
};

static struct nvmlDevice_st gpus[NGPU] = {
    {0, "Fake GPU 80GB HBM3", "00000000:19:00.0", "", 80ull << 30, 1ull << 30, 7, 3, 700000, 1},
    {1, "Fake GPU 80GB HBM3", "00000000:3B:00.0", "", 80ull << 30, 0, 0, 0, 700000, 0},
};
static int inits; /* nvmlInit minus nvmlShutdown */

/* UUIDs: GPU i of fake machine k (APIGEN_FAKE_NVML_MACHINE=k, default 0), so
 * that two servers of the fake show different GPUs */
static void name_gpus(void)
{
    const char *k = getenv("APIGEN_FAKE_NVML_MACHINE");
    unsigned m = k ? (unsigned)strtoul(k, NULL, 10) : 0;
    for (unsigned i = 0; i < NGPU; i++)
        snprintf(gpus[i].uuid, sizeof gpus[i].uuid, "GPU-%08x-1111-2222-3333-%012x",
                 i * 0x55555555u, m);
}

static nvmlReturn_t check(nvmlDevice_t d)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    for (int i = 0; i < NGPU; i++)
        if (d == &gpus[i]) return NVML_SUCCESS;
    return NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t copy_str(char *dst, unsigned len, const char *s)
{
    if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

/* the folder of running processes (APIGEN_FAKE_NVML_PROCS): this
 * process's file in it */
static void proc_file(char *path, size_t len)
{
    const char *dir = getenv("APIGEN_FAKE_NVML_PROCS");
    path[0] = 0;
    if (dir && *dir) snprintf(path, len, "%s/%ld", dir, (long)getpid());
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    if (inits++ == 0) {
        char path[4096];
        name_gpus();
        proc_file(path, sizeof path);
        FILE *f = path[0] ? fopen(path, "w") : NULL;
        if (f) fclose(f);
    }
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }
EXPORT nvmlReturn_t nvmlShutdown(void)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (--inits == 0) {
        char path[4096];
        proc_file(path, sizeof path);
        if (path[0]) unlink(path);
    }
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    default: return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return inits <= 0 ? NVML_ERROR_UNINITIALIZED : copy_str(version, length, "580.00.fake");
}
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    return inits <= 0 ? NVML_ERROR_UNINITIALIZED : copy_str(version, length, "13.580.00.fake");
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    if (!v) return NVML_ERROR_INVALID_ARGUMENT;
    *v = 13000;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }
EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    FILE *f = fopen(path, "re");
    if (!f) return errno == ENOENT ? NVML_ERROR_NOT_FOUND : errno == EACCES ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_UNKNOWN;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0; /* argv[0]: up to the first NUL */
    snprintf(name, length, "%s", buf);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!n) return NVML_ERROR_INVALID_ARGUMENT;
    *n = NGPU;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (i >= NGPU || !d) return NVML_ERROR_INVALID_ARGUMENT;
    *d = &gpus[i];
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
    return nvmlDeviceGetHandleByIndex_v2(i, d);
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!uuid || !d) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < NGPU; i++)
        if (strcmp(uuid, gpus[i].uuid) == 0) {
            *d = &gpus[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}
EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !i) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) *i = d->index;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
    nvmlReturn_t r = check(d);
    return r != NVML_SUCCESS ? r : copy_str(name, length, d->name);
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
    nvmlReturn_t r = check(d);
    return r != NVML_SUCCESS ? r : copy_str(uuid, length, d->uuid);
}
/* nvmlMemory_t is an output: NVML never reads it. A caller's bytes that
 * arrive all 0xA5 (tests/nvml/admin.c fills it so) answer
 * NVML_ERROR_UNKNOWN, so a test sees whether the stub sent them (natively
 * they do arrive: the library gets the caller's own struct). */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !m) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    if (m->total == 0xa5a5a5a5a5a5a5a5ull && m->free == m->total && m->used == m->total)
        return NVML_ERROR_UNKNOWN;
    m->total = d->total;
    m->used = d->used;
    m->free = d->total - d->used;
    return NVML_SUCCESS;
}
/* as NVML: the caller must say which struct version it passes */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !m) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->total = d->total;
    m->reserved = 512ull << 20;
    m->used = d->used;
    m->free = d->total - d->used - m->reserved;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !u) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    u->gpu = d->gpu_util;
    u->memory = d->mem_util;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !p) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    memset(p, 0, sizeof *p);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%s", d->bus_id + 4);
    snprintf(p->busId, sizeof p->busId, "%s", d->bus_id);
    p->domain = 0;
    p->bus = d->index ? 0x3b : 0x19;
    p->device = 0;
    p->pciDeviceId = 0x233010de;
    p->pciSubSystemId = 0x16c110de;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *t)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && (!t || s != NVML_TEMPERATURE_GPU)) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) *t = 31 + d->index;
    return r;
}

/* The processes GPU 0 runs (the header says which); GPU 1 runs none. */
#define MAXPROCS 64
static int by_pid(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}
static unsigned running(nvmlDevice_t d, unsigned pids[MAXPROCS])
{
    unsigned n = 0;
    if (d->index != 0) return 0;
    const char *dir = getenv("APIGEN_FAKE_NVML_PROCS");
    DIR *dp = dir && *dir ? opendir(dir) : NULL;
    for (struct dirent *e; dp && n < MAXPROCS && (e = readdir(dp));) {
        long p = strtol(e->d_name, NULL, 10);
        if (p > 0 && (kill((pid_t)p, 0) == 0 || errno == EPERM)) pids[n++] = (unsigned)p;
    }
    if (dp) closedir(dp);
    qsort(pids, n, sizeof *pids, by_pid); /* a stable order */
    const char *o = getenv("APIGEN_FAKE_NVML_OTHERS");
    for (char *e; o && *o && n < MAXPROCS; o = *e ? e + 1 : e) {
        unsigned long p = strtoul(o, &e, 10);
        if (e == o) break;
        pids[n++] = (unsigned)p;
    }
    return n;
}

/* The size query answers NVML_ERROR_INSUFFICIENT_SIZE with the count, as
 * NVML does. */
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
                                                           nvmlProcessInfo_t *infos)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !n) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    unsigned pids[MAXPROCS], have = running(d, pids), cap = *n;
    *n = have;
    if (cap < have || (have && !infos)) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned i = 0; i < have; i++) {
        memset(&infos[i], 0, sizeof infos[i]);
        infos[i].pid = pids[i];
        infos[i].usedGpuMemory = d->used;
        infos[i].gpuInstanceId = 0xFFFFFFFF;
        infos[i].computeInstanceId = 0xFFFFFFFF;
    }
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n,
                                                           nvmlProcessInfo_v2_t *infos)
{
    return nvmlDeviceGetComputeRunningProcesses_v3(d, n, infos);
}
/* the first version's entries: pid and memory only */
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n,
                                                        nvmlProcessInfo_v1_t *infos)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !n) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    unsigned pids[MAXPROCS], have = running(d, pids), cap = *n;
    *n = have;
    if (cap < have || (have && !infos)) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned i = 0; i < have; i++) {
        infos[i].pid = pids[i];
        infos[i].usedGpuMemory = d->used;
    }
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
                                                            nvmlProcessInfo_t *infos)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !n) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    (void)infos;
    *n = 0;
    return NVML_SUCCESS;
}

/* Accounting: the running processes, each with stats of its own pid */
EXPORT nvmlReturn_t nvmlDeviceGetAccountingPids(nvmlDevice_t d, unsigned int *n, unsigned int *out)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !n) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    unsigned pids[MAXPROCS], have = running(d, pids), cap = *n;
    *n = have;
    if (cap < have || (have && !out)) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, pids, have * sizeof *pids);
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetAccountingStats(nvmlDevice_t d, unsigned int pid, nvmlAccountingStats_t *st)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !st) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    unsigned pids[MAXPROCS], have = running(d, pids);
    for (unsigned i = 0; i < have; i++)
        if (pids[i] == pid) {
            memset(st, 0, sizeof *st);
            st->gpuUtilization = 5;
            st->memoryUtilization = 2;
            st->maxMemoryUsage = d->used;
            st->time = 1000;
            st->startTime = 1700000000000000ull;
            st->isRunning = 1;
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}
/* Utilization samples: one per running process, at time 1000. As NVML, the
 * room asked is the sample buffer's (SAMPLE_ROOM, 72 on an H200), not the
 * samples': a caller with less room gets NVML_ERROR_INSUFFICIENT_SIZE even
 * when the samples would fit, or when there is none (driver 580, H200:
 * room for 8 and no process, INSUFFICIENT_SIZE; NOT_FOUND only with room). */
#define SAMPLE_ROOM(have) ((have) > 6 ? (have) : 6u)
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *u,
                                                   unsigned int *n, unsigned long long since)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !n) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    unsigned pids[MAXPROCS], have = since < 1000 ? running(d, pids) : 0, cap = *n;
    *n = SAMPLE_ROOM(have);
    if (!u || cap < *n) return NVML_ERROR_INSUFFICIENT_SIZE;
    if (!have) return NVML_ERROR_NOT_FOUND;
    *n = have;
    for (unsigned i = 0; i < have; i++)
        u[i] = (nvmlProcessUtilizationSample_t){.pid = pids[i], .timeStamp = 1000, .smUtil = 5, .memUtil = 2};
    return NVML_SUCCESS;
}

/* One write each kind of check needs: the admin gate of the server. */
EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !mw) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) *mw = d->power_limit_mw;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t d, unsigned int mw)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && (mw < 100000 || mw > 700000)) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) d->power_limit_mw = mw;
    return r;
}
/* temperature thresholds: the acoustic one settable (as on Ada and later),
 * the value the caller points to taken (tests/nvml/admin.c) */
static int acoustic_c_[NGPU] = {85, 85};
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t t,
                                                      unsigned int *temp)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && (!temp || t >= NVML_TEMPERATURE_THRESHOLD_COUNT)) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) *temp = t == NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR ? (unsigned)acoustic_c_[d->index] : 90;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceSetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t t, int *temp)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !temp) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS && t != NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR) r = NVML_ERROR_NOT_SUPPORTED;
    if (r == NVML_SUCCESS && (*temp < 60 || *temp > 95)) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) acoustic_c_[d->index] = *temp;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *m)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !m) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) *m = d->persistence ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t m)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS) d->persistence = m == NVML_FEATURE_ENABLED;
    return r;
}

/* Events: a set remembers the devices registered on it; a wait returns one
 * XID 79 on the last device registered, then NVML_ERROR_TIMEOUT. */
struct nvmlEventSet_st {
    nvmlDevice_t dev;
    int pending;
};
static struct nvmlEventSet_st sets[4];

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < 4; i++)
        if (!sets[i].pending && !sets[i].dev) {
            sets[i].pending = -1; /* in use, nothing registered */
            *set = &sets[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_MEMORY;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && (!set || !(types & nvmlEventTypeXidCriticalError))) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) set->dev = d, set->pending = 1;
    return r;
}
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int ms)
{
    (void)ms;
    if (!set || !data) return NVML_ERROR_INVALID_ARGUMENT;
    if (set->pending != 1) return NVML_ERROR_TIMEOUT;
    set->pending = 0;
    memset(data, 0, sizeof *data);
    data->device = set->dev;
    data->eventType = nvmlEventTypeXidCriticalError;
    data->eventData = 79;
    data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    set->dev = NULL;
    set->pending = 0;
    return NVML_SUCCESS;
}

/* The process lists behind a struct's pointer (version 1 only), as NVML
 * answers them: INSUFFICIENT_SIZE with the count needed when the array is
 * NULL or too small. */
EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t d, nvmlProcessDetailList_t *l)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !l) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    if (l->version != nvmlProcessDetailList_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    unsigned pids[MAXPROCS], have = l->mode == 0 ? running(d, pids) : 0; /* mode 0: compute (nvml.h names no constant) */
    unsigned cap = l->numProcArrayEntries;
    l->numProcArrayEntries = have;
    if (have && (!l->procArray || cap < have)) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned i = 0; i < have; i++) {
        memset(&l->procArray[i], 0, sizeof l->procArray[i]);
        l->procArray[i].pid = pids[i];
        l->procArray[i].usedGpuMemory = d->used;
        l->procArray[i].gpuInstanceId = l->procArray[i].computeInstanceId = 0xFFFFFFFF;
    }
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t d, nvmlProcessesUtilizationInfo_t *u)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !u) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    if (u->version != nvmlProcessesUtilizationInfo_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    unsigned pids[MAXPROCS], have = u->lastSeenTimeStamp < 1000 ? running(d, pids) : 0;
    unsigned cap = u->processSamplesCount;
    u->processSamplesCount = SAMPLE_ROOM(have);
    if (!u->procUtilArray || cap < u->processSamplesCount) return NVML_ERROR_INSUFFICIENT_SIZE;
    if (!have) return NVML_ERROR_NOT_FOUND;
    u->processSamplesCount = have;
    for (unsigned i = 0; i < have; i++) {
        memset(&u->procUtilArray[i], 0, sizeof u->procUtilArray[i]);
        u->procUtilArray[i].timeStamp = 1000;
        u->procUtilArray[i].pid = pids[i];
        u->procUtilArray[i].smUtil = 5;
        u->procUtilArray[i].memUtil = 2;
    }
    u->lastSeenTimeStamp = 1000;
    return NVML_SUCCESS;
}

/* Field values: the memory temperature of each GPU; every other field is
 * NOT_SUPPORTED in its own nvmlReturn, as NVML reports them. */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && (n < 0 || (n > 0 && !v))) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    for (int i = 0; i < n; i++) {
        v[i].timestamp = 1000;
        v[i].latencyUsec = 0;
        if (v[i].fieldId == NVML_FI_DEV_MEMORY_TEMP) {
            v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            v[i].value.uiVal = 40 + d->index;
            v[i].nvmlReturn = NVML_SUCCESS;
        } else {
            v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    return NVML_SUCCESS;
}

/* Exports beyond nvml.h of 13.0 (apigen_nvml.h): GPU 1 has remapped rows
 * and unrepairable memory, GPU 0 none; no GPU is excluded. */
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows_v2(nvmlDevice_t d, nvmlRemappedRowsInfo_v2_t *info)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !info) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    *info = (nvmlRemappedRowsInfo_v2_t){.corrActiveRemaps = 3 * d->index, .corrInactiveRemaps = d->index,
                                        .uncActiveRemaps = 2 * d->index, .uncInactiveRemaps = 0,
                                        .bPending = d->index, .bFailureOccurred = 0};
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetUnrepairableMemoryFlag_v1(nvmlDevice_t d, nvmlUnrepairableMemoryStatus_v1_t *s)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && !s) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    s->bUnrepairableMemory = d->index == 1;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlGetExcludedDeviceCount(unsigned int *n)
{
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!n) return NVML_ERROR_INVALID_ARGUMENT;
    *n = 0;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlGetBlacklistDeviceCount(unsigned int *n) { return nvmlGetExcludedDeviceCount(n); }
EXPORT nvmlReturn_t nvmlGetExcludedDeviceInfoByIndex(unsigned int i, nvmlExcludedDeviceInfo_t *info)
{
    (void)i, (void)info;
    if (inits <= 0) return NVML_ERROR_UNINITIALIZED;
    return NVML_ERROR_INVALID_ARGUMENT; /* no GPU is excluded: no index is valid */
}
EXPORT nvmlReturn_t nvmlGetBlacklistDeviceInfoByIndex(unsigned int i, nvmlExcludedDeviceInfo_t *info)
{
    return nvmlGetExcludedDeviceInfoByIndex(i, info);
}

/* PRM counters (Blackwell only): GPU 0 has them, GPU 1 not. Link-down
 * events of port P are 3 + P; any other counter is NOT_SUPPORTED in its
 * own status, as NVML reports one it cannot read. */
EXPORT nvmlReturn_t nvmlDeviceReadPRMCounters_v1(nvmlDevice_t d, nvmlPRMCounterList_v1_t *l)
{
    nvmlReturn_t r = check(d);
    if (r == NVML_SUCCESS && (!l || (l->numCounters && !l->counters))) r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS) return r;
    if (d->index != 0) return NVML_ERROR_NOT_SUPPORTED;
    for (unsigned i = 0; i < l->numCounters; i++) {
        nvmlPRMCounter_v1_t *c = &l->counters[i];
        if (c->counterId == 1) { /* NVML_PRM_COUNTER_ID_PPCNT_PHYSICAL_LAYER_CTRS_LINK_DOWN_EVENTS */
            c->counterValue.status = NVML_SUCCESS;
            c->counterValue.outputType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
            c->counterValue.outputValue.ullVal = 3 + c->inData.localPort;
        } else {
            c->counterValue.status = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    return NVML_SUCCESS;
}
