/* Several servers (APIGEN_SERVER=url1,url2: run forwarded only): the guest
 * sees the platforms of both, server 0's first. An object of one server
 * passed to a call that goes to the other (by its first object) is foreign
 * there: the OpenCL error for a wrong object, and both servers keep
 * serving. */
#include "common.h"

#define TRY(call) printf("%-66s = %d\n", #call, (int)(call))
/* an enqueue that is queued when forwarded reports its error at the next
 * synchronous call: the enqueue's error, else clFinish's */
#define TRYQ(call, q) printf("%-66s = %d\n", #call, (int)queued((call), q))

static cl_int queued(cl_int e, cl_command_queue q)
{
    cl_int f = clFinish(q);
    return e != CL_SUCCESS ? e : f;
}

static cl_int err_of(cl_int *e)
{
    return *e;
}

/* One value through a buffer and back on one server. */
static cl_int roundtrip(cl_command_queue q, cl_mem buf, cl_int v)
{
    cl_int back = 0;
    cl_int e = clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL);
    return e != CL_SUCCESS ? e : back == v ? CL_SUCCESS : -1;
}

int main(void)
{
    cl_platform_id p[2];
    cl_device_id dev[2];
    cl_context ctx[2];
    cl_command_queue q[2];
    cl_mem buf[2];
    cl_kernel k[2];
    cl_uint n = 0;
    cl_int err;
    CHECK(clGetPlatformIDs(2, p, &n));
    printf("platforms: %u\n", n);
    if (n < 2)
        return 1;
    const char *src = "__kernel void k(__global int *x, int v) { x[0] = v; }";
    for (int i = 0; i < 2; i++) {
        CHECK(clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 1, &dev[i], NULL));
        ctx[i] = clCreateContext(NULL, 1, &dev[i], NULL, NULL, &err);
        CHECK(err);
        q[i] = clCreateCommandQueue(ctx[i], dev[i], 0, &err);
        CHECK(err);
        buf[i] = clCreateBuffer(ctx[i], CL_MEM_READ_WRITE, 64, NULL, &err);
        CHECK(err);
        k[i] = clCreateKernel(build(ctx[i], dev[i], src), "k", &err);
        CHECK(err);
    }
    cl_int host = 7;
    cl_event e0;
    CHECK(clEnqueueMarkerWithWaitList(q[0], 0, NULL, &e0));
    CHECK(clFinish(q[0]));
    /* server 1's queue, server 0's objects */
    TRY(clEnqueueWriteBuffer(q[1], buf[0], CL_TRUE, 0, 4, &host, 0, NULL, NULL));
    TRY(clEnqueueReadBuffer(q[1], buf[0], CL_TRUE, 0, 4, &host, 0, NULL, NULL));
    TRYQ(clEnqueueCopyBuffer(q[1], buf[1], buf[0], 0, 0, 4, 0, NULL, NULL), q[1]);
    TRYQ(clEnqueueMarkerWithWaitList(q[1], 1, &e0, NULL), q[1]);
    TRY(clSetKernelArg(k[1], 0, sizeof buf[0], &buf[0]));
    /* server 0's context, server 1's device */
    TRY(err_of((clCreateCommandQueue(ctx[0], dev[1], 0, &err), &err)));
    TRY(err_of((clCreateContext(NULL, 2, dev, NULL, NULL, &err), &err)));
    /* both still serve */
    TRY(roundtrip(q[0], buf[0], 41));
    TRY(roundtrip(q[1], buf[1], 42));
    for (int i = 0; i < 2; i++) {
        clReleaseKernel(k[i]);
        clReleaseMemObject(buf[i]);
        clReleaseCommandQueue(q[i]);
        clReleaseContext(ctx[i]);
    }
    clReleaseEvent(e0);
    printf("done\n");
    return 0;
}
