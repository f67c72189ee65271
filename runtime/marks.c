/* marks.c: named marks that the stubs of one process set and read (one
 * guest runtime per process, libapigen-guest.so.2): what one API's
 * hand-written guest code must know of another API's calls before it
 * answers a call in the guest, e.g. that some kind of state was ever begun
 * through the other. A mark is set once and never cleared; a count goes up
 * and down (what is open now); names are the stubs' own strings (stubs stay
 * loaded). Should a table fill up, every mark reads as set and no count as
 * zero: a mark or a count only ever stops a local answer. */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "apigen_rt.h"

#define MARKS_MAX 32
#define COUNTS_MAX 8

static _Atomic(const char *) marks_[MARKS_MAX];
static atomic_bool overflow_;

static _Atomic(const char *) count_names_[COUNTS_MAX];
static atomic_long counts_[COUNTS_MAX];
static atomic_bool count_overflow_;

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

/* name's slot (add: taken if missing), or -1 */
static int count_slot(const char *name, bool add)
{
    for (unsigned i = 0; i < COUNTS_MAX; i++) {
        const char *n = atomic_load(&count_names_[i]);
        if (!n && (!add || atomic_compare_exchange_strong(&count_names_[i], &n, name)))
            return add ? (int)i : -1;
        if (n == name || strcmp(n, name) == 0) /* the stubs' own strings: mostly one pointer */
            return (int)i;
    }
    return -1;
}

void apigen_mark_add(const char *name, int delta)
{
    int i = count_slot(name, true);
    if (i < 0) {
        atomic_store(&count_overflow_, true);
        return;
    }
    long n = atomic_load(&counts_[i]);
    while (!atomic_compare_exchange_weak(&counts_[i], &n, n + delta < 0 ? 0 : n + delta)) {}
}

bool apigen_mark_zero(const char *name)
{
    if (atomic_load(&count_overflow_))
        return false;
    int i = count_slot(name, false);
    return i < 0 || atomic_load(&counts_[i]) == 0;
}
