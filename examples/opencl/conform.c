/* Conformance corners (issue 20), each printed so that the output natively
 * and forwarded must be identical:
 *   errors  every error OpenCL gives an enqueue comes back from that enqueue
 *           (and no later call returns it: the clFinish after each prints 0)
 *   events  non-blocking reads of a large buffer and of an image behind user
 *           events set later, by this thread and by threads started after
 *           the enqueue, with callbacks that check the bytes already landed;
 *           reads released last first, each completing while the earlier
 *           ones still wait; non-blocking maps of buffers and images behind
 *           user events; wait-list events released before their commands
 *           ran; a non-blocking read's profiling times (the read's own); a
 *           blocking read released by another thread
 *   info    CL_MEM_FLAGS / CL_MEM_HOST_PTR as created, USE_HOST_PTR seen at
 *           map, blocking read and clFinish, CL_PROGRAM_BUILD_OPTIONS as given
 *   structs handles inside structs and lists: cl_image_desc.buffer /
 *           mem_object, CL_CONTEXT_PLATFORM, sub-buffer regions
 *   load N  all of the above from N threads at once (prints one line)
 * No argument: errors, events, info, structs. */
#include "common.h"

#include <pthread.h>

#define P(call)                                                                            \
    do {                                                                                   \
        cl_int r_ = (call);                                                                \
        if (!quiet)                                                                        \
            printf("%-60s = %d\n", #call, (int)r_);                                        \
        bad += r_ != CL_SUCCESS;                                                           \
    } while (0)

static const char *src =
    "__kernel void two(__global int *a, __global int *b) { a[get_global_id(0)] = b[0]; }\n"
    "__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
    "void fixed(__global int *a) { a[get_global_id(0)] = 1; }\n"
    "__kernel void fill(__global int *a, int v) { a[get_global_id(0)] = v; }\n";

typedef struct {
    cl_platform_id platform;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
} env;

static void setup(env *e)
{
    cl_int err;
    first_device(&e->platform, &e->dev);
    e->ctx = clCreateContext(NULL, 1, &e->dev, NULL, NULL, &err);
    CHECK(err);
    e->q = clCreateCommandQueue(e->ctx, e->dev, 0, &err);
    CHECK(err);
}

static void teardown(env *e)
{
    CHECK(clFinish(e->q));
    CHECK(clReleaseCommandQueue(e->q));
    CHECK(clReleaseContext(e->ctx));
}

static cl_program build_opts(env *e, const char *opts)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &e->dev, opts, NULL, NULL));
    return p;
}

/* ---- errors at the enqueue ------------------------------------------------------ */

/* quiet (the load test): each enqueue's result goes to got[] instead, for
 * the caller to compare with a single-threaded run's */
#define NGOT 64
static int errors(env *e, int quiet, cl_int *got)
{
    cl_int err;
    int bad = 0, ngot = 0;
#define E(want, call)                                                                      \
    do {                                                                                   \
        cl_int got_ = (call);                                                              \
        (void)(want);                                                                      \
        if (!quiet)                                                                        \
            printf("%-60s = %d\n", #call, (int)got_);                                      \
        if (got && ngot < NGOT)                                                            \
            got[ngot++] = got_;                                                            \
        cl_int fin_ = clFinish(e->q); /* never the enqueue's error */                      \
        if (fin_ != CL_SUCCESS) {                                                          \
            printf("clFinish after %s = %d\n", #call, (int)fin_);                          \
            bad++;                                                                         \
        }                                                                                  \
    } while (0)
    cl_program p = build_opts(e, "");
    cl_program pu = build_opts(e, "-cl-uniform-work-group-size");
    cl_program p12 = build_opts(e, "-cl-std=CL1.2");
    cl_mem a = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    cl_kernel two = clCreateKernel(p, "two", &err);
    CHECK(err);
    cl_kernel fixed = clCreateKernel(p, "fixed", &err);
    CHECK(err);
    cl_kernel fu = clCreateKernel(pu, "fill", &err);
    CHECK(err);
    cl_kernel f12 = clCreateKernel(p12, "fill", &err);
    CHECK(err);
    int v = 7;
    CHECK(clSetKernelArg(fu, 0, sizeof a, &a));
    CHECK(clSetKernelArg(fu, 1, sizeof v, &v));
    CHECK(clSetKernelArg(f12, 0, sizeof a, &a));
    CHECK(clSetKernelArg(f12, 1, sizeof v, &v));
    CHECK(clSetKernelArg(fixed, 0, sizeof a, &a));
    size_t g10 = 10, g8 = 8, l4 = 4, l8 = 8, l3 = 3, g_big = 1 << 20, l_big = 1 << 20;
    cl_event ev = NULL;

    /* a NULL queue */
    E(CL_INVALID_COMMAND_QUEUE, clEnqueueMarkerWithWaitList(NULL, 0, NULL, NULL));
    E(CL_INVALID_COMMAND_QUEUE, clEnqueueBarrierWithWaitList(NULL, 0, NULL, NULL));
    E(CL_INVALID_COMMAND_QUEUE, clEnqueueMarkerWithWaitList(NULL, 0, NULL, &ev));
    E(CL_INVALID_EVENT_WAIT_LIST, clEnqueueMarkerWithWaitList(e->q, 1, NULL, NULL));
    E(CL_INVALID_COMMAND_QUEUE, clEnqueueNDRangeKernel(NULL, fu, 1, NULL, &g8, NULL, 0, NULL, NULL));
    E(CL_INVALID_COMMAND_QUEUE, clEnqueueCopyBuffer(NULL, a, b, 0, 0, 4, 0, NULL, NULL));
    /* work-group sizes */
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(e->q, f12, 1, NULL, &g10, &l4, 0, NULL, NULL));
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(e->q, fu, 1, NULL, &g10, &l4, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueNDRangeKernel(e->q, fu, 1, NULL, &g8, &l4, 0, NULL, NULL));
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(e->q, fixed, 1, NULL, &g8, &l8, 0, NULL, NULL));
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(e->q, fixed, 1, NULL, &g8, NULL, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueNDRangeKernel(e->q, fixed, 1, NULL, &g8, &l4, 0, NULL, NULL));
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(e->q, f12, 1, NULL, &g8, &l3, 0, NULL, NULL));
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(e->q, f12, 1, NULL, &g_big, &l_big, 0, NULL, NULL));
    E(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(e->q, f12, 0, NULL, &g8, NULL, 0, NULL, NULL));
    /* four dimensions' sizes, as a valid call would pass (the stub copies work_dim of them) */
    size_t g8x4[4] = {8, 1, 1, 1};
    E(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(e->q, f12, 4, NULL, g8x4, NULL, 0, NULL, NULL));
    E(CL_INVALID_VALUE, clEnqueueNDRangeKernel(e->q, f12, 1, NULL, NULL, NULL, 0, NULL, NULL));
    E(CL_INVALID_WORK_GROUP_SIZE, clEnqueueTask(e->q, fixed, 0, NULL, NULL));
    /* arguments not all set, cloned kernels included */
    E(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(e->q, two, 1, NULL, &g8, NULL, 0, NULL, NULL));
    E(CL_INVALID_KERNEL_ARGS, clEnqueueTask(e->q, two, 0, NULL, NULL));
    CHECK(clSetKernelArg(two, 0, sizeof a, &a));
    E(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(e->q, two, 1, NULL, &g8, NULL, 0, NULL, NULL));
    cl_kernel clone = clCloneKernel(two, &err);
    CHECK(err);
    E(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(e->q, clone, 1, NULL, &g8, NULL, 0, NULL, NULL));
    CHECK(clSetKernelArg(clone, 1, sizeof b, &b));
    E(CL_SUCCESS, clEnqueueNDRangeKernel(e->q, clone, 1, NULL, &g8, NULL, 0, NULL, NULL));
    E(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(e->q, two, 1, NULL, &g8, NULL, 0, NULL, NULL));
    CHECK(clSetKernelArg(two, 1, sizeof b, &b));
    cl_kernel clone2 = clCloneKernel(two, &err);
    CHECK(err);
    E(CL_SUCCESS, clEnqueueNDRangeKernel(e->q, two, 1, NULL, &g8, NULL, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueNDRangeKernel(e->q, clone2, 1, NULL, &g8, NULL, 0, NULL, NULL));
    cl_kernel k3 = clCreateKernel(p, "two", &err); /* a fresh kernel: nothing set */
    CHECK(err);
    E(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(e->q, k3, 1, NULL, &g8, NULL, 0, NULL, NULL));
    /* overlapping copies within one buffer */
    size_t o0[3] = {0, 0, 0}, o1[3] = {8, 2, 0}, o2[3] = {0, 8, 0}, r[3] = {16, 4, 1};
    E(CL_MEM_COPY_OVERLAP, clEnqueueCopyBufferRect(e->q, a, a, o0, o1, r, 64, 0, 64, 0, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueCopyBufferRect(e->q, a, a, o0, o2, r, 64, 0, 64, 0, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueCopyBufferRect(e->q, a, b, o0, o1, r, 64, 0, 64, 0, 0, NULL, NULL));
    E(CL_INVALID_VALUE, clEnqueueCopyBufferRect(e->q, a, b, o0, o2, r, 16, 0, 64, 0, 0, NULL, NULL));
    size_t rbig[3] = {64, 65, 1};
    E(CL_INVALID_VALUE, clEnqueueCopyBufferRect(e->q, a, b, o0, o0, rbig, 64, 0, 64, 0, 0, NULL, NULL));
    E(CL_MEM_COPY_OVERLAP, clEnqueueCopyBuffer(e->q, a, a, 0, 16, 32, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueCopyBuffer(e->q, a, a, 0, 32, 32, 0, NULL, NULL));
    E(CL_INVALID_VALUE, clEnqueueCopyBuffer(e->q, a, b, 4000, 0, 200, 0, NULL, NULL));
    E(CL_INVALID_VALUE, clEnqueueFillBuffer(e->q, a, &v, sizeof v, 4094, 4, 0, NULL, NULL));
    /* a sub-buffer overlapping its parent */
    cl_buffer_region reg = {1024, 1024};
    cl_mem sub = clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    CHECK(err);
    E(CL_MEM_COPY_OVERLAP, clEnqueueCopyBuffer(e->q, a, sub, 1000, 0, 100, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueCopyBuffer(e->q, a, sub, 0, 0, 100, 0, NULL, NULL));
    /* non-blocking writes past the end, migrations */
    int host[64] = {0};
    E(CL_INVALID_VALUE, clEnqueueWriteBuffer(e->q, a, CL_FALSE, 4090, sizeof host, host, 0, NULL, NULL));
    char *rows = calloc(1, 64 * 65); /* room for the whole rectangle: only the buffer is short */
    E(CL_INVALID_VALUE, clEnqueueWriteBufferRect(e->q, a, CL_FALSE, o0, o0, rbig, 64, 0, 64, 0, rows, 0, NULL, NULL));
    free(rows);
    E(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(e->q, 0, NULL, 0, 0, NULL, NULL));
    E(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(e->q, 1, &a, 1u << 7, 0, NULL, NULL));
    E(CL_SUCCESS, clEnqueueMigrateMemObjects(e->q, 1, &a, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    /* image commands past the image's edge */
    cl_bool images = CL_FALSE;
    CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (images) {
        cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
        cl_image_desc d = {CL_MEM_OBJECT_IMAGE2D, 8, 8, 1, 1, 0, 0, 0, 0, {NULL}};
        cl_mem img = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &fmt, &d, NULL, &err);
        CHECK(err);
        size_t io[3] = {4, 4, 0}, ir[3] = {8, 2, 1}, ok3[3] = {4, 4, 1};
        cl_uint4 color = {{1, 2, 3, 4}};
        int pix[64] = {0};
        E(CL_INVALID_VALUE, clEnqueueFillImage(e->q, img, &color, io, ir, 0, NULL, NULL));
        E(CL_SUCCESS, clEnqueueFillImage(e->q, img, &color, io, ok3, 0, NULL, NULL));
        E(CL_INVALID_VALUE, clEnqueueWriteImage(e->q, img, CL_FALSE, io, ir, 0, 0, pix, 0, NULL, NULL));
        E(CL_INVALID_VALUE, clEnqueueReadImage(e->q, img, CL_FALSE, io, ir, 0, 0, pix, 0, NULL, NULL));
        E(CL_SUCCESS, clEnqueueReadImage(e->q, img, CL_FALSE, io, ok3, 0, 0, pix, 0, NULL, NULL));
        cl_image_format fl = {CL_R, CL_FLOAT};
        cl_mem img2 = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &fl, &d, NULL, &err);
        CHECK(err);
        E(CL_IMAGE_FORMAT_MISMATCH, clEnqueueCopyImage(e->q, img, img2, o0, o0, ok3, 0, NULL, NULL));
        E(CL_INVALID_VALUE, clEnqueueCopyImageToBuffer(e->q, img, a, o0, ok3, 4090, 0, NULL, NULL));
        E(CL_SUCCESS, clEnqueueCopyImageToBuffer(e->q, img, a, o0, ok3, 0, 0, NULL, NULL));
        E(CL_SUCCESS, clEnqueueCopyBufferToImage(e->q, a, img, 0, o0, ok3, 0, NULL, NULL));
        P(clReleaseMemObject(img2));
        P(clReleaseMemObject(img));
    }
    /* the releases that follow report nothing of the above */
    P(clReleaseMemObject(sub));
    P(clReleaseKernel(k3));
    P(clReleaseKernel(clone2));
    P(clReleaseKernel(clone));
    P(clReleaseKernel(two));
    P(clReleaseKernel(fixed));
    P(clReleaseKernel(fu));
    P(clReleaseKernel(f12));
    P(clReleaseMemObject(a));
    P(clReleaseMemObject(b));
    P(clReleaseProgram(p));
    P(clReleaseProgram(pu));
    P(clReleaseProgram(p12));
#undef E
    return bad;
}

/* ---- non-blocking reads behind user events ------------------------------------------ */

#define BIG (51u << 20) /* 51 MB, as the conformance suite's event tests */

typedef struct {
    const unsigned char *ptr;
    size_t n;
    unsigned char want;
    volatile int landed; /* 1: the callback saw the bytes, 2: it did not */
} land_check;

static void CL_CALLBACK on_read(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    land_check *c = user;
    int ok = status == CL_COMPLETE;
    for (size_t i = 0; ok && i < c->n; i += 4093)
        ok = c->ptr[i] == c->want;
    ok = ok && c->ptr[c->n - 1] == c->want;
    c->landed = ok ? 1 : 2;
}

typedef struct {
    cl_event user;
    cl_int status;
} setter;

static void *set_later(void *arg)
{
    setter *s = arg;
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    CHECK(clSetUserEventStatus(s->user, s->status));
    return NULL;
}

/* One large read behind a user event; who: 0 this thread, 1 a new thread. */
static int read_behind(env *e, cl_mem big, unsigned char *host, unsigned char val, int who,
                       int quiet)
{
    cl_int err;
    cl_event u = clCreateUserEvent(e->ctx, &err), rd = NULL;
    CHECK(err);
    memset(host, 0, BIG);
    land_check c = {host, BIG, val, 0};
    CHECK(clEnqueueFillBuffer(e->q, big, &val, 1, 0, BIG, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(e->q, big, CL_FALSE, 0, BIG, host, 1, &u, &rd));
    CHECK(clSetEventCallback(rd, CL_COMPLETE, on_read, &c));
    cl_int st = 0;
    CHECK(clGetEventInfo(rd, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    cl_command_type ty = 0;
    CHECK(clGetEventInfo(rd, CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL));
    pthread_t t;
    setter s = {u, CL_COMPLETE};
    if (who)
        pthread_create(&t, NULL, set_later, &s);
    else
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &rd));
    if (who)
        pthread_join(t, NULL);
    int ok = host[0] == val && host[BIG / 2] == val && host[BIG - 1] == val;
    wait_flag(&c.landed);
    if (!quiet)
        printf("read %u MB behind a user event set by %s: queued before the set %d, type %#x, "
               "bytes %s, callback %s\n",
               BIG >> 20, who ? "a later thread" : "this thread", st > CL_COMPLETE, ty,
               ok ? "landed" : "WRONG", c.landed == 1 ? "after the bytes" : "BEFORE the bytes");
    CHECK(clReleaseEvent(rd));
    CHECK(clReleaseEvent(u));
    return ok && c.landed == 1 ? 0 : 1;
}

/* Several reads, each behind its own user event, set by threads started
 * after all of them were enqueued, in reverse order. */
static int reads_many(env *e, int quiet)
{
    enum { N = 4, SZ = 1 << 20 };
    cl_int err;
    cl_mem bufs[N];
    unsigned char *hosts[N];
    cl_event us[N], rds[N];
    land_check cs[N];
    setter ss[N];
    pthread_t ts[N];
    cl_command_queue oq = clCreateCommandQueue(e->ctx, e->dev,
                                               CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (err != CL_SUCCESS)
        oq = e->q, clRetainCommandQueue(oq);
    for (int i = 0; i < N; i++) {
        unsigned char val = (unsigned char)(0x30 + i);
        bufs[i] = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, SZ, NULL, &err);
        CHECK(err);
        CHECK(clEnqueueFillBuffer(oq, bufs[i], &val, 1, 0, SZ, 0, NULL, NULL));
    }
    CHECK(clFinish(oq));
    for (int i = 0; i < N; i++) {
        unsigned char val = (unsigned char)(0x30 + i);
        hosts[i] = calloc(1, SZ);
        us[i] = clCreateUserEvent(e->ctx, &err);
        CHECK(err);
        cs[i] = (land_check){hosts[i], SZ, val, 0};
        CHECK(clEnqueueReadBuffer(oq, bufs[i], CL_FALSE, 0, SZ, hosts[i], 1, &us[i], &rds[i]));
        CHECK(clSetEventCallback(rds[i], CL_COMPLETE, on_read, &cs[i]));
    }
    for (int i = N - 1; i >= 0; i--) {
        ss[i] = (setter){us[i], CL_COMPLETE};
        pthread_create(&ts[i], NULL, set_later, &ss[i]);
    }
    CHECK(clWaitForEvents(N, rds));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(ts[i], NULL);
        wait_flag(&cs[i].landed);
        bad += hosts[i][0] != 0x30 + i || hosts[i][SZ - 1] != 0x30 + i || cs[i].landed != 1;
        clReleaseEvent(rds[i]);
        clReleaseEvent(us[i]);
        clReleaseMemObject(bufs[i]);
        free(hosts[i]);
    }
    clReleaseCommandQueue(oq);
    if (!quiet)
        printf("%d reads behind user events set by %d later threads: %s\n", N, N,
               bad ? "WRONG" : "all landed before their callbacks");
    return bad;
}

/* Reads on K queues, each behind its own user event, released last first:
 * each read completes while the reads enqueued before it still wait (no
 * read is held up by another's user event). A read that does not complete
 * within 30 s is reported and the rest released (a bound, not a timing
 * check: natively each completes at once). */
static int reads_last_first(env *e, int quiet)
{
    enum { K = 8, SZ = 4096 };
    cl_int err;
    cl_command_queue qs[K];
    cl_mem bufs[K];
    cl_event us[K], rds[K];
    unsigned char hosts[K][SZ];
    for (int i = 0; i < K; i++) {
        unsigned char val = (unsigned char)(0x60 + i);
        qs[i] = clCreateCommandQueue(e->ctx, e->dev, 0, &err);
        CHECK(err);
        bufs[i] = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, SZ, NULL, &err);
        CHECK(err);
        CHECK(clEnqueueFillBuffer(qs[i], bufs[i], &val, 1, 0, SZ, 0, NULL, NULL));
        CHECK(clFinish(qs[i]));
        us[i] = clCreateUserEvent(e->ctx, &err);
        CHECK(err);
    }
    for (int i = 0; i < K; i++) {
        memset(hosts[i], 0, SZ);
        CHECK(clEnqueueReadBuffer(qs[i], bufs[i], CL_FALSE, 0, SZ, hosts[i], 1, &us[i], &rds[i]));
    }
    int stuck = -1, bad = 0;
    for (int i = K - 1; i >= 0; i--) {
        CHECK(clSetUserEventStatus(us[i], CL_COMPLETE));
        cl_int st = CL_QUEUED;
        for (int n = 0; n < 30000 && st != CL_COMPLETE; n++) {
            CHECK(clGetEventInfo(rds[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
            if (st != CL_COMPLETE)
                nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        if (st != CL_COMPLETE) {
            stuck = i;
            break;
        }
        bad += hosts[i][0] != 0x60 + i || hosts[i][SZ - 1] != 0x60 + i;
    }
    for (int i = stuck - 1; i >= 0; i--) /* after a stuck read: the rest, for the cleanup */
        CHECK(clSetUserEventStatus(us[i], CL_COMPLETE));
    CHECK(clWaitForEvents(K, rds));
    for (int i = 0; i < K; i++) {
        clReleaseEvent(rds[i]);
        clReleaseEvent(us[i]);
        clReleaseMemObject(bufs[i]);
        clReleaseCommandQueue(qs[i]);
    }
    if (!quiet) {
        if (stuck >= 0)
            printf("%d reads on %d queues behind user events released last first: read %d did "
                   "not complete while the reads before it waited\n", K, K, stuck);
        else
            printf("%d reads on %d queues behind user events released last first: %s\n", K, K,
                   bad ? "WRONG bytes" : "each completed while the reads before it waited");
    }
    return stuck >= 0 || bad;
}

/* Events released right after the enqueues that wait for them, before
 * those commands run (the implementation keeps them for the commands): a
 * fill behind a user event set later, then a queued copy, a non-blocking
 * read, a non-blocking map and a marker behind the fill's event, which this
 * thread releases at once; then the same with the release made by another
 * thread while this one's enqueues may still be queued. The bytes and the
 * statuses must be those of a run that kept every event. */
typedef struct {
    cl_event ev;
} releaser;

static void *release_other(void *arg)
{
    releaser *r = arg;
    CHECK(clReleaseEvent(r->ev));
    return NULL;
}

static int released_waits(env *e, int quiet)
{
    enum { SZ = 1 << 16 };
    cl_int err;
    int bad = 0;
    for (int other = 0; other < 2; other++) {
        unsigned char val = (unsigned char)(0x21 + other);
        cl_mem a = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, SZ, NULL, &err);
        CHECK(err);
        cl_mem b = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, SZ, NULL, &err);
        CHECK(err);
        cl_event u = clCreateUserEvent(e->ctx, &err), fill = NULL, copy = NULL, rd = NULL,
                 mev = NULL, mk = NULL, wr = NULL;
        CHECK(err);
        unsigned char zero[64] = {0}; /* a blocking write's event: complete, the server's id */
        CHECK(clEnqueueWriteBuffer(e->q, b, CL_TRUE, 0, sizeof zero, zero, 0, NULL, &wr));
        CHECK(clEnqueueFillBuffer(e->q, a, &val, 1, 0, SZ, 1, &u, &fill));
        cl_event before_copy[2] = {fill, wr};
        CHECK(clEnqueueCopyBuffer(e->q, a, b, 0, 0, SZ, 2, before_copy, &copy));
        unsigned char *host = calloc(1, SZ);
        CHECK(clEnqueueReadBuffer(e->q, a, CL_FALSE, 0, SZ, host, 1, &fill, &rd));
        unsigned char *p = clEnqueueMapBuffer(e->q, b, CL_FALSE, CL_MAP_READ, 0, SZ, 1, &copy,
                                              &mev, &err);
        CHECK(err);
        CHECK(clEnqueueMarkerWithWaitList(e->q, 1, &fill, &mk));
        releaser r = {fill};
        pthread_t t;
        if (other) { /* fill, write and copy go from another thread */
            cl_event gone[3] = {fill, wr, copy};
            for (int i = 0; i < 3; i++) {
                r.ev = gone[i];
                pthread_create(&t, NULL, release_other, &r);
                pthread_join(t, NULL);
            }
        } else {
            CHECK(clReleaseEvent(fill));
            CHECK(clReleaseEvent(wr));
            CHECK(clReleaseEvent(copy));
        }
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        cl_event all[3] = {rd, mev, mk};
        cl_int w = clWaitForEvents(3, all), st[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++)
            CHECK(clGetEventInfo(all[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st[i], &st[i],
                                 NULL));
        int ok = w == CL_SUCCESS && st[0] == CL_COMPLETE && st[1] == CL_COMPLETE &&
                 st[2] == CL_COMPLETE && p && host[0] == val && host[SZ - 1] == val &&
                 p[0] == val && p[SZ - 1] == val;
        CHECK(clEnqueueUnmapMemObject(e->q, b, p, 0, NULL, NULL));
        cl_int fin = clFinish(e->q);
        if (!quiet)
            printf("wait-list events released by %s before their commands ran: wait %d, "
                   "statuses %d %d %d, bytes %s, finish %d\n",
                   other ? "another thread" : "this thread", (int)w, (int)st[0], (int)st[1],
                   (int)st[2], ok ? "landed" : "WRONG", (int)fin);
        bad += !ok || fin != CL_SUCCESS;
        for (int i = 0; i < 3; i++)
            CHECK(clReleaseEvent(all[i]));
        CHECK(clReleaseEvent(u));
        CHECK(clReleaseMemObject(a));
        CHECK(clReleaseMemObject(b));
        free(host);
    }
    return bad;
}

/* A non-blocking read's profiling times are the read's own: in order, and
 * its duration that of a read of all its bytes (at least 1/16 of the least
 * of three blocking reads of the same bytes: forwarded, the event is a
 * one-element read that waits for the bytes to land, whose own times are
 * a thousand times shorter), also when asked before the bytes landed. */
static cl_ulong duration(cl_event ev, int *in_order)
{
    static const cl_profiling_info names[4] = {CL_PROFILING_COMMAND_QUEUED,
                                               CL_PROFILING_COMMAND_SUBMIT,
                                               CL_PROFILING_COMMAND_START,
                                               CL_PROFILING_COMMAND_END};
    cl_ulong t[4] = {0};
    for (int i = 0; i < 4; i++)
        CHECK(clGetEventProfilingInfo(ev, names[i], sizeof t[i], &t[i], NULL));
    *in_order = *in_order && t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] > 0;
    return t[3] - t[2];
}

static int read_times(env *e, int quiet)
{
    enum { SZ = 32 << 20 };
    cl_int err;
    cl_command_queue pq = clCreateCommandQueue(e->ctx, e->dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_mem m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, SZ, NULL, &err);
    CHECK(err);
    unsigned char val = 0x3c, *host = malloc(SZ);
    CHECK(clEnqueueFillBuffer(pq, m, &val, 1, 0, SZ, 0, NULL, NULL));
    int in_order = 1;
    cl_ulong blocking = ~(cl_ulong)0, nonblocking = 0;
    for (int i = 0; i < 3; i++) {
        cl_event ev;
        CHECK(clEnqueueReadBuffer(pq, m, CL_TRUE, 0, SZ, host, 0, NULL, &ev));
        cl_ulong d = duration(ev, &in_order);
        blocking = d < blocking ? d : blocking;
        CHECK(clReleaseEvent(ev));
    }
    cl_int early = CL_SUCCESS;
    for (int i = 0; i < 3; i++) {
        cl_event ev, u = clCreateUserEvent(e->ctx, &err);
        CHECK(err);
        CHECK(clEnqueueReadBuffer(pq, m, CL_FALSE, 0, SZ, host, 1, &u, &ev));
        cl_ulong t = 0;
        if (i == 0) /* not run yet: no times */
            early = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
        if (i == 1)
            CHECK(clRetainEvent(ev)); /* a second reference: the times stay with it */
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        CHECK(clWaitForEvents(1, &ev));
        if (i == 1)
            CHECK(clReleaseEvent(ev));
        cl_ulong d = duration(ev, &in_order);
        nonblocking = d > nonblocking ? d : nonblocking;
        CHECK(clReleaseEvent(ev));
        CHECK(clReleaseEvent(u));
    }
    int whole = nonblocking * 16 >= blocking;
    if (!quiet)
        printf("non-blocking read's profiling times: before it ran %d, in order %d, its duration "
               "a read of all its bytes %d\n", (int)early, in_order, whole);
    CHECK(clReleaseMemObject(m));
    CHECK(clReleaseCommandQueue(pq));
    free(host);
    return !(in_order && whole && early == CL_PROFILING_INFO_NOT_AVAILABLE);
}

/* A failed user event: the read's event fails, no bytes land. */
static int read_failed(env *e, int quiet)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(err);
    cl_event u = clCreateUserEvent(e->ctx, &err), rd = NULL;
    CHECK(err);
    unsigned char host[64];
    memset(host, 0xab, sizeof host);
    CHECK(clEnqueueReadBuffer(e->q, m, CL_FALSE, 0, 64, host, 1, &u, &rd));
    CHECK(clSetUserEventStatus(u, -1234));
    cl_int w = clWaitForEvents(1, &rd), st = 0;
    CHECK(clGetEventInfo(rd, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    if (!quiet)
        printf("read behind a failed user event: wait %d, status %s, host untouched %d\n", (int)w,
               st < 0 ? "negative" : "not negative", host[0] == 0xab && host[63] == 0xab);
    clReleaseEvent(rd);
    clReleaseEvent(u);
    clReleaseMemObject(m);
    /* the queue goes on: a fresh one, as the failed command may poison an in-order queue */
    return st < 0 ? 0 : 1;
}

/* An image read behind a user event set by a later thread, with a callback. */
static int image_behind(env *e, int quiet)
{
    cl_int err;
    cl_bool has = CL_FALSE;
    CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof has, &has, NULL));
    if (!has) {
        if (!quiet)
            printf("no image support\n");
        return 0;
    }
    enum { W = 1024, H = 1024 };
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc d = {CL_MEM_OBJECT_IMAGE2D, W, H, 1, 0, 0, 0, 0, 0, {NULL}};
    cl_mem img = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &fmt, &d, NULL, &err);
    CHECK(err);
    cl_uint4 color = {{9, 9, 9, 9}};
    size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    CHECK(clEnqueueFillImage(e->q, img, &color, origin, region, 0, NULL, NULL));
    unsigned char *host = calloc(1, (size_t)W * H * 4);
    cl_event u = clCreateUserEvent(e->ctx, &err), rd = NULL;
    CHECK(err);
    land_check c = {host, (size_t)W * H * 4, 9, 0};
    CHECK(clEnqueueReadImage(e->q, img, CL_FALSE, origin, region, 0, 0, host, 1, &u, &rd));
    CHECK(clSetEventCallback(rd, CL_COMPLETE, on_read, &c));
    setter s = {u, CL_COMPLETE};
    pthread_t t;
    pthread_create(&t, NULL, set_later, &s);
    CHECK(clFinish(e->q));
    pthread_join(t, NULL);
    wait_flag(&c.landed);
    cl_command_type ty = 0;
    CHECK(clGetEventInfo(rd, CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL));
    int ok = host[0] == 9 && host[(size_t)W * H * 4 - 1] == 9 && c.landed == 1;
    if (!quiet)
        printf("image read behind a user event set by a later thread: type %#x, %s\n", ty,
               ok ? "landed before the callback" : "WRONG");
    clReleaseEvent(rd);
    clReleaseEvent(u);
    clReleaseMemObject(img);
    free(host);
    return !ok;
}

/* A blocking read behind a user event that a thread started before sets. */
static int blocking_behind(env *e, int quiet)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    unsigned char val = 0x5a, host[4096] = {0};
    CHECK(clEnqueueFillBuffer(e->q, m, &val, 1, 0, sizeof host, 0, NULL, NULL));
    cl_event u = clCreateUserEvent(e->ctx, &err);
    CHECK(err);
    setter s = {u, CL_COMPLETE};
    pthread_t t;
    pthread_create(&t, NULL, set_later, &s);
    CHECK(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, sizeof host, host, 1, &u, NULL));
    pthread_join(t, NULL);
    if (!quiet)
        printf("blocking read released by another thread: %s\n",
               host[0] == val && host[4095] == val ? "landed" : "WRONG");
    clReleaseEvent(u);
    clReleaseMemObject(m);
    return !(host[0] == val && host[4095] == val);
}

/* A non-blocking map behind a user event set later by this thread or by a
 * thread started after the map (who), with a callback that checks the
 * mapped bytes are there when the map's event completes. */
static int map_behind(env *e, int who, int quiet)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
    CHECK(err);
    unsigned char val = 0x77;
    CHECK(clEnqueueFillBuffer(e->q, m, &val, 1, 0, 1 << 20, 0, NULL, NULL));
    cl_event u = clCreateUserEvent(e->ctx, &err), mev = NULL;
    CHECK(err);
    unsigned char *p = clEnqueueMapBuffer(e->q, m, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, 1 << 20,
                                          1, &u, &mev, &err);
    CHECK(err);
    land_check c = {p, 1 << 20, val, 0};
    CHECK(clSetEventCallback(mev, CL_COMPLETE, on_read, &c));
    setter st = {u, CL_COMPLETE};
    pthread_t t;
    if (who)
        pthread_create(&t, NULL, set_later, &st);
    else
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &mev));
    if (who)
        pthread_join(t, NULL);
    wait_flag(&c.landed);
    cl_command_type ty = 0;
    CHECK(clGetEventInfo(mev, CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL));
    int ok = p && p[0] == val && p[(1 << 20) - 1] == val && c.landed == 1;
    if (ok)
        p[0] = 1;
    CHECK(clEnqueueUnmapMemObject(e->q, m, p, 0, NULL, NULL));
    unsigned char back = 0;
    CHECK(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, 1, &back, 0, NULL, NULL));
    if (!quiet)
        printf("non-blocking map behind a user event set later by %s: type %#x, %s\n",
               who ? "another thread" : "this thread", ty,
               ok && back == 1 ? "bytes before the callback, written back" : "WRONG");
    clReleaseEvent(mev);
    clReleaseEvent(u);
    clReleaseMemObject(m);
    return !(ok && back == 1);
}

/* A non-blocking image map behind a user event set later by this thread
 * (who 0) or by another (1): it returns at once with its pitches, the bytes
 * are in place before the map's event completes and its callback runs, and
 * what the application writes goes back at unmap. */
typedef struct {
    const unsigned char *p;
    size_t row, w, h;
    unsigned char want;
    volatile int landed; /* 1: the callback saw the pixels, 2: it did not */
} img_check;

static int img_ok(const img_check *c)
{
    int ok = c->p != NULL;
    for (size_t y = 0; ok && y < c->h; y += 17)
        ok = c->p[y * c->row] == c->want && c->p[y * c->row + c->w - 1] == c->want;
    return ok && c->p[(c->h - 1) * c->row + c->w - 1] == c->want;
}

static void CL_CALLBACK on_map_image(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    img_check *c = user;
    c->landed = status == CL_COMPLETE && img_ok(c) ? 1 : 2;
}

static int map_image_behind(env *e, int who, int quiet)
{
    cl_int err;
    cl_bool has = CL_FALSE;
    CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof has, &has, NULL));
    if (!has)
        return 0;
    enum { W = 512, H = 256 };
    unsigned char val = (unsigned char)(0x51 + who);
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc d = {CL_MEM_OBJECT_IMAGE2D, W, H, 1, 0, 0, 0, 0, 0, {NULL}};
    cl_mem img = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &fmt, &d, NULL, &err);
    CHECK(err);
    cl_uint4 color = {{val, val, val, val}};
    size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1}, row = 0, slice = 0;
    CHECK(clEnqueueFillImage(e->q, img, &color, origin, region, 0, NULL, NULL));
    cl_event u = clCreateUserEvent(e->ctx, &err), mev = NULL;
    CHECK(err);
    unsigned char *p = clEnqueueMapImage(e->q, img, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, origin,
                                         region, &row, &slice, 1, &u, &mev, &err);
    CHECK(err);
    cl_int st = 0;
    CHECK(clGetEventInfo(mev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    img_check c = {p, row, (size_t)W * 4, H, val, 0};
    CHECK(clSetEventCallback(mev, CL_COMPLETE, on_map_image, &c));
    setter s = {u, CL_COMPLETE};
    pthread_t t;
    if (who)
        pthread_create(&t, NULL, set_later, &s);
    else
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &mev));
    if (who)
        pthread_join(t, NULL);
    wait_flag(&c.landed);
    cl_command_type ty = 0;
    CHECK(clGetEventInfo(mev, CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL));
    int ok = img_ok(&c) && c.landed == 1;
    if (ok)
        p[0] = 1;
    CHECK(clEnqueueUnmapMemObject(e->q, img, p, 0, NULL, NULL));
    unsigned char back[4] = {0};
    size_t one[3] = {1, 1, 1};
    CHECK(clEnqueueReadImage(e->q, img, CL_TRUE, origin, one, 0, 0, back, 0, NULL, NULL));
    if (!quiet)
        printf("non-blocking image map behind a user event set later by %s: queued before the "
               "set %d, type %#x, row pitch covers a row %d, %s\n",
               who ? "another thread" : "this thread", st > CL_COMPLETE, ty, row >= (size_t)W * 4,
               ok && back[0] == 1 ? "pixels before the callback, written back" : "WRONG");
    clReleaseEvent(mev);
    clReleaseEvent(u);
    clReleaseMemObject(img);
    return !(ok && back[0] == 1);
}

/* Non-blocking maps of a region (not at the origin) of every image kind,
 * each behind a user event: the mapped rows at the map's pitches hold what a
 * blocking read of the region gives, and a write goes back at unmap. */
static int map_image_kinds(env *e, int quiet)
{
    cl_int err;
    cl_bool has = CL_FALSE;
    CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof has, &has, NULL));
    if (!has)
        return 0;
    static const cl_mem_object_type types[5] = {CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_ARRAY,
                                                CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY,
                                                CL_MEM_OBJECT_IMAGE3D};
    static const char *const names[5] = {"1D", "1D array", "2D", "2D array", "3D"};
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    int bad = 0;
    for (int t = 0; t < 5; t++) {
        int arr1 = t == 1, layers = t == 3 || t == 4;
        size_t w = 37, h = t <= 1 ? 1 : 23, depth = t == 4 ? 5 : 1, n = t == 1 ? 9 : 4;
        cl_image_desc d = {types[t], w, h, depth, t == 1 || t == 3 ? n : 1, 0, 0, 0, 0, {NULL}};
        cl_mem img = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &fmt, &d, NULL, &err);
        CHECK(err);
        size_t full[3] = {w, arr1 ? n : h, t == 3 ? n : depth}, o0[3] = {0, 0, 0};
        unsigned char *src = malloc(full[0] * full[1] * full[2] * 4);
        for (size_t i = 0; i < full[0] * full[1] * full[2] * 4; i++)
            src[i] = (unsigned char)(i * 7 + (size_t)t);
        CHECK(clEnqueueWriteImage(e->q, img, CL_TRUE, o0, full, 0, 0, src, 0, NULL, NULL));
        size_t org[3] = {3, t == 0 ? 0 : arr1 ? 2 : 1, layers ? 1 : 0};
        size_t reg[3] = {20, t == 0 ? 1 : arr1 ? 5 : 11, layers ? 2 : 1};
        cl_event u = clCreateUserEvent(e->ctx, &err), ev = NULL;
        CHECK(err);
        size_t row = 0, slice = 0;
        unsigned char *p = clEnqueueMapImage(e->q, img, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, org,
                                             reg, &row, &slice, 1, &u, &ev, &err);
        CHECK(err);
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        CHECK(clWaitForEvents(1, &ev));
        unsigned char *got = malloc(reg[0] * reg[1] * reg[2] * 4);
        CHECK(clEnqueueReadImage(e->q, img, CL_TRUE, org, reg, 0, 0, got, 0, NULL, NULL));
        size_t rowb = reg[0] * 4, wrong = 0;
        for (size_t z = 0; z < (arr1 ? 1 : reg[2]); z++) /* a 1D array's images are slices */
            for (size_t y = 0; y < reg[1]; y++)
                wrong += memcmp(p + (arr1 ? y * slice : z * slice + y * row),
                                got + (z * reg[1] + y) * rowb, rowb) != 0;
        p[0] ^= 0xff;
        CHECK(clEnqueueUnmapMemObject(e->q, img, p, 0, NULL, NULL));
        unsigned char one[4] = {0};
        size_t r1[3] = {1, 1, 1};
        CHECK(clEnqueueReadImage(e->q, img, CL_TRUE, org, r1, 0, 0, one, 0, NULL, NULL));
        int back = one[0] == (unsigned char)(got[0] ^ 0xff);
        if (!quiet)
            printf("non-blocking map of a %s image region: %zu rows differ from a read, "
                   "written back %d\n", names[t], wrong, back);
        bad += wrong != 0 || !back;
        clReleaseEvent(ev);
        clReleaseEvent(u);
        clReleaseMemObject(img);
        free(src);
        free(got);
    }
    return bad;
}

static int events(env *e, int quiet)
{
    cl_int err;
    cl_mem big = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, BIG, NULL, &err);
    CHECK(err);
    unsigned char *host = malloc(BIG);
    int bad = read_behind(e, big, host, 0x11, 0, quiet);
    bad += read_behind(e, big, host, 0x22, 1, quiet);
    free(host);
    clReleaseMemObject(big);
    bad += reads_many(e, quiet);
    bad += reads_last_first(e, quiet);
    bad += released_waits(e, quiet);
    bad += read_times(e, quiet);
    bad += image_behind(e, quiet);
    bad += blocking_behind(e, quiet);
    bad += map_behind(e, 0, quiet);
    bad += map_behind(e, 1, quiet);
    bad += map_image_behind(e, 0, quiet);
    bad += map_image_behind(e, 1, quiet);
    bad += map_image_kinds(e, quiet);
    bad += read_failed(e, quiet);
    return bad;
}

/* ---- info queries answer what the application set ---------------------------------- */

static void mem_info(const char *what, cl_mem m, const void *host_ptr, int quiet, int *bad)
{
    cl_mem_flags f = 0;
    void *hp = (void *)1;
    size_t n1 = 0, n2 = 0;
    CHECK(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, &n1));
    CHECK(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, &n2));
    if (!quiet)
        printf("%-34s CL_MEM_FLAGS %#llx (size %zu), CL_MEM_HOST_PTR %s (size %zu)\n", what,
               (unsigned long long)f, n1,
               hp == NULL ? "NULL" : hp == host_ptr ? "the host_ptr given" : "ANOTHER pointer",
               n2);
    *bad += hp != NULL && hp != host_ptr;
}

static int info(env *e, int quiet)
{
    cl_int err;
    int bad = 0;
    int *host = malloc(1024 * sizeof *host); /* each thread's own (the load test) */
    for (int i = 0; i < 1024; i++)
        host[i] = i;
    static const struct { const char *name; cl_mem_flags f; } fl[] = {
        {"READ_WRITE", CL_MEM_READ_WRITE},
        {"READ_ONLY|USE_HOST_PTR", CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR},
        {"WRITE_ONLY|COPY_HOST_PTR", CL_MEM_WRITE_ONLY | CL_MEM_COPY_HOST_PTR},
        {"READ_WRITE|USE_HOST_PTR", CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR},
        {"ALLOC_HOST_PTR|COPY_HOST_PTR", CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR},
        {"USE_HOST_PTR|HOST_READ_ONLY", CL_MEM_USE_HOST_PTR | CL_MEM_HOST_READ_ONLY},
    };
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        void *hp = fl[i].f & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) ? host : NULL;
        cl_mem m = clCreateBuffer(e->ctx, fl[i].f, 1024 * sizeof *host, hp, &err);
        CHECK(err);
        char what[80];
        snprintf(what, sizeof what, "buffer %s", fl[i].name);
        mem_info(what, m, host, quiet, &bad);
        if (fl[i].f & CL_MEM_USE_HOST_PTR) { /* and a sub-buffer of it */
            cl_buffer_region r = {1024, 512};
            cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
            CHECK(err);
            snprintf(what, sizeof what, "  its sub-buffer at 1024");
            cl_mem_flags f = 0;
            void *p = NULL;
            CHECK(clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof f, &f, NULL));
            CHECK(clGetMemObjectInfo(sub, CL_MEM_HOST_PTR, sizeof p, &p, NULL));
            if (!quiet)
                printf("%-34s CL_MEM_FLAGS %#llx, CL_MEM_HOST_PTR %s\n", what,
                       (unsigned long long)f,
                       p == (char *)host + 1024 ? "host_ptr + 1024" : p ? "ANOTHER" : "NULL");
            CHECK(clReleaseMemObject(sub));
        }
        CHECK(clReleaseMemObject(m));
    }
    cl_bool images = CL_FALSE;
    CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (images) {
        cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
        static const cl_mem_object_type types[] = {CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE2D,
                                                   CL_MEM_OBJECT_IMAGE3D,
                                                   CL_MEM_OBJECT_IMAGE1D_ARRAY,
                                                   CL_MEM_OBJECT_IMAGE2D_ARRAY};
        static const char *const tn[] = {"1D", "2D", "3D", "1D array", "2D array"};
        for (int t = 0; t < 5; t++)
            for (int u = 0; u < 2; u++) {
                cl_image_desc d = {types[t], 4, t == 0 || t == 3 ? 1 : 4, t == 2 ? 4 : 1,
                                   t >= 3 ? 4 : 1, 0, 0, 0, 0, {NULL}};
                cl_mem_flags f = CL_MEM_READ_ONLY |
                                 (u ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
                cl_mem m = clCreateImage(e->ctx, f, &fmt, &d, host, &err);
                CHECK(err);
                char what[80];
                snprintf(what, sizeof what, "image %s %s", tn[t], u ? "USE_HOST_PTR" : "COPY_HOST_PTR");
                mem_info(what, m, host, quiet, &bad);
                CHECK(clReleaseMemObject(m));
            }
        cl_mem m = clCreateImage2D(e->ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, &fmt, 4, 4, 0,
                                   host, &err);
        CHECK(err);
        mem_info("image clCreateImage2D USE_HOST_PTR", m, host, quiet, &bad);
        CHECK(clReleaseMemObject(m));
    }
    /* USE_HOST_PTR: the buffer's bytes reach host_ptr at a map, a blocking read, clFinish */
    int *use = calloc(256, sizeof *use);
    cl_mem m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 256 * sizeof *use,
                              use, &err);
    CHECK(err);
    cl_program p = build_opts(e, "");
    cl_kernel k = clCreateKernel(p, "fill", &err);
    CHECK(err);
    int v = 5;
    size_t g = 256;
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    CHECK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clFinish(e->q));
    int at_finish = use[0] == 5 && use[255] == 5;
    v = 6;
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    CHECK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    int *mp = clEnqueueMapBuffer(e->q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 64, 128, 0, NULL,
                                 NULL, &err);
    CHECK(err);
    int at_map = mp == use + 16 && use[16] == 6 && use[47] == 6;
    mp[0] = 9;
    CHECK(clEnqueueUnmapMemObject(e->q, m, mp, 0, NULL, NULL));
    v = 7;
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    CHECK(clEnqueueNDRangeKernel(e->q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    int one = 0;
    CHECK(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, sizeof one, &one, 0, NULL, NULL));
    int at_read = one == 7 && use[0] == 7;
    if (!quiet)
        printf("USE_HOST_PTR buffer: host_ptr holds the kernel's results at clFinish %d, the map "
               "returns host_ptr + offset with them %d, after a blocking read %d\n", at_finish,
               at_map, at_read);
    bad += !at_finish + !at_map + !at_read;
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(m));
    CHECK(clReleaseProgram(p));
    /* build options as given */
    static const char *const opts[] = {"", "-cl-std=CL1.2", "-DX=1  -cl-mad-enable",
                                       "-cl-kernel-arg-info", NULL};
    for (int i = 0; i < 5; i++) {
        cl_program q = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
        CHECK(err);
        CHECK(clBuildProgram(q, 1, &e->dev, opts[i], NULL, NULL));
        size_t n = 0;
        char got[256] = "";
        CHECK(clGetProgramBuildInfo(q, e->dev, CL_PROGRAM_BUILD_OPTIONS, 0, NULL, &n));
        CHECK(clGetProgramBuildInfo(q, e->dev, CL_PROGRAM_BUILD_OPTIONS, sizeof got, got, NULL));
        if (!quiet)
            printf("build options \"%s\": CL_PROGRAM_BUILD_OPTIONS \"%s\" (size %zu)\n",
                   opts[i] ? opts[i] : "(NULL)", got, n);
        CHECK(clReleaseProgram(q));
    }
    free(use);
    free(host);
    return bad;
}

/* ---- handles inside structs and lists ------------------------------------------------ */

static int structs(env *e, int quiet)
{
    cl_int err;
    int bad = 0;
    /* a property list: CL_CONTEXT_PLATFORM, and CL_CONTEXT_PROPERTIES back */
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)e->platform, 0};
    cl_context c2 = clCreateContext(props, 1, &e->dev, NULL, NULL, &err);
    CHECK(err);
    cl_context_properties back[8] = {0};
    size_t n = 0;
    CHECK(clGetContextInfo(c2, CL_CONTEXT_PROPERTIES, sizeof back, back, &n));
    int same = n == sizeof props && back[0] == CL_CONTEXT_PLATFORM &&
               back[1] == (cl_context_properties)e->platform;
    if (!quiet)
        printf("context from CL_CONTEXT_PLATFORM: CL_CONTEXT_PROPERTIES gives the platform back %d\n",
               same);
    bad += !same;
    CHECK(clReleaseContext(c2));
    /* cl_buffer_region and CL_MEM_ASSOCIATED_MEMOBJECT */
    cl_mem buf = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK(err);
    cl_buffer_region r = {0, 1024};
    cl_mem sub = clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    CHECK(err);
    cl_mem parent = NULL;
    CHECK(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL));
    if (!quiet)
        printf("sub-buffer: CL_MEM_ASSOCIATED_MEMOBJECT is its buffer %d\n", parent == buf);
    bad += parent != buf;
    CHECK(clReleaseMemObject(sub));
    cl_bool images = CL_FALSE;
    CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (images) {
        /* cl_image_desc.buffer: a 1D image buffer over buf sees buf's bytes */
        cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
        unsigned char bytes[4096];
        for (int i = 0; i < 4096; i++)
            bytes[i] = (unsigned char)(i * 7);
        CHECK(clEnqueueWriteBuffer(e->q, buf, CL_TRUE, 0, sizeof bytes, bytes, 0, NULL, NULL));
        for (int props_too = 0; props_too < 2; props_too++) {
            cl_image_desc d = {CL_MEM_OBJECT_IMAGE1D_BUFFER, 1024, 1, 1, 1, 0, 0, 0, 0, {NULL}};
            d.buffer = buf;
            cl_mem img = props_too ? clCreateImageWithProperties(e->ctx, NULL, CL_MEM_READ_ONLY,
                                                                 &fmt, &d, NULL, &err)
                                   : clCreateImage(e->ctx, CL_MEM_READ_ONLY, &fmt, &d, NULL, &err);
            if (!quiet)
                printf("%s: 1D image from a buffer: %d\n",
                       props_too ? "clCreateImageWithProperties" : "clCreateImage", (int)err);
            if (err != CL_SUCCESS) {
                bad++;
                continue;
            }
            cl_mem ib = NULL;
            CHECK(clGetImageInfo(img, CL_IMAGE_BUFFER, sizeof ib, &ib, NULL));
            unsigned char got[4096] = {0};
            size_t o[3] = {0, 0, 0}, rg[3] = {1024, 1, 1};
            CHECK(clEnqueueReadImage(e->q, img, CL_TRUE, o, rg, 0, 0, got, 0, NULL, NULL));
            int ok = ib == buf && !memcmp(got, bytes, sizeof got);
            if (!quiet)
                printf("  CL_IMAGE_BUFFER is the buffer, the image reads its bytes: %d\n", ok);
            bad += !ok;
            CHECK(clReleaseMemObject(img));
        }
        /* cl_image_desc.mem_object: a 2D image over a buffer (a device without
         * cl_khr_image2d_from_buffer refuses it: CL_INVALID_OPERATION) */
        cl_image_desc d2 = {CL_MEM_OBJECT_IMAGE2D, 16, 16, 1, 1, 0, 0, 0, 0, {NULL}};
        d2.mem_object = buf;
        cl_mem i2 = clCreateImage(e->ctx, CL_MEM_READ_ONLY, &fmt, &d2, NULL, &err);
        if (!quiet)
            printf("2D image from a buffer: %d\n", (int)err);
        if (i2)
            CHECK(clReleaseMemObject(i2));
        /* and a 2D image from a 2D image (OpenCL 2.0; refused where unsupported) */
        cl_image_desc d3 = {CL_MEM_OBJECT_IMAGE2D, 16, 16, 1, 1, 0, 0, 0, 0, {NULL}};
        cl_mem src2 = clCreateImage(e->ctx, CL_MEM_READ_ONLY, &fmt, &d3, NULL, &err);
        CHECK(err);
        cl_image_format bgra = {CL_BGRA, CL_UNORM_INT8};
        d3.mem_object = src2;
        cl_mem i3 = clCreateImage(e->ctx, CL_MEM_READ_ONLY, &bgra, &d3, NULL, &err);
        if (!quiet)
            printf("2D image from a 2D image: %d\n", (int)err);
        if (i3)
            CHECK(clReleaseMemObject(i3));
        CHECK(clReleaseMemObject(src2));
    }
    CHECK(clReleaseMemObject(buf));
    return bad;
}

/* ---- main ---------------------------------------------------------------------------- */

static int run(const char *what, int quiet, cl_int *got)
{
    env e;
    setup(&e);
    int bad = 0;
    if (!what || !strcmp(what, "errors"))
        bad += errors(&e, quiet, got);
    if (!what || !strcmp(what, "events"))
        bad += events(&e, quiet);
    if (!what || !strcmp(what, "info"))
        bad += info(&e, quiet);
    if (!what || !strcmp(what, "structs"))
        bad += structs(&e, quiet);
    teardown(&e);
    return bad;
}

typedef struct {
    int bad;
    cl_int got[NGOT];
} load_arg;

static void *load_main(void *arg)
{
    load_arg *l = arg;
    l->bad = run(NULL, 1, l->got);
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "load")) {
        int n = argc > 2 ? atoi(argv[2]) : 4;
        if (n < 1 || n > 64)
            n = 4;
        pthread_t t[64];
        static load_arg one, a[64];
        int bad = run("errors", 1, one.got); /* alone first: the results to match */
        for (int i = 0; i < n; i++)
            pthread_create(&t[i], NULL, load_main, &a[i]);
        int differ = 0;
        for (int i = 0; i < n; i++) {
            pthread_join(t[i], NULL);
            bad += a[i].bad;
            differ += memcmp(a[i].got, one.got, sizeof one.got) != 0;
        }
        printf("load: %d threads ran errors and events at once: %d checks failed, %d threads' "
               "enqueue results differ from a run alone\n", n, bad, differ);
        return bad || differ ? 1 : 0;
    }
    int bad = run(argc > 1 ? argv[1] : NULL, 0, NULL);
    return bad ? 1 : 0;
}
