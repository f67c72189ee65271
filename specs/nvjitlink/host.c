/* Hand-written host code for specs/nvjitlink.yaml: the live list of this
 * server's links (nvJitLinkDestroy takes the handle by pointer, so the
 * handle table keeps a destroyed one: a handle not on the list is refused
 * with NVJITLINK_ERROR_INVALID_INPUT before it reaches the library), and
 * the outputs, checked against the library's own size. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvjitlink_wire.h"

struct link {
    nvJitLinkHandle h;
    int nbufs;
    char **bufs; /* the inputs' bytes, kept until the link goes (below) */
    struct link *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct link *links;

static bool live(nvJitLinkHandle h)
{
    pthread_mutex_lock(&mu);
    struct link *l = links;
    while (l && l->h != h) l = l->next;
    pthread_mutex_unlock(&mu);
    return l != NULL;
}

nvJitLinkResult nvjitlink_host_create(apigen_call_ctx *cx, nvJitLinkHandle *handle,
                                      uint32_t numOptions, const char *const *options)
{
    (void)cx;
    nvJitLinkResult r = APIGEN_NVJL(Create)(handle, numOptions, options);
    if (r != NVJITLINK_SUCCESS || !handle || !*handle) return r;
    struct link *l = malloc(sizeof *l);
    if (!l) {
        APIGEN_NVJL(Destroy)(handle);
        return NVJITLINK_ERROR_INTERNAL;
    }
    pthread_mutex_lock(&mu);
    l->h = *handle;
    l->nbufs = 0;
    l->bufs = NULL;
    l->next = links;
    links = l;
    pthread_mutex_unlock(&mu);
    return r;
}

nvJitLinkResult nvjitlink_host_destroy(apigen_call_ctx *cx, nvJitLinkHandle *handle)
{
    (void)cx;
    if (!handle || !*handle) return APIGEN_NVJL(Destroy)(handle);
    pthread_mutex_lock(&mu);
    struct link **pp = &links;
    while (*pp && (*pp)->h != *handle) pp = &(*pp)->next;
    struct link *l = *pp;
    if (l) *pp = l->next;
    pthread_mutex_unlock(&mu);
    if (!l) return NVJITLINK_ERROR_INVALID_INPUT; /* destroyed before */
    nvJitLinkResult r = APIGEN_NVJL(Destroy)(handle);
    for (int i = 0; i < l->nbufs; i++) free(l->bufs[i]);
    free(l->bufs);
    free(l);
    return r;
}

/* NULL reaches the library (its own NVJITLINK_ERROR_NULL_INPUT) */
#define LIVE(call) return !handle || live(handle) ? (call) : NVJITLINK_ERROR_INVALID_INPUT

nvJitLinkResult nvjitlink_host_add_data(apigen_call_ctx *cx, nvJitLinkHandle handle,
                                        nvJitLinkInputType inputType, const void *data,
                                        size_t size, const char *name)
{
    (void)cx;
    if (handle && !live(handle)) return NVJITLINK_ERROR_INVALID_INPUT;
    if (!handle || !data) return APIGEN_NVJL(AddData)(handle, inputType, data, size, name);
    /* nvJitLink reads text inputs (PTX) up to a NUL, past `size`: natively
     * the caller's string ends there; here the bytes end at `size` in the
     * server's receive buffer, so they get a NUL of their own */
    char *copy = malloc(size + 1);
    if (!copy) return NVJITLINK_ERROR_INTERNAL;
    memcpy(copy, data, size);
    copy[size] = 0;
    nvJitLinkResult r = APIGEN_NVJL(AddData)(handle, inputType, copy, size, name);
    /* kept as long as the link, in case the library refers to it until
     * nvJitLinkComplete (the caller's buffer natively) */
    pthread_mutex_lock(&mu);
    struct link *l = links;
    while (l && l->h != handle) l = l->next;
    char **v = l ? realloc(l->bufs, (size_t)(l->nbufs + 1) * sizeof *v) : NULL;
    if (v) {
        l->bufs = v;
        v[l->nbufs++] = copy;
        copy = NULL;
    }
    pthread_mutex_unlock(&mu);
    free(copy); /* the link went meanwhile, or no memory to keep it */
    return r;
}

nvJitLinkResult nvjitlink_host_complete(apigen_call_ctx *cx, nvJitLinkHandle handle)
{
    (void)cx;
    LIVE(APIGEN_NVJL(Complete)(handle));
}

nvJitLinkResult nvjitlink_host_cubin_size(apigen_call_ctx *cx, nvJitLinkHandle handle,
                                          size_t *size)
{
    (void)cx;
    LIVE(APIGEN_NVJL(GetLinkedCubinSize)(handle, size));
}

nvJitLinkResult nvjitlink_host_ptx_size(apigen_call_ctx *cx, nvJitLinkHandle handle,
                                        size_t *size)
{
    (void)cx;
    LIVE(APIGEN_NVJL(GetLinkedPtxSize)(handle, size));
}

nvJitLinkResult nvjitlink_host_error_log_size(apigen_call_ctx *cx, nvJitLinkHandle handle,
                                              size_t *size)
{
    (void)cx;
    LIVE(APIGEN_NVJL(GetErrorLogSize)(handle, size));
}

nvJitLinkResult nvjitlink_host_info_log_size(apigen_call_ctx *cx, nvJitLinkHandle handle,
                                             size_t *size)
{
    (void)cx;
    LIVE(APIGEN_NVJL(GetInfoLogSize)(handle, size));
}

nvJitLinkResult apigenNvJitLinkGetOutput(nvJitLinkHandle handle, int which, void *buf,
                                         size_t size)
{
    static nvJitLinkResult (*const sizes[])(nvJitLinkHandle, size_t *) = {
        APIGEN_NVJL(GetLinkedCubinSize), APIGEN_NVJL(GetLinkedPtxSize),
        APIGEN_NVJL(GetErrorLogSize), APIGEN_NVJL(GetInfoLogSize)};
    if (which < 0 || which > 3) return NVJITLINK_ERROR_INVALID_INPUT;
    if (handle && !live(handle)) return NVJITLINK_ERROR_INVALID_INPUT;
    if (buf && handle) {
        size_t need = 0;
        nvJitLinkResult r = sizes[which](handle, &need);
        if (r != NVJITLINK_SUCCESS) return r;
        if (need > size) {
            apigen_log("nvJitLink: an output of %zu bytes asked into %zu bytes: refused", need,
                       size);
            return NVJITLINK_ERROR_INVALID_INPUT;
        }
    }
    switch (which) {
    case 0: return APIGEN_NVJL(GetLinkedCubin)(handle, buf);
    case 1: return APIGEN_NVJL(GetLinkedPtx)(handle, buf);
    case 2: return APIGEN_NVJL(GetErrorLog)(handle, buf);
    default: return APIGEN_NVJL(GetInfoLog)(handle, buf);
    }
}
