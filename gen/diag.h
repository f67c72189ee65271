/* Diagnostics for people: `file:line:col: error: function: parameter 'p': what`
 * with an optional `note:` at a second location, many per run, capped. */
#ifndef APIGEN_DIAG_H
#define APIGEN_DIAG_H

#include <stdio.h>

#include "model.h"

typedef struct diag_sink {
    FILE *out;            /* stderr by default */
    unsigned errors;
    unsigned warnings;
    unsigned max_errors;  /* stop reporting (not checking) after this many; 0 = 50 */
    int strict;           /* warnings of the "matches nothing" kind become errors */
} diag_sink;

void diag_init(diag_sink *d, FILE *out);

/* fn and param may be NULL. The message is printf-style, no trailing newline. */
void diag_error(diag_sink *d, src_loc at, const char *fn, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A warning that --strict turns into an error (annotations matching nothing). */
void diag_warn(diag_sink *d, src_loc at, const char *fn, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A note about the previous diagnostic, at a second location (header declaration). */
void diag_note(diag_sink *d, src_loc at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
