/* The model fingerprint pinned by the handshake: FNV-1a 64 over a canonical
 * text of everything both sides must agree on. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util.h"

/* Writes a type spelling with the directories of "(unnamed at DIR/f.h:3:5)"
 * dropped: clang names anonymous records by where they are declared, and the
 * same header reached through another include path (a symlinked toolkit
 * directory) must give the same fingerprint. */
static void put_spelling(strbuf *b, const char *s)
{
    for (;;) {
        const char *open = strchr(s, '(');
        if (!open) break;
        const char *close = strchr(open, ')');
        const char *at = strstr(open, " at ");
        int located = (strncmp(open, "(unnamed", 8) == 0 || strncmp(open, "(anonymous", 10) == 0) &&
                      close && at && at < close;
        if (!located) {
            sb_printf(b, "%.*s", (int)(open + 1 - s), s);
            s = open + 1;
            continue;
        }
        const char *file = at + 4;
        for (const char *c = file; c < close; c++)
            if (*c == '/') file = c + 1;
        sb_printf(b, "%.*s at %.*s", (int)(at - s), s, (int)(close + 1 - file), file);
        s = close + 1;
    }
    sb_puts(b, s);
}

static void put_type(strbuf *b, const type_info *t, int depth)
{
    if (!t) {
        sb_puts(b, "-");
        return;
    }
    sb_printf(b, "%s/", type_kind_name(t->kind));
    put_spelling(b, t->canonical);
    sb_printf(b, "/%" PRIu64 "/%" PRIu64, t->size, t->align);
    if (t->kind == TY_RECORD && t->record && depth < 4) {
        sb_puts(b, "{");
        put_spelling(b, t->record->name);
        sb_printf(b, ":%" PRIu64, t->record->size);
        for (size_t i = 0; i < t->record->nfields; i++) {
            sb_printf(b, ";%s@%" PRIu64 ":", t->record->fields[i].name,
                      t->record->fields[i].offset);
            put_type(b, t->record->fields[i].type, depth + 1);
        }
        sb_putc(b, '}');
    }
    if ((t->kind == TY_POINTER || t->kind == TY_ARRAY) && depth < 4) {
        sb_printf(b, "[%" PRIu64 "]->", t->array_len);
        put_type(b, t->pointee, depth + 1);
    }
    if (t->kind == TY_FNPTR && t->fn && depth < 4) {
        sb_puts(b, "(");
        put_type(b, t->fn->ret, depth + 1);
        for (size_t i = 0; i < t->fn->nparams; i++) {
            sb_putc(b, ',');
            put_type(b, t->fn->params[i].type, depth + 1);
        }
        sb_puts(b, ")");
    }
}

static void put_cases(strbuf *b, const handle_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sb_printf(b, " %s:", c[i].handle_type ? c[i].handle_type : "-");
        for (size_t k = 0; k < c[i].nvalues; k++)
            sb_printf(b, "%s%s", k ? "," : "", c[i].values[k]);
    }
}

static void put_ann(strbuf *b, const param_ann *a)
{
    sb_printf(b, " %s", param_kind_name(a->kind));
    switch (a->kind) {
    case PK_IN:
    case PK_OUT:
    case PK_INOUT:
        sb_printf(b, " elem=%s count=%s%s after=%s null=%d term=%d:%" PRId64 ":%u",
                  elem_kind_name(a->elem), a->count ? a->count->text : "1",
                  a->count_is_bytes ? "B" : "", a->count_after ? a->count_after->text : "-",
                  a->nullable, a->terminated, a->terminator, a->term_stride);
        if (a->elem_type) sb_printf(b, " esize=%" PRIu64, a->elem_type->size);
        break;
    case PK_COND:
        sb_printf(b, " if(%s)", a->cond ? a->cond->text : "?");
        put_ann(b, a->then_ann);
        sb_puts(b, " else");
        put_ann(b, a->else_ann);
        break;
    case PK_CALLBACK:
        sb_printf(b, " ud=%s idx=%d once=%d", a->user_data_param ? a->user_data_param : "-",
                  a->cb_user_data_index, a->cb_once);
        if (a->cb_once_if) sb_printf(b, " once_if=%s", a->cb_once_if->text);
        break;
    default:
        break;
    }
    if (a->handle_type) sb_printf(b, " h=%s", a->handle_type);
    if (a->creates) sb_puts(b, " creates");
    if (a->destroys) sb_puts(b, " destroys");
    if (a->extent) sb_printf(b, " extent=%s", a->extent->text);
    /* what the two sides agree on beyond the encoding (each only when given,
     * so that specs without it keep their fingerprint): which reply bytes
     * and list values are handle ids, and the client's reference counts */
    if (a->retains) sb_puts(b, " retains");
    if (a->guest_id) sb_puts(b, " guest_id");
    /* a streamed out-buffer: the guest takes chunk frames ahead of the reply */
    if (a->stream_host && a->kind == PK_OUT) sb_puts(b, " stream");
    if (a->nelem_by) {
        sb_printf(b, " elem_by=%s", a->elem_by_param ? a->elem_by_param : "-");
        put_cases(b, a->elem_by, a->nelem_by);
    }
    if (a->nelem_by_types || a->nelem_by_device) {
        sb_printf(b, " elem_by_types=%s", a->elem_by_param ? a->elem_by_param : "-");
        put_cases(b, a->elem_by_types, a->nelem_by_types);
        for (size_t i = 0; i < a->nelem_by_device; i++) sb_printf(b, " dev=%s", a->elem_by_device[i]);
    }
    if (a->nhandle_keys) {
        sb_puts(b, " handle_keys");
        put_cases(b, a->handle_keys, a->nhandle_keys);
    }
}

uint64_t model_fingerprint(const api_model *m)
{
    strbuf b = {0};
    const api_settings *s = &m->api;
    sb_printf(&b, "api %s err=%s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
                  " %" PRId64 " next=%d\n",
              s->name ? s->name : "", s->error_type ? s->error_type : "", s->success_v,
              s->unsupported_v, s->connection_lost_v, s->invalid_handle_v, s->invalid_value_v,
              s->out_of_memory_v, s->async_errors_next_call);
    if (s->last_error_get || s->last_error_peek)
        sb_printf(&b, "last_error get=%s peek=%s\n", s->last_error_get ? s->last_error_get : "-",
                  s->last_error_peek ? s->last_error_peek : "-");
    /* only when the spec names a version macro, so other specs keep theirs */
    if (s->version_macro) sb_printf(&b, "version %s=%" PRId64 "\n", s->version_macro, s->version);
    if (s->error_ty) {
        put_type(&b, s->error_ty, 0);
        sb_putc(&b, '\n');
    }
    if (s->device_checked)
        sb_printf(&b, "device destroy=%s\n", s->device_destroy ? s->device_destroy : "-");
    for (size_t i = 0; i < m->nsizes; i++) { /* what size_of(p) reads: a buffer's extent */
        sb_printf(&b, "sizes %s", m->sizes[i].type);
        for (size_t k = 0; k < m->sizes[i].nentries; k++)
            sb_printf(&b, " %s=%llu", m->sizes[i].entries[k].value,
                      (unsigned long long)m->sizes[i].entries[k].bytes);
        sb_putc(&b, '\n');
    }
    for (size_t i = 0; i < m->nhandles; i++) {
        sb_printf(&b, "handle %u %s ", m->handles[i].tag, m->handles[i].name);
        put_spelling(&b, m->handles[i].type ? m->handles[i].type->canonical : "");
        sb_printf(&b, " destroy=%s pass=", m->handles[i].destroy_fn ? m->handles[i].destroy_fn : "-");
        for (size_t k = 0; k < m->handles[i].npassthrough; k++)
            sb_printf(&b, "%" PRId64 ",", m->handles[i].passthrough[k]);
        if (m->handles[i].unknown_as_null) sb_puts(&b, " unknown_as_null");
        for (size_t k = 0; k < m->handles[i].nstates; k++) /* the getter the server asks */
            sb_printf(&b, " state=%s:%s", m->handles[i].states[k].name,
                      m->handles[i].states[k].get_fn ? m->handles[i].states[k].get_fn : "-");
        sb_putc(&b, '\n');
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        sb_printf(&b, "fn %s %s id=%d async=%d if=%s eo=%s ret=", f->name, fn_mode_name(f->mode),
                  f->call_id, f->async, f->async_if ? f->async_if->text : "-",
                  f->error_out ? f->error_out : "-");
        put_type(&b, f->sig.ret, 0);
        sb_printf(&b, " rh=%s:%d var=%d", f->ret_handle ? f->ret_handle : "-", f->ret_creates,
                  f->sig.variadic);
        /* state values the call carries ahead of its arguments (`space:`) */
        for (size_t k = 0; k < f->nstate_uses; k++)
            sb_printf(&b, " state=%zu:%u", f->state_uses[k].param, f->state_uses[k].slot);
        sb_putc(&b, '\n');
        for (size_t k = 0; k < f->sig.nparams; k++) {
            const param_def *p = &f->sig.params[k];
            sb_printf(&b, "  p %s ", p->name);
            put_type(&b, p->type, 0);
            put_ann(&b, &p->ann);
            sb_putc(&b, '\n');
        }
    }
    uint64_t h = fnv1a64(FNV1A64_INIT, b.s ? b.s : "", b.len);
    sb_free(&b);
    return h;
}
