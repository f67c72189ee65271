/* An async launch and then no synchronous call: forwarded, the guest's
 * timer flush (APIGEN_FLUSH_US) or an eager send (APIGEN_EAGER_US) must
 * send it. The server's trace file (EXA_TRACE_WATCH, APIGEN_TRACE of the
 * server) is watched for the call for up to MS milliseconds (argument,
 * default 10000) before the next synchronous call (tests/e2e exa_e2e.sh
 * timer_flush). A second argument "after-reply": a first launch and a
 * synchronous exaMalloc come before the watched launch, which then follows
 * a reply (the server's trace must show both launches); "burst": the same,
 * then a third launch at once and a fourth 100 ms later (all four). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exa.h"

static int seen(const char *path, int want)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    int hits = 0;
    while (hits < want && fgets(line, sizeof line, f))
        hits += strstr(line, "exaLaunchFill") != NULL;
    fclose(f);
    return hits >= want;
}

int main(int argc, char **argv)
{
    const char *watch = getenv("EXA_TRACE_WATCH");
    int ms = argc > 1 ? atoi(argv[1]) : 10000;
    const char *mode = argc > 2 ? argv[2] : "";
    int want = strcmp(mode, "after-reply") == 0 ? 2 : strcmp(mode, "burst") == 0 ? 4 : 1;
    exaContext ctx;
    void *d, *d2 = NULL;
    if (!watch || exaCreateContext(0, "timer", &ctx) != EXA_SUCCESS ||
        exaMalloc(&d, 64 * sizeof(float)) != EXA_SUCCESS)
        return 2;
    if (want >= 2 && (exaLaunchFill(ctx, d, 0.5f, 64) != EXA_SUCCESS ||
                      exaMalloc(&d2, 64 * sizeof(float)) != EXA_SUCCESS))
        return 2;
    if (exaLaunchFill(ctx, d, 1.5f, 64) != EXA_SUCCESS)
        return 2;
    if (want == 4) {
        if (exaLaunchFill(ctx, d, 2.5f, 64) != EXA_SUCCESS)
            return 2;
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
        if (exaLaunchFill(ctx, d, 3.5f, 64) != EXA_SUCCESS)
            return 2;
    }
    int hit = 0;
    for (int i = 0; i < ms / 10 && !(hit = seen(watch, want)); i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    printf("async launch reached the server before any synchronous call: %s\n", hit ? "yes" : "no");
    exaFinish(ctx);
    if (d2)
        exaFree(d2);
    exaFree(d);
    exaDestroyContext(ctx);
    return hit ? 0 : 1;
}
