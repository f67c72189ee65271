/* admin: the server's gate on writes that change the GPU, and the stub's
 * answer to an unsupported call. Prints what it saw; tests/nvml/run.sh
 * decides what must be seen.
 *   admin   set GPU 0's power limit to 500 W and its acoustic temperature
 *           threshold to 83 C, read them back; call
 *           nvmlDeviceSetCpuAffinity (unsupported) and nvmlInternalGetExportTable
 *           (private) twice each; ask nvidia-smi's private table and another;
 *           call nvmlDeviceGetMemoryInfo with a struct filled with 0xA5 (an
 *           output: through the stub those bytes must not reach the library) */
#include <string.h>

#include <nvml.h>
#include <stdio.h>

/* the fake library lacks it, as an older driver's does: natively it is
 * absent, forwarded the server answers NVML_ERROR_FUNCTION_NOT_FOUND */
#pragma weak nvmlDeviceGetHostname_v1

/* exported by libnvidia-ml.so.1, declared in no header (nvidia-smi uses it) */
nvmlReturn_t nvmlInternalGetExportTable(const void **table, const void *id);

int main(void)
{
    nvmlReturn_t r = nvmlInit();
    printf("init: %d\n", (int)r);
    if (r != NVML_SUCCESS) return 1;
    nvmlDevice_t d;
    r = nvmlDeviceGetHandleByIndex(0, &d);
    if (r != NVML_SUCCESS) return printf("handle: %d\n", (int)r), 1;
    unsigned mw = 0;
    r = nvmlDeviceGetPowerManagementLimit(d, &mw);
    printf("limit before: %d %u\n", (int)r, mw);
    r = nvmlDeviceSetPowerManagementLimit(d, 500000);
    printf("set limit: %d (%s)\n", (int)r, nvmlErrorString(r));
    r = nvmlDeviceGetPowerManagementLimit(d, &mw);
    printf("limit after: %d %u\n", (int)r, mw);
    { /* a privileged write whose value is behind a (non-const) pointer */
        int c = 83;
        unsigned got = 0;
        r = nvmlDeviceSetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR, &c);
        printf("set acoustic threshold: %d (%s)\n", (int)r, nvmlErrorString(r));
        r = nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR, &got);
        printf("acoustic threshold after: %d %u\n", (int)r, got);
    }
    for (int i = 0; i < 2; i++) {
        r = nvmlDeviceSetCpuAffinity(d);
        printf("set cpu affinity: %d (%s)\n", (int)r, nvmlErrorString(r));
    }
    if (nvmlDeviceGetHostname_v1 != NULL) {
        nvmlHostname_v1_t h;
        r = nvmlDeviceGetHostname_v1(d, &h);
        printf("hostname: %d (%s)\n", (int)r, nvmlErrorString(r));
    } else {
        printf("hostname: absent\n");
    }
    for (int i = 0; i < 2; i++) {
        static const unsigned char id[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        const void *table = &id;
        r = nvmlInternalGetExportTable(&table, id);
        printf("private export table: %d%s\n", (int)r, table ? " (a table)" : "");
    }
    { /* nvidia-smi's table (c4fe3e6c-...): its first word is its size in bytes */
        static const unsigned char smi[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
                                              0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};
        const void *table = NULL;
        r = nvmlInternalGetExportTable(&table, smi);
        if (r == NVML_SUCCESS && table) {
            size_t size = *(const size_t *)table;
            printf("nvidia-smi's table: %d, size word %zu\n", (int)r, size);
            /* an entry is called only when the size covers it, as nvidia-smi does
             * (APIGEN_NVML_EXPORT_TABLE=probe: entries that log and refuse) */
            typedef nvmlReturn_t (*entry_fn)(void);
            for (size_t k = 1; k <= 2 && (k + 1) * sizeof(void *) <= size; k++) {
                entry_fn f;
                memcpy(&f, (const char *)table + k * sizeof(void *), sizeof f);
                for (int twice = 0; twice < 2; twice++)
                    printf("  entry %zu: %d\n", k, f ? (int)f() : -1);
            }
        } else
            printf("nvidia-smi's table: %d%s\n", (int)r, table ? " (a table)" : " (none)");
    }
    nvmlMemory_t m;
    memset(&m, 0xa5, sizeof m);
    r = nvmlDeviceGetMemoryInfo(d, &m);
    printf("memory info over the caller's 0xA5 bytes: %d (%s)\n", (int)r, nvmlErrorString(r));
    nvmlShutdown();
    return 0;
}
