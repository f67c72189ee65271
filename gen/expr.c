#include "expr.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef enum { T_END, T_NUM, T_IDENT, T_PUNCT } tok_kind;

typedef struct tok {
    tok_kind kind;
    char text[256]; /* APIGEN_HAS_PARAM_function_parameter names run long */
    unsigned col; /* offset in the text */
} tok;

typedef struct parser {
    expr_env *env;
    const char *src;
    tok *toks;
    size_t ntoks, pos;
    int uses_out_deref;
    int uses_in_deref;
    jmp_buf fail;
} parser;

int expr_phase1_kind(param_kind k)
{
    switch (k) {
    case PK_VALUE:
    case PK_HANDLE:
    case PK_DEVPTR:
        return 1;
    case PK_STRUCT:
    case PK_IN:
    case PK_OUT:
    case PK_INOUT:
    case PK_STRING:
    case PK_CALLBACK:
    case PK_USERDATA:
    case PK_COND:
    case PK_IGNORE:
        return 0;
    }
    return 0;
}

static void fail_at(parser *P, unsigned col, const char *fmt, const char *arg)
{
    src_loc at = P->env->loc;
    at.col += col;
    char *msg = xasprintf(fmt, arg);
    diag_error(P->env->d, at, P->env->fn ? P->env->fn->name : NULL, P->env->param,
               "%s '%s': %s", P->env->what ? P->env->what : "expression", P->src, msg);
    free(msg);
    longjmp(P->fail, 1);
}

static const char *const puncts[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*", "/",
                                     "%",  "+",  "-",  "<",  ">",  "&",  "^",  "|",  "!", "~",
                                     "?",  ":",  "(",  ")",  "[",  "]",  NULL};

static int tokenize(parser *P)
{
    const char *s = P->src;
    size_t i = 0;
    for (;;) {
        while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') i++;
        tok *t = VEC_PUSH(P->toks, P->ntoks);
        t->col = (unsigned)i;
        if (!s[i]) {
            t->kind = T_END;
            return 1;
        }
        size_t start = i;
        if (isdigit((unsigned char)s[i])) {
            t->kind = T_NUM;
            if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
                i += 2;
                if (!isxdigit((unsigned char)s[i])) return 0;
                while (isxdigit((unsigned char)s[i])) i++;
            } else {
                while (isdigit((unsigned char)s[i])) i++;
            }
            while (s[i] == 'u' || s[i] == 'U' || s[i] == 'l' || s[i] == 'L') i++;
            if (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.') return 0;
        } else if (isalpha((unsigned char)s[i]) || s[i] == '_') {
            t->kind = T_IDENT;
            while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
        } else {
            t->kind = T_PUNCT;
            int found = 0;
            for (int k = 0; puncts[k]; k++) {
                size_t n = strlen(puncts[k]);
                if (strncmp(s + i, puncts[k], n) == 0) {
                    i += n;
                    found = 1;
                    break;
                }
            }
            if (!found) return 0;
        }
        if (i - start >= sizeof t->text) return 0;
        memcpy(t->text, s + start, i - start);
        t->text[i - start] = 0;
    }
}

static tok *peek(parser *P)
{
    return &P->toks[P->pos];
}

static int is_p(parser *P, const char *p)
{
    tok *t = peek(P);
    return t->kind == T_PUNCT && strcmp(t->text, p) == 0;
}

static void expect(parser *P, const char *p)
{
    if (!is_p(P, p)) {
        tok *t = peek(P);
        fail_at(P, t->col, t->kind == T_END ? "expected '%s' at the end" : "expected '%s' here", p);
    }
    P->pos++;
}

static const char *const type_words[] = {"const", "volatile", "signed", "unsigned", "char",
                                         "short", "int",      "long",   "float",    "double",
                                         "void",  "_Bool",    NULL};

static int is_type_word(const char *s)
{
    for (int i = 0; type_words[i]; i++)
        if (strcmp(type_words[i], s) == 0) return 1;
    return strcmp(s, "struct") == 0 || strcmp(s, "enum") == 0 || strcmp(s, "union") == 0;
}

/* A parameter's name in generated code (emit_util.c's pname). */
static const char *local_name(const char *name)
{
    return strcmp(name, "cx") == 0 ? "cx_arg_" : name;
}

static param_def *find_param(parser *P, const char *name)
{
    function_def *fn = P->env->fn;
    if (!fn) return NULL;
    for (size_t i = 0; i < fn->sig.nparams; i++)
        if (strcmp(fn->sig.params[i].name, name) == 0) return &fn->sig.params[i];
    return NULL;
}

static int is_value_name(parser *P, const char *name)
{
    return find_param(P, name) || model_find_enum_const(P->env->m, name, NULL) ||
           model_find_macro(P->env->m, name);
}

/* Whether the tokens at pos start a type name (for casts and sizeof). */
static int starts_type(parser *P)
{
    tok *t = peek(P);
    if (t->kind != T_IDENT) return 0;
    if (is_type_word(t->text)) return 1;
    return !is_value_name(P, t->text) && model_find_typedef(P->env->m, t->text) != NULL;
}

static int record_or_enum_exists(api_model *m, const char *full)
{
    for (size_t i = 0; i < m->nrecords; i++)
        if (strcmp(m->records[i]->name, full) == 0) return 1;
    for (size_t i = 0; i < m->nenums; i++)
        if (strcmp(m->enums[i]->name, full) == 0) return 1;
    return 0;
}

/* type-name: specifiers/qualifiers, at most one typedef or tag name, then '*'s. */
static void parse_type(parser *P, strbuf *out)
{
    int words = 0, named = 0;
    while (peek(P)->kind == T_IDENT) {
        tok *t = peek(P);
        if (strcmp(t->text, "struct") == 0 || strcmp(t->text, "enum") == 0 ||
            strcmp(t->text, "union") == 0) {
            P->pos++;
            tok *n = peek(P);
            if (n->kind != T_IDENT) fail_at(P, n->col, "expected a %s name", t->text);
            char *full = xasprintf("%s %s", t->text, n->text);
            if (!record_or_enum_exists(P->env->m, full)) {
                free(full);
                fail_at(P, n->col, "unknown type '%s'", n->text);
            }
            if (words++) sb_putc(out, ' ');
            sb_puts(out, full);
            free(full);
            named = 1;
            P->pos++;
            continue;
        }
        int kw = 0;
        for (int i = 0; type_words[i]; i++)
            if (strcmp(type_words[i], t->text) == 0) kw = 1;
        if (!kw) {
            if (named) break;
            if (!model_find_typedef(P->env->m, t->text))
                fail_at(P, t->col, "unknown type name '%s'", t->text);
            named = 1;
        }
        if (words++) sb_putc(out, ' ');
        sb_puts(out, t->text);
        P->pos++;
    }
    if (!words) fail_at(P, peek(P)->col, "expected a type name%s", "");
    int stars = 0;
    while (is_p(P, "*")) {
        if (!stars++) sb_putc(out, ' ');
        sb_putc(out, '*');
        P->pos++;
    }
}

/* Whether `name` is one type name: C's type words (`unsigned int`), a
 * typedef of the headers, or `struct X`/`enum X`/`union X` of the headers
 * (elem_by.types keys, pasted into sizeof). */
int expr_type_name_ok(api_model *m, const char *name)
{
    char w[128];
    int words = 0, named = 0, tag = 0;
    for (const char *p = name; *p;) {
        while (*p == ' ') p++;
        size_t n = strcspn(p, " ");
        if (!n) break;
        if (n >= sizeof w) return 0;
        memcpy(w, p, n);
        w[n] = 0;
        p += n;
        if (tag) {
            char *full = xasprintf("%s %s", tag == 1 ? "struct" : tag == 2 ? "enum" : "union", w);
            int ok = record_or_enum_exists(m, full);
            free(full);
            if (!ok || named) return 0;
            named = 1;
            tag = 0;
        } else if (strcmp(w, "struct") == 0 || strcmp(w, "enum") == 0 || strcmp(w, "union") == 0) {
            tag = w[0] == 's' ? 1 : w[0] == 'e' ? 2 : 3;
        } else if (is_type_word(w)) {
            /* const, unsigned, int, ... */
        } else if (!named && model_find_typedef(m, w)) {
            named = 1;
        } else {
            return 0;
        }
        words++;
    }
    return words > 0 && !tag;
}

static char *parse_expr(parser *P, int min_prec);

static char *parse_unary(parser *P)
{
    tok *t = peek(P);
    strbuf b = {0};
    if (t->kind == T_NUM) {
        P->pos++;
        sb_puts(&b, t->text);
        return sb_take(&b);
    }
    if (t->kind == T_IDENT) {
        if (strcmp(t->text, "sizeof") == 0) {
            P->pos++;
            expect(P, "(");
            if (!starts_type(P)) fail_at(P, peek(P)->col, "sizeof takes a type name here%s", "");
            sb_puts(&b, "sizeof(");
            parse_type(P, &b);
            expect(P, ")");
            sb_putc(&b, ')');
            return sb_take(&b);
        }
        if (strcmp(t->text, "size_of") == 0 && P->pos + 1 < P->ntoks &&
            P->toks[P->pos + 1].kind == T_PUNCT && strcmp(P->toks[P->pos + 1].text, "(") == 0) {
            /* size_of(p): the bytes types.sizes gives p's value */
            P->pos += 2;
            tok *a = peek(P);
            param_def *sp = a->kind == T_IDENT ? find_param(P, a->text) : NULL;
            if (!sp) fail_at(P, a->col, "size_of takes a parameter of the function%s", "");
            if (!expr_phase1_kind(sp->ann.kind))
                fail_at(P, a->col, "size_of(%s): the parameter is not passed by value", a->text);
            const size_table *st = model_size_table_of(P->env->m, sp->type);
            if (!st) {
                char *what = xasprintf("%s): no `types.sizes` entry for its type '%s' (list the "
                                       "bytes of each value under types.sizes.%s",
                                       a->text, sp->type->spelling, sp->type->spelling);
                fail_at(P, a->col, "size_of(%s)", what); /* fail_at does not return */
            }
            P->pos++;
            expect(P, ")");
            sb_printf(&b, "%s_size_of_%s(%s)", P->env->m->api.name, st->type, local_name(a->text));
            return sb_take(&b);
        }
        P->pos++;
        param_def *p = find_param(P, t->text);
        if (p && p->ann.kind == PK_IN && peek(P)->kind == T_PUNCT && strcmp(peek(P)->text, "[") == 0) {
            /* p[N]: an element of an input array of constant length declared
             * before the annotated parameter (both sides decode parameters in
             * declaration order, so its bytes are known when the size is
             * computed); a NULL array reads as 0 */
            tok *it = (P->pos++, peek(P));
            if (it->kind != T_NUM) fail_at(P, it->col, "an index is an integer constant%s", "");
            P->pos++;
            expect(P, "]");
            long long idx = strtoll(it->text, NULL, 0), len = 1;
            if (p->ann.count) {
                char *end;
                len = strtoll(p->ann.count->text, &end, 0);
                if (*end || p->ann.count_is_bytes) len = -1;
            }
            const param_def *self = P->env->param ? find_param(P, P->env->param) : NULL;
            if (p->ann.elem != EK_BYTES || p->ann.terminated || len < 0 || !self || self <= p)
                fail_at(P, t->col,
                        "'%s[...]': only an input array of a constant `count:` declared before "
                        "this parameter may be indexed",
                        t->text);
            if (idx < 0 || idx >= len)
                fail_at(P, it->col, "index %s is outside the array's `count:`", it->text);
            sb_printf(&b, "(%s != NULL ? %s[%lld] : 0)", local_name(t->text), local_name(t->text), idx);
            return sb_take(&b);
        }
        if (p) {
            if (!expr_phase1_kind(p->ann.kind))
                fail_at(P, t->col,
                        "parameter '%s' is not a value: a size or condition may only read "
                        "parameters passed by value (and `*p` of an out parameter in "
                        "`count_after`)",
                        t->text);
            sb_puts(&b, local_name(t->text));
            return sb_take(&b);
        }
        if (model_find_enum_const(P->env->m, t->text, NULL) ||
            model_find_macro(P->env->m, t->text)) {
            sb_puts(&b, t->text);
            return sb_take(&b);
        }
        fail_at(P, t->col,
                "unknown identifier '%s' (not a parameter, enum constant or integer macro)",
                t->text);
    }
    if (t->kind == T_PUNCT) {
        if (strcmp(t->text, "(") == 0) {
            P->pos++;
            if (starts_type(P)) {
                sb_putc(&b, '(');
                parse_type(P, &b);
                expect(P, ")");
                sb_putc(&b, ')');
                char *operand = parse_unary(P);
                sb_puts(&b, operand);
                free(operand);
                return sb_take(&b);
            }
            char *inner = parse_expr(P, 0);
            expect(P, ")");
            sb_printf(&b, "(%s)", inner);
            free(inner);
            return sb_take(&b);
        }
        if (strcmp(t->text, "*") == 0) {
            P->pos++;
            tok *n = peek(P);
            param_def *p = n->kind == T_IDENT ? find_param(P, n->text) : NULL;
            if (!p) fail_at(P, n->col, "`*` may only dereference an out parameter%s", "");
            if (!P->env->allow_out_deref && P->env->before_call &&
                (p->ann.kind == PK_IN || p->ann.kind == PK_INOUT)) {
                /* `*p` before the call: the one element of an in/inout
                 * parameter (a list call's *num_items), as sent; a NULL
                 * p reads as 0. An out parameter's size may read any such
                 * p (the handler allocates outputs after decoding every
                 * input); an input's only one declared before it. */
                const param_def *self = P->env->param ? find_param(P, P->env->param) : NULL;
                int one = !p->ann.count || strcmp(p->ann.count->text, "1") == 0;
                if (p->ann.elem != EK_BYTES || p->ann.terminated || p->ann.count_is_bytes || !one ||
                    !p->ann.elem_type || !self ||
                    (self->ann.kind != PK_OUT && self <= p))
                    fail_at(P, t->col,
                            "'*%s': only a plain in/inout parameter of one element may be read "
                            "before the call, by an out parameter's size or by one declared "
                            "after it",
                            n->text);
                P->pos++;
                P->uses_in_deref = 1;
                sb_printf(&b, "(%s != NULL ? *%s : 0)", n->text, n->text);
                return sb_take(&b);
            }
            if (P->env->allow_out_deref && !(p->ann.kind == PK_OUT || p->ann.kind == PK_INOUT))
                fail_at(P, t->col, "'*%s': only an out parameter's value can be read through `*`",
                        n->text);
            if (!P->env->allow_out_deref)
                fail_at(P, t->col,
                        "'*%s' reads a value that exists only after the call: allowed in "
                        "`count_after` on an out parameter (and, on an in/inout parameter of "
                        "one element, in `count:`/`bytes:`)",
                        n->text);
            P->pos++;
            P->uses_out_deref = 1;
            if (P->env->guard_out_deref)
                sb_printf(&b, "(%s != NULL ? *%s : 0)", local_name(n->text), local_name(n->text));
            else
                sb_printf(&b, "*%s", local_name(n->text));
            return sb_take(&b);
        }
        if (strcmp(t->text, "-") == 0 || strcmp(t->text, "!") == 0 ||
            strcmp(t->text, "~") == 0 || strcmp(t->text, "+") == 0) {
            P->pos++;
            char *operand = parse_unary(P);
            sb_printf(&b, "%s%s", t->text, operand);
            free(operand);
            return sb_take(&b);
        }
    }
    if (t->kind == T_END) fail_at(P, t->col, "expression ends too early%s", "");
    fail_at(P, t->col, "unexpected '%s'", t->text);
    return NULL;
}

static int binary_prec(tok *t)
{
    if (t->kind != T_PUNCT) return -1;
    static const struct {
        const char *op;
        int prec;
    } ops[] = {{"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5},  {"==", 6}, {"!=", 6},
               {"<", 7},  {"<=", 7}, {">", 7},  {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9},
               {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(ops[i].op, t->text) == 0) return ops[i].prec;
    return -1;
}

/* Operands that are themselves binary or conditional are parenthesized;
 * the top level is not. */
static char *wrap(char *s, int is_compound)
{
    if (!is_compound) return s;
    char *r = xasprintf("(%s)", s);
    free(s);
    return r;
}

static char *parse_bin(parser *P, int min_prec, int *compound)
{
    char *lhs = parse_unary(P);
    *compound = 0;
    for (;;) {
        tok *t = peek(P);
        int prec = binary_prec(t);
        if (prec < 0 || prec < min_prec) break;
        P->pos++;
        int rc;
        char *rhs = parse_bin(P, prec + 1, &rc);
        char *l = wrap(lhs, *compound);
        char *r = wrap(rhs, rc);
        lhs = xasprintf("%s %s %s", l, t->text, r);
        free(l);
        free(r);
        *compound = 1;
    }
    return lhs;
}

static char *parse_expr(parser *P, int min_prec)
{
    (void)min_prec;
    int c;
    char *lhs = parse_bin(P, 1, &c);
    if (is_p(P, "?")) {
        P->pos++;
        char *a = parse_expr(P, 0);
        expect(P, ":");
        char *b = parse_expr(P, 0);
        char *cond = wrap(lhs, c);
        char *r = xasprintf("%s ? (%s) : (%s)", cond, a, b);
        free(a);
        free(b);
        free(cond);
        return r;
    }
    return lhs;
}

expr *expr_parse(expr_env *env, const char *text)
{
    parser P = {0};
    P.env = env;
    P.src = text;
    char *volatile out = NULL;
    if (setjmp(P.fail)) {
        free(P.toks);
        free(out);
        return NULL;
    }
    if (!tokenize(&P)) {
        unsigned col = P.ntoks ? P.toks[P.ntoks - 1].col : 0;
        char bad[2] = {text[col], 0};
        fail_at(&P, col, "cannot read '%s' (not part of a C expression)", bad);
    }
    if (peek(&P)->kind == T_END) fail_at(&P, 0, "empty expression%s", "");
    out = parse_expr(&P, 0);
    if (peek(&P)->kind != T_END) fail_at(&P, peek(&P)->col, "unexpected '%s'", peek(&P)->text);
    expr *e = arena_alloc(env->m->arena, sizeof *e);
    e->text = arena_strdup(env->m->arena, out);
    e->uses_out_deref = P.uses_out_deref;
    e->uses_in_deref = P.uses_in_deref;
    e->loc = env->loc;
    free(out);
    free(P.toks);
    return e;
}

/* ---- constant evaluation (spec `when:` conditions) ---------------------------- */

static int64_t ev_expr(parser *P);

static int64_t ev_unary(parser *P)
{
    tok *t = peek(P);
    if (t->kind == T_PUNCT) {
        const char *op = t->text;
        if (strcmp(op, "(") == 0) {
            P->pos++;
            int64_t v = ev_expr(P);
            expect(P, ")");
            return v;
        }
        if (strcmp(op, "-") == 0 || strcmp(op, "+") == 0 || strcmp(op, "!") == 0 ||
            strcmp(op, "~") == 0) {
            P->pos++;
            int64_t v = ev_unary(P);
            switch (op[0]) {
            case '-': return (int64_t)(0 - (uint64_t)v);
            case '+': return v;
            case '!': return !v;
            default: return (int64_t)~(uint64_t)v;
            }
        }
    }
    if (t->kind == T_NUM) {
        P->pos++;
        return (int64_t)strtoull(t->text, NULL, 0);
    }
    if (t->kind == T_IDENT) {
        P->pos++;
        if (strcmp(t->text, "defined") == 0) {
            int paren = is_p(P, "(");
            if (paren) P->pos++;
            tok *n = peek(P);
            if (n->kind != T_IDENT) fail_at(P, n->col, "`defined` takes a macro name%s", "");
            P->pos++;
            if (paren) expect(P, ")");
            if (strncmp(n->text, "APIGEN_HAS_", 11) == 0) return model_has_feature(P->env->m, n->text);
            return model_find_macro(P->env->m, n->text) != NULL;
        }
        /* a feature of the headers (header_features.c): 1 when declared, else 0 */
        if (strncmp(t->text, "APIGEN_HAS_", 11) == 0) return model_has_feature(P->env->m, t->text);
        macro_def *md = model_find_macro(P->env->m, t->text);
        if (md) return md->value;
        enum_const *ec = model_find_enum_const(P->env->m, t->text, NULL);
        if (ec) return ec->value;
        fail_at(P, t->col, "'%s' is not an integer macro or enum constant of the headers", t->text);
    }
    if (t->kind == T_END) fail_at(P, t->col, "expression ends too early%s", "");
    fail_at(P, t->col, "unexpected '%s'", t->text);
    return 0;
}

static int64_t ev_apply(parser *P, tok *t, int64_t a, int64_t b)
{
    const char *o = t->text;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    if (strcmp(o, "||") == 0) return a || b;
    if (strcmp(o, "&&") == 0) return a && b;
    if (strcmp(o, "|") == 0) return (int64_t)(ua | ub);
    if (strcmp(o, "^") == 0) return (int64_t)(ua ^ ub);
    if (strcmp(o, "&") == 0) return (int64_t)(ua & ub);
    if (strcmp(o, "==") == 0) return a == b;
    if (strcmp(o, "!=") == 0) return a != b;
    if (strcmp(o, "<") == 0) return a < b;
    if (strcmp(o, "<=") == 0) return a <= b;
    if (strcmp(o, ">") == 0) return a > b;
    if (strcmp(o, ">=") == 0) return a >= b;
    if (strcmp(o, "<<") == 0) return b < 0 || b > 63 ? 0 : (int64_t)(ua << b);
    if (strcmp(o, ">>") == 0) return b < 0 || b > 63 ? 0 : a >> b;
    if (strcmp(o, "+") == 0) return (int64_t)(ua + ub);
    if (strcmp(o, "-") == 0) return (int64_t)(ua - ub);
    if (strcmp(o, "*") == 0) return (int64_t)(ua * ub);
    if (b == 0 || (a == INT64_MIN && b == -1)) fail_at(P, t->col, "'%s' divides by zero", o);
    return strcmp(o, "/") == 0 ? a / b : a % b;
}

static int64_t ev_bin(parser *P, int min_prec)
{
    int64_t lhs = ev_unary(P);
    for (;;) {
        tok *t = peek(P);
        int prec = binary_prec(t);
        if (prec < 0 || prec < min_prec) break;
        P->pos++;
        int64_t rhs = ev_bin(P, prec + 1);
        lhs = ev_apply(P, t, lhs, rhs);
    }
    return lhs;
}

static int64_t ev_expr(parser *P)
{
    int64_t c = ev_bin(P, 1);
    if (is_p(P, "?")) {
        P->pos++;
        int64_t a = ev_expr(P);
        expect(P, ":");
        int64_t b = ev_expr(P);
        return c ? a : b;
    }
    return c;
}

int expr_eval_const(expr_env *env, const char *text, int64_t *out)
{
    parser P = {0};
    P.env = env;
    P.src = text;
    if (setjmp(P.fail)) {
        free(P.toks);
        return 0;
    }
    if (!tokenize(&P)) {
        unsigned col = P.ntoks ? P.toks[P.ntoks - 1].col : 0;
        char bad[2] = {text[col], 0};
        fail_at(&P, col, "cannot read '%s' (not part of a C expression)", bad);
    }
    if (peek(&P)->kind == T_END) fail_at(&P, 0, "empty expression%s", "");
    int64_t v = ev_expr(&P);
    if (peek(&P)->kind != T_END) fail_at(&P, peek(&P)->col, "unexpected '%s'", peek(&P)->text);
    free(P.toks);
    *out = v;
    return 1;
}
