/* Unit tests of specs/cuda/export_tables.c (the driver stub's private
 * tables) without a GPU: the file is linked with fake cu* functions (the
 * stub's forwarded ones in the real build) and a log that records lines.
 *
 * The integrity answers and table sizes are checked against what the real
 * driver gave in the phase-1 trace (H100, driver 580.159.04, CUDA 13.0;
 * /work/team/trace1, copied as docs/driver-trace-2026-11-25.txt). */
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_tables.h" /* first: every ABI form of cuda.h declared */
#include "apigen_cuda.h"
#include "apigen_rt.h"

static int failures_;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, \
                    #cond);                                                           \
            failures_++;                                                              \
        }                                                                             \
    } while (0)

/* ---- the log ---------------------------------------------------------------- */

static char log_[256][512];
static int nlog_;

void apigen_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (nlog_ < 256) vsnprintf(log_[nlog_++], sizeof log_[0], fmt, ap);
    va_end(ap);
}

/* ---- fake driver: one or two devices, a current context per thread ------------ */

static int ndev_ = 1;
static CUuuid uuid_[2];
static int pci_[2][3] = {{0, 0x19, 0}, {1, 0x2a, 3}};
static __thread CUcontext current_;
static int retains_, releases_, fatbin_loads_;
static const void *last_fatbin_;

CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n)
{
    *n = ndev_;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal < 0 || ordinal >= ndev_) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    if (d < 0 || d >= ndev_) return CUDA_ERROR_INVALID_DEVICE;
    *u = uuid_[d];
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d)
{
    if (d < 0 || d >= ndev_) return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = pci_[d][0]; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = pci_[d][1]; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = pci_[d][2]; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}
CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = current_;
    return CUDA_SUCCESS;
}
CUresult cuCtxGetId(CUcontext c, unsigned long long *id)
{
    if (!c) c = current_;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    *id = (unsigned long long)(uintptr_t)c * 10;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (d < 0 || d >= 2) return CUDA_ERROR_INVALID_DEVICE;
    retains_++;
    *c = (CUcontext)(uintptr_t)(0x1000 + d);
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    (void)d;
    releases_++;
    return CUDA_SUCCESS;
}
/* device 0's primary context is inactive, device 1's active */
CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    if (d < 0 || d >= 2) return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = d == 1;
    return CUDA_SUCCESS;
}
CUresult cuda_fwd_cuCtxGetId(CUcontext c, unsigned long long *id)
{
    return cuCtxGetId(c, id);
}
static unsigned long long burned_[4];
static int nburned_;
void apigen_cuda_ctx_id_burned(unsigned long long id)
{
    if (nburned_ < 4) burned_[nburned_++] = id;
}
/* apigen_tracing is inline (apigen_rt.h): it reads this (1: tracing off);
 * its external definition, for calls that are not inlined (-O0) */
int apigen_trace_state_ = 1;
extern inline bool apigen_tracing(void);
bool apigen_tracing_slow(void)
{
    return false;
}
void apigen_trace(const char *fmt, ...)
{
    (void)fmt;
}
CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fatbin)
{
    fatbin_loads_++;
    last_fatbin_ = fatbin;
    *m = (CUmodule)(uintptr_t)0x777;
    return CUDA_SUCCESS;
}

/* a module of three functions (cuFFT's [7] enumerates them) */
#define FAKE_MODULE ((CUmodule)(uintptr_t)0x4242)
static CUresult enumerate_error_;
CUresult cuModuleGetFunctionCount(unsigned int *n, CUmodule m)
{
    if (m != FAKE_MODULE) return CUDA_ERROR_INVALID_HANDLE;
    *n = 3;
    return CUDA_SUCCESS;
}
CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned int n, CUmodule m)
{
    if (m != FAKE_MODULE || n != 3) return CUDA_ERROR_INVALID_VALUE;
    if (enumerate_error_) return enumerate_error_;
    for (unsigned i = 0; i < n; i++) fs[i] = (CUfunction)(uintptr_t)(0x900 + i);
    return CUDA_SUCCESS;
}
/* the server's CONTEXT_IDENTITY [51] and [39] (host_private.c in the real
 * build): one object per context, its first byte 1; [39] answers 7 */
static int object_calls_;
CUresult apigenCudaContextObjectGet(CUcontext ctx, CUstream stream, apigenCudaContextObject *object,
                                    unsigned char *head, size_t headSize)
{
    object_calls_++;
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    memset(head, 0, headSize);
    head[0] = 1;
    *object = (apigenCudaContextObject)((uintptr_t)ctx + 0x50000 + (uintptr_t)stream * 0x100);
    return CUDA_SUCCESS;
}
CUresult apigenCudaContextObjectQuery(CUcontext ctx, apigenCudaContextObject object,
                                      unsigned long long *value)
{
    object_calls_++;
    if ((uintptr_t)object != (uintptr_t)ctx + 0x50000) return CUDA_ERROR_INVALID_HANDLE;
    *value = 7;
    return CUDA_SUCCESS;
}

/* ---- helpers -------------------------------------------------------------------- */

static CUuuid uuid_of(const char *hex)
{
    CUuuid u;
    for (int i = 0; i < 16; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        u.bytes[i] = (char)b;
    }
    return u;
}

static void unhex(const char *hex, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        out[i] = (unsigned char)b;
    }
}

static const void *const *table(const char *hex)
{
    const void *t = NULL;
    CUuuid u = uuid_of(hex);
    CHECK(apigen_cuda_export_table(&t, &u) == CUDA_SUCCESS);
    CHECK(t != NULL);
    return t;
}

#define UUID_CUDART "6bd5fb6c5bf4e74a8987d93912fd9df9"
#define UUID_HOOKS "a094798c2e742e7493f20800200c0a66"
#define UUID_TLS "42d85a8123f6cb478298f6e78a3aecdc"
#define UUID_CLS "c693336e1121df11a8c368f355d89593"
#define UUID_CHECKS "263e88607cd2614392f6bbd5006dfa7e"
#define UUID_INTEGRITY "d4082055bde6704b8d34ba123c66e1f2"

/* ---- MD2 and the HMAC ---------------------------------------------------------- */

static void test_md2_rfc1319(void)
{
    /* RFC 1319, appendix A.5 */
    static const struct {
        const char *msg, *digest;
    } v[] = {
        {"", "8350e5a3e24c153df2275c9f80692773"},
        {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
        {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
        {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
        {"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "da33def2a42df13975352846c30338cd"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "d5976f79d83d3a0dc9806c3c66f3efd8"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        unsigned char got[16], want[16];
        apigen_cuda_md2((const unsigned char *)v[i].msg, strlen(v[i].msg), got);
        unhex(v[i].digest, want, 16);
        CHECK(memcmp(got, want, 16) == 0);
    }
}

/* The HMAC is RFC 2104 over MD2: H((K^opad) || H((K^ipad) || m)). */
static void test_hmac_construction(void)
{
    static const unsigned char key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                          0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};
    unsigned char msg[76];
    for (size_t i = 0; i < sizeof msg; i++) msg[i] = (unsigned char)(i * 7 + 3);
    unsigned char buf[16 + sizeof msg], inner[16], want[16], got[16];
    for (int i = 0; i < 16; i++) buf[i] = key[i] ^ 0x36;
    memcpy(buf + 16, msg, sizeof msg);
    apigen_cuda_md2(buf, sizeof buf, inner);
    for (int i = 0; i < 16; i++) buf[i] = key[i] ^ 0x5c;
    memcpy(buf + 16, inner, 16);
    apigen_cuda_md2(buf, 32, want);
    apigen_cuda_integrity_hmac(msg, sizeof msg, got);
    CHECK(memcmp(got, want, 16) == 0);
}

/* ---- the integrity check against the trace --------------------------------------- */

/* Every traced case (vector_add, matmul static/shared, torch_basic,
 * torch_blas, torch_cudnn) called entry [1] with 13000, 13001, 13002 and
 * the time; the real driver answered the first two with these bytes. */
static void test_integrity_fixed_answers(void)
{
    static const struct {
        unsigned version;
        unsigned long long seconds;
        const char *answer;
    } v[] = {
        /* vector_add_static.log lines 1569-1576 */
        {0x32c8, 0x6b074560, "5c67cb031c184133e8d14c1faa83d38e"},
        {0x32c9, 0x6b074560, "5c67cb031c184118e8d14c1faa83d38e"},
        /* torch_blas.log lines 1569-1576 */
        {0x32c8, 0x6b0745a9, "5c67cb031c184133e8d14c1faa83d38e"},
        {0x32c9, 0x6b0745a9, "5c67cb031c184118e8d14c1faa83d38e"},
    };
    const void *const *t = table(UUID_INTEGRITY);
    CUresult (*check)(unsigned, unsigned long long, unsigned char *) =
        (CUresult(*)(unsigned, unsigned long long, unsigned char *))t[1];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        unsigned char got[16], want[16];
        unhex(v[i].answer, want, 16);
        CHECK(check(v[i].version, v[i].seconds, got) == CUDA_SUCCESS);
        CHECK(memcmp(got, want, 16) == 0);
    }
}

/* Version 13002 is hashed; the runtime computes the same with the addresses
 * cuGetExportTable handed it, so the entry must use exactly those, and the
 * answer must depend on every input (devices included). The real driver's
 * answers for 13002 (e.g. e1c63c72671008f382d634ff1c27f2ad in
 * vector_add_shared) need the GPU's UUID and PCI ids, which the trace does
 * not hold: tests/gpu/exptab-integrity.sh compares with the real driver. */
static unsigned char other_answer_[16];
static void *other_thread(void *arg)
{
    (void)arg;
    const void *const *t = table(UUID_INTEGRITY);
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074560, table(UUID_CUDART), t, t[1],
                                       other_answer_) == CUDA_SUCCESS);
    return NULL;
}

static void test_integrity_hash_inputs(void)
{
    const void *const *cudart = table(UUID_CUDART);
    const void *const *t = table(UUID_INTEGRITY);
    CUresult (*check)(unsigned, unsigned long long, unsigned char *) =
        (CUresult(*)(unsigned, unsigned long long, unsigned char *))t[1];
    uuid_[0] = uuid_of("0123456789abcdef0011223344556677");
    uuid_[1] = uuid_of("fedcba98765432100011223344556677");
    ndev_ = 1;
    unsigned char a[16], b[16];
    CHECK(check(13002, 0x6b074560, a) == CUDA_SUCCESS);
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074560, cudart, t, t[1], b) == CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) == 0);
    CHECK(memcmp(a, "\x5c\x67\xcb\x03", 4) != 0);
    /* each input changes the answer */
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074561, cudart, t, t[1], b) == CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) != 0);
    CHECK(apigen_cuda_integrity_answer(13012, 0x6b074560, cudart, t, t[1], b) == CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) != 0);
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074560, (const char *)cudart + 8, t, t[1], b) ==
          CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) != 0);
    pci_[0][1]++;
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074560, cudart, t, t[1], b) == CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) != 0);
    pci_[0][1]--;
    ndev_ = 2;
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074560, cudart, t, t[1], b) == CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) != 0);
    ndev_ = 1;
    /* the thread id is an input: another thread gets another answer */
    pthread_t th;
    CHECK(pthread_create(&th, NULL, other_thread, NULL) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(memcmp(a, other_answer_, 16) != 0);
    /* deterministic */
    CHECK(apigen_cuda_integrity_answer(13002, 0x6b074560, cudart, t, t[1], b) == CUDA_SUCCESS);
    CHECK(memcmp(a, b, 16) == 0);
}

/* ---- tables: shapes as the trace showed them -------------------------------------- */

static void test_table_shapes(void)
{
    static const struct {
        const char *uuid;
        uintptr_t bytes;
    } v[] = {
        {UUID_CUDART, 0x68}, {UUID_HOOKS, 0x38},     {UUID_TLS, 0x18},
        {UUID_CHECKS, 0x78}, {UUID_INTEGRITY, 0x18}, {"21318c60971432488ca641ff7324c8f2", 0x2e8},
        /* only their size is known (2026-11-29 traces): cuBLASLt's kernel names,
           the driver's compile cache, cuFFT's */
        {"1734dc26800d47458726c0f1e7dd8bca", 0x88}, {"da9151d33ae6cc41a5c04f26d533e328", 0x38},
        {"6e163fbeb958444d835ce182aff1991e", 0x318},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const void *const *t = table(v[i].uuid);
        CHECK((uintptr_t)t[0] == v[i].bytes);
        for (uintptr_t w = 1; w < v[i].bytes / sizeof(void *); w++) CHECK(t[w] != NULL);
    }
    /* context-local storage: no size word, three functions, then NULL */
    const void *const *cls = table(UUID_CLS);
    CHECK(cls[0] && cls[1] && cls[2] && !cls[3]);
    /* the same table every time */
    CHECK(table(UUID_CUDART) == table(UUID_CUDART));
}

/* ---- unknown and refused UUIDs ------------------------------------------------------- */

static void test_unknown_uuid(void)
{
    int before = nlog_;
    CUuuid u = uuid_of("00112233445566778899aabbccddeeff");
    const void *t = (const void *)&u;
    CHECK(apigen_cuda_export_table(&t, &u) == CUDA_ERROR_INVALID_VALUE);
    CHECK(t == NULL);
    CHECK(nlog_ == before + 1);
    CHECK(strstr(log_[before], "no table for 00112233-4455-6677-8899-aabbccddeeff") != NULL);
    CHECK(strstr(log_[before], "CUDA_ERROR_INVALID_VALUE") != NULL);
    /* asked again: no second line */
    CHECK(apigen_cuda_export_table(&t, &u) == CUDA_ERROR_INVALID_VALUE);
    CHECK(nlog_ == before + 1);
    /* bad arguments */
    CHECK(apigen_cuda_export_table(NULL, &u) == CUDA_ERROR_INVALID_VALUE);
    CHECK(apigen_cuda_export_table(&t, NULL) == CUDA_ERROR_INVALID_VALUE);
    /* the runtime's start-up table: refused without a line */
    CUuuid req = uuid_of("f8cff95121468b4eb9e2fb469e7c0dd9");
    t = &u;
    CHECK(apigen_cuda_export_table(&t, &req) == CUDA_ERROR_NOT_FOUND);
    CHECK(t == NULL);
    CHECK(nlog_ == before + 1);
    /* PyTorch's 69a28e9f: refused with one line naming it */
    CUuuid p = uuid_of("69a28e9f24498b47b030c5da330ea4e9");
    CHECK(apigen_cuda_export_table(&t, &p) == CUDA_ERROR_NOT_FOUND);
    CHECK(apigen_cuda_export_table(&t, &p) == CUDA_ERROR_NOT_FOUND);
    CHECK(nlog_ == before + 2);
    CHECK(strstr(log_[before + 1], "69a28e9f-2449-8b47-b030-c5da330ea4e9") != NULL);
}

/* An entry whose meaning is unknown: an error and one line naming it. */
static void test_unimplemented_entry(void)
{
    const void *const *t = table(UUID_CHECKS);
    CUresult (*fn)(void) = (CUresult(*)(void))t[5];
    int before = nlog_;
    CHECK(fn() == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(fn() == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(nlog_ == before + 1);
    CHECK(strstr(log_[before], "263e8860-7cd2-6143-92f6-bbd5006dfa7e") != NULL);
    CHECK(strstr(log_[before], "[5]") != NULL);
    const void *const *id = table("21318c60971432488ca641ff7324c8f2");
    CUresult (*fn92)(void) = (CUresult(*)(void))id[92];
    CHECK(fn92() == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(strstr(log_[before + 1], "[92]") != NULL);
    /* tables given so that a caller that does not check the status meets
       errors, not a NULL table (cuBLASLt then falls back to kernels it
       names in the clear): every entry the stub does not implement
       refuses, each logged by name */
    static const struct {
        const char *uuid, *text;
        unsigned implemented[4];
    } sized[] = {
        {"1734dc26800d47458726c0f1e7dd8bca", "1734dc26-800d-4745-8726-c0f1e7dd8bca", {0}},
        {"da9151d33ae6cc41a5c04f26d533e328", "da9151d3-3ae6-cc41-a5c0-4f26d533e328", {1, 2, 3, 4}},
        {"6e163fbeb958444d835ce182aff1991e", "6e163fbe-b958-444d-835c-e182aff1991e", {7}},
    };
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++) {
        const void *const *st = table(sized[i].uuid);
        /* every entry the size word announces (test_table_shapes checks the sizes) */
        for (unsigned w = 1; w < (uintptr_t)st[0] / sizeof(void *); w++) {
            int skip = 0;
            for (int j = 0; j < 4; j++) skip |= sized[i].implemented[j] == w;
            if (skip) continue;
            int n = nlog_;
            char slot[16];
            snprintf(slot, sizeof slot, "[%u]", w);
            CHECK(((CUresult(*)(void))st[w])() == CUDA_ERROR_NOT_SUPPORTED);
            CHECK(nlog_ == n + 1 && strstr(log_[n], sized[i].text) && strstr(log_[n], slot));
            CHECK(((CUresult(*)(void))st[w])() == CUDA_ERROR_NOT_SUPPORTED && nlog_ == n + 1);
        }
    }
}

/* ---- context-local storage ---------------------------------------------------------- */

static int dtor_calls_;
static CUcontext dtor_ctx_;
static void *dtor_key_, *dtor_value_;
static void dtor(CUcontext ctx, void *key, void *value)
{
    dtor_calls_++;
    dtor_ctx_ = ctx;
    dtor_key_ = key;
    dtor_value_ = value;
    /* the runtime may clean up through the table from its destructor */
    apigen_cuda_cls_delete(ctx, key);
}

static void test_context_local_storage(void)
{
    const void *const *t = table(UUID_CLS);
    CUresult (*put)(CUcontext, void *, void *, apigen_cuda_cls_dtor) =
        (CUresult(*)(CUcontext, void *, void *, apigen_cuda_cls_dtor))t[0];
    CUresult (*del)(CUcontext, void *) = (CUresult(*)(CUcontext, void *))t[1];
    CUresult (*get)(void **, CUcontext, void *) = (CUresult(*)(void **, CUcontext, void *))t[2];
    CUcontext a = (CUcontext)(uintptr_t)0xa0, b = (CUcontext)(uintptr_t)0xb0;
    void *k1 = (void *)(uintptr_t)0x18c96440, *k2 = (void *)(uintptr_t)0x1ab56f90;
    void *v = (void *)&v;

    /* the runtime's first get on a context, before its put (trace) */
    current_ = NULL;
    CHECK(get(&v, NULL, k1) == CUDA_ERROR_INVALID_CONTEXT);
    current_ = a;
    CHECK(get(&v, NULL, k1) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(v == NULL);
    /* put with a NULL context means the current one (trace: put(0, key, value, dtor)) */
    CHECK(put(NULL, k1, (void *)0x1111, dtor) == CUDA_SUCCESS);
    CHECK(get(&v, a, k1) == CUDA_SUCCESS && v == (void *)0x1111);
    CHECK(get(&v, NULL, k1) == CUDA_SUCCESS && v == (void *)0x1111);
    CHECK(get(&v, b, k1) == CUDA_ERROR_INVALID_HANDLE);
    /* put again replaces */
    CHECK(put(a, k1, (void *)0x2222, dtor) == CUDA_SUCCESS);
    CHECK(get(&v, a, k1) == CUDA_SUCCESS && v == (void *)0x2222);
    CHECK(put(a, k2, (void *)0x3333, NULL) == CUDA_SUCCESS);
    CHECK(put(b, k1, (void *)0x4444, dtor) == CUDA_SUCCESS);
    /* delete(ctx, key) removes one entry, without its destructor */
    CHECK(del(a, k2) == CUDA_SUCCESS);
    CHECK(get(&v, a, k2) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(del(a, k2) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(dtor_calls_ == 0);
    CHECK(get(NULL, a, k1) == CUDA_ERROR_INVALID_VALUE);
    /* many entries */
    for (uintptr_t i = 1; i <= 100; i++) CHECK(put(b, (void *)(0x9000 + i), (void *)i, NULL) == 0);
    CHECK(get(&v, b, (void *)(uintptr_t)(0x9000 + 57)) == CUDA_SUCCESS && v == (void *)57);
    /* the context goes: its destructors run with (ctx, key, value); b's stay */
    apigen_cuda_export_context_gone(a);
    CHECK(dtor_calls_ == 1);
    CHECK(dtor_ctx_ == a && dtor_key_ == k1 && dtor_value_ == (void *)0x2222);
    CHECK(get(&v, a, k1) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(get(&v, b, k1) == CUDA_SUCCESS && v == (void *)0x4444);
    apigen_cuda_export_context_gone(a);
    CHECK(dtor_calls_ == 1);
    apigen_cuda_export_context_gone(b);
    CHECK(dtor_calls_ == 2 && dtor_value_ == (void *)0x4444);
    CHECK(get(&v, b, (void *)(uintptr_t)(0x9000 + 57)) == CUDA_ERROR_INVALID_HANDLE);
    apigen_cuda_export_context_gone(NULL);
    current_ = NULL;
}

/* ---- the other entries ----------------------------------------------------------------- */

/* cuFFT's callback for [7]: `*(void **)a = b` */
static int visits_;
static void store_function(void *data, CUfunction f)
{
    visits_++;
    *(CUfunction *)data = f;
}

static void test_entries(void)
{
    /* CUDART_INTERFACE [2]: the primary context's handle, its reference
     * count as it was (retained and released at once) */
    const void *const *c = table(UUID_CUDART);
    CUresult (*primary)(CUcontext *, CUdevice) = (CUresult(*)(CUcontext *, CUdevice))c[2];
    CUcontext p1 = NULL, p2 = NULL;
    retains_ = releases_ = 0;
    CHECK(primary(&p1, 0) == CUDA_SUCCESS && p1 == (CUcontext)(uintptr_t)0x1000);
    CHECK(retains_ == 1 && releases_ == 1);
    /* an inactive primary context made and destroyed: its number is burned */
    CHECK(nburned_ == 1 && burned_[0] == 0x1000 * 10);
    CHECK(primary(&p2, 1) == CUDA_SUCCESS && p2 == (CUcontext)(uintptr_t)0x1001);
    CHECK(retains_ == 2 && releases_ == 2);
    CHECK(nburned_ == 1); /* it was active: nothing made, nothing burned */
    CHECK(primary(NULL, 0) == CUDA_ERROR_INVALID_VALUE && retains_ == 2);
    p1 = (CUcontext)(uintptr_t)1;
    CHECK(primary(&p1, 7) == CUDA_ERROR_INVALID_DEVICE && p1 == (CUcontext)(uintptr_t)1);
    CHECK(retains_ == releases_);

    /* CUDART_INTERFACE [1]: the fat binary behind a registration wrapper */
    CUresult (*load)(CUmodule *, const void *) = (CUresult(*)(CUmodule *, const void *))c[1];
    static const uint32_t fatbin[4] = {0xba55ed50u, 0x00100001u, 0, 0};
    struct {
        uint32_t magic, version;
        const void *data, *more;
    } w = {0x466243b1u, 1, fatbin, NULL};
    CUmodule m = NULL;
    CHECK(load(&m, &w) == CUDA_SUCCESS && m == (CUmodule)(uintptr_t)0x777);
    CHECK(last_fatbin_ == fatbin && fatbin_loads_ == 1);
    w.magic = 0x12345678u;
    int before = nlog_;
    CHECK(load(&m, &w) == CUDA_ERROR_INVALID_IMAGE && fatbin_loads_ == 1);
    CHECK(nlog_ == before + 1);
    CHECK(load(&m, NULL) == CUDA_ERROR_INVALID_VALUE);
    /* [6] with no extra entries is [1]; with some, refused */
    w.magic = 0x466243b1u;
    CUresult (*load6)(CUmodule *, const void *, void *, void *, size_t) =
        (CUresult(*)(CUmodule *, const void *, void *, void *, size_t))c[6];
    CHECK(load6(&m, &w, NULL, NULL, 0) == CUDA_SUCCESS && fatbin_loads_ == 2);
    CHECK(load6(&m, &w, &m, &m, 2) == CUDA_ERROR_NOT_SUPPORTED && fatbin_loads_ == 2);
    CUresult (*load8)(const void *, CUmodule *, void *, void *, unsigned) =
        (CUresult(*)(const void *, CUmodule *, void *, void *, unsigned))c[8];
    CHECK(load8(fatbin, &m, NULL, NULL, 0) == CUDA_SUCCESS && fatbin_loads_ == 3);

    /* TOOLS_RUNTIME_CALLBACK_HOOKS [2], [6]: driver-owned zeroed buffers of
     * the sizes the real driver reported (1024 and 14) */
    const void *const *h = table(UUID_HOOKS);
    void *(*buf1)(void **, size_t *) = (void *(*)(void **, size_t *))h[2];
    void *(*buf2)(void **, size_t *) = (void *(*)(void **, size_t *))h[6];
    void *p = NULL, *q = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK(buf1(&p, &n1) == p && p && n1 == 1024);
    CHECK(buf2(&q, &n2) == q && q && n2 == 14 && q != p);
    for (size_t i = 0; i < n1; i++) CHECK(((unsigned char *)p)[i] == 0);
    void *p2b = NULL;
    buf1(&p2b, &n1);
    CHECK(p2b == p);

    /* TOOLS_TLS [2]: the thread's current context */
    const void *const *tls = table(UUID_TLS);
    CUresult (*cur)(CUcontext *) = (CUresult(*)(CUcontext *))tls[2];
    CUcontext got = (CUcontext)(uintptr_t)1;
    current_ = (CUcontext)(uintptr_t)0x191cdf90;
    CHECK(cur(&got) == CUDA_SUCCESS && got == current_);

    /* CONTEXT_IDENTITY [4]: cuCtxGetId of the context */
    const void *const *id = table("21318c60971432488ca641ff7324c8f2");
    CUresult (*ctxid)(CUcontext, unsigned long long *) =
        (CUresult(*)(CUcontext, unsigned long long *))id[4];
    unsigned long long v = 0;
    CHECK(ctxid(current_, &v) == CUDA_SUCCESS && v == 0x191cdf90ull * 10);
    CHECK(ctxid(current_, NULL) == CUDA_ERROR_INVALID_VALUE);

    /* CONTEXT_IDENTITY [51]: the server's object for the context, as a
     * guest block holding its first bytes (the same block for the same
     * object); [39] the server's answer for it. A pointer [51] did not give
     * is refused in the guest, never sent. */
    CUresult (*object_of)(CUcontext, CUstream, void **) = (CUresult(*)(CUcontext, CUstream, void **))id[51];
    CUresult (*query)(CUcontext, const void *, unsigned long long *) =
        (CUresult(*)(CUcontext, const void *, unsigned long long *))id[39];
    void *o1 = NULL, *o2 = NULL, *o3 = NULL;
    CHECK(object_of(current_, NULL, &o1) == CUDA_SUCCESS && o1 && ((unsigned char *)o1)[0] == 1);
    CHECK(object_of(current_, NULL, &o2) == CUDA_SUCCESS && o2 == o1);
    CHECK(object_of((CUcontext)(uintptr_t)0x1001, NULL, &o3) == CUDA_SUCCESS && o3 && o3 != o1);
    v = 0;
    CHECK(query(current_, o1, &v) == CUDA_SUCCESS && v == 7);
    CHECK(query((CUcontext)(uintptr_t)0x1001, o3, &v) == CUDA_SUCCESS);
    int calls = object_calls_;
    CHECK(query(current_, &v, &v) == CUDA_ERROR_INVALID_VALUE && object_calls_ == calls);
    CHECK(query(current_, o1, NULL) == CUDA_ERROR_INVALID_VALUE && object_calls_ == calls);
    CHECK(object_of(NULL, NULL, &o1) == CUDA_ERROR_INVALID_CONTEXT); /* the server's answer */
    CHECK(object_of(current_, NULL, NULL) == CUDA_ERROR_INVALID_VALUE);
    /* a stream's object: another one */
    CHECK(object_of(current_, (CUstream)(uintptr_t)0x33, &o2) == CUDA_SUCCESS && o2 && o2 != o1);

    /* the compile cache (da9151d3): an entry opens, every lookup misses
     * (CUDA_ERROR_NOT_FOUND: the caller compiles), a store is taken, the
     * entry closes; a closed or foreign entry is refused */
    const void *const *cc = table("da9151d33ae6cc41a5c04f26d533e328");
    CUresult (*open_)(void **, int, const void *, size_t, const char *, const char *) =
        (CUresult(*)(void **, int, const void *, size_t, const char *, const char *))cc[1];
    CUresult (*close_)(void *) = (CUresult(*)(void *))cc[2];
    CUresult (*lookup)(void *, uint64_t, void **, int *) = (CUresult(*)(void *, uint64_t, void **, int *))cc[3];
    CUresult (*store)(void *, uint64_t, const void *, size_t) =
        (CUresult(*)(void *, uint64_t, const void *, size_t))cc[4];
    static const unsigned char bitcode[] = {0x42, 0x43, 0xc0, 0xde};
    void *entry = NULL, *data = (void *)&v;
    int size = 5;
    CHECK(open_(&entry, 2, bitcode, sizeof bitcode, "-arch=compute_90", "HOST64") == CUDA_SUCCESS && entry);
    CHECK(lookup(entry, 0, &data, &size) == CUDA_ERROR_NOT_FOUND && data == (void *)&v && size == 5);
    CHECK(store(entry, 0, "//\n// Generated", 16) == CUDA_SUCCESS);
    CHECK(store(entry, 0, NULL, 16) == CUDA_ERROR_INVALID_VALUE);
    CHECK(close_(entry) == CUDA_SUCCESS);
    CHECK(open_(NULL, 2, bitcode, sizeof bitcode, "", "") == CUDA_ERROR_INVALID_VALUE);
    static uint64_t foreign[8]; /* an entry [1] did not open (as large as one) */
    CHECK(lookup(foreign, 0, &data, &size) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(close_(NULL) == CUDA_ERROR_INVALID_HANDLE);

    /* cuFFT's [7]: the callback once per function of the module, in the
     * driver's order, and how many */
    const void *const *ft = table("6e163fbeb958444d835ce182aff1991e");
    unsigned (*each)(CUcontext, CUmodule, void (*)(void *, CUfunction), void *) =
        (unsigned (*)(CUcontext, CUmodule, void (*)(void *, CUfunction), void *))ft[7];
    CUfunction last = NULL;
    CHECK(each(current_, FAKE_MODULE, store_function, &last) == 3);
    CHECK(last == (CUfunction)(uintptr_t)0x902 && visits_ == 3);
    CHECK(each(current_, (CUmodule)(uintptr_t)0x99, store_function, &last) == 0 && visits_ == 3);
    enumerate_error_ = CUDA_ERROR_OUT_OF_MEMORY;
    CHECK(each(current_, FAKE_MODULE, store_function, &last) == 0 && visits_ == 3);
    enumerate_error_ = CUDA_SUCCESS;

    /* CONTEXT_CHECKS [2] writes "not wrapped", [3] answers 0 */
    const void *const *k = table(UUID_CHECKS);
    CUresult (*unwrap)(CUcontext, unsigned *, CUcontext *) =
        (CUresult(*)(CUcontext, unsigned *, CUcontext *))k[2];
    unsigned wrapped = 7;
    CUcontext inner = NULL;
    CHECK(unwrap(current_, &wrapped, &inner) == CUDA_SUCCESS && wrapped == 0);
    unsigned (*fn3)(void) = (unsigned (*)(void))k[3];
    CHECK(fn3() == 0);
    current_ = NULL;
}

int main(void)
{
    test_md2_rfc1319();
    test_hmac_construction();
    test_integrity_fixed_answers();
    test_integrity_hash_inputs();
    test_table_shapes();
    test_unknown_uuid();
    test_unimplemented_entry();
    test_context_local_storage();
    test_entries();
    if (failures_) {
        fprintf(stderr, "exptab_test: %d check(s) failed\n", failures_);
        return 1;
    }
    printf("exptab_test: all checks passed\n");
    return 0;
}
