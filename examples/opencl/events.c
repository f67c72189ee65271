/* Events, wait lists, a user event gating a kernel, markers and barriers,
 * non-blocking writes and reads, and callbacks delivered in this process:
 * clSetEventCallback, clBuildProgram's pfn_notify, a memory object's
 * destructor callback and the context destructor callback. */
#include "common.h"

#include <pthread.h>

static const char *src =
    "__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }\n"
    "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }\n";

static volatile int built, ev_done, ev_status = 99, mem_gone, ctx_gone;
static int tag = 42;

static void CL_CALLBACK on_build(cl_program p, void *user)
{
    (void)p;
    built = *(int *)user;
}
static void CL_CALLBACK on_event(cl_event e, cl_int status, void *user)
{
    (void)e;
    ev_status = status;
    ev_done = *(int *)user;
}
static void CL_CALLBACK on_mem(cl_mem m, void *user)
{
    (void)m;
    mem_gone = *(int *)user;
}
/* Another thread's commands: it enqueues a non-blocking write and a kernel
 * and hands the kernel's event over; the main thread waits on that event
 * while this thread is still alive (forwarded, its commands may still be
 * queued in it: the main thread's wait must see them). */
typedef struct {
    cl_command_queue q;
    cl_mem buf;
    cl_kernel k;
    int data[64];
    cl_event ev;
    int stage; /* 1: enqueued, 2: main thread done */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} other_thread;

static void *other_main(void *arg)
{
    other_thread *o = arg;
    size_t g = 64;
    for (int i = 0; i < 64; i++)
        o->data[i] = 3 * i;
    CHECK(clEnqueueWriteBuffer(o->q, o->buf, CL_FALSE, 0, sizeof o->data, o->data, 0, NULL, NULL));
    CHECK(clSetKernelArg(o->k, 0, sizeof o->buf, &o->buf));
    CHECK(clEnqueueNDRangeKernel(o->q, o->k, 1, NULL, &g, NULL, 0, NULL, &o->ev));
    pthread_mutex_lock(&o->mu);
    o->stage = 1;
    pthread_cond_broadcast(&o->cv);
    while (o->stage != 2)
        pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* A third thread enqueues, with no call before it, a command whose wait
 * list holds the other thread's queued kernel event, and exits (forwarded,
 * its queue leaves at its exit: the other thread's must leave before). */
typedef struct {
    cl_command_queue q;
    cl_kernel k;
    cl_event wait, ev;
} waiter_thread;

static void *waiter_main(void *arg)
{
    waiter_thread *w = arg;
    size_t g = 64;
    CHECK(clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &g, NULL, 1, &w->wait, &w->ev));
    return NULL;
}

static void CL_CALLBACK on_ctx(cl_context c, void *user)
{
    (void)c;
    ctx_gone = *(int *)user;
}

int main(void)
{
    enum { N = 256 };
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    first_device(&plat, &dev);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, qp, &err);
    CHECK(err);

    const char *s = src;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, NULL, on_build, &tag));
    printf("build callback: %d\n", wait_flag(&built));
    cl_build_status bs;
    CHECK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL));
    printf("build status: %d\n", (int)bs);
    cl_kernel inc = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    cl_kernel twice = clCreateKernel(prog, "twice", &err);
    CHECK(err);

    int host[N];
    for (int i = 0; i < N; i++)
        host[i] = i;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);
    CHECK(clSetMemObjectDestructorCallback(buf, on_mem, &tag));
    cl_event wrote, ran1, ran2, marker, read;
    CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &wrote));

    /* a user event holds the first kernel back */
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_int st;
    CHECK(clGetEventInfo(gate, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    printf("user event before: %d\n", (int)st);
    CHECK(clSetKernelArg(inc, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(twice, 0, sizeof buf, &buf));
    size_t g = N;
    cl_event deps[2] = {wrote, gate};
    CHECK(clEnqueueNDRangeKernel(q, inc, 1, NULL, &g, NULL, 2, deps, &ran1));
    CHECK(clSetEventCallback(ran1, CL_COMPLETE, on_event, &tag));
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clEnqueueNDRangeKernel(q, twice, 1, NULL, &g, NULL, 1, &ran1, &ran2));
    CHECK(clEnqueueMarkerWithWaitList(q, 1, &ran2, &marker));
    CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
    CHECK(clWaitForEvents(1, &marker));
    /* the status is read after the wait (argument order is unspecified) */
    int ev_seen = wait_flag(&ev_done);
    printf("event callback: %d (status %d)\n", ev_seen, (int)ev_status);
    CHECK(clGetEventInfo(ran2, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    printf("second kernel status: %d\n", (int)st);
    cl_command_queue eq;
    cl_context ectx;
    cl_command_type ct;
    CHECK(clGetEventInfo(ran2, CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL));
    CHECK(clGetEventInfo(ran2, CL_EVENT_CONTEXT, sizeof ectx, &ectx, NULL));
    CHECK(clGetEventInfo(ran2, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL));
    printf("event queue/context match: %s %s, command type %#x\n", eq == q ? "yes" : "no",
           ectx == ctx ? "yes" : "no", (unsigned)ct);
    cl_ulong t0, t1;
    CHECK(clGetEventProfilingInfo(ran2, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
    CHECK(clGetEventProfilingInfo(ran2, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
    printf("profiling: end >= start: %s\n", t1 >= t0 ? "yes" : "no");

    int out[N];
    CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof out, out, 1, &marker, &read));
    CHECK(clWaitForEvents(1, &read));
    long sum = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        sum += out[i];
        bad += out[i] != (i + 1) * 2;
    }
    printf("result: sum %ld, mismatches %d\n", sum, bad);
    CHECK(clFinish(q));

    /* an event of another thread's queued commands */
    other_thread o = {.q = q, .k = inc};
    o.buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof o.data, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(twice, 0, sizeof o.buf, &o.buf)); /* for the third thread */
    pthread_mutex_init(&o.mu, NULL);
    pthread_cond_init(&o.cv, NULL);
    pthread_t th, th3;
    if (pthread_create(&th, NULL, other_main, &o) != 0)
        return 1;
    pthread_mutex_lock(&o.mu);
    while (o.stage != 1)
        pthread_cond_wait(&o.cv, &o.mu);
    pthread_mutex_unlock(&o.mu);
    waiter_thread w3 = {.q = q, .k = twice, .wait = o.ev};
    if (pthread_create(&th3, NULL, waiter_main, &w3) != 0)
        return 1;
    pthread_join(th3, NULL);
    /* time for the third thread's kernel to run first, were it unordered */
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    CHECK(clWaitForEvents(1, &w3.ev));
    CHECK(clWaitForEvents(1, &o.ev));
    int back[64];
    CHECK(clEnqueueReadBuffer(q, o.buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    long osum = 0;
    for (int i = 0; i < 64; i++)
        osum += back[i];
    printf("other thread's write + kernel, a third thread's kernel after it: sum %ld\n", osum);
    pthread_mutex_lock(&o.mu);
    o.stage = 2;
    pthread_cond_broadcast(&o.cv);
    pthread_mutex_unlock(&o.mu);
    pthread_join(th, NULL);
    CHECK(clReleaseEvent(o.ev));
    CHECK(clReleaseEvent(w3.ev));
    CHECK(clReleaseMemObject(o.buf));

    cl_event evs[] = {wrote, ran1, ran2, marker, read, gate};
    for (unsigned i = 0; i < sizeof evs / sizeof evs[0]; i++)
        CHECK(clReleaseEvent(evs[i]));
    CHECK(clReleaseMemObject(buf));
    printf("destructor callback: %d\n", wait_flag(&mem_gone));
    CHECK(clSetContextDestructorCallback(ctx, on_ctx, &tag));
    clReleaseKernel(inc);
    clReleaseKernel(twice);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    CHECK(clReleaseContext(ctx));
    printf("context destructor callback: %d\n", wait_flag(&ctx_gone));
    printf("done\n");
    return 0;
}
