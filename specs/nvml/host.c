/* Hand-written host code for specs/nvml.yaml: the internal calls of
 * specs/nvml/apigen_nvml.h, structs that carry handles, and the process
 * lists shown as the guest sees them. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

nvmlReturn_t apigenNvmlErrorString(nvmlReturn_t result, char *buf, unsigned int length)
{
    const char *s = nvmlErrorString(result);
    if (!buf || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
    snprintf(buf, length, "%s", s ? s : "");
    return NVML_SUCCESS;
}

/* ---- structs that carry handles ---------------------------------------------
 * nvmlEventData_t, nvmlGpuInstanceInfo_t and nvmlComputeInstanceInfo_t name
 * a device (and a GPU instance) by handle. They travel as bytes (spec
 * `elem: bytes` with these host wrappers): after the real call the wrapper
 * puts the client's ids where the library wrote its own handles, as a
 * returned handle would be translated. */

static const apigen_handle_type *handle_type(apigen_call_ctx *cx, const char *name)
{
    for (unsigned i = 0; i < cx->api->nhandle_types; i++)
        if (strcmp(cx->api->handle_types[i]->name, name) == 0) return cx->api->handle_types[i];
    return NULL;
}

/* real handle -> the client's id, in place; false when it cannot be named */
static bool to_id(apigen_call_ctx *cx, const char *type, void **field)
{
    const apigen_handle_type *ht = handle_type(cx, type);
    if (!*field) return true;
    uint64_t id = ht ? apigen_handle_put(cx, ht, *field) : 0;
    *field = (void *)(uintptr_t)id;
    return id != 0;
}

nvmlReturn_t nvml_host_event_set_wait(apigen_call_ctx *cx, nvmlEventSet_t set,
                                      nvmlEventData_t *data, unsigned int timeoutms)
{
    nvmlReturn_t r = nvmlEventSetWait(set, data, timeoutms);
    if (r == NVML_SUCCESS && data && !to_id(cx, "nvmlDevice_t", (void **)&data->device))
        r = NVML_ERROR_MEMORY;
    return r;
}

nvmlReturn_t nvml_host_event_set_wait_v2(apigen_call_ctx *cx, nvmlEventSet_t set,
                                         nvmlEventData_t *data, unsigned int timeoutms)
{
    nvmlReturn_t r = nvmlEventSetWait_v2(set, data, timeoutms);
    if (r == NVML_SUCCESS && data && !to_id(cx, "nvmlDevice_t", (void **)&data->device))
        r = NVML_ERROR_MEMORY;
    return r;
}

nvmlReturn_t nvml_host_gpu_instance_get_info(apigen_call_ctx *cx, nvmlGpuInstance_t gi,
                                             nvmlGpuInstanceInfo_t *info)
{
    nvmlReturn_t r = nvmlGpuInstanceGetInfo(gi, info);
    if (r == NVML_SUCCESS && info && !to_id(cx, "nvmlDevice_t", (void **)&info->device))
        r = NVML_ERROR_MEMORY;
    return r;
}

static nvmlReturn_t ci_info_ids(apigen_call_ctx *cx, nvmlReturn_t r, nvmlComputeInstanceInfo_t *info)
{
    if (r == NVML_SUCCESS && info &&
        (!to_id(cx, "nvmlDevice_t", (void **)&info->device) ||
         !to_id(cx, "nvmlGpuInstance_t", (void **)&info->gpuInstance)))
        r = NVML_ERROR_MEMORY;
    return r;
}

nvmlReturn_t nvml_host_compute_instance_get_info(apigen_call_ctx *cx, nvmlComputeInstance_t ci,
                                                 nvmlComputeInstanceInfo_t *info)
{
    return ci_info_ids(cx, nvmlComputeInstanceGetInfo(ci, info), info);
}

nvmlReturn_t nvml_host_compute_instance_get_info_v2(apigen_call_ctx *cx,
                                                    nvmlComputeInstance_t ci,
                                                    nvmlComputeInstanceInfo_t *info)
{
    return ci_info_ids(cx, nvmlComputeInstanceGetInfo_v2(ci, info), info);
}

/* ---- processes as the guest sees them ---------------------------------------
 * NVML names the processes that hold a GPU by their pids on the server: the
 * session processes of apigen's guests among them. Every list of processes
 * is shown to a guest as its guests' processes (docs/nvml.md "Processes"):
 * the host code below reads the library's whole list, replaces each session
 * process's pid by the pid of the guest process it serves (apigen_guest_pids:
 * the guests of the caller's pid space only), leaves out every other process
 * (other machines' guests, anything that is not an apigen session), and then
 * answers the guest's array and count as NVML does for the list it sees
 * (NVML_ERROR_INSUFFICIENT_SIZE with the count needed). A pid the guest
 * passes in goes the other way (apigen_server_pid). Under --isolation thread
 * one server process serves every session, so what NVML measures of it is no
 * session's own: memory is NVML_VALUE_NOT_AVAILABLE ("N/A"), and the lists of
 * per-process figures (utilization samples, accounting, encoder and FBC
 * sessions) leave that process out. The library's functions are weak here,
 * as in the generated server: an older library may lack them. */
#pragma weak nvmlDeviceGetComputeRunningProcesses
#pragma weak nvmlDeviceGetComputeRunningProcesses_v2
#pragma weak nvmlDeviceGetComputeRunningProcesses_v3
#pragma weak nvmlDeviceGetGraphicsRunningProcesses
#pragma weak nvmlDeviceGetGraphicsRunningProcesses_v2
#pragma weak nvmlDeviceGetGraphicsRunningProcesses_v3
#pragma weak nvmlDeviceGetMPSComputeRunningProcesses
#pragma weak nvmlDeviceGetMPSComputeRunningProcesses_v2
#pragma weak nvmlDeviceGetMPSComputeRunningProcesses_v3
#pragma weak nvmlDeviceGetProcessUtilization
#pragma weak nvmlDeviceGetAccountingPids
#pragma weak nvmlDeviceGetAccountingStats
#pragma weak nvmlDeviceGetEncoderSessions
#pragma weak nvmlDeviceGetFBCSessions
#ifdef APIGEN_HAS_FN_nvmlDeviceGetRunningProcessDetailList
#pragma weak nvmlDeviceGetRunningProcessDetailList
#endif
#ifdef APIGEN_HAS_FN_nvmlDeviceGetProcessesUtilizationInfo
#pragma weak nvmlDeviceGetProcessesUtilizationInfo
#endif

#define GUESTS_MAX 64 /* guest processes one server process stands for */

typedef struct plist plist;
struct plist {
    nvmlReturn_t (*call)(const plist *l, unsigned int *n, void *buf); /* the library's list */
    nvmlDevice_t dev;
    unsigned int version, mode;             /* the detail list's struct fields */
    unsigned long long since, *since_out;   /* utilization: lastSeenTimeStamp in and out */
    size_t elem, pid_off;                   /* entry size, offset of its unsigned int pid */
    long mem_off, mem2_off;                 /* its unsigned long long memory figures, -1: none */
    bool per_process;                       /* figures of the process (hidden when shared) */
    bool merge;                             /* one entry per pid (memory summed) ... */
    long mig_off;                           /* ... and MIG instance (gpuInstanceId and
                                               computeInstanceId, 8 bytes here; -1: none) */
    nvmlReturn_t empty;                     /* the library's answer for an empty list */
    bool library_room;                      /* the room asked is the library's sample
                                               buffer's, not the entries' (utilization:
                                               NVML asks room for its whole buffer, 72
                                               samples on the H200, however few it holds) */
};

static void set_mem(unsigned char *e, long off, unsigned long long v)
{
    if (off >= 0) memcpy(e + off, &v, sizeof v);
}

static void add_mem(unsigned char *e, long off, const unsigned char *from)
{
    unsigned long long a, b, na = (unsigned long long)NVML_VALUE_NOT_AVAILABLE;
    if (off < 0) return;
    memcpy(&a, e + off, sizeof a);
    memcpy(&b, from + off, sizeof b);
    set_mem(e, off, a == na || b == na ? na : a + b);
}

/* The library's whole list (grown until it fits, a few times: it may grow
 * meanwhile) in *all, n entries. */
static nvmlReturn_t whole_list(const plist *l, void **all, unsigned int *n)
{
    unsigned int cap = 32;
    nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
    *all = NULL;
    for (int t = 0; t < 6 && r == NVML_ERROR_INSUFFICIENT_SIZE; t++) {
        if (t) cap = *n > cap ? *n + 16 : cap * 2;
        free(*all);
        if (!(*all = calloc(cap, l->elem))) return NVML_ERROR_MEMORY;
        *n = cap;
        r = l->call(l, n, *all);
    }
    return r;
}

static nvmlReturn_t guest_list(apigen_call_ctx *cx, const plist *l, unsigned int *count, void *out)
{
    if (!count) return l->call(l, NULL, out); /* the library's own answer to that */
    /* the library's own size query (no buffer) says the room it wants; asked
     * first, so that the list's call is the last to set lastSeenTimeStamp */
    unsigned int need = 0;
    if (l->library_room && l->call(l, &need, NULL) != NVML_ERROR_INSUFFICIENT_SIZE) need = 0;
    void *all;
    unsigned int n = 0;
    nvmlReturn_t r = whole_list(l, &all, &n);
    if (r == l->empty && r != NVML_SUCCESS) /* no sample at all: the room decides, below */
        r = NVML_SUCCESS, n = 0;
    if (r != NVML_SUCCESS) {
        free(all);
        if (r == NVML_ERROR_INSUFFICIENT_SIZE) *count = n; /* still growing: ask again */
        return r;
    }
    unsigned char *seen = NULL; /* the guest's list: m entries of cap */
    size_t m = 0, cap = 0;
    for (unsigned int i = 0; i < n; i++) {
        const unsigned char *e = (const unsigned char *)all + (size_t)i * l->elem;
        unsigned int spid;
        uint64_t g[GUESTS_MAX];
        bool shared;
        memcpy(&spid, e + l->pid_off, sizeof spid);
        unsigned k = apigen_guest_pids(cx, spid, g, GUESTS_MAX, &shared);
        if (shared && l->per_process) k = 0;
        for (unsigned j = 0; j < k; j++) {
            unsigned int gp = (unsigned int)g[j];
            unsigned char *d = NULL;
            for (size_t q = 0; l->merge && q < m && !d; q++) {
                unsigned int p;
                unsigned char *o = seen + q * l->elem;
                memcpy(&p, o + l->pid_off, sizeof p);
                if (p == gp && (l->mig_off < 0 || memcmp(o + l->mig_off, e + l->mig_off, 8) == 0)) d = o;
            }
            if (d) { /* the same guest process twice (two sessions): one entry */
                add_mem(d, l->mem_off, e);
                add_mem(d, l->mem2_off, e);
                continue;
            }
            if (m == cap) {
                cap = cap ? 2 * cap : 16;
                unsigned char *grown = realloc(seen, cap * l->elem);
                if (!grown) {
                    free(seen);
                    free(all);
                    return NVML_ERROR_MEMORY;
                }
                seen = grown;
            }
            d = seen + m++ * l->elem;
            memcpy(d, e, l->elem);
            memcpy(d + l->pid_off, &gp, sizeof gp);
            if (shared) { /* the server process's memory: no one session's */
                set_mem(d, l->mem_off, (unsigned long long)NVML_VALUE_NOT_AVAILABLE);
                set_mem(d, l->mem2_off, (unsigned long long)NVML_VALUE_NOT_AVAILABLE);
            }
        }
    }
    free(all);
    unsigned int room = out ? *count : 0;
    *count = (unsigned int)m;
    /* the library's room first: with room for 8 and no sample at all, driver
     * 580 answers INSUFFICIENT_SIZE, not NOT_FOUND (H200, 2026-11-28) */
    if (need > room && need >= m) {
        *count = need;
        r = NVML_ERROR_INSUFFICIENT_SIZE;
    } else if (m == 0) r = l->empty;
    else if (m > room) r = NVML_ERROR_INSUFFICIENT_SIZE;
    else memcpy(out, seen, m * l->elem);
    free(seen);
    return r;
}

/* nvmlDeviceGet{Compute,Graphics,MPSCompute}RunningProcesses{,_v2,_v3}; the
 * first version's entries have no MIG instance */
#define MIG_OFF(T) (sizeof(T) > sizeof(nvmlProcessInfo_v1_t) ? (long)offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) : -1L)
_Static_assert(offsetof(nvmlProcessInfo_v2_t, computeInstanceId) ==
               offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) + 4, "MIG ids side by side");
#define RUNNING(name, fn, T)                                                                    \
    static nvmlReturn_t call_##name(const plist *l, unsigned int *n, void *b)                   \
    {                                                                                           \
        return fn(l->dev, n, (T *)b);                                                           \
    }                                                                                           \
    nvmlReturn_t nvml_host_##name(apigen_call_ctx *cx, nvmlDevice_t device, unsigned int *n,    \
                                  T *infos);                                                    \
    nvmlReturn_t nvml_host_##name(apigen_call_ctx *cx, nvmlDevice_t device, unsigned int *n,    \
                                  T *infos)                                                     \
    {                                                                                           \
        if (!fn) return NVML_ERROR_FUNCTION_NOT_FOUND;                                          \
        plist l = {.call = call_##name, .dev = device, .elem = sizeof(T),                       \
                   .pid_off = offsetof(T, pid), .mem_off = offsetof(T, usedGpuMemory),          \
                   .mem2_off = -1, .merge = true, .mig_off = MIG_OFF(T), .empty = NVML_SUCCESS}; \
        return guest_list(cx, &l, n, infos);                                                    \
    }
RUNNING(compute_procs, nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t)
RUNNING(compute_procs_v2, nvmlDeviceGetComputeRunningProcesses_v2, nvmlProcessInfo_v2_t)
RUNNING(compute_procs_v3, nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t)
RUNNING(graphics_procs, nvmlDeviceGetGraphicsRunningProcesses, nvmlProcessInfo_v1_t)
RUNNING(graphics_procs_v2, nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlProcessInfo_v2_t)
RUNNING(graphics_procs_v3, nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t)
RUNNING(mps_procs, nvmlDeviceGetMPSComputeRunningProcesses, nvmlProcessInfo_v1_t)
RUNNING(mps_procs_v2, nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlProcessInfo_v2_t)
RUNNING(mps_procs_v3, nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlProcessInfo_t)

/* per-process figures: the lists leave a shared server process out */
#define PER_PROCESS(name, fn, T)                                                                \
    static nvmlReturn_t call_##name(const plist *l, unsigned int *n, void *b)                   \
    {                                                                                           \
        return fn(l->dev, n, (T *)b);                                                           \
    }                                                                                           \
    nvmlReturn_t nvml_host_##name(apigen_call_ctx *cx, nvmlDevice_t device, unsigned int *n,    \
                                  T *infos);                                                    \
    nvmlReturn_t nvml_host_##name(apigen_call_ctx *cx, nvmlDevice_t device, unsigned int *n,    \
                                  T *infos)                                                     \
    {                                                                                           \
        if (!fn) return NVML_ERROR_FUNCTION_NOT_FOUND;                                          \
        plist l = {.call = call_##name, .dev = device, .elem = sizeof(T),                       \
                   .pid_off = offsetof(T, pid), .mem_off = -1, .mem2_off = -1, .mig_off = -1,   \
                   .per_process = true, .empty = NVML_SUCCESS};                                 \
        return guest_list(cx, &l, n, infos);                                                    \
    }
PER_PROCESS(encoder_sessions, nvmlDeviceGetEncoderSessions, nvmlEncoderSessionInfo_t)
PER_PROCESS(fbc_sessions, nvmlDeviceGetFBCSessions, nvmlFBCSessionInfo_t)

static nvmlReturn_t call_accounting_pids(const plist *l, unsigned int *n, void *b)
{
    return nvmlDeviceGetAccountingPids(l->dev, n, b);
}
nvmlReturn_t nvml_host_accounting_pids(apigen_call_ctx *cx, nvmlDevice_t device,
                                       unsigned int *count, unsigned int *pids)
{
    if (!nvmlDeviceGetAccountingPids) return NVML_ERROR_FUNCTION_NOT_FOUND;
    plist l = {.call = call_accounting_pids, .dev = device, .elem = sizeof(unsigned int),
               .pid_off = 0, .mem_off = -1, .mem2_off = -1, .mig_off = -1, .per_process = true,
               .merge = true, .empty = NVML_SUCCESS};
    return guest_list(cx, &l, count, pids);
}

/* a pid the guest names: its session's process, if the guest may see it */
nvmlReturn_t nvml_host_accounting_stats(apigen_call_ctx *cx, nvmlDevice_t device, unsigned int pid,
                                        nvmlAccountingStats_t *stats)
{
    if (!nvmlDeviceGetAccountingStats) return NVML_ERROR_FUNCTION_NOT_FOUND;
    bool shared;
    uint64_t spid = apigen_server_pid(cx, pid, &shared);
    if (spid && !shared && spid <= UINT32_MAX)
        return nvmlDeviceGetAccountingStats(device, (unsigned int)spid, stats);
    /* none the guest may see: the library's answer for no process (pid 0),
     * so that its own errors (device, init) come first */
    nvmlReturn_t r = nvmlDeviceGetAccountingStats(device, 0, stats);
    return r == NVML_SUCCESS ? NVML_ERROR_NOT_FOUND : r;
}

static nvmlReturn_t call_process_utilization(const plist *l, unsigned int *n, void *b)
{
    return nvmlDeviceGetProcessUtilization(l->dev, b, n, l->since);
}
nvmlReturn_t nvml_host_process_utilization(apigen_call_ctx *cx, nvmlDevice_t device,
                                           nvmlProcessUtilizationSample_t *utilization,
                                           unsigned int *count, unsigned long long lastSeenTimeStamp)
{
    if (!nvmlDeviceGetProcessUtilization) return NVML_ERROR_FUNCTION_NOT_FOUND;
    plist l = {.call = call_process_utilization, .dev = device,
               .since = lastSeenTimeStamp, .elem = sizeof *utilization,
               .pid_off = offsetof(nvmlProcessUtilizationSample_t, pid), .mem_off = -1,
               .mem2_off = -1, .mig_off = -1, .per_process = true, .empty = NVML_ERROR_NOT_FOUND,
               .library_room = true};
    return guest_list(cx, &l, count, utilization);
}

/* ---- process lists behind a struct's pointer (apigen_nvml.h) -----------------
 * The struct's fields came as arguments; the library gets a struct around
 * the host's array, and the list is shown as above. */

#ifdef APIGEN_HAS_FN_nvmlDeviceGetRunningProcessDetailList /* nvml.h of CUDA 12.2 on */
_Static_assert(offsetof(nvmlProcessDetail_v1_t, computeInstanceId) ==
               offsetof(nvmlProcessDetail_v1_t, gpuInstanceId) + 4, "MIG ids side by side");
static nvmlReturn_t call_detail_list(const plist *l, unsigned int *n, void *b)
{
    nvmlProcessDetailList_t d = {.version = l->version, .mode = l->mode,
                                 .numProcArrayEntries = n ? *n : 0, .procArray = b};
    nvmlReturn_t r = nvmlDeviceGetRunningProcessDetailList(l->dev, &d);
    if (n) *n = d.numProcArrayEntries;
    return r;
}
nvmlReturn_t nvml_host_process_detail_list(apigen_call_ctx *cx, nvmlDevice_t device,
                                           unsigned int version, unsigned int mode,
                                           unsigned int *count, nvmlProcessDetail_v1_t *procs)
{
    if (!nvmlDeviceGetRunningProcessDetailList) return NVML_ERROR_FUNCTION_NOT_FOUND;
    plist l = {.call = call_detail_list, .dev = device, .version = version, .mode = mode,
               .elem = sizeof *procs, .pid_off = offsetof(nvmlProcessDetail_v1_t, pid),
               .mem_off = offsetof(nvmlProcessDetail_v1_t, usedGpuMemory),
               .mem2_off = offsetof(nvmlProcessDetail_v1_t, usedGpuCcProtectedMemory),
               .merge = true, .mig_off = offsetof(nvmlProcessDetail_v1_t, gpuInstanceId),
               .empty = NVML_SUCCESS};
    return guest_list(cx, &l, count, procs);
}

#endif

#ifdef APIGEN_HAS_FN_nvmlDeviceGetProcessesUtilizationInfo /* 12.4 on */
static nvmlReturn_t call_processes_utilization(const plist *l, unsigned int *n, void *b)
{
    nvmlProcessesUtilizationInfo_t u = {.version = l->version, .processSamplesCount = n ? *n : 0,
                                        .lastSeenTimeStamp = l->since, .procUtilArray = b};
    nvmlReturn_t r = nvmlDeviceGetProcessesUtilizationInfo(l->dev, &u);
    if (n) *n = u.processSamplesCount;
    *l->since_out = u.lastSeenTimeStamp;
    return r;
}
nvmlReturn_t nvml_host_processes_utilization(apigen_call_ctx *cx, nvmlDevice_t device,
                                             unsigned int version,
                                             unsigned long long *lastSeenTimeStamp,
                                             unsigned int *count,
                                             nvmlProcessUtilizationInfo_v1_t *procs)
{
    if (!nvmlDeviceGetProcessesUtilizationInfo) return NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned long long since = lastSeenTimeStamp ? *lastSeenTimeStamp : 0, out = since;
    plist l = {.call = call_processes_utilization, .dev = device, .version = version,
               .since = since, .since_out = &out, .elem = sizeof *procs,
               .pid_off = offsetof(nvmlProcessUtilizationInfo_v1_t, pid), .mem_off = -1,
               .mem2_off = -1, .mig_off = -1, .per_process = true, .empty = NVML_ERROR_NOT_FOUND,
               .library_room = true};
    nvmlReturn_t r = guest_list(cx, &l, count, procs);
    if (lastSeenTimeStamp) *lastSeenTimeStamp = out;
    return r;
}
#endif

/* nvmlDeviceReadPRMCounters_v1 (apigen_nvml.h): the list around the host's
 * copy of the caller's counters */
#pragma weak nvmlDeviceReadPRMCounters_v1
nvmlReturn_t apigenNvmlReadPRMCounters(nvmlDevice_t device, unsigned int numCounters,
                                       nvmlPRMCounter_v1_t *counters)
{
    if (!nvmlDeviceReadPRMCounters_v1) return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlPRMCounterList_v1_t l = {.numCounters = numCounters, .counters = counters};
    return nvmlDeviceReadPRMCounters_v1(device, &l);
}
