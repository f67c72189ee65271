// Program patterns (issue 16): what real CUDA programs do in their loops,
// timed the way they time them, one metric line each for apigen-bench
// (bench/worker.h). Built twice by bench/CMakeLists.txt: with -cudart shared
// (bench_patterns_rt: LD_LIBRARY_PATH picks NVIDIA's libcudart.so.13 or
// apigen's runtime stub) and with plain nvcc (bench_patterns_drv: the static
// runtime over libcuda.so.1, NVIDIA's driver or apigen's driver stub).
//
// Every value is microseconds per iteration (lower is better):
//   spin_{2,5,20}us   launches of a kernel that spins that long, timed with
//                     two events around the loop (GPU time per launch)
//   params_{1,8,16}   launches of a kernel with that many parameters, N of
//                     them then cudaDeviceSynchronize, timed on the host
//   reduce_copy       one reduction kernel, a 4-byte cudaMemcpy back,
//                     cudaDeviceSynchronize, timed on the host
//   multipass         ten passes of two kernels in place over 8M floats,
//                     timed on the host between two cudaDeviceSynchronize
//   streams_events    four streams chained by events (wait, 5 us kernel,
//                     record on each), one cudaDeviceSynchronize at the end
//   constant          cudaMemcpyToSymbol (16 KiB __constant__), one kernel,
//                     cudaMemcpyFromSymbol (4 KiB __device__), between two
//                     cudaDeviceSynchronize
//   pin_{alloc,fill,first,later}_{44B,4M,64M}  cudaMallocHost of that size,
//                     the program's first memset of it, the
//                     first cudaMemcpyAsync H2D from it (+ stream sync), a
//                     later one of the same size (best of 3)
//
// BENCH_PATTERNS=constant,pin_first_4M runs only the patterns named.
//
// BENCH_PATTERN_COUNT=1 (tests/gpu/patterns.sh sets it, with APIGEN_TRACE):
// instead of timing, each loop runs 10 and then 20 iterations, each run
// between two lines appended to the APIGEN_TRACE file:
//     apigen pattern mark: begin NAME ITERS TRANSPORT
//     apigen pattern mark: end NAME ITERS TRANSPORT
// so that bench/patterns_table.sh can count the calls of one iteration in the
// guest's and the server's trace lines (the difference of the two runs
// cancels what happens once per run). Markers are written only when
// forwarded (APIGEN_SERVER set); the worker waits 50 ms before each marker
// so that the server has written the trace line of the last reply.
#include <cuda_runtime.h>

#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "worker.h"

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, (int)e_,              \
                    cudaGetErrorString(e_));                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

// ---- kernels --------------------------------------------------------------------------
__device__ __forceinline__ unsigned long long gtime()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// spins ns nanoseconds of the GPU's global timer (independent of clocks)
__global__ void spin(unsigned long long ns, int *flag)
{
    unsigned long long t0 = gtime();
    while (gtime() - t0 < ns) {
    }
    if (flag)
        *flag = 1;
}

__global__ void k1(int *p)
{
    if (threadIdx.x == 0)
        p[0] += 1;
}

__global__ void k8(int *p, float a, int b, size_t c, const float *d, double e, int f, unsigned g)
{
    if (threadIdx.x == 0)
        p[1] += (int)a + b + (int)c + (d != nullptr) + (int)e + f + (int)g;
}

__global__ void k16(int *p, float a, int b, size_t c, const float *d, double e, int f, unsigned g,
                    char h, short i, long long j, float k, const int *l, int m, double n, unsigned o)
{
    if (threadIdx.x == 0)
        p[2] += (int)a + b + (int)c + (d != nullptr) + (int)e + f + (int)g + h + i + (int)j + (int)k +
                (l != nullptr) + m + (int)n + (int)o;
}

// one block: the sum of n floats into *out
__global__ void reduce(const float *x, int n, float *out)
{
    __shared__ float s[1024];
    float v = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = s[0];
}

__global__ void scale(float *x, float a, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void addc(float *x, float b, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += b;
}

#define NCOEF 4096
#define NRES 1024
__constant__ float coef[NCOEF];
__device__ float result[NRES];

__global__ void poly(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i], acc = 0;
        for (int k = 0; k < 64; k++)
            acc = acc * v + coef[k];
        y[i] = acc;
        if (blockIdx.x == 0)
            result[threadIdx.x] = acc;
    }
}

// ---- count mode: markers in the trace --------------------------------------------------
static int counting, mark_fd = -1;
static char transport[16] = "native";

static void mark(const char *what, const char *name, int iters)
{
    if (mark_fd < 0)
        return;
    usleep(50000); // the server writes a call's trace line after its reply
    char line[160];
    int n = snprintf(line, sizeof line, "apigen pattern mark: %s %s %d %s\n", what, name, iters, transport);
    if (write(mark_fd, line, (size_t)n) != n)
        fprintf(stderr, "patterns: writing a marker to APIGEN_TRACE failed\n");
}

static void count_setup()
{
    const char *c = getenv("BENCH_PATTERN_COUNT"), *tr = getenv("APIGEN_TRACE"),
               *url = getenv("APIGEN_SERVER");
    counting = c && *c && strcmp(c, "0") != 0;
    if (!counting || !url || !*url)
        return;
    const char *sep = strstr(url, "://");
    snprintf(transport, sizeof transport, "%.*s", sep ? (int)(sep - url) : 7, url);
    if (!tr || !*tr || !strcmp(tr, "1")) {
        fprintf(stderr, "patterns: BENCH_PATTERN_COUNT=1 wants APIGEN_TRACE=FILE (no markers written)\n");
        return;
    }
    mark_fd = open(tr, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (mark_fd < 0)
        fprintf(stderr, "patterns: cannot open APIGEN_TRACE=%s for markers\n", tr);
}

// ---- the patterns ------------------------------------------------------------------------
// A loop pattern: run(iters) runs the timed section and returns seconds
// (host clock, or the events' time where the program times with events).
typedef double (*run_fn)(int iters);

// BENCH_PATTERNS=name,name (default all): only the loops named run (a
// traced look at one pattern without the others' lines around it).
static bool wanted(const char *name)
{
    const char *only = getenv("BENCH_PATTERNS");
    if (!only || !*only)
        return true;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
            return true;
    return false;
}

static void loop_pattern(const char *name, const char *desc, run_fn run, int iters)
{
    if (!wanted(name))
        return;
    if (counting) {
        run(2); // warm, as the timed runs warm
        for (int k = 1; k <= 2; k++) {
            CK(cudaDeviceSynchronize());
            mark("begin", name, 10 * k);
            run(10 * k);
            mark("end", name, 10 * k);
        }
        return;
    }
    run(iters / 10 + 1);
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double s = run(iters);
        if (s < best)
            best = s;
    }
    bw_report(name, "us", "lo", best * 1e6 / iters, desc);
}

static int *dflag;
static cudaEvent_t ev0, ev1;
static cudaStream_t st[4];
static cudaEvent_t sev[4];
static float *dred, *dredout, *dbig, *dpx, *dpy;
// BENCH_PATTERN_SMALL=1 (tests/cuda/patterns_ci.sh, whose stand-in devices
// run kernels on the CPU): multipass and constant over 64K elements instead
// of 8M and 1M; the calls each loop makes are the same
static size_t big_n = 8u << 20;
static int poly_n = 1 << 20;
static const int red_n = 1 << 16;
static float hcoef[NCOEF], hres[NRES];

static double spin_events(unsigned long long ns, int iters)
{
    CK(cudaEventRecord(ev0, 0));
    for (int i = 0; i < iters; i++)
        spin<<<1, 32>>>(ns, nullptr);
    CK(cudaEventRecord(ev1, 0));
    CK(cudaEventSynchronize(ev1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev0, ev1));
    return ms / 1e3;
}
static double spin2(int n) { return spin_events(2000, n); }
static double spin5(int n) { return spin_events(5000, n); }
static double spin20(int n) { return spin_events(20000, n); }

static double params1(int iters)
{
    double t0 = bw_now();
    for (int i = 0; i < iters; i++)
        k1<<<1, 32>>>(dflag);
    CK(cudaDeviceSynchronize());
    return bw_now() - t0;
}

static double params8(int iters)
{
    double t0 = bw_now();
    for (int i = 0; i < iters; i++)
        k8<<<1, 32>>>(dflag, 1.0f, i, 3, dred, 2.0, 4, 5u);
    CK(cudaDeviceSynchronize());
    return bw_now() - t0;
}

static double params16(int iters)
{
    double t0 = bw_now();
    for (int i = 0; i < iters; i++)
        k16<<<1, 32>>>(dflag, 1.0f, i, 3, dred, 2.0, 4, 5u, 'a', 6, 7, 8.0f, dflag, 9, 10.0, 11u);
    CK(cudaDeviceSynchronize());
    return bw_now() - t0;
}

static double reduce_copy(int iters)
{
    float r = 0;
    double t0 = bw_now();
    for (int i = 0; i < iters; i++) {
        reduce<<<1, 1024>>>(dred, red_n, dredout);
        CK(cudaMemcpy(&r, dredout, sizeof r, cudaMemcpyDeviceToHost));
        CK(cudaDeviceSynchronize());
    }
    double s = bw_now() - t0;
    if (r != (float)red_n)
        fprintf(stderr, "patterns: reduce_copy: wrong sum %f (want %d)\n", r, red_n);
    return s;
}

static double multipass(int iters)
{
    unsigned blocks = (unsigned)((big_n + 255) / 256);
    double total = 0;
    for (int i = 0; i < iters; i++) {
        CK(cudaDeviceSynchronize());
        double t0 = bw_now();
        for (int p = 0; p < 10; p++) {
            scale<<<blocks, 256>>>(dbig, 0.5f, big_n);
            addc<<<blocks, 256>>>(dbig, 1.0f, big_n);
        }
        CK(cudaDeviceSynchronize());
        total += bw_now() - t0;
    }
    return total;
}

static double streams_events(int iters)
{
    double t0 = bw_now();
    for (int i = 0; i < iters; i++)
        for (int k = 0; k < 4; k++) {
            CK(cudaStreamWaitEvent(st[k], sev[(k + 3) % 4], 0));
            spin<<<1, 32, 0, st[k]>>>(5000, nullptr);
            CK(cudaEventRecord(sev[k], st[k]));
        }
    CK(cudaDeviceSynchronize());
    return bw_now() - t0;
}

// BENCH_PATTERN_SPLIT=1: constant also prints the mean microseconds of each
// of its four calls (stderr), where the iteration's time goes call by call
static double constant(int iters)
{
    const char *sp = getenv("BENCH_PATTERN_SPLIT");
    bool split = sp && *sp && strcmp(sp, "0") != 0;
    double total = 0, part[4] = {0, 0, 0, 0};
    for (int i = 0; i < iters; i++) {
        CK(cudaDeviceSynchronize());
        double t0 = bw_now(), t1 = 0, t2 = 0, t3 = 0;
        hcoef[63] = (float)i; // x is 0: the polynomial is coef[63]
        CK(cudaMemcpyToSymbol(coef, hcoef, sizeof hcoef));
        if (split)
            t1 = bw_now();
        poly<<<(poly_n + NRES - 1) / NRES, NRES>>>(dpx, dpy, poly_n);
        if (split)
            t2 = bw_now();
        CK(cudaMemcpyFromSymbol(hres, result, sizeof hres));
        if (split)
            t3 = bw_now();
        CK(cudaDeviceSynchronize());
        double end = bw_now();
        total += end - t0;
        if (split) {
            part[0] += t1 - t0;
            part[1] += t2 - t1;
            part[2] += t3 - t2;
            part[3] += end - t3;
        }
        if (hres[0] != (float)i) {
            fprintf(stderr, "patterns: constant: wrong result %f (want %d)\n", hres[0], i);
            exit(1);
        }
    }
    if (split)
        fprintf(stderr, "constant split, us per call: ToSymbol %.2f launch %.2f FromSymbol %.2f sync %.2f\n",
                part[0] * 1e6 / iters, part[1] * 1e6 / iters, part[2] * 1e6 / iters, part[3] * 1e6 / iters);
    return total;
}

// cudaMallocHost, the program's first write into it, then the first
// cudaMemcpyAsync from it, then later ones
static void pinned(size_t bytes, const char *tag)
{
    char name[4][32], desc[4][96];
    snprintf(name[0], sizeof name[0], "pin_alloc_%s", tag);
    snprintf(name[1], sizeof name[1], "pin_first_%s", tag);
    snprintf(name[2], sizeof name[2], "pin_later_%s", tag);
    snprintf(name[3], sizeof name[3], "pin_fill_%s", tag);
    snprintf(desc[0], sizeof desc[0], "cudaMallocHost %s", tag);
    snprintf(desc[1], sizeof desc[1], "first cudaMemcpyAsync H2D %s from it", tag);
    snprintf(desc[2], sizeof desc[2], "later cudaMemcpyAsync H2D %s (best of 3)", tag);
    snprintf(desc[3], sizeof desc[3], "first memset of the %s (page faults?)", tag);
    if (!wanted(name[0]) && !wanted(name[1]) && !wanted(name[2]) && !wanted(name[3]))
        return;
    // a destination of the copy's size (dbig holds 32 MiB: a 64 MiB copy
    // into it was cudaErrorInvalidValue natively and stopped the worker)
    void *dst = nullptr;
    CK(cudaMalloc(&dst, bytes));
    CK(cudaDeviceSynchronize());
    char *h = nullptr;
    mark("begin", name[0], 1);
    double t0 = bw_now();
    CK(cudaMallocHost((void **)&h, bytes));
    double alloc = bw_now() - t0;
    mark("end", name[0], 1);
    t0 = bw_now();
    memset(h, 1, bytes); // natively its pages are there: pinned memory is populated
    double fill = bw_now() - t0;
    mark("begin", name[1], 1);
    t0 = bw_now();
    CK(cudaMemcpyAsync(dst, h, bytes, cudaMemcpyHostToDevice, st[0]));
    CK(cudaStreamSynchronize(st[0]));
    double first = bw_now() - t0, later = 1e30;
    mark("end", name[1], 1);
    for (int r = 0; r < 3; r++) {
        if (r == 2)
            mark("begin", name[2], 1);
        t0 = bw_now();
        CK(cudaMemcpyAsync(dst, h, bytes, cudaMemcpyHostToDevice, st[0]));
        CK(cudaStreamSynchronize(st[0]));
        double d = bw_now() - t0;
        if (d < later)
            later = d;
    }
    mark("end", name[2], 1);
    CK(cudaFreeHost(h));
    CK(cudaFree(dst));
    if (!counting) {
        bw_report(name[0], "us", "lo", alloc * 1e6, desc[0]);
        bw_report(name[1], "us", "lo", first * 1e6, desc[1]);
        bw_report(name[2], "us", "lo", later * 1e6, desc[2]);
        bw_report(name[3], "us", "lo", fill * 1e6, desc[3]);
    }
}

int main()
{
    count_setup();
    const char *small = getenv("BENCH_PATTERN_SMALL");
    if (small && *small && strcmp(small, "0") != 0)
        big_n = 64u << 10, poly_n = 64 << 10;
    CK(cudaSetDevice(0));
    CK(cudaMalloc(&dflag, 4 * sizeof(int)));
    CK(cudaMemset(dflag, 0, 4 * sizeof(int)));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    for (int k = 0; k < 4; k++) {
        CK(cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&sev[k], cudaEventDisableTiming));
        CK(cudaEventRecord(sev[k], st[k]));
    }
    // 64 MiB: the 8M-float multi-pass array and the largest pinned copy's target
    CK(cudaMalloc(&dbig, big_n * sizeof(float)));
    CK(cudaMemset(dbig, 0, big_n * sizeof(float)));
    float *ones = (float *)malloc(red_n * sizeof(float));
    for (int i = 0; i < red_n; i++)
        ones[i] = 1.0f;
    CK(cudaMalloc(&dred, red_n * sizeof(float)));
    CK(cudaMalloc(&dredout, sizeof(float)));
    CK(cudaMemcpy(dred, ones, red_n * sizeof(float), cudaMemcpyHostToDevice));
    free(ones);
    CK(cudaMalloc(&dpx, poly_n * sizeof(float)));
    CK(cudaMalloc(&dpy, poly_n * sizeof(float)));
    CK(cudaMemset(dpx, 0, poly_n * sizeof(float)));
    CK(cudaDeviceSynchronize());

    // the first pinned copies first: nothing pinned before them
    pinned(44, "44B");
    pinned(4u << 20, "4M");
    pinned(64u << 20, "64M");

    loop_pattern("spin_2us", "2 us kernel loop, events", spin2, 2000);
    loop_pattern("spin_5us", "5 us kernel loop, events", spin5, 2000);
    loop_pattern("spin_20us", "20 us kernel loop, events", spin20, 1000);
    loop_pattern("params_1", "1-parameter kernel launches", params1, 20000);
    loop_pattern("params_8", "8-parameter kernel launches", params8, 20000);
    loop_pattern("params_16", "16-parameter kernel launches", params16, 20000);
    loop_pattern("reduce_copy", "reduce + 4 B cudaMemcpy + sync", reduce_copy, 2000);
    loop_pattern("multipass", "10x2 kernels over 8M floats, synced", multipass, 20);
    loop_pattern("streams_events", "4 streams chained by events", streams_events, 500);
    loop_pattern("constant", "ToSymbol + kernel + FromSymbol", constant, 300);

    // the multi-pass result: x <- 0.5 x + 1, from 0, converges to 2
    float back = 0;
    CK(cudaMemcpy(&back, dbig, sizeof back, cudaMemcpyDeviceToHost));
    if (wanted("multipass") && (back < 1.9f || back > 2.0f))
        fprintf(stderr, "patterns: multipass: wrong value %f (want about 2)\n", back);
    return 0;
}
