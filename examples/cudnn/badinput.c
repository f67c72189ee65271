/* Bad input through the stubs (forwarded only: natively a forged handle is
 * a crash): each call must fail with a cuDNN status, the program must go on,
 * and the server must stay up (tests/cudnn/badinput.sh). Prints each case's
 * status class (the thousands of cuDNN's codes: BAD_PARAM 2xxx, ...), which
 * NVIDIA's library and the CI fake share.
 *   badinput          the cases
 *   badinput child    (run by the cases) allocate device memory, print its
 *                     address, wait for stdin to close: another client's memory */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static const char *cls(cudnnStatus_t s)
{
    switch ((int)s / 1000) {
    case 0: return "SUCCESS";
    case 1: return "NOT_INITIALIZED";
    case 2: return "BAD_PARAM";
    case 3: return "NOT_SUPPORTED";
    case 4: return "INTERNAL_ERROR";
    case 5: return "EXECUTION_FAILED";
    default: return "OTHER";
    }
}

static void show(const char *what, cudnnStatus_t s)
{
    printf("%-58s %s\n", what, cls(s));
}

/* A queued call (specs/cudnn.yaml: the compute calls, a variant pack's
 * attributes) returns success and its error comes back from the thread's
 * next call: the status of the call, or else that of the next one */
static cudnnStatus_t or_next(cudnnHandle_t h, cudnnStatus_t s)
{
    cudaStream_t st;
    return s != CUDNN_STATUS_SUCCESS ? s : cudnnGetStream(h, &st);
}

/* another client (a child process with its own session) allocates memory
 * and keeps it while the parent tries it */
static void *other_client(int *to_child, pid_t *pid, char *self)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down)) return NULL;
    *pid = fork();
    if (*pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(up[0]), close(down[1]);
        execl(self, self, "child", (char *)NULL);
        _exit(127);
    }
    close(up[1]), close(down[0]);
    *to_child = down[1];
    char buf[64] = {0};
    ssize_t n = read(up[0], buf, sizeof buf - 1);
    close(up[0]);
    unsigned long long v = 0;
    if (n <= 0 || sscanf(buf, "%llx", &v) != 1) return NULL;
    return (void *)(uintptr_t)v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        void *p = NULL;
        if (cudaMalloc(&p, 4096) != cudaSuccess) return 1;
        printf("%llx\n", (unsigned long long)(uintptr_t)p);
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0) continue;
        cudaFree(p);
        return 0;
    }
    cudnnHandle_t h;
    CK_FIRST(cudnnCreate(&h));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CK(cudnnCreateTensorDescriptor(&xd));
    CK(cudnnCreateTensorDescriptor(&yd));
    CK(cudnnCreateFilterDescriptor(&wd));
    CK(cudnnCreateConvolutionDescriptor(&cd));
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 4, 4));
    CK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 3, 3));
    CK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 4, 4));
    float *x, *w, *y;
    void *ws;
    CKRT(cudaMalloc((void **)&x, 64));
    CKRT(cudaMalloc((void **)&w, 36));
    CKRT(cudaMalloc((void **)&y, 64));
    CKRT(cudaMalloc(&ws, 64));
    float one = 1, zero = 0;
    /* an algorithm that needs a workspace for these shapes (which one does
     * depends on the library and the GPU) */
    static const cudnnConvolutionFwdAlgo_t algos[] = {
        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
        CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, CUDNN_CONVOLUTION_FWD_ALGO_FFT,
        CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};
    cudnnConvolutionFwdAlgo_t algo = algos[0];
    size_t need = 0;
    for (size_t i = 0; i < sizeof algos / sizeof algos[0] && need == 0; i++)
        if (cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algos[i], &need) ==
            CUDNN_STATUS_SUCCESS)
            algo = algos[i];
        else
            need = 0;
    printf("an algorithm needs a workspace: %s\n", need > 0 ? "yes" : "no");

    /* handles and descriptors */
    show("forged handle (cudnnSetStream)", cudnnSetStream((cudnnHandle_t)(uintptr_t)0x1234, NULL));
    show("forged tensor descriptor (cudnnConvolutionForward)",
         or_next(h, cudnnConvolutionForward(h, &one, (cudnnTensorDescriptor_t)(uintptr_t)0xbad0, x, wd, w, cd,
                                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, yd, y)));
    cudnnTensorDescriptor_t gone;
    CK(cudnnCreateTensorDescriptor(&gone));
    CK(cudnnDestroyTensorDescriptor(gone));
    show("destroyed descriptor (cudnnSetTensor4dDescriptor)",
         cudnnSetTensor4dDescriptor(gone, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 2, 2));

    /* device memory */
    float host[16];
    show("host memory as x (cudnnConvolutionForward)",
         or_next(h, cudnnConvolutionForward(h, &one, xd, host, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                 &zero, yd, y)));
    int to_child = -1;
    pid_t pid = -1;
    void *theirs = other_client(&to_child, &pid, argv[0]);
    printf("another client allocated memory: %s\n", theirs ? "yes" : "NO");
    show("another client's memory as y (cudnnConvolutionForward)",
         or_next(h, cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                 &zero, yd, theirs)));

    /* workspaces */
    if (need > 0)
        show("workspace smaller than the algorithm needs",
             or_next(h, cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws,
                                                need - 1 < 64 ? need - 1 : 64, &zero, yd, y)));
    show("workspace size past its allocation (64 bytes, 1 MiB said)",
         or_next(h, cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws,
                                 1 << 20, &zero, yd, y)));

    /* the backend API's typed arrays */
    cudnnBackendDescriptor_t t, op, pack;
    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op));
    CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    cudnnBackendDescriptor_t forged[2] = {t, (cudnnBackendDescriptor_t)(uintptr_t)0xf00d};
    show("forged descriptor inside a descriptor array",
         cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2,
                                  forged));
    cudnnHandle_t fh = (cudnnHandle_t)(uintptr_t)0x4321;
    show("forged handle inside a handle array",
         cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &fh));
    int64_t dims[4] = {1, 1, 4, 4}, got[4] = {7, 7, 7, 7}, n = 0;
    show("negative element count", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, -3, dims));
    show("an attribute type no element type is known for",
         cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, (cudnnBackendAttributeType_t)999, 4, dims));
    CK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    /* cuDNN answers attributes of finalized descriptors only */
    int64_t strides[4] = {16, 16, 4, 1}, uid = 9, align = 4;
    cudnnDataType_t ft = CUDNN_DATA_FLOAT;
    CK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    CK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    CK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
    CK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ft));
    CK(cudnnBackendFinalize(t));
    cudnnStatus_t s = cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 2, &n, got);
    show("fewer elements asked than the attribute has", s);
    printf("  count said %lld; elements past the 2 asked untouched: %s\n", (long long)n,
           got[2] == 7 && got[3] == 7 ? "yes" : "NO");
    void *ptrs[2] = {x, host};
    int64_t uids[2] = {1, 2};
    CK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 2, uids));
    show("host memory among a variant pack's device pointers",
         or_next(h, cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, ptrs)));
    ptrs[1] = theirs;
    show("another client's memory as the variant pack's workspace",
         or_next(h, cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ptrs[1])));
    show("forged execution plan (cudnnBackendExecute)",
         or_next(h, cudnnBackendExecute(h, (cudnnBackendDescriptor_t)(uintptr_t)0xbeef, pack)));

    if (to_child >= 0) close(to_child);
    if (pid > 0) waitpid(pid, NULL, 0);
    /* still usable after all that */
    show("a good call afterwards (cudnnSetStream)", cudnnSetStream(h, NULL));
    CK(cudnnBackendDestroyDescriptor(pack));
    CK(cudnnBackendDestroyDescriptor(op));
    CK(cudnnBackendDestroyDescriptor(t));
    CK(cudnnDestroyTensorDescriptor(xd));
    CK(cudnnDestroyTensorDescriptor(yd));
    CK(cudnnDestroyFilterDescriptor(wd));
    CK(cudnnDestroyConvolutionDescriptor(cd));
    CK(cudnnDestroy(h));
    return 0;
}
