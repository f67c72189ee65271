/* libFuzzer target: the server's decode-and-dispatch path (runtime/server.c
 * conn_main -> handshake -> dispatch -> generated handlers -> real library)
 * for one API, over a socketpair, checking runtime/SECURITY.md on every
 * input:
 *   S1/S2/S6  AddressSanitizer/UBSan: no read past a frame, no crash, no UB;
 *             libFuzzer -malloc_limit_mb: no allocation above the bound
 *   S5        when the connection ends, the session, its device ranges and
 *             (FUZZ_LIVE_OBJECTS) the real library's objects are gone
 *   S8/S9     every sync call gets a reply whose status is a known one
 *
 * Input: byte 0 picks the mode. Raw (odd): the rest is sent as is after a
 * valid handshake. Framed (even): records [u8 call][u8 flags][u16 len]
 * [len bytes], each sent as a well-formed frame (call id = call mod
 * (ncalls + 2), async if flags & 1, a bad header if flags & 0x80), its
 * reply read before the next; an 8-byte little-endian value 0xfeedXXXX..KK
 * in a payload is replaced by the KK-th id or address a reply returned, so
 * the fuzzer reaches handlers with live handles and device memory. With the
 * session's salt (from the key of the handshake reply), 0xfeecXXXXnnnnnnnn
 * becomes the server's id salt << 32 | n and 0xfeefXXXXnnnnnnnn the
 * guest-assigned id RT_GID_BIT | salt << 32 | n (the out handle of an async
 * call): tests/fuzz/record_seeds.py writes such records from real programs. */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "tp_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef FUZZ_API
#error "build with -DFUZZ_API=apigen_api_<name>"
#endif
extern const apigen_api FUZZ_API;

#ifdef FUZZ_LIVE_OBJECTS
unsigned FUZZ_LIVE_OBJECTS(void); /* the real library's live objects (fuzz_exa.c) */
#endif

#ifdef FUZZ_POCL
/* LLVM inside PoCL (clBuildProgram) installs its own alternate signal stack,
 * malloc'ed, on the thread that compiles: ASan would munmap it when that
 * thread (the served connection's) exits and abort in "unable to unmap". */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "use_sigaltstack=0";
}
/* What PoCL and its LLVM keep until exit (scripts/lsan.supp; C++ allocations
 * are all theirs: apigen is C, and LLVM's frames often do not unwind). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libLLVM\nleak:libclang\nleak:libpocl\nleak:libOpenCL\nleak:libhwloc\n"
           "leak:libltdl\nleak:libstdc++\n";
}

/* PoCL's global memory pinned to 1 GB (its largest buffer then 256 MiB):
 * device memory is the library's own bound (S2), not what this target tests. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("POCL_MEMORY_LIMIT", "1", 0);
    return 0;
}

/* Program binaries and IL are parsed by PoCL and LLVM, which trust them: a
 * malformed binary makes PoCL malloc what a length inside says (3 GB seen),
 * and its LLVM bitcode goes to LLVM's reader unchecked. The server cannot
 * validate LLVM bitcode or SPIR-V; such a crash ends only the client's
 * session process under the spec's `isolation: process` (runtime/SECURITY.md
 * "Not covered"). Not sent by this target, which runs the session in-process. */
static bool skip_call(uint32_t call)
{
    static const char *const skip[] = {"clCreateProgramWithBinary", "clCreateProgramWithIL",
                                       "clCreateProgramWithILKHR"};
    if (call >= FUZZ_API.ncalls || !FUZZ_API.call_names || !FUZZ_API.call_names[call])
        return false;
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
        if (!strcmp(FUZZ_API.call_names[call], skip[i]))
            return true;
    return false;
}
#else
static bool skip_call(uint32_t call)
{
    (void)call;
    return false;
}
#endif

#define MAX_ARG (1u << 20) /* the per-call bound the fuzzed server runs with */

typedef struct srv_arg {
    apigen_conn *conn;
} srv_arg;

static void *serve(void *p)
{
    srv_arg *a = p;
    static const apigen_api *const apis[] = {&FUZZ_API};
    rt_serve_conn(apis, 1, MAX_ARG, NULL, a->conn);
    return NULL;
}

static uint64_t seen[64];
static unsigned nseen;
static uint64_t salt; /* this input's session's, for guest-assigned ids */

static void harvest(const uint8_t *p, size_t n)
{
    /* every u64 of a reply that could be an id or an address */
    for (size_t i = 0; i + 8 <= n; i += 1) {
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--)
            v = v << 8 | p[i + k];
        if (v >= 0x1000 && (v >> 56) == 0) {
            seen[nseen % 64] = v;
            nseen++;
        }
    }
}

static void substitute(uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 8 <= n; i++) {
        if (p[i + 7] != 0xfe || (p[i + 6] != 0xed && p[i + 6] != 0xec && p[i + 6] != 0xef))
            continue;
        uint64_t v, n = (uint64_t)p[i + 3] << 24 | (uint64_t)p[i + 2] << 16 |
                        (uint64_t)p[i + 1] << 8 | p[i];
        if (p[i + 6] == 0xef) {
            v = RT_GID_BIT | salt << 32 | n;
        } else if (p[i + 6] == 0xec) {
            v = salt << 32 | n;
        } else if (nseen) {
            v = seen[p[i] % (nseen < 64 ? nseen : 64)];
        } else {
            continue;
        }
        for (int k = 0; k < 8; k++)
            p[i + k] = (uint8_t)(v >> (8 * k));
    }
}

static bool send_frame(int fd, uint16_t flags, uint32_t call, const uint8_t *pl, uint32_t len,
                       bool bad)
{
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, flags, call, 1, 1, len, 0};
    if (bad)
        h.reserved = 1;
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, hb);
    return send(fd, hb, sizeof hb, MSG_NOSIGNAL) == (ssize_t)sizeof hb &&
           (len == 0 || send(fd, pl, len, MSG_NOSIGNAL) == (ssize_t)len);
}

static bool recv_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        ssize_t k = recv(fd, b, n, 0);
        if (k <= 0)
            return false;
        b += k;
        n -= (size_t)k;
    }
    return true;
}

/* Reads frames until a reply (callbacks are skipped); false when closed. */
static bool recv_reply(int fd, uint8_t **buf, size_t *cap, uint32_t *len)
{
    for (;;) {
        uint8_t hb[APIGEN_FRAME_HDR_SIZE];
        apigen_frame_hdr h;
        const char *e;
        if (!recv_all(fd, hb, sizeof hb))
            return false;
        if (!apigen_hdr_decode(hb, &h, UINT32_MAX, &e)) {
            fprintf(stderr, "fuzz: the server sent a bad header: %s\n", e);
            abort();
        }
        if (h.payload_len > *cap) {
            free(*buf);
            *cap = h.payload_len;
            *buf = malloc(*cap);
            if (!*buf)
                abort();
        }
        if (!recv_all(fd, *buf, h.payload_len))
            return false;
        *len = h.payload_len;
        if (h.flags & APIGEN_F_REPLY)
            return true;
    }
}

static void check_reply(const uint8_t *p, uint32_t n)
{
    apigen_rd rd;
    rt_reply_prefix rp;
    apigen_rd_init(&rd, p, n);
    if (!rt_get_reply_prefix(&rd, &rp)) { /* short, or an unknown status or flag */
        fprintf(stderr, "fuzz: reply of %u bytes: malformed status prefix (S9)\n", n);
        abort();
    }
    if (rp.status != APIGEN_OK && rd.left) {
        fprintf(stderr, "fuzz: a rejected call's reply carries %zu bytes of results\n", rd.left);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size < 1 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 0;
    char err[64];
    srv_arg a = {tp_conn_new(tp_ops_of_scheme("unix"), sv[0], "fuzz", err, sizeof err)};
    if (!a.conn) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, serve, &a) != 0) {
        apigen_tp_close(a.conn);
        close(sv[1]);
        return 0;
    }
    int fd = sv[1];
    nseen = 0;

    /* handshake */
    apigen_wr w;
    size_t off;
    static const uint8_t zero[RT_KEY_LEN];
    apigen_wr_init(&w);
    bool ok = rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, APIGEN_PROTO_VERSION) &&
              apigen_put_str(&w, FUZZ_API.name) && apigen_put_u64(&w, FUZZ_API.fingerprint) &&
              apigen_put_u8(&w, 0) && apigen_put_raw(&w, zero, RT_KEY_LEN) &&
              apigen_put_str(&w, NULL) && rt_wr_end_frame(&w, off, APIGEN_F_HELLO, 0, 0, 1);
    uint8_t *rb = NULL;
    size_t rcap = 0;
    uint32_t rlen = 0;
    if (ok && send(fd, w.buf, w.len, MSG_NOSIGNAL) == (ssize_t)w.len &&
        recv_reply(fd, &rb, &rcap, &rlen)) {
        salt = rlen >= RT_KEY_LEN ? rt_key_salt(rb + rlen - RT_KEY_LEN) : 0;
        if (data[0] & 1) {
            /* raw bytes after the handshake */
            if (size > 1)
                (void)!send(fd, data + 1, size - 1, MSG_NOSIGNAL);
        } else {
            uint8_t *pl = malloc(65536);
            size_t i = 1;
            while (pl && i + 4 <= size) {
                uint32_t call = data[i] % (FUZZ_API.ncalls + 2);
                uint8_t fl = data[i + 1];
                uint32_t len = (uint32_t)data[i + 2] | (uint32_t)data[i + 3] << 8;
                i += 4;
                if (len > size - i)
                    len = (uint32_t)(size - i);
                memcpy(pl, data + i, len);
                i += len;
                if (skip_call(call))
                    continue;
                substitute(pl, len);
                bool is_async = fl & 1;
                if (!send_frame(fd, is_async ? APIGEN_F_ASYNC : 0, call, pl, len, fl & 0x80))
                    break;
                if (fl & 0x80)
                    break; /* the server closes on a bad header */
                if (is_async)
                    continue;
                if (!recv_reply(fd, &rb, &rcap, &rlen))
                    break;
                check_reply(rb, rlen);
                harvest(rb, rlen);
            }
            free(pl);
        }
    }
    apigen_wr_free(&w);
    shutdown(fd, SHUT_WR);
    while (recv_reply(fd, &rb, &rcap, &rlen)) /* drain until the server closes */
        check_reply(rb, rlen);
    free(rb);
    close(fd);
    pthread_join(t, NULL);

    /* S5: the connection is gone, so is everything it created */
    if (rt_session_count() != 0 || rt_dev_count() != 0) {
        fprintf(stderr, "fuzz: %u session(s), %zu device range(s) left after the client left (S5)\n",
                rt_session_count(), rt_dev_count());
        abort();
    }
#ifdef FUZZ_LIVE_OBJECTS
    if (FUZZ_LIVE_OBJECTS() != 0) {
        fprintf(stderr, "fuzz: %u object(s) left in the real library after the client left (S5)\n",
                FUZZ_LIVE_OBJECTS());
        abort();
    }
#endif
    return 0;
}
