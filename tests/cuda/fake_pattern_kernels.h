/* The kernels of bench/patterns.cu run on the CPU, for the stand-in devices
 * of tests/cuda/fake_kernels.c (runtime) and tests/cuda/driver/fake_driver.c
 * (driver): with them the pattern benchmark runs natively and forwarded
 * without a GPU, so that its round trips can be counted in CI
 * (tests/cuda/patterns_ci.sh). Each body gets the kernel's arguments as
 * cudaLaunchKernel passes them (one pointer per parameter) and the launch's
 * total threads; the layouts are what cuFuncGetParamInfo reports (C ABI).
 * fake_pattern_global(name) is the fake's storage of a __constant__ or
 * __device__ variable (NULL: none). Never used with a GPU. */
#ifndef FAKE_PATTERN_KERNELS_H
#define FAKE_PATTERN_KERNELS_H
#include <stddef.h>
#include <string.h>

typedef void (*fake_pattern_body)(void *const *args, unsigned long blocks, unsigned long threads);
struct fake_pattern_kernel {
    const char *name;
    unsigned nparams;
    unsigned short off[16], size[16];
    fake_pattern_body run;
};

static void *fake_pattern_global(const char *name);

#define ARG(T, i) (*(T const *)args[i])

static void fpk_spin(void *const *args, unsigned long b, unsigned long t)
{
    (void)b, (void)t;
    int *flag = ARG(int *, 1);
    if (flag) *flag = 1;
}
static void fpk_k1(void *const *args, unsigned long b, unsigned long t)
{
    (void)t;
    ARG(int *, 0)[0] += (int)b; /* thread 0 of each block */
}
static void fpk_k8(void *const *args, unsigned long b, unsigned long t)
{
    (void)t;
    int s = (int)ARG(float, 1) + ARG(int, 2) + (int)ARG(size_t, 3) + (ARG(const float *, 4) != NULL) +
            (int)ARG(double, 5) + ARG(int, 6) + (int)ARG(unsigned, 7);
    ARG(int *, 0)[1] += s * (int)b;
}
static void fpk_k16(void *const *args, unsigned long b, unsigned long t)
{
    (void)t;
    int s = (int)ARG(float, 1) + ARG(int, 2) + (int)ARG(size_t, 3) + (ARG(const float *, 4) != NULL) +
            (int)ARG(double, 5) + ARG(int, 6) + (int)ARG(unsigned, 7) + ARG(char, 8) + ARG(short, 9) +
            (int)ARG(long long, 10) + (int)ARG(float, 11) + (ARG(const int *, 12) != NULL) + ARG(int, 13) +
            (int)ARG(double, 14) + (int)ARG(unsigned, 15);
    ARG(int *, 0)[2] += s * (int)b;
}
static void fpk_reduce(void *const *args, unsigned long b, unsigned long t)
{
    (void)b, (void)t;
    const float *x = ARG(const float *, 0);
    int n = ARG(int, 1);
    float v = 0;
    for (int i = 0; i < n; i++) v += x[i];
    *ARG(float *, 2) = v;
}
static void fpk_scale(void *const *args, unsigned long b, unsigned long t)
{
    float *x = ARG(float *, 0), a = ARG(float, 1);
    size_t n = ARG(size_t, 2), m = b * t < n ? b * t : n;
    for (size_t i = 0; i < m; i++) x[i] *= a;
}
static void fpk_addc(void *const *args, unsigned long b, unsigned long t)
{
    float *x = ARG(float *, 0), a = ARG(float, 1);
    size_t n = ARG(size_t, 2), m = b * t < n ? b * t : n;
    for (size_t i = 0; i < m; i++) x[i] += a;
}
static void fpk_poly(void *const *args, unsigned long b, unsigned long t)
{
    const float *x = ARG(const float *, 0), *coef = fake_pattern_global("coef");
    float *y = ARG(float *, 1), *result = fake_pattern_global("result");
    int n = ARG(int, 2);
    if (!coef || !result || n < 0) return;
    size_t m = b * t < (size_t)n ? b * t : (size_t)n;
    for (size_t i = 0; i < m; i++) {
        float v = x[i], acc = 0;
        for (int k = 0; k < 64; k++) acc = acc * v + coef[k];
        y[i] = acc;
        if (i < t && i < 1024) result[i] = acc;
    }
}
/* tests/cuda/pinned_kernel_rt.cu: a pointer inside a struct parameter */
static void fpk_kh(void *const *args, unsigned long b, unsigned long t)
{
    (void)t;
    const struct { int add; int *p; } *h = args[0];
    h->p[0] += h->add * (int)b;
}
/* tests/cuda/driver/pinned_kernel_ci.c: a pointer the program keeps in
 * device memory (NCCL's abort flag in its device communicator) */
static void fpk_kd(void *const *args, unsigned long b, unsigned long t)
{
    (void)t;
    int *const *slot = ARG(int *const *, 0);
    (*slot)[0] += (int)b;
}
/* tests/cuda/driver/short_params_ci.c: one 4 KiB struct parameter of
 * which a launch passes only the bytes it uses (NCCL's kernel arguments) */
struct fpk_args4k {
    int *out;
    int n;
    int vals[1021];
};
static void fpk_args_sum(void *const *args, unsigned long b, unsigned long t)
{
    (void)b, (void)t;
    const struct fpk_args4k *a = args[0];
    int s = 0;
    for (int i = 0; i < a->n && i < 1021; i++) s += a->vals[i];
    a->out[0] = s;
}
#undef ARG

static const struct fake_pattern_kernel fake_pattern_kernels[] = {
    {"_Z4spinyPi", 2, {0, 8}, {8, 8}, fpk_spin},
    {"_Z2k1Pi", 1, {0}, {8}, fpk_k1},
    {"_Z2kh6holder", 1, {0}, {16}, fpk_kh},
    {"_Z2kdPPi", 1, {0}, {8}, fpk_kd},
    {"_Z2k8PifimPKfdij", 8, {0, 8, 12, 16, 24, 32, 40, 44}, {8, 4, 4, 8, 8, 8, 4, 4}, fpk_k8},
    {"_Z3k16PifimPKfdijcsxfPKiidj", 16,
     {0, 8, 12, 16, 24, 32, 40, 44, 48, 50, 56, 64, 72, 80, 88, 96},
     {8, 4, 4, 8, 8, 8, 4, 4, 1, 2, 8, 4, 8, 4, 8, 4}, fpk_k16},
    {"_Z6reducePKfiPf", 3, {0, 8, 16}, {8, 4, 8}, fpk_reduce},
    {"_Z5scalePffm", 3, {0, 8, 16}, {8, 4, 8}, fpk_scale},
    {"_Z4addcPffm", 3, {0, 8, 16}, {8, 4, 8}, fpk_addc},
    {"_Z4polyPKfPfi", 3, {0, 8, 16}, {8, 8, 4}, fpk_poly},
    {"_Z8args_sum6args4k", 1, {0}, {sizeof(struct fpk_args4k)}, fpk_args_sum},
};

static const struct fake_pattern_kernel *fake_pattern_kernel_named(const char *name)
{
    for (size_t i = 0; i < sizeof fake_pattern_kernels / sizeof fake_pattern_kernels[0]; i++)
        if (name && strcmp(fake_pattern_kernels[i].name, name) == 0) return &fake_pattern_kernels[i];
    return NULL;
}
#endif
