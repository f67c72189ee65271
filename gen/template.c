#include "template.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct apigen_template_file {
    const char *name;
    const char *text;
};
extern const struct apigen_template_file apigen_template_files[];

const tmpl_frag *tmpl_find(const tmpl_set *ts, const char *name)
{
    for (size_t i = 0; i < ts->nfrags; i++)
        if (strcmp(ts->frags[i].name, name) == 0) return &ts->frags[i];
    return NULL;
}

static int add_frag(tmpl_set *ts, const char *file, const char *name, size_t nlen, strbuf *body,
                    int strip_nl, FILE *err)
{
    char *n = xstrndup(name, nlen);
    char *text = sb_take(body);
    if (strip_nl) {
        size_t l = strlen(text);
        if (l && text[l - 1] == '\n') text[l - 1] = 0;
    }
    if (!is_c_identifier(n) || tmpl_find(ts, n)) {
        fprintf(err, "apigen: internal error: template %s: %s fragment name '%s'\n", file,
                is_c_identifier(n) ? "duplicate" : "bad", n);
        free(n);
        free(text);
        return -1;
    }
    tmpl_frag *f = VEC_PUSH(ts->frags, ts->nfrags);
    f->name = n;
    f->text = text;
    f->file = file;
    return 0;
}

static int load_file(tmpl_set *ts, const char *file, const char *text, FILE *err)
{
    strbuf body = {0};
    const char *name = NULL;
    size_t nlen = 0;
    int strip = 0, rc = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
        if (strncmp(p, "@#", 2) == 0) {
            /* comment */
        } else if (strncmp(p, "@@", 2) == 0) {
            if (name && add_frag(ts, file, name, nlen, &body, strip, err)) rc = -1;
            sb_free(&body);
            const char *q = p + 2;
            strip = *q == '-';
            if (strip) q++;
            while (*q == ' ') q++;
            name = q;
            nlen = 0;
            while (q[nlen] && q[nlen] != '\n' && q[nlen] != ' ' && q[nlen] != '\r') nlen++;
        } else if (name) {
            for (size_t i = 0; i < len; i++) sb_putc(&body, p[i]);
        } else if (strspn(p, " \t\r\n") != len) {
            fprintf(err, "apigen: internal error: template %s: text before the first @@\n", file);
            rc = -1;
        }
        p += len;
    }
    if (name && add_frag(ts, file, name, nlen, &body, strip, err)) rc = -1;
    sb_free(&body);
    return rc;
}

int tmpl_set_load(tmpl_set *ts, FILE *err)
{
    int rc = 0;
    memset(ts, 0, sizeof *ts);
    for (const struct apigen_template_file *f = apigen_template_files; f->name; f++)
        if (load_file(ts, f->name, f->text, err)) rc = -1;
    return rc;
}

void tmpl_set_free(tmpl_set *ts)
{
    for (size_t i = 0; i < ts->nfrags; i++) {
        free(ts->frags[i].name);
        free(ts->frags[i].text);
    }
    free(ts->frags);
    memset(ts, 0, sizeof *ts);
}

static void put_indent(tmpl_out *o)
{
    for (int i = 0; i < o->indent; i++) sb_putc(o->sb, ' ');
}

void tmpl_putv(tmpl_out *o, const char *name, const char *const *kv, size_t npairs)
{
    const tmpl_frag *f = tmpl_find(o->ts, name);
    if (!f) {
        fprintf(o->err, "apigen: internal error: no template fragment '%s'\n", name);
        o->failed = 1;
        return;
    }
    unsigned char used[64] = {0};
    if (npairs > 64) {
        fprintf(o->err, "apigen: internal error: fragment '%s': too many variables\n", name);
        o->failed = 1;
        return;
    }
    int bol = o->sb->len == 0 || o->sb->s[o->sb->len - 1] == '\n';
    for (const char *p = f->text; *p;) {
        if (bol && *p != '\n' && o->indent) put_indent(o);
        bol = 0;
        if (*p == '$') {
            const char *end = strchr(p + 1, '$');
            if (!end) {
                fprintf(o->err, "apigen: internal error: template %s: fragment '%s': unterminated $\n",
                        f->file, name);
                o->failed = 1;
                return;
            }
            if (end == p + 1) {
                sb_putc(o->sb, '$');
                p = end + 1;
                continue;
            }
            size_t vl = (size_t)(end - p - 1);
            size_t i;
            for (i = 0; i < npairs; i++)
                if (strlen(kv[2 * i]) == vl && memcmp(kv[2 * i], p + 1, vl) == 0) break;
            if (i == npairs) {
                fprintf(o->err, "apigen: internal error: template %s: fragment '%s': unknown variable '%.*s'\n",
                        f->file, name, (int)vl, p + 1);
                o->failed = 1;
                return;
            }
            used[i] = 1;
            const char *v = kv[2 * i + 1] ? kv[2 * i + 1] : "";
            /* a multi-line value keeps the indent of the fragment */
            for (; *v; v++) {
                sb_putc(o->sb, *v);
                if (*v == '\n' && v[1] && v[1] != '\n' && o->indent) put_indent(o);
            }
            p = end + 1;
            continue;
        }
        sb_putc(o->sb, *p);
        if (*p == '\n') bol = 1;
        p++;
    }
    for (size_t i = 0; i < npairs; i++) {
        if (!used[i]) {
            fprintf(o->err, "apigen: internal error: fragment '%s': variable '%s' not used\n", name,
                    kv[2 * i]);
            o->failed = 1;
        }
    }
}

void tmpl_put(tmpl_out *o, const char *name, ...)
{
    const char *kv[128];
    size_t n = 0;
    va_list ap;
    va_start(ap, name);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k) break;
        const char *v = va_arg(ap, const char *);
        if (n + 2 > sizeof kv / sizeof kv[0]) {
            fprintf(o->err, "apigen: internal error: fragment '%s': too many variables\n", name);
            o->failed = 1;
            va_end(ap);
            return;
        }
        kv[n++] = k;
        kv[n++] = v;
    }
    va_end(ap);
    tmpl_putv(o, name, kv, n / 2);
}

char *c_comment(const char *s)
{
    strbuf b = {0};
    sb_puts(&b, "");
    for (const char *p = s ? s : ""; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '*' && p[1] == '/') {
            sb_puts(&b, "* ");
        } else if (ch == '/' && p[1] == '*') {
            sb_puts(&b, "/ ");
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            sb_putc(&b, ' ');
        } else if (ch < 0x20 || ch == 0x7f) {
            sb_putc(&b, '?');
        } else {
            sb_putc(&b, (char)ch);
        }
    }
    return sb_take(&b);
}

char *c_string(const char *s)
{
    strbuf b = {0};
    sb_puts(&b, "");
    for (const char *p = s ? s : ""; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        switch (ch) {
        case '\\': sb_puts(&b, "\\\\"); break;
        case '"': sb_puts(&b, "\\\""); break;
        case '\n': sb_puts(&b, "\\n"); break;
        case '\r': sb_puts(&b, "\\r"); break;
        case '\t': sb_puts(&b, "\\t"); break;
        case '?': sb_puts(&b, "\\?"); break;
        default:
            if (ch < 0x20 || ch >= 0x7f) sb_printf(&b, "\\%03o", ch);
            else sb_putc(&b, (char)ch);
        }
    }
    return sb_take(&b);
}

char *md_cell(const char *s)
{
    strbuf b = {0};
    sb_puts(&b, "");
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '|') sb_puts(&b, "\\|");
        else if (*p == '\n' || *p == '\r') sb_putc(&b, ' ');
        else sb_putc(&b, *p);
    }
    return sb_take(&b);
}
