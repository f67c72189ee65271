/* <api>_coverage.md: counts per mode and one row per function with its
 * mode, header file:line (relative to the spec's folder) and notes. */
#define _DEFAULT_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "emit_util.h"

/* Path of `file` relative to directory `dir`, both resolved when they exist;
 * stays relative so the report is the same in every checkout. */
static char *rel_path(const char *dir, const char *file)
{
    char rd[PATH_MAX], rf[PATH_MAX];
    if (!realpath(dir, rd) || !realpath(file, rf)) {
        const char *slash = strrchr(file, '/');
        return xstrdup(file[0] == '/' ? (slash ? slash + 1 : file) : file);
    }
    size_t common = 0, i = 0;
    for (;; i++) {
        if (rd[i] == 0 && (rf[i] == '/' || rf[i] == 0)) {
            common = i;
            break;
        }
        if (rd[i] != rf[i]) break;
        if (rd[i] == '/') common = i;
    }
    strbuf b = {0};
    sb_puts(&b, "");
    /* one ".." per remaining component of dir after `common` */
    if (rd[common]) {
        sb_puts(&b, "..");
        for (const char *p = rd + common + 1; *p; p++)
            if (*p == '/') sb_puts(&b, "/..");
        if (strcmp(rd, "/") == 0) b.len = 0, b.s[0] = 0;
    }
    const char *rest = rf + common;
    if (*rest == '/') rest++;
    /* a header far outside the spec's tree (a toolkit under /usr/local):
     * its file name only, so that the report does not depend on where the
     * toolkit is installed */
    if (b.len >= 8 && strncmp(b.s, "../../..", 8) == 0) {
        const char *slash = strrchr(rf, '/');
        sb_free(&b);
        return xstrdup(slash ? slash + 1 : rf);
    }
    if (b.len) sb_putc(&b, '/');
    sb_puts(&b, rest);
    return sb_take(&b);
}

int emit_coverage(emit_ctx *e, strbuf *out)
{
    const api_model *m = e->m;
    emit_begin(e, out);
    char *spec = md_cell(m->spec_path ? m->spec_path : "?");
    tmpl_put(&e->o, "cov_head", "api", m->api.name, "stamp", e->stamp, "spec", spec, NULL);
    free(spec);
    size_t counts[4] = {0};
    size_t ninternal = 0, nexported = 0;
    for (size_t i = 0; i < m->nfunctions; i++) {
        if (m->functions[i].internal) {
            ninternal++;
            continue;
        }
        counts[m->functions[i].mode]++;
        nexported++;
    }
    static const fn_mode modes[] = {FN_FORWARD, FN_LOCAL, FN_CUSTOM, FN_UNSUPPORTED};
    static const char *const mode_names[] = {"forwarded", "local", "custom", "unsupported"};
    char n[32];
    for (size_t k = 0; k < 4; k++) {
        snprintf(n, sizeof n, "%zu", counts[modes[k]]);
        tmpl_put(&e->o, "cov_count", "mode", mode_names[k], "n", n, NULL);
    }
    snprintf(n, sizeof n, "%zu", nexported);
    /* every function that works (no `unsupported`), counted together and
     * said so: custom ones make round trips of their own */
    size_t handled = counts[FN_FORWARD] + counts[FN_LOCAL] + counts[FN_CUSTOM];
    char nh[32], pct[32];
    snprintf(nh, sizeof nh, "%zu", handled);
    snprintf(pct, sizeof pct, "%.1f%%", nexported ? 100.0 * (double)handled / (double)nexported : 0.0);
    if (ninternal) {
        char ni[32];
        snprintf(ni, sizeof ni, "%zu", ninternal);
        tmpl_put(&e->o, "cov_table_internal", "n", n, "ni", ni, "handled", nh, "pct", pct, NULL);
    } else {
        tmpl_put(&e->o, "cov_table", "n", n, "handled", nh, "pct", pct, NULL);
    }
    size_t nlimits = 0;
    for (size_t i = 0; i < m->nfunctions; i++)
        nlimits += !m->functions[i].internal && m->functions[i].limits &&
                   m->functions[i].mode != FN_UNSUPPORTED;
    if (nlimits) {
        char nl[32];
        snprintf(nl, sizeof nl, "%zu", nlimits);
        tmpl_put(&e->o, "cov_limits", "nl", nl, NULL);
    }
    tmpl_put(&e->o, "cov_rows_head", NULL);
    char *dir = path_dirname(m->spec_path ? m->spec_path : ".");
    for (size_t i = 0; i < m->nfunctions; i++) {
        const function_def *f = &m->functions[i];
        char *where;
        if (f->loc.file) {
            char *r = rel_path(dir, f->loc.file);
            where = xasprintf("%s:%u", r, f->loc.line);
            free(r);
        } else {
            where = xstrdup("?");
        }
        strbuf notes = {0};
        sb_puts(&notes, "");
        switch (f->mode) {
        case FN_FORWARD:
            if (f->internal) sb_puts(&notes, "internal (not exported); ");
            if (f->wrap_guest) sb_puts(&notes, "guest wrapper in the spec's sources; ");
            if (f->wrap_host) sb_printf(&notes, "host wrapper %s; ", f->wrap_host);
            if (f->async) sb_puts(&notes, "async");
            if (f->async_if) sb_printf(&notes, "async if `%s`", f->async_if->text);
            if (f->async_check)
                sb_printf(&notes, " when %s passes its arguments (else synchronous)",
                          f->async_check);
            if (f->async_repeats)
                sb_puts(&notes, " once a synchronous call with the same values succeeded");
            if (f->async_unless)
                sb_printf(&notes, " unless %s says it goes synchronously", f->async_unless);
            if (f->async_vouch)
                sb_printf(&notes, " (%s vouches for the arguments the library checks: the last "
                          "error stays known)", f->async_vouch);
            if (f->async && !f->async_check && !f->async_repeats) /* async_if: its condition */
                sb_puts(&notes, " (unchecked: the library may refuse it after it was queued)");
            if (f->keeps_deferred) sb_puts(&notes, "reports no earlier async call's error; ");
            if (f->privileged)
                sb_printf(&notes, "privileged (--%s): %s; ", e->m->api.priv_option, f->privileged);
            break;
        case FN_LOCAL:
            sb_puts(&notes, "in the spec's sources");
            break;
        case FN_CUSTOM:
            if (!f->custom_host)
                sb_printf(&notes, "guest code over other calls, no handler of its own: %s",
                          strcmp(f->custom_guest, f->name) == 0 ? "in the spec's sources"
                                                                : f->custom_guest);
            else
                sb_printf(&notes, "guest: %s; host: %s",
                          f->custom_guest ? f->custom_guest : "generated", f->custom_host);
            break;
        case FN_UNSUPPORTED:
            sb_puts(&notes, f->reason ? f->reason : "");
            break;
        }
        while (notes.len >= 2 && notes.s[notes.len - 2] == ';' && notes.s[notes.len - 1] == ' ')
            notes.s[notes.len -= 2] = 0;
        if (f->variant_of) sb_printf(&notes, "%svariant of `%s`", notes.len ? "; " : "", f->variant_of);
        if (f->limits && f->mode != FN_UNSUPPORTED)
            sb_printf(&notes, "%s**limits:** %s", notes.len ? "; " : "", f->limits);
        while (notes.len >= 2 && notes.s[notes.len - 2] == ';' && notes.s[notes.len - 1] == ' ')
            notes.s[notes.len -= 2] = 0;
        char *ns = sb_take(&notes);
        char *cell = md_cell(ns);
        char *wc = md_cell(where);
        tmpl_put(&e->o, "cov_row", "fn", f->name, "mode", fn_mode_name(f->mode), "where", wc,
                 "notes", cell, NULL);
        free(ns);
        free(cell);
        free(wc);
        free(where);
    }
    free(dir);
    if (m->api.nprivate_symbols) {
        tmpl_put(&e->o, "cov_private_head", NULL);
        for (size_t i = 0; i < m->api.nprivate_symbols; i++) {
            const char *why = m->api.private_reasons ? m->api.private_reasons[i] : NULL;
            if (why) {
                char *cell = md_cell(why);
                tmpl_put(&e->o, "cov_private_why", "name", m->api.private_symbols[i], "why", cell,
                         NULL);
                free(cell);
            } else {
                tmpl_put(&e->o, "cov_extra", "name", m->api.private_symbols[i], NULL);
            }
        }
    }
    if (m->api.nextra_symbols) {
        tmpl_put(&e->o, "cov_extra_head", NULL);
        for (size_t i = 0; i < m->api.nextra_symbols; i++)
            tmpl_put(&e->o, "cov_extra", "name", m->api.extra_symbols[i], NULL);
    }
    return e->o.failed || e->failed ? -1 : 0;
}
