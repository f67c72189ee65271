/* apigen_hobj.h: handle objects, for a guest library whose handles must be
 * pointers to objects the library owns (a driver behind a vendor loader
 * that reads a dispatch table through the first member of every object).
 *
 * Generated stubs of a spec with `api.handle_objects` include this header.
 * When APIGEN_HOBJ_FIRST names a `const void *const` symbol (the stub
 * defines it from the spec's `define:` macro), every handle that crosses
 * the guest boundary is converted:
 *   APIGEN_H2ID(h)          application handle -> the server's id
 *   APIGEN_ID2H(T, id)      id -> the one object of that id (interned)
 *   APIGEN_HREF(h, d, own)  the application's references: +1 created or
 *                           retained, -1 released; an object that a call
 *                           created (own) is freed when they reach 0
 *   APIGEN_IDS2H(p, n)      n bytes of ids (info queries) -> objects, in place
 *   APIGEN_PUT_KEYED(...)   a key/value list sent with the values of the
 *                           given keys converted to ids
 * Without it (the drop-in build) a handle is the id itself and all of this
 * is the identity. Objects are {first, id, ...}: a pointer the application
 * hands back is looked up by address, so a foreign or freed one gives an id
 * that no session holds (1), never a read through it. */
#ifndef APIGEN_HOBJ_H
#define APIGEN_HOBJ_H

#include <stddef.h>
#include <stdint.h>

#include "apigen_rt.h"

#if defined(APIGEN_GUEST_SO) && defined(__GNUC__) /* exported by libapigen-guest.so.2 */
#pragma GCC visibility push(default)
#endif
void *apigen_hobj_get(uint64_t id, const void *first);
uint64_t apigen_hobj_id(const void *h);
bool apigen_hobj_known(const void *h);
void apigen_hobj_ref(const void *h, int delta, bool owned);
void apigen_hobj_ids_to_objs(void *p, uint64_t nbytes, const void *first);
APIGEN_CHECK bool apigen_hobj_put_keyed(apigen_wr *w, const void *p, uint64_t n, size_t elem,
                                        const int64_t *keys, size_t nkeys);
#if defined(APIGEN_GUEST_SO) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#if defined(APIGEN_HOBJ_FIRST)
extern const void *const APIGEN_HOBJ_FIRST;
#define APIGEN_H2ID(h) apigen_hobj_id((const void *)(h))
#define APIGEN_ID2H(T, id) ((T)apigen_hobj_get((id), APIGEN_HOBJ_FIRST))
#define APIGEN_HREF(h, d, own) apigen_hobj_ref((const void *)(h), (d), (own))
#define APIGEN_IDS2H(p, n) apigen_hobj_ids_to_objs((p), (n), APIGEN_HOBJ_FIRST)
#define APIGEN_PUT_KEYED(w, p, n, elem, keys, nkeys) \
    apigen_hobj_put_keyed((w), (p), (n), (elem), (keys), (nkeys))
#else
#define APIGEN_H2ID(h) ((uint64_t)(uintptr_t)(h))
#define APIGEN_ID2H(T, id) ((T)(uintptr_t)(id))
#define APIGEN_HREF(h, d, own) ((void)0)
#define APIGEN_IDS2H(p, n) ((void)0)
#define APIGEN_PUT_KEYED(w, p, n, elem, keys, nkeys) \
    ((void)(elem), (void)(keys), (void)(nkeys), apigen_put_opt_bytes((w), (p), (n)))
#endif

#endif
