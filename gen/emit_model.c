/* <api>_model.txt: the snapshot `apigen --compare` reads (compare.c). */
#include "compare.h"
#include "emit_util.h"

int emit_model(emit_ctx *e, strbuf *out)
{
    model_snapshot(e->m, out);
    return 0;
}
