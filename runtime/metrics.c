/* The server's Prometheus endpoint (apigen-server --metrics tcp://ADDR:PORT):
 * counter blocks, sessions, the scrape's text, and one small HTTP thread.
 * rt_metrics.h says how counting stays cheap; docs/internals.md "Metrics"
 * lists the families. */
#define _GNU_SOURCE
#include "rt_metrics.h"
#include "rt_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MX_SLOTS 16          /* counter blocks per session process (slot 0: shared by the rest) */
#define MX_HOOKS 16
#define MX_APIS 16           /* APIs one server serves, at most */
#define HTTP_MAX_REQ 8192    /* request head bytes read at most */
#define HTTP_TIMEOUT_MS 2000 /* a whole request, and a whole response */
#define COLLECT_TIMEOUT_MS 5000
#define COLLECT_MAX (1u << 20)

bool rt_mx_on;
bool rt_mx_tsc;
uint64_t rt_mx_bound[RT_MX_NB];
static const double mx_le[RT_MX_NB] = {1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 1e-2, 1e-1, 1};
static double mx_tick_s = 1e-9; /* seconds per tick */

struct rt_mx_sess {
    uint64_t id, pid;
    char comm[32], peer[64];
    _Atomic uint64_t devmem;
    _Atomic bool devtracked;
};

/* Lanes (lanes.c): lane connections the server took into use, and the bulk
 * bytes that travelled over them each way. Atomic adds: many connections
 * count here, once per transfer (megabytes), not per call. */
typedef struct mx_lanes {
    _Atomic uint64_t opened, in, out;
} mx_lanes;

/* A session process's shared mapping: its record, then MX_SLOTS counter
 * blocks (mx_stride counters each: every served API's, at its offset). The
 * parent reads numbers from it, never pointers. */
typedef struct mx_shared {
    struct rt_mx_sess sess;
    uint8_t used[MX_SLOTS]; /* the child's own bookkeeping */
    _Atomic uint32_t slots; /* blocks ever taken, 0 included: the parent reads no more (untouched
                               pages of the mapping stay unallocated) */
    mx_lanes lanes;         /* the session process's lanes */
    rt_mx_call c[];
} mx_shared;

struct rt_mx_seg { /* parent-private (the child has its copy) */
    struct rt_mx_seg *next;
    mx_shared *sh;
    size_t len;
    const apigen_api *api;
    pid_t pid;
};

/* A connection's counter block (--isolation thread): mx_stride counters,
 * every served API's at its offset, since one connection of a family's
 * session carries the calls of every API of the family */
typedef struct mx_blk {
    struct mx_blk *next;
    rt_mx_call *c;
    bool used;
} mx_blk;

typedef struct mx_snode {
    struct mx_snode *next;
    const apigen_api *api;
    struct rt_mx_sess s;
} mx_snode;

typedef struct mx_api {
    const apigen_api *api;
    uint32_t off;        /* its counters' offset in every block */
    uint64_t *ended;     /* [ncalls * 13]: counts of session processes reaped */
    uint64_t sessions_ended;
} mx_api;

static pthread_mutex_t mx_mu = PTHREAD_MUTEX_INITIALIZER;
static mx_api *mx_apis;
static unsigned mx_napis;
static uint32_t mx_stride;          /* counters per block: the served APIs' calls */
static rt_mx_call *mx_shared_blk;   /* for connections that got no block of their own */
static mx_blk *mx_blks;
static mx_snode *mx_sessions;
static struct rt_mx_seg *mx_segs;
static uint64_t mx_next_id;
static struct rt_mx_seg *mx_self; /* a session process: its mapping */
static mx_lanes mx_lanes_here;    /* this process's lanes (--isolation thread) */
static uint64_t mx_lanes_ended[3]; /* of reaped session processes (under mx_mu) */

typedef struct mx_hook {
    const apigen_api *api;
    void (*fn)(apigen_metrics_out *o);
} mx_hook;
static mx_hook mx_hooks[MX_HOOKS];
static void stop_child(void);
static unsigned mx_nhooks;

struct apigen_metrics_out {
    char *p;
    size_t len, cap;
    bool failed;
};

/* ---- text ----------------------------------------------------------------------- */
static void out_add(apigen_metrics_out *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->cap - o->len < n + 1) {
        size_t nc = o->cap ? o->cap : 4096;
        while (nc - o->len < n + 1)
            nc *= 2;
        char *p = realloc(o->p, nc);
        if (!p) {
            o->failed = true;
            return;
        }
        o->p = p;
        o->cap = nc;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = 0;
}

void apigen_metrics_printf(apigen_metrics_out *o, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        out_add(o, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        o->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out_add(o, big, (size_t)n);
    free(big);
}

void apigen_metrics_hook(const apigen_api *api, void (*hook)(apigen_metrics_out *o))
{
    /* called from constructors, before main: no lock needed */
    if (mx_nhooks < MX_HOOKS)
        mx_hooks[mx_nhooks++] = (mx_hook){api, hook};
}

/* A label value: printable ASCII, quotes and backslashes escaped. */
static void put_label(apigen_metrics_out *o, const char *s, size_t max)
{
    for (size_t i = 0; i < max && s[i]; i++) {
        char c = s[i];
        if (c == '"' || c == '\\')
            out_add(o, "\\", 1);
        if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
            c = '?';
        out_add(o, &c, 1);
    }
}

/* The host part of a transport's peer name ("tcp://1.2.3.4:5" -> 1.2.3.4);
 * "local" for unix:// and shm:// clients. */
static void peer_host(const char *peer, char *out, size_t cap)
{
    const char *p = strstr(peer, "://");
    if (!p || strncmp(peer, "client of ", 10) == 0) {
        snprintf(out, cap, "local");
        return;
    }
    p += 3;
    size_t n;
    if (*p == '[') {
        p++;
        n = strcspn(p, "]");
    } else {
        const char *colon = strrchr(p, ':');
        n = colon ? (size_t)(colon - p) : strlen(p);
    }
    snprintf(out, cap, "%.*s", (int)n, p);
}

static void sess_fill(struct rt_mx_sess *s, uint64_t id, const char *peer, uint64_t pid,
                      const char *comm)
{
    s->id = id;
    s->pid = pid;
    snprintf(s->comm, sizeof s->comm, "%s", comm ? comm : "");
    peer_host(peer ? peer : "", s->peer, sizeof s->peer);
}

/* ---- counter blocks --------------------------------------------------------------- */
static mx_api *api_of(const apigen_api *api)
{
    for (unsigned i = 0; i < mx_napis; i++)
        if (mx_apis[i].api == api)
            return &mx_apis[i];
    return NULL;
}

uint32_t rt_mx_off(const apigen_api *api)
{
    mx_api *a = api_of(api);
    return a ? a->off : UINT32_MAX;
}

void rt_mx_claim(rt_mx_slot *s)
{
    memset(s, 0, sizeof *s);
    if (!rt_mx_on)
        return;
    pthread_mutex_lock(&mx_mu);
    if (mx_self) {
        mx_shared *sh = mx_self->sh;
        for (unsigned k = 1; k < MX_SLOTS && !s->c; k++)
            if (!sh->used[k]) {
                sh->used[k] = 1;
                if (atomic_load_explicit(&sh->slots, memory_order_relaxed) < k + 1)
                    atomic_store_explicit(&sh->slots, k + 1, memory_order_relaxed);
                s->c = sh->c + (size_t)k * mx_stride;
                s->owner = &sh->used[k];
            }
        if (!s->c) {
            s->c = sh->c;
            s->shared = true;
        }
    } else {
        mx_blk *b = mx_blks;
        while (b && b->used)
            b = b->next;
        if (!b && (b = calloc(1, sizeof *b))) {
            if ((b->c = calloc(mx_stride, sizeof *b->c))) {
                b->next = mx_blks;
                mx_blks = b;
            } else {
                free(b);
                b = NULL;
            }
        }
        if (b) {
            b->used = true;
            s->c = b->c;
            s->owner = b;
        } else {
            s->c = mx_shared_blk;
            s->shared = true;
        }
    }
    pthread_mutex_unlock(&mx_mu);
}

void rt_mx_unclaim(rt_mx_slot *s)
{
    if (!s->owner)
        return;
    pthread_mutex_lock(&mx_mu);
    if (mx_self)
        *(uint8_t *)s->owner = 0;
    else
        ((mx_blk *)s->owner)->used = false;
    pthread_mutex_unlock(&mx_mu);
    s->owner = NULL;
    s->c = NULL;
}

/* ---- sessions --------------------------------------------------------------------- */
struct rt_mx_sess *rt_mx_session_open(const apigen_api *api, const char *peer, uint64_t pid,
                                      const char *comm)
{
    if (!rt_mx_on)
        return NULL;
    if (mx_self)
        return &mx_self->sh->sess; /* the parent filled it in */
    mx_snode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->api = api;
    pthread_mutex_lock(&mx_mu);
    sess_fill(&n->s, ++mx_next_id, peer, pid, comm);
    n->next = mx_sessions;
    mx_sessions = n;
    pthread_mutex_unlock(&mx_mu);
    return &n->s;
}

void rt_mx_session_close(struct rt_mx_sess *m)
{
    if (!m || mx_self)
        return;
    pthread_mutex_lock(&mx_mu);
    for (mx_snode **pp = &mx_sessions; *pp; pp = &(*pp)->next)
        if (&(*pp)->s == m) {
            mx_snode *n = *pp;
            *pp = n->next;
            mx_api *a = api_of(n->api);
            if (a)
                a->sessions_ended++;
            free(n);
            break;
        }
    pthread_mutex_unlock(&mx_mu);
}

void rt_mx_devmem(struct rt_mx_sess *m, int64_t delta)
{
    if (!m)
        return;
    atomic_store_explicit(&m->devtracked, true, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->devmem, (uint64_t)delta, memory_order_relaxed);
}

void rt_mx_lanes(uint64_t opened, uint64_t in, uint64_t out)
{
    if (!rt_mx_on)
        return;
    mx_lanes *l = mx_self ? &mx_self->sh->lanes : &mx_lanes_here;
    if (opened)
        atomic_fetch_add_explicit(&l->opened, opened, memory_order_relaxed);
    if (in)
        atomic_fetch_add_explicit(&l->in, in, memory_order_relaxed);
    if (out)
        atomic_fetch_add_explicit(&l->out, out, memory_order_relaxed);
}

static void lanes_into(uint64_t t[3], const mx_lanes *l)
{
    t[0] += atomic_load_explicit(&l->opened, memory_order_relaxed);
    t[1] += atomic_load_explicit(&l->in, memory_order_relaxed);
    t[2] += atomic_load_explicit(&l->out, memory_order_relaxed);
}

/* ---- session processes ------------------------------------------------------------ */
struct rt_mx_seg *rt_mx_seg_new(const apigen_api *api, const char *peer, uint64_t pid,
                                const char *comm)
{
    if (!rt_mx_on)
        return NULL;
    struct rt_mx_seg *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->api = api;
    g->len = sizeof(mx_shared) + (size_t)MX_SLOTS * mx_stride * sizeof(rt_mx_call);
    g->sh = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g->sh == MAP_FAILED) {
        free(g);
        return NULL;
    }
    pthread_mutex_lock(&mx_mu);
    sess_fill(&g->sh->sess, ++mx_next_id, peer, pid, comm);
    pthread_mutex_unlock(&mx_mu);
    return g;
}

void rt_mx_seg_child(struct rt_mx_seg *g)
{
    /* single-threaded now: another thread of the parent may have held the
     * lock at the fork; nothing of the parent's lists is ours */
    pthread_mutex_init(&mx_mu, NULL);
    mx_blks = NULL;
    mx_sessions = NULL;
    mx_segs = NULL;
    mx_self = g;
    stop_child();
}

void rt_mx_seg_add(struct rt_mx_seg *g, pid_t pid)
{
    if (!g)
        return;
    g->pid = pid;
    pthread_mutex_lock(&mx_mu);
    g->next = mx_segs;
    mx_segs = g;
    pthread_mutex_unlock(&mx_mu);
}

void rt_mx_seg_free(struct rt_mx_seg *g)
{
    if (!g)
        return;
    munmap(g->sh, g->len);
    free(g);
}

#define MX_FIELDS (5 + RT_MX_NB)
static void sum_into(uint64_t *t, const rt_mx_call *c, uint32_t ncalls)
{
    for (uint32_t i = 0; i < ncalls; i++) {
        const _Atomic uint64_t *f = &c[i].calls;
        for (unsigned k = 0; k < MX_FIELDS; k++)
            t[(size_t)i * MX_FIELDS + k] += atomic_load_explicit(&f[k], memory_order_relaxed);
    }
}

/* Blocks of g that may hold counts (the child's word for it, bounded). */
static unsigned seg_slots(const struct rt_mx_seg *g)
{
    uint32_t n = atomic_load_explicit(&g->sh->slots, memory_order_relaxed);
    return n < 1 ? 1 : n > MX_SLOTS ? MX_SLOTS : n;
}

void rt_mx_seg_end(pid_t pid)
{
    if (!rt_mx_on || pid <= 0)
        return;
    pthread_mutex_lock(&mx_mu);
    for (struct rt_mx_seg **pp = &mx_segs; *pp; pp = &(*pp)->next) {
        struct rt_mx_seg *g = *pp;
        if (g->pid != pid)
            continue;
        *pp = g->next;
        for (unsigned i = 0; i < mx_napis; i++) {
            mx_api *a = &mx_apis[i];
            for (unsigned k = 0; k < seg_slots(g); k++)
                sum_into(a->ended, g->sh->c + (size_t)k * mx_stride + a->off, a->api->ncalls);
            a->sessions_ended += a->api == g->api;
        }
        lanes_into(mx_lanes_ended, &g->sh->lanes);
        rt_mx_seg_free(g);
        break;
    }
    pthread_mutex_unlock(&mx_mu);
}

/* ---- the scrape ---------------------------------------------------------------------- */
/* Counts of api: its blocks, what ended session processes left, live ones. */
static uint64_t *totals(const mx_api *a)
{
    uint32_t n = a->api->ncalls;
    uint64_t *t = calloc((size_t)n * MX_FIELDS + 1, sizeof *t);
    if (!t)
        return NULL;
    for (size_t i = 0; i < (size_t)n * MX_FIELDS; i++)
        t[i] = a->ended[i];
    sum_into(t, mx_shared_blk + a->off, n);
    for (mx_blk *b = mx_blks; b; b = b->next)
        sum_into(t, b->c + a->off, n);
    for (struct rt_mx_seg *g = mx_segs; g; g = g->next)
        for (unsigned k = 0; k < seg_slots(g); k++)
            sum_into(t, g->sh->c + (size_t)k * mx_stride + a->off, n);
    return t;
}

static const char *fn_name(const apigen_api *api, uint32_t i)
{
    return api->call_names && api->call_names[i] ? api->call_names[i] : NULL;
}

static void family(apigen_metrics_out *o, const char *name, const char *type, const char *help)
{
    apigen_metrics_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void per_call(apigen_metrics_out *o, uint64_t *const *t, const char *name, unsigned field,
                     double scale)
{
    for (unsigned a = 0; a < mx_napis; a++) {
        const apigen_api *api = mx_apis[a].api;
        for (uint32_t i = 0; t[a] && i < api->ncalls; i++) {
            const uint64_t *r = t[a] + (size_t)i * MX_FIELDS;
            if (!r[0] || !fn_name(api, i))
                continue;
            if (scale)
                apigen_metrics_printf(o, "%s{api=\"%s\",function=\"%s\"} %.9g\n", name, api->name,
                                      fn_name(api, i), (double)r[field] * scale);
            else
                apigen_metrics_printf(o, "%s{api=\"%s\",function=\"%s\"} %llu\n", name, api->name,
                                      fn_name(api, i), (unsigned long long)r[field]);
        }
    }
}

static void sess_lines(apigen_metrics_out *o, const char *api, const struct rt_mx_sess *s,
                       bool mem)
{
    /* s may be a session process's mapping: bounded reads only */
    if (mem && !atomic_load_explicit(&s->devtracked, memory_order_relaxed))
        return;
    apigen_metrics_printf(o, "%s{api=\"%s\",session=\"%llu\",pid=\"%llu\",process=\"", mem ?
                          "apigen_session_device_memory_bytes" : "apigen_session_info", api,
                          (unsigned long long)s->id, (unsigned long long)s->pid);
    put_label(o, s->comm, sizeof s->comm);
    out_add(o, "\",peer=\"", 8);
    put_label(o, s->peer, sizeof s->peer);
    apigen_metrics_printf(o, "\"} %llu\n", mem ? (unsigned long long)atomic_load_explicit(
                                                     &s->devmem, memory_order_relaxed)
                                               : 1ull);
}

static void run_hooks(apigen_metrics_out *o)
{
    for (unsigned i = 0; i < mx_nhooks; i++)
        for (unsigned a = 0; a < mx_napis; a++)
            if (mx_apis[a].api == mx_hooks[i].api)
                mx_hooks[i].fn(o);
}

static void collect(apigen_metrics_out *o);

static void scrape(apigen_metrics_out *o)
{
    uint64_t *t[MX_APIS] = {0};
    unsigned n = mx_napis;
    pthread_mutex_lock(&mx_mu);
    for (unsigned a = 0; a < n; a++)
        t[a] = totals(&mx_apis[a]);
    pthread_mutex_unlock(&mx_mu);

    family(o, "apigen_calls_total", "counter", "Calls the server ran, per API and function.");
    per_call(o, t, "apigen_calls_total", 0, 0);
    family(o, "apigen_call_errors_total", "counter",
           "Calls that returned an error value (the library's, or the server's refusal).");
    per_call(o, t, "apigen_call_errors_total", 1, 0);
    family(o, "apigen_call_received_bytes_total", "counter", "Request bytes (frame headers included).");
    per_call(o, t, "apigen_call_received_bytes_total", 2, 0);
    family(o, "apigen_call_sent_bytes_total", "counter",
           "Reply bytes (frame headers included; none for async calls).");
    per_call(o, t, "apigen_call_sent_bytes_total", 3, 0);
    family(o, "apigen_call_duration_seconds", "histogram",
           "Server time of a call, from its request received to its reply ready to send.");
    for (unsigned a = 0; a < n; a++) {
        const apigen_api *api = mx_apis[a].api;
        for (uint32_t i = 0; t[a] && i < api->ncalls; i++) {
            const uint64_t *r = t[a] + (size_t)i * MX_FIELDS;
            if (!r[0] || !fn_name(api, i))
                continue;
            uint64_t cum = 0;
            for (unsigned k = 0; k < RT_MX_NB; k++) {
                cum += r[5 + k];
                apigen_metrics_printf(o, "apigen_call_duration_seconds_bucket{api=\"%s\",function=\"%s\","
                                      "le=\"%g\"} %llu\n", api->name, fn_name(api, i), mx_le[k],
                                      (unsigned long long)cum);
            }
            apigen_metrics_printf(o, "apigen_call_duration_seconds_bucket{api=\"%s\",function=\"%s\","
                                  "le=\"+Inf\"} %llu\n", api->name, fn_name(api, i),
                                  (unsigned long long)r[0]);
            apigen_metrics_printf(o, "apigen_call_duration_seconds_sum{api=\"%s\",function=\"%s\"} %.9g\n",
                                  api->name, fn_name(api, i), (double)r[4] * mx_tick_s);
            apigen_metrics_printf(o, "apigen_call_duration_seconds_count{api=\"%s\",function=\"%s\"} %llu\n",
                                  api->name, fn_name(api, i), (unsigned long long)r[0]);
        }
    }
    for (unsigned a = 0; a < n; a++)
        free(t[a]);

    pthread_mutex_lock(&mx_mu);
    family(o, "apigen_sessions_open", "gauge", "Guest sessions being served.");
    for (unsigned a = 0; a < mx_napis; a++) {
        unsigned open = 0;
        for (mx_snode *s = mx_sessions; s; s = s->next)
            open += s->api == mx_apis[a].api;
        for (struct rt_mx_seg *g = mx_segs; g; g = g->next)
            open += g->api == mx_apis[a].api;
        apigen_metrics_printf(o, "apigen_sessions_open{api=\"%s\"} %u\n", mx_apis[a].api->name, open);
    }
    family(o, "apigen_sessions_ended_total", "counter", "Guest sessions that ended.");
    for (unsigned a = 0; a < mx_napis; a++)
        apigen_metrics_printf(o, "apigen_sessions_ended_total{api=\"%s\"} %llu\n", mx_apis[a].api->name,
                              (unsigned long long)mx_apis[a].sessions_ended);
    /* lanes: this process's, reaped session processes', live ones' */
    uint64_t ln[3] = {mx_lanes_ended[0], mx_lanes_ended[1], mx_lanes_ended[2]};
    lanes_into(ln, &mx_lanes_here);
    for (struct rt_mx_seg *g = mx_segs; g; g = g->next)
        lanes_into(ln, &g->sh->lanes);
    family(o, "apigen_lanes_opened_total", "counter",
           "Lane connections taken into use: extra tcp connections of a guest thread that carry its large transfers.");
    apigen_metrics_printf(o, "apigen_lanes_opened_total %llu\n", (unsigned long long)ln[0]);
    family(o, "apigen_lane_received_bytes_total", "counter",
           "Bulk bytes received over lanes (also in apigen_call_received_bytes_total, which counts frames whole).");
    apigen_metrics_printf(o, "apigen_lane_received_bytes_total %llu\n", (unsigned long long)ln[1]);
    family(o, "apigen_lane_sent_bytes_total", "counter", "Bulk bytes sent over lanes.");
    apigen_metrics_printf(o, "apigen_lane_sent_bytes_total %llu\n", (unsigned long long)ln[2]);
    for (int mem = 0; mem < 2; mem++) {
        if (mem)
            family(o, "apigen_session_device_memory_bytes", "gauge",
                   "Device memory a session holds (its live allocations), where the API tracks them.");
        else
            family(o, "apigen_session_info", "gauge",
                   "One per open session: its number, the guest's pid and process name, its peer.");
        for (mx_snode *s = mx_sessions; s; s = s->next)
            sess_lines(o, s->api->name, &s->s, mem);
        for (struct rt_mx_seg *g = mx_segs; g; g = g->next)
            sess_lines(o, g->api->name, &g->sh->sess, mem);
    }
    pthread_mutex_unlock(&mx_mu);
    collect(o);
}

/* ---- the API hooks' collector (--isolation process) ------------------------------- */
/* The parent of session processes never loads the vendor library's state
 * (docs/internals.md "Process isolation"): hooks run in a process of their
 * own, forked before any thread exists (and again after it died), which
 * answers each request byte with u32 length + text. */
static bool col_isolate;
static int col_sock = -1;
static pid_t col_pid, col_last;

static void col_close_fds(int keep)
{
    DIR *d = opendir("/proc/self/fd");
    int fds[1024], n = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) && n < 1024) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > 2 && fd != keep &&
                fd != dirfd(d) && fd != rt_trace_fd())
                fds[n++] = fd;
        }
        closedir(d);
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

static bool full_io(int fd, void *p, size_t n, bool wr, int timeout_ms)
{
    uint64_t until = apigen_now_ns() + (uint64_t)timeout_ms * 1000000u;
    size_t done = 0;
    while (done < n) {
        int64_t left = (int64_t)(until - apigen_now_ns()) / 1000000;
        struct pollfd pf = {fd, wr ? POLLOUT : POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
            if (left > 0 && errno == EINTR)
                continue;
            return false;
        }
        ssize_t k = wr ? send(fd, (char *)p + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                       : recv(fd, (char *)p + done, n - done, MSG_DONTWAIT);
        if (k == 0 && !wr)
            return false;
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return false;
        if (k > 0)
            done += (size_t)k;
    }
    return true;
}

static void col_main(int sock)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    col_close_fds(sock);
    for (;;) {
        char c;
        ssize_t k = read(sock, &c, 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            _exit(0); /* the server is gone */
        apigen_metrics_out o = {0};
        run_hooks(&o);
        uint32_t n = o.failed || o.len > COLLECT_MAX ? 0 : (uint32_t)o.len;
        if (!full_io(sock, &n, 4, true, COLLECT_TIMEOUT_MS) ||
            (n && !full_io(sock, o.p, n, true, COLLECT_TIMEOUT_MS)))
            _exit(1);
        free(o.p);
    }
}

static bool col_spawn(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        col_main(sv[1]);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        apigen_log("metrics: cannot start the collector process: %s", strerror(errno));
        return false;
    }
    col_sock = sv[0];
    col_pid = col_last = pid;
    return true;
}

pid_t rt_mx_collector_pid(void)
{
    return col_last;
}

static void collect(apigen_metrics_out *o)
{
    if (!mx_nhooks)
        return;
    if (!col_isolate) {
        run_hooks(o);
        return;
    }
    if (col_sock < 0 && !col_spawn())
        return;
    char c = 1;
    uint32_t n = 0;
    char *buf = NULL;
    bool ok = full_io(col_sock, &c, 1, true, COLLECT_TIMEOUT_MS) &&
              full_io(col_sock, &n, 4, false, COLLECT_TIMEOUT_MS) && n <= COLLECT_MAX &&
              (buf = malloc(n ? n : 1)) && full_io(col_sock, buf, n, false, COLLECT_TIMEOUT_MS);
    if (ok) {
        out_add(o, buf, n);
    } else {
        /* stuck or dead: a new one next time (the server's SIGCHLD reaper collects it) */
        apigen_log("metrics: the collector process %ld did not answer; starting another at the next scrape",
                   (long)col_pid);
        kill(col_pid, SIGKILL);
        close(col_sock);
        col_sock = -1;
        col_pid = 0;
        apigen_metrics_printf(o, "# the API metrics collector did not answer\n");
    }
    free(buf);
}

/* ---- HTTP ------------------------------------------------------------------------------ */
static int http_fd = -1, http_stop[2] = {-1, -1};
static pthread_t http_thr;
static bool http_running;

static void http_reply(int fd, int minor, int code, const char *reason, const char *type,
                       const char *body, size_t blen, bool head)
{
    char h[256];
    int n = snprintf(h, sizeof h,
                     "HTTP/1.%d %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n", minor, code, reason, type, blen);
    if (full_io(fd, h, (size_t)n, true, HTTP_TIMEOUT_MS) && !head && blen)
        (void)full_io(fd, (void *)body, blen, true, HTTP_TIMEOUT_MS);
}

/* A whole request head arrived (req[len] = 0): the answer, sent within
 * HTTP_TIMEOUT_MS. */
static void http_answer(int fd, const char *req)
{
    char method[16], path[512];
    int minor = -1, used = 0;
    static const char bad[] = "bad request (try GET /metrics)\n";
    if (sscanf(req, "%15[A-Z] %511[^ \r\n] HTTP/1.%1d%n", method, path, &minor, &used) != 3 ||
        (req[used] != '\r' && req[used] != '\n')) {
        http_reply(fd, 1, 400, "Bad Request", "text/plain", bad, sizeof bad - 1, false);
        return;
    }
    bool head = strcmp(method, "HEAD") == 0;
    if (!head && strcmp(method, "GET") != 0) {
        static const char m[] = "only GET /metrics\n";
        http_reply(fd, minor, 405, "Method Not Allowed", "text/plain", m, sizeof m - 1, false);
        return;
    }
    path[strcspn(path, "?")] = 0;
    if (strcmp(path, "/metrics") != 0) {
        static const char m[] = "not found (the metrics are at /metrics)\n";
        http_reply(fd, minor, 404, "Not Found", "text/plain", m, sizeof m - 1, head);
        return;
    }
    apigen_metrics_out o = {0};
    scrape(&o);
    if (o.failed) {
        static const char m[] = "out of memory\n";
        http_reply(fd, minor, 500, "Internal Server Error", "text/plain", m, sizeof m - 1, head);
    } else {
        http_reply(fd, minor, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", o.p ? o.p : "",
                   o.len, head);
    }
    free(o.p);
}

/* Clients whose request head is still coming, read side by side so that a
 * silent or slow one delays nobody; each is dropped at its deadline. More
 * wait in the listen backlog. */
#define HTTP_CONNS 16
typedef struct hconn {
    int fd;
    size_t len;
    uint64_t until;
    char req[HTTP_MAX_REQ + 1];
} hconn;

static void hconn_end(hconn *c)
{
    shutdown(c->fd, SHUT_WR);
    close(c->fd);
    c->fd = -1;
}

static void *http_main(void *arg)
{
    (void)arg;
    static hconn cs[HTTP_CONNS];
    for (unsigned i = 0; i < HTTP_CONNS; i++)
        cs[i].fd = -1;
    for (;;) {
        struct pollfd pf[HTTP_CONNS + 2];
        unsigned idx[HTTP_CONNS], n = 0, free_slots = 0;
        uint64_t now = apigen_now_ns(), next = UINT64_MAX;
        for (unsigned i = 0; i < HTTP_CONNS; i++) {
            if (cs[i].fd >= 0 && now >= cs[i].until)
                hconn_end(&cs[i]); /* slow or half-open: dropped */
            if (cs[i].fd < 0) {
                free_slots++;
                continue;
            }
            next = cs[i].until < next ? cs[i].until : next;
            idx[n] = i;
            pf[n++] = (struct pollfd){cs[i].fd, POLLIN, 0};
        }
        pf[n] = (struct pollfd){http_stop[0], POLLIN, 0};
        pf[n + 1] = (struct pollfd){http_fd, POLLIN, 0};
        int timeout = next == UINT64_MAX ? -1 : (int)((next - now) / 1000000 + 1);
        if (poll(pf, n + (free_slots ? 2 : 1), timeout) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pf[n].revents)
            break;
        for (unsigned k = 0; k < n; k++) {
            hconn *c = &cs[idx[k]];
            if (!pf[k].revents)
                continue;
            ssize_t r = recv(c->fd, c->req + c->len, HTTP_MAX_REQ - c->len, MSG_DONTWAIT);
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (r <= 0) {
                hconn_end(c);
                continue;
            }
            c->len += (size_t)r;
            c->req[c->len] = 0;
            if (memmem(c->req, c->len, "\r\n\r\n", 4) || memmem(c->req, c->len, "\n\n", 2)) {
                http_answer(c->fd, c->req);
                hconn_end(c);
            } else if (c->len == HTTP_MAX_REQ) {
                static const char m[] = "request head too large\n";
                http_reply(c->fd, 1, 431, "Request Header Fields Too Large", "text/plain", m,
                           sizeof m - 1, false);
                hconn_end(c);
            }
        }
        if (free_slots && pf[n + 1].revents) {
            int fd = accept4(http_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                struct timespec ts = {0, 10000000}; /* e.g. out of fds: do not spin */
                nanosleep(&ts, NULL);
                continue;
            }
            for (unsigned i = 0; i < HTTP_CONNS; i++)
                if (cs[i].fd < 0) {
                    cs[i].fd = fd;
                    cs[i].len = 0;
                    cs[i].until = apigen_now_ns() + (uint64_t)HTTP_TIMEOUT_MS * 1000000u;
                    break;
                }
        }
    }
    for (unsigned i = 0; i < HTTP_CONNS; i++)
        if (cs[i].fd >= 0)
            hconn_end(&cs[i]);
    return NULL;
}

static bool tsc_setup(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* only an invariant TSC counts time (CPUID 0x80000007 EDX bit 8) */
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
    if (a < 0x80000007u)
        return false;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
    if (!(d & (1u << 8)))
        return false;
    uint64_t n0 = apigen_now_ns(), t0 = __builtin_ia32_rdtsc();
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    uint64_t n1 = apigen_now_ns(), t1 = __builtin_ia32_rdtsc();
    if (t1 <= t0 || n1 <= n0)
        return false;
    mx_tick_s = (double)(n1 - n0) * 1e-9 / (double)(t1 - t0);
    return true;
#else
    return false;
#endif
}

static bool listen_url(const char *url, char *shown, size_t cap)
{
    if (strncmp(url, "tcp://", 6) != 0) {
        apigen_log("--metrics %s: give tcp://ADDR:PORT (e.g. tcp://127.0.0.1:9400)", url);
        return false;
    }
    char host[256], port[16];
    const char *h = url + 6, *colon;
    size_t hl;
    if (*h == '[') {
        const char *e = strchr(h, ']');
        if (!e || e[1] != ':') {
            apigen_log("--metrics %s: expected tcp://[ADDR]:PORT", url);
            return false;
        }
        hl = (size_t)(e - h - 1);
        h++;
        colon = e + 1;
    } else {
        colon = strrchr(h, ':');
        hl = colon ? (size_t)(colon - h) : 0;
    }
    if (!colon || hl == 0 || hl >= sizeof host || strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof port) {
        apigen_log("--metrics %s: expected tcp://ADDR:PORT", url);
        return false;
    }
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(port, sizeof port, "%s", colon + 1);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int e = getaddrinfo(host, port, &hints, &res);
    if (e) {
        apigen_log("--metrics %s: %s", url, gai_strerror(e));
        return false;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 16) != 0) {
        apigen_log("--metrics %s: %s", url, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return false;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char nh[NI_MAXHOST], np[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, nh, sizeof nh, np, sizeof np,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(shown, cap, ss.ss_family == AF_INET6 ? "http://[%s]:%s/metrics" : "http://%s:%s/metrics",
                 nh, np);
    else
        snprintf(shown, cap, "%s", url);
    freeaddrinfo(res);
    http_fd = fd;
    return true;
}

bool rt_mx_start(const char *url, const apigen_api *const *apis, unsigned napis, bool isolate)
{
    if (napis > MX_APIS)
        napis = MX_APIS;
    rt_lanes_mx = rt_mx_lanes; /* lanes.c is common to both sides: the server's counts come here */
    mx_apis = calloc(napis, sizeof *mx_apis);
    if (!mx_apis)
        return false;
    for (unsigned i = 0; i < napis; i++) {
        uint32_t n = apis[i]->ncalls ? apis[i]->ncalls : 1;
        mx_apis[i].api = apis[i];
        mx_apis[i].off = mx_stride;
        mx_stride += n;
        mx_apis[i].ended = calloc((size_t)n * MX_FIELDS, sizeof(uint64_t));
        if (!mx_apis[i].ended) {
            apigen_log("--metrics: out of memory");
            return false;
        }
    }
    mx_shared_blk = calloc(mx_stride, sizeof(rt_mx_call));
    if (!mx_shared_blk) {
        apigen_log("--metrics: out of memory");
        return false;
    }
    mx_napis = napis;
    rt_mx_tsc = tsc_setup();
    for (unsigned k = 0; k < RT_MX_NB; k++)
        rt_mx_bound[k] = (uint64_t)(mx_le[k] / mx_tick_s);
    col_isolate = isolate;
    bool hooked = false;
    for (unsigned i = 0; i < mx_nhooks; i++)
        hooked |= api_of(mx_hooks[i].api) != NULL;
    if (isolate && hooked)
        (void)col_spawn(); /* now, while this process has one thread */
    char shown[300];
    if (!listen_url(url, shown, sizeof shown) || pipe2(http_stop, O_CLOEXEC) != 0)
        return false;
    rt_mx_on = true;
    if (pthread_create(&http_thr, NULL, http_main, NULL) != 0) {
        apigen_log("--metrics: cannot start its thread");
        rt_mx_on = false;
        return false;
    }
    http_running = true;
    apigen_log("metrics on %s", shown);
    return true;
}

void rt_mx_stop(void)
{
    if (!http_running)
        return;
    (void)!write(http_stop[1], "x", 1);
    pthread_join(http_thr, NULL);
    http_running = false;
    close(http_fd);
    http_fd = -1;
    if (col_sock >= 0) {
        close(col_sock); /* the collector exits on EOF */
        col_sock = -1;
    }
}

/* A session process: the parent's endpoint is not ours. Its thread did not
 * survive the fork and close_inherited_fds closes its sockets. */
static void stop_child(void)
{
    http_running = false;
    http_fd = -1;
    col_sock = -1;
    col_pid = 0;
}
