/* <api>_server.c: host handlers, handle-type descriptors with destroy
 * thunks, callback trampolines and the server half of the API descriptor;
 * <api>_server_main.c: a one-API server. Wire order: docs/internals.md. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emit_util.h"

#define PUT(...) tmpl_put(&e->o, __VA_ARGS__, NULL)

typedef struct srv_fn {
    emit_ctx *e;
    const function_def *f;
    char **names;
    char **temps;  /* declarations the body needs, in first-use order */
    size_t ntemps;
} srv_fn;

static void need(srv_fn *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void need(srv_fn *s, const char *fmt, ...)
{
    strbuf b = {0};
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    char *d = sb_take(&b);
    for (size_t i = 0; i < s->ntemps; i++)
        if (strcmp(s->temps[i], d) == 0) {
            free(d);
            return;
        }
    *VEC_PUSH(s->temps, s->ntemps) = d;
}

static const char *ht_name(srv_fn *s, const char *pn, const char *handle_type)
{
    if (!find_handle(s->e->m, handle_type)) {
        emit_internal(s->e, "%s: parameter '%s': unknown handle type '%s'", s->f->name, pn,
                      handle_type ? handle_type : "(none)");
        return "unknown";
    }
    return handle_type;
}

static const char *name_of(srv_fn *s, const char *param)
{
    for (size_t i = 0; i < s->f->sig.nparams; i++)
        if (s->f->sig.params[i].name && strcmp(s->f->sig.params[i].name, param) == 0)
            return s->names[i];
    return NULL;
}

/* The annotation of a parameter, or of one of its branches, that streams
 * (spec `stream:`); NULL if none. */
static const param_ann *stream_ann(const param_ann *a)
{
    if (!a) return NULL;
    if (a->kind == PK_COND) {
        const param_ann *t = stream_ann(a->then_ann);
        return t ? t : stream_ann(a->else_ann);
    }
    return a->stream_host ? a : NULL;
}

/* The prototype of a hand-written host function: "RET name(LEAD, params...)". */
static char *hook_proto(const function_def *f, const char *name, const char *lead)
{
    strbuf pb = {0};
    sb_printf(&pb, "%s(%s", name, lead);
    for (size_t k = 0; k < f->sig.nparams; k++) {
        char tmp[24];
        char *d = c_decl(f->sig.params[k].type, pname(&f->sig.params[k], k, tmp), 0);
        sb_printf(&pb, ", %s", d);
        free(d);
    }
    sb_putc(&pb, ')');
    char *inner = sb_take(&pb);
    char *pr = c_decl(f->sig.ret, inner, 0);
    free(inner);
    return pr;
}

static char *u64_lit(uint64_t v) { return xasprintf("UINT64_C(%llu)", (unsigned long long)v); }

/* Phase 1 and value-like kinds inside conditional branches. */
static void get_value_like(srv_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    char *ty = c_type(p->type);
    wire_scalar w;
    switch (a->kind) {
    case PK_VALUE:
        if (!wire_scalar_of(p->type, &w)) {
            emit_internal(e, "%s: parameter '%s': no wire encoding", s->f->name, name);
            break;
        }
        need(s, "%s v_%s", w.utype, name);
        {
            char *vn = xasprintf("v_%s", name);
            char *dec = wire_value_dec(&w, p->type, vn);
            PUT("srv_get_value", "get", w.get, "name", name, "dec", dec);
            free(dec);
            free(vn);
        }
        break;
    case PK_STRUCT:
        PUT("srv_get_struct", "name", name);
        break;
    case PK_HANDLE:
        need(s, "uint64_t v_%s", name);
        need(s, "void *r_");
        PUT("srv_get_handle", "name", name, "ht", ht_name(s, name, a->handle_type), "type", ty);
        break;
    case PK_DEVPTR:
        /* initialized: a branch that does not read it (a copy's direction) still checks it,
         * under the same condition, which the compiler cannot always see */
        need(s, "uint64_t v_%s = 0", name);
        PUT("srv_get_devptr", "name", name, "type", ty);
        break;
    case PK_CALLBACK:
        need(s, "uint64_t cb_%s = 0", name);
        need(s, "void *k_%s = NULL", name);
        PUT("srv_get_callback", "name", name);
        break;
    case PK_USERDATA:
    case PK_IGNORE:
    case PK_IN:
    case PK_OUT:
    case PK_INOUT:
    case PK_STRING:
    case PK_COND:
        break;
    }
    free(ty);
}

/* `elem_by` with `types`/`device`: "P == V1 || P == V2 ..." over the values
 * of one case list (NULL: every value the annotation lists). */
static char *elem_by_cond(srv_fn *s, const param_ann *a, char *const *vals, size_t nv)
{
    const char *sel = name_of(s, a->elem_by_param);
    strbuf b = {0};
    if (vals) {
        for (size_t v = 0; v < nv; v++) sb_printf(&b, "%s%s == %s", v ? " || " : "", sel, vals[v]);
    } else {
        size_t k = 0;
        for (size_t c = 0; c < a->nelem_by; c++)
            for (size_t v = 0; v < a->elem_by[c].nvalues; v++)
                sb_printf(&b, "%s%s == %s", k++ ? " || " : "", sel, a->elem_by[c].values[v]);
        for (size_t c = 0; c < a->nelem_by_types; c++)
            for (size_t v = 0; v < a->elem_by_types[c].nvalues; v++)
                sb_printf(&b, "%s%s == %s", k++ ? " || " : "", sel, a->elem_by_types[c].values[v]);
        for (size_t v = 0; v < a->nelem_by_device; v++)
            sb_printf(&b, "%s%s == %s", k++ ? " || " : "", sel, a->elem_by_device[v]);
        if (!k) sb_puts(&b, "0");
    }
    return sb_take(&b);
}

/* A value that chooses no element type sizes the buffer 0: refused before
 * the real function could read or write elements that never travelled. */
static void elem_by_known(srv_fn *s, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    if (!a->elem_by_count) return;
    char *known = elem_by_cond(s, a, NULL, 0);
    PUT("srv_elem_by_known", "name", name, "count", a->elem_by_count->text, "known", known, "param",
        name_of(s, a->elem_by_param));
    free(known);
}

static void size_lines(srv_fn *s, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    const char *count = a->count ? a->count->text : "1";
    if (a->elem == EK_BYTES && !a->count_is_bytes) {
        char *sz = c_sizeof(a->elem_type);
        PUT("srv_size_mul", "name", name, "count", count, "sizeof", sz);
        free(sz);
    } else {
        PUT("srv_size_expr", "name", name, "count", count);
    }
}

/* `elem_by` on an in/inout buffer, for the values that select it: device
 * addresses must be NULL or the client's (`device:`); handle ids become the
 * real handles in a copy (`handles:`; the request may be the guest's own
 * arena bytes) before the call. Elements are walked in steps of their own
 * size, whether the buffer is sized by `count:` or `bytes:`. */
static void in_elem_by(srv_fn *s, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    if (!a->elem_by_param || a->terminated || a->stream_host) return;
    if (a->nelem_by_device) {
        char *cond = elem_by_cond(s, a, a->elem_by_device, a->nelem_by_device);
        need(s, "uint64_t i_");
        PUT("srv_elem_devptrs_in", "name", name, "cond", cond);
        free(cond);
    }
    for (size_t c = 0; c < a->nelem_by; c++) {
        const handle_case *hc = &a->elem_by[c];
        if (!hc->nvalues) continue;
        char *cond = elem_by_cond(s, a, hc->values, hc->nvalues);
        need(s, "uint64_t i_");
        need(s, "void *r_");
        PUT("srv_elem_handles_in", "name", name, "cond", cond, "ht",
            ht_name(s, name, hc->handle_type), "type", hc->handle_type);
        free(cond);
    }
}

static void get_phase2(srv_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    if (!a) return;
    char *ty = c_type(p->type);
    char *ety = a->elem_type ? c_type(a->elem_type) : xstrdup("void");
    char *esz = a->elem_type ? c_sizeof(a->elem_type) : xstrdup("1");
    switch (a->kind) {
    case PK_IN:
    case PK_INOUT:
        if (a->elem == EK_BYTES) {
            need(s, "const void *b_%s = NULL", name);
            need(s, "uint64_t l_%s = 0", name);
            need(s, "uint64_t n_%s = 0", name);
            if (a->stream_host) {
                char *ch = u64_lit(a->stream_chunk), *mn = u64_lit(a->stream_min);
                need(s, "apigen_stream *s_%s = NULL", name);
                PUT("srv_get_opt_bytes_stream", "name", name, "chunk", ch, "min", mn, "host",
                    a->stream_host);
                free(ch);
                free(mn);
            } else {
                PUT("srv_get_opt_bytes", "name", name);
            }
            if (a->terminated) {
                char term[32], stride[16];
                snprintf(term, sizeof term, "%lld", (long long)a->terminator);
                snprintf(stride, sizeof stride, "%u", a->term_stride ? a->term_stride : 1);
                need(s, "uint64_t i_");
                PUT("srv_check_terminated", "name", name, "sizeof", esz, "type", ty, "term", term,
                    "stride", stride);
                if (a->nhandle_keys) {
                    need(s, "void *r_");
                    char *d = c_decl(a->elem_type, "", 1);
                    need(s, "%s%s*w_%s = NULL", d, d[strlen(d) - 1] == '*' ? "" : " ", name);
                    free(d);
                    PUT("srv_keys_copy", "name", name, "ety", ety);
                    for (size_t c = 0; c < a->nhandle_keys; c++) {
                        const handle_case *hc = &a->handle_keys[c];
                        strbuf cb = {0};
                        for (size_t v = 0; v < hc->nvalues; v++)
                            sb_printf(&cb, "%sw_%s[i_] == %s", v ? " || " : "", name, hc->values[v]);
                        char *cond = sb_take(&cb);
                        if (hc->nvalues)
                            PUT("srv_keys_handle", "name", name, "cond", cond, "ht",
                                ht_name(s, name, hc->handle_type), "ety", ety);
                        free(cond);
                    }
                    PUT("srv_keys_close", "name", name);
                }
            } else {
                size_lines(s, name, a);
                PUT("srv_check_len", "name", name);
                elem_by_known(s, name, a);
            }
            if (a->kind == PK_INOUT) PUT("srv_copy_bytes", "name", name);
            else if (!a->terminated) PUT("srv_use_bytes", "name", name, "type", ty);
            in_elem_by(s, name, a);
            PUT("srv_close_brace");
            if (a->kind == PK_INOUT) {
                need(s, "uint8_t p_%s = 0", name);
                PUT("srv_set_present", "name", name);
            }
            break;
        }
        /* arrays of handles, device addresses or strings */
        need(s, "uint8_t p_%s = 0", name);
        need(s, "uint64_t n_%s = 0", name);
        {
            char *d = c_decl(a->elem_type, "", 1);
            need(s, "%s%s*a_%s = NULL", d, d[strlen(d) - 1] == '*' ? "" : " ", name);
            free(d);
        }
        need(s, "uint64_t k_");
        need(s, "uint64_t i_");
        PUT("srv_get_present", "name", name);
        size_lines(s, name, a);
        PUT("srv_get_ids_open", "name", name, "sizeof", esz);
        switch (a->elem) {
        case EK_HANDLE:
            need(s, "uint64_t v_");
            need(s, "void *r_");
            PUT("srv_get_id_handle", "name", name, "ht", ht_name(s, name, a->handle_type), "type",
                ety);
            break;
        case EK_DEVPTR:
            need(s, "uint64_t v_");
            PUT("srv_get_id_devptr", "name", name, "type", ety);
            break;
        case EK_STRING:
            need(s, "const char *s_");
            PUT("srv_get_id_string", "name", name, "type", ety);
            break;
        case EK_BYTES:
            break;
        }
        PUT("srv_get_ids_close", "name", name);
        PUT("srv_close_brace");
        break;
    case PK_OUT:
        if (a->guest_id) {
            need(s, "uint64_t g_%s = 0", name);
            char *d = c_decl(a->elem_type, "", 1);
            need(s, "%s%so_%s = 0", d, d[strlen(d) - 1] == '*' ? "" : " ", name);
            free(d);
            PUT("srv_get_gid", "name", name);
            break;
        }
        need(s, "uint8_t p_%s = 0", name);
        need(s, "uint64_t n_%s = 0", name);
        if (a->count && a->count->uses_in_deref) {
            /* its size reads `*q` of an input that may come later: allocated
             * once every input is decoded (alloc_deferred) */
            PUT("srv_get_flag", "name", name);
            break;
        }
        PUT("srv_get_present", "name", name);
        size_lines(s, name, a);
        elem_by_known(s, name, a);
        if (a->stream_host) {
            char *ch = u64_lit(a->stream_chunk), *mn = u64_lit(a->stream_min);
            need(s, "apigen_stream *s_%s = NULL", name);
            PUT("srv_alloc_out_stream", "name", name, "chunk", ch, "min", mn, "host", a->stream_host);
            free(ch);
            free(mn);
        } else {
            PUT("srv_alloc_out", "name", name, "sizeof", a->elem == EK_BYTES ? "1" : esz);
        }
        PUT("srv_close_brace");
        break;
    case PK_STRING:
        need(s, "const char *s_");
        PUT("srv_get_string", "name", name, "type", ty);
        break;
    case PK_COND:
        PUT("srv_if", "cond", a->cond ? a->cond->text : "0");
        e->o.indent += 4;
        get_phase2(s, p, name, a->then_ann);
        e->o.indent -= 4;
        PUT("srv_else");
        e->o.indent += 4;
        get_phase2(s, p, name, a->else_ann);
        e->o.indent -= 4;
        PUT("srv_close_brace");
        break;
    case PK_VALUE:
    case PK_STRUCT:
    case PK_HANDLE:
    case PK_DEVPTR:
        get_value_like(s, p, name, a);
        break;
    case PK_CALLBACK:
    case PK_USERDATA:
    case PK_IGNORE:
        break;
    }
    free(ty);
    free(ety);
    free(esz);
}

static int ann_has_reply(const param_ann *a)
{
    if (!a || a->guest_id) return 0;
    if (a->kind == PK_OUT || a->kind == PK_INOUT) return 1;
    if (a->kind == PK_COND) return ann_has_reply(a->then_ann) || ann_has_reply(a->else_ann);
    return 0;
}

static int ann_has_handle_out(const param_ann *a)
{
    if (!a) return 0;
    if ((a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_HANDLE) return 1;
    if (a->kind == PK_COND) return ann_has_handle_out(a->then_ann) || ann_has_handle_out(a->else_ann);
    return 0;
}

/* "q != NULL && " for every out parameter q the expression dereferences. */
static char *deref_guard(srv_fn *s, const char *text)
{
    strbuf b = {0};
    sb_puts(&b, "");
    for (size_t i = 0; i < s->f->sig.nparams; i++) {
        const param_ann *a = &s->f->sig.params[i].ann;
        if (a->kind != PK_OUT && a->kind != PK_INOUT && a->kind != PK_COND) continue;
        const char *n = s->names[i];
        size_t nl = strlen(n);
        for (const char *t = strchr(text, '*'); t; t = strchr(t + 1, '*')) {
            const char *q = t + 1;
            while (*q == ' ' || *q == '(') q++;
            if (strncmp(q, n, nl) == 0 && !isalnum((unsigned char)q[nl]) && q[nl] != '_') {
                sb_printf(&b, "%s != NULL && ", n);
                break;
            }
        }
    }
    return sb_take(&b);
}

static void put_reply(srv_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    if (!a || !ann_has_reply(a)) return;
    if (a->kind == PK_COND) {
        PUT("srv_if", "cond", a->cond ? a->cond->text : "0");
        e->o.indent += 4;
        put_reply(s, p, name, a->then_ann);
        e->o.indent -= 4;
        if (ann_has_reply(a->else_ann)) {
            PUT("srv_else");
            e->o.indent += 4;
            put_reply(s, p, name, a->else_ann);
            e->o.indent -= 4;
        }
        PUT("srv_close_brace");
        return;
    }
    need(s, "uint64_t k_");
    /* outputs are sent only when the call succeeded (the caller's memory is
     * left as it was otherwise), except the error_out parameter */
    int is_error_out = s->f->error_out && p->name && strcmp(s->f->error_out, p->name) == 0;
    if (a->nout_on_error && !is_error_out) {
        /* out_on_error: the answer of some errors travels too (a size query;
         * a handle as NULL: its elements are put under ok_ alone) */
        strbuf ob = {0};
        sb_puts(&ob, "(ok_");
        for (size_t i = 0; i < a->nout_on_error; i++)
            sb_printf(&ob, " || ret_ == %s", a->out_on_error[i]);
        sb_putc(&ob, ')');
        char *okx = sb_take(&ob);
        PUT("srv_reply_open", "name", name, "ok", okx);
        free(okx);
    } else {
        PUT("srv_reply_open", "name", name, "ok", is_error_out ? "1" : "ok_");
    }
    if (a->stream_host && a->kind == PK_OUT) PUT("srv_reply_streamed", "name", name);
    if (a->count_after) {
        char *g = deref_guard(s, a->count_after->text);
        char *sz = a->elem == EK_BYTES ? c_sizeof(a->elem_type) : xstrdup("1");
        need(s, "uint64_t v_");
        PUT("srv_count_after", "guard", g, "after", a->count_after->text, "sizeof", sz);
        free(sz);
        free(g);
    }
    for (size_t c = 0; c < a->nelem_by; c++) {
        const handle_case *hc = &a->elem_by[c];
        const char *sel = a->elem_by_param ? name_of(s, a->elem_by_param) : NULL;
        if (!sel || !hc->nvalues) continue;
        strbuf cb = {0};
        for (size_t v = 0; v < hc->nvalues; v++)
            sb_printf(&cb, "%s%s == %s", v ? " || " : "", sel, hc->values[v]);
        char *cond = sb_take(&cb);
        need(s, "uint64_t i_");
        PUT("srv_elem_handles", "name", name, "cond", cond, "ht",
            ht_name(s, name, hc->handle_type), "type", hc->handle_type);
        free(cond);
    }
    switch (a->elem) {
    case EK_BYTES: PUT("srv_put_bytes", "name", name); break;
    case EK_HANDLE:
        need(s, "uint64_t i_");
    {
        /* a narrow (integer) handle's 0 is a real handle: the runtime tells none apart */
        const handle_type_def *h = model_find_handle((api_model *)s->e->m, a->handle_type);
        char *nz = h && handle_is_narrow(h) ? xstrdup("") : xasprintf(" && %s[i_] != 0", name);
        PUT("srv_put_ids_handle", "name", name, "ht", ht_name(s, name, a->handle_type), "put",
            a->creates ? "apigen_handle_put_owned" : "apigen_handle_put", "nz", nz);
        free(nz);
    }
        break;
    case EK_DEVPTR:
        need(s, "uint64_t i_");
        PUT("srv_put_ids_devptr", "name", name);
        break;
    case EK_STRING:
        emit_internal(e, "%s: parameter '%s': string arrays cannot be outputs", s->f->name, name);
        break;
    }
    PUT("srv_close_brace");
}

/* Device parameters must be this client's memory (runtime/SECURITY.md S4);
 * a `destroys` one is taken out of the table just before the call. */
static void dev_check_one(srv_fn *s, const char *name, const param_ann *a, const char *cond)
{
    emit_ctx *e = s->e;
    if (!a) return;
    if (a->kind == PK_DEVPTR && !a->destroys && !a->dev_unchecked) {
        const char *ext = a->extent ? a->extent->text : "0";
        const char *has = a->extent ? "true" : "false";
        if (cond)
            PUT("srv_dev_check_if", "cond", cond, "name", name, "extent", ext, "has", has);
        else
            PUT("srv_dev_check", "name", name, "extent", ext, "has", has);
    } else if (a->kind == PK_IN && a->elem == EK_DEVPTR && !cond && !a->dev_unchecked) {
        need(s, "uint64_t i_");
        PUT("srv_dev_check_ids", "name", name);
    }
}

static void dev_checks(srv_fn *s, const char *name, const param_ann *a)
{
    if (a->kind != PK_COND) {
        dev_check_one(s, name, a, NULL);
        return;
    }
    const char *c = a->cond ? a->cond->text : "0";
    char *nc = xasprintf("!(%s)", c);
    dev_check_one(s, name, a->then_ann, c);
    dev_check_one(s, name, a->else_ann, nc);
    free(nc);
}

/* errors.missing: the handler calls the real function through a weak
 * reference, so a server built against newer headers links and runs with an
 * older library, and a function that library lacks answers the error.
 * Functions that return the error type and that the handler calls itself. */
static int weak_real(const emit_ctx *e, const function_def *f)
{
    return e->m->api.missing && f->mode == FN_FORWARD && !f->internal && !f->wrap_host &&
           returns_error(e, f);
}

static void emit_handler(emit_ctx *e, const function_def *f)
{
    const api_model *m = e->m;
    srv_fn s = {e, f, NULL, NULL, 0};
    s.names = xcalloc(f->sig.nparams + 1, sizeof *s.names);
    for (size_t i = 0; i < f->sig.nparams; i++) {
        char tmp[24];
        s.names[i] = xstrdup(pname(&f->sig.params[i], i, tmp));
    }
    int is_void = type_is_void(f->sig.ret);
    int is_err = returns_error(e, f);
    strbuf body = {0};
    strbuf *save = e->o.sb;
    e->o.sb = &body;
    e->o.indent = 4;
    /* state values (`space:`) come first: the conditions read them */
    for (size_t k = 0; k < f->nstate_uses; k++) {
        const handle_type_def *h = find_handle(m, f->state_uses[k].handle_type);
        const char *st = h ? h->states[f->state_uses[k].slot].name : "unknown";
        need(&s, "int64_t st_%s_ = 0", st);
        need(&s, "uint64_t v_st_%s_", st);
        PUT("srv_state_get", "state", st);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_COND && a->space_state)
            PUT("srv_space_check", "state", a->space_state, "host", a->space_host, "device",
                a->space_device, "name", s.names[i]);
    }
    for (size_t i = 0; i < f->sig.nparams; i++)
        get_value_like(&s, &f->sig.params[i], s.names[i], &f->sig.params[i].ann);
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT || a->kind == PK_STRING ||
            a->kind == PK_COND)
            get_phase2(&s, &f->sig.params[i], s.names[i], a);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind != PK_OUT || !a->count || !a->count->uses_in_deref) continue;
        char *cond = xasprintf("p_%s", s.names[i]);
        char *esz = a->elem_type && a->elem != EK_BYTES ? c_sizeof(a->elem_type) : xstrdup("1");
        PUT("srv_if", "cond", cond);
        size_lines(&s, s.names[i], a);
        if (a->stream_host) {
            char *ch = u64_lit(a->stream_chunk), *mn = u64_lit(a->stream_min);
            need(&s, "apigen_stream *s_%s = NULL", s.names[i]);
            PUT("srv_alloc_out_stream", "name", s.names[i], "chunk", ch, "min", mn, "host",
                a->stream_host);
            free(ch);
            free(mn);
        } else {
            PUT("srv_alloc_out", "name", s.names[i], "sizeof", esz);
        }
        PUT("srv_close_brace");
        free(esz);
        free(cond);
    }
    PUT("srv_done");
    if (m->api.device_checked)
        for (size_t i = 0; i < f->sig.nparams; i++)
            dev_checks(&s, s.names[i], &f->sig.params[i].ann);
    /* the guest's state values must be the real handle's: a wrong one would
     * make the library read a host buffer as device memory or the reverse */
    for (size_t k = 0; k < f->nstate_uses; k++) {
        const handle_type_def *h = find_handle(m, f->state_uses[k].handle_type);
        if (!h) continue;
        const state_def *st = &h->states[f->state_uses[k].slot];
        char *ty = st->type ? c_type(st->type) : xstrdup("int");
        /* errors.missing: the getter is a weak reference the library may lack */
        char *guard = m->api.missing && st->get_fn ? xasprintf("%s == NULL || ", st->get_fn)
                                                   : xstrdup("");
        PUT("srv_state_check", "state", st->name, "type", ty, "get", st->get_fn ? st->get_fn : "?",
            "name", s.names[f->state_uses[k].param], "success",
            m->api.success ? m->api.success : "0", "guard", guard);
        free(guard);
        free(ty);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_def *p = &f->sig.params[i];
        if (p->ann.kind != PK_CALLBACK) continue;
        const cb_type *cb = find_cb(e, f, p);
        if (!cb) {
            emit_internal(e, "%s: parameter '%s': unknown callback type", f->name, s.names[i]);
            continue;
        }
        char *once = cb_once_text(&p->ann);
        PUT("srv_cb_bind", "name", s.names[i], "API", e->API, "cb", cb->name, "once", once);
        free(once);
        const char *u = p->ann.user_data_param ? name_of(&s, p->ann.user_data_param) : NULL;
        if (u) PUT("srv_cb_user", "user", u, "name", s.names[i]);
    }
    strbuf args = {0};
    sb_puts(&args, "");
    for (size_t i = 0; i < f->sig.nparams; i++) sb_printf(&args, "%s%s", i ? ", " : "", s.names[i]);
    char *as = sb_take(&args);
    for (size_t i = 0; m->api.device_checked && i < f->sig.nparams; i++)
        if (f->sig.params[i].ann.kind == PK_DEVPTR && f->sig.params[i].ann.destroys)
            PUT("srv_dev_take", "name", s.names[i]);
    /* privileged: refused (the spec's error, one log line) unless the server
     * was started with the API's privileged option; the gate comes before
     * any call, streamed or not */
    if (f->privileged) {
        char *why = c_string(f->privileged);
        char *ty = c_decl(f->sig.ret, "", 1);
        PUT("srv_privileged", "fn", f->name, "reason", why, "type", ty, "err", m->api.priv_error);
        free(why);
        free(ty);
        e->o.indent += 4;
    }
    /* errors.missing: the installed library may lack the function */
    if (weak_real(e, f)) {
        char *ty = c_decl(f->sig.ret, "", 1);
        PUT("srv_missing", "fn", f->name, "type", ty, "err", m->api.missing);
        free(ty);
        e->o.indent += 4;
    }
    /* a streamed buffer goes to its host hook instead of the real function */
    int nstream = 0;
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *sa = stream_ann(&f->sig.params[i].ann);
        if (!sa) continue;
        char *as2 = xasprintf("cx, s_%s%s%s", s.names[i], f->sig.nparams ? ", " : "", as);
        PUT(nstream ? "srv_elif_stream" : "srv_if_stream", "name", s.names[i]);
        e->o.indent += 4;
        PUT(is_void ? "srv_call_void" : "srv_call", "fn", sa->stream_host, "args", as2);
        e->o.indent -= 4;
        free(as2);
        nstream++;
    }
    if (nstream) {
        PUT("srv_else_plain");
        e->o.indent += 4;
    }
    if (f->wrap_host) {
        char *as2 = xasprintf("cx%s%s", f->sig.nparams ? ", " : "", as);
        PUT(is_void ? "srv_call_void" : "srv_call", "fn", f->wrap_host, "args", as2);
        free(as2);
    } else {
        PUT(is_void ? "srv_call_void" : "srv_call", "fn", f->name, "args", as);
    }
    if (nstream) e->o.indent -= 4;
    if (weak_real(e, f)) e->o.indent -= 4;
    if (f->privileged) e->o.indent -= 4;
    free(as);
    if (f->last_error) {
        char *rt = c_type(f->sig.ret);
        PUT("srv_last_error", "type", rt, "clear", f->last_error == 1 ? "true" : "false");
        free(rt);
    } else if (is_err) PUT("srv_result");
    else if (f->error_out && name_of(&s, f->error_out))
        PUT("srv_result_error_out", "name", name_of(&s, f->error_out));
    /* success decides handle bookkeeping */
    int need_ok = 0;
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        int eo = f->error_out && f->sig.params[i].name &&
                 strcmp(f->error_out, f->sig.params[i].name) == 0;
        if (ann_has_handle_out(a) || (a->kind == PK_HANDLE && (a->destroys || a->retains)) ||
            (ann_has_reply(a) && !eo))
            need_ok = 1;
        if (m->api.device_checked && ((a->kind == PK_DEVPTR && a->destroys) ||
                                      (a->elem == EK_DEVPTR && a->creates)))
            need_ok = 1;
    }
    if (need_ok) {
        need(&s, "int ok_");
        char *cond = is_err ? xasprintf("ret_ == %s", m->api.success ? m->api.success : "0")
                     : f->ret_handle ? xstrdup("ret_ != 0")
                                     : xstrdup("1");
        PUT("srv_ok", "cond", cond);
        free(cond);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_HANDLE && a->destroys)
            PUT("srv_drop", "ht", ht_name(&s, s.names[i], a->handle_type), "name", s.names[i]);
        if (a->kind == PK_HANDLE && a->retains)
            PUT("srv_retain", "ht", ht_name(&s, s.names[i], a->handle_type), "name", s.names[i]);
        if (a->guest_id)
            PUT("srv_bind_gid", "ht", ht_name(&s, s.names[i], a->handle_type), "name", s.names[i]);
        if (m->api.device_checked && a->kind == PK_DEVPTR && a->destroys)
            PUT("srv_dev_end", "name", s.names[i]);
        if (m->api.device_checked && a->elem == EK_DEVPTR && a->creates &&
            (a->kind == PK_OUT || a->kind == PK_INOUT)) {
            need(&s, "uint64_t i_");
            PUT("srv_dev_add", "name", s.names[i], "extent", a->extent ? a->extent->text : "1");
        }
    }
    /* reply */
    if (!is_void) {
        wire_scalar w;
        const type_info *rt = f->sig.ret;
        if (f->ret_handle) {
            need(&s, "uint64_t id_");
            PUT("srv_ret_handle", "ht", ht_name(&s, "return value", f->ret_handle), "put",
                f->ret_creates ? "apigen_handle_put_owned" : "apigen_handle_put");
            PUT("srv_put_ret_id");
        } else if (rt->kind == TY_RECORD) {
            PUT("srv_put_ret_struct");
        } else if (wire_scalar_of(rt, &w)) {
            char *enc = wire_value_enc(&w, "ret_");
            PUT("srv_put_ret_value", "put", w.put, "enc", enc);
            free(enc);
        } else {
            emit_internal(e, "%s: return type '%s' cannot be forwarded", f->name, rt->spelling);
        }
    }
    for (size_t i = 0; i < f->sig.nparams; i++)
        put_reply(&s, &f->sig.params[i], s.names[i], &f->sig.params[i].ann);
    e->o.sb = save;
    e->o.indent = 0;
    PUT("srv_fn_open", "fn", f->name);
    for (size_t i = 0; i < f->sig.nparams; i++) {
        char *d = c_decl(f->sig.params[i].type, s.names[i], 1);
        char *d2 = xasprintf("%s = {0}", d);
        PUT("srv_local", "decl", d2);
        free(d);
        free(d2);
    }
    if (!is_void) {
        char *d = c_decl(f->sig.ret, "ret_", 1);
        PUT("srv_local", "decl", d);
        free(d);
    }
    for (size_t i = 0; i < s.ntemps; i++) {
        PUT("srv_local", "decl", s.temps[i]);
        free(s.temps[i]);
    }
    free(s.temps);
    sb_puts(e->o.sb, body.s ? body.s : "");
    sb_free(&body);
    PUT("srv_close");
    for (size_t i = 0; i < f->sig.nparams; i++) free(s.names[i]);
    free(s.names);
}

static void emit_trampoline(emit_ctx *e, const cb_type *cb)
{
    const fn_sig *sig = cb->sig;
    strbuf pb = {0};
    sb_printf(&pb, "tramp_%s(", cb->name);
    if (!sig->nparams) sb_puts(&pb, "void");
    for (size_t i = 0; i < sig->nparams; i++) {
        char an[24];
        snprintf(an, sizeof an, "a%zu", i);
        char *d = c_decl(sig->params[i].type, an, 0);
        sb_printf(&pb, "%s%s", i ? ", " : "", d);
        free(d);
    }
    sb_putc(&pb, ')');
    char *inner = sb_take(&pb);
    char *pr = c_decl(sig->ret, inner, 0);
    char user[24];
    snprintf(user, sizeof user, "a%d", cb->user_data_index);
    if (cb->user_data_index < 0 || (size_t)cb->user_data_index >= sig->nparams)
        emit_internal(e, "callback %s: no user data argument", cb->name);
    PUT("srv_tramp_open", "name", cb->name, "proto", pr, "user", user);
    for (size_t i = 0; i < sig->nparams; i++) {
        if ((int)i == cb->user_data_index) continue;
        const type_info *t = sig->params[i].type;
        char an[24];
        snprintf(an, sizeof an, "a%zu", i);
        wire_scalar w;
        const handle_type_def *h = handle_of_type(e->m, t);
        if (h) {
            PUT("srv_tramp_put_id", "arg", an, "ht", h->name);
        } else if (wire_scalar_of(t, &w)) {
            char *enc = wire_value_enc(&w, an);
            PUT("srv_tramp_put_value", "put", w.put, "enc", enc, "arg", an);
            free(enc);
        } else if (t->kind == TY_RECORD) {
            PUT("srv_tramp_put_struct", "arg", an);
        } else if (t->kind == TY_POINTER && is_char_type(t->pointee)) {
            PUT("srv_tramp_put_string", "arg", an);
        } else {
            PUT("srv_tramp_unused", "arg", an);
        }
    }
    PUT("srv_tramp_send");
    if (!type_is_void(sig->ret)) {
        char *d = c_decl(sig->ret, "ret_", 1);
        PUT("srv_tramp_ret", "decl", d);
        free(d);
    }
    PUT("srv_close");
    free(pr);
    free(inner);
}

int emit_server(emit_ctx *e, strbuf *out)
{
    const api_model *m = e->m;
    char n[32];
    emit_begin(e, out);
    PUT("srv_head", "api", m->api.name, "stamp", e->stamp, "spec", e->spec);
    int any = 0;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (f->mode != FN_CUSTOM || !f->custom_host) continue;
        if (!any) PUT("srv_section", "what", "hand-written handlers");
        any = 1;
        PUT("srv_custom_decl", "host", f->custom_host, "fn", f->name);
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (f->mode != FN_FORWARD || !f->wrap_host) continue;
        if (!any) PUT("srv_section", "what", "hand-written handlers");
        any = 1;
        char *pr = hook_proto(f, f->wrap_host, "apigen_call_ctx *cx");
        PUT("srv_wrap_decl", "proto", pr, "fn", f->name);
        free(pr);
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (f->mode != FN_FORWARD) continue;
        for (size_t k = 0; k < f->sig.nparams; k++) {
            const param_ann *sa = stream_ann(&f->sig.params[k].ann);
            if (!sa) continue;
            /* once per hook: both branches of a copy may name the same one */
            int dup = 0;
            for (size_t j = 0; j < k && !dup; j++) {
                const param_ann *sb = stream_ann(&f->sig.params[j].ann);
                dup = sb && strcmp(sb->stream_host, sa->stream_host) == 0;
            }
            if (dup) continue;
            if (!any) PUT("srv_section", "what", "hand-written handlers");
            any = 1;
            char *pr = hook_proto(f, sa->stream_host, "apigen_call_ctx *cx, apigen_stream *s");
            PUT("srv_stream_decl", "proto", pr, "fn", f->name, "param", f->sig.params[k].name);
            free(pr);
        }
    }
    /* symbol variants the handlers call: the headers declare them only under
     * api.variants.defines, which the server is not built with */
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (!f->variant_of || f->mode != FN_FORWARD || f->wrap_host) continue;
        if (!any) PUT("srv_section", "what", "symbol variants of the real library");
        any = 1;
        strbuf pb = {0};
        sb_printf(&pb, "%s(", f->name);
        for (size_t k = 0; k < f->sig.nparams; k++) {
            char tmp[24];
            char *d = c_decl(f->sig.params[k].type, pname(&f->sig.params[k], k, tmp), 0);
            sb_printf(&pb, "%s%s", k ? ", " : "", d);
            free(d);
        }
        if (!f->sig.nparams) sb_puts(&pb, "void");
        sb_putc(&pb, ')');
        char *inner = sb_take(&pb);
        char *pr = c_decl(f->sig.ret, inner, 0);
        PUT("srv_variant_decl", "proto", pr, "fn", f->variant_of);
        free(inner);
        free(pr);
    }
    /* errors.missing: weak references to the real functions the handlers call */
    int nweak = 0;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (!weak_real(e, f)) continue;
        if (!nweak++)
            PUT("srv_section", "what",
                "functions the real library may lack (errors.missing): weak references");
        PUT("srv_weak", "fn", f->name);
    }
    const function_def *ddf =
        m->api.device_checked && m->api.device_destroy ? model_find_function((api_model *)m, m->api.device_destroy) : NULL;
    if (ddf && ddf->sig.nparams >= 1) {
        PUT("srv_section", "what", "device memory a vanished client left (types.device)");
        char *ty = c_type(ddf->sig.params[0].type);
        PUT("srv_destroy_device", "fn", ddf->name, "type", ty);
        free(ty);
    }
    if (m->nhandles) PUT("srv_section", "what", "handle types");
    for (size_t i = 0; i < m->nhandles; i++) {
        const handle_type_def *h = &m->handles[i];
        char *destroy = xstrdup("NULL"), *pt = xstrdup("NULL");
        if (h->destroy_fn) {
            const function_def *df = model_find_function((api_model *)m, h->destroy_fn);
            PUT(df && weak_real(e, df) ? "srv_destroy_weak" : "srv_destroy", "name", h->name,
                "fn", h->destroy_fn, "type", h->name);
            free(destroy);
            destroy = xasprintf("destroy_%s", h->name);
        }
        if (h->npassthrough) {
            strbuf v = {0};
            for (size_t k = 0; k < h->npassthrough; k++)
                sb_printf(&v, "%s(uint64_t)INT64_C(%lld)", k ? ", " : "",
                          (long long)h->passthrough[k]);
            char *vs = sb_take(&v);
            PUT("srv_passthrough", "name", h->name, "values", vs);
            free(vs);
            free(pt);
            pt = xasprintf("pt_%s", h->name);
        }
        char tag[16], npt[16];
        const char *flags = h->unknown_as_null
                                ? (handle_is_narrow(h) ? "APIGEN_HT_UNKNOWN_AS_NULL | APIGEN_HT_NARROW"
                                                       : "APIGEN_HT_UNKNOWN_AS_NULL")
                                : (handle_is_narrow(h) ? "APIGEN_HT_NARROW" : "0");
        snprintf(tag, sizeof tag, m->api.family ? "%uu" : "%u", model_handle_tag(m, h));
        snprintf(npt, sizeof npt, "%zu", h->npassthrough);
        if (h->nalso) { /* the other types declared first: their definitions may come later */
            strbuf v = {0};
            for (size_t k = 0; k < h->nalso; k++) {
                PUT("srv_handle_type_decl", "name", h->also[k]);
                sb_printf(&v, "%s&ht_%s", k ? ", " : "", h->also[k]);
            }
            char *vs = sb_take(&v), nalso[16];
            snprintf(nalso, sizeof nalso, "%zu", h->nalso);
            PUT("srv_handle_also", "name", h->name, "values", vs);
            PUT("srv_handle_type_also", "name", h->name, "tag", tag, "destroy", destroy, "pt", pt,
                "npt", npt, "flags", flags,
                "nalso", nalso);
            free(vs);
        } else {
            PUT("srv_handle_type", "name", h->name, "tag", tag, "destroy", destroy, "pt", pt,
                "npt", npt, "flags", flags);
        }
        free(destroy);
        free(pt);
    }
    if (e->ncbs) PUT("srv_section", "what", "callback trampolines");
    for (size_t c = 0; c < e->ncbs; c++) {
        if (c) PUT("srv_blank");
        emit_trampoline(e, &e->cbs[c]);
    }
    PUT("srv_section", "what", "handlers");
    int first = 1;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (f->mode == FN_FORWARD) {
            if (!first) PUT("srv_blank");
            first = 0;
            emit_handler(e, f);
        }
    }
    PUT("srv_section", "what", "the server half of the API descriptor");
    if (e->ncalls) {
        emit_call_names(e, "srv");
        snprintf(n, sizeof n, "%u", e->ncalls);
        PUT("srv_table_open", "type", "apigen_handler_fn", "var", "handlers_", "n", n);
        for (size_t i = 0; i < m->nfunctions; i++) {
            const function_def *f = &m->functions[i];
            if (!fn_has_call(f)) continue;
            char *idx = xasprintf("%s_CALL_%s", e->API, f->name);
            char *val = f->mode == FN_CUSTOM && f->custom_host ? xstrdup(f->custom_host)
                                                               : xasprintf("h_%s", f->name);
            PUT("srv_table_entry", "index", idx, "value", val);
            free(idx);
            free(val);
        }
        PUT("srv_table_close");
    }
    int any_stream_in = 0;
    for (size_t i = 0; i < m->nfunctions && e->ncalls; i++) {
        const function_def *f = &m->functions[i];
        int in = 0;
        for (size_t k = 0; f->mode == FN_FORWARD && k < f->sig.nparams; k++) {
            const param_ann *a = &f->sig.params[k].ann, *br[3] = {a, a->then_ann, a->else_ann};
            for (int b = 0; b < 3; b++)
                if (br[b] && br[b]->kind == PK_IN && br[b]->stream_host) in = 1;
        }
        if (!in) continue;
        if (!any_stream_in) {
            snprintf(n, sizeof n, "%u", e->ncalls);
            PUT("srv_table_open", "type", "uint8_t", "var", "stream_in_calls_", "n", n);
        }
        any_stream_in = 1;
        char *idx = xasprintf("%s_CALL_%s", e->API, f->name);
        PUT("srv_table_entry", "index", idx, "value", "1");
        free(idx);
    }
    if (any_stream_in) PUT("srv_table_close");
    if (m->nhandles) {
        snprintf(n, sizeof n, "%zu", m->nhandles);
        PUT("srv_table_open", "type", "apigen_handle_type *const", "var", "handle_types_", "n", n);
        for (size_t i = 0; i < m->nhandles; i++) {
            char *v = xasprintf("&ht_%s", m->handles[i].name);
            PUT("srv_list_entry", "value", v);
            free(v);
        }
        PUT("srv_table_close");
    }
    /* api.errors.last_error.peek: the runtime asks the library whether an
     * error a call returned is in its own state (hand-written host code
     * makes some up) */
    if (m->api.last_error_peek) PUT("srv_last_error_peek_fn", "fn", m->api.last_error_peek);
    snprintf(n, sizeof n, "%zu", m->nhandles);
    PUT("srv_api_open", "api", m->api.name, "API", e->API, "call_names",
        e->ncalls ? "call_names_" : "NULL", "handlers", e->ncalls ? "handlers_" : "NULL",
        "handle_types", m->nhandles ? "handle_types_" : "NULL", "nhandle_types", n, "success",
        m->api.success ? m->api.success : "0");
    static const char *const st[] = {"APIGEN_OK",       "APIGEN_LOST",      "APIGEN_BAD_ARGS",
                                     "APIGEN_BAD_HANDLE", "APIGEN_TOO_LARGE", "APIGEN_BAD_CALL",
                                     "APIGEN_UNSUPPORTED", "APIGEN_NO_MEMORY", "APIGEN_BAD_DEVPTR"};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        char tmp[32];
        PUT("srv_api_status", "status", st[i], "value", status_error_value(e, st[i], tmp));
    }
    PUT("srv_api_close", "API", e->API, "async_next",
        m->api.async_errors_next_call ? "true" : "false", "device_destroy",
        m->api.device_checked && m->api.device_destroy ? "destroy_device_" : "NULL");
    if (m->api.isolate_process) PUT("srv_api_isolation", NULL);
    if (m->api.forward_output) PUT("srv_api_forward_output", NULL);
    if (m->api.version_macro) PUT("srv_api_version", "API", e->API);
    if (m->api.family) PUT("srv_api_family", "family", m->api.family);
    if (m->api.priv_option) {
        char *o = c_string(m->api.priv_option);
        PUT("srv_api_privileged", "option", o);
        free(o);
    }
    if (any_stream_in) PUT("srv_api_stream_in", NULL);
    if (m->api.last_error_peek) PUT("srv_api_last_error_peek", NULL);
    PUT("srv_api_end", NULL);
    return e->o.failed || e->failed ? -1 : 0;
}

int emit_server_main(emit_ctx *e, strbuf *out)
{
    emit_begin(e, out);
    PUT("srv_main", "api", e->m->api.name, "stamp", e->stamp, "spec", e->spec);
    return e->o.failed || e->failed ? -1 : 0;
}
