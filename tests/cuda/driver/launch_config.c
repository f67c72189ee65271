/* cuda.driver.launch_config: which launch configurations the driver stub
 * queues async (it vouches for them) and which it sends synchronously so
 * the driver's refusal is the launch's own error (specs/cuda/launch_limits.h),
 * against the limits an H100 answers (cuDeviceGetAttribute, cuFuncGetAttribute). */
#include <stdio.h>

#include "launch_limits.h"

static int fails;
#define EXPECT(what, got, want)                                                                  \
    do {                                                                                         \
        int g_ = (got);                                                                          \
        printf("%-58s %s\n", what, g_ ? "async" : "sync");                                      \
        if (g_ != (want)) {                                                                      \
            printf("  FAIL: expected %s\n", (want) ? "async (vouched)" : "sync (not vouched)");  \
            fails++;                                                                             \
        }                                                                                        \
    } while (0)

int main(void)
{
    /* an H100: blocks up to 1024 x 1024 x 64, grids up to 2^31-1 x 65535 x 65535; a
     * function that takes 1024 threads and 48 KiB of dynamic shared memory */
    struct apigen_cuda_limits h100 = {{1024, 1024, 64}, {2147483647u, 65535, 65535}, 1024, 49152};
    /* the same device, a function whose registers allow 640 threads, no opt-in */
    struct apigen_cuda_limits regs = h100;
    regs.func_threads = 640;
    regs.func_dyn_shmem = 16384;

    EXPECT("vector_add <<<4096, 256>>>", apigen_cuda_config_vouched(&h100, 4096, 1, 1, 256, 1, 1, 0), 1);
    EXPECT("vector_add's bad launch <<<1, 4096>>>", apigen_cuda_config_vouched(&h100, 1, 1, 1, 4096, 1, 1, 0), 0);
    EXPECT("block 1024 x 1 x 1", apigen_cuda_config_vouched(&h100, 1, 1, 1, 1024, 1, 1, 0), 1);
    EXPECT("block 32 x 32 x 2 (2048 threads)", apigen_cuda_config_vouched(&h100, 1, 1, 1, 32, 32, 2, 0), 0);
    EXPECT("block 1 x 1 x 65 (z past 64)", apigen_cuda_config_vouched(&h100, 1, 1, 1, 1, 1, 65, 0), 0);
    EXPECT("block 0 x 1 x 1", apigen_cuda_config_vouched(&h100, 1, 1, 1, 0, 1, 1, 0), 0);
    EXPECT("grid 0 x 1 x 1", apigen_cuda_config_vouched(&h100, 0, 1, 1, 32, 1, 1, 0), 0);
    EXPECT("grid 2^31-1 x 65535 x 65535", apigen_cuda_config_vouched(&h100, 2147483647u, 65535, 65535, 32, 1, 1, 0), 1);
    EXPECT("grid 2^31 x 1 x 1", apigen_cuda_config_vouched(&h100, 2147483648u, 1, 1, 32, 1, 1, 0), 0);
    EXPECT("grid 1 x 65536 x 1", apigen_cuda_config_vouched(&h100, 1, 65536, 1, 32, 1, 1, 0), 0);
    EXPECT("dynamic shared memory 48 KiB", apigen_cuda_config_vouched(&h100, 1, 1, 1, 32, 1, 1, 49152), 1);
    EXPECT("dynamic shared memory 48 KiB + 1", apigen_cuda_config_vouched(&h100, 1, 1, 1, 32, 1, 1, 49153), 0);
    EXPECT("register-heavy function, block 640", apigen_cuda_config_vouched(&regs, 1, 1, 1, 640, 1, 1, 0), 1);
    EXPECT("register-heavy function, block 1024 (out of resources)", apigen_cuda_config_vouched(&regs, 1, 1, 1, 1024, 1, 1, 0), 0);
    EXPECT("register-heavy function, 16 KiB + 4 shared", apigen_cuda_config_vouched(&regs, 1, 1, 1, 32, 1, 1, 16388), 0);
    printf("%s\n", fails ? "FAILED" : "PASSED");
    return fails != 0;
}
