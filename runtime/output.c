/* A session process's stdout and stderr, forwarded to its client (spec
 * `api.forward_output: true`, docs/internals.md "Forwarded output"). What
 * the vendor library prints in the session process (a GPU kernel's printf,
 * which the driver writes to the process's stdout when the program
 * synchronizes) belongs to the client's program. Under --isolation process
 * the session process points fd 1 at a memfd opened for appending: writes
 * never block, however much is printed and whoever reads. Before each sync
 * reply of such an API, dispatch sends what was written since (after
 * flushing stdio's buffer) as APIGEN_F_OUTPUT frames on the call's
 * connection, ahead of the reply: the guest writes them to its own stdout
 * before the call returns, so the output lands where the native program
 * prints it (after what it printed before the synchronizing call, before
 * what it prints after). Consumed pages of the memfd are given back (punched
 * out). With sessions as threads the server's stdout is everyone's and
 * nothing is captured. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define OUT_CHUNK (64u << 10)

/* fd 1 (tag 1, the guest's stdout) and fd 2 (tag 2, its stderr: a
 * kernel's assert messages, the library's own warnings); the server's log
 * moves to a copy of the original fd 2 first (rt_log_redirect) */
typedef struct {
    int fd;        /* the memfd the stream writes to (O_APPEND), -1: not captured */
    uint64_t done; /* bytes of it already sent */
} out_stream;
static out_stream outs[2] = {{-1, 0}, {-1, 0}};
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static bool capture_fd(int target, out_stream *o)
{
    int fd = memfd_create(target == 1 ? "apigen-stdout" : "apigen-stderr", MFD_CLOEXEC);
    if (fd < 0)
        return false;
    /* O_APPEND belongs to the open file description the target shares: every
     * write goes to the end, whatever the offset; reads here use pread */
    if (fcntl(fd, F_SETFL, O_APPEND) != 0 || dup2(fd, target) < 0) {
        close(fd);
        return false;
    }
    o->fd = fd;
    return true;
}

bool rt_output_capture(void)
{
    fflush(stdout);
    fflush(stderr);
    if (!capture_fd(1, &outs[0]))
        return false;
    int log = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (log < 0)
        return true; /* stdout forwarded; stderr stays the log */
    rt_log_redirect(log);
    if (!capture_fd(2, &outs[1])) {
        apigen_log("session child: cannot capture stderr (%s): kernels' assert messages stay "
                   "in the server's log", strerror(errno));
        rt_log_redirect(2);
        close(log);
    }
    return true;
}

/* What stream o (tag 1 or 2) got since the last call, as output frames. */
static bool forward_one(apigen_conn *c, const apigen_frame_hdr *rq, out_stream *o, uint8_t tag)
{
    struct stat st;
    if (o->fd < 0 || fstat(o->fd, &st) != 0 || (uint64_t)st.st_size <= o->done)
        return true;
    bool ok = true;
    uint8_t *buf = malloc(OUT_CHUNK + 1);
    while (ok && buf && o->done < (uint64_t)st.st_size) {
        uint64_t left = (uint64_t)st.st_size - o->done;
        size_t want = left < OUT_CHUNK ? (size_t)left : OUT_CHUNK;
        ssize_t n = pread(o->fd, buf + 1, want, (off_t)o->done);
        if (n <= 0)
            break;
        buf[0] = tag;
        apigen_frame_hdr h = {APIGEN_MAGIC,    APIGEN_PROTO_VERSION, APIGEN_F_OUTPUT,
                              rq->call_id,     rq->request_id,       rq->thread_id,
                              (uint32_t)n + 1, 0};
        uint8_t hb[APIGEN_FRAME_HDR_SIZE];
        char err[256];
        apigen_hdr_encode(&h, hb);
        struct iovec iov[2] = {{hb, sizeof hb}, {buf, (size_t)n + 1}};
        if (rt_rec_active)
            rt_rec_sent(c, &h, buf, (size_t)n + 1);
        if (!apigen_tp_send(c, iov, 2, -1, err, sizeof err)) {
            apigen_log("closing connection from %s: sending the session's output: %s",
                       apigen_tp_peer(c), err);
            ok = false;
        }
        o->done += (uint64_t)n; /* sent or not: never twice */
    }
    if (!buf) {
        apigen_log("no memory to forward the session's output: %llu bytes dropped",
                   (unsigned long long)((uint64_t)st.st_size - o->done));
        o->done = (uint64_t)st.st_size;
    }
    free(buf);
    /* give back the pages every byte of which went out */
    off_t whole = (off_t)(o->done & ~(uint64_t)4095);
    if (whole > 0)
        (void)fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, whole);
    return ok;
}

bool rt_output_forward(apigen_conn *c, const apigen_frame_hdr *rq)
{
    if (outs[0].fd < 0)
        return true;
    fflush(stdout); /* the library may print through stdio without flushing */
    fflush(stderr);
    pthread_mutex_lock(&out_mu);
    bool ok = forward_one(c, rq, &outs[0], 1) && forward_one(c, rq, &outs[1], 2);
    pthread_mutex_unlock(&out_mu);
    return ok;
}
