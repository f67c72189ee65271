/* Runtime loopback: a hand-written API "tapi" (the shape generated code
 * has, see docs/internals.md) served by apigen_server_main in a forked
 * process over unix and tcp, called through apigen_call_* from forked guest
 * processes (each guest process is one session). */
#define _GNU_SOURCE
#include "apigen_rt.h"
#include "rt_internal.h"
#include "transport.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ======================= the API, server half ======================= */
/* call id 0 is the runtime's own (RT_CALL_WAIT, RT_CALL_ARENA_PIN) */
enum { C_RESERVED, C_ECHO, C_FAIL_ASYNC, C_CREATE, C_USE, C_DESTROY, C_UNSUP, C_COUNT_LIVE, C_CB_FIRE,
       C_ALLOC, C_SLEEP, C_USE_VIEW, C_USE_NARROW, C_INT_PUT, C_INT_GET, C_MARK, NCALLS };
enum { ERR_BASE = 100 }; /* tapi's error value for status s is 100 + s */

typedef struct obj { uint64_t value; } obj;
static atomic_int live_objs;

static void obj_destroy(void *real)
{
    free(real);
    atomic_fetch_sub(&live_objs, 1);
}
static const uint64_t obj_pass[] = {0};
static const apigen_handle_type ht_obj = {"tobj", 1, obj_destroy, obj_pass, 1, 0, NULL, 0};
static const apigen_handle_type *const handle_types[] = {&ht_obj};
/* a type whose place an obj may take (the spec's `also:`, as a CUkernel where
 * a CUfunction is taken): it has no ids of its own here */
static const apigen_handle_type *const view_also[] = {&ht_obj};
static const apigen_handle_type ht_view = {"tview", 2, NULL, obj_pass, 1, 0, view_also, 1};
/* a 32-bit integer handle (cuFFT's plans): the guest keeps an id's low 32 bits */
static const apigen_handle_type ht_narrow = {"tnarrow", 3, NULL, obj_pass, 1, APIGEN_HT_NARROW,
                                             view_also, 1};

static void h_echo(apigen_call_ctx *cx)
{
    uint32_t x;
    const char *s;
    if (!apigen_get_u32(cx->rd, &x)) { apigen_reject(cx, APIGEN_BAD_ARGS, "x"); return; }
    if (!apigen_get_str(cx->rd, &s, 1u << 20)) { apigen_reject(cx, APIGEN_BAD_ARGS, "s"); return; }
    if (!apigen_rd_done(cx->rd)) { apigen_reject(cx, APIGEN_BAD_ARGS, "trailing bytes"); return; }
    apigen_result(cx, 0);
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u32(cx->wr, x * 2) || !apigen_put_str(cx->wr, s))
        return;
}

static void h_fail_async(apigen_call_ctx *cx)
{
    uint32_t code;
    if (!apigen_get_u32(cx->rd, &code) || code == 999) { apigen_reject(cx, APIGEN_BAD_ARGS, "code"); return; }
    apigen_result(cx, code);
    if (!apigen_put_u32(cx->wr, code))
        return;
}

static void h_create(apigen_call_ctx *cx)
{
    uint64_t v;
    if (!apigen_get_u64(cx->rd, &v)) { apigen_reject(cx, APIGEN_BAD_ARGS, "value"); return; }
    obj *o = malloc(sizeof *o);
    if (!o) { apigen_reject(cx, APIGEN_NO_MEMORY, "obj"); return; }
    o->value = v;
    atomic_fetch_add(&live_objs, 1);
    uint64_t id = apigen_handle_put_owned(cx, &ht_obj, o);
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, id))
        return;
}

static void h_use(apigen_call_ctx *cx)
{
    uint64_t id;
    void *real;
    if (!apigen_get_u64(cx->rd, &id)) { apigen_reject(cx, APIGEN_BAD_ARGS, "o"); return; }
    if (!apigen_handle_get(cx, &ht_obj, id, &real))
        return;
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, ((obj *)real)->value))
        return;
}

static void h_use_view(apigen_call_ctx *cx)
{
    uint64_t id;
    void *real;
    if (!apigen_get_u64(cx->rd, &id)) { apigen_reject(cx, APIGEN_BAD_ARGS, "o"); return; }
    if (!apigen_handle_get(cx, &ht_view, id, &real))
        return;
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, real ? ((obj *)real)->value : 0))
        return;
}

static void h_use_narrow(apigen_call_ctx *cx)
{
    uint64_t id;
    void *real;
    if (!apigen_get_u64(cx->rd, &id)) { apigen_reject(cx, APIGEN_BAD_ARGS, "o"); return; }
    if (!apigen_handle_get(cx, &ht_narrow, id, &real))
        return;
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, real ? ((obj *)real)->value : 0))
        return;
}

/* an integer handle whose value 0 is a real handle (cuFFT's plans) */
static const apigen_handle_type ht_int = {"tint", 4, NULL, NULL, 0, APIGEN_HT_NARROW, NULL, 0};

static void h_int_put(apigen_call_ctx *cx)
{
    uint64_t v;
    if (!apigen_get_u64(cx->rd, &v)) { apigen_reject(cx, APIGEN_BAD_ARGS, "v"); return; }
    uint64_t id = apigen_handle_put_owned(cx, &ht_int, (void *)(uintptr_t)(int)v);
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, id))
        return;
}

static void h_int_get(apigen_call_ctx *cx)
{
    uint64_t id;
    void *real;
    if (!apigen_get_u64(cx->rd, &id)) { apigen_reject(cx, APIGEN_BAD_ARGS, "id"); return; }
    if (!apigen_handle_get(cx, &ht_int, id, &real))
        return;
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, (uint64_t)(int)(uintptr_t)real))
        return;
}

static void h_destroy(apigen_call_ctx *cx)
{
    uint64_t id;
    void *real;
    if (!apigen_get_u64(cx->rd, &id)) { apigen_reject(cx, APIGEN_BAD_ARGS, "o"); return; }
    if (!apigen_handle_get(cx, &ht_obj, id, &real))
        return;
    obj_destroy(real);
    apigen_handle_drop(cx, &ht_obj, id);
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

static void h_count_live(apigen_call_ctx *cx)
{
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u32(cx->wr, (uint32_t)atomic_load(&live_objs)))
        return;
}

static void h_cb_fire(apigen_call_ctx *cx)
{
    uint64_t cb;
    uint32_t v;
    if (!apigen_get_u64(cx->rd, &cb) || !apigen_get_u32(cx->rd, &v)) { apigen_reject(cx, APIGEN_BAD_ARGS, "cb"); return; }
    void *bound = apigen_cb_bind(cx, 0, cb, true);
    if (cx->status != APIGEN_OK)
        return;
    /* what a generated trampoline does when the library calls back */
    apigen_wr w;
    apigen_cb_begin(bound, &w);
    if (apigen_put_u32(&w, v))
        apigen_cb_send(bound, &w);
    else
        apigen_wr_free(&w);
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

static void h_alloc(apigen_call_ctx *cx)
{
    uint64_t n, elem;
    if (!apigen_get_u64(cx->rd, &n) || !apigen_get_u64(cx->rd, &elem)) { apigen_reject(cx, APIGEN_BAD_ARGS, "n"); return; }
    uint8_t *p = apigen_scratch(cx, n, elem);
    if (!p)
        return;
    uint64_t bytes = n * elem;
    for (uint64_t i = 0; i < bytes; i++)
        if (p[i]) { apigen_reject(cx, APIGEN_BAD_ARGS, "scratch not zeroed"); return; }
    memset(p, 0xa5, bytes); /* the next call that gets this memory must find it zeroed again */
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

static void h_sleep(apigen_call_ctx *cx)
{
    uint64_t ms;
    if (!apigen_get_u64(cx->rd, &ms) || ms > 10000) { apigen_reject(cx, APIGEN_BAD_ARGS, "ms"); return; }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

/* tMark(ms, v): after ms, the server's mark becomes v (UINT64_MAX: stays);
 * returns the mark as it was (the cross-thread order scenario) */
static _Atomic uint64_t mark;

static void h_mark(apigen_call_ctx *cx)
{
    uint64_t ms, v;
    if (!apigen_get_u64(cx->rd, &ms) || !apigen_get_u64(cx->rd, &v) || ms > 10000) { apigen_reject(cx, APIGEN_BAD_ARGS, "ms"); return; }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    uint64_t was = v == UINT64_MAX ? atomic_load(&mark) : atomic_exchange(&mark, v);
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, was))
        return;
}

static const apigen_handler_fn handlers[NCALLS] = {
    NULL, h_echo, h_fail_async, h_create, h_use, h_destroy, NULL, h_count_live, h_cb_fire, h_alloc, h_sleep,
    h_use_view, h_use_narrow, h_int_put, h_int_get, h_mark};
static const char *const call_names[NCALLS] = {NULL, "tEcho", "tFailAsync", "tCreate", "tUse", "tDestroy",
                                               "tUnsupported", "tCountLive", "tCbFire", "tAlloc", "tSleep",
                                               "tUseView", "tUseNarrow", "tIntPut", "tIntGet", "tMark"};

/* ======================= the API, guest half ======================= */
static void cbd_u32(apigen_rd *args, void *fn, void *user)
{
    uint32_t v;
    if (!apigen_get_u32(args, &v))
        return;
    ((void (*)(uint32_t, void *))fn)(v, user);
}
static const apigen_cb_dispatch_fn cb_dispatch[] = {cbd_u32};

#define TAPI_INIT(nm, fp)                                                                          \
    {                                                                                              \
        .name = nm, .fingerprint = fp, .ncalls = NCALLS, .call_names = call_names,                \
        .handlers = handlers, .handle_types = handle_types, .nhandle_types = 1, .success_value = 0, \
        .status_error = {0, 101, 102, 103, 104, 105, 106, 107}, .cb_dispatch = cb_dispatch,        \
        .ncb_types = 1, .async_errors_next_call = true                                             \
    }
static const apigen_api tapi = TAPI_INIT("tapi", 0x1234);
static const apigen_api tapi_badfp = TAPI_INIT("tapi", 0x9999);
static const apigen_api tapi_other = TAPI_INIT("nope", 0x1234);
/* a guest generated from another version of the headers (api.version_macro) */
static apigen_api tapi_badver = TAPI_INIT("tapi", 0x1234);

/* A family (spec api.family) of two APIs: one session, one connection per
 * thread; fam_b_badfp is fb generated from other headers. */
#define FAPI_INIT(nm, fp)                                                                          \
    {                                                                                              \
        .name = nm, .fingerprint = fp, .ncalls = NCALLS, .call_names = call_names,                \
        .handlers = handlers, .handle_types = handle_types, .nhandle_types = 1, .success_value = 0, \
        .status_error = {0, 101, 102, 103, 104, 105, 106, 107}, .cb_dispatch = cb_dispatch,        \
        .ncb_types = 1, .async_errors_next_call = true, .family = "tfam"                           \
    }
static const apigen_api fam_a = FAPI_INIT("fa", 0x1111);
static const apigen_api fam_b = FAPI_INIT("fb", 0x2222);
static const apigen_api fam_b_badfp = FAPI_INIT("fb", 0x3333);

/* ======================= guest-side helpers ======================= */
typedef struct res {
    apigen_status st;
    uint32_t ret;
    uint64_t out;
    bool has_deferred;
    int64_t deferred;
} res;

/* One sync call with up to two u64 arguments; reads u32 ret [+ u64 out]. */
static res call2(const apigen_api *api, uint32_t id, int nargs, uint64_t a, uint64_t b, bool want_out)
{
    res r = {APIGEN_LOST, 0, 0, false, 0};
    apigen_call c;
    if (!apigen_call_begin(api, &c, id)) {
        r.st = c.status;
        return r;
    }
    bool ok = (nargs < 1 || apigen_put_u64(c.wr, a)) && (nargs < 2 || apigen_put_u64(c.wr, b));
    CHECK(ok);
    r.st = apigen_call_sync(&c);
    if (r.st == APIGEN_OK) {
        r.has_deferred = c.has_deferred;
        r.deferred = c.deferred_error;
        c.has_deferred = false; /* reported (not cleared: the next call reports it) */
        if (!apigen_get_u32(&c.rd, &r.ret) || (want_out && !apigen_get_u64(&c.rd, &r.out)) ||
            !apigen_rd_done(&c.rd)) {
            apigen_call_bad_reply(&c);
            r.st = APIGEN_LOST;
        }
    }
    apigen_call_end(&c);
    return r;
}

static res echo(const apigen_api *api, uint32_t x, const char *s, bool check_reply)
{
    res r = {APIGEN_LOST, 0, 0, false, 0};
    apigen_call c;
    if (!apigen_call_begin(api, &c, C_ECHO)) {
        r.st = c.status;
        return r;
    }
    CHECK(apigen_put_u32(c.wr, x) && apigen_put_str(c.wr, s));
    r.st = apigen_call_sync(&c);
    if (r.st == APIGEN_OK) {
        uint32_t x2 = 0;
        const char *s2;
        r.has_deferred = c.has_deferred;
        r.deferred = c.deferred_error;
        c.has_deferred = false; /* reported (not cleared: the next call reports it) */
        CHECK(apigen_get_u32(&c.rd, &r.ret) && apigen_get_u32(&c.rd, &x2) &&
              apigen_get_str(&c.rd, &s2, 1u << 20) && apigen_rd_done(&c.rd));
        if (check_reply) {
            CHECK(r.ret == 0 && x2 == x * 2);
            CHECK_STR(s2, s);
        }
    }
    apigen_call_end(&c);
    return r;
}

static apigen_status fail_async(uint32_t code)
{
    apigen_call c;
    if (!apigen_call_begin(&tapi, &c, C_FAIL_ASYNC))
        return c.status;
    CHECK(apigen_put_u32(c.wr, code));
    apigen_status st = apigen_call_async(&c);
    apigen_call_end(&c);
    return st;
}

/* ======================= scenarios (each in a guest process) ======================= */
static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_cv = PTHREAD_COND_INITIALIZER;
static uint32_t cb_seen;
static void *cb_user_seen;

static void on_cb(uint32_t v, void *user)
{
    pthread_mutex_lock(&cb_mu);
    cb_seen = v;
    cb_user_seen = user;
    pthread_cond_broadcast(&cb_cv);
    pthread_mutex_unlock(&cb_mu);
}

static void *basic_thread(void *arg)
{
    uint32_t k = (uint32_t)(uintptr_t)arg;
    res r;
    for (uint32_t i = 0; i < 50; i++) {
        r = echo(&tapi, k * 1000 + i, i % 2 ? "odd" : "", true);
        CHECK(r.st == APIGEN_OK && !r.has_deferred);
    }
    /* async failures surface at the next sync call, first one wins, once */
    CHECK(fail_async(0) == APIGEN_OK);
    CHECK(fail_async(7) == APIGEN_OK);
    CHECK(fail_async(8) == APIGEN_OK);
    r = echo(&tapi, 1, "x", true);
    CHECK(r.st == APIGEN_OK && r.has_deferred && r.deferred == 7);
    r = echo(&tapi, 1, "x", true);
    CHECK(r.st == APIGEN_OK && !r.has_deferred);
    /* a rejected async call is deferred as the API's error for that status */
    CHECK(fail_async(999) == APIGEN_OK);
    r = echo(&tapi, 2, "y", true);
    CHECK(r.st == APIGEN_OK && r.has_deferred && r.deferred == 102);
    /* enough async calls to flush the queue by count and by size */
    for (int i = 0; i < 3000; i++)
        CHECK(fail_async(0) == APIGEN_OK);
    r = echo(&tapi, 3, "z", true);
    CHECK(r.st == APIGEN_OK && !r.has_deferred);
    CHECK(fail_async(5) == APIGEN_OK);
    /* a rejected sync call does not eat the deferred error */
    r = call2(&tapi, C_UNSUP, 0, 0, 0, false);
    CHECK(r.st == APIGEN_UNSUPPORTED);
    r = echo(&tapi, 4, "w", true);
    CHECK(r.st == APIGEN_OK && r.has_deferred && r.deferred == 5);
    /* a deferred error the sync call that got it did not report (it did not
     * clear has_deferred) comes with the thread's next sync call */
    CHECK(fail_async(6) == APIGEN_OK);
    {
        apigen_call c;
        CHECK(apigen_call_begin(&tapi, &c, C_ECHO));
        CHECK(apigen_put_u32(c.wr, 5) && apigen_put_str(c.wr, "v"));
        CHECK(apigen_call_sync(&c) == APIGEN_OK && c.has_deferred && c.deferred_error == 6);
        apigen_call_end(&c);
    }
    r = echo(&tapi, 6, "u", true);
    CHECK(r.st == APIGEN_OK && r.has_deferred && r.deferred == 6);
    r = echo(&tapi, 7, "t", true);
    CHECK(r.st == APIGEN_OK && !r.has_deferred);

    /* handles */
    r = call2(&tapi, C_CREATE, 1, 40 + k, 0, true);
    CHECK(r.st == APIGEN_OK && r.out >= 0x1000);
    uint64_t id = r.out;
    r = call2(&tapi, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 40 + k);
    r = call2(&tapi, C_USE_VIEW, 1, id, 0, true); /* also: an obj id where a view is taken */
    CHECK(r.st == APIGEN_OK && r.out == 40 + k);
    r = call2(&tapi, C_USE_VIEW, 1, 0, 0, true);  /* passthrough */
    CHECK(r.st == APIGEN_OK && r.out == 0);
    r = call2(&tapi, C_USE_VIEW, 1, 0x7777777, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    /* a narrow type: the id's low 32 bits name it, the full id too; other
     * types still need the full id */
    r = call2(&tapi, C_USE_NARROW, 1, (uint32_t)id, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 40 + k);
    r = call2(&tapi, C_USE_NARROW, 1, id, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 40 + k);
    r = call2(&tapi, C_USE, 1, (uint32_t)id, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_USE_NARROW, 1, (uint32_t)id + 0x100000, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    /* an integer handle of value 0 is a handle; -1 is none */
    r = call2(&tapi, C_INT_PUT, 1, 0, 0, true);
    CHECK(r.st == APIGEN_OK && (uint32_t)r.out >= 0x1000);
    uint64_t zid = r.out;
    r = call2(&tapi, C_INT_GET, 1, (uint32_t)zid, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 0);
    r = call2(&tapi, C_INT_PUT, 1, 7, 0, true);
    CHECK(r.st == APIGEN_OK && r.out != zid);
    r = call2(&tapi, C_INT_GET, 1, (uint32_t)r.out, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 7);
    r = call2(&tapi, C_INT_PUT, 1, 0, 0, true); /* the same real handle: the same id */
    CHECK(r.st == APIGEN_OK && r.out == zid);
    r = call2(&tapi, C_INT_PUT, 1, (uint64_t)-1, 0, true);
    CHECK(r.st == APIGEN_NO_MEMORY || (r.st == APIGEN_OK && r.out == 0));
    r = call2(&tapi, C_DESTROY, 1, id, 0, false);
    CHECK(r.st == APIGEN_OK);
    r = call2(&tapi, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_USE_VIEW, 1, id, 0, true); /* a destroyed obj: no view either */
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_USE_NARROW, 1, (uint32_t)id, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_DESTROY, 1, id, 0, false);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_USE, 1, 0x7777777, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_CREATE, 1, 50 + k, 0, true); /* left for the session to destroy */
    CHECK(r.st == APIGEN_OK && r.out != id && r.out >= 0x1000);

    /* bad call ids, malformed arguments, scratch limits (--max-arg 1M) */
    r = call2(&tapi, 77, 0, 0, 0, false);
    CHECK(r.st == APIGEN_BAD_CALL);
    r = call2(&tapi, C_ECHO, 0, 0, 0, false);
    CHECK(r.st == APIGEN_BAD_ARGS);
    r = call2(&tapi, C_ALLOC, 2, 1000, 3, false);
    CHECK(r.st == APIGEN_OK);
    for (int i = 0; i < 3; i++) { /* small blocks, reused call after call */
        r = call2(&tapi, C_ALLOC, 2, 40 + 100 * i, 1, false);
        CHECK(r.st == APIGEN_OK);
    }
    r = call2(&tapi, C_ALLOC, 2, 0, 3, false);
    CHECK(r.st == APIGEN_OK);
    r = call2(&tapi, C_ALLOC, 2, (1u << 20) + 1, 1, false);
    CHECK(r.st == APIGEN_TOO_LARGE);
    r = call2(&tapi, C_ALLOC, 2, UINT64_MAX, 2, false);
    CHECK(r.st == APIGEN_TOO_LARGE);
    r = call2(&tapi, C_ALLOC, 2, 1u << 19, 2, false); /* exactly the limit */
    CHECK(r.st == APIGEN_OK);
    r = echo(&tapi, 5, "still fine", true);
    CHECK(r.st == APIGEN_OK && !r.has_deferred);
    return NULL;
}

static int scenario_basic(void)
{
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, basic_thread, (void *)(i + 1));
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);

    /* callbacks: delivered on the control connection to the reader thread */
    int tag;
    uint64_t cb = apigen_cb_register(&tapi, 0, (void *)on_cb, &tag, true);
    CHECK(cb != 0);
    CHECK(apigen_cb_register(&tapi, 0, NULL, &tag, true) == 0);
    apigen_call c;
    CHECK(apigen_call_begin(&tapi, &c, C_CB_FIRE));
    CHECK(apigen_put_u64(c.wr, cb) && apigen_put_u32(c.wr, 4321));
    CHECK(apigen_call_sync(&c) == APIGEN_OK);
    apigen_call_end(&c);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20; /* a bound against hanging, not a timing assertion */
    pthread_mutex_lock(&cb_mu);
    while (cb_seen != 4321)
        if (pthread_cond_timedwait(&cb_cv, &cb_mu, &dl) == ETIMEDOUT)
            break;
    CHECK(cb_seen == 4321 && cb_user_seen == &tag);
    pthread_mutex_unlock(&cb_mu);
    return check_failures;
}

/* ---- cross-thread order (RT_CALL_WAIT) ----
 * A sync call sees what other threads queued before it: thread A queues a
 * mark that runs slowly on A's server thread; the main thread's read must
 * wait for it, also when thread B's frames, queued while that read waits,
 * run first (a session-wide count of frames run let them stand in for A's:
 * the read then ran before A's mark, which broke OpenCL's staged reads under
 * load). Once with A alive (its own sync call sent its queue) and once with
 * A gone (its queue left at thread exit). The sleeps only set up the
 * interleaving that failed; the check holds however the threads run. */
static sem_t order_sent;
static const uint64_t order_slow_ms = 1000;

static void mark_async(uint64_t ms, uint64_t v)
{
    apigen_call c;
    CHECK(apigen_call_begin(&tapi, &c, C_MARK));
    CHECK(apigen_put_u64(c.wr, ms) && apigen_put_u64(c.wr, v));
    CHECK(apigen_call_async(&c) == APIGEN_OK);
    apigen_call_end(&c);
}

static void order_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void *order_a_live(void *arg)
{
    mark_async(order_slow_ms, (uint64_t)(uintptr_t)arg);
    sem_post(&order_sent);
    res r = echo(&tapi, 1, "sends A's queue", true); /* returns once the mark ran */
    CHECK(r.st == APIGEN_OK);
    return NULL;
}

static void *order_a_gone(void *arg)
{
    mark_async(order_slow_ms, (uint64_t)(uintptr_t)arg); /* leaves at thread exit */
    return NULL;
}

/* B: while the main thread waits, one async frame that runs at once, sent
 * by B's own sync call. */
static void *order_b(void *arg)
{
    (void)arg;
    order_sleep_ms(300);
    CHECK(fail_async(0) == APIGEN_OK);
    res r = echo(&tapi, 2, "B", true);
    CHECK(r.st == APIGEN_OK);
    return NULL;
}

static int scenario_order(void)
{
    CHECK(sem_init(&order_sent, 0, 0) == 0);
    for (uint64_t v = 1; v <= 2; v++) {
        res r = call2(&tapi, C_MARK, 2, 0, 0, true); /* the mark is 0 */
        CHECK(r.st == APIGEN_OK);
        pthread_t a, b;
        pthread_create(&a, NULL, v == 1 ? order_a_live : order_a_gone, (void *)(uintptr_t)v);
        if (v == 1)
            sem_wait(&order_sent);
        else
            pthread_join(a, NULL);
        order_sleep_ms(200); /* A's mark is running on the server */
        pthread_create(&b, NULL, order_b, NULL);
        r = call2(&tapi, C_MARK, 2, 0, UINT64_MAX, true);
        CHECK(r.st == APIGEN_OK);
        if (r.out != v)
            fprintf(stderr, "order (%s): the read ran before thread A's queued mark (%llu)\n",
                    v == 1 ? "A alive" : "A gone", (unsigned long long)r.out);
        CHECK(r.out == v);
        pthread_join(b, NULL);
        if (v == 1)
            pthread_join(a, NULL);
    }
    sem_destroy(&order_sent);
    return check_failures;
}

static int pipe_a[2], pipe_b[2];

static int scenario_session_a(void)
{
    res r = call2(&tapi, C_CREATE, 1, 5, 0, true);
    CHECK(r.st == APIGEN_OK);
    CHECK(write(pipe_a[1], &r.out, sizeof r.out) == sizeof r.out);
    char c;
    CHECK(read(pipe_b[0], &c, 1) == 1); /* stay alive (session open) until told */
    r = call2(&tapi, C_USE, 1, r.out, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 5);
    return check_failures;
}

static uint64_t foreign_id;

static int scenario_session_b(void)
{
    res r = call2(&tapi, C_USE, 1, foreign_id, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_DESTROY, 1, foreign_id, 0, false);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    r = call2(&tapi, C_CREATE, 1, 6, 0, true);
    CHECK(r.st == APIGEN_OK);
    r = call2(&tapi, C_USE, 1, r.out, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 6);
    return check_failures;
}

static int scenario_cleanup(void)
{
    /* Every earlier guest has exited: the server destroys what their
     * sessions owned, asynchronously, so poll (bounded, not timed). */
    for (int i = 0; i < 2000; i++) {
        apigen_call c;
        if (!apigen_call_begin(&tapi, &c, C_COUNT_LIVE))
            break;
        uint32_t ret = 1, live = 1;
        if (apigen_call_sync(&c) == APIGEN_OK && apigen_get_u32(&c.rd, &ret) && apigen_get_u32(&c.rd, &live) &&
            live == 0) {
            apigen_call_end(&c);
            return check_failures;
        }
        apigen_call_end(&c);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    CHECK(!"owned handles of departed sessions were never destroyed");
    return check_failures;
}

static apigen_status fail_async_on(const apigen_api *api, uint32_t code)
{
    apigen_call c;
    if (!apigen_call_begin(api, &c, C_FAIL_ASYNC))
        return c.status;
    CHECK(apigen_put_u32(c.wr, code));
    apigen_status st = apigen_call_async(&c);
    apigen_call_end(&c);
    return st;
}

/* Two APIs of a family: a handle of one is the other's; an async error of
 * one is reported by the next sync call of the same API only. */
static int scenario_family(void)
{
    res r = call2(&fam_a, C_CREATE, 1, 9, 0, true);
    CHECK(r.st == APIGEN_OK);
    uint64_t id = r.out;
    r = call2(&fam_b, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 9);
    CHECK(fail_async_on(&fam_a, 42) == APIGEN_OK);
    r = call2(&fam_b, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_OK && !r.has_deferred);
    r = call2(&fam_a, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_OK && r.has_deferred && r.deferred == 42);
    r = call2(&fam_b, C_DESTROY, 1, id, 0, false);
    CHECK(r.st == APIGEN_OK);
    r = call2(&fam_a, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_BAD_HANDLE);
    return check_failures;
}

/* A member the server refuses (another fingerprint): its calls fail, the
 * family's other API goes on. */
static int scenario_family_badfp(void)
{
    res r = call2(&fam_a, C_CREATE, 1, 3, 0, true);
    CHECK(r.st == APIGEN_OK);
    apigen_call c;
    CHECK(!apigen_call_begin(&fam_b_badfp, &c, C_USE));
    CHECK(c.status == APIGEN_LOST);
    r = call2(&fam_b_badfp, C_USE, 1, r.out, 0, true);
    CHECK(r.st == APIGEN_LOST);
    r = call2(&fam_a, C_CREATE, 1, 4, 0, true);
    CHECK(r.st == APIGEN_OK);
    return check_failures;
}

static int scenario_badfp(void)
{
    apigen_call c;
    CHECK(!apigen_call_begin(&tapi_badfp, &c, C_ECHO));
    CHECK(c.status == APIGEN_LOST);
    res r = echo(&tapi_badfp, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

static int scenario_badver(void)
{
    tapi_badver.api_version = 12090;
    res r = echo(&tapi_badver, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

static int scenario_badname(void)
{
    res r = echo(&tapi_other, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

static int scenario_notoken(void)
{
    res r = echo(&tapi, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

static pid_t victim;

static int scenario_killed(void)
{
    int tag;
    CHECK(apigen_cb_register(&tapi, 0, (void *)on_cb, &tag, false) != 0);
    res r = echo(&tapi, 1, "x", true);
    CHECK(r.st == APIGEN_OK);
    CHECK(fail_async(3) == APIGEN_OK);
    CHECK(kill(victim, SIGKILL) == 0);
    r = echo(&tapi, 2, "y", false);
    CHECK(r.st == APIGEN_LOST);
    r = echo(&tapi, 3, "z", false);
    CHECK(r.st == APIGEN_LOST);
    CHECK(fail_async(3) == APIGEN_LOST);
    r = call2(&tapi, C_CREATE, 1, 1, 0, true);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

static int scenario_timeout(void)
{
    /* read at the first call, which must connect and answer within it: 2 s,
     * not a window a loaded 2-core machine under a sanitizer can miss (it
     * was 300 ms); the second call outlasts it twofold */
    setenv("APIGEN_TIMEOUT_MS", "2000", 1);
    res r = call2(&tapi, C_SLEEP, 1, 0, 0, false);
    CHECK(r.st == APIGEN_OK);
    r = call2(&tapi, C_SLEEP, 1, 4000, 0, false); /* the server outlasts the timeout */
    CHECK(r.st == APIGEN_LOST);
    r = echo(&tapi, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

/* fork() after connecting: the child gets a session of its own. */
static int scenario_fork(void)
{
    res r = call2(&tapi, C_CREATE, 1, 9, 0, true);
    CHECK(r.st == APIGEN_OK);
    uint64_t id = r.out;
    int tag;
    CHECK(apigen_cb_register(&tapi, 0, (void *)on_cb, &tag, false) != 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        check_failures = 0;
        res q = call2(&tapi, C_USE, 1, id, 0, true);
        CHECK(q.st == APIGEN_BAD_HANDLE); /* the parent's id means nothing here */
        q = echo(&tapi, 11, "child", true);
        CHECK(q.st == APIGEN_OK);
        q = call2(&tapi, C_CREATE, 1, 10, 0, true);
        CHECK(q.st == APIGEN_OK);
        q = call2(&tapi, C_USE, 1, q.out, 0, true);
        CHECK(q.st == APIGEN_OK && q.out == 10);
        exit(check_failures ? 1 : 0);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    r = call2(&tapi, C_USE, 1, id, 0, true);
    CHECK(r.st == APIGEN_OK && r.out == 9);
    r = echo(&tapi, 12, "parent", true);
    CHECK(r.st == APIGEN_OK);
    return check_failures;
}

static int scenario_nothing(void)
{
    res r = echo(&tapi, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    r = echo(&tapi, 1, "x", false);
    CHECK(r.st == APIGEN_LOST);
    return check_failures;
}

/* ======================= process plumbing ======================= */
static char dir[64];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[4096];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = 0;
        if (strstr(line, needle))
            n++;
        p = e ? e + 1 : NULL;
    }
    return n;
}

/* Runs fn in a guest child with APIGEN_SERVER=url; its stderr goes to log.
 * Returns the child's stderr text (caller frees). */
static char *run_guest(const char *name, const char *url, const char *token, int (*fn)(void), pid_t *async_pid)
{
    char log[128];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        close(fd);
        check_failures = 0;
        setenv("APIGEN_SERVER", url, 1);
        setenv("APIGEN_TIMEOUT_MS", "20000", 1);
        if (token)
            setenv("APIGEN_TOKEN", token, 1);
        else
            unsetenv("APIGEN_TOKEN");
        exit(fn() ? 1 : 0);
    }
    if (async_pid) {
        *async_pid = pid;
        return NULL;
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char *text = slurp(log);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "guest scenario '%s' on %s failed (status 0x%x); its stderr:\n%s\n", name, url, st, text);
        check_failures++;
    }
    return text;
}

/* Starts a server process; fills the urls it logged as listening. */
static pid_t start_server(const char *name, char **argv, char urls[][256], int nurls)
{
    char log[128];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        close(fd);
        int argc = 0;
        while (argv[argc])
            argc++;
        const apigen_api *apis[] = {&tapi}, *fam[] = {&fam_a, &fam_b};
        if (strncmp(name, "family", 6) == 0) /* the family's server */
            exit(apigen_server_main(argc, argv, fam, 2));
        exit(apigen_server_main(argc, argv, apis, 1));
    }
    for (int tries = 0; tries < 2000; tries++) {
        char *text = slurp(log);
        int found = 0;
        for (const char *p = text; (p = strstr(p, "listening on ")) && found < nurls; found++) {
            p += strlen("listening on ");
            size_t n = strcspn(p, " \n");
            snprintf(urls[found], 256, "%.*s", (int)n, p);
        }
        free(text);
        if (found == nurls)
            return pid;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "server %s exited early:\n%s\n", name, slurp(log));
            return -1;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "server %s never listened\n", name);
    kill(pid, SIGKILL);
    return -1;
}

/* The server closed: EOF, or a reset when it left our bytes unread. */
static bool closed_by_server(apigen_conn *c)
{
    char err[256];
    uint8_t b;
    apigen_tp_result r = apigen_tp_recv(c, &b, 1, 20000, err, sizeof err);
    return r == APIGEN_TP_EOF || r == APIGEN_TP_ERROR;
}

/* Raw bytes at the server: a malformed frame closes only that connection. */
static void hostile_frames(const char *url)
{
    char err[256];
    apigen_conn *c;
    uint8_t junk[64];
    memset(junk, 0x5a, sizeof junk);
    /* 1: bad magic */
    CHECK(apigen_tp_connect(url, 5000, &c, err, sizeof err));
    CHECK(apigen_tp_send_buf(c, junk, sizeof junk, 5000, err, sizeof err));
    CHECK(closed_by_server(c));
    apigen_tp_close(c);
    /* 2: a header announcing 4 GiB */
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_HELLO, 0, 0, 0, UINT32_MAX, 0};
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, hb);
    CHECK(apigen_tp_connect(url, 5000, &c, err, sizeof err));
    CHECK(apigen_tp_send_buf(c, hb, sizeof hb, 5000, err, sizeof err));
    CHECK(closed_by_server(c));
    apigen_tp_close(c);
    /* 3: a truncated handshake, then close */
    h.payload_len = 100;
    apigen_hdr_encode(&h, hb);
    CHECK(apigen_tp_connect(url, 5000, &c, err, sizeof err));
    CHECK(apigen_tp_send_buf(c, hb, sizeof hb, 5000, err, sizeof err));
    CHECK(apigen_tp_send_buf(c, junk, 10, 5000, err, sizeof err));
    apigen_tp_close(c);
    /* 4: a handshake whose strings are garbage -> refused with a message */
    apigen_wr w;
    size_t off;
    apigen_wr_init(&w);
    CHECK(rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, APIGEN_PROTO_VERSION) && apigen_put_u8(&w, 1) &&
          apigen_put_u64(&w, UINT64_MAX - 3) && rt_wr_end_frame(&w, off, APIGEN_F_HELLO, 0, 0, 0));
    CHECK(apigen_tp_connect(url, 5000, &c, err, sizeof err));
    CHECK(apigen_tp_send_buf(c, w.buf, w.len, 5000, err, sizeof err));
    uint8_t *buf = NULL;
    size_t cap = 0;
    bool eof;
    CHECK(rt_recv_frame(c, &h, &buf, &cap, 65536, 20000, &eof, err, sizeof err));
    apigen_rd rd;
    uint32_t st = 0;
    const char *msg = NULL;
    apigen_rd_init(&rd, buf, h.payload_len);
    CHECK(apigen_get_u32(&rd, &st) && st == RT_HELLO_MALFORMED && apigen_get_str(&rd, &msg, 4096));
    CHECK_CONTAINS(msg, "malformed handshake: buffer length exceeds");
    free(buf);
    apigen_tp_close(c);
    apigen_wr_free(&w);
    /* 5: wrong protocol version in the handshake */
    apigen_wr_init(&w);
    CHECK(rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, 77) && rt_wr_end_frame(&w, off, APIGEN_F_HELLO, 0, 0, 0));
    CHECK(apigen_tp_connect(url, 5000, &c, err, sizeof err));
    CHECK(apigen_tp_send_buf(c, w.buf, w.len, 5000, err, sizeof err));
    buf = NULL;
    cap = 0;
    CHECK(rt_recv_frame(c, &h, &buf, &cap, 65536, 20000, &eof, err, sizeof err));
    apigen_rd_init(&rd, buf, h.payload_len);
    CHECK(apigen_get_u32(&rd, &st) && st == RT_HELLO_PROTO && apigen_get_str(&rd, &msg, 4096));
    char want[96];
    snprintf(want, sizeof want, "protocol version mismatch: guest speaks 77, server speaks %d",
             APIGEN_PROTO_VERSION);
    CHECK_CONTAINS(msg, want);
    free(buf);
    apigen_tp_close(c);
    apigen_wr_free(&w);
}

/* Device ranges, in process: a check that hit the thread's cache must not
 * outlive the range (freed, taken by a destroy call, the session gone), nor
 * pass an extent or an owner the range would not. */
static void dev_ranges(void)
{
    static const apigen_api api = {.name = "tdev"};
    int sa, sb; /* stand-ins for two sessions: only their addresses are used */
    struct apigen_session *a = (struct apigen_session *)&sa, *b = (struct apigen_session *)&sb;
    apigen_call_ctx cx = {.api = &api, .session = a, .status = APIGEN_OK};
    const uint64_t base = 0x7f0000100000ull;
    CHECK(apigen_dev_add(&cx, base, 4096));
    for (int round = 0; round < 2; round++) { /* the second round hits the cache */
        CHECK(apigen_dev_owned(a, base + 16, 64, true));
        CHECK(apigen_dev_owned(a, base + 4095, 0, false));
        CHECK(!apigen_dev_owned(a, base + 4032, 65, true)); /* past the end */
        CHECK(!apigen_dev_owned(a, base + 4096, 0, false));
        CHECK(!apigen_dev_owned(b, base + 16, 0, false));   /* another session's */
        /* the edges exactly: the last byte in, one past out; an empty extent
         * at one past the end is inside (a zero-byte copy there) */
        CHECK(apigen_dev_owned(a, base + 4095, 1, true));
        CHECK(!apigen_dev_owned(a, base + 4095, 2, true));
        CHECK(!apigen_dev_owned(a, base + 4096, 1, true));
        CHECK(apigen_dev_owned(a, base, 4096, true));
        CHECK(!apigen_dev_owned(a, base, 4097, true));
        CHECK(!apigen_dev_owned(a, base - 1, 1, true));
        CHECK(!apigen_dev_owned(a, base - 1, 0, true));
        CHECK(apigen_dev_owned(a, base + 4096, 0, true));
        CHECK(apigen_dev_owned(a, base, 0, true));
        CHECK(!apigen_dev_owned(a, base + 4097, 0, true));
        CHECK(!apigen_dev_owned(b, base + 4096, 0, true));
        CHECK(!apigen_dev_owned(a, base + 4032, UINT64_MAX, true)); /* no wrap-around */
        /* the handlers' check: the same edges; a zero-byte extent anywhere
         * touches no memory and goes to the real library */
        cx.status = APIGEN_OK;
        CHECK(apigen_dev_check(&cx, base + 4095, 1, true, "p") && cx.status == APIGEN_OK);
        CHECK(apigen_dev_check(&cx, base + 4096, 0, true, "p") && cx.status == APIGEN_OK);
        CHECK(apigen_dev_check(&cx, base + (1u << 20), 0, true, "p") && cx.status == APIGEN_OK);
        CHECK(!apigen_dev_check(&cx, base + 4096, 1, true, "p") && cx.status == APIGEN_BAD_DEVPTR);
        cx.status = APIGEN_OK;
        CHECK(!apigen_dev_check(&cx, base + 4095, 2, true, "p") && cx.status == APIGEN_BAD_DEVPTR);
        cx.status = APIGEN_OK;
        CHECK(!apigen_dev_check(&cx, base + 4096, 0, false, "p") && cx.status == APIGEN_BAD_DEVPTR);
        cx.status = APIGEN_OK;
    }
    /* taken by a destroy call that failed: back again; that succeeded: gone */
    CHECK(apigen_dev_take(&cx, base + 8, "p"));
    CHECK(!apigen_dev_owned(a, base + 16, 0, false));
    apigen_dev_end(&cx, false);
    CHECK(apigen_dev_owned(a, base + 16, 0, false));
    CHECK(apigen_dev_take(&cx, base, "p"));
    apigen_dev_end(&cx, true);
    CHECK(!apigen_dev_owned(a, base + 16, 0, false));
    CHECK(apigen_dev_check(&cx, base + 16, 0, false, "p") == false && cx.status == APIGEN_BAD_DEVPTR);
    /* an allocation over a stale range of another session takes it away */
    cx.status = APIGEN_OK;
    CHECK(apigen_dev_add(&cx, base, 4096));
    CHECK(apigen_dev_owned(a, base + 16, 0, false));
    apigen_call_ctx cb = {.api = &api, .session = b, .status = APIGEN_OK};
    CHECK(apigen_dev_add(&cb, base, 64));
    CHECK(!apigen_dev_owned(a, base + 16, 0, false));
    CHECK(apigen_dev_owned(b, base + 16, 0, false));
    /* the session goes: its ranges go with it */
    rt_dev_release_session(b, NULL);
    CHECK(!apigen_dev_owned(b, base + 16, 0, false));
    rt_dev_release_session(a, NULL);
    CHECK(rt_dev_count() == 0);
}

/* The guest's ranges (route.c) behind apigen_vouch_dev: a range noted twice
 * (a replay whose threads hold at once the address their recorded threads
 * held one after the other) stays until it is forgotten twice; another range
 * at the same base (memory reused after a free the guest missed) replaces it. */
static void guest_dev_ranges(void)
{
    static const apigen_api api = {.name = "tgdev"};
    apigen_call c = {.api = &api, .server = 0};
    const uint64_t base = 0x7f0000200000ull;
    CHECK(!apigen_vouch_dev(&c, base));
    apigen_dev_note(&api, 0, base, 1024);
    apigen_dev_note(&api, 0, base, 1024);
    CHECK(apigen_vouch_dev(&c, base + 1023) && !apigen_vouch_dev(&c, base + 1024));
    apigen_dev_forget(&api, 0, base);
    CHECK(apigen_vouch_dev(&c, base + 16));
    apigen_dev_forget(&api, 0, base);
    CHECK(!apigen_vouch_dev(&c, base + 16));
    apigen_dev_note(&api, 0, base, 1024);
    apigen_dev_note(&api, 0, base, 4096); /* replaces: one forget ends it */
    CHECK(apigen_vouch_dev(&c, base + 4095));
    apigen_dev_forget(&api, 0, base);
    CHECK(!apigen_vouch_dev(&c, base + 16));
}

/* Guest side: a copy that runs past a range the guest noted is refused
 * before any host memory is read (apigen_dev_overruns); what the guest never
 * noted is left to the server. */
static void dev_overruns(void)
{
    static const char *const names[] = {"tCopy"};
    static const apigen_api api = {.name = "tguestdev", .ncalls = 1, .call_names = names};
    const uint64_t base = 0x7f0000200000ull;
    apigen_dev_note(&api, 0, base, 4096);
    apigen_call c;
    memset(&c, 0, sizeof c);
    c.api = &api;
    c.server = 0;
    CHECK(!apigen_dev_overruns(&c, base + 16, 64, "dst"));
    CHECK(!apigen_dev_overruns(&c, base, 4096, "dst"));          /* to the end exactly */
    CHECK(apigen_dev_overruns(&c, base, 4097, "dst"));           /* one byte past */
    CHECK(!apigen_dev_overruns(&c, base + 4095, 1, "dst"));      /* the last byte */
    CHECK(apigen_dev_overruns(&c, base + 4095, 2, "dst"));
    CHECK(!apigen_dev_overruns(&c, base + 4096, 0, "dst"));      /* empty, at the end */
    CHECK(!apigen_dev_overruns(&c, base + 4096, 1, "dst"));      /* not noted: the server says */
    CHECK(apigen_dev_overruns(&c, base + 4032, 1u << 30, "dst")); /* driver_basic's oversized copy */
    CHECK(!apigen_dev_overruns(&c, base + 4096, 1u << 30, "dst")); /* not noted: the server says */
    CHECK(!apigen_dev_overruns(&c, 0, 1u << 30, "dst"));
    apigen_dev_forget(&api, 0, base);
    CHECK(!apigen_dev_overruns(&c, base, 4097, "dst"));          /* freed: no longer known */
}

/* The handshake's two versions (runtime/hello.c): version 2 as older guests
 * send it, version 3 with the guest's pid and name and a tag the server does
 * not know; malformed extensions refused; both canonicalize alike. */
static size_t hello_bytes(apigen_wr *w, uint32_t ver, bool v3_ext, uint32_t pid_len, bool unknown)
{
    static const uint8_t key[RT_KEY_LEN] = {1, 2, 3};
    uint8_t pid[8] = {0x39, 0x30}; /* 12345 */
    apigen_wr_reset(w);
    bool ok = apigen_put_u32(w, ver) && apigen_put_str(w, "tapi") && apigen_put_u64(w, 0x1234) &&
              apigen_put_u8(w, 0) && apigen_put_raw(w, key, RT_KEY_LEN) && apigen_put_str(w, NULL);
    if (ver == 2)
        ok = ok && apigen_put_u64(w, 7);
    else
        ok = ok && apigen_put_u64(w, 7) && apigen_put_u64(w, 0);
    if (v3_ext)
        ok = ok && (!unknown || (apigen_put_u32(w, 99) && apigen_put_bytes(w, "zz", 2))) &&
             apigen_put_u32(w, RT_HELLO_TAG_PID) && apigen_put_bytes(w, pid, pid_len) &&
             apigen_put_u32(w, RT_HELLO_TAG_COMM) && apigen_put_bytes(w, "my\napp\"\x80", 8);
    CHECK(ok);
    return w->len;
}

static void hello_versions(void)
{
    apigen_wr w, c2, c3;
    apigen_wr_init(&w);
    apigen_wr_init(&c2);
    apigen_wr_init(&c3);
    rt_hello h;
    const char *err;
    size_t n = hello_bytes(&w, 2, false, 8, false);
    CHECK(rt_hello_parse(w.buf, n, &h, &err) == RT_HELLO_OK && h.proto == 2 && h.api_version == 7 &&
          h.pid == 0 && h.comm[0] == 0 && strcmp(h.name, "tapi") == 0);
    CHECK(rt_hello_canon(&h, &c2));
    CHECK(c2.len == n && memcmp(c2.buf, w.buf, n) == 0); /* a version-2 hello is its own canon */
    n = hello_bytes(&w, RT_HELLO_V3, true, 8, true);
    CHECK(rt_hello_parse(w.buf, n, &h, &err) == RT_HELLO_OK && h.proto == 3 && h.api_version == 7 &&
          h.arena_size == 0 && h.pid == 12345);
    CHECK_STR(h.comm, "my?app\"?"); /* printable kept (escaped in a label), the rest '?' */
    CHECK(rt_hello_canon(&h, &c3));
    CHECK(c3.len == c2.len && memcmp(c3.buf, c2.buf, c2.len) == 0);
    n = hello_bytes(&w, RT_HELLO_V3, true, 4, false); /* a pid of 4 bytes */
    CHECK(rt_hello_parse(w.buf, n, &h, &err) == RT_HELLO_MALFORMED && err);
    n = hello_bytes(&w, RT_HELLO_V3, false, 8, false);
    CHECK(rt_hello_parse(w.buf, n - 3, &h, &err) == RT_HELLO_MALFORMED); /* cut in its arena size */
    CHECK(rt_hello_parse(w.buf, n, &h, &err) == RT_HELLO_OK && h.pid == 0);
    n = hello_bytes(&w, 4, false, 8, false);
    CHECK(rt_hello_parse(w.buf, n, &h, &err) == RT_HELLO_PROTO && h.proto == 4);
    apigen_wr_free(&w);
    apigen_wr_free(&c2);
    apigen_wr_free(&c3);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/apigen-unit-rt-%d", (int)getpid());
    mkdir(dir, 0700);
    signal(SIGPIPE, SIG_IGN);
    hello_versions();
    dev_ranges();
    guest_dev_ranges();
    dev_overruns();
    char sock[128], listen_unix[160], listen_shm[64];
    snprintf(sock, sizeof sock, "%s/s1.sock", dir);
    snprintf(listen_unix, sizeof listen_unix, "unix://%s", sock);
    snprintf(listen_shm, sizeof listen_shm, "shm://apigen-unit-rt-%d", (int)getpid());

    char *argv1[] = {"apigen-server", "--listen", listen_unix, "--listen", "tcp://127.0.0.1:0",
                     "--listen", listen_shm, "--max-arg", "1M", NULL};
    char urls[3][256];
    pid_t srv = start_server("server1", argv1, urls, 3);
    CHECK(srv > 0);
    if (srv <= 0)
        CHECK_DONE();
    fprintf(stderr, "server 1 on %s, %s and %s\n", urls[0], urls[1], urls[2]);

    for (int u = 0; u < 3; u++) {
        free(run_guest("basic", urls[u], NULL, scenario_basic, NULL));

        /* session isolation: A's handle id means nothing in B */
        CHECK(pipe(pipe_a) == 0 && pipe(pipe_b) == 0);
        pid_t a;
        run_guest("session_a", urls[u], NULL, scenario_session_a, &a);
        CHECK(read(pipe_a[0], &foreign_id, sizeof foreign_id) == sizeof foreign_id);
        CHECK(foreign_id >= 0x1000);
        free(run_guest("session_b", urls[u], NULL, scenario_session_b, NULL));
        CHECK(write(pipe_b[1], "x", 1) == 1);
        int st;
        waitpid(a, &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        close(pipe_a[0]); close(pipe_a[1]); close(pipe_b[0]); close(pipe_b[1]);

        free(run_guest("fork", urls[u], NULL, scenario_fork, NULL));
        free(run_guest("order", urls[u], NULL, scenario_order, NULL));
        free(run_guest("cleanup", urls[u], NULL, scenario_cleanup, NULL));
    }

    /* a reply that does not come within APIGEN_TIMEOUT_MS: lost, no hang */
    char *t = run_guest("timeout", urls[0], NULL, scenario_timeout, NULL);
    CHECK(count_lines(t, "apigen[") == 1);
    CHECK_CONTAINS(t, "waiting for the reply to tSleep");
    /* the line names its side, process and program (log.c) */
    CHECK_CONTAINS(t, "apigen[guest ");
    CHECK_CONTAINS(t, " unit_runtime]: ");
    CHECK_CONTAINS(t, "within 2000 ms");
    free(t);

    /* fingerprint and API-name mismatches: refused, one clear line each side */
    t = run_guest("badfp", urls[0], NULL, scenario_badfp, NULL);
    CHECK(count_lines(t, "apigen[") == 1);
    CHECK_CONTAINS(t, "API 'tapi' fingerprint mismatch: guest 0x0000000000009999, server 0x0000000000001234");
    CHECK_CONTAINS(t, urls[0]);
    free(t);
    t = run_guest("badver", urls[0], NULL, scenario_badver, NULL);
    CHECK(count_lines(t, "apigen[") == 1);
    CHECK_CONTAINS(t, "API 'tapi' version mismatch: guest built for tapi 12090, server is tapi (no version)");
    free(t);
    t = run_guest("badname", urls[1], NULL, scenario_badname, NULL);
    CHECK(count_lines(t, "apigen[") == 1);
    CHECK_CONTAINS(t, "API 'nope' is not served here (server serves: tapi)");
    free(t);

    /* a family's server: two APIs over one session; a member refused by name */
    {
        char fsock[160], flisten[200], furls[1][256];
        snprintf(fsock, sizeof fsock, "%s/fam.sock", dir);
        snprintf(flisten, sizeof flisten, "unix://%s", fsock);
        char *fargv[] = {"apigen-server", "--listen", flisten, NULL};
        pid_t fsrv = start_server("family_server", fargv, furls, 1);
        CHECK(fsrv > 0);
        if (fsrv > 0) {
            t = run_guest("family", furls[0], NULL, scenario_family, NULL);
            CHECK(count_lines(t, "apigen[") == 0);
            free(t);
            t = run_guest("family_badfp", furls[0], NULL, scenario_family_badfp, NULL);
            CHECK(count_lines(t, "apigen[") == 1);
            CHECK_CONTAINS(t, "fb: server refused the connection: API 'fb' fingerprint mismatch: "
                              "guest 0x0000000000003333, server 0x0000000000002222");
            CHECK_CONTAINS(t, "every fb call fails, the other APIs of family tfam go on");
            free(t);
            kill(fsrv, SIGTERM);
            waitpid(fsrv, NULL, 0);
        }
    }

    hostile_frames(urls[0]);
    hostile_frames(urls[1]);
    hostile_frames(urls[2]);
    free(run_guest("after_hostile", urls[1], NULL, scenario_cleanup, NULL));
    free(run_guest("after_hostile_shm", urls[2], NULL, scenario_cleanup, NULL));

    /* SIGTERM: clean exit, socket file removed */
    CHECK(kill(srv, SIGTERM) == 0);
    int st;
    waitpid(srv, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    struct stat sb;
    CHECK(stat(sock, &sb) < 0);
    char *slog = slurp((snprintf(sock, sizeof sock, "%s/server1.log", dir), sock));
    CHECK_CONTAINS(slog, "refused");
    CHECK_CONTAINS(slog, "fingerprint mismatch: guest 0x0000000000009999, server 0x0000000000001234");
    CHECK_CONTAINS(slog, "version mismatch: guest built for tapi 12090, server is tapi (no version)");
    CHECK_CONTAINS(slog, "bad magic");
    CHECK_CONTAINS(slog, "payload too large");
    CHECK_CONTAINS(slog, "tUnsupported");
    CHECK_CONTAINS(slog, "shutting down");
    free(slog);

    /* server 2: token required; then killed under a guest */
    char tokfile[128], listen2[160];
    snprintf(tokfile, sizeof tokfile, "%s/token", dir);
    FILE *f = fopen(tokfile, "w");
    fputs("s3cret\n", f);
    fclose(f);
    snprintf(listen2, sizeof listen2, "unix://%s/s2.sock", dir);
    char *argv2[] = {"apigen-server", "--listen", listen2, "--token-file", tokfile, NULL};
    char urls2[1][256];
    victim = start_server("server2", argv2, urls2, 1);
    CHECK(victim > 0);
    if (victim > 0) {
        t = run_guest("notoken", urls2[0], NULL, scenario_notoken, NULL);
        CHECK(count_lines(t, "apigen[") == 1);
        CHECK_CONTAINS(t, "authentication failed: no token sent");
        free(t);
        t = run_guest("wrongtoken", urls2[0], "guess", scenario_notoken, NULL);
        CHECK_CONTAINS(t, "authentication failed: wrong token");
        free(t);
        t = run_guest("killed", urls2[0], "s3cret", scenario_killed, NULL);
        CHECK(count_lines(t, "apigen[") == 1);
        CHECK(count_lines(t, "lost connection to unix://") == 1);
        CHECK_CONTAINS(t, listen2);
        free(t);
        waitpid(victim, &st, 0);
        CHECK(WIFSIGNALED(st));
    }

    /* nothing listening at all */
    t = run_guest("nothing", listen2, NULL, scenario_nothing, NULL);
    CHECK(count_lines(t, "apigen[") == 1);
    CHECK_CONTAINS(t, "cannot connect to");
    free(t);

    if (!check_failures && !getenv("APIGEN_UNIT_KEEP")) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    } else {
        fprintf(stderr, "logs kept in %s\n", dir);
    }
    CHECK_DONE();
}
