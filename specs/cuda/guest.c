/* Hand-written guest code of the CUDA driver stub (specs/cuda.yaml):
 * - error strings: asked of the server once per code, kept for the process
 *   (cuGetErrorString hands out pointers that must stay valid); error names
 *   from the header's enum;
 * - module and library images: their size read from their header (fat
 *   binary, ELF, PTX text), files read here (the server does not share the
 *   guest's file system);
 * - kernel launches: the parameter layout learned once per function from the
 *   server, the arguments packed, one async apigenCudaLaunch;
 * - pinned host memory is guest memory (from the shared arena when there is
 *   one): the GPU cannot reach the guest's RAM anyway;
 * - cuMemcpy / cuMemcpyAsync (unified addressing): which side is device
 *   memory is asked of the server (cuPointerGetAttribute) unless the guest
 *   knows the address as its own host memory (pinned, registered, or
 *   pageable memory mapped in the process: host_mem.c);
 * - attribute lists: one call per attribute.
 * cuGetProcAddress is in proc.c, cuGetExportTable in export_tables.c. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* ---- error strings ---------------------------------------------------------------------- */
#define NERR 1024
static const char *err_text_[2][NERR]; /* [name=0 / string=1][code], interned for good */
/* (names are answered from the header's enum below; `which` 0 stays for the wire) */

static CUresult err_text(CUresult error, int which, const char **pStr)
{
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    unsigned code = (unsigned)error;
    if (code < NERR) {
        pthread_mutex_lock(&lock_);
        const char *t = err_text_[which][code];
        pthread_mutex_unlock(&lock_);
        if (t) {
            *pStr = t;
            return CUDA_SUCCESS;
        }
    }
    char buf[512];
    size_t len = 0;
    CUresult e = apigenCudaErrorString(error, which, buf, sizeof buf, &len);
    if (e != CUDA_SUCCESS) {
        *pStr = NULL; /* what the driver does for a code it does not know */
        return e;
    }
    buf[len && len <= sizeof buf ? len - 1 : 0] = 0;
    char *t = strdup(buf);
    if (!t) return CUDA_ERROR_OUT_OF_MEMORY;
    if (code < NERR) {
        pthread_mutex_lock(&lock_);
        if (err_text_[which][code]) { /* another thread was first */
            free(t);
            t = (char *)err_text_[which][code];
        } else {
            err_text_[which][code] = t;
        }
        pthread_mutex_unlock(&lock_);
    }
    *pStr = t; /* codes past NERR: kept too (leaked once per call) */
    return CUDA_SUCCESS;
}

/* The names are the header's (CUDA_ERROR_NAMES, api.errors.names): no
 * round trip, and they answer with no server, as the driver does. */
APIGEN_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    static const struct {
        CUresult v;
        const char *n;
    } names[] = {
#define X(c) {c, #c},
        CUDA_ERROR_NAMES(X)
#undef X
    };
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].v == error) {
            *pStr = names[i].n;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

APIGEN_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    return err_text(error, 1, pStr);
}

/* ---- names of functions and kernels (kept per handle, as the driver's own) ------------------ */
typedef struct name_ent {
    uint64_t id;
    int kernel;
    char *name;
    struct name_ent *next;
} name_ent;
static name_ent *names_;

static CUresult func_name(uint64_t id, int kernel, const char **name)
{
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock_);
    for (name_ent *n = names_; n; n = n->next)
        if (n->id == id && n->kernel == kernel) {
            *name = n->name;
            pthread_mutex_unlock(&lock_);
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&lock_);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult e = apigenCudaFuncName(id, kernel, buf, cap, &len);
    name_ent *n = e == CUDA_SUCCESS ? calloc(1, sizeof *n) : NULL;
    if (!n) {
        free(buf);
        return e != CUDA_SUCCESS ? e : CUDA_ERROR_OUT_OF_MEMORY;
    }
    buf[len && len <= cap ? len - 1 : 0] = 0;
    *n = (name_ent){id, kernel, buf, NULL};
    pthread_mutex_lock(&lock_);
    n->next = names_;
    names_ = n;
    pthread_mutex_unlock(&lock_);
    *name = buf;
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    return func_name((uint64_t)(uintptr_t)hfunc, 0, name);
}

APIGEN_EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    return func_name((uint64_t)(uintptr_t)hfunc, 1, name);
}

/* ---- module and library images ---------------------------------------------------------- */
static CUresult jit_values(unsigned n, const CUjit_option *opts, void **vals, uint64_t **out)
{
    *out = NULL;
    if (!n) return CUDA_SUCCESS;
    if (!opts || !vals) return CUDA_ERROR_INVALID_VALUE;
    uint64_t *v = calloc(n, sizeof *v);
    if (!v) return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < n; i++) {
        switch (opts[i]) {
        case CU_JIT_INFO_LOG_BUFFER:
        case CU_JIT_ERROR_LOG_BUFFER:
            /* a buffer the server's JIT would write into: not carried yet */
            apigen_log("cuda: the JIT option %d (a log buffer of the guest) is not supported "
                       "over apigen: leave it out", (int)opts[i]);
            free(v);
            return CUDA_ERROR_NOT_SUPPORTED;
        default:
            v[i] = (uint64_t)(uintptr_t)vals[i]; /* integers and floats, by value */
        }
    }
    *out = v;
    return CUDA_SUCCESS;
}

static CUresult load_ex(const char *fn, CUmodule *module, const void *image,
                        unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    size_t size;
    CUresult e = apigen_cuda_image(&image, &size, fn);
    uint64_t *vals = NULL;
    if (e == CUDA_SUCCESS) e = jit_values(numOptions, options, optionValues, &vals);
    if (e != CUDA_SUCCESS) return e;
    e = apigenCudaModuleLoad(module, image, size, numOptions, numOptions ? options : NULL, vals);
    free(vals);
    return e;
}

APIGEN_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                                          unsigned int numOptions, CUjit_option *options,
                                          void **optionValues)
{
    return load_ex("cuModuleLoadDataEx", module, image, numOptions, options, optionValues);
}

APIGEN_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return load_ex("cuModuleLoadData", module, image, 0, NULL, NULL);
}

APIGEN_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    size_t size;
    CUresult e = apigen_cuda_image(&fatCubin, &size, "cuModuleLoadFatBinary");
    if (e != CUDA_SUCCESS) return e;
    return apigenCudaModuleLoad(module, fatCubin, size, 0, NULL, NULL);
}

APIGEN_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
                                         CUjit_option *jitOptions, void **jitOptionsValues,
                                         unsigned int numJitOptions,
                                         CUlibraryOption *libraryOptions,
                                         void **libraryOptionValues,
                                         unsigned int numLibraryOptions)
{
    size_t size;
    CUresult e = apigen_cuda_image(&code, &size, "cuLibraryLoadData");
    uint64_t *jv = NULL, *lv = NULL;
    if (e == CUDA_SUCCESS) e = jit_values(numJitOptions, jitOptions, jitOptionsValues, &jv);
    if (e != CUDA_SUCCESS) return e;
    if (numLibraryOptions) {
        /* the values may be NULL: CU_LIBRARY_BINARY_IS_PRESERVED takes none
         * (cuBLASLt loads its kernels so; the driver accepts it) */
        if (!libraryOptions) {
            free(jv);
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (!(lv = calloc(numLibraryOptions, sizeof *lv))) {
            free(jv);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (unsigned i = 0; i < numLibraryOptions; i++) {
#ifdef APIGEN_HAS_CONST_CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE
            if (libraryOptions[i] == CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) {
                apigen_log("cuda: cuLibraryLoadData: CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE "
                           "names guest host memory the server cannot read: not supported");
                free(jv), free(lv);
                return CUDA_ERROR_NOT_SUPPORTED;
            }
#endif
            lv[i] = libraryOptionValues ? (uint64_t)(uintptr_t)libraryOptionValues[i] : 0;
        }
    }
    e = apigenCudaLibraryLoad(library, code, size, numJitOptions,
                              numJitOptions ? jitOptions : NULL, jv, numLibraryOptions,
                              numLibraryOptions ? libraryOptions : NULL, lv);
    free(jv);
    free(lv);
    return e;
}

/* The whole file, NUL-terminated (PTX text is loaded as a string). */
static CUresult read_file_n(const char *fname, const char *fn, char **out, size_t *len)
{
    *out = NULL;
    if (!fname) return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    while (b) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = realloc(b, cap * 2 + 1);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!b) return CUDA_ERROR_OUT_OF_MEMORY;
    if (bad) {
        apigen_log("cuda: %s: cannot read '%s'", fn, fname);
        free(b);
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    b[n] = 0;
    *out = b;
    if (len) *len = n;
    return CUDA_SUCCESS;
}

static CUresult read_file(const char *fname, const char *fn, char **out)
{
    return read_file_n(fname, fn, out, NULL);
}

APIGEN_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    char *img;
    CUresult e = read_file(fname, "cuModuleLoad", &img);
    if (e != CUDA_SUCCESS) return e;
    e = load_ex("cuModuleLoad", module, img, 0, NULL, NULL);
    free(img);
    return e;
}

APIGEN_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                             CUjit_option *jitOptions, void **jitOptionsValues,
                                             unsigned int numJitOptions,
                                             CUlibraryOption *libraryOptions,
                                             void **libraryOptionValues,
                                             unsigned int numLibraryOptions)
{
    char *img;
    CUresult e = read_file(fileName, "cuLibraryLoadFromFile", &img);
    if (e != CUDA_SUCCESS) return e;
    e = cuLibraryLoadData(library, img, jitOptions, jitOptionsValues, numJitOptions,
                          libraryOptions, libraryOptionValues, numLibraryOptions);
    free(img);
    return e;
}

/* ---- attribute lists ---------------------------------------------------------------------- */
/* What the driver answers for a list (tests/gpu/attr_probe.c and
 * pointer-attrs.sh, H200, driver 580, 2026-11-26): a NULL data slot fails the
 * whole list with CUDA_ERROR_INVALID_VALUE before anything is written; an
 * address it does not know (pageable, freed) succeeds with defaults:
 * DEVICE_ORDINAL -2, RANGE_SIZE left as it was, HOST_POINTER the address
 * itself, every other attribute zero; HOST_POINTER of memory it knows but the
 * host cannot reach (device memory) is NULL. */
APIGEN_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes,
                                              CUpointer_attribute *attributes, void **data,
                                              CUdeviceptr ptr)
{
    if (numAttributes && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; i++)
        if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
    int known = 0;          /* the driver answered one attribute: it knows ptr */
    long host_slot = -1;    /* a HOST_POINTER that had no answer: decided at the end */
    for (unsigned i = 0; i < numAttributes; i++) {
        CUresult e;
        if (apigen_cuda_host_attr(data[i], attributes[i], ptr, 1, &e)) { /* pinned: host_mem.c */
            if (e != CUDA_SUCCESS) return e;
            known = 1;
            continue;
        }
        e = cuPointerGetAttribute(data[i], attributes[i], ptr);
        /* cuda.h: "Unlike cuPointerGetAttribute, this function will not
         * return an error when the ptr encountered is not a valid CUDA
         * pointer. Instead, the attributes are assigned default NULL values
         * and CUDA_SUCCESS is returned." CUDA_ERROR_INVALID_VALUE of the
         * single query for an attribute whose size cuda.h gives is that
         * case (data is not NULL); any other error is the list's. */
        size_t size = apigen_cuda_pointer_attribute_size(attributes[i]);
        if (e == CUDA_ERROR_INVALID_VALUE && size) {
            if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
                int none = -2;
                memcpy(data[i], &none, sizeof none);
            } else if (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
                if (host_slot < 0) host_slot = i;
            }
            else if (attributes[i] != CU_POINTER_ATTRIBUTE_RANGE_SIZE)
                memset(data[i], 0, size);
            continue;
        }
        if (e != CUDA_SUCCESS) return e;
        known = 1;
    }
    if (host_slot >= 0) {
        /* an address of the guest's own is never the driver's; any other is
         * asked about once more (MEMORY_TYPE) unless another answer told */
        void *h = (void *)(uintptr_t)ptr;
        if (known || apigen_cuda_on_server(ptr)) h = NULL;
        for (unsigned i = 0; i < numAttributes; i++) /* a repeated attribute gets the same */
            if (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER && (long)i >= host_slot)
                memcpy(data[i], &h, sizeof h);
    }
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes,
                                               CUmem_range_attribute *attributes,
                                               size_t numAttributes, CUdeviceptr devPtr,
                                               size_t count)
{
    if (!data || !dataSizes || !attributes || !numAttributes) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numAttributes; i++) {
        CUresult e = cuMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count);
        if (e != CUDA_SUCCESS) return e;
    }
    return CUDA_SUCCESS;
}

/* ---- capture info: the driver's arrays, copied here ------------------------------------------
 * The driver hands out pointers to its own arrays, valid until the
 * stream's next capture call; the guest's copies are the calling thread's,
 * valid until its next query. */
static _Thread_local CUgraphNode *cap_deps_;
static _Thread_local CUgraphEdgeData *cap_edges_;
static _Thread_local size_t cap_room_;

static CUresult capture_info(CUstream s, unsigned ptsz, CUstreamCaptureStatus *status,
                             cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *n)
{
    for (int tries = 0; tries < 4; tries++) {
        size_t got = 0;
        CUresult e = apigenCudaStreamGetCaptureInfo(s, ptsz, status, id, graph,
                                                    (deps || n) ? cap_deps_ : NULL,
                                                    edges ? cap_edges_ : NULL, cap_room_, &got);
        if (e != CUDA_SUCCESS) return e;
        if (got <= cap_room_) {
            if (deps) *deps = got ? cap_deps_ : NULL;
            if (edges) *edges = got ? cap_edges_ : NULL;
            if (n) *n = got;
            return CUDA_SUCCESS;
        }
        /* more dependencies than room: grow and ask again */
        CUgraphNode *nd = realloc(cap_deps_, got * sizeof *nd);
        if (nd) cap_deps_ = nd;
        CUgraphEdgeData *ne = realloc(cap_edges_, got * sizeof *ne);
        if (ne) cap_edges_ = ne;
        if (!nd || !ne) return CUDA_ERROR_OUT_OF_MEMORY;
        cap_room_ = got;
    }
    return CUDA_ERROR_UNKNOWN; /* the capture kept growing under us */
}

APIGEN_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
                                                 CUstreamCaptureStatus *captureStatus_out,
                                                 cuuint64_t *id_out, CUgraph *graph_out,
                                                 const CUgraphNode **dependencies_out,
                                                 size_t *numDependencies_out)
{
    return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                        numDependencies_out);
}

APIGEN_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                      CUstreamCaptureStatus *captureStatus_out,
                                                      cuuint64_t *id_out, CUgraph *graph_out,
                                                      const CUgraphNode **dependencies_out,
                                                      size_t *numDependencies_out)
{
    return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                        numDependencies_out);
}

APIGEN_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
                                                 CUstreamCaptureStatus *captureStatus_out,
                                                 cuuint64_t *id_out, CUgraph *graph_out,
                                                 const CUgraphNode **dependencies_out,
                                                 const CUgraphEdgeData **edgeData_out,
                                                 size_t *numDependencies_out)
{
    return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
}

APIGEN_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                      CUstreamCaptureStatus *captureStatus_out,
                                                      cuuint64_t *id_out, CUgraph *graph_out,
                                                      const CUgraphNode **dependencies_out,
                                                      const CUgraphEdgeData **edgeData_out,
                                                      size_t *numDependencies_out)
{
    return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
}

/* ---- JIT linking -------------------------------------------------------------------------------
 * Option values travel by value (jit_values refuses the log buffers, which
 * the server's JIT would write into); a file is read here; the linked image
 * is copied into the guest and kept until cuLinkDestroy, as the driver
 * keeps its own. */
typedef struct linked {
    CUlinkState state;
    void *image;
    struct linked *next;
} linked;
static linked *linked_;

static CUresult link_create(unsigned n, CUjit_option *opts, void **vals, CUlinkState *out,
                            unsigned v2)
{
    uint64_t *v = NULL;
    CUresult e = jit_values(n, opts, vals, &v);
    if (e != CUDA_SUCCESS) return e;
    e = apigenCudaLinkCreate(n, n ? opts : NULL, v, out, v2);
    free(v);
    return e;
}

APIGEN_EXPORT CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options,
                                    void **optionValues, CUlinkState *stateOut)
{
    return link_create(numOptions, options, optionValues, stateOut, 0);
}

APIGEN_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
                                       void **optionValues, CUlinkState *stateOut)
{
    return link_create(numOptions, options, optionValues, stateOut, 1);
}

static CUresult link_add(CUlinkState state, CUjitInputType type, void *data, size_t size,
                         const char *name, unsigned n, CUjit_option *opts, void **vals,
                         unsigned v2)
{
    uint64_t *v = NULL;
    if (!data && size) return CUDA_ERROR_INVALID_VALUE;
    CUresult e = jit_values(n, opts, vals, &v);
    if (e != CUDA_SUCCESS) return e;
    e = apigenCudaLinkAddData(state, type, data, size, name, n, n ? opts : NULL, v, v2);
    free(v);
    return e;
}

APIGEN_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
                                     size_t size, const char *name, unsigned int numOptions,
                                     CUjit_option *options, void **optionValues)
{
    return link_add(state, type, data, size, name, numOptions, options, optionValues, 0);
}

APIGEN_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
                                        size_t size, const char *name, unsigned int numOptions,
                                        CUjit_option *options, void **optionValues)
{
    return link_add(state, type, data, size, name, numOptions, options, optionValues, 1);
}

static CUresult link_file(CUlinkState state, CUjitInputType type, const char *path, unsigned n,
                          CUjit_option *opts, void **vals, unsigned v2, const char *fn)
{
    char *img;
    size_t size = 0;
    CUresult e = read_file_n(path, fn, &img, &size);
    if (e != CUDA_SUCCESS) return e;
    /* PTX is text: with the NUL the driver reads up to; anything else (cubin,
     * fat binary, object, library archive, LTO IR) is the file's bytes */
    if (type == CU_JIT_INPUT_PTX) size = strlen(img) + 1;
    e = link_add(state, type, img, size, path, n, opts, vals, v2);
    free(img);
    return e;
}

APIGEN_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                                     unsigned int numOptions, CUjit_option *options,
                                     void **optionValues)
{
    return link_file(state, type, path, numOptions, options, optionValues, 0, "cuLinkAddFile");
}

APIGEN_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                        unsigned int numOptions, CUjit_option *options,
                                        void **optionValues)
{
    return link_file(state, type, path, numOptions, options, optionValues, 1, "cuLinkAddFile_v2");
}

APIGEN_EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    if (!cubinOut || !sizeOut) return CUDA_ERROR_INVALID_VALUE;
    size_t cap = 1 << 20, n = 0;
    void *buf = NULL;
    CUresult e;
    for (int tries = 0; tries < 3; tries++) {
        void *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        buf = nb;
        e = apigenCudaLinkComplete(state, buf, cap, &n);
        if (e != CUDA_SUCCESS || n <= cap) break;
        cap = n; /* the server kept the image: ask again with room for it */
    }
    linked *l = e == CUDA_SUCCESS && n <= cap ? calloc(1, sizeof *l) : NULL;
    if (!l) {
        free(buf);
        return e != CUDA_SUCCESS ? e : CUDA_ERROR_OUT_OF_MEMORY;
    }
    *l = (linked){state, buf, NULL};
    pthread_mutex_lock(&lock_);
    l->next = linked_;
    linked_ = l;
    pthread_mutex_unlock(&lock_);
    *cubinOut = buf;
    *sizeOut = n;
    return CUDA_SUCCESS;
}

CUresult cuda_fwd_cuLinkDestroy(CUlinkState state);

APIGEN_EXPORT CUresult cuLinkDestroy(CUlinkState state)
{
    CUresult e = cuda_fwd_cuLinkDestroy(state);
    if (e != CUDA_SUCCESS) return e;
    pthread_mutex_lock(&lock_);
    for (linked **pp = &linked_; *pp;)
        if ((*pp)->state == state) {
            linked *l = *pp;
            *pp = l->next;
            free(l->image);
            free(l);
        } else {
            pp = &(*pp)->next;
        }
    pthread_mutex_unlock(&lock_);
    return e;
}
