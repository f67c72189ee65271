/* Hand-written guest code for specs/opencl.yaml: what the annotations cannot
 * say about OpenCL, on the application's side.
 *
 *  - clGetExtensionFunctionAddress[ForPlatform] (local): the stub's own
 *    extension entry points, by name.
 *  - wrappers (`wrap: {guest: true}`) that reshape arguments and call the
 *    generated forwarder opencl_fwd_<name>: clCreateProgramWithSource
 *    (strings with lengths), clGetProgramInfo (CL_PROGRAM_BINARIES), the
 *    rectangle and image reads/writes (explicit pitches).
 *  - custom functions with their own wire format: clCreateProgramWithBinary
 *    (an array of binaries of different lengths) and map/unmap (the mapped
 *    bytes live in guest memory: copied there by the map, sent back by the
 *    unmap). The host halves are in host.c; the wire order of each is
 *    written once, above the guest function. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_wire.h"

/* ---- generated forwarders the wrappers call ---------------------------------- */
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

APIGEN_EXPORT cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                             const size_t *buffer_origin,
                                             const size_t *host_origin, const size_t *region,
                                             size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                             size_t host_row_pitch, size_t host_slice_pitch,
                                             void *ptr, cl_uint nwait, const cl_event *wait,
                                             cl_event *event)
{
    size_t off;
    if (ptr && rect_norm(host_origin, region, &host_row_pitch, &host_slice_pitch, &off))
        return opencl_fwd_clEnqueueReadBufferRect(
            q, buffer, blocking, buffer_origin, zero3, region, buffer_row_pitch,
            buffer_slice_pitch, host_row_pitch, host_slice_pitch, (char *)ptr + off, nwait, wait,
            event);
    return opencl_fwd_clEnqueueReadBufferRect(q, buffer, blocking, buffer_origin, host_origin,
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
 * (whose slices run along region[1]) go through unchanged. */
static bool image_pitches(cl_mem image, const size_t *region, size_t *row, size_t *slice)
{
    size_t elem = 0;
    cl_mem_object_type type = 0;
    if (!region || !region[0] || !region[1] || !region[2] ||
        clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) != CL_SUCCESS ||
        clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, NULL) != CL_SUCCESS ||
        type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        return false;
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
    return opencl_fwd_clEnqueueReadImage(q, image, blocking, origin, region, row_pitch,
                                         slice_pitch, ptr, nwait, wait, event);
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
        if (!apigen_put_u64(w, (uint64_t)(uintptr_t)list[i]))
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
    if (!apigen_call_begin(&opencl_api, &c, OPENCL_CALL_clCreateProgramWithBinary))
        goto out;
    bool ok = apigen_put_u64(c.wr, (uint64_t)(uintptr_t)context) &&
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
            ret = (cl_program)(uintptr_t)id;
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
} mapping;

static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;
static mapping *maps;

/* map reply: u32 errcode, u64 mapping id, u64 size, u64 row pitch,
 * u64 slice pitch, u64 event id (0: none), bytes (size, or 0 when the map
 * was CL_MAP_WRITE_INVALIDATE_REGION) */
static void *finish_map(apigen_call *c, cl_mem mem, cl_map_flags flags, size_t *row_pitch,
                        size_t *slice_pitch, cl_event *event, cl_int *errcode_ret)
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
                ptr = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
                if (!m || !ptr) {
                    free(m);
                    free(ptr);
                    ptr = NULL;
                    err = CL_OUT_OF_HOST_MEMORY; /* the server's mapping stays until exit */
                } else {
                    memcpy(ptr, bytes, nbytes);
                    *m = (mapping){NULL, ptr, mem, id, size,
                                   (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0};
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
            if (event)
                *event = err == CL_SUCCESS ? (cl_event)(uintptr_t)ev : NULL;
        }
    }
    apigen_call_end(c);
    if (st != APIGEN_OK)
        err = (cl_int)opencl_api.status_error[st];
    if (errcode_ret)
        *errcode_ret = err;
    return ptr;
}

/* map buffer request: u64 queue, u64 buffer, u32 blocking, u64 flags, u64 offset,
 * u64 size, wait list (u8 present, u64 n, ids), u8 event wanted */
void *opencl_guest_clEnqueueMapBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_map,
                                      cl_map_flags map_flags, size_t offset, size_t size,
                                      cl_uint nwait, const cl_event *wait, cl_event *event,
                                      cl_int *errcode_ret)
{
    apigen_call c;
    if (!apigen_call_begin(&opencl_api, &c, OPENCL_CALL_clEnqueueMapBuffer)) {
        if (errcode_ret)
            *errcode_ret = (cl_int)opencl_api.status_error[APIGEN_LOST];
        return NULL;
    }
    if (!apigen_put_u64(c.wr, (uint64_t)(uintptr_t)q) ||
        !apigen_put_u64(c.wr, (uint64_t)(uintptr_t)buffer) ||
        !apigen_put_u32(c.wr, blocking_map) || !apigen_put_u64(c.wr, map_flags) ||
        !apigen_put_u64(c.wr, offset) || !apigen_put_u64(c.wr, size) ||
        !put_wait_list(c.wr, nwait, wait) || !apigen_put_u8(c.wr, event != NULL)) {
        apigen_call_end(&c);
        if (errcode_ret)
            *errcode_ret = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    return finish_map(&c, buffer, map_flags, NULL, NULL, event, errcode_ret);
}

/* map image request: u64 queue, u64 image, u32 blocking, u64 flags,
 * origin (opt bytes 24), region (opt bytes 24), u8 row pitch wanted,
 * u8 slice pitch wanted, wait list, u8 event wanted */
void *opencl_guest_clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking_map,
                                     cl_map_flags map_flags, const size_t *origin,
                                     const size_t *region, size_t *image_row_pitch,
                                     size_t *image_slice_pitch, cl_uint nwait,
                                     const cl_event *wait, cl_event *event, cl_int *errcode_ret)
{
    apigen_call c;
    if (!apigen_call_begin(&opencl_api, &c, OPENCL_CALL_clEnqueueMapImage)) {
        if (errcode_ret)
            *errcode_ret = (cl_int)opencl_api.status_error[APIGEN_LOST];
        return NULL;
    }
    if (!apigen_put_u64(c.wr, (uint64_t)(uintptr_t)q) ||
        !apigen_put_u64(c.wr, (uint64_t)(uintptr_t)image) ||
        !apigen_put_u32(c.wr, blocking_map) || !apigen_put_u64(c.wr, map_flags) ||
        !apigen_put_opt_bytes(c.wr, origin, 3 * sizeof(size_t)) ||
        !apigen_put_opt_bytes(c.wr, region, 3 * sizeof(size_t)) ||
        !apigen_put_u8(c.wr, image_row_pitch != NULL) ||
        !apigen_put_u8(c.wr, image_slice_pitch != NULL) || !put_wait_list(c.wr, nwait, wait) ||
        !apigen_put_u8(c.wr, event != NULL)) {
        apigen_call_end(&c);
        if (errcode_ret)
            *errcode_ret = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    return finish_map(&c, image, map_flags, image_row_pitch, image_slice_pitch, event,
                      errcode_ret);
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
    if (!apigen_call_begin(&opencl_api, &c, OPENCL_CALL_clEnqueueUnmapMemObject))
        goto out;
    if (!apigen_put_u64(c.wr, (uint64_t)(uintptr_t)q) ||
        !apigen_put_u64(c.wr, (uint64_t)(uintptr_t)memobj) ||
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
            if (event && err == CL_SUCCESS)
                *event = (cl_event)(uintptr_t)ev;
        }
    }
    apigen_call_end(&c);
out:
    if (st != APIGEN_OK)
        err = (cl_int)opencl_api.status_error[st];
    if (m && err == CL_SUCCESS) {
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
