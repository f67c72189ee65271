/* The transports: one line each. A URL's scheme picks its table of
 * operations (tp_internal.h) once, at connect or listen; the connection
 * keeps it. A transport this build left out (its library was not found at
 * configure time) keeps its line with the reason, so its URLs get "this
 * build has no ... support" instead of "unknown transport". */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <string.h>

#ifndef APIGEN_HAVE_UCX
static const tp_ops tp_ucx_ops = {.scheme = "ucx", .form = TP_URL_HOSTPORT,
                                  .example = "ucx://host:port",
                                  .absent = "UCX support (needs libucx-dev)"};
#endif
#ifndef APIGEN_HAVE_TLS
static const tp_ops tp_tls_ops = {.scheme = "tls", .form = TP_URL_HOSTPORT,
                                  .example = "tls://host:port",
                                  .absent = "TLS support (needs libssl-dev)"};
#endif

static const tp_ops *const table[] = {
    &tp_unix_ops, /* unix.c */
    &tp_tcp_ops,  /* tcp.c */
    &tp_tls_ops,  /* tls.c */
    &tp_shm_ops,  /* shm.c */
    &tp_ucx_ops,  /* ucx.c */
};

const tp_ops *tp_ops_at(unsigned i)
{
    return i < sizeof table / sizeof table[0] ? table[i] : NULL;
}

const tp_ops *tp_ops_of_url(const char *url)
{
    for (unsigned i = 0; url && i < sizeof table / sizeof table[0]; i++) {
        size_t n = strlen(table[i]->scheme);
        if (strncmp(url, table[i]->scheme, n) == 0 && strncmp(url + n, "://", 3) == 0)
            return table[i];
    }
    return NULL;
}

const tp_ops *tp_ops_of_scheme(const char *scheme)
{
    for (unsigned i = 0; scheme && i < sizeof table / sizeof table[0]; i++)
        if (strcmp(scheme, table[i]->scheme) == 0)
            return table[i];
    return NULL;
}
