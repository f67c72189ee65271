/* Graph host nodes through the CUDA driver stub against a server with the
 * stand-in graphs of fake_graph.c preloaded (tests/cuda/driver_graph_ci.sh;
 * CI has no GPU). A graph H1 -> H2 -> empty node: H1 blocks until the main
 * thread saw the stream busy and H2 not yet run, at each of three launches;
 * then GetParams, SetParams (new executables only), ExecSetParams, the
 * generic calls with CU_GRAPH_NODE_TYPE_HOST, and bad input. Each host
 * function appends a letter to a log. Prints one line per check and exits
 * 1 if any is wrong.
 *   graph_host_ci                    the checks above
 *   graph_host_ci hold               prints its graph, host node and executable
 *                                    ids, waits for a line on stdin, then checks
 *                                    that its node is unchanged
 *   graph_host_ci foreign G N X      uses another session's ids: each refused */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

static int failures;
static void expect(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "WRONG");
    failures += !ok;
}
static void expect_rc(const char *what, CUresult got, CUresult want)
{
    printf("%s: %d%s\n", what, (int)got, got == want ? "" : " WRONG");
    failures += got != want;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int gated = 1, entered, released;
static char log_[64];
static size_t nlog;

static void append(char c)
{
    pthread_mutex_lock(&mu);
    if (nlog + 1 < sizeof log_) log_[nlog++] = c;
    log_[nlog] = 0;
    pthread_mutex_unlock(&mu);
}

static struct timespec in_60s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 60; /* a guard against a hang, not a timing check */
    return t;
}

static void gate_fn(void *user)
{
    append(*(const char *)user);
    struct timespec until = in_60s();
    pthread_mutex_lock(&mu);
    int run = ++entered;
    pthread_cond_broadcast(&cv);
    while (gated && released < run)
        if (pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT) break;
    pthread_mutex_unlock(&mu);
}

static void letter_fn(void *user) { append(*(const char *)user); }

static const char A = 'A', B = 'B', C = 'C', D = 'D', E = 'E', F = 'F', G = 'G';

static int log_is(const char *want)
{
    pthread_mutex_lock(&mu);
    int ok = strcmp(log_, want) == 0;
    if (!ok) printf("  log is \"%s\", want \"%s\"\n", log_, want);
    pthread_mutex_unlock(&mu);
    return ok;
}

static int hold(void)
{
    CUgraph g;
    CUgraphNode h;
    CUgraphExec x;
    CUDA_HOST_NODE_PARAMS pa = {letter_fn, (void *)&A}, back;
    expect_rc("cuInit", cuInit(0), CUDA_SUCCESS);
    expect_rc("cuGraphCreate", cuGraphCreate(&g, 0), CUDA_SUCCESS);
    expect_rc("cuGraphAddHostNode", cuGraphAddHostNode(&h, g, NULL, 0, &pa), CUDA_SUCCESS);
    expect_rc("cuGraphInstantiate", cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
    printf("ids %llx %llx %llx\n", (unsigned long long)(uintptr_t)g,
           (unsigned long long)(uintptr_t)h, (unsigned long long)(uintptr_t)x);
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) printf("no line on stdin\n");
    expect_rc("GetParams", cuGraphHostNodeGetParams(h, &back), CUDA_SUCCESS);
    expect("the node is still (letter_fn, &A)", back.fn == letter_fn && back.userData == (void *)&A);
    printf("%d wrong\n", failures);
    return failures != 0;
}

static int foreign(char **ids)
{
    CUgraph g = (CUgraph)(uintptr_t)strtoull(ids[0], NULL, 16);
    CUgraphNode h = (CUgraphNode)(uintptr_t)strtoull(ids[1], NULL, 16), n;
    CUgraphExec x = (CUgraphExec)(uintptr_t)strtoull(ids[2], NULL, 16);
    CUDA_HOST_NODE_PARAMS pb = {letter_fn, (void *)&B}, back;
    expect_rc("cuInit", cuInit(0), CUDA_SUCCESS);
    expect_rc("GetParams of another session's node", cuGraphHostNodeGetParams(h, &back),
              CUDA_ERROR_INVALID_HANDLE);
    expect_rc("SetParams of another session's node", cuGraphHostNodeSetParams(h, &pb),
              CUDA_ERROR_INVALID_HANDLE);
    expect_rc("ExecSetParams of another session's executable",
              cuGraphExecHostNodeSetParams(x, h, &pb), CUDA_ERROR_INVALID_HANDLE);
    expect_rc("a host node in another session's graph", cuGraphAddHostNode(&n, g, NULL, 0, &pb),
              CUDA_ERROR_INVALID_HANDLE);
    printf("%d wrong\n", failures);
    return failures != 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "hold") == 0) return hold();
    if (argc > 4 && strcmp(argv[1], "foreign") == 0) return foreign(argv + 2);
    CUstream s;
    CUgraph g;
    CUgraphNode h1, h2, empty;
    CUDA_HOST_NODE_PARAMS back;
    expect_rc("cuInit", cuInit(0), CUDA_SUCCESS);
    expect_rc("cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    expect_rc("cuGraphCreate", cuGraphCreate(&g, 0), CUDA_SUCCESS);
    CUDA_HOST_NODE_PARAMS pa = {gate_fn, (void *)&A}, pb = {letter_fn, (void *)&B};
    expect_rc("cuGraphAddHostNode H1", cuGraphAddHostNode(&h1, g, NULL, 0, &pa), CUDA_SUCCESS);
    expect_rc("cuGraphAddHostNode H2", cuGraphAddHostNode(&h2, g, &h1, 1, &pb), CUDA_SUCCESS);
    CUgraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_EMPTY;
    expect_rc("cuGraphAddNode_v2 empty", cuGraphAddNode_v2(&empty, g, &h2, NULL, 1, &np), CUDA_SUCCESS);
    memset(&back, 0, sizeof back);
    expect_rc("GetParams H1", cuGraphHostNodeGetParams(h1, &back), CUDA_SUCCESS);
    expect("H1 is (gate_fn, &A)", back.fn == gate_fn && back.userData == (void *)&A);
    expect_rc("GetParams H2", cuGraphHostNodeGetParams(h2, &back), CUDA_SUCCESS);
    expect("H2 is (letter_fn, &B)", back.fn == letter_fn && back.userData == (void *)&B);
    expect_rc("host GetParams of the empty node", cuGraphHostNodeGetParams(empty, &back),
              CUDA_ERROR_INVALID_VALUE);

    CUgraphExec ge, ge2;
    expect_rc("cuGraphInstantiate", cuGraphInstantiate(&ge, g, 0), CUDA_SUCCESS);
    for (int run = 1; run <= 3; run++) {
        char want[16];
        expect_rc("cuGraphLaunch", cuGraphLaunch(ge, s), CUDA_SUCCESS);
        struct timespec until = in_60s();
        pthread_mutex_lock(&mu);
        while (entered < run)
            if (pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT) break;
        int in = entered >= run;
        pthread_mutex_unlock(&mu);
        expect("H1 running", in);
        /* H1 runs: the stream waits for it, H2 has not run */
        expect_rc("cuStreamQuery while H1 runs", cuStreamQuery(s), CUDA_ERROR_NOT_READY);
        snprintf(want, sizeof want, "%.*sA", 2 * (run - 1), "ABABAB");
        expect("H2 waits for H1", log_is(want));
        pthread_mutex_lock(&mu);
        released = run;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        expect_rc("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
        snprintf(want, sizeof want, "%.*s", 2 * run, "ABABAB");
        expect("H2 ran after H1", log_is(want));
    }
    pthread_mutex_lock(&mu);
    gated = 0;
    pthread_mutex_unlock(&mu);

    CUDA_HOST_NODE_PARAMS pc = {letter_fn, (void *)&C}, pd = {letter_fn, (void *)&D};
    expect_rc("SetParams H1", cuGraphHostNodeSetParams(h1, &pc), CUDA_SUCCESS);
    expect_rc("GetParams H1", cuGraphHostNodeGetParams(h1, &back), CUDA_SUCCESS);
    expect("H1 is (letter_fn, &C)", back.fn == letter_fn && back.userData == (void *)&C);
    expect_rc("launch the old executable", cuGraphLaunch(ge, s), CUDA_SUCCESS); /* AB */
    expect_rc("cuGraphInstantiate", cuGraphInstantiate(&ge2, g, 0), CUDA_SUCCESS);
    expect_rc("launch the new executable", cuGraphLaunch(ge2, s), CUDA_SUCCESS); /* CB */
    expect_rc("ExecSetParams H1", cuGraphExecHostNodeSetParams(ge, h1, &pd), CUDA_SUCCESS);
    expect_rc("launch the old executable", cuGraphLaunch(ge, s), CUDA_SUCCESS); /* DB */
    np.type = CU_GRAPH_NODE_TYPE_HOST;
    np.host.fn = letter_fn;
    np.host.userData = (void *)&F;
    expect_rc("cuGraphNodeSetParams H2", cuGraphNodeSetParams(h2, &np), CUDA_SUCCESS);
    expect_rc("launch the new executable", cuGraphLaunch(ge2, s), CUDA_SUCCESS); /* CB */
    np.host.userData = (void *)&E;
    expect_rc("cuGraphExecNodeSetParams H2", cuGraphExecNodeSetParams(ge2, h2, &np), CUDA_SUCCESS);
    expect_rc("launch the new executable", cuGraphLaunch(ge2, s), CUDA_SUCCESS); /* CE */
    expect_rc("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
    expect("each executable ran its own functions", log_is("ABABABABCBDBCBCE"));
    expect_rc("GetParams H2", cuGraphHostNodeGetParams(h2, &back), CUDA_SUCCESS);
    expect("H2 is (letter_fn, &F)", back.fn == letter_fn && back.userData == (void *)&F);
    /* cuGraphAddNode without edge data (cuda.h names the _v2 form): as
     * CUDA 12.2's runtime asks for it */
    typedef CUresult (*add_node_v1)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                    CUgraphNodeParams *);
    void *pfn = NULL;
    expect_rc("cuGetProcAddress cuGraphAddNode 12020",
              cuGetProcAddress("cuGraphAddNode", &pfn, 12020, 0, NULL), CUDA_SUCCESS);
    CUgraphNode h3 = NULL;
    np.host.userData = (void *)&G;
    if (pfn) expect_rc("cuGraphAddNode host", ((add_node_v1)pfn)(&h3, g, &empty, 1, &np), CUDA_SUCCESS);
    expect_rc("GetParams H3", cuGraphHostNodeGetParams(h3, &back), CUDA_SUCCESS);
    expect("H3 is (letter_fn, &G)", back.fn == letter_fn && back.userData == (void *)&G);

    /* bad input: the driver's errors, refused handles, no crash */
    CUgraphNode bad;
    CUDA_HOST_NODE_PARAMS nofn = {NULL, (void *)&A};
    expect_rc("no function", cuGraphAddHostNode(&bad, g, NULL, 0, &nofn), CUDA_ERROR_INVALID_VALUE);
    expect_rc("no parameters", cuGraphAddHostNode(&bad, g, NULL, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    expect_rc("GetParams without parameters", cuGraphHostNodeGetParams(h1, NULL),
              CUDA_ERROR_INVALID_VALUE);
    expect_rc("SetParams without a function", cuGraphHostNodeSetParams(h1, &nofn),
              CUDA_ERROR_INVALID_VALUE);
    expect_rc("host SetParams of the empty node", cuGraphHostNodeSetParams(empty, &pb),
              CUDA_ERROR_INVALID_VALUE);
    CUgraphNode forged = (CUgraphNode)(uintptr_t)0x5150;
    expect_rc("GetParams of a forged node", cuGraphHostNodeGetParams(forged, &back),
              CUDA_ERROR_INVALID_HANDLE);
    expect_rc("SetParams of a forged node", cuGraphHostNodeSetParams(forged, &pb),
              CUDA_ERROR_INVALID_HANDLE);
    expect_rc("ExecSetParams of a forged executable",
              cuGraphExecHostNodeSetParams((CUgraphExec)(uintptr_t)0x6160, h1, &pb),
              CUDA_ERROR_INVALID_HANDLE);
    np.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
    expect_rc("cuGraphAddNode external semaphores", cuGraphAddNode(&bad, g, NULL, NULL, 0, &np),
              CUDA_ERROR_NOT_SUPPORTED);
    np.type = (CUgraphNodeType)99;
    expect_rc("cuGraphAddNode unknown type", cuGraphAddNode(&bad, g, NULL, NULL, 0, &np),
              CUDA_ERROR_INVALID_VALUE);
    expect_rc("cuGraphExecDestroy", cuGraphExecDestroy(ge2), CUDA_SUCCESS);
    expect_rc("cuGraphExecDestroy", cuGraphExecDestroy(ge), CUDA_SUCCESS);
    expect_rc("cuGraphDestroy", cuGraphDestroy(g), CUDA_SUCCESS);
    expect_rc("cuStreamDestroy", cuStreamDestroy(s), CUDA_SUCCESS);
    printf("%d wrong\n", failures);
    return failures != 0;
}
