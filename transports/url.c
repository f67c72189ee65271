/* URL parsing: unix:///abs/path, tcp://host:port, tcp://[v6]:port, shm://name,
 * ucx://host:port (ucx://[v6]:port); a comma-separated list of them
 * (APIGEN_SERVER with several servers). */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <stdio.h>
#include <string.h>

bool apigen_url_parse(const char *url, apigen_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!url || !*url) {
        tp_err(err, errlen, "empty transport URL (expected unix:///path or tcp://host:port)");
        return false;
    }
    if (strncmp(url, "unix://", 7) == 0) {
        const char *p = url + 7;
        if (p[0] != '/') {
            tp_err(err, errlen, "'%s': unix socket path must be absolute (unix:///path)", url);
            return false;
        }
        if (strlen(p) >= sizeof out->path) {
            tp_err(err, errlen, "'%s': unix socket path longer than %zu bytes", url,
                   sizeof out->path - 1);
            return false;
        }
        out->scheme = APIGEN_URL_UNIX;
        strcpy(out->path, p);
        return true;
    }
    if (strncmp(url, "shm://", 6) == 0) {
        const char *p = url + 6;
        size_t n = strlen(p);
        if (n == 0 || n > 80 || strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789._-") != n) {
            tp_err(err, errlen, "'%s': shm name must be 1 to 80 of [A-Za-z0-9._-] (shm://name)", url);
            return false;
        }
        out->scheme = APIGEN_URL_SHM;
        memcpy(out->path, p, n + 1);
        return true;
    }
    if (strncmp(url, "tcp://", 6) == 0 || strncmp(url, "ucx://", 6) == 0 ||
        strncmp(url, "tls://", 6) == 0) {
        char sch[4];
        memcpy(sch, url, 3);
        sch[3] = 0;
        const char *p = url + 6, *colon, *hend;
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
        out->scheme = strcmp(sch, "tcp") == 0 ? APIGEN_URL_TCP
                      : strcmp(sch, "tls") == 0 ? APIGEN_URL_TLS : APIGEN_URL_UCX;
        memcpy(out->host, p, hlen);
        snprintf(out->port, sizeof out->port, "%lu", v);
        return true;
    }
    tp_err(err, errlen, "'%s': unknown transport (expected unix:///path, tcp://host:port, tls://host:port, shm://name or ucx://host:port)", url);
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
