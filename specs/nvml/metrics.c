/* The NVML server's part of a scrape (apigen-server --metrics): each GPU's
 * memory and utilization, through the runtime's metrics hook. Runs on the
 * metrics thread, or under --isolation process (NVML's default) in the
 * collector process, never in the parent of the session processes. Each
 * scrape initializes NVML and shuts it down again, so the server holds no
 * reference of its own between scrapes (a guest's nvmlShutdown stays its). */
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

extern const apigen_api apigen_api_nvml;

static void nvml_metrics(apigen_metrics_out *o)
{
    unsigned n = 0;
    nvmlReturn_t r = nvmlInit_v2();
    if (r != NVML_SUCCESS) {
        apigen_metrics_printf(o, "# nvml: nvmlInit_v2: %s: no GPU metrics\n", nvmlErrorString(r));
        return;
    }
    if ((r = nvmlDeviceGetCount_v2(&n)) != NVML_SUCCESS)
        n = 0;
    if (n > 64)
        n = 64;
    nvmlDevice_t dev[64];
    char uuid[64][NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    nvmlMemory_t mem[64];
    nvmlUtilization_t util[64];
    bool has_mem[64] = {0}, has_util[64] = {0};
    for (unsigned i = 0; i < n; i++) {
        uuid[i][0] = 0;
        if (nvmlDeviceGetHandleByIndex_v2(i, &dev[i]) != NVML_SUCCESS)
            continue;
        if (nvmlDeviceGetUUID(dev[i], uuid[i], sizeof uuid[i]) != NVML_SUCCESS)
            uuid[i][0] = 0;
        for (char *c = uuid[i]; *c; c++) /* a label value: "GPU-<hex and dashes>" */
            if (!((*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                  *c == '-'))
                *c = '?';
        has_mem[i] = nvmlDeviceGetMemoryInfo(dev[i], &mem[i]) == NVML_SUCCESS;
        has_util[i] = nvmlDeviceGetUtilizationRates(dev[i], &util[i]) == NVML_SUCCESS;
    }
    static const struct {
        const char *name, *help;
    } fam[] = {
        {"apigen_gpu_memory_used_bytes", "GPU memory in use (nvmlDeviceGetMemoryInfo used)."},
        {"apigen_gpu_memory_total_bytes", "GPU memory in all (nvmlDeviceGetMemoryInfo total)."},
        {"apigen_gpu_utilization_ratio",
         "Fraction of the last sample period a kernel ran (nvmlDeviceGetUtilizationRates gpu / 100)."},
        {"apigen_gpu_memory_utilization_ratio",
         "Fraction of the last sample period device memory was read or written "
         "(nvmlDeviceGetUtilizationRates memory / 100)."},
    };
    for (unsigned f = 0; f < 4; f++) {
        apigen_metrics_printf(o, "# HELP %s %s\n# TYPE %s gauge\n", fam[f].name, fam[f].help,
                              fam[f].name);
        for (unsigned i = 0; i < n; i++) {
            if (f < 2 ? !has_mem[i] : !has_util[i])
                continue;
            apigen_metrics_printf(o, "%s{gpu=\"%u\",uuid=\"%s\"} ", fam[f].name, i, uuid[i]);
            if (f == 0)
                apigen_metrics_printf(o, "%llu\n", mem[i].used);
            else if (f == 1)
                apigen_metrics_printf(o, "%llu\n", mem[i].total);
            else
                apigen_metrics_printf(o, "%.2f\n", (f == 2 ? util[i].gpu : util[i].memory) / 100.0);
        }
    }
    nvmlShutdown();
}

__attribute__((constructor)) static void nvml_metrics_init(void)
{
    apigen_metrics_hook(&apigen_api_nvml, nvml_metrics);
}
