/* Texts kept per value in the guest (apigen_kept_text, apigen_rt.h): what a
 * library's `const char *` for an error code says is asked of the server's
 * library once and kept, so the stub returns the library's own wording
 * without inventing it and without a round trip after the first. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"

#define TEXT_MAX 512

static const char *find(apigen_kept_texts *k, long key)
{
    for (unsigned i = 0; i < k->n; i++)
        if (k->e[i].key == key) return k->e[i].text;
    return NULL;
}

const char *apigen_kept_text(apigen_kept_texts *k, long key,
                             bool (*ask)(long key, char *buf, size_t n))
{
    static _Thread_local char odd[TEXT_MAX]; /* past APIGEN_KEPT_TEXTS values */
    pthread_mutex_lock(&k->mu);
    const char *s = find(k, key);
    pthread_mutex_unlock(&k->mu);
    if (s) return s;
    char buf[TEXT_MAX] = {0};
    apigen_hold_deferred(true); /* a queued call's error is the application's next call's */
    bool got = ask(key, buf, sizeof buf);
    apigen_hold_deferred(false);
    if (!got) return NULL;
    buf[sizeof buf - 1] = 0;
    char *d = strdup(buf);
    pthread_mutex_lock(&k->mu);
    s = find(k, key); /* another thread may have kept it meanwhile */
    if (!s && d && k->n < APIGEN_KEPT_TEXTS) {
        k->e[k->n].key = key;
        k->e[k->n++].text = s = d;
        d = NULL;
    }
    pthread_mutex_unlock(&k->mu);
    free(d);
    if (s) return s;
    memcpy(odd, buf, sizeof odd);
    return odd;
}
