/* The stub's answer to nvidia-smi's private table (c4fe3e6c-...,
 * specs/nvml/guest.c, docs/nvml.md "Processes"): nvidia-smi's Processes box,
 * -q and --query-compute-apps read the processes through entries of this
 * table only. Checked on the H200 (tests/gpu/nvml-procs.sh, 2026-11-26,
 * driver 580.159.04): with it those views are identical to native, and
 * nvidia-smi calls entries 81, 26 and 213-215 only (-q, topo -m, the box,
 * --query-compute-apps); 26 answers NVML_ERROR_NOT_SUPPORTED and -q prints
 * the same rows as with an empty table.
 *
 * NVIDIA's mock of NVML (k8s-test-infra pkg/gpu/mocknvml, probing nvidia-smi
 * 580.65.06) found that nvidia-smi lists processes through table words
 * 213-215, fn(nvmlDevice_t, unsigned int *count, entry *array), *count the
 * array's room in and the entries written out, an entry being
 * nvmlProcessDetail_v1_t's numbers (pid @0, usedGpuMemory @8, gpuInstanceId
 * @16, computeInstanceId @20, usedGpuCcProtectedMemory @24) and then the
 * process name inline (4096 bytes @32; stride 4128); and a device handle by
 * index at word 81, fn(unsigned int index, nvmlDevice_t *out, 0x22). Which
 * of 213-215 is which list is not published: this table answers word 213+k
 * with nvmlDeviceGetRunningProcessDetailList's mode k (0 compute, 1 graphics,
 * 2 MPS, nvml.h's order "Compute/Graphics/MPSCompute"), each process shown
 * as the guest sees it (host.c), its name from nvmlSystemGetProcessName
 * (guest.c: the guest's /proc). The table's size covers words 1-215, so
 * nvidia-smi may call any of them: every other word is a function that
 * reads no argument, logs "entry N called" once and answers
 * NVML_ERROR_NOT_SUPPORTED, as the probe table's (probe.c). Every call of
 * 81 and 213-215 is logged once with what it answered. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

#define NWORDS 215 /* the entries: words 1..215 */
#define NAME_AT 32
#define NAME_MAX_ 4096
#define STRIDE (NAME_AT + NAME_MAX_)

static atomic_uchar called[14 * 16 + 1]; /* every entry function below, used or not */

static nvmlReturn_t other_called(unsigned n)
{
    if (!atomic_exchange(&called[n], 1))
        apigen_log("nvmlInternalGetExportTable procs: entry %u (byte offset %u) called: "
                   "answered NVML_ERROR_NOT_SUPPORTED", n, n * (unsigned)sizeof(void *));
    return NVML_ERROR_NOT_SUPPORTED;
}

/* word 81: a device handle by index (the mock's flags 0x22; any other is
 * not known, and refused) */
static nvmlReturn_t handle_by_index(unsigned int index, nvmlDevice_t *out, unsigned int flags)
{
    nvmlReturn_t r = flags == 0x22 && out ? nvmlDeviceGetHandleByIndex_v2(index, out)
                                          : NVML_ERROR_NOT_SUPPORTED;
    if (!atomic_exchange(&called[81], 1))
        apigen_log("nvmlInternalGetExportTable procs: entry 81 (handle by index %u, flags 0x%x) "
                   "answered %d", index, flags, (int)r);
    return r;
}

static nvmlReturn_t process_list(unsigned word, nvmlDevice_t dev, unsigned int *count, void *array)
{
#ifndef APIGEN_HAS_FN_nvmlDeviceGetRunningProcessDetailList /* nvml.h before CUDA 12.2 */
    (void)dev, (void)count, (void)array;
    if (!atomic_exchange(&called[word], 1))
        apigen_log("nvmlInternalGetExportTable procs: entry %u (process list) refused: this stub's "
                   "nvml.h has no nvmlDeviceGetRunningProcessDetailList", word);
    return NVML_ERROR_NOT_SUPPORTED;
#else
    nvmlProcessDetail_v1_t pd[64];
    nvmlProcessDetailList_t l = {.version = nvmlProcessDetailList_v1, .mode = word - 213,
                                 .numProcArrayEntries = 64, .procArray = pd};
    nvmlReturn_t r = count ? nvmlDeviceGetRunningProcessDetailList(dev, &l) : NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = r == NVML_SUCCESS ? l.numProcArrayEntries : 0;
    if (r == NVML_SUCCESS && n > *count) {
        *count = n;
        r = NVML_ERROR_INSUFFICIENT_SIZE;
    } else if (r == NVML_SUCCESS) {
        unsigned char *e = array;
        for (unsigned i = 0; e && i < n; i++, e += STRIDE) {
            memset(e, 0, STRIDE);
            memcpy(e, &pd[i], sizeof pd[i]); /* the numbers: nvmlProcessDetail_v1_t's layout */
            if (nvmlSystemGetProcessName(pd[i].pid, (char *)e + NAME_AT, NAME_MAX_) != NVML_SUCCESS)
                e[NAME_AT] = 0;
        }
        *count = e ? n : 0;
        if (!e && n) r = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (!atomic_exchange(&called[word], 1))
        apigen_log("nvmlInternalGetExportTable procs: entry %u (process list, mode %u) answered %d "
                   "with %u entries", word, word - 213, (int)r, n);
    return r;
#endif
}

static nvmlReturn_t w213(nvmlDevice_t d, unsigned int *c, void *a) { return process_list(213, d, c, a); }
static nvmlReturn_t w214(nvmlDevice_t d, unsigned int *c, void *a) { return process_list(214, d, c, a); }
static nvmlReturn_t w215(nvmlDevice_t d, unsigned int *c, void *a) { return process_list(215, d, c, a); }

/* entry h*16+l+1 that reads no argument */
#define ENTRY(h, l) \
    static nvmlReturn_t other_##h##_##l(void) { return other_called((h) * 16 + (l) + 1); }
#define ADDR(h, l) (const void *)other_##h##_##l,
#define ROW(M, h) \
    M(h, 0) M(h, 1) M(h, 2) M(h, 3) M(h, 4) M(h, 5) M(h, 6) M(h, 7) \
    M(h, 8) M(h, 9) M(h, 10) M(h, 11) M(h, 12) M(h, 13) M(h, 14) M(h, 15)
#define ALL(M) \
    ROW(M, 0) ROW(M, 1) ROW(M, 2) ROW(M, 3) ROW(M, 4) ROW(M, 5) ROW(M, 6) ROW(M, 7) \
    ROW(M, 8) ROW(M, 9) ROW(M, 10) ROW(M, 11) ROW(M, 12) ROW(M, 13)

ALL(ENTRY) /* words 1..224; the table uses 1..215 */

static struct {
    size_t size; /* bytes, this word included */
    const void *entry[NWORDS];
} table;

static void fill(void)
{
    static const void *const others[] = {ALL(ADDR)};
    table.size = sizeof table;
    for (unsigned w = 1; w <= NWORDS; w++)
        table.entry[w - 1] = others[w - 1];
    table.entry[81 - 1] = (const void *)handle_by_index;
    table.entry[213 - 1] = (const void *)w213;
    table.entry[214 - 1] = (const void *)w214;
    table.entry[215 - 1] = (const void *)w215;
}

const void *nvml_procs_table(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill);
    return &table;
}

_Static_assert(sizeof table == (NWORDS + 1) * sizeof(void *), "size word then entries");
