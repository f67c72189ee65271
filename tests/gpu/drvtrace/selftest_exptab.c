/* selftest_exptab.c: a stand-in for apigen's export tables
 * (DRVTRACE_EXPTAB): answers one UUID with its own table, refuses others. */
#include <string.h>

static int entry(void) { return 42; }
static const void *const table_[2] = { (const void *)(2 * sizeof(void *)), (const void *)&entry };

int apigen_cuda_export_table(const void **out, const void *id)
{
    static const unsigned char mine[16] = { 0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    *out = NULL;
    if (memcmp(id, mine, 16) != 0) return 1;
    *out = table_;
    return 0;
}
