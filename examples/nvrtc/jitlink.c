/* nvJitLink: NVRTC compiles one kernel to LTO-IR (-dlto) and a device
 * function it calls to PTX, written to a file on this machine's disk; the
 * link takes the LTO-IR as data (nvJitLinkAddData) and the PTX by file name
 * (nvJitLinkAddFile: forwarded, the stub reads the guest's file). Prints the
 * sizes and hashes of the linked CUBIN, the info log, and the errors of a
 * link without -arch and of a file that does not exist. */
#include <nvJitLink.h>

#include "common.h"

#define JL(call)                                                              \
    do {                                                                      \
        nvJitLinkResult r_ = (call);                                          \
        if (r_ != NVJITLINK_SUCCESS) {                                        \
            printf("%s:%d: %s: nvJitLinkResult %d\n", __FILE__, __LINE__, #call, (int)r_); \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static char *compile(const char *src, const char *name, const char *const *opts, int nopts,
                     int ltoir, size_t *len)
{
    nvrtcProgram p;
    NVRTC_OK(nvrtcCreateProgram(&p, src, name, 0, NULL, NULL));
    nvrtcResult r = nvrtcCompileProgram(p, nopts, opts);
    if (r != NVRTC_SUCCESS) {
        print_log(p, name);
        printf("%s: %s\n", name, nvrtcGetErrorString(r));
        exit(1);
    }
    char *out;
    if (ltoir) {
        NVRTC_OK(nvrtcGetLTOIRSize(p, len));
        out = malloc(*len);
        NVRTC_OK(nvrtcGetLTOIR(p, out));
    } else {
        NVRTC_OK(nvrtcGetPTXSize(p, len));
        out = malloc(*len);
        NVRTC_OK(nvrtcGetPTX(p, out));
    }
    NVRTC_OK(nvrtcDestroyProgram(&p));
    return out;
}

static void print_jl_log(nvJitLinkHandle h, int info)
{
    size_t n = 0;
    JL(info ? nvJitLinkGetInfoLogSize(h, &n) : nvJitLinkGetErrorLogSize(h, &n));
    char *log = malloc(n + 1);
    JL(info ? nvJitLinkGetInfoLog(h, log) : nvJitLinkGetErrorLog(h, log));
    log[n] = 0;
    printf("%s log (%zu bytes)%s%s", info ? "info" : "error", n, n > 1 ? ":\n" : "\n",
           n > 1 ? log : "");
    if (n > 1 && log[strlen(log) - 1] != '\n') printf("\n");
    free(log);
}

int main(void)
{
    unsigned major, minor;
    JL(nvJitLinkVersion(&major, &minor));
    printf("nvJitLink %u.%u\n", major, minor);

    const char *kopts[] = {"-dlto", "-arch=sm_90", "-rdc=true"};
    size_t nk = 0, nf = 0;
    char *ltoir = compile("extern __device__ float twice(float);\n"
                          "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n",
                          "k.cu", kopts, 3, 1, &nk);
    const char *fopts[] = {"-arch=compute_90", "-rdc=true"};
    char *ptx = compile("__device__ float twice(float v) { return 2.0f * v; }\n", "twice.cu",
                        fopts, 2, 0, &nf);
    printf("LTO-IR of k.cu: %zu bytes, fnv64 %016llx\n", nk, (unsigned long long)fnv64(ltoir, nk));
    printf("PTX of twice.cu: %zu bytes, fnv64 %016llx\n", nf, (unsigned long long)fnv64(ptx, nf));
    char *dir = guest_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/twice.ptx", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(ptx, 1, strlen(ptx), f) != strlen(ptx) || fclose(f) != 0) {
        printf("cannot write %s\n", path);
        return 1;
    }

    nvJitLinkHandle h;
    const char *lopts[] = {"-arch=sm_90", "-lto", "-verbose"};
    JL(nvJitLinkCreate(&h, 3, lopts));
    JL(nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, ltoir, nk, "k.ltoir"));
    JL(nvJitLinkAddFile(h, NVJITLINK_INPUT_PTX, path));
    nvJitLinkResult r = nvJitLinkComplete(h);
    printf("nvJitLinkComplete: %d\n", (int)r);
    print_jl_log(h, 0);
    size_t in = 0;
    JL(nvJitLinkGetInfoLogSize(h, &in));
    char *info = malloc(in + 1);
    JL(nvJitLinkGetInfoLog(h, info));
    /* its text names this run's temporary file: only whether -verbose said something */
    printf("info log: %s\n", in > 1 && strlen(info) + 1 == in ? "present" : "empty or wrong size");
    free(info);
    size_t n = 0;
    JL(nvJitLinkGetLinkedCubinSize(h, &n));
    char *cubin = malloc(n);
    JL(nvJitLinkGetLinkedCubin(h, cubin));
    printf("linked CUBIN: %zu bytes, fnv64 %016llx, ELF: %s\n", n,
           (unsigned long long)fnv64(cubin, n), memcmp(cubin, "\177ELF", 4) == 0 ? "yes" : "no");
    size_t pn = 0;
    printf("linked PTX size without -ptx: result %d\n", (int)nvJitLinkGetLinkedPtxSize(h, &pn));
    JL(nvJitLinkDestroy(&h));
    free(cubin);

    /* errors: no -arch; a file that is not there */
    const char *none[] = {"-lto"};
    r = nvJitLinkCreate(&h, 1, none);
    printf("nvJitLinkCreate without -arch: %d\n", (int)r);
    JL(nvJitLinkCreate(&h, 1, lopts));
    snprintf(path, sizeof path, "%s/missing.ptx", dir);
    printf("nvJitLinkAddFile of a missing file: %d\n", (int)nvJitLinkAddFile(h, NVJITLINK_INPUT_PTX, path));
    printf("nvJitLinkAddData of 16 bytes of garbage as CUBIN: %d\n",
           (int)nvJitLinkAddData(h, NVJITLINK_INPUT_CUBIN, "not a cubin at all", 16, "junk"));
    JL(nvJitLinkDestroy(&h));
    remove_tree(dir);
    free(ltoir);
    free(ptx);
    return 0;
}
