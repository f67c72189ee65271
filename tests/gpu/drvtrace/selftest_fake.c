/* A fake "real driver" for selftest.sh: enough of cuInit, cuGetProcAddress
 * and cuGetExportTable to check that the shim passes every argument (stack
 * and xmm ones included) and every result through unchanged. */
#include <stdint.h>
#include <string.h>

int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }

/* not exported: reachable only through cuGetProcAddress */
static long hidden(long a, long b, long c, long d, long e, long f, long g, long h, double x, double y)
{
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + (long)(x * 10) + (long)(y * 100);
}

static int lookup(const char *sym, void **pfn)
{
    if (!strcmp(sym, "cuInit")) *pfn = (void *)cuInit;
    else if (!strcmp(sym, "cuHidden")) *pfn = (void *)hidden;
    else { *pfn = 0; return 500; }
    return 0;
}
int cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags) { (void)ver; (void)flags; return lookup(sym, pfn); }
int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *q)
{
    (void)ver; (void)flags;
    int st = lookup(sym, pfn);
    if (q) *q = st ? 1 : 0;
    return st;
}

static double entry1(double a, long b, double c) { return a * b + c; }
static long entry2(long a, long b, long c, long d, long e, long f, long g) { return a - b + c - d + e - f + g * 1000; }
static int entry3(uint64_t *out) { *out = 0x1122334455667788ull; return 7; } /* an out parameter */
static int data_word = 42;
static const void *table[] = { (void *)(6 * sizeof(void *)), (void *)entry1, (void *)entry2, &data_word, (void *)0x1234,
                               (void *)entry3 };

static const void *table_nosize[] = { (void *)entry2, (void *)entry1, 0, 0 }; /* no size word */

int cuGetExportTable(const void **out, const void *id)
{
    unsigned char k = ((const unsigned char *)id)[0];
    if (k == 0xab) *out = table;
    else if (k == 0xac) *out = table_nosize;
    else return 500;
    return 0;
}
