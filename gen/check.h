/* All the rules: spec settings, annotations and defaults -> validated model.
 * Emitters only assert what is decided here. */
#ifndef APIGEN_CHECK_H
#define APIGEN_CHECK_H

#include "diag.h"
#include "model.h"
#include "spec.h"

/* Reads `api:` (before the headers are parsed). header_locs receives a heap
 * array with the spec location of each header (free it). Returns 0 when
 * the settings are usable. */
int check_api_settings(api_model *m, const spec_node *root, diag_sink *d, src_loc **header_locs,
                       src_loc *api_loc);

/* After the front end filled the header half: resolves error constants and
 * handle types, decides every parameter, mode, async, returns and call ids;
 * sorts functions by name. Returns 0 when no error was reported. */
int check_model(api_model *m, const spec_node *root, diag_sink *d);

#endif
