/* tests/gpu/exptab/integrity.c: on the GPU machine, apigen's integrity
 * answer (specs/cuda/export_tables.c) against the real driver's, for the
 * real driver's own table addresses, on the main thread and on another.
 * Also: what the real driver answers for an unknown UUID, and for the
 * tables apigen refuses. Linked with export_tables.c and the real
 * libcuda.so.1 (the cu* calls of export_tables.c go to the real driver)
 * and log.c.
 * Exit 0 when every comparison matches. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "export_tables.h"

typedef CUresult (*check_fn)(unsigned int, unsigned long long, unsigned char *);
static const void *const *cudart_, *const *integrity_;
static int mismatches_;

static void hex(const unsigned char *b, char *out)
{
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static CUuuid uuid_of(const char *h)
{
    CUuuid u;
    for (int i = 0; i < 16; i++) {
        unsigned b;
        sscanf(h + 2 * i, "%2x", &b);
        u.bytes[i] = (char)b;
    }
    return u;
}

/* Variants of the record, to say which input differs when the main one
 * does not match. */
static void variants(unsigned v, unsigned long long t, const unsigned char real[16])
{
    int driver = 0, count = 0;
    cuDriverGetVersion(&driver);
    cuDeviceGetCount(&count);
    unsigned char dev[8][28];
    for (int i = 0; i < count && i < 8; i++) {
        CUdevice d;
        CUuuid u;
        int a[3] = {0, 0, 0};
        cuDeviceGet(&d, i);
        cuDeviceGetUuid(&u, d);
        cuDeviceGetAttribute(&a[0], CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
        cuDeviceGetAttribute(&a[1], CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
        cuDeviceGetAttribute(&a[2], CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
        memcpy(dev[i], u.bytes, 16);
        memcpy(dev[i] + 16, a, 12);
    }
    struct {
        const char *what;
        unsigned tid;
        const void *t1, *t2;
        int devices;
    } var[] = {
        {"as implemented", (unsigned)(uintptr_t)pthread_self(), cudart_, integrity_, 1},
        {"tables swapped", (unsigned)syscall(SYS_gettid), integrity_, cudart_, 1},
        {"no devices", (unsigned)syscall(SYS_gettid), cudart_, integrity_, 0},
        {"thread id = pid", (unsigned)getpid(), cudart_, integrity_, 1},
        {"thread id = pthread_self", (unsigned)(uintptr_t)pthread_self(), cudart_, integrity_, 1},
    };
    for (size_t k = 0; k < sizeof var / sizeof var[0]; k++) {
        unsigned char msg[48 + 8 * 28], out[16];
        unsigned pid = (unsigned)getpid();
        uint64_t a1 = (uintptr_t)var[k].t1, a2 = (uintptr_t)var[k].t2,
                 a3 = (uintptr_t)integrity_[1];
        memcpy(msg, &driver, 4);
        memcpy(msg + 4, &v, 4);
        memcpy(msg + 8, &pid, 4);
        memcpy(msg + 12, &var[k].tid, 4);
        memcpy(msg + 16, &a1, 8);
        memcpy(msg + 24, &a2, 8);
        memcpy(msg + 32, &a3, 8);
        memcpy(msg + 40, &t, 8);
        size_t n = 48;
        for (int i = 0; var[k].devices && i < count && i < 8; i++, n += 28)
            memcpy(msg + n, dev[i], 28);
        apigen_cuda_integrity_hmac(msg, n, out);
        printf("  variant %-26s %s\n", var[k].what, memcmp(out, real, 16) == 0 ? "MATCH" : "differs");
    }
}

static void compare(const char *where)
{
    for (unsigned v = 13000; v <= 13002; v++) {
        unsigned long long t = (unsigned long long)time(NULL);
        unsigned char real[16], mine[16];
        char hr[33], hm[33];
        CUresult er = ((check_fn)integrity_[1])(v, t, real);
        CUresult em = apigen_cuda_integrity_answer(v, t, cudart_, integrity_, integrity_[1], mine);
        hex(real, hr);
        hex(mine, hm);
        int same = er == CUDA_SUCCESS && em == CUDA_SUCCESS && memcmp(real, mine, 16) == 0;
        printf("integrity %s version %u time %llu: real %s (%d) apigen %s (%d): %s\n", where, v, t,
               hr, (int)er, hm, (int)em, same ? "MATCH" : "MISMATCH");
        if (!same) {
            mismatches_++;
            if (v % 10 >= 2) variants(v, t, real);
        }
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    compare("other-thread");
    return NULL;
}

int main(void)
{
    CUresult e = cuInit(0);
    if (e != CUDA_SUCCESS) {
        printf("cuInit: %d: no driver or GPU\n", (int)e);
        return 77;
    }
    CUuuid u1 = uuid_of("6bd5fb6c5bf4e74a8987d93912fd9df9");
    CUuuid u2 = uuid_of("d4082055bde6704b8d34ba123c66e1f2");
    const void *p1 = NULL, *p2 = NULL;
    if (cuGetExportTable(&p1, &u1) != CUDA_SUCCESS || cuGetExportTable(&p2, &u2) != CUDA_SUCCESS) {
        printf("the real driver has no CUDART_INTERFACE or INTEGRITY_CHECK table\n");
        return 1;
    }
    cudart_ = p1;
    integrity_ = p2;
    int count = 0;
    cuDeviceGetCount(&count);
    for (int i = 0; i < count; i++) {
        CUdevice d;
        CUuuid u;
        int a[3] = {0, 0, 0};
        char h[33];
        cuDeviceGet(&d, i);
        cuDeviceGetUuid(&u, d);
        cuDeviceGetAttribute(&a[0], CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
        cuDeviceGetAttribute(&a[1], CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
        cuDeviceGetAttribute(&a[2], CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
        hex((const unsigned char *)u.bytes, h);
        printf("device %d uuid %s pci %04x:%02x:%02x\n", i, h, a[0], a[1], a[2]);
    }
    compare("main-thread");
    pthread_t th;
    pthread_create(&th, NULL, thread_main, NULL);
    pthread_join(th, NULL);

    /* What the real driver answers where apigen refuses or does not know. */
    static const char *const asks[][2] = {
        {"00112233445566778899aabbccddeeff", "unknown"},
        {"f8cff95121468b4eb9e2fb469e7c0dd9", "f8cff951 (apigen: NOT_FOUND)"},
        {"69a28e9f24498b47b030c5da330ea4e9", "69a28e9f (apigen: NOT_FOUND)"},
    };
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        CUuuid u = uuid_of(asks[i][0]);
        const void *p = (const void *)&u;
        CUresult r = cuGetExportTable(&p, &u);
        printf("real cuGetExportTable %s: status %d, table %s\n", asks[i][1], (int)r,
               p == (const void *)&u ? "untouched" : p ? "set" : "NULL");
    }
    printf("integrity: %s\n", mismatches_ ? "MISMATCH" : "all MATCH");
    return mismatches_ ? 1 : 0;
}
