#include "diag.h"

#include <stdarg.h>
#include <string.h>

void diag_init(diag_sink *d, FILE *out)
{
    memset(d, 0, sizeof *d);
    d->out = out ? out : stderr;
}

static unsigned cap_of(const diag_sink *d)
{
    return d->max_errors ? d->max_errors : 50;
}

/* Whether the last error/warning was printed, so its notes follow it. */
static int last_shown = 1;

static void put_loc(FILE *f, src_loc at)
{
    if (!at.file) {
        fputs("apigen: ", f);
        return;
    }
    if (at.line && at.col)
        fprintf(f, "%s:%u:%u: ", at.file, at.line, at.col);
    else if (at.line)
        fprintf(f, "%s:%u: ", at.file, at.line);
    else
        fprintf(f, "%s: ", at.file);
}

static void report(diag_sink *d, int is_error, src_loc at, const char *fn, const char *param,
                   const char *fmt, va_list ap)
{
    FILE *f = d->out ? d->out : stderr;
    if (is_error) {
        d->errors++;
        if (d->errors > cap_of(d)) {
            if (d->errors == cap_of(d) + 1)
                fprintf(f, "apigen: error: too many errors (%u); stopping the report here\n",
                        cap_of(d));
            last_shown = 0;
            return;
        }
    } else {
        d->warnings++;
    }
    put_loc(f, at);
    fputs(is_error ? "error: " : "warning: ", f);
    if (fn) fprintf(f, "%s: ", fn);
    if (param) fprintf(f, "parameter '%s': ", param);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    last_shown = 1;
}

void diag_error(diag_sink *d, src_loc at, const char *fn, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, 1, at, fn, param, fmt, ap);
    va_end(ap);
}

void diag_warn(diag_sink *d, src_loc at, const char *fn, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, d->strict, at, fn, param, fmt, ap);
    va_end(ap);
}

void diag_note(diag_sink *d, src_loc at, const char *fmt, ...)
{
    if (!last_shown || !at.file) return;
    FILE *f = d->out ? d->out : stderr;
    va_list ap;
    va_start(ap, fmt);
    put_loc(f, at);
    fputs("note: ", f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
}
