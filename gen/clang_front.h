/* libclang front end: parses the spec's headers and fills the header half of
 * the model (functions, types, enums, typedefs, integer macros). */
#ifndef APIGEN_CLANG_FRONT_H
#define APIGEN_CLANG_FRONT_H

#include "apigen.h"
#include "diag.h"
#include "model.h"

/* m->api (headers, include_dirs, defines, clang_args, select) must be filled.
 * spec_dir: the spec file's directory (spec paths are relative to it).
 * header_locs[i]: where m->api.headers[i] was written in the spec (for
 * "not found"). Returns 0 on success; errors go to d. Functions are left in
 * header order (check.c sorts them). */
int clang_front_parse(api_model *m, const apigen_options *opt, const char *spec_dir,
                      const src_loc *header_locs, const src_loc *api_loc, diag_sink *d);

/* The resource directory found for the running libclang (stddef.h & co), or NULL. */
const char *clang_front_resource_dir(void);

#endif
