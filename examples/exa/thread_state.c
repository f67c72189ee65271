/* The calling thread's current device (spec `api.thread_state`): asked,
 * set, set to a device that does not exist (refused: nothing changes),
 * unset, asked again, and on a second thread that has its own. The output
 * is the same natively and forwarded; tests/e2e/exa_cache.sh counts what
 * reached the server. */
#include <pthread.h>
#include <stdio.h>

#include "exa.h"

static void get(const char *who)
{
    int d = -2;
    exaStatus st = exaGetCurrentDevice(&d);
    printf("%s: current device %d (%s)\n", who, d, exaStatusString(st));
}

static void *second(void *arg)
{
    (void)arg;
    get("thread");
    printf("thread: set 0: %s\n", exaStatusString(exaSetCurrentDevice(0)));
    get("thread");
    get("thread");
    return NULL;
}

int main(void)
{
    get("main");
    get("main");
    printf("main: set 1: %s\n", exaStatusString(exaSetCurrentDevice(1)));
    get("main");
    get("main");
    printf("main: set 99: %s\n", exaStatusString(exaSetCurrentDevice(99)));
    get("main");
    pthread_t th;
    if (pthread_create(&th, NULL, second, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 1;
    get("main");
    printf("main: unset: %s\n", exaStatusString(exaSetCurrentDevice(-1)));
    get("main");
    get("main");
    printf("main: NULL: %s\n", exaStatusString(exaGetCurrentDevice(NULL)));
    printf("done\n");
    return 0;
}
