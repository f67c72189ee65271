/* Per-thread values the guest tracks (docs/spec.md "Thread state kept in the
 * guest"): `api.thread_state` names them (slots), a function's `thread_state:`
 * says which calls set, forget, answer or exchange them. A value is known
 * only after a call that tells it (a successful set, an answer fetched from
 * the server, a swap it accepted), so the guest answers exactly what the
 * server's thread would.
 * Runs after every parameter has its kind. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "expr.h"
#include "util.h"

static const char *const entry_keys[] = {"if",     "set",      "forget", "forget_all",
                                         "answer", "exchange", NULL};

static int returns_api_error(const api_model *m, const function_def *f)
{
    return m->api.error_ty &&
           strcmp(f->sig.ret->canonical_unqual, m->api.error_ty->canonical_unqual) == 0;
}

static param_def *param_named(function_def *f, const char *name)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (f->sig.params[i].name && strcmp(f->sig.params[i].name, name) == 0)
            return &f->sig.params[i];
    return NULL;
}

static int slot_of(const api_model *m, const char *name)
{
    for (size_t i = 0; i < m->api.nthread_state; i++)
        if (strcmp(m->api.thread_state[i], name) == 0) return (int)i;
    return -1;
}

/* An out pointer to one value the stub can hold as 64 bits: an integer, an
 * enum or a handle (not created by the call: see `set:` for that). */
static int one_value_out(const param_def *p, int creates_ok)
{
    const param_ann *a = &p->ann;
    if (a->kind != PK_OUT || a->count || a->count_after || !a->elem_type) return 0;
    if (a->elem == EK_HANDLE) return creates_ok || !a->creates;
    const type_info *t = a->elem_type;
    return a->elem == EK_BYTES && (t->kind == TY_SINT || t->kind == TY_UINT || t->kind == TY_ENUM);
}

/* An inout pointer to one enum value (`exchange:`): the guest can tell the
 * values the library takes (the enum's constants) from those it refuses. */
static int one_enum_inout(const param_def *p)
{
    const param_ann *a = &p->ann;
    const type_info *t = a->elem_type;
    return a->kind == PK_INOUT && !a->count && !a->count_after && t && a->elem == EK_BYTES &&
           t->kind == TY_ENUM && t->enm && t->enm->nconsts > 0;
}

static int one_value_in(const param_def *p)
{
    const param_ann *a = &p->ann;
    if (a->kind == PK_HANDLE) return 1;
    return a->kind == PK_VALUE &&
           (p->type->kind == TY_SINT || p->type->kind == TY_UINT || p->type->kind == TY_ENUM);
}

static int want_slot(api_model *m, function_def *f, const spec_node *n, diag_sink *d,
                     const char *what)
{
    int s = n && n->kind == SN_SCALAR ? slot_of(m, n->str) : -1;
    if (s < 0)
        diag_error(d, n ? n->loc : f->loc, f->name, NULL,
                   "thread_state.%s: '%s' is not a slot of api.thread_state", what,
                   n && n->kind == SN_SCALAR ? n->str : "?");
    return s;
}

/* `answer:` / `exchange:` ({SLOT: PARAM}, one of each at most): the slot and
 * the parameter, which must be what `want` says (inout: an inout pointer to
 * one enum value, else an out pointer to one value) */
static void slot_param(api_model *m, function_def *f, const spec_node *n, const char *key,
                       const char *want, int inout, diag_sink *d, int *slot, char **param)
{
    char what[40];
    snprintf(what, sizeof what, "thread_state.%s", key);
    if (!n || !spec_want_map(n, what, d, f->name, NULL)) return;
    if (n->n != 1) {
        diag_error(d, n->loc, f->name, NULL, "%s: one slot: {SLOT: PARAM}", what);
        return;
    }
    int s = slot_of(m, n->keys[0]);
    const spec_node *v = n->items[0];
    param_def *p = v && v->kind == SN_SCALAR ? param_named(f, v->str) : NULL;
    if (s < 0)
        diag_error(d, n->key_locs[0], f->name, NULL, "%s: '%s' is not a slot of api.thread_state",
                   what, n->keys[0]);
    else if (!p || !(inout ? one_enum_inout(p) : one_value_out(p, 0)))
        diag_error(d, v ? v->loc : n->loc, f->name, NULL, "%s: '%s' is not %s", what,
                   v && v->kind == SN_SCALAR ? v->str : "?", want);
    else {
        *slot = s;
        *param = p->name;
    }
}

static void check_entry(api_model *m, function_def *f, const spec_node *E, state_entry *se,
                        diag_sink *d)
{
    se->answer_slot = -1;
    se->exchange_slot = -1;
    if (!spec_want_map(E, "a state entry", d, f->name, NULL)) return;
    if (spec_check_keys(E, entry_keys, "a state entry", d, f->name, NULL)) return;
    const spec_node *c = spec_get(E, "if"), *set = spec_get(E, "set"),
                    *fg = spec_get(E, "forget"), *fa = spec_get(E, "forget_all"),
                    *an = spec_get(E, "answer"), *ex = spec_get(E, "exchange");
    if (c) {
        if (c->kind != SN_SCALAR) {
            diag_error(d, c->loc, f->name, NULL, "thread_state.if: a C expression over the function's "
                                               "parameters passed by value");
        } else {
            expr_env env = {m, f, 0, 0, d, NULL, "condition", c->loc, 0};
            env.loc.col += (unsigned)c->quote_cols;
            se->cond = expr_parse(&env, c->str);
            if (!se->cond) diag_note(d, f->loc, "declared here");
        }
    }
    if (set && spec_want_map(set, "thread_state.set", d, f->name, NULL)) {
        se->set_slot = arena_alloc(m->arena, (set->n + 1) * sizeof(int));
        se->set_param = arena_alloc(m->arena, (set->n + 1) * sizeof(char *));
        se->set_deref = arena_alloc(m->arena, (set->n + 1) * sizeof(int));
        for (size_t i = 0; i < set->n; i++) {
            int s = slot_of(m, set->keys[i]);
            const spec_node *v = set->items[i];
            if (s < 0) {
                diag_error(d, set->key_locs[i], f->name, NULL,
                           "thread_state.set: '%s' is not a slot of api.thread_state", set->keys[i]);
                continue;
            }
            const char *pn = v && v->kind == SN_SCALAR ? v->str : "";
            int deref = pn[0] == '*';
            param_def *p = param_named(f, pn + deref);
            if (!p || (deref ? !one_value_out(p, 1) : !one_value_in(p))) {
                diag_error(d, v ? v->loc : set->key_locs[i], f->name, NULL,
                           "thread_state.set: '%s' is neither a parameter passed by value (an integer, "
                           "an enum or a handle) nor `*P` of an out pointer P to one such value",
                           pn);
                continue;
            }
            se->set_slot[se->nset] = s;
            se->set_param[se->nset] = p->name;
            se->set_deref[se->nset++] = deref;
        }
    }
    if (fg) {
        const spec_node *one = fg;
        size_t k = fg->kind == SN_LIST ? fg->n : 1;
        se->forget = arena_alloc(m->arena, (k + 1) * sizeof(int));
        for (size_t i = 0; i < k; i++) {
            one = fg->kind == SN_LIST ? fg->items[i] : fg;
            int s = want_slot(m, f, one, d, "forget");
            if (s >= 0) se->forget[se->nforget++] = s;
        }
    }
    if (fa) spec_bool(fa, "thread_state.forget_all", d, f->name, NULL, &se->forget_all);
    slot_param(m, f, an, "answer", "an out pointer to one integer, enum or handle (that the call "
                                   "does not create)", 0, d, &se->answer_slot, &se->answer_param);
    slot_param(m, f, ex, "exchange", "an inout pointer to one enum value (the new value in, the old "
                                     "one out)", 1, d, &se->exchange_slot, &se->exchange_param);
}

/* api.thread_state_effects (what this API's calls do to the thread state
 * other APIs of its family keep) and api.thread_state_lazy (values of this
 * API's slots that a call of another API may replace on its own). */
static void check_effects(api_model *m, const spec_node *api, diag_sink *d)
{
    static const char *const names[] = {"any", "declared", "none"};
    const spec_node *ef = spec_get(api, "thread_state_effects"),
                    *lz = spec_get(api, "thread_state_lazy");
    if (ef) {
        const char *v = NULL;
        int ok = 0;
        if (spec_string(ef, "api.thread_state_effects", d, NULL, NULL, &v))
            for (int i = 0; i < 3 && !ok; i++)
                if (strcmp(v, names[i]) == 0) {
                    m->api.tstate_effects = i;
                    ok = 1;
                }
        if (v && !ok)
            diag_error(d, ef->loc, NULL, NULL,
                       "api.thread_state_effects: '%s' is none of any (every call of this API may "
                       "change the thread state other APIs of its family keep), declared (only "
                       "calls whose `thread_state:` sets or forgets a slot) or none (no call)", v);
        if (ok && !m->api.family)
            diag_error(d, ef->loc, NULL, NULL,
                       "api.thread_state_effects: says what this API's calls do to the other APIs "
                       "of its family, and it has no api.family: drop it, or name the family");
    }
    if (lz && spec_want_map(lz, "api.thread_state_lazy", d, NULL, NULL)) {
        for (size_t i = 0; i < lz->n; i++) {
            int s = slot_of(m, lz->keys[i]);
            const spec_node *v = lz->items[i];
            if (s < 0) {
                diag_error(d, lz->key_locs[i], NULL, NULL,
                           "api.thread_state_lazy: '%s' is not a slot of api.thread_state",
                           lz->keys[i]);
                continue;
            }
            expr_env env = {m, NULL, 0, 0, d, NULL, "api.thread_state_lazy value",
                            v ? v->loc : lz->key_locs[i], 0};
            int64_t val;
            if (!v || v->kind != SN_SCALAR) {
                diag_error(d, v ? v->loc : lz->key_locs[i], NULL, NULL,
                           "api.thread_state_lazy.%s: a C constant expression (the value another "
                           "API's call may replace, e.g. 0 for \"no context\")", lz->keys[i]);
                continue;
            }
            env.loc.col += (unsigned)v->quote_cols;
            if (!expr_eval_const(&env, v->str, &val)) continue;
            m->api.tstate_lazy_mask |= 1u << s;
            m->api.tstate_lazy[s] = val;
        }
    }
}

void check_thread_state(api_model *m, const spec_node *root, const spec_node *const *entries,
                 diag_sink *d)
{
    const spec_node *ts = spec_get(spec_get(root, "api"), "thread_state");
    if (ts && spec_string_list(ts, "api.thread_state", d, m->arena, &m->api.thread_state,
                               &m->api.nthread_state)) {
        for (size_t i = 0; i < m->api.nthread_state; i++) {
            int dup = slot_of(m, m->api.thread_state[i]) != (int)i;
            if (!is_c_identifier(m->api.thread_state[i]) || dup)
                diag_error(d, ts->loc, NULL, NULL,
                           "api.thread_state: '%s' is %s", m->api.thread_state[i],
                           dup ? "given twice" : "not a C identifier");
        }
        if (m->api.nthread_state > 8)
            diag_error(d, ts->loc, NULL, NULL, "api.thread_state: at most 8 slots (%zu given)",
                       m->api.nthread_state);
    }
    check_effects(m, spec_get(root, "api"), d);
    for (size_t i = 0; i < m->nfunctions; i++) {
        function_def *f = &m->functions[i];
        const spec_node *n = spec_get(entries[i], "thread_state");
        if (!n) continue;
        src_loc at = spec_key_loc(entries[i], "thread_state");
        if (!m->api.nthread_state) {
            diag_error(d, at, f->name, NULL,
                       "thread_state: needs api.thread_state (the names of the per-thread values)");
            continue;
        }
        if (f->mode != FN_FORWARD || f->async || f->async_if || !returns_api_error(m, f) ||
            f->gather_count || f->gather_all || f->gather_first) {
            diag_error(d, at, f->name, NULL,
                       "thread_state: needs a synchronous forwarded function that returns the API's "
                       "error type and gathers nothing (the guest learns from its answer)");
            continue;
        }
        size_t k = n->kind == SN_LIST ? n->n : 1;
        f->state = arena_alloc(m->arena, k * sizeof *f->state);
        memset(f->state, 0, k * sizeof *f->state);
        int answers = 0, exchanges = 0;
        for (size_t j = 0; j < k; j++) {
            check_entry(m, f, n->kind == SN_LIST ? n->items[j] : n, &f->state[j], d);
            answers += f->state[j].answer_slot >= 0;
            exchanges += f->state[j].exchange_slot >= 0;
        }
        f->nstate = k;
        /* the answer is the calling thread's current server's: an ordinal
         * in routes elsewhere (an out one is mapped back before the guest
         * keeps it; handles and device addresses route too, but the stub
         * answers only when each is NULL, which routes nowhere) */
        int routes = 0;
        for (size_t p = 0; p < f->sig.nparams; p++)
            routes |= f->sig.params[p].ann.ordinal && f->sig.params[p].ann.kind == PK_VALUE;
        if (answers + exchanges > 1)
            diag_error(d, at, f->name, NULL,
                       "thread_state: one `answer:` or `exchange:` per function");
        else if (exchanges && (routes || f->cache))
            diag_error(d, at, f->name, NULL,
                       "thread_state.exchange: the function takes a device ordinal in (which "
                       "routes it to another server than the thread's current one) or is also "
                       "`cache:`d");
        else if (answers && (routes || f->cache))
            diag_error(d, at, f->name, NULL,
                       "thread_state.answer: the function takes a device ordinal in (which routes it "
                       "to another server than the thread's current one) or is also "
                       "`cache:`d");
    }
}
