/* api.proc_table: the (name, version, variant) -> function table an
 * entry-point query needs (an API whose library hands out its functions by
 * name and ABI version). The spec names a header of function-pointer
 * typedefs and their naming pattern, "PREFIX{name}MIDDLE{version}" plus
 * optionally one of api.variants.suffixes. For each name, the typedefs in
 * ascending version are paired, in order, with the functions <name>,
 * <name>_v2, <name>_v3, ... of the same canonical type (a form whose type
 * differs is skipped); a typedef with a variant suffix is the variant of the
 * newest plain one at or below its version. Typedefs that pair with nothing
 * are warnings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diag.h"
#include "model.h"
#include "util.h"

typedef struct ptd {
    const typedef_def *td;
    char *name;
    long version;
    unsigned suffix;
} ptd;

static int cmp_ptd(const void *a, const void *b)
{
    const ptd *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->suffix != y->suffix) return x->suffix < y->suffix ? -1 : 1;
    return x->version < y->version ? -1 : x->version > y->version;
}

/* Splits a typedef name by the pattern; 0 if it does not match. */
static int split(const api_settings *s, const char *tn, arena *a, ptd *out)
{
    const char *pn = strstr(s->proc_pattern, "{name}"), *pv = strstr(s->proc_pattern, "{version}");
    size_t lpre = (size_t)(pn - s->proc_pattern), lmid = (size_t)(pv - pn - 6);
    const char *mid = pn + 6;
    size_t n = strlen(tn);
    if (n <= lpre || strncmp(tn, s->proc_pattern, lpre) != 0) return 0;
    unsigned suffix = 0;
    for (size_t i = 0; i < s->nvariant_suffixes && !suffix; i++) {
        size_t sl = strlen(s->variant_suffixes[i]);
        if (n > sl && strcmp(tn + n - sl, s->variant_suffixes[i]) == 0) {
            suffix = (unsigned)i + 1;
            n -= sl;
        }
    }
    size_t d = n;
    while (d > 0 && tn[d - 1] >= '0' && tn[d - 1] <= '9') d--;
    if (d == n || n - d > 9 || d < lpre + lmid || strncmp(tn + d - lmid, mid, lmid) != 0) return 0;
    size_t nl = d - lmid - lpre;
    if (!nl) return 0;
    char *name = arena_alloc(a, nl + 1);
    memcpy(name, tn + lpre, nl);
    name[nl] = 0;
    *out = (ptd){NULL, name, strtol(tn + d, NULL, 10), suffix};
    return 1;
}

/* the exported function called `name`, or NULL */
static function_def *exported(api_model *m, const char *name)
{
    function_def *f = model_find_function(m, name);
    return f && !f->internal ? f : NULL;
}

static char *cat(arena *a, const char *x, const char *y)
{
    size_t lx = strlen(x), ly = strlen(y);
    char *r = arena_alloc(a, lx + ly + 1);
    memcpy(r, x, lx);
    memcpy(r + lx, y, ly + 1);
    return r;
}

static char *form_name(arena *a, const char *name, int k)
{
    char v[16] = "";
    if (k > 1) snprintf(v, sizeof v, "_v%d", k);
    return cat(a, name, v);
}

void build_proc_table(api_model *m, diag_sink *d)
{
    const api_settings *s = &m->api;
    if (!s->proc_pattern) return;
    ptd *ts = NULL;
    size_t nt = 0;
    for (size_t i = 0; i < m->ntypedefs; i++) {
        const typedef_def *td = &m->typedefs[i];
        ptd p;
        if (!td->type || td->type->kind != TY_FNPTR || !td->type->fn) continue;
        if (!split(s, td->name, m->arena, &p)) continue;
        p.td = td;
        *(ptd *)VEC_PUSH(ts, nt) = p;
    }
    if (!nt)
        diag_warn(d, s->proc_loc, NULL, NULL,
                  "api.proc_table: no function-pointer typedef of '%s' is named like '%s'",
                  s->proc_header, s->proc_pattern);
    if (nt) qsort(ts, nt, sizeof *ts, cmp_ptd);
    for (size_t i = 0; i < nt;) {
        size_t j = i;
        while (j < nt && strcmp(ts[j].name, ts[i].name) == 0) j++;
        /* plain typedefs first (suffix 0 sorts first), in ascending version */
        size_t first_proc = m->nprocs;
        int k = 1;
        for (size_t t = i; t < j && ts[t].suffix == 0; t++) {
            function_def *f = NULL;
            for (; k < 64; k++) {
                f = exported(m, form_name(m->arena, ts[t].name, k));
                if (f && fn_sig_equal(&f->sig, ts[t].td->type->fn)) break;
                f = NULL;
            }
            if (!f) {
                diag_warn(d, ts[t].td->loc, NULL, NULL,
                          "api.proc_table: %s matches no exported function %s, %s_v2, ... of "
                          "its type (after the earlier versions' forms)",
                          ts[t].td->name, ts[t].name, ts[t].name);
                k = 1; /* the next version starts over */
                continue;
            }
            *(proc_entry *)VEC_PUSH(m->procs, m->nprocs) =
                (proc_entry){ts[t].name, ts[t].version, 0, f->name, ts[t].td->name};
            k++;
        }
        size_t nplain = m->nprocs - first_proc;
        for (size_t t = i; t < j; t++) {
            if (!ts[t].suffix) continue;
            const char *suf = s->variant_suffixes[ts[t].suffix - 1];
            function_def *f = NULL;
            for (size_t q = nplain; q-- > 0 && !f;) {
                const proc_entry *pe = &m->procs[first_proc + q];
                if (pe->version > ts[t].version) continue;
                function_def *c = exported(m, cat(m->arena, pe->symbol, suf));
                if (c && fn_sig_equal(&c->sig, ts[t].td->type->fn)) f = c;
            }
            if (!f) {
                diag_warn(d, ts[t].td->loc, NULL, NULL,
                          "api.proc_table: %s matches no exported %s form of %s of its type",
                          ts[t].td->name, suf, ts[t].name);
                continue;
            }
            *(proc_entry *)VEC_PUSH(m->procs, m->nprocs) =
                (proc_entry){ts[t].name, ts[t].version, ts[t].suffix, f->name, ts[t].td->name};
        }
        i = j;
    }
    free(ts);
}
