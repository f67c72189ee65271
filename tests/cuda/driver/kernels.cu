// Kernels for the driver-API test (driver_basic.c): loaded as PTX text and
// as a fat binary file with cuModuleLoadData / cuModuleLoad.
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

struct pair {
    int k;
    double scale;
};

extern "C" __global__ void fill(int *out, char c, struct pair p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (int)(c + p.k * i * p.scale);
}

__device__ int counter;
extern "C" __global__ void bump(void) { atomicAdd(&counter, 1); }

// graph host nodes (driver_graph_host.c): one thread counts in buf[i]
extern "C" __global__ void bump_at(int *buf, int i) { buf[i] += 1; }
