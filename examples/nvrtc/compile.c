/* NVRTC: a templated kernel that includes headers of this machine's disk
 * (a temporary folder given with -I, one header including another, one
 * found by a quoted name next to the includer and one by an angled name),
 * an in-memory header, a name expression. Prints the PTX's entry names and
 * hash, the lowered name, a CUBIN's size and hash; then loads the PTX with
 * cuModuleLoadData and launches both kernels, checking every value. Without
 * a GPU, cuInit fails and the program says so and exits 2 (the same answer
 * natively and forwarded).
 *
 * Forwarded, the headers of the temporary folder exist only on the guest
 * side: the stub sends them; the server never reads them. */
#include <cuda.h>

#include "common.h"

static const char *source =
    "#include \"scale.h\"\n"
    "#include \"app.h\"\n"
    "template <typename T>\n"
    "__global__ void scale(T *x, T f, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = SCALE_OP(x[i], f) + APP_BIAS;\n"
    "}\n"
    "extern \"C\" __global__ void fill(float *x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = (float)i;\n"
    "}\n";

static void print_entries(const char *ptx)
{
    for (const char *p = ptx; (p = strstr(p, ".entry ")); p += 7) {
        const char *e = p + 7;
        size_t n = strcspn(e, "( \n");
        printf("  .entry %.*s\n", (int)n, e);
    }
}

static int launch(const char *ptx, const char *lowered)
{
    CUresult c = cuInit(0);
    if (c != CUDA_SUCCESS) {
        printf("cuInit: CUDA error %d: no usable GPU, the launch is skipped\n", (int)c);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fill, scale;
    CUdeviceptr d;
    enum { N = 1000 };
    float h[N];
#define CU(call)                                                             \
    do {                                                                     \
        CUresult r_ = (call);                                                \
        if (r_ != CUDA_SUCCESS) {                                            \
            printf("%s: CUDA error %d\n", #call, (int)r_);                   \
            return 1;                                                        \
        }                                                                    \
    } while (0)
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CU(cuModuleLoadData(&mod, ptx));
    CU(cuModuleGetFunction(&fill, mod, "fill"));
    CU(cuModuleGetFunction(&scale, mod, lowered));
    CU(cuMemAlloc(&d, sizeof h));
    int n = N;
    float f = 2.0f;
    void *fa[] = {&d, &n};
    void *sa[] = {&d, &f, &n};
    CU(cuLaunchKernel(fill, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, fa, NULL));
    CU(cuLaunchKernel(scale, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, sa, NULL));
    CU(cuMemcpyDtoH(h, d, sizeof h));
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (h[i] != (float)i * 2.0f + 1.0f + 0.5f) bad++; /* SCALE_OP: x*f+OFFSET; APP_BIAS */
    CU(cuMemFree(d));
    CU(cuModuleUnload(mod));
    CU(cuDevicePrimaryCtxRelease(dev));
    printf("launch: fill then %s over %d values: %s\n", lowered, N, bad ? "NO" : "all OK");
    return bad ? 1 : 0;
}

int main(void)
{
    int major, minor, narch;
    NVRTC_OK(nvrtcVersion(&major, &minor));
    NVRTC_OK(nvrtcGetNumSupportedArchs(&narch));
    int *archs = malloc(sizeof(int) * (size_t)narch);
    NVRTC_OK(nvrtcGetSupportedArchs(archs));
    printf("NVRTC %d.%d, %d architectures: sm_%d .. sm_%d\n", major, minor, narch, archs[0],
           archs[narch - 1]);
    free(archs);

    /* the guest's own headers: inc/scale.h -> "offset.h" (next to it) and
     * <extra/ops.h> (through -I) */
    char *dir = guest_dir();
    char inc[4200], opt[4300];
    snprintf(inc, sizeof inc, "%s/inc", dir);
    mkdir(inc, 0700);
    snprintf(opt, sizeof opt, "%s/extra", inc);
    mkdir(opt, 0700);
    write_file(inc, "scale.h", "#pragma once\n#include \"offset.h\"\n#include <extra/ops.h>\n"
                               "#define SCALE_OP(a, b) MUL(a, b) + OFFSET\n");
    write_file(inc, "offset.h", "#pragma once\n#define OFFSET 1.0f\n");
    write_file(opt, "ops.h", "#pragma once\n/* #include \"never.h\" in a comment */\n"
                             "#define MUL(a, b) ((a) * (b))\n");
    snprintf(opt, sizeof opt, "-I%s", inc);

    const char *hdr[] = {"#pragma once\n#define APP_BIAS 0.5f\n"};
    const char *hname[] = {"app.h"};
    nvrtcProgram p;
    NVRTC_OK(nvrtcCreateProgram(&p, source, "scale.cu", 1, hdr, hname));
    NVRTC_OK(nvrtcAddNameExpression(p, "scale<float>"));
    const char *opts[] = {opt, "--gpu-architecture=compute_75", "-default-device"};
    nvrtcResult r = nvrtcCompileProgram(p, 3, opts);
    printf("nvrtcCompileProgram: %s\n", nvrtcGetErrorString(r));
    print_log(p, "compile");
    if (r != NVRTC_SUCCESS) return 1;
    const char *lowered = NULL, *again = NULL;
    NVRTC_OK(nvrtcGetLoweredName(p, "scale<float>", &lowered));
    NVRTC_OK(nvrtcGetLoweredName(p, "scale<float>", &again));
    printf("lowered name of scale<float>: %s (%s on a second call)\n", lowered,
           strcmp(lowered, again) == 0 ? "the same" : "NOT the same");
    size_t n = 0;
    NVRTC_OK(nvrtcGetPTXSize(p, &n));
    char *ptx = malloc(n);
    NVRTC_OK(nvrtcGetPTX(p, ptx));
    printf("PTX: %zu bytes, fnv64 %016llx, entries:\n", n, (unsigned long long)fnv64(ptx, n));
    print_entries(ptx);
    size_t cn = 1;
    NVRTC_OK(nvrtcGetCUBINSize(p, &cn));
    printf("CUBIN of a compute_ target: %zu bytes\n", cn);

    /* a CUBIN: the same source for sm_90 */
    nvrtcProgram q;
    NVRTC_OK(nvrtcCreateProgram(&q, source, "scale.cu", 1, hdr, hname));
    const char *qopts[] = {opt, "-arch=sm_90"};
    NVRTC_OK(nvrtcCompileProgram(q, 2, qopts));
    NVRTC_OK(nvrtcGetCUBINSize(q, &cn));
    char *cubin = malloc(cn);
    NVRTC_OK(nvrtcGetCUBIN(q, cubin));
    printf("CUBIN for sm_90: %zu bytes, fnv64 %016llx\n", cn, (unsigned long long)fnv64(cubin, cn));
    free(cubin);
    NVRTC_OK(nvrtcDestroyProgram(&q));

    /* the toolkit's own headers through -I (libcu++ of CCCL): forwarded, the
     * stub sends none of them; the server reads its own toolkit's */
    const char *home = getenv("CUDA_HOME");
    char cccl[4200], ccclopt[4300];
    snprintf(cccl, sizeof cccl, "%s/include/cccl", home && *home ? home : "/usr/local/cuda");
    struct stat st;
    if (stat(cccl, &st) == 0) {
        nvrtcProgram t;
        NVRTC_OK(nvrtcCreateProgram(&t,
                                    "#include <cuda/std/cstdint>\n#include <cuda/std/limits>\n"
                                    "__global__ void top(cuda::std::uint32_t *x)\n"
                                    "{ *x = cuda::std::numeric_limits<cuda::std::uint16_t>::max(); }\n",
                                    "top.cu", 0, NULL, NULL));
        snprintf(ccclopt, sizeof ccclopt, "-I%s", cccl);
        const char *topts[] = {ccclopt};
        r = nvrtcCompileProgram(t, 1, topts);
        printf("with the toolkit's <cuda/std/...> through -I: %s\n", nvrtcGetErrorString(r));
        if (r != NVRTC_SUCCESS) print_log(t, "toolkit");
        NVRTC_OK(nvrtcGetPTXSize(t, &n));
        char *tptx = malloc(n);
        NVRTC_OK(nvrtcGetPTX(t, tptx));
        printf("  PTX: %zu bytes, fnv64 %016llx\n", n, (unsigned long long)fnv64(tptx, n));
        free(tptx);
        NVRTC_OK(nvrtcDestroyProgram(&t));
    } else {
        printf("no %s: the toolkit -I case is skipped\n", "include/cccl");
    }

    /* the lowered name stays valid until the program goes */
    int rc = launch(ptx, lowered);
    NVRTC_OK(nvrtcDestroyProgram(&p));
    free(ptx);
    remove_tree(dir);
    return rc;
}
