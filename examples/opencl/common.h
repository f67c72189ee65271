/* Shared by the OpenCL examples: error checking and the first device. Every
 * line an example prints must be the same natively and forwarded (no
 * pointers, handle values or timings). */
#ifndef OCL_COMMON_H
#define OCL_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <CL/cl_ext.h>
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

/* The first platform, or with OCL_PLATFORM set the first whose name or ICD
 * suffix (CL_PLATFORM_ICD_SUFFIX_KHR: "APIGEN" for apigen's ICD driver,
 * "POCL" for PoCL) contains it: under an ICD loader with several drivers.
 * OCL_PLATFORM_INDEX=i takes the i-th platform (several apigen servers). */
static inline void first_device(cl_platform_id *p, cl_device_id *d)
{
    cl_uint n = 0;
    const char *want = getenv("OCL_PLATFORM");
    const char *index = getenv("OCL_PLATFORM_INDEX");
    if (index && *index) {
        cl_platform_id all[16];
        cl_uint i = (cl_uint)atoi(index);
        CHECK(clGetPlatformIDs(16, all, &n));
        if (i >= n || i >= 16) {
            printf("no OpenCL platform %u (there are %u)\n", i, n);
            exit(1);
        }
        *p = all[i];
    } else if (!want || !*want) {
        CHECK(clGetPlatformIDs(1, p, &n));
    } else {
        cl_platform_id all[16];
        CHECK(clGetPlatformIDs(16, all, &n));
        cl_uint i;
        for (i = 0; i < n && i < 16; i++) {
            char name[256] = "", suffix[64] = "";
            clGetPlatformInfo(all[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
            clGetPlatformInfo(all[i], CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix, suffix, NULL);
            if (strstr(name, want) || strstr(suffix, want))
                break;
        }
        if (i == n || i == 16) {
            printf("no OpenCL platform matches OCL_PLATFORM=%s\n", want);
            exit(1);
        }
        *p = all[i];
    }
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
