#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void oom(void)
{
    fputs("apigen: out of memory\n", stderr);
    exit(2);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) oom();
    return p;
}

char *xstrdup(const char *s)
{
    return s ? xstrndup(s, strlen(s)) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    strbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    return sb_take(&b);
}

void *vec_grow(void *p, size_t n, size_t elem)
{
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) p = xrealloc(p, (n ? n * 2 : 4) * elem);
    memset((char *)p + n * elem, 0, elem);
    return p;
}

/* ---- interning ---- */
static strmap interned;

const char *intern(const char *s)
{
    if (!s) return NULL;
    const char *k = strmap_get(&interned, s);
    if (k) return k;
    char *copy = xstrdup(s); /* lives until exit */
    strmap_put(&interned, copy, copy);
    return copy;
}

/* ---- strbuf ---- */
static void sb_reserve(strbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
}

void sb_putc(strbuf *b, char c)
{
    sb_reserve(b, 1);
    b->s[b->len++] = c;
    b->s[b->len] = 0;
}

void sb_puts(strbuf *b, const char *s)
{
    size_t n = strlen(s);
    sb_reserve(b, n);
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

void sb_vprintf(strbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    sb_reserve(b, (size_t)n);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

char *sb_take(strbuf *b)
{
    char *s = b->s ? b->s : xstrdup("");
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void sb_free(strbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* ---- strmap ---- */
static size_t str_hash(const char *s)
{
    return (size_t)fnv1a64(FNV1A64_INIT, s, strlen(s));
}

void *strmap_get(const strmap *m, const char *key)
{
    if (!m->cap) return NULL;
    size_t i = str_hash(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (strcmp(m->keys[i], key) == 0) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

static void strmap_insert(strmap *m, char *key, void *val)
{
    size_t i = str_hash(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (strcmp(m->keys[i], key) == 0) {
            free(key);
            m->vals[i] = val;
            return;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
}

void strmap_put(strmap *m, const char *key, void *val)
{
    if ((m->count + 1) * 2 > m->cap) {
        strmap old = *m;
        m->cap = old.cap ? old.cap * 2 : 64;
        m->keys = xcalloc(m->cap, sizeof *m->keys);
        m->vals = xcalloc(m->cap, sizeof *m->vals);
        m->count = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) strmap_insert(m, old.keys[i], old.vals[i]);
        free(old.keys);
        free(old.vals);
    }
    strmap_insert(m, xstrdup(key), val);
}

void strmap_free(strmap *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- arena ---- */
struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

struct arena {
    struct arena_block *head;
};

arena *arena_new(void)
{
    return xcalloc(1, sizeof(arena));
}

void *arena_alloc(arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 60000 ? n : 60000;
        b = xmalloc(sizeof *b + cap);
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strdup(arena *a, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n + 1);
    return p;
}

void arena_free(arena *a)
{
    if (!a) return;
    struct arena_block *b = a->head;
    while (b) {
        struct arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(a);
}

/* ---- paths ---- */
char *path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    if (slash == path) return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

char *path_normalize(const char *path)
{
    int abs = path[0] == '/';
    char *copy = xstrdup(path);
    char **parts = NULL;
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (strcmp(t, ".") == 0) continue;
        if (strcmp(t, "..") == 0 && n > 0 && strcmp(parts[n - 1], "..") != 0) {
            n--;
            continue;
        }
        if (strcmp(t, "..") == 0 && n == 0 && abs) continue;
        *(char **)VEC_PUSH(parts, n) = t;
    }
    strbuf b = {0};
    if (abs) sb_putc(&b, '/');
    for (size_t i = 0; i < n; i++) {
        if (i) sb_putc(&b, '/');
        sb_puts(&b, parts[i]);
    }
    if (b.len == 0) sb_putc(&b, '.');
    free(parts);
    free(copy);
    return sb_take(&b);
}

char *path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !*dir) return path_normalize(rel);
    char *j = xasprintf("%s/%s", dir, rel);
    char *r = path_normalize(j);
    free(j);
    return r;
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int is_c_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
