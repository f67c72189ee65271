/* URL parsing: the scheme names a transport of the table (table.c), whose
 * form says what follows "://": an absolute path (unix:///abs/path), a name
 * (shm://name) or host:port (tcp://host:port, tcp://[v6]:port); and a
 * comma-separated list of URLs (APIGEN_SERVER with several servers). */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <stdio.h>
#include <string.h>

static bool parse_path(const char *url, const char *p, const tp_ops *t, apigen_url *out,
                       char *err, size_t errlen)
{
    if (p[0] != '/') {
        tp_err(err, errlen, "'%s': %s socket path must be absolute (%s)", url, t->scheme, t->example);
        return false;
    }
    if (strlen(p) >= sizeof out->path) {
        tp_err(err, errlen, "'%s': %s socket path longer than %zu bytes", url, t->scheme,
               sizeof out->path - 1);
        return false;
    }
    strcpy(out->path, p);
    return true;
}

static bool parse_name(const char *url, const char *p, const tp_ops *t, apigen_url *out,
                       char *err, size_t errlen)
{
    size_t n = strlen(p);
    if (n == 0 || n > 80 || strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789._-") != n) {
        tp_err(err, errlen, "'%s': %s name must be 1 to 80 of [A-Za-z0-9._-] (%s)", url, t->scheme,
               t->example);
        return false;
    }
    memcpy(out->path, p, n + 1);
    return true;
}

static bool parse_hostport(const char *url, const char *p, const tp_ops *t, apigen_url *out,
                           char *err, size_t errlen)
{
    const char *sch = t->scheme, *colon, *hend;
    if (*p == '[') {
        hend = strchr(p, ']');
        if (!hend || hend[1] != ':') {
            tp_err(err, errlen, "'%s': expected %s://[address]:port", url, sch);
            return false;
        }
        p++;
        colon = hend + 1;
    } else {
        colon = strrchr(p, ':');
        if (!colon) {
            tp_err(err, errlen, "'%s': missing port (expected %s://host:port)", url, sch);
            return false;
        }
        hend = colon;
        if (memchr(p, ':', (size_t)(hend - p))) {
            tp_err(err, errlen, "'%s': IPv6 addresses need brackets: %s://[addr]:port", url, sch);
            return false;
        }
    }
    size_t hlen = (size_t)(hend - p);
    if (hlen == 0 || hlen >= sizeof out->host) {
        tp_err(err, errlen, "'%s': bad host", url);
        return false;
    }
    const char *port = colon + 1;
    size_t plen = strlen(port);
    unsigned long v = 0;
    if (plen == 0 || plen > 5) {
        tp_err(err, errlen, "'%s': bad port", url);
        return false;
    }
    for (size_t i = 0; i < plen; i++) {
        if (port[i] < '0' || port[i] > '9') {
            tp_err(err, errlen, "'%s': bad port", url);
            return false;
        }
        v = v * 10 + (unsigned long)(port[i] - '0');
    }
    if (v > 65535) {
        tp_err(err, errlen, "'%s': port out of range", url);
        return false;
    }
    memcpy(out->host, p, hlen);
    snprintf(out->port, sizeof out->port, "%lu", v);
    return true;
}

/* "unix:///path, tcp://host:port, ..." from the table, for messages */
static void expected_list(char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (unsigned i = 0; tp_ops_at(i) && at < cap; i++) {
        int k = snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", tp_ops_at(i)->example);
        if (k < 0)
            break;
        at += (size_t)k;
    }
}

bool apigen_url_parse(const char *url, apigen_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char list[256];
    if (!url || !*url) {
        expected_list(list, sizeof list);
        tp_err(err, errlen, "empty transport URL (expected %s)", list);
        return false;
    }
    const tp_ops *t = tp_ops_of_url(url);
    if (!t) {
        expected_list(list, sizeof list);
        tp_err(err, errlen, "'%s': unknown transport (expected %s)", url, list);
        return false;
    }
    snprintf(out->scheme, sizeof out->scheme, "%s", t->scheme);
    const char *rest = url + strlen(t->scheme) + 3; /* past "://" */
    switch (t->form) {
    case TP_URL_PATH:
        return parse_path(url, rest, t, out, err, errlen);
    case TP_URL_NAME:
        return parse_name(url, rest, t, out, err, errlen);
    case TP_URL_HOSTPORT:
        return parse_hostport(url, rest, t, out, err, errlen);
    }
    tp_err(err, errlen, "'%s': transport %s has no URL form", url, t->scheme);
    return false;
}

unsigned apigen_url_list_count(const char *list)
{
    unsigned n = 1;
    for (const char *p = list; p && *p; p++)
        n += *p == ',';
    return n;
}

bool apigen_url_list_item(const char *list, unsigned k, char *out, size_t cap)
{
    const char *p = list ? list : "";
    for (unsigned i = 0; i < k; i++) {
        p = strchr(p, ',');
        if (!p)
            return false;
        p++;
    }
    size_t n = strcspn(p, ",");
    if (n >= cap)
        return false;
    memcpy(out, p, n);
    out[n] = 0;
    return true;
}
