/* Bad input: every call below is wrong, and must fail with the error code the
 * implementation gives natively, never a crash. With an argument, a forged
 * handle value is also tried (run forwarded only: natively a forged pointer
 * is undefined behaviour). */
#include "common.h"

#define TRY(call) printf("%-60s = %d\n", #call, (int)(call))
/* An enqueue that is an async call when forwarded reports the error of its
 * invalid arguments at the thread's next synchronous call (README): the
 * first error of the enqueue and a clFinish is the same either way. */
#define TRYQ(call) printf("%-60s = %d\n", #call, (int)queued((call), q))

static cl_int queued(cl_int e, cl_command_queue q)
{
    cl_int f = clFinish(q);
    return e != CL_SUCCESS ? e : f;
}

static cl_int err_of(cl_int *e)
{
    return *e;
}

/* With the argument "library" (forwarded only: natively these crash PoCL
 * 3.1, found by fuzz_opencl): arguments the OpenCL specification gives an
 * error for and the implementation does not check. The server refuses them
 * with the specification's error (runtime/SECURITY.md S9), then serves on. */
static int library_guards(cl_context ctx, cl_device_id dev, cl_command_queue q, cl_program prog)
{
    cl_int err;
    cl_device_id nodev = NULL;
    cl_program noprog = NULL;
    /* pitches without host memory: PoCL sized the image by them, then copied
     * whole rows past its storage */
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    cl_image_desc d2 = {CL_MEM_OBJECT_IMAGE2D, 32, 16, 0, 0, 32, 0, 0, 0, {NULL}};
    cl_image_desc d3 = {CL_MEM_OBJECT_IMAGE3D, 4, 4, 4, 0, 0, 64, 0, 0, {NULL}};
    TRY(err_of((clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &d2, NULL, &err), &err)));
    TRY(err_of((clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &d3, NULL, &err), &err)));
    TRY(err_of((clCreateImage2D(ctx, CL_MEM_READ_WRITE, &fmt, 32, 16, 32, NULL, &err), &err)));
    TRY(err_of((clCreateImage3D(ctx, CL_MEM_READ_WRITE, &fmt, 4, 4, 4, 0, 64, NULL, &err), &err)));
    /* a region past a 1D image array's last layer: PoCL fills and maps past
     * the image's storage (its reads and writes were refused before) */
    cl_image_format f8 = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc da = {CL_MEM_OBJECT_IMAGE1D_ARRAY, 8, 0, 0, 4, 0, 0, 0, 0, {NULL}};
    cl_mem arr = clCreateImage(ctx, CL_MEM_READ_WRITE, &f8, &da, NULL, &err);
    CHECK(err);
    size_t org[3] = {0, 0, 0}, past[3] = {8, 5, 1}, rp = 0, sp = 0;
    cl_uint col[4] = {1, 2, 3, 4};
    TRYQ(clEnqueueFillImage(q, arr, col, org, past, 0, NULL, NULL));
    TRY(err_of((clEnqueueMapImage(q, arr, CL_TRUE, CL_MAP_READ, org, past, &rp, &sp, 0, NULL, NULL,
                                  &err), &err)));
    clReleaseMemObject(arr);
    /* a NULL device (what another client's id becomes), a NULL or source-less
     * header or input program, a NULL header name */
    const char *src = "#include \"h.h\"\n__kernel void k(__global int *x) { x[0] = H; }";
    const char *hsrc = "#define H 5\n", *name = "h.h", *noname = NULL;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    cl_program hdr = clCreateProgramWithSource(ctx, 1, &hsrc, NULL, &err);
    CHECK(err);
    TRY(clBuildProgram(prog, 1, &nodev, NULL, NULL, NULL));
    TRY(clCompileProgram(p, 1, &nodev, NULL, 1, &hdr, &name, NULL, NULL));
    TRY(clCompileProgram(p, 1, &dev, NULL, 1, &noprog, &name, NULL, NULL));
    TRY(clCompileProgram(p, 1, &dev, NULL, 1, &hdr, &noname, NULL, NULL));
    TRY(err_of((clLinkProgram(ctx, 1, &nodev, NULL, 1, &p, NULL, NULL, &err), &err)));
    TRY(err_of((clLinkProgram(ctx, 1, &dev, NULL, 1, &noprog, NULL, NULL, &err), &err)));
    /* built-in kernels: an unknown name, a NULL device; a program of them
     * (no source) cannot be built, compiled or used as a header */
    TRY(err_of((clCreateProgramWithBuiltInKernels(ctx, 1, &dev, "no.such.kernel", &err), &err)));
    TRY(err_of((clCreateProgramWithBuiltInKernels(ctx, 1, &nodev, "no.such.kernel", &err), &err)));
    size_t n = 0;
    char names[1024] = "";
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_BUILT_IN_KERNELS, sizeof names - 1, names, &n));
    names[strcspn(names, ";")] = 0;
    if (names[0]) {
        cl_program bik = clCreateProgramWithBuiltInKernels(ctx, 1, &dev, names, &err);
        CHECK(err);
        TRY(clBuildProgram(bik, 1, &dev, NULL, NULL, NULL));
        TRY(clCompileProgram(bik, 1, &dev, NULL, 0, NULL, NULL, NULL, NULL));
        TRY(clCompileProgram(p, 1, &dev, NULL, 1, &bik, &name, NULL, NULL));
        clReleaseProgram(bik);
    }
    /* and the server serves on: the same program, well formed */
    TRY(clCompileProgram(p, 1, &dev, NULL, 1, &hdr, &name, NULL, NULL));
    cl_program linked = clLinkProgram(ctx, 1, &dev, NULL, 1, &p, NULL, NULL, &err);
    CHECK(err);
    cl_kernel k = clCreateKernel(linked, "k", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err);
    CHECK(err);
    size_t g = 1;
    cl_int out = 0;
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL));
    printf("k wrote %d\n", (int)out);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(linked);
    clReleaseProgram(hdr);
    clReleaseProgram(p);
    return 0;
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

    if (argc > 1 && strcmp(argv[1], "library") == 0)
        return library_guards(ctx, dev, q, prog);
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
        /* kernel arguments the server must check before the implementation
         * stores them (a forged image or a NULL sampler crashes PoCL at the
         * launch): the errors the OpenCL specification gives */
        const char *src2 = "__kernel void k2(__global int *x, long v, sampler_t sm,"
                           " __read_only image2d_t im, __local int *l)"
                           "{ x[0] = (int)v + read_imagei(im, sm, (int2)(0, 0)).x + (l ? 0 : 1); }";
        cl_program p2 = build(ctx, dev, src2);
        cl_kernel k2 = clCreateKernel(p2, "k2", &err);
        CHECK(err);
        cl_image_format fmt = {CL_RGBA, CL_SIGNED_INT32};
        cl_image_desc desc = {CL_MEM_OBJECT_IMAGE2D, 2, 2, 1, 1, 0, 0, 0, 0, {NULL}};
        cl_mem img = clCreateImage(ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
        CHECK(err);
        cl_sampler smp = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE,
                                         CL_FILTER_NEAREST, &err);
        CHECK(err);
        cl_sampler nosmp = NULL;
        cl_mem nomem = NULL;
        cl_long v = 0x4343434343ll;
        TRY(clSetKernelArg(k2, 0, sizeof forged, &forged));
        TRY(clSetKernelArg(k2, 0, sizeof img, &img));
        TRY(clSetKernelArg(k2, 0, sizeof smp, &smp));
        TRY(clSetKernelArg(k2, 1, sizeof v, &v));
        TRY(clSetKernelArg(k2, 2, sizeof nosmp, &nosmp));
        TRY(clSetKernelArg(k2, 2, sizeof forged, &forged));
        TRY(clSetKernelArg(k2, 2, 4, &v));
        TRY(clSetKernelArg(k2, 3, sizeof nomem, &nomem));
        TRY(clSetKernelArg(k2, 3, sizeof buf, &buf));
        TRY(clSetKernelArg(k2, 3, sizeof forged, &forged));
        TRY(clSetKernelArg(k2, 4, sizeof forged, &forged));
        /* then the right values: the launch works and the server lives */
        int32_t pix[16] = {7};
        size_t org[3] = {0, 0, 0}, reg[3] = {2, 2, 1}, g = 1;
        CHECK(clEnqueueWriteImage(q, img, CL_TRUE, org, reg, 0, 0, pix, 0, NULL, NULL));
        v = 35;
        TRY(clSetKernelArg(k2, 0, sizeof buf, &buf));
        TRY(clSetKernelArg(k2, 1, sizeof v, &v));
        TRY(clSetKernelArg(k2, 2, sizeof smp, &smp));
        TRY(clSetKernelArg(k2, 3, sizeof img, &img));
        TRY(clSetKernelArg(k2, 4, 16, NULL));
        TRY(clEnqueueNDRangeKernel(q, k2, 1, NULL, &g, NULL, 0, NULL, NULL));
        int32_t out = 0;
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL));
        printf("k2 wrote %d\n", (int)out);
        /* SVM addresses that are no allocation of this client */
        int fill = 0;
        TRY(clSetKernelArgSVMPointer(k, 0, (void *)(uintptr_t)0x4141414141ull));
        TRY(clEnqueueSVMMemFill(q, host, &fill, sizeof fill, 16, 0, NULL, NULL));
        void *fp[1] = {host};
        TRY(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof fp, fp));
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
    TRYQ(clEnqueueNDRangeKernel(q, k, 1, NULL, NULL, NULL, 0, NULL, NULL));
    TRYQ(clEnqueueBarrierWithWaitList(q, 2, NULL, NULL));
    TRY(err_of((clCreateProgramWithSource(ctx, 0, NULL, NULL, &err), &err)));
    /* sizes that disagree */
    TRY(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 128, host, 0, NULL, NULL));
    TRY(clEnqueueWriteBuffer(q, buf, CL_TRUE, 32, 64, host, 0, NULL, NULL));
    TRY(clSetKernelArg(k, 0, 4, &buf));
    TRY(clSetKernelArg(k, 1, 2, host));
    TRY(clSetKernelArg(k, 7, sizeof buf, &buf));
    TRY(clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof small, small, NULL));
    TRY(clGetDeviceInfo(dev, 0x7fff, sizeof host, host, NULL));
    TRYQ(clEnqueueNDRangeKernel(q, k, 0, NULL, &one, NULL, 0, NULL, NULL));
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
