/* A known sequence of exa calls for tests/e2e/metrics.py: what the server's
 * metrics must count. Holds two allocations (1 MiB + 4 KiB) until a line
 * arrives on stdin, so the test sees them on the session, then frees them
 * and frees one twice (the server refuses it: an error counted). Prints
 * "ready PID" once the allocations are made, "done" at the end. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exa.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #x);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    int major = 0, minor = 0;
    for (int i = 0; i < 3; i++)
        CHECK(exaGetVersion(&major, &minor) == EXA_SUCCESS);
    void *a = NULL, *b = NULL;
    CHECK(exaMalloc(&a, 1u << 20) == EXA_SUCCESS && a);
    CHECK(exaMalloc(&b, 4096) == EXA_SUCCESS && b);
    static char host[65536];
    memset(host, 7, sizeof host);
    CHECK(exaMemcpy(a, host, sizeof host, EXA_COPY_HOST_TO_DEVICE) == EXA_SUCCESS);
    exaDeviceInfo info;
    CHECK(exaGetDeviceInfo(99, &info) != EXA_SUCCESS); /* the library's error */
    printf("ready %ld\n", (long)getpid());
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 1;
    CHECK(exaFree(a) == EXA_SUCCESS);
    CHECK(exaFree(b) == EXA_SUCCESS);
    CHECK(exaFree(a) != EXA_SUCCESS); /* freed: the server's refusal */
    printf("done\n");
    return 0;
}
