#include "check.h"

#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "suggest.h"

/* "did you mean" candidates (suggest.c): any selected function, a function's
 * parameters, the headers' typedefs. */
static const char *any_fn_cand(void *ctx, size_t i)
{
    return ((const api_model *)ctx)->functions[i].name;
}

static const char *param_cand(void *ctx, size_t i)
{
    return ((const function_def *)ctx)->sig.params[i].name;
}

static const char *typedef_cand(void *ctx, size_t i)
{
    return ((const api_model *)ctx)->typedefs[i].name;
}

static const char *handle_cand(void *ctx, size_t i)
{
    return ((const api_model *)ctx)->handles[i].name;
}

/* "; did you mean 'X'?" or "" (a static buffer: use it before the next call). */
static const char *did_you_mean(const char *near)
{
    static char buf[300];
    if (!near) return "";
    snprintf(buf, sizeof buf, "; did you mean '%s'?", near);
    return buf;
}
#include "util.h"

static const char *const top_keys[] = {"api", "types", "defaults", "functions", NULL};
static const char *const defaults_keys[] = {"pointers", "params", NULL};
static const char *const state_keys[] = {"initial", "set", "get", NULL};
static const char *const state_fn_keys[] = {"function", "param", NULL};
static const char *const space_keys[] = {"state", "host", "device", NULL};
static const char *const api_keys[] = {"name",    "headers",      "helper_headers", "include_dirs", "defines",
                                       "clang_args", "select",    "library",      "errors",
                                       "sources", "extra_symbols", "variants", "isolation",
                                       "handle_objects", "version_macro", "ordinals", "privileged",
                                       "private_symbols", "proc_table", "forward_output", "family",
                                       "thread_state", "thread_state_effects", "thread_state_lazy",
                                       "cache_groups", NULL};
/* read before the headers are parsed: `when:` cannot choose them */
static const char *const api_early_keys[] = {"name",       "headers", "helper_headers", "include_dirs", "defines",
                                             "clang_args", "select",  "variants",     "proc_table",
                                             NULL};
static const char *const variants_keys[] = {"defines", "suffixes", NULL};
static const char *const proc_table_keys[] = {"header", "typedef", NULL};
static const char *const select_keys[] = {"prefix", "regex", "exclude", NULL};
static const char *const header_item_keys[] = {"name", "optional", NULL};
static const char *const library_keys[] = {"soname", "symbol_version", "symbol_versions", NULL};
static const char *const errors_keys[] = {"type",           "success",       "unsupported",
                                          "connection_lost", "invalid_handle", "invalid_value",
                                          "out_of_memory",  "async",         "missing",
                                          "names",          "last_error",    NULL};
static const char *const last_error_keys[] = {"get", "peek", NULL};
static const char *const types_keys[] = {"handles", "bytes", "device", "versioned", "sizes", NULL};
static const char *const versioned_keys[] = {"member", NULL};
static const char *const device_keys[] = {"destroy", NULL};
static const char *const privileged_keys[] = {"option", "error", NULL};
static const char *const hobj_keys[] = {"define", "first", NULL};
static const char *const dev_creates_keys[] = {"bytes", NULL};
static const char *const handle_keys[] = {"destroy", "passthrough", "unknown_as_null", "also", "state", "contents", NULL};
static const char *const fn_keys[] = {"params", "async",     "async_if", "local", "custom",
                                      "unsupported", "error_out", "returns", "wrap", "internal",
                                      "gather", "selects", "privileged", "limits", "cache", "cache_forget", "contents", "thread_state",
                                      "async_check", "async_vouch", "async_unless", "async_repeats", "keeps_deferred", "on_failure", NULL};
static const char *const custom_keys[] = {"guest", "host", NULL};
static const char *const wrap_keys[] = {"guest", "host", NULL};
static const char *const elem_by_keys[] = {"param", "handles", "types", "device", NULL};
static const char *const reads_keys[] = {"guest", "handle", NULL};
static const char *const returns_keys[] = {"handle", "creates", NULL};
static const char *const param_keys[] = {"dir",        "count",    "bytes",   "count_after",
                                         "nullable",   "string",   "terminated", "elem",
                                         "handle",     "device",   "creates", "destroys",
                                         "callback",   "ignore",   "if",      "then",
                                         "else",       "retains",  "elem_by", "handle_keys",
                                         "map",        "checked", "stream", "ordinal", "out_on_error", "space", "reads", NULL};
static const char *const branch_keys[] = {"dir",      "count",      "bytes",  "count_after",
                                          "nullable", "string",     "terminated", "elem",
                                          "handle",   "device",     "ignore", "map",
                                          "stream", NULL};
static const char *const callback_keys[] = {"user_data", "arg", "once", NULL};
static const char *const terminated_keys[] = {"value", "stride", NULL};
static const char *const stream_keys[] = {"host", "chunk", "min", NULL};

static char *xasprintf_arena(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- api settings ------------------------------------------------------------- */

static char *dup_str(api_model *m, const spec_node *n, const char *what, diag_sink *d)
{
    const char *s;
    if (!n) return NULL;
    if (!spec_string(n, what, d, NULL, NULL, &s)) return NULL;
    return arena_strdup(m->arena, s);
}

/* api.headers: names, or {name: H, optional: true} for a header that some
 * versions of the API lack (parsed when found; its absence is no error) */
static void api_headers(api_model *m, const spec_node *h, diag_sink *d)
{
    api_settings *s = &m->api;
    s->headers = NULL;
    s->header_optional = NULL;
    s->nheaders = 0;
    if (!h || h->kind != SN_LIST) {
        spec_string_list(h, "api.headers", d, m->arena, &s->headers, &s->nheaders);
        if (s->nheaders) {
            s->header_optional = arena_alloc(m->arena, s->nheaders);
            memset(s->header_optional, 0, s->nheaders);
        }
        return;
    }
    s->headers = arena_alloc(m->arena, (h->n ? h->n : 1) * sizeof(char *));
    s->header_optional = arena_alloc(m->arena, h->n ? h->n : 1);
    for (size_t i = 0; i < h->n; i++) {
        const spec_node *it = h->items[i];
        if (it->kind == SN_SCALAR) {
            s->header_optional[s->nheaders] = 0;
            s->headers[s->nheaders++] = arena_strdup(m->arena, it->str);
            continue;
        }
        /* a `when:` here is reported as such (api_early_keys) */
        if (spec_find_conditional(it)) continue;
        if (it->kind != SN_MAP) {
            diag_error(d, it->loc, NULL, NULL,
                       "api.headers: each item is a header's name or {name: H, optional: true}");
            continue;
        }
        spec_check_keys(it, header_item_keys, "api.headers item", d, NULL, NULL);
        const spec_node *nm = spec_get(it, "name"), *op = spec_get(it, "optional");
        int optional = 0;
        if (op && !spec_bool(op, "api.headers item: optional", d, NULL, NULL, &optional)) continue;
        if (!nm || nm->kind != SN_SCALAR) {
            diag_error(d, it->loc, NULL, NULL,
                       "api.headers item: `name:` (the header's file name) is missing");
            continue;
        }
        s->header_optional[s->nheaders] = (unsigned char)optional;
        s->headers[s->nheaders++] = arena_strdup(m->arena, nm->str);
    }
}

int check_api_settings(api_model *m, const spec_node *root, diag_sink *d, src_loc **header_locs,
                       src_loc *api_loc)
{
    unsigned e0 = d->errors;
    api_settings *s = &m->api;
    *header_locs = NULL;
    spec_check_keys(root, top_keys, "the spec", d, NULL, NULL);
    const spec_node *api = spec_get(root, "api");
    *api_loc = root->loc;
    if (!api) {
        diag_error(d, root->loc, NULL, NULL, "the spec has no `api:` section (name, headers)");
        return 1;
    }
    *api_loc = spec_key_loc(root, "api");
    if (!spec_want_map(api, "api", d, NULL, NULL)) return 1;
    spec_check_keys(api, api_keys, "api", d, NULL, NULL);
    s->name = dup_str(m, spec_get(api, "name"), "api.name", d);
    if (!s->name) {
        if (!spec_get(api, "name"))
            diag_error(d, *api_loc, NULL, NULL, "api.name is missing (a C identifier)");
    } else if (!is_c_identifier(s->name)) {
        diag_error(d, spec_get(api, "name")->loc, NULL, NULL,
                   "api.name '%s' is not a C identifier", s->name);
    }
    const spec_node *h = spec_get(api, "headers");
    if (!h) diag_error(d, *api_loc, NULL, NULL, "api.headers is missing: list the headers to parse");
    api_headers(m, h, d);
    s->napi_headers = s->nheaders;
    /* api.helper_headers: the spec's own, parsed after the API's features are
     * known (they may include <api>_features.h); taken like the headers */
    const spec_node *hh = spec_get(api, "helper_headers");
    char **helpers = NULL;
    size_t nhelpers = 0;
    spec_string_list(hh, "api.helper_headers", d, m->arena, &helpers, &nhelpers);
    if (nhelpers) {
        char **all = arena_alloc(m->arena, (s->nheaders + nhelpers) * sizeof *all);
        if (s->nheaders) memcpy(all, s->headers, s->nheaders * sizeof *all);
        memcpy(all + s->nheaders, helpers, nhelpers * sizeof *all);
        s->headers = all;
        unsigned char *opt = arena_alloc(m->arena, s->nheaders + nhelpers);
        memset(opt, 0, s->nheaders + nhelpers);
        if (s->nheaders) memcpy(opt, s->header_optional, s->nheaders);
        s->header_optional = opt;
        s->nheaders += nhelpers;
    }
    if (s->nheaders) {
        *header_locs = xcalloc(s->nheaders, sizeof(src_loc));
        size_t k = 0;
        const spec_node *lists[2] = {h, hh};
        for (int li = 0; li < 2; li++) {
            const spec_node *l = lists[li];
            if (!l) continue;
            if (l->kind == SN_LIST)
                for (size_t i = 0; i < l->n && k < s->nheaders; i++)
                    if (l->items[i]->kind == SN_SCALAR || l->items[i]->kind == SN_MAP)
                        (*header_locs)[k++] = l->items[i]->loc;
            if (l->kind == SN_SCALAR && k < s->nheaders) (*header_locs)[k++] = l->loc;
        }
    }
    spec_string_list(spec_get(api, "include_dirs"), "api.include_dirs", d, m->arena,
                     &s->include_dirs, &s->ninclude_dirs);
    spec_string_list(spec_get(api, "defines"), "api.defines", d, m->arena, &s->defines,
                     &s->ndefines);
    spec_string_list(spec_get(api, "clang_args"), "api.clang_args", d, m->arena, &s->clang_args,
                     &s->nclang_args);
    const spec_node *sel = spec_get(api, "select");
    if (sel && spec_want_map(sel, "api.select", d, NULL, NULL)) {
        spec_check_keys(sel, select_keys, "api.select", d, NULL, NULL);
        spec_string_list(spec_get(sel, "prefix"), "api.select.prefix", d, m->arena,
                         &s->select_prefix, &s->nselect_prefix);
        s->select_regex = dup_str(m, spec_get(sel, "regex"), "api.select.regex", d);
        if (s->select_regex) {
            regex_t re;
            int rc = regcomp(&re, s->select_regex, REG_EXTENDED | REG_NOSUB);
            if (rc != 0) {
                char buf[200];
                regerror(rc, &re, buf, sizeof buf);
                diag_error(d, spec_get(sel, "regex")->loc, NULL, NULL,
                           "api.select.regex is not a POSIX extended regex: %s", buf);
            } else {
                regfree(&re);
            }
        }
        spec_string_list(spec_get(sel, "exclude"), "api.select.exclude", d, m->arena,
                         &s->exclude, &s->nexclude);
    }
    const spec_node *vn = spec_get(api, "variants");
    if (vn && spec_want_map(vn, "api.variants", d, NULL, NULL)) {
        spec_check_keys(vn, variants_keys, "api.variants", d, NULL, NULL);
        spec_string_list(spec_get(vn, "defines"), "api.variants.defines", d, m->arena,
                         &s->variant_defines, &s->nvariant_defines);
        spec_string_list(spec_get(vn, "suffixes"), "api.variants.suffixes", d, m->arena,
                         &s->variant_suffixes, &s->nvariant_suffixes);
        if (!s->nvariant_suffixes)
            diag_error(d, vn->loc, NULL, NULL, "api.variants needs `suffixes:` (and `defines:`)");
        for (size_t i = 0; i < s->nvariant_suffixes; i++)
            if (!s->variant_suffixes[i][0] || !is_c_identifier(s->variant_suffixes[i]))
                diag_error(d, spec_key_loc(vn, "suffixes"), NULL, NULL,
                           "api.variants.suffixes: '%s' is not an identifier suffix",
                           s->variant_suffixes[i]);
    }
    const spec_node *pt = spec_get(api, "proc_table");
    if (pt && spec_want_map(pt, "api.proc_table", d, NULL, NULL)) {
        spec_check_keys(pt, proc_table_keys, "api.proc_table", d, NULL, NULL);
        s->proc_loc = spec_key_loc(api, "proc_table");
        s->proc_header = dup_str(m, spec_get(pt, "header"), "api.proc_table.header", d);
        s->proc_pattern = dup_str(m, spec_get(pt, "typedef"), "api.proc_table.typedef", d);
        const char *pn = s->proc_pattern ? strstr(s->proc_pattern, "{name}") : NULL;
        const char *pv = s->proc_pattern ? strstr(s->proc_pattern, "{version}") : NULL;
        if (!s->proc_header || !s->proc_pattern)
            diag_error(d, pt->loc, NULL, NULL,
                       "api.proc_table needs `header:` (the header of function-pointer typedefs) "
                       "and `typedef:` (their names, e.g. \"PFN_{name}_v{version}\")");
        else if (!pn || !pv || pv < pn + 6 || strcmp(pv, "{version}") != 0 ||
                 strstr(pn + 1, "{name}"))
            diag_error(d, spec_get(pt, "typedef")->loc, NULL, NULL,
                       "api.proc_table.typedef '%s' must hold {name} once, then {version} at its "
                       "end (a variant suffix may follow the version in the typedefs' names)",
                       s->proc_pattern);
    }
    for (int i = 0; api_early_keys[i]; i++) {
        const spec_node *w = spec_find_conditional(spec_get(api, api_early_keys[i]));
        if (w)
            diag_error(d, w->loc, NULL, NULL,
                       "api.%s is read before the headers are parsed, so a `when:` condition "
                       "(decided by the headers' macros) cannot choose it",
                       api_early_keys[i]);
    }
    return d->errors > e0;
}

/* api.private_symbols: names, or groups {names: [...], unsupported: REASON}
 * whose reason the stub logs (the default: a private entry point). */
static void read_private_symbols(const spec_node *n, diag_sink *d, arena *a, api_settings *s)
{
    static const char *const group_keys[] = {"names", "unsupported", NULL};
    if (!n || n->kind == SN_NULL) return;
    if (n->kind != SN_LIST) {
        spec_string_list(n, "api.private_symbols", d, a, &s->private_symbols,
                         &s->nprivate_symbols);
        return;
    }
    size_t cap = 0;
    for (size_t i = 0; i < n->n; i++) {
        const spec_node *g = spec_get(n->items[i], "names");
        cap += n->items[i]->kind == SN_MAP ? (g && g->kind == SN_LIST ? g->n : 1) : 1;
    }
    s->private_symbols = arena_alloc(a, (cap ? cap : 1) * sizeof(char *));
    s->private_reasons = arena_alloc(a, (cap ? cap : 1) * sizeof(char *));
    for (size_t i = 0; i < n->n; i++) {
        const spec_node *it = n->items[i];
        if (it->kind == SN_SCALAR) {
            s->private_symbols[s->nprivate_symbols++] = arena_strdup(a, it->str);
            continue;
        }
        if (it->kind != SN_MAP) {
            diag_error(d, it->loc, NULL, NULL,
                       "api.private_symbols: each item is a name or a map "
                       "{names: [...], unsupported: \"why\"}");
            continue;
        }
        spec_check_keys(it, group_keys, "an api.private_symbols group", d, NULL, NULL);
        const char *why = NULL;
        const spec_node *u = spec_get(it, "unsupported");
        char **names = NULL;
        size_t nn = 0;
        if (!u || !spec_string(u, "api.private_symbols group's unsupported", d, NULL, NULL, &why)) {
            if (!u)
                diag_error(d, it->loc, NULL, NULL,
                           "api.private_symbols: a group needs unsupported: \"why\" (the reason "
                           "its names log), or list the names without a group");
            continue;
        }
        if (!spec_get(it, "names")) {
            diag_error(d, it->loc, NULL, NULL, "api.private_symbols: a group needs names: [...]");
            continue;
        }
        spec_string_list(spec_get(it, "names"), "api.private_symbols group's names", d, a, &names,
                         &nn);
        for (size_t k = 0; k < nn && s->nprivate_symbols < cap; k++) {
            s->private_reasons[s->nprivate_symbols] = arena_strdup(a, why);
            s->private_symbols[s->nprivate_symbols++] = names[k];
        }
    }
}

/* The api settings that may depend on the headers' version (`when:`), read
 * after the headers are parsed and the conditions resolved. */
static void check_api_late(api_model *m, const spec_node *root, diag_sink *d)
{
    api_settings *s = &m->api;
    const spec_node *api = spec_get(root, "api");
    src_loc *api_loc = &(src_loc){0};
    *api_loc = spec_key_loc(root, "api");
    const spec_node *lib = spec_get(api, "library");
    if (lib && spec_want_map(lib, "api.library", d, NULL, NULL)) {
        spec_check_keys(lib, library_keys, "api.library", d, NULL, NULL);
        s->soname = dup_str(m, spec_get(lib, "soname"), "api.library.soname", d);
        s->symbol_version =
            dup_str(m, spec_get(lib, "symbol_version"), "api.library.symbol_version", d);
    }
    const spec_node *er = spec_get(api, "errors");
    s->async_errors_next_call = 1;
    if (!er) {
        diag_error(d, *api_loc, NULL, NULL,
                   "api.errors is missing: give at least type, success, unsupported and "
                   "connection_lost");
    } else if (spec_want_map(er, "api.errors", d, NULL, NULL)) {
        spec_check_keys(er, errors_keys, "api.errors", d, NULL, NULL);
        s->error_type = dup_str(m, spec_get(er, "type"), "api.errors.type", d);
        s->success = dup_str(m, spec_get(er, "success"), "api.errors.success", d);
        s->unsupported = dup_str(m, spec_get(er, "unsupported"), "api.errors.unsupported", d);
        s->connection_lost =
            dup_str(m, spec_get(er, "connection_lost"), "api.errors.connection_lost", d);
        s->invalid_handle =
            dup_str(m, spec_get(er, "invalid_handle"), "api.errors.invalid_handle", d);
        s->invalid_value = dup_str(m, spec_get(er, "invalid_value"), "api.errors.invalid_value", d);
        s->out_of_memory = dup_str(m, spec_get(er, "out_of_memory"), "api.errors.out_of_memory", d);
        s->missing = dup_str(m, spec_get(er, "missing"), "api.errors.missing", d);
        static const char *const need[] = {"type", "success", "unsupported", "connection_lost",
                                           NULL};
        for (int i = 0; need[i]; i++)
            if (!spec_get(er, need[i]))
                diag_error(d, spec_key_loc(api, "errors"), NULL, NULL, "api.errors.%s is missing",
                           need[i]);
        const spec_node *as = spec_get(er, "async");
        if (as) {
            const char *v;
            if (spec_string(as, "api.errors.async", d, NULL, NULL, &v)) {
                if (strcmp(v, "next_call") == 0) s->async_errors_next_call = 1;
                else if (strcmp(v, "none") == 0) s->async_errors_next_call = 0;
                else
                    diag_error(d, as->loc, NULL, NULL,
                               "api.errors.async must be next_call or none, not '%s'", v);
            }
        }
        const spec_node *le = spec_get(er, "last_error");
        if (le && spec_want_map(le, "api.errors.last_error", d, NULL, NULL)) {
            spec_check_keys(le, last_error_keys, "api.errors.last_error", d, NULL, NULL);
            s->last_error_loc = spec_key_loc(er, "last_error");
            s->last_error_get = dup_str(m, spec_get(le, "get"), "api.errors.last_error.get", d);
            s->last_error_peek = dup_str(m, spec_get(le, "peek"), "api.errors.last_error.peek", d);
            if (!s->last_error_get && !s->last_error_peek)
                diag_error(d, le->loc, NULL, NULL,
                           "api.errors.last_error names no function: give get:, peek: or both");
        }
    }
    /* api.family: the stubs of one family share one session (docs/spec.md) */
    const spec_node *fam = spec_get(api, "family");
    if (fam) {
        const char *v;
        if (spec_string(fam, "api.family", d, NULL, NULL, &v)) {
            if (!is_c_identifier(v))
                diag_error(d, fam->loc, NULL, NULL,
                           "api.family: '%s' is not an identifier; name the family the API "
                           "shares a session with, the same in every member's spec",
                           v);
            else
                s->family = arena_strdup(m->arena, v);
        }
    }
    const spec_node *iso = spec_get(api, "isolation");
    if (iso) {
        const char *v;
        if (spec_string(iso, "api.isolation", d, NULL, NULL, &v)) {
            if (strcmp(v, "process") == 0) s->isolate_process = 1;
            else if (strcmp(v, "thread") != 0)
                diag_error(d, iso->loc, NULL, NULL,
                           "api.isolation must be thread or process, not '%s'", v);
        }
    }
    /* the session process's stdout goes to the client (device printf): only
     * a process per session can tell one client's output from another's */
    const spec_node *fo = spec_get(api, "forward_output");
    if (fo && spec_bool(fo, "api.forward_output", d, NULL, NULL, &s->forward_output) &&
        s->forward_output && !s->isolate_process)
        diag_error(d, fo->loc, NULL, NULL,
                   "api.forward_output needs api.isolation: process (with threads, every session "
                   "shares the server's stdout and no output could be given to its client): set "
                   "isolation: process or leave forward_output out");
    const spec_node *pv = spec_get(api, "privileged");
    if (pv && spec_want_map(pv, "api.privileged", d, NULL, NULL)) {
        spec_check_keys(pv, privileged_keys, "api.privileged", d, NULL, NULL);
        s->priv_loc = pv->loc;
        s->priv_option = dup_str(m, spec_get(pv, "option"), "api.privileged.option", d);
        s->priv_error = dup_str(m, spec_get(pv, "error"), "api.privileged.error", d);
        const char *o = s->priv_option;
        int ok = o && *o && o[0] != '-';
        for (const char *q = o; ok && *q; q++)
            ok = (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-';
        if (!ok || !s->priv_error)
            diag_error(d, pv->loc, NULL, NULL,
                       "api.privileged needs option: (the server flag without \"--\": lower case "
                       "letters, digits and '-', e.g. allow-gpu-admin) and error: (the value a "
                       "privileged function returns when the server was not started with it)");
    }
    const spec_node *ho = spec_get(api, "handle_objects");
    if (ho && spec_want_map(ho, "api.handle_objects", d, NULL, NULL)) {
        spec_check_keys(ho, hobj_keys, "api.handle_objects", d, NULL, NULL);
        s->hobj_define = dup_str(m, spec_get(ho, "define"), "api.handle_objects.define", d);
        s->hobj_first = dup_str(m, spec_get(ho, "first"), "api.handle_objects.first", d);
        if (!s->hobj_define || !is_c_identifier(s->hobj_define) || !s->hobj_first ||
            !is_c_identifier(s->hobj_first))
            diag_error(d, ho->loc, NULL, NULL,
                       "api.handle_objects needs define: and first:, both C identifiers");
    }
    spec_string_list(spec_get(api, "sources"), "api.sources", d, m->arena, &s->sources,
                     &s->nsources);
    spec_string_list(spec_get(api, "extra_symbols"), "api.extra_symbols", d, m->arena,
                     &s->extra_symbols, &s->nextra_symbols);
    for (size_t i = 0; i < s->nextra_symbols; i++)
        if (!is_c_identifier(s->extra_symbols[i]))
            diag_error(d,
                       spec_item_loc(spec_get(api, "extra_symbols"), s->extra_symbols[i],
                                     spec_key_loc(api, "extra_symbols")),
                       NULL, NULL, "api.extra_symbols: '%s' is not a C identifier",
                       s->extra_symbols[i]);
    read_private_symbols(spec_get(api, "private_symbols"), d, m->arena, s);
    for (size_t i = 0; i < s->nprivate_symbols; i++) {
        const char *ps = s->private_symbols[i];
        src_loc at = spec_item_loc(spec_get(api, "private_symbols"), ps,
                                   spec_key_loc(api, "private_symbols"));
        int dup = 0;
        for (size_t k = 0; k < s->nextra_symbols; k++) dup |= strcmp(ps, s->extra_symbols[k]) == 0;
        if (!is_c_identifier(ps))
            diag_error(d, at, NULL, NULL, "api.private_symbols: '%s' is not a C identifier", ps);
        else if (model_find_function(m, ps))
            diag_error(d, at, ps, NULL,
                       "api.private_symbols: '%s' is declared in the headers: annotate it under "
                       "functions: instead (private symbols are the ones no header declares)", ps);
        else if (dup)
            diag_error(d, at, ps, NULL,
                       "api.private_symbols: '%s' is also in api.extra_symbols: the spec's "
                       "sources define it, or the stub does, not both", ps);
    }
    const spec_node *vm = spec_get(api, "version_macro");
    const char *vname;
    if (vm && spec_string(vm, "api.version_macro", d, NULL, NULL, &vname)) {
        macro_def *md = model_find_macro(m, vname);
        if (!md) {
            diag_error(d, vm->loc, NULL, NULL,
                       "api.version_macro: '%s' is not an integer macro of the headers", vname);
        } else {
            s->version_macro = arena_strdup(m->arena, vname);
            s->version = md->value;
        }
    }
}

/* ---- version conditions (`when:`) ------------------------------------------- */

/* {first: [{when: COND, value: V}, ..., {value: V}]}: a choice, replaced by
 * the first V whose COND holds (an item without `when` always holds). */
static int is_choice(const spec_node *n)
{
    if (!n || n->kind != SN_MAP || n->n != 1 || strcmp(n->keys[0], "first") != 0) return 0;
    const spec_node *l = n->items[0];
    if (!l || l->kind != SN_LIST || !l->n) return 0;
    for (size_t i = 0; i < l->n; i++) {
        const spec_node *it = l->items[i];
        if (it->kind != SN_MAP || !spec_get(it, "value")) return 0;
        for (size_t k = 0; k < it->n; k++)
            if (strcmp(it->keys[k], "value") != 0 && strcmp(it->keys[k], "when") != 0) return 0;
    }
    return 1;
}

const spec_node *spec_find_conditional(const spec_node *n)
{
    if (!n) return NULL;
    if (is_choice(n)) return n;
    if (n->kind == SN_MAP && spec_get(n, "when")) return n;
    for (size_t i = 0; (n->kind == SN_MAP || n->kind == SN_LIST) && i < n->n; i++) {
        const spec_node *w = spec_find_conditional(n->items[i]);
        if (w) return w;
    }
    return NULL;
}

/* 1: the condition of `w` holds; 0: it does not; -1: an error was reported. */
static int eval_when(api_model *m, const spec_node *w, diag_sink *d)
{
    int64_t v;
    if (!w) return 1;
    if (w->kind != SN_SCALAR) {
        diag_error(d, w->loc, NULL, NULL,
                   "`when:` is a C expression over the headers' integer macros");
        return -1;
    }
    expr_env env = {.m = m, .d = d, .what = "condition", .loc = w->loc};
    env.loc.col += (unsigned)w->quote_cols;
    if (!expr_eval_const(&env, w->str, &v)) return -1;
    return v != 0;
}

static void drop_key(spec_node *n, const char *key)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->keys[i], key) == 0) {
            spec_free(n->items[i]);
            free(n->keys[i]);
            memmove(&n->items[i], &n->items[i + 1], (n->n - i - 1) * sizeof *n->items);
            memmove(&n->keys[i], &n->keys[i + 1], (n->n - i - 1) * sizeof *n->keys);
            memmove(&n->key_locs[i], &n->key_locs[i + 1], (n->n - i - 1) * sizeof *n->key_locs);
            n->n--;
            return;
        }
}

static void resolve_children(api_model *m, spec_node *n, diag_sink *d, const char *const *skip);

/* Resolves `slot` in place: NULL when it goes away. */
static void resolve_node(api_model *m, spec_node **slot, diag_sink *d)
{
    spec_node *n = *slot;
    if (is_choice(n)) {
        spec_node *pick = NULL, *l = n->items[0];
        for (size_t i = 0; i < l->n && !pick; i++) {
            int r = eval_when(m, spec_get(l->items[i], "when"), d);
            if (r < 0) break;
            if (r) {
                spec_node *it = l->items[i];
                for (size_t k = 0; k < it->n; k++)
                    if (strcmp(it->keys[k], "value") == 0) {
                        pick = it->items[k];
                        it->items[k] = NULL;
                        break;
                    }
                /* an item without `value`'s node left: spec_free skips NULL */
            }
        }
        spec_free(n);
        *slot = pick;
        if (pick) resolve_node(m, slot, d);
        return;
    }
    if (n->kind == SN_MAP && n->n == 2 && spec_get(n, "when") && spec_get(n, "value")) {
        /* {when: COND, value: V}: V when COND holds, else nothing (a list
         * item such as one of api.extra_symbols goes away) */
        int r = eval_when(m, spec_get(n, "when"), d);
        spec_node *pick = NULL;
        for (size_t k = 0; r != 0 && k < n->n; k++)
            if (strcmp(n->keys[k], "value") == 0) {
                pick = n->items[k];
                n->items[k] = NULL;
            }
        spec_free(n);
        *slot = pick;
        if (pick) resolve_node(m, slot, d);
        return;
    }
    if (n->kind == SN_MAP && spec_get(n, "when")) {
        int r = eval_when(m, spec_get(n, "when"), d);
        if (r == 0) { /* (an error keeps the entry: no errors that follow from its absence) */
            spec_free(n);
            *slot = NULL;
            return;
        }
        drop_key(n, "when");
        if (is_choice(n)) { /* {when: C, first: [...]}: the choice once C holds */
            resolve_node(m, slot, d);
            return;
        }
    }
    if (n->kind == SN_MAP || n->kind == SN_LIST) resolve_children(m, n, d, NULL);
}

static int in_list(const char *const *l, const char *s)
{
    for (; l && *l; l++)
        if (strcmp(*l, s) == 0) return 1;
    return 0;
}

/* Resolves the children of a map or list, dropping those that go away;
 * map keys in `skip` are left as they are. */
static void resolve_children(api_model *m, spec_node *n, diag_sink *d, const char *const *skip)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n; i++) {
        if (!(n->keys && in_list(skip, n->keys[i]))) resolve_node(m, &n->items[i], d);
        if (!n->items[i]) {
            if (n->keys) free(n->keys[i]);
            continue;
        }
        n->items[k] = n->items[i];
        if (n->keys) {
            n->keys[k] = n->keys[i];
            n->key_locs[k] = n->key_locs[i];
        }
        k++;
    }
    n->n = k;
}

int check_resolve_when(api_model *m, spec_node *root, diag_sink *d)
{
    unsigned e0 = d->errors;
    if (!root || root->kind != SN_MAP) return 0;
    static const char *const api_only[] = {"api", NULL};
    resolve_children(m, root, d, api_only);
    spec_node *api = spec_get(root, "api");
    if (api && api->kind == SN_MAP) resolve_children(m, api, d, api_early_keys);
    return d->errors > e0;
}

/* ---- model checks -------------------------------------------------------------- */

typedef struct pending_expr {
    expr **slot;
    const spec_node *node;
    function_def *fn;
    const char *param;
    int allow_out_deref;
    const char *what;
} pending_expr;

typedef struct ck {
    api_model *m;
    diag_sink *d;
    arena *a;
    pending_expr *pend;
    size_t npend;
    type_info *byte_type;
    const spec_node *rules; /* defaults.params: annotations by parameter name */
} ck;

static int resolve_const(ck *c, const char *name, int64_t *v)
{
    char *end;
    if (!name) return 0;
    long long x = strtoll(name, &end, 0);
    if (*name && !*end) {
        *v = x;
        return 1;
    }
    enum_const *ec = model_find_enum_const(c->m, name, NULL);
    if (ec) {
        *v = ec->value;
        return 1;
    }
    macro_def *md = model_find_macro(c->m, name);
    if (md) {
        *v = md->value;
        return 1;
    }
    return 0;
}

static void check_errors(ck *c, const spec_node *root)
{
    api_settings *s = &c->m->api;
    const spec_node *er = spec_get(spec_get(root, "api"), "errors");
    if (!er) return;
    if (s->error_type) {
        typedef_def *td = model_find_typedef(c->m, s->error_type);
        if (td) {
            s->error_ty = td->type;
            if (!(td->type->kind == TY_ENUM || td->type->kind == TY_SINT ||
                  td->type->kind == TY_UINT || td->type->kind == TY_POINTER))
                diag_error(c->d, spec_get(er, "type")->loc, NULL, NULL,
                           "api.errors.type '%s' is a %s; an error type is an enum or integer",
                           s->error_type, type_kind_name(td->type->kind));
        } else {
            diag_error(c->d, spec_get(er, "type")->loc, NULL, NULL,
                       "api.errors.type '%s' is not a typedef in the headers", s->error_type);
        }
        const spec_node *nm = spec_get(er, "names");
        if (nm) {
            int on = 0;
            spec_bool(nm, "api.errors.names", c->d, NULL, NULL, &on);
            if (on && td && (td->type->kind != TY_ENUM || !td->type->enm))
                diag_error(c->d, nm->loc, NULL, NULL,
                           "api.errors.names: the error type '%s' is a %s, not an enum whose "
                           "constants could be named",
                           s->error_type, type_kind_name(td->type->kind));
            else if (on && td)
                s->error_names = td->type->enm;
        }
    }
    struct {
        const char *key, *name;
        int64_t *v;
    } cs[] = {{"success", s->success, &s->success_v},
              {"unsupported", s->unsupported, &s->unsupported_v},
              {"connection_lost", s->connection_lost, &s->connection_lost_v},
              {"invalid_handle", s->invalid_handle, &s->invalid_handle_v},
              {"invalid_value", s->invalid_value, &s->invalid_value_v},
              {"out_of_memory", s->out_of_memory, &s->out_of_memory_v},
              {"missing", s->missing, &s->missing_v}};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        if (!cs[i].name) continue;
        if (!resolve_const(c, cs[i].name, cs[i].v))
            diag_error(c->d, spec_get(er, cs[i].key)->loc, NULL, NULL,
                       "api.errors.%s: '%s' is not an enum constant, integer macro or integer",
                       cs[i].key, cs[i].name);
    }
    if (s->priv_error && !resolve_const(c, s->priv_error, &s->priv_error_v))
        diag_error(c->d, s->priv_loc, NULL, NULL,
                   "api.privileged.error: '%s' is not an enum constant, integer macro or integer",
                   s->priv_error);
    /* the rejections default to `unsupported` when not given */
    if (!s->invalid_handle) s->invalid_handle_v = s->unsupported_v;
    if (!s->invalid_value) s->invalid_value_v = s->unsupported_v;
    if (!s->out_of_memory) s->out_of_memory_v = s->unsupported_v;
}

/* api.errors.last_error: each named function is forwarded, takes nothing and
 * returns the error type (the server folds its own errors into its answer). */
static void check_last_error(ck *c)
{
    api_settings *s = &c->m->api;
    const char *names[2] = {s->last_error_get, s->last_error_peek};
    static const char *const keys[2] = {"get", "peek"};
    for (int k = 0; k < 2; k++) {
        if (!names[k]) continue;
        function_def *f = model_find_function(c->m, names[k]);
        if (!f) {
            diag_error(c->d, s->last_error_loc, NULL, NULL,
                       "api.errors.last_error.%s: '%s' is not a selected function of the "
                       "headers%s",
                       keys[k], names[k],
                       did_you_mean(suggest_name(names[k], any_fn_cand, c->m->nfunctions, c->m)));
            continue;
        }
        const char *why = NULL;
        if (f->mode != FN_FORWARD) why = "it is not forwarded (local, custom or unsupported)";
        else if (f->sig.nparams != 0) why = "it takes parameters";
        else if (!s->error_ty || !f->sig.ret ||
                 strcmp(f->sig.ret->canonical, s->error_ty->canonical) != 0)
            why = "it does not return the API's error type";
        else if (f->async || f->async_if) why = "it is async";
        if (why) {
            diag_error(c->d, s->last_error_loc, f->name, NULL,
                       "api.errors.last_error.%s: '%s' cannot report the last error: %s; name a "
                       "forwarded function of no parameters that returns %s",
                       keys[k], f->name, why, s->error_type ? s->error_type : "the error type");
            diag_note(c->d, f->loc, "declared here");
            continue;
        }
        f->last_error = k + 1;
    }
}

/* `set:`/`get:` of a state: {function: F, param: P} */
static void read_state_fn(ck *c, const handle_type_def *h, const state_def *st,
                          const spec_node *n, const char *what, char **fn, char **param)
{
    if (!n) {
        diag_error(c->d, st->loc, NULL, NULL,
                   "handle type '%s': state '%s' needs `set:` and `get:`, each {function: F, "
                   "param: P}",
                   h->name, st->name);
        return;
    }
    if (!spec_want_map(n, what, c->d, NULL, NULL)) return;
    spec_check_keys(n, state_fn_keys, what, c->d, NULL, NULL);
    const spec_node *f = spec_get(n, "function"), *p = spec_get(n, "param");
    const char *fs, *ps;
    if (!f || !p) {
        diag_error(c->d, n->loc, NULL, NULL,
                   "handle type '%s': state '%s': %s: give `function:` and `param:`", h->name,
                   st->name, what);
        return;
    }
    if (spec_string(f, what, c->d, NULL, NULL, &fs)) *fn = arena_strdup(c->a, fs);
    if (spec_string(p, what, c->d, NULL, NULL, &ps)) *param = arena_strdup(c->a, ps);
}

/* `state: {NAME: {initial: C, set: {...}, get: {...}}}` of a handle type */
static void read_states(ck *c, handle_type_def *h, const spec_node *sn)
{
    if (!spec_want_map(sn, "state", c->d, NULL, NULL)) return;
    for (size_t i = 0; i < sn->n; i++) {
        const spec_node *e = sn->items[i];
        if (!is_c_identifier(sn->keys[i])) {
            diag_error(c->d, sn->key_locs[i], NULL, NULL,
                       "handle type '%s': state '%s' is not a C identifier", h->name,
                       sn->keys[i]);
            continue;
        }
        if (!spec_want_map(e, "a state", c->d, NULL, NULL)) continue;
        spec_check_keys(e, state_keys, "a state", c->d, NULL, NULL);
        state_def *st = VEC_PUSH(h->states, h->nstates);
        st->name = arena_strdup(c->a, sn->keys[i]);
        st->loc = sn->key_locs[i];
        const spec_node *in = spec_get(e, "initial");
        const char *is;
        if (!in)
            diag_error(c->d, e->loc, NULL, NULL,
                       "handle type '%s': state '%s' needs `initial:`, its value for a new "
                       "handle",
                       h->name, st->name);
        else if (spec_string(in, "initial", c->d, NULL, NULL, &is)) {
            st->initial = arena_strdup(c->a, is);
            if (!resolve_const(c, is, &st->initial_v))
                diag_error(c->d, in->loc, NULL, NULL,
                           "handle type '%s': state '%s': initial '%s' is not an integer, enum "
                           "constant or integer macro",
                           h->name, st->name, is);
        }
        read_state_fn(c, h, st, spec_get(e, "set"), "set", &st->set_fn, &st->set_param);
        read_state_fn(c, h, st, spec_get(e, "get"), "get", &st->get_fn, &st->get_param);
    }
    if (h->nstates > 8)
        diag_error(c->d, sn->loc, NULL, NULL, "handle type '%s': more than 8 states", h->name);
}

/* types.sizes: {TYPE: {BYTES: [VALUE, ...], ...}, ...}: what size_of(p)
 * reads for a parameter of TYPE (a value not listed: 0). */
static void check_sizes(ck *c, const spec_node *ss)
{
    if (!spec_want_map(ss, "types.sizes", c->d, NULL, NULL)) return;
    for (size_t i = 0; i < ss->n; i++) {
        const char *name = ss->keys[i];
        const spec_node *tn = ss->items[i];
        src_loc kl = ss->key_locs[i];
        typedef_def *td = model_find_typedef(c->m, name);
        if (!td) {
            diag_error(c->d, kl, NULL, NULL,
                       "types.sizes: '%s' is not a typedef of the headers%s", name,
                       did_you_mean(suggest_name(name, typedef_cand, c->m->ntypedefs, c->m)));
            continue;
        }
        if (td->type->kind != TY_ENUM && td->type->kind != TY_SINT && td->type->kind != TY_UINT) {
            diag_error(c->d, kl, NULL, NULL,
                       "types.sizes: '%s' is a %s ('%s'); sizes are given for the values of an "
                       "integer or enum type",
                       name, type_kind_name(td->type->kind), td->type->canonical);
            continue;
        }
        for (size_t k = 0; k < c->m->nsizes; k++)
            if (strcmp(c->m->sizes[k].type, name) == 0)
                diag_error(c->d, kl, NULL, NULL, "types.sizes: '%s' is listed twice", name);
        if (!spec_want_map(tn, "types.sizes entry", c->d, NULL, NULL)) continue;
        size_table *t = VEC_PUSH(c->m->sizes, c->m->nsizes);
        memset(t, 0, sizeof *t);
        t->type = arena_strdup(c->a, name);
        t->ti = td->type;
        t->loc = kl;
        for (size_t b = 0; b < tn->n; b++) {
            char *end;
            unsigned long long bytes = strtoull(tn->keys[b], &end, 10);
            if (!*tn->keys[b] || *end || bytes == 0 || bytes > (1ull << 20)) {
                diag_error(c->d, tn->key_locs[b], NULL, NULL,
                           "types.sizes.%s: '%s' is not a size: the keys are byte counts "
                           "(1 to 1048576), each with the list of values that size",
                           name, tn->keys[b]);
                continue;
            }
            char **vals = NULL;
            size_t nv = 0;
            if (!spec_string_list(tn->items[b], "types.sizes values", c->d, c->a, &vals, &nv))
                continue;
            for (size_t v = 0; v < nv; v++) {
                if (!model_find_enum_const(c->m, vals[v], NULL) && !model_find_macro(c->m, vals[v])) {
                    diag_error(c->d, spec_item_loc(tn->items[b], vals[v], tn->items[b]->loc), NULL,
                               NULL,
                               "types.sizes.%s: '%s' is not an enum constant or integer macro "
                               "of the headers",
                               name, vals[v]);
                    continue;
                }
                for (size_t k = 0; k < t->nentries; k++)
                    if (strcmp(t->entries[k].value, vals[v]) == 0)
                        diag_error(c->d, spec_item_loc(tn->items[b], vals[v], tn->items[b]->loc),
                                   NULL, NULL, "types.sizes.%s: '%s' is listed twice", name,
                                   vals[v]);
                size_entry *se = VEC_PUSH(t->entries, t->nentries);
                se->value = vals[v];
                se->bytes = bytes;
            }
        }
    }
}

static void check_handles(ck *c, const spec_node *root)
{
    const spec_node *types = spec_get(root, "types");
    if (!types) return;
    if (!spec_want_map(types, "types", c->d, NULL, NULL)) return;
    spec_check_keys(types, types_keys, "types", c->d, NULL, NULL);
    const spec_node *sz = spec_get(types, "sizes");
    if (sz) check_sizes(c, sz);
    const spec_node *bs = spec_get(types, "bytes");
    if (bs) {
        char **names = NULL;
        size_t nn = 0;
        spec_string_list(bs, "types.bytes", c->d, c->a, &names, &nn);
        for (size_t i = 0; i < nn; i++) {
            record_def *r = NULL;
            typedef_def *td = model_find_typedef(c->m, names[i]);
            if (td && td->type && td->type->record) r = td->type->record;
            for (size_t k = 0; !r && k < c->m->nrecords; k++)
                if (c->m->records[k]->name && strcmp(c->m->records[k]->name, names[i]) == 0)
                    r = c->m->records[k];
            if (!r || !r->complete)
                diag_error(c->d, spec_item_loc(bs, names[i], bs->loc), NULL, NULL,
                           "types.bytes: '%s' is not a complete struct or union of the headers",
                           names[i]);
            else
                for (size_t k = 0; k < c->m->nrecords; k++) /* const-qualified copies too */
                    if (c->m->records[k] == r ||
                        (c->m->records[k]->name && r->name &&
                         strcmp(c->m->records[k]->name, r->name) == 0))
                        c->m->records[k]->as_bytes = 1;
        }
    }
    const spec_node *dv = spec_get(types, "device");
    if (dv) {
        /* device addresses become per-client ranges (runtime/SECURITY.md S4) */
        c->m->api.device_checked = 1;
        c->m->api.device_loc = spec_key_loc(types, "device");
        if (dv->kind != SN_NULL && spec_want_map(dv, "types.device", c->d, NULL, NULL)) {
            spec_check_keys(dv, device_keys, "types.device", c->d, NULL, NULL);
            const spec_node *dn = spec_get(dv, "destroy");
            const char *dname;
            if (dn && spec_string(dn, "types.device.destroy", c->d, NULL, NULL, &dname))
                c->m->api.device_destroy = arena_strdup(c->a, dname);
        }
    }
    const spec_node *vs = spec_get(types, "versioned");
    if (vs && spec_want_map(vs, "types.versioned", c->d, NULL, NULL)) {
        /* versioned structs: the caller fills the first member (a `version` member) */
        spec_check_keys(vs, versioned_keys, "types.versioned", c->d, NULL, NULL);
        const spec_node *mn = spec_get(vs, "member");
        const char *member;
        if (!mn)
            diag_error(c->d, vs->loc, NULL, NULL,
                       "types.versioned: give `member:`, the name of the first member that "
                       "marks a versioned struct (e.g. version)");
        else if (spec_string(mn, "types.versioned.member", c->d, NULL, NULL, &member)) {
            if (!is_c_identifier(member))
                diag_error(c->d, mn->loc, NULL, NULL,
                           "types.versioned.member: '%s' is not a C identifier", member);
            else
                c->m->api.versioned_member = arena_strdup(c->a, member);
        }
    }
    const spec_node *hs = spec_get(types, "handles");
    if (!hs || !spec_want_map(hs, "types.handles", c->d, NULL, NULL)) return;
    for (size_t i = 0; i < hs->n; i++) {
        const char *name = hs->keys[i];
        const spec_node *hn = hs->items[i];
        src_loc kl = hs->key_locs[i];
        typedef_def *td = model_find_typedef(c->m, name);
        if (!td) {
            diag_error(c->d, kl, NULL, NULL,
                       "handle type '%s' is not a typedef in the headers: handles are named "
                       "by their typedef%s",
                       name, did_you_mean(suggest_name(name, typedef_cand, c->m->ntypedefs, c->m)));
            continue;
        }
        if (td->type->kind != TY_POINTER && td->type->kind != TY_SINT &&
            td->type->kind != TY_UINT) {
            if (td->type->kind == TY_RECORD)
                diag_error(c->d, kl, NULL, NULL,
                           "handle type '%s' is a %s ('%s'); a handle is a pointer or an integer: "
                           "declare `typedef %s *%s_handle;` in one of `api.helper_headers` and "
                           "list that (parameters of type '%s *' are then that handle)",
                           name, type_kind_name(td->type->kind), td->type->canonical,
                           td->type->canonical, name, name);
            else
                diag_error(c->d, kl, NULL, NULL,
                           "handle type '%s' is a %s ('%s'); a handle is a pointer or an integer",
                           name, type_kind_name(td->type->kind), td->type->canonical);
            diag_note(c->d, td->loc, "declared here");
            continue;
        }
        handle_type_def *h = VEC_PUSH(c->m->handles, c->m->nhandles);
        h->name = arena_strdup(c->a, name);
        h->type = td->type;
        h->tag = (unsigned)(c->m->nhandles - 1);
        h->loc = kl;
        if (!hn || hn->kind == SN_NULL) continue;
        if (!spec_want_map(hn, "a handle entry", c->d, NULL, NULL)) continue;
        spec_check_keys(hn, handle_keys, "a handle entry", c->d, NULL, NULL);
        const spec_node *dn = spec_get(hn, "destroy");
        const char *dname;
        if (dn && spec_string(dn, "destroy", c->d, NULL, NULL, &dname)) h->destroy_fn = arena_strdup(c->a, dname);
        const spec_node *un = spec_get(hn, "unknown_as_null");
        if (un) spec_bool(un, "unknown_as_null", c->d, NULL, NULL, &h->unknown_as_null);
        const spec_node *cn = spec_get(hn, "contents");
        if (cn) spec_bool(cn, "contents", c->d, NULL, NULL, &h->contents);
        const spec_node *an = spec_get(hn, "also");
        if (an) {
            h->also_loc = an->loc;
            spec_string_list(an, "also", c->d, c->a, &h->also, &h->nalso);
        }
        const spec_node *sn = spec_get(hn, "state");
        if (sn) read_states(c, h, sn);
        const spec_node *pt = spec_get(hn, "passthrough");
        if (pt) {
            size_t n = pt->kind == SN_LIST ? pt->n : 1;
            h->passthrough = arena_alloc(c->a, n * sizeof(int64_t));
            for (size_t k = 0; k < n; k++) {
                const spec_node *v = pt->kind == SN_LIST ? pt->items[k] : pt;
                int64_t x;
                if (v->kind == SN_SCALAR && (spec_is_int(v, &x) || resolve_const(c, v->str, &x)))
                    h->passthrough[h->npassthrough++] = x;
                else
                    diag_error(c->d, v->loc, NULL, NULL,
                               "passthrough values are integers, enum constants or integer "
                               "macros");
            }
        }
    }
    /* `also:` names other handle types (all of them known now) */
    for (size_t i = 0; i < c->m->nhandles; i++) {
        handle_type_def *h = &c->m->handles[i];
        for (size_t k = 0; k < h->nalso; k++) {
            int found = 0;
            for (size_t j = 0; j < c->m->nhandles; j++)
                found |= strcmp(c->m->handles[j].name, h->also[k]) == 0;
            if (strcmp(h->also[k], h->name) == 0)
                diag_error(c->d, h->also_loc, NULL, NULL,
                           "handle type '%s': also: names the type itself (list the other "
                           "handle types whose ids the library accepts in its place)",
                           h->name);
            else if (!found)
                diag_error(c->d, h->also_loc, NULL, NULL,
                           "handle type '%s': also: '%s' is not a handle type of types.handles",
                           h->name, h->also[k]);
        }
    }
    /* a family's type tags are hashes: two types of one API must not share one */
    for (size_t i = 0; c->m->api.family && i < c->m->nhandles; i++)
        for (size_t j = i + 1; j < c->m->nhandles; j++) {
            handle_type_def *a = &c->m->handles[i], *b = &c->m->handles[j];
            char *ka = handle_family_key(c->m, a), *kb = handle_family_key(c->m, b);
            if (strcmp(ka, kb) != 0 && model_handle_tag(c->m, a) == model_handle_tag(c->m, b))
                diag_error(c->d, b->loc, NULL, NULL,
                           "handle types '%s' (%s) and '%s' (%s) have the same family type tag "
                           "by chance: rename one of the structs or leave api.family out",
                           a->name, ka, b->name, kb);
            free(ka);
            free(kb);
        }
    /* destroy functions are checked once the functions are known */
}

static int is_devptr_type(const type_info *t)
{
    return t->kind == TY_POINTER || (t->kind == TY_UINT && t->size == 8);
}

static void check_destroy_fns(ck *c)
{
    const api_settings *s = &c->m->api;
    if (s->device_destroy) {
        function_def *f = model_find_function(c->m, s->device_destroy);
        if (!f)
            diag_error(c->d, s->device_loc, NULL, NULL,
                       "types.device: destroy function '%s' is not a selected function of the "
                       "headers%s",
                       s->device_destroy,
                       did_you_mean(suggest_name(s->device_destroy, any_fn_cand, c->m->nfunctions, c->m)));
        else if (f->sig.nparams < 1 || !is_devptr_type(f->sig.params[0].type)) {
            diag_error(c->d, s->device_loc, NULL, NULL,
                       "types.device: destroy function '%s' does not take a device address "
                       "(a pointer or 64-bit integer) first",
                       s->device_destroy);
            diag_note(c->d, f->loc, "declared here");
        }
    }
    for (size_t i = 0; i < c->m->nhandles; i++) {
        handle_type_def *h = &c->m->handles[i];
        if (!h->destroy_fn) continue;
        function_def *f = model_find_function(c->m, h->destroy_fn);
        if (!f) {
            diag_error(c->d, h->loc, NULL, NULL,
                       "handle type '%s': destroy function '%s' is not a selected function of the "
                       "headers%s",
                       h->name, h->destroy_fn,
                       did_you_mean(suggest_name(h->destroy_fn, any_fn_cand, c->m->nfunctions, c->m)));
        } else if (f->sig.nparams < 1 || model_handle_of(c->m, f->sig.params[0].type) != h) {
            diag_error(c->d, h->loc, NULL, NULL,
                       "handle type '%s': destroy function '%s' does not take a '%s' first",
                       h->name, h->destroy_fn, h->name);
            diag_note(c->d, f->loc, "declared here");
        }
    }
}

/* A handle type's (or types.device's) destroy function destroys what it is
 * given: its first parameter is `destroys: true` unless the spec says
 * false. Else a handle the client destroyed itself would stay in its
 * session's table and be destroyed a second time when the session ends (a
 * double free inside the API's library). */
static void mark_param_destroys(const char *fn_name, api_model *m, param_kind kind)
{
    function_def *f = fn_name ? model_find_function(m, fn_name) : NULL;
    if (!f || f->sig.nparams < 1) return;
    param_ann *a = &f->sig.params[0].ann;
    if (a->kind == kind && !a->destroys && !a->destroys_off) a->destroys = 1;
}

static void default_destroys(ck *c)
{
    for (size_t i = 0; i < c->m->nhandles; i++)
        mark_param_destroys(c->m->handles[i].destroy_fn, c->m, PK_HANDLE);
    mark_param_destroys(c->m->api.device_destroy, c->m, PK_DEVPTR);
}

/* ---- parameters ---------------------------------------------------------------- */

static type_info *unqual(ck *c, type_info *t)
{
    if (!t) return NULL;
    if (t->kind == TY_VOID) return c->byte_type;
    if (!t->is_const) return t;
    type_info *u = arena_alloc(c->a, sizeof *u);
    *u = *t;
    u->is_const = 0;
    const char *s = t->spelling;
    size_t n = strlen(s);
    if (t->kind == TY_POINTER && strchr(s, '*')) {
        /* a const pointer ("T * const", clang's "const char *const"): the
         * leading const is the pointee's */
        if (n > 5 && strcmp(s + n - 5, "const") == 0 && (s[n - 6] == ' ' || s[n - 6] == '*'))
            for (n -= 5; n && s[n - 1] == ' ';) n--;
    } else if (strncmp(s, "const ", 6) == 0) s += 6, n -= 6;
    else if (n > 6 && strcmp(s + n - 6, " const") == 0) n -= 6;
    u->spelling = arena_alloc(c->a, n + 1);
    memcpy(u->spelling, s, n);
    u->canonical = t->canonical_unqual;
    return u;
}

static int is_plain(const type_info *t)
{
    switch (t->kind) {
    case TY_BOOL:
    case TY_SINT:
    case TY_UINT:
    case TY_FLOAT:
    case TY_ENUM:
        return 1;
    case TY_RECORD:
        return t->record && t->record->complete &&
               (!t->record->has_pointers || t->record->as_bytes);
    case TY_ARRAY:
        return t->pointee && is_plain(t->pointee);
    default:
        return 0;
    }
}

static int is_char_ptr(const type_info *t)
{
    return t && (t->kind == TY_POINTER || t->kind == TY_ARRAY) && t->pointee && t->pointee->is_char;
}

/* The pointed-to type of a pointer or (decayed) array parameter. */
static type_info *pointee_of(const type_info *t)
{
    return t && (t->kind == TY_POINTER || t->kind == TY_ARRAY) ? t->pointee : NULL;
}

/* Derives elem kind/type for a pointer parameter with a direction. Returns
 * NULL or a message explaining why the elements are undecidable. */
static const char *derive_elem(ck *c, const type_info *t, param_ann *a)
{
    type_info *p = pointee_of(t);
    handle_type_def *h = model_handle_of(c->m, p);
    a->elem_type = unqual(c, p);
    if (h) {
        a->elem = EK_HANDLE;
        a->handle_type = h->name;
        return NULL;
    }
    if (!p || p->kind == TY_VOID) {
        a->elem = EK_BYTES;
        return NULL;
    }
    if (is_char_ptr(p)) {
        a->elem = EK_STRING;
        return NULL;
    }
    if (p->kind == TY_POINTER)
        return "its elements are pointers: say what they are with `elem: handle|device|string`";
    if (p->kind == TY_FNPTR) return "its elements are function pointers, which cannot travel";
    if (!is_plain(p))
        return p->kind == TY_RECORD ? "its elements are structs that hold pointers or are "
                                      "incomplete: they cannot be copied as bytes"
                                    : "its elements are not plain data";
    a->elem = EK_BYTES;
    return NULL;
}

/* The default for a parameter; returns NULL when decided, else why not. */
static const char *default_ann(ck *c, const type_info *t, param_ann *a)
{
    handle_type_def *h = model_handle_of(c->m, t);
    if (h) {
        a->kind = PK_HANDLE;
        a->handle_type = h->name;
        return NULL;
    }
    switch (t->kind) {
    case TY_BOOL:
    case TY_SINT:
    case TY_UINT:
    case TY_FLOAT:
    case TY_ENUM:
        a->kind = PK_VALUE;
        return NULL;
    case TY_RECORD:
        if (is_plain(t)) {
            a->kind = PK_STRUCT;
            return NULL;
        }
        return "is a struct that holds pointers, so it cannot be copied as bytes: mark the "
               "function `custom:` or `unsupported:`";
    case TY_FNPTR:
        return "is a function pointer: annotate it with `callback: {user_data: PARAM}`";
    case TY_VOID:
    case TY_OTHER:
        return "is not a supported type: mark the function `custom:` or `unsupported:`";
    case TY_POINTER:
    case TY_ARRAY:
        break;
    }
    type_info *p = pointee_of(t);
    /* defaults.pointers: device (a library whose data lives on the device):
     * a data pointer nothing else decides is a device address */
    int dev = c->m->api.pointers_device && !model_handle_of(c->m, p) && p &&
              !p->is_char && p->kind != TY_FNPTR && !(p->kind == TY_RECORD && !is_plain(p));
    if (dev) {
        a->kind = PK_DEVPTR;
        return NULL;
    }
    if (!p || p->kind == TY_VOID)
        return "has no size: give `dir:` with `count:` or `bytes:`, or mark it `device`";
    if (model_handle_of(c->m, p)) {
        a->kind = p->is_const ? PK_IN : PK_OUT;
        derive_elem(c, t, a);
        return NULL;
    }
    if (p->is_char) {
        if (p->is_const) {
            a->kind = PK_STRING;
            return NULL;
        }
        return "is a buffer of unknown size: give `dir:` with `count:` or `bytes:` (or "
               "`string: true` for an input string)";
    }
    if (p->kind == TY_POINTER || p->kind == TY_FNPTR)
        return "points to pointers: give `dir:` and `elem: handle|device|string` (and "
               "`count:`)";
    if (p->kind == TY_RECORD && !is_plain(p))
        return "points to an opaque or pointer-holding struct: list its typedef under "
               "`types.handles`, or mark the function `custom:` or `unsupported:`";
    if (!is_plain(p)) return "points to data that is not plain: annotate it";
    a->kind = p->is_const ? PK_IN : PK_OUT;
    /* a versioned struct (types.versioned) travels both ways: its version is an input */
    if (!p->is_const && p->kind == TY_RECORD && p->record && p->record->nfields > 0 &&
        c->m->api.versioned_member && p->record->fields[0].name &&
        strcmp(p->record->fields[0].name, c->m->api.versioned_member) == 0)
        a->kind = PK_INOUT;
    a->elem = EK_BYTES;
    a->elem_type = unqual(c, p);
    return NULL;
}

typedef struct pctx {
    ck *c;
    function_def *fn;
    param_def *p;
    int report_undecided; /* FN_FORWARD: an undecided parameter is an error */
    int errors;
    int in_space;         /* applying the host form of a `space:` parameter */
} pctx;

static void perr_note(pctx *x, src_loc at, const char *fmt, const char *a1, const char *a2)
{
    diag_error(x->c->d, at, x->fn->name, x->p->name, fmt, a1, a2);
    diag_note(x->c->d, x->p->loc, "declared here");
    x->errors++;
}

static void add_pending(pctx *x, expr **slot, const spec_node *n, int allow_deref,
                        const char *what)
{
    pending_expr *pe = VEC_PUSH(x->c->pend, x->c->npend);
    pe->slot = slot;
    pe->node = n;
    pe->fn = x->fn;
    pe->param = x->p->name;
    pe->allow_out_deref = allow_deref;
    pe->what = what;
}

static int is_ptr(const type_info *t)
{
    return t->kind == TY_POINTER || t->kind == TY_ARRAY;
}

static size_t parse_cases(pctx *x, const spec_node *n, const char *what, handle_case **out);
static void apply_stream(pctx *x, const spec_node *A, const spec_node *n, param_ann *a);
static void apply_space(pctx *x, const spec_node *A, const spec_node *n, param_ann *a);
static void apply_elem_by(pctx *x, const spec_node *A, const spec_node *n, param_ann *a);
static void apply_reads(pctx *x, const spec_node *A, const spec_node *n, param_ann *a);

/* Applies an annotation map/shorthand `A` (or the default when A is NULL)
 * to x->p, into `a`. branch: inside then/else. */
static void apply_ann(pctx *x, const spec_node *A, param_ann *a, int branch)
{
    ck *c = x->c;
    const type_info *t = x->p->type;
    memset(a, 0, sizeof *a);
    if (A) a->loc = A->loc;
    if (!A || A->kind == SN_NULL) {
        const char *why = default_ann(c, t, a);
        if (why) {
            a->kind = PK_IGNORE;
            if (x->report_undecided && c->m->undecided_unsupported && !x->fn->ann_loc.file) {
                if (!x->fn->undecided)
                    x->fn->undecided = xasprintf_arena(c->a, "parameter '%s': '%s' %s",
                                                       x->p->name, t->spelling, why);
            } else if (x->report_undecided) {
                src_loc at = A ? A->loc : x->fn->ann_loc.file ? x->fn->ann_loc : x->p->loc;
                diag_error(c->d, at, x->fn->name, x->p->name, "'%s' %s", t->spelling, why);
                if (at.file != x->p->loc.file || at.line != x->p->loc.line)
                    diag_note(c->d, x->p->loc, "declared here");
                x->errors++;
            }
        }
        return;
    }
    if (A->kind == SN_SCALAR) {
        static const char *const sh[] = {"in", "out", "inout", "device", "string", "ignore", NULL};
        int k = -1;
        for (int i = 0; sh[i]; i++)
            if (strcmp(sh[i], A->str) == 0) k = i;
        if (k < 0) {
            perr_note(x, A->loc,
                      "unknown shorthand '%s'%s; use in, out, inout, device, string, ignore or "
                      "a map",
                      A->str, "");
            a->kind = PK_IGNORE;
            return;
        }
        if (k == 5) {
            a->kind = PK_IGNORE;
            return;
        }
        if (k == 3) {
            if (!is_ptr(t) && !(t->kind == TY_UINT && t->size == 8)) {
                perr_note(x, A->loc, "`device` on a parameter of type '%s'%s: a device address is a pointer or a 64-bit integer", t->spelling, "");
                return;
            }
            a->kind = PK_DEVPTR;
            return;
        }
        if (k == 4) {
            if (!is_char_ptr(t)) {
                perr_note(x, A->loc, "`string` on a parameter of type '%s'%s: a string is a char pointer", t->spelling, "");
                return;
            }
            a->kind = PK_STRING;
            return;
        }
        if (!is_ptr(t)) {
            perr_note(x, A->loc,
                      "`%s` on a parameter of non-pointer type '%s': only pointers have a "
                      "direction",
                      A->str, t->spelling);
            return;
        }
        a->kind = k == 0 ? PK_IN : k == 1 ? PK_OUT : PK_INOUT;
        const char *why = derive_elem(c, t, a);
        if (why) perr_note(x, A->loc, "'%s': %s", t->spelling, why);
        else if (a->elem == EK_BYTES && pointee_of(t)->kind == TY_VOID)
            perr_note(x, A->loc, "'%s' has no size: give `count:` or `bytes:`%s", t->spelling, "");
        return;
    }
    if (A->kind != SN_MAP) {
        perr_note(x, A->loc, "a parameter annotation is a map or one of in, out, inout, device, string, ignore%s%s", "", "");
        return;
    }
    int bad = spec_check_keys(A, branch ? branch_keys : param_keys,
                              branch ? "a then/else branch" : "a parameter annotation", c->d,
                              x->fn->name, x->p->name);
    x->errors += bad;
    if (bad) diag_note(c->d, x->p->loc, "declared here");
    int v;
    const spec_node *n;

    if ((n = spec_get(A, "ignore")) && spec_bool(n, "ignore", c->d, x->fn->name, x->p->name, &v) && v) {
        a->kind = PK_IGNORE;
        return;
    }
    if ((n = spec_get(A, "if"))) {
        const spec_node *tn = spec_get(A, "then"), *en = spec_get(A, "else");
        if (!tn || !en) {
            perr_note(x, spec_key_loc(A, "if"), "`if:` needs both `then:` and `else:`%s%s", "", "");
            return;
        }
        if (spec_get(A, "space"))
            perr_note(x, spec_key_loc(A, "space"),
                      "`space` and `if` on one parameter: conditions do not nest%s%s", "", "");
        a->kind = PK_COND;
        add_pending(x, &a->cond, n, 0, "condition");
        a->then_ann = arena_alloc(c->a, sizeof(param_ann));
        a->else_ann = arena_alloc(c->a, sizeof(param_ann));
        apply_ann(x, tn, a->then_ann, 1);
        apply_ann(x, en, a->else_ann, 1);
        if (a->then_ann->kind == PK_COND || a->else_ann->kind == PK_COND)
            perr_note(x, n->loc, "conditions do not nest%s%s", "", "");
        if ((n = spec_get(A, "stream")))
            apply_stream(x, A, n, a); /* refused: it belongs in a branch */
        return;
    }
    if (spec_get(A, "then") || spec_get(A, "else")) {
        perr_note(x, A->loc, "`then:`/`else:` need `if:`%s%s", "", "");
        return;
    }
    if ((n = spec_get(A, "space")) && !x->in_space && !branch) {
        apply_space(x, A, n, a);
        return;
    }
    if ((n = spec_get(A, "callback"))) {
        if (t->kind != TY_FNPTR) {
            perr_note(x, spec_key_loc(A, "callback"),
                      "`callback` on a parameter of type '%s'%s, which is not a function pointer",
                      t->spelling, "");
            return;
        }
        a->kind = PK_CALLBACK;
        if (!spec_want_map(n, "callback", c->d, x->fn->name, x->p->name)) return;
        spec_check_keys(n, callback_keys, "callback", c->d, x->fn->name, x->p->name);
        const spec_node *ud = spec_get(n, "user_data");
        const char *udn;
        if (!ud) {
            perr_note(x, spec_key_loc(A, "callback"),
                      "`callback` needs `user_data:` naming the parameter handed back to the "
                      "callback%s%s",
                      "", "");
        } else if (spec_string(ud, "user_data", c->d, x->fn->name, x->p->name, &udn)) {
            param_def *up = NULL;
            for (size_t i = 0; i < x->fn->sig.nparams; i++)
                if (strcmp(x->fn->sig.params[i].name, udn) == 0) up = &x->fn->sig.params[i];
            if (!up)
                perr_note(x, ud->loc, "user_data: '%s' is not a parameter of the function%s", udn, "");
            else if (up->type->kind != TY_POINTER)
                perr_note(x, ud->loc, "user_data: '%s' is a '%s', not a pointer", udn,
                          up->type->spelling);
            else
                a->user_data_param = up->name;
        }
        fn_sig *cb = t->fn;
        int64_t argi;
        const spec_node *an = spec_get(n, "arg");
        a->cb_user_data_index = -1;
        if (an) {
            if (spec_int(an, "arg", c->d, x->fn->name, x->p->name, &argi)) {
                if (argi < 0 || (size_t)argi >= cb->nparams)
                    perr_note(x, an->loc, "arg: the callback type has no argument %s%s",
                              an->str, "");
                else
                    a->cb_user_data_index = (int)argi;
            }
        } else {
            int found = -1, count = 0;
            for (size_t i = 0; i < cb->nparams; i++) {
                const type_info *pt = cb->params[i].type;
                if (pt->kind == TY_POINTER && pt->pointee && pt->pointee->kind == TY_VOID &&
                    !pt->pointee->is_const) {
                    found = (int)i;
                    count++;
                }
            }
            if (count != 1)
                perr_note(x, spec_key_loc(A, "callback"),
                          "the callback type '%s' has %s `void *` arguments: say which one is "
                          "the user data with `arg: N`",
                          t->spelling, count ? "several" : "no");
            else
                a->cb_user_data_index = found;
        }
        const spec_node *on = spec_get(n, "once");
        /* once: true/false, or a C expression over the call's values (a callback
         * that is sometimes kept for many invocations, sometimes not) */
        if (on && !spec_is_bool(on, &a->cb_once)) add_pending(x, &a->cb_once_if, on, 0, "condition");
        return;
    }

    /* kind-deciding keys: device, string, handle, dir; else the default */
    int decided = 0;
    const char *why = NULL;
    if ((n = spec_get(A, "device")) && spec_bool(n, "device", c->d, x->fn->name, x->p->name, &v) && v &&
        !spec_get(A, "dir")) {
        if (!is_ptr(t) && !(t->kind == TY_UINT && t->size == 8)) {
            perr_note(x, n->loc, "`device` on a parameter of type '%s'%s: a device address is a pointer or a 64-bit integer", t->spelling, "");
            return;
        }
        a->kind = PK_DEVPTR;
        decided = 1;
    }
    if ((n = spec_get(A, "string")) && spec_bool(n, "string", c->d, x->fn->name, x->p->name, &v) && v &&
        !spec_get(A, "dir")) {
        if (!is_char_ptr(t)) {
            perr_note(x, n->loc, "`string` on a parameter of type '%s'%s: a string is a char pointer", t->spelling, "");
            return;
        }
        a->kind = PK_STRING;
        decided = 1;
    }
    const spec_node *hn = spec_get(A, "handle");
    handle_type_def *ht = NULL;
    if (hn) {
        const char *hname;
        if (!spec_string(hn, "handle", c->d, x->fn->name, x->p->name, &hname)) return;
        ht = model_find_handle(c->m, hname);
        if (!ht) {
            perr_note(x, hn->loc, "'%s' is not a handle type: list it under `types.handles`%s",
                      hname, did_you_mean(suggest_name(hname, handle_cand, c->m->nhandles, c->m)));
            return;
        }
        if (model_handle_of(c->m, t) == ht) {
            a->kind = PK_HANDLE;
            a->handle_type = ht->name;
            decided = 1;
        } else if (!(is_ptr(t) && model_handle_of(c->m, pointee_of(t)) == ht)) {
            perr_note(x, hn->loc, "`handle: %s` contradicts the parameter's type '%s'", hname,
                      t->spelling);
            return;
        }
    }
    const spec_node *dn = spec_get(A, "dir");
    if (dn) {
        const char *dir;
        if (!spec_string(dn, "dir", c->d, x->fn->name, x->p->name, &dir)) return;
        if (strcmp(dir, "in") && strcmp(dir, "out") && strcmp(dir, "inout")) {
            perr_note(x, dn->loc, "dir: '%s' is not in, out or inout%s", dir, "");
            return;
        }
        if (!is_ptr(t)) {
            perr_note(x, dn->loc,
                      "`dir: %s` on a parameter of non-pointer type '%s': only pointers have a "
                      "direction",
                      dir, t->spelling);
            return;
        }
        a->kind = dir[0] == 'i' && dir[2] == 0 ? PK_IN : dir[0] == 'o' ? PK_OUT : PK_INOUT;
        decided = 1;
        const spec_node *el = spec_get(A, "elem");
        if (el) {
            const char *e;
            if (!spec_string(el, "elem", c->d, x->fn->name, x->p->name, &e)) return;
            type_info *p = pointee_of(t);
            a->elem_type = unqual(c, p);
            if (strcmp(e, "bytes") == 0) {
                a->elem = EK_BYTES;
                /* a struct that holds pointers may travel as bytes only when a
                 * host wrapper is there to make its pointer fields right */
                if (p->kind != TY_VOID && !is_plain(p) && !x->fn->wrap_host)
                    perr_note(x, el->loc, "`elem: bytes` but '%s' is not plain data (allowed with `wrap: {host: ...}`, which must fix its pointer fields)%s",
                              p->spelling, "");
            } else if (strcmp(e, "device") == 0) {
                a->elem = EK_DEVPTR;
                if (!(p->kind == TY_POINTER || (p->kind == TY_UINT && p->size == 8)))
                    perr_note(x, el->loc,
                              "`elem: device` but '%s' is not a pointer or 64-bit integer%s",
                              p->spelling, "");
            } else if (strcmp(e, "handle") == 0) {
                a->elem = EK_HANDLE;
                handle_type_def *eh = ht ? ht : model_handle_of(c->m, p);
                if (!eh)
                    perr_note(x, el->loc,
                              "`elem: handle` but '%s' is not a handle type: give `handle: "
                              "TYPE`%s",
                              p->spelling, "");
                else
                    a->handle_type = eh->name;
            } else if (strcmp(e, "string") == 0) {
                a->elem = EK_STRING;
                if (!is_char_ptr(p))
                    perr_note(x, el->loc, "`elem: string` but '%s' is not a char pointer%s",
                              p->spelling, "");
            } else {
                perr_note(x, el->loc, "elem: '%s' is not bytes, handle, device or string%s", e,
                          "");
            }
        } else {
            why = derive_elem(c, t, a);
            if (why) {
                perr_note(x, dn->loc, "'%s': %s", t->spelling, why);
                return;
            }
        }
    } else if (spec_get(A, "elem")) {
        perr_note(x, spec_key_loc(A, "elem"), "`elem:` needs `dir:`%s%s", "", "");
        return;
    }
    if (!decided && hn) {
        /* pointer to handles without dir: the default decides the direction */
        why = default_ann(c, t, a);
        decided = !why;
    }
    if (!decided) {
        why = default_ann(c, t, a);
        if (why) {
            perr_note(x, A->loc, "'%s' %s", t->spelling, why);
            return;
        }
    }

    /* modifiers */
    int is_buf = a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT;
    const spec_node *cn = spec_get(A, "count"), *bn = spec_get(A, "bytes");
    if (cn && bn) {
        perr_note(x, spec_key_loc(A, "bytes"), "give `count:` or `bytes:`, not both%s%s", "", "");
    } else if (cn || bn) {
        const spec_node *sn = cn ? cn : bn;
        if (bn && a->kind == PK_DEVPTR) {
            if (bn->kind != SN_SCALAR)
                perr_note(x, bn->loc, "`bytes:` is a C expression%s%s", "", "");
            else
                add_pending(x, &a->extent, bn, 0, "extent");
        } else if (!is_buf) {
            perr_note(x, spec_key_loc(A, cn ? "count" : "bytes"),
                      "`%s:` applies to in/out/inout pointers, not to a %s parameter",
                      cn ? "count" : "bytes", param_kind_name(a->kind));
        } else if (bn && a->elem != EK_BYTES) {
            perr_note(x, spec_key_loc(A, "bytes"),
                      "`bytes:` is for plain data; these elements are %ss: use `count:`",
                      elem_kind_name(a->elem), "");
        } else if (sn->kind != SN_SCALAR) {
            perr_note(x, sn->loc, "`%s:` is a C expression%s", cn ? "count" : "bytes", "");
        } else {
            a->count_is_bytes = bn != NULL;
            add_pending(x, &a->count, sn, 0, cn ? "count" : "size");
        }
    }
    const spec_node *tn = spec_get(A, "terminated");
    if (tn) {
        int64_t tv = 0, ts = 1;
        int ok = 1;
        if (tn->kind == SN_MAP) {
            spec_check_keys(tn, terminated_keys, "terminated", c->d, x->fn->name, x->p->name);
            const spec_node *vn = spec_get(tn, "value"), *sn = spec_get(tn, "stride");
            if (vn && !spec_int(vn, "terminated.value", c->d, x->fn->name, x->p->name, &tv)) ok = 0;
            if (sn && (!spec_int(sn, "terminated.stride", c->d, x->fn->name, x->p->name, &ts) || ts < 1 || ts > 64)) {
                if (ok) diag_error(c->d, sn->loc, x->fn->name, x->p->name, "terminated.stride must be 1..64");
                ok = 0;
            }
        } else if (!spec_bool(tn, "terminated", c->d, x->fn->name, x->p->name, &v) || !v) {
            ok = 0;
        }
        if (ok) {
            if (a->kind != PK_IN || a->elem != EK_BYTES || !a->elem_type ||
                !(a->elem_type->kind == TY_SINT || a->elem_type->kind == TY_UINT ||
                  a->elem_type->kind == TY_ENUM)) {
                perr_note(x, spec_key_loc(A, "terminated"),
                          "`terminated:` applies to input lists of integers, not to '%s'%s",
                          t->spelling, "");
            } else if (cn || bn) {
                perr_note(x, spec_key_loc(A, "terminated"),
                          "a terminated list has no `count:`/`bytes:`%s%s", "", "");
            } else {
                a->terminated = 1;
                a->terminator = tv;
                a->term_stride = (unsigned)ts;
            }
        }
    }
    if (!bad && is_buf && a->elem == EK_BYTES && !a->count && !a->terminated && !cn && !bn &&
        pointee_of(t) && pointee_of(t)->kind == TY_VOID)
        perr_note(x, A->loc, "'%s' has no size: give `count:` or `bytes:`%s", t->spelling, "");
    const spec_node *can = spec_get(A, "count_after");
    if (can) {
        if (a->kind != PK_OUT && a->kind != PK_INOUT)
            perr_note(x, spec_key_loc(A, "count_after"),
                      "`count_after:` applies to out/inout pointers, not to a %s parameter%s",
                      param_kind_name(a->kind), "");
        else if (can->kind != SN_SCALAR)
            perr_note(x, can->loc, "`count_after:` is a C expression%s%s", "", "");
        else
            add_pending(x, &a->count_after, can, 1, "count_after");
    }
    const spec_node *oe = spec_get(A, "out_on_error");
    if (oe && spec_string_list(oe, "out_on_error", c->d, c->a, &a->out_on_error,
                               &a->nout_on_error)) {
        const type_info *et = c->m->api.error_ty;
        /* a handle out travels back as NULL on those errors (the function
         * sets it so: no handle to hand out) */
        if ((a->kind != PK_OUT && a->kind != PK_INOUT) ||
            (a->elem != EK_BYTES && !(a->kind == PK_OUT && a->elem == EK_HANDLE)))
            perr_note(x, oe->loc,
                      "`out_on_error:` applies to out/inout pointers to plain data and to out "
                      "handles, not to a parameter of kind '%s'%s",
                      param_kind_name(a->kind), "");
        else if (!et || strcmp(x->fn->sig.ret->canonical_unqual, et->canonical_unqual) != 0)
            perr_note(x, oe->loc, "`out_on_error:` needs a function that returns the error type "
                      "'%s'%s", c->m->api.error_type ? c->m->api.error_type : "?", "");
        for (size_t i = 0; i < a->nout_on_error; i++) {
            int64_t ev;
            if (!resolve_const(c, a->out_on_error[i], &ev))
                perr_note(x, oe->loc,
                          "`out_on_error:` '%s' is not an enum constant, integer macro or "
                          "integer%s", a->out_on_error[i], "");
        }
    }
    if ((n = spec_get(A, "nullable")) && spec_bool(n, "nullable", c->d, x->fn->name, x->p->name, &v)) {
        if (v && !is_ptr(t) && a->kind != PK_HANDLE)
            perr_note(x, n->loc, "`nullable` on a non-pointer parameter of type '%s'%s",
                      t->spelling, "");
        a->nullable = v;
    }
    if ((n = spec_get(A, "creates")) && n->kind == SN_MAP) {
        /* creates: {bytes: EXPR}: each device address out is a new range */
        spec_check_keys(n, dev_creates_keys, "creates", c->d, x->fn->name, x->p->name);
        const spec_node *sz = spec_get(n, "bytes");
        if (!((a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_DEVPTR))
            perr_note(x, spec_key_loc(A, "creates"),
                      "`creates: {bytes: ...}` applies to out device addresses (`dir: out, elem: "
                      "device`), and '%s' is not one%s",
                      t->spelling, "");
        else if (!sz || sz->kind != SN_SCALAR)
            perr_note(x, n->loc, "`creates:` on device addresses needs `bytes: EXPR` (the size "
                      "of each allocation)%s%s", "", "");
        else {
            a->creates = 1;
            add_pending(x, &a->extent, sz, 0, "allocation size");
        }
    } else if ((n = spec_get(A, "creates")) && spec_bool(n, "creates", c->d, x->fn->name, x->p->name, &v) && v) {
        if ((a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_DEVPTR) {
            perr_note(x, spec_key_loc(A, "creates"),
                      "`creates` on device addresses needs the size: `creates: {bytes: EXPR}`%s%s",
                      "", "");
            a->creates = -1; /* reported; not a range creator */
        } else if (!((a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_HANDLE))
            perr_note(x, spec_key_loc(A, "creates"),
                      "`creates` applies to out handles, and '%s' is not a pointer to a handle "
                      "type%s",
                      t->spelling, "");
        if (a->creates == 0) a->creates = 1;
        else a->creates = 0;
    }
    int destroys_ok = (n = spec_get(A, "destroys")) &&
                       spec_bool(n, "destroys", c->d, x->fn->name, x->p->name, &v);
    if (destroys_ok && !v)
        a->destroys_off = 1;
    else if (destroys_ok) {
        if (!(a->kind == PK_HANDLE || a->kind == PK_DEVPTR ||
              (a->kind == PK_IN && a->elem == EK_HANDLE)))
            perr_note(x, spec_key_loc(A, "destroys"),
                      "`destroys` applies to handles and device addresses passed in, and '%s' is "
                      "neither%s",
                      t->spelling, "");
        a->destroys = 1;
    }
    if ((n = spec_get(A, "retains")) && spec_bool(n, "retains", c->d, x->fn->name, x->p->name, &v) && v) {
        if (a->kind != PK_HANDLE)
            perr_note(x, spec_key_loc(A, "retains"),
                      "`retains` applies to a handle passed in, and '%s' is not a handle type%s",
                      t->spelling, "");
        a->retains = 1;
    }
    if ((n = spec_get(A, "elem_by"))) apply_elem_by(x, A, n, a);
    if ((n = spec_get(A, "reads"))) apply_reads(x, A, n, a);
    if ((n = spec_get(A, "handle_keys"))) {
        if (!(a->kind == PK_IN && a->elem == EK_BYTES && a->terminated && a->term_stride == 2 &&
              a->elem_type && a->elem_type->size == 8))
            perr_note(x, spec_key_loc(A, "handle_keys"),
                      "`handle_keys` applies to input key/value lists of 64-bit integers "
                      "(`terminated: {value: 0, stride: 2}`)%s%s", "", "");
        else
            a->nhandle_keys = parse_cases(x, n, "handle_keys", &a->handle_keys);
    }
    if ((n = spec_get(A, "map"))) {
        const char *fn_;
        if (a->kind != PK_DEVPTR)
            perr_note(x, spec_key_loc(A, "map"),
                      "`map` applies to device parameters (`device: true`), not to one passed "
                      "as '%s'%s",
                      param_kind_name(a->kind), "");
        else if (spec_string(n, "map", c->d, x->fn->name, x->p->name, &fn_)) {
            if (!is_c_identifier(fn_))
                perr_note(x, n->loc, "`map` names a C function of the spec's sources, not '%s'%s",
                          fn_, "");
            else
                a->map_fn = arena_strdup(c->a, fn_);
        }
    }
    if ((n = spec_get(A, "checked")) && !x->in_space) { /* space: the device form's */
        int chk = 1;
        if (a->kind != PK_DEVPTR && !(a->kind == PK_IN && a->elem == EK_DEVPTR))
            perr_note(x, spec_key_loc(A, "checked"),
                      "`checked` applies to device parameters (`device: true`) and input "
                      "arrays of them, not to one passed as '%s'%s",
                      param_kind_name(a->kind), "");
        else if (spec_bool(n, "checked", c->d, x->fn->name, x->p->name, &chk))
            a->dev_unchecked = !chk;
    }
    if ((n = spec_get(A, "stream")))
        apply_stream(x, A, n, a);
    (void)bad;
}

/* A byte size: an integer, or a string with a K, M or G suffix ("8M"). */
/* `space: {state: S, host: H, device: D}`: where the pointer lives depends on
 * the state S of the function's handle argument: host memory as the rest of
 * the annotation says when S == H, a device address when S == D. It becomes a
 * conditional over `st_S_`, the state value the call carries (the stub reads
 * it from the guest's tracking, the server checks it against the getter). */
static void apply_space(pctx *x, const spec_node *A, const spec_node *n, param_ann *a)
{
    ck *c = x->c;
    const type_info *t = x->p->type;
    if (!is_ptr(t)) {
        perr_note(x, n->loc,
                  "`space` on a parameter of non-pointer type '%s'%s: only a pointer lives in "
                  "host or device memory",
                  t->spelling, "");
        return;
    }
    if (spec_get(A, "if")) {
        perr_note(x, n->loc, "`space` and `if` on one parameter: conditions do not nest%s%s", "",
                  "");
        return;
    }
    if (!spec_want_map(n, "space", c->d, x->fn->name, x->p->name)) {
        x->errors++;
        return;
    }
    if (spec_check_keys(n, space_keys, "space", c->d, x->fn->name, x->p->name)) x->errors++;
    const spec_node *sn = spec_get(n, "state"), *hn = spec_get(n, "host"),
                    *dn = spec_get(n, "device");
    const char *sname, *hs, *ds;
    if (!sn || !hn || !dn) {
        perr_note(x, n->loc,
                  "`space` needs `state:` (a state of the handle argument's type), `host:` and "
                  "`device:` (the state's values for host and device memory)%s%s",
                  "", "");
        return;
    }
    if (!spec_string(sn, "space.state", c->d, x->fn->name, x->p->name, &sname) ||
        !spec_string(hn, "space.host", c->d, x->fn->name, x->p->name, &hs) ||
        !spec_string(dn, "space.device", c->d, x->fn->name, x->p->name, &ds)) {
        x->errors++;
        return;
    }
    size_t hp = 0, found = 0;
    unsigned slot = 0;
    handle_type_def *ht = NULL;
    for (size_t k = 0; k < x->fn->sig.nparams; k++) {
        handle_type_def *h = model_handle_of(c->m, x->fn->sig.params[k].type);
        for (size_t j = 0; h && j < h->nstates; j++)
            if (strcmp(h->states[j].name, sname) == 0) {
                if (!found) hp = k, slot = (unsigned)j, ht = h;
                found++;
            }
    }
    if (!found) {
        perr_note(x, sn->loc,
                  "space: no parameter of the function is a handle whose type has state '%s' "
                  "(types.handles.TYPE.state)%s",
                  sname, "");
        return;
    }
    if (found > 1) {
        perr_note(x, sn->loc,
                  "space: several handle parameters have state '%s': the state to read is "
                  "ambiguous%s",
                  sname, "");
        return;
    }
    int64_t hv, dv;
    if (!resolve_const(c, hs, &hv) || !resolve_const(c, ds, &dv)) {
        perr_note(x, n->loc,
                  "space: host '%s' and device '%s' must be integers, enum constants or integer "
                  "macros",
                  hs, ds);
        return;
    }
    if (hv == dv) {
        perr_note(x, n->loc, "space: host '%s' and device '%s' are the same value", hs, ds);
        return;
    }
    a->kind = PK_COND;
    a->space_state = ht->states[slot].name;
    a->space_host = arena_strdup(c->a, hs);
    a->space_device = arena_strdup(c->a, ds);
    a->space_host_v = hv;
    a->space_device_v = dv;
    a->cond = arena_alloc(c->a, sizeof *a->cond);
    a->cond->text = xasprintf_arena(c->a, "(st_%s_ == (int64_t)(%s))", a->space_state, hs);
    a->cond->loc = n->loc;
    a->then_ann = arena_alloc(c->a, sizeof(param_ann));
    a->else_ann = arena_alloc(c->a, sizeof(param_ann));
    x->in_space = 1;
    apply_ann(x, A, a->then_ann, 0);
    x->in_space = 0;
    if (a->then_ann->kind == PK_COND)
        perr_note(x, n->loc, "`space` and `if` on one parameter: conditions do not nest%s%s", "", "");
    a->else_ann->kind = PK_DEVPTR;
    a->else_ann->loc = n->loc;
    const spec_node *ck_ = spec_get(A, "checked");
    int chk = 1;
    if (ck_ && spec_bool(ck_, "checked", c->d, x->fn->name, x->p->name, &chk))
        a->else_ann->dev_unchecked = !chk;
    function_def *f = x->fn;
    for (size_t k = 0; k < f->nstate_uses; k++)
        if (f->state_uses[k].param == hp && f->state_uses[k].slot == slot) return;
    state_use *u = VEC_PUSH(f->state_uses, f->nstate_uses);
    u->param = hp;
    u->handle_type = ht->name;
    u->slot = slot;
}

static int stream_size(pctx *x, const spec_node *n, const char *what, uint64_t *out)
{
    int64_t v;
    if (spec_is_int(n, &v)) {
        if (v > 0) {
            *out = (uint64_t)v;
            return 1;
        }
    } else if (n->kind == SN_SCALAR && n->str && *n->str) {
        char *end;
        unsigned long long u = strtoull(n->str, &end, 10);
        unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 99;
        if (end != n->str && shift != 99 && !end[1] && u && u < (1ull << 33)) {
            *out = (uint64_t)u << shift;
            return 1;
        }
    }
    perr_note(x, n->loc, "`%s` is a byte count above 0: an integer or a number with a K, M or G suffix%s",
              what, "");
    return 0;
}

/* stream: {host: F, chunk: N, min: M} on a plain in or out buffer. */
/* Reads one `VALUE: [...]`-style list of values (enum constants, integer
 * macros or integers) into hc; returns how many were taken. */
static void case_value_list(pctx *x, const spec_node *vl, src_loc at, const char *what,
                            handle_case *hc)
{
    ck *c = x->c;
    size_t nv = vl && vl->kind == SN_LIST ? vl->n : 1;
    hc->values = arena_alloc(c->a, (nv + 1) * sizeof(char *));
    for (size_t j = 0; j < nv; j++) {
        const spec_node *v = vl && vl->kind == SN_LIST ? vl->items[j] : vl;
        int64_t iv;
        if (!v || v->kind != SN_SCALAR || !resolve_const(c, v->str, &iv) ||
            !(is_c_identifier(v->str) || spec_is_int(v, &iv))) {
            perr_note(x, v ? v->loc : at, "%s: values are enum constants, integer macros or integers%s",
                      what, "");
            continue;
        }
        hc->values[hc->nvalues++] = arena_strdup(c->a, v->str);
    }
}

/* `elem_by: {param: P, handles: {T: [V, ...]}, types: {CTYPE: [V, ...]}, device: [V, ...]}`:
 * the value of P chooses what the buffer's elements are: handles of T
 * (out: real -> id after the call; in/inout: id -> real in a copy before
 * it), plain C values of CTYPE, or device addresses (in/inout: NULL or the
 * client's memory). With `count:` the count is in elements of the chosen
 * type (the buffer is count * sizeof(chosen) bytes) and a value listed
 * nowhere is refused; with `bytes:` the size is the caller's and a value
 * listed nowhere passes as plain bytes (`types:` then needs `count:`). */
static void apply_elem_by(pctx *x, const spec_node *A, const spec_node *n, param_ann *a)
{
    ck *c = x->c;
    if (!((a->kind == PK_IN || a->kind == PK_OUT || a->kind == PK_INOUT) && a->elem == EK_BYTES &&
          !a->terminated)) {
        perr_note(x, spec_key_loc(A, "elem_by"),
                  "`elem_by` applies to in, out and inout buffers of plain bytes, not to a %s "
                  "parameter%s",
                  param_kind_name(a->kind), "");
        return;
    }
    if (!spec_want_map(n, "elem_by", c->d, x->fn->name, x->p->name)) return;
    spec_check_keys(n, elem_by_keys, "elem_by", c->d, x->fn->name, x->p->name);
    const spec_node *pn = spec_get(n, "param"), *hn = spec_get(n, "handles");
    const spec_node *tn = spec_get(n, "types"), *dn = spec_get(n, "device");
    const char *pname_;
    param_def *sel = NULL;
    if (!pn || !(hn || tn || dn)) {
        perr_note(x, n->loc, "`elem_by` needs `param:` (a value parameter) and `handles: {TYPE: "
                  "[VALUE, ...]}`, `types: {C_TYPE: [VALUE, ...]}` or `device: [VALUE, ...]`%s%s",
                  "", "");
        return;
    }
    if (!spec_string(pn, "elem_by.param", c->d, x->fn->name, x->p->name, &pname_)) return;
    for (size_t i = 0; i < x->fn->sig.nparams; i++)
        if (strcmp(x->fn->sig.params[i].name, pname_) == 0) sel = &x->fn->sig.params[i];
    if (!sel || !(sel->type->kind == TY_SINT || sel->type->kind == TY_UINT ||
                  sel->type->kind == TY_ENUM)) {
        perr_note(x, pn->loc, "elem_by.param: '%s' is not an integer parameter of the function%s",
                  pname_, "");
        return;
    }
    a->elem_by_param = sel->name;
    if (hn) {
        a->nelem_by = parse_cases(x, hn, "elem_by.handles", &a->elem_by);
        if (a->kind != PK_OUT && c->m->api.hobj_define)
            perr_note(x, spec_key_loc(n, "handles"),
                      "elem_by.handles on an input buffer: a handle_objects build would send the "
                      "application's objects, not ids%s%s", "", "");
    }
    if (tn && spec_want_map(tn, "elem_by.types", c->d, x->fn->name, x->p->name)) {
        a->elem_by_types = arena_alloc(c->a, (tn->n + 1) * sizeof *a->elem_by_types);
        for (size_t i = 0; i < tn->n; i++) {
            if (!expr_type_name_ok(c->m, tn->keys[i])) {
                perr_note(x, tn->key_locs[i],
                          "elem_by.types: '%s' is not a type of the headers (a typedef, `struct "
                          "X`, or C's own such as `int` or `_Bool`)%s", tn->keys[i], "");
                continue;
            }
            handle_case *hc = &a->elem_by_types[a->nelem_by_types++];
            hc->handle_type = arena_strdup(c->a, tn->keys[i]);
            case_value_list(x, tn->items[i], tn->key_locs[i], "elem_by.types", hc);
        }
    }
    if (dn) {
        if (a->kind == PK_OUT) {
            perr_note(x, dn->loc,
                      "elem_by.device on an output buffer: the addresses a call writes are the "
                      "library's, nothing to check; it applies to in and inout buffers%s%s", "", "");
        } else if (!c->m->api.device_checked) {
            perr_note(x, dn->loc,
                      "elem_by.device: device addresses are checked only under `types.device`%s%s",
                      "", "");
        } else {
            handle_case dc = {0};
            case_value_list(x, dn, dn->loc, "elem_by.device", &dc);
            a->elem_by_device = dc.values;
            a->nelem_by_device = dc.nvalues;
        }
    }
    /* a value chooses one element type */
    size_t total = a->nelem_by_device;
    for (size_t i = 0; i < a->nelem_by; i++) total += a->elem_by[i].nvalues;
    for (size_t i = 0; i < a->nelem_by_types; i++) total += a->elem_by_types[i].nvalues;
    const char **all = xmalloc((total + 1) * sizeof *all);
    size_t k = 0;
    for (size_t i = 0; i < a->nelem_by; i++)
        for (size_t j = 0; j < a->elem_by[i].nvalues; j++) all[k++] = a->elem_by[i].values[j];
    for (size_t i = 0; i < a->nelem_by_types; i++)
        for (size_t j = 0; j < a->elem_by_types[i].nvalues; j++) all[k++] = a->elem_by_types[i].values[j];
    for (size_t j = 0; j < a->nelem_by_device; j++) all[k++] = a->elem_by_device[j];
    for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j < i; j++) {
            int64_t vi = 0, vj = 0;
            resolve_const(c, all[i], &vi);
            resolve_const(c, all[j], &vj);
            if (vi == vj) {
                perr_note(x, n->loc, "elem_by: %s chooses two element types (it is listed twice)%s",
                          all[i], "");
                j = i;
            }
        }
    free(all);
    const spec_node *cn = spec_get(A, "count"), *can = spec_get(A, "count_after");
    if (!cn || cn->kind != SN_SCALAR || spec_get(A, "bytes")) {
        /* `bytes:`: the caller's size; handles and addresses are walked in
         * steps of their own size, other values pass as bytes */
        if (tn)
            perr_note(x, spec_key_loc(n, "types"),
                      "`elem_by.types` sizes the elements: give `count:` (elements of the chosen "
                      "type), not `bytes:`%s%s", "", "");
        return;
    }
    /* the size of one element: (P == V1 || P == V2 ? sizeof(T) : ... : 0) */
    strbuf sz = {0};
    sb_putc(&sz, '(');
    for (size_t i = 0; i < a->nelem_by + a->nelem_by_types + 1; i++) {
        const handle_case *hc = i < a->nelem_by ? &a->elem_by[i]
                                : i < a->nelem_by + a->nelem_by_types ? &a->elem_by_types[i - a->nelem_by]
                                                                      : NULL;
        char *const *vals = hc ? hc->values : a->elem_by_device;
        size_t nv = hc ? hc->nvalues : a->nelem_by_device;
        if (!nv) continue;
        for (size_t j = 0; j < nv; j++) sb_printf(&sz, "%s%s == %s", j ? " || " : "", pname_, vals[j]);
        sb_printf(&sz, " ? sizeof(%s) : ", hc ? hc->handle_type : "void *");
    }
    sb_puts(&sz, "0)");
    char *szs = sb_take(&sz);
    /* the buffer's bytes: count times the chosen size; the element count
     * stays for the check that the value chose a type */
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i].slot == &a->count) {
            spec_node *s2 = arena_alloc(c->a, sizeof *s2);
            *s2 = *cn;
            s2->str = xasprintf_arena(c->a, "(%s) * %s", cn->str, szs);
            s2->quote_cols = 0;
            c->pend[i].node = s2;
            a->count_is_bytes = 1;
        }
    add_pending(x, &a->elem_by_count, cn, 0, "count");
    if (can && can->kind == SN_SCALAR)
        for (size_t i = 0; i < c->npend; i++)
            if (c->pend[i].slot == &a->count_after) {
                spec_node *s2 = arena_alloc(c->a, sizeof *s2);
                *s2 = *can;
                s2->str = xasprintf_arena(c->a, "(%s) * %s", can->str, szs);
                s2->quote_cols = 0;
                c->pend[i].node = s2;
            }
    free(szs);
}

/* `reads: {guest: F, handle: [TYPE, ...]}` on an input of constant `bytes: N`:
 * the stub reads F(h, k) bytes (at most N) of the caller's buffer, h the
 * function's first argument of the k-th listed handle type, into N zeroed
 * bytes that travel. For a scalar whose C type a handle's state decides
 * (a scaling factor that is a double for double data, else a float), so
 * that the stub never reads past the caller's object. */
static void apply_reads(pctx *x, const spec_node *A, const spec_node *n, param_ann *a)
{
    ck *c = x->c;
    const spec_node *bn = spec_get(A, "bytes");
    char *end = NULL;
    unsigned long long max = bn && bn->kind == SN_SCALAR ? strtoull(bn->str, &end, 0) : 0;
    if (a->kind != PK_IN || a->elem != EK_BYTES || !bn || !end || *end || max == 0 || max > 64) {
        perr_note(x, spec_key_loc(A, "reads"),
                  "`reads` applies to an input of plain bytes with a constant `bytes:` of 1 to 64 "
                  "(the most the library reads)%s%s", "", "");
        return;
    }
    if (!spec_want_map(n, "reads", c->d, x->fn->name, x->p->name)) return;
    spec_check_keys(n, reads_keys, "reads", c->d, x->fn->name, x->p->name);
    const spec_node *gn = spec_get(n, "guest"), *hn = spec_get(n, "handle");
    const char *fn_;
    char **types = NULL;
    size_t ntypes = 0;
    if (!gn || !hn || !spec_string(gn, "reads.guest", c->d, x->fn->name, x->p->name, &fn_) ||
        !spec_string_list(hn, "reads.handle", c->d, c->a, &types, &ntypes) || !ntypes) {
        perr_note(x, n->loc, "`reads` needs `guest: F` (a function of the spec's sources) and "
                  "`handle: [TYPE, ...]`%s%s", "", "");
        return;
    }
    if (!is_c_identifier(fn_)) {
        perr_note(x, gn->loc, "reads.guest names a C function of the spec's sources, not '%s'%s", fn_, "");
        return;
    }
    for (size_t k = 0; k < ntypes && !a->reads_param; k++) {
        const handle_type_def *h = model_find_handle(c->m, types[k]);
        if (!h) {
            perr_note(x, hn->loc, "reads.handle: '%s' is not a handle type: list it under "
                      "`types.handles`%s", types[k], "");
            return;
        }
        for (size_t i = 0; i < x->fn->sig.nparams && !a->reads_param; i++)
            if (model_handle_of(c->m, x->fn->sig.params[i].type) == h) {
                a->reads_param = x->fn->sig.params[i].name;
                a->reads_index = (unsigned)k;
            }
    }
    if (!a->reads_param) {
        perr_note(x, hn->loc, "reads.handle: the function takes no handle of the types listed, "
                  "so nothing says how many bytes to read%s%s", "", "");
        return;
    }
    a->reads_fn = arena_strdup(c->a, fn_);
    a->reads_max = max;
}

static void apply_stream(pctx *x, const spec_node *A, const spec_node *n, param_ann *a)
{
    ck *c = x->c;
    if (a->kind == PK_COND) {
        perr_note(x, spec_key_loc(A, "stream"),
                  "`stream` on a conditional parameter: put it inside `then:` or `else:`, on the "
                  "branch that is a buffer%s%s", "", "");
        return;
    }
    if (spec_get(A, "count_after")) {
        perr_note(x, spec_key_loc(A, "stream"),
                  "`stream` refused with `count_after`: a streamed buffer's chunks leave before "
                  "the call returns, so its length cannot depend on what the call says%s%s", "", "");
        return;
    }
    if (!((a->kind == PK_IN || a->kind == PK_OUT) && a->elem == EK_BYTES) || a->terminated) {
        perr_note(x, spec_key_loc(A, "stream"),
                  "`stream` applies to plain in or out buffers (`dir: in|out` with `bytes:` or "
                  "`count:`), not to one passed as '%s'%s",
                  a->terminated ? "terminated list" : param_kind_name(a->kind), "");
        return;
    }
    if (!spec_want_map(n, "stream", c->d, x->fn->name, x->p->name)) {
        x->errors++;
        return;
    }
    spec_check_keys(n, stream_keys, "stream", c->d, x->fn->name, x->p->name);
    const spec_node *hn = spec_get(n, "host"), *cn = spec_get(n, "chunk"), *mn = spec_get(n, "min");
    const char *h;
    if (!hn || !cn) {
        perr_note(x, n->loc, "`stream` needs `host:` (the host hook that takes the chunks) and "
                  "`chunk:` (bytes per chunk)%s%s", "", "");
        return;
    }
    if (!spec_string(hn, "stream.host", c->d, x->fn->name, x->p->name, &h)) {
        x->errors++;
        return;
    }
    if (!is_c_identifier(h)) {
        perr_note(x, hn->loc, "`stream.host` names a C function of the spec's host sources, not '%s'%s",
                  h, "");
        return;
    }
    uint64_t chunk = 0, min = 0;
    if (!stream_size(x, cn, "stream.chunk", &chunk) || (mn && !stream_size(x, mn, "stream.min", &min)))
        return;
    a->stream_host = arena_strdup(c->a, h);
    a->stream_chunk = chunk;
    a->stream_min = mn ? min : chunk;
}

/* A map {HANDLE_TYPE: [VALUE, ...], ...}: values are enum constants,
 * integer macros or integers (emitted as written). Returns the count. */
static size_t parse_cases(pctx *x, const spec_node *n, const char *what, handle_case **out)
{
    ck *c = x->c;
    *out = NULL;
    if (!spec_want_map(n, what, c->d, x->fn->name, x->p->name)) {
        x->errors++;
        return 0;
    }
    handle_case *cs = arena_alloc(c->a, (n->n + 1) * sizeof *cs);
    size_t k = 0;
    for (size_t i = 0; i < n->n; i++) {
        if (!model_find_handle(c->m, n->keys[i])) {
            char *msg = xasprintf("%s: '%s' is not a handle type: list it under `types.handles`%s",
                                  what, n->keys[i],
                                  did_you_mean(suggest_name(n->keys[i], handle_cand,
                                                            c->m->nhandles, c->m)));
            perr_note(x, n->key_locs[i], "%s", msg, NULL);
            free(msg);
            continue;
        }
        handle_case *hc = &cs[k++];
        hc->handle_type = model_find_handle(c->m, n->keys[i])->name;
        const spec_node *vl = n->items[i];
        size_t nv = vl && vl->kind == SN_LIST ? vl->n : 1;
        hc->values = arena_alloc(c->a, (nv + 1) * sizeof(char *));
        for (size_t j = 0; j < nv; j++) {
            const spec_node *v = vl && vl->kind == SN_LIST ? vl->items[j] : vl;
            int64_t iv;
            if (!v || v->kind != SN_SCALAR || !resolve_const(c, v->str, &iv) ||
                !(is_c_identifier(v->str) || spec_is_int(v, &iv))) {
                perr_note(x, v ? v->loc : n->key_locs[i],
                          "%s: values are enum constants, integer macros or integers%s", what, "");
                continue;
            }
            hc->values[hc->nvalues++] = arena_strdup(c->a, v->str);
        }
    }
    *out = cs;
    return k;
}

static int has_out(const param_ann *a)
{
    if (a->kind == PK_OUT || a->kind == PK_INOUT) return 1;
    if (a->kind == PK_COND) return has_out(a->then_ann) || has_out(a->else_ann);
    return 0;
}

static param_def *find_param(function_def *f, const char *name)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        if (strcmp(f->sig.params[i].name, name) == 0) return &f->sig.params[i];
    return NULL;
}

static const char *param_list(function_def *f, strbuf *b)
{
    for (size_t i = 0; i < f->sig.nparams; i++)
        sb_printf(b, "%s%s", i ? ", " : "", f->sig.params[i].name);
    if (!f->sig.nparams) sb_puts(b, "none");
    return b->s;
}

/* The annotation of p: the function entry's, else (a forwarded function's
 * pointer) the `defaults.params` rule of its name, else none. */
static const spec_node *param_node(ck *c, const function_def *f, const spec_node *ps,
                                   const param_def *p)
{
    const spec_node *A = spec_get(ps, p->name);
    if (A || !c->rules || f->mode != FN_FORWARD || !p->name || !is_ptr(p->type)) return A;
    return spec_get(c->rules, p->name);
}

/* `defaults: {pointers: device, params: {NAME: annotation}}` */
static void check_defaults(ck *c, const spec_node *root)
{
    const spec_node *df = spec_get(root, "defaults"), *n;
    if (!df || !spec_want_map(df, "defaults", c->d, NULL, NULL)) return;
    spec_check_keys(df, defaults_keys, "defaults", c->d, NULL, NULL);
    const char *pv;
    if ((n = spec_get(df, "pointers")) && spec_string(n, "defaults.pointers", c->d, NULL, NULL, &pv)) {
        if (strcmp(pv, "device") == 0)
            c->m->api.pointers_device = 1;
        else if (strcmp(pv, "host") != 0)
            diag_error(c->d, n->loc, NULL, NULL,
                       "defaults.pointers: '%s' is not `host` (the defaults' table) or `device` "
                       "(an undecided data pointer is a device address)",
                       pv);
    }
    if ((n = spec_get(df, "params")) && spec_want_map(n, "defaults.params", c->d, NULL, NULL))
        c->rules = n;
}

/* Whether f returns api.errors.type (emit_util.c's returns_error, on the model). */
static int ret_is_error(const api_model *m, const function_def *f)
{
    const char *et = m->api.error_type;
    const type_info *r = f->sig.ret;
    if (!et || r->kind == TY_VOID) return 0;
    return (r->typedef_name && strcmp(r->typedef_name, et) == 0) ||
           (r->spelling && strcmp(r->spelling, et) == 0) ||
           (r->canonical && strcmp(r->canonical, et) == 0);
}

/* `async_check: F` / `async_vouch: F` (key): F, a guest function of the
 * call's parameters, or NULL after a diagnostic (why_not: a reason the key
 * does not apply, or NULL) */
static char *async_guest_fn(ck *c, const function_def *f, const spec_node *n, const char *key,
                            int is_async, const char *why_not)
{
    const char *fn_;
    if (!is_async)
        diag_error(c->d, n->loc, f->name, NULL,
                   "`%s` applies to async calls: give `async: true` or `async_if:` too, or drop it",
                   key);
    else if (why_not)
        diag_error(c->d, n->loc, f->name, NULL, "%s", why_not);
    else if (spec_string(n, key, c->d, f->name, NULL, &fn_)) {
        if (is_c_identifier(fn_)) return arena_strdup(c->a, fn_);
        diag_error(c->d, n->loc, f->name, NULL,
                   "`%s: %s` is not a C function name (a guest function `bool F(<the call's "
                   "parameters>)` in the spec's sources)",
                   key, fn_);
    }
    return NULL;
}

static void check_function(ck *c, function_def *f, const spec_node *E, src_loc key_loc)
{
    diag_sink *d = c->d;
    f->mode = FN_FORWARD;
    if (E) f->ann_loc = key_loc;
    if (E && E->kind != SN_MAP && E->kind != SN_NULL) {
        diag_error(d, E->loc, f->name, NULL, "a function entry is a map (keys: params, async, "
                                             "async_if, local, custom, unsupported, error_out, "
                                             "returns)");
        E = NULL;
    }
    if (E) spec_check_keys(E, fn_keys, "a function entry", d, f->name, NULL);
    const spec_node *n;
    int v, modes = 0;
    if ((n = spec_get(E, "local")) && spec_bool(n, "local", d, f->name, NULL, &v) && v) {
        f->mode = FN_LOCAL;
        modes++;
    }
    if ((n = spec_get(E, "unsupported"))) {
        const char *r;
        if (spec_is_bool(n, &v)) {
            if (v) {
                f->mode = FN_UNSUPPORTED;
                f->reason = arena_strdup(c->a, "not supported remotely");
                modes++;
            }
        } else if (spec_string(n, "unsupported (the reason)", d, f->name, NULL, &r)) {
            f->mode = FN_UNSUPPORTED;
            f->reason = arena_strdup(c->a, r);
            modes++;
        }
    }
    if ((n = spec_get(E, "limits"))) {
        const char *r;
        if (spec_string(n, "limits (what does not work, or what a no-op leaves undone)", d,
                        f->name, NULL, &r))
            f->limits = arena_strdup(c->a, r);
        if (f->limits && f->mode == FN_UNSUPPORTED)
            diag_error(d, n->loc, f->name, NULL,
                       "`limits` on an unsupported function: nothing of it works, and "
                       "`unsupported` already says why; drop one of them");
    }
    if ((n = spec_get(E, "custom"))) {
        const char *g = NULL, *h = NULL;
        if (n->kind == SN_SCALAR) {
            g = h = n->str;
        } else if (spec_want_map(n, "custom", d, f->name, NULL)) {
            spec_check_keys(n, custom_keys, "custom", d, f->name, NULL);
            if (spec_get(n, "guest")) spec_string(spec_get(n, "guest"), "custom.guest", d, f->name, NULL, &g);
            if (spec_get(n, "host")) spec_string(spec_get(n, "host"), "custom.host", d, f->name, NULL, &h);
            if (!g && !h)
                diag_error(d, n->loc, f->name, NULL,
                           "`custom:` names a guest and/or host C function");
        }
        if ((g && !is_c_identifier(g)) || (h && !is_c_identifier(h)))
            diag_error(d, n->loc, f->name, NULL, "`custom:` names must be C identifiers");
        f->mode = FN_CUSTOM;
        f->custom_guest = arena_strdup(c->a, g);
        f->custom_host = arena_strdup(c->a, h);
        modes++;
    }
    if (modes > 1)
        diag_error(d, key_loc, f->name, NULL,
                   "choose one of `local`, `custom` and `unsupported`");
    if ((n = spec_get(E, "internal")) && spec_bool(n, "internal", d, f->name, NULL, &v) && v) {
        if (f->mode != FN_FORWARD)
            diag_error(d, spec_key_loc(E, "internal"), f->name, NULL,
                       "`internal` applies to forwarded functions, not %s ones",
                       fn_mode_name(f->mode));
        f->internal = 1;
    }
    if ((n = spec_get(E, "wrap"))) {
        if (f->mode != FN_FORWARD) {
            diag_error(d, spec_key_loc(E, "wrap"), f->name, NULL,
                       "`wrap` applies to forwarded functions, not %s ones", fn_mode_name(f->mode));
        } else if (spec_want_map(n, "wrap", d, f->name, NULL)) {
            spec_check_keys(n, wrap_keys, "wrap", d, f->name, NULL);
            const spec_node *g = spec_get(n, "guest"), *h = spec_get(n, "host");
            const char *hs;
            if (g) spec_bool(g, "wrap.guest", d, f->name, NULL, &f->wrap_guest);
            if (h && spec_string(h, "wrap.host", d, f->name, NULL, &hs)) {
                if (!is_c_identifier(hs))
                    diag_error(d, h->loc, f->name, NULL, "wrap.host must be a C identifier");
                else
                    f->wrap_host = arena_strdup(c->a, hs);
            }
            if (!g && !h)
                diag_error(d, n->loc, f->name, NULL,
                           "`wrap:` needs `guest: true` and/or `host: NAME`");
        }
    }

    if (f->sig.variadic && f->mode == FN_FORWARD) {
        diag_error(d, E ? key_loc : f->loc, f->name, NULL,
                   "a variadic function cannot be forwarded: mark it `custom:` or "
                   "`unsupported:`");
        if (E) diag_note(d, f->loc, "declared here");
    }

    /* parameter annotations must name real parameters */
    const spec_node *ps = spec_get(E, "params");
    if (ps && !spec_want_map(ps, "params", d, f->name, NULL)) ps = NULL;
    if (ps)
        for (size_t i = 0; i < ps->n; i++)
            if (!find_param(f, ps->keys[i])) {
                strbuf b = {0};
                const char *near = suggest_name(ps->keys[i], param_cand, f->sig.nparams,
                                                (void *)f);
                diag_error(d, ps->key_locs[i], f->name, ps->keys[i],
                           "no such parameter%s (the function's parameters: %s)",
                           did_you_mean(near), param_list(f, &b));
                sb_free(&b);
                diag_note(d, f->loc, "declared here");
            }

    /* privileged: runs only on a server started with --<api.privileged.option> */
    if ((n = spec_get(E, "privileged"))) {
        const char *r;
        if (spec_string(n, "privileged (the reason)", d, f->name, NULL, &r)) {
            const type_info *et = c->m->api.error_ty;
            if (!c->m->api.priv_option)
                diag_error(d, n->loc, f->name, NULL,
                           "privileged: needs api.privileged (the server option that allows "
                           "these calls and the error they return without it)");
            else if (f->mode != FN_FORWARD)
                diag_error(d, n->loc, f->name, NULL,
                           "privileged: only a forwarded function can be privileged (this one is "
                           "%s)", fn_mode_name(f->mode));
            else if (!et || strcmp(f->sig.ret->canonical_unqual, et->canonical_unqual) != 0)
                diag_error(d, n->loc, f->name, NULL,
                           "privileged: the function returns '%s', not the error type: it "
                           "could not report the refusal", f->sig.ret->spelling);
            else
                f->privileged = arena_strdup(c->a, r);
        }
    }

    /* keeps_deferred: never returns an earlier async call's error */
    if ((n = spec_get(E, "keeps_deferred"))) {
        int keep = 0;
        const type_info *et = c->m->api.error_ty;
        if (spec_bool(n, "keeps_deferred", d, f->name, NULL, &keep) && keep) {
            if (f->mode != FN_FORWARD)
                diag_error(d, n->loc, f->name, NULL,
                           "keeps_deferred: only a forwarded function reports deferred errors "
                           "(this one is %s); drop it", fn_mode_name(f->mode));
            else if (!et || strcmp(f->sig.ret->canonical_unqual, et->canonical_unqual) != 0)
                diag_error(d, n->loc, f->name, NULL,
                           "keeps_deferred: the function returns '%s', not the error type, so "
                           "it never reports an async call's error; drop it",
                           f->sig.ret->spelling);
            else
                f->keeps_deferred = 1;
        }
    }

    /* error_out */
    param_def *eo = NULL;
    if ((n = spec_get(E, "error_out"))) {
        const char *en;
        if (spec_string(n, "error_out", d, f->name, NULL, &en)) {
            eo = find_param(f, en);
            if (!eo) {
                diag_error(d, n->loc, f->name, en, "error_out: no such parameter");
                diag_note(d, f->loc, "declared here");
            } else if (!(eo->type->kind == TY_POINTER && c->m->api.error_ty &&
                         strcmp(eo->type->pointee->canonical_unqual,
                                c->m->api.error_ty->canonical_unqual) == 0)) {
                diag_error(d, n->loc, f->name, en,
                           "error_out: '%s' is not a pointer to the error type '%s'",
                           eo->type->spelling, c->m->api.error_type ? c->m->api.error_type : "?");
                diag_note(d, eo->loc, "declared here");
                eo = NULL;
            } else {
                f->error_out = eo->name;
            }
        }
    }

    /* pass 1: kinds; callbacks first so user_data parameters are known */
    pctx x = {c, f, NULL, f->mode == FN_FORWARD, 0, 0};
    for (size_t i = 0; i < f->sig.nparams; i++) {
        param_def *p = &f->sig.params[i];
        const spec_node *A = param_node(c, f, ps, p);
        if (!A || A->kind != SN_MAP || !spec_get(A, "callback")) continue;
        x.p = p;
        apply_ann(&x, A, &p->ann, 0);
    }
    for (size_t i = 0; i < f->sig.nparams; i++) {
        param_def *p = &f->sig.params[i];
        const spec_node *A = param_node(c, f, ps, p);
        if (A && A->kind == SN_MAP && spec_get(A, "callback")) continue;
        x.p = p;
        int is_ud = 0;
        for (size_t k = 0; k < f->sig.nparams; k++)
            if (f->sig.params[k].ann.kind == PK_CALLBACK && f->sig.params[k].ann.user_data_param &&
                strcmp(f->sig.params[k].ann.user_data_param, p->name) == 0)
                is_ud = 1;
        if (is_ud) {
            if (A)
                perr_note(&x, A->loc,
                          "this parameter is a callback's user data; it takes no other "
                          "annotation%s%s",
                          "", "");
            p->ann.kind = PK_USERDATA;
            continue;
        }
        if (p == eo && !A) {
            memset(&p->ann, 0, sizeof p->ann);
            p->ann.kind = PK_OUT;
            p->ann.elem = EK_BYTES;
            p->ann.elem_type = unqual(c, p->type->pointee);
            p->ann.nullable = 1;
            continue;
        }
        apply_ann(&x, A, &p->ann, 0);
    }

    /* returns */
    const type_info *rt = f->sig.ret;
    if ((n = spec_get(E, "returns"))) {
        if (spec_want_map(n, "returns", d, f->name, NULL)) {
            spec_check_keys(n, returns_keys, "returns", d, f->name, NULL);
            const spec_node *hn = spec_get(n, "handle");
            const char *hname;
            if (!hn) {
                diag_error(d, n->loc, f->name, NULL, "`returns:` needs `handle: TYPE`");
            } else if (spec_string(hn, "returns.handle", d, f->name, NULL, &hname)) {
                handle_type_def *h = model_find_handle(c->m, hname);
                if (!h) {
                    diag_error(d, hn->loc, f->name, NULL,
                               "'%s' is not a handle type: list it under `types.handles`%s",
                               hname,
                               did_you_mean(suggest_name(hname, handle_cand, c->m->nhandles, c->m)));
                } else if (model_handle_of(c->m, rt) != h &&
                           strcmp(rt->canonical_unqual, h->type->canonical_unqual) != 0) {
                    diag_error(d, hn->loc, f->name, NULL,
                               "`returns: {handle: %s}` but the function returns '%s'", hname,
                               rt->spelling);
                    diag_note(d, f->loc, "declared here");
                } else {
                    f->ret_handle = h->name;
                }
            }
            const spec_node *cn = spec_get(n, "creates");
            if (cn) spec_bool(cn, "returns.creates", d, f->name, NULL, &f->ret_creates);
        }
    } else {
        handle_type_def *h = model_handle_of(c->m, rt);
        if (h) {
            f->ret_handle = h->name;
        } else if (f->mode == FN_FORWARD && !E && c->m->undecided_unsupported &&
                   (rt->kind == TY_POINTER || rt->kind == TY_FNPTR || rt->kind == TY_ARRAY ||
                    rt->kind == TY_OTHER || (rt->kind == TY_RECORD && !is_plain(rt)))) {
            if (!f->undecided)
                f->undecided = xasprintf_arena(c->a, "returns '%s', which cannot be forwarded",
                                               rt->spelling);
        } else if (f->mode == FN_FORWARD &&
                   (rt->kind == TY_POINTER || rt->kind == TY_FNPTR || rt->kind == TY_ARRAY ||
                    rt->kind == TY_OTHER || (rt->kind == TY_RECORD && !is_plain(rt)))) {
            diag_error(d, E ? key_loc : f->loc, f->name, NULL,
                       "returns '%s', which cannot be forwarded: mark the function `local`, "
                       "`custom` or `unsupported`, or give `returns: {handle: TYPE}`",
                       rt->spelling);
            if (E) diag_note(d, f->loc, "declared here");
        }
    }

    /* on_failure: the value a function that returns no error type gives when the
     * call cannot be made (no server, connection lost, refused), instead of 0,
     * which would read as a real answer (a compressed size of 0) */
    const spec_node *ofn = spec_get(E, "on_failure");
    if (ofn) {
        const type_info *frt = f->sig.ret;
        int scalar = frt->kind == TY_SINT || frt->kind == TY_UINT || frt->kind == TY_BOOL ||
                     frt->kind == TY_ENUM || frt->kind == TY_FLOAT;
        if (f->mode != FN_FORWARD)
            diag_error(d, ofn->loc, f->name, NULL,
                       "`on_failure` applies to forwarded functions, not %s ones (their own "
                       "code decides what to return)", fn_mode_name(f->mode));
        else if (ret_is_error(c->m, f))
            diag_error(d, ofn->loc, f->name, NULL,
                       "`on_failure` refused: the function returns the error type, and a failed "
                       "call returns api.errors' value for it (connection_lost, ...); drop it");
        else if (!scalar || f->ret_handle)
            diag_error(d, ofn->loc, f->name, NULL,
                       "`on_failure` refused: the function returns '%s'; it applies to integer, "
                       "enum and floating-point returns",
                       frt->spelling);
        else if (ofn->kind != SN_SCALAR)
            diag_error(d, ofn->loc, f->name, NULL, "`on_failure:` is a C expression");
        else {
            pending_expr *pe = VEC_PUSH(c->pend, c->npend);
            memset(pe, 0, sizeof *pe);
            pe->slot = &f->on_failure;
            pe->node = ofn;
            pe->fn = f;
            pe->what = "on_failure value";
        }
    }

    /* async */
    const spec_node *an = spec_get(E, "async"), *ain = spec_get(E, "async_if");
    if (an) spec_bool(an, "async", d, f->name, NULL, &f->async);
    if (f->async || ain) {
        src_loc at = f->async ? spec_key_loc(E, "async") : spec_key_loc(E, "async_if");
        const char *k = f->async ? "async" : "async_if";
        if (f->async && ain)
            diag_error(d, at, f->name, NULL, "give `async` or `async_if`, not both");
        if (f->mode != FN_FORWARD)
            diag_error(d, at, f->name, NULL, "`%s` applies to forwarded functions, not %s ones",
                       k, fn_mode_name(f->mode));
        for (size_t i = 0; i < f->sig.nparams; i++) {
            param_ann *pa = &f->sig.params[i].ann;
            if (!has_out(pa)) continue;
            /* one handle the call creates: the guest names it (a guest-assigned id) */
            if (pa->kind == PK_OUT && pa->elem == EK_HANDLE && pa->creates && !pa->count &&
                !pa->count_after) {
                const handle_type_def *h =
                    pa->handle_type ? model_find_handle(c->m, pa->handle_type) : NULL;
                if (h && handle_is_narrow(h)) {
                    diag_error(d, at, f->name, f->sig.params[i].name,
                               "`%s` refused: handle type '%s' is a %u-byte integer, and a "
                               "guest-assigned id needs 64 bits; drop `%s`",
                               k, h->name, (unsigned)h->type->size, k);
                    continue;
                }
                pa->guest_id = 1;
                continue;
            }
            /* an `if:` whose one branch is an output: the call is queued only when
             * the other branch is taken (emit_stub.c adds that to the condition) */
            if (pa->kind == PK_COND && !(has_out(pa->then_ann) && has_out(pa->else_ann)))
                continue;
            diag_error(d, at, f->name, f->sig.params[i].name,
                       "`%s` refused: this parameter is an output, and an async call "
                       "returns before the server answers (only one out handle that the call "
                       "creates, `creates: true`, can be named by the guest); drop `%s`",
                       k, k);
            diag_note(d, f->sig.params[i].loc, "declared here");
        }
        if (f->ret_handle)
            diag_error(d, at, f->name, NULL,
                       "`%s` refused: the function returns a handle, which needs the server's "
                       "answer; drop `%s`",
                       k, k);
        if (ain && ain->kind == SN_SCALAR) {
            pending_expr *pe = VEC_PUSH(c->pend, c->npend);
            pe->slot = &f->async_if;
            pe->node = ain;
            pe->fn = f;
            pe->what = "condition";
        } else if (ain) {
            diag_error(d, ain->loc, f->name, NULL, "`async_if:` is a C expression");
        }
    }
    /* async_check: a guest function of the call's parameters that says whether the
     * call may be queued (else it goes synchronously: the error is its own) */
    const spec_node *ack = spec_get(E, "async_check");
    if (ack) f->async_check = async_guest_fn(c, f, ack, "async_check", f->async || ain, NULL);
    /* async_vouch: a guest function of the call's parameters that says whether
     * the library certainly accepts the call; it is queued as without it, and
     * a vouched one keeps the thread's last error known in the guest */
    const spec_node *avo = spec_get(E, "async_vouch");
    if (avo)
        f->async_vouch = async_guest_fn(
            c, f, avo, "async_vouch", f->async || ain,
            f->async_check ? "`async_vouch` with `async_check`: a call `async_check` passes is "
                             "vouched for already (keep one)"
            : !c->m->api.last_error_get && !c->m->api.last_error_peek
                ? "`async_vouch` says a queued call leaves the last error as it was: only an API "
                  "with `api.errors.last_error` keeps one (drop it)"
                : NULL);
    /* async_unless: a guest function of the call's parameters that says the call
     * must go synchronously now (what the process did, e.g. shared a handle with
     * another process that waits on this call's effect); it vouches for nothing */
    const spec_node *aun = spec_get(E, "async_unless");
    if (aun) f->async_unless = async_guest_fn(c, f, aun, "async_unless", f->async || ain, NULL);
    /* async_repeats: queued only when the same checked values succeeded in a
     * sync call before (runtime/repeat.c) */
    const spec_node *arp = spec_get(E, "async_repeats");
    if (arp && spec_bool(arp, "async_repeats", d, f->name, NULL, &f->async_repeats) &&
        f->async_repeats) {
        if (!f->async && !ain)
            diag_error(d, arp->loc, f->name, NULL,
                       "`async_repeats` applies to async calls: give `async: true` or "
                       "`async_if:` too, or drop it");
        else if (!ret_is_error(c->m, f))
            diag_error(d, arp->loc, f->name, NULL,
                       "`async_repeats` needs a function that returns the API's error type "
                       "(its success marks the values accepted); drop it");
    }
}

/* One handle parameter of type h in f (its index), else reports and returns -1. */
static long state_handle_param(ck *c, const function_def *f, const handle_type_def *h,
                               const state_def *st, const char *role)
{
    long hp = -1;
    int n = 0;
    for (size_t k = 0; k < f->sig.nparams; k++)
        if (f->sig.params[k].ann.kind == PK_HANDLE && f->sig.params[k].ann.handle_type &&
            strcmp(f->sig.params[k].ann.handle_type, h->name) == 0)
            hp = (long)k, n++;
    if (n != 1) {
        diag_error(c->d, st->loc, f->name, NULL,
                   "state '%s': the %s takes %s parameter of handle type '%s' (it needs "
                   "exactly one)",
                   st->name, role, n ? "more than one" : "no", h->name);
        diag_note(c->d, f->loc, "declared here");
        return -1;
    }
    return hp;
}

/* The setter and getter of every `state:`: forwarded, synchronous, returning
 * the error type, with one handle of the type and the named value parameter
 * (a value for the setter, an out pointer to one integer for the getter). */
static void check_states(ck *c)
{
    api_model *m = c->m;
    const type_info *et = m->api.error_ty;
    for (size_t i = 0; i < m->nhandles; i++) {
        handle_type_def *h = &m->handles[i];
        for (size_t j = 0; j < h->nstates; j++) {
            state_def *st = &h->states[j];
            for (int role = 1; role <= 2; role++) {
                const char *fname = role == 1 ? st->set_fn : st->get_fn;
                const char *pname = role == 1 ? st->set_param : st->get_param;
                const char *rn = role == 1 ? "setter" : "getter";
                if (!fname || !pname) continue;
                function_def *f = model_find_function(m, fname);
                if (!f) {
                    diag_error(c->d, st->loc, NULL, NULL,
                               "handle type '%s': state '%s': %s '%s' is not a selected "
                               "function of the headers",
                               h->name, st->name, rn, fname);
                    continue;
                }
                if (f->mode != FN_FORWARD || f->async || f->async_if || f->wrap_guest ||
                    !et || strcmp(f->sig.ret->canonical_unqual, et->canonical_unqual) != 0) {
                    diag_error(c->d, st->loc, f->name, NULL,
                               "state '%s': the %s must be a forwarded, synchronous function "
                               "that returns the error type (the guest follows its successful "
                               "calls)",
                               st->name, rn);
                    continue;
                }
                if (f->state_role) {
                    diag_error(c->d, st->loc, f->name, NULL,
                               "state '%s': the function already sets or gets another state",
                               st->name);
                    continue;
                }
                long hp = state_handle_param(c, f, h, st, rn);
                param_def *vp = find_param(f, pname);
                if (hp < 0) continue;
                int ok = vp != NULL;
                if (ok && role == 1) ok = vp->ann.kind == PK_VALUE;
                if (ok && role == 2)
                    ok = vp->ann.kind == PK_OUT && vp->ann.elem == EK_BYTES && !vp->ann.count &&
                         vp->ann.elem_type &&
                         (vp->ann.elem_type->kind == TY_SINT ||
                          vp->ann.elem_type->kind == TY_UINT || vp->ann.elem_type->kind == TY_ENUM);
                if (!ok) {
                    diag_error(c->d, st->loc, f->name, pname,
                               role == 1 ? "state '%s': the setter's parameter '%s' must be a "
                                           "value (an integer or enum)"
                                         : "state '%s': the getter's parameter '%s' must be an "
                                           "out pointer to one integer or enum",
                               st->name, pname);
                    if (vp) diag_note(c->d, vp->loc, "declared here");
                    continue;
                }
                if (role == 2) st->type = vp->ann.elem_type;
                f->state_role = role;
                f->state_hparam = (size_t)hp;
                f->state_vparam = (size_t)(vp - f->sig.params);
                f->state_htype = h->name;
                f->state_slot = (unsigned)j;
            }
        }
    }
}

/* The annotation of p (or of one of its branches) that streams, dir PK_IN or PK_OUT. */
static const param_ann *stream_of(const param_ann *a, param_kind dir)
{
    if (!a) return NULL;
    if (a->kind == PK_COND) {
        const param_ann *t = stream_of(a->then_ann, dir);
        return t ? t : stream_of(a->else_ann, dir);
    }
    return a->stream_host && a->kind == dir ? a : NULL;
}

/* Whether p (or a branch) leaves the handler a pointer into the request's
 * payload: an in-list or a string. */
static int points_into_payload(const param_ann *a)
{
    if (!a) return 0;
    if (a->kind == PK_COND) return points_into_payload(a->then_ann) || points_into_payload(a->else_ann);
    return a->kind == PK_IN || a->kind == PK_STRING;
}

/* Where a streamed buffer may sit: an in-buffer is the last field of the
 * request and the only one the handler keeps a pointer into (its bytes
 * arrive after the handler started); an out-buffer is the last field of
 * the reply (its chunks leave before the reply). */
static void check_stream_order(ck *c, function_def *f)
{
    for (size_t i = 0; i < f->sig.nparams; i++) {
        param_def *p = &f->sig.params[i];
        const param_ann *in = stream_of(&p->ann, PK_IN), *out = stream_of(&p->ann, PK_OUT);
        const param_ann *s = in ? in : out;
        if (!s) continue;
        if (f->mode != FN_FORWARD) {
            diag_error(c->d, s->loc, f->name, p->name,
                       "`stream` applies to forwarded functions, not %s ones", fn_mode_name(f->mode));
            continue;
        }
        for (size_t k = 0; k < f->sig.nparams; k++) {
            if (k == i) continue;
            param_def *q = &f->sig.params[k];
            const char *why = NULL;
            if (in && points_into_payload(&q->ann))
                why = "an in-buffer that streams must be the function's only in-buffer or string";
            else if (in && k > i && (q->ann.kind == PK_OUT || q->ann.kind == PK_INOUT ||
                                     q->ann.kind == PK_COND))
                why = "an in-buffer that streams must be the last pointer parameter (the last "
                      "field of the request)";
            else if (out && k > i && has_out(&q->ann))
                why = "an out-buffer that streams must be the last output (the last field of "
                      "the reply)";
            if (why) {
                diag_error(c->d, s->loc, f->name, p->name, "`stream` refused: %s, and '%s' is %s",
                           why, q->name, k > i ? "after it" : "another one");
                diag_note(c->d, q->loc, "declared here");
                break;
            }
        }
    }
}

static int is_version_node(const char *p)
{
    if (!*p) return 0;
    for (; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-' || *p == '+'))
            return 0;
    return 1;
}

/* api.library.symbol_versions: {NODE: [fn, ...], ...}, in order. */
static void check_symbol_versions(ck *c, const spec_node *root)
{
    const spec_node *lib = spec_get(spec_get(root, "api"), "library");
    const spec_node *sv = spec_get(lib, "symbol_versions");
    if (!sv || !spec_want_map(sv, "api.library.symbol_versions", c->d, NULL, NULL)) return;
    api_settings *s = &c->m->api;
    if (!s->symbol_version)
        diag_error(c->d, spec_key_loc(lib, "symbol_versions"), NULL, NULL,
                   "api.library.symbol_versions needs api.library.symbol_version (the first "
                   "node, for the functions not listed)");
    s->version_nodes = arena_alloc(c->a, (sv->n + 1) * sizeof(char *));
    for (size_t i = 0; i < sv->n; i++) {
        const char *node = sv->keys[i];
        if (!is_version_node(node) || (s->symbol_version && strcmp(node, s->symbol_version) == 0)) {
            diag_error(c->d, sv->key_locs[i], NULL, NULL,
                       "api.library.symbol_versions: '%s' is not a new version node name", node);
            continue;
        }
        char *nd = arena_strdup(c->a, node);
        s->version_nodes[s->nversion_nodes++] = nd;
        char **fns;
        size_t nf;
        spec_string_list(sv->items[i], "a symbol_versions list", c->d, c->a, &fns, &nf);
        for (size_t k = 0; k < nf; k++) {
            function_def *f = model_find_function(c->m, fns[k]);
            if (!f) {
                diag_error(c->d, spec_item_loc(sv->items[i], fns[k], sv->items[i]->loc), fns[k], NULL,
                           "api.library.symbol_versions.%s: no such function among the selected "
                           "functions of the headers",
                           node);
            } else if (f->symbol_version) {
                diag_error(c->d, spec_item_loc(sv->items[i], fns[k], sv->items[i]->loc), fns[k], NULL,
                           "api.library.symbol_versions: listed under both %s and %s",
                           f->symbol_version, node);
            } else {
                f->symbol_version = nd;
            }
        }
    }
}

static int fn_cmp(const void *a, const void *b)
{
    return strcmp(((const function_def *)a)->name, ((const function_def *)b)->name);
}

/* types.device and the parameters that create and destroy device ranges
 * go together (runtime/SECURITY.md S4). */
static void check_device_ranges(ck *c)
{
    api_model *m = c->m;
    int creators = 0;
    for (size_t i = 0; i < m->nfunctions; i++) {
        function_def *f = &m->functions[i];
        int ndestroys = 0;
        for (size_t k = 0; k < f->sig.nparams; k++) {
            param_ann *a = &f->sig.params[k].ann;
            if (a->elem == EK_DEVPTR && a->creates && (a->kind == PK_OUT || a->kind == PK_INOUT)) {
                creators++;
                if (!m->api.device_checked)
                    diag_error(c->d, a->loc, f->name, f->sig.params[k].name,
                               "`creates` on device addresses needs `types.device` (which turns "
                               "on the per-client check of every device parameter)");
            }
            if (a->kind == PK_DEVPTR && a->destroys) {
                if (!m->api.device_checked)
                    diag_error(c->d, a->loc, f->name, f->sig.params[k].name,
                               "`destroys` on a device address needs `types.device`");
                if (++ndestroys == 2)
                    diag_error(c->d, a->loc, f->name, f->sig.params[k].name,
                               "one device address per function can be `destroys`");
                if (a->extent)
                    diag_error(c->d, a->loc, f->name, f->sig.params[k].name,
                               "a `destroys` device address takes no `bytes:`");
            }
        }
    }
    /* in a family, another member may create the session's device ranges */
    if (m->api.device_checked && !creators && !m->api.family)
        diag_error(c->d, m->api.device_loc, NULL, NULL,
                   "types.device: no parameter creates device addresses (`dir: out, elem: device, "
                   "creates: {bytes: EXPR}`), so every device parameter would be refused (unless "
                   "another API of its api.family creates them)");
}

static char *xasprintf_arena(arena *a, const char *fmt, ...)
{
    va_list ap;
    strbuf b = {0};
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    char *r = arena_strdup(a, b.s ? b.s : "");
    sb_free(&b);
    return r;
}

static char *cat_arena(arena *a, const char *x, const char *y)
{
    char *t = xasprintf("%s%s", x, y);
    char *r = arena_strdup(a, t);
    free(t);
    return r;
}

/* "did you mean": the header's functions that have no entry of their own */
struct fn_cands {
    const api_model *m;
    const spec_node *fns;
};
static const char *fn_cand(void *ctx, size_t i)
{
    const struct fn_cands *fc = ctx;
    const char *n = fc->m->functions[i].name;
    return spec_get(fc->fns, n) ? NULL : n;
}

int check_model(api_model *m, const spec_node *root, diag_sink *d)
{
    unsigned e0 = d->errors;
    ck c = {m, d, m->arena, NULL, 0, NULL, NULL};
    c.byte_type = arena_alloc(c.a, sizeof(type_info));
    c.byte_type->kind = TY_UINT;
    c.byte_type->spelling = c.byte_type->canonical = c.byte_type->canonical_unqual =
        arena_strdup(c.a, "unsigned char");
    c.byte_type->size = c.byte_type->align = 1;

    qsort(m->functions, m->nfunctions, sizeof *m->functions, fn_cmp);
    check_api_late(m, root, d);
    check_errors(&c, root);
    check_handles(&c, root);
    check_destroy_fns(&c);
    check_defaults(&c, root);

    const spec_node *fns = spec_get(root, "functions");
    if (fns && !spec_want_map(fns, "functions", d, NULL, NULL)) fns = NULL;
    const spec_node **entries = xcalloc(m->nfunctions + 1, sizeof *entries);
    src_loc *entry_locs = xcalloc(m->nfunctions + 1, sizeof *entry_locs);
    if (fns)
        for (size_t i = 0; i < fns->n; i++) {
            function_def *f = model_find_function(m, fns->keys[i]);
            if (!f) {
                struct fn_cands fc = {m, fns};
                const char *near = suggest_name(fns->keys[i], fn_cand, m->nfunctions, &fc);
                if (near)
                    diag_warn(d, fns->key_locs[i], fns->keys[i], NULL,
                              "no such function among the selected functions of the headers; "
                              "did you mean '%s'? The annotation matches nothing",
                              near);
                else
                    diag_warn(d, fns->key_locs[i], fns->keys[i], NULL,
                              "no such function among the selected functions of the headers; "
                              "the annotation matches nothing");
                *(char **)VEC_PUSH(m->unmatched, m->nunmatched) = arena_strdup(c.a, fns->keys[i]);
                size_t nl = m->nunmatched - 1;
                *(src_loc *)VEC_PUSH(m->unmatched_locs, nl) = fns->key_locs[i];
                continue;
            }
            entries[f - m->functions] = fns->items[i];
            entry_locs[f - m->functions] = fns->key_locs[i];
        }
    /* a symbol variant without an entry of its own takes its base function's */
    for (size_t i = 0; i < m->nfunctions; i++) {
        function_def *base;
        if (!m->functions[i].variant_of || entries[i]) continue;
        if ((base = model_find_function(m, m->functions[i].variant_of))) {
            entries[i] = entries[base - m->functions];
            entry_locs[i] = entry_locs[base - m->functions];
        }
    }
    for (size_t i = 0; i < m->nfunctions; i++) {
        function_def *f = &m->functions[i];
        check_function(&c, f, entries[i], entry_locs[i]);
        if (f->undecided) {
            /* apigen --undecided-unsupported: the stub still exports it */
            f->mode = FN_UNSUPPORTED;
            f->reason = xasprintf_arena(c.a, "not annotated yet: %s", f->undecided);
            f->async = 0;
            f->async_if = NULL;
            diag_warn(d, f->loc, f->name, NULL,
                      "the defaults cannot decide this new function (%s): generated as "
                      "unsupported; annotate it in the spec",
                      f->undecided);
        }
        /* hand-written names of a variant carry its suffix: foo_memcpy_ptds */
        if (f->variant_of) {
            if (f->custom_guest) f->custom_guest = cat_arena(c.a, f->custom_guest, f->variant_suffix);
            if (f->custom_host) f->custom_host = cat_arena(c.a, f->custom_host, f->variant_suffix);
            if (f->wrap_host) f->wrap_host = cat_arena(c.a, f->wrap_host, f->variant_suffix);
            for (size_t k = 0; k < f->sig.nparams; k++) {
                param_ann *a = &f->sig.params[k].ann, *br[3] = {a, a->then_ann, a->else_ann};
                for (int b = 0; b < 3; b++)
                    if (br[b] && br[b]->stream_host)
                        br[b]->stream_host = cat_arena(c.a, br[b]->stream_host, f->variant_suffix);
            }
        }
        check_stream_order(&c, f);
    }
    check_states(&c);
    check_symbol_versions(&c, root);
    build_proc_table(m, d);
    check_last_error(&c);
    default_destroys(&c);

    /* pass 2: expressions, now that every parameter has its kind */
    for (size_t i = 0; i < c.npend; i++) {
        pending_expr *pe = &c.pend[i];
        int before = strcmp(pe->what, "count") == 0 || strcmp(pe->what, "size") == 0;
        expr_env env = {m, pe->fn, pe->allow_out_deref, before, d, pe->param, pe->what, pe->node->loc, 0};
        env.loc.col += (unsigned)pe->node->quote_cols;
        if (pe->node->kind != SN_SCALAR) {
            diag_error(d, pe->node->loc, pe->fn->name, pe->param, "%s must be a C expression",
                       pe->what);
            continue;
        }
        *pe->slot = expr_parse(&env, pe->node->str);
        if (!*pe->slot) {
            param_def *p = pe->param ? find_param(pe->fn, pe->param) : NULL;
            diag_note(d, p ? p->loc : pe->fn->loc, "declared here");
        }
    }
    free(c.pend);
    free(entry_locs);
    check_device_ranges(&c);
    check_servers(m, root, entries, d);
    check_cache(m, root, entries, d);
    check_thread_state(m, root, entries, d);
    free(entries);

    int id = 1;
    for (size_t i = 0; i < m->nfunctions; i++) {
        function_def *f = &m->functions[i];
        f->call_id = fn_has_call(f) ? id++ : 0;
    }
    return d->errors > e0;
}
