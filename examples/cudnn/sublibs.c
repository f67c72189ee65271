/* cuDNN 9's sub-libraries loaded by name, as a program or framework may:
 * libcudnn_graph.so.9, libcudnn_ops.so.9, libcudnn_cnn.so.9 and
 * libcudnn_adv.so.9 are dlopen'ed and their functions called through
 * dlsym, mixing objects across them (a tensor descriptor made through
 * libcudnn_ops.so.9 given to libcudnn_cnn.so.9's call, a handle made
 * through libcudnn_graph.so.9 given to libcudnn.so.9's). With apigen's
 * stubs every one of these reaches the one forwarded libcudnn.so.9. */
#include <dlfcn.h>

#include "common.h"

#define SYM(lib, name) ((__typeof__(&name))sym(lib, #name))

static void *sym(void *lib, const char *name)
{
    void *f = lib ? dlsym(lib, name) : NULL;
    if (!f) printf("no %s\n", name);
    return f;
}

int main(void)
{
    void *graph = dlopen("libcudnn_graph.so.9", RTLD_NOW | RTLD_LOCAL);
    void *ops = dlopen("libcudnn_ops.so.9", RTLD_NOW | RTLD_LOCAL);
    void *cnn = dlopen("libcudnn_cnn.so.9", RTLD_NOW | RTLD_LOCAL);
    void *adv = dlopen("libcudnn_adv.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("loaded: graph %s, ops %s, cnn %s, adv %s\n", graph ? "yes" : "NO", ops ? "yes" : "NO",
           cnn ? "yes" : "NO", adv ? "yes" : "NO");
    if (!graph || !ops || !cnn || !adv) return 1;
    if (!SYM(graph, cudnnCreate) || !SYM(ops, cudnnCreateTensorDescriptor) ||
        !SYM(cnn, cudnnCreateConvolutionDescriptor) || !SYM(adv, cudnnCreateRNNDescriptor))
        return 1;
    printf("libcudnn_graph.so.9 cudnnGetVersion: major %d\n", (int)(SYM(graph, cudnnGetVersion)() / 10000));
    cudnnHandle_t h;
    CK_FIRST(SYM(graph, cudnnCreate)(&h));
    CK(cudnnSetStream(h, NULL)); /* libcudnn.so.9's, with graph's handle */

    cudnnTensorDescriptor_t x;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t c;
    CK(SYM(ops, cudnnCreateTensorDescriptor)(&x));
    CK(SYM(ops, cudnnSetTensor4dDescriptor)(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8));
    CK(SYM(ops, cudnnCreateFilterDescriptor)(&w));
    CK(SYM(ops, cudnnSetFilter4dDescriptor)(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, 3, 3, 3));
    CK(SYM(cnn, cudnnCreateConvolutionDescriptor)(&c));
    CK(SYM(cnn, cudnnSetConvolution2dDescriptor)(c, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                 CUDNN_DATA_FLOAT));
    int n, k, oh, ow;
    CK(SYM(cnn, cudnnGetConvolution2dForwardOutputDim)(c, x, w, &n, &k, &oh, &ow));
    printf("libcudnn_cnn.so.9 output of libcudnn_ops.so.9's descriptors: %d x %d x %d x %d\n", n, k, oh, ow);
    cudnnRNNDescriptor_t r;
    cudnnStatus_t s = SYM(adv, cudnnCreateRNNDescriptor)(&r);
    printf("libcudnn_adv.so.9 cudnnCreateRNNDescriptor: %s\n", s == CUDNN_STATUS_SUCCESS ? "created" : "refused");
    if (s == CUDNN_STATUS_SUCCESS) CK(SYM(adv, cudnnDestroyRNNDescriptor)(r));
    CK(SYM(cnn, cudnnDestroyConvolutionDescriptor)(c));
    CK(cudnnDestroyFilterDescriptor(w));
    CK(SYM(ops, cudnnDestroyTensorDescriptor)(x));
    CK(SYM(graph, cudnnDestroy)(h));
    printf("done\n");
    return 0;
}
