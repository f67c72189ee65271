/* Named text fragments with `$var$` substitution, loaded from the templates
 * embedded at build time (templates/NAME.tmpl -> apigen_template_files[]).
 *
 * Template file syntax:
 *   @@ name        starts fragment `name`; its text is every following line
 *                  up to the next `@@` line (newlines kept)
 *   @@- name       the same, without the final newline (inline pieces)
 *   @# ...         a comment line, dropped
 *   $var$          replaced by the value of `var`; `$$` is a literal `$`
 * An unknown fragment or variable, or a variable left unused, is an
 * internal error: the emitters and the templates must agree exactly. */
#ifndef APIGEN_TEMPLATE_H
#define APIGEN_TEMPLATE_H

#include <stdio.h>

#include "util.h"

typedef struct tmpl_frag {
    char *name;
    char *text;
    const char *file; /* template file name, for internal errors */
} tmpl_frag;

typedef struct tmpl_set {
    tmpl_frag *frags;
    size_t nfrags;
} tmpl_set;

/* Parses every embedded template file. Returns 0, or -1 after printing an
 * internal error (duplicate or malformed fragment) to err. */
int tmpl_set_load(tmpl_set *ts, FILE *err);
void tmpl_set_free(tmpl_set *ts);
const tmpl_frag *tmpl_find(const tmpl_set *ts, const char *name);

/* Where fragments are written: a buffer, an indent added to every
 * non-empty line, and a sticky failure flag. */
typedef struct tmpl_out {
    const tmpl_set *ts;
    strbuf *sb;
    int indent;
    int failed;
    FILE *err;
} tmpl_out;

/* Expands fragment `name` with (var, value) pairs ended by NULL. Values
 * are pasted verbatim: escape them first (c_comment / c_string). */
void tmpl_put(tmpl_out *o, const char *name, ...) __attribute__((sentinel));
void tmpl_putv(tmpl_out *o, const char *name, const char *const *kv, size_t npairs);

/* Text safe inside a C block comment: no comment end, no newlines,
 * no control characters. Returns a heap string. */
char *c_comment(const char *s);
/* Text safe between double quotes in C: backslashes, quotes, newlines,
 * control characters and '?' (trigraphs) escaped. Returns a heap string. */
char *c_string(const char *s);
/* Text safe in a Markdown table cell: '|' and newlines escaped. */
char *md_cell(const char *s);

#endif
