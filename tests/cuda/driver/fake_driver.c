/* A stand-in for a GPU and its driver, preloaded into apigen-server-cuda by
 * tests/cuda/driver_replay_ci.sh (LD_PRELOAD, the toolkit's stubs library as
 * libcuda.so.1 under it) on a machine without one: enough of the driver for
 * NVIDIA's static runtime (a program built with plain nvcc) to run
 * examples/cuda's vector_add, matmul, streams and boundary through the
 * driver stub, so that CI records such sessions and replays them
 * (docs/internals.md "Record and replay"). One device; device memory is the
 * server's own memory; the kernels it knows (those programs') run on the CPU
 * at launch, every stream in order at once. Everything else is the toolkit's
 * stubs library (CUDA_ERROR_STUB_LIBRARY). Never used with a GPU. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* both names of a versioned function, as the server calls them */
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fake_devmem.h"
#include "../fake_pattern_kernels.h"

#define FAKE __attribute__((visibility("default")))

struct CUctx_st { int dev; };
/* one_address: a module whose image says "(one address)" hands out every
 * function at one address, as the driver does when a module's function
 * takes the memory of an unloaded module's (function_reuse_ci.c) */
/* kernels: which of kernels_ the image names (its functions, as
 * cuModuleGetFunctionCount and cuModuleEnumerateFunctions list them) */
struct CUmod_st { int loaded; int one_address; unsigned kernels; };
struct CUlib_st { int loaded; };
/* a function and a kernel are one object: the driver takes a CUkernel
 * where a CUfunction is expected */
/* max_dyn: the dynamic shared memory the function may take, 0 = 48 KiB
 * (cuFuncSetAttribute's MAX_DYNAMIC_SHARED_SIZE_BYTES; occupancy reads it) */
struct CUfunc_st { const struct kernel *k; const struct fake_pattern_kernel *pk; int max_dyn; };
struct CUkern_st { const struct kernel *k; };

static struct CUctx_st primary_;
static _Thread_local CUcontext current_;
static int primary_refs_;

/* the kernels this device runs, each with its parameter layout (as
 * cuFuncGetParamInfo reports it) and a CPU body that reads the packed
 * parameter buffer */
typedef void (*kbody)(const unsigned char *params, unsigned long threads);
struct kernel {
    const char *name;
    unsigned nparams;
    size_t off[4], size[4];
    int shared; /* static shared memory, bytes */
    kbody run;
};

static void add_body(const unsigned char *p, unsigned long threads)
{
    const float *a, *b;
    float *c;
    int n;
    memcpy(&a, p, 8), memcpy(&b, p + 8, 8), memcpy(&c, p + 16, 8), memcpy(&n, p + 24, 4);
    for (unsigned long i = 0; i < threads && i < (unsigned long)(n > 0 ? n : 0); i++) c[i] = a[i] + b[i];
}

/* examples/cuda/matmul's matmul(A, B, C, n): C = A x B, n x n */
static void matmul_body(const unsigned char *p, unsigned long threads)
{
    const float *a, *b;
    float *c;
    int n;
    (void)threads;
    memcpy(&a, p, 8), memcpy(&b, p + 8, 8), memcpy(&c, p + 16, 8), memcpy(&n, p + 24, 4);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];
            c[i * n + j] = acc;
        }
}

/* examples/cuda/streams's scale(x, n, f): x = x * f + 1 */
static void scale_body(const unsigned char *p, unsigned long threads)
{
    float *x, f;
    int n;
    memcpy(&x, p, 8), memcpy(&n, p + 8, 4), memcpy(&f, p + 12, 4);
    for (unsigned long i = 0; i < threads && i < (unsigned long)(n > 0 ? n : 0); i++) x[i] = x[i] * f + 1.0f;
}

/* examples/cuda/boundary's add_one(p, n): p[i]++ */
static void add_one_body(const unsigned char *p, unsigned long threads)
{
    unsigned char *x;
    size_t n;
    memcpy(&x, p, 8), memcpy(&n, p + 8, 8);
    for (unsigned long i = 0; i < threads && i < n; i++) x[i]++;
}

static const struct kernel kernels_[] = {
    {"_Z3addPKfS0_Pfi", 4, {0, 8, 16, 24}, {8, 8, 8, 4}, 0, add_body},
    {"_Z6matmulPKfS0_Pfi", 4, {0, 8, 16, 24}, {8, 8, 8, 4}, 2 * 16 * 16 * 4, matmul_body},
    {"_Z5scalePfif", 3, {0, 8, 12}, {8, 4, 4}, 0, scale_body},
    {"_Z7add_onePhm", 2, {0, 8}, {8, 8}, 0, add_one_body},
};
#define NKERNELS (sizeof kernels_ / sizeof kernels_[0])
static struct CUfunc_st funcs_[NKERNELS];
/* bench/patterns.cu's kernels (fake_pattern_kernels.h) */
#define NPATTERNS (sizeof fake_pattern_kernels / sizeof fake_pattern_kernels[0])
static struct CUfunc_st pattern_funcs_[NPATTERNS];
/* a second context (cuCtxCreate), whose functions of a kernel are other
 * objects than the primary context's (cuKernelGetFunction) */
static struct CUctx_st second_;
static int second_alive_;
static struct CUfunc_st second_funcs_[NKERNELS], second_pattern_funcs_[NPATTERNS];

static const struct kernel *kernel_named(const char *name)
{
    for (size_t i = 0; i < NKERNELS; i++)
        if (name && strcmp(kernels_[i].name, name) == 0) return &kernels_[i];
    return NULL;
}

static int inited_;
#define NEED_INIT() do { if (!inited_) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

FAKE CUresult cuInit(unsigned int flags)
{
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    inited_ = 1;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDriverGetVersion(int *v)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDeviceGetCount(int *n)
{
    NEED_INIT();
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    NEED_INIT();
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    NEED_INIT();
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    strncpy(name, "apigen fake device", (size_t)len - 1);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    NEED_INIT();
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)1 << 30;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    NEED_INIT();
    if (!u) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    memset(u->bytes, 0x5a, sizeof u->bytes);
    return CUDA_SUCCESS;
}
FAKE CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { return cuDeviceGetUuid_v2(u, d); }

/* an sm_75-like device with a 1024-thread block limit */
static int attribute(CUdevice_attribute a)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1500000;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 4;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 16;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 7;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 5;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 256;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 5000000;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 4194304;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    default: return 0;
    }
}

FAKE CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    NEED_INIT();
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    *v = attribute(a);
    return CUDA_SUCCESS;
}

FAKE CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    NEED_INIT();
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    primary_refs_++;
    *c = &primary_;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    NEED_INIT();
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (primary_refs_ > 0) primary_refs_--;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDevicePrimaryCtxRelease(CUdevice d) { return cuDevicePrimaryCtxRelease_v2(d); }

FAKE CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    NEED_INIT();
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = primary_refs_ > 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned int flags)
{
    NEED_INIT();
    (void)flags;
    return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

FAKE CUresult cuCtxSetCurrent(CUcontext c)
{
    NEED_INIT();
    current_ = c;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetCurrent(CUcontext *c)
{
    NEED_INIT();
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    *c = current_;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetDevice(CUdevice *d)
{
    NEED_INIT();
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    *d = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext c)
{
    NEED_INIT();
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!c && !current_) return CUDA_ERROR_INVALID_CONTEXT;
    *d = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetId(CUcontext c, unsigned long long *id)
{
    NEED_INIT();
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    if (!c && !(c = current_)) return CUDA_ERROR_INVALID_CONTEXT;
    *id = 1; /* the primary context is the only one */
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxSynchronize_v2(CUcontext c)
{
    NEED_INIT();
    return c || current_ ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

FAKE CUresult cuCtxSynchronize(void)
{
    NEED_INIT();
    return current_ ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* device memory: the server's own, its address the device pointer; the
 * live allocations are kept so that pointer queries answer as a driver does
 * (the server's threads may ask at once: one lock) */
#define MAXALLOC 64
static struct { uintptr_t base; size_t size; CUcontext ctx; } allocs_[MAXALLOC];
static pthread_mutex_t alloc_lock_ = PTHREAD_MUTEX_INITIALIZER;

/* the allocation holding p: 0 with its base, size and context, -1 none */
static int alloc_in(CUdeviceptr p, uintptr_t *base, size_t *size, CUcontext *ctx)
{
    int found = -1;
    pthread_mutex_lock(&alloc_lock_);
    for (int i = 0; i < MAXALLOC && found < 0; i++)
        if (allocs_[i].base && p >= allocs_[i].base && p - allocs_[i].base < allocs_[i].size) {
            if (base) *base = allocs_[i].base;
            if (size) *size = allocs_[i].size;
            if (ctx) *ctx = allocs_[i].ctx;
            found = 0;
        }
    pthread_mutex_unlock(&alloc_lock_);
    return found;
}

static int alloc_of(CUdeviceptr p, uintptr_t *base, size_t *size)
{
    return alloc_in(p, base, size, NULL);
}

FAKE CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    NEED_INIT();
    if (!p || !n) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    /* device addresses no process of the tests uses for its own memory
     * (fake_devmem.h): a guest maps mapped pinned blocks at their twins'
     * addresses (runtime/twin_place.c), which a heap address of the server
     * (an AddressSanitizer process's allocator region) did not allow */
    static uintptr_t next_;
    pthread_mutex_lock(&alloc_lock_);
    void *m = fake_devmem_map(0x340000000000ull, &next_, n);
    pthread_mutex_unlock(&alloc_lock_);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&alloc_lock_);
    int slot = 0;
    while (slot < MAXALLOC && allocs_[slot].base) slot++;
    if (slot < MAXALLOC)
        allocs_[slot].base = (uintptr_t)m, allocs_[slot].size = n, allocs_[slot].ctx = current_;
    pthread_mutex_unlock(&alloc_lock_);
    if (slot == MAXALLOC) {
        fake_devmem_unmap(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemFree_v2(CUdeviceptr p)
{
    NEED_INIT();
    if (!p) return CUDA_SUCCESS;
    int slot = -1;
    pthread_mutex_lock(&alloc_lock_);
    for (int i = 0; i < MAXALLOC && slot < 0; i++)
        if (allocs_[i].base == p) slot = i;
    if (slot >= 0) allocs_[slot].base = 0;
    pthread_mutex_unlock(&alloc_lock_);
    if (slot < 0) return CUDA_ERROR_INVALID_VALUE; /* not an allocation's start */
    fake_devmem_unmap((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    NEED_INIT();
    uintptr_t b;
    size_t n;
    if (alloc_of(p, &b, &n) < 0) return CUDA_ERROR_NOT_FOUND;
    if (base) *base = b;
    if (size) *size = n;
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    NEED_INIT();
    if (n) memcpy((void *)(uintptr_t)dst, src, n);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    NEED_INIT();
    if (n) memcpy(dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    NEED_INIT();
    if (n) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}

/* ---- virtual memory management: allocations are memfds, mapped shared
 * into reserved ranges, so that a POSIX-fd export imported by another
 * process (driver/shareable_ci.c) maps the same bytes, as on a GPU ---- */
#define VMM_GRANULE 65536
struct vmm_alloc { int fd; size_t size; };

FAKE CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                            CUmemAllocationGranularity_flags option)
{
    NEED_INIT();
    (void)option;
    if (!g || !prop) return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop->location.id != 0)
        return CUDA_ERROR_INVALID_DEVICE; /* one device */
    *g = VMM_GRANULE;
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                          unsigned long long flags)
{
    NEED_INIT();
    if (!h || !prop || flags || !size || size % VMM_GRANULE || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct vmm_alloc *a = malloc(sizeof *a);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    a->fd = memfd_create("fake-vmm", MFD_CLOEXEC);
    a->size = size;
    if (a->fd < 0 || ftruncate(a->fd, (off_t)size) != 0) {
        if (a->fd >= 0) close(a->fd);
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *h = (CUmemGenericAllocationHandle)(uintptr_t)a;
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    NEED_INIT();
    struct vmm_alloc *a = (struct vmm_alloc *)(uintptr_t)h;
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    close(a->fd); /* mappings keep the bytes */
    free(a);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                  unsigned long long flags)
{
    NEED_INIT();
    (void)alignment, (void)addr;
    if (!ptr || !size || size % VMM_GRANULE || flags) return CUDA_ERROR_INVALID_VALUE;
    void *m = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    *ptr = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    NEED_INIT();
    return munmap((void *)(uintptr_t)ptr, size) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                       unsigned long long flags)
{
    NEED_INIT();
    struct vmm_alloc *a = (struct vmm_alloc *)(uintptr_t)h;
    if (!a || flags || offset + size > a->size) return CUDA_ERROR_INVALID_VALUE;
    void *m = mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a->fd,
                   (off_t)offset);
    return m == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

FAKE CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    NEED_INIT();
    void *m = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                   -1, 0);
    return m == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

FAKE CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    NEED_INIT();
    (void)ptr, (void)size;
    return desc && count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                           CUmemAllocationHandleType type, unsigned long long flags)
{
    NEED_INIT();
    struct vmm_alloc *a = (struct vmm_alloc *)(uintptr_t)h;
    if (!out || !a || flags) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    int fd = dup(a->fd);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(out, &fd, sizeof fd);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                             CUmemAllocationHandleType type)
{
    NEED_INIT();
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    struct stat st;
    int fd = dup((int)(intptr_t)os);
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
        if (fd >= 0) close(fd);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct vmm_alloc *a = malloc(sizeof *a);
    if (!a) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->fd = fd, a->size = (size_t)st.st_size;
    *h = (CUmemGenericAllocationHandle)(uintptr_t)a;
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemGetInfo_v2(size_t *free_, size_t *total)
{
    NEED_INIT();
    if (!free_ || !total) return CUDA_ERROR_INVALID_VALUE;
    *free_ = *total = (size_t)1 << 30;
    return CUDA_SUCCESS;
}

FAKE CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetLimit(size_t *v, CUlimit limit)
{
    NEED_INIT();
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE: *v = 1024; break;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *v = 1 << 20; break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *v = 8 << 20; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetFlags(unsigned int *flags)
{
    NEED_INIT();
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    NEED_INIT();
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}

/* images: any image loads; functions are looked up by name in kernels_
 * (shared by every library: a kernel handle is refused by
 * cuKernelSetAttribute only while no library is loaded) */
static int libraries_loaded_;

FAKE CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                                unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo, (void)jv, (void)njo, (void)lo, (void)lv, (void)nlo;
    NEED_INIT();
    if (!lib || !code) return CUDA_ERROR_INVALID_VALUE;
    *lib = calloc(1, sizeof **lib);
    if (*lib) __atomic_add_fetch(&libraries_loaded_, 1, __ATOMIC_SEQ_CST);
    return *lib ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE CUresult cuLibraryUnload(CUlibrary lib)
{
    NEED_INIT();
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;
    __atomic_sub_fetch(&libraries_loaded_, 1, __ATOMIC_SEQ_CST);
    free(lib);
    return CUDA_SUCCESS;
}

static CUresult find(struct CUfunc_st **out, const char *name)
{
    const struct kernel *k = kernel_named(name);
    const struct fake_pattern_kernel *pk = fake_pattern_kernel_named(name);
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!k && pk) {
        *out = &pattern_funcs_[pk - fake_pattern_kernels];
        (*out)->pk = pk;
        return CUDA_SUCCESS;
    }
    if (!k) return CUDA_ERROR_NOT_FOUND;
    *out = &funcs_[k - kernels_];
    (*out)->k = k;
    return CUDA_SUCCESS;
}

FAKE CUresult cuLibraryGetKernel(CUkernel *kern, CUlibrary lib, const char *name)
{
    NEED_INIT();
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;
    return find((struct CUfunc_st **)kern, name);
}

FAKE CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    NEED_INIT();
    if (!mod || !image) return CUDA_ERROR_INVALID_VALUE;
    *mod = calloc(1, sizeof **mod);
    if (!*mod) return CUDA_ERROR_OUT_OF_MEMORY;
    (*mod)->one_address = strstr((const char *)image, "(one address)") != NULL;
    for (size_t i = 0; i < NKERNELS; i++)
        if (strstr((const char *)image, kernels_[i].name)) (*mod)->kernels |= 1u << i;
    return CUDA_SUCCESS;
}

FAKE CUresult cuModuleGetFunctionCount(unsigned int *n, CUmodule mod)
{
    NEED_INIT();
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = (unsigned)__builtin_popcount(mod->kernels);
    return CUDA_SUCCESS;
}

FAKE CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned int n, CUmodule mod)
{
    NEED_INIT();
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    if (!fs || n != (unsigned)__builtin_popcount(mod->kernels)) return CUDA_ERROR_INVALID_VALUE;
    unsigned j = 0;
    for (size_t i = 0; i < NKERNELS; i++)
        if (mod->kernels & (1u << i)) {
            funcs_[i].k = &kernels_[i];
            fs[j++] = &funcs_[i];
        }
    return CUDA_SUCCESS;
}

FAKE CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n,
                                 CUjit_option *o, void **v)
{
    (void)n, (void)o, (void)v;
    return cuModuleLoadData(mod, image);
}

FAKE CUresult cuModuleUnload(CUmodule mod)
{
    NEED_INIT();
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    free(mod);
    /* a function loaded again is a new one at the same address (as the
     * driver reuses a freed function's): its attributes start anew */
    for (size_t i = 0; i < sizeof funcs_ / sizeof funcs_[0]; i++) funcs_[i].max_dyn = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
    NEED_INIT();
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    CUresult e = find(f, name);
    if (e != CUDA_SUCCESS || !mod->one_address) return e;
    static struct CUfunc_st one;
    one = (struct CUfunc_st){(*f)->k, (*f)->pk, 0};
    *f = &one;
    return CUDA_SUCCESS;
}

FAKE CUresult cuKernelGetFunction(CUfunction *f, CUkernel kern)
{
    NEED_INIT();
    if (!f || !kern) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    struct CUfunc_st *k = (struct CUfunc_st *)kern, *g = k;
    if (current_ == &second_) { /* the kernel's function in the second context */
        g = k->pk ? &second_pattern_funcs_[k - pattern_funcs_] : &second_funcs_[k - funcs_];
        g->k = k->k;
        g->pk = k->pk;
    }
    *f = g;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p, unsigned int flags, CUdevice d)
{
    (void)p, (void)flags;
    NEED_INIT();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (second_alive_) return CUDA_ERROR_OUT_OF_MEMORY; /* one besides the primary */
    second_alive_ = 1;
    current_ = *pctx = &second_;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxDestroy_v2(CUcontext c)
{
    NEED_INIT();
    if (c != &second_ || !second_alive_) return CUDA_ERROR_INVALID_CONTEXT;
    second_alive_ = 0;
    if (current_ == c) current_ = NULL;
    pthread_mutex_lock(&alloc_lock_); /* its allocations go with it */
    for (int i = 0; i < MAXALLOC; i++)
        if (allocs_[i].base && allocs_[i].ctx == c) {
            fake_devmem_unmap((void *)allocs_[i].base);
            allocs_[i].base = 0;
        }
    pthread_mutex_unlock(&alloc_lock_);
    return CUDA_SUCCESS;
}

static CUresult name_of(const char **s, const void *f)
{
    NEED_INIT();
    if (!s || !f) return CUDA_ERROR_INVALID_VALUE;
    const struct CUfunc_st *fn = f;
    *s = fn->k ? fn->k->name : fn->pk->name;
    return CUDA_SUCCESS;
}
FAKE CUresult cuFuncGetName(const char **s, CUfunction f) { return name_of(s, f); }
FAKE CUresult cuKernelGetName(const char **s, CUkernel k) { return name_of(s, k); }

static CUresult param_info(const void *f, size_t i, size_t *off, size_t *size)
{
    NEED_INIT();
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    const struct kernel *k = ((const struct CUfunc_st *)f)->k;
    const struct fake_pattern_kernel *pk = ((const struct CUfunc_st *)f)->pk;
    if (i >= (k ? k->nparams : pk->nparams)) return CUDA_ERROR_INVALID_VALUE;
    if (off) *off = k ? k->off[i] : pk->off[i];
    if (size) *size = k ? k->size[i] : pk->size[i];
    return CUDA_SUCCESS;
}
FAKE CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    return param_info(f, i, off, size);
}
FAKE CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
    return param_info(k, i, off, size);
}

static int func_attribute(CUfunction_attribute a, const void *f)
{
    switch (a) {
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: {
        const struct kernel *k = ((const struct CUfunc_st *)f)->k;
        return k ? k->shared : 4096;
    }
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: return 16;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return 75;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
        int m = ((const struct CUfunc_st *)f)->max_dyn;
        return m ? m : 49152;
    }
    default: return 0;
    }
}
FAKE CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    NEED_INIT();
    if (!v || !f) return CUDA_ERROR_INVALID_VALUE;
    *v = func_attribute(a, f);
    return CUDA_SUCCESS;
}
FAKE CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
    NEED_INIT();
    if (!v || !k) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    *v = func_attribute(a, k);
    return CUDA_SUCCESS;
}

/* a launch runs the kernel's body at once (every stream is synchronous
 * here); the parameters come packed, as the server passes them */
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, void **kernelParams, void **extra)
{
    NEED_INIT();
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz) return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned long)bx * by * bz > 1024) return CUDA_ERROR_INVALID_VALUE;
    const struct kernel *k = f->k;
    /* a refusal no limit a caller can ask tells: static and dynamic shared
     * memory together over 48 KiB without an opt-in (cuFuncSetAttribute) */
    if (k && !f->max_dyn && (size_t)k->shared + shmem > 49152) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    const struct fake_pattern_kernel *pk = f->pk;
    unsigned nparams = k ? k->nparams : pk->nparams;
    size_t last_off = k ? k->off[nparams - 1] : pk->off[nparams - 1];
    size_t last_size = k ? k->size[nparams - 1] : pk->size[nparams - 1];
    static _Thread_local unsigned char buf[4096];
    memset(buf, 0, sizeof buf);
    if (kernelParams) {
        for (unsigned i = 0; i < nparams; i++)
            memcpy(buf + (k ? k->off[i] : pk->off[i]), kernelParams[i], k ? k->size[i] : pk->size[i]);
    } else {
        const void *packed = NULL;
        size_t size = 0;
        for (void **e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER) packed = e[1];
            else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t *)e[1];
            else return CUDA_ERROR_INVALID_VALUE;
        }
        /* as the real driver: a buffer shorter than the parameters is
           taken (the rest is undefined there, zero here) */
        if ((!packed && size) || size > sizeof buf || last_off + last_size > sizeof buf)
            return CUDA_ERROR_INVALID_VALUE;
        if (size) memcpy(buf, packed, size);
    }
    if (pk) {
        void *args[16];
        CUdeviceptr first_ptr;
        memcpy(&first_ptr, buf, sizeof first_ptr);
        /* the first parameter is a pointer the kernel reaches (spin: its time, never 0):
         * NULL is the device's illegal address (the launch's own error here,
         * the next call's once a stub queued the launch) */
        if (!first_ptr) return CUDA_ERROR_ILLEGAL_ADDRESS;
        for (unsigned i = 0; i < nparams; i++) args[i] = buf + pk->off[i];
        pk->run(args, (unsigned long)gx * gy * gz, (unsigned long)bx * by * bz);
        return CUDA_SUCCESS;
    }
    k->run(buf, (unsigned long)gx * gy * gz * bx * by * bz);
    return CUDA_SUCCESS;
}

static bool capture_gone(CUstream s); /* below */

FAKE CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                             void **extra)
{
    if (capture_gone(s)) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return launch(f, gx, gy, gz, bx, by, bz, shmem, params, extra);
}

FAKE CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, params, extra);
}

static CUresult capture_sync(CUstream s); /* below */

FAKE CUresult cuStreamSynchronize(CUstream s)
{
    NEED_INIT();
    return capture_sync(s);
}

FAKE CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    NEED_INIT();
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t base;
    size_t size;
    CUcontext ctx;
    if (alloc_in(p, &base, &size, &ctx) < 0)
        return CUDA_ERROR_INVALID_VALUE; /* not device memory: as the driver answers */
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = ctx; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = CU_MEMORYTYPE_DEVICE; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = 0; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = base; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = size; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = 0; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return CUDA_ERROR_INVALID_VALUE; /* cuda.h: none */
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* streams and events: every operation completes before it returns */
struct CUevent_st { int recorded; };
struct CUstream_st { unsigned flags; int priority; };

FAKE CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int priority)
{
    NEED_INIT();
    if (!s || (flags & ~1u)) return CUDA_ERROR_INVALID_VALUE;
    *s = calloc(1, sizeof **s);
    if (!*s) return CUDA_ERROR_OUT_OF_MEMORY;
    (*s)->flags = flags;
    (*s)->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
    return CUDA_SUCCESS;
}

FAKE CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    return cuStreamCreateWithPriority(s, flags, 0);
}

/* the legacy stream (NULL) and the per-thread one are blocking */
FAKE CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
    NEED_INIT();
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = (uintptr_t)s > 2 ? s->flags : 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    (void)s;
    NEED_INIT();
    if (!e || flags > 1) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

FAKE CUresult cuStreamDestroy_v2(CUstream s)
{
    NEED_INIT();
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    free(s);
    return CUDA_SUCCESS;
}

FAKE CUresult cuStreamQuery(CUstream s)
{
    (void)s;
    NEED_INIT();
    return CUDA_SUCCESS;
}

/* one capture at a time (global mode): its stream says ACTIVE, the legacy
 * stream may not be asked meanwhile (as the driver answers); synchronizing
 * the capturing stream is refused and invalidates the capture, whose end
 * then says so and gives a NULL graph */
static CUstream capturing_;
static bool capture_invalid_;
static pthread_mutex_t capture_lock_ = PTHREAD_MUTEX_INITIALIZER;

static CUresult capture_sync(CUstream s)
{
    pthread_mutex_lock(&capture_lock_);
    bool refused = s && s == capturing_;
    if (refused)
        capture_invalid_ = true;
    pthread_mutex_unlock(&capture_lock_);
    return refused ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* work on the stream of a capture that was invalidated: refused, as the
 * driver refuses every call of the capture until its end */
static bool capture_gone(CUstream s)
{
    pthread_mutex_lock(&capture_lock_);
    bool gone = s && s == capturing_ && capture_invalid_;
    pthread_mutex_unlock(&capture_lock_);
    return gone;
}

FAKE CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    (void)mode;
    NEED_INIT();
    if ((uintptr_t)s <= 2) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&capture_lock_);
    CUresult e = capturing_ ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
    if (!capturing_) capturing_ = s;
    pthread_mutex_unlock(&capture_lock_);
    return e;
}

FAKE CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    NEED_INIT();
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&capture_lock_);
    CUresult e = s && s == capturing_ ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
    if (e == CUDA_SUCCESS) {
        capturing_ = NULL;
        if (capture_invalid_)
            e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, *g = NULL;
        capture_invalid_ = false;
    }
    pthread_mutex_unlock(&capture_lock_);
    if (e == CUDA_SUCCESS && !(*g = calloc(1, 16))) e = CUDA_ERROR_OUT_OF_MEMORY;
    return e;
}

FAKE CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *cs)
{
    NEED_INIT();
    if (!cs) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&capture_lock_);
    CUstream open = capturing_;
    pthread_mutex_unlock(&capture_lock_);
    if (open && (s == NULL || s == CU_STREAM_LEGACY)) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    *cs = open && s == open ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

FAKE CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void)flags;
    NEED_INIT();
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    *e = calloc(1, sizeof **e);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE CUresult cuEventDestroy_v2(CUevent e)
{
    NEED_INIT();
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    free(e);
    return CUDA_SUCCESS;
}

FAKE CUresult cuEventRecord(CUevent e, CUstream s)
{
    (void)s;
    NEED_INIT();
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    e->recorded = 1;
    return CUDA_SUCCESS;
}

FAKE CUresult cuEventSynchronize(CUevent e)
{
    NEED_INIT();
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* every event completes when it is recorded: no time passes between two */
FAKE CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    NEED_INIT();
    if (!ms || !a || !b) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return CUDA_ERROR_NOT_READY;
    *ms = 0.0f;
    return CUDA_SUCCESS;
}
FAKE CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return cuEventElapsedTime_v2(ms, a, b); }

FAKE CUresult cuEventQuery(CUevent e)
{
    NEED_INIT();
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* pinned host memory: plain memory here */
FAKE CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    (void)flags;
    NEED_INIT();
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    *p = malloc(n ? n : 1);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE CUresult cuMemFreeHost(void *p)
{
    NEED_INIT();
    free(p);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyHtoD_v2(dst, src, n);
}

FAKE CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyDtoH_v2(dst, src, n);
}

FAKE CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpy(dst, src, n);
}

FAKE CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n)
{
    NEED_INIT();
    if (n) memset((void *)(uintptr_t)p, v, n);
    return CUDA_SUCCESS;
}

FAKE CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned int v, size_t n)
{
    NEED_INIT();
    for (size_t i = 0; i < n; i++) memcpy((unsigned char *)(uintptr_t)p + 4 * i, &v, 4);
    return CUDA_SUCCESS;
}

/* 2D copies between host and device memory (both are this process's) */
static const unsigned char *side_src(const CUDA_MEMCPY2D *c)
{
    const unsigned char *b = c->srcMemoryType == CU_MEMORYTYPE_HOST
                                 ? (const unsigned char *)c->srcHost
                                 : (const unsigned char *)(uintptr_t)c->srcDevice;
    return b ? b + c->srcY * c->srcPitch + c->srcXInBytes : NULL;
}

static unsigned char *side_dst(const CUDA_MEMCPY2D *c)
{
    unsigned char *b = c->dstMemoryType == CU_MEMORYTYPE_HOST ? (unsigned char *)c->dstHost
                                                               : (unsigned char *)(uintptr_t)c->dstDevice;
    return b ? b + c->dstY * c->dstPitch + c->dstXInBytes : NULL;
}

FAKE CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c)
{
    NEED_INIT();
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
        return CUDA_ERROR_NOT_SUPPORTED;
    const unsigned char *src = side_src(c);
    unsigned char *dst = side_dst(c);
    if (!src || !dst || c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t y = 0; y < c->Height; y++)
        memmove(dst + y * c->dstPitch, src + y * c->srcPitch, c->WidthInBytes);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *c) { return cuMemcpy2D_v2(c); }
FAKE CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s)
{
    (void)s;
    return cuMemcpy2D_v2(c);
}

/* occupancy: as many blocks as fit the threads of a multiprocessor; none
 * when the dynamic shared memory is more than the function may take */
FAKE CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t smem)
{
    NEED_INIT();
    if (!n || !f || block <= 0) return CUDA_ERROR_INVALID_VALUE;
    *n = smem > (size_t)(f->max_dyn ? f->max_dyn : 49152) ? 0 : 1024 / block > 16 ? 16 : 1024 / block;
    return CUDA_SUCCESS;
}
FAKE CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    NEED_INIT();
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
    if (v < 0 || v > 232448) return CUDA_ERROR_INVALID_VALUE; /* an H100's opt-in limit */
    f->max_dyn = v;
    return CUDA_SUCCESS;
}
/* a kernel's attribute is its function's in the primary context (the same
 * object here, as the driver shares it) */
FAKE CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
    NEED_INIT();
    if (!k || !__atomic_load_n(&libraries_loaded_, __ATOMIC_SEQ_CST)) return CUDA_ERROR_INVALID_HANDLE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    return cuFuncSetAttribute((CUfunction)k, a, v);
}
FAKE CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction f, int block,
                                                                  size_t smem, unsigned int flags)
{
    (void)flags;
    return cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem);
}

FAKE CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return cuMemcpy(dst, src, n);
}

FAKE CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpy(dst, src, n);
}

/* a set on the capturing stream becomes a node of the capture's graph,
 * which this stand-in never runs: it touches no memory (the driver takes
 * any address then: cuDNN records sets at placeholder addresses) */
static bool capture_records(CUstream s)
{
    pthread_mutex_lock(&capture_lock_);
    bool rec = s && s == capturing_ && !capture_invalid_;
    pthread_mutex_unlock(&capture_lock_);
    return rec;
}

FAKE CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
    if (capture_gone(s)) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (capture_records(s)) return CUDA_SUCCESS;
    return cuMemsetD8_v2(p, v, n);
}

FAKE CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
    if (capture_gone(s)) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (capture_records(s)) return CUDA_SUCCESS;
    return cuMemsetD32_v2(p, v, n);
}

/* bench/patterns.cu's variables ("coef", a 16 KiB __constant__ array;
 * "result", a 4 KiB __device__ array): one device allocation each, made at
 * the first lookup under a context, the same for every library and module
 * (the program loads one) */
static const struct { const char *name; size_t size; } globals_[] = {{"coef", 16384}, {"result", 4096}};
static CUdeviceptr global_mem_[2];

static void *fake_pattern_global(const char *name)
{
    for (size_t i = 0; i < 2; i++)
        if (strcmp(globals_[i].name, name) == 0) return (void *)(uintptr_t)global_mem_[i];
    return NULL;
}

static CUresult get_global(CUdeviceptr *p, size_t *n, const char *name)
{
    NEED_INIT();
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    for (size_t i = 0; i < 2; i++) {
        if (strcmp(globals_[i].name, name) != 0) continue;
        pthread_mutex_lock(&alloc_lock_);
        int have = global_mem_[i] != 0;
        pthread_mutex_unlock(&alloc_lock_);
        if (!have) {
            CUdeviceptr d;
            CUresult r = cuMemAlloc_v2(&d, globals_[i].size);
            if (r != CUDA_SUCCESS) return r;
            memset((void *)(uintptr_t)d, 0, globals_[i].size);
            global_mem_[i] = d;
        }
        if (p) *p = global_mem_[i];
        if (n) *n = globals_[i].size;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
}

FAKE CUresult cuLibraryGetGlobal(CUdeviceptr *p, size_t *n, CUlibrary lib, const char *name)
{
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(p, n, name);
}

FAKE CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *n, CUmodule mod, const char *name)
{
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(p, n, name);
}

/* page-locking changes nothing here: the arena's registration succeeds */
FAKE CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
    (void)flags;
    NEED_INIT();
    return p && n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE CUresult cuMemHostRegister(void *p, size_t n, unsigned int flags) { return cuMemHostRegister_v2(p, n, flags); }
FAKE CUresult cuMemHostUnregister(void *p)
{
    NEED_INIT();
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* cuda.h: "Unlike cuPointerGetAttribute, this function will not return an
 * error when the ptr encountered is not a valid CUDA pointer. Instead, the
 * attributes are assigned default NULL values and CUDA_SUCCESS is
 * returned." What the real driver does beyond (H200, driver 580,
 * tests/gpu/attr_probe.c): a NULL data slot fails the list before anything
 * is written; HOST_POINTER is the address itself for one it does not know,
 * NULL for device memory. */
FAKE CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attributes, void **data,
                                     CUdeviceptr p)
{
    NEED_INIT();
    if (n && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++)
        if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
    int known = alloc_of(p, NULL, NULL) == 0;
    for (unsigned i = 0; i < n; i++) {
        if (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
            CUdeviceptr h = known ? 0 : p;
            memcpy(data[i], &h, sizeof h);
            continue;
        }
        if (known) {
            CUresult e = cuPointerGetAttribute(data[i], attributes[i], p);
            if (e != CUDA_SUCCESS) return e;
            continue;
        }
        /* the real driver's defaults (H200, driver 580): ordinal -2, the
         * range size left as it was, the rest zero */
        switch (attributes[i]) {
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: break;
        case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            memset(data[i], 0, 8);
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: case CU_POINTER_ATTRIBUTE_IS_MANAGED:
            memset(data[i], 0, 4);
            break;
        default: return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    return CUDA_SUCCESS;
}
