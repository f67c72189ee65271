/* APIGEN_NVML_EXPORT_TABLE=probe: an experiment for tests/gpu/nvml.sh, to
 * learn which entries of nvidia-smi's private table (c4fe3e6c-..., see
 * specs/nvml/guest.c and docs/nvml.md) a tool calls, in the order it calls
 * them. The table's size word covers 256 entries, each a function of its
 * own that reads no argument (safe whatever the caller passes, as
 * api.private_symbols are), logs "entry N called" once and answers
 * NVML_ERROR_NOT_SUPPORTED. Never the default: an entry whose caller expects
 * an output gets none. */
#include <stdatomic.h>
#include <stddef.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

#define NENTRY 256

static atomic_uchar called[NENTRY + 1];

static nvmlReturn_t entry_called(unsigned n)
{
    if (!atomic_exchange(&called[n], 1))
        apigen_log("nvmlInternalGetExportTable probe: entry %u (byte offset %u) called: "
                   "answered NVML_ERROR_NOT_SUPPORTED", n, n * (unsigned)sizeof(void *));
    return NVML_ERROR_NOT_SUPPORTED;
}

/* entry h*16+l+1 (word 0 is the size) */
#define ENTRY(h, l) \
    static nvmlReturn_t entry_##h##_##l(void) { return entry_called((h) * 16 + (l) + 1); }
#define ADDR(h, l) entry_##h##_##l,
#define ROW(M, h) \
    M(h, 0) M(h, 1) M(h, 2) M(h, 3) M(h, 4) M(h, 5) M(h, 6) M(h, 7) \
    M(h, 8) M(h, 9) M(h, 10) M(h, 11) M(h, 12) M(h, 13) M(h, 14) M(h, 15)
#define ALL(M) \
    ROW(M, 0) ROW(M, 1) ROW(M, 2) ROW(M, 3) ROW(M, 4) ROW(M, 5) ROW(M, 6) ROW(M, 7) \
    ROW(M, 8) ROW(M, 9) ROW(M, 10) ROW(M, 11) ROW(M, 12) ROW(M, 13) ROW(M, 14) ROW(M, 15)

ALL(ENTRY)

static const struct {
    size_t size;                       /* bytes, this word included */
    nvmlReturn_t (*entry[NENTRY])(void);
} probe_table = {sizeof probe_table, {ALL(ADDR)}};

_Static_assert(sizeof probe_table == (NENTRY + 1) * sizeof(void *), "size word then entries");

const void *nvml_probe_table(void)
{
    return &probe_table;
}
