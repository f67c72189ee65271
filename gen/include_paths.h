/* Isolated include paths for the libclang parse (include_paths.c). */
#ifndef APIGEN_INCLUDE_PATHS_H
#define APIGEN_INCLUDE_PATHS_H

#include <clang-c/Index.h>
#include <stddef.h>
#include <stdlib.h>

#include "diag.h"

/* Appends the clang arguments that limit the search to the given -I folders,
 * the compiler's built-in headers (resource_dir/include) and, last, the C
 * library's folders. */
void include_paths_args(char ***args, size_t *nargs, const char *resource_dir);

/* "dir1, dir2, the compiler's built-in ..., the C library's ..." (malloc'd):
 * what a "not found" error names. */
char *include_paths_searched(char *const *dirs, size_t ndirs, const char *resource_dir);

/* After the parse: a file taken from the C library's folders that is no C
 * library header (a vendor header installed there) is an error naming it.
 * Returns 1 when errors were reported. */
int include_paths_check(CXTranslationUnit tu, char *const *dirs, size_t ndirs,
                        const char *resource_dir, diag_sink *d);

#endif
