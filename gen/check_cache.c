/* `cache:` (docs/spec.md, "Answers kept in the guest"): a function whose
 * out-values depend only on its inputs for the life of a session. The stub
 * keeps each answer per server session, keyed by the request's bytes, and
 * answers the same request again without a round trip. Runs after every
 * parameter has its kind, so each rule checks what actually travels: the
 * key must be the whole input, and the reply must be plain bytes that stay
 * true for the session. */
#include <string.h>

#include "check.h"
#include "expr.h"
#include "util.h"

static const char *const cache_keys[] = {"if", "errors", "keep_if", "group", "contents", "ids",
                                         "thread_state", NULL};
static const char *const contents_keys[] = {"sets", "key", "unknown", NULL};

static const handle_type_def *handle_of(const api_model *m, const param_ann *a)
{
    for (size_t k = 0; a->handle_type && k < m->nhandles; k++)
        if (strcmp(m->handles[k].name, a->handle_type) == 0) return &m->handles[k];
    return NULL;
}

static int param_index(const function_def *f, const char *name)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (f->sig.params[i].name && strcmp(f->sig.params[i].name, name) == 0) return (int)i;
    return -1;
}

/* `cache: {contents: [P...], ids: [Q...]}` (a memoized query): marks each
 * listed handle parameter in f->memo; 0 when something is wrong. */
static int read_memo(api_model *m, function_def *f, const spec_node *cn, const spec_node *in,
                     diag_sink *d)
{
    f->memo = arena_alloc(m->arena, f->sig.nparams + 1);
    memset(f->memo, 0, f->sig.nparams + 1);
    int ok = 1;
    const spec_node *lists[2] = {cn, in};
    const char *what[2] = {"cache.contents", "cache.ids"};
    for (int l = 0; l < 2; l++) {
        if (!lists[l]) continue;
        char **names = NULL;
        size_t n = 0;
        if (!spec_string_list(lists[l], what[l], d, m->arena, &names, &n)) {
            ok = 0;
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            int i = param_index(f, names[k]);
            const param_ann *a = i >= 0 ? &f->sig.params[i].ann : NULL;
            const handle_type_def *h = a ? handle_of(m, a) : NULL;
            if (!a || a->kind != PK_HANDLE) {
                diag_error(d, lists[l]->loc, f->name, names[k],
                           "%s: '%s' is not a handle parameter of %s (list the handles the "
                           "answer depends on)", what[l], names[k], f->name);
                ok = 0;
            } else if (f->memo[i]) {
                diag_error(d, lists[l]->loc, f->name, names[k],
                           "%s: '%s' is listed twice (a handle is keyed by its contents or by "
                           "its id)", what[l], names[k]);
                ok = 0;
            } else if (l == 0 && (!h || !h->contents)) {
                diag_error(d, lists[l]->loc, f->name, names[k],
                           "cache.contents: '%s' is a %s, whose type does not say `contents: "
                           "true` in types.handles: the guest does not see every change of it, "
                           "so it cannot key an answer by what it holds",
                           names[k], a->handle_type ? a->handle_type : "handle");
                f->memo[i] = MEMO_CONTENTS; /* said once */
                ok = 0;
            } else {
                f->memo[i] = l == 0 ? MEMO_CONTENTS : MEMO_ID;
            }
        }
    }
    return ok;
}

/* `cache: {thread_state: [SLOT...]}`: the answer also depends on these
 * values the thread holds (api.thread_state: a query about "the current"
 * object); they join its key, and it is kept or answered only while the
 * guest knows them. 0 when something is wrong. */
static int read_tstate(api_model *m, function_def *f, const spec_node *n, const spec_node *sl,
                       diag_sink *d)
{
    char **names = NULL;
    size_t k = 0;
    if (!spec_string_list(n, "cache.thread_state", d, m->arena, &names, &k)) return 0;
    if (f->memo) {
        diag_error(d, n->loc, f->name, NULL,
                   "cache.thread_state: a memoized query (`contents:`, `ids:`) has a key of its "
                   "own; the thread's values cannot join it (drop one of them)");
        return 0;
    }
    size_t nslots = sl && sl->kind == SN_LIST ? sl->n : 0;
    f->cache_tstate = arena_alloc(m->arena, (k + 1) * sizeof(int));
    int ok = 1;
    for (size_t i = 0; i < k; i++) {
        int slot = -1;
        for (size_t j = 0; j < nslots; j++)
            if (sl->items[j]->kind == SN_SCALAR && strcmp(sl->items[j]->str, names[i]) == 0)
                slot = (int)j;
        if (slot < 0) {
            diag_error(d, n->loc, f->name, NULL,
                       "cache.thread_state: '%s' is not a slot of api.thread_state (the values "
                       "the guest keeps per thread)", names[i]);
            ok = 0;
            continue;
        }
        f->cache_tstate[f->ncache_tstate++] = slot;
    }
    return ok;
}

static int returns_api_error(const api_model *m, const function_def *f)
{
    return m->api.error_ty &&
           strcmp(f->sig.ret->canonical_unqual, m->api.error_ty->canonical_unqual) == 0;
}

/* Why parameter a keeps the function out of the cache, or NULL. */
static const char *uncacheable_param(const param_ann *a)
{
    switch (a->kind) {
    case PK_VALUE: case PK_STRUCT: case PK_STRING: case PK_IGNORE:
        return NULL;
    case PK_HANDLE:
        return "a handle: its id may name another object once this one is gone";
    case PK_DEVPTR:
        return "a device address: it may name another allocation once this one is freed";
    case PK_IN:
        /* one plain element travels by copy in a cached function (emit_stub.c):
         * its bytes are part of the key */
        if (a->elem == EK_BYTES && !a->count && !a->terminated && !a->elem_by_param &&
            !a->stream_host && a->elem_type && a->elem_type->kind != TY_VOID)
            return NULL;
        return "an input buffer the call sizes (only one plain element travels by copy): it may "
               "travel as a reference into shared memory, not as bytes the guest can compare";
    case PK_INOUT:
        return "an input buffer: it may travel as a reference into shared memory, not as "
               "bytes the guest can compare";
    case PK_OUT:
        if (a->elem != EK_BYTES)
            return "an output of handles, device addresses or strings: only plain data can be "
                   "kept";
        if (a->stream_host)
            return "a streamed output (`stream:`)";
        return NULL;
    case PK_CALLBACK: case PK_USERDATA:
        return "a callback";
    case PK_COND:
        return "a conditional parameter (`if:`)";
    }
    return "of an unknown kind";
}

static int group_of(const api_model *m, const char *name)
{
    for (size_t i = 0; i < m->api.ncache_groups; i++)
        if (strcmp(m->api.cache_groups[i], name) == 0) return (int)i;
    return -1;
}

static int is_const_name(const api_model *m, const char *s)
{
    return model_find_enum_const(m, s, NULL) || model_find_macro(m, s);
}

/* slots: api.thread_state as the spec lists it (check_thread_state reads it
 * after this: its checks see which functions are cached) */
static void check_one(api_model *m, function_def *f, const spec_node *E, const spec_node *slots,
                      diag_sink *d)
{
    const spec_node *n = spec_get(E, "cache");
    if (!n) return;
    src_loc at = spec_key_loc(E, "cache");
    const spec_node *cond = NULL, *errs = NULL, *keep_if = NULL, *group = NULL;
    const spec_node *memo_contents = NULL, *memo_ids = NULL, *tstate = NULL;
    if (n->kind == SN_SCALAR) {
        if (strcmp(n->str, "session") != 0) {
            diag_error(d, n->loc, f->name, NULL,
                       "cache: '%s' is not a scope: write `cache: session` (answers kept for "
                       "the life of the server's session) or `cache: {if: EXPR, errors: [...]}`",
                       n->str);
            return;
        }
    } else if (spec_want_map(n, "cache", d, f->name, NULL)) {
        if (spec_check_keys(n, cache_keys, "cache", d, f->name, NULL)) return;
        cond = spec_get(n, "if");
        errs = spec_get(n, "errors");
        keep_if = spec_get(n, "keep_if");
        group = spec_get(n, "group");
        memo_contents = spec_get(n, "contents");
        memo_ids = spec_get(n, "ids");
        tstate = spec_get(n, "thread_state");
    } else {
        return;
    }
    int bad = 0;
    if ((memo_contents || memo_ids) && !read_memo(m, f, memo_contents, memo_ids, d)) bad = 1;
    if (f->memo && (group || keep_if)) {
        diag_error(d, at, f->name, NULL,
                   "cache: a memoized query (`contents:`, `ids:`) is keyed by what its handles "
                   "hold; `group:` and `keep_if:` are for answers of the session (drop them)");
        bad = 1;
    }
    if (f->mode != FN_FORWARD || f->async || f->async_if || !returns_api_error(m, f) ||
        f->ret_handle || f->gather_list || f->gather_all || f->gather_first || f->selects ||
        f->privileged || f->last_error) {
        diag_error(d, at, f->name, NULL,
                   "cache: needs a synchronous forwarded function that returns the API's error "
                   "type (the stub keeps an answer only when it knows it succeeded) and that "
                   "neither selects a server nor gathers a list or a first answer nor reads the "
                   "last error");
        bad = 1;
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_def *p = &f->sig.params[i];
        const char *why = uncacheable_param(&p->ann);
        if (!why || (f->memo && f->memo[i])) continue;
        /* a handle may key an answer of a group, and be one, where every call
         * ending such an object forgets the group (check_group_handles
         * verifies the spec's destroys) */
        if (!f->memo && group &&
            (p->ann.kind == PK_HANDLE || p->ann.kind == PK_DEVPTR ||
             (p->ann.kind == PK_OUT && p->ann.elem == EK_HANDLE && !p->ann.creates)))
            continue;
        if (p->ann.kind == PK_HANDLE && f->memo)
            why = "a handle listed in neither `cache.contents` (keyed by what it holds) nor "
                  "`cache.ids` (keyed by its id: an object whose answer-relevant state never "
                  "changes)";
        diag_error(d, at, f->name, p->name,
                   "cache: refused: this parameter is %s; a kept answer must depend only on "
                   "values that travel as they are (drop `cache:`)",
                   why);
        diag_note(d, p->loc, "declared here");
        bad = 1;
    }
    if (errs) {
        if (spec_string_list(errs, "cache.errors", d, m->arena, &f->cache_errors,
                             &f->ncache_errors)) {
            for (size_t i = 0; i < f->ncache_errors; i++) {
                const char *e = f->cache_errors[i];
                if (!is_const_name(m, e)) {
                    diag_error(d, errs->loc, f->name, NULL,
                               "cache.errors: '%s' is not an enum constant or integer macro of "
                               "the headers",
                               e);
                    bad = 1;
                } else if (m->api.success && strcmp(e, m->api.success) == 0) {
                    diag_error(d, errs->loc, f->name, NULL,
                               "cache.errors: '%s' is the success value, which is always kept", e);
                    bad = 1;
                }
            }
            if (f->ncache_errors && m->api.last_error_loc.line) {
                diag_error(d, errs->loc, f->name, NULL,
                           "cache.errors: refused: the API keeps a last error "
                           "(api.errors.last_error) that every failing call sets on the "
                           "server; an error answered in the guest would not set it. Keep "
                           "successes only (drop `errors:`)");
                bad = 1;
            }
        } else {
            bad = 1;
        }
    }
    if (cond) {
        if (cond->kind != SN_SCALAR) {
            diag_error(d, cond->loc, f->name, NULL, "cache.if: a C expression over the "
                                                  "function's parameters passed by value");
            bad = 1;
        } else {
            expr_env env = {m, f, 0, 0, d, NULL, "condition", cond->loc, 0};
            env.loc.col += (unsigned)cond->quote_cols;
            f->cache_if = expr_parse(&env, cond->str);
            if (!f->cache_if) {
                diag_note(d, f->loc, "declared here");
                bad = 1;
            }
        }
    }
    if (keep_if) {
        if (keep_if->kind != SN_SCALAR) {
            diag_error(d, keep_if->loc, f->name, NULL,
                       "cache.keep_if: a C expression over the answer (`*P` of an out "
                       "parameter P) and the parameters passed by value");
            bad = 1;
        } else {
            /* `*P` of an out pointer reads the answer; a NULL P reads 0 */
            expr_env env = {m, f, 1, 0, d, NULL, "condition", keep_if->loc, 1};
            env.loc.col += (unsigned)keep_if->quote_cols;
            f->cache_keep_if = expr_parse(&env, keep_if->str);
            if (!f->cache_keep_if) {
                diag_note(d, f->loc, "declared here");
                bad = 1;
            }
        }
    }
    if (group) {
        f->cache_group = group->kind == SN_SCALAR ? group_of(m, group->str) : -1;
        if (f->cache_group < 0) {
            diag_error(d, group->loc, f->name, NULL,
                       "cache.group: '%s' is not a name of api.cache_groups (declare it there: "
                       "the calls that name it in `cache_forget:` make this answer unknown)",
                       group->kind == SN_SCALAR ? group->str : "?");
            bad = 1;
        }
    }
    if (tstate && !read_tstate(m, f, tstate, slots, d)) bad = 1;
    if (!bad) f->cache = 1;
}

/* `contents: {sets: P, key: [K...]}`: the call sets part of what handle P
 * holds (types.handles.H.contents): the guest records the other inputs
 * under the values of K, once the call is queued or succeeded. */
static void check_contents(api_model *m, function_def *f, const spec_node *E, diag_sink *d)
{
    const spec_node *n = spec_get(E, "contents");
    if (!n) return;
    src_loc at = spec_key_loc(E, "contents");
    if (!spec_want_map(n, "contents", d, f->name, NULL) ||
        spec_check_keys(n, contents_keys, "contents", d, f->name, NULL))
        return;
    if (f->mode != FN_FORWARD || !returns_api_error(m, f) || f->ret_handle) {
        diag_error(d, at, f->name, NULL,
                   "contents: needs a forwarded function that returns the API's error type (the "
                   "guest records what it set once the call is queued or succeeded)");
        return;
    }
    /* `unknown: P`: the call changes P in a way the guest does not record (from
     * another handle's contents): what P holds is unknown from then on */
    const spec_node *un = spec_get(n, "unknown");
    if (un) {
        char **us = NULL;
        size_t nu = 0;
        if (!spec_string_list(un, "contents.unknown", d, m->arena, &us, &nu)) return;
        unsigned char *flags = arena_alloc(m->arena, f->sig.nparams + 1);
        memset(flags, 0, f->sig.nparams + 1);
        int bad = 0;
        for (size_t k = 0; k < nu; k++) {
            int up = param_index(f, us[k]);
            const param_ann *ua = up >= 0 ? &f->sig.params[up].ann : NULL;
            const handle_type_def *uh = ua ? handle_of(m, ua) : NULL;
            if (!ua || ua->kind != PK_HANDLE || !uh || !uh->contents || spec_get(n, "sets")) {
                diag_error(d, un->loc, f->name, us[k],
                           "contents.unknown: '%s' is not a handle parameter of a type with "
                           "`contents: true` in types.handles (or `sets:` is given too: one of "
                           "them)", us[k]);
                bad = 1;
            } else {
                flags[up] = 1;
            }
        }
        if (!bad) f->contents_unknown = flags;
        return;
    }
    const spec_node *sn = spec_get(n, "sets");
    const char *sets = NULL;
    if (!sn || !spec_string(sn, "contents.sets", d, f->name, NULL, &sets)) {
        if (!sn)
            diag_error(d, at, f->name, NULL,
                       "contents: needs `sets: P`, the handle parameter whose contents the call "
                       "sets (or `unknown: P`: the call changes it in a way the guest does not "
                       "record)");
        return;
    }
    int hp = param_index(f, sets);
    const param_ann *ha = hp >= 0 ? &f->sig.params[hp].ann : NULL;
    const handle_type_def *h = ha ? handle_of(m, ha) : NULL;
    if (!ha || ha->kind != PK_HANDLE || !h || !h->contents) {
        diag_error(d, sn->loc, f->name, sets,
                   "contents.sets: '%s' is not a handle parameter of a type with `contents: "
                   "true` in types.handles", sets);
        return;
    }
    f->contents_key = arena_alloc(m->arena, f->sig.nparams + 1);
    memset(f->contents_key, 0, f->sig.nparams + 1);
    const spec_node *kn = spec_get(n, "key");
    char **keys = NULL;
    size_t nk = 0;
    int bad = 0;
    if (kn && !spec_string_list(kn, "contents.key", d, m->arena, &keys, &nk)) bad = 1;
    for (size_t k = 0; k < nk; k++) {
        int i = param_index(f, keys[k]);
        if (i < 0 || i == hp || f->sig.params[i].ann.kind != PK_VALUE) {
            diag_error(d, kn->loc, f->name, keys[k],
                       "contents.key: '%s' is not a parameter of %s passed by value (the key "
                       "names the part the call sets: an attribute)", keys[k], f->name);
            bad = 1;
        } else {
            f->contents_key[i] = 1;
        }
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if ((int)i == hp || a->kind == PK_VALUE || a->kind == PK_STRUCT || a->kind == PK_STRING ||
            a->kind == PK_IGNORE || (a->kind == PK_IN && a->elem == EK_BYTES && !a->stream_host))
            continue;
        diag_error(d, f->sig.params[i].loc, f->name, f->sig.params[i].name,
                   "contents: refused: this parameter is no value or input bytes the guest can "
                   "record as what the handle holds");
        bad = 1;
    }
    if (!bad) f->contents_sets = (size_t)hp + 1;
}

/* `cache_forget: [GROUP, ...]`: after the call, whatever it returned, the
 * answers kept under each group (by any API of the family) are unknown. */
static void check_forget(api_model *m, function_def *f, const spec_node *E, diag_sink *d)
{
    const spec_node *n = spec_get(E, "cache_forget");
    if (!n) return;
    src_loc at = spec_key_loc(E, "cache_forget");
    char **names = NULL;
    size_t k = 0;
    if (!spec_string_list(n, "cache_forget", d, m->arena, &names, &k)) return;
    if (f->mode != FN_FORWARD) {
        diag_error(d, at, f->name, NULL,
                   "cache_forget: needs a forwarded function (the kept answers are forgotten "
                   "once its reply is back, or when it is queued, before it returns)");
        return;
    }
    f->cache_forget = arena_alloc(m->arena, (k + 1) * sizeof(int));
    for (size_t i = 0; i < k; i++) {
        int g = group_of(m, names[i]);
        if (g < 0) {
            diag_error(d, n->loc, f->name, NULL,
                       "cache_forget: '%s' is not a name of api.cache_groups", names[i]);
            continue;
        }
        f->cache_forget[f->ncache_forget++] = g;
    }
}

static int forgets(const function_def *g, int group)
{
    for (size_t i = 0; i < g->ncache_forget; i++)
        if (g->cache_forget[i] == group) return 1;
    return 0;
}

/* Whether g ends handles of type T: a `destroys:` parameter of T, or T's
 * `destroy:` function. */
static int ends_handles_of(const api_model *m, const function_def *g, const char *T)
{
    for (size_t k = 0; k < m->nhandles; k++)
        if (strcmp(m->handles[k].name, T) == 0 && m->handles[k].destroy_fn &&
            strcmp(m->handles[k].destroy_fn, g->name) == 0)
            return 1;
    for (size_t i = 0; i < g->sig.nparams; i++) {
        const param_ann *a = &g->sig.params[i].ann;
        if (a->kind == PK_HANDLE && a->destroys && a->handle_type && strcmp(a->handle_type, T) == 0)
            return 1;
    }
    return 0;
}

/* Whether g makes or frees device memory: a `destroys:` device address, or
 * device addresses it `creates:`. */
static int changes_device_ranges(const function_def *g)
{
    for (size_t i = 0; i < g->sig.nparams; i++) {
        const param_ann *a = &g->sig.params[i].ann;
        if ((a->kind == PK_DEVPTR && a->destroys) ||
            ((a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_DEVPTR && a->creates))
            return 1;
    }
    return 0;
}

/* An answer keyed by a device address lasts while the allocation does: a
 * freed address may be another allocation's next, and an address asked
 * about before it was allocated has another answer after. Every function of
 * this spec that frees or creates device ranges must forget G. */
static void check_group_devptrs(const api_model *m, const function_def *f,
                                const spec_node *const *entries, diag_sink *d)
{
    for (size_t k = 0; k < m->nfunctions; k++) {
        const function_def *g = &m->functions[k];
        if (changes_device_ranges(g) && !forgets(g, f->cache_group))
            diag_error(d, entries[k] ? entries[k]->loc : g->loc, g->name, NULL,
                       "it makes or frees device memory, and %s keeps answers keyed by a device "
                       "address (cache.group '%s'): add '%s' to its `cache_forget:` (an "
                       "address may name another allocation afterwards)",
                       f->name, m->api.cache_groups[f->cache_group],
                       m->api.cache_groups[f->cache_group]);
    }
}

/* An answer keyed by a handle (`cache: {group: G}` with a handle parameter)
 * stays true only while the object lives: a handle value of an ended object
 * may name a new one. Every function of this spec that ends such an object
 * must forget G (calls that end it otherwise, another API's included, are the
 * spec author's to list). */
static void check_group_handles(api_model *m, const spec_node *const *entries, diag_sink *d)
{
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (!f->cache || f->cache_group < 0 || f->memo) continue;
        int devptr_key = 0;
        for (size_t j = 0; j < f->sig.nparams; j++)
            devptr_key |= f->sig.params[j].ann.kind == PK_DEVPTR;
        if (devptr_key) check_group_devptrs(m, f, entries, d);
        for (size_t j = 0; j < f->sig.nparams; j++) {
            const param_ann *a = &f->sig.params[j].ann;
            if ((a->kind != PK_HANDLE && !(a->kind == PK_OUT && a->elem == EK_HANDLE)) ||
                !a->handle_type)
                continue;
            for (size_t k = 0; k < m->nfunctions; k++) {
                const function_def *g = &m->functions[k];
                if (ends_handles_of(m, g, a->handle_type) &&
                    !forgets(g, f->cache_group))
                    diag_error(d, entries[k] ? entries[k]->loc : g->loc, g->name, NULL,
                               "it ends a %s, whose handle keys or is an answer %s keeps (cache.group "
                               "'%s'): add '%s' to its `cache_forget:` (a new object may get "
                               "the ended one's handle)",
                               a->handle_type, f->name,
                               m->api.cache_groups[f->cache_group],
                               m->api.cache_groups[f->cache_group]);
            }
        }
    }
}

void check_cache(api_model *m, const spec_node *root, const spec_node *const *entries,
                 diag_sink *d)
{
    const spec_node *slots = spec_get(spec_get(root, "api"), "thread_state");
    const spec_node *gs = spec_get(spec_get(root, "api"), "cache_groups");
    if (gs && spec_string_list(gs, "api.cache_groups", d, m->arena, &m->api.cache_groups,
                               &m->api.ncache_groups)) {
        for (size_t i = 0; i < m->api.ncache_groups; i++) {
            const char *g = m->api.cache_groups[i];
            int dup = group_of(m, g) != (int)i;
            if (!is_c_identifier(g) || dup)
                diag_error(d, gs->loc, NULL, NULL, "api.cache_groups: '%s' is %s", g,
                           dup ? "given twice" : "not a C identifier");
        }
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        m->functions[i].cache_group = -1;
        check_contents(m, &m->functions[i], entries[i], d);
        check_one(m, &m->functions[i], entries[i], slots, d);
        check_forget(m, &m->functions[i], entries[i], d);
    }
    check_group_handles(m, entries, d);
}
