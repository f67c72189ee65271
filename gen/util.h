/* Small helpers shared by the generator: checked allocation, growable
 * (ptr, count) arrays, string building, interning, a string map, paths. */
#ifndef APIGEN_UTIL_H
#define APIGEN_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);            /* NULL -> NULL */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows a (ptr, count) array by one zeroed element and returns it.
 * Capacity doubles at powers of two, so no separate capacity field. */
void *vec_grow(void *p, size_t n, size_t elem);
#define VEC_PUSH(ptr, n) ((ptr) = vec_grow((ptr), (n), sizeof *(ptr)), &(ptr)[(n)++])

/* Interned strings live until exit: used for src_loc.file. */
const char *intern(const char *s);

/* String builder. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;
void sb_putc(strbuf *b, char c);
void sb_puts(strbuf *b, const char *s);
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(strbuf *b, const char *fmt, va_list ap);
char *sb_take(strbuf *b); /* returns the string ("" when empty), resets b */
void sb_free(strbuf *b);

/* Open-addressing map from string to pointer; keys are copied. */
typedef struct strmap {
    char **keys;
    void **vals;
    size_t cap, count;
} strmap;
void *strmap_get(const strmap *m, const char *key);
void strmap_put(strmap *m, const char *key, void *val); /* replaces */
void strmap_free(strmap *m);

/* Bump arena: many small allocations freed at once. */
typedef struct arena arena;
arena *arena_new(void);
void *arena_alloc(arena *a, size_t n);   /* zeroed, 16-byte aligned */
char *arena_strdup(arena *a, const char *s); /* NULL -> NULL */
void arena_free(arena *a);

/* Lexical path helpers (no file system access). */
char *path_dirname(const char *path);            /* "a/b.yaml" -> "a", "b" -> "." */
char *path_join(const char *dir, const char *rel); /* rel absolute -> rel; normalized */
char *path_normalize(const char *path);          /* drops "." and "x/.." */
int file_exists(const char *path);

int is_c_identifier(const char *s);
uint64_t fnv1a64(uint64_t h, const void *data, size_t n);
#define FNV1A64_INIT 0xcbf29ce484222325ULL

#endif
