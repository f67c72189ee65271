/* Vector add, plus the info queries that carry handles (they must come back
 * as the same handles the program holds), size queries, sub-buffers, map and
 * unmap, and a program rebuilt from its own binary. */
#include "common.h"

static const char *src =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c, float scale, uint n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) c[i] = (a[i] + b[i]) * scale;\n"
    "}\n";

int main(void)
{
    enum { N = 1000 };
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    first_device(&plat, &dev);

    size_t sz = 0;
    CHECK(clGetPlatformInfo(plat, CL_PLATFORM_NAME, 0, NULL, &sz));
    char *pname = malloc(sz);
    CHECK(clGetPlatformInfo(plat, CL_PLATFORM_NAME, sz, pname, NULL));
    printf("platform: %s (name is %zu bytes)\n", pname, sz);
    cl_device_type type;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    printf("device type: %llu\n", (unsigned long long)type);
    cl_platform_id dplat;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof dplat, &dplat, NULL));
    printf("CL_DEVICE_PLATFORM is the platform: %s\n", dplat == plat ? "yes" : "no");

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    cl_context ctx = clCreateContext(props, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_device_id cdev[4];
    size_t ndev_bytes = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof cdev, cdev, &ndev_bytes));
    printf("CL_CONTEXT_DEVICES: %zu device(s), first is ours: %s\n", ndev_bytes / sizeof(cl_device_id),
           cdev[0] == dev ? "yes" : "no");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_context qctx;
    cl_device_id qdev;
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL));
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL));
    printf("CL_QUEUE_CONTEXT / CL_QUEUE_DEVICE match: %s %s\n", qctx == ctx ? "yes" : "no",
           qdev == dev ? "yes" : "no");

    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * i);
    }
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    CHECK(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sizeof b, NULL, &err);
    CHECK(err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(q, db, CL_FALSE, 0, sizeof b, b, 0, NULL, NULL));
    cl_context mctx;
    CHECK(clGetMemObjectInfo(dc, CL_MEM_CONTEXT, sizeof mctx, &mctx, NULL));
    size_t msize;
    CHECK(clGetMemObjectInfo(dc, CL_MEM_SIZE, sizeof msize, &msize, NULL));
    printf("CL_MEM_CONTEXT matches: %s, CL_MEM_SIZE %zu\n", mctx == ctx ? "yes" : "no", msize);

    cl_program prog = build(ctx, dev, src);
    cl_kernel k = clCreateKernel(prog, "vadd", &err);
    CHECK(err);
    cl_program kprog;
    CHECK(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kprog, &kprog, NULL));
    char kname[32];
    CHECK(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof kname, kname, NULL));
    cl_uint nargs;
    CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
    printf("kernel %s, %u args, CL_KERNEL_PROGRAM matches: %s\n", kname, nargs,
           kprog == prog ? "yes" : "no");

    float scale = 0.5f;
    cl_uint n = N;
    CHECK(clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
    CHECK(clSetKernelArg(k, 3, sizeof scale, &scale));
    CHECK(clSetKernelArg(k, 4, sizeof n, &n));
    size_t gsz = 1024;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    double sum = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        sum += c[i];
        if (c[i] != (a[i] + b[i]) * 0.5f)
            bad++;
    }
    printf("vadd: sum %.1f, mismatches %d\n", sum, bad);

    /* sub-buffer and map/unmap: the mapped bytes live in this process */
    cl_buffer_region reg = {256 * sizeof(float), 50 * sizeof(float)};
    cl_mem sub = clCreateSubBuffer(dc, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    CHECK(err);
    cl_mem parent;
    CHECK(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL));
    printf("sub-buffer's parent matches: %s\n", parent == dc ? "yes" : "no");
    float *m = clEnqueueMapBuffer(q, sub, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, reg.size, 0,
                                  NULL, NULL, &err);
    CHECK(err);
    printf("mapped sub[0..2]: %.1f %.1f %.1f\n", m[0], m[1], m[2]);
    for (int i = 0; i < 50; i++)
        m[i] = -1.0f * (float)i;
    CHECK(clEnqueueUnmapMemObject(q, sub, m, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    printf("after unmap: c[255] %.1f c[256] %.1f c[305] %.1f c[306] %.1f\n", c[255], c[256], c[305],
           c[306]);
    CHECK(clReleaseMemObject(sub));

    /* the program's binary, and a program built from it */
    size_t bsize;
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, NULL));
    unsigned char *bin = malloc(bsize);
    unsigned char *bins[1] = {bin};
    size_t ret_size = 0;
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, &ret_size));
    printf("binary: %s, CL_PROGRAM_BINARIES size_ret %zu\n", bsize > 0 ? "non-empty" : "empty",
           ret_size);
    cl_int bstatus = -1;
    cl_program prog2 = clCreateProgramWithBinary(ctx, 1, &dev, &bsize, (const unsigned char **)bins,
                                                 &bstatus, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog2, 1, &dev, NULL, NULL, NULL));
    cl_kernel k2 = clCreateKernel(prog2, "vadd", &err);
    CHECK(err);
    scale = 2.0f;
    CHECK(clSetKernelArg(k2, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k2, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k2, 2, sizeof dc, &dc));
    CHECK(clSetKernelArg(k2, 3, sizeof scale, &scale));
    CHECK(clSetKernelArg(k2, 4, sizeof n, &n));
    CHECK(clEnqueueNDRangeKernel(q, k2, 1, NULL, &gsz, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    sum = 0;
    for (int i = 0; i < N; i++)
        sum += c[i];
    printf("from binary: status %d, sum %.1f\n", (int)bstatus, sum);

    /* reference counts: a retained object survives one release */
    CHECK(clRetainMemObject(da));
    CHECK(clReleaseMemObject(da));
    cl_uint rc;
    CHECK(clGetMemObjectInfo(da, CL_MEM_REFERENCE_COUNT, sizeof rc, &rc, NULL));
    printf("refcount after retain+release: %u\n", rc);

    clReleaseKernel(k2);
    clReleaseProgram(prog2);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(bin);
    free(pname);
    printf("done\n");
    return 0;
}
