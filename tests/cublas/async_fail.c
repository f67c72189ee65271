/* A queued cuBLAS call that fails on the server (docs/internals.md "Errors
 * of queued calls"), over the fake cuBLAS of tests/cublas, which refuses
 * cublasSaxpy_v2 for two chosen arguments: an increment of 0 (a value,
 * INVALID_VALUE) and alpha == -7777 (EXECUTION_FAILED, a launch failure no
 * argument value shows). Natively each call returns its own error. Forwarded:
 *  - the refused increment is a value cuBLAS never accepted, so the call
 *    goes sync (async_repeats) and returns INVALID_VALUE itself;
 *  - the launch failure repeats accepted values, so it is queued: the
 *    program syncs through the runtime (success, as natively: nothing was
 *    launched), reads y (unchanged by the failed call, as natively) and the
 *    next cuBLAS call returns EXECUTION_FAILED;
 *  - "last" (argv[1]): one more such call and then only the runtime: the
 *    program never learns it forwarded; the server logs the function and
 *    status when the thread's connection ends (the script checks).
 * stdout is the same natively and forwarded; stderr says where each error
 * came, for tests/cuda/async_fail.sh. */
#include <stdio.h>
#include <string.h>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

enum { N = 8 };

static const char *name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "another status";
    }
}

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    int last = argc > 1 && strcmp(argv[1], "last") == 0;
    cublasHandle_t h;
    cublasStatus_t s0 = cublasCreate_v2(&h);
    if (s0 != CUBLAS_STATUS_SUCCESS) {
        printf("cublasCreate_v2: %s: no usable GPU, stopping\n", name(s0));
        return 2;
    }
    float x[N], y[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i + 1);
        y[i] = (float)(2 * i);
        want[i] = y[i] + 2.0f * x[i] + 3.0f * x[i]; /* small integers: exact */
    }
    float *dx, *dy;
    CK(cudaMalloc((void **)&dx, sizeof x));
    CK(cudaMalloc((void **)&dy, sizeof y));
    CK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
    float two = 2.0f, three = 3.0f, fail = -7777.0f;
    CK(cublasSaxpy_v2(h, N, &two, dx, 1, dy, 1));   /* forwarded: sync (new values) */
    CK(cublasSaxpy_v2(h, N, &three, dx, 1, dy, 1)); /* forwarded: queued (a repeat) */

    cublasStatus_t v = cublasSaxpy_v2(h, N, &two, dx, 0, dy, 1);
    printf("an increment of 0: %s\n", name(v));
    fprintf(stderr, "value refused by: %s\n", v != CUBLAS_STATUS_SUCCESS ? "the call" : "NOT THE CALL");

    cublasStatus_t f = cublasSaxpy_v2(h, N, &fail, dx, 1, dy, 1);
    cudaError_t sync = cudaStreamSynchronize(0);
    CK(cudaMemcpy(got, dy, sizeof got, cudaMemcpyDeviceToHost));
    int same = memcmp(got, want, sizeof got) == 0;
    cudaStream_t st;
    cublasStatus_t next = cublasGetStream_v2(h, &st);
    printf("the runtime's synchronization after the failed call: %s\n", cudaGetErrorName(sync));
    printf("y after the failed call: %s\n", same ? "as before it (nothing ran)" : "WRONG");
    printf("the failed call's error: %s\n", name(f != CUBLAS_STATUS_SUCCESS ? f : next));
    fprintf(stderr, "launch failure reported by: %s\n",
            f != CUBLAS_STATUS_SUCCESS && next == CUBLAS_STATUS_SUCCESS   ? "the call"
            : f == CUBLAS_STATUS_SUCCESS && next != CUBLAS_STATUS_SUCCESS ? "the next call"
                                                                          : "NOBODY OR TWICE");
    if (last) { /* no cuBLAS call after it: natively the call said it */
        cublasStatus_t l = cublasSaxpy_v2(h, N, &fail, dx, 1, dy, 1);
        CK(cudaDeviceSynchronize());
        fprintf(stderr, "last call: %d\n", (int)l);
        return 0;
    }
    CK(cublasDestroy_v2(h));
    return 0;
}
