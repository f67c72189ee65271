#include "spec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "suggest.h"
#include "util.h"

const char *spec_kind_name(spec_kind k)
{
    switch (k) {
    case SN_NULL: return "nothing";
    case SN_SCALAR: return "scalar";
    case SN_LIST: return "list";
    case SN_MAP: return "map";
    }
    return "?";
}

static src_loc mark_loc(const char *file, yaml_mark_t m)
{
    src_loc l = {file, (unsigned)m.line + 1, (unsigned)m.column + 1};
    return l;
}

static spec_node *convert(yaml_document_t *doc, yaml_node_t *yn, const char *file, int depth,
                          diag_sink *d, int *bad)
{
    spec_node *n = xcalloc(1, sizeof *n);
    n->loc = mark_loc(file, yn->start_mark);
    if (depth > 64) {
        diag_error(d, n->loc, NULL, NULL, "nesting too deep (aliases in a loop?)");
        *bad = 1;
        return n;
    }
    switch (yn->type) {
    case YAML_NO_NODE:
        n->kind = SN_NULL;
        break;
    case YAML_SCALAR_NODE: {
        n->kind = SN_SCALAR;
        n->str = xstrndup((const char *)yn->data.scalar.value, yn->data.scalar.length);
        n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        n->quote_cols = (yn->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                         yn->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE);
        if (n->plain && (strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
                         n->str[0] == 0)) {
            n->kind = SN_NULL;
        }
        break;
    }
    case YAML_SEQUENCE_NODE:
        n->kind = SN_LIST;
        for (yaml_node_item_t *it = yn->data.sequence.items.start;
             it < yn->data.sequence.items.top; it++) {
            spec_node *c = convert(doc, yaml_document_get_node(doc, *it), file, depth + 1, d, bad);
            size_t k = n->n;
            *(spec_node **)VEC_PUSH(n->items, k) = c;
            n->n = k;
        }
        break;
    case YAML_MAPPING_NODE:
        n->kind = SN_MAP;
        for (yaml_node_pair_t *p = yn->data.mapping.pairs.start; p < yn->data.mapping.pairs.top;
             p++) {
            yaml_node_t *kn = yaml_document_get_node(doc, p->key);
            yaml_node_t *vn = yaml_document_get_node(doc, p->value);
            src_loc kl = mark_loc(file, kn->start_mark);
            if (kn->type != YAML_SCALAR_NODE) {
                diag_error(d, kl, NULL, NULL, "map keys must be plain names");
                *bad = 1;
                continue;
            }
            char *key = xstrndup((const char *)kn->data.scalar.value, kn->data.scalar.length);
            int dup = 0;
            for (size_t i = 0; i < n->n; i++)
                if (strcmp(n->keys[i], key) == 0) {
                    diag_error(d, kl, NULL, NULL, "duplicate key '%s'", key);
                    diag_note(d, n->key_locs[i], "first given here");
                    *bad = 1;
                    dup = 1;
                }
            if (dup) {
                free(key);
                continue;
            }
            size_t k = n->n, k2 = n->n, k3 = n->n;
            *(spec_node **)VEC_PUSH(n->items, k) =
                convert(doc, vn, file, depth + 1, d, bad);
            *(char **)VEC_PUSH(n->keys, k2) = key;
            *(src_loc *)VEC_PUSH(n->key_locs, k3) = kl;
            n->n = k;
        }
        break;
    }
    return n;
}

spec_node *spec_load(const char *path, diag_sink *d)
{
    const char *file = intern(path);
    src_loc floc = {file, 0, 0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_error(d, floc, NULL, NULL, "cannot open spec: %s", strerror(errno));
        return NULL;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        diag_error(d, floc, NULL, NULL, "cannot initialize the YAML parser");
        return NULL;
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        src_loc at = mark_loc(file, parser.problem_mark);
        if (parser.context)
            diag_error(d, at, NULL, NULL, "malformed YAML: %s %s", parser.problem,
                       parser.context);
        else
            diag_error(d, at, NULL, NULL, "malformed YAML: %s",
                       parser.problem ? parser.problem : "cannot parse");
        if (parser.context) diag_note(d, mark_loc(file, parser.context_mark), "%s", "started here");
        yaml_parser_delete(&parser);
        fclose(f);
        return NULL;
    }
    spec_node *root = NULL;
    int bad = 0;
    yaml_node_t *r = yaml_document_get_root_node(&doc);
    if (!r) {
        root = xcalloc(1, sizeof *root);
        root->kind = SN_MAP;
        root->loc = (src_loc){file, 1, 1};
    } else {
        root = convert(&doc, r, file, 0, d, &bad);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    if (!bad && root->kind == SN_NULL) root->kind = SN_MAP;
    if (!bad && root->kind != SN_MAP) {
        diag_error(d, root->loc, NULL, NULL, "a spec is a map with keys api, types, functions");
        bad = 1;
    }
    if (bad) {
        spec_free(root);
        return NULL;
    }
    return root;
}

void spec_free(spec_node *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) {
        spec_free(n->items[i]);
        if (n->keys) free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->key_locs);
    free(n->str);
    free(n);
}

spec_node *spec_get(const spec_node *n, const char *key)
{
    if (!n || n->kind != SN_MAP) return NULL;
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->keys[i], key) == 0) return n->items[i];
    return NULL;
}

src_loc spec_key_loc(const spec_node *n, const char *key)
{
    if (n && n->kind == SN_MAP)
        for (size_t i = 0; i < n->n; i++)
            if (strcmp(n->keys[i], key) == 0) return n->key_locs[i];
    return n ? n->loc : (src_loc){0};
}

/* "did you mean" over a NULL-terminated list of allowed keys */
static const char *allowed_cand(void *ctx, size_t i)
{
    return ((const char *const *)ctx)[i];
}

int spec_check_keys(const spec_node *n, const char *const *allowed, const char *what,
                    diag_sink *d, const char *fn, const char *param)
{
    if (!n || n->kind != SN_MAP) return 0;
    int bad = 0;
    for (size_t i = 0; i < n->n; i++) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, n->keys[i]) == 0) ok = 1;
        if (ok) continue;
        strbuf b = {0};
        for (const char *const *a = allowed; *a; a++) {
            if (a != allowed) sb_puts(&b, ", ");
            sb_puts(&b, *a);
        }
        size_t na = 0;
        while (allowed[na]) na++;
        const char *near = suggest_name(n->keys[i], allowed_cand, na, (void *)allowed);
        if (near)
            diag_error(d, n->key_locs[i], fn, param,
                       "unknown key '%s' in %s; did you mean '%s'? Allowed: %s", n->keys[i], what,
                       near, b.s ? b.s : "");
        else
            diag_error(d, n->key_locs[i], fn, param, "unknown key '%s' in %s; allowed: %s",
                       n->keys[i], what, b.s ? b.s : "");
        sb_free(&b);
        bad++;
    }
    return bad;
}

int spec_want_map(const spec_node *n, const char *what, diag_sink *d, const char *fn,
                  const char *param)
{
    if (n && (n->kind == SN_MAP || n->kind == SN_NULL)) return 1;
    diag_error(d, n ? n->loc : (src_loc){0}, fn, param, "%s must be a map, not a %s", what,
               n ? spec_kind_name(n->kind) : "nothing");
    return 0;
}

int spec_string(const spec_node *n, const char *what, diag_sink *d, const char *fn,
                const char *param, const char **out)
{
    if (n && n->kind == SN_SCALAR) {
        *out = n->str;
        return 1;
    }
    diag_error(d, n ? n->loc : (src_loc){0}, fn, param, "%s must be a string, not a %s", what,
               n ? spec_kind_name(n->kind) : "nothing");
    return 0;
}

int spec_is_bool(const spec_node *n, int *v)
{
    if (!n || n->kind != SN_SCALAR || !n->plain) return 0;
    static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "on", NULL};
    static const char *const f[] = {"false", "False", "FALSE", "no", "No", "off", NULL};
    for (int i = 0; t[i]; i++)
        if (strcmp(n->str, t[i]) == 0) return *v = 1, 1;
    for (int i = 0; f[i]; i++)
        if (strcmp(n->str, f[i]) == 0) return *v = 0, 1;
    return 0;
}

int spec_bool(const spec_node *n, const char *what, diag_sink *d, const char *fn,
              const char *param, int *out)
{
    if (spec_is_bool(n, out)) return 1;
    diag_error(d, n ? n->loc : (src_loc){0}, fn, param, "%s must be true or false", what);
    return 0;
}

int spec_is_int(const spec_node *n, int64_t *v)
{
    if (!n || n->kind != SN_SCALAR || !n->plain || !n->str[0]) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(n->str, &end, 0);
    if (*end || errno) {
        unsigned long long u = strtoull(n->str, &end, 0);
        if (*end || errno || n->str[0] == '-') return 0;
        x = (long long)u;
    }
    *v = (int64_t)x;
    return 1;
}

int spec_int(const spec_node *n, const char *what, diag_sink *d, const char *fn,
             const char *param, int64_t *out)
{
    if (spec_is_int(n, out)) return 1;
    diag_error(d, n ? n->loc : (src_loc){0}, fn, param, "%s must be an integer", what);
    return 0;
}

int spec_string_list(const spec_node *n, const char *what, diag_sink *d, struct arena *a,
                     char ***out, size_t *count)
{
    *out = NULL;
    *count = 0;
    if (!n || n->kind == SN_NULL) return 1;
    if (n->kind == SN_SCALAR) {
        *out = arena_alloc(a, sizeof(char *));
        (*out)[0] = arena_strdup(a, n->str);
        *count = 1;
        return 1;
    }
    if (n->kind != SN_LIST) {
        diag_error(d, n->loc, NULL, NULL, "%s must be a list of strings", what);
        return 0;
    }
    int ok = 1;
    *out = arena_alloc(a, (n->n ? n->n : 1) * sizeof(char *));
    for (size_t i = 0; i < n->n; i++) {
        if (n->items[i]->kind != SN_SCALAR) {
            diag_error(d, n->items[i]->loc, NULL, NULL, "%s must be a list of strings", what);
            ok = 0;
            continue;
        }
        (*out)[(*count)++] = arena_strdup(a, n->items[i]->str);
    }
    return ok;
}

/* The location of the scalar `value` inside n (an item of a list, at any
 * depth), else `fallback`: an error about one item points at that item. */
src_loc spec_item_loc(const spec_node *n, const char *value, src_loc fallback)
{
    if (!n || !value) return fallback;
    if (n->kind == SN_SCALAR) return strcmp(n->str, value) == 0 ? n->loc : fallback;
    if (n->kind != SN_LIST && n->kind != SN_MAP) return fallback;
    for (size_t i = 0; i < n->n; i++) {
        src_loc l = spec_item_loc(n->items[i], value, (src_loc){0});
        if (l.file) return l;
    }
    return fallback;
}
