/* apigen_load: spec -> headers -> checks -> validated model. */
#include <stdlib.h>
#include <string.h>

#include "apigen.h"
#include "check.h"
#include "clang_front.h"
#include "progress.h"
#include "spec.h"
#include "util.h"

int apigen_load(const apigen_options *opt, diag_sink *d, api_model *out)
{
    memset(out, 0, sizeof *out);
    if (opt->strict) d->strict = 1;
    out->arena = arena_new();
    out->spec_path = arena_strdup(out->arena, opt->spec_path);
    unsigned e0 = d->errors;
    spec_node *root = spec_load(opt->spec_path, d);
    if (!root) goto fail;
    src_loc *header_locs = NULL, api_loc = {0};
    if (check_api_settings(out, root, d, &header_locs, &api_loc) || !out->api.nheaders) {
        free(header_locs);
        goto fail_tree;
    }
    gen_progress("%s: parsing %zu header%s", opt->spec_path, out->api.nheaders,
                 out->api.nheaders == 1 ? "" : "s");
    char *dir = path_dirname(opt->spec_path);
    int rc = clang_front_parse(out, opt, dir, header_locs, &api_loc, d);
    free(dir);
    free(header_locs);
    if (rc) goto fail_tree;
    out->undecided_unsupported = opt->undecided_unsupported;
    check_resolve_when(out, root, d); /* errors counted; the checks go on */
    gen_progress("%s: checking %zu functions against the spec", opt->spec_path, out->nfunctions);
    check_model(out, root, d);
    if (d->errors > e0) goto fail_tree;
    out->fingerprint = model_fingerprint(out);
    spec_free(root);
    return 0;
fail_tree:
    spec_free(root);
fail:
    model_free(out);
    if (d->errors == e0) d->errors++; /* never report failure without an error */
    return 1;
}
