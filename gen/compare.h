/* The model snapshot (<api>_model.txt: one line per function and per struct
 * layout the functions reach, plus the API's version) and the change report
 * of `apigen --compare PREV_DIR`: what a new header version added, removed
 * and changed against a previous run's snapshot. */
#ifndef APIGEN_COMPARE_H
#define APIGEN_COMPARE_H

#include <stdio.h>

#include "diag.h"
#include "model.h"
#include "util.h"

/* Appends the snapshot text of a validated model to b. */
void model_snapshot(const api_model *m, strbuf *b);

/* Compares m with the snapshot at prev_path and prints the report to out.
 * A declaration that changed under a spec annotation is an error on d
 * (naming both declarations); everything else is information. verbose:
 * also say "no changes". Returns -1 when prev_path cannot be read, else
 * the number of errors reported. */
int model_compare(const api_model *m, const char *prev_path, FILE *out, diag_sink *d, int verbose);

#endif
