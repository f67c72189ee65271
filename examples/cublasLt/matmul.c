/* cuBLASLt as PyTorch uses it: a matmul descriptor with a bias epilogue,
 * matrix layouts, a preference with a workspace limit, the heuristic's best
 * algorithm and its workspace, on a stream of the runtime; alpha and beta
 * first in host memory, then in device memory (the descriptor's pointer
 * mode), then A transposed with a GELU+bias epilogue; the algorithm calls
 * (ids, init, a config attribute, check); a layout transform with device
 * scalars. Each result is
 * checked against a CPU reference and printed as checked; attribute reads
 * (the size query with sizeInBytes 0, a device pointer and an emulation
 * descriptor read back) too.
 * Exit 0: every check held; 1: a check failed; 2: no usable GPU. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

enum { M = 5, N = 4, K = 3 };
#define WORKSPACE (1u << 20)

/* GELU: the tanh approximation (cuBLASLt's documented form) or, accepted
 * too, the erf form */
static int gelu_exact;
static float gelu(float x)
{
    if (gelu_exact) return 0.5f * x * (1.0f + erff(x * 0.70710678f));
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

/* D = epi(alpha * op(A) * B + beta * C + bias), column-major, A stored
 * M x K (or K x M when transa) */
static void reference(float *d, const float *a, int transa, const float *b, const float *c,
                      const float *bias, float alpha, float beta, cublasLtEpilogue_t epi)
{
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            float s = 0;
            for (int l = 0; l < K; l++) s += (transa ? a[i * K + l] : a[l * M + i]) * b[j * K + l];
            float v = alpha * s + beta * (c ? c[j * M + i] : 0) + bias[i];
            if (epi == CUBLASLT_EPILOGUE_RELU_BIAS) v = v > 0 ? v : 0;
            if (epi == CUBLASLT_EPILOGUE_GELU_BIAS) v = gelu(v);
            d[j * M + i] = v;
        }
}

static int close_to(const float *got, const float *want)
{
    for (int i = 0; i < M * N; i++)
        if (!want || fabsf(got[i] - want[i]) > 1e-3f * (1.0f + fabsf(want[i]))) return 0;
    return 1;
}

/* got against want (or want2, another accepted form, when not NULL) */
static int check(const char *what, const float *got, const float *want, const float *want2)
{
    int ok = close_to(got, want) || (want2 && close_to(got, want2));
    printf("%s: D (%dx%d) matches the CPU: %s\n", what, M, N, ok ? "yes" : "NO");
    if (!ok)
        for (int i = 0; i < M * N; i++) printf("  D[%d] = %g, want %g\n", i, got[i], want[i]);
    return ok;
}

/* the heuristic's first algorithm for desc (within the preference's workspace) */
static cublasLtMatmulHeuristicResult_t best(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc,
                                            cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                                            cublasLtMatrixLayout_t ld,
                                            cublasLtMatmulPreference_t pref)
{
    cublasLtMatmulHeuristicResult_t res[4];
    int n = 0;
    memset(res, 0, sizeof res);
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 4, res, &n));
    printf("heuristic: at least one algorithm: %s, within the workspace limit: %s\n",
           n >= 1 ? "yes" : "NO",
           n >= 1 && res[0].workspaceSize <= WORKSPACE && res[0].state == CUBLAS_STATUS_SUCCESS
               ? "yes" : "NO");
    if (n < 1) exit(1);
    return res[0];
}

int main(void)
{
    float a[M * K], at[K * M], b[K * N], bias[M], d[M * N], d1[M * N], want[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 5) - 2.0f;
    for (int i = 0; i < M; i++)
        for (int l = 0; l < K; l++) at[i * K + l] = a[l * M + i]; /* A^T stored K x M */
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 3) % 4) - 1.5f;
    for (int i = 0; i < M; i++) bias[i] = 0.25f * (float)i - 0.5f;

    float *dA, *dAt, *dB, *dBias, *dD1, *dD2, *dScal;
    void *work;
    CUDA_OR_NOGPU(cudaMalloc((void **)&dA, sizeof a));
    CUDA_CHECK(cudaMalloc((void **)&dAt, sizeof at));
    CUDA_CHECK(cudaMalloc((void **)&dB, sizeof b));
    CUDA_CHECK(cudaMalloc((void **)&dBias, sizeof bias));
    CUDA_CHECK(cudaMalloc((void **)&dD1, sizeof d));
    CUDA_CHECK(cudaMalloc((void **)&dD2, sizeof d));
    CUDA_CHECK(cudaMalloc((void **)&dScal, 2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&work, WORKSPACE));
    CUDA_CHECK(cudaMemcpy(dA, a, sizeof a, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dAt, at, sizeof at, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, b, sizeof b, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBias, bias, sizeof bias, cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    int ok = 1;
    cublasLtHandle_t lt;
    LT_CHECK(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t desc;
    LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t op = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof op));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dBias,
                                            sizeof dBias));

    /* attribute reads: the size query (sizeInBytes 0) and a device pointer back */
    size_t need = 0, wrote = 0;
    LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, NULL, 0, &need));
    printf("epilogue attribute size query: %zu bytes\n", need);
    void *back = NULL;
    LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &back,
                                            sizeof back, &wrote));
    printf("bias pointer reads back: %s (%zu bytes)\n", back == (void *)dBias ? "yes" : "NO", wrote);

    /* a handle as an attribute's value: an emulation descriptor set and read back */
    cublasLtEmulationDesc_t emu, emu_back = NULL;
    LT_CHECK(cublasLtEmulationDescCreate(&emu));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &emu,
                                            sizeof emu));
    LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR,
                                            &emu_back, sizeof emu_back, &wrote));
    printf("emulation descriptor reads back: %s\n", emu_back == emu ? "yes" : "NO");
    ok &= emu_back == emu;
    cublasLtEmulationDesc_t none = NULL; /* the matmuls below: no emulation settings */
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &none,
                                            sizeof none));

    cublasLtMatrixLayout_t la, lat, lb, ld;
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lat, CUDA_R_32F, K, M, K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, M, N, M));
    uint64_t rows = 0;
    LT_CHECK(cublasLtMatrixLayoutGetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows,
                                              &wrote));
    printf("layout of D: %llu rows\n", (unsigned long long)rows);
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t limit = WORKSPACE;
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &limit, sizeof limit));

    /* 1. host scalars: D1 = A * B + bias */
    cublasLtMatmulHeuristicResult_t h = best(lt, desc, la, lb, ld, pref);
    float alpha = 1.0f, beta = 0.0f;
    LT_CHECK(cublasLtMatmul(lt, desc, &alpha, dA, la, dB, lb, &beta, dD1, ld, dD1, ld, &h.algo,
                            work, h.workspaceSize, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(d1, dD1, sizeof d1, cudaMemcpyDeviceToHost));
    reference(want, a, 0, b, NULL, bias, alpha, beta, CUBLASLT_EPILOGUE_BIAS);
    ok &= check("1. host alpha/beta, bias epilogue", d1, want, NULL);

    /* 2. device scalars (the descriptor's pointer mode): D2 = relu(0.5 A B + D1 + bias) */
    float scal[2] = {0.5f, 1.0f};
    CUDA_CHECK(cudaMemcpy(dScal, scal, sizeof scal, cudaMemcpyHostToDevice));
    cublasLtPointerMode_t pm = CUBLASLT_POINTER_MODE_DEVICE;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
    epi = CUBLASLT_EPILOGUE_RELU_BIAS;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    h = best(lt, desc, la, lb, ld, pref);
    LT_CHECK(cublasLtMatmul(lt, desc, dScal, dA, la, dB, lb, dScal + 1, dD1, ld, dD2, ld, &h.algo,
                            work, h.workspaceSize, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(d, dD2, sizeof d, cudaMemcpyDeviceToHost));
    reference(want, a, 0, b, d1, bias, scal[0], scal[1], CUBLASLT_EPILOGUE_RELU_BIAS);
    ok &= check("2. device alpha/beta, relu+bias epilogue", d, want, NULL);

    /* 3. back to host scalars, A transposed, GELU+bias, no algo given */
    pm = CUBLASLT_POINTER_MODE_HOST;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
    op = CUBLAS_OP_T;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op));
    epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    alpha = 2.0f;
    LT_CHECK(cublasLtMatmul(lt, desc, &alpha, dAt, lat, dB, lb, &beta, dD2, ld, dD2, ld, NULL,
                            work, WORKSPACE, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(d, dD2, sizeof d, cudaMemcpyDeviceToHost));
    reference(want, at, 1, b, NULL, bias, alpha, 0.0f, CUBLASLT_EPILOGUE_GELU_BIAS);
    float want_erf[M * N];
    gelu_exact = 1;
    reference(want_erf, at, 1, b, NULL, bias, alpha, 0.0f, CUBLASLT_EPILOGUE_GELU_BIAS);
    gelu_exact = 0;
    ok &= check("3. A transposed, gelu+bias epilogue, no algo", d, want, want_erf);

    /* 4. the lower-level algorithm calls: ids, init, a config attribute, check */
    int ids[8], nids = 0;
    LT_CHECK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                      CUDA_R_32F, CUDA_R_32F, 8, ids, &nids));
    printf("algorithm ids: at least one: %s\n", nids >= 1 ? "yes" : "NO");
    ok &= nids >= 1;
    cublasLtMatmulAlgo_t algo;
    int32_t id_back = -1;
    LT_CHECK(cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                    CUDA_R_32F, CUDA_R_32F, ids[0], &algo));
    LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id_back,
                                                  sizeof id_back, &wrote));
    printf("algorithm %d initialized, its id reads back: %s\n", ids[0], id_back == ids[0] ? "yes" : "NO");
    ok &= id_back == ids[0];
    cublasLtMatmulHeuristicResult_t checked;
    memset(&checked, 0, sizeof checked);
    cublasStatus_t cs = cublasLtMatmulAlgoCheck(lt, desc, lat, lb, ld, ld, &algo, &checked);
    printf("cublasLtMatmulAlgoCheck: %s (workspace %zu bytes)\n", cublasLtGetStatusName(cs),
           cs == CUBLAS_STATUS_SUCCESS ? checked.workspaceSize : (size_t)0);

    /* 5. a layout transform with device scalars: C (K x M) = 0.5 A^T + 1.0 At */
    cublasLtMatrixTransformDesc_t tdesc;
    LT_CHECK(cublasLtMatrixTransformDescCreate(&tdesc, CUDA_R_32F));
    pm = CUBLASLT_POINTER_MODE_DEVICE;
    LT_CHECK(cublasLtMatrixTransformDescSetAttribute(tdesc, CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE,
                                                     &pm, sizeof pm));
    LT_CHECK(cublasLtMatrixTransformDescSetAttribute(tdesc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                                                     &op, sizeof op)); /* op is CUBLAS_OP_T */
    LT_CHECK(cublasLtMatrixTransform(lt, tdesc, dScal, dA, la, dScal + 1, dAt, lat, dD2, lat, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float tc[K * M], twant[K * M];
    CUDA_CHECK(cudaMemcpy(tc, dD2, sizeof tc, cudaMemcpyDeviceToHost));
    int tok = 1;
    for (int i = 0; i < M; i++)
        for (int l = 0; l < K; l++) {
            twant[i * K + l] = 0.5f * a[l * M + i] + 1.0f * at[i * K + l];
            if (fabsf(tc[i * K + l] - twant[i * K + l]) > 1e-5f) tok = 0;
        }
    printf("5. transform, device alpha/beta, A transposed: C (%dx%d) matches the CPU: %s\n", K, M,
           tok ? "yes" : "NO");
    ok &= tok;
    LT_CHECK(cublasLtMatrixTransformDescDestroy(tdesc));

    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    LT_CHECK(cublasLtMatrixLayoutDestroy(la));
    LT_CHECK(cublasLtMatrixLayoutDestroy(lat));
    LT_CHECK(cublasLtMatrixLayoutDestroy(lb));
    LT_CHECK(cublasLtMatrixLayoutDestroy(ld));
    LT_CHECK(cublasLtMatmulDescDestroy(desc));
    LT_CHECK(cublasLtEmulationDescDestroy(emu));
    LT_CHECK(cublasLtDestroy(lt));
    CUDA_CHECK(cudaStreamDestroy(stream));
    cudaFree(dA); cudaFree(dAt); cudaFree(dB); cudaFree(dBias);
    cudaFree(dD1); cudaFree(dD2); cudaFree(dScal); cudaFree(work);
    printf("every result matched: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
