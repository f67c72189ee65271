/* Bad input: every call below is wrong, and must fail with the error code the
 * implementation gives natively, never a crash. With an argument, a forged
 * handle value is also tried (run forwarded only: natively a forged pointer
 * is undefined behaviour). */
#include "common.h"

#define TRY(call) printf("%-60s = %d\n", #call, (int)(call))

static cl_int err_of(cl_int *e)
{
    return *e;
}

int main(int argc, char **argv)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    first_device(&plat, &dev);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(err);
    const char *src = "__kernel void k(__global int *x, int v) { x[0] = v; }";
    cl_program prog = build(ctx, dev, src);
    cl_kernel k = clCreateKernel(prog, "k", &err);
    CHECK(err);
    char host[256] = {0}, small[2];
    size_t one = 1;

    if (argc > 1 && argv[1][0]) {
        cl_mem forged = (cl_mem)(uintptr_t)0x4141414141ull;
        cl_kernel fk = (cl_kernel)(uintptr_t)buf; /* a handle of another type */
        size_t sz;
        TRY(clGetMemObjectInfo(forged, CL_MEM_SIZE, sizeof sz, &sz, NULL));
        TRY(clReleaseMemObject(forged));
        TRY(clGetKernelInfo(fk, CL_KERNEL_NUM_ARGS, sizeof sz, &sz, NULL));
        TRY(clSetKernelArg(k, 0, sizeof forged, &forged));
        TRY(clEnqueueReadBuffer(q, forged, CL_TRUE, 0, 4, host, 0, NULL, NULL));
        cl_event fe = (cl_event)(uintptr_t)0x4242424242ull;
        TRY(clWaitForEvents(1, &fe));
        return 0;
    }

    /* invalid (NULL) handles */
    TRY(clGetDeviceInfo(NULL, CL_DEVICE_NAME, sizeof host, host, NULL));
    TRY(clGetContextInfo(NULL, CL_CONTEXT_NUM_DEVICES, sizeof one, &one, NULL));
    TRY(err_of((clCreateBuffer(NULL, CL_MEM_READ_WRITE, 64, NULL, &err), &err)));
    TRY(clEnqueueReadBuffer(q, NULL, CL_TRUE, 0, 4, host, 0, NULL, NULL));
    TRY(clSetKernelArg(NULL, 0, sizeof buf, &buf));
    TRY(clReleaseMemObject(NULL));
    TRY(clFinish(NULL));
    /* NULL where a buffer is required */
    TRY(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, 64, NULL, 0, NULL, NULL));
    TRY(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 64, NULL, 0, NULL, NULL));
    TRY(clWaitForEvents(0, NULL));
    TRY(clWaitForEvents(1, NULL));
    TRY(clEnqueueNDRangeKernel(q, k, 1, NULL, NULL, NULL, 0, NULL, NULL));
    TRY(clEnqueueBarrierWithWaitList(q, 2, NULL, NULL));
    TRY(err_of((clCreateProgramWithSource(ctx, 0, NULL, NULL, &err), &err)));
    /* sizes that disagree */
    TRY(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 128, host, 0, NULL, NULL));
    TRY(clEnqueueWriteBuffer(q, buf, CL_TRUE, 32, 64, host, 0, NULL, NULL));
    TRY(clSetKernelArg(k, 0, 4, &buf));
    TRY(clSetKernelArg(k, 1, 2, host));
    TRY(clSetKernelArg(k, 7, sizeof buf, &buf));
    TRY(clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof small, small, NULL));
    TRY(clGetDeviceInfo(dev, 0x7fff, sizeof host, host, NULL));
    TRY(clEnqueueNDRangeKernel(q, k, 0, NULL, &one, NULL, 0, NULL, NULL));
    cl_buffer_region reg = {32, 64};
    TRY(err_of((clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err), &err)));
    /* wrong objects and states */
    TRY(err_of((clCreateKernel(prog, "nope", &err), &err)));
    TRY(clEnqueueUnmapMemObject(q, buf, host, 0, NULL, NULL));
    TRY(clSetUserEventStatus(NULL, CL_COMPLETE));
    const char *bad = "__kernel void k( { }";
    cl_program bp = clCreateProgramWithSource(ctx, 1, &bad, NULL, &err);
    CHECK(err);
    TRY(clBuildProgram(bp, 1, &dev, NULL, NULL, NULL));
    size_t logn = 0;
    CHECK(clGetProgramBuildInfo(bp, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &logn));
    printf("build log: %s\n", logn > 1 ? "present" : "empty");
    clReleaseProgram(bp);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("done\n");
    return 0;
}
