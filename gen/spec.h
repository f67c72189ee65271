/* The spec file as a small tree with a location on every node (libyaml's
 * document API), plus typed accessors that report errors with locations. */
#ifndef APIGEN_SPEC_H
#define APIGEN_SPEC_H

#include <stdint.h>

#include "diag.h"
#include "model.h"

typedef enum spec_kind { SN_NULL, SN_SCALAR, SN_LIST, SN_MAP } spec_kind;

typedef struct spec_node {
    spec_kind kind;
    char *str;              /* SN_SCALAR: the text */
    int plain;              /* SN_SCALAR: unquoted (so `true`, `12` are typed) */
    int quote_cols;         /* columns before the text starts (1 for a quoted scalar) */
    src_loc loc;            /* start of the node */
    struct spec_node **items; /* SN_LIST items, SN_MAP values */
    char **keys;            /* SN_MAP keys */
    src_loc *key_locs;      /* SN_MAP key locations */
    size_t n;
} spec_node;

/* Loads `path`. Malformed YAML is reported at libyaml's problem mark; returns
 * NULL on any error. An empty file gives an empty map. */
spec_node *spec_load(const char *path, diag_sink *d);
void spec_free(spec_node *n);

/* Map lookup (NULL when absent or n is not a map). */
spec_node *spec_get(const spec_node *n, const char *key);
src_loc spec_key_loc(const spec_node *n, const char *key); /* key's location, or n's */
const char *spec_kind_name(spec_kind k);

/* Reports every key of map `n` not in `allowed` (NULL-terminated):
 * "unknown key 'k' in <what>; allowed: a, b, c". Returns the number found. */
int spec_check_keys(const spec_node *n, const char *const *allowed, const char *what,
                    diag_sink *d, const char *fn, const char *param);

/* Typed reads: each reports "'key' must be a <type>" and returns 0 on error. */
int spec_want_map(const spec_node *n, const char *what, diag_sink *d, const char *fn,
                  const char *param);
int spec_string(const spec_node *n, const char *what, diag_sink *d, const char *fn,
                const char *param, const char **out);
int spec_bool(const spec_node *n, const char *what, diag_sink *d, const char *fn,
              const char *param, int *out);
int spec_int(const spec_node *n, const char *what, diag_sink *d, const char *fn,
             const char *param, int64_t *out);
/* A list of strings; a single string is a list of one. The array and the
 * strings are allocated in arena `a` (the model's). */
struct arena;
/* Where the scalar `value` is written inside n (a list item, at any depth),
 * else fallback: errors about one item of a list point at that item. */
src_loc spec_item_loc(const spec_node *n, const char *value, src_loc fallback);
int spec_string_list(const spec_node *n, const char *what, diag_sink *d, struct arena *a,
                     char ***out, size_t *count);
/* Whether a scalar reads as a YAML boolean / integer (for typed unions). */
int spec_is_bool(const spec_node *n, int *v);
int spec_is_int(const spec_node *n, int64_t *v);

#endif
