/* The guest side of NVRTC's #include lines (specs/nvrtc.yaml, docs/nvrtc.md).
 *
 * Natively NVRTC opens the headers a program includes on the machine that
 * compiles: next to the program (its name's folder) or the including file,
 * in -I/--include-path folders, or by absolute name. Forwarded, that machine
 * is the server, whose files are not the guest's. So before a compile the
 * stub does NVRTC's search on the guest: it scans the program's #include
 * lines and those of every file they reach, finds each name as NVRTC would
 * (quoted: the includer's folder first, then the -I folders; angled: the -I
 * folders; absolute: as is), reads the files and sends them as in-memory
 * headers under the names they are included by. The -I options themselves
 * do not travel, except a folder of a CUDA toolkit (a folder holding
 * cuda_runtime_api.h and nvrtc.h, or one below it), which becomes the same
 * folder of the SERVER's toolkit: the toolkit's headers are the server's.
 * A name the application already gave as an in-memory header is not looked
 * for; one found nowhere is left to NVRTC (its built-in headers, or its own
 * "cannot open source file" error). Not resolved: names spelled by macros
 * (#include MACRO) and lines that #if excludes are resolved anyway (an
 * extra header costs bytes, not meaning). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apigen_rt.h"
#include "nvrtc_files.h"
#include "nvrtc_guest.h"

#define MAX_FILES 4096
#define MAX_BYTES (256u << 20) /* all headers of one compile */

typedef struct {
    char **v;
    int n, cap;
} strv;

static bool push(strv *s, char *x)
{
    if (!x) return false;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) {
            free(x);
            return false;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return true;
}

static void strv_free(strv *s)
{
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static bool has(const strv *s, const char *x)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i] && strcmp(s->v[i], x) == 0) return true;
    return false;
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s/%s", dir, name);
    return p;
}

static char *dir_of(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    if (!s) return strdup(".");
    if (s == path) return strdup("/");
    return strndup(path, (size_t)(s - path));
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The CUDA toolkit include folder at or above dir (canonical), or NULL. */
static char *toolkit_of(const char *dir)
{
    char cur[PATH_MAX];
    if (!realpath(dir, cur)) return NULL;
    for (int up = 0; up < 4; up++) {
        char a[PATH_MAX + 32], b[PATH_MAX + 32];
        snprintf(a, sizeof a, "%s/cuda_runtime_api.h", cur);
        snprintf(b, sizeof b, "%s/nvrtc.h", cur);
        if (is_file(a) && is_file(b)) return strdup(cur);
        char *s = strrchr(cur, '/');
        if (!s || s == cur) return NULL;
        *s = 0;
    }
    return NULL;
}

struct state {
    strv opts, dirs, toolkits;       /* out options; guest -I folders; toolkit folders */
    strv known;                      /* names NVRTC will find in memory */
    strv h, names;                   /* headers read from disk */
    strv todo_dir;                   /* the folder of each of h */
    size_t bytes;
    bool oom, full;
};

/* An -I folder: kept on the guest, or the server's toolkit folder. */
static void include_dir(struct state *st, const char *d)
{
    char *tk = toolkit_of(d);
    if (tk) {
        char canon[PATH_MAX];
        const char *rel = realpath(d, canon) ? canon + strlen(tk) : "";
        size_t len = strlen("-I" NVRTC_TOOLKIT_MARK) + strlen(rel) + 1;
        char *o = malloc(len);
        if (o) snprintf(o, len, "-I" NVRTC_TOOLKIT_MARK "%s", rel);
        if (!push(&st->opts, o) || (!has(&st->toolkits, tk) && !push(&st->toolkits, strdup(tk))))
            st->oom = true;
        free(tk);
        return;
    }
    if (!push(&st->dirs, strdup(d))) st->oom = true;
}

static bool in_toolkit(struct state *st, const char *path)
{
    char canon[PATH_MAX];
    if (!realpath(path, canon)) return false;
    for (int i = 0; i < st->toolkits.n; i++) {
        size_t n = strlen(st->toolkits.v[i]);
        if (strncmp(canon, st->toolkits.v[i], n) == 0 && canon[n] == '/') return true;
    }
    return false;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? 2 * cap : 8192;
            char *b = cap <= MAX_BYTES ? realloc(buf, cap + 1) : NULL;
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* One #include name from a file in folder dir: found on the guest's disk,
 * read, queued for its own #include lines. */
static void resolve_name(struct state *st, const char *name, bool quoted, const char *dir)
{
    if (has(&st->known, name) || st->oom || st->full) return;
    char *path = NULL;
    if (name[0] == '/') {
        if (is_file(name)) path = strdup(name);
    } else {
        if (quoted && dir) {
            path = join(dir, name);
            if (path && !is_file(path)) {
                free(path);
                path = NULL;
            }
        }
        for (int i = 0; !path && i < st->dirs.n; i++) {
            path = join(st->dirs.v[i], name);
            if (path && !is_file(path)) {
                free(path);
                path = NULL;
            }
        }
    }
    if (!path || in_toolkit(st, path)) { /* NVRTC's or the server toolkit's, or none */
        free(path);
        return;
    }
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) {
        apigen_log("nvrtcCompileProgram: %s (for #include \"%s\") cannot be read on this "
                   "machine: not sent to the compiler", path, name);
        free(path);
        return;
    }
    if (st->h.n >= MAX_FILES || st->bytes + len > MAX_BYTES) {
        apigen_log("nvrtcCompileProgram: more than %d header files or %u MiB reached from the "
                   "program's #include lines: %s and what it includes are not sent",
                   MAX_FILES, MAX_BYTES >> 20, path);
        st->full = true;
        free(text);
        free(path);
        return;
    }
    st->bytes += len;
    if (!push(&st->names, strdup(name)) || !push(&st->known, strdup(name)) ||
        !push(&st->h, text) || !push(&st->todo_dir, dir_of(path)))
        st->oom = true;
    free(path);
}

/* The #include lines of text (comments skipped), each resolved from dir.
 * A block comment's end is found once (a long license comment costs one
 * pass, not one per line). */
static void scan(struct state *st, const char *text, const char *dir)
{
    const char *cend = NULL; /* where the block comment we are in closes */
    for (const char *p = text; p && *p && !st->oom;) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        const char *q = p;
        if (cend) {
            if (cend >= end) goto next;
            q = cend + 2;
            cend = NULL;
        }
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (q < end && *q == '#') {
            q++;
            while (q < end && (*q == ' ' || *q == '\t')) q++;
            bool next_ = strncmp(q, "include_next", 12) == 0;
            if (strncmp(q, "include", 7) == 0) {
                q += next_ ? 12 : 7;
                while (q < end && (*q == ' ' || *q == '\t')) q++;
                char close = q < end && *q == '"' ? '"' : q < end && *q == '<' ? '>' : 0;
                const char *e = close ? memchr(q + 1, close, (size_t)(end - q - 1)) : NULL;
                if (e && e > q + 1) {
                    char *name = strndup(q + 1, (size_t)(e - q - 1));
                    if (!name) st->oom = true;
                    else resolve_name(st, name, close == '"' && !next_, dir);
                    free(name);
                }
            }
        }
        /* a block comment left open on this line */
        for (const char *c = q; c + 1 < end; c++) {
            if (c[0] == '/' && c[1] == '/') break;
            if (c[0] == '/' && c[1] == '*') {
                const char *e = strstr(c + 2, "*/");
                if (!e) return; /* the rest of the text is a comment */
                if (e >= end) {
                    cend = e;
                    break;
                }
                c = e + 1;
            }
        }
    next:
        p = eol ? eol + 1 : NULL;
    }
}

nvrtcResult nvrtc_resolve(const char *src, const char *progname, int nh, const char *const *h,
                          const char *const *n, int nopt, const char *const *opts,
                          nvrtc_guest_headers *out)
{
    struct state st = {0};
    strv pre = {0};
    memset(out, 0, sizeof *out);
    for (int i = 0; i < nopt && !st.oom; i++) {
        const char *o = opts[i];
        const char *d = NULL, *inc = NULL;
        if (!o) { /* NVRTC's own answer to a NULL option */
            if (!push(&st.opts, strdup(""))) st.oom = true;
            else {
                free(st.opts.v[st.opts.n - 1]);
                st.opts.v[st.opts.n - 1] = NULL;
            }
            continue;
        }
        if ((!strcmp(o, "-I") || !strcmp(o, "--include-path")) && i + 1 < nopt && opts[i + 1])
            d = opts[++i];
        else if (!strncmp(o, "--include-path=", 15)) d = o + 15;
        else if (!strncmp(o, "-I=", 3)) d = o + 3;
        else if (!strncmp(o, "-I", 2) && o[2]) d = o + 2;
        if (d) {
            include_dir(&st, d);
            continue;
        }
        if ((!strcmp(o, "-include") || !strcmp(o, "--pre-include")) && i + 1 < nopt && opts[i + 1]) {
            if (!push(&st.opts, strdup(o))) st.oom = true;
            o = inc = opts[++i];
        } else if (!strncmp(o, "--pre-include=", 14)) inc = o + 14;
        else if (!strncmp(o, "-include=", 9)) inc = o + 9;
        if (!push(&st.opts, strdup(o)) || (inc && !push(&pre, strdup(inc)))) st.oom = true;
    }
    for (int i = 0; i < nh && n && !st.oom; i++)
        if (n[i] && !push(&st.known, strdup(n[i]))) st.oom = true;
    char *main_dir = dir_of(progname ? progname : "default_program");
    if (!main_dir) st.oom = true;
    for (int i = 0; i < pre.n && !st.oom; i++) resolve_name(&st, pre.v[i], true, main_dir);
    if (!st.oom) scan(&st, src, main_dir);
    for (int i = 0; i < nh && h && !st.oom; i++)
        if (h[i]) scan(&st, h[i], main_dir);
    /* the files found, in order; each may add more */
    for (int i = 0; i < st.h.n && !st.oom; i++) scan(&st, st.h.v[i], st.todo_dir.v[i]);
    free(main_dir);
    strv_free(&pre);
    strv_free(&st.dirs);
    strv_free(&st.toolkits);
    strv_free(&st.known);
    strv_free(&st.todo_dir);
    if (st.oom) {
        strv_free(&st.opts);
        strv_free(&st.h);
        strv_free(&st.names);
        return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    out->nopt = st.opts.n;
    out->opts = st.opts.v;
    out->nh = st.h.n;
    out->h = st.h.v;
    out->names = st.names.v;
    return NVRTC_SUCCESS;
}

void nvrtc_resolved_free(nvrtc_guest_headers *r)
{
    for (int i = 0; i < r->nopt; i++) free(r->opts[i]);
    for (int i = 0; i < r->nh; i++) {
        free(r->h[i]);
        free(r->names[i]);
    }
    free(r->opts);
    free(r->h);
    free(r->names);
    memset(r, 0, sizeof *r);
}
