/* The several-servers vocabulary of a spec (docs/spec.md, "Several
 * servers"): `api.ordinals`, per function `gather:` and `selects:`, per
 * parameter `ordinal:`. Runs after every parameter has its kind, so each
 * rule checks what the stub will do with the parameter. */
#include <string.h>

#include "check.h"
#include "util.h"

static const char *const gather_keys[] = {"count", "list", "capacity", "first", NULL};

static param_def *param_named(function_def *f, const char *name)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (f->sig.params[i].name && strcmp(f->sig.params[i].name, name) == 0)
            return &f->sig.params[i];
    return NULL;
}

static int is_integer(const type_info *t)
{
    return t && (t->kind == TY_SINT || t->kind == TY_UINT);
}

static int returns_api_error(const api_model *m, const function_def *f)
{
    return m->api.error_ty &&
           strcmp(f->sig.ret->canonical_unqual, m->api.error_ty->canonical_unqual) == 0;
}

/* A parameter that routes a call to one server (a handle, a device address
 * or an ordinal), or NULL. */
static const param_def *routing_param(const function_def *f)
{
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_HANDLE || a->kind == PK_DEVPTR || (a->ordinal && a->kind == PK_VALUE) ||
            (a->kind == PK_IN && (a->elem == EK_HANDLE || a->elem == EK_DEVPTR)))
            return &f->sig.params[i];
    }
    return NULL;
}

/* `ordinal: true` on one parameter; 1 when it holds. */
static int check_ordinal(api_model *m, function_def *f, param_def *p, const spec_node *A,
                         diag_sink *d)
{
    int v = 0;
    const spec_node *n = spec_get(A, "ordinal");
    if (!n || !spec_bool(n, "ordinal", d, f->name, p->name, &v) || !v) return 0;
    src_loc at = spec_key_loc(A, "ordinal");
    const param_ann *a = &p->ann;
    int in_ok = a->kind == PK_VALUE && is_integer(p->type);
    int out_ok = a->kind == PK_OUT && a->elem == EK_BYTES && is_integer(a->elem_type) &&
                 !a->count && !a->terminated;
    if (!in_ok && !out_ok) {
        diag_error(d, at, f->name, p->name,
                   "`ordinal` applies to an integer passed by value (a device index in) or an "
                   "out pointer to one integer (a device index out), not to '%s'",
                   p->type->spelling);
        diag_note(d, p->loc, "declared here");
        return 0;
    }
    if (!m->api.ordinals) {
        diag_error(d, at, f->name, p->name,
                   "`ordinal` needs `api.ordinals: FUNCTION`, the function that counts one "
                   "server's devices");
        return 0;
    }
    p->ann.ordinal = 1;
    return 1;
}

static void check_gather(api_model *m, function_def *f, const spec_node *E, diag_sink *d)
{
    const spec_node *g = spec_get(E, "gather");
    if (!g) return;
    src_loc at = spec_key_loc(E, "gather");
    if (!spec_want_map(g, "gather", d, f->name, NULL)) return;
    if (spec_check_keys(g, gather_keys, "gather", d, f->name, NULL)) return;
    if (f->mode != FN_FORWARD || f->wrap_guest || f->internal || f->async || f->async_if) {
        diag_error(d, at, f->name, NULL,
                   "`gather` applies to plain forwarded synchronous functions (no `wrap: "
                   "{guest:}`, `internal`, `async`)");
        return;
    }
    if (!returns_api_error(m, f)) {
        diag_error(d, at, f->name, NULL,
                   "`gather` needs a function that returns the API's error type '%s' (each "
                   "server's answer decides whether its items count)",
                   m->api.error_type ? m->api.error_type : "?");
        return;
    }
    const param_def *r = routing_param(f);
    if (r) {
        diag_error(d, at, f->name, r->name,
                   "`gather` asks every server, but this parameter routes the call to the "
                   "server it names; drop one of them");
        return;
    }
    const char *cn = NULL, *ln = NULL, *capn = NULL;
    const spec_node *c = spec_get(g, "count"), *l = spec_get(g, "list"), *k = spec_get(g, "capacity");
    const spec_node *fi = spec_get(g, "first");
    if (fi) {
        int v = 0;
        if (!spec_bool(fi, "gather.first", d, f->name, NULL, &v)) return;
        if (!v || c || l || k) {
            diag_error(d, fi->loc, f->name, NULL,
                       "gather.first: `first: true` alone (ask the servers in order until one "
                       "succeeds), without count:, list: or capacity:");
            return;
        }
        f->gather_first = 1;
        return;
    }
    if (!c && !l && !k) {
        /* gather: {}: every server is asked, nothing is summed */
        f->gather_all = 1;
        return;
    }
    if (!c) {
        diag_error(d, g->loc, f->name, NULL,
                   "`gather` needs `count: PARAM`, the out pointer to the number of items "
                   "(or nothing at all, `gather: {}`, to ask every server)");
        return;
    }
    if (!spec_string(c, "gather.count", d, f->name, NULL, &cn) ||
        (l && !spec_string(l, "gather.list", d, f->name, NULL, &ln)) ||
        (k && !spec_string(k, "gather.capacity", d, f->name, NULL, &capn)))
        return;
    param_def *cp = param_named(f, cn);
    if (!cp || cp->ann.kind != PK_OUT || cp->ann.elem != EK_BYTES || !is_integer(cp->ann.elem_type) ||
        cp->ann.count) {
        if (cp)
            diag_error(d, c->loc, f->name, cn,
                       "gather.count: '%s' (%s) is not an out pointer to one integer, the number "
                       "of items", cn, cp->type->spelling);
        else
            diag_error(d, c->loc, f->name, cn, "gather.count: no such parameter");
        if (cp) diag_note(d, cp->loc, "declared here");
        return;
    }
    if (!ln != !capn) {
        diag_error(d, g->loc, f->name, NULL,
                   "gather: give `list:` and `capacity:` together (the out array of handles "
                   "and the number of entries it has room for), or neither");
        return;
    }
    if (ln) {
        param_def *lp = param_named(f, ln), *kp = param_named(f, capn);
        if (!lp || lp->ann.kind != PK_OUT || lp->ann.elem != EK_HANDLE) {
            diag_error(d, l->loc, f->name, ln, "gather.list: %s",
                       lp ? "not an out array of handles" : "no such parameter");
            if (lp) diag_note(d, lp->loc, "declared here");
            return;
        }
        if (!kp || kp->ann.kind != PK_VALUE || !is_integer(kp->type)) {
            diag_error(d, k->loc, f->name, capn, "gather.capacity: %s",
                       kp ? "not an integer passed by value" : "no such parameter");
            if (kp) diag_note(d, kp->loc, "declared here");
            return;
        }
        f->gather_list = lp->name;
        f->gather_cap = kp->name;
    }
    f->gather_count = cp->name;
}

void check_servers(api_model *m, const spec_node *root, const spec_node *const *entries,
                   diag_sink *d)
{
    const spec_node *api = spec_get(root, "api"), *on = spec_get(api, "ordinals");
    const char *oname = NULL;
    if (on && spec_string(on, "api.ordinals", d, NULL, NULL, &oname))
        m->api.ordinals = arena_strdup(m->arena, oname);
    for (size_t i = 0; i < m->nfunctions; i++)
        check_gather(m, &m->functions[i], entries[i], d);
    if (m->api.ordinals) {
        function_def *f = model_find_function(m, m->api.ordinals);
        if (!f || !f->gather_count || f->gather_list || f->sig.nparams != 1 || f->gather_all ||
            f->gather_first)
            diag_error(d, on->loc, NULL, NULL,
                       "api.ordinals: '%s' is not a function of one parameter with `gather: "
                       "{count: PARAM}` (the number of devices of one server)",
                       m->api.ordinals);
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        function_def *f = &m->functions[i];
        const spec_node *E = entries[i], *ps = spec_get(E, "params");
        int nin = 0;
        for (size_t k = 0; k < f->sig.nparams; k++) {
            param_def *p = &f->sig.params[k];
            const spec_node *A = spec_get(ps, p->name);
            if (A && A->kind == SN_MAP && check_ordinal(m, f, p, A, d) && p->ann.kind == PK_VALUE)
                nin++;
        }
        const spec_node *sn = spec_get(E, "selects");
        int v = 0;
        if (sn && spec_bool(sn, "selects", d, f->name, NULL, &v) && v) {
            if (nin != 1 || f->mode != FN_FORWARD || f->async || f->async_if ||
                !returns_api_error(m, f))
                diag_error(d, spec_key_loc(E, "selects"), f->name, NULL,
                           "`selects` needs a synchronous forwarded function that returns the "
                           "API's error type and takes one device ordinal in (`ordinal: true`)");
            else
                f->selects = 1;
        }
    }
}
