/* Hand-written host code for specs/curand.yaml: the server's list of host
 * generators, a host generator's numbers into the reply, and the library's
 * constant tables.
 *
 * A host generator writes host memory and a device generator device memory:
 * apigenCurandGenerateHost runs only for a generator this server made with
 * curandCreateGeneratorHost, and the device path (the generated handlers of
 * curandGenerate*, with a checked device address) only for any other: the
 * guest's choice of path is never trusted, since a host generator given a
 * device address would write it from the CPU. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curand.h>

#include "apigen_curand.h"
#include "apigen_rt.h"
#include "curand_wire.h"

#define DIMS 20000 /* the quasirandom generators' dimensions: each table's length */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static curandGenerator_t *hosts;
static size_t nhosts, caphosts;

static int is_host(curandGenerator_t g)
{
    int found = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nhosts && !found; i++)
        found = hosts[i] == g;
    pthread_mutex_unlock(&mu);
    return found;
}

curandStatus_t curand_host_create_generator_host(apigen_call_ctx *cx,
                                                 curandGenerator_t *generator,
                                                 curandRngType_t rng_type)
{
    (void)cx;
    pthread_mutex_lock(&mu);
    if (nhosts == caphosts) {
        size_t cap = caphosts ? 2 * caphosts : 16;
        curandGenerator_t *h = realloc(hosts, cap * sizeof *h);
        if (h) {
            hosts = h;
            caphosts = cap;
        }
    }
    int room = nhosts < caphosts;
    pthread_mutex_unlock(&mu);
    if (!room) return CURAND_STATUS_ALLOCATION_FAILED;
    curandStatus_t st = curandCreateGeneratorHost(generator, rng_type);
    if (st == CURAND_STATUS_SUCCESS && generator) {
        pthread_mutex_lock(&mu);
        if (nhosts < caphosts) hosts[nhosts++] = *generator;
        pthread_mutex_unlock(&mu);
    }
    return st;
}

curandStatus_t curand_host_destroy_generator(apigen_call_ctx *cx, curandGenerator_t generator)
{
    (void)cx;
    curandStatus_t st = curandDestroyGenerator(generator);
    if (st == CURAND_STATUS_SUCCESS) {
        pthread_mutex_lock(&mu);
        for (size_t i = 0; i < nhosts; i++)
            if (hosts[i] == generator) {
                hosts[i] = hosts[--nhosts];
                break;
            }
        pthread_mutex_unlock(&mu);
    }
    return st;
}

static size_t elem_size(int kind)
{
    switch (kind) {
    case APIGEN_CURAND_UINT: case APIGEN_CURAND_POISSON: return sizeof(unsigned int);
    case APIGEN_CURAND_ULL: return sizeof(unsigned long long);
    case APIGEN_CURAND_UNIFORM: case APIGEN_CURAND_NORMAL: case APIGEN_CURAND_LOGNORMAL:
        return sizeof(float);
    case APIGEN_CURAND_UNIFORM_D: case APIGEN_CURAND_NORMAL_D: case APIGEN_CURAND_LOGNORMAL_D:
        return sizeof(double);
    default: return 0;
    }
}

curandStatus_t apigenCurandGenerateHost(curandGenerator_t g, int kind, void *o, size_t bytes,
                                        size_t num, double a, double b, int method)
{
    size_t size = elem_size(kind);
    if (!is_host(g)) {
        apigen_log("curandGenerate*: generator %p is not a host generator of this client: "
                   "refused (CURAND_STATUS_TYPE_ERROR)", (void *)g);
        return CURAND_STATUS_TYPE_ERROR;
    }
    /* the buffer must hold num elements: the guest sized it so */
    if (!size || (num && (num > SIZE_MAX / size || bytes < num * size)))
        return CURAND_STATUS_OUT_OF_RANGE;
    switch (kind) {
    case APIGEN_CURAND_UINT: return curandGenerate(g, o, num);
    case APIGEN_CURAND_ULL: return curandGenerateLongLong(g, o, num);
    case APIGEN_CURAND_UNIFORM: return curandGenerateUniform(g, o, num);
    case APIGEN_CURAND_UNIFORM_D: return curandGenerateUniformDouble(g, o, num);
    case APIGEN_CURAND_NORMAL: return curandGenerateNormal(g, o, num, (float)a, (float)b);
    case APIGEN_CURAND_NORMAL_D: return curandGenerateNormalDouble(g, o, num, a, b);
    case APIGEN_CURAND_LOGNORMAL: return curandGenerateLogNormal(g, o, num, (float)a, (float)b);
    case APIGEN_CURAND_LOGNORMAL_D: return curandGenerateLogNormalDouble(g, o, num, a, b);
    default: /* APIGEN_CURAND_POISSON */
        return method < 0 ? curandGeneratePoisson(g, o, num, a)
                          : curandGeneratePoissonMethod(g, o, num, a, (curandMethod_t)method);
    }
}

curandStatus_t apigenCurandTable(int which, int set, void *buf, size_t bytes)
{
    const void *t = NULL;
    size_t size = 0;
    curandStatus_t st;
    switch (which) {
    case 0: {
        curandDirectionVectors32_t *v = NULL;
        st = curandGetDirectionVectors32(&v, (curandDirectionVectorSet_t)set);
        t = v, size = DIMS * sizeof *v;
        break;
    }
    case 1: {
        curandDirectionVectors64_t *v = NULL;
        st = curandGetDirectionVectors64(&v, (curandDirectionVectorSet_t)set);
        t = v, size = DIMS * sizeof *v;
        break;
    }
    case 2: {
        unsigned int *c = NULL;
        st = curandGetScrambleConstants32(&c);
        t = c, size = DIMS * sizeof *c;
        break;
    }
    case 3: {
        unsigned long long *c = NULL;
        st = curandGetScrambleConstants64(&c);
        t = c, size = DIMS * sizeof *c;
        break;
    }
    default: return CURAND_STATUS_OUT_OF_RANGE;
    }
    if (st != CURAND_STATUS_SUCCESS) return st;
    if (!buf && !bytes) return st; /* the guest asked only for the library's answer */
    if (!t || !buf || bytes != size) return CURAND_STATUS_OUT_OF_RANGE;
    memcpy(buf, t, size);
    return st;
}

/* ---- the device path: never with a host generator ------------------------------- */
static curandStatus_t not_host(curandGenerator_t g, const char *fn)
{
    if (!is_host(g)) return CURAND_STATUS_SUCCESS;
    apigen_log("%s: generator %p is a host generator, called with a device address: refused "
               "(CURAND_STATUS_TYPE_ERROR)", fn, (void *)g);
    return CURAND_STATUS_TYPE_ERROR;
}

#define DEVICE_PATH(name, call, ...)                                                        \
    curandStatus_t curand_host_##name(apigen_call_ctx *cx, curandGenerator_t g, __VA_ARGS__) \
    {                                                                                       \
        (void)cx;                                                                           \
        curandStatus_t st = not_host(g, "curand" #name);                                    \
        return st != CURAND_STATUS_SUCCESS ? st : (call);                                   \
    }

DEVICE_PATH(Generate, curandGenerate(g, o, num), unsigned int *o, size_t num)
DEVICE_PATH(GenerateLongLong, curandGenerateLongLong(g, o, num), unsigned long long *o, size_t num)
DEVICE_PATH(GenerateUniform, curandGenerateUniform(g, o, num), float *o, size_t num)
DEVICE_PATH(GenerateUniformDouble, curandGenerateUniformDouble(g, o, num), double *o, size_t num)
DEVICE_PATH(GenerateNormal, curandGenerateNormal(g, o, n, m, s), float *o, size_t n, float m,
            float s)
DEVICE_PATH(GenerateNormalDouble, curandGenerateNormalDouble(g, o, n, m, s), double *o, size_t n,
            double m, double s)
DEVICE_PATH(GenerateLogNormal, curandGenerateLogNormal(g, o, n, m, s), float *o, size_t n, float m,
            float s)
DEVICE_PATH(GenerateLogNormalDouble, curandGenerateLogNormalDouble(g, o, n, m, s), double *o,
            size_t n, double m, double s)
DEVICE_PATH(GeneratePoisson, curandGeneratePoisson(g, o, n, l), unsigned int *o, size_t n, double l)
DEVICE_PATH(GeneratePoissonMethod, curandGeneratePoissonMethod(g, o, n, l, m), unsigned int *o,
            size_t n, double l, curandMethod_t m)
