/* marks.c: named marks that the stubs of one process set and read (one
 * guest runtime per process, libapigen-guest.so.2): what one API's
 * hand-written guest code must know of another API's calls before it
 * answers a call in the guest, e.g. that some kind of state was ever begun
 * through the other. A mark is set once and never cleared; names are the
 * stubs' own strings (stubs stay loaded). Should the table fill up, every
 * mark reads as set: a mark only ever stops a local answer. */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "apigen_rt.h"

#define MARKS_MAX 32

static _Atomic(const char *) marks_[MARKS_MAX];
static atomic_bool overflow_;

void apigen_mark_set(const char *name)
{
    for (unsigned i = 0; i < MARKS_MAX; i++) {
        const char *n = atomic_load(&marks_[i]);
        if (!n && atomic_compare_exchange_strong(&marks_[i], &n, name))
            return;
        if (strcmp(n, name) == 0) /* n: the slot's name, ours or another's */
            return;
    }
    atomic_store(&overflow_, true);
}

bool apigen_mark_get(const char *name)
{
    if (atomic_load(&overflow_))
        return true;
    for (unsigned i = 0; i < MARKS_MAX; i++) {
        const char *n = atomic_load(&marks_[i]);
        if (!n)
            return false;
        if (strcmp(n, name) == 0)
            return true;
    }
    return false;
}
