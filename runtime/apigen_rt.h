/* apigen runtime: everything generated stubs and handlers (and hand-written
 * code in specs/<api>/) may call. Nothing API-specific lives here.
 *
 * Wire format (see docs/protocol.md): a 32-byte little-endian frame header
 * then a payload of fixed-width little-endian fields. Buffers are a u64
 * length, zero padding up to a 16-byte boundary of the payload, then the
 * bytes, so the server can hand them to the real library in place.
 *
 * Every get_* checks bounds and returns false on malformed input; the first
 * error is kept in the cursor (a failed fixed-width get_* stores 0). Every put_* returns false only on allocation
 * failure (the writer then stays failed). Results must be checked. */
#ifndef APIGEN_RT_H
#define APIGEN_RT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Building the shared guest runtime (libapigen-guest.so.2, compiled with
 * hidden visibility): what this header declares is its interface, exported;
 * everything else in it stays inside. */
#if defined(APIGEN_GUEST_SO) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Generated code carries `#if APIGEN_RUNTIME_ABI != N #error ...`. */
#define APIGEN_RUNTIME_ABI 2 /* 2: apigen_api.family, apigen_call.wire_id, libapigen-guest.so.2 */
#define APIGEN_PROTO_VERSION 2 /* 2: the short reply prefix (rt_internal.h) */
#define APIGEN_MAGIC 0x4e475041u /* "APGN" */
#define APIGEN_FRAME_HDR_SIZE 32u
#define APIGEN_BUF_ALIGN 16u

#if defined(__GNUC__)
#define APIGEN_CHECK __attribute__((warn_unused_result))
#define APIGEN_EXPORT __attribute__((visibility("default")))
#define APIGEN_HIDDEN __attribute__((visibility("hidden")))
#define APIGEN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define APIGEN_CHECK
#define APIGEN_EXPORT
#define APIGEN_HIDDEN
#define APIGEN_PRINTF(a, b)
#endif

/* ---- frame header ---------------------------------------------------------
 * u32 magic | u16 version | u16 flags | u32 call_id | u32 request_id |
 * u64 thread_id | u32 payload_len | u32 reserved(0)
 * With APIGEN_F_BULK, reserved is the payload offset of the u64 length of one
 * large bytes field, the bulk: a receiver may read the payload up to its
 * data, put the data straight where the caller wants it (a reply), or hand
 * it to a handler chunk by chunk as it arrives (a request of a call with a
 * streamed in-buffer), then read the rest. The bytes on the wire are the
 * same as without the flag. */
enum apigen_frame_flags {
    APIGEN_F_REPLY = 1u << 0,    /* server -> guest answer to a sync call */
    APIGEN_F_ASYNC = 1u << 1,    /* no reply is sent */
    APIGEN_F_HELLO = 1u << 2,    /* handshake (call_id 0) */
    APIGEN_F_CALLBACK = 1u << 3, /* server -> guest callback delivery */
    APIGEN_F_BYE = 1u << 4,      /* orderly close */
    APIGEN_F_BULK = 1u << 5,     /* reserved = offset of the bulk's length (above) */
    APIGEN_F_STREAM = 1u << 6,   /* server -> guest: one chunk of a streamed out-buffer of the
                                    sync call (call_id, request_id) whose reply follows; the
                                    payload is the chunk's bytes (apigen_stream_write) */
    APIGEN_F_OUTPUT = 1u << 7,   /* server -> guest, ahead of a sync call's reply: bytes the
                                    session process wrote to its stdout (payload: u8 1, then
                                    the bytes), for the guest's stdout (runtime/output.c) */
    APIGEN_F_LANES = 1u << 8,    /* the bulk's data (F_BULK: its n bytes; F_STREAM: the whole
                                    payload) is not on this connection: it travels cut in
                                    pieces over the connection's lanes (runtime/lanes.c), the
                                    rest of the payload here; only after both ends agreed on
                                    lanes in their handshakes */
};

typedef struct apigen_frame_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t flags;
    uint32_t call_id;
    uint32_t request_id;
    uint64_t thread_id;
    uint32_t payload_len;
    uint32_t reserved;
} apigen_frame_hdr;

void apigen_hdr_encode(const apigen_frame_hdr *h, uint8_t out[APIGEN_FRAME_HDR_SIZE]);
/* Checks magic, version, reserved and payload_len <= max_payload. */
APIGEN_CHECK bool apigen_hdr_decode(const uint8_t in[APIGEN_FRAME_HDR_SIZE], apigen_frame_hdr *h,
                                    uint32_t max_payload, const char **err);

/* ---- status of a call, as the guest sees it ------------------------------ */
/* One X-macro list: enum, names, and the per-API error each maps to. */
#define APIGEN_STATUS_LIST(X)                                                  \
    X(APIGEN_OK, "ok")                                                         \
    X(APIGEN_LOST, "connection lost")                                          \
    X(APIGEN_BAD_ARGS, "malformed arguments")                                  \
    X(APIGEN_BAD_HANDLE, "unknown or foreign handle")                          \
    X(APIGEN_TOO_LARGE, "argument exceeds the server's size limit")            \
    X(APIGEN_BAD_CALL, "unknown call id")                                      \
    X(APIGEN_UNSUPPORTED, "function not supported by this server")             \
    X(APIGEN_NO_MEMORY, "server out of memory")                                \
    X(APIGEN_BAD_DEVPTR, "device address not owned by this client")

typedef enum apigen_status {
#define APIGEN_X_ENUM(k, s) k,
    APIGEN_STATUS_LIST(APIGEN_X_ENUM)
#undef APIGEN_X_ENUM
    APIGEN_STATUS_COUNT
} apigen_status;

const char *apigen_status_str(apigen_status s);

/* ---- writer: a growable payload ------------------------------------------ */
#define APIGEN_WR_EXT 8              /* zero-copy pieces per writer */
#define APIGEN_REF_MIN (64u << 10)   /* smaller _ref bytes are copied */
typedef struct apigen_wr_ext {
    size_t at;       /* the bytes go before buf[at] */
    size_t len_off;  /* payload offset of their u64 length */
    const void *p;
    uint64_t n;
} apigen_wr_ext;
typedef struct apigen_wr {
    uint8_t *buf;
    size_t len, cap; /* bytes in buf (the _ref pieces are not in it) */
    size_t base;     /* logical offset of the payload start (alignment is relative to it) */
    bool failed;
    unsigned next;   /* _ref pieces: sent from the caller's memory */
    size_t ext_total;
    apigen_wr_ext ext[APIGEN_WR_EXT];
} apigen_wr;

void apigen_wr_init(apigen_wr *w);
void apigen_wr_reset(apigen_wr *w); /* keep capacity */
void apigen_wr_free(apigen_wr *w);

APIGEN_CHECK inline bool apigen_put_u8(apigen_wr *w, uint8_t v);
APIGEN_CHECK inline bool apigen_put_u16(apigen_wr *w, uint16_t v);
APIGEN_CHECK inline bool apigen_put_u32(apigen_wr *w, uint32_t v);
APIGEN_CHECK inline bool apigen_put_u64(apigen_wr *w, uint64_t v);
APIGEN_CHECK inline bool apigen_put_f32(apigen_wr *w, float v);
APIGEN_CHECK inline bool apigen_put_f64(apigen_wr *w, double v);
/* Fixed-size bytes with no length prefix (plain struct by value). */
APIGEN_CHECK bool apigen_put_raw(apigen_wr *w, const void *p, size_t n);
/* u64 length, padding, bytes. */
APIGEN_CHECK bool apigen_put_bytes(apigen_wr *w, const void *p, uint64_t n);
/* u8 present flag; if present, as apigen_put_bytes. p == NULL -> absent. */
APIGEN_CHECK bool apigen_put_opt_bytes(apigen_wr *w, const void *p, uint64_t n);
/* As apigen_put_bytes / apigen_put_opt_bytes, but bytes of APIGEN_REF_MIN or
 * more are not copied: the frame is sent from p (zero-copy), so p must stay
 * valid and unchanged until the frame is sent (the guest's call returns; the
 * server's reply is sent after the handler returns: scratch memory or the
 * request's own bytes). Generated code uses these for in/out buffers. */
APIGEN_CHECK bool apigen_put_bytes_ref(apigen_wr *w, const void *p, uint64_t n);
APIGEN_CHECK bool apigen_put_opt_bytes_ref(apigen_wr *w, const void *p, uint64_t n);
/* u8 present flag; if present, u64 length including the NUL, padding, bytes. */
APIGEN_CHECK bool apigen_put_str(apigen_wr *w, const char *s);
/* Reserve n bytes as a buffer (length, padding) and return where to write
 * them; the pointer is valid until the next put. */
APIGEN_CHECK void *apigen_put_bytes_reserve(apigen_wr *w, uint64_t n);

/* ---- reader: one bounded cursor over received bytes ---------------------- */
typedef struct apigen_rd {
    const uint8_t *base; /* payload start: alignment is relative to it */
    const uint8_t *p;
    size_t left;
    const char *err;     /* first error, static string */
    struct rt_pull *pull;/* runtime-private: the rest of a bulk reply is still in transit */
} apigen_rd;

void apigen_rd_init(apigen_rd *r, const void *payload, size_t len);
APIGEN_CHECK inline bool apigen_get_u8(apigen_rd *r, uint8_t *v);
APIGEN_CHECK inline bool apigen_get_u16(apigen_rd *r, uint16_t *v);
APIGEN_CHECK inline bool apigen_get_u32(apigen_rd *r, uint32_t *v);
APIGEN_CHECK inline bool apigen_get_u64(apigen_rd *r, uint64_t *v);
APIGEN_CHECK inline bool apigen_get_f32(apigen_rd *r, float *v);
APIGEN_CHECK inline bool apigen_get_f64(apigen_rd *r, double *v);
APIGEN_CHECK bool apigen_get_raw(apigen_rd *r, void *dst, size_t n);
/* Points into the payload (16-byte aligned relative to the payload start);
 * fails if the length exceeds max or what is left. */
APIGEN_CHECK bool apigen_get_bytes(apigen_rd *r, const void **p, uint64_t *n, uint64_t max);
/* *p = NULL, *n = 0 when absent. */
APIGEN_CHECK bool apigen_get_opt_bytes(apigen_rd *r, const void **p, uint64_t *n, uint64_t max);
/* Checks the last byte is the only NUL. *s = NULL when absent. */
APIGEN_CHECK bool apigen_get_str(apigen_rd *r, const char **s, uint64_t max);
/* Guest side: copy a received buffer into caller memory of `cap` bytes
 * (dst may be NULL only if the buffer is absent). Fails if it is longer.
 * The bulk of a reply (APIGEN_F_BULK) is received straight into dst. */
APIGEN_CHECK bool apigen_get_into(apigen_rd *r, void *dst, uint64_t cap, uint64_t *got);
inline bool apigen_rd_done(const apigen_rd *r); /* every byte consumed, no error */

/* Overflow-checked size arithmetic: false on overflow. */
APIGEN_CHECK inline bool apigen_mul_size(uint64_t a, uint64_t b, uint64_t *out);
APIGEN_CHECK inline bool apigen_add_size(uint64_t a, uint64_t b, uint64_t *out);

/* The helpers above that every call runs are defined inline here (C99
 * inline: wire.c holds the external definitions): the common case, room in
 * the buffer or bytes left in the payload, costs a few instructions; the
 * rest (growing, errors, a bulk still in transit) goes to the slow paths. */
APIGEN_CHECK bool apigen_put_le_slow(apigen_wr *w, uint64_t v, unsigned n);
APIGEN_CHECK bool apigen_get_le_slow(apigen_rd *r, uint64_t *v, unsigned n);
bool apigen_rd_pending(const apigen_rd *r); /* a bulk reply's rest is still in transit */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define APIGEN_LE_HOST 1
#else
#define APIGEN_LE_HOST 0
#endif

/* n (1, 2, 4, 8) bytes of v at the writer's end when they fit */
#define APIGEN_PUT_FAST_(w, v, n)                                                           \
    do {                                                                                    \
        if (APIGEN_LE_HOST && !(w)->failed && (w)->cap - (w)->len >= (n) &&                 \
            (w)->len + (n) + (w)->ext_total - (w)->base <= UINT32_MAX) {                    \
            __builtin_memcpy((w)->buf + (w)->len, &(v), (n));                               \
            (w)->len += (n);                                                                \
            return true;                                                                    \
        }                                                                                   \
    } while (0)
inline bool apigen_put_u8(apigen_wr *w, uint8_t v)
{
    APIGEN_PUT_FAST_(w, v, 1);
    return apigen_put_le_slow(w, v, 1);
}
inline bool apigen_put_u16(apigen_wr *w, uint16_t v)
{
    APIGEN_PUT_FAST_(w, v, 2);
    return apigen_put_le_slow(w, v, 2);
}
inline bool apigen_put_u32(apigen_wr *w, uint32_t v)
{
    APIGEN_PUT_FAST_(w, v, 4);
    return apigen_put_le_slow(w, v, 4);
}
inline bool apigen_put_u64(apigen_wr *w, uint64_t v)
{
    APIGEN_PUT_FAST_(w, v, 8);
    return apigen_put_le_slow(w, v, 8);
}
inline bool apigen_put_f32(apigen_wr *w, float v)
{
    uint32_t u;
    __builtin_memcpy(&u, &v, 4);
    return apigen_put_u32(w, u);
}
inline bool apigen_put_f64(apigen_wr *w, double v)
{
    uint64_t u;
    __builtin_memcpy(&u, &v, 8);
    return apigen_put_u64(w, u);
}

/* n bytes into x (a uint64_t, zeroed) when they are there; a getter that
 * fails stores 0 */
#define APIGEN_GET_FAST_(r, x, n)                                                           \
    (APIGEN_LE_HOST && !(r)->err && (r)->left >= (n)                                         \
         ? (__builtin_memcpy(&(x), (r)->p, (n)), (r)->p += (n), (r)->left -= (n), true)      \
         : apigen_get_le_slow((r), &(x), (n)))
inline bool apigen_get_u8(apigen_rd *r, uint8_t *v)
{
    uint64_t x = 0;
    bool ok = APIGEN_GET_FAST_(r, x, 1);
    *v = (uint8_t)x;
    return ok;
}
inline bool apigen_get_u16(apigen_rd *r, uint16_t *v)
{
    uint64_t x = 0;
    bool ok = APIGEN_GET_FAST_(r, x, 2);
    *v = (uint16_t)x;
    return ok;
}
inline bool apigen_get_u32(apigen_rd *r, uint32_t *v)
{
    uint64_t x = 0;
    bool ok = APIGEN_GET_FAST_(r, x, 4);
    *v = (uint32_t)x;
    return ok;
}
inline bool apigen_get_u64(apigen_rd *r, uint64_t *v)
{
    uint64_t x = 0;
    bool ok = APIGEN_GET_FAST_(r, x, 8);
    *v = x;
    return ok;
}
inline bool apigen_get_f32(apigen_rd *r, float *v)
{
    uint32_t u;
    bool ok = apigen_get_u32(r, &u);
    __builtin_memcpy(v, &u, 4);
    return ok;
}
inline bool apigen_get_f64(apigen_rd *r, double *v)
{
    uint64_t u;
    bool ok = apigen_get_u64(r, &u);
    __builtin_memcpy(v, &u, 8);
    return ok;
}
inline bool apigen_rd_done(const apigen_rd *r)
{
    return !r->err && r->left == 0 && !(r->pull && apigen_rd_pending(r));
}
inline bool apigen_mul_size(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b && a > UINT64_MAX / b)
        return false;
    *out = a * b;
    return true;
}
inline bool apigen_add_size(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a > UINT64_MAX - b)
        return false;
    *out = a + b;
    return true;
}

/* ---- logging and tracing --------------------------------------------------- */
void apigen_log(const char *fmt, ...) APIGEN_PRINTF(1, 2); /* "apigen[server 1234]: ..." on stderr */
/* APIGEN_TRACE=1 (or a file path) turns on the one-line-per-call trace.
 * Every call asks (twice on the guest): inline, one load after the first
 * answer, since the stubs call the runtime across a shared library.
 * apigen_trace_state_ (log.c): 0 not read yet, 1 off, 2 on. */
extern int apigen_trace_state_;
bool apigen_tracing_slow(void);
inline bool apigen_tracing(void)
{
    int st = __atomic_load_n(&apigen_trace_state_, __ATOMIC_ACQUIRE);
    return __builtin_expect(st != 0, 1) ? st == 2 : apigen_tracing_slow();
}
void apigen_trace(const char *fmt, ...) APIGEN_PRINTF(1, 2);
uint64_t apigen_now_ns(void);

/* ---- API descriptors (generated, constant) ------------------------------- */

struct apigen_call_ctx;
typedef void (*apigen_handler_fn)(struct apigen_call_ctx *cx);

/* A handle type on the server: how to release what a vanished client left. */
typedef struct apigen_handle_type {
    const char *name;
    unsigned tag;
    void (*destroy)(void *real);   /* may be NULL */
    const uint64_t *passthrough;   /* values never translated (NULL, special streams) */
    unsigned npassthrough;
    unsigned flags;                /* APIGEN_HT_* */
    /* Types whose ids are also accepted where this type is taken (the spec's
     * `also:`): the id resolves to that type's real handle, which the real
     * library accepts in this type's place (a CUkernel where a CUfunction
     * is taken). Looked up after this type's own ids. */
    const struct apigen_handle_type *const *also;
    unsigned nalso;
} apigen_handle_type;

/* apigen_handle_type.flags */
enum {
    /* An id this client does not own is not rejected: the real library gets
     * NULL and reports its own error (CL_INVALID_MEM_OBJECT, ...), which is
     * what it would say natively for a bad handle. */
    APIGEN_HT_UNKNOWN_AS_NULL = 1u << 0,
    /* The handle's C type is an integer narrower than an id (a 32-bit plan
     * number): the guest keeps an id's low 32 bits, and an id below 2^32 is
     * taken as (this session's salt << 32) | id. */
    APIGEN_HT_NARROW = 1u << 1,
};

/* Guest side: decodes one callback frame and calls the user's function. */
typedef void (*apigen_cb_dispatch_fn)(apigen_rd *args, void *fn, void *user_data);

/* api.thread_state: at most this many slots per API (apigen_tstate_get) */
#define APIGEN_TSTATE_MAX 8
/* api.thread_state_effects: a call of the API ... */
enum {
    APIGEN_TSTATE_EFFECTS_ANY = 0, /* ... may change any thread state another API keeps */
    APIGEN_TSTATE_EFFECTS_DECLARED, /* ... changes it only where its `thread_state:` says
                                       (apigen_tstate_forget_others after the call) */
    APIGEN_TSTATE_EFFECTS_NONE      /* ... never changes it */
};

typedef struct apigen_api {
    const char *name;
    uint64_t fingerprint;
    uint32_t ncalls;
    const char *const *call_names;     /* [ncalls] */
    /* server side (NULL in the stub) */
    const apigen_handler_fn *handlers; /* [ncalls], NULL entry = unsupported */
    const apigen_handle_type *const *handle_types;
    unsigned nhandle_types;
    int64_t success_value;
    int64_t status_error[APIGEN_STATUS_COUNT]; /* API error value per status */
    /* guest side (NULL in the server) */
    const apigen_cb_dispatch_fn *cb_dispatch; /* [ncb_types] */
    unsigned ncb_types;
    bool async_errors_next_call;
    /* server side, specs with `types.device`: releases a device allocation
     * a vanished client left (NULL: ranges are only forgotten) */
    void (*device_destroy)(void *addr);
    /* server side: spec `api.isolation: process`: by default the server runs
     * each session in a process of its own (apigen-server --isolation) */
    bool isolate_process;
    /* server side: spec `api.forward_output: true`: what a session process
     * writes to its stdout (a GPU kernel's printf) goes to the client, which
     * writes it to its own stdout before the sync call that collected it
     * returns (runtime/output.c) */
    bool forward_output;
    /* the API's version (spec `api.version_macro`, e.g. 13000 for 13.0,
     * of the headers it was generated from; 0: none), sent in the handshake: a
     * guest and a server of different versions refuse each other naming both */
    uint64_t api_version;
    /* server side: [ncalls], 1 where the call's last in-buffer may be
     * streamed to its handler (spec `stream:`); NULL: no such call. Only
     * these calls' requests are received head first (APIGEN_F_BULK). */
    const uint8_t *stream_in_calls;
    /* server side: spec `api.privileged.option` (e.g. "allow-gpu-admin"): the
     * server flag --<option> that lets the spec's `privileged:` functions run
     * (apigen_privileged); NULL: the API has none */
    const char *privileged_option;
    /* server side, spec `api.errors.last_error.peek`: the library's last
     * error of the calling thread, unchanged (NULL: none). An error a call
     * returned that this does not hold was decided outside the library
     * (hand-written host code): the thread's last error is then the runtime's. */
    int64_t (*last_error_peek)(void);
    /* spec `api.family` (NULL: none): the stubs of one family that a process
     * loads share one session and one connection per thread and server
     * (docs/internals.md "One session across APIs"); one server serves them
     * all, and a handle type that is the same C type in two members has one
     * type tag, so an id made through one is accepted by the other */
    const char *family;
    /* guest side, spec `api.thread_state_effects` (APIGEN_TSTATE_EFFECTS_*):
     * what this API's calls do to the thread state other APIs of the family
     * keep; `api.thread_state_lazy`: the slots (bits) whose value ... */
    uint8_t tstate_effects;
    uint32_t tstate_lazy_mask;
    uint64_t tstate_lazy[APIGEN_TSTATE_MAX]; /* ... any call of another API may replace */
    /* guest side, spec `api.thread_state`: the slots' names (NULL-terminated;
     * NULL: none). A slot named alike in two APIs of a family is the same
     * thread state (apigen_tstate_forget_named) */
    const char *const *tstate_names;
} apigen_api;

/* ---- guest side: calls ----------------------------------------------------- */

typedef struct apigen_call { /* apigen_call_begin_on sets each field (guest.c): add it there too */
    const apigen_api *api;
    uint32_t call_id;
    apigen_wr *wr;          /* request payload: put arguments here */
    apigen_rd rd;           /* reply payload after apigen_call_sync: get results here */
    apigen_status status;
    int server;             /* the server the call went to (index in APIGEN_SERVER) */
    bool has_deferred;      /* an earlier async call failed with ... */
    int64_t deferred_error; /* ... this API error value; code that returns it clears
                               has_deferred, else apigen_call_end keeps it for the
                               thread's next sync call */
    uint64_t t0;            /* unused (0): a stub keeps its own trace start */
    void *thread;           /* runtime-private */
    void *sink;             /* runtime-private: apigen_call_stream_into */
    uint64_t sink_cap;
    uint32_t wire_id;       /* runtime-private: call_id with the API's index in the session */
    uint64_t salt;          /* runtime-private: the session's (apigen_vouch_id); 0: none */
} apigen_call;

/* Connects lazily (APIGEN_SERVER), once per guest thread. false -> the
 * connection is lost: return api->status_error[APIGEN_LOST]. */
APIGEN_CHECK bool apigen_call_begin(const apigen_api *api, apigen_call *c, uint32_t call_id);
/* Sends queued async calls and this one, waits for the reply. Returns the
 * status; on APIGEN_OK the reply payload is in c->rd. */
APIGEN_CHECK apigen_status apigen_call_sync(apigen_call *c);
/* Queues the call; it leaves with the next sync call, or when the queue is
 * full. Errors surface later (deferred). Returns APIGEN_OK or APIGEN_LOST. */
APIGEN_CHECK apigen_status apigen_call_async(apigen_call *c);
/* Releases the reply buffer. Call once after begin, whatever happened. */
void apigen_call_end(apigen_call *c);
/* Spec `cache:` (a call whose answer depends only on its inputs for the
 * life of the session): as apigen_call_sync, but when `cacheable` and this
 * server's session already answered the same request bytes, the kept
 * answer is in c->rd, *hit is set and nothing is sent: queued async calls
 * stay queued (the answer cannot depend on them), and their errors, queued
 * or already known, are left to the next call that reaches the server (the
 * kept answer is the function's own, as natively). Otherwise the call
 * goes to the server and apigen_call_cache_keep may keep its answer. */
APIGEN_CHECK apigen_status apigen_call_sync_cached(apigen_call *c, bool cacheable, bool *hit);
/* After apigen_call_sync_cached went to the server and the stub decoded an
 * answer the spec lets it keep (success, or one of `cache.errors`): keeps
 * the reply for the same request on this server until the session ends. */
void apigen_call_cache_keep(apigen_call *c);
/* Spec `cache.group`: apigen_call_sync_cached for an answer of a group of
 * answers that calls of the family may make unknown: a kept one answers
 * only until a call forgets its group (apigen_cache_forget, any thread). */
APIGEN_CHECK apigen_status apigen_call_sync_cached_group(apigen_call *c, bool cacheable, bool *hit,
                                                         const char *group);
/* Spec `cache: {thread_state: [...]}`: apigen_call_sync_cached(_group)
 * whose key is the request followed by the n bytes at extra (the thread's
 * values the answer depends on); group may be NULL. */
APIGEN_CHECK apigen_status apigen_call_sync_cached_keyed(apigen_call *c, bool cacheable, bool *hit,
                                                         const char *group, const void *extra,
                                                         size_t n);
/* Spec `cache: {contents: [...]}` (a memoized query): as
 * apigen_call_sync_cached, but the key is the stub's own bytes in key (its
 * inputs, with the contents of the handles named by contents in place of
 * their ids: apigen_contents_put) instead of the request's. The answer is
 * not kept when an error of a queued call came back with it (a setter of
 * those contents may have failed). */
APIGEN_CHECK apigen_status apigen_call_sync_memo(apigen_call *c, bool cacheable, const apigen_wr *key,
                                                 bool *hit);
/* Spec `cache_forget:`: after call c, whatever it returned (before
 * apigen_call_end): the answers kept under group in c's session are
 * unknown; one asked while c was in flight is not kept either. */
void apigen_cache_forget(apigen_call *c, const char *group);
/* The epoch of group in the calling thread's session of api's current
 * server: a value that changes whenever a call forgets the group (or the
 * session is another); false: unknown (no session on this thread yet, a
 * lost session, APIGEN_CACHE=0). For guest code that keeps answers of its
 * own under a group's rules (apigen_setmemo_*). */
bool apigen_cache_epoch(const apigen_api *api, const char *group, uint64_t *epoch);
/* Repeats of a setter answered in the guest (runtime/setmemo.c): a call
 * that set a value on an object (key: three integers, the handle, what it
 * sets, a device) and succeeded, repeated with the same key and value
 * while no call but this setter's own misses forgot group, changes nothing
 * natively and succeeds again. repeat: true when such a call may be
 * answered with success and nothing sent (false with APIGEN_CACHE=0). note:
 * after the call went to the server (which forgot group once, as its spec's
 * `cache_forget:` says); ok: it succeeded. A memo is zeroed static storage
 * of the stub, one per setter function. */
typedef struct apigen_setmemo {
    pthread_mutex_t mu;
    struct apigen_setmemo_entry *entries;
    size_t n;
    uint64_t own;     /* forgets of group made by this setter's misses */
    uint64_t foreign; /* the group's epoch less own when the entries were valid */
    bool foreign_known;
} apigen_setmemo;
#define APIGEN_SETMEMO_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, false}
bool apigen_setmemo_repeat(apigen_setmemo *m, const apigen_api *api, const char *group,
                           const uint64_t key[3], int64_t value);
void apigen_setmemo_note(apigen_setmemo *m, const apigen_api *api, const char *group,
                         const uint64_t key[3], int64_t value, bool ok);
/* Spec `api.thread_state` (docs/spec.md "Thread state kept in the guest"):
 * up to APIGEN_TSTATE_MAX per-thread values (slots) the guest tracks per
 * server session, from the calls that tell them. get: the calling thread's
 * value of slot on its current server, when a call told it since the last
 * forget (false: unknown, or no session yet: ask the server). set, forget:
 * after call c (before apigen_call_end), on c's thread and server.
 * forget_all: every thread's values of c's server (a call that may end
 * what another thread holds); a value set by a call that was in flight
 * meanwhile stays unknown. */
bool apigen_tstate_get(const apigen_api *api, unsigned slot, uint64_t *value);
void apigen_tstate_set(apigen_call *c, unsigned slot, uint64_t value);
void apigen_tstate_forget(apigen_call *c, unsigned slot);
void apigen_tstate_forget_all(apigen_call *c);
/* After call c of an API with `thread_state_effects: declared` that changed
 * (or may have changed) the thread's state: the values the family's other
 * APIs keep of c's thread are unknown. (Every call of an `any` API forgets
 * them when it begins; any call of another API forgets a value that API
 * declared lazy, api.thread_state_lazy.) */
void apigen_tstate_forget_others(apigen_call *c);
/* after a call that changed only the thread state named `slot` (spec
 * `exchange:`): the family's other APIs forget their slot of that name */
void apigen_tstate_forget_named(apigen_call *c, const char *slot);
/* A reply that did not decode: the connection is dropped (one log line). */
void apigen_call_bad_reply(apigen_call *c);

/* An out handle of an async call: the guest names it before the server has
 * it. Returns a fresh id of this process's session (0: the connection is
 * lost or the id space of 2^32 - 1 ids is used up); the server binds it to
 * the real handle when it runs the call (apigen_handle_bind). Valid only
 * between apigen_call_begin and apigen_call_end. */
uint64_t apigen_guest_id(const apigen_call *c);

/* ---- guest side: several servers ------------------------------------------
 * APIGEN_SERVER=url1,url2,... opens a session on each server (in order, on
 * first use) and shows the guest the devices of all of them. Generated stubs
 * route each call: to the server of its first handle, device address or
 * device ordinal argument that names one, else to the calling thread's
 * current server (0 until the thread selects a device of another one).
 * Other arguments travel unchanged: a handle or address of another server
 * is foreign there and gets the API's own error. With one server every
 * route is that server and nothing here costs more than a load and a
 * compare. A server that cannot be reached is logged once; calls routed to
 * it fail with the API's connection-lost error, the others still serve. */
#define APIGEN_ROUTE_ANY (-1) /* the calling thread's current server */
/* As apigen_call_begin, on server `server` (APIGEN_ROUTE_ANY: the current). */
APIGEN_CHECK bool apigen_call_begin_on(const apigen_api *api, apigen_call *c, uint32_t call_id,
                                       int server);
unsigned apigen_server_count(const apigen_api *api); /* 1 without APIGEN_SERVER */
/* The server whose session handed out handle id / the device range holding
 * addr (the current server's first, when servers' ranges overlap), or
 * APIGEN_ROUTE_ANY when none is known. */
/* apigen_route_multi_ (route.c): some API has several servers; with one,
 * every route is "any", inline. */
extern int apigen_route_multi_;
int apigen_route_id_multi(const apigen_api *api, uint64_t id);
inline int apigen_route_id(const apigen_api *api, uint64_t id)
{
    return __atomic_load_n(&apigen_route_multi_, __ATOMIC_RELAXED) ? apigen_route_id_multi(api, id)
                                                                  : APIGEN_ROUTE_ANY;
}
int apigen_route_dev_multi(const apigen_api *api, uint64_t addr);
inline int apigen_route_dev(const apigen_api *api, uint64_t addr)
{
    return __atomic_load_n(&apigen_route_multi_, __ATOMIC_RELAXED) && addr
               ? apigen_route_dev_multi(api, addr)
               : APIGEN_ROUTE_ANY;
}
/* Device ranges a call created (`creates: {bytes:}`) and freed (`destroys`)
 * on a server, for apigen_route_dev and apigen_vouch_dev. Hand-written code
 * notes the ranges its calls create in other ways (pitched allocations). */
void apigen_dev_note(const apigen_api *api, int server, uint64_t addr, uint64_t bytes);
void apigen_dev_forget(const apigen_api *api, int server, uint64_t addr);
/* Device ordinals: the guest numbers the devices of server 0 first, then
 * those of server 1, ... count(server, &n) asks one server for its number
 * of devices (the spec's `api.ordinals`: false on error, n = 0); each is
 * asked once per process. route: the server of global ordinal g and its
 * ordinal there (*local); g < 0 goes to the current server unchanged, g
 * past the last device to the last server, still past its devices, so the
 * server answers with its own invalid-device error. global: the guest's
 * ordinal of a server's local one. */
typedef bool (*apigen_count_fn)(unsigned server, int64_t *count);
int apigen_route_ordinal(const apigen_api *api, apigen_count_fn count, int64_t g, int64_t *local);
int64_t apigen_ordinal_global(const apigen_api *api, apigen_count_fn count, int server,
                              int64_t local);
/* After a successful device-selecting call (spec `selects:`): the calling
 * thread's calls that name no server go to `server` from now on. current:
 * that server (0 until one is selected). */
void apigen_select_server(const apigen_api *api, int server);
int apigen_current_server(const apigen_api *api);
/* Hand-written guest code: a function called once for each session after
 * it is set up (on the thread of the call that needs it, before that call
 * begins): where the API's process-wide registrations are replayed on a
 * further server. server 0's first session is not passed (the code
 * registers there itself); in a fork child, whose sessions are its own, it
 * is (what the code registered is not in that session: the code forgets
 * what it shipped in a pthread_atfork child handler). One hook per API. */
void apigen_set_session_hook(const apigen_api *api, void (*hook)(unsigned server));
/* The server of the call this thread is building (for hand-written `map:`
 * functions that translate values per server); -1 outside a call. */
int apigen_building_server(void);

/* Shareable handles: descriptors a library exports for other processes
 * (runtime/shareable_guest.c, shareable_host.c). The server keeps its
 * descriptor and gives a token; the guest wraps the token in a sealed memfd
 * of its own, which the program passes on as it would the library's.
 * apigen_shareable_fd: that memfd (-1: none could be made);
 * apigen_shareable_token: the token read back from a descriptor the
 * program hands in (false: not one of apigen's). */
#define APIGEN_SHAREABLE_TOKEN 32
int apigen_shareable_fd(const unsigned char token[APIGEN_SHAREABLE_TOKEN]);
bool apigen_shareable_token(int fd, unsigned char token[APIGEN_SHAREABLE_TOKEN]);

/* Async calls: an async call is queued only when the guest can vouch for its
 * arguments, else it runs synchronously so that its error (the server's
 * rejection) comes back at the call itself, as natively. vouch_id: id is NULL
 * or carries the session salt of the call's server (a handle this session
 * handed out or a guest id of it; a freed one still passes: the server's
 * rejection is then reported later). vouch_dev: addr is 0 or inside a device
 * range the guest noted for that server (apigen_dev_note); vouch_dev_bytes
 * (a device argument with `bytes:`): so is all of [addr, addr + bytes). */
inline bool apigen_vouch_id(const apigen_call *c, uint64_t id)
{
    return !id || ((id >> 32) & 0x7fffffffu) == c->salt; /* a salt is never 0 */
}
bool apigen_vouch_dev(const apigen_call *c, uint64_t addr);
bool apigen_vouch_dev_bytes(const apigen_call *c, uint64_t addr, uint64_t bytes);
/* An input buffer whose elements are device addresses or handle ids
 * (`elem_by` device: or handles: values): every element of its `bytes`
 * bytes is vouched for as above (0 passes, as the server lets NULL through;
 * bytes that fill no element are not read). Ids narrower than 64 bits
 * carry no salt: never vouched. */
bool apigen_vouch_dev_elems(const apigen_call *c, const void *buf, uint64_t bytes);
bool apigen_vouch_id_elems(const apigen_call *c, const void *buf, uint64_t bytes, size_t elem);
/* Whether [addr, addr + bytes) certainly runs past the client's memory: addr
 * lies in a range the guest noted for the call's server and the extent goes
 * past that range's end (the server would refuse it: APIGEN_BAD_DEVPTR).
 * Logs one line naming the call and `what`. Generated stubs ask it before
 * they read host memory a call sizes by the same count (a host-to-device
 * copy), as the real library checks the device side before it reads: the
 * host buffer may be as small as the device range, and reading the count's
 * bytes from it would read past it. An address the guest never noted: false. */
bool apigen_dev_overruns(const apigen_call *c, uint64_t addr, uint64_t bytes, const char *what);
/* Whether addr lies in a device range the guest noted for any server (hand-written
 * guest code that must tell device addresses from its own host memory). */
bool apigen_dev_noted(const apigen_api *api, uint64_t addr);
/* Whether all of [addr, addr + bytes) lies in one device range the guest
 * noted for server (hand-written `async_check`s: a range the library would
 * accept at the call); false for addr 0. */
bool apigen_dev_within(const apigen_api *api, int server, uint64_t addr, uint64_t bytes);
/* Handle states the guest tracks (spec `types.handles.H.state`, a handle's
 * pointer mode): per (table, id), where table is the generated stub's array
 * of the type's initial values (so the key also names the API and the
 * type). add: a new handle, every state at its initial value. set: after a
 * successful setter (an id never added starts from the initial values).
 * get: false for an id the guest does not track (*v untouched). forget:
 * after a successful destroy. Thread-safe; n is at most 8. */
void apigen_hstate_add(const int64_t *table, size_t n, uint64_t id);
void apigen_hstate_set(const int64_t *table, size_t n, uint64_t id, unsigned slot, int64_t v);
bool apigen_hstate_get(const int64_t *table, uint64_t id, unsigned slot, int64_t *v);
void apigen_hstate_forget(const int64_t *table, uint64_t id);
/* Handle contents the guest sees every change of (spec
 * `types.handles.H.contents`, runtime/contents.c): create: a new handle
 * holds the values vals; set: record (call, key) of handle id now holds
 * vals (a NULL or failed writer: its contents are unknown from now on; an
 * empty key: the call sets all of it, every record but the create's goes);
 * forget: the handle is gone. put: appends what handle id holds to a
 * memoized query's key (id 0, none given: a mark of its own); false when the
 * guest cannot vouch for it (unknown, changed by another thread, or an async
 * error came back since). */
void apigen_contents_create(uint32_t call, uint64_t id, const apigen_wr *vals);
void apigen_contents_set(uint32_t call, uint64_t id, const apigen_wr *key, const apigen_wr *vals);
void apigen_contents_forget(uint64_t id);
APIGEN_CHECK bool apigen_contents_put(apigen_wr *w, uint64_t id);
/* The thread's last error kept in the guest (spec `api.errors.last_error`,
 * runtime/lasterr.c): generated stubs of such an API tell it what each call
 * did, and its get/peek functions answer success without a round trip while
 * the guest knows that the server's answer is success (never an error).
 * clean: known to be success (false with APIGEN_CACHE=0). answered: a
 * get/peek round trip answered (success or not). forget: unknown until the
 * next get/peek round trip (a call returned an error, was rejected, or a
 * reply carried a deferred async error). queued: an async call was queued;
 * checked: its `async_check` vouched that it cannot fail synchronously
 * (else unknown). */
bool apigen_lasterr_clean(const apigen_api *api);
void apigen_lasterr_answered(const apigen_api *api, bool success);
void apigen_lasterr_forget(const apigen_api *api);
void apigen_lasterr_queued(const apigen_api *api, bool checked);
/* Named marks the stubs of one process share (runtime/marks.c): set once,
 * never cleared; what one API's guest code must know of another API's calls
 * before it answers a call in the guest. get: set (or the table overflowed). */
void apigen_mark_set(const char *name);
bool apigen_mark_get(const char *name);
/* Named counts the stubs of one process share (marks.c): what is open now
 * through any of them (a stream capture begun and not yet ended). add:
 * delta, never below 0; zero: none open (false when the table overflowed:
 * a count only ever stops a local answer). */
void apigen_mark_add(const char *name, int delta);
bool apigen_mark_zero(const char *name);
/* Repeats of calls the library accepted (spec `async_repeats: true`,
 * runtime/repeat.c): a generated stub hashes the values the library checks
 * (integers, enums, handle ids, the alignment of device addresses, the
 * integer contents of small input arrays; never floating-point data) into a
 * key, sends the call synchronously until a call with that key succeeded in
 * this process, and queues it from then on: the library already accepted
 * those values, so a queued repeat cannot be refused at the call. known:
 * such a call succeeded (false when APIGEN_REPEAT=0). note: it did. */
uint64_t apigen_repeat_key(const apigen_api *api, uint32_t call_id);
uint64_t apigen_repeat_mix(uint64_t key, const void *p, size_t n);
uint64_t apigen_repeat_mix_u64(uint64_t key, uint64_t v);
bool apigen_repeat_known(uint64_t key);
void apigen_repeat_note(uint64_t key);
/* Hand-written guest code that makes calls of its own (a query it needs) and
 * does not return their error: between hold(true) and hold(false) no call of
 * this thread reports an async call's deferred error; the next one does.
 * Nests. */
void apigen_hold_deferred(bool on);

/* Texts a library returns as `const char *` for a value (an error code's
 * name or message) that never change: hand-written guest code asks the
 * server once per value and keeps the answer for the life of the process
 * (kept_text.c). ask(key, buf, n) fills buf (NUL-terminated) and says
 * whether the server answered; it runs inside apigen_hold_deferred. Returns
 * the kept text, or NULL when the server did not answer (the caller says
 * so in its own words). Past APIGEN_KEPT_TEXTS values, the text of the
 * value asked last on this thread. */
#define APIGEN_KEPT_TEXTS 64
typedef struct apigen_kept_texts {
    pthread_mutex_t mu;
    unsigned n;
    struct {
        long key;
        const char *text;
    } e[APIGEN_KEPT_TEXTS];
} apigen_kept_texts;
#define APIGEN_KEPT_TEXTS_INIT {PTHREAD_MUTEX_INITIALIZER, 0, {{0, NULL}}}
const char *apigen_kept_text(apigen_kept_texts *k, long key,
                             bool (*ask)(long key, char *buf, size_t n));

/* Settled work (settle.c, docs/internals.md "Settled work"): a call that
 * waits for all the work a server queued in one scope (a device-wide
 * synchronization) is answered in the guest, with success, when the guest
 * knows the scope is idle: such a call last succeeded there, or a call
 * that completes the scope's ordered work did while nothing was queued
 * elsewhere, and since then no call of any thread of this process reached
 * the session (sent or queued), the calling thread holds no unreported
 * async error and APIGEN_CACHE is not 0. Hand-written guest code says what
 * a call is just before it makes it: apigen_work_hint(api, call_id, kind,
 * known, scope) applies to the thread's next frame of that call id;
 * apigen_work_done(ok) after it (ok: it succeeded) ends the hint. Every
 * other frame counts as APIGEN_WORK_ANY. A scope is the API's (the current
 * device or context, from thread state); unknown (known false): never
 * answered, nothing learnt. */
enum apigen_work {
    APIGEN_WORK_ANY,             /* may queue work anywhere (the default) */
    APIGEN_WORK_ORDERED,         /* queues work on the scope's ordered queue */
    APIGEN_WORK_SETTLES_ORDERED, /* ordered work that returns once it and all ordered work before it
                                    completed */
    APIGEN_WORK_SETTLES_ALL,     /* waits for all the scope's work, queues none */
    APIGEN_WORK_SETTLES_QUEUE,   /* returns once all work of one of the scope's queues completed */
};
void apigen_work_hint(const apigen_api *api, uint32_t call_id, enum apigen_work kind, bool known,
                      uint64_t scope);
/* SETTLES_QUEUE: queue names the queue (the API's value for it, the same
 * for every name of one queue) */
void apigen_work_hint_queue(const apigen_api *api, uint32_t call_id, bool known, uint64_t scope,
                            uint64_t queue);
void apigen_work_done(bool ok);
/* true: a SETTLES_ALL call of this scope, now, would find nothing to wait
 * for and no error to report: the caller answers it with success */
bool apigen_work_settled(const apigen_api *api, bool known, uint64_t scope);
/* true: the calling thread's last SETTLES_QUEUE call of this queue
 * succeeded, no other thread's synchronous call was in flight meanwhile,
 * and nothing reached the session since (sent or queued, from any thread):
 * a call of this thread that only waits for that queue finds nothing to
 * wait for and no error to report (the same conditions as
 * apigen_work_settled otherwise) */
bool apigen_queue_settled(const apigen_api *api, bool known, uint64_t scope, uint64_t queue);

/* Callbacks: the guest keeps (fn, user_data) and sends an id. */
uint64_t apigen_cb_register(const apigen_api *api, unsigned cb_type, void *fn, void *user_data,
                            bool once);

/* ---- server side: handlers ----------------------------------------------- */

struct apigen_session;
typedef struct apigen_stream apigen_stream;

typedef struct apigen_call_ctx {
    const apigen_api *api;
    struct apigen_session *session;
    apigen_rd *rd;          /* request arguments */
    apigen_wr *wr;          /* reply results (after the runtime's status word) */
    uint32_t call_id;
    bool is_async;
    apigen_status status;   /* set by apigen_reject; APIGEN_OK otherwise */
    const char *reject_what;/* parameter name, for the log */
    bool has_result;        /* handler set result_error (async bookkeeping) */
    int64_t result_error;   /* the API error value the call returned */
    void *scratch;          /* runtime-private: allocations freed after the call */
    uint64_t budget;        /* bytes this call may still allocate */
    bool dev_taken;         /* runtime-private: a range apigen_dev_take removed */
    uint64_t dev_taken_base, dev_taken_end, dev_taken_seq;
    void *rt;               /* runtime-private: the request's connection and streams */
} apigen_call_ctx;

/* Marks the call rejected (first reason wins); the handler must return. */
void apigen_reject(apigen_call_ctx *cx, apigen_status st, const char *what);
/* Zeroed scratch memory of count*elem bytes, overflow-checked and bounded by
 * the server's per-call limit; freed after the reply is sent. NULL +
 * rejection (TOO_LARGE / NO_MEMORY) on failure. count 0 -> a valid pointer. */
APIGEN_CHECK void *apigen_scratch(apigen_call_ctx *cx, uint64_t count, uint64_t elem);
/* A `privileged:` function (one that changes the device for everyone: clocks,
 * power limits, resets): true when the server was started with
 * --<cx->api->privileged_option>; otherwise false, and the first refusal of
 * each function logs one line naming it, the reason and the flag. */
bool apigen_privileged(apigen_call_ctx *cx, const char *fn, const char *reason);
/* The server's flags: --OPTION given for an API's privileged_option. */
void apigen_privileged_allow(const char *option);

/* Guest processes (procs.c). A device's process list on the server names
 * server processes, which mean nothing to a guest: host code that forwards
 * such lists shows each session process as the guest process it serves (its
 * pid as that guest sees it, sent in the handshake). A guest sees the session
 * processes of guests of its own pid space only (its own, and other guest
 * processes of the same machine or container: they see each other's pids
 * natively too); any other process (another machine's guests, the server's
 * own processes, anything that is not an apigen session) is not shown.
 * apigen_guest_pids: the guest processes server process spid stands for, as
 * cx's guest sees them, up to max in gpid; the number (0: hide it). *shared:
 * spid serves several sessions (--isolation thread), so what a monitoring API
 * measure of it (memory, utilization) is not any one guest's: under
 * --isolation thread each session of the guest's pid space that holds device
 * memory is named. apigen_server_pid: the reverse, for a call that takes a
 * guest's pid: the server process of guest process gpid, 0 when it is none
 * the guest may see; *shared as above. */
unsigned apigen_guest_pids(apigen_call_ctx *cx, uint64_t spid, uint64_t *gpid, unsigned max,
                           bool *shared);
uint64_t apigen_server_pid(apigen_call_ctx *cx, uint64_t gpid, bool *shared);

/* Record what the real function returned (for deferred async errors). */
void apigen_result(apigen_call_ctx *cx, int64_t api_error);
/* Hand-written host code: the error the call returns (apigen_result) is one it
 * decided itself, which the real library's own last-error state does not hold
 * (spec `api.errors.last_error`): the thread's last-error functions report it. */
void apigen_result_own(apigen_call_ctx *cx);
/* Generated handlers of the spec's `api.errors.last_error` functions: `real`
 * is what the library's get (clear) or peek returned; the answer is the newer
 * of it and the last error the runtime decided for this guest thread (a
 * rejected call, sync or async). clear: that one is forgotten too. */
int64_t apigen_last_error(apigen_call_ctx *cx, int64_t real, bool clear);
/* Hand-written host code: err becomes the calling guest thread's last error
 * (an error its guest code decided and queued to say so). */
void apigen_set_last_error(apigen_call_ctx *cx, int64_t err);

/* Registered host memory (server side, process-wide): a spec's host code may
 * install hooks once (e.g. from a constructor) that register memory with the
 * accelerator so its copies from/to it run at DMA speed (for example
 * the vendor's host-memory registration). The runtime then registers the large buffers it keeps
 * warm between calls (a server thread's receive buffer: in-bytes of a call
 * point into it; its cached scratch block: out-bytes) on their second use,
 * and unregisters them before it frees or moves them, on the same thread.
 * reg returns false when it did not register (the buffer stays as it is);
 * unreg is only called for memory reg registered. NULL hooks: none. */
void apigen_set_host_memory(bool (*reg)(void *p, size_t n), void (*unreg)(void *p));

/* Per-client handle tables. Ids are what the guest sees as the handle value.
 * A handle of client A never resolves for client B. */
APIGEN_CHECK bool apigen_handle_get(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id,
                                    void **real);
/* Returns the id for real (the existing one if real is already known). */
uint64_t apigen_handle_put(apigen_call_ctx *cx, const apigen_handle_type *ht, void *real);
/* As apigen_handle_put, and the session owns it: when the client goes away
 * it is released with ht->destroy (newest first). For `creates` handles. */
uint64_t apigen_handle_put_owned(apigen_call_ctx *cx, const apigen_handle_type *ht, void *real);
/* After a successful destroy/release call: gives back one reference the
 * client holds (creates and retains add one each); the id is forgotten when
 * the last one goes. A handle the client merely received (refs 0: a device,
 * a platform) stays known. */
void apigen_handle_drop(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id);
/* After a successful retain call: the client holds one more reference
 * (released with ht->destroy when it goes away). */
void apigen_handle_retain(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id);
/* Guest-assigned ids (out handles of async calls, apigen_guest_id): claim
 * checks, before the real call, that id has this session's guest-id form
 * and was never claimed before (else rejects: BAD_HANDLE, or NO_MEMORY);
 * after the call succeeded, bind makes id name real (as apigen_handle_put
 * or, owned, apigen_handle_put_owned; a NULL real leaves it unbound). On
 * failure bind releases an owned real with ht->destroy and rejects
 * (NO_MEMORY). An id that never gets bound names nothing. */
APIGEN_CHECK bool apigen_handle_claim(apigen_call_ctx *cx, uint64_t id);
APIGEN_CHECK bool apigen_handle_bind(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id,
                                     void *real, bool owned);
/* For hand-written host code: whether id is a live handle of type ht of
 * this client (no rejection, no logging). */
bool apigen_handle_lookup(struct apigen_session *s, const apigen_handle_type *ht, uint64_t id,
                          void **real);
/* For callbacks: id of a real handle in a session, 0 if unknown. */
uint64_t apigen_session_handle_id(struct apigen_session *s, const apigen_handle_type *ht,
                                  void *real);

/* Shareable handles on the server (runtime/shareable_host.c): export takes
 * the descriptor the real library exported (kept until the session ends)
 * and writes its token; import gives a new descriptor for a token any
 * session of this server exported (the caller closes it), -1 if none. */
bool apigen_shareable_export(apigen_call_ctx *cx, int fd, unsigned char token[APIGEN_SHAREABLE_TOKEN]);
int apigen_shareable_import(apigen_call_ctx *cx, const unsigned char token[APIGEN_SHAREABLE_TOKEN]);
/* apigen_shareable_import_or_none: the same, or for a token no export of
 * this server made (the zero token of a descriptor the guest did not make,
 * an ended session's) the read end of a fresh pipe, which names nothing the
 * real library exported: its answer for it is the call's, as natively for
 * a descriptor that is not an export. -1: not even a pipe (logged, fn). */
int apigen_shareable_import_or_none(apigen_call_ctx *cx, const unsigned char token[APIGEN_SHAREABLE_TOKEN],
                                    const char *fn);

/* Device address ranges (SECURITY.md S4), for specs with `types.device`.
 * Every device parameter is checked: NULL passes (the real library reports
 * it), anything else must lie in a range of this client ([addr, addr +
 * extent) inside it when has_extent: its last byte in, one past out), else
 * the call is rejected with APIGEN_BAD_DEVPTR (the API's invalid_value). An
 * extent of 0 passes at any address: it touches no memory, and the real
 * library answers as it would natively. */
APIGEN_CHECK bool apigen_dev_check(apigen_call_ctx *cx, uint64_t addr, uint64_t extent,
                                   bool has_extent, const char *what);
/* After a successful `creates` call: [addr, addr + bytes) belongs to this
 * client (bytes 0 counts as 1). If it cannot be recorded, the allocation is
 * released with api->device_destroy and the call rejected (NO_MEMORY). */
APIGEN_CHECK bool apigen_dev_add(apigen_call_ctx *cx, uint64_t addr, uint64_t bytes);
/* Before a `destroys` call: the range holding addr leaves the table (one
 * per call); apigen_dev_end(cx, ok) forgets it (ok) or puts it back. */
APIGEN_CHECK bool apigen_dev_take(apigen_call_ctx *cx, uint64_t addr, const char *what);
void apigen_dev_end(apigen_call_ctx *cx, bool ok);
/* For hand-written host code (kernel arguments, structs with addresses):
 * whether [addr, addr + extent) lies in a range of session s (an empty
 * extent may start one past the range's last byte). */
bool apigen_dev_owned(struct apigen_session *s, uint64_t addr, uint64_t extent, bool has_extent);
/* Whether [addr, addr + n) lies in the calling client's shared-memory arena
 * (the server's mapping of it), which is then registered with the accelerator
 * if it was not yet: a query about it gets the registered memory's answer. */
bool apigen_arena_holds(apigen_call_ctx *cx, uint64_t addr, uint64_t n);

/* Callbacks, server side. bind returns the user_data to give the real
 * library; the generated trampoline receives it back. */
void *apigen_cb_bind(apigen_call_ctx *cx, unsigned cb_type, uint64_t cb_id, bool once);
struct apigen_session *apigen_cb_session(void *bound);
/* Encodes the callback's arguments into w (from apigen_cb_begin) and sends
 * it to the guest's callback channel. Never blocks on the guest. */
void apigen_cb_begin(void *bound, apigen_wr *w);
/* Whether bound's session still exists and its callback channel works: hand-
 * written host code that waits for a guest's answer to a callback stops
 * waiting when this turns false. */
bool apigen_cb_alive(void *bound);
/* With mu held: wait on cv until *done reaches target (the guest acknowledged
 * that many runs of a callback) or bound's callback channel is gone, looking
 * at the channel every 200 ms; returns with mu held, true when acknowledged. */
bool apigen_cb_wait_done(pthread_mutex_t *mu, pthread_cond_t *cv, const uint64_t *done,
                         uint64_t target, void *bound);
void apigen_cb_send(void *bound, apigen_wr *w);

/* ---- streamed bulk arguments (spec `stream: {host: F, chunk: N, min: M}`) ---
 * A large in-buffer reaches the spec's host hook F chunk by chunk as it
 * arrives, and a large out-buffer leaves chunk by chunk as F produces it, so
 * the accelerator's copy of one chunk overlaps the transport of the next.
 * The generated handler calls F(stream, args...) instead of the real
 * function when the buffer streams (its pointer argument is NULL then).
 *
 * Server, in: as apigen_get_opt_bytes; when the buffer is still in transit
 * (the request came head first), at least min bytes long and the last field
 * of the payload, *p = NULL, *n = its length and *s = the stream; otherwise
 * *s = NULL and the bytes are in memory as usual. */
APIGEN_CHECK bool apigen_get_opt_bytes_stream(apigen_call_ctx *cx, const void **p, uint64_t *n,
                                              uint64_t max, uint64_t chunk, uint64_t min,
                                              apigen_stream **s);
/* The next bytes of an in-stream, up to cap, into buf: how many (0: all were
 * read, or the connection failed: apigen_stream_failed). Bytes a hook leaves
 * unread are discarded after it returns (the framing stays intact). */
size_t apigen_stream_read(apigen_stream *s, void *buf, size_t cap);
/* Server, out: a stream for an out-buffer of n bytes (NULL: n < min, use a
 * scratch buffer as usual). The hook sends the n bytes in order with
 * apigen_stream_write (false: the connection failed); the reply then carries
 * the buffer with length 0. A hook that fails part way returns the API's
 * error: the caller's buffer holds the chunks sent before. */
apigen_stream *apigen_stream_out(apigen_call_ctx *cx, uint64_t n, uint64_t chunk, uint64_t min);
APIGEN_CHECK bool apigen_stream_write(apigen_stream *s, const void *buf, size_t len);
uint64_t apigen_stream_size(const apigen_stream *s);  /* the buffer's bytes */
uint64_t apigen_stream_chunk(const apigen_stream *s); /* the spec's chunk size */
uint64_t apigen_stream_done(const apigen_stream *s);  /* bytes read or written so far */
bool apigen_stream_failed(const apigen_stream *s);
/* Guest: the reply to this sync call may stream into dst (cap bytes), before
 * the reply frame itself; generated for out-buffers with `stream:`. */
void apigen_call_stream_into(apigen_call *c, void *dst, uint64_t cap);

/* ---- shared-memory arena (guest) ------------------------------------------ */
/* Over a local transport (unix://, shm://) a guest's sessions share one
 * memfd arena (APIGEN_ARENA bytes, K/M/G suffixes, default 256M; 0: none)
 * that each server maps and registers with the accelerator
 * (apigen_set_host_memory). A buffer argument lying inside it travels as
 * (offset, length), not as bytes; the handler gets a pointer into the
 * server's mapping. alloc carves page-aligned blocks (NULL: no server took
 * the arena, or it is full: use plain memory), each inside one segment the
 * servers registered before alloc returned (a synchronous request when it
 * opens a segment: call it where the thread builds no call); free (never
 * a request) returns false for a
 * pointer it did not hand out. peer_addr: the address of p in api's
 * server's mapping, for APIs that pass host pointers by value (0: [p, p+n)
 * is not inside the arena or api's server did not take it). */
void *apigen_arena_alloc(size_t n);
bool apigen_arena_free(void *p);
/* An API's pinned host memory in the guest: a block of the arena (above)
 * when a server took it, else (unless arena_only) page-aligned heap memory;
 * either way with its pages already in this process's page tables, as a
 * native pinned allocation's are, so the application's first write into it
 * faults on none (64 MiB over tcp: 25 ms of faults otherwise). NULL: out of
 * memory, or no arena with arena_only. Freed by apigen_arena_free, else
 * free(). */
void *apigen_pinned_alloc(size_t n, bool arena_only);
bool apigen_arena_owns(const void *p);
uint64_t apigen_arena_peer_addr(const apigen_api *api, const void *p, uint64_t n);
/* Host memory a graph reaches at every launch (arena_shadow.c): for a copy
 * between host memory and the device captured into a graph, whose host side
 * is width bytes per row, height rows pitch apart, depth slices slice apart
 * (1D: pitch = width, height = depth = 1). Arena memory (whole span inside
 * it) is used as it is; other memory gets a shadow block in the arena with
 * the same layout (out->shadow), to be filled before a copy to the device
 * (apigen_shadow_fill, run as a host function of the API at every launch)
 * and drained after a copy from it (apigen_shadow_drain); out->local is the
 * guest's address of what the copy names, out->peer the server's. A shadow
 * of a copy that was not issued goes back with apigen_shadow_drop; one that
 * was captured stays (a graph may run it). Answers BAD (no row, width past
 * pitch, overflow), NO_ARENA (api's server took no arena: tcp://, ucx://,
 * APIGEN_ARENA=0, or it is full) or NO_MEMORY. */
typedef struct apigen_shadow apigen_shadow;
typedef struct apigen_graph_host_t {
    void *local;
    uint64_t peer;
    apigen_shadow *shadow; /* NULL: arena memory, used as it is */
} apigen_graph_host_t;
enum { APIGEN_GRAPH_HOST_OK = 0, APIGEN_GRAPH_HOST_BAD = -1, APIGEN_GRAPH_HOST_NO_ARENA = -2,
       APIGEN_GRAPH_HOST_NO_MEMORY = -3 };
int apigen_graph_host(const apigen_api *api, void *user, size_t pitch, size_t width,
                      size_t height, size_t depth, size_t slice, apigen_graph_host_t *out);
void apigen_shadow_fill(void *shadow);
void apigen_shadow_drain(void *shadow);
void apigen_shadow_drop(apigen_shadow *shadow);
/* Server: api's sessions take guests' arenas (other APIs decline them, and
 * an arena reference to them is an ordinary, too long, buffer). Only for
 * APIs whose handlers pass buffer arguments to the real library without
 * interpreting them first: the guest can change arena bytes at any time
 * (apigen_get_str never takes an arena reference). */
void apigen_arena_accept(const apigen_api *api);

/* ---- metrics (apigen-server --metrics tcp://ADDR:PORT) ---------------------
 * The runtime counts calls, errors, latency, bytes and sessions per API by
 * itself. An API's hand-written host code may add its own families (an
 * accelerator's memory and utilization): a hook, registered once (from a
 * constructor), that appends Prometheus text lines (# HELP, # TYPE, then
 * samples; names apigen_<something>_...) to every scrape. It runs on the
 * metrics thread, or under --isolation process in a collector process of
 * its own (the parent never touches the vendor library), one call at a
 * time; it must not block for long (the scrape waits at most 5 s). */
typedef struct apigen_metrics_out apigen_metrics_out;
void apigen_metrics_hook(const apigen_api *api, void (*hook)(apigen_metrics_out *o));
void apigen_metrics_printf(apigen_metrics_out *o, const char *fmt, ...) APIGEN_PRINTF(2, 3);

/* ---- mirrors of remote memory (guest, mirror.c) ---------------------------- */
/* Memory the server's library hands out at an address the guest's CPU must
 * reach too: the guest maps a mirror at the same virtual address and tracks
 * per page what the application wrote (mprotect + a SIGSEGV handler that
 * passes other faults to the handler installed before it). apigen_mirror_add maps
 * [addr, addr+size) (rounded up to pages; dirty_first: writable and dirty,
 * else clean and read-only, e.g. to be pulled at once): 0,
 * EEXIST (the address is taken in the guest), EINVAL (not page-aligned),
 * ENOSPC or another errno. apigen_mirror_push calls fn for each run of pages
 * the application wrote since they were last pushed or pulled (the run is
 * made read-only and clean first); apigen_mirror_pull calls fn for each run
 * of clean pages of every mirror marked stale (apigen_mirror_mark_stale: the
 * device may have written [addr, addr+len), len 0: every mirror) and clears
 * the mark unless keep_stale. fn gets the runtime's alias of the pages
 * (read it to push, write it to pull; never faults) and the mirrored
 * address; a nonzero answer stops the walk and is returned. Both return at
 * once when no mirror exists (apigen_mirror_live() == 0). */
typedef int (*apigen_mirror_io)(void *alias, uint64_t addr, size_t len, void *user);
int apigen_mirror_add(uint64_t addr, uint64_t size, bool dirty_first);
bool apigen_mirror_remove(uint64_t addr);
/* An allocation of the server's at any address and size (several may share
 * a page): mirrors for the pages no mirror covers yet (clean: read-only, to
 * be pulled at once; else dirty, pushed at the next push), and the
 * allocation's bytes recorded: push and pull move only bytes of live
 * allocations (apigen_mirror_add records [addr, addr+size) as one too).
 * apigen_mirror_unmap forgets the allocation at addr and removes the
 * mirrors no allocation overlaps any more. Errors as apigen_mirror_add. */
int apigen_mirror_map(uint64_t addr, uint64_t size, bool clean);
void apigen_mirror_unmap(uint64_t addr);
bool apigen_mirror_find(uint64_t addr, uint64_t *base, uint64_t *size);
size_t apigen_mirror_live(void);
void apigen_mirror_mark_stale(uint64_t addr, uint64_t len);
bool apigen_mirror_any_stale(void);
void apigen_mirror_clear_stale(void);
int apigen_mirror_push(apigen_mirror_io fn, void *user);
int apigen_mirror_pull(apigen_mirror_io fn, void *user, bool keep_stale);
/* Device work queued on queue (an API's stream; owner tells apart queues
 * of one value per thread, else 0) may write [addr, addr+len) (len 0:
 * every mirror): the mirrors it overlaps are marked stale. A successful
 * synchronization then pulls every stale mirror's clean pages
 * (apigen_mirror_synced: APIGEN_SYNC_ALL, all queues done; _QUEUE, that
 * queue done; _POINT, something finished, e.g. an event) and clears the
 * marks once no queue with such work is left unsynchronized. */
enum { APIGEN_SYNC_ALL, APIGEN_SYNC_QUEUE, APIGEN_SYNC_POINT };
void apigen_mirror_queued(uint64_t queue, uint64_t owner, uint64_t addr, uint64_t len);
int apigen_mirror_synced(int scope, uint64_t queue, uint64_t owner, apigen_mirror_io fn, void *user);
/* api's spec code moves mirrors itself at the right calls (push is its
 * host-to-device copy). Every call of another API of its family (a library
 * that launches kernels on the family's device memory) first pushes what
 * the host wrote and marks every mirror stale for an unnamed queue, which
 * only a synchronization of everything (APIGEN_SYNC_ALL) clears. */
void apigen_mirror_own(const apigen_api *api, apigen_mirror_io push);

/* ---- page digests (pages.c): moving only the pages that differ
 * A side that holds bytes of n spans (back to back, span i len[i] bytes)
 * digests them, 16 bytes per 4 KiB page (the last page of a span shorter):
 * apigen_pages_digest writes apigen_pages_count(len, n) digests. The side
 * that holds the current bytes (now, back to back; NULL: they follow the
 * bitmap in reply already) packs a reply: a bitmap of (pages + 7) / 8 bytes,
 * one bit per page whose bytes differ from its digest, then those pages
 * (reply must hold the bitmap and every byte); apigen_pages_pack returns the
 * reply's length. apigen_pages_check: 0 when a reply of used bytes matches
 * the spans (its bitmap's pages, exactly), else -1. apigen_pages_unpack
 * writes the reply's pages over the bytes the digests were made of: 0, or
 * -1 (nothing written) when the reply does not match the spans. */
#define APIGEN_PAGE ((size_t)4096)
typedef struct apigen_page_digest {
    unsigned char b[16];
} apigen_page_digest;
size_t apigen_pages_count(const size_t *len, unsigned n);
void apigen_pages_digest(const void *bytes, const size_t *len, unsigned n, apigen_page_digest *out);
size_t apigen_pages_pack(void *reply, const void *now, const size_t *len, unsigned n,
                         const apigen_page_digest *known);
int apigen_pages_check(const size_t *len, unsigned n, const void *reply, size_t used);
int apigen_pages_unpack(void *bytes, const size_t *len, unsigned n, const void *reply, size_t used);

/* ---- twins (twin.c): the application's memory a device allocation stands for
 * A range of the application's own memory (stack, heap: never taken over,
 * unlike a mirror) that a device allocation at dev stands for (an API that
 * maps host memory for its device). A twin copy of the range, as last
 * moved, tells what changed on either side. apigen_twin_push (before
 * device work) sends what the application changed: io(dev_addr, buf, len,
 * true); apigen_twin_wrote (after device work that may write [dev, dev+n);
 * dev 0: every range) marks ranges stale; apigen_twin_sync (after a
 * successful synchronization; all_done: every queue finished) reads each
 * stale range back and writes the bytes the device changed into the range,
 * keeping bytes the application wrote meanwhile; only all_done clears
 * staleness. io moves n spans (1..APIGEN_TWIN_SPANS, of every range: one
 * call where an API can move them in one request) whose bytes lie back to
 * back in buf (4 MiB at most): to_device, buf's bytes to each span's dev;
 * else each span's device bytes into buf, which holds on entry what the
 * twin copies hold there (the device's bytes at the last move; between
 * merged spans zeros), so an io may move only the pages that differ
 * (apigen_pages_*). io returns 0 or the API's
 * error, which stops the walk and is returned; APIGEN_TWIN_NO_MEMORY: the
 * runtime ran out of memory. apigen_twin_add: 0, EINVAL or ENOMEM.
 * apigen_twin_remove reads back a stale range first and gives the
 * allocation's address for the API to free (0: not a twin). Exact while
 * host and device do not use the same bytes between synchronizations. */
#define APIGEN_TWIN_NO_MEMORY (-1)
#define APIGEN_TWIN_SPANS 64
typedef struct apigen_twin_span {
    uint64_t dev;
    size_t len;
} apigen_twin_span;
typedef int (*apigen_twin_io)(const apigen_twin_span *span, unsigned n, void *buf, bool to_device,
                              void *user);
int apigen_twin_add(void *host, size_t size, uint64_t dev, bool read_only);
int apigen_twin_remove(void *host, uint64_t *dev, apigen_twin_io io, void *user);
bool apigen_twin_device(const void *host, uint64_t *dev, size_t *left);
size_t apigen_twin_live(void);
int apigen_twin_push(apigen_twin_io io, void *user);
void apigen_twin_wrote(uint64_t dev, size_t n);
int apigen_twin_sync(bool all_done, apigen_twin_io io, void *user);
/* apigen_twin_sync_pages: the same pull for an API that moves only the
 * pages that differ. twin.c keeps each twin's page digests (updated when a
 * move changes its copy), so a synchronization reads no twin's bytes in the
 * guest: io sends known (the digests of the n spans' pages, in order:
 * apigen_pages_count of them) and receives what apigen_pages_pack makes of
 * the device's bytes into reply (cap bytes: room for the bitmap and every
 * page), its length in *used. An answer that does not match the spans
 * writes nothing and gives APIGEN_TWIN_BAD_REPLY (logged). */
#define APIGEN_TWIN_BAD_REPLY (-2)
typedef int (*apigen_twin_pages_io)(const apigen_twin_span *span, unsigned n,
                                    const apigen_page_digest *known, void *reply, size_t cap,
                                    size_t *used, void *user);
int apigen_twin_sync_pages(bool all_done, apigen_twin_pages_io io, void *user);
/* apigen_twin_forget_all: every twin dropped, nothing moved (their device
 * allocations went with a device reset or their context's end; a range a
 * kernel reaches again gets a new twin). */
void apigen_twin_forget_all(void);
/* Candidates: host ranges an API may turn into twins (its pinned or
 * registered memory outside the arena; arena memory is ignored). Launches
 * scan only while some exist (apigen_twin_candidates); _maybe(addr): addr
 * lies within their bounds (a cheap first test, not membership). */
void apigen_twin_candidate_add(const void *p, size_t size);
void apigen_twin_candidate_remove(const void *p);
bool apigen_twin_candidates(void);
bool apigen_twin_candidate_maybe(uint64_t addr);
/* apigen_twin_translate: each 8-byte-aligned word of a kernel's packed
 * parameters that points into a twin's range becomes the address of its
 * device allocation; a word in no twin is first given to make(addr, user),
 * which may add the twin of the range holding it (host memory the device
 * reaches at its host address under unified addressing) and returns 0 or
 * the API's error (returned). */
typedef int (*apigen_twin_make)(uint64_t addr, void *user);
int apigen_twin_translate(void *params, size_t len, apigen_twin_make make, void *user);
/* apigen_twin_place: size bytes of host memory mapped at the address of a
 * device allocation made for them (ops->alloc: len bytes, 0 or the API's
 * error; ops->clear zeroes the device bytes; ops->release frees), added as
 * its twin: the host address is the device address, as under unified
 * addressing natively, so a pointer the program stores in device memory
 * names the twin (twin_place.c). NULL with *err 0 when this process has
 * something at that address (the caller falls back to memory of its own),
 * else with the API's error or APIGEN_TWIN_NO_MEMORY. Freeing such a block:
 * apigen_twin_remove (gives the allocation to free, as for any twin; 0 when
 * a device reset took it), then apigen_twin_unplace, which unmaps a placed
 * block and returns true (false: not one, the caller frees its own). */
typedef struct apigen_twin_alloc {
    int (*alloc)(size_t len, uint64_t *dev, void *user);
    int (*clear)(uint64_t dev, size_t len, void *user);
    void (*release)(uint64_t dev, void *user);
} apigen_twin_alloc;
void *apigen_twin_place(size_t size, const apigen_twin_alloc *ops, void *user, int *err);
bool apigen_twin_unplace(void *host);
/* api's spec code moves twins itself (io: its copies); every call of
 * another API of its family first pushes and makes every twin stale (only
 * a synchronization of everything through an owner clears it). */
void apigen_twin_own(const apigen_api *api, apigen_twin_io io);

/* ---- server entry point -------------------------------------------------- */
/* apigen-server main: --listen URL [--listen URL...] [--max-arg BYTES]
 * [--token-file F]; serves every API in apis[]. */
int apigen_server_main(int argc, char **argv, const apigen_api *const *apis, unsigned napis);

#if defined(APIGEN_GUEST_SO) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
