/* Coarse-grained shared virtual memory and native kernels: clSVMAlloc,
 * map/unmap of SVM, kernels taking SVM pointers (clSetKernelArgSVMPointer,
 * clSetKernelExecInfo), SVM copies in every direction, fill, migrate,
 * clEnqueueSVMFree with its callback, clEnqueueNativeKernel with a buffer.
 * Prints only values, so the output is the same natively and forwarded. */
#include "common.h"

#define N 1024

static volatile int freed;

static void CL_CALLBACK free_cb(cl_command_queue q, cl_uint n, void *ptrs[], void *user)
{
    cl_context ctx = user;
    (void)q;
    for (cl_uint i = 0; i < n; i++)
        clSVMFree(ctx, ptrs[i]);
    freed = (int)n;
}

struct native_args {
    int *data;      /* replaced by the buffer's bytes */
    int add;
};

static void CL_CALLBACK native_fn(void *p)
{
    struct native_args *a = p;
    for (int i = 0; i < 16; i++)
        a->data[i] += a->add;
}

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    first_device(&plat, &dev);
    cl_device_svm_capabilities caps = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL));
    printf("coarse-grained SVM: %s\n", caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER ? "yes" : "no");
    if (!(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
        return 0;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    const char *src =
        "struct node { __global int *data; int scale; };\n"
        "__kernel void scale(__global int *a, __global struct node *n) {\n"
        "  size_t i = get_global_id(0); a[i] = a[i] * n->scale + n->data[i % 4]; }\n";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    err = clBuildProgram(prog, 1, &dev, "-cl-std=CL2.0", NULL, NULL);
    CHECK(err);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK(err);

    int *a = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N * sizeof(int), 0);
    int *extra = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4 * sizeof(int), 0);
    struct { int *data; int scale; } *node = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 16, 0);
    printf("allocated: %d\n", a && extra && node);
    if (!a || !extra || !node)
        return 1;
    /* host writes through a map */
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, a, N * sizeof(int), 0, NULL,
                          NULL));
    for (int i = 0; i < N; i++)
        a[i] = i;
    CHECK(clEnqueueSVMUnmap(q, a, 0, NULL, NULL));
    int four[4] = {1000, 2000, 3000, 4000};
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, extra, four, sizeof four, 0, NULL, NULL)); /* host -> SVM */
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, node, 16, 0, NULL, NULL));
    node->data = extra; /* an SVM pointer inside SVM memory */
    node->scale = 3;
    CHECK(clEnqueueSVMUnmap(q, node, 0, NULL, NULL));
    /* kernels with SVM pointers */
    CHECK(clSetKernelArgSVMPointer(k, 0, a));
    CHECK(clSetKernelArgSVMPointer(k, 1, node));
    void *indirect[1] = {extra};
    CHECK(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof indirect, indirect));
    size_t g = N;
    cl_event kev;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &kev));
    /* SVM -> host, after the kernel (non-blocking, then waited for) */
    int out[N];
    cl_event cev;
    CHECK(clEnqueueSVMMemcpy(q, CL_FALSE, out, a, sizeof out, 1, &kev, &cev));
    CHECK(clWaitForEvents(1, &cev));
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += out[i];
    printf("kernel: a[0]=%d a[1]=%d a[1023]=%d sum=%ld\n", out[0], out[1], out[N - 1], sum);
    /* a map for reading sees the same */
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, a + 512, 4 * sizeof(int), 0, NULL, NULL));
    printf("mapped a[512..515]: %d %d %d %d\n", a[512], a[513], a[514], a[515]);
    CHECK(clEnqueueSVMUnmap(q, a + 512, 0, NULL, NULL));
    /* SVM -> SVM with an offset, fill, migrate */
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, a + 8, extra, 4 * sizeof(int), 0, NULL, NULL));
    int pat = 7;
    CHECK(clEnqueueSVMMemFill(q, a + 16, &pat, sizeof pat, 8 * sizeof(int), 0, NULL, NULL));
    const void *mig[2] = {a, extra};
    size_t migsz[2] = {0, sizeof four};
    CHECK(clEnqueueSVMMigrateMem(q, 2, mig, migsz, 0, 0, NULL, NULL));
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, out, a, 32 * sizeof(int), 0, NULL, NULL));
    printf("copy+fill: a[8]=%d a[11]=%d a[15]=%d a[16]=%d a[23]=%d a[24]=%d\n", out[8], out[11],
           out[15], out[16], out[23], out[24]);
    /* host -> host through the queue */
    int h1[4] = {1, 2, 3, 4}, h2[4] = {0};
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, h2, h1, sizeof h1, 0, NULL, NULL));
    printf("host copy: %d %d %d %d\n", h2[0], h2[1], h2[2], h2[3]);
    /* bad input: a copy of 0 bytes, a NULL destination */
    printf("copy of 0 bytes: %d\n", (int)clEnqueueSVMMemcpy(q, CL_TRUE, out, a, 0, 0, NULL, NULL));
    printf("copy to NULL: %d\n", (int)clEnqueueSVMMemcpy(q, CL_TRUE, NULL, a, 4, 0, NULL, NULL));

    /* native kernel on a buffer */
    cl_device_exec_capabilities ec = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof ec, &ec, NULL));
    if (ec & CL_EXEC_NATIVE_KERNEL) {
        int init[16];
        for (int i = 0; i < 16; i++)
            init[i] = i * i;
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init,
                                    init, &err);
        CHECK(err);
        cl_command_queue q1 = clCreateCommandQueue(ctx, dev, 0, &err);
        CHECK(err);
        struct native_args na = {NULL, 100};
        const void *loc = &na.data;
        cl_event nev;
        CHECK(clEnqueueNativeKernel(q1, native_fn, &na, sizeof na, 1, &buf, &loc, 0, NULL, &nev));
        int back[16];
        CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
        cl_int st = 0;
        CHECK(clGetEventInfo(nev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        printf("native kernel: %d %d %d (status %d)\n", back[0], back[5], back[15], (int)st);
        clReleaseEvent(nev);
        clReleaseMemObject(buf);
        clReleaseCommandQueue(q1);
    } else {
        printf("native kernel: not supported by the device\n");
    }

    /* clEnqueueSVMFree with a callback that frees */
    void *tofree[2] = {extra, node};
    cl_event fev;
    CHECK(clEnqueueSVMFree(q, 2, tofree, free_cb, ctx, 0, NULL, &fev));
    CHECK(clWaitForEvents(1, &fev));
    printf("SVM free callback: %d pointers\n", wait_flag(&freed) ? freed : 0);
    clReleaseEvent(fev);
    clReleaseEvent(kev);
    clReleaseEvent(cev);
    clSVMFree(ctx, a);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("done\n");
    return 0;
}
