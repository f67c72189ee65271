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

static const char *const cache_keys[] = {"if", "errors", NULL};

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
    case PK_IN: case PK_INOUT:
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

static int is_const_name(const api_model *m, const char *s)
{
    return model_find_enum_const(m, s, NULL) || model_find_macro(m, s);
}

static void check_one(api_model *m, function_def *f, const spec_node *E, diag_sink *d)
{
    const spec_node *n = spec_get(E, "cache");
    if (!n) return;
    src_loc at = spec_key_loc(E, "cache");
    const spec_node *cond = NULL, *errs = NULL;
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
    } else {
        return;
    }
    int bad = 0;
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
        if (!why) continue;
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
            expr_env env = {m, f, 0, 0, d, NULL, "condition", cond->loc};
            env.loc.col += (unsigned)cond->quote_cols;
            f->cache_if = expr_parse(&env, cond->str);
            if (!f->cache_if) {
                diag_note(d, f->loc, "declared here");
                bad = 1;
            }
        }
    }
    if (!bad) f->cache = 1;
}

void check_cache(api_model *m, const spec_node *const *entries, diag_sink *d)
{
    for (size_t i = 0; i < m->nfunctions; i++)
        check_one(m, &m->functions[i], entries[i], d);
}
