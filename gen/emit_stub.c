/* <api>_stub.c: the guest library. One exported function per header
 * function (forwarded, custom, unsupported; local ones come from the spec's
 * sources), callback dispatchers and the guest half of the API descriptor.
 * Wire order: docs/internals.md. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit_util.h"

typedef struct stub_fn {
    emit_ctx *e;
    const function_def *f;
    char **names;    /* parameter names (a<i> for unnamed ones) */
    int used_bad, used_badargs, used_nomem, used_baddev;
} stub_fn;

#define PUT(...) tmpl_put(&e->o, __VA_ARGS__, NULL)

/* api.handle_objects: handles go through APIGEN_H2ID / APIGEN_ID2H */
static int hobj(const emit_ctx *e)
{
    return e->m->api.hobj_define != NULL;
}

/* "A, B" and their count: the values of a list of handle cases */
static char *case_values(const handle_case *c, size_t n, const char *sep, const char *prefix,
                         size_t *count)
{
    strbuf b = {0};
    sb_puts(&b, "");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < c[i].nvalues; j++, k++)
            sb_printf(&b, "%s%s%s", k ? sep : "", prefix, c[i].values[j]);
    if (count) *count = k;
    return sb_take(&b);
}

static char **param_names(const function_def *f)
{
    char **n = xcalloc(f->sig.nparams + 1, sizeof *n);
    for (size_t i = 0; i < f->sig.nparams; i++) {
        char tmp[24];
        n[i] = xstrdup(pname(&f->sig.params[i], i, tmp));
    }
    return n;
}

static void free_names(char **n, size_t k)
{
    for (size_t i = 0; i < k; i++) free(n[i]);
    free(n);
}

static const char *param_index_name(char **names, const function_def *f, const char *want)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (f->sig.params[i].name && strcmp(f->sig.params[i].name, want) == 0) return names[i];
    return NULL;
}

/* "ret name(T a, U b)"; with first: "ret name(first, T a, U b)" */
static char *proto_with(const function_def *f, const char *name, char **names, const char *first)
{
    strbuf b = {0};
    sb_printf(&b, "%s(", name);
    if (first) sb_printf(&b, "%s%s", first, f->sig.nparams ? ", " : "");
    if (f->sig.nparams == 0 && !first) sb_puts(&b, f->sig.variadic ? "" : "void");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        char *d = c_decl(f->sig.params[i].type, names[i], 0);
        sb_printf(&b, "%s%s", i ? ", " : "", d);
        free(d);
    }
    if (f->sig.variadic) sb_puts(&b, f->sig.nparams ? ", ..." : "...");
    sb_putc(&b, ')');
    char *inner = sb_take(&b);
    char *r = c_decl(f->sig.ret, inner, 0);
    free(inner);
    return r;
}

static char *proto(const function_def *f, const char *name, char **names)
{
    return proto_with(f, name, names, NULL);
}

/* The stub's local holding what `async_check` or `async_vouch` said, or NULL */
static const char *queue_check_var(const function_def *f)
{
    return f->async_check ? "may_queue_" : f->async_vouch ? "vouched_" : NULL;
}

/* The hand-written guest functions a forwarded call asks before it is
 * queued or sent (`async_check` or `async_vouch`, `async_unless`), each with
 * the stub's local that holds its answer; how many */
static size_t guest_checks(const function_def *f, const char *fn[2], const char *var[2])
{
    size_t n = 0;
    if (queue_check_var(f)) {
        fn[n] = f->async_check ? f->async_check : f->async_vouch;
        var[n++] = queue_check_var(f);
    }
    if (f->async_unless) {
        fn[n] = f->async_unless;
        var[n++] = "sync_now_";
    }
    return n;
}

/* One of them (fn): "bool F(T a, U b)" (decl) or "F(a, b)" (call) */
static char *guest_fn_text(const function_def *f, const char *fn, char **names, int call)
{
    strbuf b = {0};
    sb_printf(&b, "%s%s(", call ? "" : "bool ", fn);
    if (!f->sig.nparams && !call) sb_puts(&b, "void");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        char *d = call ? xstrdup(names[i]) : c_decl(f->sig.params[i].type, names[i], 0);
        sb_printf(&b, "%s%s", i ? ", " : "", d);
        free(d);
    }
    sb_putc(&b, ')');
    return sb_take(&b);
}

static int ann_needs_n(const param_ann *a)
{
    if (!a || a->guest_id) return 0;
    if (a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT) return 1;
    if (a->kind == PK_COND) return ann_needs_n(a->then_ann) || ann_needs_n(a->else_ann);
    return 0;
}

static int ann_needs_i(const param_ann *a)
{
    if (!a || a->guest_id) return 0;
    if (a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT) return a->elem != EK_BYTES;
    if (a->kind == PK_COND) return ann_needs_i(a->then_ann) || ann_needs_i(a->else_ann);
    return 0;
}

static int ann_has_reply(const param_ann *a)
{
    if (!a) return 0;
    if (a->kind == PK_OUT || a->kind == PK_INOUT) return 1;
    if (a->kind == PK_COND) return ann_has_reply(a->then_ann) || ann_has_reply(a->else_ann);
    return 0;
}

static int ann_has_phase2(const param_ann *a)
{
    if (!a) return 0;
    switch (a->kind) {
    case PK_IN:
    case PK_OUT:
    case PK_INOUT:
    case PK_STRING:
    case PK_DEVPTR:
    case PK_VALUE:
    case PK_STRUCT:
    case PK_HANDLE:
        return 1;
    case PK_COND:
        return ann_has_phase2(a->then_ann) || ann_has_phase2(a->else_ann);
    case PK_CALLBACK:
    case PK_USERDATA:
    case PK_IGNORE:
        return 0;
    }
    return 0;
}

/* The value-like encodings, shared by phase 1 and by conditional branches. */
static void put_value_like(stub_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    wire_scalar w;
    switch (a->kind) {
    case PK_VALUE:
        if (!wire_scalar_of(p->type, &w)) {
            emit_internal(e, "%s: parameter '%s': no wire encoding for '%s'", s->f->name, name,
                          p->type->spelling);
            return;
        }
        {
            char *enc = wire_value_enc(&w, name);
            PUT("stub_put_value", "put", w.put, "enc", enc, "name", name);
            free(enc);
        }
        break;
    case PK_STRUCT:
        PUT("stub_put_struct", "name", name);
        break;
    case PK_HANDLE:
        PUT(hobj(e) ? "stub_put_hid" : "stub_put_id", "name", name);
        break;
    case PK_DEVPTR:
        if (a->map_fn) PUT("stub_put_mapped", "name", name, "map", a->map_fn);
        else PUT("stub_put_id", "name", name);
        break;
    case PK_CALLBACK: {
        const cb_type *cb = find_cb(e, s->f, p);
        const char *user = a->user_data_param ? param_index_name(s->names, s->f, a->user_data_param)
                                              : NULL;
        if (!cb) {
            emit_internal(e, "%s: parameter '%s': unknown callback type", s->f->name, name);
            return;
        }
        char *once = cb_once_text(a);
        PUT("stub_put_callback", "name", name, "api", e->m->api.name, "API", e->API, "cb", cb->name,
            "user", user ? user : "NULL", "once", once);
        free(once);
        break;
    }
    case PK_USERDATA:
    case PK_IGNORE:
    case PK_IN:
    case PK_OUT:
    case PK_INOUT:
    case PK_STRING:
    case PK_COND:
        return;
    }
    s->used_nomem = 1;
}

static void put_size(stub_fn *s, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    char *sz = a->elem == EK_BYTES ? c_sizeof(a->elem_type) : xstrdup("1");
    const char *count = a->count ? a->count->text : "1";
    PUT("stub_size_open", "name", name);
    if (a->terminated) {
        char term[32], stride[16];
        snprintf(term, sizeof term, "%lld", (long long)a->terminator);
        snprintf(stride, sizeof stride, "%u", a->term_stride ? a->term_stride : 1);
        PUT("stub_size_terminated", "name", name, "term", term, "stride", stride, "sizeof", sz);
        s->used_badargs = 1;
    } else if (a->elem != EK_BYTES || a->count_is_bytes) {
        PUT("stub_size_expr", "name", name, "count", count);
    } else {
        PUT("stub_size_mul", "name", name, "count", count, "sizeof", sz);
        s->used_badargs = 1;
    }
    PUT("stub_close_brace");
    free(sz);
}

static const param_def *param_of(const function_def *f, const char *name)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (strcmp(f->sig.params[i].name, name) == 0) return &f->sig.params[i];
    return NULL;
}

/* the function's `exchange:` entry (check_thread_state.c allows one), or NULL */
static const state_entry *exchange_of(const function_def *f)
{
    for (size_t k = 0; k < f->nstate; k++)
        if (f->state[k].exchange_slot >= 0) return &f->state[k];
    return NULL;
}

/* An input buffer that travels by copy, never as a reference into shared
 * memory: an `exchange:` value (its old value is stored there before the
 * server reads it) and a cached function's one-element input (its bytes
 * are part of the key, check_cache.c) */
static int by_copy(const function_def *f, const param_def *p)
{
    const state_entry *se = exchange_of(f);
    if (se && strcmp(se->exchange_param, p->name) == 0) return 1;
    return f->cache && p->ann.kind == PK_IN && !p->ann.count;
}

static void put_phase2(stub_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    if (!a) return;
    switch (a->kind) {
    case PK_IN:
    case PK_INOUT:
        put_size(s, name, a);
        switch (a->elem) {
        case EK_BYTES:
            if (hobj(e) && a->nhandle_keys) {
                size_t nk;
                char *keys = case_values(a->handle_keys, a->nhandle_keys, ", ", "(int64_t)", &nk);
                char nks[24];
                snprintf(nks, sizeof nks, "%zu", nk);
                PUT("stub_put_keyed", "name", name, "keys", keys, "nkeys", nks);
                free(keys);
            } else {
                PUT(by_copy(s->f, p) ? "stub_put_bytes_copy" : "stub_put_bytes", "name", name);
            }
            break;
        case EK_HANDLE: PUT(hobj(e) ? "stub_put_hids" : "stub_put_ids", "name", name); break;
        case EK_DEVPTR: PUT("stub_put_ids", "name", name); break;
        case EK_STRING: PUT("stub_put_strs", "name", name); break;
        }
        s->used_nomem = 1;
        break;
    case PK_OUT:
        if (a->guest_id) {
            PUT("stub_put_gid", "name", name);
            s->used_nomem = 1;
            break;
        }
        put_size(s, name, a);
        PUT("stub_put_present", "name", name);
        s->used_nomem = 1;
        break;
    case PK_STRING:
        PUT("stub_put_string", "name", name);
        s->used_nomem = 1;
        break;
    case PK_DEVPTR:
    case PK_VALUE:
    case PK_STRUCT:
    case PK_HANDLE:
        put_value_like(s, p, name, a);
        break;
    case PK_COND:
        PUT("stub_if", "cond", a->cond ? a->cond->text : "0");
        e->o.indent += 4;
        put_phase2(s, p, name, a->then_ann);
        e->o.indent -= 4;
        if (ann_has_phase2(a->else_ann)) {
            PUT("stub_else");
            e->o.indent += 4;
            put_phase2(s, p, name, a->else_ann);
            e->o.indent -= 4;
        }
        PUT("stub_close_brace");
        break;
    case PK_CALLBACK:
    case PK_USERDATA:
    case PK_IGNORE:
        break;
    }
}

static void get_reply(stub_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    if (!a) return;
    if (a->guest_id) { /* named by the guest: stored once the call succeeded */
        char *ty = c_type(a->elem_type);
        char *ok = returns_error(e, s->f)
                       ? xasprintf("ret_ == %s", e->m->api.success ? e->m->api.success : "0")
                       : xstrdup("1");
        PUT(hobj(e) ? "stub_set_hgid" : "stub_set_gid", "name", name, "type", ty, "ok", ok);
        free(ok);
        free(ty);
        return;
    }
    switch (a->kind) {
    case PK_OUT:
    case PK_INOUT:
        s->used_bad = 1;
        switch (a->elem) {
        case EK_BYTES:
            if (hobj(e) && a->nelem_by) {
                const char *by = param_index_name(s->names, s->f, a->elem_by_param);
                char *pre = xasprintf("%s == ", by ? by : "0");
                char *cond = case_values(a->elem_by, a->nelem_by, " || ", pre, NULL);
                PUT("stub_get_bytes_hids", "name", name, "by", by ? by : "?", "cond", cond);
                free(cond);
                free(pre);
            } else {
                PUT("stub_get_bytes", "name", name);
            }
            break;
        case EK_HANDLE:
        case EK_DEVPTR: {
            char *ty = c_type(a->elem_type);
            const char *frag = "stub_get_ids";
            if (hobj(e) && a->elem == EK_HANDLE)
                frag = a->creates ? "stub_get_hids_created" : "stub_get_hids";
            PUT(frag, "name", name, "type", ty);
            free(ty);
            break;
        }
        case EK_STRING:
            emit_internal(e, "%s: parameter '%s': string arrays cannot be outputs", s->f->name, name);
            break;
        }
        break;
    case PK_COND:
        if (!ann_has_reply(a)) break;
        PUT("stub_if", "cond", a->cond ? a->cond->text : "0");
        e->o.indent += 4;
        get_reply(s, p, name, a->then_ann);
        e->o.indent -= 4;
        if (ann_has_reply(a->else_ann)) {
            PUT("stub_else");
            e->o.indent += 4;
            get_reply(s, p, name, a->else_ann);
            e->o.indent -= 4;
        }
        PUT("stub_close_brace");
        break;
    case PK_VALUE:
    case PK_STRUCT:
    case PK_HANDLE:
    case PK_DEVPTR:
    case PK_IN:
    case PK_STRING:
    case PK_CALLBACK:
    case PK_USERDATA:
    case PK_IGNORE:
        break;
    }
}

/* Trace: "name=%fmt" for one value of type t. */
static void trace_arg(strbuf *fmt, strbuf *args, const type_info *t, const char *label, const char *expr,
               int is_string)
{
    if (label) sb_printf(fmt, "%s%s=", fmt->len ? ", " : "", label);
    if (is_string) {
        sb_puts(fmt, "\\\"%s\\\"");
        sb_printf(args, ", %s ? (const char *)%s : \"(null)\"", expr, expr);
        return;
    }
    switch (t->kind) {
    case TY_BOOL:
    case TY_UINT:
    case TY_SINT:
    case TY_ENUM:
        if (type_is_signed(t)) {
            sb_puts(fmt, "%lld");
            sb_printf(args, ", (long long)%s", expr);
        } else {
            sb_puts(fmt, "%llu");
            sb_printf(args, ", (unsigned long long)%s", expr);
        }
        break;
    case TY_FLOAT:
        sb_puts(fmt, "%g");
        sb_printf(args, ", (double)%s", expr);
        break;
    case TY_POINTER:
    case TY_FNPTR:
    case TY_ARRAY:
        sb_puts(fmt, "%#llx");
        sb_printf(args, ", (unsigned long long)(uintptr_t)%s", expr);
        break;
    case TY_RECORD:
        sb_puts(fmt, "{...}");
        break;
    case TY_VOID:
        sb_puts(fmt, "void");
        break;
    case TY_OTHER:
        sb_puts(fmt, "?");
        break;
    }
}

static int is_string_ann(const param_ann *a)
{
    return a->kind == PK_STRING;
}

/* ---- several servers: which server a call goes to ---------------------------- */
/* Whether an annotation names a server: a handle or device address by
 * value, the first of an input array of handles, a handle among a key/value
 * list's values. */
static int ann_routes(const param_ann *a)
{
    if (!a) return 0;
    switch (a->kind) {
    case PK_HANDLE: return 1;
    case PK_DEVPTR: return !a->map_fn && !a->dev_unchecked;
    case PK_VALUE: return a->ordinal;
    case PK_IN:
        if (a->elem == EK_HANDLE) return a->count != NULL && !a->terminated;
        return a->elem == EK_BYTES && a->nhandle_keys && a->terminated && a->term_stride == 2;
    case PK_COND: return ann_routes(a->then_ann) || ann_routes(a->else_ann);
    default: return 0;
    }
}

static int fn_routes(const function_def *f)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (ann_routes(&f->sig.params[i].ann)) return 1;
    return 0;
}

static void put_route(stub_fn *s, const param_def *p, const char *name, const param_ann *a)
{
    emit_ctx *e = s->e;
    const char *api = e->m->api.name;
    if (!ann_routes(a)) return;
    switch (a->kind) {
    case PK_HANDLE:
        PUT(hobj(e) ? "stub_route_hid" : "stub_route_id", "api", api, "name", name);
        break;
    case PK_DEVPTR:
        PUT("stub_route_dev", "api", api, "name", name);
        break;
    case PK_VALUE: {
        char *ty = c_type(p->type);
        PUT("stub_route_ordinal", "api", api, "name", name, "type", ty);
        free(ty);
        break;
    }
    case PK_IN:
        if (a->elem == EK_HANDLE) {
            char *id = hobj(e) ? xasprintf("APIGEN_H2ID(%s[0])", name)
                               : xasprintf("(uint64_t)(uintptr_t)%s[0]", name);
            PUT("stub_route_first", "api", api, "name", name, "count", a->count->text, "id", id);
            free(id);
        } else {
            char term[32];
            snprintf(term, sizeof term, "%lld", (long long)a->terminator);
            size_t nk;
            char *keys = case_values(a->handle_keys, a->nhandle_keys, ", ", "(int64_t)", &nk);
            char nks[24];
            snprintf(nks, sizeof nks, "%zu", nk);
            PUT("stub_route_keyed", "api", api, "name", name, "keys", keys, "nkeys", nks, "term",
                term);
            free(keys);
        }
        break;
    case PK_COND:
        PUT("stub_if", "cond", a->cond ? a->cond->text : "0");
        e->o.indent += 4;
        put_route(s, p, name, a->then_ann);
        e->o.indent -= 4;
        if (ann_routes(a->else_ann)) {
            PUT("stub_else");
            e->o.indent += 4;
            put_route(s, p, name, a->else_ann);
            e->o.indent -= 4;
        }
        PUT("stub_close_brace");
        break;
    default:
        break;
    }
}

/* After the reply: out ordinals mapped back, the thread's server selected,
 * device ranges noted and forgotten (all no-ops with one server). */
/* The guest's id of a handle expression (its tracking key). */
static char *state_id(const emit_ctx *e, const char *expr)
{
    return hobj(e) ? xasprintf("APIGEN_H2ID(%s)", expr) : xasprintf("(uint64_t)(uintptr_t)%s", expr);
}

static const handle_type_def *handle_named(const api_model *m, const char *name)
{
    for (size_t k = 0; name && k < m->nhandles; k++)
        if (strcmp(m->handles[k].name, name) == 0) return &m->handles[k];
    return NULL;
}

/* `async_repeats:` the key of the values the library checks (runtime/repeat.c):
 * integers, enums and structs by value, handle ids, a device address's
 * alignment and NULL-ness, the state values the call carries, an input
 * array's presence and, for integer or enum elements, its contents.
 * Floating-point data is left out: libraries take any value, and a scale
 * that changes per call must not make every call a first one. */
static void put_repeat_key(stub_fn *s)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    PUT("stub_repeat_key", "api", e->m->api.name, "API", e->API, "fn", f->name);
    for (size_t k = 0; k < f->nstate_uses; k++) {
        const handle_type_def *h = handle_named(e->m, f->state_uses[k].handle_type);
        char *v = xasprintf("st_%s_", h->states[f->state_uses[k].slot].name);
        PUT("stub_repeat_mix", "name", v);
        free(v);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_def *p = &f->sig.params[i];
        const param_ann *a = &p->ann;
        const char *name = s->names[i];
        switch (a->kind) {
        case PK_VALUE:
            if (p->type->kind != TY_FLOAT) PUT("stub_repeat_mix", "name", name);
            break;
        case PK_STRUCT:
        case PK_HANDLE:
            PUT("stub_repeat_mix", "name", name);
            break;
        case PK_DEVPTR:
            PUT("stub_repeat_mix_dev", "name", name);
            break;
        case PK_IN:
        case PK_INOUT:
            if (a->elem == EK_BYTES && !a->count_is_bytes && a->elem_type &&
                (a->elem_type->kind == TY_SINT || a->elem_type->kind == TY_UINT ||
                 a->elem_type->kind == TY_ENUM || a->elem_type->kind == TY_BOOL))
                PUT("stub_repeat_mix_in", "name", name);
            else
                PUT("stub_repeat_mix_present", "name", name);
            break;
        case PK_OUT:
        case PK_STRING:
        case PK_CALLBACK:
        case PK_COND: /* its branch follows from the values mixed here */
            PUT("stub_repeat_mix_present", "name", name);
            break;
        case PK_USERDATA:
        case PK_IGNORE:
            break;
        }
    }
}

/* After the reply: the guest's tracking of handle states (spec `state:`):
 * a setter's value, a new handle's initial values, a destroyed one's end. */
static void put_state_after(stub_fn *s, const char *ok)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const api_model *m = e->m;
    char nbuf[24];
    if (f->state_role == 1) {
        const handle_type_def *h = handle_named(m, f->state_htype);
        char *id = state_id(e, s->names[f->state_hparam]);
        char slot[24];
        snprintf(slot, sizeof slot, "%u", f->state_slot);
        snprintf(nbuf, sizeof nbuf, "%zu", h ? h->nstates : 0);
        PUT("stub_state_set", "ok", ok, "state", h ? h->states[f->state_slot].name : "?", "name",
            s->names[f->state_hparam], "ht", f->state_htype, "n", nbuf, "id", id, "slot", slot,
            "value", s->names[f->state_vparam]);
        free(id);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        const handle_type_def *h = handle_named(m, a->handle_type);
        if (!h || !h->nstates) continue;
        snprintf(nbuf, sizeof nbuf, "%zu", h->nstates);
        if (a->kind == PK_OUT && a->elem == EK_HANDLE && a->creates && !a->count) {
            char *deref = xasprintf("*%s", s->names[i]);
            char *id = state_id(e, deref);
            PUT("stub_state_add", "ok", ok, "name", s->names[i], "ht", h->name, "n", nbuf, "id", id);
            free(id);
            free(deref);
        } else if (a->kind == PK_HANDLE && a->destroys) {
            char *id = state_id(e, s->names[i]);
            PUT("stub_state_forget", "ok", ok, "name", s->names[i], "ht", h->name, "id", id);
            free(id);
        }
    }
}

static char *any_of(const char *by, char *const *values, size_t n);

/* One input's bytes into writer w (a memoized query's key, a handle's
 * contents): values as they lie, strings, byte buffers; 0: a kind that has
 * no such bytes (check_cache.c refuses it where it matters). */
static int put_input_bytes(stub_fn *s, const char *w, size_t i, const char *tmpl_raw,
                           const char *tmpl_str, const char *tmpl_bytes)
{
    emit_ctx *e = s->e;
    const param_ann *a = &s->f->sig.params[i].ann;
    const char *name = s->names[i];
    switch (a->kind) {
    case PK_VALUE: case PK_STRUCT:
        PUT(tmpl_raw, "w", w, "name", name);
        return 1;
    case PK_STRING:
        PUT(tmpl_str, "w", w, "name", name);
        return 1;
    case PK_IN:
        if (a->elem != EK_BYTES || !tmpl_bytes || a->stream_host) return 0;
        PUT(tmpl_bytes, "w", w, "name", name);
        return 1;
    case PK_IGNORE:
        return 1;
    default:
        return 0;
    }
}

/* A memoized query's key (spec `cache: {contents: [...], ids: [...]}`):
 * every input by value, each handle by its id or by what the guest holds
 * of it, each output by whether it is asked for. */
static void put_memo_key(stub_fn *s)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    PUT("stub_memo_open");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        const char *name = s->names[i];
        if (a->kind == PK_HANDLE) {
            char *id = state_id(e, name);
            PUT(f->memo[i] == MEMO_CONTENTS ? "stub_memo_contents" : "stub_memo_id", "name", name,
                "id", id);
            free(id);
        } else if (a->kind == PK_OUT) {
            PUT("stub_memo_present", "name", name);
        } else {
            put_input_bytes(s, "mk_", i, "stub_memo_raw", "stub_memo_str", NULL);
        }
    }
}

/* Handle contents the guest holds (spec `types.handles.H.contents`): a
 * create's values, a setter's part (`contents:`), a destroy's end; after
 * the call is queued, or after it succeeded (ok). */
static void put_contents(stub_fn *s, const char *ok)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const api_model *m = e->m;
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        const handle_type_def *h = handle_named(m, a->handle_type);
        if (!h || !h->contents) continue;
        if (a->kind == PK_OUT && a->elem == EK_HANDLE && a->creates && !a->count) {
            char *deref = xasprintf("*%s", s->names[i]);
            char *id = state_id(e, deref);
            PUT("stub_contents_open", "ok", ok, "ht", h->name, "name", s->names[i]);
            for (size_t j = 0; j < f->sig.nparams; j++)
                if (j != i && !put_input_bytes(s, "cv_", j, "stub_contents_raw", "stub_contents_str",
                                               "stub_contents_bytes"))
                    PUT("stub_contents_unknown", "cond", "1", "name", s->names[j]);
            PUT("stub_contents_create", "API", e->API, "fn", f->name, "name", s->names[i], "id", id);
            free(id);
            free(deref);
        } else if (a->kind == PK_HANDLE && a->destroys) {
            char *id = state_id(e, s->names[i]);
            PUT("stub_contents_forget", "ok", ok, "name", s->names[i], "id", id);
            free(id);
        }
    }
    for (size_t i = 0; f->contents_unknown && i < f->sig.nparams; i++) {
        if (!f->contents_unknown[i]) continue; /* changed in a way the guest does not record */
        char *id = state_id(e, s->names[i]);
        PUT("stub_contents_lost", "name", s->names[i], "id", id);
        free(id);
    }
    if (!f->contents_sets) return;
    size_t hp = f->contents_sets - 1;
    const handle_type_def *h = handle_named(m, f->sig.params[hp].ann.handle_type);
    char *id = state_id(e, s->names[hp]);
    PUT("stub_contents_open", "ok", ok, "ht", h ? h->name : "?", "name", s->names[hp]);
    for (size_t j = 0; j < f->sig.nparams; j++) {
        if (j == hp) continue;
        const param_ann *a = &f->sig.params[j].ann;
        put_input_bytes(s, f->contents_key[j] ? "ck_" : "cv_", j, "stub_contents_raw",
                        "stub_contents_str", "stub_contents_bytes");
        /* a buffer of other handles' ids for some values: what it says depends on them */
        const char *by = a->elem_by_param ? param_index_name(s->names, f, a->elem_by_param) : NULL;
        for (size_t c = 0; by && c < a->nelem_by; c++) {
            if (!a->elem_by[c].nvalues) continue;
            char *vs = any_of(by, a->elem_by[c].values, a->elem_by[c].nvalues);
            PUT("stub_contents_unknown", "cond", vs, "name", s->names[j]);
            free(vs);
        }
    }
    PUT("stub_contents_set", "API", e->API, "fn", f->name, "id", id);
    free(id);
}

static void put_after_reply(stub_fn *s, const char *success)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const char *api = e->m->api.name;
    char *ok = returns_error(e, f) ? xasprintf("ret_ == %s", success) : xstrdup("1");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->ordinal && a->kind == PK_OUT) {
            char *ty = c_type(a->elem_type);
            PUT("stub_ordinal_out", "api", api, "name", s->names[i], "type", ty, "success", success);
            free(ty);
        } else if ((a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_DEVPTR &&
                   a->creates && a->extent && !a->count) {
            PUT("stub_dev_note", "api", api, "name", s->names[i], "ok", ok, "bytes",
                a->extent->text);
        } else if (a->kind == PK_DEVPTR && a->destroys) {
            PUT("stub_dev_forget", "api", api, "name", s->names[i], "ok", ok);
        }
    }
    if (f->selects) PUT("stub_selects", "api", api, "success", success);
    put_state_after(s, ok);
    put_contents(s, ok);
    free(ok);
}

/* The exported function of a `gather: {}` function: <api>_on_<fn> on every
 * server in order (templates/stub.tmpl, stub_gather_all); of a `gather:
 * {first: true}` one: until one succeeds (stub_gather_first). */
static void emit_gather_all(emit_ctx *e, const function_def *f)
{
    char **names = param_names(f);
    const api_model *m = e->m;
    char *pr = proto(f, f->name, names);
    char *rtype = c_type(f->sig.ret);
    strbuf a0 = {0}, as = {0};
    sb_puts(&a0, "0");
    sb_puts(&as, "(int)s_");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        sb_printf(&a0, ", %s", names[i]);
        sb_printf(&as, ", %s", names[i]);
    }
    PUT(f->gather_first ? "stub_gather_first" : "stub_gather_all", "api", m->api.name, "fn", f->name, "proto", pr, "rtype", rtype,
        "success", m->api.success ? m->api.success : "0", "args0", a0.s, "args", as.s);
    sb_free(&a0);
    sb_free(&as);
    free(rtype);
    free(pr);
    free_names(names, f->sig.nparams);
}

/* The exported function of a `gather:` function: asks <api>_on_<fn> of
 * every server (templates/stub.tmpl, stub_gather_*). */
static void emit_gather(emit_ctx *e, const function_def *f)
{
    char **names = param_names(f);
    const api_model *m = e->m;
    const char *api = m->api.name;
    const char *success = m->api.success ? m->api.success : "0";
    char *pr = proto(f, f->name, names);
    char *rtype = c_type(f->sig.ret);
    const char *count = param_index_name(names, f, f->gather_count);
    const char *list = f->gather_list ? param_index_name(names, f, f->gather_list) : NULL;
    const char *cap = f->gather_cap ? param_index_name(names, f, f->gather_cap) : NULL;
    const param_def *cp = NULL, *lp = NULL, *kp = NULL;
    strbuf args = {0}, sargs = {0};
    sb_puts(&args, "");
    sb_puts(&sargs, "");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const char *n = names[i], *sn = n;
        if (strcmp(n, count) == 0) sn = "cnt_p_", cp = &f->sig.params[i];
        else if (list && strcmp(n, list) == 0) sn = "lst_", lp = &f->sig.params[i];
        else if (cap && strcmp(n, cap) == 0) sn = "cap_", kp = &f->sig.params[i];
        sb_printf(&args, "%s%s", i ? ", " : "", n);
        sb_printf(&sargs, "%s%s", i ? ", " : "", sn);
    }
    char *ctype = c_type(cp->ann.elem_type);
    PUT("stub_gather_open", "api", api, "fn", f->name, "proto", pr, "args", args.s, "rtype", rtype,
        "success", success, "ctype", ctype,
        "listdoc", list ? " and their lists concatenated" : "");
    if (list) PUT("stub_gather_list_locals");
    char *cond = list ? xasprintf("(%s != NULL || %s != NULL)", count, list)
                      : xasprintf("%s != NULL", count);
    PUT("stub_gather_loop", "ctype", ctype, "cond", cond);
    if (list) {
        char *capdecl = c_decl(kp->type, "cap_", 1), *listdecl = c_decl(lp->type, "lst_", 1);
        char *captype = c_type(kp->type);
        PUT("stub_gather_room", "capdecl", capdecl, "listdecl", listdecl, "cap", cap, "list", list,
            "captype", captype);
        free(capdecl);
        free(listdecl);
        free(captype);
    }
    PUT("stub_gather_call", "api", api, "fn", f->name, "rtype", rtype, "sargs", sargs.s, "success",
        success);
    if (list) PUT("stub_gather_fill");
    PUT("stub_gather_close", "count", count, "ctype", ctype, "success", success, "rtype", rtype);
    if (m->api.ordinals && strcmp(m->api.ordinals, f->name) == 0)
        PUT("stub_ordinals_fn", "api", api, "fn", f->name, "ctype", ctype, "success", success);
    free(cond);
    free(ctype);
    sb_free(&args);
    sb_free(&sargs);
    free(rtype);
    free(pr);
    free_names(names, f->sig.nparams);
}

/* The check of one range-checked device address (apigen_vouch_dev*), NULL:
 * none (not a checked device parameter). */
static char *vouch_dev(const api_model *m, const param_ann *a, const char *name)
{
    if (a->kind != PK_DEVPTR || !m->api.device_checked || a->dev_unchecked || a->map_fn)
        return NULL;
    /* the extent too: one past the allocation goes sync (the server refuses it) */
    if (a->extent && !a->destroys)
        return xasprintf("apigen_vouch_dev_bytes(&call_, (uint64_t)(uintptr_t)%s, (uint64_t)(%s))",
                         name, a->extent->text);
    return xasprintf("apigen_vouch_dev(&call_, (uint64_t)(uintptr_t)%s)", name);
}

/* "BY == V0 || BY == V1 ...": the values of BY for which a case applies */
static char *any_of(const char *by, char *const *values, size_t n)
{
    strbuf v = {0};
    sb_puts(&v, "");
    for (size_t k = 0; k < n; k++)
        sb_printf(&v, "%s%s == %s", k ? " || " : "", by, values[k]);
    return sb_take(&v);
}

/* What the guest can check of an async call's arguments before it queues
 * the call (apigen_vouch_*): handles of types the server would refuse when
 * unknown, and range-checked device addresses (also a conditional
 * parameter's device branch, when its condition takes it). NULL: nothing
 * to check. */
static char *vouch_cond(emit_ctx *e, const function_def *f, char **names)
{
    const api_model *m = e->m;
    strbuf b = {0};
    sb_puts(&b, "");
    int n = 0;
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_HANDLE && a->handle_type) {
            const handle_type_def *h = NULL;
            for (size_t k = 0; k < m->nhandles; k++)
                if (strcmp(m->handles[k].name, a->handle_type) == 0) h = &m->handles[k];
            if (!h || h->unknown_as_null) continue; /* the library answers those itself */
            char *id = hobj(e) ? xasprintf("APIGEN_H2ID(%s)", names[i])
                               : xasprintf("(uint64_t)(uintptr_t)%s", names[i]);
            sb_printf(&b, "%s(", n++ ? "\n        && " : "");
            int null_passes = 0;
            for (size_t k = 0; k < h->npassthrough; k++) {
                sb_printf(&b, "%s == (uint64_t)%" PRId64 " || ", id, h->passthrough[k]);
                null_passes |= h->passthrough[k] == 0;
            }
            /* NULL of a type that does not pass it through: the server refuses it, so sync */
            if (null_passes)
                sb_printf(&b, "apigen_vouch_id(&call_, %s))", id);
            else
                sb_printf(&b, "(%s != 0 && apigen_vouch_id(&call_, %s)))", id, id);
            free(id);
        } else if (a->kind == PK_COND && a->cond && !a->space_state) {
            char *t = vouch_dev(m, a->then_ann, names[i]), *el = vouch_dev(m, a->else_ann, names[i]);
            if (t || el)
                sb_printf(&b, "%s((%s) ? %s : %s)", n++ ? "\n        && " : "", a->cond->text,
                          t ? t : "1", el ? el : "1");
            free(t);
            free(el);
        } else if (a->kind == PK_IN && a->elem_by_param && !a->terminated && !a->stream_host) {
            /* an input buffer whose elements are device addresses or handles for
             * some values of another parameter: each element vouched for as the
             * server checks it (emit_server.c elem_by) */
            const char *by = param_index_name(names, f, a->elem_by_param);
            if (!by) continue;
            if (a->nelem_by_device && m->api.device_checked) {
                char *vs = any_of(by, a->elem_by_device, a->nelem_by_device);
                sb_printf(&b, "%s(!(%s) || apigen_vouch_dev_elems(&call_, %s, n_%s))",
                          n++ ? "\n        && " : "", vs, names[i], names[i]);
                free(vs);
            }
            for (size_t c = 0; c < a->nelem_by; c++) {
                const handle_case *hc = &a->elem_by[c];
                if (!hc->nvalues) continue;
                char *vs = any_of(by, hc->values, hc->nvalues);
                sb_printf(&b, "%s(!(%s) || apigen_vouch_id_elems(&call_, %s, n_%s, sizeof(%s)))",
                          n++ ? "\n        && " : "", vs, names[i], names[i], hc->handle_type);
                free(vs);
            }
        } else {
            char *d = vouch_dev(m, a, names[i]);
            if (d)
                sb_printf(&b, "%s%s", n++ ? "\n        && " : "", d);
            free(d);
        }
    }
    char *r = sb_take(&b);
    if (!n) {
        free(r);
        return NULL;
    }
    return r;
}

/* The 64 bits the guest keeps of a value of type t (spec `thread_state:`), and back. */
static char *tstate_value(const type_info *t, const char *v)
{
    return t->kind == TY_POINTER ? xasprintf("(uint64_t)(uintptr_t)%s", v)
                                 : xasprintf("(uint64_t)(int64_t)%s", v);
}

/* A state entry's condition, and for an answer that each handle or device
 * address argument is NULL (a call that names none routes to the thread's
 * current server, whose values the guest keeps). */
static char *tstate_cond(const function_def *f, const state_entry *se, int answer)
{
    strbuf b = {0};
    sb_printf(&b, "(%s)", se->cond ? se->cond->text : "1");
    for (size_t i = 0; answer && i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_HANDLE || a->kind == PK_DEVPTR)
            sb_printf(&b, " && (uintptr_t)%s == 0", f->sig.params[i].name);
    }
    return sb_take(&b);
}

static void put_tstate_answer(stub_fn *s)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const api_model *m = e->m;
    for (size_t k = 0; k < f->nstate; k++) {
        const state_entry *se = &f->state[k];
        if (se->answer_slot < 0) continue;
        const param_def *p = param_of(f, se->answer_param);
        char *ty = c_type(p->ann.elem_type);
        char *conv = p->ann.elem_type->kind == TY_POINTER ? xasprintf("(%s)(uintptr_t)v_", ty)
                                                          : xasprintf("(%s)v_", ty);
        char *cond = tstate_cond(f, se, 1), *idx = xasprintf("%d", se->answer_slot);
        PUT("stub_tstate_answer", "cond", cond, "name", p->name, "api", m->api.name, "idx", idx,
            "slot", m->api.thread_state[se->answer_slot], "conv", conv, "success",
            m->api.success ? m->api.success : "0");
        free(ty);
        free(conv);
        free(cond);
        free(idx);
    }
}

/* `exchange:` (a value swapped with the thread's): the value sent in, and
 * whether the call may be answered in the guest and queued: the old value
 * known and the new one a constant of its enum (which the library takes). */
static void put_tstate_exchange_decl(stub_fn *s)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const api_model *m = e->m;
    const state_entry *se = exchange_of(f);
    if (!se) return;
    const param_def *p = param_of(f, se->exchange_param);
    const enum_def *en = p->ann.elem_type->enm;
    strbuf vb = {0};
    for (size_t i = 0; i < en->nconsts; i++)
        sb_printf(&vb, "%sxnew_ == (uint64_t)(int64_t)%s", i ? " || " : "", en->consts[i].name);
    char *valid = sb_take(&vb);
    char *cond = tstate_cond(f, se, 1), *idx = xasprintf("%d", se->exchange_slot);
    PUT("stub_tstate_exchange_decl", "cond", cond, "name", p->name, "api", m->api.name, "idx", idx,
        "slot", m->api.thread_state[se->exchange_slot], "valid", valid);
    free(valid);
    free(cond);
    free(idx);
}

/* `exchange:` with the old value known: answered here, the call queued (in
 * order with the thread's other calls, so the server's thread swaps too) */
static void put_tstate_exchange_queued(stub_fn *s, const char *success, int lasterr)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const api_model *m = e->m;
    const state_entry *se = exchange_of(f);
    if (!se) return;
    const param_def *p = param_of(f, se->exchange_param);
    char *ty = c_type(p->ann.elem_type);
    char *conv = xasprintf("(%s)xold_", ty);
    char *idx = xasprintf("%d", se->exchange_slot);
    const char *slot = m->api.thread_state[se->exchange_slot];
    PUT("stub_tstate_exchange_queued", "slot", slot);
    e->o.indent += 4;
    if (m->api.tstate_effects == TSTATE_EFFECTS_DECLARED)
        PUT("stub_tstate_forget_named", "slot", slot);
    e->o.indent -= 4;
    PUT("stub_tstate_exchange_queued_end", "idx", idx, "slot", slot, "name", p->name, "conv", conv,
        "success", success);
    if (lasterr) /* the library takes it: the last error stays as it was */
        PUT("stub_tstate_exchange_lasterr", "api", m->api.name);
    PUT("stub_tstate_exchange_queued_done");
    free(ty);
    free(conv);
    free(idx);
}

static void put_tstate_after(stub_fn *s, const char *success)
{
    emit_ctx *e = s->e;
    const function_def *f = s->f;
    const api_model *m = e->m;
    for (size_t k = 0; k < f->nstate; k++) {
        const state_entry *se = &f->state[k];
        char *cond = tstate_cond(f, se, se->answer_slot >= 0 || se->exchange_slot >= 0);
        PUT("stub_tstate_open", "cond", cond);
        free(cond);
        for (size_t j = 0; j < se->nforget; j++) {
            char *idx = xasprintf("%d", se->forget[j]);
            PUT("stub_tstate_forget", "idx", idx, "slot", m->api.thread_state[se->forget[j]]);
            free(idx);
        }
        if (se->forget_all) PUT("stub_tstate_forget_all");
        /* api.thread_state_effects: declared: a call that changes this API's
         * thread state changes what the family's other APIs see of it */
        if (m->api.tstate_effects == TSTATE_EFFECTS_DECLARED && (se->nset || se->nforget))
            PUT("stub_tstate_forget_others");
        else if (m->api.tstate_effects == TSTATE_EFFECTS_DECLARED && se->exchange_slot >= 0)
            PUT("stub_tstate_forget_named", "slot", m->api.thread_state[se->exchange_slot]);
        if (se->exchange_slot >= 0) {
            char *idx = xasprintf("%d", se->exchange_slot);
            PUT("stub_tstate_exchange_after", "success", success, "idx", idx, "slot",
                m->api.thread_state[se->exchange_slot]);
            free(idx);
        }
        for (size_t j = 0; j <= se->nset; j++) {
            int slot, deref;
            const char *pn;
            if (j < se->nset) {
                slot = se->set_slot[j], deref = se->set_deref[j], pn = se->set_param[j];
            } else if (se->answer_slot >= 0) { /* an answer fetched: known from now on */
                slot = se->answer_slot, deref = 1, pn = se->answer_param;
            } else {
                break;
            }
            const param_def *p = param_of(f, pn);
            /* a device ordinal passed in was turned into its server's number
             * for the wire: the slot keeps the guest's, as an answer does */
            char *v = deref ? xasprintf("*%s", pn)
                      : p->ann.ordinal && m->api.ordinals
                          ? xasprintf("apigen_ordinal_global(&%s_api, %s_ordinals_, call_.server, "
                                      "(int64_t)%s)",
                                      m->api.name, m->api.name, pn)
                          : xstrdup(pn);
            char *val = tstate_value(deref ? p->ann.elem_type : p->type, v);
            char *idx = xasprintf("%d", slot);
            if (deref)
                PUT("stub_tstate_set_ptr", "success", success, "idx", idx, "value", val, "name", pn,
                    "slot", m->api.thread_state[slot]);
            else
                PUT("stub_tstate_set", "success", success, "idx", idx, "value", val, "slot",
                    m->api.thread_state[slot]);
            free(v);
            free(val);
            free(idx);
        }
        PUT("stub_close_brace");
    }
}

static void emit_forwarded(emit_ctx *e, const function_def *f)
{
    stub_fn s = {e, f, param_names(f), 0, 0, 0, 0};
    const api_model *m = e->m;
    int is_err = returns_error(e, f);
    int is_void = type_is_void(f->sig.ret);
    /* <api>_on_<fn>(srv_, ...): one server's answer */
    int on = f->gather_count != NULL || f->gather_all || f->gather_first;
    char *fwd = f->wrap_guest ? xasprintf("%s_fwd_%s", m->api.name, f->name)
                : on          ? xasprintf("%s_on_%s", m->api.name, f->name)
                              : xstrdup(f->name);
    char *pr = proto_with(f, fwd, s.names, on ? "int srv_" : NULL);
    char *rtype = c_type(f->sig.ret);
    const char *check_fn[2], *check_var[2];
    size_t nchecks = guest_checks(f, check_fn, check_var);
    for (size_t i = 0; i < nchecks; i++) {
        char *d = guest_fn_text(f, check_fn[i], s.names, 0);
        PUT("stub_custom_decl", "proto", d);
        free(d);
    }
    if (on) PUT("stub_fn_open_on", "proto", pr, "fn", f->name);
    else if (f->wrap_guest) PUT("stub_fn_open_fwd", "proto", pr, "fn", f->name);
    else if (f->internal) PUT("stub_fn_open_internal", "proto", pr, "fn", f->name);
    else PUT("stub_fn_open", "proto", pr);
    free(pr);
    free(fwd);
    if (!is_void) {
        char *d = c_decl(f->sig.ret, "ret_", 1);
        char *d2 = xasprintf("%s = {0}", d);
        PUT("stub_local", "decl", d2);
        free(d);
        free(d2);
    }
    int need_i = 0;
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (ann_needs_n(a)) {
            char *d = xasprintf("uint64_t n_%s = 0", s.names[i]);
            PUT("stub_local", "decl", d);
            free(d);
        }
        if (a->guest_id) {
            char *d = xasprintf("uint64_t g_%s = 0", s.names[i]);
            PUT("stub_local", "decl", d);
            free(d);
        }
        need_i |= ann_needs_i(a);
    }
    if (need_i) PUT("stub_local", "decl", "uint64_t i_");
    int answers = 0;
    for (size_t k = 0; k < f->nstate; k++) answers |= f->state[k].answer_slot >= 0;
    /* api.errors.last_error: what each call does to the thread's last error
     * the guest keeps (runtime/lasterr.c) */
    int lasterr = m->api.last_error_get || m->api.last_error_peek;
    if (f->cache || answers || f->last_error) PUT("stub_local", "decl", "bool cached_ = false");
    if (answers) {
        e->o.indent = 4;
        put_tstate_answer(&s);
        e->o.indent = 0;
    }
    e->o.indent = 4;
    put_tstate_exchange_decl(&s);
    e->o.indent = 0;
    if (f->async_repeats) PUT("stub_local", "decl", "uint64_t rk_ = 0");
    for (size_t i = 0; i < nchecks; i++) { /* asked first: they may make calls of their own */
        char *call = guest_fn_text(f, check_fn[i], s.names, 1);
        char *d = xasprintf("bool %s = %s", check_var[i], call);
        PUT("stub_local", "decl", d);
        free(d);
        free(call);
    }
    /* state values the call carries (`space:`), read from the guest's tracking */
    for (size_t k = 0; k < f->nstate_uses; k++) {
        const state_use *u = &f->state_uses[k];
        const handle_type_def *h = handle_named(m, u->handle_type);
        char slot[24];
        snprintf(slot, sizeof slot, "%u", u->slot);
        char *id = state_id(e, s.names[u->param]);
        PUT("stub_state_local", "state", h->states[u->slot].name, "ht", h->name, "slot", slot,
            "id", id, "name", s.names[u->param]);
        free(id);
    }
    /* `reads:` scalars: only the bytes the caller's object holds are read */
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (!a->reads_fn) continue;
        size_t h = 0, first = i;
        while (h < f->sig.nparams && strcmp(f->sig.params[h].name, a->reads_param) != 0) h++;
        /* one question per call for parameters that ask the same one */
        for (size_t j = 0; j < i; j++) {
            const param_ann *b = &f->sig.params[j].ann;
            if (b->reads_fn && strcmp(b->reads_fn, a->reads_fn) == 0 &&
                strcmp(b->reads_param, a->reads_param) == 0 && b->reads_index == a->reads_index) {
                first = j;
                break;
            }
        }
        char max[24], idx[24];
        snprintf(max, sizeof max, "%llu", (unsigned long long)a->reads_max);
        snprintf(idx, sizeof idx, "%u", a->reads_index);
        if (first == i)
            PUT("stub_reads_ask", "name", s.names[i], "fn", a->reads_fn, "handle",
                h < f->sig.nparams ? s.names[h] : "NULL", "index", idx);
        PUT("stub_reads", "name", s.names[i], "max", max, "fn", a->reads_fn, "first", s.names[first]);
    }
    /* a `state:` getter: a handle the guest tracks is answered without a round trip */
    if (f->state_role == 2 && !on) {
        const handle_type_def *h = handle_named(m, f->state_htype);
        char slot[24];
        snprintf(slot, sizeof slot, "%u", f->state_slot);
        char *id = state_id(e, s.names[f->state_hparam]);
        char *ty = c_type(f->sig.params[f->state_vparam].ann.elem_type);
        PUT("stub_state_get_local", "out", s.names[f->state_vparam], "state",
            h->states[f->state_slot].name, "ht", h->name, "slot", slot, "id", id, "type", ty,
            "success", m->api.success ? m->api.success : "0");
        free(ty);
        free(id);
    }
    int routes = !on && fn_routes(f);
    if (routes) {
        PUT("stub_route_decl");
        e->o.indent = 4;
        for (size_t i = 0; i < f->sig.nparams; i++)
            put_route(&s, &f->sig.params[i], s.names[i], &f->sig.params[i].ann);
        e->o.indent = 0;
    }
    if (f->last_error) {
        e->o.indent = 4;
        PUT("stub_lasterr_local", "api", m->api.name, "success",
            m->api.success ? m->api.success : "0");
        e->o.indent = 0;
    }
    if (on || routes) PUT("stub_begin_on", "api", m->api.name, "API", e->API, "fn", f->name);
    else PUT("stub_begin", "api", m->api.name, "API", e->API, "fn", f->name);

    /* body, at one indent */
    e->o.indent = 4;
    /* a call that reads host memory sized like a device range: the range is
     * checked first, as the real library does (apigen_dev_overruns) */
    int reads_host = 0;
    for (size_t i = 0; i < f->sig.nparams; i++)
        reads_host |= f->sig.params[i].ann.kind == PK_IN;
    for (size_t i = 0; reads_host && m->api.device_checked && i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind != PK_DEVPTR || !a->extent || a->dev_unchecked || a->map_fn || a->destroys)
            continue;
        PUT("stub_dev_overrun", "name", s.names[i], "extent", a->extent->text);
        s.used_baddev = 1;
    }
    for (size_t k = 0; k < f->nstate_uses; k++) {
        const handle_type_def *h = handle_named(m, f->state_uses[k].handle_type);
        PUT("stub_state_put", "state", h->states[f->state_uses[k].slot].name);
        s.used_nomem = 1;
    }
    for (size_t i = 0; i < f->sig.nparams; i++)
        put_value_like(&s, &f->sig.params[i], s.names[i], &f->sig.params[i].ann);
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_ann *a = &f->sig.params[i].ann;
        if (a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT || a->kind == PK_STRING ||
            a->kind == PK_COND)
            put_phase2(&s, &f->sig.params[i], s.names[i], a);
    }
    char *success = xstrdup(m->api.success ? m->api.success : "0");
    char *vouch = (f->async || f->async_if) ? vouch_cond(e, f, s.names) : NULL;
    if (f->async || f->async_if) {
        char *cond = f->async_if && vouch ? xasprintf("(%s) && %s", f->async_if->text, vouch)
                     : f->async_if        ? xstrdup(f->async_if->text)
                     : vouch              ? xstrdup(vouch)
                                          : NULL;
        if (f->async_check) {
            char *c2 = cond ? xasprintf("may_queue_ && %s", cond) : xstrdup("may_queue_");
            free(cond);
            cond = c2;
        }
        if (f->async_unless) {
            char *c2 = cond ? xasprintf("!sync_now_ && %s", cond) : xstrdup("!sync_now_");
            free(cond);
            cond = c2;
        }
        /* a conditional output (check.c): queued only on the other branch */
        for (size_t i = 0; i < f->sig.nparams; i++) {
            const param_ann *a = &f->sig.params[i].ann;
            if (a->kind != PK_COND) continue;
            int out_then = a->then_ann && (a->then_ann->kind == PK_OUT || a->then_ann->kind == PK_INOUT);
            int out_else = a->else_ann && (a->else_ann->kind == PK_OUT || a->else_ann->kind == PK_INOUT);
            if (!out_then && !out_else) continue;
            const char *ct = a->cond ? a->cond->text : "0";
            char *c2 = xasprintf(out_then ? "%s%s!(%s)" : "%s%s(%s)", cond ? cond : "",
                                 cond ? " && " : "", ct);
            free(cond);
            cond = c2;
        }
        /* a handle the guest names through a pointer that may not be NULL: a
         * NULL one goes sync, so the library's own error is the call's */
        for (size_t i = 0; i < f->sig.nparams; i++) {
            const param_ann *a = &f->sig.params[i].ann;
            if (!a->guest_id || a->nullable) continue;
            char *c2 = cond ? xasprintf("(%s) && %s != NULL", cond, s.names[i])
                            : xasprintf("%s != NULL", s.names[i]);
            free(cond);
            cond = c2;
        }
        if (f->async_repeats) { /* the values the library checks: accepted before? */
            put_repeat_key(&s);
            char *c2 = cond ? xasprintf("(%s) && apigen_repeat_known(rk_)", cond)
                            : xstrdup("apigen_repeat_known(rk_)");
            free(cond);
            cond = c2;
        }
        if (vouch) PUT("stub_vouch_note");
        if (cond) {
            PUT("stub_if", "cond", cond);
            e->o.indent += 4;
        }
        int had_cond = cond != NULL;
        free(cond);
        PUT("stub_async");
        if (lasterr)
            PUT("stub_lasterr_queued", "api", m->api.name, "checked",
                queue_check_var(f) ? queue_check_var(f) : f->async_repeats ? "true" : "false",
                "why", f->async_check     ? "unchanged when async_check vouched for the call"
                       : f->async_vouch   ? "unchanged when async_vouch vouched for the call"
                       : f->async_repeats ? "unchanged: the library accepted these values before"
                                          : "unknown: it may fail on the server");
        for (size_t i = 0; i < f->sig.nparams; i++) /* a queued free: its range is gone */
            if (f->sig.params[i].ann.kind == PK_DEVPTR && f->sig.params[i].ann.destroys)
                PUT("stub_dev_forget", "api", m->api.name, "name", s.names[i], "ok", "1");
        /* queued: answers asked after it are asked after it on the server too */
        for (size_t i = 0; i < f->ncache_forget; i++)
            PUT("stub_cache_forget", "group", m->api.cache_groups[f->cache_forget[i]]);
        for (size_t i = 0; i < f->sig.nparams; i++) {
            const param_ann *a = &f->sig.params[i].ann;
            if (!a->guest_id) continue;
            char *ty = c_type(a->elem_type);
            PUT(hobj(e) ? "stub_set_hgid_queued" : "stub_set_gid_queued", "name", s.names[i],
                "type", ty);
            free(ty);
        }
        put_contents(&s, "1");
        if (is_err) PUT("stub_set_ret", "value", success);
        PUT("stub_goto_done");
        if (had_cond) {
            e->o.indent -= 4;
            PUT("stub_close_brace");
        }
    }
    put_tstate_exchange_queued(&s, success, lasterr);
    int gid_sync = 0; /* a NULL non-nullable guest-named handle pointer goes sync */
    for (size_t i = 0; i < f->sig.nparams; i++)
        gid_sync |= f->sig.params[i].ann.guest_id && !f->sig.params[i].ann.nullable;
    int has_sync = !f->async || vouch != NULL || f->async_check != NULL ||
                   f->async_unless != NULL || f->async_repeats || gid_sync;
    free(vouch);
    if (has_sync) {
        /* a streamed out-buffer: its chunks arrive ahead of the reply, straight into it */
        for (size_t i = 0; i < f->sig.nparams; i++) {
            const param_ann *a = &f->sig.params[i].ann;
            if (a->kind == PK_OUT && a->stream_host && a->elem == EK_BYTES) {
                PUT("stub_stream_into", "name", s.names[i]);
            } else if (a->kind == PK_COND) {
                const param_ann *br[2] = {a->then_ann, a->else_ann};
                for (int b = 0; b < 2; b++) {
                    if (!br[b] || br[b]->kind != PK_OUT || !br[b]->stream_host) continue;
                    char *cond = b ? xasprintf("!(%s)", a->cond ? a->cond->text : "0")
                                   : xstrdup(a->cond ? a->cond->text : "0");
                    PUT("stub_if", "cond", cond);
                    e->o.indent += 4;
                    PUT("stub_stream_into", "name", s.names[i]);
                    e->o.indent -= 4;
                    PUT("stub_close_brace");
                    free(cond);
                }
            }
        }
        if (f->cache && f->memo) {
            put_memo_key(&s);
            PUT("stub_sync_memo", "cond", f->cache_if ? f->cache_if->text : "true");
        } else if (f->cache && f->ncache_tstate) {
            /* the thread's values join the key (known ones only; a lazy slot's
             * stand-in value, "none yet", is not one) */
            char n[24];
            snprintf(n, sizeof n, "%zu", f->ncache_tstate);
            PUT("stub_cache_tstate_decl", "n", n);
            for (size_t i = 0; i < f->ncache_tstate; i++) {
                int slot = f->cache_tstate[i];
                char idx[24], at[24], notlazy[80] = "";
                snprintf(idx, sizeof idx, "%d", slot);
                snprintf(at, sizeof at, "%zu", i);
                if (m->api.tstate_lazy_mask & (1u << slot))
                    snprintf(notlazy, sizeof notlazy, " && ckey_tstate_[%zu] != (uint64_t)%lld", i,
                             (long long)m->api.tstate_lazy[slot]);
                PUT("stub_cache_tstate_get", "api", m->api.name, "idx", idx, "i", at, "notlazy",
                    notlazy, "slot", m->api.thread_state[slot]);
            }
            char *group = f->cache_group >= 0
                              ? xasprintf("\"%s\"", m->api.cache_groups[f->cache_group])
                              : xstrdup("NULL");
            PUT("stub_sync_cached_keyed", "cond", f->cache_if ? f->cache_if->text : "true",
                "group", group);
            free(group);
        } else if (f->cache && f->cache_group >= 0)
            PUT("stub_sync_cached_group", "cond", f->cache_if ? f->cache_if->text : "true",
                "group", m->api.cache_groups[f->cache_group]);
        else if (f->cache)
            PUT("stub_sync_cached", "cond", f->cache_if ? f->cache_if->text : "true");
        else
            PUT("stub_sync");
        const type_info *rt = f->sig.ret;
        wire_scalar w;
        if (is_void) {
        } else if (f->ret_handle) {
            PUT(hobj(e) ? "stub_get_ret_hid" : "stub_get_ret_id", "type", rtype);
            if (hobj(e) && f->ret_creates)
                PUT("stub_href", "name", "ret_", "delta", "1", "owned", "true");
            s.used_bad = 1;
        } else if (rt->kind == TY_RECORD) {
            PUT("stub_get_ret_struct");
            s.used_bad = 1;
        } else if (wire_scalar_of(rt, &w)) {
            char *dec = wire_value_dec(&w, rt, "v_");
            PUT("stub_get_ret_value", "utype", w.utype, "get", w.get, "dec", dec);
            free(dec);
            s.used_bad = 1;
        } else {
            emit_internal(e, "%s: return type '%s' cannot be forwarded", f->name, rt->spelling);
        }
        for (size_t i = 0; i < f->sig.nparams; i++)
            get_reply(&s, &f->sig.params[i], s.names[i], &f->sig.params[i].ann);
        put_after_reply(&s, success);
        if (f->cache) { /* the function's own answer, before a deferred error joins it */
            strbuf kb = {0};
            sb_printf(&kb, "ret_ == %s", success);
            for (size_t i = 0; i < f->ncache_errors; i++)
                sb_printf(&kb, " || ret_ == %s", f->cache_errors[i]);
            if (f->cache_keep_if) { /* what the answer must say to be kept */
                char *w = sb_take(&kb);
                sb_printf(&kb, "(%s) && (%s)", w, f->cache_keep_if->text);
                free(w);
            }
            char *keep = sb_take(&kb);
            PUT("stub_cache_keep", "cond", keep);
            free(keep);
        }
        if (f->async_repeats) PUT("stub_repeat_note", "success", success);
        put_tstate_after(&s, success);
        for (size_t i = 0; i < f->ncache_forget; i++)
            PUT("stub_cache_forget", "group", m->api.cache_groups[f->cache_forget[i]]);
        /* handle objects: the application's references, before a deferred error */
        for (size_t i = 0; hobj(e) && is_err && i < f->sig.nparams; i++) {
            const param_ann *a = &f->sig.params[i].ann;
            if (a->kind != PK_HANDLE || (!a->retains && !a->destroys)) continue;
            PUT("stub_href_if", "success", success, "name", s.names[i], "delta",
                a->retains ? "1" : "-1", "owned", "false");
        }
        if (f->last_error)
            PUT("stub_deferred_in_last_error");
        else if (is_err && m->api.async_errors_next_call && !f->keeps_deferred)
            PUT("stub_deferred", "success", success, "type", rtype);
        if (f->last_error)
            PUT("stub_lasterr_answered", "api", m->api.name, "success", success);
        else if (lasterr && is_err)
            PUT("stub_lasterr_after", "api", m->api.name, "success", success);
        else if (lasterr)
            PUT("stub_lasterr_forget", "api", m->api.name);
        PUT("stub_success_end");
    }
    e->o.indent = 0;
    if (s.used_bad) PUT("stub_label_bad");
    if (s.used_badargs) PUT("stub_label_badargs");
    if (s.used_nomem) PUT("stub_label_nomem");
    if (s.used_baddev) PUT("stub_label_baddev");
    if (s.used_bad || s.used_badargs || s.used_nomem || s.used_baddev || has_sync)
        PUT("stub_label_rejected");
    PUT("stub_label_fail");
    if (lasterr) PUT("stub_lasterr_fail", "api", m->api.name);
    if (is_err) PUT("stub_fail_ret", "type", rtype, "api", m->api.name);
    else if (f->on_failure) PUT("stub_fail_value", "type", rtype, "value", f->on_failure->text);
    if (f->error_out) {
        const char *eo = param_index_name(s.names, f, f->error_out);
        for (size_t i = 0; i < f->sig.nparams; i++) {
            const param_def *p = &f->sig.params[i];
            if (!p->name || strcmp(p->name, f->error_out) != 0 || !p->type->pointee) continue;
            char *et = c_type(p->type->pointee);
            PUT("stub_fail_error_out", "name", eo, "type", et, "api", m->api.name);
            free(et);
        }
    }
    /* trace */
    strbuf fmt = {0}, args = {0};
    sb_puts(&fmt, "");
    sb_puts(&args, "");
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_def *p = &f->sig.params[i];
        trace_arg(&fmt, &args, p->type, s.names[i], s.names[i], is_string_ann(&p->ann));
    }
    strbuf rfmt = {0};
    sb_puts(&rfmt, "");
    if (is_void) sb_puts(&rfmt, "void");
    else trace_arg(&rfmt, &args, f->sig.ret, NULL, "ret_", 0);
    char *fs = sb_take(&fmt), *as = sb_take(&args), *rs = sb_take(&rfmt);
    PUT(f->cache || answers || f->last_error ? "stub_done_cached" : "stub_done", "fn", f->name, "fmt", fs, "rfmt",
        rs, "args", as);
    free(fs);
    free(as);
    free(rs);
    PUT(is_void ? "stub_return_void" : "stub_return");
    free(success);
    free(rtype);
    free_names(s.names, f->sig.nparams);
}

static void emit_unsupported(emit_ctx *e, const function_def *f)
{
    char **names = param_names(f);
    char *pr = proto(f, f->name, names);
    PUT("stub_unsupported_open", "proto", pr);
    for (size_t i = 0; i < f->sig.nparams; i++) PUT("stub_unused", "name", names[i]);
    char *reason = c_string(f->reason ? f->reason : "no reason given");
    PUT("stub_unsupported_log", "fn", f->name, "reason", reason);
    const char *unsup = e->m->api.unsupported ? e->m->api.unsupported : "0";
    if (f->error_out) {
        const char *eo = param_index_name(names, f, f->error_out);
        if (eo) PUT("stub_unsupported_error_out", "name", eo, "value", unsup);
    }
    if (type_is_void(f->sig.ret)) {
        PUT("stub_return_void");
    } else if (returns_error(e, f)) {
        PUT("stub_unsupported_ret", "value", unsup);
    } else {
        char *d = c_decl(f->sig.ret, "ret_", 1);
        PUT("stub_unsupported_ret_zero", "decl", d);
        free(d);
    }
    free(reason);
    free(pr);
    free_names(names, f->sig.nparams);
}

static void emit_custom(emit_ctx *e, const function_def *f)
{
    char **names = param_names(f);
    char *pr = proto(f, f->name, names);
    strbuf args = {0};
    sb_puts(&args, "");
    for (size_t i = 0; i < f->sig.nparams; i++) sb_printf(&args, "%s%s", i ? ", " : "", names[i]);
    char *as = sb_take(&args);
    PUT(type_is_void(f->sig.ret) ? "stub_custom_void" : "stub_custom", "proto", pr, "guest",
        f->custom_guest, "args", as);
    free(as);
    free(pr);
    free_names(names, f->sig.nparams);
}

static void emit_dispatcher(emit_ctx *e, const cb_type *cb)
{
    const fn_sig *sig = cb->sig;
    PUT("stub_cbd_open", "name", cb->name);
    strbuf call = {0};
    sb_puts(&call, "");
    for (size_t i = 0; i < sig->nparams; i++) {
        char an[24];
        snprintf(an, sizeof an, "a%zu", i);
        if ((int)i == cb->user_data_index) continue;
        char *d = c_decl(sig->params[i].type, an, 1);
        PUT("stub_cbd_local", "decl", d);
        free(d);
    }
    for (size_t i = 0; i < sig->nparams; i++) {
        const type_info *t = sig->params[i].type;
        char an[24];
        snprintf(an, sizeof an, "a%zu", i);
        sb_printf(&call, "%s%s", i ? ", " : "", (int)i == cb->user_data_index ? "user_data" : an);
        if ((int)i == cb->user_data_index) continue;
        wire_scalar w;
        char *ty = c_type(t);
        if (handle_of_type(e->m, t)) {
            PUT(hobj(e) ? "stub_cbd_get_hid" : "stub_cbd_get_id", "arg", an, "type", ty);
        } else if (wire_scalar_of(t, &w)) {
            char *dec = wire_value_dec(&w, t, "v_");
            PUT("stub_cbd_get_value", "utype", w.utype, "get", w.get, "arg", an, "dec", dec);
            free(dec);
        } else if (t->kind == TY_RECORD) {
            PUT("stub_cbd_get_struct", "arg", an);
        } else if (t->kind == TY_POINTER && is_char_type(t->pointee)) {
            PUT("stub_cbd_get_string", "arg", an, "type", ty);
        } /* other pointers arrive as NULL */
        free(ty);
    }
    char *cs = sb_take(&call);
    char *ty = c_type(cb->type);
    PUT("stub_cbd_call", "type", ty, "args", cs);
    free(ty);
    free(cs);
}

int emit_stub(emit_ctx *e, strbuf *out)
{
    const api_model *m = e->m;
    emit_begin(e, out);
    PUT("stub_head", "api", m->api.name, "stamp", e->stamp, "spec", e->spec);
    if (hobj(e))
        PUT("stub_hobj_head", "define", m->api.hobj_define, "first", m->api.hobj_first);
    int any_custom = 0;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (f->mode != FN_CUSTOM || !f->custom_guest || strcmp(f->custom_guest, f->name) == 0)
            continue;
        if (!any_custom) PUT("stub_section", "what", "hand-written guest functions");
        any_custom = 1;
        char **names = param_names(f);
        char *pr = proto(f, f->custom_guest, names);
        PUT("stub_custom_decl", "proto", pr);
        free(pr);
        free_names(names, f->sig.nparams);
    }
    if (m->api.ordinals) PUT("stub_ordinals_decl", "api", m->api.name);
    /* handle states the guest tracks (types.handles.H.state) */
    for (size_t i = 0; i < m->nhandles; i++) {
        const handle_type_def *h = &m->handles[i];
        if (!h->nstates) continue;
        strbuf in = {0}, nm = {0};
        for (size_t k = 0; k < h->nstates; k++) {
            sb_printf(&in, "%s(int64_t)(%s)", k ? ", " : "", h->states[k].initial ? h->states[k].initial : "0");
            sb_printf(&nm, "%s%s", k ? ", " : "", h->states[k].name);
        }
        char n[24];
        snprintf(n, sizeof n, "%zu", h->nstates);
        char *ins = sb_take(&in), *nms = sb_take(&nm);
        PUT("stub_hstate_decl", "ht", h->name, "names", nms, "n", n, "init", ins);
        free(ins);
        free(nms);
    }
    /* the map functions of device parameters, once each */
    {
        const char **maps = NULL;
        size_t nmaps = 0;
        for (size_t i = 0; i < m->nfunctions; i++) {
            const function_def *f = &m->functions[i];
            if (!fn_has_call(f)) continue;
            for (size_t j = 0; j < f->sig.nparams; j++) {
                const param_ann *cand[3] = {&f->sig.params[j].ann, f->sig.params[j].ann.then_ann,
                                            f->sig.params[j].ann.else_ann};
                for (int k = 0; k < 3; k++) {
                    size_t q;
                    if (!cand[k] || !cand[k]->map_fn) continue;
                    for (q = 0; q < nmaps && strcmp(maps[q], cand[k]->map_fn) != 0; q++)
                        continue;
                    if (q < nmaps) continue;
                    maps = xrealloc(maps, (nmaps + 1) * sizeof *maps);
                    maps[nmaps++] = cand[k]->map_fn;
                    PUT("stub_map_decl", "map", cand[k]->map_fn);
                }
            }
        }
        free(maps);
    }
    /* the `reads:` functions, once each */
    {
        const char **fns = NULL;
        size_t nfns = 0;
        for (size_t i = 0; i < m->nfunctions; i++) {
            const function_def *f = &m->functions[i];
            if (!fn_has_call(f)) continue;
            for (size_t j = 0; j < f->sig.nparams; j++) {
                const char *r = f->sig.params[j].ann.reads_fn;
                size_t q;
                if (!r) continue;
                for (q = 0; q < nfns && strcmp(fns[q], r) != 0; q++)
                    continue;
                if (q < nfns) continue;
                fns = xrealloc(fns, (nfns + 1) * sizeof *fns);
                fns[nfns++] = r;
                PUT("stub_reads_decl", "fn", r);
            }
        }
        free(fns);
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        switch (f->mode) {
        case FN_LOCAL:
            continue;
        case FN_FORWARD:
            PUT("stub_blank");
            emit_forwarded(e, f);
            if (f->gather_count) emit_gather(e, f);
            if (f->gather_all || f->gather_first) emit_gather_all(e, f);
            break;
        case FN_UNSUPPORTED:
            PUT("stub_blank");
            emit_unsupported(e, f);
            break;
        case FN_CUSTOM:
            /* `custom: {guest: <its own name>}`: the spec's sources export it */
            if (f->custom_guest && strcmp(f->custom_guest, f->name) == 0) continue;
            PUT("stub_blank");
            if (f->custom_guest) emit_custom(e, f);
            else emit_forwarded(e, f);
            break;
        }
    }
    /* private symbols: signature unknown, so no argument is read */
    for (size_t i = 0; i < m->api.nprivate_symbols; i++) {
        PUT("stub_blank");
        const char *why = m->api.private_reasons ? m->api.private_reasons[i] : NULL;
        char *reason = c_string(why ? why : "a private entry point of the vendor's library "
                                            "(declared in no header)");
        PUT("stub_private", "fn", m->api.private_symbols[i], "rtype",
            m->api.error_type ? m->api.error_type : "int", "value",
            m->api.unsupported ? m->api.unsupported : "0", "reason", reason);
        free(reason);
    }
    /* callbacks */
    for (size_t c = 0; c < e->ncbs; c++) {
        PUT("stub_blank");
        emit_dispatcher(e, &e->cbs[c]);
    }
    char n[24];
    PUT("stub_blank");
    if (e->ncalls) {
        emit_call_names(e, "stub");
    }
    if (e->ncbs) {
        snprintf(n, sizeof n, "%zu", e->ncbs);
        PUT("stub_table_open", "type", "apigen_cb_dispatch_fn", "var", "cb_dispatch_", "n", n);
        for (size_t c = 0; c < e->ncbs; c++) {
            char *idx = xasprintf("%s_CB_TYPE_%s", e->API, e->cbs[c].name);
            char *val = xasprintf("cbd_%s", e->cbs[c].name);
            PUT("stub_table_entry", "index", idx, "value", val);
            free(idx);
            free(val);
        }
        PUT("stub_table_close");
    }
    PUT("stub_api_open", "api", m->api.name, "API", e->API, "call_names",
        e->ncalls ? "call_names_" : "NULL", "success", m->api.success ? m->api.success : "0");
    static const char *const st[] = {"APIGEN_OK",       "APIGEN_LOST",      "APIGEN_BAD_ARGS",
                                     "APIGEN_BAD_HANDLE", "APIGEN_TOO_LARGE", "APIGEN_BAD_CALL",
                                     "APIGEN_UNSUPPORTED", "APIGEN_NO_MEMORY", "APIGEN_BAD_DEVPTR"};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        char tmp[32];
        PUT("stub_api_status", "status", st[i], "value", status_error_value(e, st[i], tmp));
    }
    PUT("stub_api_close", "API", e->API, "cb_dispatch", e->ncbs ? "cb_dispatch_" : "NULL",
        "async_next", m->api.async_errors_next_call ? "true" : "false");
    if (m->api.version_macro) PUT("stub_api_version", "API", e->API);
    if (m->api.family) PUT("stub_api_family", "family", m->api.family);
    if (m->api.tstate_effects != TSTATE_EFFECTS_ANY)
        PUT("stub_api_tstate_effects", "effects",
            m->api.tstate_effects == TSTATE_EFFECTS_NONE ? "APIGEN_TSTATE_EFFECTS_NONE"
                                                         : "APIGEN_TSTATE_EFFECTS_DECLARED");
    if (m->api.tstate_lazy_mask) {
        char mask[16];
        snprintf(mask, sizeof mask, "%#x", m->api.tstate_lazy_mask);
        PUT("stub_api_tstate_lazy_open", "mask", mask);
        for (size_t i = 0; i < m->api.nthread_state; i++) {
            if (!(m->api.tstate_lazy_mask & (1u << i))) continue;
            char idx[24], val[32];
            snprintf(idx, sizeof idx, "%zu", i);
            snprintf(val, sizeof val, "%lld", (long long)m->api.tstate_lazy[i]);
            PUT("stub_api_tstate_lazy", "idx", idx, "value", val, "slot", m->api.thread_state[i]);
        }
        PUT("stub_api_tstate_lazy_close");
    }
    if (m->api.nthread_state) { /* an `exchange:` forgets the family's slots of its name */
        PUT("stub_api_tstate_names_open");
        for (size_t i = 0; i < m->api.nthread_state; i++)
            PUT("stub_api_tstate_name", "slot", m->api.thread_state[i]);
        PUT("stub_api_tstate_names_close");
    }
    PUT("stub_api_end", NULL);
    return e->o.failed || e->failed ? -1 : 0;
}
