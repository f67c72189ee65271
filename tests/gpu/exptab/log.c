/* apigen_log for export_tables.c built outside the driver stub
 * (tests/gpu/exptab-check.sh): the stub's format, on stderr. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include <cuda.h>

#include "apigen_rt.h"

void apigen_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("apigen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* the rest of what export_tables.c needs from the stub: no trace, no id
 * translation (the real driver numbers its own contexts) */
/* apigen_tracing is inline (apigen_rt.h): it reads this (1: tracing off) */
int apigen_trace_state_ = 1;
extern inline bool apigen_tracing(void);
bool apigen_tracing_slow(void)
{
    return false;
}
void apigen_trace(const char *fmt, ...)
{
    (void)fmt;
}
CUresult cuda_fwd_cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
    return cuCtxGetId(ctx, id);
}
void apigen_cuda_ctx_id_burned(unsigned long long id)
{
    (void)id;
}
