/* Hand-written guest code for specs/curand.yaml.
 *
 * Host generators (curandCreateGeneratorHost) write host memory: the stub
 * remembers which generators it made as host generators and sends their
 * curandGenerate* calls as apigenCurandGenerateHost, whose output comes back
 * into the caller's buffer; every other generator (a device one, or an id
 * the stub never made, which the server refuses) takes the generated
 * forwarder with a device address.
 *
 * The direction vectors and scramble constants are the library's constant
 * tables: fetched from the server once per process and kept. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "curand_wire.h"

/* the generated forwarders (wrap: {guest: true}) */
curandStatus_t curand_fwd_curandCreateGeneratorHost(curandGenerator_t *generator,
                                                    curandRngType_t rng_type);
curandStatus_t curand_fwd_curandDestroyGenerator(curandGenerator_t generator);
curandStatus_t curand_fwd_curandGenerate(curandGenerator_t g, unsigned int *o, size_t num);
curandStatus_t curand_fwd_curandGenerateLongLong(curandGenerator_t g, unsigned long long *o,
                                                 size_t num);
curandStatus_t curand_fwd_curandGenerateUniform(curandGenerator_t g, float *o, size_t num);
curandStatus_t curand_fwd_curandGenerateUniformDouble(curandGenerator_t g, double *o, size_t num);
curandStatus_t curand_fwd_curandGenerateNormal(curandGenerator_t g, float *o, size_t n, float mean,
                                               float stddev);
curandStatus_t curand_fwd_curandGenerateNormalDouble(curandGenerator_t g, double *o, size_t n,
                                                     double mean, double stddev);
curandStatus_t curand_fwd_curandGenerateLogNormal(curandGenerator_t g, float *o, size_t n,
                                                  float mean, float stddev);
curandStatus_t curand_fwd_curandGenerateLogNormalDouble(curandGenerator_t g, double *o, size_t n,
                                                        double mean, double stddev);
curandStatus_t curand_fwd_curandGeneratePoisson(curandGenerator_t g, unsigned int *o, size_t n,
                                                double lambda);
curandStatus_t curand_fwd_curandGeneratePoissonMethod(curandGenerator_t g, unsigned int *o,
                                                      size_t n, double lambda,
                                                      curandMethod_t method);

/* ---- host generators: the ids this process made ----------------------------------- */
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

APIGEN_EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t *generator,
                                                      curandRngType_t rng_type)
{
    curandStatus_t st = curand_fwd_curandCreateGeneratorHost(generator, rng_type);
    if (st != CURAND_STATUS_SUCCESS || !generator) return st;
    pthread_mutex_lock(&mu);
    if (nhosts == caphosts) {
        size_t cap = caphosts ? 2 * caphosts : 16;
        curandGenerator_t *h = realloc(hosts, cap * sizeof *h);
        if (h) {
            hosts = h;
            caphosts = cap;
        }
    }
    int kept = nhosts < caphosts;
    if (kept) hosts[nhosts++] = *generator;
    pthread_mutex_unlock(&mu);
    if (!kept) { /* its calls would go to the device path: give it back instead */
        curand_fwd_curandDestroyGenerator(*generator);
        return CURAND_STATUS_ALLOCATION_FAILED;
    }
    return st;
}

APIGEN_EXPORT curandStatus_t curandDestroyGenerator(curandGenerator_t generator)
{
    curandStatus_t st = curand_fwd_curandDestroyGenerator(generator);
    if (st != CURAND_STATUS_SUCCESS) return st;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nhosts; i++)
        if (hosts[i] == generator) {
            hosts[i] = hosts[--nhosts];
            break;
        }
    pthread_mutex_unlock(&mu);
    return st;
}

/* num elements of `size` bytes: 0 when the byte count would not fit a size_t
 * (the server then answers for an empty buffer; cuRAND checks num itself) */
static size_t nbytes(size_t num, size_t size)
{
    return num > SIZE_MAX / size ? 0 : num * size;
}

#define HOST_GEN(g, kind, o, num, size, a, b, m)                                          \
    apigenCurandGenerateHost((g), (kind), (o), nbytes((num), (size)), (num), (a), (b), (m))

APIGEN_EXPORT curandStatus_t curandGenerate(curandGenerator_t g, unsigned int *o, size_t num)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_UINT, o, num, sizeof *o, 0, 0, 0);
    return curand_fwd_curandGenerate(g, o, num);
}

APIGEN_EXPORT curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long *o,
                                                   size_t num)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_ULL, o, num, sizeof *o, 0, 0, 0);
    return curand_fwd_curandGenerateLongLong(g, o, num);
}

APIGEN_EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *o, size_t num)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_UNIFORM, o, num, sizeof *o, 0, 0, 0);
    return curand_fwd_curandGenerateUniform(g, o, num);
}

APIGEN_EXPORT curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double *o,
                                                        size_t num)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_UNIFORM_D, o, num, sizeof *o, 0, 0, 0);
    return curand_fwd_curandGenerateUniformDouble(g, o, num);
}

APIGEN_EXPORT curandStatus_t curandGenerateNormal(curandGenerator_t g, float *o, size_t n,
                                                 float mean, float stddev)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_NORMAL, o, n, sizeof *o, mean, stddev, 0);
    return curand_fwd_curandGenerateNormal(g, o, n, mean, stddev);
}

APIGEN_EXPORT curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double *o, size_t n,
                                                       double mean, double stddev)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_NORMAL_D, o, n, sizeof *o, mean, stddev, 0);
    return curand_fwd_curandGenerateNormalDouble(g, o, n, mean, stddev);
}

APIGEN_EXPORT curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float *o, size_t n,
                                                    float mean, float stddev)
{
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_LOGNORMAL, o, n, sizeof *o, mean, stddev, 0);
    return curand_fwd_curandGenerateLogNormal(g, o, n, mean, stddev);
}

APIGEN_EXPORT curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t g, double *o,
                                                          size_t n, double mean, double stddev)
{
    if (is_host(g))
        return HOST_GEN(g, APIGEN_CURAND_LOGNORMAL_D, o, n, sizeof *o, mean, stddev, 0);
    return curand_fwd_curandGenerateLogNormalDouble(g, o, n, mean, stddev);
}

APIGEN_EXPORT curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned int *o, size_t n,
                                                  double lambda)
{
    /* method -1: curandGeneratePoisson itself (the library's own default) */
    if (is_host(g)) return HOST_GEN(g, APIGEN_CURAND_POISSON, o, n, sizeof *o, lambda, 0, -1);
    return curand_fwd_curandGeneratePoisson(g, o, n, lambda);
}

APIGEN_EXPORT curandStatus_t curandGeneratePoissonMethod(curandGenerator_t g, unsigned int *o,
                                                        size_t n, double lambda,
                                                        curandMethod_t method)
{
    if (is_host(g))
        return HOST_GEN(g, APIGEN_CURAND_POISSON, o, n, sizeof *o, lambda, 0, (int)method);
    return curand_fwd_curandGeneratePoissonMethod(g, o, n, lambda, method);
}

/* ---- constant tables ------------------------------------------------------------ */
#define DIMS 20000 /* the quasirandom generators' dimensions: each table's length */

static pthread_mutex_t tmu = PTHREAD_MUTEX_INITIALIZER;
static void *tables[8]; /* [which * 2 + (set is the scrambled one)] */

static curandStatus_t table(int which, int set, size_t bytes, void **out)
{
    if (!out) return CURAND_STATUS_OUT_OF_RANGE;
    int slot = which * 2 + (set == CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6 ||
                            set == CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6);
    pthread_mutex_lock(&tmu);
    void *t = tables[slot];
    pthread_mutex_unlock(&tmu);
    if (!t) {
        void *buf = malloc(bytes);
        if (!buf) return CURAND_STATUS_ALLOCATION_FAILED;
        curandStatus_t st = apigenCurandTable(which, set, buf, bytes);
        if (st != CURAND_STATUS_SUCCESS) {
            free(buf);
            return st;
        }
        pthread_mutex_lock(&tmu);
        if (!tables[slot]) tables[slot] = buf;
        else free(buf); /* another thread was first */
        t = tables[slot];
        pthread_mutex_unlock(&tmu);
    }
    *out = t;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curand_guest_direction_vectors32(curandDirectionVectors32_t *vectors[],
                                                curandDirectionVectorSet_t set)
{
    void *t = NULL;
    if (!vectors) return CURAND_STATUS_OUT_OF_RANGE;
    if (set != CURAND_DIRECTION_VECTORS_32_JOEKUO6 &&
        set != CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6)
        return apigenCurandTable(0, set, NULL, 0); /* the library's answer for the set */
    curandStatus_t st = table(0, set, DIMS * sizeof(curandDirectionVectors32_t), &t);
    if (st == CURAND_STATUS_SUCCESS) *vectors = t;
    return st;
}

curandStatus_t curand_guest_direction_vectors64(curandDirectionVectors64_t *vectors[],
                                                curandDirectionVectorSet_t set)
{
    void *t = NULL;
    if (!vectors) return CURAND_STATUS_OUT_OF_RANGE;
    if (set != CURAND_DIRECTION_VECTORS_64_JOEKUO6 &&
        set != CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6)
        return apigenCurandTable(1, set, NULL, 0);
    curandStatus_t st = table(1, set, DIMS * sizeof(curandDirectionVectors64_t), &t);
    if (st == CURAND_STATUS_SUCCESS) *vectors = t;
    return st;
}

curandStatus_t curand_guest_scramble_constants32(unsigned int **constants)
{
    void *t = NULL;
    if (!constants) return CURAND_STATUS_OUT_OF_RANGE;
    curandStatus_t st = table(2, 0, DIMS * sizeof(unsigned int), &t);
    if (st == CURAND_STATUS_SUCCESS) *constants = t;
    return st;
}

curandStatus_t curand_guest_scramble_constants64(unsigned long long **constants)
{
    void *t = NULL;
    if (!constants) return CURAND_STATUS_OUT_OF_RANGE;
    curandStatus_t st = table(3, 0, DIMS * sizeof(unsigned long long), &t);
    if (st == CURAND_STATUS_SUCCESS) *constants = t;
    return st;
}
