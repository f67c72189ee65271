/* A session process's stdout, forwarded to its client (spec
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

static int out_fd = -1;   /* the memfd fd 1 writes to (O_APPEND) */
static uint64_t out_done; /* bytes of it already sent */
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

bool rt_output_capture(void)
{
    int fd = memfd_create("apigen-stdout", MFD_CLOEXEC);
    if (fd < 0)
        return false;
    fflush(stdout);
    /* O_APPEND belongs to the open file description fd 1 shares: every write
     * goes to the end, whatever the offset; reads here use pread */
    if (fcntl(fd, F_SETFL, O_APPEND) != 0 || dup2(fd, 1) < 0) {
        close(fd);
        return false;
    }
    out_fd = fd;
    return true;
}

bool rt_output_forward(apigen_conn *c, const apigen_frame_hdr *rq)
{
    if (out_fd < 0)
        return true;
    fflush(stdout); /* the library may print through stdio without flushing */
    struct stat st;
    bool ok = true;
    pthread_mutex_lock(&out_mu);
    if (fstat(out_fd, &st) != 0 || (uint64_t)st.st_size <= out_done) {
        pthread_mutex_unlock(&out_mu);
        return true;
    }
    uint8_t *buf = malloc(OUT_CHUNK + 1);
    while (ok && buf && out_done < (uint64_t)st.st_size) {
        uint64_t left = (uint64_t)st.st_size - out_done;
        size_t want = left < OUT_CHUNK ? (size_t)left : OUT_CHUNK;
        ssize_t n = pread(out_fd, buf + 1, want, (off_t)out_done);
        if (n <= 0)
            break;
        buf[0] = 1; /* the guest's stdout */
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
        out_done += (uint64_t)n; /* sent or not: never twice */
    }
    if (!buf)
        apigen_log("no memory to forward the session's output: %llu bytes dropped",
                   (unsigned long long)((uint64_t)st.st_size - out_done));
    if (!buf)
        out_done = (uint64_t)st.st_size;
    free(buf);
    /* give back the pages every byte of which went out */
    off_t whole = (off_t)(out_done & ~(uint64_t)4095);
    if (whole > 0)
        (void)fallocate(out_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, whole);
    pthread_mutex_unlock(&out_mu);
    return ok;
}
