#include "emit_util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifndef APIGEN_VERSION
#define APIGEN_VERSION "0.0.0"
#endif

void emit_internal(emit_ctx *e, const char *fmt, ...)
{
    va_list ap;
    fputs("apigen: internal error: ", e->err);
    va_start(ap, fmt);
    vfprintf(e->err, fmt, ap);
    va_end(ap);
    fputc('\n', e->err);
    e->failed = 1;
}

static const type_info *fnptr_sig_type(const type_info *t)
{
    while (t && t->kind == TY_POINTER && !t->fn) t = t->pointee;
    return t;
}

static int cmp_cb(const void *a, const void *b)
{
    return strcmp(((const cb_type *)a)->name, ((const cb_type *)b)->name);
}

static char *cb_name_of(const function_def *f, const param_def *p, size_t i)
{
    char tmp[24];
    if (p->type->typedef_name && is_c_identifier(p->type->typedef_name))
        return xstrdup(p->type->typedef_name);
    return xasprintf("%s_%s", f->name, pname(p, i, tmp));
}

int emit_ctx_init(emit_ctx *e, const api_model *m, const apigen_options *opt, FILE *err)
{
    memset(e, 0, sizeof *e);
    e->m = m;
    e->opt = opt;
    e->err = err ? err : stderr;
    if (tmpl_set_load(&e->ts, e->err)) return -1;
    e->o.ts = &e->ts;
    e->o.err = e->err;
    if (!m->api.name || !is_c_identifier(m->api.name)) {
        emit_internal(e, "api name is not a C identifier");
        return -1;
    }
    e->API = xstrdup(m->api.name);
    for (char *p = e->API; *p; p++) *p = (char)toupper((unsigned char)*p);
    e->stamp = xstrdup("apigen " APIGEN_VERSION);
    e->spec = c_comment(m->spec_path ? m->spec_path : (opt && opt->spec_path ? opt->spec_path : "?"));
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (!fn_has_call(f)) continue;
        if (f->call_id < 0) {
            emit_internal(e, "%s: negative call id", f->name);
            continue;
        }
        if ((uint32_t)f->call_id + 1 > e->ncalls) e->ncalls = (uint32_t)f->call_id + 1;
        for (size_t j = 0; j < m->nfunctions; j++)
            if (j != i && fn_has_call(&m->functions[j]) &&
                m->functions[j].call_id == f->call_id)
                emit_internal(e, "%s and %s share call id %d", f->name, m->functions[j].name,
                              f->call_id);
        if (f->mode != FN_FORWARD) continue;
        for (size_t k = 0; k < f->sig.nparams; k++) {
            const param_def *p = &f->sig.params[k];
            if (p->ann.kind != PK_CALLBACK) continue;
            char *name = cb_name_of(f, p, k);
            int dup = 0;
            for (size_t c = 0; c < e->ncbs; c++)
                if (strcmp(e->cbs[c].name, name) == 0) dup = 1;
            if (dup) {
                free(name);
                continue;
            }
            const type_info *ft = fnptr_sig_type(p->type);
            if (!ft || !ft->fn) {
                emit_internal(e, "%s: parameter '%s': callback without a function type", f->name,
                              p->name);
                free(name);
                continue;
            }
            cb_type *cb = VEC_PUSH(e->cbs, e->ncbs);
            cb->name = name;
            cb->type = p->type;
            cb->sig = ft->fn;
            cb->user_data_index = p->ann.cb_user_data_index;
        }
    }
    if (e->ncbs) qsort(e->cbs, e->ncbs, sizeof *e->cbs, cmp_cb);
    for (size_t c = 0; c < e->ncbs; c++) e->cbs[c].id = (unsigned)c;
    return e->failed ? -1 : 0;
}

void emit_ctx_free(emit_ctx *e)
{
    tmpl_set_free(&e->ts);
    for (size_t c = 0; c < e->ncbs; c++) free(e->cbs[c].name);
    free(e->cbs);
    free(e->API);
    free(e->stamp);
    free(e->spec);
    memset(e, 0, sizeof *e);
}

void emit_begin(emit_ctx *e, strbuf *sb)
{
    sb->len = 0;
    if (sb->s) sb->s[0] = 0;
    e->o.sb = sb;
    e->o.indent = 0;
    e->o.failed = 0;
}

const cb_type *find_cb(const emit_ctx *e, const function_def *f, const param_def *p)
{
    size_t idx = (size_t)(p - f->sig.params);
    char *name = cb_name_of(f, p, idx);
    const cb_type *r = NULL;
    for (size_t c = 0; c < e->ncbs; c++)
        if (strcmp(e->cbs[c].name, name) == 0) r = &e->cbs[c];
    free(name);
    return r;
}

const char *pname(const param_def *p, size_t i, char tmp[24])
{
    /* the handler's call context is `cx`: a parameter of that name (a library's
     * RNN cell state) is renamed in generated code */
    if (p->name && strcmp(p->name, "cx") == 0) return "cx_arg_";
    if (p->name && *p->name) return p->name;
    snprintf(tmp, 24, "a%zu", i);
    return tmp;
}

static char *strip_top_const(const type_info *t)
{
    const char *s = t->spelling ? t->spelling : "int";
    if (t->is_const && t->kind != TY_ARRAY) { /* an array's const is its elements' */
        size_t l = strlen(s);
        /* a const pointer: "T * const" or clang's "const char *const"; its
         * leading const is the pointee's (a typedef name has no '*') */
        if (t->kind == TY_POINTER && strchr(s, '*')) {
            if (l > 5 && strcmp(s + l - 5, "const") == 0 && (s[l - 6] == ' ' || s[l - 6] == '*')) {
                size_t k = l - 5;
                while (k && s[k - 1] == ' ') k--;
                return xstrndup(s, k);
            }
            return xstrdup(s);
        }
        if (strncmp(s, "const ", 6) == 0) return xstrdup(s + 6);
    }
    return xstrdup(s);
}

char *c_decl(const type_info *t, const char *name, int drop_const)
{
    char *s = drop_const ? strip_top_const(t) : xstrdup(t->spelling ? t->spelling : "int");
    char *r;
    char *fp = strstr(s, "(*");
    char *br = strchr(s, '[');
    if (drop_const && br && strcmp(br, "[]") == 0 && !fp) {
        /* an unsized array parameter is a pointer: a local of it cannot be one */
        size_t l = (size_t)(br - s);
        while (l && s[l - 1] == ' ') l--;
        r = xasprintf("%.*s *%s", (int)l, s, name);
        free(s);
        return r;
    }
    if (fp) {
        r = xasprintf("%.*s%s%s", (int)(fp - s + 2), s, name, fp + 2);
    } else if (br) {
        size_t l = (size_t)(br - s);
        while (l && s[l - 1] == ' ') l--;
        r = xasprintf("%.*s %s%s", (int)l, s, name, br);
    } else if (*s && s[strlen(s) - 1] == '*') {
        r = xasprintf("%s%s", s, name);
    } else {
        r = xasprintf("%s%s%s", s, *name ? " " : "", name);
    }
    free(s);
    return r;
}

char *c_type(const type_info *t)
{
    char *s = strip_top_const(t);
    size_t n = strlen(s);
    if (n >= 2 && strcmp(s + n - 2, "[]") == 0 && !strstr(s, "(*")) {
        /* an unsized array parameter's type is the pointer it decays to */
        while (n > 2 && s[n - 3] == ' ') n--;
        char *r = xasprintf("%.*s *", (int)(n - 2), s);
        free(s);
        return r;
    }
    return s;
}

int type_is_void(const type_info *t)
{
    return !t || t->kind == TY_VOID;
}

char *c_sizeof(const type_info *t)
{
    if (type_is_void(t)) return xstrdup("1");
    char *ty = c_type(t);
    char *r = xasprintf("sizeof(%s)", ty);
    free(ty);
    return r;
}

int type_is_signed(const type_info *t)
{
    if (t->kind == TY_SINT) return 1;
    if (t->kind == TY_ENUM) {
        if (t->enm && t->enm->underlying) return t->enm->underlying->kind == TY_SINT;
        return 1;
    }
    return 0;
}

int is_char_type(const type_info *t)
{
    return t && (t->kind == TY_SINT || t->kind == TY_UINT) && t->size == 1;
}

int wire_scalar_of(const type_info *t, wire_scalar *w)
{
    static const wire_scalar u[] = {
        {"apigen_put_u8", "apigen_get_u8", "uint8_t", "int8_t", 8},
        {"apigen_put_u16", "apigen_get_u16", "uint16_t", "int16_t", 16},
        {"apigen_put_u32", "apigen_get_u32", "uint32_t", "int32_t", 32},
        {"apigen_put_u64", "apigen_get_u64", "uint64_t", "int64_t", 64},
    };
    static const wire_scalar f32 = {"apigen_put_f32", "apigen_get_f32", "float", NULL, 32};
    static const wire_scalar f64 = {"apigen_put_f64", "apigen_get_f64", "double", NULL, 64};
    switch (t->kind) {
    case TY_BOOL:
    case TY_SINT:
    case TY_UINT:
    case TY_ENUM: {
        int i = t->size == 1 ? 0 : t->size == 2 ? 1 : t->size == 4 ? 2 : t->size == 8 ? 3 : -1;
        if (i < 0) return 0;
        *w = u[i];
        if (!type_is_signed(t)) w->stype = NULL;
        return 1;
    }
    case TY_FLOAT:
        if (t->size == 4) *w = f32;
        else if (t->size == 8) *w = f64;
        else return 0;
        return 1;
    case TY_VOID:
    case TY_RECORD:
    case TY_POINTER:
    case TY_FNPTR:
    case TY_ARRAY:
    case TY_OTHER:
        return 0;
    }
    return 0;
}

char *wire_value_enc(const wire_scalar *w, const char *expr)
{
    return xasprintf("(%s)%s", w->utype, expr);
}

char *wire_value_dec(const wire_scalar *w, const type_info *t, const char *var)
{
    char *ty = c_type(t);
    char *r = w->stype ? xasprintf("(%s)(%s)%s", ty, w->stype, var) : xasprintf("(%s)%s", ty, var);
    free(ty);
    return r;
}

int returns_error(const emit_ctx *e, const function_def *f)
{
    const char *et = e->m->api.error_type;
    const type_info *r = f->sig.ret;
    if (!et || type_is_void(r)) return 0;
    if (r->typedef_name && strcmp(r->typedef_name, et) == 0) return 1;
    if (r->spelling && strcmp(r->spelling, et) == 0) return 1;
    if (r->canonical && strcmp(r->canonical, et) == 0) return 1;
    return 0;
}

const handle_type_def *find_handle(const api_model *m, const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < m->nhandles; i++)
        if (strcmp(m->handles[i].name, name) == 0) return &m->handles[i];
    return NULL;
}

const handle_type_def *handle_of_type(const api_model *m, const type_info *t)
{
    const handle_type_def *h = find_handle(m, t->typedef_name);
    if (!h && t->spelling) {
        const char *s = t->spelling;
        if (strncmp(s, "const ", 6) == 0) s += 6;
        h = find_handle(m, s);
    }
    /* callback signatures come canonical: "struct ctx_st *" */
    for (size_t i = 0; !h && t->canonical && i < m->nhandles; i++)
        if (m->handles[i].type && m->handles[i].type->canonical &&
            strcmp(m->handles[i].type->canonical, t->canonical) == 0)
            h = &m->handles[i];
    return h;
}

const char *status_error_value(const emit_ctx *e, const char *status, char tmp[32])
{
    const api_settings *a = &e->m->api;
    const char *v = NULL;
    int64_t n = a->connection_lost_v;
    if (strcmp(status, "APIGEN_OK") == 0) v = a->success, n = a->success_v;
    else if (strcmp(status, "APIGEN_LOST") == 0) v = a->connection_lost, n = a->connection_lost_v;
    else if (strcmp(status, "APIGEN_BAD_ARGS") == 0 || strcmp(status, "APIGEN_BAD_DEVPTR") == 0)
        v = a->invalid_value, n = a->invalid_value_v;
    else if (strcmp(status, "APIGEN_BAD_HANDLE") == 0)
        v = a->invalid_handle ? a->invalid_handle : a->invalid_value,
        n = a->invalid_handle ? a->invalid_handle_v : a->invalid_value_v;
    else if (strcmp(status, "APIGEN_TOO_LARGE") == 0 || strcmp(status, "APIGEN_NO_MEMORY") == 0)
        v = a->out_of_memory ? a->out_of_memory : a->invalid_value,
        n = a->out_of_memory ? a->out_of_memory_v : a->invalid_value_v;
    else if (strcmp(status, "APIGEN_BAD_CALL") == 0 || strcmp(status, "APIGEN_UNSUPPORTED") == 0)
        v = a->unsupported, n = a->unsupported_v;
    if (v && *v) return v;
    snprintf(tmp, 32, "%lld", (long long)n);
    return tmp;
}

char *cb_once_text(const param_ann *a)
{
    if (a->cb_once_if) return xasprintf("((%s) != 0)", a->cb_once_if->text);
    return xstrdup(a->cb_once ? "true" : "false");
}

void emit_call_names(emit_ctx *e, const char *side)
{
    char open[32], entry[32], close[32], n[24];
    snprintf(open, sizeof open, "%s_table_open", side);
    snprintf(entry, sizeof entry, "%s_table_entry", side);
    snprintf(close, sizeof close, "%s_table_close", side);
    snprintf(n, sizeof n, "%u", e->ncalls);
    tmpl_put(&e->o, open, "type", "char *const", "var", "call_names_", "n", n, NULL);
    for (size_t i = 0; i < e->m->nfunctions; i++) {
        const function_def *f = &e->m->functions[i];
        if (!fn_has_call(f)) continue;
        char *idx = xasprintf("%s_CALL_%s", e->API, f->name);
        char *val = xasprintf("\"%s\"", f->name);
        tmpl_put(&e->o, entry, "index", idx, "value", val, NULL);
        free(idx);
        free(val);
    }
    tmpl_put(&e->o, close, NULL);
}
