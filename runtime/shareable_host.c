/* Shareable handles on the server: file descriptors a library exports so
 * that another process can import what they name (device allocations and
 * memory pools shared between processes). The exporting guest cannot hold the
 * server's descriptor, so the server keeps it and hands the guest a token
 * (shareable_guest.c wraps it in a descriptor of the guest's own); the
 * importing guest, usually another process and so another session, sends
 * the token back. Sessions may be processes of their own (--isolation
 * process): each process that exported something answers for its
 * descriptors on an abstract unix socket named by its pid, passing the
 * descriptor itself (SCM_RIGHTS) to a process of the same user that names
 * a token it holds. A token is a capability, as the descriptor is natively:
 * 16 random bytes besides the pid. Descriptors are closed when the session
 * that exported them ends. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "apigen_rt.h"

#define SECRET 16
static const unsigned char magic_[4] = {'a', 'p', 's', 'h'};

struct exported {
    unsigned char secret[SECRET];
    int fd;
};

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static struct exported **table_;
static size_t n_, cap_;
static pid_t listener_pid_; /* the process whose listener runs (a fork has none) */

/* The session ended: its descriptors go. */
static void exported_destroy(void *real)
{
    struct exported *x = real;
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < n_; i++)
        if (table_[i] == x) {
            table_[i] = table_[--n_];
            break;
        }
    pthread_mutex_unlock(&lock_);
    close(x->fd);
    free(x);
}

static const apigen_handle_type ht_exported_ = {"exported shareable handle", 0x53484152u,
                                                exported_destroy, NULL, 0, 0, NULL, 0};

/* A new descriptor for the secret's, or -1. */
static int local_dup(const unsigned char *secret)
{
    int fd = -1;
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < n_ && fd < 0; i++)
        if (memcmp(table_[i]->secret, secret, SECRET) == 0) fd = dup(table_[i]->fd);
    pthread_mutex_unlock(&lock_);
    return fd;
}

static socklen_t sock_name(struct sockaddr_un *a, pid_t pid)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* abstract (sun_path[0] == 0): nothing in the file system to clean up */
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "apigen-shareable-%ld", (long)pid);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void set_timeout(int s, int secs)
{
    struct timeval tv = {secs, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* One request: a secret in, a status byte out (0 with the descriptor). */
static void answer(int c)
{
    struct ucred cr;
    socklen_t crl = sizeof cr;
    unsigned char secret[SECRET];
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &crl) != 0 || cr.uid != geteuid()) return;
    set_timeout(c, 2);
    if (recv(c, secret, sizeof secret, MSG_WAITALL) != (ssize_t)sizeof secret) return;
    int fd = local_dup(secret);
    unsigned char st = fd >= 0 ? 0 : 1;
    struct iovec io = {&st, 1};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr m = {0};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        m.msg_control = ctl.b;
        m.msg_controllen = sizeof ctl.b;
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &fd, sizeof fd);
    }
    (void)sendmsg(c, &m, MSG_NOSIGNAL);
    if (fd >= 0) close(fd);
}

static void *listener(void *arg)
{
    int s = (int)(intptr_t)arg;
    for (;;) {
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            apigen_log("shareable handles: accept: %s; other processes can no longer import "
                       "this process's exports",
                       strerror(errno));
            return NULL;
        }
        answer(c);
        close(c);
    }
}

/* The calling process's listener, started at its first export. */
static bool ensure_listener(void)
{
    pid_t me = getpid();
    if (listener_pid_ == me) return true;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    socklen_t al = sock_name(&a, me);
    pthread_t t;
    if (s < 0 || bind(s, (struct sockaddr *)&a, al) != 0 || listen(s, 16) != 0 ||
        pthread_create(&t, NULL, listener, (void *)(intptr_t)s) != 0) {
        apigen_log("shareable handles: cannot listen for other sessions' imports: %s",
                   strerror(errno));
        if (s >= 0) close(s);
        return false;
    }
    pthread_detach(t);
    listener_pid_ = me;
    return true;
}

bool apigen_shareable_export(apigen_call_ctx *cx, int fd, unsigned char token[APIGEN_SHAREABLE_TOKEN])
{
    struct exported *x = calloc(1, sizeof *x);
    if (!x) return false;
    x->fd = fd;
    if (getrandom(x->secret, SECRET, 0) != SECRET) {
        free(x);
        return false;
    }
    pthread_mutex_lock(&lock_);
    bool ok = ensure_listener();
    if (ok && n_ == cap_) {
        size_t nc = cap_ ? 2 * cap_ : 16;
        struct exported **t = realloc(table_, nc * sizeof *t);
        if (t) table_ = t, cap_ = nc;
        else ok = false;
    }
    if (ok) table_[n_++] = x;
    pthread_mutex_unlock(&lock_);
    if (!ok) {
        free(x);
        return false;
    }
    apigen_handle_put_owned(cx, &ht_exported_, x); /* closed with the session */
    uint32_t pid = (uint32_t)getpid();
    memset(token, 0, APIGEN_SHAREABLE_TOKEN);
    memcpy(token, magic_, sizeof magic_);
    for (int i = 0; i < 4; i++) token[4 + i] = (unsigned char)(pid >> (8 * i));
    memcpy(token + 8, x->secret, SECRET);
    return true;
}

int apigen_shareable_import(apigen_call_ctx *cx, const unsigned char token[APIGEN_SHAREABLE_TOKEN])
{
    (void)cx;
    if (memcmp(token, magic_, sizeof magic_) != 0) return -1;
    uint32_t pid = 0;
    for (int i = 0; i < 4; i++) pid |= (uint32_t)token[4 + i] << (8 * i);
    const unsigned char *secret = token + 8;
    if ((pid_t)pid == getpid()) return local_dup(secret);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    set_timeout(s, 5);
    struct sockaddr_un a;
    socklen_t al = sock_name(&a, (pid_t)pid);
    int fd = -1;
    if (connect(s, (struct sockaddr *)&a, al) == 0 &&
        send(s, secret, SECRET, MSG_NOSIGNAL) == SECRET) {
        unsigned char st = 1;
        struct iovec io = {&st, 1};
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct msghdr m = {0};
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        m.msg_control = ctl.b;
        m.msg_controllen = sizeof ctl.b;
        if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) == 1 && st == 0) {
            struct cmsghdr *h = CMSG_FIRSTHDR(&m);
            if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
                h->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&fd, CMSG_DATA(h), sizeof fd);
        }
    }
    close(s);
    return fd;
}

int apigen_shareable_import_or_none(apigen_call_ctx *cx, const unsigned char token[APIGEN_SHAREABLE_TOKEN],
                                    const char *fn)
{
    int fd = apigen_shareable_import(cx, token);
    if (fd >= 0) return fd;
    int pp[2];
    if (pipe(pp) != 0) {
        apigen_log("%s: no export of this server has that handle, and no pipe could stand for it", fn);
        return -1;
    }
    close(pp[1]);
    return pp[0];
}
