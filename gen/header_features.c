/* Features: what the API's headers declare, as macros (<api>_features.h)
 * and as names spec conditions can test (`when: "APIGEN_HAS_FN_x"`). A
 * version number tells what a vendor meant to ship; a feature tells what
 * the headers at hand declare, which is what hand-written code needs. */
#include "header_features.h"

#include <stdlib.h>
#include <string.h>

typedef struct fwalk {
    api_model *m;
    strmap seen;
    char **names;
    size_t n;
} fwalk;

static void add(fwalk *w, const char *kind, const char *a, const char *b)
{
    if (!a || !*a || (b && !*b)) return;
    char *name = b ? xasprintf("APIGEN_HAS_%s_%s_%s", kind, a, b) : xasprintf("APIGEN_HAS_%s_%s", kind, a);
    if (!strmap_get(&w->seen, name)) {
        strmap_put(&w->seen, name, (void *)1);
        *(char **)VEC_PUSH(w->names, w->n) = name;
    } else {
        free(name);
    }
}

static int in_system(CXCursor c)
{
    return clang_Location_isInSystemHeader(clang_getCursorLocation(c));
}

static char *spelling(CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    char *r = xstrdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static int is_record(enum CXCursorKind k)
{
    return k == CXCursor_StructDecl || k == CXCursor_UnionDecl;
}

typedef struct rec_walk {
    fwalk *w;
    const char *owner; /* the struct the fields are named after */
} rec_walk;

static void record_fields(fwalk *w, CXCursor rec, const char *owner);

static enum CXChildVisitResult visit_member(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    rec_walk *r = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_FieldDecl) {
        char *n = spelling(c);
        add(r->w, "FIELD", r->owner, n);
        free(n);
    } else if (is_record(k) && clang_isCursorDefinition(c)) {
        if (clang_Cursor_isAnonymousRecordDecl(c)) {
            record_fields(r->w, c, r->owner); /* C11 anonymous member: its fields are ours */
        } else {
            char *n = spelling(c); /* a named struct declared inside: a type of its own */
            if (*n && !strchr(n, ' ')) {
                add(r->w, "TYPE", n, NULL);
                record_fields(r->w, c, n);
            }
            free(n);
        }
    }
    return CXChildVisit_Continue;
}

static void record_fields(fwalk *w, CXCursor rec, const char *owner)
{
    rec_walk r = {w, owner};
    clang_visitChildren(rec, visit_member, &r);
}

static enum CXChildVisitResult visit_enum(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl) {
        char *n = spelling(c);
        add(data, "CONST", n, NULL);
        free(n);
    }
    return CXChildVisit_Continue;
}

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    fwalk *w = data;
    if (in_system(c)) return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    char *n = spelling(c);
    if (k == CXCursor_FunctionDecl) {
        add(w, "FN", n, NULL);
        /* a parameter added to a function (a new form under the old name) */
        int np = clang_Cursor_getNumArguments(c);
        for (int i = 0; i < np; i++) {
            char *pn = spelling(clang_Cursor_getArgument(c, (unsigned)i));
            add(w, "PARAM", n, pn);
            free(pn);
        }
    } else if (k == CXCursor_TypedefDecl) {
        add(w, "TYPE", n, NULL);
        /* typedef struct { ... } name: the fields are name's */
        CXCursor u = clang_getTypeDeclaration(
            clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c)));
        if (is_record(clang_getCursorKind(u)) && clang_Cursor_isAnonymous(u) &&
            clang_isCursorDefinition(u))
            record_fields(w, u, n);
    } else if (is_record(k) && clang_isCursorDefinition(c)) {
        if (*n && !clang_Cursor_isAnonymous(c)) {
            add(w, "TYPE", n, NULL);
            record_fields(w, c, n);
        }
    } else if (k == CXCursor_EnumDecl) {
        if (*n && !clang_Cursor_isAnonymous(c)) add(w, "TYPE", n, NULL);
        clang_visitChildren(c, visit_enum, w);
    }
    free(n);
    return CXChildVisit_Continue;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void features_collect(CXTranslationUnit tu, api_model *m)
{
    fwalk w = {m, {0}, NULL, 0};
    for (size_t i = 0; i < m->nfeatures; i++) {
        strmap_put(&w.seen, m->features[i], (void *)1);
        *(char **)VEC_PUSH(w.names, w.n) = xstrdup(m->features[i]);
    }
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit_top, &w);
    qsort(w.names, w.n, sizeof *w.names, cmp_str);
    m->features = arena_alloc(m->arena, (w.n ? w.n : 1) * sizeof *m->features);
    for (size_t i = 0; i < w.n; i++) {
        m->features[i] = arena_strdup(m->arena, w.names[i]);
        free(w.names[i]);
    }
    m->nfeatures = w.n;
    free(w.names);
    strmap_free(&w.seen);
}

int model_has_feature(const api_model *m, const char *name)
{
    return bsearch(&name, m->features, m->nfeatures, sizeof *m->features, cmp_str) != NULL;
}

void features_header(const api_model *m, strbuf *out)
{
    char *guard = xasprintf("%s_FEATURES_H", m->api.name);
    for (char *p = guard; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    sb_printf(out,
              "/* Generated by apigen: what the headers of the API '%s' declare, for\n"
              " * hand-written code to test instead of version numbers (`#ifdef\n"
              " * APIGEN_HAS_FN_name`; spec conditions: `when: \"APIGEN_HAS_FN_name\"`).\n"
              " * FN_ functions, PARAM_function_parameter, TYPE_ typedefs and struct/union/enum\n"
              " * tags, FIELD_struct_field, CONST_ enum constants. Do not edit. */\n"
              "#ifndef %s\n#define %s\n\n",
              m->api.name, guard, guard);
    for (size_t i = 0; i < m->nfeatures; i++) sb_printf(out, "#define %s 1\n", m->features[i]);
    sb_printf(out, "\n#endif\n");
    free(guard);
}
