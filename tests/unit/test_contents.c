/* runtime/contents.c: what the guest holds of a handle's contents (spec
 * types.handles.H.contents), as a memoized query's key puts it. Equal
 * contents give equal bytes whatever order the setters ran in; a changed
 * attribute, an id made again with other values (as if reused), a destroyed
 * handle, a change by another thread and an async error that came back
 * after a change each give other bytes or none, so no kept answer of other
 * contents can be found. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "rt_internal.h"

enum { CREATE = 1, SET = 2 };

static void put_i32(apigen_wr *w, int32_t v)
{
    apigen_wr_reset(w);
    if (!apigen_put_raw(w, &v, sizeof v)) w->failed = true;
}

static void create(uint64_t id, int32_t v)
{
    apigen_wr w;
    apigen_wr_init(&w);
    put_i32(&w, v);
    apigen_contents_create(CREATE, id, &w);
    apigen_wr_free(&w);
}

static void set(uint64_t id, int32_t attr, int32_t v)
{
    apigen_wr k, w;
    apigen_wr_init(&k);
    apigen_wr_init(&w);
    put_i32(&k, attr);
    put_i32(&w, v);
    apigen_contents_set(SET, id, &k, &w);
    apigen_wr_free(&k);
    apigen_wr_free(&w);
}

/* what a key holds of id: malloc'd "hex" or NULL (not vouched for) */
static char *key_of(uint64_t id)
{
    apigen_wr w;
    apigen_wr_init(&w);
    char *s = NULL;
    if (apigen_contents_put(&w, id) && !w.failed) {
        s = malloc(w.len * 2 + 1);
        for (size_t i = 0; i < w.len; i++) snprintf(s + 2 * i, 3, "%02x", w.buf[i]);
        s[w.len * 2] = 0;
    }
    apigen_wr_free(&w);
    return s;
}

static int same(uint64_t a, uint64_t b)
{
    char *x = key_of(a), *y = key_of(b);
    int r = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return r;
}

static void *other_thread(void *arg)
{
    set(*(uint64_t *)arg, 7, 1);
    return NULL;
}

int main(void)
{
    /* alike, whatever the setters' order; a repeated set replaces */
    create(101, 5);
    set(101, 1, 10);
    set(101, 2, 20);
    create(102, 5);
    set(102, 2, 20);
    set(102, 1, 99);
    set(102, 1, 10);
    CHECK(same(101, 102));
    /* a changed attribute, another create value */
    set(102, 2, 21);
    CHECK(!same(101, 102));
    set(102, 2, 20);
    CHECK(same(101, 102));
    create(103, 6);
    set(103, 1, 10);
    set(103, 2, 20);
    CHECK(!same(101, 103));
    /* destroyed: nothing to vouch for; the id made again (as if reused) with
     * other values holds only those */
    apigen_contents_forget(102);
    char *k = key_of(102);
    CHECK(k == NULL);
    free(k);
    create(102, 6);
    set(102, 1, 10);
    set(102, 2, 20);
    CHECK(same(102, 103));
    CHECK(!same(102, 101));
    /* made again without a destroy (a create that failed and left an entry) */
    create(103, 5);
    set(103, 1, 10);
    set(103, 2, 20);
    CHECK(same(103, 101));
    /* never made: unknown */
    k = key_of(104);
    CHECK(k == NULL);
    free(k);
    /* changed by another thread: not vouched for, here or there */
    pthread_t t;
    uint64_t id = 103;
    CHECK(pthread_create(&t, NULL, other_thread, &id) == 0);
    pthread_join(t, NULL);
    k = key_of(103);
    CHECK(k == NULL);
    free(k);
    /* an async error came back: what was set before is not vouched for, and
     * a later set does not vouch for it again; a new create is */
    rt_contents_taint();
    k = key_of(101);
    CHECK(k == NULL);
    free(k);
    set(101, 3, 1);
    k = key_of(101);
    CHECK(k == NULL);
    free(k);
    create(105, 5);
    set(105, 1, 10);
    set(105, 2, 20);
    k = key_of(105);
    CHECK(k != NULL);
    free(k);
    /* a setter whose value could not be recorded: unknown from then on */
    set(105, 9, 1);
    apigen_contents_set(SET, 105, NULL, NULL);
    k = key_of(105);
    CHECK(k == NULL);
    free(k);
    /* a set without a key sets all of it: two whole setters in either order
     * hold what the last one gave, not both */
    create(106, 5);
    set(106, 1, 10);
    {
        apigen_wr k0, w;
        apigen_wr_init(&k0);
        apigen_wr_init(&w);
        k0.len = 0;
        put_i32(&w, 77);
        apigen_contents_set(SET + 1, 106, &k0, &w); /* the whole descriptor: 77 */
        put_i32(&w, 88);
        apigen_contents_set(SET + 2, 106, &k0, &w); /* another whole setter: 88 */
        create(107, 5);
        put_i32(&w, 88);
        apigen_contents_set(SET + 2, 107, &k0, &w);
        CHECK(same(106, 107)); /* 88 alone, as 107 */
        create(108, 5);
        apigen_contents_set(SET + 2, 108, &k0, &w);
        put_i32(&w, 77);
        apigen_contents_set(SET + 1, 108, &k0, &w);
        CHECK(!same(106, 108)); /* 77 last: another descriptor */
        apigen_wr_free(&k0);
        apigen_wr_free(&w);
    }
    for (uint64_t i = 101; i <= 108; i++) apigen_contents_forget(i);
    if (check_failures) fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures != 0;
}
