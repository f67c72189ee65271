/* Shared by the OpenCL examples: error checking and the first device. Every
 * line an example prints must be the same natively and forwarded (no
 * pointers, handle values or timings). */
#ifndef OCL_COMMON_H
#define OCL_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cl_int err_ = (call);                                                          \
        if (err_ != CL_SUCCESS) {                                                      \
            printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)err_);          \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static inline void first_device(cl_platform_id *p, cl_device_id *d)
{
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(1, p, &n));
    CHECK(clGetDeviceIDs(*p, CL_DEVICE_TYPE_ALL, 1, d, NULL));
}

static inline cl_program build(cl_context ctx, cl_device_id dev, const char *src)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = malloc(n + 1);
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        printf("build failed: %d\n%s\n", (int)err, log);
        exit(1);
    }
    return prog;
}

/* Waits (up to 10 s) until *flag is set by a callback delivered from the server. */
static inline int wait_flag(volatile int *flag)
{
    for (int i = 0; i < 10000 && !*flag; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return *flag;
}
#endif
