/* privileged.c: the server flags that let a spec's `privileged:` functions
 * run (a GPU API's writes: apigen-server --allow-gpu-admin), and the one log
 * line per function that a refused call leaves. */
#include <pthread.h>
#include <string.h>

#include "apigen_rt.h"

#define MAX_ALLOWED 8
#define MAX_LOGGED 512

static const char *allowed[MAX_ALLOWED]; /* set before the server accepts */
static unsigned nallowed;
static pthread_mutex_t logged_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *logged[MAX_LOGGED];   /* functions already logged (by name) */
static unsigned nlogged;

void apigen_privileged_allow(const char *option)
{
    if (option && nallowed < MAX_ALLOWED) allowed[nallowed++] = option;
}

/* true the first time a refusal of fn is seen (the table full: always). */
static bool first_refusal(const char *fn)
{
    bool first = true;
    pthread_mutex_lock(&logged_mu);
    for (unsigned i = 0; i < nlogged && first; i++)
        if (strcmp(logged[i], fn) == 0) first = false;
    if (first && nlogged < MAX_LOGGED) logged[nlogged++] = fn;
    pthread_mutex_unlock(&logged_mu);
    return first;
}

bool apigen_privileged(apigen_call_ctx *cx, const char *fn, const char *reason)
{
    const char *opt = cx && cx->api ? cx->api->privileged_option : NULL;
    for (unsigned i = 0; opt && i < nallowed; i++)
        if (strcmp(allowed[i], opt) == 0) return true;
    if (first_refusal(fn))
        apigen_log("%s refused: %s; start the server with --%s to allow it", fn,
                   reason && *reason ? reason : "it changes the device", opt ? opt : "?");
    return false;
}
