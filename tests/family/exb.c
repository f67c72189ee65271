/* libexb.so.1: exb over the real libexa.so.1 (tests/family/exb.h). */
#include "exb.h"

#include <stdio.h>
#include <stdlib.h>

#define EXB_API __attribute__((visibility("default")))

static exbStatus from_exa(exaStatus st)
{
    switch (st) {
    case EXA_SUCCESS: return EXB_SUCCESS;
    case EXA_ERROR_INVALID_VALUE: return EXB_ERROR_INVALID_VALUE;
    case EXA_ERROR_INVALID_HANDLE: return EXB_ERROR_INVALID_HANDLE;
    case EXA_ERROR_OUT_OF_MEMORY: return EXB_ERROR_OUT_OF_MEMORY;
    default: return EXB_ERROR_EXA;
    }
}

EXB_API exbStatus exbGetVersion(int *version)
{
    if (!version)
        return EXB_ERROR_INVALID_VALUE;
    *version = 1;
    return EXB_SUCCESS;
}

/* The buffer's bytes (malloc'd) after ctx's queued work ran. */
static exbStatus read_all(exaContext ctx, exaBuffer b, unsigned char **data, size_t *n)
{
    exaStatus st = exaGetBufferSize(b, n);
    if (st == EXA_SUCCESS)
        st = exaFinish(ctx);
    if (st != EXA_SUCCESS)
        return from_exa(st);
    *data = malloc(*n ? *n : 1);
    if (!*data)
        return EXB_ERROR_OUT_OF_MEMORY;
    st = exaReadBuffer(b, 0, *n, *data);
    if (st != EXA_SUCCESS) {
        free(*data);
        return from_exa(st);
    }
    return EXB_SUCCESS;
}

EXB_API exbStatus exbDescribe(exaContext ctx, exaBuffer buffer, char *text, size_t capacity)
{
    if (!text || capacity == 0)
        return EXB_ERROR_INVALID_VALUE;
    unsigned char *d;
    size_t n;
    exbStatus st = read_all(ctx, buffer, &d, &n);
    if (st != EXB_SUCCESS)
        return st;
    unsigned long long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += d[i];
    free(d);
    snprintf(text, capacity, "bytes=%zu sum=%llu", n, sum);
    return EXB_SUCCESS;
}

EXB_API exbStatus exbCreateBufferLike(exaContext ctx, exaBuffer like, exaBuffer *out)
{
    if (!out)
        return EXB_ERROR_INVALID_VALUE;
    unsigned char *d;
    size_t n;
    exbStatus st = read_all(ctx, like, &d, &n);
    if (st != EXB_SUCCESS)
        return st;
    exaBuffer b;
    exaStatus es = exaCreateBuffer(ctx, n, &b);
    if (es == EXA_SUCCESS && (es = exaWriteBuffer(b, 0, n, d)) != EXA_SUCCESS)
        exaReleaseBuffer(b);
    free(d);
    if (es != EXA_SUCCESS)
        return from_exa(es);
    *out = b;
    return EXB_SUCCESS;
}

EXB_API exbStatus exbReleaseBuffer(exaBuffer buffer)
{
    return from_exa(exaReleaseBuffer(buffer));
}

EXB_API exbStatus exbSumDevice(exaContext ctx, const void *src, size_t n, double *sum)
{
    if (!sum || !src)
        return EXB_ERROR_INVALID_VALUE;
    float *h = malloc(n ? n * sizeof *h : 1);
    if (!h)
        return EXB_ERROR_OUT_OF_MEMORY;
    exaStatus st = exaFinish(ctx);
    if (st == EXA_SUCCESS)
        st = exaMemcpy(h, src, n * sizeof *h, EXA_COPY_DEVICE_TO_HOST);
    double s = 0;
    for (size_t i = 0; st == EXA_SUCCESS && i < n; i++)
        s += h[i];
    free(h);
    if (st != EXA_SUCCESS)
        return from_exa(st);
    *sum = s;
    return EXB_SUCCESS;
}
