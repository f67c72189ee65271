/* sec_ocl: an OpenCL application for the security tests of
 * apigen-server-opencl (sec_ocl.sh), run natively or against the stub
 * (LD_LIBRARY_PATH=build/stub-opencl, APIGEN_SERVER=URL).
 *
 *   sec_ocl hog MIB [exit]             two contexts, each with a queue, 4 buffers
 *                                      (MIB MiB in all, filled), a program, a kernel and
 *                                      events; prints "ready", then loops over kernels
 *                                      until killed (S5), or with "exit" leaves with
 *                                      exit(0) and nothing released
 *   sec_ocl work SECONDS THREADS       load: threads with their own queue on one context
 *                                      loop over the examples' work (vecadd, matmul with
 *                                      events, fills, copies), creating and releasing
 *                                      buffers, kernels and events, every result checked
 *                                      against the CPU; prints "iterations=N errors=E
 *                                      checksum=C" (C: the first ROUNDS iterations of
 *                                      every thread, the same natively)
 *   sec_ocl owner IDS GO [svm]         a context, queue, buffer, kernel, user event, marker
 *                                      event (a guest-assigned id) and an SVM allocation
 *                                      with known contents; writes their
 *                                      ids to IDS, waits for GO, checks they are intact
 *   sec_ocl intruder IDS [svm]         uses the owner's ids from another process: each
 *                                      call prints its OpenCL error (S3 S4)
 *   sec_ocl crash                      a kernel that writes 2^47 bytes past its buffer (a
 *                                      fault in whichever process runs it: the server's
 *                                      session process when forwarded); prints what
 *                                      clFinish returns (S6: forwarded, the lost session's
 *                                      error, CL_DEVICE_NOT_AVAILABLE), never crashes */
#define _DEFAULT_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 3

static const char *src =
    "__kernel void add(__global const uint *a, __global const uint *b, __global uint *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] * 3u + b[i]; }\n"
    "__kernel void mm(__global const uint *A, __global const uint *B, __global uint *C, uint n)\n"
    "{ uint r = get_global_id(1), c = get_global_id(0), s = 0;\n"
    "  for (uint k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];\n"
    "  C[r * n + c] = s; }\n"
    "__kernel void inc(__global uint *a) { a[get_global_id(0)] += 1u; }\n";

#define DIE(what, err)                                                                        \
    do {                                                                                      \
        printf("%s:%d: %s = %d\n", __FILE__, __LINE__, what, (int)(err));                     \
        exit(1);                                                                              \
    } while (0)
#define CK(call)                                                                              \
    do {                                                                                      \
        cl_int e_ = (call);                                                                   \
        if (e_ != CL_SUCCESS)                                                                 \
            DIE(#call, e_);                                                                   \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cl_device_id g_dev;
static cl_platform_id g_plat;

static void first_device(void)
{
    cl_uint n = 0;
    CK(clGetPlatformIDs(1, &g_plat, &n));
    CK(clGetDeviceIDs(g_plat, CL_DEVICE_TYPE_ALL, 1, &g_dev, NULL));
}

static cl_context new_context(void)
{
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &g_dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateContext", err);
    return ctx;
}

static cl_command_queue new_queue(cl_context ctx)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, g_dev, NULL, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateCommandQueueWithProperties", err);
    return q;
}

static cl_program new_program(cl_context ctx)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateProgramWithSource", err);
    CK(clBuildProgram(p, 1, &g_dev, "", NULL, NULL));
    return p;
}

/* ---- hog ------------------------------------------------------------------- */

static int hog(size_t mib, int leave)
{
    first_device();
    cl_int err;
    size_t each = (mib << 20) / 8;
    cl_command_queue qs[2];
    cl_kernel ks[2];
    cl_mem bufs[2][4];
    for (int c = 0; c < 2; c++) {
        cl_context ctx = new_context();
        qs[c] = new_queue(ctx);
        cl_program p = new_program(ctx);
        ks[c] = clCreateKernel(p, "inc", &err);
        if (err != CL_SUCCESS)
            DIE("clCreateKernel", err);
        for (int b = 0; b < 4; b++) {
            bufs[c][b] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, each, NULL, &err);
            if (err != CL_SUCCESS)
                DIE("clCreateBuffer", err);
            cl_uint pat = 0x01010101u * (cl_uint)(b + 1);
            cl_event ev; /* kept: released by the server at the end */
            CK(clEnqueueFillBuffer(qs[c], bufs[c][b], &pat, sizeof pat, 0, each, 0, NULL, &ev));
        }
        cl_event ue = clCreateUserEvent(ctx, &err); /* completed, never released */
        if (err != CL_SUCCESS)
            DIE("clCreateUserEvent", err);
        CK(clSetUserEventStatus(ue, CL_COMPLETE));
        CK(clSetKernelArg(ks[c], 0, sizeof(cl_mem), &bufs[c][0]));
        CK(clFinish(qs[c]));
    }
    printf("ready\n");
    fflush(stdout);
    size_t g = 1 << 16;
    for (unsigned long n = 0;; n++) {
        cl_event ev;
        CK(clEnqueueNDRangeKernel(qs[n & 1], ks[n & 1], 1, NULL, &g, NULL, 0, NULL, &ev));
        if (n % 8 == 7)
            CK(clFinish(qs[n & 1]));
        if (leave && n >= 32)
            exit(0); /* nothing released: the server does it */
    }
}

/* ---- work ------------------------------------------------------------------ */

static cl_context w_ctx;
static cl_program w_prog;
static double w_end;

typedef struct wres {
    unsigned long iters, errors;
    uint64_t sum;
} wres;

static uint64_t mix(uint64_t h, const cl_uint *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ v[i]) * 0x100000001b3ull;
    return h;
}

#define WN 4096
#define MN 16

static void *work_thread(void *p)
{
    wres *r = p;
    cl_int err;
    cl_command_queue q = new_queue(w_ctx);
    cl_uint *a = malloc(WN * 4), *b = malloc(WN * 4), *c = malloc(WN * 4);
    cl_uint A[MN * MN], B[MN * MN], C[MN * MN], want;
    r->sum = 0xcbf29ce484222325ull;
    for (unsigned long it = 0; it < ROUNDS || now_s() < w_end; it++) {
        unsigned long bad = 0;
        for (size_t i = 0; i < WN; i++) {
            a[i] = (cl_uint)(i * 7 + it * 13);
            b[i] = (cl_uint)(i * i + it);
        }
        /* vecadd: a copied at creation, b by a non-blocking write, c read back */
        cl_mem ma = clCreateBuffer(w_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, WN * 4, a, &err);
        if (err != CL_SUCCESS)
            DIE("clCreateBuffer", err);
        cl_mem mb = clCreateBuffer(w_ctx, CL_MEM_READ_ONLY, WN * 4, NULL, &err);
        cl_mem mc = clCreateBuffer(w_ctx, CL_MEM_WRITE_ONLY, WN * 4, NULL, &err);
        if (err != CL_SUCCESS)
            DIE("clCreateBuffer", err);
        CK(clEnqueueWriteBuffer(q, mb, CL_FALSE, 0, WN * 4, b, 0, NULL, NULL));
        cl_kernel k = clCreateKernel(w_prog, "add", &err);
        if (err != CL_SUCCESS)
            DIE("clCreateKernel", err);
        CK(clSetKernelArg(k, 0, sizeof ma, &ma));
        CK(clSetKernelArg(k, 1, sizeof mb, &mb));
        CK(clSetKernelArg(k, 2, sizeof mc, &mc));
        size_t g = WN;
        cl_event ev;
        CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &ev));
        CK(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, WN * 4, c, 1, &ev, NULL));
        cl_int st = -1;
        CK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        if (st != CL_COMPLETE)
            bad++;
        for (size_t i = 0; i < WN; i++)
            if (c[i] != a[i] * 3u + b[i])
                bad++;
        if (it < ROUNDS)
            r->sum = mix(r->sum, c, WN);
        CK(clReleaseEvent(ev));
        CK(clReleaseKernel(k));
        CK(clReleaseMemObject(ma));
        CK(clReleaseMemObject(mb));
        CK(clReleaseMemObject(mc));

        /* matmul, its input filled on the device, waited on by events */
        for (size_t i = 0; i < MN * MN; i++)
            A[i] = (cl_uint)(i + it);
        cl_uint two = 2;
        cl_mem mA = clCreateBuffer(w_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof A, A, &err);
        cl_mem mB = clCreateBuffer(w_ctx, CL_MEM_READ_WRITE, sizeof B, NULL, &err);
        cl_mem mC = clCreateBuffer(w_ctx, CL_MEM_READ_WRITE, sizeof C, NULL, &err);
        cl_mem mD = clCreateBuffer(w_ctx, CL_MEM_READ_WRITE, sizeof C, NULL, &err);
        if (err != CL_SUCCESS)
            DIE("clCreateBuffer", err);
        cl_event fill, run, copy;
        CK(clEnqueueFillBuffer(q, mB, &two, sizeof two, 0, sizeof B, 0, NULL, &fill));
        k = clCreateKernel(w_prog, "mm", &err);
        if (err != CL_SUCCESS)
            DIE("clCreateKernel", err);
        cl_uint n = MN;
        CK(clSetKernelArg(k, 0, sizeof mA, &mA));
        CK(clSetKernelArg(k, 1, sizeof mB, &mB));
        CK(clSetKernelArg(k, 2, sizeof mC, &mC));
        CK(clSetKernelArg(k, 3, sizeof n, &n));
        size_t g2[2] = {MN, MN};
        CK(clEnqueueNDRangeKernel(q, k, 2, NULL, g2, NULL, 1, &fill, &run));
        CK(clEnqueueCopyBuffer(q, mC, mD, 0, 0, sizeof C, 1, &run, &copy));
        CK(clWaitForEvents(1, &copy));
        CK(clEnqueueReadBuffer(q, mD, CL_TRUE, 0, sizeof C, C, 0, NULL, NULL));
        for (size_t i = 0; i < MN; i++) {
            want = 0;
            for (size_t kk = 0; kk < MN; kk++)
                want += A[i * MN + kk] * 2u;
            for (size_t j = 0; j < MN; j++)
                if (C[i * MN + j] != want)
                    bad++;
        }
        if (it < ROUNDS)
            r->sum = mix(r->sum, C, MN * MN);
        CK(clReleaseEvent(fill));
        CK(clReleaseEvent(run));
        CK(clReleaseEvent(copy));
        CK(clReleaseKernel(k));
        CK(clReleaseMemObject(mA));
        CK(clReleaseMemObject(mB));
        CK(clReleaseMemObject(mC));
        CK(clReleaseMemObject(mD));
        r->errors += bad;
        r->iters++;
    }
    CK(clFinish(q));
    CK(clReleaseCommandQueue(q));
    free(a);
    free(b);
    free(c);
    return NULL;
}

static int work(double secs, int nt)
{
    first_device();
    w_ctx = new_context();
    w_prog = new_program(w_ctx);
    w_end = now_s() + secs;
    pthread_t t[64];
    wres r[64];
    if (nt < 1 || nt > 64)
        nt = 1;
    memset(r, 0, sizeof r);
    for (int i = 0; i < nt; i++)
        if (pthread_create(&t[i], NULL, work_thread, &r[i]) != 0)
            DIE("pthread_create", 0);
    unsigned long iters = 0, errors = 0;
    uint64_t sum = 0;
    int same = 1;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i], NULL);
        iters += r[i].iters;
        errors += r[i].errors;
        if (i && r[i].sum != sum)
            same = 0;
        sum = r[i].sum;
    }
    CK(clReleaseProgram(w_prog));
    CK(clReleaseContext(w_ctx));
    if (!same)
        errors++;
    printf("threads=%d iterations=%lu errors=%lu checksum=%016" PRIx64 "\n", nt, iters, errors, sum);
    return errors != 0;
}

/* ---- owner / intruder ----------------------------------------------------- */

static const cl_uint PAT = 0x5eca11edu;

static int owner(const char *ids, const char *go, int svm)
{
    first_device();
    cl_int err;
    cl_context ctx = new_context();
    cl_command_queue q = new_queue(ctx);
    cl_program p = new_program(ctx);
    cl_kernel k = clCreateKernel(p, "inc", &err);
    if (err != CL_SUCCESS)
        DIE("clCreateKernel", err);
    cl_uint host[256], back[256];
    for (int i = 0; i < 256; i++)
        host[i] = PAT + (cl_uint)i;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateBuffer", err);
    cl_event ev = clCreateUserEvent(ctx, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateUserEvent", err);
    cl_uint *s = NULL;
    if (svm) {
        s = clSVMAlloc(ctx, CL_MEM_READ_WRITE, sizeof host, 0);
        if (!s)
            DIE("clSVMAlloc", 0);
        CK(clEnqueueSVMMemcpy(q, CL_TRUE, s, host, sizeof host, 0, NULL, NULL));
    }
    CK(clSetKernelArg(k, 0, sizeof m, &m));
    cl_event mk; /* out handle of an async call: a guest-assigned id */
    CK(clEnqueueMarkerWithWaitList(q, 0, NULL, &mk));
    CK(clFinish(q));
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", ids);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 2;
    fprintf(f, "%" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
               " %" PRIx64 "\n",
            (uint64_t)(uintptr_t)ctx, (uint64_t)(uintptr_t)q, (uint64_t)(uintptr_t)m,
            (uint64_t)(uintptr_t)k, (uint64_t)(uintptr_t)ev, (uint64_t)(uintptr_t)p,
            (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)mk);
    fclose(f);
    rename(tmp, ids);
    for (int i = 0; i < 1200 && access(go, F_OK) != 0; i++)
        usleep(50000);
    int bad = 0;
    /* every object is still there and works */
    cl_int st = 0;
    err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS || st != CL_SUBMITTED) {
        printf("FAIL: the user event: %d, status %d\n", (int)err, (int)st);
        bad++;
    }
    err = clGetEventInfo(mk, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS || st != CL_COMPLETE) {
        printf("FAIL: the marker event: %d, status %d\n", (int)err, (int)st);
        bad++;
    }
    CK(clReleaseEvent(mk));
    CK(clSetUserEventStatus(ev, CL_COMPLETE));
    size_t g = 256;
    CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 1, &ev, NULL));
    CK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    for (int i = 0; i < 256; i++)
        if (back[i] != host[i] + 1u) {
            printf("FAIL: buffer[%d] = %08x, want %08x\n", i, back[i], host[i] + 1u);
            bad++;
            break;
        }
    if (svm) {
        memset(back, 0, sizeof back);
        CK(clEnqueueSVMMemcpy(q, CL_TRUE, back, s, sizeof back, 0, NULL, NULL));
        if (memcmp(back, host, sizeof back) != 0) {
            printf("FAIL: the SVM allocation changed\n");
            bad++;
        }
        clSVMFree(ctx, s);
    }
    CK(clReleaseEvent(ev));
    CK(clReleaseKernel(k));
    CK(clReleaseProgram(p));
    CK(clReleaseMemObject(m));
    CK(clReleaseCommandQueue(q));
    CK(clReleaseContext(ctx));
    printf("%s: the owner's context, queue, buffer, kernel, program, event%s are intact\n",
           bad ? "FAIL" : "ok", svm ? " and SVM allocation" : "");
    return bad != 0;
}

#define SHOW(call) printf("%-66s = %d\n", #call, (int)(call))

static int intruder(const char *ids, int svm)
{
    uint64_t v[8] = {0};
    FILE *f = NULL;
    for (int i = 0; i < 1200 && !(f = fopen(ids, "r")); i++)
        usleep(50000);
    if (!f || fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
                        " %" SCNx64 " %" SCNx64,
                    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
        printf("no ids from the owner\n");
        return 2;
    }
    fclose(f);
    cl_context fctx = (cl_context)(uintptr_t)v[0];
    cl_command_queue fq = (cl_command_queue)(uintptr_t)v[1];
    cl_mem fm = (cl_mem)(uintptr_t)v[2];
    cl_kernel fk = (cl_kernel)(uintptr_t)v[3];
    cl_event fe = (cl_event)(uintptr_t)v[4];
    cl_program fp = (cl_program)(uintptr_t)v[5];
    void *fs = (void *)(uintptr_t)v[6];
    cl_event fmk = (cl_event)(uintptr_t)v[7]; /* guest-assigned id of the owner's session */

    first_device();
    cl_int err;
    cl_context ctx = new_context();
    cl_command_queue q = new_queue(ctx);
    cl_program p = new_program(ctx);
    cl_kernel k = clCreateKernel(p, "inc", &err);
    if (err != CL_SUCCESS)
        DIE("clCreateKernel", err);
    cl_uint host[256] = {0};
    size_t sz = 0, g = 256;
    cl_uint u = 0;
    /* cl_mem */
    SHOW(clGetMemObjectInfo(fm, CL_MEM_SIZE, sizeof sz, &sz, NULL));
    SHOW(clEnqueueReadBuffer(q, fm, CL_TRUE, 0, 16, host, 0, NULL, NULL));
    SHOW(clEnqueueWriteBuffer(q, fm, CL_TRUE, 0, 16, host, 0, NULL, NULL));
    SHOW(clSetKernelArg(k, 0, sizeof fm, &fm));
    SHOW(clRetainMemObject(fm));
    SHOW(clReleaseMemObject(fm));
    /* cl_kernel, cl_program */
    SHOW(clGetKernelInfo(fk, CL_KERNEL_NUM_ARGS, sizeof u, &u, NULL));
    SHOW(clSetKernelArg(fk, 0, sizeof u, &u));
    SHOW(clEnqueueNDRangeKernel(q, fk, 1, NULL, &g, NULL, 0, NULL, NULL));
    SHOW(clFinish(q));
    SHOW(clEnqueueTask(q, fk, 0, NULL, NULL));
    SHOW(clFinish(q));
    SHOW(clReleaseKernel(fk));
    SHOW(clGetProgramInfo(fp, CL_PROGRAM_NUM_DEVICES, sizeof u, &u, NULL));
    SHOW(clReleaseProgram(fp));
    /* cl_command_queue (a blocking read: its error comes back at once) */
    SHOW(clGetCommandQueueInfo(fq, CL_QUEUE_REFERENCE_COUNT, sizeof u, &u, NULL));
    SHOW(clFinish(fq));
    SHOW(clEnqueueReadBuffer(fq, fm, CL_TRUE, 0, 16, host, 0, NULL, NULL));
    SHOW(clReleaseCommandQueue(fq));
    /* cl_event */
    SHOW(clGetEventInfo(fe, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof err, &err, NULL));
    SHOW(clSetUserEventStatus(fe, CL_COMPLETE));
    SHOW(clWaitForEvents(1, &fe));
    SHOW(clReleaseEvent(fe));
    SHOW(clGetEventInfo(fmk, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof err, &err, NULL));
    SHOW(clWaitForEvents(1, &fmk));
    SHOW(clEnqueueMarkerWithWaitList(q, 1, &fmk, NULL));
    SHOW(clFinish(q));
    SHOW(clReleaseEvent(fmk));
    /* cl_context */
    SHOW(clGetContextInfo(fctx, CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL));
    SHOW(clReleaseContext(fctx));
    if (svm) {
        /* the owner's SVM address: no allocation of this client */
        cl_uint fill = 0xdeadbeefu;
        SHOW(clSetKernelArgSVMPointer(k, 0, fs));
        SHOW(clEnqueueSVMMemFill(q, fs, &fill, sizeof fill, 16, 0, NULL, NULL));
        SHOW(clFinish(q));
        clSVMFree(ctx, fs);
    }
    /* this client's own objects still work */
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    SHOW(err);
    SHOW(clSetKernelArg(k, 0, sizeof m, &m));
    SHOW(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    SHOW(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    printf("own kernel wrote %u\n", host[255]);
    clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

/* ---- crash ------------------------------------------------------------------- */

static int crash(void)
{
    static const char *wild = "__kernel void wild(__global uint *p, long off) { p[off] = 1u; }";
    cl_int err;
    first_device();
    cl_context ctx = new_context();
    cl_command_queue q = new_queue(ctx);
    cl_program p = clCreateProgramWithSource(ctx, 1, &wild, NULL, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateProgramWithSource", err);
    CK(clBuildProgram(p, 1, &g_dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "wild", &err);
    if (err != CL_SUCCESS)
        DIE("clCreateKernel", err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    if (err != CL_SUCCESS)
        DIE("clCreateBuffer", err);
    cl_long off = (cl_long)1 << 45; /* * 4 bytes: outside any canonical address */
    size_t g = 1;
    CK(clSetKernelArg(k, 0, sizeof m, &m));
    CK(clSetKernelArg(k, 1, sizeof off, &off));
    printf("launching\n");
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    cl_int fin = clFinish(q);
    printf("clEnqueueNDRangeKernel = %d, clFinish = %d\n", (int)err, (int)fin);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && !strcmp(argv[1], "hog"))
        return hog((size_t)atol(argv[2]), argc > 3 && !strcmp(argv[3], "exit"));
    if (argc >= 4 && !strcmp(argv[1], "work"))
        return work(atof(argv[2]), atoi(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "owner"))
        return owner(argv[2], argv[3], argc > 4 && !strcmp(argv[4], "svm"));
    if (argc >= 2 && !strcmp(argv[1], "crash"))
        return crash();
    if (argc >= 3 && !strcmp(argv[1], "intruder"))
        return intruder(argv[2], argc > 3 && !strcmp(argv[3], "svm"));
    fprintf(stderr, "usage: see the header of tests/security/sec_ocl.c\n");
    return 2;
}
