/* Progress lines of the generator (progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int state;        /* 0 not read yet, 1 off, 2 on, 3 every phase (APIGEN_PROGRESS=all) */
static double t0, last;  /* seconds: the first call, the last line */
static int shown;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int on(void)
{
    if (!state) {
        const char *v = getenv("APIGEN_PROGRESS");
        state = v && strcmp(v, "all") == 0                   ? 3
                : (v && *v ? strcmp(v, "0") != 0 : isatty(2)) ? 2
                                                              : 1;
        t0 = last = now();
    }
    return state >= 2;
}

void gen_progress(const char *fmt, ...)
{
    if (!on()) return;
    double t = now();
    if (state == 2 && t - last < 0.25) return;
    last = t;
    shown = 1;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "apigen: [%.1f s] %s\n", t - t0, msg);
}

void gen_progress_done(void)
{
    if (on() && shown) fprintf(stderr, "apigen: [%.1f s] done\n", now() - t0);
}
