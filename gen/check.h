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

/* After the front end, before check_model: resolves the spec's version
 * conditions in place over the headers' macros: a map with `when: COND` is
 * dropped when COND is 0 (else `when` is removed), and a list of
 * {when: COND, value: V} maps becomes the first V whose COND holds.
 * api keys read before the headers (name, headers, ...) are left alone.
 * Returns 0 when no error was reported. */
int check_resolve_when(api_model *m, spec_node *root, diag_sink *d);

/* The first `when:` map or choice list in n's tree, or NULL. */
const spec_node *spec_find_conditional(const spec_node *n);

/* After the front end filled the header half: resolves error constants and
 * handle types, decides every parameter, mode, async, returns and call ids;
 * sorts functions by name. Returns 0 when no error was reported. */
int check_model(api_model *m, const spec_node *root, diag_sink *d);

/* api.proc_table: fills m->procs from the typedefs and the exported
 * functions (proc_table.c); warnings for typedefs that pair with nothing. */
void build_proc_table(api_model *m, diag_sink *d);

/* check_servers.c, at the end of check_model: the several-servers
 * vocabulary (`api.ordinals`, `gather:`, `selects:`, `ordinal:`) over the
 * decided parameters; entries[i] is functions[i]'s spec entry (or NULL). */
void check_servers(api_model *m, const spec_node *root, const spec_node *const *entries,
                   diag_sink *d);

/* check_cache.c, after check_servers: `cache:` (answers the guest keeps
 * per server session) over the decided parameters. */
void check_cache(api_model *m, const spec_node *root, const spec_node *const *entries,
                 diag_sink *d);
/* check_thread_state.c, after check_cache: `api.thread_state` and each function's
 * `thread_state:` (per-thread values the guest tracks and answers from). */
void check_thread_state(api_model *m, const spec_node *root, const spec_node *const *entries,
                 diag_sink *d);

#endif
