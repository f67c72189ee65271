/* Answers the stub keeps (spec `cache:`): exaGetVersion, exaGetDeviceCount
 * and exaGetDeviceInfo asked again and again, an invalid device asked twice
 * (an error, which exa's stub must not keep: the thread's last error sees
 * it each time), and a fork child that asks again (its own session). The
 * output is the same natively and forwarded; tests/e2e/exa_cache.sh counts
 * what reached each server. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exa.h"

static void ask(const char *who, int device)
{
    exaDeviceInfo info;
    exaStatus st = exaGetDeviceInfo(device, &info);
    if (st == EXA_SUCCESS)
        printf("%s: device %d: %s, %u units, %llu bytes\n", who, device, info.name,
               info.compute_units, (unsigned long long)info.memory_bytes);
    else
        printf("%s: device %d: %s\n", who, device, exaStatusString(st));
}

int main(void)
{
    int n = 0, major = 0, minor = 0;
    for (int k = 0; k < 3; k++) {
        exaStatus a = exaGetDeviceCount(&n), b = exaGetVersion(&major, &minor);
        printf("count %d (%s), version %d.%d (%s)\n", n, exaStatusString(a), major, minor,
               exaStatusString(b));
    }
    if (n < 1 || n > 8)
        return 1;
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < n; d++)
            ask("parent", d);
    for (int k = 0; k < 2; k++) { /* an error: asked each time, the last error set each time */
        ask("parent", 99);
        printf("last error: %s\n", exaStatusString(exaGetLastError()));
    }
    printf("no out pointer: %s\n", exaStatusString(exaGetDeviceInfo(0, NULL)));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { /* a new session: nothing of the parent's is kept */
        ask("child", 0);
        ask("child", 0);
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;
    ask("parent", 0);
    printf("done\n");
    return 0;
}
