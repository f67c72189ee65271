/* Two threads' work on one stream runs in their call order (runtime/guest.c,
 * the cross-thread path of apigen_call_async), through the driver stub: the
 * driver-API twin of tests/cuda/order_rt.cu. Thread A (main) queues
 * cuLaunchKernel and cuMemcpyHtoDAsync on a stream, then tells thread B so
 * through a condition variable, with no synchronous CUDA call in between; B
 * queues dependent work on the same stream (launches, or cuMemcpyDtoDAsync
 * and cuMemcpyHtoDAsync then a launch, or nothing) and reads the result with
 * cuMemcpyDtoHAsync and cuStreamSynchronize. Natively the stream runs A's
 * work first; through the stub each thread queues on its own connection and
 * the server runs connections independently, so B's frames could run first
 * (the bug 1963511 fixed). tests/cuda/order_ci.sh runs this natively and
 * through the stub against tests/cuda/driver/fake_driver.c (bench/patterns.cu's
 * scale and addc run on the CPU when the server calls the launch: a
 * reordering changes the numbers) and requires the same output. Every case
 * prints how many rounds differ from the sequential result (0); the exit
 * status is 1 if any differs. On a GPU (tests/gpu/order.sh) ORDER_CI_IMAGE
 * names a module with the two kernels (nvcc -ptx tests/cuda/order_rt.cu). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n"
                            ".version 8.0\n.target sm_80\n.address_size 64\n";

enum { N = 256, STEPS = 12, ROUNDS = 40 };
enum variant { LAUNCH, COPY, READ };
static const char *const variant_names[] = {"launch", "copy", "read"};

static CUcontext ctx;
static CUfunction scale, addc; /* bench/patterns.cu's scale(float *, float, size_t), addc likewise */
static CUdeviceptr x, y;
static float host_seed[N];
static CUstream stream; /* the stream of the case: NULL (legacy) or one both threads share */

/* the round handshake: pthread only, never a CUDA call */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, done, quit; /* rounds handed to B, rounds B finished */
static enum variant var;
static float got_x[N], got_y[N];
static CUresult b_err;

static CUresult launch(CUfunction f, CUdeviceptr p, float a)
{
    size_t n = N;
    void *args[] = {&p, &a, &n};
    return cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, stream, args, NULL);
}

/* B's part: dependent work on the same stream, then the result back */
static CUresult b_work(void)
{
    CUresult e = CUDA_SUCCESS;
    switch (var) {
    case LAUNCH: /* x = x * 3 - 1, three times, after A's steps */
        for (int i = 0; i < 3 && !e; i++) {
            e = launch(scale, x, 3.0f);
            if (!e)
                e = launch(addc, x, -1.0f);
        }
        break;
    case COPY: /* y = x (A's result), x = seed + 1: queued copies, then a launch */
        e = cuMemcpyDtoDAsync(y, x, sizeof(float) * N, stream);
        if (!e)
            e = cuMemcpyHtoDAsync(x, host_seed, sizeof host_seed, stream);
        if (!e)
            e = launch(addc, x, 1.0f);
        break;
    case READ: /* only the read: an async copy to the host, then the stream's sync */
        break;
    }
    if (!e)
        e = cuMemcpyDtoHAsync(got_x, x, sizeof got_x, stream);
    if (!e && var == COPY)
        e = cuMemcpyDtoHAsync(got_y, y, sizeof got_y, stream);
    if (!e)
        e = cuStreamSynchronize(stream);
    return e;
}

static void *thread_b(void *arg)
{
    (void)arg;
    int seen = 0;
    CUresult e = cuCtxSetCurrent(ctx);
    for (;;) {
        pthread_mutex_lock(&mu);
        while (go == seen && !quit)
            pthread_cond_wait(&cv, &mu);
        if (quit) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        seen = go;
        pthread_mutex_unlock(&mu);
        CUresult r = e ? e : b_work();
        pthread_mutex_lock(&mu);
        b_err = r;
        done = seen;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

/* A's part: x = seed (x[i] = i % 7), then x = x * 2 + 1 STEPS times; no
 * synchronous call */
static CUresult a_work(void)
{
    CUresult e = cuMemcpyHtoDAsync(x, host_seed, sizeof host_seed, stream);
    for (int i = 0; i < STEPS && !e; i++) {
        e = launch(scale, x, 2.0f);
        if (!e)
            e = launch(addc, x, 1.0f);
    }
    return e;
}

/* what the stream computes when A's work runs before B's (exact in floats) */
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
    int differ = 0;
    char first[160] = "";
    expected(ex, ey);
    for (int r = 0; r < ROUNDS; r++) {
        CUresult e = a_work();
        pthread_mutex_lock(&mu);
        int want = ++go;
        pthread_cond_broadcast(&cv);
        while (done != want)
            pthread_cond_wait(&cv, &mu);
        CUresult eb = b_err;
        pthread_mutex_unlock(&mu);
        if (e || eb) {
            printf("%s on the %s stream: round %d: A's calls %d, B's calls %d\n", variant_names[var],
                   stream_name, r, (int)e, (int)eb);
            return 1;
        }
        int bad = memcmp(got_x, ex, sizeof ex) != 0 || (var == COPY && memcmp(got_y, ey, sizeof ey) != 0);
        if (bad && !differ++)
            snprintf(first, sizeof first, " (first: round %d, x[1] %g want %g, y[1] %g want %g)", r,
                     (double)got_x[1], (double)ex[1], var == COPY ? (double)got_y[1] : 0.0,
                     var == COPY ? (double)ey[1] : 0.0);
    }
    printf("%s on the %s stream: %d rounds, %d differ from the sequential order%s\n", variant_names[var],
           stream_name, ROUNDS, differ, first);
    return differ != 0;
}

/* the module image: ORDER_CI_IMAGE's file (NUL-terminated: PTX text), else the
 * stand-in's placeholder */
static const void *module_image(void)
{
    const char *path = getenv("ORDER_CI_IMAGE");
    if (!path || !*path)
        return image;
    FILE *f = fopen(path, "rb");
    static char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    if (!n)
        printf("ORDER_CI_IMAGE=%s: cannot read it\n", path);
    buf[n] = 0;
    return n ? buf : NULL;
}

int main(void)
{
    CUdevice d;
    CUmodule mod;
    CUstream shared;
    const void *img = module_image();
    for (int i = 0; i < N; i++)
        host_seed[i] = (float)(i % 7);
    if (!img || cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&ctx, d) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, img) || cuModuleGetFunction(&scale, mod, "_Z5scalePffm") ||
        cuModuleGetFunction(&addc, mod, "_Z4addcPffm") || cuMemAlloc(&x, sizeof(float) * N) ||
        cuMemAlloc(&y, sizeof(float) * N) || cuStreamCreate(&shared, CU_STREAM_DEFAULT)) {
        printf("setup failed\n");
        return 1;
    }
    pthread_t b;
    if (pthread_create(&b, NULL, thread_b, NULL)) {
        printf("no thread\n");
        return 1;
    }
    int rc = 0;
    const struct { const char *name; CUstream s; } streams[] = {{"legacy", NULL}, {"shared", shared}};
    for (int k = 0; k < 2; k++)
        for (int v = LAUNCH; v <= READ; v++) {
            stream = streams[k].s;
            var = (enum variant)v;
            rc |= run_case(streams[k].name);
        }
    pthread_mutex_lock(&mu);
    quit = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(b, NULL);
    printf("teardown: %d\n", (int)(cuStreamDestroy(shared) | cuMemFree(x) | cuMemFree(y) | cuModuleUnload(mod)));
    return rc;
}
