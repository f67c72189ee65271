/* The stand-in device's launch limits (tests/cuda/fake_device.c), as a
 * GPU's runtime answers them: the grid, block and opt-in shared memory
 * attributes (any other attribute is the real runtime's answer), and the
 * device of a stream (fake_device.c keeps it in the stream's block). What
 * the cudart stub's launch check asks (specs/cudart/launch_check.c). Never
 * used with a GPU. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#define FAKE __attribute__((visibility("default")))

cudaError_t fake_fail(cudaError_t e); /* fake_device.c: and the thread's last error */
int fake_current_device(void);
int fake_ndev(void);

__attribute__((visibility("hidden"))) const int fake_grid_max[3] = {0x7fffffff, 65535, 65535};
__attribute__((visibility("hidden"))) const int fake_block_max[3] = {1024, 1024, 64};
#define grid_max_ fake_grid_max
#define block_max_ fake_block_max

FAKE cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    int v;
    switch (attr) {
    case cudaDevAttrMaxGridDimX: v = grid_max_[0]; break;
    case cudaDevAttrMaxGridDimY: v = grid_max_[1]; break;
    case cudaDevAttrMaxGridDimZ: v = grid_max_[2]; break;
    case cudaDevAttrMaxBlockDimX: v = block_max_[0]; break;
    case cudaDevAttrMaxBlockDimY: v = block_max_[1]; break;
    case cudaDevAttrMaxBlockDimZ: v = block_max_[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = 227 * 1024; break;
    default: { /* the others: the real runtime's answer */
        cudaError_t (*real)(int *, enum cudaDeviceAttr, int) =
            (cudaError_t (*)(int *, enum cudaDeviceAttr, int))dlsym(RTLD_NEXT,
                                                                   "cudaDeviceGetAttribute");
        return real ? real(value, attr, device) : fake_fail(cudaErrorNoDevice);
    }
    }
    if (!value) return fake_fail(cudaErrorInvalidValue);
    if (device < 0 || device >= fake_ndev()) return fake_fail(cudaErrorInvalidDevice);
    *value = v;
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamGetDevice(cudaStream_t stream, int *device)
{
    if (!device) return fake_fail(cudaErrorInvalidValue);
    *device = stream && stream != cudaStreamLegacy && stream != cudaStreamPerThread
                  ? *(const int *)(const void *)stream /* fake_device.c keeps it there */
                  : fake_current_device();
    return cudaSuccess;
}

