/* Hand-written host code for specs/opencl.yaml: the server's side of what the
 * annotations cannot say about OpenCL. Host wrappers (`wrap: {host: F}`) get
 * the decoded, translated arguments and call the real function; custom
 * handlers (clCreateProgramWithBinary, map/unmap) read and write their own
 * wire format through the runtime's checked cursor (formats: guest.c).
 * Nothing here trusts the guest: every id is looked up in this client's
 * handle table, every length is checked before use. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_wire.h"

/* The generated handle types, found once by name in the API descriptor. */
static const apigen_handle_type *ht(const char *name)
{
    for (unsigned i = 0; i < apigen_api_opencl.nhandle_types; i++)
        if (strcmp(apigen_api_opencl.handle_types[i]->name, name) == 0)
            return apigen_api_opencl.handle_types[i];
    return NULL;
}

/* An id of this client, or NULL (an unknown id reaches OpenCL as NULL, whose
 * error is the one it gives for a bad handle). */
static void *real_of(apigen_call_ctx *cx, const char *type, uint64_t id)
{
    void *r = NULL;
    const apigen_handle_type *t = ht(type);
    if (t && apigen_handle_lookup(cx->session, t, id, &r))
        return r;
    return NULL;
}

/* ---- host wrappers -------------------------------------------------------------- */

/* The guest's memory cannot back a buffer in another process: USE_HOST_PTR
 * becomes COPY_HOST_PTR (reads, writes and maps still see the data). */
static cl_mem_flags no_use_host_ptr(cl_mem_flags flags)
{
    if (flags & CL_MEM_USE_HOST_PTR)
        flags = (flags & ~(cl_mem_flags)CL_MEM_USE_HOST_PTR) | CL_MEM_COPY_HOST_PTR;
    return flags;
}

cl_mem opencl_host_clCreateBuffer(apigen_call_ctx *cx, cl_context context, cl_mem_flags flags,
                                  size_t size, void *host_ptr, cl_int *errcode_ret)
{
    (void)cx;
    if (host_ptr)
        flags = no_use_host_ptr(flags);
    return clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
}

cl_mem opencl_host_clCreateBufferWithProperties(apigen_call_ctx *cx, cl_context context,
                                                const cl_mem_properties *properties,
                                                cl_mem_flags flags, size_t size, void *host_ptr,
                                                cl_int *errcode_ret)
{
    (void)cx;
    if (host_ptr)
        flags = no_use_host_ptr(flags);
    return clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret);
}

/* cl_image_desc travels as bytes: its mem_object is a guest id. */
static const cl_image_desc *fix_desc(apigen_call_ctx *cx, const cl_image_desc *d,
                                     cl_image_desc *copy)
{
    if (!d)
        return NULL;
    *copy = *d;
    copy->mem_object = d->mem_object
                           ? (cl_mem)real_of(cx, "cl_mem", (uint64_t)(uintptr_t)d->mem_object)
                           : NULL;
    return copy;
}

/* num_mip_levels and num_samples must be 0 (OpenCL 3.0, 5.3.1.2); PoCL
 * calls exit() on anything else ("unimplemented"), which would end the
 * server for every client (found by fuzz_opencl). */
static bool bad_mips(const cl_image_desc *d, cl_int *errcode_ret)
{
    if (!d || (d->num_mip_levels == 0 && d->num_samples == 0))
        return false;
    if (errcode_ret)
        *errcode_ret = CL_INVALID_IMAGE_DESCRIPTOR;
    return true;
}

/* The server never gets host memory for an image (the guest fills it after
 * creating it), and without host memory the row and slice pitch must be 0
 * (OpenCL 3.0, 5.3.1.2), except a 2D image's row pitch over a buffer (the
 * implementation checks that one against the buffer). PoCL takes a smaller
 * pitch as given, sizes the image's storage by it and then copies whole rows
 * past it (a heap overflow in the server, found by fuzz_opencl). `d` is the
 * translated descriptor: a mem_object the client does not own is NULL. */
static bool bad_pitches(const cl_image_desc *d, cl_int *errcode_ret)
{
    if (!d || (!d->image_row_pitch && !d->image_slice_pitch))
        return false;
    cl_mem_object_type t = 0;
    if (d->image_type == CL_MEM_OBJECT_IMAGE2D && !d->image_slice_pitch && d->mem_object &&
        clGetMemObjectInfo(d->mem_object, CL_MEM_TYPE, sizeof t, &t, NULL) == CL_SUCCESS &&
        t == CL_MEM_OBJECT_BUFFER)
        return false;
    if (errcode_ret)
        *errcode_ret = CL_INVALID_IMAGE_DESCRIPTOR;
    return true;
}

cl_mem opencl_host_clCreateImage(apigen_call_ctx *cx, cl_context context, cl_mem_flags flags,
                                 const cl_image_format *image_format,
                                 const cl_image_desc *image_desc, void *host_ptr,
                                 cl_int *errcode_ret)
{
    cl_image_desc d;
    const cl_image_desc *desc = fix_desc(cx, image_desc, &d);
    if (bad_mips(desc, errcode_ret) || bad_pitches(desc, errcode_ret))
        return NULL;
    return clCreateImage(context, flags, image_format, desc, host_ptr, errcode_ret);
}

cl_mem opencl_host_clCreateImageWithProperties(apigen_call_ctx *cx, cl_context context,
                                               const cl_mem_properties *properties,
                                               cl_mem_flags flags,
                                               const cl_image_format *image_format,
                                               const cl_image_desc *image_desc, void *host_ptr,
                                               cl_int *errcode_ret)
{
    cl_image_desc d;
    const cl_image_desc *desc = fix_desc(cx, image_desc, &d);
    if (bad_mips(desc, errcode_ret) || bad_pitches(desc, errcode_ret))
        return NULL;
    return clCreateImageWithProperties(context, properties, flags, image_format, desc, host_ptr,
                                       errcode_ret);
}

/* OpenCL 1.1's entry points: the same rule, with 1.1's error for a pitch
 * (CL_INVALID_IMAGE_SIZE). */
cl_mem opencl_host_clCreateImage2D(apigen_call_ctx *cx, cl_context context, cl_mem_flags flags,
                                   const cl_image_format *image_format, size_t image_width,
                                   size_t image_height, size_t image_row_pitch, void *host_ptr,
                                   cl_int *errcode_ret)
{
    (void)cx;
    if (image_row_pitch) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_IMAGE_SIZE;
        return NULL;
    }
    return clCreateImage2D(context, flags, image_format, image_width, image_height, 0, host_ptr,
                           errcode_ret);
}

cl_mem opencl_host_clCreateImage3D(apigen_call_ctx *cx, cl_context context, cl_mem_flags flags,
                                   const cl_image_format *image_format, size_t image_width,
                                   size_t image_height, size_t image_depth,
                                   size_t image_row_pitch, size_t image_slice_pitch,
                                   void *host_ptr, cl_int *errcode_ret)
{
    (void)cx;
    if (image_row_pitch || image_slice_pitch) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_IMAGE_SIZE;
        return NULL;
    }
    return clCreateImage3D(context, flags, image_format, image_width, image_height, image_depth,
                           0, 0, host_ptr, errcode_ret);
}

/* ---- staged non-blocking reads (apigen_opencl.h, guest: staged.c) ---------------
 * A staged read R1 reads into server memory (the wait list as given); the
 * event the application gets is a one-element read R2 of the same object
 * (so its command type is the read's) that waits for R1 and for a gate G,
 * a user event the guest opens once the bytes are in its memory. The
 * record is the client's (a handle of a private type, freed with it) and
 * found by the guest's token. */
typedef struct staged {
    struct staged *next;
    void *session;
    uint64_t token, hid;
    unsigned char *buf;
    size_t size;
    size_t row_bytes, nrows, row_pitch, nslices, slice_pitch; /* where R1's bytes lie */
    cl_event r1, gate;
    bool waited; /* R1 completed: buf may go */
    bool opened; /* the gate's status is set */
} staged;

static pthread_mutex_t staged_mu = PTHREAD_MUTEX_INITIALIZER;
static staged *staged_list;

static void CL_CALLBACK free_copy(cl_event ev, cl_int status, void *copy);

/* Opens the gate with status, unless R1 failed: R2 then failed with it
 * already, and PoCL would notify the completed (perhaps freed) R2 again. */
static void gate_open(struct staged *s, cl_int status);

/* The client went away (or the read is done): the gate opens (failed, when
 * the bytes never landed); the buffer goes when R1 no longer writes it. */
static void staged_destroy(void *real)
{
    staged *s = real;
    pthread_mutex_lock(&staged_mu);
    for (staged **pp = &staged_list; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    pthread_mutex_unlock(&staged_mu);
    if (s->gate && !s->opened)
        gate_open(s, CL_INVALID_OPERATION);
    if (s->r1 && !s->waited) {
        if (clSetEventCallback(s->r1, CL_COMPLETE, free_copy, s->buf) != CL_SUCCESS)
            clWaitForEvents(1, &s->r1), free(s->buf);
    } else {
        free(s->buf);
    }
    if (s->gate) /* the record's references; R2's tail holds its own */
        clReleaseEvent(s->gate);
    if (s->r1)
        clReleaseEvent(s->r1);
    free(s);
}

/* R2 completed (or failed, perhaps before the gate opened): R2's own
 * references to the gate and R1 go (PoCL may still notify R2 through them
 * until then); the record keeps its own until the guest is done. */
typedef struct {
    cl_event gate, r1;
    void *one;
} staged_tail;

static void CL_CALLBACK staged_tail_done(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)status;
    staged_tail *t = user;
    clReleaseEvent(t->gate);
    clReleaseEvent(t->r1);
    free(t->one);
    free(t);
}

static void gate_open(staged *s, cl_int status)
{
    cl_int st = CL_COMPLETE;
    s->opened = true;
    if (clGetEventInfo(s->r1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
            CL_SUCCESS &&
        st < 0)
        return;
    clSetUserEventStatus(s->gate, status);
}

static const apigen_handle_type ht_staged = {"opencl staged read", 0x53544700u, staged_destroy,
                                             NULL, 0, 0, NULL, 0};

static staged *staged_find(apigen_call_ctx *cx, uint64_t token)
{
    staged *s;
    pthread_mutex_lock(&staged_mu);
    for (s = staged_list; s && (s->session != (void *)cx->session || s->token != token);
         s = s->next)
        ;
    pthread_mutex_unlock(&staged_mu);
    return s;
}

/* A record for `size` bytes laid out as the plan says; NULL: no memory. */
static staged *staged_new(apigen_call_ctx *cx, uint64_t token, size_t size, size_t row_bytes,
                          size_t nrows, size_t row_pitch, size_t nslices, size_t slice_pitch)
{
    if (!token || staged_find(cx, token))
        return NULL;
    staged *s = calloc(1, sizeof *s);
    if (s)
        s->buf = malloc(size ? size : 1);
    if (!s || !s->buf) {
        if (s)
            free(s->buf);
        free(s);
        return NULL;
    }
    *s = (staged){NULL, cx->session, token, 0, s->buf, size, row_bytes, nrows, row_pitch,
                  nslices, slice_pitch, NULL, NULL, false, false};
    return s;
}

/* After R1 was enqueued (its error in err): the gate, R2 (enq2 into a
 * scratch element freed when R2 completes) and the record's handle. */
typedef cl_int (*enq_one)(const void *args, void *dst, cl_uint n, const cl_event *deps,
                          cl_event *ev);

static cl_int staged_finish(apigen_call_ctx *cx, staged *s, cl_int err, cl_command_queue q,
                            enq_one enq2, const void *args, cl_event *event, cl_event *gate)
{
    cl_context ctx = NULL;
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err == CL_SUCCESS)
        s->gate = clCreateUserEvent(ctx, &err);
    staged_tail *t = err == CL_SUCCESS ? calloc(1, sizeof *t) : NULL;
    void *one = t ? malloc(64) : NULL;
    if (err == CL_SUCCESS && !one)
        err = CL_OUT_OF_HOST_MEMORY;
    cl_event r2 = NULL;
    if (err == CL_SUCCESS) {
        cl_event deps[2] = {s->r1, s->gate};
        err = enq2(args, one, 2, deps, &r2);
    }
    if (err == CL_SUCCESS) {
        *t = (staged_tail){s->gate, s->r1, one};
        clRetainEvent(s->gate);
        clRetainEvent(s->r1);
        if (clSetEventCallback(r2, CL_COMPLETE, staged_tail_done, t) != CL_SUCCESS) {
            clReleaseEvent(s->gate);
            clReleaseEvent(s->r1);
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    if (err != CL_SUCCESS) {
        if (r2) { /* not yet run: the gate fails it, then it may go */
            gate_open(s, CL_INVALID_OPERATION);
            clWaitForEvents(1, &r2);
            clReleaseEvent(r2);
        }
        free(one);
        free(t);
        staged_destroy(s);
        return err;
    }
    pthread_mutex_lock(&staged_mu);
    s->next = staged_list;
    staged_list = s;
    pthread_mutex_unlock(&staged_mu);
    s->hid = apigen_handle_put_owned(cx, &ht_staged, s);
    if (!s->hid) { /* rejected (no memory): gone with its gate failed */
        staged_destroy(s);
        clReleaseEvent(r2);
        return CL_OUT_OF_HOST_MEMORY;
    }
    if (gate)
        *gate = s->gate;
    if (event)
        *event = r2;
    else
        clReleaseEvent(r2);
    return CL_SUCCESS;
}

/* A staged map: the map itself is R2 (its event the application's). */
typedef struct {
    cl_command_queue q;
    cl_mem mem;
    cl_map_flags flags;
    size_t offset, size;
    void *p;
    cl_int err;
} one_map;

static cl_int map_of_buffer(const void *args, void *dst, cl_uint n, const cl_event *deps,
                            cl_event *ev)
{
    (void)dst;
    one_map *a = (one_map *)(uintptr_t)args;
    a->p = clEnqueueMapBuffer(a->q, a->mem, CL_FALSE, a->flags, a->offset, a->size, n, deps, ev,
                              &a->err);
    return a->err;
}

typedef struct {
    cl_command_queue q;
    cl_mem mem;
    size_t offset;
} one_buf;

static cl_int one_of_buffer(const void *args, void *dst, cl_uint n, const cl_event *deps,
                            cl_event *ev)
{
    const one_buf *a = args;
    return clEnqueueReadBuffer(a->q, a->mem, CL_FALSE, a->offset, 1, dst, n, deps, ev);
}

typedef struct {
    cl_command_queue q;
    cl_mem mem;
    const size_t *origin;
    size_t row, slice;
} one_rect;

static cl_int one_of_rect(const void *args, void *dst, cl_uint n, const cl_event *deps,
                          cl_event *ev)
{
    const one_rect *a = args;
    static const size_t one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
    return clEnqueueReadBufferRect(a->q, a->mem, CL_FALSE, a->origin, zero, one, a->row,
                                   a->slice, 0, 0, dst, n, deps, ev);
}

static cl_int one_of_image(const void *args, void *dst, cl_uint n, const cl_event *deps,
                           cl_event *ev)
{
    const one_rect *a = args;
    static const size_t one[3] = {1, 1, 1};
    return clEnqueueReadImage(a->q, a->mem, CL_FALSE, a->origin, one, 0, 0, dst, n, deps, ev);
}

cl_int opencl_host_staged_wait(apigen_call_ctx *cx, cl_command_queue queue, cl_ulong token,
                               cl_uint flags, void *ptr, size_t size)
{
    (void)queue;
    staged *s = staged_find(cx, token);
    if (!s || !ptr || size != s->size)
        return CL_INVALID_VALUE;
    cl_int err = clWaitForEvents(1, &s->r1), st = CL_COMPLETE;
    s->waited = true;
    if (clGetEventInfo(s->r1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
            CL_SUCCESS &&
        st < 0)
        return st;
    if (err != CL_SUCCESS)
        return err;
    if (!(flags & APIGEN_OPENCL_STAGED_ROWS) || !s->nrows) {
        memcpy(ptr, s->buf, size);
        return CL_SUCCESS;
    }
    /* only the rows R1 wrote: the bytes between them stay the application's */
    for (size_t z = 0; z < s->nslices; z++)
        for (size_t y = 0; y < s->nrows; y++) {
            size_t at = z * s->slice_pitch + y * s->row_pitch;
            if (at > size || s->row_bytes > size - at)
                return CL_INVALID_VALUE;
            memcpy((char *)ptr + at, s->buf + at, s->row_bytes);
        }
    return CL_SUCCESS;
}

cl_int opencl_host_staged_done(apigen_call_ctx *cx, cl_command_queue queue, cl_ulong token,
                               cl_int status, cl_ulong *profile)
{
    (void)queue;
    staged *s = staged_find(cx, token);
    if (profile)
        memset(profile, 0, 5 * sizeof *profile);
    if (!s)
        return CL_INVALID_VALUE;
    if (!s->waited) { /* the guest never waited: R1 may still write buf */
        clWaitForEvents(1, &s->r1);
        s->waited = true;
    }
    /* R1's own times, for the application's event (R2's are the landing's) */
    static const cl_profiling_info names[5] = {
        CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT, CL_PROFILING_COMMAND_START,
        CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_COMPLETE};
    for (int i = 0; profile && i < 5; i++)
        if (clGetEventProfilingInfo(s->r1, names[i], sizeof profile[i], &profile[i], NULL) !=
            CL_SUCCESS) {
            if (i == 4) {
                profile[4] = 0; /* OpenCL 2.0's: the event's own answer then */
            } else {
                memset(profile, 0, 5 * sizeof *profile);
                break;
            }
        }
    gate_open(s, status < 0 ? status : CL_COMPLETE);
    cl_int err = CL_SUCCESS;
    uint64_t hid = s->hid;
    staged_destroy(s);
    apigen_handle_drop(cx, &ht_staged, hid);
    return err;
}

/* Blocking reads complete before the reply: the bytes travel with this call.
 * Staged ones (blocking_read & 2) carry the guest's token in ptr. */
cl_int opencl_host_clEnqueueReadBuffer(apigen_call_ctx *cx, cl_command_queue q, cl_mem buffer,
                                       cl_bool blocking_read, size_t offset, size_t size,
                                       void *ptr, cl_uint nwait, const cl_event *wait,
                                       cl_event *event)
{
    if (!(blocking_read & 2))
        return clEnqueueReadBuffer(q, buffer, CL_TRUE, offset, size, ptr, nwait, wait, event);
    if (size > cx->budget)
        return CL_OUT_OF_HOST_MEMORY;
    staged *s = staged_new(cx, (uint64_t)(uintptr_t)ptr, size, size, 1, 0, 1, 0);
    if (!s)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err = clEnqueueReadBuffer(q, buffer, CL_FALSE, offset, size, s->buf, nwait, wait,
                                     &s->r1);
    one_buf a = {q, buffer, offset};
    return staged_finish(cx, s, err, q, one_of_buffer, &a, event, NULL);
}

/* Non-blocking writes are async calls (the spec's async_if): their bytes
 * live in the request, whose memory the next call reuses, so the command
 * gets a copy of them that its completion frees, and the server thread goes
 * on at once (a write waiting on a user event must not hold up the calls
 * behind it). NULL: run it blocking (no memory, or nothing to copy). */
static void CL_CALLBACK free_copy(cl_event ev, cl_int status, void *copy)
{
    (void)ev;
    (void)status;
    free(copy);
}

static void *write_copy(const void *ptr, size_t n)
{
    void *c = ptr && n ? malloc(n) : NULL;
    if (c)
        memcpy(c, ptr, n);
    return c;
}

/* After the non-blocking enqueue of a command reading `copy`: copy is freed
 * when the command completes; *event gets the event if the caller asked. */
static cl_int copy_owned(cl_int err, void *copy, cl_event own, cl_event *event)
{
    if (err != CL_SUCCESS) {
        free(copy);
        return err;
    }
    if (clSetEventCallback(own, CL_COMPLETE, free_copy, copy) != CL_SUCCESS) {
        clWaitForEvents(1, &own);
        free(copy);
    }
    if (event)
        *event = own;
    else
        clReleaseEvent(own);
    return err;
}

cl_int opencl_host_clEnqueueWriteBuffer(apigen_call_ctx *cx, cl_command_queue q, cl_mem buffer,
                                        cl_bool blocking_write, size_t offset, size_t size,
                                        const void *ptr, cl_uint nwait, const cl_event *wait,
                                        cl_event *event)
{
    (void)cx;
    void *copy = blocking_write ? NULL : write_copy(ptr, size);
    if (!copy)
        return clEnqueueWriteBuffer(q, buffer, CL_TRUE, offset, size, ptr, nwait, wait, event);
    cl_event own = NULL;
    cl_int err = clEnqueueWriteBuffer(q, buffer, CL_FALSE, offset, size, copy, nwait, wait, &own);
    return copy_owned(err, copy, own, event);
}

/* The server's copy of a rectangle's host memory holds the spec's byte count
 * ((region[2] - 1) * host_slice_pitch + (region[1] - 1) * host_row_pitch +
 * region[0], from host_origin 0: the guest wrapper rebases ptr and makes the
 * pitches explicit). A hostile client could send a host_origin, zero pitches
 * (the library then uses larger ones) or pitches whose byte count wraps, and
 * make the library read or write past the copy (found by fuzz_opencl): such
 * rectangles are refused with CL_INVALID_VALUE, OpenCL's own error for bad
 * pitches. A region with a 0, or no host_origin, goes to the library for its
 * own error (no bytes were sent). */
static bool rect_bad(const size_t *host_origin, const size_t *region, size_t row, size_t slice)
{
    if (!host_origin || !region || !region[0] || !region[1] || !region[2])
        return false;
    if (host_origin[0] || host_origin[1] || host_origin[2])
        return true;
    if (row < region[0] || region[1] > SIZE_MAX / row || slice < row * region[1])
        return true;
    if (region[2] - 1 > SIZE_MAX / slice || region[1] - 1 > SIZE_MAX / row)
        return true;
    size_t a = (region[2] - 1) * slice, b = (region[1] - 1) * row;
    return a > SIZE_MAX - b || a + b > SIZE_MAX - region[0];
}

cl_int opencl_host_clEnqueueReadBufferRect(apigen_call_ctx *cx, cl_command_queue q, cl_mem buffer,
                                           cl_bool blocking, const size_t *buffer_origin,
                                           const size_t *host_origin, const size_t *region,
                                           size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                           size_t host_row_pitch, size_t host_slice_pitch,
                                           void *ptr, cl_uint nwait, const cl_event *wait,
                                           cl_event *event)
{
    if (!(blocking & 2)) {
        if (rect_bad(host_origin, region, host_row_pitch, host_slice_pitch))
            return CL_INVALID_VALUE;
        return clEnqueueReadBufferRect(q, buffer, CL_TRUE, buffer_origin, host_origin, region,
                                       buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                       host_slice_pitch, ptr, nwait, wait, event);
    }
    /* staged: the guest sent the rectangle from host_origin 0 with explicit pitches */
    if (!region || !region[0] || !region[1] || !region[2] || !host_row_pitch ||
        !host_slice_pitch || rect_bad(host_origin, region, host_row_pitch, host_slice_pitch))
        return CL_INVALID_VALUE;
    size_t bytes = (region[2] - 1) * host_slice_pitch + (region[1] - 1) * host_row_pitch +
                   region[0];
    if (bytes > cx->budget)
        return CL_OUT_OF_HOST_MEMORY;
    staged *s = staged_new(cx, (uint64_t)(uintptr_t)ptr, bytes, region[0], region[1],
                           host_row_pitch, region[2], host_slice_pitch);
    if (!s)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err = clEnqueueReadBufferRect(q, buffer, CL_FALSE, buffer_origin, host_origin, region,
                                         buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                         host_slice_pitch, s->buf, nwait, wait, &s->r1);
    one_rect a = {q, buffer, buffer_origin, buffer_row_pitch, buffer_slice_pitch};
    return staged_finish(cx, s, err, q, one_of_rect, &a, event, NULL);
}

cl_int opencl_host_clEnqueueWriteBufferRect(apigen_call_ctx *cx, cl_command_queue q,
                                            cl_mem buffer, cl_bool blocking,
                                            const size_t *buffer_origin,
                                            const size_t *host_origin, const size_t *region,
                                            size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                            size_t host_row_pitch, size_t host_slice_pitch,
                                            const void *ptr, cl_uint nwait, const cl_event *wait,
                                            cl_event *event)
{
    (void)cx;
    void *copy = NULL;
    if (rect_bad(host_origin, region, host_row_pitch, host_slice_pitch))
        return CL_INVALID_VALUE;
    /* the guest wrapper sends the rectangle from host_origin 0 with explicit
     * pitches: the spec's byte count */
    if (!blocking && region && region[0] && region[1] && region[2] &&
        (!host_origin || (!host_origin[0] && !host_origin[1] && !host_origin[2])) &&
        host_row_pitch && host_slice_pitch)
        copy = write_copy(ptr, (region[2] - 1) * host_slice_pitch +
                                   (region[1] - 1) * host_row_pitch + region[0]);
    if (!copy)
        return clEnqueueWriteBufferRect(q, buffer, CL_TRUE, buffer_origin, host_origin, region,
                                        buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                        host_slice_pitch, ptr, nwait, wait, event);
    cl_event own = NULL;
    cl_int err = clEnqueueWriteBufferRect(q, buffer, CL_FALSE, buffer_origin, host_origin, region,
                                          buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                          host_slice_pitch, copy, nwait, wait, &own);
    return copy_owned(err, copy, own, event);
}

/* CL_CONTEXT_PROPERTIES: the platform in the list is the implementation's;
 * the client knows it by its id. */
cl_int opencl_host_clGetContextInfo(apigen_call_ctx *cx, cl_context context,
                                    cl_context_info param_name, size_t param_value_size,
                                    void *param_value, size_t *param_value_size_ret)
{
    size_t got = 0;
    cl_int err = clGetContextInfo(context, param_name, param_value_size, param_value, &got);
    if (param_value_size_ret)
        *param_value_size_ret = got;
    if (err != CL_SUCCESS || param_name != CL_CONTEXT_PROPERTIES || !param_value)
        return err;
    cl_context_properties *p = param_value;
    size_t n = (got < param_value_size ? got : param_value_size) / sizeof *p;
    for (size_t i = 0; i + 1 < n && p[i] != 0; i += 2)
        if (p[i] == CL_CONTEXT_PLATFORM)
            p[i + 1] = (cl_context_properties)apigen_session_handle_id(
                cx->session, ht("cl_platform_id"), (void *)p[i + 1]);
    return err;
}

/* Partition lists arrive up to their first zero (a BY_COUNTS list's
 * LIST_END); one more zero ends the list for the implementation. */
static const void *partition_list(apigen_call_ctx *cx, const uint64_t *props)
{
    if (!props)
        return NULL;
    size_t n = 0;
    while (props[n] != 0) /* the handler checked the zero is there */
        n++;
    uint64_t *c = apigen_scratch(cx, n + 2, sizeof *c);
    if (!c)
        return props;
    memcpy(c, props, n * sizeof *c);
    c[n] = 0;
    c[n + 1] = 0;
    return c;
}

cl_int opencl_host_clCreateSubDevices(apigen_call_ctx *cx, cl_device_id in_device,
                                      const cl_device_partition_property *properties,
                                      cl_uint num_devices, cl_device_id *out_devices,
                                      cl_uint *num_devices_ret)
{
    return clCreateSubDevices(in_device, partition_list(cx, (const uint64_t *)(const void *)properties),
                              num_devices, out_devices, num_devices_ret);
}

cl_int opencl_host_clCreateSubDevicesEXT(apigen_call_ctx *cx, cl_device_id in_device,
                                         const cl_device_partition_property_ext *properties,
                                         cl_uint num_entries, cl_device_id *out_devices,
                                         cl_uint *num_devices)
{
    return clCreateSubDevicesEXT(in_device, partition_list(cx, (const uint64_t *)(const void *)properties),
                                 num_entries, out_devices, num_devices);
}

/* The guest made slice_pitch explicit for the byte count; 1D and 2D images
 * want 0 there. */
static size_t image_slice_pitch(cl_mem image, size_t slice_pitch)
{
    cl_mem_object_type type = 0;
    if (clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
        (type == CL_MEM_OBJECT_IMAGE1D || type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
         type == CL_MEM_OBJECT_IMAGE2D))
        return 0;
    return slice_pitch;
}

/* size_t arithmetic that reports overflow */
static bool mul_ok(size_t a, size_t b, size_t *r) { return !__builtin_mul_overflow(a, b, r); }
static bool add_ok(size_t a, size_t b, size_t *r) { return !__builtin_add_overflow(a, b, r); }

/* Whether the host memory the library touches for an image read or write
 * (by the image's type and element size, with the pitches it will use) fits
 * in the bytes that came with the call (the spec's count): a hostile row or
 * slice pitch would make it read or write past the server's copy (found by
 * fuzz_opencl). Anything the library refuses anyway passes for its own error. */
static bool image_host_bad(cl_mem image, const size_t *region, size_t row_pitch,
                           size_t slice_pitch)
{
    cl_mem_object_type type = 0;
    size_t es = 0, have, rp, sp, need, t;
    if (!region || !region[0] || !region[1] || !region[2] ||
        clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, NULL) != CL_SUCCESS ||
        clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof es, &es, NULL) != CL_SUCCESS || !es)
        return false;
    /* the spec's byte count: slice_pitch * region[2] * (row_pitch == 0 ? region[1] : 1) */
    if (!mul_ok(slice_pitch, region[2], &have) ||
        !mul_ok(have, row_pitch == 0 ? region[1] : 1, &have))
        return true;
    if (!mul_ok(region[0], es, &need))
        return true;
    rp = row_pitch ? row_pitch : need;
    if (rp < need)
        return false; /* CL_INVALID_VALUE from the library */
    bool array1d = type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    if (slice_pitch) {
        sp = slice_pitch;
    } else if (array1d) {
        sp = rp;
    } else if (!mul_ok(rp, region[1], &sp)) {
        return true;
    }
    if (type == CL_MEM_OBJECT_IMAGE1D || type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        /* need = region[0] * es */
    } else if (array1d || type == CL_MEM_OBJECT_IMAGE2D) {
        if (!mul_ok(region[1] - 1, array1d ? sp : rp, &t) || !add_ok(need, t, &need))
            return true;
    } else {
        if (!mul_ok(region[1] - 1, rp, &t) || !add_ok(need, t, &need) ||
            !mul_ok(region[2] - 1, sp, &t) || !add_ok(need, t, &need))
            return true;
    }
    return need > have;
}

/* Whether origin + region lies outside the image: PoCL does not check it
 * for every image type (1D and 2D arrays: the array size) and copies past the
 * image's storage in reads, writes, fills and maps (found by fuzz_opencl and
 * by probing each image command natively); OpenCL's error is CL_INVALID_VALUE. */
static bool image_box_bad(cl_mem image, const size_t *origin, const size_t *region)
{
    cl_mem_object_type type = 0;
    size_t w = 0, h = 0, d = 0, a = 0, lim[3], end;
    if (!origin || !region ||
        clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, NULL) != CL_SUCCESS ||
        clGetImageInfo(image, CL_IMAGE_WIDTH, sizeof w, &w, NULL) != CL_SUCCESS ||
        clGetImageInfo(image, CL_IMAGE_HEIGHT, sizeof h, &h, NULL) != CL_SUCCESS ||
        clGetImageInfo(image, CL_IMAGE_DEPTH, sizeof d, &d, NULL) != CL_SUCCESS ||
        clGetImageInfo(image, CL_IMAGE_ARRAY_SIZE, sizeof a, &a, NULL) != CL_SUCCESS)
        return false;
    lim[0] = w;
    lim[1] = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? a : h ? h : 1;
    lim[2] = type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? a : type == CL_MEM_OBJECT_IMAGE3D ? d : 1;
    for (int i = 0; i < 3; i++)
        if (!add_ok(origin[i], region[i], &end) || end > lim[i])
            return true;
    return false;
}

cl_int opencl_host_clEnqueueReadImage(apigen_call_ctx *cx, cl_command_queue q, cl_mem image,
                                      cl_bool blocking, const size_t *origin,
                                      const size_t *region, size_t row_pitch, size_t slice_pitch,
                                      void *ptr, cl_uint nwait, const cl_event *wait,
                                      cl_event *event)
{
    if (!(blocking & 2)) {
        if (image_host_bad(image, region, row_pitch, slice_pitch) ||
            image_box_bad(image, origin, region))
            return CL_INVALID_VALUE;
        return clEnqueueReadImage(q, image, CL_TRUE, origin, region, row_pitch,
                                  image_slice_pitch(image, slice_pitch), ptr, nwait, wait, event);
    }
    /* staged: the spec's byte count lands in server memory first */
    size_t es = 0, bytes;
    if (!image || !region || !region[0] || !region[1] || !region[2] || !slice_pitch ||
        image_host_bad(image, region, row_pitch, slice_pitch) ||
        image_box_bad(image, origin, region) ||
        clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof es, &es, NULL) != CL_SUCCESS ||
        !mul_ok(slice_pitch, region[2], &bytes) ||
        !mul_ok(bytes, row_pitch == 0 ? region[1] : 1, &bytes))
        return CL_INVALID_VALUE;
    if (bytes > cx->budget)
        return CL_OUT_OF_HOST_MEMORY;
    staged *s = row_pitch == 0 /* a 1D image array: its rows are the slices */
                    ? staged_new(cx, (uint64_t)(uintptr_t)ptr, bytes, region[0] * es,
                                 region[1], slice_pitch, 1, 0)
                    : staged_new(cx, (uint64_t)(uintptr_t)ptr, bytes, region[0] * es,
                                 region[1], row_pitch, region[2], slice_pitch);
    if (!s)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err = clEnqueueReadImage(q, image, CL_FALSE, origin, region, row_pitch,
                                    image_slice_pitch(image, slice_pitch), s->buf, nwait, wait,
                                    &s->r1);
    one_rect a = {q, image, origin, 0, 0};
    return staged_finish(cx, s, err, q, one_of_image, &a, event, NULL);
}

cl_int opencl_host_clEnqueueWriteImage(apigen_call_ctx *cx, cl_command_queue q, cl_mem image,
                                       cl_bool blocking, const size_t *origin,
                                       const size_t *region, size_t row_pitch, size_t slice_pitch,
                                       const void *ptr, cl_uint nwait, const cl_event *wait,
                                       cl_event *event)
{
    (void)cx;
    void *copy = NULL;
    if (image_host_bad(image, region, row_pitch, slice_pitch) || image_box_bad(image, origin, region))
        return CL_INVALID_VALUE;
    if (!blocking && region) /* the spec's byte count */
        copy = write_copy(ptr, slice_pitch * region[2] * (row_pitch == 0 ? region[1] : 1));
    if (!copy)
        return clEnqueueWriteImage(q, image, CL_TRUE, origin, region, row_pitch,
                                   image_slice_pitch(image, slice_pitch), ptr, nwait, wait, event);
    cl_event own = NULL;
    cl_int err = clEnqueueWriteImage(q, image, CL_FALSE, origin, region, row_pitch,
                                     image_slice_pitch(image, slice_pitch), copy, nwait, wait, &own);
    return copy_owned(err, copy, own, event);
}

/* Copies with images: the same box check (PoCL copies a region past the
 * image's edge: found probing clEnqueueCopyBufferToImage natively). */
cl_int opencl_host_clEnqueueCopyImage(apigen_call_ctx *cx, cl_command_queue q, cl_mem src,
                                      cl_mem dst, const size_t *src_origin,
                                      const size_t *dst_origin, const size_t *region,
                                      cl_uint nwait, const cl_event *wait, cl_event *event)
{
    (void)cx;
    if ((src && image_box_bad(src, src_origin, region)) ||
        (dst && image_box_bad(dst, dst_origin, region)))
        return CL_INVALID_VALUE;
    return clEnqueueCopyImage(q, src, dst, src_origin, dst_origin, region, nwait, wait, event);
}

cl_int opencl_host_clEnqueueCopyImageToBuffer(apigen_call_ctx *cx, cl_command_queue q,
                                              cl_mem src, cl_mem dst, const size_t *src_origin,
                                              const size_t *region, size_t dst_offset,
                                              cl_uint nwait, const cl_event *wait,
                                              cl_event *event)
{
    (void)cx;
    if (src && image_box_bad(src, src_origin, region))
        return CL_INVALID_VALUE;
    return clEnqueueCopyImageToBuffer(q, src, dst, src_origin, region, dst_offset, nwait, wait,
                                      event);
}

cl_int opencl_host_clEnqueueCopyBufferToImage(apigen_call_ctx *cx, cl_command_queue q,
                                              cl_mem src, cl_mem dst, size_t src_offset,
                                              const size_t *dst_origin, const size_t *region,
                                              cl_uint nwait, const cl_event *wait,
                                              cl_event *event)
{
    (void)cx;
    if (dst && image_box_bad(dst, dst_origin, region))
        return CL_INVALID_VALUE;
    return clEnqueueCopyBufferToImage(q, src, dst, src_offset, dst_origin, region, nwait, wait,
                                      event);
}

cl_int opencl_host_clEnqueueFillImage(apigen_call_ctx *cx, cl_command_queue q, cl_mem image,
                                      const void *fill_color, const size_t *origin,
                                      const size_t *region, cl_uint nwait, const cl_event *wait,
                                      cl_event *event)
{
    (void)cx;
    if (image_box_bad(image, origin, region))
        return CL_INVALID_VALUE;
    return clEnqueueFillImage(q, image, fill_color, origin, region, nwait, wait, event);
}

/* CL_PROGRAM_BINARIES with a buffer: the guest sent one flat buffer of the
 * sum of the binary sizes (guest.c); point the implementation into it and
 * report the whole buffer as the size, so all of it goes back. */
cl_int opencl_host_clGetProgramInfo(apigen_call_ctx *cx, cl_program program,
                                    cl_program_info param_name, size_t param_value_size,
                                    void *param_value, size_t *param_value_size_ret)
{
    if (param_name != CL_PROGRAM_BINARIES || !param_value)
        return clGetProgramInfo(program, param_name, param_value_size, param_value,
                                param_value_size_ret);
    size_t nbytes = 0;
    cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, 0, NULL, &nbytes);
    if (err != CL_SUCCESS)
        return err;
    size_t n = nbytes / sizeof(size_t);
    size_t *sizes = apigen_scratch(cx, n ? n : 1, sizeof *sizes);
    unsigned char **ptrs = apigen_scratch(cx, n ? n : 1, sizeof *ptrs);
    if (!sizes || !ptrs)
        return CL_OUT_OF_HOST_MEMORY;
    err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL);
    if (err != CL_SUCCESS)
        return err;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] > param_value_size - off)
            return CL_INVALID_VALUE;
        ptrs[i] = (unsigned char *)param_value + off;
        off += sizes[i];
    }
    err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, n * sizeof *ptrs, ptrs, NULL);
    if (err == CL_SUCCESS && param_value_size_ret)
        *param_value_size_ret = param_value_size;
    return err;
}

/* Builds, compiles and links always ask for kernel argument info, which
 * clSetKernelArg below needs to tell a handle from plain bytes (appended even
 * when the options already name it: a duplicate flag is harmless, and a
 * "-D X=-cl-kernel-arg-info" must not switch it off). */
static const char *with_arg_info(apigen_call_ctx *cx, const char *options)
{
    static const char add[] = " -cl-kernel-arg-info";
    size_t n = options ? strlen(options) : 0;
    char *o = apigen_scratch(cx, n + sizeof add, 1);
    if (!o)
        return options;
    if (n)
        memcpy(o, options, n);
    memcpy(o + n, add, sizeof add);
    return o;
}

/* CL_PROGRAM_BUILD_OPTIONS as the application gave them: without the
 * " -cl-kernel-arg-info" with_arg_info appended (always, and last), value
 * and size alike. */
cl_int opencl_host_clGetProgramBuildInfo(apigen_call_ctx *cx, cl_program program,
                                         cl_device_id device, cl_program_build_info param_name,
                                         size_t param_value_size, void *param_value,
                                         size_t *param_value_size_ret)
{
    if (param_name != CL_PROGRAM_BUILD_OPTIONS)
        return clGetProgramBuildInfo(program, device, param_name, param_value_size, param_value,
                                     param_value_size_ret);
    size_t n = 0;
    cl_int err = clGetProgramBuildInfo(program, device, param_name, 0, NULL, &n);
    if (err != CL_SUCCESS)
        return err;
    char *all = apigen_scratch(cx, n + 1, 1);
    if (!all)
        return CL_OUT_OF_HOST_MEMORY;
    err = clGetProgramBuildInfo(program, device, param_name, n, all, NULL);
    if (err != CL_SUCCESS)
        return err;
    all[n] = 0;
    static const char added[] = " -cl-kernel-arg-info";
    size_t len = strlen(all), k = sizeof added - 1;
    if (len >= k && strcmp(all + len - k, added) == 0)
        all[len -= k] = 0;
    else if (strcmp(all, added + 1) == 0) /* "" with the space trimmed */
        all[len = 0] = 0;
    if (param_value && param_value_size < len + 1)
        return CL_INVALID_VALUE;
    if (param_value)
        memcpy(param_value, all, len + 1);
    if (param_value_size_ret)
        *param_value_size_ret = len + 1;
    return CL_SUCCESS;
}

/* Whether dev is one of have[] or a sub-device of one. */
static bool device_among(cl_device_id dev, const cl_device_id *have, size_t nhave)
{
    for (int depth = 0; dev && depth < 16; depth++) {
        for (size_t i = 0; i < nhave; i++)
            if (have[i] == dev)
                return true;
        cl_device_id parent = NULL;
        if (clGetDeviceInfo(dev, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) !=
            CL_SUCCESS)
            return false;
        dev = parent;
    }
    return false;
}

/* The devices of a build, compile or link must be the program's (or the
 * context's) or sub-devices of them: PoCL dereferences a NULL device, which
 * is what an id the client does not own becomes (found by fuzz_opencl).
 * CL_SUCCESS also when the library will refuse the call itself (no list, no
 * valid object). */
static cl_int check_devices(apigen_call_ctx *cx, cl_program program, cl_context context,
                            cl_uint n, const cl_device_id *list)
{
    size_t bytes = 0;
    cl_int err = program ? clGetProgramInfo(program, CL_PROGRAM_DEVICES, 0, NULL, &bytes)
                         : clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, NULL, &bytes);
    if (!n || !list || err != CL_SUCCESS || !bytes)
        return CL_SUCCESS;
    cl_device_id *have = apigen_scratch(cx, bytes / sizeof *have, sizeof *have);
    if (!have)
        return CL_OUT_OF_HOST_MEMORY;
    err = program ? clGetProgramInfo(program, CL_PROGRAM_DEVICES, bytes, have, NULL)
                  : clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, have, NULL);
    if (err != CL_SUCCESS)
        return CL_SUCCESS;
    for (cl_uint i = 0; i < n; i++)
        if (!device_among(list[i], have, bytes / sizeof *have))
            return CL_INVALID_DEVICE;
    return CL_SUCCESS;
}

/* Whether a program has neither source, IL nor a binary (made from built-in
 * kernels): PoCL crashes building or compiling one, or compiling with one as
 * a header (found by fuzz_opencl). */
static bool no_source(cl_program program)
{
    size_t src = 0, il = 0, bytes = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_SOURCE, 0, NULL, &src) != CL_SUCCESS ||
        clGetProgramInfo(program, CL_PROGRAM_IL, 0, NULL, &il) != CL_SUCCESS)
        return false; /* not a program: the library's own error */
    if (src > 1 || il > 0)
        return false;
    if (clGetProgramInfo(program, CL_PROGRAM_DEVICES, 0, NULL, &bytes) != CL_SUCCESS)
        return false;
    cl_device_id devs[64];
    size_t n = bytes / sizeof *devs;
    if (n > 64 || clGetProgramInfo(program, CL_PROGRAM_DEVICES, bytes, devs, NULL) != CL_SUCCESS)
        return false;
    for (size_t i = 0; i < n; i++) {
        cl_program_binary_type t = CL_PROGRAM_BINARY_TYPE_NONE;
        if (clGetProgramBuildInfo(program, devs[i], CL_PROGRAM_BINARY_TYPE, sizeof t, &t, NULL) !=
                CL_SUCCESS ||
            t != CL_PROGRAM_BINARY_TYPE_NONE)
            return false;
    }
    return true;
}

/* What build and compile check before the library sees the program and its
 * devices: OpenCL's errors for a program made from built-in kernels
 * (CL_INVALID_OPERATION) and for a device that is not the program's
 * (CL_INVALID_DEVICE). */
static cl_int check_build(apigen_call_ctx *cx, cl_program program, cl_uint n,
                          const cl_device_id *list)
{
    if (!program)
        return CL_INVALID_PROGRAM;
    if (no_source(program))
        return CL_INVALID_OPERATION;
    return check_devices(cx, program, NULL, n, list);
}

cl_int opencl_host_clBuildProgram(apigen_call_ctx *cx, cl_program program, cl_uint num_devices,
                                  const cl_device_id *device_list, const char *options,
                                  void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                  void *user_data)
{
    cl_int err = check_build(cx, program, num_devices, device_list);
    if (err != CL_SUCCESS)
        return err;
    return clBuildProgram(program, num_devices, device_list, with_arg_info(cx, options),
                          pfn_notify, user_data);
}

/* Headers: PoCL aborts on a NULL name (std::logic_error) and crashes on a
 * header without source (found by fuzz_opencl); a header the client does not
 * own arrives as NULL. */
cl_int opencl_host_clCompileProgram(apigen_call_ctx *cx, cl_program program, cl_uint num_devices,
                                    const cl_device_id *device_list, const char *options,
                                    cl_uint num_input_headers, const cl_program *input_headers,
                                    const char **header_include_names,
                                    void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                    void *user_data)
{
    cl_int err = check_build(cx, program, num_devices, device_list);
    if (err != CL_SUCCESS)
        return err;
    if (!num_input_headers != !input_headers || !num_input_headers != !header_include_names)
        return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < num_input_headers; i++) {
        if (!header_include_names[i])
            return CL_INVALID_VALUE;
        if (!input_headers[i])
            return CL_INVALID_PROGRAM;
        if (no_source(input_headers[i]))
            return CL_INVALID_OPERATION;
    }
    return clCompileProgram(program, num_devices, device_list, with_arg_info(cx, options),
                            num_input_headers, input_headers, header_include_names, pfn_notify,
                            user_data);
}

/* Input programs: PoCL dereferences a NULL one (found by fuzz_opencl). */
cl_program opencl_host_clLinkProgram(apigen_call_ctx *cx, cl_context context, cl_uint num_devices,
                                     const cl_device_id *device_list, const char *options,
                                     cl_uint num_input_programs, const cl_program *input_programs,
                                     void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                     void *user_data, cl_int *errcode_ret)
{
    cl_int err = context ? check_devices(cx, NULL, context, num_devices, device_list)
                         : CL_SUCCESS;
    for (cl_uint i = 0; err == CL_SUCCESS && input_programs && i < num_input_programs; i++)
        if (!input_programs[i])
            err = CL_INVALID_PROGRAM;
    if (err != CL_SUCCESS) {
        if (errcode_ret)
            *errcode_ret = err;
        return NULL;
    }
    return clLinkProgram(context, num_devices, device_list, with_arg_info(cx, options),
                         num_input_programs, input_programs, pfn_notify, user_data, errcode_ret);
}

/* kernel_names must name built-in kernels of every device (OpenCL 3.0,
 * CL_INVALID_VALUE); the devices must be the context's (a NULL one, an id the
 * client does not own, crashes PoCL). */
cl_program opencl_host_clCreateProgramWithBuiltInKernels(apigen_call_ctx *cx, cl_context context,
                                                         cl_uint num_devices,
                                                         const cl_device_id *device_list,
                                                         const char *kernel_names,
                                                         cl_int *errcode_ret)
{
    cl_int err = context ? check_devices(cx, NULL, context, num_devices, device_list)
                         : CL_SUCCESS;
    for (cl_uint i = 0; err == CL_SUCCESS && context && device_list && kernel_names &&
                        i < num_devices;
         i++) {
        size_t n = 0;
        if (clGetDeviceInfo(device_list[i], CL_DEVICE_BUILT_IN_KERNELS, 0, NULL, &n) !=
            CL_SUCCESS)
            break;
        char *have = apigen_scratch(cx, n + 1, 1);
        if (!have) {
            err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        have[n] = 0;
        if (clGetDeviceInfo(device_list[i], CL_DEVICE_BUILT_IN_KERNELS, n, have, NULL) !=
            CL_SUCCESS)
            break;
        for (const char *k = kernel_names; *k && err == CL_SUCCESS;) {
            size_t len = strcspn(k, ";");
            bool found = false;
            for (const char *h = have; *h && !found;) {
                size_t hl = strcspn(h, ";");
                found = hl == len && !memcmp(h, k, len);
                h += hl + (h[hl] == ';');
            }
            if (!found)
                err = CL_INVALID_VALUE;
            k += len + (k[len] == ';');
        }
    }
    if (err != CL_SUCCESS) {
        if (errcode_ret)
            *errcode_ret = err;
        return NULL;
    }
    return clCreateProgramWithBuiltInKernels(context, num_devices, device_list, kernel_names,
                                             errcode_ret);
}

/* clSetKernelArg: arg_value is plain bytes, a pointer to a cl_mem (buffer,
 * image, pipe) or a cl_sampler, or NULL (a __local size). The value reaches
 * the implementation only once the server knows which: implementations
 * (PoCL) store a handle argument unchecked and dereference it at the launch,
 * so a forged id, a NULL image or sampler, or a buffer given for an image
 * would crash the server. */
typedef enum { ARG_BYTES, ARG_LOCAL, ARG_BUFFER, ARG_IMAGE, ARG_PIPE, ARG_SAMPLER,
               ARG_UNKNOWN } arg_kind;

static arg_kind kernel_arg_kind(cl_kernel kernel, cl_uint index, size_t arg_size)
{
    cl_kernel_arg_address_qualifier aq = 0;
    cl_kernel_arg_access_qualifier acc = 0;
    cl_kernel_arg_type_qualifier tq = 0;
    char tname[64] = {0};
    if (clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq,
                           NULL) == CL_SUCCESS &&
        clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof acc, &acc,
                           NULL) == CL_SUCCESS &&
        clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, sizeof tname - 1, tname,
                           NULL) == CL_SUCCESS) {
        if (clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq,
                               NULL) == CL_SUCCESS &&
            (tq & CL_KERNEL_ARG_TYPE_PIPE))
            return ARG_PIPE;
        if (strcmp(tname, "sampler_t") == 0)
            return ARG_SAMPLER;
        if (acc != CL_KERNEL_ARG_ACCESS_NONE)
            return ARG_IMAGE; /* images (and pipes, above) carry an access qualifier */
        if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL)
            return ARG_LOCAL;
        if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT)
            return ARG_BUFFER;
        return ARG_BYTES;
    }
    /* No argument info (an implementation that keeps none even when asked):
     * a pointer argument accepts a NULL arg_value of sizeof(cl_mem), a scalar
     * does not; a __local one accepts any size. The probe leaves the
     * argument set to NULL, which the real value overwrites below. */
    if (clSetKernelArg(kernel, index, arg_size, NULL) == CL_SUCCESS)
        return clSetKernelArg(kernel, index, sizeof(cl_int), NULL) == CL_SUCCESS ? ARG_LOCAL
                                                                                 : ARG_BUFFER;
    return ARG_UNKNOWN; /* plain bytes, an image, a pipe or a sampler */
}

static bool mem_of_kind(cl_mem mem, arg_kind kind)
{
    cl_mem_object_type t = 0;
    if (clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof t, &t, NULL) != CL_SUCCESS)
        return false;
    switch (kind) {
    case ARG_BUFFER: return t == CL_MEM_OBJECT_BUFFER;
    case ARG_PIPE: return t == CL_MEM_OBJECT_PIPE;
    case ARG_IMAGE:
    case ARG_UNKNOWN: return t != CL_MEM_OBJECT_BUFFER && t != CL_MEM_OBJECT_PIPE;
    case ARG_BYTES:
    case ARG_LOCAL:
    case ARG_SAMPLER: return false;
    }
    return false;
}

cl_int opencl_host_clSetKernelArg(apigen_call_ctx *cx, cl_kernel kernel, cl_uint arg_index,
                                  size_t arg_size, const void *arg_value)
{
    cl_uint nargs = 0;
    if (!kernel || clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) !=
                       CL_SUCCESS || arg_index >= nargs || !arg_value)
        return clSetKernelArg(kernel, arg_index, arg_size, arg_value); /* its own error */
    arg_kind kind = kernel_arg_kind(kernel, arg_index, arg_size);
    if (kind == ARG_BYTES)
        return clSetKernelArg(kernel, arg_index, arg_size, arg_value);
    if (kind == ARG_LOCAL)
        return CL_INVALID_ARG_VALUE; /* a __local argument takes a NULL arg_value */
    if (arg_size != sizeof(cl_mem))
        return CL_INVALID_ARG_SIZE;
    uint64_t id;
    memcpy(&id, arg_value, sizeof id);
    void *real = NULL;
    if (kind == ARG_SAMPLER || kind == ARG_UNKNOWN) {
        if (id && apigen_handle_lookup(cx->session, ht("cl_sampler"), id, &real) && real)
            return clSetKernelArg(kernel, arg_index, arg_size, &real);
        if (kind == ARG_SAMPLER)
            return CL_INVALID_SAMPLER;
    }
    real = id ? real_of(cx, "cl_mem", id) : NULL;
    if (real && mem_of_kind(real, kind))
        return clSetKernelArg(kernel, arg_index, arg_size, &real);
    if (!id && kind == ARG_BUFFER)
        return clSetKernelArg(kernel, arg_index, arg_size, &real); /* a NULL buffer is legal */
    if (kind == ARG_UNKNOWN) {
        /* Without argument info the server cannot tell 8 bytes of data from
         * a forged image or sampler, and the latter would crash it at the
         * launch: refused, as a real implementation refuses a bad value. */
        apigen_log("opencl: clSetKernelArg: no argument info for argument %u: an 8-byte value "
                   "that is not a memory object or sampler of this client is refused",
                   arg_index);
        return CL_INVALID_ARG_VALUE;
    }
    return CL_INVALID_MEM_OBJECT; /* not an object of this client, or of the wrong kind */
}

/* ---- custom handlers: shared decoding ------------------------------------------------ */

static bool get_wait_list(apigen_call_ctx *cx, const char *type, cl_uint *n, cl_event **list)
{
    uint8_t present;
    uint64_t count, id;
    *n = 0;
    *list = NULL;
    if (!apigen_get_u8(cx->rd, &present))
        return false;
    if (!present)
        return true;
    if (!apigen_get_u64(cx->rd, &count) || count > UINT32_MAX)
        return false;
    cl_event *l = apigen_scratch(cx, count ? count : 1, sizeof *l);
    if (!l)
        return false;
    for (uint64_t i = 0; i < count; i++) {
        if (!apigen_get_u64(cx->rd, &id))
            return false;
        l[i] = (cl_event)real_of(cx, type, id);
    }
    *n = (cl_uint)count;
    *list = l;
    return true;
}

static void bad(apigen_call_ctx *cx, const char *what)
{
    if (cx->status == APIGEN_OK)
        apigen_reject(cx, APIGEN_BAD_ARGS, what);
}

void opencl_host_clCreateProgramWithBinary(apigen_call_ctx *cx)
{
    uint64_t v_ctx, v;
    uint32_t ndev;
    uint8_t bin_present, st_present, err_present;
    cl_uint nlist;
    cl_device_id *devs;
    const void *lens_b;
    uint64_t lens_n;
    if (!apigen_get_u64(cx->rd, &v_ctx) || !apigen_get_u32(cx->rd, &ndev) ||
        !get_wait_list(cx, "cl_device_id", &nlist, (cl_event **)&devs) ||
        !apigen_get_opt_bytes(cx->rd, &lens_b, &lens_n, cx->budget) ||
        (lens_b && lens_n != (uint64_t)ndev * sizeof(size_t)) ||
        !apigen_get_u8(cx->rd, &bin_present))
        return bad(cx, "clCreateProgramWithBinary");
    if (devs && nlist != ndev)
        return bad(cx, "device_list");
    const size_t *lengths = lens_b;
    const unsigned char **bins = NULL;
    if (bin_present) {
        bins = apigen_scratch(cx, ndev ? ndev : 1, sizeof *bins);
        if (!bins)
            return;
        for (uint32_t i = 0; i < ndev; i++) {
            const void *b;
            if (!apigen_get_opt_bytes(cx->rd, &b, &v, cx->budget) ||
                (b && (!lengths || v != lengths[i])))
                return bad(cx, "binaries");
            bins[i] = b;
        }
    }
    if (!apigen_get_u8(cx->rd, &st_present) || !apigen_get_u8(cx->rd, &err_present) ||
        !apigen_rd_done(cx->rd))
        return bad(cx, "clCreateProgramWithBinary");
    cl_int *status = st_present ? apigen_scratch(cx, ndev ? ndev : 1, sizeof(cl_int)) : NULL;
    if (st_present && !status)
        return;
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary((cl_context)real_of(cx, "cl_context", v_ctx), ndev,
                                             devs, lengths, bins, status,
                                             &err);
    apigen_result(cx, err);
    uint64_t id = p ? apigen_handle_put_owned(cx, ht("cl_program"), p) : 0;
    if (!apigen_put_u64(cx->wr, id) || !apigen_put_u32(cx->wr, (uint32_t)err))
        return;
    if (st_present && !apigen_put_bytes(cx->wr, status, (uint64_t)ndev * sizeof(cl_int)))
        return;
}

/* clEnqueueNDRangeKernel, clEnqueueTask: PoCL dereferences a NULL kernel
 * (what an unknown or foreign id becomes, unknown_as_null) and would take the
 * server down for every client: refused here with OpenCL's own errors. */
cl_int opencl_host_clEnqueueNDRangeKernel(apigen_call_ctx *cx, cl_command_queue command_queue,
                                          cl_kernel kernel, cl_uint work_dim,
                                          const size_t *global_work_offset,
                                          const size_t *global_work_size,
                                          const size_t *local_work_size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
    (void)cx;
    if (!command_queue)
        return CL_INVALID_COMMAND_QUEUE;
    if (!kernel)
        return CL_INVALID_KERNEL;
    return clEnqueueNDRangeKernel(command_queue, kernel, work_dim, global_work_offset,
                                  global_work_size, local_work_size, num_events_in_wait_list,
                                  event_wait_list, event);
}

cl_int opencl_host_clEnqueueTask(apigen_call_ctx *cx, cl_command_queue command_queue,
                                 cl_kernel kernel, cl_uint num_events_in_wait_list,
                                 const cl_event *event_wait_list, cl_event *event)
{
    (void)cx;
    if (!command_queue)
        return CL_INVALID_COMMAND_QUEUE;
    if (!kernel)
        return CL_INVALID_KERNEL;
    return clEnqueueTask(command_queue, kernel, num_events_in_wait_list, event_wait_list, event);
}

/* ---- map / unmap ------------------------------------------------------------------------
 * A live mapping is a handle of a private type (per client, released with
 * the client): the unmap names it by id, so a guest can only write back into
 * memory the implementation mapped for it, and only as many bytes. */
typedef struct host_mapping {
    cl_command_queue queue;
    cl_mem mem;
    void *ptr;
    uint64_t size;
    cl_event gate, r1; /* a staged map's (retained): opened, failed, if the client goes */
} host_mapping;

/* A staged map's gate, if its client went before the bytes landed: failed,
 * so the map (and the unmap below) do not wait for ever. */
static void mapping_gate_close(host_mapping *m)
{
    if (!m->gate)
        return;
    cl_int g = CL_COMPLETE, r = CL_COMPLETE;
    clGetEventInfo(m->gate, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof g, &g, NULL);
    clGetEventInfo(m->r1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof r, &r, NULL);
    if (g > CL_COMPLETE && r >= 0)
        clSetUserEventStatus(m->gate, CL_INVALID_OPERATION);
    clReleaseEvent(m->gate);
    clReleaseEvent(m->r1);
    m->gate = m->r1 = NULL;
}

static void mapping_destroy(void *real)
{
    host_mapping *m = real;
    mapping_gate_close(m);
    if (m->queue) {
        clEnqueueUnmapMemObject(m->queue, m->mem, m->ptr, 0, NULL, NULL);
        clFinish(m->queue);
        clReleaseCommandQueue(m->queue);
        clReleaseMemObject(m->mem);
    }
    free(m);
}

static const apigen_handle_type ht_mapping = {"opencl mapping", 0x4d415000u, mapping_destroy,
                                              NULL, 0, 0, NULL, 0};

/* Reply as guest.c's finish_map reads it. */
static void map_reply_staged(apigen_call_ctx *cx, cl_int err, cl_command_queue q, cl_mem mem,
                             void *ptr, uint64_t size, size_t row_pitch, size_t slice_pitch,
                             cl_event ev, bool send_bytes, cl_event gate, cl_event r1);

static void map_reply(apigen_call_ctx *cx, cl_int err, cl_command_queue q, cl_mem mem, void *ptr,
                      uint64_t size, size_t row_pitch, size_t slice_pitch, cl_event ev,
                      bool send_bytes)
{
    map_reply_staged(cx, err, q, mem, ptr, size, row_pitch, slice_pitch, ev, send_bytes, NULL,
                     NULL);
}

static void map_reply_staged(apigen_call_ctx *cx, cl_int err, cl_command_queue q, cl_mem mem,
                             void *ptr, uint64_t size, size_t row_pitch, size_t slice_pitch,
                             cl_event ev, bool send_bytes, cl_event gate, cl_event r1)
{
    uint64_t id = 0, evid = 0;
    if (err == CL_SUCCESS) {
        host_mapping *m = malloc(sizeof *m);
        if (!m) {
            clEnqueueUnmapMemObject(q, mem, ptr, 0, NULL, NULL);
            err = CL_OUT_OF_HOST_MEMORY;
        } else {
            clRetainCommandQueue(q);
            clRetainMemObject(mem);
            *m = (host_mapping){q, mem, ptr, size, gate, r1};
            if (gate) {
                clRetainEvent(gate);
                clRetainEvent(r1);
            }
            id = apigen_handle_put_owned(cx, &ht_mapping, m);
        }
        if (ev)
            evid = apigen_handle_put_owned(cx, ht("cl_event"), ev);
    }
    apigen_result(cx, err);
    if (!apigen_put_u32(cx->wr, (uint32_t)err) || !apigen_put_u64(cx->wr, id) ||
        !apigen_put_u64(cx->wr, err == CL_SUCCESS ? size : 0) ||
        !apigen_put_u64(cx->wr, row_pitch) || !apigen_put_u64(cx->wr, slice_pitch) ||
        !apigen_put_u64(cx->wr, evid))
        return;
    if (!apigen_put_bytes(cx->wr, ptr, err == CL_SUCCESS && send_bytes ? size : 0))
        return;
}

void opencl_host_clEnqueueMapBuffer(apigen_call_ctx *cx)
{
    uint64_t vq, vm, flags, offset, size;
    uint32_t blocking;
    uint8_t want_ev;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    if (!apigen_get_u64(cx->rd, &vq) || !apigen_get_u64(cx->rd, &vm) ||
        !apigen_get_u32(cx->rd, &blocking) || !apigen_get_u64(cx->rd, &flags) ||
        !apigen_get_u64(cx->rd, &offset) || !apigen_get_u64(cx->rd, &size) ||
        !get_wait_list(cx, "cl_event", &nwait, &wait) || !apigen_get_u8(cx->rd, &want_ev))
        return bad(cx, "clEnqueueMapBuffer");
    uint64_t token = 0;
    if ((blocking & 2) && !apigen_get_u64(cx->rd, &token))
        return bad(cx, "clEnqueueMapBuffer");
    if (!apigen_rd_done(cx->rd))
        return bad(cx, "clEnqueueMapBuffer");
    if (size > cx->budget) {
        apigen_reject(cx, APIGEN_TOO_LARGE, "size");
        return;
    }
    cl_command_queue q = real_of(cx, "cl_command_queue", vq);
    cl_mem mem = real_of(cx, "cl_mem", vm);
    cl_int err = CL_SUCCESS;
    void *p;
    if (!(blocking & 2)) {
        p = clEnqueueMapBuffer(q, mem, CL_TRUE, flags, offset, size, nwait, wait,
                               want_ev ? &ev : NULL, &err);
        map_reply(cx, err, q, mem, p, size, 0, 0, ev, !(flags & CL_MAP_WRITE_INVALIDATE_REGION));
        return;
    }
    /* non-blocking (guest.c): an invalidating map brings no bytes and need not
     * wait; any other is staged (R1 reads, the map itself waits for the gate) */
    if (!token) {
        p = clEnqueueMapBuffer(q, mem, CL_FALSE, flags, offset, size, nwait, wait,
                               want_ev ? &ev : NULL, &err);
        map_reply(cx, err, q, mem, p, size, 0, 0, ev, false);
        return;
    }
    staged *s = size && mem && q ? staged_new(cx, token, size, size, 1, 0, 1, 0) : NULL;
    if (!s) { /* nothing to stage (the library's own error), or no memory: as before */
        p = clEnqueueMapBuffer(q, mem, CL_TRUE, flags, offset, size, nwait, wait,
                               want_ev ? &ev : NULL, &err);
        map_reply(cx, err == CL_SUCCESS && size ? CL_OUT_OF_HOST_MEMORY : err, q, mem, p, size,
                  0, 0, ev, false);
        return;
    }
    err = clEnqueueReadBuffer(q, mem, CL_FALSE, offset, size, s->buf, nwait, wait, &s->r1);
    one_map a = {q, mem, flags, offset, size, NULL, CL_SUCCESS};
    cl_event gate = NULL, r1 = s->r1;
    err = staged_finish(cx, s, err, q, map_of_buffer, &a, &ev, &gate);
    map_reply_staged(cx, err, q, mem, a.p, size, 0, 0, want_ev ? ev : NULL, false, gate, r1);
    if (ev && !want_ev)
        clReleaseEvent(ev);
}

/* The bytes a map of region of image spans at these pitches (0: none). */
static uint64_t image_map_size(cl_mem mem, const size_t *region, size_t row, size_t slice)
{
    cl_mem_object_type type = 0;
    size_t elem = 0;
    clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, NULL);
    clGetImageInfo(mem, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL);
    size_t rp = row ? row : elem * region[0];
    if (type == CL_MEM_OBJECT_IMAGE3D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        return (uint64_t)slice * (region[2] - 1) + (uint64_t)rp * (region[1] - 1) +
               elem * region[0];
    if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        return (uint64_t)slice * (region[1] - 1) + elem * region[0];
    return (uint64_t)rp * (region[1] - 1) + elem * region[0];
}

/* A staged (non-blocking) image map: its pitches are known only once the
 * map is enqueued, and the read R1 that brings the bytes must use them, so
 * the map itself (R2, the application's event) goes first, waiting for a
 * marker M (the map's wait list, and on an in-order queue everything before
 * it) and for the gate; R1 reads after M on a queue of its own (on q it
 * would wait for R2). Returns the reply's error; *p, *row, *slice, *size,
 * *ev (R2), *gate, *r1 as map_reply_staged takes them. */
static cl_int map_image_staged(apigen_call_ctx *cx, uint64_t token, cl_command_queue q,
                               cl_mem mem, cl_map_flags flags, const size_t *origin,
                               const size_t *region, cl_uint nwait, const cl_event *wait,
                               void **p, size_t *row, size_t *slice, uint64_t *size,
                               cl_event *ev, cl_event *gate, cl_event *r1)
{
    cl_context ctx = NULL;
    cl_device_id dev = NULL;
    cl_event m = NULL;
    cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    cl_event g = err == CL_SUCCESS ? clCreateUserEvent(ctx, &err) : NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q, nwait, wait, &m);
    if (err != CL_SUCCESS) {
        if (g)
            clReleaseEvent(g);
        return err;
    }
    cl_event deps[2] = {m, g};
    *p = clEnqueueMapImage(q, mem, CL_FALSE, flags, origin, region, row, slice, 2, deps, ev,
                           &err);
    staged *s = NULL;
    cl_command_queue q2 = NULL;
    if (err == CL_SUCCESS) {
        *size = image_map_size(mem, region, *row, *slice);
        cl_mem_object_type type = 0;
        size_t elem = 0;
        clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, NULL);
        clGetImageInfo(mem, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL);
        bool arr1 = type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
        bool three = type == CL_MEM_OBJECT_IMAGE3D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
        if (*size > cx->budget)
            err = CL_OUT_OF_HOST_MEMORY;
        else if (!(s = staged_new(cx, token, *size, elem * region[0], arr1 ? 1 : region[1],
                                  *row, arr1 ? region[1] : three ? region[2] : 1, *slice)))
            err = CL_OUT_OF_HOST_MEMORY;
        else
            memset(s->buf, 0, *size ? *size : 1); /* the gaps between rows go to the guest too */
        if (err == CL_SUCCESS)
            q2 = clCreateCommandQueue(ctx, dev, 0, &err);
        /* ReadImage's pitches: 1D and 2D images take no slice pitch; a 1D
         * array's images are its slices, which PoCL spaces by the row pitch
         * (the OpenCL spec by the slice pitch): both are the map's slice pitch */
        if (err == CL_SUCCESS)
            err = clEnqueueReadImage(q2, mem, CL_FALSE, origin, region, arr1 ? *slice : *row,
                                     three || arr1 ? *slice : 0, s->buf, 1, &m, &s->r1);
        if (q2) {
            clFlush(q2);
            clReleaseCommandQueue(q2); /* it goes once R1 ran */
        }
    }
    /* R2 keeps its own references to the gate and M until it completes (as
     * staged_finish's tail: PoCL may still notify R2 through them) */
    staged_tail *t = err == CL_SUCCESS ? calloc(1, sizeof *t) : NULL;
    if (err == CL_SUCCESS && !t)
        err = CL_OUT_OF_HOST_MEMORY;
    if (t) {
        *t = (staged_tail){g, m, NULL};
        clRetainEvent(g);
        if (clSetEventCallback(*ev, CL_COMPLETE, staged_tail_done, t) != CL_SUCCESS) {
            clReleaseEvent(g);
            free(t);
            err = CL_OUT_OF_HOST_MEMORY;
        } else {
            m = NULL; /* the tail's */
        }
    }
    if (err == CL_SUCCESS) {
        s->gate = g;
        pthread_mutex_lock(&staged_mu);
        s->next = staged_list;
        staged_list = s;
        pthread_mutex_unlock(&staged_mu);
        s->hid = apigen_handle_put_owned(cx, &ht_staged, s);
        if (!s->hid) {
            staged_destroy(s); /* the gate fails: R2 goes */
            err = CL_OUT_OF_HOST_MEMORY;
        }
        g = NULL;
    }
    if (err != CL_SUCCESS) {
        if (g) /* R2, if enqueued, fails */
            clSetUserEventStatus(g, err);
        if (*ev) { /* it ran (failed) before its wait list goes */
            clWaitForEvents(1, ev);
            clReleaseEvent(*ev);
            *ev = NULL;
        }
        if (s && g)
            staged_destroy(s);
        if (g)
            clReleaseEvent(g);
        if (m)
            clReleaseEvent(m);
        if (*p) { /* a failed map maps nothing; a mapped one goes */
            clEnqueueUnmapMemObject(q, mem, *p, 0, NULL, NULL);
            *p = NULL;
        }
        return err;
    }
    if (m)
        clReleaseEvent(m);
    *gate = s->gate;
    *r1 = s->r1;
    return CL_SUCCESS;
}

void opencl_host_clEnqueueMapImage(apigen_call_ctx *cx)
{
    uint64_t vq, vm, flags, ol, rl;
    uint32_t blocking;
    uint8_t want_row, want_slice, want_ev;
    const void *ob, *rb;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    if (!apigen_get_u64(cx->rd, &vq) || !apigen_get_u64(cx->rd, &vm) ||
        !apigen_get_u32(cx->rd, &blocking) || !apigen_get_u64(cx->rd, &flags) ||
        !apigen_get_opt_bytes(cx->rd, &ob, &ol, 3 * sizeof(size_t)) ||
        (ob && ol != 3 * sizeof(size_t)) ||
        !apigen_get_opt_bytes(cx->rd, &rb, &rl, 3 * sizeof(size_t)) ||
        (rb && rl != 3 * sizeof(size_t)) || !apigen_get_u8(cx->rd, &want_row) ||
        !apigen_get_u8(cx->rd, &want_slice) || !get_wait_list(cx, "cl_event", &nwait, &wait) ||
        !apigen_get_u8(cx->rd, &want_ev))
        return bad(cx, "clEnqueueMapImage");
    uint64_t token = 0; /* staged (blocking bit 1): guest.c */
    if (((blocking & 2) && !apigen_get_u64(cx->rd, &token)) || !apigen_rd_done(cx->rd))
        return bad(cx, "clEnqueueMapImage");
    const size_t *region = rb;
    cl_command_queue q = real_of(cx, "cl_command_queue", vq);
    cl_mem mem = real_of(cx, "cl_mem", vm);
    size_t row = 0, slice = 0;
    cl_int err = CL_SUCCESS;
    void *p = NULL;
    if (mem && image_box_bad(mem, ob, region)) { /* the reply would read past the image */
        err = CL_INVALID_VALUE;
    } else if (token && want_row && q && mem && ob && region) {
        uint64_t size = 0;
        cl_event gate = NULL, r1 = NULL;
        err = map_image_staged(cx, token, q, mem, flags, ob, region, nwait, wait, &p, &row,
                               &slice, &size, &ev, &gate, &r1);
        map_reply_staged(cx, err, q, mem, p, size, row, slice, want_ev ? ev : NULL, false, gate,
                         r1);
        if (ev && !want_ev)
            clReleaseEvent(ev);
        return;
    } else {
        /* blocking, or non-blocking without bytes (CL_MAP_WRITE_INVALIDATE_REGION,
         * token 0), or malformed (the library's own error, blocking) */
        bool nb = (blocking & 2) && !token && (flags & CL_MAP_WRITE_INVALIDATE_REGION);
        p = clEnqueueMapImage(q, mem, nb ? CL_FALSE : CL_TRUE, flags, ob, region,
                              want_row ? &row : NULL,
                              want_slice ? &slice : &slice, nwait, wait, want_ev ? &ev : NULL,
                              &err);
    }
    if (!want_row && err == CL_SUCCESS) /* row pitch is required; the implementation checks */
        row = 0;
    uint64_t size = 0;
    if (err == CL_SUCCESS) {
        size = image_map_size(mem, region, row, slice);
        if (size > cx->budget) {
            clEnqueueUnmapMemObject(q, mem, p, 0, NULL, NULL);
            apigen_reject(cx, APIGEN_TOO_LARGE, "region");
            return;
        }
    }
    map_reply(cx, err, q, mem, p, size, row, slice, ev, !(flags & CL_MAP_WRITE_INVALIDATE_REGION));
}

void opencl_host_clEnqueueUnmapMemObject(apigen_call_ctx *cx)
{
    uint64_t vq, vm, vmap, n;
    const void *bytes;
    uint8_t want_ev;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    if (!apigen_get_u64(cx->rd, &vq) || !apigen_get_u64(cx->rd, &vm) ||
        !apigen_get_u64(cx->rd, &vmap) || !apigen_get_opt_bytes(cx->rd, &bytes, &n, cx->budget) ||
        !get_wait_list(cx, "cl_event", &nwait, &wait) || !apigen_get_u8(cx->rd, &want_ev) ||
        !apigen_rd_done(cx->rd))
        return bad(cx, "clEnqueueUnmapMemObject");
    cl_command_queue q = real_of(cx, "cl_command_queue", vq);
    cl_mem mem = real_of(cx, "cl_mem", vm);
    host_mapping *m = NULL;
    void *r = NULL;
    if (vmap && apigen_handle_lookup(cx->session, &ht_mapping, vmap, &r))
        m = r;
    if (m && m->mem != mem)
        m = NULL; /* a mapping of another object: as OpenCL says for a wrong pointer */
    if (m && bytes && n != m->size)
        return bad(cx, "mapped bytes");
    if (m && bytes)
        memcpy(m->ptr, bytes, n);
    /* an unknown mapping: a pointer the implementation never returned */
    static char not_mapped;
    cl_int err = clEnqueueUnmapMemObject(q, mem, m ? m->ptr : &not_mapped, nwait, wait,
                                         want_ev ? &ev : NULL);
    apigen_result(cx, err);
    uint64_t evid = 0;
    if (err == CL_SUCCESS && m) {
        clReleaseCommandQueue(m->queue);
        clReleaseMemObject(m->mem);
        m->queue = NULL;
        mapping_gate_close(m);
        apigen_handle_drop(cx, &ht_mapping, vmap);
        free(m);
    }
    if (err == CL_SUCCESS && ev)
        evid = apigen_handle_put_owned(cx, ht("cl_event"), ev);
    if (!apigen_put_u32(cx->wr, (uint32_t)err) || !apigen_put_u64(cx->wr, evid))
        return;
}

/* ---- shared virtual memory ------------------------------------------------------------
 * An allocation is a handle of a private type (released with the client:
 * clSVMFree) plus a range in the runtime's device-address table, against
 * which every SVM address a client sends is checked (apigen_dev_owned), so a
 * client can only name bytes inside its own allocations. */
typedef struct host_svm {
    cl_context context;
    void *ptr;
} host_svm;

static void svm_destroy(void *real)
{
    host_svm *m = real;
    if (m->ptr) {
        clSVMFree(m->context, m->ptr);
        clReleaseContext(m->context);
    }
    free(m);
}

static const apigen_handle_type ht_svm = {"opencl svm", 0x53564d00u, svm_destroy, NULL, 0, 0, NULL, 0};

static bool svm_ok(apigen_call_ctx *cx, const void *p, uint64_t extent)
{
    return p && apigen_dev_owned(cx->session, (uint64_t)(uintptr_t)p, extent, true);
}

/* request: u64 context, u64 flags, u64 size, u32 alignment
 * reply: u64 address (0: failed), u64 allocation id */
void opencl_host_clSVMAlloc(apigen_call_ctx *cx)
{
    uint64_t vctx, flags, size;
    uint32_t alignment;
    if (!apigen_get_u64(cx->rd, &vctx) || !apigen_get_u64(cx->rd, &flags) ||
        !apigen_get_u64(cx->rd, &size) || !apigen_get_u32(cx->rd, &alignment) ||
        !apigen_rd_done(cx->rd))
        return bad(cx, "clSVMAlloc");
    if (size > cx->budget) {
        apigen_reject(cx, APIGEN_TOO_LARGE, "size");
        return;
    }
    cl_context ctx = real_of(cx, "cl_context", vctx);
    host_svm *m = malloc(sizeof *m);
    void *p = ctx && m && !(flags & (CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS))
                  ? clSVMAlloc(ctx, flags, size, alignment)
                  : NULL;
    uint64_t id = 0;
    if (p) {
        clRetainContext(ctx);
        *m = (host_svm){ctx, p};
        if (!apigen_dev_add(cx, (uint64_t)(uintptr_t)p, size)) {
            svm_destroy(m);
            return;
        }
        id = apigen_handle_put_owned(cx, &ht_svm, m);
        if (!id) { /* rejected (no memory): the range and the allocation go */
            if (apigen_dev_take(cx, (uint64_t)(uintptr_t)p, "svm"))
                apigen_dev_end(cx, true);
            svm_destroy(m);
            return;
        }
    } else {
        free(m);
    }
    if (!apigen_put_u64(cx->wr, id ? (uint64_t)(uintptr_t)p : 0) || !apigen_put_u64(cx->wr, id))
        return;
}

/* request: u64 context, u64 allocation id */
void opencl_host_clSVMFree(apigen_call_ctx *cx)
{
    uint64_t vctx, id;
    void *r = NULL;
    if (!apigen_get_u64(cx->rd, &vctx) || !apigen_get_u64(cx->rd, &id) || !apigen_rd_done(cx->rd))
        return bad(cx, "clSVMFree");
    if (!apigen_handle_lookup(cx->session, &ht_svm, id, &r) || !r)
        return; /* not an allocation of this client: nothing to free */
    host_svm *m = r;
    if (!apigen_dev_take(cx, (uint64_t)(uintptr_t)m->ptr, "svm"))
        return;
    apigen_dev_end(cx, true);
    clSVMFree(m->context, m->ptr);
    clReleaseContext(m->context);
    m->ptr = NULL;
    apigen_handle_drop(cx, &ht_svm, id); /* frees m */
}

/* blocking_copy: bit 0 blocking, bit 1 dst_ptr and bit 2 src_ptr are SVM
 * addresses (else buffers of this call: then the copy completes here). */
cl_int opencl_host_clEnqueueSVMMemcpy(apigen_call_ctx *cx, cl_command_queue q,
                                      cl_bool blocking_copy, void *dst_ptr, const void *src_ptr,
                                      size_t size, cl_uint nwait, const cl_event *wait,
                                      cl_event *event)
{
    bool dsvm = blocking_copy & 2, ssvm = blocking_copy & 4;
    if (!dst_ptr || !src_ptr)
        return CL_INVALID_VALUE;
    if ((dsvm && !svm_ok(cx, dst_ptr, size)) || (ssvm && !svm_ok(cx, src_ptr, size)))
        return CL_INVALID_VALUE; /* outside the client's SVM allocations */
    cl_bool blocking = (dsvm && ssvm) ? (blocking_copy & 1) != 0 : CL_TRUE;
    return clEnqueueSVMMemcpy(q, blocking, dst_ptr, src_ptr, size, nwait, wait, event);
}

cl_int opencl_host_clEnqueueSVMMemFill(apigen_call_ctx *cx, cl_command_queue q, void *svm_ptr,
                                       const void *pattern, size_t pattern_size, size_t size,
                                       cl_uint nwait, const cl_event *wait, cl_event *event)
{
    if (!svm_ok(cx, svm_ptr, size))
        return CL_INVALID_VALUE;
    return clEnqueueSVMMemFill(q, svm_ptr, pattern, pattern_size, size, nwait, wait, event);
}

cl_int opencl_host_clEnqueueSVMMigrateMem(apigen_call_ctx *cx, cl_command_queue q, cl_uint n,
                                          const void **svm_pointers, const size_t *sizes,
                                          cl_mem_migration_flags flags, cl_uint nwait,
                                          const cl_event *wait, cl_event *event)
{
    for (cl_uint i = 0; svm_pointers && i < n; i++)
        if (!svm_ok(cx, svm_pointers[i], sizes && sizes[i] ? sizes[i] : 1))
            return CL_INVALID_VALUE;
    return clEnqueueSVMMigrateMem(q, n, svm_pointers, sizes, flags, nwait, wait, event);
}

cl_int opencl_host_clSetKernelArgSVMPointer(apigen_call_ctx *cx, cl_kernel kernel,
                                            cl_uint arg_index, const void *arg_value)
{
    if (arg_value && !svm_ok(cx, arg_value, 1))
        return CL_INVALID_ARG_VALUE;
    return clSetKernelArgSVMPointer(kernel, arg_index, arg_value);
}

cl_int opencl_host_clSetKernelExecInfo(apigen_call_ctx *cx, cl_kernel kernel,
                                       cl_kernel_exec_info param_name, size_t param_value_size,
                                       const void *param_value)
{
    if (param_name == CL_KERNEL_EXEC_INFO_SVM_PTRS) {
        if (!param_value || param_value_size % sizeof(void *) != 0)
            return CL_INVALID_VALUE;
        for (size_t i = 0; i < param_value_size / sizeof(void *); i++) {
            void *p;
            memcpy(&p, (const char *)param_value + i * sizeof p, sizeof p);
            if (!svm_ok(cx, p, 1))
                return CL_INVALID_VALUE;
        }
    } else if (param_name != CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM) {
        return CL_INVALID_VALUE; /* values the server cannot check */
    }
    return clSetKernelExecInfo(kernel, param_name, param_value_size, param_value);
}
