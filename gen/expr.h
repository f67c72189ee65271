/* C expressions in a spec (sizes, counts, conditions): tokenized, parsed,
 * checked against the function's parameters, enum constants, integer macros
 * and type names, and re-emitted as normalized text. */
#ifndef APIGEN_EXPR_H
#define APIGEN_EXPR_H

#include "diag.h"
#include "model.h"

typedef struct expr_env {
    api_model *m;
    function_def *fn;      /* whose parameters the expression may name */
    int allow_out_deref;   /* count_after: `*p` of an out parameter is allowed */
    int before_call;       /* count/bytes: `*p` of a one-element in/inout parameter is allowed */
    diag_sink *d;
    const char *param;     /* for diagnostics; may be NULL */
    const char *what;      /* "size", "condition", ... */
    src_loc loc;           /* column of the expression's first character */
    int guard_out_deref;   /* `*p` of an out parameter reads 0 where p is NULL */
} expr_env;

/* Parses `text`. Every parameter it reads must already have a decided kind:
 * only value-like (phase 1) parameters may be read, and `*p` only of an out
 * parameter when allow_out_deref. Returns an expr allocated in the model's
 * arena, or NULL after reporting an error at the bad token's column. */
expr *expr_parse(expr_env *env, const char *text);
/* Whether `name` is one C type name of the headers (for sizeof). */
int expr_type_name_ok(api_model *m, const char *name);

/* Evaluates a constant expression over the headers' integer macros and enum
 * constants (spec `when:` conditions; `defined(NAME)` tests a macro). Returns
 * 1 and the value, or 0 after reporting an error at the bad token. */
int expr_eval_const(expr_env *env, const char *text, int64_t *out);

/* Whether a parameter kind travels in phase 1 (readable by expressions). */
int expr_phase1_kind(param_kind k);

#endif
