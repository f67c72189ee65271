/* <api>_model.txt and `apigen --compare`.
 *
 * Snapshot lines, tab-separated, sorted as the model is (functions by name):
 *   api     NAME  VERSION_MACRO=N|-  soname=S  symbol_version=V
 *   fn      NAME  MODE  spec|default  HEADER:LINE  DECLARATION  CANONICAL  KINDS
 *   struct  NAME  size=N  align=N  FIELD@OFFSET:SIZE ...
 * DECLARATION is the prototype as the header spells it, CANONICAL the
 * canonical types with the parameter names (what a change is decided on),
 * KINDS how each parameter travels (name:kind[/elem]) and the function's
 * flags. Structs are those the functions reach through parameters, return
 * values and fields (anonymous members only as their parent's fields). Header paths are file names only, so a snapshot does
 * not depend on where the headers were found. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "?";
}

static void put_decl_type(strbuf *b, const char *spelling, const char *name)
{
    size_t n = strlen(spelling);
    sb_puts(b, spelling);
    if (name && *name) {
        if (!(n && spelling[n - 1] == '*')) sb_putc(b, ' ');
        sb_puts(b, name);
    }
}

static void put_sig(strbuf *b, const function_def *f, int canonical)
{
    put_decl_type(b, canonical ? f->sig.ret->canonical : f->sig.ret->spelling, NULL);
    sb_printf(b, " %s(", f->name);
    for (size_t i = 0; i < f->sig.nparams; i++) {
        const param_def *p = &f->sig.params[i];
        if (i) sb_puts(b, ", ");
        put_decl_type(b, canonical ? p->type->canonical : p->type->spelling, p->name);
    }
    if (f->sig.variadic) sb_puts(b, f->sig.nparams ? ", ..." : "...");
    else if (!f->sig.nparams) sb_puts(b, "void");
    sb_putc(b, ')');
}

static void put_kind(strbuf *b, const param_ann *a)
{
    sb_puts(b, param_kind_name(a->kind));
    if (a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT)
        sb_printf(b, "/%s", a->elem == EK_BYTES ? "bytes" : elem_kind_name(a->elem));
    if (a->count) sb_printf(b, "[%s%s]", a->count_is_bytes ? "bytes=" : "", a->count->text);
    if (a->kind == PK_COND && a->then_ann && a->else_ann) {
        sb_printf(b, "{%s?", a->cond ? a->cond->text : "");
        put_kind(b, a->then_ann);
        sb_putc(b, ':');
        put_kind(b, a->else_ann);
        sb_putc(b, '}');
    }
    if (a->nullable) sb_puts(b, ",nullable");
    if (a->creates) sb_puts(b, ",creates");
    if (a->guest_id) sb_puts(b, ",guest_id");
    if (a->destroys) sb_puts(b, ",destroys");
    for (size_t i = 0; i < a->nout_on_error; i++)
        sb_printf(b, ",out_on_error=%s", a->out_on_error[i]);
}

static void put_kinds(strbuf *b, const api_model *m, const function_def *f)
{
    for (size_t i = 0; i < f->sig.nparams; i++) {
        if (i) sb_putc(b, ' ');
        sb_printf(b, "%s:", f->sig.params[i].name);
        put_kind(b, &f->sig.params[i].ann);
    }
    if (f->async) sb_puts(b, " +async");
    if (f->async_if) sb_printf(b, " +async_if(%s)", f->async_if->text);
    if (f->async_check) sb_printf(b, " +async_check(%s)", f->async_check);
    if (f->async_vouch) sb_printf(b, " +async_vouch(%s)", f->async_vouch);
    if (f->async_unless) sb_printf(b, " +async_unless(%s)", f->async_unless);
    if (f->keeps_deferred) sb_puts(b, " +keeps_deferred");
    if (f->internal) sb_puts(b, " +internal");
    if (f->wrap_guest) sb_puts(b, " +wrap.guest");
    if (f->wrap_host) sb_printf(b, " +wrap.host(%s)", f->wrap_host);
    if (f->custom_guest) sb_printf(b, " +custom.guest(%s)", f->custom_guest);
    if (f->custom_host) sb_printf(b, " +custom.host(%s)", f->custom_host);
    if (f->ret_handle) sb_printf(b, " +returns(%s%s)", f->ret_handle, f->ret_creates ? ",creates" : "");
    if (f->undecided) sb_puts(b, " +undecided");
    if (f->privileged) sb_puts(b, " +privileged");
    if (f->gather_all) sb_puts(b, " +gather.all");
    if (f->gather_first) sb_puts(b, " +gather.first");
    for (size_t k = 0; k < f->nstate; k++) { /* api.thread_state slots by index */
        const state_entry *se = &f->state[k];
        sb_puts(b, " +state(");
        if (se->cond) sb_printf(b, "if %s;", se->cond->text);
        for (size_t j = 0; j < se->nset; j++)
            sb_printf(b, "set %d=%s%s;", se->set_slot[j], se->set_deref[j] ? "*" : "",
                      se->set_param[j]);
        for (size_t j = 0; j < se->nforget; j++) sb_printf(b, "forget %d;", se->forget[j]);
        if (se->forget_all) sb_puts(b, "forget_all;");
        if (se->answer_slot >= 0) sb_printf(b, "answer %d=%s;", se->answer_slot, se->answer_param);
        if (se->exchange_slot >= 0)
            sb_printf(b, "exchange %d=%s;", se->exchange_slot, se->exchange_param);
        sb_putc(b, ')');
    }
    if (f->cache) {
        sb_puts(b, " +cache");
        if (f->cache_if) sb_printf(b, "(if %s)", f->cache_if->text);
        for (size_t i = 0; i < f->ncache_errors; i++)
            sb_printf(b, "%s%s", i ? "," : "(errors ", f->cache_errors[i]);
        if (f->ncache_errors) sb_putc(b, ')');
        if (f->cache_keep_if) sb_printf(b, "(keep_if %s)", f->cache_keep_if->text);
        if (f->cache_group >= 0) sb_printf(b, "(group %s)", m->api.cache_groups[f->cache_group]);
        for (size_t i = 0; i < f->ncache_tstate; i++)
            sb_printf(b, "(thread_state %s)", m->api.thread_state[f->cache_tstate[i]]);
    }
    for (size_t i = 0; i < f->ncache_forget; i++)
        sb_printf(b, " +cache_forget(%s)", m->api.cache_groups[f->cache_forget[i]]);
}

/* ---- structs the functions reach ------------------------------------------------ */

typedef struct rec_set {
    strmap seen;
    const record_def **recs;
    size_t n;
} rec_set;

static void reach_type(rec_set *rs, const type_info *t, int depth)
{
    if (!t || depth > 32) return;
    switch (t->kind) {
    case TY_RECORD:
        if (t->record && t->record->complete && t->record->name &&
            !strmap_get(&rs->seen, t->record->name)) {
            strmap_put(&rs->seen, t->record->name, (void *)1);
            /* an anonymous member's record is named by its header location:
             * its layout shows as its parent's field (offset and size) */
            if (!strstr(t->record->name, "(unnamed") && !strstr(t->record->name, "(anonymous"))
                *VEC_PUSH(rs->recs, rs->n) = t->record;
            for (size_t i = 0; i < t->record->nfields; i++)
                reach_type(rs, t->record->fields[i].type, depth + 1);
        }
        return;
    case TY_POINTER:
    case TY_ARRAY:
        reach_type(rs, t->pointee, depth + 1);
        return;
    case TY_FNPTR:
    case TY_VOID:
    case TY_BOOL:
    case TY_SINT:
    case TY_UINT:
    case TY_FLOAT:
    case TY_ENUM:
    case TY_OTHER:
        return;
    }
}

static int rec_cmp(const void *a, const void *b)
{
    return strcmp((*(const record_def *const *)a)->name, (*(const record_def *const *)b)->name);
}

void model_snapshot(const api_model *m, strbuf *b)
{
    const api_settings *s = &m->api;
    sb_printf(b, "# apigen model of %s: one line per function and struct layout; read by "
                 "`apigen --compare`\n",
              s->name);
    sb_printf(b, "api\t%s\t", s->name);
    if (s->version_macro) sb_printf(b, "%s=%lld", s->version_macro, (long long)s->version);
    else sb_putc(b, '-');
    sb_printf(b, "\tsoname=%s\tsymbol_version=%s\n", s->soname ? s->soname : "-",
              s->symbol_version ? s->symbol_version : "-");
    rec_set rs = {0};
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        sb_printf(b, "fn\t%s\t%s\t%s\t%s:%u\t", f->name, fn_mode_name(f->mode),
                  f->ann_loc.file ? "spec" : "default", base_name(f->loc.file), f->loc.line);
        put_sig(b, f, 0);
        sb_putc(b, '\t');
        put_sig(b, f, 1);
        sb_putc(b, '\t');
        put_kinds(b, m, f);
        sb_putc(b, '\n');
        reach_type(&rs, f->sig.ret, 0);
        for (size_t k = 0; k < f->sig.nparams; k++) reach_type(&rs, f->sig.params[k].type, 0);
    }
    if (rs.n) qsort(rs.recs, rs.n, sizeof *rs.recs, rec_cmp);
    for (size_t i = 0; i < rs.n; i++) {
        const record_def *r = rs.recs[i];
        sb_printf(b, "struct\t%s\tsize=%llu\talign=%llu\t", r->name, (unsigned long long)r->size,
                  (unsigned long long)r->align);
        for (size_t k = 0; k < r->nfields; k++)
            sb_printf(b, "%s%s@%llu:%llu", k ? " " : "", r->fields[k].name ? r->fields[k].name : "",
                      (unsigned long long)r->fields[k].offset,
                      (unsigned long long)(r->fields[k].type ? r->fields[k].type->size : 0));
        sb_putc(b, '\n');
    }
    free(rs.recs);
    strmap_free(&rs.seen);
}

/* ---- reading a snapshot ---------------------------------------------------------- */

#define MAXF 8
typedef struct snap_line {
    char *f[MAXF]; /* fields (pointers into the buffer) */
    int nf;
} snap_line;

typedef struct snap {
    char *buf;
    snap_line *lines;
    size_t n;
    strmap fns, recs; /* name -> line index + 1 */
    snap_line *api;
} snap;

static int snap_parse(snap *sn, char *text)
{
    sn->buf = text;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (*line && *line != '#') {
            snap_line *L = VEC_PUSH(sn->lines, sn->n);
            for (char *p = line; p && L->nf < MAXF;) {
                L->f[L->nf++] = p;
                p = strchr(p, '\t');
                if (p) *p++ = 0;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    for (size_t i = 0; i < sn->n; i++) {
        snap_line *L = &sn->lines[i];
        if (strcmp(L->f[0], "fn") == 0 && L->nf >= 8) strmap_put(&sn->fns, L->f[1], (void *)(i + 1));
        else if (strcmp(L->f[0], "struct") == 0 && L->nf >= 5)
            strmap_put(&sn->recs, L->f[1], (void *)(i + 1));
        else if (strcmp(L->f[0], "api") == 0 && L->nf >= 5) sn->api = L;
        else return 0;
    }
    return sn->api != NULL;
}

static void snap_free(snap *sn)
{
    free(sn->buf);
    free(sn->lines);
    strmap_free(&sn->fns);
    strmap_free(&sn->recs);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    strbuf b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        for (size_t i = 0; i < n; i++) sb_putc(&b, chunk[i]);
    fclose(f);
    return sb_take(&b);
}

static snap_line *snap_get(const snap *sn, const strmap *map, const char *name)
{
    uintptr_t i = (uintptr_t)strmap_get(map, name);
    return i ? &sn->lines[i - 1] : NULL;
}

/* ---- the report ------------------------------------------------------------------ */

typedef struct section {
    const char *title;
    strbuf b;
    unsigned n;
} section;

static void item(section *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void item(section *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_puts(&s->b, "    ");
    sb_vprintf(&s->b, fmt, ap);
    sb_putc(&s->b, '\n');
    va_end(ap);
    s->n++;
}

/* "a@0:4 b@8:8" -> per-field differences */
static void struct_diff(strbuf *o, const char *was, const char *now)
{
    char *w = xstrdup(was), *n = xstrdup(now);
    strmap wm = {0}, nm = {0};
    char *save;
    for (char *t = strtok_r(w, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *at = strchr(t, '@');
        if (at) *at++ = 0;
        strmap_put(&wm, t, at ? at : "");
    }
    for (char *t = strtok_r(n, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *at = strchr(t, '@');
        if (at) *at++ = 0;
        strmap_put(&nm, t, at ? at : "");
        const char *old = strmap_get(&wm, t);
        if (!old) sb_printf(o, "; field '%s' added (@%s)", t, at ? at : "");
        else if (strcmp(old, at ? at : "") != 0)
            sb_printf(o, "; field '%s' @%s -> @%s", t, old, at ? at : "");
    }
    for (size_t i = 0; i < wm.cap; i++)
        if (wm.keys[i] && !strmap_get(&nm, wm.keys[i]))
            sb_printf(o, "; field '%s' removed (was @%s)", wm.keys[i], (const char *)wm.vals[i]);
    strmap_free(&wm);
    strmap_free(&nm);
    free(w);
    free(n);
}

int model_compare(const api_model *m, const char *prev_path, FILE *out, diag_sink *d, int verbose)
{
    snap prev = {0}, cur = {0};
    char *text = read_all(prev_path);
    if (!text) return -1;
    if (!snap_parse(&prev, text)) {
        fprintf(d->out ? d->out : stderr, "apigen: error: %s is not an apigen model snapshot\n",
                prev_path);
        snap_free(&prev);
        d->errors++;
        return 1;
    }
    strbuf cb = {0};
    model_snapshot(m, &cb);
    snap_parse(&cur, sb_take(&cb));
    unsigned e0 = d->errors;

    section sec[] = {
        {"added, generated by the defaults", {0}, 0},
        {"added, need an annotation (generated as unsupported until annotated)", {0}, 0},
        {"added, annotated in the spec", {0}, 0},
        {"removed", {0}, 0},
        {"declarations changed under an annotation (errors: check the annotation)", {0}, 0},
        {"declarations changed, decided by the defaults again", {0}, 0},
        {"annotations or modes changed", {0}, 0},
        {"struct layouts changed", {0}, 0},
        {"structs added", {0}, 0},
        {"structs removed", {0}, 0},
    };
    enum { ADD_DEF, ADD_NEED, ADD_SPEC, REMOVED, CHG_ANN, CHG_DEF, ANN, REC_CHG, REC_ADD, REC_DEL };

    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        snap_line *now = snap_get(&cur, &cur.fns, f->name);
        snap_line *was = snap_get(&prev, &prev.fns, f->name);
        if (!now) continue;
        if (!was) {
            if (f->undecided)
                item(&sec[ADD_NEED], "%s  %s: %s", f->name, now->f[4], f->undecided);
            else if (f->ann_loc.file)
                item(&sec[ADD_SPEC], "%s  %s (%s)", f->name, now->f[4], fn_mode_name(f->mode));
            else
                item(&sec[ADD_DEF], "%s  %s (%s)", f->name, now->f[4], fn_mode_name(f->mode));
            continue;
        }
        if (strcmp(was->f[6], now->f[6]) != 0) {
            if (f->ann_loc.file) {
                diag_error(d, f->ann_loc, f->name, NULL,
                           "the declaration changed under this annotation: was `%s` (%s in %s), "
                           "now `%s`; check the annotation",
                           was->f[5], was->f[4], prev_path, now->f[5]);
                diag_note(d, f->loc, "declared here");
                item(&sec[CHG_ANN], "%s  %s\n      was: %s\n      now: %s", f->name, now->f[4],
                     was->f[5], now->f[5]);
            } else {
                item(&sec[CHG_DEF], "%s  %s\n      was: %s\n      now: %s", f->name, now->f[4],
                     was->f[5], now->f[5]);
            }
            continue;
        }
        if (strcmp(was->f[2], now->f[2]) != 0 || strcmp(was->f[7], now->f[7]) != 0) {
            if (strcmp(was->f[2], now->f[2]) != 0)
                item(&sec[ANN], "%s: %s -> %s", f->name, was->f[2], now->f[2]);
            else
                item(&sec[ANN], "%s (%s)\n      was: %s\n      now: %s", f->name, now->f[2],
                     was->f[7], now->f[7]);
        }
    }
    for (size_t i = 0; i < prev.n; i++) {
        snap_line *L = &prev.lines[i];
        if (strcmp(L->f[0], "fn") != 0 || snap_get(&cur, &cur.fns, L->f[1])) continue;
        const char *note = "";
        char *tmp = NULL;
        for (size_t k = 0; k < m->nunmatched; k++)
            if (strcmp(m->unmatched[k], L->f[1]) == 0) {
                tmp = xasprintf("; its spec entry at %s:%u now matches nothing",
                                m->unmatched_locs[k].file ? m->unmatched_locs[k].file : "?",
                                m->unmatched_locs[k].line);
                note = tmp;
            }
        item(&sec[REMOVED], "%s  (was %s, %s%s)", L->f[1], L->f[4], L->f[2], note);
        free(tmp);
    }
    for (size_t i = 0; i < cur.n; i++) {
        snap_line *L = &cur.lines[i];
        if (strcmp(L->f[0], "struct") != 0) continue;
        snap_line *W = snap_get(&prev, &prev.recs, L->f[1]);
        if (!W) {
            item(&sec[REC_ADD], "%s  %s", L->f[1], L->f[2]);
            continue;
        }
        if (strcmp(W->f[2], L->f[2]) == 0 && strcmp(W->f[3], L->f[3]) == 0 &&
            strcmp(W->f[4], L->f[4]) == 0)
            continue;
        strbuf o = {0};
        if (strcmp(W->f[2], L->f[2]) != 0) sb_printf(&o, "; %s -> %s", W->f[2], L->f[2]);
        if (strcmp(W->f[3], L->f[3]) != 0) sb_printf(&o, "; %s -> %s", W->f[3], L->f[3]);
        struct_diff(&o, W->f[4], L->f[4]);
        item(&sec[REC_CHG], "%s%s", L->f[1], o.s ? o.s : "");
        sb_free(&o);
    }
    for (size_t i = 0; i < prev.n; i++) {
        snap_line *L = &prev.lines[i];
        if (strcmp(L->f[0], "struct") == 0 && !snap_get(&cur, &cur.recs, L->f[1]))
            item(&sec[REC_DEL], "%s", L->f[1]);
    }

    unsigned total = 0;
    for (size_t i = 0; i < sizeof sec / sizeof *sec; i++) total += sec[i].n;
    int api_changed = strcmp(prev.api->f[2], cur.api->f[2]) != 0 ||
                      strcmp(prev.api->f[3], cur.api->f[3]) != 0 ||
                      strcmp(prev.api->f[4], cur.api->f[4]) != 0;
    if (total || api_changed || verbose) {
        fprintf(out, "apigen: %s: changes against %s (%s -> %s)%s\n", m->api.name, prev_path,
                prev.api->f[2], cur.api->f[2], total || api_changed ? ":" : ": none");
        if (strcmp(prev.api->f[3], cur.api->f[3]) != 0)
            fprintf(out, "  library: %s -> %s\n", prev.api->f[3], cur.api->f[3]);
        if (strcmp(prev.api->f[4], cur.api->f[4]) != 0)
            fprintf(out, "  library: %s -> %s\n", prev.api->f[4], cur.api->f[4]);
        for (size_t i = 0; i < sizeof sec / sizeof *sec; i++)
            if (sec[i].n) fprintf(out, "  %s (%u):\n%s", sec[i].title, sec[i].n, sec[i].b.s);
    }
    for (size_t i = 0; i < sizeof sec / sizeof *sec; i++) sb_free(&sec[i].b);
    snap_free(&prev);
    snap_free(&cur);
    return (int)(d->errors - e0);
}
