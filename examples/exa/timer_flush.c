/* An async launch and then no synchronous call: forwarded, the guest's
 * timer flush (APIGEN_FLUSH_US) or an eager send (APIGEN_EAGER_US) must
 * send it. The server's trace file (EXA_TRACE_WATCH, APIGEN_TRACE of the
 * server) is watched for the call for up to MS milliseconds (argument,
 * default 10000) before the next synchronous call (tests/e2e exa_e2e.sh
 * timer_flush). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exa.h"

static int seen(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    int hit = 0;
    while (!hit && fgets(line, sizeof line, f))
        hit = strstr(line, "exaLaunchFill") != NULL;
    fclose(f);
    return hit;
}

int main(int argc, char **argv)
{
    const char *watch = getenv("EXA_TRACE_WATCH");
    int ms = argc > 1 ? atoi(argv[1]) : 10000;
    exaContext ctx;
    void *d;
    if (!watch || exaCreateContext(0, "timer", &ctx) != EXA_SUCCESS ||
        exaMalloc(&d, 64 * sizeof(float)) != EXA_SUCCESS)
        return 2;
    if (exaLaunchFill(ctx, d, 1.5f, 64) != EXA_SUCCESS)
        return 2;
    int hit = 0;
    for (int i = 0; i < ms / 10 && !(hit = seen(watch)); i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    printf("async launch reached the server before any synchronous call: %s\n", hit ? "yes" : "no");
    exaFinish(ctx);
    exaFree(d);
    exaDestroyContext(ctx);
    return hit ? 0 : 1;
}
