// Two threads' work on one stream runs in their call order (runtime/guest.c,
// the cross-thread path of apigen_call_async). Thread A (main) queues work on
// a stream, then tells thread B so through a condition variable, with no
// synchronous CUDA call in between; B queues work that depends on A's on the
// same stream and reads the result back. Natively the stream runs A's work
// first; through the stub each thread queues on its own connection and the
// server runs connections independently, so B's frames could run first (the
// bug 1963511 fixed: PyTorch's autograd thread and main thread on the legacy
// stream trained to different losses). tests/cuda/order_ci.sh runs this
// natively and through the runtime stub against tests/cuda/fake_kernels.c's
// stand-in device (scale and addc, bench/patterns.cu's kernels, run on the CPU
// when the server calls the launch: a reordering changes the numbers) and
// requires the same output. Every case prints how many rounds differ from
// the sequential result (0); the exit status is 1 if any differs.
#include <cuda_runtime.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

// the names and parameters of bench/patterns.cu's kernels (the stand-in runs those)
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

enum { N = 256, STEPS = 12, ROUNDS = 40 };
enum variant { LAUNCH, COPY, READ };
static const char *const variant_names[] = {"launch", "copy", "read"};

static float *x, *y;
static float host_seed[N];
static cudaStream_t stream; // the stream of the case: 0 (legacy) or one both threads share

// the round handshake: pthread only, never a CUDA call
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, done, quit; // rounds handed to B, rounds B finished
static enum variant var;
static float got_x[N], got_y[N];
static cudaError_t b_err;

// B's part: dependent work on the same stream, then the result back
static cudaError_t b_work(void)
{
    cudaError_t e = cudaSuccess;
    switch (var) {
    case LAUNCH: // x = x * 3 - 1, three times, after A's steps
        for (int i = 0; i < 3; i++) {
            scale<<<1, N, 0, stream>>>(x, 3.0f, N);
            addc<<<1, N, 0, stream>>>(x, -1.0f, N);
        }
        break;
    case COPY: // y = x (A's result), x = seed + 1: queued copies, then a launch
        e = cudaMemcpyAsync(y, x, sizeof(float) * N, cudaMemcpyDeviceToDevice, stream);
        if (!e)
            e = cudaMemcpyAsync(x, host_seed, sizeof host_seed, cudaMemcpyHostToDevice, stream);
        if (!e)
            addc<<<1, N, 0, stream>>>(x, 1.0f, N);
        break;
    case READ: // only the read: an async copy to the host, then the stream's sync
        break;
    }
    if (!e)
        e = cudaMemcpyAsync(got_x, x, sizeof got_x, cudaMemcpyDeviceToHost, stream);
    if (!e && var == COPY)
        e = cudaMemcpyAsync(got_y, y, sizeof got_y, cudaMemcpyDeviceToHost, stream);
    if (!e)
        e = cudaStreamSynchronize(stream);
    return e;
}

static void *thread_b(void *)
{
    int seen = 0;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (go == seen && !quit)
            pthread_cond_wait(&cv, &mu);
        if (quit) {
            pthread_mutex_unlock(&mu);
            return nullptr;
        }
        seen = go;
        pthread_mutex_unlock(&mu);
        cudaError_t e = b_work();
        pthread_mutex_lock(&mu);
        b_err = e;
        done = seen;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

// A's part: x = seed (x[i] = i % 7), then x = x * 2 + 1 STEPS times; no
// synchronous call (cudaGetLastError comes after the round)
static cudaError_t a_work(void)
{
    cudaError_t e = cudaMemcpyAsync(x, host_seed, sizeof host_seed, cudaMemcpyHostToDevice, stream);
    for (int i = 0; i < STEPS && !e; i++) {
        scale<<<1, N, 0, stream>>>(x, 2.0f, N);
        addc<<<1, N, 0, stream>>>(x, 1.0f, N);
    }
    return e;
}

// what the stream computes when A's work runs before B's (exact in floats)
static void expected(float *ex, float *ey)
{
    for (int i = 0; i < N; i++) {
        float v = host_seed[i];
        for (int s = 0; s < STEPS; s++)
            v = v * 2.0f + 1.0f;
        ey[i] = v;
        if (var == LAUNCH)
            for (int s = 0; s < 3; s++)
                v = v * 3.0f - 1.0f;
        if (var == COPY)
            v = host_seed[i] + 1.0f;
        ex[i] = v;
    }
}

static int run_case(const char *stream_name)
{
    float ex[N], ey[N];
    int differ = 0, failed = 0;
    char first[160] = "";
    expected(ex, ey);
    for (int r = 0; r < ROUNDS && !failed; r++) {
        cudaError_t e = a_work();
        pthread_mutex_lock(&mu);
        int want = ++go;
        pthread_cond_broadcast(&cv);
        while (done != want)
            pthread_cond_wait(&cv, &mu);
        cudaError_t eb = b_err;
        pthread_mutex_unlock(&mu);
        if (!e)
            e = cudaGetLastError(); // A's launches (after the round: a sync call here hides nothing)
        if (e || eb) {
            printf("%s on the %s stream: round %d: A's calls %d, B's calls %d\n", variant_names[var],
                   stream_name, r, (int)e, (int)eb);
            failed = 1;
            break;
        }
        int bad = memcmp(got_x, ex, sizeof ex) != 0 || (var == COPY && memcmp(got_y, ey, sizeof ey) != 0);
        if (bad && !differ++)
            snprintf(first, sizeof first, " (first: round %d, x[1] %g want %g, y[1] %g want %g)", r,
                     got_x[1], ex[1], var == COPY ? got_y[1] : 0.0f, var == COPY ? ey[1] : 0.0f);
    }
    printf("%s on the %s stream: %d rounds, %d differ from the sequential order%s\n", variant_names[var],
           stream_name, ROUNDS, differ, first);
    return differ || failed;
}

int main()
{
    for (int i = 0; i < N; i++)
        host_seed[i] = (float)(i % 7);
    cudaStream_t shared;
    if (cudaSetDevice(0) || cudaMalloc(&x, sizeof(float) * N) || cudaMalloc(&y, sizeof(float) * N) ||
        cudaStreamCreate(&shared)) {
        printf("setup failed\n");
        return 1;
    }
    pthread_t b;
    if (pthread_create(&b, nullptr, thread_b, nullptr)) {
        printf("no thread\n");
        return 1;
    }
    int rc = 0;
    const struct { const char *name; cudaStream_t s; } streams[] = {{"legacy", 0}, {"shared", shared}};
    for (auto &s : streams)
        for (int v = LAUNCH; v <= READ; v++) {
            stream = s.s;
            var = (enum variant)v;
            rc |= run_case(s.name);
        }
    pthread_mutex_lock(&mu);
    quit = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(b, nullptr);
    printf("teardown: %d\n", (int)(cudaStreamDestroy(shared) | cudaFree(x) | cudaFree(y)));
    return rc;
}
