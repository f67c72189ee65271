// Kernels of the library that tests/gpu/libkernel/main.cu loads at run time
// (nvcc -ptx; extern "C" names).
struct holder {
    int add;
    int *p;
};
extern "C" __global__ void add_holder(holder h)
{
    atomicAdd(h.p, h.add);
}
extern "C" __global__ void add_three(int *p, int a, long long b)
{
    atomicAdd(p + 1, a + (int)b + 1);
}
extern "C" __global__ void scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s + (float)i;
}
