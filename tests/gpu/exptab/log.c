/* apigen_log for export_tables.c built outside the driver stub
 * (tests/gpu/exptab-check.sh): the stub's format, on stderr. */
#include <stdarg.h>
#include <stdio.h>

void apigen_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("apigen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
