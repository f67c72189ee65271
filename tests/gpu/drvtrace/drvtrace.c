/* drvtrace: a tracing libcuda.so.1. Every exported driver symbol is an asm
 * stub (syms.S) that tail-jumps to the same symbol of the real driver,
 * dlopen'ed by absolute path. cuGetProcAddress answers are swapped for our
 * own stubs so calls made through them are traced too; cuGetExportTable
 * answers are copied, each code pointer replaced by a logging stub.
 * Env: DRVTRACE_LOG (file, appended; default stderr), DRVTRACE_REAL (the real
 * driver), DRVTRACE_N (verbatim calls logged, default 2000), DRVTRACE_SLOT_N
 * (verbatim calls logged per table entry / anonymous function, default 64),
 * DRVTRACE_GPA_SLOT_N (the same for functions that cuGetProcAddress returns
 * but the driver does not export, default 8), DRVTRACE_RET (0: do not log
 * return values), DRVTRACE_NOWRAP ("all" or a
 * list of table UUIDs returned as they are: the runtime's integrity check
 * hashes some table addresses, so a copy may fail it), DRVTRACE_GPA_WRAP (0:
 * cuGetProcAddress answers are logged but returned as they are),
 * DRVTRACE_EXPTAB (a shared library whose apigen_cuda_export_table answers
 * cuGetExportTable instead of the real driver: apigen's tables tried with
 * NVIDIA's runtime over the real driver, tests/gpu/exptab-check.sh),
 * DRVTRACE_EXPTAB_REAL (UUIDs the real driver answers even so: which
 * refused table a failing case needs), DRVTRACE_MEM (1: the 16 bytes at each
 * pointer argument after every call, not only table entries: what each call
 * wrote, to compare a run over another libcuda.so.1 with a native one).
 * Log lines: "pid tid event ...". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "syms.inc"

#define NO_DEVICE 100 /* what a driver without a usable GPU answers */
#define MAX_TABLES 64
#define MAX_TABLE_WORDS 256
#define SHADOW_DEPTH 128
#define SCAN_WORDS 64 /* f8cff951 holds 37 words in six sections (CUDA 13.2) */

struct regs { /* layout written by SAVE_ARGS in tramp.S */
    uint64_t rdi, rsi, rdx, rcx, r8, r9, rax, pad;
    uint8_t xmm[8][16];
};

/* Shared with tramp.S and syms.S; hidden so the asm calls them directly. */
#define HIDDEN __attribute__((visibility("hidden")))
extern char drvtrace_sym_base[] HIDDEN, drvtrace_dyn_pool[] HIDDEN;
HIDDEN void drvtrace_ret_thunk(void);
HIDDEN void *drvtrace_sym_enter(uint64_t idx, struct regs *r, void **retslot);
HIDDEN void *drvtrace_dyn_enter(uint64_t slot, struct regs *r, void **retslot);
HIDDEN void *drvtrace_ret_leave(uint64_t rax);

/* ---- state ---- */
static int log_fd = 2;
static int mem_fd = -1; /* /proc/self/mem: reads that fail instead of faulting */
static void *real_handle;
static char real_path[4096];
static void *real_fn[DRVTRACE_NSYMS];          /* resolved at init */
static _Atomic uint64_t sym_calls[DRVTRACE_NSYMS];
static long verbatim_limit = 2000, slot_limit = 64, gpa_slot_limit = 8;
static uintptr_t real_base; /* load address of the real driver, for offsets */
static int trace_ret = 1, gpa_wrap = 1, trace_mem = 0;
static char nowrap[1024];
static _Atomic long verbatim_used;

struct slot { /* one anonymous trampoline of the pool */
    void *orig;
    int is_table_entry; /* else a cuGetProcAddress answer */
    char name[96];
    _Atomic uint64_t calls;
};
static struct slot slots[DRVTRACE_POOL];
static _Atomic int nslots;

struct table {
    void *orig, *copy;
    char uuid[40];
    int words, wrapped;
};
static struct table tables[MAX_TABLES];
static int ntables;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* slots, tables */

struct rev { void *addr; int idx; };               /* real address -> symbol */
static struct rev rev_map[DRVTRACE_NSYMS];
static int nrev;

static int idx_gpa = -1, idx_gpa2 = -1, idx_get = -1;

/* ---- logging: one write() per line ---- */
static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%d %ld ", (int)getpid(), (long)syscall(SYS_gettid));
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    n += m;
    if (n > (int)sizeof buf - 2) n = sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(log_fd, buf, n);
    (void)w;
}

static int no_device(void) { return NO_DEVICE; }

/* ---- init: open the log, load the real driver (never ourselves) ---- */
static _Atomic int init_state; /* 0 none, 1 running, 2 done */
static _Atomic long init_tid;

static int same_file(const char *a, const char *b)
{
    char ra[4096], rb[4096];
    if (!realpath(a, ra) || !realpath(b, rb)) return 0;
    return strcmp(ra, rb) == 0;
}

static int rev_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct rev *)a)->addr, y = (uintptr_t)((const struct rev *)b)->addr;
    return x < y ? -1 : x > y;
}

static void do_init(void)
{
    const char *e;
    if ((e = getenv("DRVTRACE_LOG")) && *e) {
        int fd = open(e, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) log_fd = fd;
    }
    mem_fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if ((e = getenv("DRVTRACE_N"))) verbatim_limit = atol(e);
    if ((e = getenv("DRVTRACE_SLOT_N"))) slot_limit = atol(e);
    if ((e = getenv("DRVTRACE_GPA_SLOT_N"))) gpa_slot_limit = atol(e);
    if ((e = getenv("DRVTRACE_RET"))) trace_ret = atoi(e) != 0;
    if ((e = getenv("DRVTRACE_GPA_WRAP"))) gpa_wrap = atoi(e) != 0;
    if ((e = getenv("DRVTRACE_MEM"))) trace_mem = atoi(e) != 0;
    if ((e = getenv("DRVTRACE_NOWRAP"))) snprintf(nowrap, sizeof nowrap, "%s", e);

    Dl_info self;
    const char *self_path = dladdr((void *)do_init, &self) ? self.dli_fname : "";
    logf_("start shim=%s symbols=%d ret=%d gpa_wrap=%d nowrap=%s", self_path, DRVTRACE_NSYMS, trace_ret,
          gpa_wrap, nowrap);

    const char *cands[] = { getenv("DRVTRACE_REAL"), DRVTRACE_DEFAULT_REAL,
                            "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",
                            "/usr/local/nvidia/lib64/libcuda.so.1" };
    for (size_t i = 0; i < sizeof cands / sizeof *cands && !real_handle; i++) {
        const char *c = cands[i];
        if (!c || !*c || access(c, R_OK) != 0) continue;
        if (same_file(c, self_path)) {
            logf_("real candidate %s is this shim, skipped", c);
            continue;
        }
        real_handle = dlopen(c, RTLD_NOW | RTLD_LOCAL);
        if (real_handle) snprintf(real_path, sizeof real_path, "%s", c);
        else logf_("dlopen %s failed: %s", c, dlerror());
    }
    if (!real_handle) logf_("no real driver found: every call returns %d", NO_DEVICE);
    else logf_("real driver %s", real_path);

    int missing = 0;
    for (int i = 0; i < DRVTRACE_NSYMS; i++) {
        const char *n = sym_names[i];
        if (!strcmp(n, "cuGetProcAddress")) idx_gpa = i;
        else if (!strcmp(n, "cuGetProcAddress_v2")) idx_gpa2 = i;
        else if (!strcmp(n, "cuGetExportTable")) idx_get = i;
        void *p = real_handle ? dlsym(real_handle, n) : NULL;
        if (real_handle && !p) {
            missing++;
            logf_("real driver lacks %s", n);
        }
        real_fn[i] = p;
        if (p) rev_map[nrev++] = (struct rev){ p, i };
    }
    qsort(rev_map, nrev, sizeof *rev_map, rev_cmp);
    Dl_info ri;
    if (nrev && dladdr(rev_map[0].addr, &ri)) real_base = (uintptr_t)ri.dli_fbase;
    if (real_handle) logf_("resolved %d of %d symbols (%d missing)", nrev, DRVTRACE_NSYMS, missing);
}

static void ensure_init(void)
{
    if (atomic_load(&init_state) == 2) return;
    int zero = 0;
    if (atomic_compare_exchange_strong(&init_state, &zero, 1)) {
        atomic_store(&init_tid, (long)syscall(SYS_gettid));
        do_init();
        atomic_store(&init_state, 2);
        return;
    }
    if (atomic_load(&init_tid) == (long)syscall(SYS_gettid)) return; /* re-entered from dlopen */
    while (atomic_load(&init_state) != 2) sched_yield();
}

__attribute__((constructor)) static void drvtrace_ctor(void) { ensure_init(); }

/* ---- return tracing: a per-thread stack of swapped return addresses ---- */
struct frame { void *ret; int kind, idx; uint64_t arg[6]; };
static __thread struct frame shadow[SHADOW_DEPTH];
static __thread int shadow_n;

static const char *name_of(int kind, int idx)
{
    return kind == 0 ? sym_names[idx] : slots[idx].name;
}

static void hook_return(void **retslot, int kind, int idx, const struct regs *r)
{
    if (!trace_ret || shadow_n >= SHADOW_DEPTH) return;
    shadow[shadow_n++] = (struct frame){ *retslot, kind, idx, { r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9 } };
    *retslot = (void *)drvtrace_ret_thunk;
}

/* The 16 bytes at each pointer-like argument, read through /proc/self/mem so
 * that a non-pointer costs an error, not a fault: what private functions read
 * (before the call) and write (after it). */
static void log_pointees(const char *when, const char *name, const uint64_t *arg)
{
    if (mem_fd < 0) return;
    char line[512];
    int k = 0;
    for (int i = 0; i < 6; i++) {
        unsigned char b[16];
        if (arg[i] < 0x10000 || arg[i] >> 47) continue;
        if (pread(mem_fd, b, sizeof b, (off_t)arg[i]) != (ssize_t)sizeof b) continue;
        k += snprintf(line + k, sizeof line - k, " a%d=[", i);
        for (int j = 0; j < 16; j++) k += snprintf(line + k, sizeof line - k, "%02x", b[j]);
        k += snprintf(line + k, sizeof line - k, "]");
    }
    if (k) logf_("%s %s%s", when, name, line);
}

void *drvtrace_ret_leave(uint64_t rax)
{
    if (shadow_n <= 0) { /* cannot happen unless a frame was skipped by longjmp */
        logf_("FATAL return without a frame");
        _exit(99);
    }
    struct frame f = shadow[--shadow_n];
    logf_("ret %s = 0x%llx", name_of(f.kind, f.idx), (unsigned long long)rax);
    if (trace_mem || (f.kind == 1 && slots[f.idx].is_table_entry))
        log_pointees("mem-after", name_of(f.kind, f.idx), f.arg);
    return f.ret;
}

/* ---- /proc/self/maps: which words are code pointers ---- */
struct map { uintptr_t lo, hi; int r, x; };

static int read_maps(struct map *m, int max)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    static char buf[4 << 20]; /* a big process has thousands of mappings */
    size_t len = 0;
    ssize_t k;
    while (len < sizeof buf - 1 && (k = read(fd, buf + len, sizeof buf - 1 - len)) > 0) len += k;
    close(fd);
    buf[len] = 0;
    int n = 0;
    for (char *line = buf; *line && n < max;) {
        char *nl = strchr(line, '\n');
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3)
            m[n++] = (struct map){ lo, hi, perm[0] == 'r', perm[2] == 'x' };
        if (!nl) break;
        line = nl + 1;
    }
    return n;
}

static const struct map *find_map(const struct map *m, int n, uintptr_t a)
{
    for (int i = 0; i < n; i++)
        if (a >= m[i].lo && a < m[i].hi) return &m[i];
    return NULL;
}

/* ---- anonymous trampolines ---- */
static void *slot_addr(int s) { return drvtrace_dyn_pool + 16 * (size_t)s; }
static void *sym_addr(int i) { return drvtrace_sym_base + 16 * (size_t)i; }

static int new_slot(void *orig, const char *name, int is_table_entry) /* lock held; -1 when full */
{
    int s = atomic_load(&nslots);
    if (s >= DRVTRACE_POOL) return -1;
    slots[s].orig = orig;
    slots[s].is_table_entry = is_table_entry;
    snprintf(slots[s].name, sizeof slots[s].name, "%s", name);
    atomic_store(&nslots, s + 1);
    return s;
}

static void log_call(const char *what, const char *name, uint64_t n, const struct regs *r)
{
    logf_("%s %s #%llu (0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx)", what, name,
          (unsigned long long)n, (unsigned long long)r->rdi, (unsigned long long)r->rsi,
          (unsigned long long)r->rdx, (unsigned long long)r->rcx, (unsigned long long)r->r8,
          (unsigned long long)r->r9);
}

/* ---- special functions, called instead of the real ones ---- */
typedef int (*gpa1_fn)(const char *, void **, int, uint64_t);
typedef int (*gpa2_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*get_fn)(const void **, const void *);

/* Our own entry point for what the driver returned: the exported stub of the
 * symbol at that address, else an anonymous one named after the request. */
static void *own_pointer(void *p, const char *sym, int ver, uint64_t flags, const char **how)
{
    int lo = 0, hi = nrev - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (rev_map[mid].addr == p) {
            *how = sym_names[rev_map[mid].idx];
            return sym_addr(rev_map[mid].idx);
        }
        if ((uintptr_t)rev_map[mid].addr < (uintptr_t)p) lo = mid + 1;
        else hi = mid - 1;
    }
    pthread_mutex_lock(&lock);
    int s = -1;
    for (int i = 0; i < atomic_load(&nslots); i++)
        if (slots[i].orig == p) { s = i; break; }
    if (s < 0) {
        char name[96];
        snprintf(name, sizeof name, "%s@%d/0x%llx", sym, ver, (unsigned long long)flags);
        s = new_slot(p, name, 0);
    }
    pthread_mutex_unlock(&lock);
    if (s < 0) {
        *how = "no trampoline (pool full)";
        return p;
    }
    *how = "no exported symbol: anonymous trampoline";
    return slot_addr(s);
}

static int gpa_common(int v2, const char *sym, void **pfn, int ver, uint64_t flags, int *qres)
{
    int idx = v2 ? idx_gpa2 : idx_gpa;
    int st;
    if (idx < 0 || !real_fn[idx]) {
        if (pfn) *pfn = NULL;
        st = NO_DEVICE;
    } else if (v2) {
        st = ((gpa2_fn)real_fn[idx])(sym, pfn, ver, flags, qres);
    } else {
        st = ((gpa1_fn)real_fn[idx])(sym, pfn, ver, flags);
    }
    void *orig = pfn ? *pfn : NULL;
    const char *how = "null";
    if (st == 0 && orig) {
        if (gpa_wrap) *pfn = own_pointer(orig, sym ? sym : "?", ver, flags, &how);
        else how = "not wrapped (DRVTRACE_GPA_WRAP=0)";
    }
    logf_("gpa%s sym=%s ver=%d flags=0x%llx status=%d qres=%d real=%p ours=%p via=%s", v2 ? "_v2" : "",
          sym ? sym : "(null)", ver, (unsigned long long)flags, st, (v2 && qres) ? *qres : -1, orig,
          pfn ? *pfn : NULL, how);
    return st;
}

static int w_gpa1(const char *sym, void **pfn, int ver, uint64_t flags)
{
    return gpa_common(0, sym, pfn, ver, flags, NULL);
}

static int w_gpa2(const char *sym, void **pfn, int ver, uint64_t flags, int *qres)
{
    return gpa_common(1, sym, pfn, ver, flags, qres);
}

static void fmt_uuid(const unsigned char *u, char *out) /* as CUDA prints it */
{
    sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
            u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Copy the table; each word pointing into executable memory becomes a
 * logging trampoline. The first word is the size in bytes when it is small,
 * but some tables hold several sections, each with its own size word, so at
 * least SCAN_WORDS words are scanned; MAX_TABLE_WORDS readable words are
 * copied, the rest as they are. */
static void *wrap_table(const void *orig, const char *uuid)
{
    for (int i = 0; i < ntables; i++)
        if (tables[i].orig == orig) return tables[i].copy;
    if (ntables >= MAX_TABLES) return NULL;
    static struct map maps[32768];
    int nm = read_maps(maps, 32768);
    const uint64_t *w = orig;
    const struct map *m = find_map(maps, nm, (uintptr_t)w);
    if (!m || !m->r) {
        logf_("table %s at %p is not in readable memory: returned as is", uuid, orig);
        return NULL;
    }
    size_t avail = (m->hi - (uintptr_t)w) / 8;
    uint64_t size = w[0];
    int sized = size >= 16 && size <= 8 * MAX_TABLE_WORDS && size % 8 == 0;
    size_t ncopy = MAX_TABLE_WORDS < avail ? MAX_TABLE_WORDS : avail;
    size_t n = sized ? size / 8 : 0;
    if (!sized) /* no size word: the leading run of code pointers */
        while (n < ncopy && find_map(maps, nm, (uintptr_t)w[n]) && find_map(maps, nm, (uintptr_t)w[n])->x) n++;
    size_t declared = n;
    if (n < SCAN_WORDS) n = SCAN_WORDS;
    if (n > ncopy) n = ncopy;
    uint64_t *copy = calloc(MAX_TABLE_WORDS, 8);
    if (!copy) return NULL;
    struct table *t = &tables[ntables];
    t->orig = (void *)orig;
    t->copy = copy;
    snprintf(t->uuid, sizeof t->uuid, "%s", uuid);
    t->words = (int)n;
    /* log the words, 8 per line */
    for (size_t i = 0; i < n; i += 8) {
        char line[256];
        int k = 0;
        for (size_t j = i; j < n && j < i + 8; j++) k += snprintf(line + k, sizeof line - k, " %016llx", (unsigned long long)w[j]);
        logf_("table %s words[%zu..]%s", uuid, i, line);
    }
    memcpy(copy, w, ncopy * 8); /* words past the table stay as they are */
    for (size_t i = 0; i < n; i++) {
        const struct map *mm = find_map(maps, nm, (uintptr_t)w[i]);
        if (i == 0 && sized) continue;
        if (!mm || !mm->x) continue;
        char name[96];
        snprintf(name, sizeof name, "ET %s [%zu]%s", uuid, i, i >= declared ? "+" : "");
        int s = new_slot((void *)w[i], name, 1);
        if (s < 0) continue;
        copy[i] = (uint64_t)(uintptr_t)slot_addr(s);
        t->wrapped++;
        /* no dladdr here: it takes the loader's lock while we hold ours */
        uintptr_t off = (uintptr_t)w[i] - real_base;
        if (real_base && (uintptr_t)w[i] >= real_base && off < ((uintptr_t)1 << 30))
            logf_("table %s entry %zu code %p (driver+0x%lx) -> slot %d", uuid, i, (void *)w[i], (unsigned long)off, s);
        else
            logf_("table %s entry %zu code %p (outside the driver) -> slot %d", uuid, i, (void *)w[i], s);
    }
    logf_("table %s: %zu words (%s), %d wrapped, %zu scanned", uuid, declared,
          sized ? "size from word 0" : "no size word", t->wrapped, n);
    ntables++;
    return copy;
}

/* DRVTRACE_EXPTAB: loaded at the first cuGetExportTable (it needs this
 * library, libcuda.so.1, fully initialized). */
typedef int (*exptab_fn)(const void **, const void *);
static exptab_fn exptab;
static pthread_once_t exptab_once = PTHREAD_ONCE_INIT;
static void exptab_load(void)
{
    const char *e = getenv("DRVTRACE_EXPTAB");
    if (!e || !*e) return;
    void *h = dlopen(e, RTLD_NOW | RTLD_LOCAL);
    if (h) exptab = (exptab_fn)dlsym(h, "apigen_cuda_export_table");
    logf_("exptab %s: %s", e, exptab ? "apigen_cuda_export_table answers cuGetExportTable" : dlerror());
}

static int w_get_export_table(const void **table, const void *id)
{
    pthread_once(&exptab_once, exptab_load);
    char uuid[40] = "(null)", raw[64] = "";
    if (id) {
        const unsigned char *u = id;
        fmt_uuid(u, uuid);
        for (int i = 0; i < 16; i++) sprintf(raw + 3 * i, "%02x ", u[i]);
    }
    const char *keep = getenv("DRVTRACE_EXPTAB_REAL");
    int apigen = exptab && !(keep && id && strstr(keep, uuid));
    int st = apigen ? exptab(table, id)
             : (idx_get >= 0 && real_fn[idx_get]) ? ((get_fn)real_fn[idx_get])(table, id) : NO_DEVICE;
    const void *orig = table ? *table : NULL;
    logf_("export_table uuid=%s raw=[%s] status=%d table=%p%s", uuid, raw, st, orig,
          apigen ? " served=apigen" : exptab ? " served=real" : "");
    if (st == 0 && orig && (!strcmp(nowrap, "all") || strstr(nowrap, uuid))) {
        logf_("table %s returned as is (DRVTRACE_NOWRAP)", uuid);
        const uint64_t *w = orig;
        uint64_t size = w[0];
        int n = size >= 16 && size <= 8 * MAX_TABLE_WORDS && size % 8 == 0 ? (int)(size / 8) : 4;
        for (int i = 0; i < n; i++) logf_("table %s word %d %016llx", uuid, i, (unsigned long long)w[i]);
    } else if (st == 0 && orig) {
        pthread_mutex_lock(&lock);
        void *copy = wrap_table(orig, uuid);
        pthread_mutex_unlock(&lock);
        if (copy) *table = copy;
    }
    return st;
}

/* ---- the common entries of tramp.S ---- */
void *drvtrace_sym_enter(uint64_t idx, struct regs *r, void **retslot)
{
    ensure_init();
    uint64_t n = atomic_fetch_add(&sym_calls[idx], 1) + 1;
    void *target;
    int special = 1;
    if ((int)idx == idx_gpa) target = (void *)w_gpa1;
    else if ((int)idx == idx_gpa2) target = (void *)w_gpa2;
    else if ((int)idx == idx_get) target = (void *)w_get_export_table;
    else {
        special = 0;
        target = real_fn[idx] ? real_fn[idx] : (void *)no_device;
    }
    if (atomic_fetch_add(&verbatim_used, 1) < verbatim_limit) {
        log_call("call", sym_names[idx], n, r);
        if (!special) hook_return(retslot, 0, (int)idx, r);
    }
    return target;
}

void *drvtrace_dyn_enter(uint64_t s, struct regs *r, void **retslot)
{
    uint64_t n = atomic_fetch_add(&slots[s].calls, 1) + 1;
    if ((long)n <= (slots[s].is_table_entry ? slot_limit : gpa_slot_limit)) {
        log_call("dcall", slots[s].name, n, r);
        uint64_t arg[6] = { r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9 };
        if (slots[s].is_table_entry) log_pointees("mem-before", slots[s].name, arg);
        hook_return(retslot, 1, (int)s, r);
    }
    return slots[s].orig;
}

/* ---- summary at exit ---- */
__attribute__((destructor)) static void drvtrace_dtor(void)
{
    if (atomic_load(&init_state) != 2) return;
    logf_("summary begin real=%s", real_handle ? real_path : "none");
    for (int i = 0; i < DRVTRACE_NSYMS; i++) {
        uint64_t c = atomic_load(&sym_calls[i]);
        if (c) logf_("summary sym %s %llu", sym_names[i], (unsigned long long)c);
    }
    int ns = atomic_load(&nslots);
    for (int i = 0; i < ns; i++)
        logf_("summary slot %s %llu", slots[i].name, (unsigned long long)atomic_load(&slots[i].calls));
    for (int i = 0; i < ntables; i++)
        logf_("summary table %s words=%d wrapped=%d", tables[i].uuid, tables[i].words, tables[i].wrapped);
    logf_("summary end");
}
