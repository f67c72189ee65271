/* A fake libcufft.so.12 for CI (no GPU): "device memory" is host memory of
 * the process that loads it (tests/fftrand/fake_cudart.c), and the calls the
 * examples make compute a plain DFT on it. Loaded natively by an example and
 * by the family server alike, it makes the whole forwarded path run here: a
 * plan id or an address that reached the server wrong gives another result
 * or an error. Plans are small integers, as cuFFT's are. The rest answer
 * CUFFT_NOT_SUPPORTED (fake_weak.c). */
#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846 /* not in strict C11's math.h */
#endif
#include <stdlib.h>
#include <string.h>

#include <cufft.h>

#define EXPORT __attribute__((visibility("default")))
#define MAXPLANS 64

typedef struct {
    int live, made, rank, n[2], batch, autoalloc;
    cufftType type;
    void *work;
    cudaStream_t stream;
} plan_t;

static plan_t plans[MAXPLANS]; /* plan p is plans[p - 1] */

static plan_t *get(cufftHandle p)
{
    return p >= 1 && p <= MAXPLANS && plans[p - 1].live ? &plans[p - 1] : NULL;
}

static size_t elems(const plan_t *q)
{
    return (size_t)q->n[0] * (q->rank == 2 ? (size_t)q->n[1] : 1);
}

/* the work a "real" plan would need: one complex value per element */
static size_t work_size(const plan_t *q)
{
    return elems(q) * q->batch * sizeof(cufftComplex);
}

EXPORT cufftResult cufftCreate(cufftHandle *handle)
{
    if (!handle) return CUFFT_INVALID_VALUE;
    for (int i = 0; i < MAXPLANS; i++)
        if (!plans[i].live) {
            plans[i] = (plan_t){.live = 1, .autoalloc = 1};
            *handle = i + 1;
            return CUFFT_SUCCESS;
        }
    return CUFFT_ALLOC_FAILED;
}

static cufftResult make(cufftHandle p, int rank, const int *n, cufftType type, int batch,
                        size_t *workSize)
{
    plan_t *q = get(p);
    if (!q) return CUFFT_INVALID_PLAN;
    if (rank < 1 || rank > 2 || n[0] < 1 || (rank == 2 && n[1] < 1) || batch < 1)
        return CUFFT_INVALID_SIZE;
    if (type != CUFFT_C2C && type != CUFFT_R2C && type != CUFFT_C2R) return CUFFT_INVALID_TYPE;
    q->rank = rank;
    q->n[0] = n[0];
    q->n[1] = rank == 2 ? n[1] : 1;
    q->type = type;
    q->batch = batch;
    q->made = 1;
    if (workSize) *workSize = work_size(q);
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftMakePlan1d(cufftHandle plan, int nx, cufftType type, int batch,
                                   size_t *workSize)
{
    return make(plan, 1, &nx, type, batch, workSize);
}

EXPORT cufftResult cufftPlan1d(cufftHandle *plan, int nx, cufftType type, int batch)
{
    cufftResult r = cufftCreate(plan);
    if (r != CUFFT_SUCCESS) return r;
    r = make(*plan, 1, &nx, type, batch, NULL);
    if (r != CUFFT_SUCCESS) plans[*plan - 1].live = 0;
    return r;
}

EXPORT cufftResult cufftMakePlanMany(cufftHandle plan, int rank, int *n, int *inembed,
                                     int istride, int idist, int *onembed, int ostride,
                                     int odist, cufftType type, int batch, size_t *workSize)
{
    (void)istride, (void)idist, (void)ostride, (void)odist;
    if (!n) return CUFFT_INVALID_VALUE;
    if (inembed || onembed) return CUFFT_NOT_SUPPORTED; /* the fake has the basic layout only */
    return make(plan, rank, n, type, batch, workSize);
}

EXPORT cufftResult cufftGetSize(cufftHandle plan, size_t *workSize)
{
    plan_t *q = get(plan);
    if (!q) return CUFFT_INVALID_PLAN;
    if (!workSize) return CUFFT_INVALID_VALUE;
    *workSize = q->made ? work_size(q) : 0;
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftSetWorkArea(cufftHandle plan, void *workArea)
{
    plan_t *q = get(plan);
    if (!q) return CUFFT_INVALID_PLAN;
    q->work = workArea;
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftSetAutoAllocation(cufftHandle plan, int autoAllocate)
{
    plan_t *q = get(plan);
    if (!q) return CUFFT_INVALID_PLAN;
    q->autoalloc = autoAllocate;
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream)
{
    plan_t *q = get(plan);
    if (!q) return CUFFT_INVALID_PLAN;
    q->stream = stream;
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftDestroy(cufftHandle plan)
{
    plan_t *q = get(plan);
    if (!q) return CUFFT_INVALID_PLAN;
    q->live = 0;
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftGetVersion(int *version)
{
    if (!version) return CUFFT_INVALID_VALUE;
    *version = 12000; /* the fake's own: not NVIDIA's */
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftGetProperty(libraryPropertyType type, int *value)
{
    if (!value) return CUFFT_INVALID_VALUE;
    *value = type == MAJOR_VERSION ? 12 : 0;
    return CUFFT_SUCCESS;
}

/* ---- a plain DFT over one batch element ------------------------------------------ */
/* out = sum_j in[j] e^(sign 2 pi i j.k / n), over rank 1 or 2 (row-major) */
static void dft(const plan_t *q, const double *in, double *out, int sign)
{
    int n0 = q->n[0], n1 = q->n[1];
    for (int k0 = 0; k0 < n0; k0++)
        for (int k1 = 0; k1 < n1; k1++) {
            double re = 0, im = 0;
            for (int j0 = 0; j0 < n0; j0++)
                for (int j1 = 0; j1 < n1; j1++) {
                    double a = sign * 2.0 * M_PI * ((double)j0 * k0 / n0 + (double)j1 * k1 / n1);
                    const double *x = &in[2 * (j0 * n1 + j1)];
                    re += x[0] * cos(a) - x[1] * sin(a);
                    im += x[0] * sin(a) + x[1] * cos(a);
                }
            out[2 * (k0 * n1 + k1)] = re;
            out[2 * (k0 * n1 + k1) + 1] = im;
        }
}

static cufftResult exec(cufftHandle plan, cufftType want, const void *idata, void *odata,
                        int sign)
{
    plan_t *q = get(plan);
    if (!q || !q->made) return CUFFT_INVALID_PLAN;
    if (q->type != want) return CUFFT_INVALID_TYPE;
    if (!idata || !odata) return CUFFT_INVALID_VALUE;
    if (!q->autoalloc && !q->work) return CUFFT_NO_WORKSPACE;
    size_t n = elems(q);
    int last = q->n[q->rank == 2 ? 1 : 0], half = last / 2 + 1;
    size_t nh = n / last * half; /* complex elements of a half spectrum */
    double *a = malloc(2 * n * sizeof *a), *b = malloc(2 * n * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return CUFFT_ALLOC_FAILED;
    }
    for (int bt = 0; bt < q->batch; bt++) {
        if (want == CUFFT_C2C) {
            const cufftComplex *x = (const cufftComplex *)idata + bt * n;
            for (size_t i = 0; i < n; i++) a[2 * i] = x[i].x, a[2 * i + 1] = x[i].y;
        } else if (want == CUFFT_R2C) {
            const float *x = (const float *)idata + bt * n;
            for (size_t i = 0; i < n; i++) a[2 * i] = x[i], a[2 * i + 1] = 0;
        } else { /* C2R: the full spectrum from its Hermitian half */
            const cufftComplex *x = (const cufftComplex *)idata + bt * nh;
            size_t rows = n / last;
            for (size_t r = 0; r < rows; r++)
                for (int k = 0; k < last; k++) {
                    size_t i = r * last + k;
                    if (k < half) {
                        a[2 * i] = x[r * half + k].x, a[2 * i + 1] = x[r * half + k].y;
                    } else {
                        size_t rr = (rows - r) % rows;
                        a[2 * i] = x[rr * half + (last - k)].x;
                        a[2 * i + 1] = -x[rr * half + (last - k)].y;
                    }
                }
        }
        dft(q, a, b, sign);
        if (want == CUFFT_C2C) {
            cufftComplex *y = (cufftComplex *)odata + bt * n;
            for (size_t i = 0; i < n; i++) y[i].x = (float)b[2 * i], y[i].y = (float)b[2 * i + 1];
        } else if (want == CUFFT_R2C) {
            cufftComplex *y = (cufftComplex *)odata + bt * nh;
            for (size_t r = 0; r < n / last; r++)
                for (int k = 0; k < half; k++)
                    y[r * half + k].x = (float)b[2 * (r * last + k)],
                    y[r * half + k].y = (float)b[2 * (r * last + k) + 1];
        } else {
            float *y = (float *)odata + bt * n;
            for (size_t i = 0; i < n; i++) y[i] = (float)b[2 * i];
        }
    }
    free(a), free(b);
    return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftExecC2C(cufftHandle plan, cufftComplex *idata, cufftComplex *odata,
                                int direction)
{
    if (direction != CUFFT_FORWARD && direction != CUFFT_INVERSE) return CUFFT_INVALID_VALUE;
    return exec(plan, CUFFT_C2C, idata, odata, direction);
}

EXPORT cufftResult cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata)
{
    return exec(plan, CUFFT_R2C, idata, odata, CUFFT_FORWARD);
}

EXPORT cufftResult cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata)
{
    return exec(plan, CUFFT_C2R, idata, odata, CUFFT_INVERSE);
}
