/* procs: what NVML's process lists show a process (tests/nvml/run.sh procs,
 * tests/gpu/nvml-procs.sh). Prints pids as roles, so that a native run and a
 * forwarded one (other pids) print the same lines:
 *   procs hold              nvmlInit, print "ready", wait for stdin's end,
 *                           nvmlShutdown (a process that uses the GPU)
 *   procs list HOLDER_PID   every process list of GPU 0: each entry's pid as
 *                           "self" (this process), "holder" (HOLDER_PID) or
 *                           "other" (any other pid, with its number), its
 *                           memory, the name nvmlSystemGetProcessName gives
 *                           for it ("=argv0" when it is the process's argv[0]
 *                           as /proc says); accounting stats by pid for
 *                           self, the holder and pid 1
 *   procs smitable HOLDER_PID  through the stub (its answer to nvidia-smi's private table)
 *                           (specs/nvml/smiprocs.c): nvidia-smi's private
 *                           table, its handle-by-index entry (81) and process
 *                           list entries (213-215) as nvidia-smi calls them
 * Entries are printed sorted by role, then pid. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_NO_UNVERSIONED_FUNC_DEFS /* every version of a function declared */
#include <nvml.h>

static unsigned self, holder;

/* argv[0] of pid as /proc says, for comparing with NVML's name */
static void argv0(unsigned pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
}

typedef struct row {
    int role; /* 0 self, 1 holder, 2 other */
    unsigned pid;
    char text[400];
} row;

static int by_role(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->role != y->role) return x->role - y->role;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const char *role_name(int r) { return r == 0 ? "self" : r == 1 ? "holder" : "other"; }

static int role_of(unsigned pid) { return pid == self ? 0 : pid == holder && holder ? 1 : 2; }

/* one entry: role, the pid for "other", the name NVML gives */
static void describe(row *w, unsigned pid, const char *more)
{
    char name[256], want[256];
    w->role = role_of(pid);
    w->pid = pid;
    nvmlReturn_t r = nvmlSystemGetProcessName(pid, name, sizeof name);
    argv0(pid, want, sizeof want);
    char who[32] = "";
    if (w->role == 2) snprintf(who, sizeof who, " %u", pid);
    snprintf(w->text, sizeof w->text, "%s%s name %s%s", role_name(w->role), who,
             r != NVML_SUCCESS ? nvmlErrorString(r) : strcmp(name, want) == 0 ? "=argv0" : name,
             more);
}

static void print_rows(row *w, unsigned n)
{
    qsort(w, n, sizeof *w, by_role);
    for (unsigned i = 0; i < n; i++) printf("    %s\n", w[i].text);
}

static void mem_text(char *buf, size_t len, unsigned long long m)
{
    if (m == (unsigned long long)NVML_VALUE_NOT_AVAILABLE) snprintf(buf, len, " memory N/A");
    else snprintf(buf, len, " memory %llu", m);
}

#define LIST(label, fn, T)                                                                     \
    do {                                                                                       \
        unsigned n = 0;                                                                        \
        nvmlReturn_t r = fn(d, &n, NULL);                                                      \
        printf("%s size query: %s count %u\n", label, nvmlErrorString(r), n);                 \
        T info[16];                                                                            \
        row w[16];                                                                             \
        n = 16;                                                                                \
        r = fn(d, &n, info);                                                                   \
        printf("%s: %s count %u\n", label, nvmlErrorString(r), r == NVML_SUCCESS ? n : 0);     \
        for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < 16; i++) {                      \
            char m[64];                                                                        \
            mem_text(m, sizeof m, info[i].usedGpuMemory);                                      \
            describe(&w[i], info[i].pid, m);                                                   \
        }                                                                                      \
        if (r == NVML_SUCCESS) print_rows(w, n < 16 ? n : 16);                                 \
    } while (0)

static void stats(nvmlDevice_t d, const char *label, unsigned pid)
{
    nvmlAccountingStats_t st;
    nvmlReturn_t r = nvmlDeviceGetAccountingStats(d, pid, &st);
    printf("accounting stats of %s: %s", label, nvmlErrorString(r));
    if (r == NVML_SUCCESS) printf(" max memory %llu running %u", st.maxMemoryUsage, st.isRunning);
    printf("\n");
}

static int list(void)
{
    nvmlDevice_t d;
    nvmlReturn_t r = nvmlDeviceGetHandleByIndex(0, &d);
    if (r != NVML_SUCCESS) return printf("handle: %s\n", nvmlErrorString(r)), 1;
    LIST("compute v3", nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t);
    LIST("compute v2", nvmlDeviceGetComputeRunningProcesses_v2, nvmlProcessInfo_v2_t);
    LIST("compute v1", nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t);
    LIST("graphics v3", nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t);
    LIST("mps v3", nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlProcessInfo_t);

    /* a too small array: the count the guest needs */
    unsigned n = 1;
    nvmlProcessInfo_t one[1];
    r = nvmlDeviceGetComputeRunningProcesses_v3(d, &n, one);
    printf("compute v3 into 1: %s count %u\n", nvmlErrorString(r), n);

    nvmlProcessDetail_v1_t pd[16];
    nvmlProcessDetailList_t l = {.version = nvmlProcessDetailList_v1, .mode = 0,
                                 .numProcArrayEntries = 16, .procArray = pd};
    r = nvmlDeviceGetRunningProcessDetailList(d, &l);
    printf("detail list: %s count %u\n", nvmlErrorString(r), r == NVML_SUCCESS ? l.numProcArrayEntries : 0);
    row w[16];
    for (unsigned i = 0; r == NVML_SUCCESS && i < l.numProcArrayEntries && i < 16; i++) {
        char m[64];
        mem_text(m, sizeof m, pd[i].usedGpuMemory);
        describe(&w[i], pd[i].pid, m);
    }
    if (r == NVML_SUCCESS) print_rows(w, l.numProcArrayEntries < 16 ? l.numProcArrayEntries : 16);

    nvmlProcessUtilizationInfo_v1_t pu[16];
    nvmlProcessesUtilizationInfo_t ui = {.version = nvmlProcessesUtilizationInfo_v1,
                                         .processSamplesCount = 16, .procUtilArray = pu};
    r = nvmlDeviceGetProcessesUtilizationInfo(d, &ui);
    printf("processes utilization: %s count %u\n", nvmlErrorString(r), r == NVML_SUCCESS ? ui.processSamplesCount : 0);
    for (unsigned i = 0; r == NVML_SUCCESS && i < ui.processSamplesCount && i < 16; i++) {
        char m[64];
        snprintf(m, sizeof m, " sm %u mem %u", pu[i].smUtil, pu[i].memUtil);
        describe(&w[i], pu[i].pid, m);
    }
    if (r == NVML_SUCCESS) print_rows(w, ui.processSamplesCount < 16 ? ui.processSamplesCount : 16);

    nvmlProcessUtilizationSample_t us[16];
    n = 0;
    r = nvmlDeviceGetProcessUtilization(d, NULL, &n, 0);
    printf("utilization samples size query: %s count %u\n", nvmlErrorString(r), n);
    n = 16;
    r = nvmlDeviceGetProcessUtilization(d, us, &n, 0);
    printf("utilization samples: %s count %u\n", nvmlErrorString(r), r == NVML_SUCCESS ? n : 0);
    for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < 16; i++) {
        char m[64];
        snprintf(m, sizeof m, " sm %u", us[i].smUtil);
        describe(&w[i], us[i].pid, m);
    }
    if (r == NVML_SUCCESS) print_rows(w, n < 16 ? n : 16);
    /* room for the samples but not for NVML's sample buffer: still too small */
    n = 2;
    r = nvmlDeviceGetProcessUtilization(d, us, &n, 0);
    printf("utilization samples into 2: %s count %u\n", nvmlErrorString(r), n);

    unsigned pids[16];
    n = 16;
    r = nvmlDeviceGetAccountingPids(d, &n, pids);
    printf("accounting pids: %s count %u\n", nvmlErrorString(r), r == NVML_SUCCESS ? n : 0);
    for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < 16; i++) describe(&w[i], pids[i], "");
    if (r == NVML_SUCCESS) print_rows(w, n < 16 ? n : 16);
    stats(d, "self", self);
    if (holder) stats(d, "holder", holder);
    stats(d, "pid 1", 1);

    char name[256];
    r = nvmlSystemGetProcessName(self, name, sizeof name);
    char want[256];
    argv0(self, want, sizeof want);
    printf("own name: %s%s\n", nvmlErrorString(r), r == NVML_SUCCESS && strcmp(name, want) == 0 ? ", argv[0]" : "");
    r = nvmlSystemGetProcessName(self, name, 4);
    printf("own name in 4 bytes: %s \"%s\"\n", nvmlErrorString(r), r == NVML_SUCCESS ? name : "");
    r = nvmlSystemGetProcessName(0x7ffffff0u, name, sizeof name);
    printf("name of no process: %s\n", nvmlErrorString(r));
    return 0;
}

/* exported by libnvidia-ml.so.1, declared in no header */
nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *id);
#pragma weak nvmlInternalGetExportTable

static int smitable(void)
{
    static const unsigned char id[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
                                         0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};
    const void *t = NULL;
    nvmlReturn_t r = nvmlInternalGetExportTable ? nvmlInternalGetExportTable(&t, id) : NVML_ERROR_FUNCTION_NOT_FOUND;
    printf("table: %s\n", nvmlErrorString(r));
    if (r != NVML_SUCCESS || !t) return 1;
    const size_t *w = t;
    printf("table entries: %zu\n", w[0] / sizeof(void *) - 1);
    if (w[0] < 216 * sizeof(void *)) return 1;
    nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *, unsigned) = (nvmlReturn_t (*)(unsigned, nvmlDevice_t *, unsigned))w[81];
    nvmlDevice_t d = NULL, pub = NULL;
    r = by_index(0, &d, 0x22);
    nvmlDeviceGetHandleByIndex_v2(0, &pub);
    printf("entry 81 (index 0): %s, %s the public handle\n", nvmlErrorString(r), d == pub ? "is" : "is not");
    printf("entry 81 (other flags): %s\n", nvmlErrorString(by_index(0, &d, 0)));
    static unsigned char buf[4][4128];
    for (unsigned k = 213; k <= 215; k++) {
        nvmlReturn_t (*list)(nvmlDevice_t, unsigned *, void *) = (nvmlReturn_t (*)(nvmlDevice_t, unsigned *, void *))w[k];
        unsigned n = 4;
        r = list(pub, &n, buf);
        printf("entry %u: %s count %u\n", k, nvmlErrorString(r), r == NVML_SUCCESS ? n : 0);
        row rw[4];
        for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < 4; i++) {
            unsigned pid;
            unsigned long long mem;
            memcpy(&pid, buf[i], sizeof pid);
            memcpy(&mem, buf[i] + 8, sizeof mem);
            char want[256], m[300];
            argv0(pid, want, sizeof want);
            snprintf(m, sizeof m, " memory %llu inline name %s", mem,
                     strcmp((char *)buf[i] + 32, want) == 0 ? "=argv0" : (char *)buf[i] + 32);
            rw[i].role = role_of(pid);
            rw[i].pid = pid;
            snprintf(rw[i].text, sizeof rw[i].text, "%s%s", role_name(rw[i].role), m);
        }
        if (r == NVML_SUCCESS) print_rows(rw, n < 4 ? n : 4);
    }
    {
        unsigned n = 1;
        nvmlReturn_t (*list)(nvmlDevice_t, unsigned *, void *) = (nvmlReturn_t (*)(nvmlDevice_t, unsigned *, void *))w[213];
        r = list(pub, &n, buf);
        printf("entry 213 into 1: %s count %u\n", nvmlErrorString(r), n);
    }
    r = ((nvmlReturn_t (*)(void))w[100])();
    printf("entry 100: %s\n", nvmlErrorString(r));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "usage: procs hold | procs list HOLDER_PID\n"), 2;
    self = (unsigned)getpid();
    char name[64];
    nvmlReturn_t r = nvmlSystemGetProcessName(self, name, sizeof name);
    printf("name before init: %s\n", nvmlErrorString(r));
    r = nvmlInit_v2();
    printf("init: %s\n", nvmlErrorString(r));
    if (r != NVML_SUCCESS) return 1;
    int rc = 0;
    if (strcmp(argv[1], "hold") == 0) {
        printf("ready\n");
        fflush(stdout);
        while (getchar() != EOF) {
        }
    } else {
        holder = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
        rc = strcmp(argv[1], "smitable") == 0 ? smitable() : list();
    }
    r = nvmlShutdown();
    printf("shutdown: %s\n", nvmlErrorString(r));
    return rc;
}
