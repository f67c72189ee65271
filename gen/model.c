#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *type_kind_name(type_kind k)
{
    switch (k) {
#define X(e, s)                                                                                    \
    case e:                                                                                        \
        return s;
        TYPE_KIND_LIST(X)
#undef X
    }
    return "?";
}

const char *param_kind_name(param_kind k)
{
    switch (k) {
#define X(e, s)                                                                                    \
    case e:                                                                                        \
        return s;
        PARAM_KIND_LIST(X)
#undef X
    }
    return "?";
}

const char *elem_kind_name(elem_kind k)
{
    switch (k) {
#define X(e, s)                                                                                    \
    case e:                                                                                        \
        return s;
        ELEM_KIND_LIST(X)
#undef X
    }
    return "?";
}

const char *fn_mode_name(fn_mode m)
{
    switch (m) {
#define X(e, s)                                                                                    \
    case e:                                                                                        \
        return s;
        FN_MODE_LIST(X)
#undef X
    }
    return "?";
}

int fn_sig_equal(const fn_sig *a, const fn_sig *b)
{
    if (a->nparams != b->nparams || a->variadic != b->variadic ||
        strcmp(a->ret->canonical, b->ret->canonical) != 0)
        return 0;
    for (size_t i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].type->canonical, b->params[i].type->canonical) != 0) return 0;
    return 1;
}

function_def *model_find_function(api_model *m, const char *name)
{
    /* functions are sorted by name once check.c ran; before that, scan */
    size_t lo = 0, hi = m->nfunctions;
    int sorted = 1;
    for (size_t i = 1; i < m->nfunctions && i < 4; i++)
        if (strcmp(m->functions[i - 1].name, m->functions[i].name) > 0) sorted = 0;
    if (sorted) {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(m->functions[mid].name, name);
            if (c == 0) return &m->functions[mid];
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    for (size_t i = 0; i < m->nfunctions; i++)
        if (strcmp(m->functions[i].name, name) == 0) return &m->functions[i];
    return NULL;
}

typedef_def *model_find_typedef(api_model *m, const char *name)
{
    for (size_t i = 0; i < m->ntypedefs; i++)
        if (strcmp(m->typedefs[i].name, name) == 0) return &m->typedefs[i];
    return NULL;
}

handle_type_def *model_find_handle(api_model *m, const char *name)
{
    for (size_t i = 0; i < m->nhandles; i++)
        if (strcmp(m->handles[i].name, name) == 0) return &m->handles[i];
    return NULL;
}

enum_const *model_find_enum_const(const api_model *m, const char *name, enum_def **owner)
{
    for (size_t i = 0; i < m->nenums; i++)
        for (size_t j = 0; j < m->enums[i]->nconsts; j++)
            if (strcmp(m->enums[i]->consts[j].name, name) == 0) {
                if (owner) *owner = m->enums[i];
                return &m->enums[i]->consts[j];
            }
    return NULL;
}

macro_def *model_find_macro(const api_model *m, const char *name)
{
    for (size_t i = 0; i < m->nmacros; i++)
        if (strcmp(m->macros[i].name, name) == 0) return &m->macros[i];
    return NULL;
}

/* A canonical type is distinctive enough to identify a handle type when it is
 * not a pointer to void or to a builtin (those many typedefs share). */
static int distinctive(const type_info *t)
{
    if (t->kind != TY_POINTER) return t->kind == TY_RECORD || t->kind == TY_ENUM;
    const type_info *p = t->pointee;
    return p && (p->kind == TY_RECORD || p->kind == TY_ENUM || p->kind == TY_POINTER);
}

const size_table *model_size_table_of(const api_model *m, const type_info *t)
{
    if (!t) return NULL;
    for (size_t i = 0; i < m->nsizes; i++)
        if (t->typedef_name && strcmp(m->sizes[i].type, t->typedef_name) == 0) return &m->sizes[i];
    /* another typedef of the same enum (`typedef enum X_t {...} X;` has two names) */
    for (size_t i = 0; i < m->nsizes; i++) {
        const type_info *ti = m->sizes[i].ti;
        if (t->kind == TY_ENUM && ti && ti->kind == TY_ENUM && ti->canonical_unqual &&
            t->canonical_unqual && strcmp(ti->canonical_unqual, t->canonical_unqual) == 0)
            return &m->sizes[i];
    }
    return NULL;
}

handle_type_def *model_handle_of(api_model *m, const type_info *t)
{
    if (!t) return NULL;
    if (t->typedef_name)
        for (size_t i = 0; i < m->nhandles; i++)
            if (strcmp(m->handles[i].name, t->typedef_name) == 0) return &m->handles[i];
    if (!distinctive(t)) return NULL;
    for (size_t i = 0; i < m->nhandles; i++) {
        const type_info *h = m->handles[i].type;
        if (h && h->canonical_unqual && t->canonical_unqual && distinctive(h) &&
            strcmp(h->canonical_unqual, t->canonical_unqual) == 0)
            return &m->handles[i];
    }
    /* a pointer to a const handle pointee is the same handle: e.g. a `typedef const struct X *X_const_t` of a handle `X` */
    if (t->kind == TY_POINTER && t->pointee && t->pointee->is_const && t->canonical_unqual &&
        strncmp(t->canonical_unqual, "const ", 6) == 0)
        for (size_t i = 0; i < m->nhandles; i++) {
            const type_info *h = m->handles[i].type;
            if (h && h->canonical_unqual && distinctive(h) &&
                strcmp(h->canonical_unqual, t->canonical_unqual + 6) == 0)
                return &m->handles[i];
        }
    return NULL;
}

char *handle_family_key(const api_model *m, const handle_type_def *h)
{
    const type_info *t = h->type;
    if (t && t->kind == TY_POINTER && t->pointee && t->pointee->kind == TY_RECORD &&
        t->pointee->canonical_unqual && strncmp(t->pointee->canonical_unqual, "struct ", 7) == 0)
        return xstrdup(t->pointee->canonical_unqual);
    return xasprintf("%s.%s", m->api.name, h->name);
}

unsigned model_handle_tag(const api_model *m, const handle_type_def *h)
{
    if (!m->api.family)
        return h->tag;
    char *key = handle_family_key(m, h);
    uint32_t x = 2166136261u; /* FNV-1a 32 */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        x = (x ^ *p) * 16777619u;
    free(key);
    return (unsigned)(x | 0x80000000u); /* never an index tag */
}

void model_free(api_model *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nfunctions; i++) free(m->functions[i].state_uses);
    for (size_t i = 0; i < m->nhandles; i++) free(m->handles[i].states);
    free(m->functions);
    free(m->records);
    free(m->enums);
    free(m->typedefs);
    free(m->macros);
    free(m->handles);
    for (size_t i = 0; i < m->nsizes; i++) free(m->sizes[i].entries);
    free(m->sizes);
    free(m->unmatched);
    free(m->unmatched_locs);
    free(m->procs);
    arena_free(m->arena);
    memset(m, 0, sizeof *m);
}
