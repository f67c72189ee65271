/* Hand-written host code for specs/nvrtc.yaml.
 *
 * The server keeps, per program, what nvrtcCreateProgram got (source, name,
 * in-memory headers) and the name expressions added since. When the guest
 * sends headers it read from its own disk (apigenNvrtcCompile), the program
 * is built again with all of them ("the compiled program") and every later
 * query of the client's program is answered from that one; without such
 * headers the program itself is compiled. A program this table does not
 * know (destroyed, never made here) is NVRTC_ERROR_INVALID_PROGRAM, so a
 * stale pointer never reaches the library. The compile runs with the file
 * guard of host_files.c on: NVRTC reads no file outside the server's CUDA
 * toolkit. */
#define _GNU_SOURCE /* strdup */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvrtc_files.h"
#include "nvrtc_wire.h"
#include "nvrtc_features.h"

struct prog {
    nvrtcProgram real, compiled; /* compiled: NULL while real is the one */
    char *src, *name;
    int nh, nexpr;
    char **h, **n, **expr;
    struct prog *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct prog *progs;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void free_strs(char **v, int n)
{
    for (int i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

static void prog_free(struct prog *p)
{
    if (p->compiled) nvrtcDestroyProgram(&p->compiled);
    free(p->src);
    free(p->name);
    free_strs(p->h, p->nh);
    free_strs(p->n, p->nh);
    free_strs(p->expr, p->nexpr);
    free(p);
}

/* The record of real, locked by the caller. */
static struct prog *find(nvrtcProgram real)
{
    for (struct prog *p = progs; p; p = p->next)
        if (p->real == real) return p;
    return NULL;
}

static nvrtcProgram current(struct prog *p)
{
    return p->compiled ? p->compiled : p->real;
}

nvrtcResult nvrtc_host_create(apigen_call_ctx *cx, nvrtcProgram *prog, const char *src,
                              const char *name, int numHeaders, const char *const *headers,
                              const char *const *includeNames)
{
    (void)cx;
    nvrtcResult r = nvrtcCreateProgram(prog, src, name, numHeaders, headers, includeNames);
    if (r != NVRTC_SUCCESS || !prog) return r;
    struct prog *p = calloc(1, sizeof *p);
    int n = numHeaders > 0 ? numHeaders : 0;
    if (p) {
        p->real = *prog;
        p->src = dup_or_null(src);
        p->name = dup_or_null(name);
        p->h = n ? calloc((size_t)n, sizeof *p->h) : NULL;
        p->n = n ? calloc((size_t)n, sizeof *p->n) : NULL;
        p->nh = n;
    }
    bool ok = p && (!src || p->src) && (!name || p->name) && (!n || (p->h && p->n));
    for (int i = 0; ok && i < n; i++) {
        p->h[i] = dup_or_null(headers[i]);
        p->n[i] = dup_or_null(includeNames[i]);
        ok = (!headers[i] || p->h[i]) && (!includeNames[i] || p->n[i]);
    }
    if (!ok) {
        if (p) prog_free(p);
        nvrtcDestroyProgram(prog);
        return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&mu);
    p->next = progs;
    progs = p;
    pthread_mutex_unlock(&mu);
    return r;
}

nvrtcResult nvrtc_host_destroy(apigen_call_ctx *cx, nvrtcProgram *prog)
{
    (void)cx;
    if (!prog) return nvrtcDestroyProgram(prog);
    pthread_mutex_lock(&mu);
    struct prog **pp = &progs;
    while (*pp && (*pp)->real != *prog) pp = &(*pp)->next;
    struct prog *p = *pp;
    if (p) *pp = p->next;
    pthread_mutex_unlock(&mu);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM; /* destroyed before */
    prog_free(p);
    return nvrtcDestroyProgram(prog);
}

nvrtcResult nvrtc_host_add_name(apigen_call_ctx *cx, nvrtcProgram prog,
                                const char *const name_expression)
{
    (void)cx;
    pthread_mutex_lock(&mu);
    struct prog *p = find(prog);
    nvrtcResult r = NVRTC_ERROR_INVALID_PROGRAM;
    if (p) r = nvrtcAddNameExpression(current(p), name_expression);
    if (r == NVRTC_SUCCESS) {
        char **v = realloc(p->expr, (size_t)(p->nexpr + 1) * sizeof *v);
        char *e = strdup(name_expression);
        if (v) p->expr = v;
        if (v && e) v[p->nexpr++] = e;
        else {
            free(e);
            r = NVRTC_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
}

/* The option that names the server's toolkit for a guest toolkit folder
 * (includes.c): "-I@cuda-toolkit<rel>", rel empty or "/..." below include/. */
#define TOOLKIT_MARK "-I" NVRTC_TOOLKIT_MARK

/* Options that make NVRTC read or write files by path: on the server those
 * would be the server's files. */
static const char *const path_options[] = {
    "--create-pch", "-create-pch", "--use-pch", "-use-pch", "--pch-dir", "-pch-dir",
    "--time", "-time", "--fdevice-time-trace", "-fdevice-time-trace",
};

static bool starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* opts with the toolkit marks made the server's folders, in out (the new
 * strings in owned); false: an option refused (logged). */
static nvrtcResult server_options(int n, const char *const *opts, const char **out, char **owned)
{
    const char *inc = nvrtc_toolkit_include();
    for (int i = 0; i < n; i++) {
        const char *o = opts[i];
        out[i] = o;
        owned[i] = NULL;
        if (!o) continue;
        for (size_t k = 0; k < sizeof path_options / sizeof *path_options; k++) {
            size_t l = strlen(path_options[k]);
            if (strncmp(o, path_options[k], l) == 0 && (o[l] == 0 || o[l] == '=')) {
                apigen_log("nvrtcCompileProgram: option '%s' refused: it names a file by path, "
                           "which would be a file of the server, not of the guest", o);
                return NVRTC_ERROR_INVALID_OPTION;
            }
        }
        if (starts(o, TOOLKIT_MARK)) {
            const char *rel = o + strlen(TOOLKIT_MARK);
            if ((*rel && *rel != '/') || strstr(rel, "/..") || !inc) {
                apigen_log("nvrtcCompileProgram: option '%s' refused: not a folder of the "
                           "server's CUDA toolkit", o);
                return NVRTC_ERROR_INVALID_OPTION;
            }
            size_t len = 2 + strlen(inc) + strlen(rel) + 1;
            if (!(owned[i] = malloc(len))) return NVRTC_ERROR_OUT_OF_MEMORY;
            snprintf(owned[i], len, "-I%s%s", inc, rel);
            out[i] = owned[i];
        }
    }
    return NVRTC_SUCCESS;
}

/* A program with p's source, name and headers plus the guest's, and p's
 * name expressions: the one compiled when the guest sent headers. */
static nvrtcResult rebuild(struct prog *p, int nh, const char *const *h, const char *const *n,
                           nvrtcProgram *out)
{
    int total = p->nh + nh;
    const char **ah = calloc((size_t)total + 1, sizeof *ah);
    const char **an = calloc((size_t)total + 1, sizeof *an);
    nvrtcResult r = NVRTC_ERROR_OUT_OF_MEMORY;
    if (ah && an) {
        for (int i = 0; i < p->nh; i++) ah[i] = p->h[i], an[i] = p->n[i];
        for (int i = 0; i < nh; i++) ah[p->nh + i] = h[i], an[p->nh + i] = n[i];
        r = nvrtcCreateProgram(out, p->src, p->name, total, ah, an);
        for (int i = 0; r == NVRTC_SUCCESS && i < p->nexpr; i++) {
            r = nvrtcAddNameExpression(*out, p->expr[i]);
            if (r != NVRTC_SUCCESS) nvrtcDestroyProgram(out);
        }
    }
    free(ah);
    free(an);
    return r;
}

nvrtcResult apigenNvrtcCompile(nvrtcProgram prog, int numOptions, const char *const *options,
                               int numHeaders, const char *const *headers,
                               const char *const *includeNames, const char *cwd)
{
    int nopt = numOptions > 0 && options ? numOptions : 0;
    const char **opts = calloc((size_t)nopt + 1, sizeof *opts);
    char **owned = calloc((size_t)nopt + 1, sizeof *owned);
    pthread_mutex_lock(&mu);
    struct prog *p = find(prog);
    /* the library checks the program before the options */
    nvrtcResult r = !p                ? NVRTC_ERROR_INVALID_PROGRAM
                    : opts && owned ? server_options(nopt, options, opts, owned)
                                    : NVRTC_ERROR_OUT_OF_MEMORY;
    if (r == NVRTC_SUCCESS) {
        nvrtcProgram target = prog, fresh = NULL;
        if (numHeaders > 0 && headers && includeNames) {
            r = rebuild(p, numHeaders, headers, includeNames, &fresh);
            target = fresh;
        }
        if (r == NVRTC_SUCCESS) {
            /* the library's own answer to options it was given as such */
            const char *const *pass = numOptions > 0 && options ? opts : options;
            nvrtc_files_guard(true, cwd);
            r = nvrtcCompileProgram(target, numOptions, pass);
            nvrtc_files_guard(false, NULL);
            if (p->compiled) nvrtcDestroyProgram(&p->compiled);
            p->compiled = fresh;
        }
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; owned && i < nopt; i++) free(owned[i]);
    free(owned);
    free(opts);
    return r;
}

/* The results: the program the last compile used. */
#define QUERY(call)                                                      \
    do {                                                                     \
        pthread_mutex_lock(&mu);                                             \
        struct prog *p = find(prog);                                         \
        nvrtcResult r = p ? call : NVRTC_ERROR_INVALID_PROGRAM;              \
        pthread_mutex_unlock(&mu);                                           \
        return r;                                                            \
    } while (0)

nvrtcResult nvrtc_host_ptx_size(apigen_call_ctx *cx, nvrtcProgram prog, size_t *ret)
{
    (void)cx;
    QUERY(nvrtcGetPTXSize(current(p), ret));
}

nvrtcResult nvrtc_host_cubin_size(apigen_call_ctx *cx, nvrtcProgram prog, size_t *ret)
{
    (void)cx;
    QUERY(nvrtcGetCUBINSize(current(p), ret));
}

nvrtcResult nvrtc_host_ltoir_size(apigen_call_ctx *cx, nvrtcProgram prog, size_t *ret)
{
    (void)cx;
    QUERY(nvrtcGetLTOIRSize(current(p), ret));
}

nvrtcResult nvrtc_host_optixir_size(apigen_call_ctx *cx, nvrtcProgram prog, size_t *ret)
{
    (void)cx;
    QUERY(nvrtcGetOptiXIRSize(current(p), ret));
}

nvrtcResult nvrtc_host_log_size(apigen_call_ctx *cx, nvrtcProgram prog, size_t *ret)
{
    (void)cx;
    QUERY(nvrtcGetProgramLogSize(current(p), ret));
}

#ifdef APIGEN_HAS_FN_nvrtcGetPCHCreateStatus /* nvrtc.h of CUDA 12.8 on */
nvrtcResult nvrtc_host_pch_status(apigen_call_ctx *cx, nvrtcProgram prog)
{
    (void)cx;
    QUERY(nvrtcGetPCHCreateStatus(current(p)));
}
#endif

#ifdef APIGEN_HAS_FN_nvrtcGetPCHHeapSizeRequired /* nvrtc.h of CUDA 12.8 on */
nvrtcResult nvrtc_host_pch_required(apigen_call_ctx *cx, nvrtcProgram prog, size_t *size)
{
    (void)cx;
    QUERY(nvrtcGetPCHHeapSizeRequired(current(p), size));
}
#endif

typedef nvrtcResult (*size_fn)(nvrtcProgram, size_t *);
typedef nvrtcResult (*get_fn)(nvrtcProgram, char *);

/* One output: its size is asked again, so a buffer the guest sized wrong
 * is refused instead of overrun. */
static nvrtcResult output(struct prog *p, size_fn sz, get_fn get, char *buf, size_t size)
{
    nvrtcProgram q = current(p);
    if (!buf) return get(q, NULL);
    size_t need = 0;
    nvrtcResult r = sz(q, &need);
    if (r != NVRTC_SUCCESS) return r;
    if (need > size) {
        apigen_log("nvrtc: an output of %zu bytes asked into %zu bytes: refused", need, size);
        return NVRTC_ERROR_INVALID_INPUT;
    }
    return get(q, buf);
}

nvrtcResult apigenNvrtcGetOutput(nvrtcProgram prog, int which, char *buf, size_t size)
{
    static const size_fn sizes[] = {nvrtcGetPTXSize, nvrtcGetCUBINSize, nvrtcGetLTOIRSize,
                                    nvrtcGetOptiXIRSize, nvrtcGetProgramLogSize};
    static const get_fn gets[] = {nvrtcGetPTX, nvrtcGetCUBIN, nvrtcGetLTOIR, nvrtcGetOptiXIR,
                                  nvrtcGetProgramLog};
    if (which < 0 || which > 4) return NVRTC_ERROR_INVALID_INPUT;
    QUERY(output(p, sizes[which], gets[which], buf, size));
}

nvrtcResult apigenNvrtcLoweredName(nvrtcProgram prog, const char *name_expression, char *buf,
                                   size_t capacity, size_t *needed)
{
    pthread_mutex_lock(&mu);
    struct prog *p = find(prog);
    nvrtcResult r = NVRTC_ERROR_INVALID_PROGRAM;
    const char *s = NULL;
    if (p) r = nvrtcGetLoweredName(current(p), name_expression, buf ? &s : NULL);
    if (r == NVRTC_SUCCESS && s) {
        size_t len = strlen(s) + 1;
        if (needed) *needed = len;
        if (len <= capacity) memcpy(buf, s, len);
    }
    pthread_mutex_unlock(&mu);
    return r;
}

nvrtcResult apigenNvrtcErrorText(nvrtcResult result, char *buf, unsigned int length)
{
    if (!buf || length == 0) return NVRTC_ERROR_INVALID_INPUT;
    const char *s = nvrtcGetErrorString(result);
    snprintf(buf, length, "%s", s ? s : "");
    return NVRTC_SUCCESS;
}

nvrtcResult apigenNvrtcSupportedArchs(int *archs, int count)
{
    if (!archs) return nvrtcGetSupportedArchs(NULL);
    int n = 0;
    nvrtcResult r = nvrtcGetNumSupportedArchs(&n);
    if (r != NVRTC_SUCCESS) return r;
    if (n > count) {
        apigen_log("nvrtcGetSupportedArchs: %d architectures asked into %d entries: refused", n,
                   count);
        return NVRTC_ERROR_INVALID_INPUT;
    }
    return nvrtcGetSupportedArchs(archs);
}
