/* Bad input to NVRTC and nvJitLink, through the stubs (tests/nvrtc/
 * badinput.sh runs it forwarded only and compares its output with
 * tests/nvrtc/badinput.expected): each call must fail with the library's
 * own error value, never crash the program or the server.
 *   badinput SERVER_ONLY_FILE
 * SERVER_ONLY_FILE: a header the test made where the SERVER runs; the
 * program includes it by a name spelled with a macro (which the stub cannot
 * resolve, so it does not send it): natively NVRTC would read it, forwarded
 * the server's compile must not. */
#include <nvJitLink.h>

#include "common.h"

static void show(const char *what, int r)
{
    printf("%-58s -> %d\n", what, r);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        printf("usage: badinput SERVER_ONLY_FILE\n");
        return 2;
    }
    size_t n = 0;
    nvrtcProgram p = NULL, forged = (nvrtcProgram)(uintptr_t)0x5eed5eedu;
    show("nvrtcGetPTXSize(forged program)", nvrtcGetPTXSize(forged, &n));
    show("nvrtcCompileProgram(forged program)", nvrtcCompileProgram(forged, 0, NULL));
    show("nvrtcDestroyProgram(&forged)", nvrtcDestroyProgram(&forged));
    show("nvrtcGetPTXSize(NULL program)", nvrtcGetPTXSize(NULL, &n));
    show("nvrtcCreateProgram(numHeaders -1)",
         nvrtcCreateProgram(&p, "__global__ void k(){}", "k.cu", -1, NULL, NULL));
    show("nvrtcCreateProgram(numHeaders 2, no arrays)",
         nvrtcCreateProgram(&p, "__global__ void k(){}", "k.cu", 2, NULL, NULL));
    const char *h[] = {"#define A 1\n", NULL}, *hn[] = {"a.h", NULL};
    show("nvrtcCreateProgram(numHeaders 2, second header NULL)",
         nvrtcCreateProgram(&p, "__global__ void k(){}", "k.cu", 2, h, hn));
    show("nvrtcCreateProgram(NULL source)", nvrtcCreateProgram(&p, NULL, "k.cu", 0, NULL, NULL));

    /* a destroyed program used again */
    NVRTC_OK(nvrtcCreateProgram(&p, "__global__ void k(){}", "k.cu", 0, NULL, NULL));
    nvrtcProgram old = p;
    NVRTC_OK(nvrtcDestroyProgram(&p));
    show("nvrtcCompileProgram(destroyed program)", nvrtcCompileProgram(old, 0, NULL));
    show("nvrtcGetProgramLogSize(destroyed program)", nvrtcGetProgramLogSize(old, &n));

    /* options the server refuses: they name files of the machine that compiles */
    NVRTC_OK(nvrtcCreateProgram(&p, "__global__ void k(){}", "k.cu", 0, NULL, NULL));
    const char *pch[] = {"--create-pch=/tmp/apigen-never.pch"};
    show("nvrtcCompileProgram(--create-pch=FILE)", nvrtcCompileProgram(p, 1, pch));
    const char *bogus[] = {"--no-such-option"};
    show("nvrtcCompileProgram(--no-such-option)", nvrtcCompileProgram(p, 1, bogus));
    const char *lowered = NULL;
    show("nvrtcGetLoweredName(before any name expression)", nvrtcGetLoweredName(p, "k", &lowered));
    NVRTC_OK(nvrtcDestroyProgram(&p));

    /* an include path the guest does not have: NVRTC's own error */
    NVRTC_OK(nvrtcCreateProgram(&p, "#include <nothere.h>\n__global__ void k(){}", "k.cu", 0,
                                NULL, NULL));
    const char *noinc[] = {"-I/nonexistent/apigen-include"};
    show("compile with #include <nothere.h>, -I of no folder", nvrtcCompileProgram(p, 1, noinc));
    NVRTC_OK(nvrtcDestroyProgram(&p));

    /* a file of the server's disk, named by a macro: never read */
    char src[8192];
    snprintf(src, sizeof src,
             "#define SERVER_FILE \"%s\"\n#include SERVER_FILE\n"
             "__global__ void k(int *x) { *x = SECRET_VALUE; }\n", argv[1]);
    NVRTC_OK(nvrtcCreateProgram(&p, src, "k.cu", 0, NULL, NULL));
    nvrtcResult r = nvrtcCompileProgram(p, 0, NULL);
    show("compile including a server file by a macro", r);
    size_t ln = 0;
    NVRTC_OK(nvrtcGetProgramLogSize(p, &ln));
    char *log = malloc(ln + 1);
    NVRTC_OK(nvrtcGetProgramLog(p, log));
    log[ln] = 0;
    printf("  its log says it cannot open the file: %s\n",
           strstr(log, "cannot open source file") ? "yes" : "no");
    printf("  the file's contents reached the program: %s\n",
           strstr(log, "4242") || r == NVRTC_SUCCESS ? "YES" : "no");
    free(log);
    NVRTC_OK(nvrtcDestroyProgram(&p));

    /* nvJitLink */
    nvJitLinkHandle jl = (nvJitLinkHandle)(uintptr_t)0x5eed5eedu;
    show("nvJitLinkComplete(forged handle)", nvJitLinkComplete(jl));
    show("nvJitLinkAddData(forged handle)", nvJitLinkAddData(jl, NVJITLINK_INPUT_PTX, "x", 1, "x"));
    const char *arch[] = {"-arch=sm_90"};
    if (nvJitLinkCreate(&jl, 1, arch) != NVJITLINK_SUCCESS) {
        printf("nvJitLinkCreate failed\n");
        return 1;
    }
    show("nvJitLinkAddFile(NULL file name)", nvJitLinkAddFile(jl, NVJITLINK_INPUT_PTX, NULL));
    nvJitLinkHandle gone = jl;
    show("nvJitLinkDestroy", nvJitLinkDestroy(&jl));
    show("nvJitLinkComplete(destroyed handle)", nvJitLinkComplete(gone));
    show("nvJitLinkDestroy(&destroyed handle)", nvJitLinkDestroy(&gone));
    show("nvJitLinkComplete(NULL)", nvJitLinkComplete(NULL));
    printf("done: every bad input failed cleanly\n");
    return 0;
}
