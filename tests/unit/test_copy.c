/* apigen_copy_wide: every byte lands, at part boundaries and odd sizes,
 * with several threads copying at once (one gets the helpers, the others
 * copy alone), and in a fork()ed child, which has none of the parent's
 * helper threads. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apigen_copy.h"
#include "check.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

/* Copies n bytes into the middle of a guarded buffer: 0 on success. */
static int copy_ok(size_t n, unsigned seed)
{
    const size_t guard = 4096;
    unsigned char *src = malloc(n + 1), *dst = malloc(n + 2 * guard);
    if (!src || !dst) return 1;
    fill(src, n, seed);
    memset(dst, 0xA5, n + 2 * guard);
    apigen_copy_wide(dst + guard, src, n);
    int bad = memcmp(dst + guard, src, n) != 0;
    for (size_t i = 0; i < guard; i++)
        bad |= dst[i] != 0xA5 || dst[guard + n + i] != 0xA5;
    free(src);
    free(dst);
    return bad;
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    int bad = 0;
    for (unsigned r = 0; r < 6; r++)
        bad |= copy_ok(((size_t)3 << 20) + id * 4099 + r, id * 16 + r);
    return (void *)(uintptr_t)bad;
}

int main(void)
{
    /* helpers even on a two-processor machine (the default is half of them) */
    setenv("APIGEN_COPY_THREADS", "4", 0);
    const size_t sizes[] = {0, 1, 4095, (size_t)1 << 20, ((size_t)1 << 20) - 1,
                            ((size_t)1 << 20) + 1, (size_t)512 << 10, ((size_t)5 << 19) + 7,
                            (size_t)8 << 20, ((size_t)33 << 20) + 13};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) CHECK(copy_ok(sizes[i], (unsigned)i) == 0);

    pthread_t t[4];
    for (unsigned i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
    for (unsigned i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(t[i], &r);
        CHECK(r == NULL);
    }

    pid_t pid = fork();
    if (pid == 0) _exit(copy_ok((size_t)9 << 20, 77) || copy_ok(((size_t)2 << 20) + 3, 78));
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(copy_ok((size_t)6 << 20, 79) == 0); /* the parent's helpers still serve it */
    CHECK_DONE();
}
