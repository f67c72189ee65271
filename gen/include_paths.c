#define _POSIX_C_SOURCE 200809L
/* Isolated include paths: an API's headers come from the folders the user
 * and the spec name, never from whatever the machine has installed (a toolkit
 * of another version under /usr/local/include once completed an old
 * toolkit's headers silently). clang parses with -nostdlibinc: its own
 * built-in headers (stddef.h, stdint.h, limits.h, ...) stay, the system
 * folders go. The C library's folders come back last (-idirafter) because
 * vendor headers include <stdlib.h> & co; after the parse every file taken
 * from them is checked to be the C library's own (a standard header name,
 * or a file a C library header includes), anything else is an error. */
#include "include_paths.h"

#include <string.h>

#include "util.h"

#ifndef APIGEN_LIBC_INCLUDE_DIRS
#define APIGEN_LIBC_INCLUDE_DIRS "/usr/include/x86_64-linux-gnu:/usr/include"
#endif

/* ':'-separated: APIGEN_LIBC_INCLUDE_PATH, else the C compiler's system
 * folders found when apigen was built (gen/CMakeLists.txt). */
static const char *libc_path(void)
{
    const char *e = getenv("APIGEN_LIBC_INCLUDE_PATH");
    return e ? e : APIGEN_LIBC_INCLUDE_DIRS;
}

void include_paths_args(char ***args, size_t *nargs, const char *resource_dir)
{
    *(char **)VEC_PUSH(*args, *nargs) = xstrdup("-nostdlibinc");
    if (resource_dir) {
        /* -nostdlibinc keeps the built-in folder; named anyway so that a
         * resource dir found by apigen (not by libclang) is the one used */
        *(char **)VEC_PUSH(*args, *nargs) = xstrdup("-isystem");
        *(char **)VEC_PUSH(*args, *nargs) = xasprintf("%s/include", resource_dir);
    }
    char *p = xstrdup(libc_path());
    for (char *save = NULL, *t = strtok_r(p, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        if (!*t) continue;
        *(char **)VEC_PUSH(*args, *nargs) = xstrdup("-idirafter");
        *(char **)VEC_PUSH(*args, *nargs) = xstrdup(t);
    }
    free(p);
}

char *include_paths_searched(char *const *dirs, size_t ndirs, const char *resource_dir)
{
    strbuf sb = {0};
    for (size_t j = 0; j < ndirs; j++) sb_printf(&sb, "%s%s", j ? ", " : "", dirs[j]);
    if (resource_dir) sb_printf(&sb, "%sthe compiler's built-in %s/include", ndirs ? ", " : "", resource_dir);
    sb_printf(&sb, ", the C library's %s", libc_path());
    return sb_take(&sb);
}

/* dir/ prefix of path: the rest, else NULL */
static const char *under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    if (strncmp(path, dir, n) != 0 || path[n] != '/') return NULL;
    return path + n + 1;
}

static const char *under_libc(const char *path)
{
    char *p = xstrdup(libc_path());
    const char *rel = NULL;
    for (char *save = NULL, *t = strtok_r(p, ":", &save); t && !rel; t = strtok_r(NULL, ":", &save))
        if (*t) rel = under(path, t);
    free(p);
    return rel;
}

/* The C11 and common POSIX headers a vendor header may include. */
static int standard_header(const char *rel)
{
    static const char *const names[] = {
        "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h",
        "iso646.h", "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h",
        "stdarg.h", "stdatomic.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
        "stdnoreturn.h", "string.h", "tgmath.h", "threads.h", "time.h", "uchar.h", "wchar.h",
        "wctype.h", "features.h", "unistd.h", "strings.h", "pthread.h", "dlfcn.h", "fcntl.h",
        "sched.h", "semaphore.h", "alloca.h", "malloc.h", NULL};
    if (strncmp(rel, "sys/", 4) == 0) return 1;
    for (size_t i = 0; names[i]; i++)
        if (strcmp(rel, names[i]) == 0) return 1;
    return 0;
}

typedef struct incl_walk {
    diag_sink *d;
    char *const *dirs; /* -I, APIGEN_INCLUDE_PATH, the spec's include_dirs */
    size_t ndirs;
    const char *resource_dir;
    const char *searched;
} incl_walk;

static char *file_name(CXFile f)
{
    CXString s = clang_getFileName(f);
    char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static void visit_inclusion(CXFile f, CXSourceLocation *stack, unsigned n, CXClientData data)
{
    incl_walk *w = data;
    if (n == 0) return; /* the main (in-memory) file */
    char *path = file_name(f);
    const char *rel = under_libc(path);
    for (size_t i = 0; rel && i < w->ndirs; i++)
        if (under(path, w->dirs[i])) rel = NULL; /* a folder the user or the spec named */
    if (rel && !standard_header(rel)) {
        CXFile inc;
        unsigned line, col;
        clang_getExpansionLocation(stack[0], &inc, &line, &col, NULL);
        char *by = inc ? file_name(inc) : xstrdup("");
        /* a C library header's own includes (bits/..., gnu/...) are its business */
        int from_libc = under_libc(by) != NULL ||
                        (w->resource_dir && under(by, w->resource_dir) != NULL);
        if (!from_libc) {
            src_loc at = {intern(by), line, col};
            diag_error(w->d, at, NULL, NULL,
                       "'%s' was found only in the C library's folder (%s), which apigen takes "
                       "C library headers from, not an API's (searched: %s): give its folder "
                       "with -I",
                       rel, path, w->searched);
        }
        free(by);
    }
    free(path);
}

int include_paths_check(CXTranslationUnit tu, char *const *dirs, size_t ndirs,
                        const char *resource_dir, diag_sink *d)
{
    unsigned e0 = d->errors;
    char *searched = include_paths_searched(dirs, ndirs, resource_dir);
    incl_walk w = {d, dirs, ndirs, resource_dir, searched};
    clang_getInclusions(tu, visit_inclusion, &w);
    free(searched);
    return d->errors > e0;
}
