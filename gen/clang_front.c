#define _POSIX_C_SOURCE 200809L
#include "clang_front.h"

#include <clang-c/Index.h>
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "header_features.h"
#include "include_paths.h"
#include "util.h"

#ifndef APIGEN_CLANG_RESOURCE_HINT
#define APIGEN_CLANG_RESOURCE_HINT "/usr/lib/clang"
#endif

typedef struct front {
    api_model *m;
    arena *a;
    diag_sink *d;
    CXTranslationUnit tu;
    CXFile *main_files;
    size_t nmain;
    char **main_paths;
    strmap types;     /* spelling \x01 canonical -> type_info* */
    strmap records;   /* canonical -> record_def* */
    strmap enums;     /* canonical -> enum_def* */
    strmap typedefs;  /* name -> index+1 */
    strmap fns;       /* name -> index+1 */
    strmap macros;    /* name -> index+1 */
    regex_t re;
    int have_re;
} front;

static char *take(arena *a, CXString s)
{
    char *r = arena_strdup(a, clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static src_loc cursor_loc(CXCursor c)
{
    CXFile f;
    unsigned line, col;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &line, &col, NULL);
    src_loc l = {0};
    if (f) {
        CXString n = clang_getFileName(f);
        l.file = intern(clang_getCString(n));
        clang_disposeString(n);
        l.line = line;
        l.col = col;
    }
    return l;
}

/* ---- resource dir ---------------------------------------------------------- */

static int has_stddef(const char *dir)
{
    char *p = xasprintf("%s/include/stddef.h", dir);
    int ok = file_exists(p);
    free(p);
    return ok;
}

const char *clang_front_resource_dir(void)
{
    static char *found;
    static int done;
    if (done) return found;
    done = 1;
    const char *env = getenv("APIGEN_CLANG_RESOURCE_DIR");
    if (env && has_stddef(env)) return found = xstrdup(env);
    const char *hint = APIGEN_CLANG_RESOURCE_HINT;
    /* "Debian clang version 14.0.6" -> try 14.0.6, then 14 */
    CXString vs = clang_getClangVersion();
    const char *v = clang_getCString(vs);
    const char *p = v ? strstr(v, "version ") : NULL;
    if (p) {
        p += 8;
        size_t n = 0;
        while (isdigit((unsigned char)p[n]) || p[n] == '.') n++;
        char *ver = xstrndup(p, n);
        char *cand = xasprintf("%s/%s", hint, ver);
        if (has_stddef(cand)) found = cand;
        else free(cand);
        if (!found) {
            char *dot = strchr(ver, '.');
            if (dot) *dot = 0;
            cand = xasprintf("%s/%s", hint, ver);
            if (has_stddef(cand)) found = cand;
            else free(cand);
        }
        free(ver);
    }
    clang_disposeString(vs);
    if (!found) {
        DIR *dir = opendir(hint);
        struct dirent *e;
        while (dir && !found && (e = readdir(dir))) {
            if (e->d_name[0] == '.') continue;
            char *cand = xasprintf("%s/%s", hint, e->d_name);
            if (has_stddef(cand)) found = cand;
            else free(cand);
        }
        if (dir) closedir(dir);
    }
    return found;
}

/* ---- types ------------------------------------------------------------------ */

static type_info *conv_type(front *F, CXType t);

static int is_main_file(front *F, CXFile f)
{
    for (size_t i = 0; i < F->nmain; i++)
        if (F->main_files[i] && clang_File_isEqual(F->main_files[i], f)) return 1;
    return 0;
}

struct field_visit {
    front *F;
    field_def *fields;
    size_t n;
};

static enum CXVisitorResult visit_field(CXCursor c, CXClientData data)
{
    struct field_visit *v = data;
    field_def *fd = VEC_PUSH(v->fields, v->n);
    fd->name = take(v->F->a, clang_getCursorSpelling(c));
    fd->type = conv_type(v->F, clang_getCursorType(c));
    long long off = clang_Cursor_getOffsetOfField(c);
    fd->offset = off > 0 ? (uint64_t)off / 8 : 0;
    fd->loc = cursor_loc(c);
    return CXVisit_Continue;
}

static int type_has_pointers(const type_info *t)
{
    if (!t) return 0;
    switch (t->kind) {
    case TY_POINTER:
    case TY_FNPTR:
        return 1;
    case TY_ARRAY:
        return type_has_pointers(t->pointee);
    case TY_RECORD:
        return t->record ? t->record->has_pointers : 0;
    default:
        return 0;
    }
}

static record_def *conv_record(front *F, CXType canon, const char *tdname)
{
    CXString cs = clang_getTypeSpelling(canon);
    const char *key = clang_getCString(cs);
    /* one record per struct: `const struct X` is struct X */
    for (;;) {
        if (strncmp(key, "const ", 6) == 0) key += 6;
        else if (strncmp(key, "volatile ", 9) == 0) key += 9;
        else break;
    }
    record_def *r = strmap_get(&F->records, key);
    if (r) {
        clang_disposeString(cs);
        return r;
    }
    r = arena_alloc(F->a, sizeof *r);
    strmap_put(&F->records, key, r);
    if (strstr(key, "(anonymous") || strstr(key, "(unnamed"))
        r->name = arena_strdup(F->a, tdname ? tdname : key);
    else
        r->name = arena_strdup(F->a, key);
    clang_disposeString(cs);
    CXCursor decl = clang_getTypeDeclaration(canon);
    r->is_union = clang_getCursorKind(decl) == CXCursor_UnionDecl;
    r->loc = cursor_loc(decl);
    long long sz = clang_Type_getSizeOf(canon);
    r->complete = sz >= 0;
    if (r->complete) {
        r->size = (uint64_t)sz;
        long long al = clang_Type_getAlignOf(canon);
        r->align = al > 0 ? (uint64_t)al : 0;
        struct field_visit v = {F, NULL, 0};
        clang_Type_visitFields(canon, visit_field, &v);
        r->fields = arena_alloc(F->a, (v.n ? v.n : 1) * sizeof *r->fields);
        if (v.n) memcpy(r->fields, v.fields, v.n * sizeof *r->fields);
        r->nfields = v.n;
        free(v.fields);
        for (size_t i = 0; i < r->nfields; i++)
            if (type_has_pointers(r->fields[i].type)) r->has_pointers = 1;
    }
    /* records of system headers (max_align_t & co) stay out of the list */
    if (!clang_Location_isInSystemHeader(clang_getCursorLocation(decl)))
        *(record_def **)VEC_PUSH(F->m->records, F->m->nrecords) = r;
    return r;
}

struct enum_visit {
    front *F;
    enum_const *c;
    size_t n;
    int is_unsigned;
};

static enum CXChildVisitResult visit_enum_const(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct enum_visit *v = data;
    if (clang_getCursorKind(c) != CXCursor_EnumConstantDecl) return CXChildVisit_Continue;
    enum_const *ec = VEC_PUSH(v->c, v->n);
    ec->name = take(v->F->a, clang_getCursorSpelling(c));
    ec->value = v->is_unsigned ? (int64_t)clang_getEnumConstantDeclUnsignedValue(c)
                               : (int64_t)clang_getEnumConstantDeclValue(c);
    return CXChildVisit_Continue;
}

static int kind_unsigned(enum CXTypeKind k)
{
    switch (k) {
    case CXType_Bool:
    case CXType_Char_U:
    case CXType_UChar:
    case CXType_Char16:
    case CXType_Char32:
    case CXType_UShort:
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
    case CXType_UInt128:
        return 1;
    default:
        return 0;
    }
}

static enum_def *conv_enum(front *F, CXType canon, const char *tdname)
{
    CXString cs = clang_getTypeSpelling(canon);
    const char *key = clang_getCString(cs);
    enum_def *e = strmap_get(&F->enums, key);
    if (e) {
        clang_disposeString(cs);
        return e;
    }
    e = arena_alloc(F->a, sizeof *e);
    strmap_put(&F->enums, key, e);
    if (strstr(key, "(anonymous") || strstr(key, "(unnamed"))
        e->name = arena_strdup(F->a, tdname ? tdname : key);
    else
        e->name = arena_strdup(F->a, key);
    clang_disposeString(cs);
    CXCursor decl = clang_getTypeDeclaration(canon);
    e->loc = cursor_loc(decl);
    CXType ut = clang_getEnumDeclIntegerType(decl);
    e->underlying = conv_type(F, ut);
    struct enum_visit v = {F, NULL, 0, kind_unsigned(clang_getCanonicalType(ut).kind)};
    clang_visitChildren(decl, visit_enum_const, &v);
    e->consts = arena_alloc(F->a, (v.n ? v.n : 1) * sizeof *e->consts);
    if (v.n) memcpy(e->consts, v.c, v.n * sizeof *e->consts);
    e->nconsts = v.n;
    free(v.c);
    if (!clang_Location_isInSystemHeader(clang_getCursorLocation(decl)))
        *(enum_def **)VEC_PUSH(F->m->enums, F->m->nenums) = e;
    return e;
}

struct parm_names {
    char **names;
    size_t n;
    arena *a;
};

static enum CXChildVisitResult visit_parm_names(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct parm_names *v = data;
    if (clang_getCursorKind(c) == CXCursor_ParmDecl)
        *(char **)VEC_PUSH(v->names, v->n) = take(v->a, clang_getCursorSpelling(c));
    return CXChildVisit_Continue;
}

/* fn: the function type (FunctionProto/NoProto); decl: a declaration whose
 * ParmDecl children name the parameters (may be null cursor). */
static fn_sig *conv_fn_type(front *F, CXType fn, CXCursor decl)
{
    fn_sig *s = arena_alloc(F->a, sizeof *s);
    s->ret = conv_type(F, clang_getResultType(fn));
    int n = clang_getNumArgTypes(fn);
    s->variadic = fn.kind == CXType_FunctionProto && clang_isFunctionTypeVariadic(fn); /* f(): f(void) */
    if (n < 0) n = 0;
    struct parm_names pn = {NULL, 0, F->a};
    if (!clang_Cursor_isNull(decl)) clang_visitChildren(decl, visit_parm_names, &pn);
    s->params = arena_alloc(F->a, (size_t)(n ? n : 1) * sizeof *s->params);
    s->nparams = (size_t)n;
    for (int i = 0; i < n; i++) {
        param_def *p = &s->params[i];
        if (pn.n == (size_t)n && pn.names[i][0])
            p->name = pn.names[i];
        else {
            char buf[32];
            snprintf(buf, sizeof buf, "arg%d", i);
            p->name = arena_strdup(F->a, buf);
        }
        p->type = conv_type(F, clang_getArgType(fn, (unsigned)i));
    }
    free(pn.names);
    return s;
}

static char *strip_quals(arena *a, const char *s)
{
    /* top-level qualifiers: leading "const "/"volatile " for non-pointers,
     * trailing " const"/" volatile" for pointers */
    size_t n = strlen(s);
    const char *b = s;
    for (;;) {
        if (strncmp(b, "const ", 6) == 0 && !strchr(b, '*')) b += 6;
        else if (strncmp(b, "volatile ", 9) == 0 && !strchr(b, '*')) b += 9;
        else break;
    }
    n = strlen(b);
    for (;;) {
        if (n > 6 && strncmp(b + n - 6, " const", 6) == 0) n -= 6;
        else if (n > 9 && strncmp(b + n - 9, " volatile", 9) == 0) n -= 9;
        else if (n > 9 && strncmp(b + n - 9, " restrict", 9) == 0) n -= 9;
        else break;
    }
    char *r = arena_alloc(a, n + 1);
    memcpy(r, b, n);
    r[n] = 0;
    return r;
}

static type_info *conv_type(front *F, CXType t)
{
    int is_const = clang_isConstQualifiedType(t);
    while (t.kind == CXType_Elaborated) {
        CXType inner = clang_Type_getNamedType(t);
        if (inner.kind == CXType_Invalid) break;
        t = inner;
    }
    CXType canon = clang_getCanonicalType(t);
    CXString ss = clang_getTypeSpelling(t), cs = clang_getTypeSpelling(canon);
    const char *sp = clang_getCString(ss), *cn = clang_getCString(cs);
    char *key = xasprintf("%s\x01%s\x01%d", sp, cn, is_const);
    type_info *ti = strmap_get(&F->types, key);
    if (ti) {
        free(key);
        clang_disposeString(ss);
        clang_disposeString(cs);
        return ti;
    }
    ti = arena_alloc(F->a, sizeof *ti);
    strmap_put(&F->types, key, ti);
    free(key);
    ti->spelling = arena_strdup(F->a, sp);
    ti->canonical = arena_strdup(F->a, cn);
    clang_disposeString(ss);
    clang_disposeString(cs);
    ti->is_const = is_const || clang_isConstQualifiedType(canon);
    ti->canonical_unqual = ti->is_const ? strip_quals(F->a, ti->canonical) : ti->canonical;
    if (t.kind == CXType_Typedef) ti->typedef_name = take(F->a, clang_getTypedefName(t));
    long long sz = clang_Type_getSizeOf(t);
    ti->size = sz > 0 ? (uint64_t)sz : 0;
    long long al = clang_Type_getAlignOf(t);
    ti->align = al > 0 ? (uint64_t)al : 0;

    switch (canon.kind) {
    case CXType_Void:
        ti->kind = TY_VOID;
        break;
    case CXType_Bool:
        ti->kind = TY_BOOL;
        break;
    case CXType_Char_U:
    case CXType_Char_S:
        ti->is_char = 1;
        ti->kind = canon.kind == CXType_Char_S ? TY_SINT : TY_UINT;
        ti->is_signed = canon.kind == CXType_Char_S;
        break;
    case CXType_UChar:
    case CXType_Char16:
    case CXType_Char32:
    case CXType_UShort:
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
    case CXType_UInt128:
        ti->kind = TY_UINT;
        break;
    case CXType_SChar:
    case CXType_WChar:
    case CXType_Short:
    case CXType_Int:
    case CXType_Long:
    case CXType_LongLong:
    case CXType_Int128:
        ti->kind = TY_SINT;
        ti->is_signed = 1;
        break;
    case CXType_Float:
    case CXType_Double:
    case CXType_LongDouble:
    case CXType_Float128:
    case CXType_Half:
    case CXType_Float16:
        ti->kind = TY_FLOAT;
        ti->is_signed = 1;
        break;
    case CXType_Enum:
        ti->kind = TY_ENUM;
        ti->enm = conv_enum(F, canon, ti->typedef_name);
        ti->is_signed = ti->enm->underlying ? ti->enm->underlying->is_signed : 0;
        break;
    case CXType_Record:
        ti->kind = TY_RECORD;
        ti->record = conv_record(F, canon, ti->typedef_name);
        if (!ti->record->complete) ti->record = NULL;
        break;
    case CXType_Pointer:
    case CXType_BlockPointer: {
        CXType pt = clang_getPointeeType(t);
        if (pt.kind == CXType_Invalid) pt = clang_getPointeeType(canon);
        CXType pc = clang_getCanonicalType(pt);
        if (pc.kind == CXType_FunctionProto || pc.kind == CXType_FunctionNoProto) {
            ti->kind = TY_FNPTR;
            CXCursor decl = clang_getNullCursor();
            if (t.kind == CXType_Typedef) decl = clang_getTypeDeclaration(t);
            ti->fn = conv_fn_type(F, pc, decl);
        } else {
            ti->kind = TY_POINTER;
            ti->pointee = conv_type(F, pt);
        }
        break;
    }
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray: {
        ti->kind = TY_ARRAY;
        CXType et = clang_getArrayElementType(t);
        if (et.kind == CXType_Invalid) et = clang_getArrayElementType(canon);
        ti->pointee = conv_type(F, et);
        long long n = clang_getArraySize(canon);
        ti->array_len = n > 0 ? (uint64_t)n : 0;
        break;
    }
    default:
        ti->kind = TY_OTHER;
        break;
    }
    return ti;
}

/* ---- top-level walk ---------------------------------------------------------- */

static int selected(front *F, const char *name)
{
    api_settings *s = &F->m->api;
    for (size_t i = 0; i < s->nexclude; i++)
        if (strcmp(s->exclude[i], name) == 0) return 0;
    if (!s->nselect_prefix && !F->have_re) return 1;
    for (size_t i = 0; i < s->nselect_prefix; i++)
        if (strncmp(name, s->select_prefix[i], strlen(s->select_prefix[i])) == 0) return 1;
    return F->have_re && regexec(&F->re, name, 0, NULL, 0) == 0;
}

static void add_function(front *F, CXCursor c, CXFile file)
{
    if (clang_Cursor_getStorageClass(c) == CX_SC_Static) return;
    CXString ns = clang_getCursorSpelling(c);
    const char *name = clang_getCString(ns);
    if (!selected(F, name) || strmap_get(&F->fns, name)) {
        clang_disposeString(ns);
        return;
    }
    function_def *fd = VEC_PUSH(F->m->functions, F->m->nfunctions);
    strmap_put(&F->fns, name, (void *)(uintptr_t)F->m->nfunctions);
    fd->name = arena_strdup(F->a, name);
    clang_disposeString(ns);
    fd->loc = cursor_loc(c);
    CXString fs = clang_getFileName(file);
    fd->header = arena_strdup(F->a, clang_getCString(fs));
    clang_disposeString(fs);
    CXType ft = clang_getCursorType(c);
    fd->sig.ret = conv_type(F, clang_getCursorResultType(c));
    /* a declaration without a prototype, f(), is the vendor's f(void): such
       headers are shared with C++, and C23 reads it so too */
    fd->sig.variadic = ft.kind == CXType_FunctionProto && clang_isFunctionTypeVariadic(ft) == 1;
    int n = clang_Cursor_getNumArguments(c);
    if (n < 0) n = 0;
    fd->sig.params = arena_alloc(F->a, (size_t)(n ? n : 1) * sizeof(param_def));
    fd->sig.nparams = (size_t)n;
    for (int i = 0; i < n; i++) {
        CXCursor pc = clang_Cursor_getArgument(c, (unsigned)i);
        param_def *p = &fd->sig.params[i];
        p->name = take(F->a, clang_getCursorSpelling(pc));
        if (!p->name[0]) {
            char buf[32];
            snprintf(buf, sizeof buf, "arg%d", i);
            p->name = arena_strdup(F->a, buf);
        }
        p->type = conv_type(F, clang_getCursorType(pc));
        p->loc = cursor_loc(pc);
        if (!p->loc.file || p->loc.line == 0) p->loc = fd->loc;
    }
    fd->call_id = 0;
    fd->mode = FN_FORWARD;
}

static int parse_int_literal(const char *s, int neg, int64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)s[0])) return 0;
    unsigned long long v = strtoull(s, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
    if (*end) return 0;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 1;
}

static void add_macro(front *F, CXCursor c)
{
    if (clang_Cursor_isMacroBuiltin(c) || clang_Cursor_isMacroFunctionLike(c)) return;
    CXToken *toks = NULL;
    unsigned nt = 0;
    clang_tokenize(F->tu, clang_getCursorExtent(c), &toks, &nt);
    /* name, then: LIT | ( LIT ) | - LIT | ( - LIT ) */
    const char *sp[6] = {0};
    CXString str[6];
    unsigned k = nt < 6 ? nt : 6;
    for (unsigned i = 0; i < k; i++) {
        str[i] = clang_getTokenSpelling(F->tu, toks[i]);
        sp[i] = clang_getCString(str[i]);
    }
    int64_t v;
    int ok = 0;
    if (nt == 2) ok = parse_int_literal(sp[1], 0, &v);
    else if (nt == 3 && strcmp(sp[1], "-") == 0) ok = parse_int_literal(sp[2], 1, &v);
    else if (nt == 4 && strcmp(sp[1], "(") == 0 && strcmp(sp[3], ")") == 0)
        ok = parse_int_literal(sp[2], 0, &v);
    else if (nt == 5 && strcmp(sp[1], "(") == 0 && strcmp(sp[2], "-") == 0 &&
             strcmp(sp[4], ")") == 0)
        ok = parse_int_literal(sp[3], 1, &v);
    if (ok && !strmap_get(&F->macros, sp[0])) {
        macro_def *md = VEC_PUSH(F->m->macros, F->m->nmacros);
        md->name = arena_strdup(F->a, sp[0]);
        md->value = v;
        md->loc = cursor_loc(c);
        strmap_put(&F->macros, sp[0], (void *)(uintptr_t)F->m->nmacros);
    }
    for (unsigned i = 0; i < k; i++) clang_disposeString(str[i]);
    if (toks) clang_disposeTokens(F->tu, toks, nt);
}

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    front *F = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    CXSourceLocation loc = clang_getCursorLocation(c);
    /* from system headers only typedefs (size_t & co, for sizeof) */
    if (clang_Location_isInSystemHeader(loc) && k != CXCursor_TypedefDecl)
        return CXChildVisit_Continue;
    CXFile file;
    clang_getExpansionLocation(loc, &file, NULL, NULL, NULL);
    /* -D defines (apigen -D, api.defines) have no file: a version macro
     * given on the command line counts like the header's own */
    if (k == CXCursor_MacroDefinition) {
        add_macro(F, c);
        return CXChildVisit_Continue;
    }
    if (!file) return CXChildVisit_Continue;
    switch (k) {
    case CXCursor_FunctionDecl:
        if (is_main_file(F, file)) add_function(F, c, file);
        break;
    case CXCursor_TypedefDecl: {
        CXString ns = clang_getCursorSpelling(c);
        const char *name = clang_getCString(ns);
        if (!strmap_get(&F->typedefs, name)) {
            typedef_def *td = VEC_PUSH(F->m->typedefs, F->m->ntypedefs);
            strmap_put(&F->typedefs, name, (void *)(uintptr_t)F->m->ntypedefs);
            td->name = arena_strdup(F->a, name);
            td->loc = cursor_loc(c);
            /* the typedef's own type keeps its name in typedef_name */
            td->type = conv_type(F, clang_getCursorType(c));
        }
        clang_disposeString(ns);
        break;
    }
    case CXCursor_EnumDecl:
        if (clang_isCursorDefinition(c)) conv_type(F, clang_getCursorType(c));
        break;
    case CXCursor_MacroDefinition:
        add_macro(F, c);
        break;
    default:
        break;
    }
    return CXChildVisit_Continue;
}

/* ---- symbol variants (api.variants) ------------------------------------------ */

typedef struct variant_walk {
    front *F;
    char **names; /* selected functions of the main headers in the second parse */
    size_t n;
} variant_walk;

static enum CXChildVisitResult visit_variant(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    variant_walk *w = data;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl) return CXChildVisit_Continue;
    CXFile file;
    clang_getExpansionLocation(clang_getCursorLocation(c), &file, NULL, NULL, NULL);
    if (!file || !is_main_file(w->F, file)) return CXChildVisit_Continue;
    CXString ns = clang_getCursorSpelling(c);
    const char *name = clang_getCString(ns);
    if (selected(w->F, name) && !strmap_get(&w->F->fns, name))
        *(char **)VEC_PUSH(w->names, w->n) = xstrdup(name);
    clang_disposeString(ns);
    return CXChildVisit_Continue;
}

/* Parses the headers again with api.variants.defines. A function declared
 * there as <base><suffix>, where <base> is a function of the first parse and
 * <suffix> one of api.variants.suffixes, becomes a variant: a copy of <base>
 * (same signature, annotations taken from <base>'s entry) under the new name.
 * Per-thread entry points (name_ptds variants) are found
 * this way from the header's own macros. */
static void find_variants(front *F, CXIndex idx, const char *tu_name, struct CXUnsavedFile *uf,
                          char **args0, size_t nargs0, const src_loc *api_loc)
{
    api_settings *s = &F->m->api;
    char **args = NULL;
    size_t nargs = 0;
    for (size_t i = 0; i < nargs0; i++) *(char **)VEC_PUSH(args, nargs) = xstrdup(args0[i]);
    for (size_t i = 0; i < s->nvariant_defines; i++)
        *(char **)VEC_PUSH(args, nargs) = xasprintf("-D%s", s->variant_defines[i]);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        idx, tu_name, (const char *const *)args, (int)nargs, uf, 1,
        CXTranslationUnit_SkipFunctionBodies, &tu);
    for (size_t i = 0; i < nargs; i++) free(args[i]);
    free(args);
    if (ec != CXError_Success || !tu) {
        diag_error(F->d, api_loc ? *api_loc : (src_loc){0}, NULL, NULL,
                   "libclang could not parse the headers with api.variants.defines (error %d)",
                   (int)ec);
        return;
    }
    /* main files again, in the new unit */
    CXFile *saved = F->main_files;
    F->main_files = xcalloc(F->nmain + 1, sizeof(CXFile));
    for (size_t i = 0; i < F->nmain; i++) F->main_files[i] = clang_getFile(tu, F->main_paths[i]);
    variant_walk w = {F, NULL, 0};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit_variant, &w);
    free(F->main_files);
    F->main_files = saved;
    clang_disposeTranslationUnit(tu);
    size_t nbase = F->m->nfunctions;
    for (size_t k = 0; k < w.n; k++) {
        const char *name = w.names[k];
        size_t nl = strlen(name);
        for (size_t j = 0; j < s->nvariant_suffixes; j++) {
            const char *suf = s->variant_suffixes[j];
            size_t sl = strlen(suf);
            if (nl <= sl || strcmp(name + nl - sl, suf) != 0) continue;
            char *base = xstrdup(name);
            base[nl - sl] = 0;
            uintptr_t bi = (uintptr_t)strmap_get(&F->fns, base);
            free(base);
            if (!bi || bi > nbase || strmap_get(&F->fns, name)) continue;
            function_def copy = F->m->functions[bi - 1];
            function_def *fd = VEC_PUSH(F->m->functions, F->m->nfunctions);
            *fd = copy;
            fd->name = arena_strdup(F->a, name);
            fd->sig.params = arena_alloc(F->a, (copy.sig.nparams ? copy.sig.nparams : 1) *
                                                   sizeof(param_def));
            if (copy.sig.nparams)
                memcpy(fd->sig.params, copy.sig.params, copy.sig.nparams * sizeof(param_def));
            fd->variant_of = F->m->functions[bi - 1].name;
            fd->variant_suffix = arena_strdup(F->a, suf);
            strmap_put(&F->fns, name, (void *)(uintptr_t)F->m->nfunctions);
            break;
        }
    }
    for (size_t k = 0; k < w.n; k++) free(w.names[k]);
    free(w.names);
}

/* api.variants without `defines:`: the headers declare the variants
 * themselves (a vendor header may declare F_ptds next to F under an
 * internal macro). A function named <base><suffix> whose <base> is a
 * function of the same canonical signature becomes <base>'s variant, so it
 * takes <base>'s annotations unless it has an entry of its own. */
static void mark_declared_variants(front *F)
{
    api_settings *s = &F->m->api;
    for (size_t i = 0; i < F->m->nfunctions; i++) {
        function_def *fd = &F->m->functions[i];
        size_t nl = strlen(fd->name);
        for (size_t j = 0; j < s->nvariant_suffixes && !fd->variant_of; j++) {
            const char *suf = s->variant_suffixes[j];
            size_t sl = strlen(suf);
            if (nl <= sl || strcmp(fd->name + nl - sl, suf) != 0) continue;
            char *base = xstrdup(fd->name);
            base[nl - sl] = 0;
            uintptr_t bi = (uintptr_t)strmap_get(&F->fns, base);
            free(base);
            if (!bi || !fn_sig_equal(&F->m->functions[bi - 1].sig, &fd->sig)) continue;
            fd->variant_of = F->m->functions[bi - 1].name;
            fd->variant_suffix = arena_strdup(F->a, suf);
        }
    }
}

/* clang's errors, "file not found" with the folders searched */
static void report_diags(CXTranslationUnit tu, char *const *dirs, size_t ndirs, const char *rd,
                         diag_sink *d)
{
    unsigned nd = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(dg);
        if (sev >= CXDiagnostic_Error) {
            CXFile f;
            unsigned line, col;
            clang_getExpansionLocation(clang_getDiagnosticLocation(dg), &f, &line, &col, NULL);
            src_loc at = {0};
            if (f) {
                CXString fn = clang_getFileName(f);
                at.file = intern(clang_getCString(fn));
                clang_disposeString(fn);
                at.line = line;
                at.col = col;
            }
            CXString msg = clang_getDiagnosticSpelling(dg);
            const char *ms = clang_getCString(msg);
            size_t ml = strlen(ms);
            if (ml > 15 && strcmp(ms + ml - 15, " file not found") == 0) {
                /* say where it was looked for */
                char *searched = include_paths_searched(dirs, ndirs, rd);
                diag_error(d, at, NULL, NULL, "%s (searched: %s)", ms, searched);
                free(searched);
            } else {
                diag_error(d, at, NULL, NULL, "%s", ms);
            }
            clang_disposeString(msg);
        }
        clang_disposeDiagnostic(dg);
    }
}

/* Pass 1 when the spec has helper headers: the API's own headers alone give
 * the features, written as <api>_features.h into a fresh folder that pass 2
 * (the helpers included) searches. Returns the folder (malloc'd) or NULL. */
static char *features_pass(front *F, CXIndex idx, const char *api_text, char **args, size_t nargs,
                           char *const *dirs, size_t ndirs, const char *rd, const src_loc *api_loc)
{
    const char *tu_name = "apigen-api-headers.c";
    struct CXUnsavedFile uf = {tu_name, api_text, (unsigned long)strlen(api_text)};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        idx, tu_name, (const char *const *)args, (int)nargs, &uf, 1,
        CXTranslationUnit_SkipFunctionBodies, &tu);
    if (ec != CXError_Success || !tu) {
        diag_error(F->d, api_loc ? *api_loc : (src_loc){0}, NULL, NULL,
                   "libclang could not parse the headers (error %d)", (int)ec);
        return NULL;
    }
    unsigned e0 = F->d->errors;
    report_diags(tu, dirs, ndirs, rd, F->d);
    include_paths_check(tu, dirs, ndirs, rd, F->d);
    if (F->d->errors == e0) features_collect(tu, F->m);
    clang_disposeTranslationUnit(tu);
    if (F->d->errors > e0) return NULL;
    const char *t = getenv("TMPDIR");
    char *dir = xasprintf("%s/apigen-features.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        diag_error(F->d, api_loc ? *api_loc : (src_loc){0}, NULL, NULL,
                   "cannot create a temporary folder for %s_features.h", F->m->api.name);
        free(dir);
        return NULL;
    }
    char *path = xasprintf("%s/%s_features.h", dir, F->m->api.name);
    strbuf sb = {0};
    features_header(F->m, &sb);
    FILE *f = fopen(path, "w");
    int ok = f && fwrite(sb.s, 1, sb.len, f) == sb.len;
    if (f && fclose(f) != 0) ok = 0;
    sb_free(&sb);
    if (!ok) {
        diag_error(F->d, api_loc ? *api_loc : (src_loc){0}, NULL, NULL, "cannot write %s", path);
        remove(path);
        rmdir(dir);
        free(path);
        free(dir);
        return NULL;
    }
    free(path);
    return dir;
}

int clang_front_parse(api_model *m, const apigen_options *opt, const char *spec_dir,
                      const src_loc *header_locs, const src_loc *api_loc, diag_sink *d)
{
    front F = {0};
    F.m = m;
    F.a = m->arena;
    F.d = d;
    unsigned errors0 = d->errors;
    api_settings *s = &m->api;

    /* search path: -I from the command line, then the spec's include_dirs */
    char **dirs = NULL;
    size_t ndirs = 0;
    for (size_t i = 0; i < opt->nextra_include_dirs; i++)
        *(char **)VEC_PUSH(dirs, ndirs) = path_normalize(opt->extra_include_dirs[i]);
    for (size_t i = 0; i < s->ninclude_dirs; i++)
        *(char **)VEC_PUSH(dirs, ndirs) = path_join(spec_dir, s->include_dirs[i]);
    /* the spec's own directory last; each directory once */
    *(char **)VEC_PUSH(dirs, ndirs) = path_normalize(spec_dir);
    for (size_t i = 1; i < ndirs; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(dirs[i], dirs[j]) == 0) {
                free(dirs[i]);
                memmove(&dirs[i], &dirs[i + 1], (ndirs - i - 1) * sizeof *dirs);
                ndirs--;
                i--;
                break;
            }

    strbuf tu_text = {0}, api_text = {0};
    char *feat_dir = NULL;
    F.main_paths = xcalloc(s->nheaders + 1, sizeof(char *));
    for (size_t i = 0; i < s->nheaders; i++) {
        char *found = NULL;
        for (size_t j = 0; j < ndirs && !found; j++) {
            char *p = path_join(dirs[j], s->headers[i]);
            if (file_exists(p)) found = p;
            else free(p);
        }
        if (!found && s->header_optional && s->header_optional[i]) continue; /* dropped below */
        if (!found) {
            strbuf sb = {0};
            for (size_t j = 0; j < ndirs; j++) sb_printf(&sb, "%s%s", j ? ", " : "", dirs[j]);
            diag_error(d, header_locs[i], NULL, NULL, "header '%s' not found (searched: %s)",
                       s->headers[i], sb.s);
            sb_free(&sb);
            continue;
        }
        F.main_paths[i] = found;
        sb_printf(&tu_text, "#include \"%s\"\n", found);
        if (i < s->napi_headers) sb_printf(&api_text, "#include \"%s\"\n", found);
    }
    /* api.proc_table's header: its typedefs are read, its functions not taken */
    if (s->proc_header) {
        char *found = NULL;
        for (size_t j = 0; j < ndirs && !found; j++) {
            char *p = path_join(dirs[j], s->proc_header);
            if (file_exists(p)) found = p;
            else free(p);
        }
        if (!found)
            diag_error(d, s->proc_loc, NULL, NULL,
                       "api.proc_table.header '%s' not found (searched the headers' folders)",
                       s->proc_header);
        else
            sb_printf(&tu_text, "#include \"%s\"\n", found);
        free(found);
    }
    if (d->errors > errors0) goto out;
    /* an optional header this version lacks: gone from the list (the
     * generated wire header includes those found) */
    size_t kept = 0, kept_api = 0;
    for (size_t i = 0; i < s->nheaders; i++) {
        if (!F.main_paths[i]) continue;
        if (i < s->napi_headers) kept_api++;
        s->headers[kept] = s->headers[i];
        s->header_optional[kept] = s->header_optional[i];
        F.main_paths[kept++] = F.main_paths[i];
    }
    for (size_t i = kept; i < s->nheaders; i++) F.main_paths[i] = NULL;
    s->nheaders = kept;
    s->napi_headers = kept_api;

    /* arguments */
    char **args = NULL;
    size_t nargs = 0;
    const char *base[] = {"-x", "c", "-std=c11", "-w", "-ferror-limit=0"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        *(char **)VEC_PUSH(args, nargs) = xstrdup(base[i]);
    const char *rd = clang_front_resource_dir();
    if (rd) {
        *(char **)VEC_PUSH(args, nargs) = xstrdup("-resource-dir");
        *(char **)VEC_PUSH(args, nargs) = xstrdup(rd);
    }
    for (size_t i = 0; i < ndirs; i++) *(char **)VEC_PUSH(args, nargs) = xasprintf("-I%s", dirs[i]);
    /* nothing else: no /usr/local/include (include_paths.c) */
    include_paths_args(&args, &nargs, rd);
    for (size_t i = 0; i < opt->nextra_defines; i++)
        *(char **)VEC_PUSH(args, nargs) = xasprintf("-D%s", opt->extra_defines[i]);
    for (size_t i = 0; i < s->ndefines; i++)
        *(char **)VEC_PUSH(args, nargs) = xasprintf("-D%s", s->defines[i]);
    for (size_t i = 0; i < s->nclang_args; i++)
        *(char **)VEC_PUSH(args, nargs) = xstrdup(s->clang_args[i]);

    const char *tu_name = "apigen-headers.c";
    struct CXUnsavedFile uf = {tu_name, tu_text.s ? tu_text.s : "", (unsigned long)tu_text.len};
    CXIndex idx = clang_createIndex(0, 0);
    if (s->napi_headers < s->nheaders) {
        feat_dir = features_pass(&F, idx, api_text.s ? api_text.s : "", args, nargs, dirs, ndirs,
                                 rd, api_loc);
        if (!feat_dir) {
            clang_disposeIndex(idx);
            goto out_args;
        }
        *(char **)VEC_PUSH(args, nargs) = xasprintf("-I%s", feat_dir);
    }
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        idx, tu_name, (const char *const *)args, (int)nargs, &uf, 1,
        CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_SkipFunctionBodies,
        &F.tu);
    if (ec != CXError_Success || !F.tu) {
        diag_error(d, api_loc ? *api_loc : (src_loc){0}, NULL, NULL,
                   "libclang could not parse the headers (error %d)", (int)ec);
        clang_disposeIndex(idx);
        goto out_args;
    }
    report_diags(F.tu, dirs, ndirs, rd, d);
    include_paths_check(F.tu, dirs, ndirs, rd, d);
    if (d->errors > errors0) {
        clang_disposeTranslationUnit(F.tu);
        clang_disposeIndex(idx);
        goto out_args;
    }

    F.nmain = s->nheaders;
    F.main_files = xcalloc(s->nheaders + 1, sizeof(CXFile));
    for (size_t i = 0; i < s->nheaders; i++)
        F.main_files[i] = clang_getFile(F.tu, F.main_paths[i]);
    if (s->select_regex) {
        int rc = regcomp(&F.re, s->select_regex, REG_EXTENDED | REG_NOSUB);
        if (rc == 0)
            F.have_re = 1;
        /* a bad regex was reported by check.c when it read the spec */
    }
    clang_visitChildren(clang_getTranslationUnitCursor(F.tu), visit_top, &F);
    if (!feat_dir) features_collect(F.tu, m); /* every header is the API's */
    clang_disposeTranslationUnit(F.tu);
    if (s->nvariant_suffixes && s->nvariant_defines)
        find_variants(&F, idx, tu_name, &uf, args, nargs, api_loc);
    else if (s->nvariant_suffixes)
        mark_declared_variants(&F);
    if (F.have_re) regfree(&F.re);
    clang_disposeIndex(idx);

out_args:
    if (feat_dir) {
        char *p = xasprintf("%s/%s_features.h", feat_dir, m->api.name);
        remove(p);
        free(p);
        rmdir(feat_dir);
        free(feat_dir);
    }
    for (size_t i = 0; i < nargs; i++) free(args[i]);
    free(args);
out:
    for (size_t i = 0; i < ndirs; i++) free(dirs[i]);
    free(dirs);
    for (size_t i = 0; i < s->nheaders; i++) free(F.main_paths[i]);
    free(F.main_paths);
    free(F.main_files);
    sb_free(&tu_text);
    sb_free(&api_text);
    strmap_free(&F.types);
    strmap_free(&F.records);
    strmap_free(&F.enums);
    strmap_free(&F.typedefs);
    strmap_free(&F.fns);
    strmap_free(&F.macros);
    return d->errors > errors0 ? 1 : 0;
}
