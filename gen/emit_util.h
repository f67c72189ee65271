/* Shared by the emitters: the emit context, C type and wire-encoding
 * helpers. Emitters only assert what check.c validated. */
#ifndef APIGEN_EMIT_UTIL_H
#define APIGEN_EMIT_UTIL_H

#include "apigen.h"
#include "template.h"
#include "util.h"

/* A callback (function pointer) type used by a forwarded function. */
typedef struct cb_type {
    char *name;            /* typedef name, or <function>_<param> when spelled raw */
    const type_info *type; /* the function-pointer parameter type */
    const fn_sig *sig;
    int user_data_index;
    unsigned id;
} cb_type;

typedef struct emit_ctx {
    const api_model *m;
    const apigen_options *opt;
    tmpl_set ts;
    tmpl_out o;
    FILE *err;
    int failed;
    char *API;        /* upper-case api name */
    char *stamp;      /* "apigen <version>" */
    char *spec;       /* spec path as given, escaped for comments */
    cb_type *cbs;     /* sorted by name */
    size_t ncbs;
    uint32_t ncalls;  /* 1 + the highest call id */
} emit_ctx;

int emit_ctx_init(emit_ctx *e, const api_model *m, const apigen_options *opt, FILE *err);
void emit_ctx_free(emit_ctx *e);
/* Points e->o at sb (cleared). */
void emit_begin(emit_ctx *e, strbuf *sb);
void emit_internal(emit_ctx *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One artifact each: 0 on success. */
int emit_wire(emit_ctx *e, strbuf *out);
int emit_stub(emit_ctx *e, strbuf *out);
int emit_server(emit_ctx *e, strbuf *out);
int emit_server_main(emit_ctx *e, strbuf *out);
int emit_map(emit_ctx *e, strbuf *out);
int emit_coverage(emit_ctx *e, strbuf *out);
int emit_model(emit_ctx *e, strbuf *out);
int emit_features(emit_ctx *e, strbuf *out);

/* ---- C types ---- */
/* `T name` for a declaration (handles pointers, function pointers, arrays);
 * const at the top level dropped when drop_const. Heap string. */
char *c_decl(const type_info *t, const char *name, int drop_const);
/* The type as a cast or in sizeof: spelling with top-level const dropped. */
char *c_type(const type_info *t);
/* sizeof expression for one element: "sizeof(T)", "1" for void. */
char *c_sizeof(const type_info *t);
int type_is_void(const type_info *t);
/* The call-name table both halves of the API descriptor carry, through the
 * `<side>_table_open/entry/close` fragments of side "srv" or "stub". */
void emit_call_names(emit_ctx *e, const char *side);
/* A callback's `once` as C: "true", "false" or "((EXPR) != 0)". Heap string. */
char *cb_once_text(const param_ann *a);
int type_is_signed(const type_info *t);
/* Names a parameter: its own name, or a<i> when the header left it unnamed. */
const char *pname(const param_def *p, size_t i, char tmp[24]);

/* A value-like scalar on the wire: u8..u64 / f32 / f64. */
typedef struct wire_scalar {
    const char *put;    /* "apigen_put_u32" */
    const char *get;    /* "apigen_get_u32" */
    const char *utype;  /* "uint32_t" / "float" */
    const char *stype;  /* "int32_t" (signed cast), NULL when not signed */
    unsigned bits;
} wire_scalar;
int wire_scalar_of(const type_info *t, wire_scalar *w);
/* Encoding expression for a value: "(uint32_t)x" / "(float)x". Heap. */
char *wire_value_enc(const wire_scalar *w, const char *expr);
/* Decoding: "(T)(int32_t)v". Heap. */
char *wire_value_dec(const wire_scalar *w, const type_info *t, const char *var);

/* The function's return type is the spec's error type. */
int returns_error(const emit_ctx *e, const function_def *f);
const handle_type_def *find_handle(const api_model *m, const char *name);
/* Handle type of a C type (typedef name or spelling match), or NULL. */
const handle_type_def *handle_of_type(const api_model *m, const type_info *t);
/* The error value name (or number) for each runtime status. */
const char *status_error_value(const emit_ctx *e, const char *status, char tmp[32]);
const cb_type *find_cb(const emit_ctx *e, const function_def *f, const param_def *p);
int is_char_type(const type_info *t);

#endif
