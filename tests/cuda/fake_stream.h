/* A stand-in stream (tests/cuda/fake_device.c makes them): a block of its
 * own holding what the stand-ins know of it. `device` comes first:
 * fake_device_limits.c and fake_launch_limits.c read it as the block's first
 * int. The default streams have no block. Never used with a GPU. */
#ifndef FAKE_STREAM_H
#define FAKE_STREAM_H

#include <cuda_runtime_api.h>

typedef struct fake_stream {
    int device;
    unsigned flags;
    int priority;                         /* fake_pools.c */
    struct cudaAccessPolicyWindow window; /* fake_pools.c */
} fake_stream;

#endif
