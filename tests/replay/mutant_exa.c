/* A broken guest library, for the replay mutation tests: preloaded in front
 * of apigen's exa stub, it imitates one stub bug per REPLAY_MUTANT value.
 * The replay tests must fail with each (tests/replay/CMakeLists.txt):
 *   error_all      every call answers one error (EXA_ERROR_BUSY) and sends nothing
 *   drop_async     exaFinish reports success even when an async call failed
 *   skip_callback  the fifth notification delivered is not passed on
 *   skip_call      exaLaunchFill returns success without being forwarded
 * Unset: every call goes straight through.
 * Not a bug but a thread schedule: REPLAY_SLOW=NAME:MS makes the guest thread
 * that creates a context named NAME sleep MS ms first, so a test can record
 * one interleaving of the demo's threads and replay it under another
 * (replay.exa.reordered). Only in the guest (APIGEN_SERVER set): the
 * preload reaches the server too. */
#define _GNU_SOURCE
#include "exa.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int is(const char *m)
{
    const char *v = getenv("REPLAY_MUTANT");
    return v && strcmp(v, m) == 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

exaStatus exaGetVersion(int *major, int *minor)
{
    return is("error_all") ? EXA_ERROR_BUSY : NEXT(exaGetVersion)(major, minor);
}

exaStatus exaGetDeviceCount(int *count)
{
    return is("error_all") ? EXA_ERROR_BUSY : NEXT(exaGetDeviceCount)(count);
}

static void maybe_slow(const char *name)
{
    const char *v = getenv("REPLAY_SLOW"), *colon = v ? strchr(v, ':') : NULL;
    if (!colon || !name || !getenv("APIGEN_SERVER") || strlen(name) != (size_t)(colon - v) ||
        strncmp(v, name, (size_t)(colon - v)) != 0)
        return;
    long ms = strtol(colon + 1, NULL, 10);
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

exaStatus exaCreateContext(int device, const char *name, exaContext *ctx)
{
    maybe_slow(name);
    return is("error_all") ? EXA_ERROR_BUSY : NEXT(exaCreateContext)(device, name, ctx);
}

exaStatus exaFinish(exaContext ctx)
{
    if (is("error_all"))
        return EXA_ERROR_BUSY;
    exaStatus st = NEXT(exaFinish)(ctx);
    return is("drop_async") ? EXA_SUCCESS : st;
}

exaStatus exaLaunchFill(exaContext ctx, void *dst, float value, size_t n)
{
    if (is("error_all"))
        return EXA_ERROR_BUSY;
    if (is("skip_call"))
        return EXA_SUCCESS;
    return NEXT(exaLaunchFill)(ctx, dst, value, n);
}

/* skip_callback: the application's function behind one of ours */
static exaNotifyFn app_fn;
static int delivered;
static void relay(exaContext ctx, exaEvent event, int32_t value, void *user_data)
{
    /* the fifth: the main context's last, so that one wait of the demo times
     * out (5 s), not every later one */
    if (__atomic_fetch_add(&delivered, 1, __ATOMIC_SEQ_CST) == 4)
        return;
    app_fn(ctx, event, value, user_data);
}

exaStatus exaSetNotify(exaContext ctx, exaNotifyFn fn, void *user_data)
{
    if (is("error_all"))
        return EXA_ERROR_BUSY;
    if (is("skip_callback") && fn) {
        app_fn = fn; /* the demo passes one function */
        fn = relay;
    }
    return NEXT(exaSetNotify)(ctx, fn, user_data);
}
