/* Hand-written guest code for specs/nvrtc.yaml.
 *
 * The stub keeps, per program it created, the source, name and in-memory
 * headers (for the include scan of nvrtcCompileProgram: includes.c) and
 * the lowered names it handed out: nvrtcGetLoweredName's string must stay
 * valid as long as the program, so each is a copy the stub frees in
 * nvrtcDestroyProgram (a recompile makes new ones and keeps the old). The
 * outputs (PTX, CUBIN, LTO-IR, OptiX IR, log) are sized by the library's
 * own *Size answer, then fetched in one call. nvrtcGetErrorString is the
 * server library's text, asked once per value and kept (apigen_kept_text). */
#define _GNU_SOURCE /* strdup */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "nvrtc_guest.h"
#include "nvrtc_wire.h"

nvrtcResult nvrtc_fwd_nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                         int numHeaders, const char *const *headers,
                                         const char *const *includeNames);
nvrtcResult nvrtc_fwd_nvrtcDestroyProgram(nvrtcProgram *prog);

struct lowered {
    char *expr, *name;
    unsigned gen; /* the compile it came from */
    struct lowered *next;
};

struct prog {
    nvrtcProgram id;
    char *src, *name;
    int nh;
    char **h, **n;
    unsigned gen; /* compiles so far */
    struct lowered *lowered;
    struct prog *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct prog *progs;
static struct lowered *orphans; /* lowered names of programs this stub did not create */

static struct prog *find(nvrtcProgram id)
{
    for (struct prog *p = progs; p; p = p->next)
        if (p->id == id) return p;
    return NULL;
}

static void prog_free(struct prog *p)
{
    for (int i = 0; i < p->nh; i++) {
        free(p->h ? p->h[i] : NULL);
        free(p->n ? p->n[i] : NULL);
    }
    free(p->h);
    free(p->n);
    free(p->src);
    free(p->name);
    while (p->lowered) {
        struct lowered *l = p->lowered;
        p->lowered = l->next;
        free(l->expr);
        free(l->name);
        free(l);
    }
    free(p);
}

APIGEN_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                                             const char *name, int numHeaders,
                                             const char *const *headers,
                                             const char *const *includeNames)
{
    nvrtcResult r =
        nvrtc_fwd_nvrtcCreateProgram(prog, src, name, numHeaders, headers, includeNames);
    if (r != NVRTC_SUCCESS) return r;
    /* the library accepted the arguments: src is a string, and so is every
     * header and name (what the forwarder sent) */
    struct prog *p = calloc(1, sizeof *p);
    int n = numHeaders > 0 ? numHeaders : 0;
    bool ok = p != NULL;
    if (ok) {
        p->id = *prog;
        p->src = strdup(src ? src : "");
        p->name = name ? strdup(name) : NULL;
        p->nh = n;
        p->h = n ? calloc((size_t)n, sizeof *p->h) : NULL;
        p->n = n ? calloc((size_t)n, sizeof *p->n) : NULL;
        ok = p->src && (!name || p->name) && (!n || (p->h && p->n));
    }
    for (int i = 0; ok && i < n; i++) {
        p->h[i] = headers && headers[i] ? strdup(headers[i]) : NULL;
        p->n[i] = includeNames && includeNames[i] ? strdup(includeNames[i]) : NULL;
    }
    if (!ok) {
        /* compiles would go without the guest's disk headers: say so */
        apigen_log("nvrtcCreateProgram: out of memory keeping the program's source; its "
                   "#include lines will not be resolved on this machine");
        if (p) prog_free(p);
        return r;
    }
    pthread_mutex_lock(&mu);
    p->next = progs;
    progs = p;
    pthread_mutex_unlock(&mu);
    return r;
}

APIGEN_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    nvrtcProgram id = prog ? *prog : NULL;
    nvrtcResult r = nvrtc_fwd_nvrtcDestroyProgram(prog);
    if (r != NVRTC_SUCCESS) return r;
    pthread_mutex_lock(&mu);
    struct prog **pp = &progs;
    while (*pp && (*pp)->id != id) pp = &(*pp)->next;
    struct prog *p = *pp;
    if (p) *pp = p->next;
    pthread_mutex_unlock(&mu);
    if (p) prog_free(p);
    return r;
}

APIGEN_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                              const char *const *options)
{
    nvrtc_guest_headers g = {0};
    bool resolved = false;
    nvrtcResult r = NVRTC_SUCCESS;
    pthread_mutex_lock(&mu);
    struct prog *p = find(prog);
    /* invalid options or an unknown program: the library's own answer */
    if (p && (numOptions <= 0 || options)) {
        r = nvrtc_resolve(p->src, p->name, p->nh, (const char *const *)p->h,
                          (const char *const *)p->n, numOptions > 0 ? numOptions : 0, options,
                          &g);
        resolved = r == NVRTC_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    if (r != NVRTC_SUCCESS) return r;
    /* NVRTC writes the current folder into LTO-IR: the guest's, as natively */
    char cwdbuf[4096];
    const char *cwd = getcwd(cwdbuf, sizeof cwdbuf);
    if (resolved)
        r = apigenNvrtcCompile(prog, numOptions > 0 ? g.nopt : numOptions,
                               numOptions > 0 ? (const char *const *)g.opts : options, g.nh,
                               (const char *const *)g.h, (const char *const *)g.names, cwd);
    else
        r = apigenNvrtcCompile(prog, numOptions, options, 0, NULL, NULL, cwd);
    nvrtc_resolved_free(&g);
    pthread_mutex_lock(&mu);
    if ((p = find(prog))) p->gen++; /* earlier lowered names stay valid, but are not reused */
    pthread_mutex_unlock(&mu);
    return r;
}

APIGEN_EXPORT nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char *const name_expression,
                                              const char **lowered_name)
{
    size_t need = 0;
    if (!lowered_name || !name_expression)
        return apigenNvrtcLoweredName(prog, name_expression, NULL, 0, &need);
    pthread_mutex_lock(&mu);
    struct prog *p = find(prog);
    for (struct lowered *l = p ? p->lowered : NULL; l; l = l->next)
        if (l->gen == p->gen && strcmp(l->expr, name_expression) == 0) {
            *lowered_name = l->name;
            pthread_mutex_unlock(&mu);
            return NVRTC_SUCCESS;
        }
    unsigned gen = p ? p->gen : 0;
    pthread_mutex_unlock(&mu);
    size_t cap = 256;
    char *buf = NULL;
    nvrtcResult r;
    for (;;) {
        char *b = realloc(buf, cap);
        if (!b) {
            free(buf);
            return NVRTC_ERROR_OUT_OF_MEMORY;
        }
        buf = b;
        need = 0;
        r = apigenNvrtcLoweredName(prog, name_expression, buf, cap, &need);
        if (r != NVRTC_SUCCESS || need <= cap) break;
        cap = need;
    }
    struct lowered *l = r == NVRTC_SUCCESS ? calloc(1, sizeof *l) : NULL;
    if (r == NVRTC_SUCCESS && (!l || !(l->expr = strdup(name_expression)))) {
        free(l);
        free(buf);
        return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    if (r != NVRTC_SUCCESS) {
        free(buf);
        return r;
    }
    l->name = buf;
    l->gen = gen;
    pthread_mutex_lock(&mu);
    if ((p = find(prog))) {
        l->next = p->lowered;
        p->lowered = l;
    } else {
        l->next = orphans;
        orphans = l;
    }
    pthread_mutex_unlock(&mu);
    *lowered_name = l->name;
    return r;
}

/* ---- outputs: the size from the library, then the bytes --------------------- */
static nvrtcResult output(nvrtcProgram prog, int which, char *buf)
{
    static nvrtcResult (*const size[])(nvrtcProgram, size_t *) = {
        nvrtcGetPTXSize, nvrtcGetCUBINSize, nvrtcGetLTOIRSize, nvrtcGetOptiXIRSize,
        nvrtcGetProgramLogSize};
    if (!buf) return apigenNvrtcGetOutput(prog, which, NULL, 0);
    size_t n = 0;
    nvrtcResult r = size[which](prog, &n);
    if (r != NVRTC_SUCCESS) return r;
    return apigenNvrtcGetOutput(prog, which, buf, n);
}

APIGEN_EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx)
{
    return output(prog, 0, ptx);
}

APIGEN_EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin)
{
    return output(prog, 1, cubin);
}

APIGEN_EXPORT nvrtcResult nvrtcGetLTOIR(nvrtcProgram prog, char *LTOIR)
{
    return output(prog, 2, LTOIR);
}

APIGEN_EXPORT nvrtcResult nvrtcGetOptiXIR(nvrtcProgram prog, char *optixir)
{
    return output(prog, 3, optixir);
}

APIGEN_EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log)
{
    return output(prog, 4, log);
}

APIGEN_EXPORT nvrtcResult nvrtcGetSupportedArchs(int *supportedArchs)
{
    if (!supportedArchs) return apigenNvrtcSupportedArchs(NULL, 0);
    int n = 0;
    nvrtcResult r = nvrtcGetNumSupportedArchs(&n);
    if (r != NVRTC_SUCCESS) return r;
    return apigenNvrtcSupportedArchs(supportedArchs, n);
}

/* ---- error strings: the server library's, kept --------------------------------- */
static bool error_text(long result, char *buf, size_t n)
{
    return apigenNvrtcErrorText((nvrtcResult)result, buf, (unsigned int)n) == NVRTC_SUCCESS;
}

APIGEN_EXPORT const char *nvrtcGetErrorString(nvrtcResult result)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)result, error_text);
    return s ? s : "apigen: no NVRTC server to ask for this result's text";
}
