/* Internal calls of specs/curand.yaml (wire messages, not cuRAND's API):
 * the stub's hand-written code (specs/curand/guest.c) makes them, the
 * server implements them in specs/curand/host.c. */
#ifndef APIGEN_CURAND_H
#define APIGEN_CURAND_H

#include <stddef.h>

#include <curand.h>

/* what a host generator's output buffer holds (one per curandGenerate*) */
enum apigenCurandKind {
    APIGEN_CURAND_UINT = 0,        /* curandGenerate */
    APIGEN_CURAND_ULL = 1,         /* curandGenerateLongLong */
    APIGEN_CURAND_UNIFORM = 2,     /* curandGenerateUniform */
    APIGEN_CURAND_UNIFORM_D = 3,   /* curandGenerateUniformDouble */
    APIGEN_CURAND_NORMAL = 4,      /* curandGenerateNormal */
    APIGEN_CURAND_NORMAL_D = 5,    /* curandGenerateNormalDouble */
    APIGEN_CURAND_LOGNORMAL = 6,   /* curandGenerateLogNormal */
    APIGEN_CURAND_LOGNORMAL_D = 7, /* curandGenerateLogNormalDouble */
    APIGEN_CURAND_POISSON = 8      /* curandGeneratePoisson(Method) */
};

/* A host generator's numbers (curandCreateGeneratorHost): the library
 * writes host memory, so the server generates into the reply and the bytes
 * come back to the caller's buffer. bytes = num * the kind's element size;
 * a, b: mean and stddev, or lambda in a; method: curandGeneratePoissonMethod's. */
curandStatus_t apigenCurandGenerateHost(curandGenerator_t generator, int kind, void *outputPtr,
                                        size_t bytes, size_t num, double a, double b,
                                        int method);

/* The library's constant tables (direction vectors and scramble constants
 * of the quasirandom generators): host memory of the library, copied once
 * into the guest. which: 0 vectors32, 1 vectors64, 2 scramble32, 3
 * scramble64; set: the direction vector set (which 0 and 1). */
curandStatus_t apigenCurandTable(int which, int set, void *buf, size_t bytes);

#endif
