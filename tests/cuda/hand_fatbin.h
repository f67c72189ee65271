/* A fat binary by hand, for runtime-API test programs built without nvcc
 * (CI has none): the registration calls nvcc's generated code makes, and
 * an empty image the stand-in devices accept (tests/cuda/fake_*.c). A
 * program registers its kernels' host addresses (any function of its own)
 * between hand_fatbin_begin() and __cudaRegisterFatBinaryEnd. */
#ifndef HAND_FATBIN_H
#define HAND_FATBIN_H

#include <stdint.h>

#include <cuda_runtime_api.h>

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **h);
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);

static const struct {
    uint32_t magic;
    uint16_t version, header_size;
    uint64_t fat_size;
    uint64_t body[2];
} hand_fatbin_image_ = {0xBA55ED50u, 1, 16, 16, {0, 0}};
static struct {
    int magic, version;
    const void *data;
    void *filename;
} hand_fatbin_wrapper_ = {0x466243b1, 1, &hand_fatbin_image_, NULL};

static inline void **hand_fatbin_begin(void)
{
    return __cudaRegisterFatBinary(&hand_fatbin_wrapper_);
}

#endif
