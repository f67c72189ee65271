/* The generator as a library: load (parse header + spec, check) then emit.
 * main.c is a thin CLI over these two calls; tests call them directly. */
#ifndef APIGEN_H
#define APIGEN_H

#include <stddef.h>

#include "diag.h"
#include "model.h"

typedef struct apigen_options {
    const char *spec_path;
    const char *out_dir;
    int strict;                     /* unmatched annotations are errors */
    const char **extra_include_dirs;/* -I on the command line, searched first */
    size_t nextra_include_dirs;
    const char **extra_defines;     /* -D on the command line */
    size_t nextra_defines;
    int undecided_unsupported;      /* unannotated functions the defaults cannot decide become
                                       unsupported (warned) instead of errors */
    const char *compare_dir;        /* --compare: the previous output folder (NULL: out_dir's
                                       own previous output, when there is one) */
} apigen_options;

/* Parses the spec and its headers, applies annotations and defaults, and
 * validates. Returns 0 on success; on failure the sink holds the errors and
 * the model is freed. */
int apigen_load(const apigen_options *opt, diag_sink *d, api_model *out);

/* Writes every artifact into opt->out_dir through temporary files renamed
 * into place only when all of them were written. Returns 0 on success. */
int apigen_emit(const api_model *m, const apigen_options *opt, diag_sink *d);

#endif
