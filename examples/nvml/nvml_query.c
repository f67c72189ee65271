/* nvml_query: what a monitoring tool asks NVML, printed so that a run
 * against the real (or fake) libnvidia-ml.so.1 and one through apigen's stub
 * can be compared line by line. Built against nvml.h as any tool is (the
 * header's #defines pick the versioned entry points: nvmlInit_v2, ...).
 *   nvml_query [--volatile] [--forged]
 *     --volatile: print values that change from one moment to the next
 *       (utilization, temperature, used memory); without it they print as
 *       "present"
 *     --forged: also pass a handle nobody handed out (the fake library and the
 *       stub answer NVML_ERROR_INVALID_ARGUMENT; the real library may crash) */
#include <nvml.h>
#include <stdint.h>

/* nvml.h maps the old name to nvmlGetExcludedDeviceCount: call it by its own
 * name, as a binary built with an older header does */
#undef nvmlGetBlacklistDeviceCount
#undef nvmlGetBlacklistDeviceInfoByIndex
#undef nvmlBlacklistDeviceInfo_t
#include "apigen_nvml.h" /* libnvidia-ml.so.1's exports that nvml.h of 13.0 lacks */
/* absent from an older driver's library: then reported as absent */
#pragma weak nvmlDeviceGetRemappedRows_v2
#pragma weak nvmlDeviceGetUnrepairableMemoryFlag_v1
#pragma weak nvmlGetBlacklistDeviceCount
#pragma weak nvmlDeviceReadPRMCounters_v1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int show_volatile;

static void val(const char *what, nvmlReturn_t r, unsigned long long v)
{
    if (r != NVML_SUCCESS) printf("  %s: error %d (%s)\n", what, (int)r, nvmlErrorString(r));
    else if (show_volatile) printf("  %s: %llu\n", what, v);
    else printf("  %s: present\n", what);
}

static void device(unsigned i)
{
    nvmlDevice_t d;
    nvmlReturn_t r = nvmlDeviceGetHandleByIndex(i, &d);
    printf("device %u: handle %s\n", i, r == NVML_SUCCESS ? "ok" : nvmlErrorString(r));
    if (r != NVML_SUCCESS) return;
    char s[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    r = nvmlDeviceGetName(d, s, sizeof s);
    printf("  name: %s\n", r == NVML_SUCCESS ? s : nvmlErrorString(r));
    r = nvmlDeviceGetName(d, s, 4); /* too small */
    printf("  name in 4 bytes: %d (%s)\n", (int)r, nvmlErrorString(r));
    r = nvmlDeviceGetUUID(d, s, sizeof s);
    printf("  uuid: %s\n", r == NVML_SUCCESS ? s : nvmlErrorString(r));
    if (r == NVML_SUCCESS) { /* and back: the handle of that UUID names this GPU */
        nvmlDevice_t again;
        unsigned ai = 99;
        r = nvmlDeviceGetHandleByUUID(s, &again);
        if (r == NVML_SUCCESS) r = nvmlDeviceGetIndex(again, &ai);
        printf("  by uuid: %d index %u\n", (int)r, ai);
    }
    unsigned idx = 99;
    r = nvmlDeviceGetIndex(d, &idx);
    printf("  index: %d %u\n", (int)r, idx);

    nvmlMemory_t m;
    r = nvmlDeviceGetMemoryInfo(d, &m);
    if (r == NVML_SUCCESS) printf("  memory total: %llu\n", m.total);
    else printf("  memory: %s\n", nvmlErrorString(r));
    if (r == NVML_SUCCESS) val("memory used", r, m.used);
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    r = nvmlDeviceGetMemoryInfo_v2(d, &m2);
    if (r == NVML_SUCCESS) printf("  memory v2 total %llu reserved %llu\n", m2.total, m2.reserved);
    else printf("  memory v2: %s\n", nvmlErrorString(r));
    nvmlMemory_v2_t m0 = {0}; /* no version: NVML refuses */
    r = nvmlDeviceGetMemoryInfo_v2(d, &m0);
    printf("  memory v2 without version: %d (%s)\n", (int)r, nvmlErrorString(r));

    /* exported beyond nvml.h of 13.0 (nvidia-smi -q's Remapped Rows and
     * Unrepairable Memory rows) */
    if (nvmlDeviceGetRemappedRows_v2) {
        nvmlRemappedRowsInfo_v2_t rr;
        r = nvmlDeviceGetRemappedRows_v2(d, &rr);
        if (r == NVML_SUCCESS)
            printf("  remapped rows v2: corr %u/%u unc %u/%u pending %u failure %u\n", rr.corrActiveRemaps,
                   rr.corrInactiveRemaps, rr.uncActiveRemaps, rr.uncInactiveRemaps, rr.bPending,
                   rr.bFailureOccurred);
        else printf("  remapped rows v2: %d (%s)\n", (int)r, nvmlErrorString(r));
    } else {
        printf("  remapped rows v2: absent\n");
    }
    if (nvmlDeviceGetUnrepairableMemoryFlag_v1) {
        nvmlUnrepairableMemoryStatus_v1_t um;
        r = nvmlDeviceGetUnrepairableMemoryFlag_v1(d, &um);
        if (r == NVML_SUCCESS) printf("  unrepairable memory: %u\n", um.bUnrepairableMemory);
        else printf("  unrepairable memory: %d (%s)\n", (int)r, nvmlErrorString(r));
    } else {
        printf("  unrepairable memory: absent\n");
    }

    nvmlUtilization_t u;
    r = nvmlDeviceGetUtilizationRates(d, &u);
    val("utilization gpu", r, r == NVML_SUCCESS ? u.gpu : 0);
    val("utilization memory", r, r == NVML_SUCCESS ? u.memory : 0);
    unsigned t = 0;
    r = nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &t);
    val("temperature", r, t);

    /* field values: ids in, values out, each with its own result */
    nvmlFieldValue_t fv[2] = {{.fieldId = NVML_FI_DEV_MEMORY_TEMP}, {.fieldId = NVML_FI_DEV_POWER_INSTANT}};
    r = nvmlDeviceGetFieldValues(d, 2, fv);
    printf("  field values: %d", (int)r);
    for (int k = 0; r == NVML_SUCCESS && k < 2; k++)
        printf(" [field %u: %d%s]", fv[k].fieldId, (int)fv[k].nvmlReturn,
               fv[k].nvmlReturn == NVML_SUCCESS ? " present" : "");
    printf("\n");

    /* PRM counters (Blackwell only): ids and ports in, values out */
    if (nvmlDeviceReadPRMCounters_v1) {
        nvmlPRMCounter_v1_t c[3] = {{.counterId = 1, .inData = {.localPort = 1}},
                                    {.counterId = 1, .inData = {.localPort = 2}},
                                    {.counterId = 102, .inData = {.localPort = 1}}};
        nvmlPRMCounterList_v1_t cl = {.numCounters = 3, .counters = c};
        r = nvmlDeviceReadPRMCounters_v1(d, &cl);
        printf("  prm counters: %d", (int)r);
        for (int k = 0; r == NVML_SUCCESS && k < 3; k++) {
            printf(" [counter %u port %u: %d", c[k].counterId, c[k].inData.localPort,
                   (int)c[k].counterValue.status);
            if (c[k].counterValue.status == NVML_SUCCESS && show_volatile)
                printf(" type %d value %llu", (int)c[k].counterValue.outputType,
                       c[k].counterValue.outputValue.ullVal);
            printf("]");
        }
        printf("\n");
        r = nvmlDeviceReadPRMCounters_v1(d, NULL);
        printf("  prm counters without a list: %d\n", (int)r);
    } else {
        printf("  prm counters: absent\n");
    }

    nvmlPciInfo_t p;
    r = nvmlDeviceGetPciInfo(d, &p);
    if (r == NVML_SUCCESS)
        printf("  pci: %s domain %u bus %u device %u id %08x subsys %08x\n", p.busId, p.domain,
               p.bus, p.device, p.pciDeviceId, p.pciSubSystemId);
    else printf("  pci: %s\n", nvmlErrorString(r));

    unsigned mw = 0;
    r = nvmlDeviceGetPowerManagementLimit(d, &mw);
    if (r == NVML_SUCCESS) printf("  power limit: %u mW\n", mw);
    else printf("  power limit: %s\n", nvmlErrorString(r));

    /* processes: the usual size query first (count 0), then the list */
    unsigned n = 0;
    r = nvmlDeviceGetComputeRunningProcesses(d, &n, NULL);
    printf("  compute processes size query: %d (%s) count %u\n", (int)r, nvmlErrorString(r), n);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE && n > 0) {
        unsigned cap = n + 2;
        nvmlProcessInfo_t *pi = calloc(cap, sizeof *pi);
        if (!pi) return;
        n = cap;
        r = nvmlDeviceGetComputeRunningProcesses(d, &n, pi);
        printf("  compute processes: %d count %u\n", (int)r, n);
        for (unsigned k = 0; r == NVML_SUCCESS && k < n; k++) {
            char pname[64];
            nvmlReturn_t rn = nvmlSystemGetProcessName(pi[k].pid, pname, sizeof pname);
            printf("    pid %u name %s", pi[k].pid, rn == NVML_SUCCESS ? pname : nvmlErrorString(rn));
            if (show_volatile) printf(" memory %llu", pi[k].usedGpuMemory);
            printf("\n");
        }
        free(pi);
    }
    n = 0;
    r = nvmlDeviceGetGraphicsRunningProcesses(d, &n, NULL);
    printf("  graphics processes size query: %d count %u\n", (int)r, n);

    /* the newer list (a struct pointing to the caller's array) */
    nvmlProcessDetailList_t l = {.version = nvmlProcessDetailList_v1,
                                 .mode = 0}; /* compute: nvml.h names no constant */
    r = nvmlDeviceGetRunningProcessDetailList(d, &l);
    printf("  process detail list size query: %d (%s) count %u\n", (int)r, nvmlErrorString(r),
           l.numProcArrayEntries);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE && l.numProcArrayEntries > 0) {
        nvmlProcessDetail_v1_t pd[8];
        l.procArray = pd;
        l.numProcArrayEntries = 8;
        r = nvmlDeviceGetRunningProcessDetailList(d, &l);
        printf("  process detail list: %d count %u\n", (int)r, l.numProcArrayEntries);
        for (unsigned k = 0; r == NVML_SUCCESS && k < l.numProcArrayEntries && k < 8; k++)
            printf("    pid %u\n", pd[k].pid);
    }
    /* room for 4: less than NVML's sample buffer (72 on an H200, 6 in the
     * fake), so INSUFFICIENT_SIZE even with no process on the GPU */
    nvmlProcessUtilizationInfo_v1_t pu[8];
    nvmlProcessesUtilizationInfo_t ui = {
        .version = nvmlProcessesUtilizationInfo_v1, .processSamplesCount = 4, .procUtilArray = pu};
    r = nvmlDeviceGetProcessesUtilizationInfo(d, &ui);
    printf("  process utilization: %d (%s) count %u\n", (int)r, nvmlErrorString(r),
           r == NVML_SUCCESS ? ui.processSamplesCount : 0);
    for (unsigned k = 0; r == NVML_SUCCESS && k < ui.processSamplesCount && k < 8; k++)
        if (show_volatile) printf("    pid %u sm %u mem %u\n", pu[k].pid, pu[k].smUtil, pu[k].memUtil);
        else printf("    pid %u sm present\n", pu[k].pid);
}

int main(int argc, char **argv)
{
    int forged = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--volatile") == 0) show_volatile = 1;
        else if (strcmp(argv[i], "--forged") == 0) forged = 1;
    }
    unsigned n = 0;
    nvmlReturn_t r = nvmlDeviceGetCount(&n);
    printf("count before init: %d (%s)\n", (int)r, nvmlErrorString(r));
    r = nvmlInit();
    printf("init: %d (%s)\n", (int)r, nvmlErrorString(r));
    if (r != NVML_SUCCESS) return 1;
    char v[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    r = nvmlSystemGetDriverVersion(v, sizeof v);
    printf("driver: %s\n", r == NVML_SUCCESS ? v : nvmlErrorString(r));
    r = nvmlSystemGetNVMLVersion(v, sizeof v);
    printf("nvml: %s\n", r == NVML_SUCCESS ? v : nvmlErrorString(r));
    int cuda = 0;
    r = nvmlSystemGetCudaDriverVersion(&cuda);
    printf("cuda driver: %d %d\n", (int)r, cuda);
    r = nvmlDeviceGetCount(&n);
    printf("count: %d %u\n", (int)r, n);
    for (unsigned i = 0; r == NVML_SUCCESS && i < n; i++) device(i);
    /* events: one XID watch on the last GPU, what a health monitor does */
    nvmlEventSet_t set;
    r = nvmlEventSetCreate(&set);
    printf("event set: %d (%s)\n", (int)r, nvmlErrorString(r));
    if (r == NVML_SUCCESS && n > 0) {
        nvmlDevice_t last;
        r = nvmlDeviceGetHandleByIndex(n - 1, &last);
        if (r == NVML_SUCCESS) r = nvmlDeviceRegisterEvents(last, nvmlEventTypeXidCriticalError, set);
        printf("register xid events: %d (%s)\n", (int)r, nvmlErrorString(r));
        nvmlEventData_t ev;
        r = nvmlEventSetWait(set, &ev, 10);
        printf("wait: %d (%s)\n", (int)r, nvmlErrorString(r));
        if (r == NVML_SUCCESS) {
            unsigned ei = 99;
            nvmlReturn_t ri = nvmlDeviceGetIndex(ev.device, &ei);
            printf("  event on device index %d %u type %llu data %llu\n", (int)ri, ei, ev.eventType,
                   ev.eventData);
        }
        nvmlEventSetFree(set);
    }
    unsigned nx = 99;
    r = nvmlGetExcludedDeviceCount(&nx);
    printf("excluded GPUs: %d %u\n", (int)r, nx);
    if (nvmlGetBlacklistDeviceCount) { /* the old name of the same function */
        nx = 99;
        r = nvmlGetBlacklistDeviceCount(&nx);
        printf("blacklisted GPUs: %d %u\n", (int)r, nx);
    } else {
        printf("blacklisted GPUs: absent\n");
    }
    nvmlDevice_t d;
    r = nvmlDeviceGetHandleByUUID("GPU-no-such-gpu", &d);
    printf("unknown uuid: %d (%s)\n", (int)r, nvmlErrorString(r));
    r = nvmlDeviceGetHandleByIndex(n, &d);
    printf("handle past the last: %d (%s)\n", (int)r, nvmlErrorString(r));
    /* a handle no one handed out: NVML's own error, not a crash */
    if (forged) {
        char s[64];
        r = nvmlDeviceGetName((nvmlDevice_t)(uintptr_t)0x5a5a5a5a0ull, s, sizeof s);
        printf("forged handle: %d (%s)\n", (int)r, nvmlErrorString(r));
    }
    for (int e = 0; e <= 3; e++) printf("error string %d: %s\n", e, nvmlErrorString((nvmlReturn_t)e));
    r = nvmlShutdown();
    printf("shutdown: %d (%s)\n", (int)r, nvmlErrorString(r));
    return 0;
}
