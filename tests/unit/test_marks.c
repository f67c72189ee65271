/* runtime/marks.c: named marks the stubs of one process share. Checked: an
 * unset mark reads unset; a set one reads set, also under another copy of
 * its name; setting twice takes one slot; threads setting marks at once
 * lose none; once more names were set than the table holds, every mark
 * reads as set (a mark only ever stops an answer in the guest, so the
 * overflow must not read as "never happened"). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "apigen_rt.h"
#include "check.h"

#define THREADS 4
#define PER_THREAD 6

static char names_[THREADS][PER_THREAD][32];

static void *set_some(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < PER_THREAD; i++)
        apigen_mark_set(names_[t][i]);
    return NULL;
}

int main(void)
{
    CHECK(!apigen_mark_get("capture begun"));
    apigen_mark_set("capture begun");
    char copy[] = "capture begun"; /* another string with the same name */
    CHECK(apigen_mark_get(copy));
    apigen_mark_set(copy);
    CHECK(!apigen_mark_get("capture"));

    /* 1 + 24 names from four threads at once: all kept (the table holds 32) */
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < PER_THREAD; i++)
            snprintf(names_[t][i], sizeof names_[t][i], "thread %d mark %d", t, i);
        pthread_create(&th[t], NULL, set_some, (void *)(long)t);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++)
            CHECK(apigen_mark_get(names_[t][i]));
    CHECK(!apigen_mark_get("never set"));

    /* past the table: every mark reads as set */
    static char more[16][32];
    for (int i = 0; i < 16; i++) {
        snprintf(more[i], sizeof more[i], "more %d", i);
        apigen_mark_set(more[i]);
    }
    CHECK(apigen_mark_get("never set"));

    if (check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    else
        printf("marks: ok\n");
    return check_failures ? 1 : 0;
}
