/* Progress lines of long operations (runtime/progress.c): on with
 * APIGEN_PROGRESS=1, off with APIGEN_PROGRESS=0 and, unset, when stderr is not
 * a terminal; a wide copy reports and still copies every byte. Each case runs
 * in a child (the setting is read once per process) with stderr on a pipe. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apigen_copy.h"

static int failures;
#define CHECK(c)                                                                \
    do {                                                                        \
        if (!(c)) {                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                         \
        }                                                                       \
    } while (0)

/* runs a copy of `n` bytes in a child with APIGEN_PROGRESS=setting (NULL:
 * unset); returns what it wrote on stderr; *ok: the bytes arrived */
static char *copy_in_child(const char *setting, size_t n, int *ok)
{
    int p[2];
    if (pipe(p) != 0) return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        if (setting) setenv("APIGEN_PROGRESS", setting, 1);
        else unsetenv("APIGEN_PROGRESS");
        setenv("APIGEN_PROGRESS_MIN", "1048576", 1);
        char *a = malloc(n), *b = malloc(n);
        if (!a || !b) _exit(2);
        for (size_t i = 0; i < n; i++) a[i] = (char)(i * 7 + 3);
        apigen_copy_wide(b, a, n);
        _exit(memcmp(a, b, n) == 0 ? 0 : 1);
    }
    close(p[1]);
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(cap, 1);
    ssize_t k;
    while (out && (k = read(p[0], out + len, cap - 1 - len)) > 0) len += (size_t)k;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    *ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    return out;
}

int main(void)
{
    int ok;
    /* on: the last line says how much, with the side and process */
    char *t = copy_in_child("1", (size_t)8 << 20, &ok);
    CHECK(ok);
    CHECK(t && strstr(t, "apigen[guest ") && strstr(t, "copying: 8.0 MiB in "));
    free(t);
    /* below APIGEN_PROGRESS_MIN: nothing */
    t = copy_in_child("1", 4096, &ok);
    CHECK(ok);
    CHECK(t && *t == 0);
    free(t);
    /* off */
    t = copy_in_child("0", (size_t)8 << 20, &ok);
    CHECK(ok);
    CHECK(t && *t == 0);
    free(t);
    /* unset, stderr a pipe: off */
    t = copy_in_child(NULL, (size_t)8 << 20, &ok);
    CHECK(ok);
    CHECK(t && *t == 0);
    free(t);
    if (failures) return 1;
    printf("progress: on, off, unset without a terminal, below the minimum: ok\n");
    return 0;
}
