/* The heuristic as a memoized query (specs/cublasLt.yaml, `cache:
 * {contents:}`; tests/cublasLt/memo.sh counts its round trips). Natively
 * and forwarded the answers must be the same, and forwarded a question
 * asked again about descriptors that hold the same values must not reach
 * the server, while one about other values must:
 *   1. LOOPS times, PyTorch's way: a matmul descriptor, three layouts and a
 *      preference made alike, the heuristic, five destroys: one question.
 *   2. One descriptor whose TRANSA changes between two calls (and back),
 *      a preference whose workspace limit drops to 0: each change is a
 *      new question with a new answer (the fake's algo.data[2] says what
 *      it was asked about, so an answer kept for other values shows).
 *   3. A layout destroyed and made again with other rows (and another of
 *      the first rows): the answer of what it holds now.
 *   4. A descriptor attribute the fake refuses (SM_COUNT_TARGET), set with
 *      the size cuBLASLt takes, so the stub queues it: natively the set
 *      returns the error, forwarded the next call does; afterwards the
 *      guest no longer vouches for what that descriptor holds, so the same
 *      question goes to the server again (twice) and gets the native
 *      answer. NVIDIA's cuBLASLt takes the attribute: one new question.
 *   5. A matmul the library refuses, queued by the stub, among heuristics
 *      answered in the guest: its error reaches the program within 17
 *      calls (one kept answer in 16 is asked again while calls are queued).
 * Lines that hold for any library say yes or NO (NO: a failure); what
 * depends on the fake's answers (other values, other answers) is said in
 * words that tests/cublasLt/memo.sh checks.
 * stderr: "questions: N" (N: the distinct questions a memoizing stub must
 * send, with this program's structure) and "calls: C" (every heuristic
 * call: what APIGEN_CACHE=0 sends). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

enum { M = 4, N = 3, K = 5, LOOPS = 30 };

static int calls;

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

typedef struct {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulPreference_t pref;
} question;

static int make(question *q, cublasOperation_t transa, uint64_t maxws)
{
    cublasOperation_t opb = CUBLAS_OP_N;
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    CK(cublasLtMatmulDescCreate(&q->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(q->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    CK(cublasLtMatmulDescSetAttribute(q->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    CK(cublasLtMatmulDescSetAttribute(q->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CK(cublasLtMatrixLayoutCreate(&q->la, CUDA_R_32F, M, K, M));
    CK(cublasLtMatrixLayoutCreate(&q->lb, CUDA_R_32F, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&q->ld, CUDA_R_32F, M, N, M));
    CK(cublasLtMatmulPreferenceCreate(&q->pref));
    CK(cublasLtMatmulPreferenceSetAttribute(q->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxws,
                                            sizeof maxws));
    return 0;
}

static int drop(question *q)
{
    CK(cublasLtMatmulPreferenceDestroy(q->pref));
    CK(cublasLtMatrixLayoutDestroy(q->ld));
    CK(cublasLtMatrixLayoutDestroy(q->lb));
    CK(cublasLtMatrixLayoutDestroy(q->la));
    CK(cublasLtMatmulDescDestroy(q->desc));
    return 0;
}

/* The heuristic's answer as one line: status, count, and per result its
 * algorithm's first words and workspace. */
static cublasStatus_t ask(cublasLtHandle_t lt, const question *q, char *out, size_t cap)
{
    cublasLtMatmulHeuristicResult_t res[3];
    memset(res, 0x5a, sizeof res);
    int n = -1;
    calls++;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, q->desc, q->la, q->lb, q->ld, q->ld, q->pref, 3,
                                                       res, &n);
    int w = snprintf(out, cap, "status %d, %d algorithms:", (int)st, st == CUBLAS_STATUS_SUCCESS ? n : -1);
    for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < n && i < 3 && w > 0 && (size_t)w < cap; i++)
        w += snprintf(out + w, cap - (size_t)w, " [id %llu, workspace %zu, asked about %012llx]",
                      (unsigned long long)res[i].algo.data[0], res[i].workspaceSize,
                      (unsigned long long)res[i].algo.data[2]);
    return st;
}

int main(void)
{
    void *probe;
    if (cudaMalloc(&probe, 16) != cudaSuccess) {
        printf("cudaMalloc: no usable GPU, stopping\n");
        return 2;
    }
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    int questions = 0;

    /* 1. the same question, descriptors made alike each time */
    char first[512] = "", now[512];
    int same = 1;
    for (int i = 0; i < LOOPS; i++) {
        question q;
        if (make(&q, CUBLAS_OP_N, 1 << 20)) return 1;
        CK(ask(lt, &q, now, sizeof now));
        if (i == 0) memcpy(first, now, sizeof first);
        same &= strcmp(first, now) == 0;
        if (drop(&q)) return 1;
    }
    questions += 1;
    printf("1. %d x (descriptors made alike, heuristic, destroyed): %s\n   identical answers: %s\n", LOOPS,
           first, same ? "yes" : "NO");

    /* 2. a changed attribute is a new question */
    question q;
    if (make(&q, CUBLAS_OP_N, 1 << 20)) return 1;
    char a[512], b[512], c[512], d[512];
    CK(ask(lt, &q, a, sizeof a)); /* the loop's question again: no round trip */
    cublasOperation_t t = CUBLAS_OP_T;
    CK(cublasLtMatmulDescSetAttribute(q.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    ask(lt, &q, b, sizeof b); /* new (NVIDIA's may refuse it: the status is in the line) */
    t = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(q.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CK(ask(lt, &q, c, sizeof c)); /* the first one's again: no round trip */
    uint64_t none = 0;
    CK(cublasLtMatmulPreferenceSetAttribute(q.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &none,
                                            sizeof none));
    ask(lt, &q, d, sizeof d); /* new */
    questions += 2;
    printf("2. TRANSA N: %s\n   TRANSA T: %s\n   TRANSA N again: %s\n   no workspace: %s\n", a, b, c, d);
    printf("   the loop's answer again: %s; T and the workspace limit: %s\n",
           strcmp(a, first) == 0 && strcmp(c, first) == 0 ? "yes" : "NO",
           strcmp(a, b) != 0 && strcmp(a, d) != 0 && strcmp(b, d) != 0 ? "each another answer"
                                                                        : "some answer the same");

    /* 3. a layout destroyed and made again with other values */
    uint64_t ws = 1 << 20;
    CK(cublasLtMatmulPreferenceSetAttribute(q.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    CK(cublasLtMatrixLayoutDestroy(q.ld));
    CK(cublasLtMatrixLayoutCreate(&q.ld, CUDA_R_32F, M + 1, N, M + 1));
    char e[512], f[512];
    ask(lt, &q, e, sizeof e); /* new */
    CK(cublasLtMatrixLayoutDestroy(q.ld));
    CK(cublasLtMatrixLayoutCreate(&q.ld, CUDA_R_32F, M, N, M));
    CK(ask(lt, &q, f, sizeof f)); /* the loop's again: no round trip */
    questions += 1;
    printf("3. D of %d rows: %s\n   made again with %d rows: %s\n", M + 1, e, M, f);
    printf("   other rows: %s; the first rows again: the loop's answer: %s\n",
           strcmp(e, first) != 0 ? "another answer" : "the same answer", strcmp(f, first) == 0 ? "yes" : "NO");

    /* 4. a queued setter the library refuses */
    int32_t sm = 8;
    cublasStatus_t set = cublasLtMatmulDescSetAttribute(q.desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm,
                                                        sizeof sm);
    char g[512], h[512];
    cublasStatus_t next = ask(lt, &q, g, sizeof g);
    ask(lt, &q, g, sizeof g);
    ask(lt, &q, h, sizeof h);
    int refused = set != CUBLAS_STATUS_SUCCESS || next != CUBLAS_STATUS_SUCCESS;
    /* refused (the fake): the three go to the server, none is answered in
     * the guest; taken (NVIDIA's cuBLASLt): one new question, asked again */
    questions += refused ? 3 : 1;
    if (refused)
        printf("4. a refused attribute's error, by the set or the next call, once: %s\n",
               (set != CUBLAS_STATUS_SUCCESS) != (next != CUBLAS_STATUS_SUCCESS) ? "yes" : "NO");
    else
        printf("4. the library took the attribute (SM count target %d)\n", (int)sm);
    printf("   then: %s\n   and again: %s\n   the same both times: %s; the loop's answer: %s\n", g, h,
           strcmp(g, h) == 0 ? "yes" : "NO", strcmp(g, first) == 0 ? "yes" : "no");
    if (drop(&q)) return 1;

    /* 5. a queued matmul the library refuses (D's layout does not match A
     * and B): natively its error comes at the call; forwarded at a later
     * sync cuBLASLt call, and the loop's heuristic is answered in the guest:
     * one in 16 of those answers is asked again while calls are queued, so
     * the error still reaches the program within 17 calls */
    float *dA, *dB, *dD;
    CK(cudaMalloc((void **)&dA, M * K * sizeof(float)));
    CK(cudaMalloc((void **)&dB, K * N * sizeof(float)));
    CK(cudaMalloc((void **)&dD, (M + 1) * N * sizeof(float)));
    question r;
    if (make(&r, CUBLAS_OP_N, 1 << 20)) return 1;
    cublasLtMatrixLayout_t wrong;
    CK(cublasLtMatrixLayoutCreate(&wrong, CUDA_R_32F, M + 1, N, M + 1));
    float one = 1.0f, zero = 0.0f;
    int seen = 0, tries = 0;
    for (; tries < 40 && !seen; tries++) {
            cublasLtMatmulHeuristicResult_t res;
        int n = 0;
        calls++;
        if (cublasLtMatmulAlgoGetHeuristic(lt, r.desc, r.la, r.lb, r.ld, r.ld, r.pref, 1, &res, &n) !=
            CUBLAS_STATUS_SUCCESS)
            seen = 1;
        else if (cublasLtMatmul(lt, r.desc, &one, dA, r.la, dB, r.lb, &zero, dD, wrong, dD, wrong, &res.algo,
                                NULL, 0, 0) != CUBLAS_STATUS_SUCCESS)
            seen = 1;
    }
    if (seen)
        printf("5. a refused matmul's error reached the program within 17 heuristics: %s\n",
               tries <= 17 ? "yes" : "NO");
    else
        printf("5. the library took every matmul\n");
    CK(cublasLtMatrixLayoutDestroy(wrong));
    if (drop(&r)) return 1;
    CK(cublasLtDestroy(lt));
    fprintf(stderr, "refused by: %s\n", set != CUBLAS_STATUS_SUCCESS ? "the call"
                                         : refused                    ? "the next call"
                                                                      : "none");
    fprintf(stderr, "questions: %d\ncalls: %d\n", questions, calls);
    return 0;
}
