/* Matrix multiply (tiled, __local memory sizes as kernel arguments, a struct
 * passed by value), checked against the CPU; then a rectangle read and write. */
#include "common.h"

#define T 8
static const char *src =
    "typedef struct { uint n; float alpha; } params;\n"
    "__kernel void mm(__global const float *A, __global const float *B, __global float *C,\n"
    "                 params p, __local float *ta, __local float *tb) {\n"
    "    uint n = p.n, r = get_local_id(1), c = get_local_id(0);\n"
    "    uint row = get_global_id(1), col = get_global_id(0);\n"
    "    float acc = 0.0f;\n"
    "    for (uint t = 0; t < n / 8; t++) {\n"
    "        ta[r * 8 + c] = A[row * n + t * 8 + c];\n"
    "        tb[r * 8 + c] = B[(t * 8 + r) * n + col];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (uint k = 0; k < 8; k++) acc += ta[r * 8 + k] * tb[k * 8 + c];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    C[row * n + col] = p.alpha * acc;\n"
    "}\n";

typedef struct {
    cl_uint n;
    cl_float alpha;
} params;

int main(void)
{
    enum { N = 64 };
    static float A[N * N], B[N * N], C[N * N], R[N * N];
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    first_device(&plat, &dev);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    for (int i = 0; i < N * N; i++) {
        A[i] = (float)((i * 7) % 13) - 6.0f;
        B[i] = (float)((i * 5) % 11) - 5.0f;
    }
    cl_mem dA = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, sizeof A, A, &err);
    CHECK(err);
    cl_mem dB = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof B, B, &err);
    CHECK(err);
    cl_mem dC = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof C, NULL, &err);
    CHECK(err);
    cl_program prog = build(ctx, dev, src);
    cl_kernel k = clCreateKernel(prog, "mm", &err);
    CHECK(err);
    params p = {N, 2.0f};
    CHECK(clSetKernelArg(k, 0, sizeof dA, &dA));
    CHECK(clSetKernelArg(k, 1, sizeof dB, &dB));
    CHECK(clSetKernelArg(k, 2, sizeof dC, &dC));
    CHECK(clSetKernelArg(k, 3, sizeof p, &p));
    CHECK(clSetKernelArg(k, 4, T * T * sizeof(float), NULL));
    CHECK(clSetKernelArg(k, 5, T * T * sizeof(float), NULL));
    size_t g[2] = {N, N}, l[2] = {T, T};
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dC, CL_TRUE, 0, sizeof C, C, 0, NULL, NULL));
    int bad = 0;
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int t = 0; t < N; t++)
                acc += A[i * N + t] * B[t * N + j];
            R[i * N + j] = 2.0f * acc;
            if (R[i * N + j] != C[i * N + j])
                bad++;
            sum += C[i * N + j];
        }
    printf("matmul %dx%d: checksum %.1f, mismatches vs CPU %d\n", N, N, sum, bad);

    size_t wg = 0;
    CHECK(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    printf("work-group size known: %s\n", wg > 0 ? "yes" : "no");

    /* a 4x3 block at (row 5, col 10) of C, into the middle of a 16-wide host array */
    float host[16 * 8];
    for (int i = 0; i < 16 * 8; i++)
        host[i] = -7.0f;
    size_t borg[3] = {10 * sizeof(float), 5, 0}, horg[3] = {2 * sizeof(float), 1, 0},
           reg[3] = {4 * sizeof(float), 3, 1};
    CHECK(clEnqueueReadBufferRect(q, dC, CL_TRUE, borg, horg, reg, N * sizeof(float), 0,
                                  16 * sizeof(float), 0, host, 0, NULL, NULL));
    for (int r = 0; r < 5; r++) {
        for (int c = 0; c < 8; c++)
            printf(" %8.1f", host[r * 16 + c]);
        printf("\n");
    }
    int rect_ok = 1;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            rect_ok &= host[(1 + r) * 16 + 2 + c] == C[(5 + r) * N + 10 + c];
    printf("rect read matches: %s\n", rect_ok ? "yes" : "no");
    for (int i = 0; i < 16 * 8; i++)
        host[i] = (float)i;
    CHECK(clEnqueueWriteBufferRect(q, dC, CL_TRUE, borg, horg, reg, N * sizeof(float), 0,
                                   16 * sizeof(float), 0, host, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dC, CL_TRUE, 0, sizeof C, C, 0, NULL, NULL));
    printf("rect write: C[5][10] %.1f C[7][13] %.1f C[4][10] %.1f\n", C[5 * N + 10],
           C[7 * N + 13], C[4 * N + 10]);

    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(dA);
    clReleaseMemObject(dB);
    clReleaseMemObject(dC);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("done\n");
    return 0;
}
