/* The shared-memory arena (runtime/arena_guest.c, arena_host.c): a guest
 * session over unix:// and shm:// (threads and --isolation process) passes
 * its memfd at the handshake; a buffer argument inside it reaches the
 * handler as a pointer into the server's mapping (no bytes on the wire),
 * writes the server makes there are the guest's bytes, an offset outside the
 * arena is rejected, strings never resolve in it, tcp:// has no arena
 * (plain memory, bytes), and an API that did not call apigen_arena_accept
 * declines it. The server registers the segments the guest's allocator
 * opens, when it opens them, never the whole arena (segments()). */
#define _GNU_SOURCE
#include "apigen_rt.h"
#include "rt_internal.h"
#include "check.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { C_SUM, C_FILL, C_STR, C_PINS, C_DECLINE, NCALLS };

/* The server's registrations (apigen_set_host_memory hooks standing in for
 * the accelerator's): what is registered now, and how many were made. */
static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { void *p; size_t n; } pins[64];
static int npins, pins_made, decline; /* decline: refuse that many registrations */

static bool fake_pin(void *p, size_t n)
{
    pthread_mutex_lock(&pin_mu);
    bool ok = npins < 64 && decline == 0;
    if (decline > 0)
        decline--;
    if (ok) {
        pins[npins].p = p;
        pins[npins++].n = n;
        pins_made++;
    }
    pthread_mutex_unlock(&pin_mu);
    return ok;
}

static void fake_unpin(void *p)
{
    pthread_mutex_lock(&pin_mu);
    for (int i = 0; i < npins; i++)
        if (pins[i].p == p) {
            pins[i] = pins[--npins];
            break;
        }
    pthread_mutex_unlock(&pin_mu);
}

/* -> u32 0, u32 registrations made, u32 n, n x (u64 address, u64 size) */
static void h_pins(apigen_call_ctx *cx)
{
    if (!apigen_rd_done(cx->rd)) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "trailing bytes");
        return;
    }
    apigen_result(cx, 0);
    pthread_mutex_lock(&pin_mu);
    bool ok = apigen_put_u32(cx->wr, 0) && apigen_put_u32(cx->wr, (uint32_t)pins_made) &&
              apigen_put_u32(cx->wr, (uint32_t)npins);
    for (int i = 0; ok && i < npins; i++)
        ok = apigen_put_u64(cx->wr, (uint64_t)(uintptr_t)pins[i].p) &&
             apigen_put_u64(cx->wr, pins[i].n);
    pthread_mutex_unlock(&pin_mu);
}

/* bytes -> u32 0, u64 hash, u64 the address the handler got */
static void h_sum(apigen_call_ctx *cx)
{
    const void *p;
    uint64_t n, h = 1469598103934665603ull;
    if (!apigen_get_bytes(cx->rd, &p, &n, cx->budget) || !apigen_rd_done(cx->rd)) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "buf");
        return;
    }
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    apigen_result(cx, 0);
    if (!apigen_put_u32(cx->wr, 0) || !apigen_put_u64(cx->wr, h) ||
        !apigen_put_u64(cx->wr, (uint64_t)(uintptr_t)p))
        return;
}

/* u64 server address, u64 n, u8 value: memset there (a test API trusts it) */
static void h_fill(apigen_call_ctx *cx)
{
    uint64_t a, n;
    uint8_t v;
    if (!apigen_get_u64(cx->rd, &a) || !apigen_get_u64(cx->rd, &n) || !apigen_get_u8(cx->rd, &v)) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "args");
        return;
    }
    memset((void *)(uintptr_t)a, v, (size_t)n);
    apigen_result(cx, 0);
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

/* a string -> u32 0 */
static void h_str(apigen_call_ctx *cx)
{
    const char *s;
    if (!apigen_get_str(cx->rd, &s, 1u << 20) || !apigen_rd_done(cx->rd)) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "s");
        return;
    }
    apigen_result(cx, 0);
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

/* u32 n: the next n registrations are declined -> u32 0 */
static void h_decline(apigen_call_ctx *cx)
{
    uint32_t n;
    if (!apigen_get_u32(cx->rd, &n) || !apigen_rd_done(cx->rd)) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "n");
        return;
    }
    pthread_mutex_lock(&pin_mu);
    decline = (int)n;
    pthread_mutex_unlock(&pin_mu);
    apigen_result(cx, 0);
    if (!apigen_put_u32(cx->wr, 0))
        return;
}

static const apigen_handler_fn handlers[NCALLS] = {h_sum, h_fill, h_str, h_pins, h_decline};
static const char *const call_names[NCALLS] = {"aSum", "aFill", "aStr", "aPins", "aDecline"};
static const apigen_api aapi = {.name = "arena", .fingerprint = 0x5a5a, .ncalls = NCALLS,
                                .call_names = call_names, .handlers = handlers, .success_value = 0,
                                .status_error = {0, 101, 102, 103, 104, 105, 106, 107}};

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* aSum over [p, p+n) sent with apigen_put_bytes_ref (what generated stubs do) */
static apigen_status sum(const void *p, size_t n, uint64_t *hash, uint64_t *addr)
{
    apigen_call c;
    if (!apigen_call_begin(&aapi, &c, C_SUM))
        return c.status;
    CHECK(apigen_put_bytes_ref(c.wr, p, n));
    apigen_status st = apigen_call_sync(&c);
    uint32_t ret = 1;
    if (st == APIGEN_OK)
        CHECK(apigen_get_u32(&c.rd, &ret) && ret == 0 && apigen_get_u64(&c.rd, hash) &&
              apigen_get_u64(&c.rd, addr) && apigen_rd_done(&c.rd));
    apigen_call_end(&c);
    return st;
}

static apigen_status raw_ref(uint64_t len, uint64_t off)
{
    apigen_call c;
    if (!apigen_call_begin(&aapi, &c, C_SUM))
        return c.status;
    CHECK(apigen_put_u64(c.wr, len | RT_ARENA_BIT) && apigen_put_u64(c.wr, off));
    apigen_status st = apigen_call_sync(&c);
    apigen_call_end(&c);
    return st;
}

/* aStr given an arena reference as its string: apigen_get_str refuses it. */
static apigen_status raw_str_ref(uint64_t off)
{
    apigen_call c;
    if (!apigen_call_begin(&aapi, &c, C_STR))
        return c.status;
    CHECK(apigen_put_u8(c.wr, 1) && apigen_put_u64(c.wr, 8 | RT_ARENA_BIT) && apigen_put_u64(c.wr, off));
    apigen_status st = apigen_call_sync(&c);
    apigen_call_end(&c);
    return st;
}

/* apigen_graph_host (arena_shadow.c): arena memory as it is; other memory
 * through a shadow with the same layout whose fill and drain move the rows
 * only, never the gaps between them (pitched rows, 3D slices). */
static void graph_host(uint8_t *arena_block, uint64_t srv)
{
    apigen_graph_host_t gh;
    CHECK(apigen_graph_host(&aapi, arena_block + 64, 48, 37, 5, 1, 240, &gh) == APIGEN_GRAPH_HOST_OK &&
          !gh.shadow && gh.local == arena_block + 64 && gh.peer == srv + 64);
    /* 2 slices of 5 rows of 37 bytes, 48 apart, slices 6 rows apart */
    enum { P = 48, W = 37, H = 5, D = 2, SL = 6 * P, SPAN = SL + 4 * P + W };
    uint8_t *user = malloc(SL * 2), *orig = malloc(SL * 2);
    for (int i = 0; i < SL * 2; i++)
        user[i] = orig[i] = (uint8_t)(i * 7 + 3);
    CHECK(apigen_graph_host(&aapi, user, P, W, H, D, SL, &gh) == APIGEN_GRAPH_HOST_OK && gh.shadow &&
          apigen_arena_owns(gh.local) && gh.local != user &&
          gh.peer == apigen_arena_peer_addr(&aapi, gh.local, SPAN));
    if (gh.shadow) {
        uint8_t *sh = gh.local;
        memset(sh, 0x11, SPAN);
        apigen_shadow_fill(gh.shadow);
        int bad = 0;
        for (int i = 0; i < SPAN; i++) {
            bool row = i % SL < H * P && i % P < W;
            bad += row ? sh[i] != user[i] : sh[i] != 0x11;
        }
        CHECK(bad == 0);
        memset(sh, 0xcd, SPAN); /* what the device wrote */
        apigen_shadow_drain(gh.shadow);
        bad = 0;
        for (int i = 0; i < SL * 2; i++) {
            bool row = i < SPAN && i % SL < H * P && i % P < W;
            bad += row ? user[i] != 0xcd : user[i] != orig[i];
        }
        CHECK(bad == 0);
        apigen_shadow_drop(gh.shadow);
    }
    /* layouts no copy has */
    CHECK(apigen_graph_host(&aapi, user, 16, 17, 1, 1, 16, &gh) == APIGEN_GRAPH_HOST_BAD);
    CHECK(apigen_graph_host(&aapi, user, 16, 16, 0, 1, 16, &gh) == APIGEN_GRAPH_HOST_BAD);
    CHECK(apigen_graph_host(&aapi, user, 16, 16, 4, 2, 32, &gh) == APIGEN_GRAPH_HOST_BAD);
    CHECK(apigen_graph_host(&aapi, user, UINT64_MAX / 2, 1, 3, 1, 1, &gh) == APIGEN_GRAPH_HOST_BAD);
    free(user);
    free(orig);
}

typedef struct pinset {
    uint32_t made, n;
    uint64_t at[64], size[64];
} pinset;

static bool pins_now(pinset *ps)
{
    apigen_call c;
    uint32_t ret = 1;
    memset(ps, 0, sizeof *ps);
    if (!apigen_call_begin(&aapi, &c, C_PINS))
        return false;
    bool ok = apigen_call_sync(&c) == APIGEN_OK && apigen_get_u32(&c.rd, &ret) && ret == 0 &&
              apigen_get_u32(&c.rd, &ps->made) && apigen_get_u32(&c.rd, &ps->n) && ps->n <= 64;
    for (uint32_t i = 0; ok && i < ps->n; i++)
        ok = apigen_get_u64(&c.rd, &ps->at[i]) && apigen_get_u64(&c.rd, &ps->size[i]);
    apigen_call_end(&c);
    return ok;
}

static bool set_decline(uint32_t n)
{
    apigen_call c;
    uint32_t ret = 1;
    if (!apigen_call_begin(&aapi, &c, C_DECLINE))
        return false;
    bool ok = apigen_put_u32(c.wr, n) && apigen_call_sync(&c) == APIGEN_OK &&
              apigen_get_u32(&c.rd, &ret) && ret == 0;
    apigen_call_end(&c);
    return ok;
}

/* whether the server has [at, at + size) registered as one registration */
static bool pinned_as(const pinset *ps, uint64_t at, uint64_t size)
{
    for (uint32_t i = 0; i < ps->n; i++)
        if (ps->at[i] == at && ps->size[i] == size)
            return true;
    return false;
}

/* Registration in segments (arena_guest.c): an allocation registers the
 * segment it opens before it returns (2 MiB at least), never the whole
 * arena, and no copy or reference registers anything; blocks that fit an
 * open segment register nothing; a new segment that finds no room first
 * unregisters the segments with no block left. The arena is 64 MiB. */
static void segments(void)
{
    pinset ps;
    const uint64_t M = 1u << 20;
    /* a declined registration (a pending error, no context) is tried again at a use */
    CHECK(set_decline(1));
    uint8_t *a = apigen_arena_alloc(44); /* opens a 2 MiB segment */
    CHECK(a != NULL && pins_now(&ps) && ps.made == 0 && ps.n == 0);
    if (!a)
        return;
    uint64_t pa = apigen_arena_peer_addr(&aapi, a, 44), h, at;
    memset(a, 3, 44);
    CHECK(sum(a, 44, &h, &at) == APIGEN_OK && at == pa && pins_now(&ps));
    CHECK(ps.made == 1 && ps.n == 1 && pinned_as(&ps, pa, 2 * M));
    CHECK(sum(a, 44, &h, &at) == APIGEN_OK && at == pa); /* a use of a registered one: nothing */
    uint8_t *b = apigen_arena_alloc(M); /* fits the open segment */
    CHECK(b == a + 4096 && pins_now(&ps) && ps.made == 1 && ps.n == 1);
    uint8_t *c = apigen_arena_alloc(M); /* does not (1 MiB - 4 KiB left): a new one */
    uint64_t pc = c ? apigen_arena_peer_addr(&aapi, c, M) : 0;
    CHECK(c && pins_now(&ps) && ps.made == 2 && ps.n == 2 && pinned_as(&ps, pc, 2 * M));
    uint8_t *big = apigen_arena_alloc(40 * M); /* 4 + 40 of 64 MiB in segments */
    uint64_t pbig = big ? apigen_arena_peer_addr(&aapi, big, 40 * M) : 0;
    CHECK(big && pins_now(&ps) && ps.made == 3 && pinned_as(&ps, pbig, 40 * M));
    CHECK(apigen_arena_alloc(30 * M) == NULL); /* 20 MiB left, no segment free */
    CHECK(big && apigen_arena_free(big));
    uint8_t *mid = apigen_arena_alloc(30 * M); /* inside the free 40 MiB segment */
    CHECK(mid == big && pins_now(&ps) && ps.made == 3);
    CHECK(mid && apigen_arena_free(mid));
    /* 50 MiB: the free 40 MiB segment goes, its space merges with the 20 */
    uint8_t *huge = apigen_arena_alloc(50 * M);
    uint64_t ph = huge ? apigen_arena_peer_addr(&aapi, huge, 50 * M) : 0;
    CHECK(huge && pins_now(&ps) && ps.made == 4 && ps.n == 3 && pinned_as(&ps, ph, 50 * M) &&
          !pinned_as(&ps, pbig, 40 * M));
    CHECK(huge && apigen_arena_free(huge));
    CHECK(apigen_arena_free(a) && apigen_arena_free(b) && apigen_arena_free(c));
}

static int guest(bool expect_arena)
{
    uint8_t small[100];
    uint64_t h, a;
    memset(small, 7, sizeof small);
    CHECK(sum(small, sizeof small, &h, &a) == APIGEN_OK && h == fnv(small, sizeof small));
    if (expect_arena)
        segments(); /* first: on a fresh arena */
    size_t n = 3u << 20;
    uint8_t *buf = apigen_arena_alloc(n);
    if (!expect_arena) {
        CHECK(buf == NULL);
        apigen_graph_host_t gh;
        CHECK(apigen_graph_host(&aapi, small, 10, 10, 1, 1, 10, &gh) == APIGEN_GRAPH_HOST_NO_ARENA &&
              !gh.shadow && !gh.peer);
        return check_failures;
    }
    CHECK(buf != NULL && apigen_arena_owns(buf) && ((uintptr_t)buf & 4095) == 0);
    if (!buf)
        return check_failures;
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)(i * 31 + 5);
    /* the whole block and an unaligned piece: the handler reads our bytes in place */
    uint64_t srv = apigen_arena_peer_addr(&aapi, buf, n);
    CHECK(srv != 0);
    CHECK(sum(buf, n, &h, &a) == APIGEN_OK && h == fnv(buf, n) && a == srv);
    CHECK(sum(buf + 13, 1000, &h, &a) == APIGEN_OK && h == fnv(buf + 13, 1000) && a == srv + 13);
    /* plain memory still travels as bytes */
    uint8_t *plain = malloc(n);
    memcpy(plain, buf, n);
    CHECK(sum(plain, n, &h, &a) == APIGEN_OK && h == fnv(buf, n) && a != srv);
    free(plain);
    /* what the server writes into its mapping is in our memory */
    apigen_call c;
    CHECK(apigen_call_begin(&aapi, &c, C_FILL));
    CHECK(apigen_put_u64(c.wr, srv + 4096) && apigen_put_u64(c.wr, 8192) && apigen_put_u8(c.wr, 0xab));
    CHECK(apigen_call_sync(&c) == APIGEN_OK);
    apigen_call_end(&c);
    CHECK(buf[4095] == (uint8_t)(4095 * 31 + 5) && buf[4096] == 0xab && buf[4096 + 8191] == 0xab &&
          buf[4096 + 8192] == (uint8_t)((4096 + 8192) * 31 + 5));
    graph_host(buf, srv);
    /* a reference outside the arena is rejected; the session goes on */
    CHECK(raw_ref(16, 1ull << 40) == APIGEN_BAD_ARGS);
    CHECK(raw_ref(1ull << 40, 0) == APIGEN_BAD_ARGS);
    CHECK(sum(small, sizeof small, &h, &a) == APIGEN_OK && h == fnv(small, sizeof small));
    /* a string argument never resolves in the arena (checked, then used) */
    CHECK(raw_str_ref(16) == APIGEN_BAD_ARGS);
    /* blocks come back */
    uint8_t *b2 = apigen_arena_alloc(4096);
    CHECK(b2 && b2 != buf);
    CHECK(apigen_arena_free(buf) && !apigen_arena_free(buf) && !apigen_arena_free(small));
    uint8_t *b3 = apigen_arena_alloc(n);
    CHECK(b3 == buf);
    CHECK(apigen_arena_free(b3) && apigen_arena_free(b2));
    CHECK(apigen_arena_alloc((size_t)1 << 40) == NULL);
    return check_failures;
}

static int run(const char *iso, const char *scheme, bool expect_arena, bool accept)
{
    char dir[] = "/tmp/apigen-arena-XXXXXX", url[300], log[300];
    CHECK(mkdtemp(dir) != NULL);
    if (strcmp(scheme, "unix") == 0)
        snprintf(url, sizeof url, "unix://%s/s.sock", dir);
    else if (strcmp(scheme, "shm") == 0)
        snprintf(url, sizeof url, "shm://apigen-arena-%d-%s", (int)getpid(), iso);
    else
        snprintf(url, sizeof url, "tcp://127.0.0.1:0");
    snprintf(log, sizeof log, "%s/server.log", dir);
    fflush(NULL);
    pid_t srv = fork();
    if (srv == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        close(fd);
        char *argv[] = {"srv", "--listen", url, "--isolation", (char *)iso, NULL};
        const apigen_api *apis[] = {&aapi};
        if (accept)
            apigen_arena_accept(&aapi);
        apigen_set_host_memory(fake_pin, fake_unpin);
        exit(apigen_server_main(5, argv, apis, 1));
    }
    char real[300] = "";
    for (int i = 0; i < 2000 && !real[0]; i++) {
        FILE *f = fopen(log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "%*[^l]listening on %299s", real) == 1)
                break;
        if (f)
            fclose(f);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    CHECK(real[0] != 0);
    fflush(NULL);
    pid_t g = fork();
    if (g == 0) {
        setenv("APIGEN_SERVER", real, 1);
        setenv("APIGEN_ARENA", "64M", 1);
        exit(guest(expect_arena) ? 1 : 0);
    }
    int st = 0;
    waitpid(g, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "guest on %s (--isolation %s) failed (0x%x); server log %s\n", real, iso, st, log);
        check_failures++;
    }
    kill(srv, SIGTERM);
    waitpid(srv, &st, 0);
    if (!check_failures) {
        unlink(log);
        char sock[320];
        snprintf(sock, sizeof sock, "%s/s.sock", dir);
        unlink(sock);
        rmdir(dir);
    }
    return check_failures;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    run("thread", "unix", true, true);
    run("thread", "shm", true, true);
    run("thread", "tcp", false, true);
    run("process", "unix", true, true);
    run("process", "shm", true, true);
    run("thread", "shm", false, false); /* an API that takes no arena */
    if (check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}
