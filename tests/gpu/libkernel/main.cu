// Library kernels through the runtime API on a real GPU (CUDA 12's
// context-independent loading): cudaLibraryLoadData of a PTX file,
// cudaLibraryGetKernel, and the kernel handle cast to a function address for
// cudaLaunchKernel, cudaLaunchKernelExC and cudaLaunchCooperativeKernel, as
// NVIDIA documents it; then the library unloaded and loaded again (the
// driver may hand the new kernels the old addresses) and launched with other
// parameters. tests/gpu/libkernel.sh runs it natively and through the
// runtime stub and compares the output.
//   main KERNELS.ptx
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

struct holder {
    int add;
    int *p;
};

static int bad;

static void say(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != cudaSuccess) bad = 1;
}

static std::vector<char> slurp(const char *path)
{
    std::vector<char> v;
    FILE *f = fopen(path, "rb");
    if (!f) return v;
    int c;
    while ((c = fgetc(f)) != EOF) v.push_back((char)c);
    fclose(f);
    v.push_back('\0');
    return v;
}

static void round_(const std::vector<char> &ptx, int r)
{
    cudaLibrary_t lib = nullptr;
    say("load", cudaLibraryLoadData(&lib, ptx.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    cudaKernel_t kh = nullptr, k3 = nullptr, ks = nullptr;
    say("kernel add_holder", cudaLibraryGetKernel(&kh, lib, "add_holder"));
    say("kernel add_three", cudaLibraryGetKernel(&k3, lib, "add_three"));
    say("kernel scale", cudaLibraryGetKernel(&ks, lib, "scale"));
    unsigned int count = 0;
    say("kernel count", cudaLibraryGetKernelCount(&count, lib));
    printf("kernels: %u\n", count);
    int *p = nullptr;
    float *x = nullptr;
    const int n = 1000;
    say("malloc", cudaMalloc((void **)&p, 2 * sizeof(int)));
    say("malloc", cudaMalloc((void **)&x, n * sizeof(float)));
    say("memset", cudaMemset(p, 0, 2 * sizeof(int)));
    std::vector<float> hx(n);
    for (int i = 0; i < n; i++) hx[i] = 0.5f * (float)(i % 17) + (float)r;
    say("copy in", cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    holder h = {5 + r, p};
    void *hargs[] = {&h};
    say("cudaLaunchKernel add_holder", cudaLaunchKernel((const void *)kh, dim3(2), dim3(32), hargs, 0, nullptr));
    int a = 7 * (r + 1);
    long long b = 1000000000000LL + r;
    void *args3[] = {&p, &a, &b};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(3);
    cfg.blockDim = dim3(64);
    say("cudaLaunchKernelExC add_three", cudaLaunchKernelExC(&cfg, (const void *)k3, args3));
    float s = 1.5f + (float)r;
    int nn = n;
    void *sargs[] = {&x, &s, &nn};
    say("cudaLaunchCooperativeKernel scale",
        cudaLaunchCooperativeKernel((const void *)ks, dim3((n + 127) / 128), dim3(128), sargs, 0, nullptr));
    cudaStream_t st;
    say("stream", cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    say("cudaLaunchKernel scale on a stream", cudaLaunchKernel((const void *)ks, dim3((n + 127) / 128), dim3(128), sargs, 0, st));
    say("sync", cudaStreamSynchronize(st));
    int hp[2] = {0, 0};
    say("copy back", cudaMemcpy(hp, p, sizeof hp, cudaMemcpyDeviceToHost));
    say("copy back", cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < n; i++) sum += hx[i];
    printf("round %d: holder sum %d, three sum %d, scaled sum %.6f\n", r, hp[0], hp[1], sum);
    say("stream destroy", cudaStreamDestroy(st));
    say("free", cudaFree(p));
    say("free", cudaFree(x));
    say("unload", cudaLibraryUnload(lib));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KERNELS.ptx\n", argv[0]);
        return 2;
    }
    std::vector<char> ptx = slurp(argv[1]);
    if (ptx.size() < 2) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    for (int r = 0; r < 3; r++) round_(ptx, r);
    printf("%s\n", bad ? "FAILED" : "ok");
    return bad;
}
