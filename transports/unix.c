/* unix:///abs/path: AF_UNIX stream sockets. */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static socklen_t fill_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    /* url.c guarantees strlen(path) < sizeof sun_path */
    memcpy(sa->sun_path, path, strlen(path) + 1);
    return (socklen_t)sizeof *sa;
}

static bool unix_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                         char *err, size_t errlen)
{
    struct sockaddr_un sa;
    socklen_t sl = fill_addr(&sa, u->path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tp_err(err, errlen, "cannot connect to %s: socket: %s", url, strerror(errno));
        return false;
    }
    int rc = tp_connect_fd(fd, (struct sockaddr *)&sa, sl, timeout_ms);
    if (rc) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, strerror(rc));
        close(fd);
        return false;
    }
    *out = tp_conn_new(&tp_unix_ops, fd, url, err, errlen);
    return *out != NULL;
}

/* A socket file nobody listens on is left over from a dead server: remove it.
 * Anything else (a live server, a regular file) is an error. */
static bool clear_stale(const char *path, const char *url, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return true;
    if (!S_ISSOCK(st.st_mode)) {
        tp_err(err, errlen, "cannot listen on %s: %s exists and is not a socket", url, path);
        return false;
    }
    struct sockaddr_un sa;
    socklen_t sl = fill_addr(&sa, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true;
    int rc = tp_connect_fd(fd, (struct sockaddr *)&sa, sl, 1000);
    close(fd);
    if (rc == 0) {
        tp_err(err, errlen, "cannot listen on %s: another server is listening there", url);
        return false;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        tp_err(err, errlen, "cannot listen on %s: removing stale socket: %s", url,
               strerror(errno));
        return false;
    }
    return true;
}

/* A name beside path, unique to this process, to bind before the socket
 * listens; false when the directory's name leaves no room for one. */
static bool side_name(const char *path, char *out, size_t outlen)
{
    const char *slash = strrchr(path, '/');
    int dir = (int)(slash - path);
    int n = snprintf(out, outlen, "%.*s/.apigen-%ld.sock", dir, path, (long)getpid());
    return n > 0 && (size_t)n < outlen;
}

static bool unix_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                        size_t errlen)
{
    if (!clear_stale(u->path, url, err, errlen))
        return false;
    /* The file appears under its name only once the socket listens (a
     * hard link made after listen()), so a client that waits for the file
     * never meets "Connection refused" from a socket still being set up.
     * Where no side name fits sun_path, bind the name itself. */
    char side[sizeof((struct sockaddr_un *)0)->sun_path];
    struct stat st;
    const char *bound = side_name(u->path, side, sizeof side) ? side : u->path;
    if (bound == side && lstat(side, &st) == 0) {
        if (S_ISSOCK(st.st_mode))
            unlink(side); /* left by a server of this pid that died here */
        else
            bound = u->path; /* someone's file: never removed */
    }
    struct sockaddr_un sa;
    socklen_t sl = fill_addr(&sa, bound);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tp_err(err, errlen, "cannot listen on %s: socket: %s", url, strerror(errno));
        return false;
    }
    /* Owner only (SECURITY.md S7): set before listen(), so nobody can
     * connect while the file still has the umask's mode. */
    if (bind(fd, (struct sockaddr *)&sa, sl) < 0 || chmod(bound, 0600) < 0 ||
        listen(fd, 128) < 0) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, strerror(errno));
        close(fd);
        if (bound == side)
            unlink(side);
        return false;
    }
    if (bound == side) {
        /* link(), not rename(): a server that started meanwhile keeps its
         * name; rename() only where the file system has no hard links */
        int rc = link(side, u->path) < 0 ? errno : 0;
        if (rc && rc != EEXIST)
            rc = rename(side, u->path) < 0 ? errno : 0;
        unlink(side);
        if (rc) {
            tp_err(err, errlen, "cannot listen on %s: %s", url,
                   rc == EEXIST ? "another server is listening there" : strerror(rc));
            close(fd);
            return false;
        }
    }
    apigen_listener *l = tp_listener_new(&tp_unix_ops, fd, err, errlen);
    if (!l) {
        close(fd);
        unlink(u->path);
        return false;
    }
    snprintf(l->url, sizeof l->url, "unix://%s", u->path);
    snprintf(l->unlink_path, sizeof l->unlink_path, "%s", u->path);
    *out = l;
    return true;
}

static bool unix_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen)
{
    char peer[sizeof((apigen_conn *)0)->peer];
    int fd = tp_sock_accept(l, peer, sizeof peer, err, errlen);
    return fd >= 0 && (*out = tp_conn_new(&tp_unix_ops, fd, peer, err, errlen)) != NULL;
}

static bool unix_adopt(const int *fds, int nfds, const char *peer, apigen_conn **out, char *err,
                       size_t errlen)
{
    return tp_sock_adopt(&tp_unix_ops, fds, nfds, peer, out, err, errlen);
}

const tp_ops tp_unix_ops = {
    .scheme = "unix",
    .form = TP_URL_PATH,
    .example = "unix:///path",
    .connect = unix_connect,
    .listen = unix_listen,
    .accept = unix_accept,
    .adopt = unix_adopt,
    .send = tp_sock_send,
    .recv = tp_sock_recv,
    .shutdown = tp_sock_shutdown,
    .handoff_fds = tp_sock_handoff_fds,
    .eager_us = 200, /* as tcp's (tcp.c) */
};
