/* Graph host nodes over the CUDA driver API: the same output natively
 * (NVIDIA's libcuda.so.1) and over apigen's driver stub. Without a driver
 * both stop at cuInit with the same error.
 *
 * A graph: kernel node K1 (buf[0] += 1) -> host node H -> kernel node K2
 * (buf[1] += 1), launched three times. H blocks until the main thread has
 * looked at the device while H runs: K1's increment of this launch is there,
 * K2's is not, and the graph's stream is still busy; then H returns and K2
 * runs. So H runs after the kernel before it and before the kernel after it,
 * at every launch. Then GetParams (fn and userData), SetParams (a new
 * instantiation runs the new function, the old executable the old one),
 * ExecSetParams, cuGraphAddNode / cuGraphNodeSetParams /
 * cuGraphExecNodeSetParams with CU_GRAPH_NODE_TYPE_HOST, and the errors of
 * a missing function or parameters. Each host function appends a letter to
 * a log, printed at the end.
 *   driver_graph_host KERNELS.ptx */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#define CHECK(call) if (check(#call, (call))) return finish(1)
static int check(const char *what, CUresult e)
{
    char w[40];
    snprintf(w, sizeof w, "%.*s", (int)(strchr(what, '(') ? strchr(what, '(') - what : 39), what);
    printf("%-30s %d%s\n", w, (int)e, e == CUDA_SUCCESS ? " ok" : "");
    return e != CUDA_SUCCESS;
}

/* the gate between the host node and the main thread */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int gated = 1;      /* whether H waits for the main thread */
static int entered;        /* runs of H that started */
static int released;       /* runs of H the main thread let go */
static char log_[64];      /* a letter per host function run */
static size_t nlog;

static void append(char c)
{
    pthread_mutex_lock(&mu);
    if (nlog + 1 < sizeof log_) log_[nlog++] = c;
    pthread_mutex_unlock(&mu);
}

static void gate_fn(void *user)
{
    append(*(const char *)user);
    pthread_mutex_lock(&mu);
    int run = ++entered;
    pthread_cond_broadcast(&cv);
    /* a guard against a hang, not a timing check: 60 s without the main
     * thread means the test has failed already */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    while (gated && released < run)
        if (pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT) break;
    pthread_mutex_unlock(&mu);
}

static void letter_fn(void *user) { append(*(const char *)user); }

/* lets every waiting run of H go (also on the way out after a failure) */
static int finish(int rc)
{
    pthread_mutex_lock(&mu);
    gated = 0;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return rc;
}

static int wait_entered(int run)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&mu);
    while (entered < run)
        if (pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT) break;
    int ok = entered >= run;
    pthread_mutex_unlock(&mu);
    return ok;
}

static void release(int run)
{
    pthread_mutex_lock(&mu);
    released = run;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

static const char A = 'A', B = 'B', C = 'C', D = 'D', E = 'E', F = 'F';

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KERNELS.ptx\n", argv[0]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    char *ptx = read_all(argv[1]);
    if (!ptx) {
        printf("cannot read %s\n", argv[1]);
        return 1;
    }
    CUmodule mod;
    CUfunction bump_at;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&bump_at, mod, "bump_at"));
    CUdeviceptr buf;
    CHECK(cuMemAlloc(&buf, 2 * sizeof(int)));
    CHECK(cuMemsetD32(buf, 0, 2));
    CUstream s, reader;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&reader, CU_STREAM_NON_BLOCKING));

    /* K1 -> H -> K2 */
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    int i0 = 0, i1 = 1;
    void *args1[] = {&buf, &i0}, *args2[] = {&buf, &i1};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = bump_at;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args1;
    CUgraphNode k1, h, k2;
    CHECK(cuGraphAddKernelNode(&k1, g, NULL, 0, &kp));
    CUDA_HOST_NODE_PARAMS hp = {gate_fn, (void *)&A};
    CHECK(cuGraphAddHostNode(&h, g, &k1, 1, &hp));
    kp.kernelParams = args2;
    CHECK(cuGraphAddKernelNode(&k2, g, &h, 1, &kp));
    CUDA_HOST_NODE_PARAMS back;
    memset(&back, 0, sizeof back);
    CHECK(cuGraphHostNodeGetParams(h, &back));
    printf("GetParams: fn is gate_fn: %d, userData is &A: %d\n", back.fn == gate_fn,
           back.userData == (void *)&A);
    CUgraphNodeType type;
    CHECK(cuGraphNodeGetType(h, &type));
    printf("node type is host: %d\n", type == CU_GRAPH_NODE_TYPE_HOST);

    CUgraphExec ge;
    CHECK(cuGraphInstantiate(&ge, g, 0));
    for (int run = 1; run <= 3; run++) {
        int v[2] = {-1, -1};
        CHECK(cuGraphLaunch(ge, s));
        if (!wait_entered(run)) {
            printf("launch %d: the host node never ran\n", run);
            return finish(1);
        }
        /* H is running: K1 of this launch is done, K2 waits */
        CUresult busy = cuStreamQuery(s);
        CHECK(cuMemcpyDtoHAsync(v, buf, sizeof v, reader));
        CHECK(cuStreamSynchronize(reader));
        printf("launch %d, in the host node: K1 count %d, K2 count %d, stream busy: %d\n", run,
               v[0], v[1], busy == CUDA_ERROR_NOT_READY);
        release(run);
        CHECK(cuStreamSynchronize(s));
        CHECK(cuMemcpyDtoH(v, buf, sizeof v));
        printf("launch %d, after: K1 count %d, K2 count %d\n", run, v[0], v[1]);
    }
    finish(0); /* from here on the host functions only log */

    /* SetParams: the graph's node changes, the executable made before does not */
    CUDA_HOST_NODE_PARAMS hb = {letter_fn, (void *)&B};
    CHECK(cuGraphHostNodeSetParams(h, &hb));
    CHECK(cuGraphHostNodeGetParams(h, &back));
    printf("GetParams after SetParams: fn is letter_fn: %d, userData is &B: %d\n",
           back.fn == letter_fn, back.userData == (void *)&B);
    CHECK(cuGraphLaunch(ge, s)); /* A */
    CUgraphExec ge2;
    CHECK(cuGraphInstantiate(&ge2, g, 0));
    CHECK(cuGraphLaunch(ge2, s)); /* B */
    /* ExecSetParams: only that executable's node changes */
    CUDA_HOST_NODE_PARAMS hc = {letter_fn, (void *)&C};
    CHECK(cuGraphExecHostNodeSetParams(ge, h, &hc));
    CHECK(cuGraphLaunch(ge, s));  /* C */
    CHECK(cuGraphLaunch(ge2, s)); /* B */
    CHECK(cuGraphHostNodeGetParams(h, &back));
    printf("GetParams after ExecSetParams: userData is still &B: %d\n", back.userData == (void *)&B);
    CHECK(cuStreamSynchronize(s));

    /* the generic forms: a host node by type, changed by type */
    CUgraph g3;
    CUgraphNode h3;
    CHECK(cuGraphCreate(&g3, 0));
    CUgraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_HOST;
    np.host.fn = letter_fn;
    np.host.userData = (void *)&D;
    CHECK(cuGraphAddNode(&h3, g3, NULL, NULL, 0, &np));
    CHECK(cuGraphHostNodeGetParams(h3, &back));
    printf("cuGraphAddNode host node: userData is &D: %d\n", back.userData == (void *)&D);
    CUgraphExec ge3;
    CHECK(cuGraphInstantiate(&ge3, g3, 0));
    CHECK(cuGraphLaunch(ge3, s)); /* D */
    np.host.userData = (void *)&E;
    CHECK(cuGraphExecNodeSetParams(ge3, h3, &np));
    CHECK(cuGraphLaunch(ge3, s)); /* E */
    np.host.userData = (void *)&F;
    CHECK(cuGraphNodeSetParams(h3, &np));
    CHECK(cuGraphHostNodeGetParams(h3, &back));
    printf("cuGraphNodeSetParams: userData is &F: %d\n", back.userData == (void *)&F);
    CHECK(cuGraphLaunch(ge3, s)); /* E: the executable keeps its own */
    CHECK(cuStreamSynchronize(s));

    /* errors */
    CUgraphNode bad;
    CUDA_HOST_NODE_PARAMS nofn = {NULL, (void *)&A};
    printf("no function: %d\n", (int)cuGraphAddHostNode(&bad, g, NULL, 0, &nofn));
    printf("no parameters: %d\n", (int)cuGraphAddHostNode(&bad, g, NULL, 0, NULL));
    printf("GetParams without parameters: %d\n", (int)cuGraphHostNodeGetParams(h, NULL));
    printf("SetParams without a function: %d\n", (int)cuGraphHostNodeSetParams(h, &nofn));
    printf("host GetParams of a kernel node: %d\n", (int)cuGraphHostNodeGetParams(k1, &back));
    printf("host SetParams of a kernel node: %d\n", (int)cuGraphHostNodeSetParams(k1, &hb));

    int v[2];
    CHECK(cuMemcpyDtoH(v, buf, sizeof v));
    printf("K1 count %d, K2 count %d\n", v[0], v[1]);
    log_[nlog] = 0;
    printf("host functions ran: %s\n", log_);
    CHECK(cuGraphExecDestroy(ge3));
    CHECK(cuGraphExecDestroy(ge2));
    CHECK(cuGraphExecDestroy(ge));
    CHECK(cuGraphDestroy(g3));
    CHECK(cuGraphDestroy(g));
    CHECK(cuMemFree(buf));
    CHECK(cuStreamDestroy(reader));
    CHECK(cuStreamDestroy(s));
    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(ptx);
    printf("done\n");
    return 0;
}
