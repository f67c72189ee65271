// tests/gpu/symbol_copy.cu: what a 16 KiB cudaMemcpyToSymbol costs natively
// depending on where its source bytes are (issue 16's `constant` pattern:
// the server's handler takes 7.3-8.4 us for the copy the program makes in
// 4.9-5.4). Each variant runs the pattern's iteration (ToSymbol, one kernel,
// FromSymbol 4 KiB, cudaDeviceSynchronize) ITERS times and prints the mean
// microseconds of the ToSymbol call alone and of the iteration.
//   nvcc -O2 -o /tmp/symbol_copy tests/gpu/symbol_copy.cu && /tmp/symbol_copy
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <atomic>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NCOEF 4096
#define NRES 1024
#define ITERS 2000
__constant__ float coef[NCOEF];
__device__ float result[NRES];

__global__ void poly(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0;
        for (int k = 0; k < 64; k++)
            acc = acc * 0.0f + coef[k];
        y[i] = acc;
        if (blockIdx.x == 0)
            result[threadIdx.x] = acc;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static float hot[NCOEF];
static float hres[NRES];
static float *dy;
static const int n = 1 << 20;

// a writer thread on another CPU fills the source before each copy, as the
// guest (shm) or the kernel's receive path would
static float *volatile xsrc;
static std::atomic<int> xgo{0}, xdone{0};
static void *writer(void *arg)
{
    (void)arg;
    for (;;) {
        int g;
        while ((g = xgo.load()) == xdone.load())
            ;
        if (g < 0)
            return NULL;
        float *s = xsrc;
        for (int k = 0; k < NCOEF; k++)
            s[k] = (float)(g + k);
        xdone.store(g);
    }
}

enum fill { FILL_SELF, FILL_OTHER, FILL_NONE };
enum before { BEFORE_SYNC, BEFORE_FROMSYMBOL };
// how the copy is made: the program's call; the bytes copied into pinned
// staging first, then an asynchronous copy on the legacy stream (what the
// runtime does with pageable memory, made by hand); an asynchronous copy
// straight from where the bytes are; to the symbol's address with cudaMemcpyAsync
enum how { HOW_CALL, HOW_STAGE_ASYNC, HOW_ASYNC, HOW_STAGE_ADDR };
static float *stage;
static void *coef_addr;

static void variant(const char *label, float *src, enum fill fill, enum before before, enum how how = HOW_CALL)
{
    double to = 0, it = 0;
    for (int i = -100; i < ITERS; i++) {
        if (before == BEFORE_SYNC)
            CK(cudaDeviceSynchronize());
        if (fill == FILL_SELF) {
            for (int k = 0; k < NCOEF; k++)
                src[k] = (float)(i + k);
        } else if (fill == FILL_OTHER) {
            xsrc = src;
            xgo.store(i + 1000);
            while (xdone.load() != i + 1000)
                ;
        }
        src[63] = (float)i;
        double t0 = now();
        if (how == HOW_CALL) {
            CK(cudaMemcpyToSymbol(coef, src, sizeof hot));
        } else if (how == HOW_STAGE_ASYNC) {
            memcpy(stage, src, sizeof hot);
            CK(cudaMemcpyToSymbolAsync(coef, stage, sizeof hot, 0, cudaMemcpyHostToDevice, cudaStreamLegacy));
        } else if (how == HOW_ASYNC) {
            CK(cudaMemcpyToSymbolAsync(coef, src, sizeof hot, 0, cudaMemcpyHostToDevice, cudaStreamLegacy));
        } else {
            memcpy(stage, src, sizeof hot);
            CK(cudaMemcpyAsync(coef_addr, stage, sizeof hot, cudaMemcpyHostToDevice, cudaStreamLegacy));
        }
        double t1 = now();
        poly<<<(n + NRES - 1) / NRES, NRES>>>(dy, n);
        CK(cudaMemcpyFromSymbol(hres, result, sizeof hres));
        CK(cudaDeviceSynchronize());
        double t2 = now();
        if (hres[0] != (float)i) {
            fprintf(stderr, "%s: wrong result %f (want %d)\n", label, hres[0], i);
            exit(1);
        }
        if (i >= 0) {
            to += t1 - t0;
            it += t2 - t0;
        }
    }
    printf("%-44s ToSymbol %6.2f us  iteration %6.2f us\n", label, to * 1e6 / ITERS, it * 1e6 / ITERS);
}

int main(void)
{
    CK(cudaMalloc(&dy, n * sizeof(float)));
    pthread_t w;
    pthread_create(&w, NULL, writer, NULL);
    cpu_set_t cs;
    CPU_ZERO(&cs);
    CPU_SET(2, &cs);
    pthread_setaffinity_np(w, sizeof cs, &cs);
    CPU_ZERO(&cs);
    CPU_SET(6, &cs);
    pthread_setaffinity_np(pthread_self(), sizeof cs, &cs);

    float *heap = (float *)malloc(1 << 20);
    float *shared = (float *)mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    float *reg = (float *)malloc(1 << 20);
    float *mh;
    CK(cudaMallocHost(&mh, 1 << 20));
    memset(heap, 0, 1 << 20);
    memset(shared, 0, 1 << 20);
    memset(reg, 0, 1 << 20);
    CK(cudaHostRegister(reg, 1 << 20, cudaHostRegisterPortable));
    CK(cudaMallocHost(&stage, 1 << 20));
    CK(cudaGetSymbolAddress(&coef_addr, coef));

    for (int round = 0; round < 2; round++) {
        printf("round %d\n", round);
        variant("static array, filled by this thread", hot, FILL_SELF, BEFORE_SYNC);
        variant("static array, not refilled", hot, FILL_NONE, BEFORE_SYNC);
        variant("heap, filled by another CPU", heap + 1024, FILL_OTHER, BEFORE_SYNC);
        variant("MAP_SHARED, filled by this thread", shared + 1024, FILL_SELF, BEFORE_SYNC);
        variant("MAP_SHARED, filled by another CPU", shared + 1024, FILL_OTHER, BEFORE_SYNC);
        variant("registered heap, filled by this thread", reg + 1024, FILL_SELF, BEFORE_SYNC);
        variant("cudaMallocHost, filled by this thread", mh + 1024, FILL_SELF, BEFORE_SYNC);
        variant("static array, no sync before (FromSymbol)", hot, FILL_SELF, BEFORE_FROMSYMBOL);
        variant("heap other CPU, no sync before", heap + 1024, FILL_OTHER, BEFORE_FROMSYMBOL);
        variant("heap other CPU, pinned staging + async", heap + 1024, FILL_OTHER, BEFORE_SYNC, HOW_STAGE_ASYNC);
        variant("heap other CPU, staging + async, no sync", heap + 1024, FILL_OTHER, BEFORE_FROMSYMBOL, HOW_STAGE_ASYNC);
        variant("heap other CPU, staging + cudaMemcpyAsync", heap + 1024, FILL_OTHER, BEFORE_SYNC, HOW_STAGE_ADDR);
        variant("static, staging + async", hot, FILL_SELF, BEFORE_SYNC, HOW_STAGE_ASYNC);
        variant("pinned other CPU, async from it", mh + 1024, FILL_OTHER, BEFORE_SYNC, HOW_ASYNC);
        variant("pinned other CPU, async, no sync", mh + 1024, FILL_OTHER, BEFORE_FROMSYMBOL, HOW_ASYNC);
        variant("pinned other CPU, the call", mh + 1024, FILL_OTHER, BEFORE_SYNC);
    }
    xgo.store(-1);
    pthread_join(w, NULL);
    return 0;
}
