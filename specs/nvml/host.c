/* Hand-written host code for specs/nvml.yaml: the internal calls of
 * specs/nvml/apigen_nvml.h. */
#include <stdint.h>
#include <stdio.h>
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

/* ---- process lists behind a struct's pointer (apigen_nvml.h) ----------------- */

#ifdef APIGEN_HAS_FN_nvmlDeviceGetRunningProcessDetailList
nvmlReturn_t apigenNvmlProcessDetailList(nvmlDevice_t device, unsigned int version,
                                         unsigned int mode, unsigned int *count,
                                         nvmlProcessDetail_v1_t *procs)
{
    nvmlProcessDetailList_t l = {.version = version, .mode = mode,
                                 .numProcArrayEntries = count ? *count : 0, .procArray = procs};
    nvmlReturn_t r = nvmlDeviceGetRunningProcessDetailList(device, &l);
    if (count) *count = l.numProcArrayEntries;
    return r;
}
#endif

#ifdef APIGEN_HAS_FN_nvmlDeviceGetProcessesUtilizationInfo
nvmlReturn_t apigenNvmlProcessesUtilization(nvmlDevice_t device, unsigned int version,
                                            unsigned long long *lastSeenTimeStamp,
                                            unsigned int *count,
                                            nvmlProcessUtilizationInfo_v1_t *procs)
{
    nvmlProcessesUtilizationInfo_t u = {.version = version,
                                        .processSamplesCount = count ? *count : 0,
                                        .lastSeenTimeStamp = lastSeenTimeStamp ? *lastSeenTimeStamp : 0,
                                        .procUtilArray = procs};
    nvmlReturn_t r = nvmlDeviceGetProcessesUtilizationInfo(device, &u);
    if (count) *count = u.processSamplesCount;
    if (lastSeenTimeStamp) *lastSeenTimeStamp = u.lastSeenTimeStamp;
    return r;
}
#endif
