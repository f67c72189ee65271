/* <api>.map: ELF version script exporting exactly the header's functions
 * (forwarded, local, custom, unsupported) and the spec's extra_symbols and
 * private_symbols. */
#include <stdlib.h>
#include <string.h>

#include "emit_util.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int emit_map(emit_ctx *e, strbuf *out)
{
    const api_model *m = e->m;
    emit_begin(e, out);
    const char *node = m->api.symbol_version ? m->api.symbol_version : "";
    for (const char *p = node; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-' || *p == '+'))
            emit_internal(e, "symbol_version '%s' is not a version node name", node);
    tmpl_put(&e->o, "map_head", "api", m->api.name, "stamp", e->stamp, "spec", e->spec, "node",
             node, NULL);
    size_t n = m->nfunctions + m->api.nextra_symbols + m->api.nprivate_symbols;
    const char **syms = xcalloc(n + 1, sizeof *syms);
    /* node 0 is api.symbol_version (with the extra symbols), node k the
     * k-th of api.symbol_versions; each later node inherits the one before */
    for (size_t node_i = 0; node_i <= m->api.nversion_nodes; node_i++) {
        const char *vn = node_i ? m->api.version_nodes[node_i - 1] : NULL;
        size_t k = 0;
        for (size_t i = 0; i < m->nfunctions; i++) {
            const char *fv = m->functions[i].symbol_version;
            if (m->functions[i].internal) continue; /* never exported */
            if ((!vn && !fv) || (vn && fv && strcmp(vn, fv) == 0)) syms[k++] = m->functions[i].name;
        }
        for (size_t i = 0; !vn && i < m->api.nextra_symbols; i++) {
            if (!is_c_identifier(m->api.extra_symbols[i])) {
                emit_internal(e, "extra symbol '%s' is not a C identifier", m->api.extra_symbols[i]);
                continue;
            }
            syms[k++] = m->api.extra_symbols[i];
        }
        for (size_t i = 0; !vn && i < m->api.nprivate_symbols; i++)
            if (is_c_identifier(m->api.private_symbols[i])) syms[k++] = m->api.private_symbols[i];
        if (k) qsort(syms, k, sizeof *syms, cmp_str);
        if (vn)
            tmpl_put(&e->o, "map_node_open", "node", vn, NULL);
        for (size_t i = 0; i < k; i++)
            if (i == 0 || strcmp(syms[i], syms[i - 1]) != 0)
                tmpl_put(&e->o, "map_symbol", "name", syms[i], NULL);
        if (!vn)
            tmpl_put(&e->o, "map_tail", NULL);
        else
            tmpl_put(&e->o, "map_node_close", "parent",
                     node_i > 1 ? m->api.version_nodes[node_i - 2] : node, NULL);
    }
    free(syms);
    return e->o.failed || e->failed ? -1 : 0;
}
