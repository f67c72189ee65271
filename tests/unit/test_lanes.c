/* Lanes (runtime/lanes.c): the piece layout, transfers cut into pieces
 * over real connections (socket pairs) and reassembled in order in parts of
 * awkward sizes, frames whose bulks go over lanes through the runtime's
 * sender and receivers (wire.c), and a lane that dies mid-transfer: an
 * error on both ends, no hang. */
#define _GNU_SOURCE
#include "check.h"
#include "rt_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- layout ---------------------------------------------------------------------- */
/* Every byte of [0, n) once, each piece's header once (in the part where
 * the piece starts), piece i on lane i mod k, whatever the parts. */
static void layout_case(uint64_t n, uint64_t piece, unsigned k, const uint64_t *cuts, unsigned ncuts)
{
    uint8_t *seen = calloc(n ? n : 1, 1);
    uint64_t npieces = (n + piece - 1) / piece;
    unsigned *heads = calloc(npieces ? npieces : 1, sizeof *heads);
    CHECK(seen && heads);
    uint64_t a = 0;
    for (unsigned c = 0; c <= ncuts; c++) {
        uint64_t b = c < ncuts ? cuts[c] : n;
        for (unsigned lane = 0; lane < k; lane++) {
            rt_lane_it it;
            rt_lane_seg s;
            rt_lane_it_init(&it, n, piece, k, lane, a, b);
            uint64_t last = 0;
            bool first = true;
            while (rt_lane_it_next(&it, &s)) {
                uint64_t i = s.piece_off / piece;
                CHECK(s.piece_off % piece == 0 && i % k == lane);
                CHECK(s.piece_len == (n - s.piece_off < piece ? n - s.piece_off : piece));
                CHECK(s.off >= a && s.off + s.len <= b && s.len > 0);
                CHECK(s.off >= s.piece_off && s.off + s.len <= s.piece_off + s.piece_len);
                CHECK(s.head == (s.piece_off >= a));
                CHECK(first || s.off > last); /* in order on the lane */
                first = false;
                last = s.off;
                if (s.head)
                    heads[i]++;
                for (uint64_t x = s.off; x < s.off + s.len; x++)
                    seen[x]++;
            }
        }
        a = b;
    }
    for (uint64_t x = 0; x < n; x++)
        if (seen[x] != 1) {
            fprintf(stderr, "n %llu piece %llu k %u: byte %llu seen %u times\n",
                    (unsigned long long)n, (unsigned long long)piece, k, (unsigned long long)x,
                    seen[x]);
            check_failures++;
            break;
        }
    for (uint64_t i = 0; i < npieces; i++)
        CHECK(heads[i] == 1);
    free(seen);
    free(heads);
}

static void test_layout(void)
{
    const uint64_t P = 4099;
    const uint64_t sizes[] = {0, 1, P - 1, P, P + 1, 2 * P, 5 * P + 3, 17 * P, 64 * P + 1};
    for (unsigned si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (unsigned k = 2; k <= 8; k += (k < 4 ? 1 : 4)) {
            uint64_t n = sizes[si];
            layout_case(n, P, k, NULL, 0);
            uint64_t cuts[64];
            unsigned nc = 0;
            for (uint64_t c = 1; c < n && nc < 64; c += 1 + (c * 7919) % (3 * P))
                cuts[nc++] = c; /* parts of awkward sizes, some inside a piece */
            layout_case(n, P, k, cuts, nc);
        }
}

/* ---- transfers over socket pairs --------------------------------------------------- */
static apigen_conn *adopt(int fd)
{
    apigen_conn *c = NULL;
    char err[256];
    CHECK(apigen_tp_adopt_fd(fd, "pair", &c, err, sizeof err));
    return c;
}

typedef struct ends {
    apigen_conn *main[2]; /* [0] sends, [1] receives */
    rt_lanes *L[2];
    apigen_conn *lane[2][RT_LANES_MAX];
} ends;

static void ends_open(ends *e, unsigned k, uint32_t piece, uint64_t min)
{
    char err[256];
    int sv[2];
    rt_lane_cfg cfg = {k, piece, min};
    static const uint8_t key[RT_KEY_LEN];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    e->main[0] = adopt(sv[0]);
    e->main[1] = adopt(sv[1]);
    for (unsigned i = 0; i < k; i++) {
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        e->lane[0][i] = adopt(sv[0]);
        e->lane[1][i] = adopt(sv[1]);
    }
    for (int s = 0; s < 2; s++) {
        e->L[s] = rt_lanes_new_guest(e->main[s], &cfg, key);
        CHECK(e->L[s] && rt_lanes_start(e->L[s], e->lane[s], k, err, sizeof err));
        CHECK(rt_lanes_of(e->main[s]) == e->L[s]);
    }
}

static void ends_close(ends *e)
{
    for (int s = 0; s < 2; s++) {
        rt_lanes_free(e->main[s]);
        CHECK(rt_lanes_of(e->main[s]) == NULL);
        apigen_tp_close(e->main[s]);
    }
}

typedef struct sender {
    rt_lanes *L;
    const uint8_t *p;
    uint64_t n;
    unsigned times;
    bool ok;
    char err[256];
} sender;

static void *send_main(void *arg)
{
    sender *s = arg;
    s->ok = true;
    for (unsigned t = 0; t < s->times && s->ok; t++)
        s->ok = rt_lanes_send(s->L, s->p, s->n, 10000, s->err, sizeof s->err);
    return NULL;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (uint8_t)x;
    }
}

/* n bytes sent twice, received once in parts of awkward sizes, once with a
 * part dropped (dst NULL) in the middle: the bytes in place, in order. */
static void transfer_case(unsigned k, uint32_t piece, uint64_t n)
{
    ends e;
    char err[256];
    ends_open(&e, k, piece, 1);
    uint8_t *src = malloc(n + 1), *dst = malloc(n + 1);
    CHECK(src && dst);
    fill(src, n, n + k);
    sender s = {e.L[0], src, n, 2, false, ""};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, send_main, &s) == 0);
    memset(dst, 0xee, n + 1);
    CHECK(rt_lanes_recv_begin(e.L[1], n, err, sizeof err));
    uint64_t at = 0, step = 1;
    while (at < n) {
        uint64_t k2 = n - at < step ? n - at : step;
        CHECK(rt_lanes_recv(e.L[1], dst + at, k2, 10000, err, sizeof err));
        at += k2;
        step = step * 3 + 7; /* 1, 10, 37, ...: across piece boundaries */
    }
    CHECK(memcmp(src, dst, n) == 0 && dst[n] == 0xee);
    /* again: the middle third dropped */
    memset(dst, 0xee, n + 1);
    CHECK(rt_lanes_recv_begin(e.L[1], n, err, sizeof err));
    uint64_t t1 = n / 3, t2 = 2 * n / 3;
    CHECK(rt_lanes_recv(e.L[1], dst, t1, 10000, err, sizeof err));
    CHECK(rt_lanes_recv(e.L[1], NULL, t2 - t1, 10000, err, sizeof err));
    CHECK(rt_lanes_recv(e.L[1], dst + t2, n - t2, 10000, err, sizeof err));
    CHECK(memcmp(src, dst, t1) == 0 && memcmp(src + t2, dst + t2, n - t2) == 0);
    /* past the end: refused, not read */
    CHECK(!rt_lanes_recv(e.L[1], dst, 1, 10000, err, sizeof err));
    pthread_join(th, NULL);
    CHECK(s.ok);
    ends_close(&e);
    free(src);
    free(dst);
}

static void test_transfers(void)
{
    const uint32_t P = 4099;
    const uint64_t sizes[] = {0, 1, P - 1, P, P + 1, 3 * P + 5, (5u << 20) + 17};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (unsigned k = 2; k <= 8; k *= 2)
            transfer_case(k, P, sizes[i]);
    transfer_case(3, 65536, (9u << 20) + 3); /* a real piece size */
}

/* ---- frames: the runtime's sender and receivers -------------------------------------- */
typedef struct wsender {
    apigen_conn *c;
    apigen_wr *w;
    bool ok;
    char err[256];
} wsender;

static void *wsend_main(void *arg)
{
    wsender *s = arg;
    s->ok = rt_wr_send(s->c, s->w, 10000, s->err, sizeof s->err);
    return NULL;
}

/* One frame of w: u32 tag, a small zero-copy piece (if small), the bulk, u32 tail. */
static void put_frame(apigen_wr *w, uint32_t tag, const uint8_t *small, uint64_t ns,
                      const uint8_t *bulk, uint64_t nb, uint16_t flags)
{
    size_t off;
    CHECK(rt_wr_begin_frame(w, &off));
    CHECK(apigen_put_u32(w, tag));
    if (small)
        CHECK(apigen_put_bytes_ref(w, small, ns));
    CHECK(apigen_put_bytes_ref(w, bulk, nb));
    CHECK(apigen_put_u32(w, tag ^ 0xffffffffu));
    CHECK(rt_wr_end_frame(w, off, flags, 3, tag, 1));
}

/* Four frames in one send (their bulks over the lanes when at least min),
 * received head first with the bulk straight into the caller's memory
 * (pull_into), whole (the bulk into the buffer), and head first then
 * pulled into the buffer by a read past the head (pull_rest), laned or not. */
static void test_frames(void)
{
    ends e;
    char err[256];
    const uint64_t min = 300000;
    ends_open(&e, 4, 4099, min);
    enum { NF = 4 };
    const uint64_t nb[NF] = {(3u << 20) + 1, 1u << 20, 200000 /* below min */, (2u << 20) + 7};
    const bool head_only[NF] = {true, false, true, true}, into[NF] = {true, false, false, false};
    uint8_t *bulk[NF], small[70000];
    fill(small, sizeof small, 99);
    apigen_wr w;
    apigen_wr_init(&w);
    for (int i = 0; i < NF; i++) {
        bulk[i] = malloc(nb[i]);
        CHECK(bulk[i] != NULL);
        fill(bulk[i], nb[i], (uint64_t)i + 1);
        put_frame(&w, 10u + (unsigned)i, i % 2 ? NULL : small, sizeof small, bulk[i], nb[i],
                  i == 2 ? APIGEN_F_ASYNC : 0);
    }
    wsender s = {e.main[0], &w, false, ""};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, wsend_main, &s) == 0);
    uint8_t *buf = NULL, *dst = malloc(nb[0]);
    size_t cap = 0;
    for (int i = 0; i < NF; i++) {
        apigen_frame_hdr h;
        bool eof;
        size_t have;
        rt_pull pl;
        apigen_rd rd;
        CHECK(rt_recv_hdr(e.main[1], &h, UINT32_MAX, 10000, &eof, NULL, 0, &have, err, sizeof err));
        CHECK(h.request_id == 10u + (unsigned)i);
        CHECK(!!(h.flags & APIGEN_F_LANES) == (nb[i] >= min));
        memset(&pl, 0, sizeof pl);
        CHECK(rt_recv_payload(e.main[1], &h, &buf, &cap, have, 10000, head_only[i], err, sizeof err,
                              &pl, &rd));
        uint32_t tag = 0, tail = 0;
        const void *p;
        uint64_t n = 0;
        CHECK(apigen_get_u32(&rd, &tag) && tag == 10u + (unsigned)i);
        if (i % 2 == 0)
            CHECK(apigen_get_bytes(&rd, &p, &n, UINT64_MAX) && n == sizeof small &&
                  memcmp(p, small, n) == 0);
        if (into[i])
            CHECK(apigen_get_into(&rd, dst, nb[0], &n) && n == nb[0] && memcmp(dst, bulk[0], n) == 0);
        else
            CHECK(apigen_get_bytes(&rd, &p, &n, UINT64_MAX) && n == nb[i] &&
                  memcmp(p, bulk[i], n) == 0);
        CHECK(apigen_get_u32(&rd, &tail) && tail == (tag ^ 0xffffffffu) && apigen_rd_done(&rd));
        CHECK(rt_pull_drain(&rd));
    }
    pthread_join(th, NULL);
    CHECK(s.ok);
    apigen_wr_free(&w);
    ends_close(&e);
    free(buf);
    free(dst);
    for (int i = 0; i < NF; i++)
        free(bulk[i]);
}

/* ---- failures ------------------------------------------------------------------------ */
/* A lane closed by the sender's side mid-transfer: the receiver fails with
 * the lane named, and so does whatever comes after; no hang. */
static void test_lane_dies(void)
{
    ends e;
    char err[256] = "";
    ends_open(&e, 3, 4099, 1);
    uint64_t n = 100 * 4099;
    uint8_t *src = calloc(1, n), *dst = malloc(n);
    /* lane 1's piece 1 arrives in part, then lane 1 is closed */
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_LANES, 1, 0, 4099, 4099, 0};
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, hb);
    CHECK(apigen_tp_send_buf(e.lane[0][1], hb, sizeof hb, 1000, err, sizeof err));
    CHECK(apigen_tp_send_buf(e.lane[0][1], src, 1000, 1000, err, sizeof err));
    apigen_tp_shutdown(e.lane[0][1]);
    CHECK(rt_lanes_recv_begin(e.L[1], n, err, sizeof err));
    CHECK(!rt_lanes_recv(e.L[1], dst, n, 10000, err, sizeof err));
    CHECK_CONTAINS(err, "lane 1 of 3");
    err[0] = 0;
    CHECK(!rt_lanes_send(e.L[1], src, n, 10000, err, sizeof err)); /* dead from now on */
    CHECK_CONTAINS(err, "lane 1 of 3");
    /* the other side's lanes see theirs shut: a send there fails too */
    ends_close(&e);
    free(src);
    free(dst);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_layout();
    test_transfers();
    test_frames();
    test_lane_dies();
    CHECK_DONE();
}
