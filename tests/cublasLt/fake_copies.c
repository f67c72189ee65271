/* The runtime calls of examples/cublasLt beyond tests/cuda/fake_device.c
 * (which has the copies and streams), on host memory standing in for the device: preloaded
 * with it into the example natively and into the family's server forwarded
 * (tests/cublasLt/diff.sh), CI has no GPU. Never used with a GPU. */
#include <cuda_runtime_api.h>

#define FAKE __attribute__((visibility("default")))

FAKE cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
