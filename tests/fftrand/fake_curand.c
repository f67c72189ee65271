/* A fake libcurand.so.10 for CI (no GPU): host and "device" generators both
 * write memory of the process that loads it (device memory is host memory
 * under tests/fftrand/fake_cudart.c), from a splitmix64 sequence of the seed
 * and offset: the fake's numbers, not cuRAND's, the same natively and
 * forwarded (memory the client does not own is refused by the server's
 * range checks before the fake could write it).
 * Only the calls the examples make are implemented; the rest answer
 * CURAND_STATUS_INTERNAL_ERROR (fake_weak.c). */
#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846 /* not in strict C11's math.h */
#endif
#include <stdint.h>
#include <stdlib.h>

#include <curand.h>

#define EXPORT __attribute__((visibility("default")))
#define MAGIC 0xc0ffee

struct curandGenerator_st {
    int magic, host;
    uint64_t seed, offset;
};

static int valid(curandGenerator_t g)
{
    return g && g->magic == MAGIC;
}

static curandStatus_t create(curandGenerator_t *g, curandRngType_t type, int host)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    if (type < CURAND_RNG_PSEUDO_DEFAULT || type > CURAND_RNG_QUASI_SCRAMBLED_SOBOL64)
        return CURAND_STATUS_TYPE_ERROR;
    struct curandGenerator_st *s = calloc(1, sizeof *s);
    if (!s) return CURAND_STATUS_ALLOCATION_FAILED;
    s->magic = MAGIC;
    s->host = host;
    s->seed = 0;
    *g = s;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t *g, curandRngType_t t)
{
    return create(g, t, 0);
}

EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t *g, curandRngType_t t)
{
    return create(g, t, 1);
}

EXPORT curandStatus_t curandDestroyGenerator(curandGenerator_t g)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    g->magic = 0;
    free(g);
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long s)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    g->seed = s;
    g->offset = 0;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long o)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    g->offset = o;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t o)
{
    (void)o;
    return valid(g) ? CURAND_STATUS_SUCCESS : CURAND_STATUS_NOT_INITIALIZED;
}

EXPORT curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t g, unsigned int d)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    return d >= 1 && d <= 20000 ? CURAND_STATUS_SUCCESS : CURAND_STATUS_OUT_OF_RANGE;
}

EXPORT curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t s)
{
    (void)s;
    return valid(g) ? CURAND_STATUS_SUCCESS : CURAND_STATUS_NOT_INITIALIZED;
}

static uint64_t next(curandGenerator_t g)
{
    uint64_t z = g->seed * 0x9e3779b97f4a7c15ull + ++g->offset * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unif(curandGenerator_t g) /* (0, 1] as cuRAND's */
{
    return ((next(g) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

static double gauss(curandGenerator_t g)
{
    return sqrt(-2 * log(unif(g))) * cos(2 * M_PI * unif(g));
}

EXPORT curandStatus_t curandGenerate(curandGenerator_t g, unsigned int *o, size_t n)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    for (size_t i = 0; i < n; i++) o[i] = (unsigned int)(next(g) >> 32);
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *o, size_t n)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    for (size_t i = 0; i < n; i++) o[i] = (float)unif(g);
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGenerateNormal(curandGenerator_t g, float *o, size_t n, float m, float s)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    if (n % 2) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    for (size_t i = 0; i < n; i++) o[i] = (float)(m + s * gauss(g));
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float *o, size_t n, float m,
                                              float s)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    if (n % 2) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    for (size_t i = 0; i < n; i++) o[i] = (float)exp(m + s * gauss(g));
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned int *o, size_t n,
                                            double lambda)
{
    if (!valid(g)) return CURAND_STATUS_NOT_INITIALIZED;
    if (lambda <= 0) return CURAND_STATUS_OUT_OF_RANGE;
    for (size_t i = 0; i < n; i++) { /* Knuth */
        double l = exp(-lambda), p = 1;
        unsigned int k = 0;
        do {
            k++;
            p *= unif(g);
        } while (p > l);
        o[i] = k - 1;
    }
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandCreatePoissonDistribution(double lambda,
                                                      curandDiscreteDistribution_t *d)
{
    if (!d || lambda <= 0) return CURAND_STATUS_OUT_OF_RANGE;
    *d = calloc(1, 64); /* device memory of the fake: host memory */
    return *d ? CURAND_STATUS_SUCCESS : CURAND_STATUS_ALLOCATION_FAILED;
}

EXPORT curandStatus_t curandDestroyDistribution(curandDiscreteDistribution_t d)
{
    free(d);
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGetVersion(int *v)
{
    if (!v) return CURAND_STATUS_OUT_OF_RANGE;
    *v = 10000; /* the fake's own: not NVIDIA's */
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGetProperty(libraryPropertyType t, int *v)
{
    if (!v) return CURAND_STATUS_OUT_OF_RANGE;
    *v = t == MAJOR_VERSION ? 10 : 0;
    return CURAND_STATUS_SUCCESS;
}

/* constant tables of 20,000 dimensions, as the library's */
static unsigned int vec32[20000][32], scr32[20000];

EXPORT curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t *v[],
                                                  curandDirectionVectorSet_t set)
{
    if (set != CURAND_DIRECTION_VECTORS_32_JOEKUO6 &&
        set != CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6)
        return CURAND_STATUS_OUT_OF_RANGE;
    for (int d = 0; d < 20000; d++)
        for (int b = 0; b < 32; b++) vec32[d][b] = (0x80000000u >> b) ^ (unsigned)(d * 2654435761u);
    *v = vec32;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGetScrambleConstants32(unsigned int **c)
{
    for (int d = 0; d < 20000; d++) scr32[d] = (unsigned)d * 40503u;
    *c = scr32;
    return CURAND_STATUS_SUCCESS;
}
