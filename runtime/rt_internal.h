/* Private to runtime/: shared between its files, never included by generated code. */
#ifndef APIGEN_RT_INTERNAL_H
#define APIGEN_RT_INTERNAL_H

#include "apigen_rt.h"

#include <pthread.h>
#include "transport.h"

/* mmap's "at this address or fail" (Linux 4.17; glibc before 2.28 lacks the
 * name): mirrors (mirror.c) and the arena's view (arena_guest.c) */
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

typedef struct rt_lanes rt_lanes; /* lanes.c */

/* Guard a writer for a frame: reserve the 32-byte header at w->len and start
 * a new payload (alignment is relative to it). Returns the frame's offset.
 * Inline (every guest call begins one): with room in the buffer it is a few
 * stores; growing it, or a writer that failed, goes to the _slow version. */
APIGEN_CHECK bool rt_wr_begin_frame_slow(apigen_wr *w, size_t *frame_off);
APIGEN_CHECK static inline bool rt_wr_begin_frame(apigen_wr *w, size_t *frame_off)
{
    size_t off = w->len;
    if (w->failed || w->cap - off < APIGEN_FRAME_HDR_SIZE ||
        off + APIGEN_FRAME_HDR_SIZE + w->ext_total - w->base > UINT32_MAX)
        return rt_wr_begin_frame_slow(w, frame_off);
    w->len = off + APIGEN_FRAME_HDR_SIZE; /* not zeroed: rt_wr_end_frame writes all of it */
    *frame_off = off;
    w->base = w->len + w->ext_total;
    return true;
}
/* Empties w and begins a frame in it (at offset 0) with prefix zero bytes
 * of payload: rt_wr_begin_frame + rt_wr_skip for a reply, in one step. */
APIGEN_CHECK bool rt_wr_begin_reply(apigen_wr *w, size_t *frame_off, size_t prefix);
/* Writes the header for the frame at frame_off (payload = the rest of w). */
APIGEN_CHECK bool rt_wr_end_frame(apigen_wr *w, size_t frame_off, uint16_t flags,
                                  uint32_t call_id, uint32_t request_id, uint64_t thread_id);
/* Drops what w holds from buf offset len on (frames begun there, their
 * zero-copy pieces) and clears a failure. */
void rt_wr_truncate(apigen_wr *w, size_t len);

/* ---- progress of long operations (progress.c) ------------------------------
 * One line a second on stderr for an operation of at least APIGEN_PROGRESS_MIN
 * bytes (default 64 MiB) when APIGEN_PROGRESS=1, or when it is unset and
 * stderr is a terminal. Off: rt_progress_wanted is one load and a branch. */
typedef struct rt_progress {
    const char *what;
    uint64_t total, done, t0, last;
} rt_progress;
extern int rt_progress_state_; /* 0 not read yet, 1 off, 2 on */
bool rt_progress_wanted_slow(size_t total);
static inline bool rt_progress_wanted(size_t total)
{
    int st = __atomic_load_n(&rt_progress_state_, __ATOMIC_RELAXED);
    if (__builtin_expect(st == 1, 1))
        return false;
    return rt_progress_wanted_slow(total);
}
void rt_progress_begin(rt_progress *p, const char *what, uint64_t total);
void rt_progress_step(rt_progress *p, uint64_t n);
void rt_progress_end(rt_progress *p);
/* Sends w's bytes with its zero-copy pieces (one writev-like send). */
APIGEN_CHECK bool rt_wr_send(apigen_conn *c, const apigen_wr *w, int timeout_ms, char *err,
                             size_t errlen);
/* Sends w's first upto bytes (whole frames without zero-copy pieces) and
 * drops them from w: the rest moves to the front. */
APIGEN_CHECK bool rt_wr_send_head(apigen_conn *c, apigen_wr *w, size_t upto, int timeout_ms,
                                  char *err, size_t errlen);
/* Grow w by n zero bytes (used to keep space for later-filled fields). */
APIGEN_CHECK bool rt_wr_skip(apigen_wr *w, size_t n);

/* Receives one frame: header, then payload into *buf (grown as needed, kept
 * 16-byte aligned by malloc). false + err on EOF/error/bad header. *eof is
 * set when the peer closed cleanly before a header. */
APIGEN_CHECK bool rt_recv_frame(apigen_conn *c, apigen_frame_hdr *h, uint8_t **buf, size_t *cap,
                                uint32_t max_payload, int timeout_ms, bool *eof, char *err,
                                size_t errlen);

/* A reply whose bulk (APIGEN_F_BULK) is still in transit: apigen_get_into
 * receives it straight into the caller's memory; any other read past the
 * head receives the rest into the reply buffer first. */
typedef struct rt_pull {
    apigen_conn *conn;
    int timeout_ms;
    uint8_t **buf;
    size_t *cap;
    size_t len_off, data_off; /* payload offsets of the bulk's length and data */
    uint64_t n;               /* bulk bytes */
    size_t tail;              /* payload bytes after the bulk */
    bool pending;             /* bulk and tail not received yet */
    rt_lanes *lanes;          /* the bulk comes over these (APIGEN_F_LANES), the tail on conn */
    bool failed;              /* the transport failed while receiving them (err) */
    char err[256];
} rt_pull;

/* A frame in two steps: its header (checked), then its payload. Over a
 * shared ring the header step also takes a small payload that has all
 * arrived and fits in body[body_cap] (*have = its length, else 0; body is then the
 * payload buffer that rt_recv_payload gets with have). With head_only and
 * APIGEN_F_BULK only the head arrives (up to the bulk's data), rd->pull =
 * pl (which must outlive rd's use) receives the rest on demand; otherwise
 * (or when have) the whole payload. rd is set over what arrived. */
APIGEN_CHECK bool rt_recv_hdr(apigen_conn *c, apigen_frame_hdr *h, uint32_t max_payload,
                              int timeout_ms, bool *eof, uint8_t *body, size_t body_cap,
                              size_t *have, char *err, size_t errlen);
APIGEN_CHECK bool rt_recv_payload(apigen_conn *c, const apigen_frame_hdr *h, uint8_t **buf,
                                  size_t *cap, size_t have, int timeout_ms, bool head_only,
                                  char *err, size_t errlen, rt_pull *pl, apigen_rd *rd);
/* As rt_recv_frame, and sets rd over what arrived: for a bulk reply only the
 * head, with rd->pull = pl (which must outlive rd's use). */
APIGEN_CHECK bool rt_recv_reply(apigen_conn *c, apigen_frame_hdr *h, uint8_t **buf, size_t *cap,
                                uint32_t max_payload, int timeout_ms, bool *eof, char *err,
                                size_t errlen, rt_pull *pl, apigen_rd *rd);
/* Receives whatever of a bulk reply is still in transit; false: the
 * connection failed (pl->err says why). */
bool rt_pull_drain(apigen_rd *r);

/* Large buffers stay warm while a program uses them: a buffer above keep_min
 * bytes is kept while some call used at least a quarter of it within the last
 * APIGEN_KEEP_MS milliseconds (default 2000), so copies separated by small
 * calls (a launch loop between an upload and a download) reuse warm memory
 * instead of faulting in fresh pages each time. false: free it now. Costs a
 * clock read only while a large buffer is held. */
typedef struct rt_warm {
    uint64_t used_ns; /* when a call last used most of the buffer; 0: never */
} rt_warm;
bool rt_keep_warm_slow(rt_warm *w, size_t cap, size_t used, size_t keep_min);
static inline bool rt_keep_warm(rt_warm *w, size_t cap, size_t used, size_t keep_min)
{
    return cap <= keep_min || rt_keep_warm_slow(w, cap, used, keep_min); /* small: kept, no call */
}

/* Registered host memory (scratch.c; apigen_set_host_memory): the hooks
 * themselves, for memory kept for a session's life (the arena): false when
 * none is installed or it declined. */
bool rt_host_pin(void *p, size_t n);
void rt_host_unpin(void *p);

/* One session across the APIs of a family (apigen_api.family): a frame's
 * call id carries the API's index in the session's list (the order the
 * guest's handshakes named them: 0 is the API that opened the session) in
 * its high 8 bits, so a session of one API sends the call ids it always did.
 * RT_FAMILY_MAX APIs per session. */
#define RT_CALL_API_SHIFT 24
#define RT_CALL_LOCAL_MASK ((1u << RT_CALL_API_SHIFT) - 1)
#define RT_FAMILY_MAX 16u
/* APIs of a family whose thread state (api.thread_state) a thread keeps */
#define RT_TSTATE_APIS 4u
/* Whether a and b are one API or members of one family. */
static inline bool rt_same_family(const apigen_api *a, const apigen_api *b)
{
    return a == b || (a && b && a->family && b->family &&
                      (a->family == b->family || __builtin_strcmp(a->family, b->family) == 0));
}

/* Handshake status codes (reply u32). */
enum {
    RT_HELLO_OK = 0,
    RT_HELLO_PROTO = 1,
    RT_HELLO_API = 2,
    RT_HELLO_FINGERPRINT = 3,
    RT_HELLO_AUTH = 4,
    RT_HELLO_SESSION = 5,
    RT_HELLO_MALFORMED = 6,
};
#define RT_KEY_LEN 16
#define RT_NAME_MAX 256u

#define RT_TOKEN_MAX 4096u
/* The handshake request (guest.c writes it, hello.c reads it): u32 hello
 * version, str API name, u64 fingerprint, u8 join, 16 bytes session key
 * (zeros for a new session), str token (may be absent), then
 * - version 2 (APIGEN_PROTO_VERSION): optional u64 API version, optional
 *   u64 arena size (non-zero; new sessions only);
 * - version 3 (RT_HELLO_V3; frames stay version 2): u64 API version (0:
 *   none), u64 arena size (0: none), then (u32 tag, bytes value) pairs to
 *   the end, unknown tags skipped: RT_HELLO_TAG_PID (u64 LE, the guest's
 *   pid as it sees it), RT_HELLO_TAG_COMM (its process name),
 *   RT_HELLO_TAG_FAMILY (a family's further APIs: u32 n, then n times str
 *   name, u64 fingerprint, u64 API version), RT_HELLO_TAG_PIDNS (which pid
 *   space its pid is of: "BOOT_ID:DEV:INODE" of /proc/self/ns/pid, so that
 *   two guests' pids are compared only within one pid namespace; procs.c).
 * A server speaks both; a version-2 server refuses a version-3 guest with
 * "protocol version mismatch". */
#define RT_HELLO_V3 3u
enum { RT_HELLO_TAG_PID = 1, RT_HELLO_TAG_COMM = 2, RT_HELLO_TAG_FAMILY = 3, RT_HELLO_TAG_LANES = 4,
       RT_HELLO_TAG_LANE = 5, RT_HELLO_TAG_PIDNS = 6 };
/* Lanes (lanes.c), negotiated in the handshake:
 * - a guest thread's connection that may want lanes adds RT_HELLO_TAG_LANES
 *   (u32 RT_LANES_VERSION); a server that speaks that version appends to its
 *   reply's (status, message, key) a u32 RT_LANES_VERSION and a 16-byte lane
 *   key of this connection (a server that does not: nothing, or u32 0, and
 *   the guest keeps one connection);
 * - each lane is a connection of its own whose handshake joins the session
 *   (session key, token, APIs as any join), names the owner's thread id in
 *   its frame header and adds RT_HELLO_TAG_LANE: u32 version, u32 index,
 *   u32 count, u32 piece size, u64 threshold, 16-byte lane key. The server
 *   refuses a lane whose key is not that of a connection of this session
 *   with that thread id. */
#define RT_LANES_VERSION 1u
#define RT_PIDNS_MAX 80 /* bytes of a pid namespace's name, NUL included */
typedef struct rt_hello {
    uint32_t proto;
    const char *name, *token; /* point into the payload */
    uint64_t fp, api_version, arena_size, pid;
    uint8_t join, key[RT_KEY_LEN];
    char comm[32];
    char pidns[RT_PIDNS_MAX]; /* "" when not sent */
    uint32_t nmore; /* the family's further APIs (RT_HELLO_TAG_FAMILY) */
    uint32_t lanes_version; /* RT_HELLO_TAG_LANES: the guest may open lanes (0: not asked) */
    bool lane;              /* RT_HELLO_TAG_LANE: this connection is a lane */
    uint32_t lane_version, lane_index, lane_count, lane_piece;
    uint64_t lane_min;
    uint8_t lane_key[RT_KEY_LEN];
    const char *more_name[RT_FAMILY_MAX];
    uint64_t more_fp[RT_FAMILY_MAX], more_version[RT_FAMILY_MAX];
} rt_hello;
/* RT_HELLO_OK; RT_HELLO_PROTO (h->proto: what came); RT_HELLO_MALFORMED (*err) */
uint32_t rt_hello_parse(const uint8_t *p, size_t n, rt_hello *h, const char **err);
/* h as a version-2 guest would have written it (no pid, no process name;
 * a family's further APIs after the two u64s): what a replay compares with
 * the recording */
APIGEN_CHECK bool rt_hello_canon(const rt_hello *h, apigen_wr *w);

/* ---- lanes (lanes.c): a guest thread's connection with several more that
 * carry its large transfers in parallel (APIGEN_F_LANES) ------------------- */
#define RT_LANES_MAX 16u
#define RT_LANES_DEFAULT 4u                 /* APIGEN_LANES where the transport gains (tcp) */
#define RT_LANE_PIECE_DEFAULT (256u << 10)  /* APIGEN_LANE_PIECE */
#define RT_LANES_MIN_DEFAULT (1u << 20)     /* APIGEN_LANES_MIN: smaller bulks stay on the connection */
#define RT_LANE_PIECE_MIN 4096u
#define RT_LANE_PIECE_MAX (64u << 20)
typedef struct rt_lane_cfg {
    unsigned k;     /* lanes (0: off) */
    uint32_t piece; /* bytes of one piece */
    uint64_t min;   /* a bulk of at least this many bytes goes over the lanes */
} rt_lane_cfg;
/* The guest's settings from the environment; useful: the transport gains. */
void rt_lanes_cfg(rt_lane_cfg *c, bool useful);
/* The layout of a transfer of n bytes: piece i = [i*piece, min(n, (i+1)*piece))
 * travels on lane i mod k. rt_lane_it_next gives lane's part of [a, b) one
 * piece at a time: the bytes [off, off+len) of the piece at piece_off
 * (piece_len bytes), head when the piece starts in [a, b) (its header is
 * read there). */
typedef struct rt_lane_seg {
    uint64_t off, len, piece_off, piece_len;
    bool head;
} rt_lane_seg;
typedef struct rt_lane_it {
    uint64_t n, a, b, piece, i;
    unsigned k, lane;
} rt_lane_it;
void rt_lane_it_init(rt_lane_it *it, uint64_t n, uint64_t piece, unsigned k, unsigned lane,
                     uint64_t a, uint64_t b);
bool rt_lane_it_next(rt_lane_it *it, rt_lane_seg *s);
/* One per main connection (kept as its apigen_tp_user): the guest's once
 * the server agreed, the server's at the handshake (registered where lane
 * handshakes find it by session, thread id and key). */
rt_lanes *rt_lanes_new_guest(apigen_conn *main, const rt_lane_cfg *cfg, const uint8_t key[RT_KEY_LEN]);
rt_lanes *rt_lanes_new_server(apigen_conn *main, const void *session, uint64_t tid,
                              const uint8_t key[RT_KEY_LEN]);
rt_lanes *rt_lanes_of(const apigen_conn *c);
/* Stops the workers and closes the lanes (before closing main); in a fork
 * child only closes this process's descriptors. */
void rt_lanes_free(apigen_conn *main);
/* Wakes whatever waits on main's lanes (thread-safe, like apigen_tp_shutdown). */
void rt_lanes_shutdown(apigen_conn *main);
/* The guest: takes k opened, handshaken lane connections (kept, to close
 * with L, also on failure: then the lanes are dead) and starts their workers. */
APIGEN_CHECK bool rt_lanes_start(rt_lanes *L, apigen_conn *const *conns, unsigned k, char *err,
                                 size_t errlen);
/* The guest: whether to open the lanes before sending a bulk of `largest`
 * bytes (or because a large reply came on one connection: note_recv). */
bool rt_lanes_wanted(const rt_lanes *L, uint64_t largest);
/* Whether a transfer of n bytes (or a large reply seen) would use lanes. */
bool rt_lanes_large(const rt_lanes *L, uint64_t n);
/* guest.c: a device allocation of bytes was noted for api's server (route.c):
 * the calling thread's lanes to it start opening, on a thread of their own,
 * when that is as large as their bulks and they were never opened. */
void rt_lanes_ahead(const apigen_api *api, int server, uint64_t bytes);
void rt_lanes_give_up(rt_lanes *L);
void rt_lanes_note_recv(const apigen_conn *c, uint64_t n);
void rt_lanes_settings(const rt_lanes *L, unsigned *k, uint32_t *piece, uint64_t *min,
                       uint8_t key[RT_KEY_LEN]);
uint64_t rt_lanes_min(const rt_lanes *L);
bool rt_lanes_started(const rt_lanes *L);
/* The server: a lane's handshake offers its connection to the owner
 * (conn NULL: check, and reserve the lane's index for this handshake, which
 * offers conn after its reply). RT_HELLO_OK (the owner's lanes own conn now),
 * or a refusal and msg. */
uint32_t rt_lanes_offer(const void *session, uint64_t tid, const uint8_t key[RT_KEY_LEN],
                        unsigned idx, unsigned k, uint32_t piece, uint64_t min, apigen_conn *conn,
                        char *msg, size_t msglen);
/* The server: lane connections it granted and still expects (a
 * connection's lanes not all arrived: RT_LANES_MAX until the first tells
 * their count), for --max-conns at accept (server.c). */
unsigned rt_lanes_expected(void);
/* The server's metrics (metrics.c sets it with --metrics; NULL: none):
 * lane connections taken into use, bulk bytes received and sent on lanes. */
extern void (*rt_lanes_mx)(uint64_t opened, uint64_t in, uint64_t out);
/* The lanes to send a bulk of n bytes on (NULL: send it on c itself); and
 * those a laned frame's bulk comes on (NULL + err: none, end the connection). */
rt_lanes *rt_lanes_for_send(apigen_conn *c, uint64_t n);
rt_lanes *rt_lanes_for_recv(apigen_conn *c, char *err, size_t errlen);
/* One transfer: sent whole; received in order, in parts (dst NULL: dropped).
 * false + err: a lane failed, every lane is shut down (end the connection). */
APIGEN_CHECK bool rt_lanes_send(rt_lanes *L, const void *p, uint64_t n, int timeout_ms, char *err,
                                size_t errlen);
APIGEN_CHECK bool rt_lanes_recv_begin(rt_lanes *L, uint64_t n, char *err, size_t errlen);
APIGEN_CHECK bool rt_lanes_recv(rt_lanes *L, void *dst, uint64_t n, int timeout_ms, char *err,
                                size_t errlen);

/* The runtime's prefix of every reply: u8 status (apigen_status), u8 flags,
 * then, with RT_REPLY_VALUE, the u64 error of an earlier async call (the
 * server adds those 8 bytes only while it holds such an error, so a call's
 * reply usually fits one cache line of the shm ring with its results). */
#define RT_REPLY_DEFERRED 1u /* the value is an async call's error, reported by this reply */
#define RT_REPLY_VALUE 2u    /* the u64 follows */
#define RT_REPLY_PREFIX 2u
#define RT_REPLY_PREFIX_VALUE 10u
typedef struct rt_reply_prefix {
    uint8_t status;
    bool has_deferred;
    int64_t deferred;
} rt_reply_prefix;
/* false: malformed (short, an unknown status or flag) */
static inline bool rt_get_reply_prefix(apigen_rd *r, rt_reply_prefix *p)
{
    uint8_t fl = 0;
    uint64_t v = 0;
    if (!apigen_get_u8(r, &p->status) || !apigen_get_u8(r, &fl) || p->status >= APIGEN_STATUS_COUNT ||
        fl > (RT_REPLY_DEFERRED | RT_REPLY_VALUE) || fl == RT_REPLY_DEFERRED ||
        ((fl & RT_REPLY_VALUE) && !apigen_get_u64(r, &v)))
        return false;
    p->has_deferred = (fl & RT_REPLY_DEFERRED) != 0;
    p->deferred = (int64_t)v;
    return true;
}

/* The session's salt, the high 32 bits of its handle ids: both sides derive
 * it from the session key (never 0, below 2^31). A guest-assigned id
 * (apigen_guest_id) is RT_GID_BIT | salt << 32 | n, n = 1..2^32-1: the
 * server's own ids never have RT_GID_BIT. */
#define RT_GID_BIT (1ull << 63)

/* A runtime frame (call id 0, APIGEN_F_ASYNC): the server runs the
 * connection's next frames once other connections of the session ran the
 * async frames a guest thread sent them before (guest.c). Payload: u64 n,
 * then (u64 thread id, u64 count) pairs to the end: the connection whose
 * handshake named that thread id has run `count` async frames (or has
 * ended). n: a session-wide count of async frames run, from guests before
 * the pairs (0 from today's guests): a count of all connections, it let
 * frames sent later by a third thread stand in for the ones waited for. */
#define RT_CALL_WAIT 0u
#define RT_WAIT_MS 30000 /* the server goes on after this, with one log line */
static inline uint64_t rt_key_salt(const uint8_t key[RT_KEY_LEN])
{
    uint64_t s = ((uint64_t)key[0] << 24 | (uint64_t)key[1] << 16 | (uint64_t)key[2] << 8 |
                  key[3]) ^ ((uint64_t)key[4] << 8 | key[5]);
    return (s & 0x7fffffffu) | 0x10000u;
}

/* APIs of one connection (a family's) whose failed async calls' errors a
 * server keeps at once, one per API (server.c) */
#define RT_DEFER_APIS 32

/* ---- several servers, guest side (route.c; guest.c connects) ------------------ */
#define RT_MAX_SERVERS 16
/* APIGEN_SERVER's servers for api, read once per process (at most
 * RT_MAX_SERVERS; more are logged and left out): their number (1 when the
 * variable is unset) and the k-th URL (false: none set, or too long). */
unsigned rt_servers(const apigen_api *api);
bool rt_server_url(const apigen_api *api, unsigned k, char *out, size_t cap);
/* The salt of server k's session (0: none, or gone): apigen_route_id finds
 * a handle's server by the salt in its high bits. taken: another server's
 * session has this salt (the guest then asks for another session). */
void rt_route_salt(const apigen_api *api, unsigned k, uint64_t salt);
bool rt_route_salt_taken(const apigen_api *api, unsigned k, uint64_t salt);
/* The calling thread's current server of api (0 until it selects one). */
unsigned rt_route_current(const apigen_api *api);
/* In a fork child: no server's session is the parent's any more. */
void rt_route_forget_sessions(void);
/* apigen_set_session_hook's function for api (NULL: none), and the server
 * of the call the thread is building (apigen_building_server). */
void (*rt_route_hook(const apigen_api *api))(unsigned server);
void rt_route_building(int server);

/* ---- server internals shared by server.c, session.c, scratch.c, callbacks.c */
/* The server half's per-call thread-locals: initial-exec. The library is
 * built position-independent, so without it the compiler plans a
 * __tls_get_addr call per access (the linker relaxes it away, but the
 * registers saved around it stay); the server half is only ever linked
 * into executables, where initial-exec is always available. */
#if defined(__GNUC__)
#define RT_TLS_HOST __attribute__((tls_model("initial-exec")))
#else
#define RT_TLS_HOST
#endif
struct apigen_session;
struct rt_server;

/* session.c */
struct apigen_session *rt_session_create(const apigen_api *api, apigen_conn *ctrl);
/* As rt_session_create with a key chosen by the caller (NULL: a random one):
 * a session child of --isolation process uses the key its parent routes by. */
struct apigen_session *rt_session_create_keyed(const apigen_api *api, apigen_conn *ctrl,
                                               const uint8_t *key);
APIGEN_CHECK bool rt_random_key(uint8_t key[RT_KEY_LEN]);
/* Joins by key (constant-time compare); NULL if unknown or a different api. */
struct apigen_session *rt_session_join(const apigen_api *api, const uint8_t key[RT_KEY_LEN]);
void rt_session_key(const struct apigen_session *s, uint8_t key[RT_KEY_LEN]);
/* --metrics: the session's record (rt_metrics.h; NULL: none) */
struct rt_mx_sess;
void rt_session_set_mx(struct apigen_session *s, struct rt_mx_sess *m);
struct rt_mx_sess *rt_session_mx(const struct apigen_session *s);
/* The guest process the session serves, from its handshake: its pid as it
 * sees it (0: not told) and its pid space (RT_HELLO_TAG_PIDNS; "" not told). */
void rt_session_set_guest(struct apigen_session *s, uint64_t pid, const char *pidns);
uint64_t rt_session_guest(const struct apigen_session *s, const char **pidns);
/* Up to max sessions of this process whose guest is of pid space pidns
 * (non-empty) and, where gpid is not 0, has that pid: their addresses
 * (compared, never used: a session may end once g_mu is let go) and guest
 * pids. The number found. */
unsigned rt_sessions_of_space(const char *pidns, uint64_t gpid, const struct apigen_session **ses,
                              uint64_t *gpids, unsigned max);
/* The session's API of index idx (a frame's call id names it), NULL: none. */
const apigen_api *rt_session_api(struct apigen_session *s, unsigned idx);
/* A handshake named the session's APIs list[0..n): each already there must
 * be the one of its index, the next ones join it (a family's member loaded
 * later). RT_HELLO_OK, else RT_HELLO_API and msg says why. */
uint32_t rt_session_add_apis(struct apigen_session *s, const apigen_api *const *list, unsigned n,
                             char *msg, size_t msglen);
/* Drops one connection's reference; the last one destroys owned handles
 * newest first, then callback bindings. ctrl: this connection was the
 * session's control connection (callbacks stop using it first). */
void rt_session_release(struct apigen_session *s, apigen_conn *conn);
/* Callback channel (callbacks.c needs it): */
void rt_session_cb_lock(struct apigen_session *s, apigen_conn **ctrl);
void rt_session_cb_unlock(struct apigen_session *s, bool dead);
void rt_session_add_binding(struct apigen_session *s, void *b);
/* RT_CALL_WAIT: the async frames each connection of a session ran, by the
 * guest thread id its handshake named (a server connection's; linked into
 * the session from its handshake until it ends). */
typedef struct rt_conn_ran {
    struct rt_conn_ran *next;
    uint64_t tid;
    _Atomic uint64_t n;
    bool linked;
} rt_conn_ran;
void rt_session_conn_open(struct apigen_session *s, rt_conn_ran *c, uint64_t tid);
void rt_session_conn_close(struct apigen_session *s, rt_conn_ran *c);
/* One async frame of s ran on connection c. */
void rt_session_async_ran(struct apigen_session *s, rt_conn_ran *c);
/* Waits until s ran n async frames in all and, for each of the npairs
 * (u64 tid, u64 count) pairs at pairs (little-endian, as on the wire), the
 * connection of that thread id ran count of them or is gone (false:
 * RT_WAIT_MS passed first). */
bool rt_session_wait_async(struct apigen_session *s, uint64_t n, const uint8_t *pairs,
                           size_t npairs);
unsigned rt_session_count(void); /* live sessions (tests) */

/* stream.c: what one dispatched request may stream (cx->rt). */
struct apigen_stream {
    struct rt_dispatch *d;
    bool on, out, failed;
    uint64_t n, done, chunk;
    rt_lanes *lanes; /* an in-stream's bytes come over these (APIGEN_F_LANES) */
};
typedef struct rt_dispatch {
    apigen_conn *conn;
    const apigen_frame_hdr *h;
    rt_pull *pull; /* the request's bulk, when it came head first */
    struct apigen_stream in, out;
    /* api.errors.last_error: the connection's error that the library's own
     * last-error state lacks (NULL: none kept); set by server.c's dispatch */
    struct rt_own_error *own;
    bool last_error_call; /* the handler asked apigen_last_error */
    bool result_own;      /* apigen_result_own: its error is not the library's */
} rt_dispatch;
/* Per connection (one guest thread): the newest error the runtime decided
 * for it (a rejection, an error hand-written host code made up) that is
 * newer than any error the library returned since. */
typedef struct rt_own_error {
    bool has;
    int64_t err;
    const apigen_api *api; /* in this API's error values (a family's connection carries several) */
} rt_own_error;
/* After the handler: discards what an in-stream (or a bulk the handler never
 * reached) left unread, so the next frame starts where it should. false:
 * the connection failed or an out-stream did (close it). */
bool rt_stream_finish(rt_dispatch *d);
/* Reads and drops n bytes of conn (false: it failed). */
bool rt_discard(apigen_conn *c, uint64_t n, int timeout_ms);

/* scratch.c */
void rt_scratch_free_all(apigen_call_ctx *cx);

/* devmem.c: releases (newest first, with api->device_destroy) and forgets
 * every device range of s; the number of recorded ranges (tests). */
void rt_dev_release_session(struct apigen_session *s, const apigen_api *api);
size_t rt_dev_count(void);
/* Whether session s (an address only: not used) holds a device range. */
bool rt_dev_session_holds(const struct apigen_session *s);

/* procs.c: the session processes of --isolation process, in a table the
 * parent writes and its session children read (apigen_guest_pids) */
void rt_procs_init(unsigned slots);     /* parent, before the first fork */
void rt_procs_add(long spid, uint64_t gpid, const char *pidns); /* parent, after a fork */
void rt_procs_end(long spid);           /* parent, the child reaped */
void rt_procs_own(void);                /* a session child: it serves one session */

/* log.c: the trace file's descriptor (-1 when none is open), which a
 * session child keeps open. */
int rt_trace_fd(void);
/* A trace line of the wire ("apigen wire [pid]: ..."), when tracing: the
 * guest's round trips and bytes each way, which apigen-trace-model sums. */
void rt_trace_wire(const char *fmt, ...) APIGEN_PRINTF(1, 2);
/* A session process writes its stack to the log when it faults (crash.c). */
void rt_crash_report_install(void);

/* server.c: serves one connection on the calling thread (fuzzer, tests). */
void rt_serve_conn(const apigen_api *const *apis, unsigned napis, uint64_t max_arg,
                   const char *token, apigen_conn *conn);

/* callbacks.c */
void rt_cb_free_binding(void *b);

/* ---- the guest's shared-memory arena (arena_guest.c, arena_host.c) ---------- */
/* A size from the environment, K/M/G suffixes; dflt when unset or not a
 * number (arena_guest.c; also the wide copy's settings). */
uint64_t rt_env_size(const char *name, uint64_t dflt);
/* wire.c: a buffer argument of n bytes at p inside the arena travels as
 * (n | RT_ARENA_BIT, offset); the guest installs find once a server took the
 * arena, the server installs at (resolves an offset on this thread's
 * session: NULL when out of range; *bound: whether the thread has an arena;
 * a length with that bit is an ordinary (too long) one without). */
#define RT_ARENA_BIT (1ull << 63)
/* The handshake's side exchange: "APIGEN-ARENA\0" + fd from the guest,
 * then 1 status byte (1: mapped, 0: failed, 2: the API takes none, 3: mapped
 * for the family: the opening API takes none but a member the server serves
 * does, so every member's calls may use it) + u64 mapping address from the
 * server. */
#define RT_ARENA_TAG "APIGEN-ARENA"
#define RT_ARENA_TAG_LEN 13
#define RT_ARENA_ACK_LEN 9
extern bool (*rt_wire_arena_find)(const void *p, uint64_t n, uint64_t *off);
extern const void *(*rt_wire_arena_at)(uint64_t off, uint64_t n, bool *bound);
/* Guest: the arena's memfd to offer at a handshake (-1: none; created on
 * the first call), and the server's answer (its mapping's address). */
int rt_arena_guest_fd(uint64_t *size);
void rt_arena_guest_ack(const apigen_api *api, const uint8_t ack[RT_ARENA_ACK_LEN], int stray_fd);
void rt_arena_guest_current(const apigen_api *api); /* the API of the call being written */
/* Server: takes fd (a sealed memfd) as session s's arena; the handshake of
 * every connection of s binds its thread (unbind when it ends). */
bool rt_arena_adopt(struct apigen_session *s, int fd, uint64_t *base, char *why, size_t whylen);
bool rt_arena_taken(const apigen_api *api); /* apigen_arena_accept was called for it */
bool rt_arena_taken_family(const apigen_api *api); /* ... for an API of its family */
void rt_arena_bind(struct apigen_session *s);
void rt_arena_unbind(void);
/* Whether [addr, addr + n) lies in the arena of s that this thread is bound
 * to (registering the whole arena on first use when its guest registers
 * no segments, as a buffer argument does): apigen_dev_check takes it as
 * the client's memory. */
bool rt_arena_holds(struct apigen_session *s, uint64_t addr, uint64_t n);
/* RT_CALL_ARENA (a sync frame of any API of the session): the guest's
 * allocator registers (u8 1) or unregisters (u8 0) the segment [u64 addr,
 * + u64 n) of the arena, addr the server's address; the reply is u32 1
 * (done) or 0 (not: the memory then works as pageable memory would). An
 * arena that got one is never registered whole (arena_host.c). */
#define RT_CALL_ARENA RT_CALL_LOCAL_MASK
void rt_arena_call(apigen_call_ctx *cx);
/* Guest: sends one (arena_guest.c); false: not done. */
bool rt_arena_guest_pin(const apigen_api *api, uint64_t addr, uint64_t n, bool on);


/* ---- record / replay (record.c writes, replay.c answers; docs/internals.md
 * "Record and replay" is the format) ----------------------------------------- */
#define RT_REC_MAGIC "APIGEN-RECORD\n"
#define RT_REC_MAGIC_LEN 14
#define RT_REC_VERSION 1u
enum {
    RT_REC_API = 'A',      /* str name, u64 fingerprint, u64 api version */
    RT_REC_HELLO = 'H',    /* u32 conn, u32 session, u8 join, bytes hello payload, 16 key */
    RT_REC_REQUEST = 'Q',  /* u32 conn, u16 flags, u32 call, u32 len, u64 hash, bytes first part */
    RT_REC_SENT = 'S',     /* u32 conn, u16 flags, u32 call, bytes payload (reply, stream) */
    RT_REC_CALLBACK = 'C', /* u32 session, u64 requests before it, u32 type, bytes payload */
    RT_REC_END = 'E',      /* u32 conn */
    RT_REC_GUEST_ID = 'I', /* u32 session, u64 an id the guest assigned (callback, guest id) */
};
/* FNV-1a 64 of a request's payload (its bytes past the stored part are
 * checked by it). */
uint64_t rt_rec_hash(const void *p, size_t n);
/* Whether this server records (--record): one relaxed load. */
extern bool rt_rec_active;
bool rt_rec_open(const char *path, const apigen_api *const *apis, unsigned napis);
void rt_rec_close(void);
void rt_rec_hello(apigen_conn *c, struct apigen_session *s, bool join, const uint8_t *payload,
                  uint32_t len, const uint8_t key[RT_KEY_LEN]);
void rt_rec_request(apigen_conn *c, const apigen_frame_hdr *h, const uint8_t *payload);
/* a frame the server sends on c: the one w holds at frame_off (its
 * zero-copy pieces included), or header h with one payload piece */
void rt_rec_sent_wr(apigen_conn *c, const apigen_wr *w, size_t frame_off);
void rt_rec_sent(apigen_conn *c, const apigen_frame_hdr *h, const void *p, size_t n);

/* Forwarded output (output.c): a session process of an API with
 * forward_output points its fd 1 at a memfd (capture, once); before each
 * sync reply of such an API, forward sends what was written since as
 * APIGEN_F_OUTPUT frames on the call's connection (false: the send failed). */
bool rt_output_capture(void);
void rt_log_redirect(int fd);
/* mirror.c: before a call of api (not an owner of mirrors, of their family): 0 or the push's error */
int rt_mirror_foreign_call(const apigen_api *api);
int rt_twin_foreign_call(const apigen_api *api); /* twin.c: the same for twins */
/* twin.c: a twin at dev inside the allocation region; alloc: what
 * apigen_twin_remove gives to free (twin_place.c's twins start a page into
 * theirs; 0 for a block of a slab, which the slab releases). Stale twins of
 * one region near each other are read back in one span. */
int rt_twin_add_in(void *host, size_t size, uint64_t dev, uint64_t alloc, uint64_t region,
                   bool read_only);
/* twin_place.c: every slab's allocation is gone (a device reset): no new
 * block goes there, and none is released when its blocks are freed */
void rt_twin_place_forget(void);
bool rt_output_forward(apigen_conn *c, const apigen_frame_hdr *rq);
void rt_rec_callback(struct apigen_session *s, const apigen_wr *w);
void rt_rec_end(apigen_conn *c);
void rt_rec_guest_id(struct apigen_session *s, uint64_t id);
/* --replay FILE: serves the recording on urls, calls nothing; the exit
 * status (0: every recorded message matched and was sent). */
int rt_replay_main(const char *path, const apigen_api *const *apis, unsigned napis,
                   const char *const *urls, unsigned nurls);

/* settle.c: what a session's guest knows of the work it queued (apigen_work_*).
 * Numbers count the frames that may queue work (seq); clean: the last
 * number known complete in scope clean_scope (clean_known); other: the
 * last frame that may have queued work outside the ordered queue; foreign:
 * the last frame whose thread differed from its predecessor's. Under mu. */
typedef struct rt_settle {
    pthread_mutex_t mu;
    uint64_t seq, clean, other, foreign, last_tid, clean_scope;
    unsigned inflight; /* sync frames noted whose reply has not come */
    bool clean_known;
    /* the last SETTLES_QUEUE call that succeeded alone: its frame, scope, queue, thread */
    uint64_t q_mine, q_scope, q_queue, q_tid;
    bool q_known;
} rt_settle;
void rt_settle_init(rt_settle *s);
/* a frame of call c is about to be sent (sync: its reply awaited, then
 * rt_settle_replied) or queued by thread tid */
void rt_settle_note(rt_settle *s, const apigen_call *c, uint64_t tid, bool sync);
void rt_settle_replied(rt_settle *s);
/* nothing noted since the last point known complete in scope */
bool rt_settle_idle(rt_settle *s, uint64_t scope);
/* nothing noted since thread tid's last SETTLES_QUEUE call of that queue in scope */
bool rt_settle_queue_idle(rt_settle *s, uint64_t scope, uint64_t queue, uint64_t tid);

/* arena_guest.c: [addr, addr + n) is the server's mapping of this guest's
 * arena for api's calls (what its device checks accept, devmem.c) */
bool rt_arena_peer_holds(const apigen_api *api, uint64_t addr, uint64_t n);

/* contents.c: an error of a queued call came back (taint): what the guest
 * holds of handle contents changed before it is no longer vouched for;
 * taint_now: the count so far. */
void rt_contents_taint(void);
/* a thread's memoized answers of an API given in the guest while its
 * calls are queued: every this many-th goes to the server (guest.c) */
#define RT_MEMO_ASK_EVERY 16
uint64_t rt_contents_taint_now(void);
/* cache.c: a server session's kept answers (spec `cache:`), request bytes
 * of call_id -> reply bytes (results from off on). find copies the reply
 * into *buf (grown to *cap); false: not kept (or no memory to copy it).
 * add keeps a copy, unless one is kept already or the table is full.
 * group/epoch (spec `cache.group`; 0/0 for none): an answer kept under an
 * epoch of its group answers only while the caller names that epoch (a
 * `cache_forget:` call moved the group on); add replaces an older one. */
typedef struct rt_cache rt_cache;
rt_cache *rt_cache_new(void);
bool rt_cache_find(rt_cache *c, uint32_t call_id, const uint8_t *key, size_t n, uint8_t **buf,
                   size_t *cap, size_t *len, size_t *off, uint32_t group, uint64_t epoch);
void rt_cache_add(rt_cache *c, uint32_t call_id, const uint8_t *key, size_t n, const uint8_t *rep,
                  size_t len, size_t off, uint32_t group, uint64_t epoch);
/* spec `cache.group`: groups of kept answers per session (names are the
 * specs', shared by a family's APIs) */
#define RT_CACHE_GROUPS 16u

#endif
