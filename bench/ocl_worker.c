/* OpenCL bench worker (runs on PoCL anywhere): prints metrics for
 * apigen-bench. Linked against the system libOpenCL; LD_LIBRARY_PATH picks the
 * real ICD loader or apigen's stub. */
#include "worker.h"
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>



#include <string.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cl_int e_ = (x);                                                                           \
        if (e_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_);                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char *src = "__kernel void nop(__global int *p) { }\n"
                         "__kernel void add(__global const float *a, __global const float *b,\n"
                         "                  __global float *c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";

/* --sweep: blocking clEnqueueWriteBuffer / clEnqueueReadBuffer bandwidth
 * against size */
typedef struct sweep_bufs {
    cl_command_queue q;
    cl_mem dev;
    char *host;
} sweep_bufs;

static int copy_write(void *user, size_t n)
{
    sweep_bufs *b = user;
    return clEnqueueWriteBuffer(b->q, b->dev, CL_TRUE, 0, n, b->host, 0, NULL, NULL) != CL_SUCCESS;
}

static int copy_read(void *user, size_t n)
{
    sweep_bufs *b = user;
    return clEnqueueReadBuffer(b->q, b->dev, CL_TRUE, 0, n, b->host, 0, NULL, NULL) != CL_SUCCESS;
}

static int sweep(cl_context ctx, cl_command_queue q)
{
    size_t max = bw_sweep_max();
    cl_int e;
    sweep_bufs b = {q, clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, NULL, &e), malloc(max)};
    CK(e);
    if (!b.host)
        return 1;
    memset(b.host, 1, max);
    bw_sweep("write (clEnqueueWriteBuffer), pageable", max, copy_write, &b);
    bw_sweep("read (clEnqueueReadBuffer), pageable", max, copy_read, &b);
    CK(clReleaseMemObject(b.dev));
    free(b.host);
    return 0;
}

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int e;
    CK(clGetPlatformIDs(1, &plat, NULL));
    CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CK(e);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
    CK(e);
    if (bw_sweep_on())
        return sweep(ctx, q);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    CK(e);
    CK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    cl_kernel nop = clCreateKernel(prog, "nop", &e);
    CK(e);
    cl_kernel add = clCreateKernel(prog, "add", &e);
    CK(e);
    cl_mem small = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    CK(e);
    CK(clSetKernelArg(nop, 0, sizeof small, &small));
    double best;

    /* a synchronous call that does next to nothing */
    cl_device_type dt;
    int n = 20000;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof dt, &dt, NULL)));
    bw_report("sync_call", "us", "lo", best * 1e6 / n, "sync no-op call (clGetDeviceInfo)");

    /* enqueue throughput: n empty kernels, then one clFinish */
    size_t g = 1;
    n = 2000;
    CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &g, NULL, 0, NULL, NULL));
    CK(clFinish(q));
    BW_BEST(3, best, {
        for (int i = 0; i < n; i++)
            CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &g, NULL, 0, NULL, NULL));
        CK(clFinish(q));
    });
    bw_report("launch_rate", "k/s", "hi", n / best / 1e3, "kernel enqueue throughput");

    n = 300;
    BW_BEST(3, best, for (int i = 0; i < n; i++) {
        CK(clEnqueueNDRangeKernel(q, nop, 1, NULL, &g, NULL, 0, NULL, NULL));
        CK(clFinish(q));
    });
    bw_report("launch_sync", "us", "lo", best * 1e6 / n, "enqueue + clFinish latency");

    int v = 7;
    n = 2000;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(clEnqueueWriteBuffer(q, small, CL_TRUE, 0, 4, &v, 0, NULL, NULL)));
    bw_report("copy4_h2d", "us", "lo", best * 1e6 / n, "4-byte write (blocking)");
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(clEnqueueReadBuffer(q, small, CL_TRUE, 0, 4, &v, 0, NULL, NULL)));
    bw_report("copy4_d2h", "us", "lo", best * 1e6 / n, "4-byte read (blocking)");

    size_t big = bw_copy_bytes();
    char *host = malloc(big);
    memset(host, 1, big);
    cl_mem dbig = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &e);
    CK(e);
    CK(clEnqueueWriteBuffer(q, dbig, CL_TRUE, 0, big, host, 0, NULL, NULL));
    BW_BEST(3, best, CK(clEnqueueWriteBuffer(q, dbig, CL_TRUE, 0, big, host, 0, NULL, NULL)));
    char desc[96];
    snprintf(desc, sizeof desc, "%zu MiB write, pageable", big >> 20);
    bw_report("copy_h2d", "GB/s", "hi", big / best / 1e9, desc);
    BW_BEST(3, best, CK(clEnqueueReadBuffer(q, dbig, CL_TRUE, 0, big, host, 0, NULL, NULL)));
    snprintf(desc, sizeof desc, "%zu MiB read, pageable", big >> 20);
    bw_report("copy_d2h", "GB/s", "hi", big / best / 1e9, desc);
    CK(clReleaseMemObject(dbig));
    free(host);

    /* a whole program: 20 rounds of upload, add, download (4 MiB vectors) */
    size_t nv = 1u << 20, bytes = nv * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    for (size_t i = 0; i < nv; i++)
        a[i] = (float)i, b[i] = 1.0f;
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &e), db = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &e),
           dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &e);
    CK(e);
    BW_BEST(2, best, for (int it = 0; it < 20; it++) {
        CK(clEnqueueWriteBuffer(q, da, CL_FALSE, 0, bytes, a, 0, NULL, NULL));
        CK(clEnqueueWriteBuffer(q, db, CL_FALSE, 0, bytes, b, 0, NULL, NULL));
        CK(clSetKernelArg(add, 0, sizeof da, &da));
        CK(clSetKernelArg(add, 1, sizeof db, &db));
        CK(clSetKernelArg(add, 2, sizeof dc, &dc));
        CK(clEnqueueNDRangeKernel(q, add, 1, NULL, &nv, NULL, 0, NULL, NULL));
        CK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
    });
    if (c[5] != 6.0f)
        fprintf(stderr, "wrong result %f\n", c[5]);
    bw_report("whole", "ms", "lo", best * 1e3, "whole program (20x vecadd 1M)");
    return 0;
}
