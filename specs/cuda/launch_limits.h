/* Whether the guest can vouch for a launch configuration (launch_check.c):
 * a pure function of the limits the guest learned once from the server, so
 * tests/cuda/driver/launch_config.c checks it against a fake device's
 * answers. A configuration it cannot vouch for is launched synchronously:
 * the driver's own refusal (CUDA_ERROR_INVALID_VALUE for a block of more
 * threads than the device takes, LAUNCH_OUT_OF_RESOURCES for more than the
 * function's registers allow, ...) is then the launch's error, as natively. */
#ifndef APIGEN_CUDA_LAUNCH_LIMITS_H
#define APIGEN_CUDA_LAUNCH_LIMITS_H

#include <stdint.h>

struct apigen_cuda_limits {
    /* every device's (the smallest: a CUkernel may run on any of them) */
    uint32_t block[3], grid[3];
    /* the function's: CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (the device's
     * limit and the function's registers) and MAX_DYNAMIC_SHARED_SIZE_BYTES */
    uint32_t func_threads, func_dyn_shmem;
};

static inline int apigen_cuda_config_vouched(const struct apigen_cuda_limits *l, uint32_t gx,
                                             uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                                             uint32_t bz, uint32_t shmem)
{
    if (!gx || !gy || !gz || !bx || !by || !bz) return 0;
    if (gx > l->grid[0] || gy > l->grid[1] || gz > l->grid[2]) return 0;
    if (bx > l->block[0] || by > l->block[1] || bz > l->block[2]) return 0;
    if ((uint64_t)bx * by * bz > l->func_threads) return 0;
    return shmem <= l->func_dyn_shmem;
}

#endif
