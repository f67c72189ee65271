/* <api>_wire.h: ABI pin, fingerprint, call ids, callback type ids and
 * layout asserts for every plain struct copied by value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_util.h"

typedef struct rec_list {
    const record_def **r;
    size_t n;
} rec_list;

static void add_record(rec_list *l, const record_def *r);

static void add_type(rec_list *l, const type_info *t)
{
    while (t && t->kind == TY_ARRAY) t = t->pointee;
    if (t && t->kind == TY_RECORD && t->record) add_record(l, t->record);
}

static void add_record(rec_list *l, const record_def *r)
{
    if (!r->complete || r->has_pointers) return;
    /* an unnamed record nested in another ("struct X::(unnamed at f.h:3:5)")
     * has no C spelling; its enclosing record's asserts cover its place */
    if (!r->name || strchr(r->name, '(') || strchr(r->name, ':')) return;
    for (size_t i = 0; i < l->n; i++)
        if (l->r[i] == r) return;
    *VEC_PUSH(l->r, l->n) = r;
    for (size_t i = 0; i < r->nfields; i++) add_type(l, r->fields[i].type);
}

static void add_ann(rec_list *l, const param_def *p, const param_ann *a)
{
    if (!a) return;
    switch (a->kind) {
    case PK_STRUCT:
        add_type(l, p->type);
        break;
    case PK_IN:
    case PK_OUT:
    case PK_INOUT:
        if (a->elem == EK_BYTES) add_type(l, a->elem_type);
        break;
    case PK_COND:
        add_ann(l, p, a->then_ann);
        add_ann(l, p, a->else_ann);
        break;
    case PK_VALUE:
    case PK_HANDLE:
    case PK_DEVPTR:
    case PK_STRING:
    case PK_CALLBACK:
    case PK_USERDATA:
    case PK_IGNORE:
        break;
    }
}

static int cmp_rec(const void *a, const void *b)
{
    return strcmp((*(const record_def *const *)a)->name, (*(const record_def *const *)b)->name);
}

int emit_wire(emit_ctx *e, strbuf *out)
{
    const api_model *m = e->m;
    char buf[64];
    emit_begin(e, out);
    tmpl_put(&e->o, "wire_head", "api", m->api.name, "API", e->API, "stamp", e->stamp, "spec",
             e->spec, NULL);
    /* the spec's defines, as apigen parsed the headers with them */
    for (size_t i = 0; i < m->api.ndefines; i++) {
        const char *d = m->api.defines[i];
        const char *eq = strchr(d, '=');
        size_t nl = eq ? (size_t)(eq - d) : strlen(d);
        char *name = xasprintf("%.*s", (int)nl, d);
        if (!is_c_identifier(name) || (eq && strpbrk(eq + 1, "\n\r"))) {
            emit_internal(e, "define '%s' is not NAME or NAME=VALUE", d);
            free(name);
            continue;
        }
        tmpl_put(&e->o, "wire_define", "name", name, "value", eq ? eq + 1 : "1", NULL);
        free(name);
    }
    for (size_t i = 0; i < m->api.nheaders; i++) {
        char *h = c_string(m->api.headers[i]);
        tmpl_put(&e->o, "wire_include", "header", h, NULL);
        free(h);
    }
    snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)m->fingerprint);
    tmpl_put(&e->o, "wire_pins", "api", m->api.name, "API", e->API, NULL);
    if (m->api.version_macro) {
        char ver[32];
        snprintf(ver, sizeof ver, "%lld", (long long)m->api.version);
        tmpl_put(&e->o, "wire_api_version", "api", m->api.name, "API", e->API, "macro",
                 m->api.version_macro, "version", ver, NULL);
    }
    tmpl_put(&e->o, "wire_fingerprint", "API", e->API, "fingerprint", buf, NULL);
    rec_list recs = {0};
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        if (!fn_has_call(f)) continue;
        char id[16];
        snprintf(id, sizeof id, "%d", f->call_id);
        tmpl_put(&e->o, "wire_call", "API", e->API, "fn", f->name, "id", id, NULL);
        if (f->mode != FN_FORWARD) continue;
        add_type(&recs, f->sig.ret);
        for (size_t k = 0; k < f->sig.nparams; k++)
            add_ann(&recs, &f->sig.params[k], &f->sig.params[k].ann);
    }
    snprintf(buf, sizeof buf, "%u", e->ncalls);
    tmpl_put(&e->o, "wire_calls_end", "API", e->API, "n", buf, NULL);
    for (size_t c = 0; c < e->ncbs; c++) {
        char id[16];
        snprintf(id, sizeof id, "%u", e->cbs[c].id);
        tmpl_put(&e->o, "wire_cb", "API", e->API, "name", e->cbs[c].name, "id", id, NULL);
        for (size_t k = 0; k < e->cbs[c].sig->nparams; k++)
            add_type(&recs, e->cbs[c].sig->params[k].type);
    }
    snprintf(buf, sizeof buf, "%zu", e->ncbs);
    tmpl_put(&e->o, "wire_cbs_end", "API", e->API, "n", buf, NULL);
    if (m->nprocs) {
        tmpl_put(&e->o, "wire_proc_head", "API", e->API, "header", m->api.proc_header, NULL);
        for (size_t i = 0; i < m->nprocs; i++) {
            const proc_entry *p = &m->procs[i];
            char ver[24], var[16];
            snprintf(ver, sizeof ver, "%ld", p->version);
            snprintf(var, sizeof var, "%u", p->suffix);
            tmpl_put(&e->o, "wire_proc_entry", "name", p->name, "version", ver, "variant", var,
                     "fn", p->symbol, "typedef", p->typedef_name, NULL);
        }
        tmpl_put(&e->o, "wire_proc_tail", "API", e->API, NULL);
    }
    if (m->api.error_names) {
        tmpl_put(&e->o, "wire_names_head", "API", e->API, NULL);
        for (size_t i = 0; i < m->api.error_names->nconsts; i++)
            tmpl_put(&e->o, "wire_names_entry", "name", m->api.error_names->consts[i].name, NULL);
        tmpl_put(&e->o, "wire_names_tail", "API", e->API, NULL);
    }
    for (size_t i = 0; i < m->nsizes; i++) {
        const size_table *t = &m->sizes[i];
        tmpl_put(&e->o, "wire_size_head", "api", m->api.name, "type", t->type, NULL);
        for (size_t k = 0; k < t->nentries; k++) {
            char bytes[24];
            snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)t->entries[k].bytes);
            tmpl_put(&e->o, "wire_size_entry", "value", t->entries[k].value, "bytes", bytes, NULL);
        }
        tmpl_put(&e->o, "wire_size_tail", NULL);
    }
    tmpl_put(&e->o, "wire_pins_layout", NULL);
    if (recs.n) qsort(recs.r, recs.n, sizeof *recs.r, cmp_rec);
    for (size_t i = 0; i < recs.n; i++) {
        const record_def *r = recs.r[i];
        char *ts = c_string(r->name);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->size);
        tmpl_put(&e->o, "wire_assert_size", "API", e->API, "type", r->name, "type_str", ts, "size",
                 buf, NULL);
        for (size_t k = 0; k < r->nfields; k++) {
            const field_def *fd = &r->fields[k];
            if (!fd->name || !*fd->name || !is_c_identifier(fd->name)) continue;
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)fd->offset);
            tmpl_put(&e->o, "wire_assert_offset", "API", e->API, "type", r->name, "type_str", ts,
                     "field", fd->name, "offset", buf, NULL);
        }
        free(ts);
    }
    free(recs.r);
    tmpl_put(&e->o, "wire_tail", "api", m->api.name, NULL);
    return e->o.failed || e->failed ? -1 : 0;
}
