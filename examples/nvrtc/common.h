/* Shared helpers of the NVRTC examples: checked calls that print the
 * library's own error text, a hash to compare outputs byte for byte, and a
 * temporary folder of the guest's own headers. */
#ifndef NVRTC_EXAMPLES_COMMON_H
#define NVRTC_EXAMPLES_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvrtc.h>

#define NVRTC_OK(call)                                                                 \
    do {                                                                               \
        nvrtcResult r_ = (call);                                                       \
        if (r_ != NVRTC_SUCCESS) {                                                     \
            printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nvrtcGetErrorString(r_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* FNV-1a, 64 bits: equal outputs natively and forwarded print equal hashes */
static inline uint64_t fnv64(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

static inline void write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        printf("cannot write %s\n", path);
        exit(1);
    }
}

/* A fresh folder under $TMPDIR (or /tmp) for the program's own headers. */
static inline char *guest_dir(void)
{
    const char *t = getenv("TMPDIR");
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/nvrtc-guest.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        printf("mkdtemp failed\n");
        exit(1);
    }
    return dir;
}

static inline void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("could not remove %s\n", dir);
}

/* The program's log, printed when it is not empty. */
static inline void print_log(nvrtcProgram p, const char *what)
{
    size_t n = 0;
    NVRTC_OK(nvrtcGetProgramLogSize(p, &n));
    char *log = malloc(n + 1);
    NVRTC_OK(nvrtcGetProgramLog(p, log));
    log[n] = 0;
    if (n > 1) printf("%s log (%zu bytes):\n%s\n", what, n, log);
    free(log);
}

#endif
