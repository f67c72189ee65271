/* Hand-written guest code for specs/opencl.yaml: what the annotations cannot
 * say about OpenCL, on the application's side.
 *
 *  - clGetExtensionFunctionAddress[ForPlatform] (local): the stub's own
 *    extension entry points, by name.
 *  - wrappers (`wrap: {guest: true}`) that reshape arguments and call the
 *    generated forwarder opencl_fwd_<name>: clCreateProgramWithSource
 *    (strings with lengths), clGetProgramInfo (CL_PROGRAM_BINARIES), the
 *    rectangle and image reads/writes (explicit pitches), image creation
 *    with host_ptr (filled through a staging buffer).
 *  - custom functions with their own wire format: clCreateProgramWithBinary
 *    (an array of binaries of different lengths) and map/unmap (the mapped
 *    bytes live in guest memory: copied there by the map, sent back by the
 *    unmap). The host halves are in host.c; the wire order of each is
 *    written once, above the guest function. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "opencl_wire.h"

/* Handles: in the ICD build (APIGEN_OPENCL_ICD, icd.c) the application's
 * handles are objects and the wire carries their ids: every handle this
 * file puts on or takes off the wire goes through APIGEN_H2ID/APIGEN_ID2H
 * (the identity in the drop-in build). */
#if defined(APIGEN_OPENCL_ICD)
#define APIGEN_HOBJ_FIRST opencl_icd_dispatch
#endif
#include "apigen_hobj.h"

/* ---- generated forwarders the wrappers call ---------------------------------- */
cl_int opencl_fwd_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret);
cl_int opencl_fwd_clGetContextInfo(cl_context context, cl_context_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret);
cl_int opencl_fwd_clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                 const void *arg_value);
cl_program opencl_fwd_clCreateProgramWithSource(cl_context context, cl_uint count,
                                                const char **strings, const size_t *lengths,
                                                cl_int *errcode_ret);
cl_int opencl_fwd_clGetProgramInfo(cl_program program, cl_program_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret);
cl_int opencl_fwd_clEnqueueReadBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                          const size_t *buffer_origin, const size_t *host_origin,
                                          const size_t *region, size_t buffer_row_pitch,
                                          size_t buffer_slice_pitch, size_t host_row_pitch,
                                          size_t host_slice_pitch, void *ptr, cl_uint nwait,
                                          const cl_event *wait, cl_event *event);
cl_int opencl_fwd_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                           const size_t *buffer_origin, const size_t *host_origin,
                                           const size_t *region, size_t buffer_row_pitch,
                                           size_t buffer_slice_pitch, size_t host_row_pitch,
                                           size_t host_slice_pitch, const void *ptr,
                                           cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int opencl_fwd_clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                     const size_t *origin, const size_t *region, size_t row_pitch,
                                     size_t slice_pitch, void *ptr, cl_uint nwait,
                                     const cl_event *wait, cl_event *event);
cl_int opencl_fwd_clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                      const size_t *origin, const size_t *region,
                                      size_t row_pitch, size_t slice_pitch, const void *ptr,
                                      cl_uint nwait, const cl_event *wait, cl_event *event);
cl_mem opencl_fwd_clCreateImage(cl_context context, cl_mem_flags flags,
                                const cl_image_format *image_format,
                                const cl_image_desc *image_desc, void *host_ptr,
                                cl_int *errcode_ret);
cl_mem opencl_fwd_clCreateImageWithProperties(cl_context context,
                                              const cl_mem_properties *properties,
                                              cl_mem_flags flags,
                                              const cl_image_format *image_format,
                                              const cl_image_desc *image_desc, void *host_ptr,
                                              cl_int *errcode_ret);
cl_mem opencl_fwd_clCreateImage2D(cl_context context, cl_mem_flags flags,
                                  const cl_image_format *image_format, size_t image_width,
                                  size_t image_height, size_t image_row_pitch, void *host_ptr,
                                  cl_int *errcode_ret);
cl_mem opencl_fwd_clCreateImage3D(cl_context context, cl_mem_flags flags,
                                  const cl_image_format *image_format, size_t image_width,
                                  size_t image_height, size_t image_depth, size_t image_row_pitch,
                                  size_t image_slice_pitch, void *host_ptr, cl_int *errcode_ret);

cl_int opencl_fwd_clReleaseCommandQueue(cl_command_queue command_queue);
cl_int opencl_fwd_clReleaseMemObject(cl_mem memobj);
cl_int opencl_fwd_clReleaseKernel(cl_kernel kernel);
cl_kernel opencl_fwd_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret);

cl_int opencl_fwd_clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                      size_t offset, size_t size, void *ptr, cl_uint nwait,
                                      const cl_event *wait, cl_event *event);

/* staged.c: non-blocking reads */
uint64_t opencl_staged_token(void);
cl_int opencl_staged_start(cl_command_queue q, uint64_t token, void *ptr, size_t size,
                           cl_uint flags, cl_event ev, cl_event *event);
void opencl_staged_quiesce(cl_command_queue q, cl_uint n, const cl_event *list);
void opencl_staged_event_ref(uint64_t id, int delta);
bool opencl_staged_times(cl_event event, cl_profiling_info name, cl_ulong *v);
bool opencl_staged_timed(cl_event event);
cl_int opencl_fwd_clWaitForEvents(cl_uint num_events, const cl_event *event_list);
cl_int opencl_fwd_clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                                          size_t param_value_size, void *param_value,
                                          size_t *param_value_size_ret);
cl_int opencl_fwd_clRetainEvent(cl_event event);
cl_int opencl_fwd_clReleaseEvent(cl_event event);
#define STAGED 2u /* blocking_read bit 1: staged (spec), ptr carries the token */

cl_mem opencl_fwd_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                 void *host_ptr, cl_int *errcode_ret);
cl_mem opencl_fwd_clCreateBufferWithProperties(cl_context context,
                                               const cl_mem_properties *properties,
                                               cl_mem_flags flags, size_t size, void *host_ptr,
                                               cl_int *errcode_ret);
cl_mem opencl_fwd_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                    cl_buffer_create_type type, const void *info,
                                    cl_int *errcode_ret);
cl_int opencl_fwd_clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret);
cl_int opencl_fwd_clFinish(cl_command_queue command_queue);

/* hostptr.c: objects created with host memory */
void opencl_hostptr_created(cl_mem m, cl_context ctx, cl_mem_flags flags, void *host_ptr,
                            size_t size, bool buffer);
void opencl_hostptr_sub(cl_mem sub, cl_mem parent, size_t origin, size_t size);
void opencl_hostptr_released(uint64_t id, cl_mem m);
void *opencl_hostptr_at(cl_mem m, size_t offset);
void opencl_hostptr_info(cl_mem m, cl_mem_info name, size_t size, void *value);
void opencl_hostptr_finish(cl_command_queue q);

/* checks.c: the facts the guest keeps for its enqueue checks */
void opencl_facts_released(uint64_t id);
void opencl_facts_arg_set(cl_kernel k, cl_uint index);
void opencl_facts_cloned(cl_kernel from, cl_kernel to);

/* ---- local: extension function addresses --------------------------------------- */

/* ocl-icd's loader query, answered by the stub (clinfo prints it). */
typedef cl_uint cl_icdl_info;
static cl_int icd_loader_info(cl_icdl_info name, size_t size, void *value, size_t *size_ret)
{
    const char *s;
    switch (name) {
    case 1: s = "OpenCL 3.0"; break;          /* CL_ICDL_OCL_VERSION */
    case 2: s = "0.1.0"; break;               /* CL_ICDL_VERSION */
    case 3: s = "apigen OpenCL stub"; break;  /* CL_ICDL_NAME */
    case 4: s = "apigen"; break;              /* CL_ICDL_VENDOR */
    default: return CL_INVALID_VALUE;
    }
    size_t n = strlen(s) + 1;
    if (value && size < n)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, s, n);
    if (size_ret)
        *size_ret = n;
    return CL_SUCCESS;
}

static const struct {
    const char *name;
    void *fn;
} ext_fns[] = {
    {"clCreateSubDevicesEXT", (void *)clCreateSubDevicesEXT},
    {"clRetainDeviceEXT", (void *)clRetainDeviceEXT},
    {"clReleaseDeviceEXT", (void *)clReleaseDeviceEXT},
    {"clGetKernelSubGroupInfoKHR", (void *)clGetKernelSubGroupInfoKHR},
    {"clGetGLContextInfoKHR", (void *)clGetGLContextInfoKHR},
    {"clCreateEventFromGLsyncKHR", (void *)clCreateEventFromGLsyncKHR},
    {"clCreateFromEGLImageKHR", (void *)clCreateFromEGLImageKHR},
    {"clEnqueueAcquireEGLObjectsKHR", (void *)clEnqueueAcquireEGLObjectsKHR},
    {"clEnqueueReleaseEGLObjectsKHR", (void *)clEnqueueReleaseEGLObjectsKHR},
    {"clCreateEventFromEGLSyncKHR", (void *)clCreateEventFromEGLSyncKHR},
    {"clGetICDLoaderInfoOCLICD", (void *)icd_loader_info},
#if defined(APIGEN_OPENCL_ICD)
    {"clIcdGetPlatformIDsKHR", (void *)clIcdGetPlatformIDsKHR},
#endif
};

APIGEN_EXPORT void *clGetExtensionFunctionAddress(const char *func_name)
{
    if (!func_name)
        return NULL;
    for (size_t i = 0; i < sizeof ext_fns / sizeof ext_fns[0]; i++)
        if (strcmp(ext_fns[i].name, func_name) == 0)
            return ext_fns[i].fn;
    return NULL;
}

APIGEN_EXPORT void *clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                             const char *func_name)
{
    if (!platform || !func_name || strcmp(func_name, "clGetICDLoaderInfoOCLICD") == 0)
        return NULL;
    return clGetExtensionFunctionAddress(func_name);
}

/* ---- wrappers --------------------------------------------------------------------- */

/* The ICD driver names its own suffix (the loader keeps platforms of
 * different drivers apart by it); the drop-in library passes the server's. */
APIGEN_EXPORT cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                       size_t param_value_size, void *param_value,
                                       size_t *param_value_size_ret)
{
#if defined(APIGEN_OPENCL_ICD)
    if (param_name == CL_PLATFORM_ICD_SUFFIX_KHR && apigen_hobj_known(platform)) {
        static const char suffix[] = "APIGEN";
        if (param_value && param_value_size < sizeof suffix)
            return CL_INVALID_VALUE;
        if (param_value)
            memcpy(param_value, suffix, sizeof suffix);
        if (param_value_size_ret)
            *param_value_size_ret = sizeof suffix;
        return CL_SUCCESS;
    }
#endif
    return opencl_fwd_clGetPlatformInfo(platform, param_name, param_value_size, param_value,
                                        param_value_size_ret);
}

/* CL_CONTEXT_PROPERTIES: CL_CONTEXT_PLATFORM's value is an id on the wire. */
APIGEN_EXPORT cl_int clGetContextInfo(cl_context context, cl_context_info param_name,
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret)
{
    size_t got = 0;
    cl_int err = opencl_fwd_clGetContextInfo(context, param_name, param_value_size, param_value,
                                             &got);
    if (param_value_size_ret)
        *param_value_size_ret = got;
#if defined(APIGEN_OPENCL_ICD)
    if (err == CL_SUCCESS && param_value && param_name == CL_CONTEXT_PROPERTIES) {
        cl_context_properties *p = param_value;
        size_t n = (got < param_value_size ? got : param_value_size) / sizeof *p;
        for (size_t i = 0; i + 1 < n && p[i] != 0; i += 2)
            if (p[i] == CL_CONTEXT_PLATFORM)
                p[i + 1] = (cl_context_properties)APIGEN_ID2H(cl_platform_id,
                                                               (uint64_t)p[i + 1]);
    }
#endif
    return err;
}

/* A cl_mem or cl_sampler argument is a handle object in the ICD build: its id
 * travels, as in the drop-in build (the host wrapper tells handles from bytes).
 * An argument set is noted for the enqueue checks (checks.c). */
APIGEN_EXPORT cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                    const void *arg_value)
{
    cl_int err;
#if defined(APIGEN_OPENCL_ICD)
    void *h;
    if (arg_value && arg_size == sizeof h) {
        memcpy(&h, arg_value, sizeof h);
        if (apigen_hobj_known(h)) {
            uint64_t id = APIGEN_H2ID(h);
            err = opencl_fwd_clSetKernelArg(kernel, arg_index, arg_size, &id);
            if (err == CL_SUCCESS)
                opencl_facts_arg_set(kernel, arg_index);
            return err;
        }
    }
#endif
    err = opencl_fwd_clSetKernelArg(kernel, arg_index, arg_size, arg_value);
    if (err == CL_SUCCESS)
        opencl_facts_arg_set(kernel, arg_index);
    return err;
}

/* Releases of objects the enqueue checks know: their facts are asked again
 * at the next use (the object may be gone). The id is taken first: in the
 * ICD build the last release frees the handle object. */
APIGEN_EXPORT cl_int clReleaseCommandQueue(cl_command_queue command_queue)
{
    uint64_t id = APIGEN_H2ID(command_queue);
    cl_int err = opencl_fwd_clReleaseCommandQueue(command_queue);
    if (err == CL_SUCCESS)
        opencl_facts_released(id);
    return err;
}

APIGEN_EXPORT cl_int clReleaseMemObject(cl_mem memobj)
{
    uint64_t id = APIGEN_H2ID(memobj);
    cl_int err = opencl_fwd_clReleaseMemObject(memobj);
    if (err == CL_SUCCESS) {
        opencl_facts_released(id);
        opencl_hostptr_released(id, memobj);
    }
    return err;
}

/* Buffers with host memory: recorded as created (hostptr.c). */
APIGEN_EXPORT cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                    void *host_ptr, cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = opencl_fwd_clCreateBuffer(context, flags, size, host_ptr, &err);
    if (m && err == CL_SUCCESS)
        opencl_hostptr_created(m, context, flags, host_ptr, size, true);
    if (errcode_ret)
        *errcode_ret = err;
    return m;
}

APIGEN_EXPORT cl_mem clCreateBufferWithProperties(cl_context context,
                                                  const cl_mem_properties *properties,
                                                  cl_mem_flags flags, size_t size,
                                                  void *host_ptr, cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = opencl_fwd_clCreateBufferWithProperties(context, properties, flags, size,
                                                       host_ptr, &err);
    if (m && err == CL_SUCCESS)
        opencl_hostptr_created(m, context, flags, host_ptr, size, true);
    if (errcode_ret)
        *errcode_ret = err;
    return m;
}

APIGEN_EXPORT cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                       cl_buffer_create_type type, const void *info,
                                       cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = opencl_fwd_clCreateSubBuffer(buffer, flags, type, info, &err);
    if (m && err == CL_SUCCESS && type == CL_BUFFER_CREATE_TYPE_REGION && info) {
        const cl_buffer_region *r = info;
        opencl_hostptr_sub(m, buffer, r->origin, r->size);
    }
    if (errcode_ret)
        *errcode_ret = err;
    return m;
}

/* CL_MEM_FLAGS and CL_MEM_HOST_PTR as the application created the object. */
APIGEN_EXPORT cl_int clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                                        size_t param_value_size, void *param_value,
                                        size_t *param_value_size_ret)
{
    cl_int err = opencl_fwd_clGetMemObjectInfo(memobj, param_name, param_value_size,
                                               param_value, param_value_size_ret);
    if (err == CL_SUCCESS)
        opencl_hostptr_info(memobj, param_name, param_value_size, param_value);
    return err;
}

/* USE_HOST_PTR buffers of the queue's context reach their host memory. */
APIGEN_EXPORT cl_int clFinish(cl_command_queue command_queue)
{
    cl_int err = opencl_fwd_clFinish(command_queue);
    opencl_staged_quiesce(command_queue, 0, NULL); /* staged.c: already so, but see there */
    if (err == CL_SUCCESS)
        opencl_hostptr_finish(command_queue);
    return err;
}

APIGEN_EXPORT cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    cl_int err = opencl_fwd_clWaitForEvents(num_events, event_list);
    opencl_staged_quiesce(NULL, num_events, event_list);
    return err;
}

/* A non-blocking read's event: its read's own times (staged.c), once the
 * server says the event completed and the bytes landed. */
APIGEN_EXPORT cl_int clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                                             size_t param_value_size, void *param_value,
                                             size_t *param_value_size_ret)
{
    cl_ulong v;
    if (!opencl_staged_timed(event))
        return opencl_fwd_clGetEventProfilingInfo(event, param_name, param_value_size,
                                                  param_value, param_value_size_ret);
    if (!opencl_staged_times(event, param_name, &v)) {
        /* not landed yet, or no times: the server's answer (not complete,
         * not profiled, an invalid name or size) unless it completed */
        cl_int err = opencl_fwd_clGetEventProfilingInfo(event, param_name, param_value_size,
                                                        param_value, param_value_size_ret);
        if (err != CL_SUCCESS)
            return err;
        opencl_staged_quiesce(NULL, 1, &event);
        if (!opencl_staged_times(event, param_name, &v))
            return err;
    }
    if (param_value && param_value_size < sizeof v)
        return CL_INVALID_VALUE;
    if (param_value)
        memcpy(param_value, &v, sizeof v);
    if (param_value_size_ret)
        *param_value_size_ret = sizeof v;
    return CL_SUCCESS;
}

APIGEN_EXPORT cl_int clRetainEvent(cl_event event)
{
    cl_int err = opencl_fwd_clRetainEvent(event);
    if (err == CL_SUCCESS)
        opencl_staged_event_ref(APIGEN_H2ID(event), 1);
    return err;
}

/* The id is taken first: in the ICD build the last release frees the
 * handle object. */
APIGEN_EXPORT cl_int clReleaseEvent(cl_event event)
{
    uint64_t id = APIGEN_H2ID(event);
    cl_int err = opencl_fwd_clReleaseEvent(event);
    if (err == CL_SUCCESS)
        opencl_staged_event_ref(id, -1);
    return err;
}

APIGEN_EXPORT cl_int clReleaseKernel(cl_kernel kernel)
{
    uint64_t id = APIGEN_H2ID(kernel);
    cl_int err = opencl_fwd_clReleaseKernel(kernel);
    if (err == CL_SUCCESS)
        opencl_facts_released(id);
    return err;
}

/* A clone has the arguments its source had set. */
APIGEN_EXPORT cl_kernel clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_kernel k = opencl_fwd_clCloneKernel(source_kernel, &err);
    if (k && err == CL_SUCCESS)
        opencl_facts_cloned(source_kernel, k);
    if (errcode_ret)
        *errcode_ret = err;
    return k;
}

APIGEN_EXPORT cl_program clCreateProgramWithSource(cl_context context, cl_uint count,
                                                   const char **strings, const size_t *lengths,
                                                   cl_int *errcode_ret)
{
    if (!lengths || !strings || count == 0)
        return opencl_fwd_clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
    char **copies = calloc(count, sizeof *copies);
    cl_program p = NULL;
    cl_uint i;
    if (!copies)
        goto oom;
    for (i = 0; i < count; i++) {
        if (!strings[i])
            continue; /* the implementation reports CL_INVALID_VALUE */
        size_t n = lengths[i] ? lengths[i] : strlen(strings[i]);
        copies[i] = malloc(n + 1);
        if (!copies[i])
            goto oom;
        memcpy(copies[i], strings[i], n);
        copies[i][n] = 0;
    }
    p = opencl_fwd_clCreateProgramWithSource(context, count, (const char **)copies, NULL,
                                             errcode_ret);
    for (i = 0; i < count; i++)
        free(copies[i]);
    free(copies);
    return p;
oom:
    if (copies)
        for (i = 0; i < count; i++)
            free(copies[i]);
    free(copies);
    if (errcode_ret)
        *errcode_ret = CL_OUT_OF_HOST_MEMORY;
    return NULL;
}

/* CL_PROGRAM_BINARIES: param_value is an array of pointers to the caller's
 * buffers. Sent instead: one flat buffer of the sum of the binary sizes; the
 * host wrapper fills it; the pieces are copied to the caller's pointers. */
APIGEN_EXPORT cl_int clGetProgramInfo(cl_program program, cl_program_info param_name,
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret)
{
    if (param_name != CL_PROGRAM_BINARIES || !param_value)
        return opencl_fwd_clGetProgramInfo(program, param_name, param_value_size, param_value,
                                           param_value_size_ret);
    size_t nbytes = 0;
    cl_int err = opencl_fwd_clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, 0, NULL, &nbytes);
    if (err != CL_SUCCESS)
        return err;
    size_t n = nbytes / sizeof(size_t);
    if (param_value_size < n * sizeof(unsigned char *))
        return CL_INVALID_VALUE;
    size_t *sizes = calloc(n ? n : 1, sizeof *sizes);
    if (!sizes)
        return CL_OUT_OF_HOST_MEMORY;
    err = opencl_fwd_clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes,
                                      NULL);
    size_t total = 0;
    for (size_t i = 0; err == CL_SUCCESS && i < n; i++)
        total += sizes[i];
    unsigned char *flat = err == CL_SUCCESS ? malloc(total ? total : 1) : NULL;
    if (err == CL_SUCCESS && !flat)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = opencl_fwd_clGetProgramInfo(program, CL_PROGRAM_BINARIES, total, flat, NULL);
    if (err == CL_SUCCESS) {
        unsigned char **dst = param_value;
        size_t off = 0;
        for (size_t i = 0; i < n; i++) {
            if (dst[i])
                memcpy(dst[i], flat + off, sizes[i]);
            off += sizes[i];
        }
        if (param_value_size_ret)
            *param_value_size_ret = n * sizeof(unsigned char *);
    }
    free(flat);
    free(sizes);
    return err;
}

/* Rectangles: ptr is rebased at host_origin and the host pitches made
 * explicit, so the spec's byte count is exactly the bytes the command
 * touches. Anything malformed goes through unchanged for the
 * implementation's own error. */
static bool rect_norm(const size_t *host_origin, const size_t *region, size_t *row, size_t *slice,
                      size_t *offset)
{
    if (!host_origin || !region || !region[0] || !region[1] || !region[2])
        return false;
    if (!*row)
        *row = region[0];
    if (!*slice)
        *slice = *row * region[1];
    *offset = host_origin[2] * *slice + host_origin[1] * *row + host_origin[0];
    return true;
}

static const size_t zero3[3] = {0, 0, 0};

/* Non-blocking reads are staged (staged.c): they return at once, and the
 * bytes land before the event completes. A read without memory or bytes
 * goes as before (blocking), for the implementation's own error. */
APIGEN_EXPORT cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                         size_t offset, size_t size, void *ptr, cl_uint nwait,
                                         const cl_event *wait, cl_event *event)
{
    if (blocking || !ptr || !size) {
        cl_int err = opencl_fwd_clEnqueueReadBuffer(q, buffer, blocking ? CL_TRUE : CL_FALSE,
                                                    offset, size, ptr, nwait, wait, event);
        char *hp = err == CL_SUCCESS && ptr ? opencl_hostptr_at(buffer, offset) : NULL;
        if (hp && hp != ptr) /* USE_HOST_PTR: its memory holds what was read too */
            memmove(hp, ptr, size);
        return err;
    }
    uint64_t token = opencl_staged_token();
    cl_event ev = NULL;
    cl_int err = opencl_fwd_clEnqueueReadBuffer(q, buffer, STAGED, offset, size,
                                                (void *)(uintptr_t)token, nwait, wait, &ev);
    if (err != CL_SUCCESS)
        return err;
    return opencl_staged_start(q, token, ptr, size, 0, ev, event);
}

APIGEN_EXPORT cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                             const size_t *buffer_origin,
                                             const size_t *host_origin, const size_t *region,
                                             size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                             size_t host_row_pitch, size_t host_slice_pitch,
                                             void *ptr, cl_uint nwait, const cl_event *wait,
                                             cl_event *event)
{
    size_t off;
    if (ptr && rect_norm(host_origin, region, &host_row_pitch, &host_slice_pitch, &off)) {
        if (blocking)
            return opencl_fwd_clEnqueueReadBufferRect(
                q, buffer, CL_TRUE, buffer_origin, zero3, region, buffer_row_pitch,
                buffer_slice_pitch, host_row_pitch, host_slice_pitch, (char *)ptr + off, nwait,
                wait, event);
        uint64_t token = opencl_staged_token();
        cl_event ev = NULL;
        cl_int err = opencl_fwd_clEnqueueReadBufferRect(
            q, buffer, STAGED, buffer_origin, zero3, region, buffer_row_pitch, buffer_slice_pitch,
            host_row_pitch, host_slice_pitch, (void *)(uintptr_t)token, nwait, wait, &ev);
        if (err != CL_SUCCESS)
            return err;
        size_t bytes = (region[2] - 1) * host_slice_pitch + (region[1] - 1) * host_row_pitch +
                       region[0];
        return opencl_staged_start(q, token, (char *)ptr + off, bytes, APIGEN_OPENCL_STAGED_ROWS,
                                   ev, event);
    }
    return opencl_fwd_clEnqueueReadBufferRect(q, buffer, blocking ? CL_TRUE : CL_FALSE,
                                              buffer_origin, host_origin,
                                              region, buffer_row_pitch, buffer_slice_pitch,
                                              host_row_pitch, host_slice_pitch, ptr, nwait, wait,
                                              event);
}

APIGEN_EXPORT cl_int clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                              const size_t *buffer_origin,
                                              const size_t *host_origin, const size_t *region,
                                              size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                              size_t host_row_pitch, size_t host_slice_pitch,
                                              const void *ptr, cl_uint nwait,
                                              const cl_event *wait, cl_event *event)
{
    size_t off;
    if (ptr && rect_norm(host_origin, region, &host_row_pitch, &host_slice_pitch, &off))
        return opencl_fwd_clEnqueueWriteBufferRect(
            q, buffer, blocking, buffer_origin, zero3, region, buffer_row_pitch,
            buffer_slice_pitch, host_row_pitch, host_slice_pitch, (const char *)ptr + off, nwait,
            wait, event);
    return opencl_fwd_clEnqueueWriteBufferRect(q, buffer, blocking, buffer_origin, host_origin,
                                               region, buffer_row_pitch, buffer_slice_pitch,
                                               host_row_pitch, host_slice_pitch, ptr, nwait, wait,
                                               event);
}

/* Images: explicit row and slice pitches from CL_IMAGE_ELEMENT_SIZE; the spec
 * sends slice_pitch * region[2] bytes and the host wrapper gives the
 * implementation slice_pitch 0 again for 1D and 2D images. 1D image arrays
 * (whose slices run along region[1]) get row pitch 0 and an explicit slice
 * pitch, and the spec sends slice_pitch * region[1] bytes. */
static bool image_pitches(cl_mem image, const size_t *region, size_t *row, size_t *slice)
{
    size_t elem = 0;
    cl_mem_object_type type = 0;
    if (!region || !region[0] || !region[1] || !region[2] ||
        clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) != CL_SUCCESS ||
        clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        return false;
    if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
        if (region[2] != 1)
            return false;
        if (!*slice) /* each 1D image of the array: the row, or what the row pitch says */
            *slice = *row ? *row : elem * region[0];
        *row = 0; /* the spec's byte count: slice_pitch * region[1] */
        return true;
    }
    if ((type == CL_MEM_OBJECT_IMAGE1D || type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
         type == CL_MEM_OBJECT_IMAGE2D) && *slice != 0)
        return false; /* invalid: the implementation says so */
    if (!*row)
        *row = elem * region[0];
    if (!*slice)
        *slice = *row * region[1];
    return true;
}

APIGEN_EXPORT cl_int clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                        const size_t *origin, const size_t *region,
                                        size_t row_pitch, size_t slice_pitch, void *ptr,
                                        cl_uint nwait, const cl_event *wait, cl_event *event)
{
    if (ptr && !image_pitches(image, region, &row_pitch, &slice_pitch))
        ptr = NULL; /* only the implementation's error can come back */
    if (blocking || !ptr)
        return opencl_fwd_clEnqueueReadImage(q, image, blocking ? CL_TRUE : CL_FALSE, origin,
                                             region, row_pitch, slice_pitch, ptr, nwait, wait,
                                             event);
    uint64_t token = opencl_staged_token();
    cl_event ev = NULL;
    cl_int err = opencl_fwd_clEnqueueReadImage(q, image, STAGED, origin, region, row_pitch,
                                               slice_pitch, (void *)(uintptr_t)token, nwait, wait,
                                               &ev);
    if (err != CL_SUCCESS)
        return err;
    return opencl_staged_start(q, token, ptr,
                               slice_pitch * region[2] * (row_pitch == 0 ? region[1] : 1),
                               APIGEN_OPENCL_STAGED_ROWS, ev, event);
}

APIGEN_EXPORT cl_int clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                         const size_t *origin, const size_t *region,
                                         size_t row_pitch, size_t slice_pitch, const void *ptr,
                                         cl_uint nwait, const cl_event *wait, cl_event *event)
{
    if (ptr && !image_pitches(image, region, &row_pitch, &slice_pitch))
        ptr = NULL;
    return opencl_fwd_clEnqueueWriteImage(q, image, blocking, origin, region, row_pitch,
                                          slice_pitch, ptr, nwait, wait, event);
}

/* Images created with host_ptr (CL_MEM_COPY_HOST_PTR / CL_MEM_USE_HOST_PTR):
 * the spec cannot size host_ptr (that takes the format's element size), so
 * the wrappers create the image without those flags (and pitches) and fill
 * it here: CL_IMAGE_ELEMENT_SIZE of the new image sizes the rows, which are
 * packed into a CL_MEM_COPY_HOST_PTR staging buffer and copied with
 * clEnqueueCopyBufferToImage on a queue of the context's first device,
 * waited for before the image is returned. USE_HOST_PTR is a copy, as for
 * buffers: later changes of host_ptr do not reach the image nor the
 * image's host_ptr. Pitches are checked as the OpenCL spec says (bad_pitch:
 * the function's error for them). */
#define HOST_PTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)

typedef struct {
    cl_mem_object_type type;
    size_t w, h, d, n; /* width, height, depth, array size */
    size_t row, slice; /* the caller's pitches (0: packed) */
} img_shape;

/* The image's bytes at host_ptr, copied in; CL_SUCCESS or an error. */
static cl_int fill_image(cl_context ctx, cl_mem img, const img_shape *sh, const void *host_ptr,
                         cl_int bad_pitch)
{
    size_t elem = 0, nrows = 1, nslices = 1, region[3] = {sh->w, 1, 1};
    cl_int err = clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL);
    if (err != CL_SUCCESS)
        return err;
    switch (sh->type) {
    case CL_MEM_OBJECT_IMAGE1D: break;
    case CL_MEM_OBJECT_IMAGE2D: nrows = region[1] = sh->h; break;
    case CL_MEM_OBJECT_IMAGE3D: nrows = region[1] = sh->h; nslices = region[2] = sh->d; break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: nslices = region[1] = sh->n; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: nrows = region[1] = sh->h; nslices = region[2] = sh->n; break;
    default: return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    size_t rowbytes, packed, row = sh->row, slice = sh->slice;
    if (!elem || __builtin_mul_overflow(elem, sh->w, &rowbytes))
        return bad_pitch;
    if (!row)
        row = rowbytes;
    if (row < rowbytes || row % elem)
        return bad_pitch;
    bool slices = sh->type == CL_MEM_OBJECT_IMAGE3D || sh->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                  sh->type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
    if (slices) {
        size_t least;
        if (__builtin_mul_overflow(row, nrows, &least))
            return bad_pitch;
        if (!slice)
            slice = least;
        if (slice < least || slice % row)
            return bad_pitch;
    }
    if (__builtin_mul_overflow(rowbytes, nrows, &packed) ||
        __builtin_mul_overflow(packed, nslices, &packed))
        return CL_OUT_OF_HOST_MEMORY;
    char *pk = malloc(packed ? packed : 1);
    if (!pk)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t z = 0; z < nslices; z++)
        for (size_t y = 0; y < nrows; y++)
            memcpy(pk + (z * nrows + y) * rowbytes,
                   (const char *)host_ptr + z * (slices ? slice : 0) + y * row, rowbytes);
    size_t n = 0;
    cl_device_id *devs = NULL;
    err = clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, NULL, &n);
    if (err == CL_SUCCESS && (n < sizeof *devs || !(devs = malloc(n))))
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = clGetContextInfo(ctx, CL_CONTEXT_DEVICES, n, devs, NULL);
    cl_command_queue q = NULL;
    cl_mem buf = NULL;
    if (err == CL_SUCCESS)
        q = clCreateCommandQueue(ctx, devs[0], 0, &err);
    if (err == CL_SUCCESS)
        buf = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, packed, pk, &err);
    if (err == CL_SUCCESS) {
        size_t origin[3] = {0, 0, 0};
        err = clEnqueueCopyBufferToImage(q, buf, img, 0, origin, region, 0, NULL, NULL);
        cl_int fin = clFinish(q); /* also reports the copy's own error */
        if (err == CL_SUCCESS)
            err = fin;
    }
    if (buf)
        clReleaseMemObject(buf);
    if (q)
        clReleaseCommandQueue(q);
    free(devs);
    free(pk);
    return err;
}

/* Whether the wrapper fills the image itself (else the call goes as it is);
 * *err: an error to return at once (checks the implementation cannot make
 * once the flags are gone). */
static bool own_host_ptr(cl_mem_flags flags, const void *host_ptr, cl_int *err)
{
    *err = CL_SUCCESS;
    if (host_ptr && !(flags & HOST_PTR_FLAGS))
        *err = CL_INVALID_HOST_PTR;
    else if ((flags & CL_MEM_USE_HOST_PTR) &&
             (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)))
        *err = CL_INVALID_VALUE;
    return host_ptr && *err == CL_SUCCESS;
}

static cl_mem filled(cl_context ctx, cl_mem img, cl_int err, const img_shape *sh,
                     const void *host_ptr, cl_int bad_pitch, cl_int *errcode_ret)
{
    if (img && err == CL_SUCCESS) {
        err = fill_image(ctx, img, sh, host_ptr, bad_pitch);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(img);
            img = NULL;
        }
    }
    if (errcode_ret)
        *errcode_ret = err;
    return err == CL_SUCCESS ? img : NULL;
}

/* cl_image_desc travels as bytes: its mem_object (the buffer of a 1D image
 * buffer or of a 2D image, the image of a 2D image from an image) goes as
 * the object's id, as a handle argument would. In the drop-in build a
 * handle is its id already. */
static const cl_image_desc *desc_ids(const cl_image_desc *d, cl_image_desc *copy)
{
#if defined(APIGEN_OPENCL_ICD)
    if (d && d->mem_object) {
        *copy = *d;
        copy->mem_object = (cl_mem)(uintptr_t)APIGEN_H2ID(d->mem_object);
        return copy;
    }
#else
    (void)copy;
#endif
    return d;
}

static cl_mem create_image(cl_context ctx, bool with_props, const cl_mem_properties *props,
                           cl_mem_flags flags, const cl_image_format *fmt,
                           const cl_image_desc *app_desc, void *host_ptr, cl_int *errcode_ret)
{
    cl_int err;
    cl_image_desc wire;
    const cl_image_desc *desc = desc_ids(app_desc, &wire);
    if (!own_host_ptr(flags, host_ptr, &err) || !desc ||
        desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        if (err != CL_SUCCESS) {
            if (errcode_ret)
                *errcode_ret = err;
            return NULL;
        }
        return with_props ? opencl_fwd_clCreateImageWithProperties(ctx, props, flags, fmt, desc,
                                                                   host_ptr, errcode_ret)
                          : opencl_fwd_clCreateImage(ctx, flags, fmt, desc, host_ptr,
                                                     errcode_ret);
    }
    cl_image_desc d = *desc;
    d.image_row_pitch = d.image_slice_pitch = 0;
    flags &= ~(cl_mem_flags)HOST_PTR_FLAGS;
    cl_mem img = with_props
                     ? opencl_fwd_clCreateImageWithProperties(ctx, props, flags, fmt, &d, NULL, &err)
                     : opencl_fwd_clCreateImage(ctx, flags, fmt, &d, NULL, &err);
    img_shape sh = {desc->image_type,     desc->image_width,     desc->image_height,
                    desc->image_depth,    desc->image_array_size, desc->image_row_pitch,
                    desc->image_slice_pitch};
    return filled(ctx, img, err, &sh, host_ptr, CL_INVALID_IMAGE_DESCRIPTOR, errcode_ret);
}

/* An image with host memory: recorded as created (hostptr.c). */
static cl_mem noted(cl_mem img, cl_context ctx, cl_mem_flags flags, void *host_ptr,
                    cl_int *errcode_ret, cl_int err)
{
    if (img && err == CL_SUCCESS)
        opencl_hostptr_created(img, ctx, flags, host_ptr, 0, false);
    if (errcode_ret)
        *errcode_ret = err;
    return img;
}

APIGEN_EXPORT cl_mem clCreateImage(cl_context context, cl_mem_flags flags,
                                   const cl_image_format *image_format,
                                   const cl_image_desc *image_desc, void *host_ptr,
                                   cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = create_image(context, false, NULL, flags, image_format, image_desc, host_ptr,
                            &err);
    return noted(m, context, flags, host_ptr, errcode_ret, err);
}

APIGEN_EXPORT cl_mem clCreateImageWithProperties(cl_context context,
                                                 const cl_mem_properties *properties,
                                                 cl_mem_flags flags,
                                                 const cl_image_format *image_format,
                                                 const cl_image_desc *image_desc, void *host_ptr,
                                                 cl_int *errcode_ret)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = create_image(context, true, properties, flags, image_format, image_desc, host_ptr,
                            &err);
    return noted(m, context, flags, host_ptr, errcode_ret, err);
}

APIGEN_EXPORT cl_mem clCreateImage2D(cl_context context, cl_mem_flags flags,
                                     const cl_image_format *image_format, size_t image_width,
                                     size_t image_height, size_t image_row_pitch, void *host_ptr,
                                     cl_int *errcode_ret)
{
    cl_int err;
    if (!own_host_ptr(flags, host_ptr, &err)) {
        if (err != CL_SUCCESS) {
            if (errcode_ret)
                *errcode_ret = err;
            return NULL;
        }
        return opencl_fwd_clCreateImage2D(context, flags, image_format, image_width, image_height,
                                          image_row_pitch, host_ptr, errcode_ret);
    }
    cl_mem img = opencl_fwd_clCreateImage2D(context, flags & ~(cl_mem_flags)HOST_PTR_FLAGS,
                                            image_format, image_width, image_height, 0, NULL,
                                            &err);
    img_shape sh = {CL_MEM_OBJECT_IMAGE2D, image_width, image_height, 1, 0, image_row_pitch, 0};
    img = filled(context, img, err, &sh, host_ptr, CL_INVALID_IMAGE_SIZE, &err);
    return noted(img, context, flags, host_ptr, errcode_ret, err);
}

APIGEN_EXPORT cl_mem clCreateImage3D(cl_context context, cl_mem_flags flags,
                                     const cl_image_format *image_format, size_t image_width,
                                     size_t image_height, size_t image_depth,
                                     size_t image_row_pitch, size_t image_slice_pitch,
                                     void *host_ptr, cl_int *errcode_ret)
{
    cl_int err;
    if (!own_host_ptr(flags, host_ptr, &err)) {
        if (err != CL_SUCCESS) {
            if (errcode_ret)
                *errcode_ret = err;
            return NULL;
        }
        return opencl_fwd_clCreateImage3D(context, flags, image_format, image_width, image_height,
                                          image_depth, image_row_pitch, image_slice_pitch,
                                          host_ptr, errcode_ret);
    }
    cl_mem img = opencl_fwd_clCreateImage3D(context, flags & ~(cl_mem_flags)HOST_PTR_FLAGS,
                                            image_format, image_width, image_height, image_depth,
                                            0, 0, NULL, &err);
    img_shape sh = {CL_MEM_OBJECT_IMAGE3D, image_width, image_height, image_depth, 0,
                    image_row_pitch, image_slice_pitch};
    img = filled(context, img, err, &sh, host_ptr, CL_INVALID_IMAGE_SIZE, &err);
    return noted(img, context, flags, host_ptr, errcode_ret, err);
}

/* ---- custom: shared helpers ------------------------------------------------------- */

static bool put_wait_list(apigen_wr *w, cl_uint n, const cl_event *list)
{
    if (!apigen_put_u8(w, list != NULL))
        return false;
    if (!list)
        return true;
    if (!apigen_put_u64(w, n))
        return false;
    for (cl_uint i = 0; i < n; i++)
        if (!apigen_put_u64(w, APIGEN_H2ID(list[i])))
            return false;
    return true;
}

/* ---- clCreateProgramWithBinary ----------------------------------------------------
 * request: u64 context, u32 num_devices, device_list (u8 present, u64 n, ids),
 *          lengths (opt bytes, num_devices * 8), u8 binaries present, then per
 *          device opt bytes of lengths[i], u8 binary_status present,
 *          u8 errcode_ret present
 * reply:   u64 program id, u32 errcode, binary_status bytes (when present) */
cl_program opencl_guest_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                  const cl_device_id *device_list,
                                                  const size_t *lengths,
                                                  const unsigned char **binaries,
                                                  cl_int *binary_status, cl_int *errcode_ret)
{
    apigen_call c;
    apigen_status st = APIGEN_LOST;
    cl_program ret = NULL;
    cl_int err = CL_DEVICE_NOT_AVAILABLE;
    if (!apigen_call_begin_on(&opencl_api, &c, OPENCL_CALL_clCreateProgramWithBinary,
                              apigen_route_id(&opencl_api, APIGEN_H2ID(context))))
        goto out;
    bool ok = apigen_put_u64(c.wr, APIGEN_H2ID(context)) &&
              apigen_put_u32(c.wr, num_devices) && put_wait_list(c.wr, num_devices,
                                                                 (const cl_event *)device_list) &&
              apigen_put_opt_bytes(c.wr, lengths, lengths ? (uint64_t)num_devices * 8u : 0) &&
              apigen_put_u8(c.wr, binaries != NULL);
    for (cl_uint i = 0; ok && binaries && i < num_devices; i++)
        ok = apigen_put_opt_bytes(c.wr, binaries[i], lengths && binaries[i] ? lengths[i] : 0);
    ok = ok && apigen_put_u8(c.wr, binary_status != NULL) &&
         apigen_put_u8(c.wr, errcode_ret != NULL);
    if (!ok) {
        apigen_call_end(&c);
        st = APIGEN_NO_MEMORY;
        goto out;
    }
    st = apigen_call_sync(&c);
    if (st == APIGEN_OK) {
        uint64_t id;
        uint32_t e;
        if (!apigen_get_u64(&c.rd, &id) || !apigen_get_u32(&c.rd, &e) ||
            (binary_status &&
             !apigen_get_into(&c.rd, binary_status, (uint64_t)num_devices * sizeof(cl_int),
                              NULL))) {
            apigen_call_bad_reply(&c);
            st = APIGEN_LOST;
        } else {
            ret = APIGEN_ID2H(cl_program, id);
            APIGEN_HREF(ret, 1, true);
            err = (cl_int)e;
        }
    }
    apigen_call_end(&c);
out:
    if (st != APIGEN_OK)
        err = (cl_int)opencl_api.status_error[st];
    if (errcode_ret)
        *errcode_ret = err;
    return ret;
}

/* ---- map / unmap -------------------------------------------------------------------
 * The guest keeps one record per live mapping: the pointer it handed out,
 * the server's mapping id, the size and whether the bytes go back at unmap. */
typedef struct mapping {
    struct mapping *next;
    void *ptr;
    cl_mem mem;
    uint64_t id;
    uint64_t size;
    bool write_back;
    bool borrowed; /* ptr is the application's (USE_HOST_PTR): not freed */
} mapping;

static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;
static mapping *maps;

/* map reply: u32 errcode, u64 mapping id, u64 size, u64 row pitch,
 * u64 slice pitch, u64 event id (0: none), bytes (size, or 0 when the map
 * was CL_MAP_WRITE_INVALIDATE_REGION) */
static void *finish_map_sized(apigen_call *c, cl_mem mem, cl_map_flags flags,
                              size_t *row_pitch, size_t *slice_pitch, cl_event *event,
                              cl_int *errcode_ret, void *dest, size_t *mapped)
{
    apigen_status st = apigen_call_sync(c);
    cl_int err;
    void *ptr = NULL;
    if (st == APIGEN_OK) {
        uint32_t e;
        uint64_t id, size, rp, sp, ev;
        const void *bytes;
        uint64_t nbytes;
        if (!apigen_get_u32(&c->rd, &e) || !apigen_get_u64(&c->rd, &id) ||
            !apigen_get_u64(&c->rd, &size) || !apigen_get_u64(&c->rd, &rp) ||
            !apigen_get_u64(&c->rd, &sp) || !apigen_get_u64(&c->rd, &ev) ||
            !apigen_get_bytes(&c->rd, &bytes, &nbytes, size)) {
            apigen_call_bad_reply(c);
            st = APIGEN_LOST;
        } else {
            err = (cl_int)e;
            if (err == CL_SUCCESS) {
                mapping *m = calloc(1, sizeof *m);
                ptr = dest ? dest : aligned_alloc(64, (size + 63) / 64 * 64 + 64);
                if (!m || !ptr) {
                    free(m);
                    if (!dest)
                        free(ptr);
                    ptr = NULL;
                    err = CL_OUT_OF_HOST_MEMORY; /* the server's mapping stays until exit */
                } else {
                    if (nbytes)
                        memmove(ptr, bytes, nbytes);
                    if (mapped)
                        *mapped = size;
                    *m = (mapping){NULL, ptr, mem, id, size,
                                   (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0,
                                   dest != NULL};
                    pthread_mutex_lock(&maps_mu);
                    m->next = maps;
                    maps = m;
                    pthread_mutex_unlock(&maps_mu);
                    if (row_pitch)
                        *row_pitch = rp;
                    if (slice_pitch)
                        *slice_pitch = sp;
                }
            }
            if (event) {
                *event = err == CL_SUCCESS ? APIGEN_ID2H(cl_event, ev) : NULL;
                APIGEN_HREF(*event, 1, true);
            }
        }
    }
    apigen_call_end(c);
    if (st != APIGEN_OK)
        err = (cl_int)opencl_api.status_error[st];
    if (errcode_ret)
        *errcode_ret = err;
    return ptr;
}

static void *finish_map(apigen_call *c, cl_mem mem, cl_map_flags flags, size_t *row_pitch,
                        size_t *slice_pitch, cl_event *event, cl_int *errcode_ret, void *dest)
{
    return finish_map_sized(c, mem, flags, row_pitch, slice_pitch, event, errcode_ret, dest,
                            NULL);
}

/* map buffer request: u64 queue, u64 buffer, u32 blocking, u64 flags, u64 offset,
 * u64 size, wait list (u8 present, u64 n, ids), u8 event wanted; with
 * blocking bit 1 (a non-blocking map, returned at once) u64 token: the
 * bytes are staged (staged.c) and land before the map's event completes, or
 * 0 for CL_MAP_WRITE_INVALIDATE_REGION (no bytes) */
void *opencl_guest_clEnqueueMapBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_map,
                                      cl_map_flags map_flags, size_t offset, size_t size,
                                      cl_uint nwait, const cl_event *wait, cl_event *event,
                                      cl_int *errcode_ret)
{
    apigen_call c;
    if (!apigen_call_begin_on(&opencl_api, &c, OPENCL_CALL_clEnqueueMapBuffer,
                              apigen_route_id(&opencl_api, APIGEN_H2ID(q)))) {
        if (errcode_ret)
            *errcode_ret = (cl_int)opencl_api.status_error[APIGEN_LOST];
        return NULL;
    }
    bool staged = !blocking_map && size;
    uint64_t token = staged && !(map_flags & CL_MAP_WRITE_INVALIDATE_REGION)
                         ? opencl_staged_token()
                         : 0;
    if (!apigen_put_u64(c.wr, APIGEN_H2ID(q)) || !apigen_put_u64(c.wr, APIGEN_H2ID(buffer)) ||
        !apigen_put_u32(c.wr, staged ? STAGED : CL_TRUE) || !apigen_put_u64(c.wr, map_flags) ||
        !apigen_put_u64(c.wr, offset) || !apigen_put_u64(c.wr, size) ||
        !put_wait_list(c.wr, nwait, wait) || !apigen_put_u8(c.wr, event != NULL) ||
        (staged && !apigen_put_u64(c.wr, token))) {
        apigen_call_end(&c);
        if (errcode_ret)
            *errcode_ret = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    void *p = finish_map(&c, buffer, map_flags, NULL, NULL, event, &err,
                         opencl_hostptr_at(buffer, offset));
    if (p && token)
        opencl_staged_start(q, token, p, size, 0, NULL, event);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

/* map image request: u64 queue, u64 image, u32 blocking, u64 flags,
 * origin (opt bytes 24), region (opt bytes 24), u8 row pitch wanted,
 * u8 slice pitch wanted, wait list, u8 event wanted; with blocking bit 1 (a
 * non-blocking map, returned at once) u64 token, as for buffers: the map's
 * pitches come back at once, its bytes are staged (host.c) */
void *opencl_guest_clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking_map,
                                     cl_map_flags map_flags, const size_t *origin,
                                     const size_t *region, size_t *image_row_pitch,
                                     size_t *image_slice_pitch, cl_uint nwait,
                                     const cl_event *wait, cl_event *event, cl_int *errcode_ret)
{
    apigen_call c;
    if (!apigen_call_begin_on(&opencl_api, &c, OPENCL_CALL_clEnqueueMapImage,
                              apigen_route_id(&opencl_api, APIGEN_H2ID(q)))) {
        if (errcode_ret)
            *errcode_ret = (cl_int)opencl_api.status_error[APIGEN_LOST];
        return NULL;
    }
    bool staged = !blocking_map && origin && region && image_row_pitch;
    uint64_t token = staged && !(map_flags & CL_MAP_WRITE_INVALIDATE_REGION)
                         ? opencl_staged_token()
                         : 0;
    if (!apigen_put_u64(c.wr, APIGEN_H2ID(q)) || !apigen_put_u64(c.wr, APIGEN_H2ID(image)) ||
        !apigen_put_u32(c.wr, staged ? STAGED : blocking_map) ||
        !apigen_put_u64(c.wr, map_flags) ||
        !apigen_put_opt_bytes(c.wr, origin, 3 * sizeof(size_t)) ||
        !apigen_put_opt_bytes(c.wr, region, 3 * sizeof(size_t)) ||
        !apigen_put_u8(c.wr, image_row_pitch != NULL) ||
        !apigen_put_u8(c.wr, image_slice_pitch != NULL) || !put_wait_list(c.wr, nwait, wait) ||
        !apigen_put_u8(c.wr, event != NULL) || (staged && !apigen_put_u64(c.wr, token))) {
        apigen_call_end(&c);
        if (errcode_ret)
            *errcode_ret = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    size_t size = 0;
    void *p = finish_map_sized(&c, image, map_flags, image_row_pitch, image_slice_pitch, event,
                               &err, NULL, &size);
    if (p && token)
        opencl_staged_start(q, token, p, size, 0, NULL, event);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

/* unmap request: u64 queue, u64 memobj, u64 mapping id (0: not a mapping of
 * this process), bytes written back (opt), wait list, u8 event wanted
 * reply: u32 errcode, u64 event id */
cl_int opencl_guest_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem memobj, void *mapped_ptr,
                                            cl_uint nwait, const cl_event *wait, cl_event *event)
{
    mapping *m = NULL, **pp;
    pthread_mutex_lock(&maps_mu);
    for (pp = &maps; *pp; pp = &(*pp)->next)
        if ((*pp)->ptr == mapped_ptr && (*pp)->mem == memobj) {
            m = *pp;
            *pp = m->next; /* taken: a second unmap of the same pointer is an error */
            break;
        }
    pthread_mutex_unlock(&maps_mu);
    apigen_call c;
    apigen_status st = APIGEN_LOST;
    cl_int err = CL_DEVICE_NOT_AVAILABLE;
    if (!apigen_call_begin_on(&opencl_api, &c, OPENCL_CALL_clEnqueueUnmapMemObject,
                              apigen_route_id(&opencl_api, APIGEN_H2ID(q))))
        goto out;
    if (!apigen_put_u64(c.wr, APIGEN_H2ID(q)) || !apigen_put_u64(c.wr, APIGEN_H2ID(memobj)) ||
        !apigen_put_u64(c.wr, m ? m->id : 0) ||
        !apigen_put_opt_bytes(c.wr, m && m->write_back ? m->ptr : NULL, m ? m->size : 0) ||
        !put_wait_list(c.wr, nwait, wait) || !apigen_put_u8(c.wr, event != NULL)) {
        apigen_call_end(&c);
        st = APIGEN_NO_MEMORY;
        goto out;
    }
    st = apigen_call_sync(&c);
    if (st == APIGEN_OK) {
        uint32_t e;
        uint64_t ev;
        if (!apigen_get_u32(&c.rd, &e) || !apigen_get_u64(&c.rd, &ev)) {
            apigen_call_bad_reply(&c);
            st = APIGEN_LOST;
        } else {
            err = (cl_int)e;
            if (event && err == CL_SUCCESS) {
                *event = APIGEN_ID2H(cl_event, ev);
                APIGEN_HREF(*event, 1, true);
            }
        }
    }
    apigen_call_end(&c);
out:
    if (st != APIGEN_OK)
        err = (cl_int)opencl_api.status_error[st];
    if (m && err == CL_SUCCESS) {
        if (!m->borrowed)
            free(m->ptr);
        free(m);
    } else if (m) {
        pthread_mutex_lock(&maps_mu); /* still mapped: put it back */
        m->next = maps;
        maps = m;
        pthread_mutex_unlock(&maps_mu);
    }
    return err;
}

/* ---- shared virtual memory ---------------------------------------------------------
 * An SVM allocation is the server's plus guest memory mapped at the same address when that address range is
 * free in this process (MAP_FIXED_NOREPLACE): then SVM pointers are the same
 * numbers on both sides, and pointers stored inside SVM memory work in
 * kernels. When the range is taken here, the guest memory lies elsewhere and
 * the pointers the application gets are translated (one log line: pointers
 * stored inside that allocation are not valid on the device). Maps read
 * into the guest memory and unmaps write it back. Coarse-grained only:
 * between map and unmap the application owns the bytes, as OpenCL says. */
typedef struct svm_alloc {
    struct svm_alloc *next;
    char *base;             /* guest range [base, base + size) */
    uint64_t size;
    uint64_t server;        /* the server's address of base */
    uint64_t id;            /* the server's allocation id */
    cl_context context;
} svm_alloc;

typedef struct svm_map {
    struct svm_map *next;
    char *ptr;
    uint64_t size;
    bool write_back;
} svm_map;

static pthread_mutex_t svm_mu = PTHREAD_MUTEX_INITIALIZER;
static svm_alloc *svms;
static svm_map *svm_maps;

/* The allocation holding p (copied out under the lock), or false. */
static bool svm_find(const void *p, svm_alloc *out)
{
    bool found = false;
    pthread_mutex_lock(&svm_mu);
    for (svm_alloc *a = svms; a && p; a = a->next)
        if ((const char *)p >= a->base && (uint64_t)((const char *)p - a->base) < a->size) {
            *out = *a;
            found = true;
            break;
        }
    pthread_mutex_unlock(&svm_mu);
    return found;
}

/* The server's address for an SVM pointer; anything else goes as it is (the
 * server refuses it: it lies in none of this client's SVM ranges). */
static uint64_t svm_server(const void *p)
{
    svm_alloc a;
    if (svm_find(p, &a))
        return a.server + (uint64_t)((const char *)p - a.base);
    return (uint64_t)(uintptr_t)p;
}

void opencl_guest_clSVMFree(cl_context context, void *svm_pointer);

static size_t svm_page(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Bytes of the pages covering [addr, addr + size). */
static size_t svm_span(uintptr_t addr, uint64_t size)
{
    uintptr_t pg = svm_page(), first = addr / pg * pg;
    uintptr_t last = (addr + (size ? size : 1) + pg - 1) / pg * pg;
    return last - first;
}

/* Whether a live allocation mapped at its server address covers page pg
 * (allocations are not page-aligned: neighbours share pages). Caller holds
 * svm_mu. */
static bool svm_page_ours(uintptr_t pg)
{
    for (svm_alloc *a = svms; a; a = a->next) {
        uintptr_t b = (uintptr_t)a->base;
        if ((uint64_t)b != a->server)
            continue;
        uintptr_t first = b / svm_page() * svm_page();
        if (pg >= first && pg < first + svm_span(b, a->size))
            return true;
    }
    return false;
}

/* Maps the pages of [addr, addr + size) that are not already one of ours;
 * NULL (and nothing left mapped) when one of them is taken. Caller holds
 * svm_mu. */
static char *svm_map_at(uint64_t addr, uint64_t size)
{
    uintptr_t first = (uintptr_t)addr / svm_page() * svm_page();
    uintptr_t end = first + svm_span((uintptr_t)addr, size), pg;
    for (pg = first; pg < end; pg += svm_page()) {
        if (svm_page_ours(pg))
            continue;
        void *r = mmap((void *)pg, svm_page(), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (r == (void *)pg)
            continue;
        if (r != MAP_FAILED)
            munmap(r, svm_page()); /* a kernel that took the address as a hint */
        for (uintptr_t q = first; q < pg; q += svm_page())
            if (!svm_page_ours(q))
                munmap((void *)q, svm_page());
        return NULL;
    }
    return (char *)(uintptr_t)addr;
}

/* clSVMAlloc request: u64 context, u64 flags, u64 size, u32 alignment
 * reply: u64 server address (0: failed), u64 allocation id */
void *opencl_guest_clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size,
                              cl_uint alignment)
{
    if (flags & (CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)) {
        static bool said;
        if (!said)
            apigen_log("opencl: clSVMAlloc: fine-grained SVM is not forwarded (NULL returned)");
        said = true;
        return NULL;
    }
    apigen_call c;
    if (!apigen_call_begin_on(&opencl_api, &c, OPENCL_CALL_clSVMAlloc,
                              apigen_route_id(&opencl_api, APIGEN_H2ID(context))))
        return NULL;
    uint64_t addr = 0, id = 0;
    if (!apigen_put_u64(c.wr, APIGEN_H2ID(context)) || !apigen_put_u64(c.wr, flags) ||
        !apigen_put_u64(c.wr, size) ||
        !apigen_put_u32(c.wr, alignment)) {
        apigen_call_end(&c);
        return NULL;
    }
    if (apigen_call_sync(&c) == APIGEN_OK &&
        (!apigen_get_u64(&c.rd, &addr) || !apigen_get_u64(&c.rd, &id))) {
        apigen_call_bad_reply(&c);
        addr = 0;
    }
    apigen_call_end(&c);
    if (!addr)
        return NULL;
    svm_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL; /* the server's allocation stays until the client goes */
    pthread_mutex_lock(&svm_mu);
    char *base = svm_map_at(addr, size);
    pthread_mutex_unlock(&svm_mu);
    if (!base) {
        apigen_log("opencl: clSVMAlloc: address %#llx is taken in this process: the "
                   "allocation is translated, pointers stored inside it are not valid on the "
                   "device", (unsigned long long)addr);
        base = mmap(NULL, svm_span(0, size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
        if (base == MAP_FAILED) {
            free(a);
            return NULL;
        }
    }
    *a = (svm_alloc){NULL, base, size, addr, id, context};
    pthread_mutex_lock(&svm_mu);
    a->next = svms;
    svms = a;
    pthread_mutex_unlock(&svm_mu);
    return base;
}

/* clSVMFree request: u64 context, u64 allocation id; no reply fields */
void opencl_guest_clSVMFree(cl_context context, void *svm_pointer)
{
    svm_alloc *a = NULL, **pp;
    pthread_mutex_lock(&svm_mu);
    for (pp = &svms; *pp && svm_pointer; pp = &(*pp)->next)
        if ((*pp)->base == svm_pointer) {
            a = *pp;
            *pp = a->next;
            break;
        }
    pthread_mutex_unlock(&svm_mu);
    if (!a)
        return; /* NULL, or not an SVM allocation: nothing to free */
    apigen_call c;
    if (apigen_call_begin_on(&opencl_api, &c, OPENCL_CALL_clSVMFree,
                             apigen_route_id(&opencl_api, APIGEN_H2ID(context)))) {
        if (apigen_put_u64(c.wr, APIGEN_H2ID(context)) && apigen_put_u64(c.wr, a->id)) {
            apigen_status st = apigen_call_sync(&c); /* void: nothing to report */
            (void)st;
        }
        apigen_call_end(&c);
    }
    if ((uint64_t)(uintptr_t)a->base == a->server) {
        pthread_mutex_lock(&svm_mu); /* pages no other allocation shares */
        uintptr_t pg = (uintptr_t)a->base / svm_page() * svm_page();
        for (uintptr_t end = pg + svm_span((uintptr_t)a->base, a->size); pg < end;
             pg += svm_page())
            if (!svm_page_ours(pg))
                munmap((void *)pg, svm_page());
        pthread_mutex_unlock(&svm_mu);
    } else {
        munmap(a->base, svm_span(0, a->size));
    }
    free(a);
}

cl_int opencl_fwd_clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking_copy, void *dst_ptr,
                                     const void *src_ptr, size_t size, cl_uint nwait,
                                     const cl_event *wait, cl_event *event);
cl_int opencl_fwd_clEnqueueSVMMemFill(cl_command_queue q, void *svm_ptr, const void *pattern,
                                      size_t pattern_size, size_t size, cl_uint nwait,
                                      const cl_event *wait, cl_event *event);
cl_int opencl_fwd_clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint n, const void **svm_pointers,
                                         const size_t *sizes, cl_mem_migration_flags flags,
                                         cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int opencl_fwd_clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index,
                                           const void *arg_value);
cl_int opencl_fwd_clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name,
                                      size_t param_value_size, const void *param_value);

/* Both pointers host memory: the copy is the guest's, after the wait list. */
static cl_int host_copy(cl_command_queue q, void *dst, const void *src, size_t size,
                        cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_event m = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(q, nwait, wait, &m);
    if (err == CL_SUCCESS)
        err = clWaitForEvents(1, &m);
    if (err == CL_SUCCESS && size)
        memmove(dst, src, size);
    if (event && err == CL_SUCCESS)
        *event = m;
    else if (m)
        clReleaseEvent(m);
    return err;
}

APIGEN_EXPORT cl_int clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking_copy, void *dst_ptr,
                                        const void *src_ptr, size_t size, cl_uint nwait,
                                        const cl_event *wait, cl_event *event)
{
    svm_alloc a;
    bool dsvm = svm_find(dst_ptr, &a), ssvm = svm_find(src_ptr, &a);
    if (dst_ptr && src_ptr && !dsvm && !ssvm)
        return host_copy(q, dst_ptr, src_ptr, size, nwait, wait, event);
    cl_bool how = (blocking_copy ? 1u : 0u) | (dsvm ? 2u : 0u) | (ssvm ? 4u : 0u);
    void *d = dsvm ? (void *)(uintptr_t)svm_server(dst_ptr) : dst_ptr;
    const void *s = ssvm ? (const void *)(uintptr_t)svm_server(src_ptr) : src_ptr;
    return opencl_fwd_clEnqueueSVMMemcpy(q, how, d, s, size, nwait, wait, event);
}

APIGEN_EXPORT cl_int clEnqueueSVMMemFill(cl_command_queue q, void *svm_ptr, const void *pattern,
                                         size_t pattern_size, size_t size, cl_uint nwait,
                                         const cl_event *wait, cl_event *event)
{
    return opencl_fwd_clEnqueueSVMMemFill(q, (void *)(uintptr_t)svm_server(svm_ptr), pattern,
                                          pattern_size, size, nwait, wait, event);
}

APIGEN_EXPORT cl_int clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint n,
                                            const void **svm_pointers, const size_t *sizes,
                                            cl_mem_migration_flags flags, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
    const void **p = NULL;
    if (svm_pointers && n) {
        p = calloc(n, sizeof *p);
        if (!p)
            return CL_OUT_OF_HOST_MEMORY;
        for (cl_uint i = 0; i < n; i++)
            p[i] = (const void *)(uintptr_t)svm_server(svm_pointers[i]);
    }
    cl_int err = opencl_fwd_clEnqueueSVMMigrateMem(q, n, p ? p : svm_pointers, sizes, flags,
                                                   nwait, wait, event);
    free(p);
    return err;
}

APIGEN_EXPORT cl_int clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index,
                                              const void *arg_value)
{
    cl_int err = opencl_fwd_clSetKernelArgSVMPointer(
        kernel, arg_index, (const void *)(uintptr_t)svm_server(arg_value));
    if (err == CL_SUCCESS)
        opencl_facts_arg_set(kernel, arg_index);
    return err;
}

APIGEN_EXPORT cl_int clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name,
                                         size_t param_value_size, const void *param_value)
{
    if (param_name != CL_KERNEL_EXEC_INFO_SVM_PTRS || !param_value ||
        param_value_size % sizeof(void *) != 0)
        return opencl_fwd_clSetKernelExecInfo(kernel, param_name, param_value_size, param_value);
    size_t n = param_value_size / sizeof(void *);
    uint64_t *p = malloc(n ? n * sizeof *p : 1);
    if (!p)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n; i++)
        p[i] = svm_server(((void *const *)param_value)[i]);
    cl_int err = opencl_fwd_clSetKernelExecInfo(kernel, param_name, param_value_size, p);
    free(p);
    return err;
}

/* Map: the region is copied into the shadow (unless the map invalidates it)
 * before the call returns; unmap copies it back when the map could write. */
APIGEN_EXPORT cl_int clEnqueueSVMMap(cl_command_queue q, cl_bool blocking_map, cl_map_flags flags,
                                     void *svm_ptr, size_t size, cl_uint nwait,
                                     const cl_event *wait, cl_event *event)
{
    (void)blocking_map;
    svm_alloc a;
    if (!svm_ptr || !size || !svm_find(svm_ptr, &a) ||
        size > a.size - (uint64_t)((char *)svm_ptr - a.base))
        return CL_INVALID_VALUE;
    svm_map *m = calloc(1, sizeof *m);
    if (!m)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err;
    if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
        cl_event ev = NULL;
        err = clEnqueueMarkerWithWaitList(q, nwait, wait, &ev);
        if (err == CL_SUCCESS)
            err = clWaitForEvents(1, &ev);
        if (event && err == CL_SUCCESS)
            *event = ev;
        else if (ev)
            clReleaseEvent(ev);
    } else {
        err = opencl_fwd_clEnqueueSVMMemcpy(q, 1u | 4u, svm_ptr,
                                            (const void *)(uintptr_t)svm_server(svm_ptr), size,
                                            nwait, wait, event);
    }
    if (err != CL_SUCCESS) {
        free(m);
        return err;
    }
    *m = (svm_map){NULL, svm_ptr, size,
                   (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0};
    pthread_mutex_lock(&svm_mu);
    m->next = svm_maps;
    svm_maps = m;
    pthread_mutex_unlock(&svm_mu);
    return CL_SUCCESS;
}

APIGEN_EXPORT cl_int clEnqueueSVMUnmap(cl_command_queue q, void *svm_ptr, cl_uint nwait,
                                       const cl_event *wait, cl_event *event)
{
    svm_map *m = NULL, **pp;
    pthread_mutex_lock(&svm_mu);
    for (pp = &svm_maps; *pp; pp = &(*pp)->next)
        if ((*pp)->ptr == svm_ptr) {
            m = *pp;
            *pp = m->next;
            break;
        }
    pthread_mutex_unlock(&svm_mu);
    if (!m)
        return CL_INVALID_VALUE; /* not a mapped SVM pointer */
    cl_int err;
    if (m->write_back) {
        err = opencl_fwd_clEnqueueSVMMemcpy(q, 1u | 2u,
                                            (void *)(uintptr_t)svm_server(svm_ptr), svm_ptr,
                                            m->size, nwait, wait, event);
    } else {
        cl_event ev = NULL;
        err = clEnqueueMarkerWithWaitList(q, nwait, wait, event ? &ev : NULL);
        if (event && err == CL_SUCCESS)
            *event = ev;
    }
    if (err == CL_SUCCESS) {
        free(m);
    } else {
        pthread_mutex_lock(&svm_mu); /* still mapped */
        m->next = svm_maps;
        svm_maps = m;
        pthread_mutex_unlock(&svm_mu);
    }
    return err;
}

/* clEnqueueSVMFree: a marker (after the wait list and, in an in-order queue,
 * after every earlier command) whose completion callback, in this process,
 * calls pfn_free_func or frees the pointers. */
typedef struct svm_free_job {
    cl_command_queue queue;
    cl_context context;
    void (CL_CALLBACK *fn)(cl_command_queue, cl_uint, void **, void *);
    void *user_data;
    cl_uint n;
    void *ptrs[];
} svm_free_job;

static void CL_CALLBACK svm_free_done(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)status;
    svm_free_job *j = user;
    if (j->fn) {
        j->fn(j->queue, j->n, j->ptrs, j->user_data);
    } else {
        for (cl_uint i = 0; i < j->n; i++)
            clSVMFree(j->context, j->ptrs[i]);
    }
    clReleaseCommandQueue(j->queue);
    free(j);
}

APIGEN_EXPORT cl_int clEnqueueSVMFree(cl_command_queue q, cl_uint n, void *svm_pointers[],
                                      void (CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint,
                                                                        void **, void *),
                                      void *user_data, cl_uint nwait, const cl_event *wait,
                                      cl_event *event)
{
    if ((n == 0) != (svm_pointers == NULL))
        return CL_INVALID_VALUE;
    cl_context ctx = NULL;
    cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err != CL_SUCCESS)
        return err;
    svm_free_job *j = calloc(1, sizeof *j + (size_t)n * sizeof(void *));
    if (!j)
        return CL_OUT_OF_HOST_MEMORY;
    *j = (svm_free_job){q, ctx, pfn_free_func, user_data, n};
    if (n)
        memcpy(j->ptrs, svm_pointers, (size_t)n * sizeof(void *));
    cl_event ev = NULL;
    err = clEnqueueMarkerWithWaitList(q, nwait, wait, &ev);
    if (err == CL_SUCCESS) {
        clRetainCommandQueue(q);
        err = clSetEventCallback(ev, CL_COMPLETE, svm_free_done, j);
        if (err != CL_SUCCESS)
            clReleaseCommandQueue(q);
    }
    if (err != CL_SUCCESS) {
        free(j);
        if (ev)
            clReleaseEvent(ev);
        return err;
    }
    if (event)
        *event = ev;
    else
        clReleaseEvent(ev);
    return CL_SUCCESS;
}

/* ---- clEnqueueNativeKernel ------------------------------------------------------------
 * The function runs in this process when the command runs: a marker M (the
 * wait list, and in an in-order queue every earlier command) gets a
 * completion callback that reads the memory objects into copies, points the
 * argument block at them, calls the function, writes them back and then
 * completes a user event U; the command's own event is a marker waiting for
 * U, so later commands of the queue wait for the function. The copies move
 * on a second queue of the same device (the first one is held by U). */
typedef struct native_job {
    void (CL_CALLBACK *fn)(void *);
    cl_command_queue io;
    cl_event done;
    cl_uint nmem;
    cl_mem *mems;
    size_t *locs;           /* offsets into args of each memory object's pointer */
    size_t cb_args;
    unsigned char args[];
} native_job;

static void CL_CALLBACK native_run(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    native_job *j = user;
    void **bufs = calloc(j->nmem ? j->nmem : 1, sizeof *bufs);
    size_t *sizes = calloc(j->nmem ? j->nmem : 1, sizeof *sizes);
    cl_int err = status < 0 ? status : (bufs && sizes ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY);
    for (cl_uint i = 0; err == CL_SUCCESS && i < j->nmem; i++) {
        err = clGetMemObjectInfo(j->mems[i], CL_MEM_SIZE, sizeof sizes[i], &sizes[i], NULL);
        if (err == CL_SUCCESS && !(bufs[i] = malloc(sizes[i] ? sizes[i] : 1)))
            err = CL_OUT_OF_HOST_MEMORY;
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(j->io, j->mems[i], CL_TRUE, 0, sizes[i], bufs[i], 0, NULL,
                                      NULL);
        if (err == CL_SUCCESS)
            memcpy(j->args + j->locs[i], &bufs[i], sizeof(void *));
    }
    if (err == CL_SUCCESS)
        j->fn(j->args);
    for (cl_uint i = 0; err == CL_SUCCESS && i < j->nmem; i++)
        err = clEnqueueWriteBuffer(j->io, j->mems[i], CL_TRUE, 0, sizes[i], bufs[i], 0, NULL,
                                   NULL);
    clSetUserEventStatus(j->done, err == CL_SUCCESS ? CL_COMPLETE : err);
    for (cl_uint i = 0; bufs && i < j->nmem; i++)
        free(bufs[i]);
    for (cl_uint i = 0; i < j->nmem; i++)
        clReleaseMemObject(j->mems[i]);
    free(bufs);
    free(sizes);
    clReleaseEvent(j->done);
    clReleaseCommandQueue(j->io);
    free(j->mems);
    free(j->locs);
    free(j);
}

APIGEN_EXPORT cl_int clEnqueueNativeKernel(cl_command_queue q, void (CL_CALLBACK *user_func)(void *),
                                           void *args, size_t cb_args, cl_uint num_mem_objects,
                                           const cl_mem *mem_list, const void **args_mem_loc,
                                           cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_context ctx = NULL;
    cl_device_id dev = NULL;
    cl_device_exec_capabilities caps = 0;
    cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (!(caps & CL_EXEC_NATIVE_KERNEL))
        return CL_INVALID_OPERATION;
    if (!user_func || (!args && (cb_args || num_mem_objects)) || (args && !cb_args) ||
        (num_mem_objects && (!mem_list || !args_mem_loc)) ||
        (!num_mem_objects && (mem_list || args_mem_loc)) || (!wait != !nwait))
        return CL_INVALID_VALUE;
    native_job *j = calloc(1, sizeof *j + cb_args);
    if (!j)
        return CL_OUT_OF_HOST_MEMORY;
    j->fn = user_func;
    j->nmem = num_mem_objects;
    j->cb_args = cb_args;
    if (cb_args)
        memcpy(j->args, args, cb_args);
    j->mems = calloc(num_mem_objects ? num_mem_objects : 1, sizeof *j->mems);
    j->locs = calloc(num_mem_objects ? num_mem_objects : 1, sizeof *j->locs);
    if (!j->mems || !j->locs)
        err = CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; err == CL_SUCCESS && i < num_mem_objects; i++) {
        const char *loc = args_mem_loc[i];
        cl_mem_object_type t = 0;
        if (!loc || loc < (const char *)args || loc + sizeof(void *) > (const char *)args + cb_args)
            err = CL_INVALID_VALUE;
        else if (clGetMemObjectInfo(mem_list[i], CL_MEM_TYPE, sizeof t, &t, NULL) != CL_SUCCESS ||
                 t != CL_MEM_OBJECT_BUFFER)
            err = CL_INVALID_MEM_OBJECT; /* images are not copied: refused */
        else {
            j->locs[i] = (size_t)(loc - (const char *)args);
            j->mems[i] = mem_list[i];
        }
    }
    cl_event m = NULL;
    if (err == CL_SUCCESS)
        j->io = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err == CL_SUCCESS)
        j->done = clCreateUserEvent(ctx, &err);
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q, nwait, wait, &m);
    cl_event cmd = NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q, 1, &j->done, &cmd);
    if (err == CL_SUCCESS) {
        for (cl_uint i = 0; i < j->nmem; i++)
            clRetainMemObject(j->mems[i]);
        err = clSetEventCallback(m, CL_COMPLETE, native_run, j);
        if (err != CL_SUCCESS) {
            for (cl_uint i = 0; i < j->nmem; i++)
                clReleaseMemObject(j->mems[i]);
            clSetUserEventStatus(j->done, CL_INVALID_OPERATION);
        }
    }
    if (m)
        clReleaseEvent(m);
    if (err != CL_SUCCESS) {
        if (cmd)
            clReleaseEvent(cmd);
        if (j->done)
            clReleaseEvent(j->done);
        if (j->io)
            clReleaseCommandQueue(j->io);
        free(j->mems);
        free(j->locs);
        free(j);
        return err;
    }
    if (event)
        *event = cmd;
    else
        clReleaseEvent(cmd);
    return CL_SUCCESS;
}
