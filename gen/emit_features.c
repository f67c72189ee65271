/* <api>_features.h: what the parsed headers declare (header_features.c). */
#include "emit_util.h"
#include "header_features.h"

int emit_features(emit_ctx *e, strbuf *out)
{
    features_header(e->m, out);
    return 0;
}
