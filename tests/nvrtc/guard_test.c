/* The server's compile guard (specs/nvrtc/host_files.c) without a stub: what
 * a forged client could ask of the server's NVRTC directly. With the guard
 * on, a header in a folder of this machine named by -I, or by an absolute
 * #include, is not opened (NVRTC's "cannot open source file", one log line
 * naming it); the toolkit's own headers are; with the guard off the same
 * compile succeeds (so the refusal is the guard's). This program must
 * export the guard's functions (-Wl,--dynamic-list), as the servers do.
 *   guard_test TOOLKIT_INCLUDE_DIR */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvrtc.h>

#include "nvrtc_files.h"

static char last_log[1024];

/* host_files.c logs through the server runtime: kept here */
void apigen_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_log, sizeof last_log, fmt, ap);
    va_end(ap);
}

static int fails;

static nvrtcResult compile(const char *src, const char *opt, bool guard, char *log, size_t cap)
{
    nvrtcProgram p;
    if (nvrtcCreateProgram(&p, src, "g.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return NVRTC_ERROR_INTERNAL_ERROR;
    const char *opts[] = {opt};
    last_log[0] = 0;
    if (guard) nvrtc_files_guard(true, NULL);
    nvrtcResult r = nvrtcCompileProgram(p, opt ? 1 : 0, opts);
    if (guard) nvrtc_files_guard(false, NULL);
    size_t n = 0;
    nvrtcGetProgramLogSize(p, &n);
    char *l = malloc(n + 1);
    nvrtcGetProgramLog(p, l);
    snprintf(log, cap, "%s", l);
    free(l);
    nvrtcDestroyProgram(&p);
    return r;
}

static void expect(const char *what, bool ok)
{
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) fails++;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    char dir[] = "/tmp/nvrtc-guard.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char path[4200], opt[4300], src[8600], log[4096];
    snprintf(path, sizeof path, "%s/server_only.h", dir);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fputs("#define SERVER_ONLY 4242\n", f);
    fclose(f);
    snprintf(opt, sizeof opt, "-I%s", dir);
    const char *by_I = "#include \"server_only.h\"\n__global__ void k(int *x) { *x = SERVER_ONLY; }\n";

    nvrtcResult r = compile(by_I, opt, false, log, sizeof log);
    expect("without the guard, -I of a folder here compiles", r == NVRTC_SUCCESS);
    r = compile(by_I, opt, true, log, sizeof log);
    expect("with the guard, the same -I header is not opened", r == NVRTC_ERROR_COMPILATION &&
                                                                strstr(log, "cannot open source file"));
    expect("  and the server log names it", strstr(last_log, "server_only.h") != NULL);
    printf("  log: %s\n", last_log);
    snprintf(src, sizeof src, "#include \"%s\"\n__global__ void k(int *x) { *x = SERVER_ONLY; }\n", path);
    r = compile(src, NULL, true, log, sizeof log);
    expect("with the guard, an absolute #include is not opened", r == NVRTC_ERROR_COMPILATION);
    r = compile("#include \"/etc/passwd\"\n", NULL, true, log, sizeof log);
    expect("with the guard, #include \"/etc/passwd\" is not opened",
           r == NVRTC_ERROR_COMPILATION && strstr(log, "cannot open source file"));
    snprintf(opt, sizeof opt, "-I%s/cccl", argv[1]);
    r = compile("#include <cuda/std/cstdint>\n__global__ void k(cuda::std::uint32_t *x) { *x = 1; }\n",
                opt, true, log, sizeof log);
    expect("with the guard, the toolkit's own headers are read", r == NVRTC_SUCCESS);
    if (r != NVRTC_SUCCESS) printf("  %s\n", log);

    unlink(path);
    rmdir(dir);
    printf(fails ? "%d check(s) failed\n" : "PASS: the guard keeps NVRTC inside the toolkit\n", fails);
    return fails != 0;
}
