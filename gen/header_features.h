/* What the parsed headers contain (header_features.c): the names hand-written C
 * and spec conditions test instead of version numbers. */
#ifndef APIGEN_HEADER_FEATURES_H
#define APIGEN_HEADER_FEATURES_H

#include <clang-c/Index.h>

#include "model.h"
#include "util.h"

/* Adds to m->features every declaration of the translation unit outside
 * system headers: APIGEN_HAS_FN_<function>, APIGEN_HAS_TYPE_<typedef, struct,
 * union or enum tag>, APIGEN_HAS_FIELD_<struct>_<field> (anonymous members'
 * fields count as the struct's), APIGEN_HAS_PARAM_<function>_<parameter>,
 * APIGEN_HAS_CONST_<enum constant>. Sorted,
 * each once. */
void features_collect(CXTranslationUnit tu, api_model *m);

/* The text of <api>_features.h: one `#define NAME 1` per feature. */
void features_header(const api_model *m, strbuf *out);

#endif
