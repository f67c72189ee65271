/* setmemo.c: repeats of a setter answered in the guest (apigen_setmemo_*).
 *
 * Programs set an attribute of an object to the same value again and again
 * (a kernel's dynamic shared memory limit before each of its launches). A
 * set that succeeded changes nothing when repeated with the same value,
 * and succeeds again, as long as nothing else changed the object: another
 * setter, the object's end. The spec says which calls may change such
 * things by making them forget a cache group (`cache_forget:`); a setter
 * forgets it too, at every call that reaches the server. So a memo keeps
 * (key, value) of its setter's successful calls while every forget of the
 * group since was one of its own: the group's epoch less its own forgets
 * (`foreign`) has not moved. A repeat of another key of the same setter
 * does not disturb an entry (different objects, or different attributes of
 * one); a call of the same key replaces its entry, a failed one drops it. */
#include <stdlib.h>

#include "apigen_rt.h"

struct apigen_setmemo_entry {
    uint64_t key[3];
    int64_t value;
};

enum { SETMEMO_MAX = 4096 }; /* past it, repeats simply go to the server */

/* Drops every entry when a forget not made by this setter came since they
 * were kept; false: the epoch is unknown (nothing may be kept). mu held. */
static bool still_valid(apigen_setmemo *m, const apigen_api *api, const char *group)
{
    uint64_t epoch;
    if (!apigen_cache_epoch(api, group, &epoch)) {
        m->n = 0;
        m->foreign_known = false;
        return false;
    }
    uint64_t foreign = epoch - m->own;
    if (!m->foreign_known || foreign != m->foreign) {
        m->n = 0;
        m->foreign = foreign;
        m->foreign_known = true;
    }
    return true;
}

static size_t find(const apigen_setmemo *m, const uint64_t key[3])
{
    for (size_t i = 0; i < m->n; i++)
        if (m->entries[i].key[0] == key[0] && m->entries[i].key[1] == key[1] &&
            m->entries[i].key[2] == key[2])
            return i;
    return m->n;
}

bool apigen_setmemo_repeat(apigen_setmemo *m, const apigen_api *api, const char *group,
                           const uint64_t key[3], int64_t value)
{
    pthread_mutex_lock(&m->mu);
    bool hit = false;
    if (still_valid(m, api, group)) {
        size_t i = find(m, key);
        hit = i < m->n && m->entries[i].value == value;
    }
    pthread_mutex_unlock(&m->mu);
    return hit;
}

void apigen_setmemo_note(apigen_setmemo *m, const apigen_api *api, const char *group,
                         const uint64_t key[3], int64_t value, bool ok)
{
    pthread_mutex_lock(&m->mu);
    m->own++; /* the call's own forget of the group */
    if (still_valid(m, api, group)) {
        size_t i = find(m, key);
        if (i < m->n) /* replaced or dropped */
            m->entries[i] = m->entries[--m->n];
        if (ok && m->n < SETMEMO_MAX) {
            if (!m->entries)
                m->entries = malloc(SETMEMO_MAX * sizeof *m->entries);
            if (m->entries)
                m->entries[m->n++] = (struct apigen_setmemo_entry){{key[0], key[1], key[2]}, value};
        }
    }
    pthread_mutex_unlock(&m->mu);
}
