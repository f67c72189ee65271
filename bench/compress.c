/* apigen-bench-compress: would compressing bulk payloads pay on a network
 * transport? For four kinds of data (incompressible random bytes, zeros,
 * float32 weights ~ N(0, 0.02) as a model's are, the same as bf16), per
 * 1 MiB chunk (the
 * streamed copies' chunk), single-threaded: LZ4 and zstd at fast levels,
 * their ratio and compress / decompress rates; then the time to move the
 * buffer over links of several speeds, plain or compressed (compressing,
 * sending and decompressing chunks pipelined: the slowest of the three
 * sets the pace), and which wins. Prints numbers only.
 *
 *   apigen-bench-compress [MiB]          (default 64)
 */
#define _GNU_SOURCE
#include <lz4.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define CHUNK (1u << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void fill(int kind, uint8_t *p, size_t n)
{
    if (kind == 0) {
        for (size_t i = 0; i + 8 <= n; i += 8) {
            uint64_t v = xorshift();
            memcpy(p + i, &v, 8);
        }
    } else if (kind == 1) {
        memset(p, 0, n);
    } else { /* Box-Muller normals, sigma 0.02; bf16: their top halves */
        float *f = (float *)p;
        size_t nf = kind == 3 ? n / 2 : n / 4;
        if (kind == 3 && !(f = malloc(nf * 4)))
            exit(1);
        for (size_t i = 0; i + 1 < nf; i += 2) {
            double u1 = ((double)(xorshift() >> 11) + 1) / 9007199254740993.0;
            double u2 = (double)(xorshift() >> 11) / 9007199254740992.0;
            double r = sqrt(-2 * log(u1)) * 0.02;
            f[i] = (float)(r * cos(2 * M_PI * u2));
            f[i + 1] = (float)(r * sin(2 * M_PI * u2));
        }
        if (kind == 3) {
            for (size_t i = 0; i < nf; i++) {
                uint32_t u;
                memcpy(&u, &f[i], 4);
                uint16_t h = (uint16_t)(u >> 16);
                memcpy(p + 2 * i, &h, 2);
            }
            free(f);
        }
    }
}

typedef struct codec {
    const char *name;
    int level; /* lz4: acceleration; zstd: level */
    int zstd;
} codec;

static size_t comp(const codec *c, ZSTD_CCtx *cc, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    if (c->zstd) {
        size_t k = ZSTD_compressCCtx(cc, dst, cap, src, n, c->level);
        return ZSTD_isError(k) ? 0 : k;
    }
    int k = LZ4_compress_fast((const char *)src, (char *)dst, (int)n, (int)cap, c->level);
    return k > 0 ? (size_t)k : 0;
}

static size_t decomp(const codec *c, ZSTD_DCtx *dc, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    if (c->zstd) {
        size_t k = ZSTD_decompressDCtx(dc, dst, cap, src, n);
        return ZSTD_isError(k) ? 0 : k;
    }
    int k = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)cap);
    return k > 0 ? (size_t)k : 0;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 64, n = (mib ? mib : 64) << 20;
    size_t cap = ZSTD_compressBound(CHUNK) > (size_t)LZ4_compressBound(CHUNK) ? ZSTD_compressBound(CHUNK)
                                                                             : (size_t)LZ4_compressBound(CHUNK);
    size_t nch = n / CHUNK;
    uint8_t *src = malloc(n), *out = malloc(n), *z = malloc(nch * cap);
    size_t *zn = calloc(nch, sizeof *zn);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (!src || !out || !z || !zn || !cc || !dc)
        return 1;
    static const codec codecs[] = {
        {"lz4 (accel 1)", 1, 0}, {"lz4 (accel 8)", 8, 0}, {"zstd -1", 1, 1}, {"zstd --fast=3", -3, 1},
    };
    static const char *kinds[] = {"random (incompressible)", "zero-filled", "float32 weights N(0,0.02)",
                                  "bf16 weights N(0,0.02)"};
    static const double links_gbps[] = {1.25, 3.125, 12.5}; /* 10, 25, 100 Gb/s */
    printf("apigen-bench-compress: %zu MiB in 1 MiB chunks, one thread\n", n >> 20);
    printf("%-27s %-14s %7s %9s %9s   %s\n", "data", "codec", "ratio", "comp GB/s", "dec GB/s",
           "time plain -> compressed at 10 / 25 / 100 Gb/s (ms)");
    for (int k = 0; k < 4; k++) {
        fill(k, src, n);
        for (size_t ci = 0; ci < sizeof codecs / sizeof codecs[0]; ci++) {
            const codec *c = &codecs[ci];
            double tc = 1e30, td = 1e30;
            size_t total = 0;
            int bad = 0;
            for (int r = 0; r < 3 && !bad; r++) {
                double t0 = now_s();
                total = 0;
                for (size_t i = 0; i < nch && !bad; i++) {
                    zn[i] = comp(c, cc, src + i * CHUNK, CHUNK, z + i * cap, cap);
                    bad = !zn[i];
                    total += zn[i];
                }
                double t1 = now_s();
                for (size_t i = 0; i < nch && !bad; i++)
                    bad = decomp(c, dc, z + i * cap, zn[i], out + i * CHUNK, CHUNK) != CHUNK;
                double t2 = now_s();
                if (t1 - t0 < tc)
                    tc = t1 - t0;
                if (t2 - t1 < td)
                    td = t2 - t1;
            }
            if (bad || memcmp(src, out, nch * CHUNK)) {
                printf("%-27s %-14s failed\n", kinds[k], c->name);
                continue;
            }
            double bytes = (double)(nch * CHUNK);
            printf("%-27s %-14s %7.3f %9.2f %9.2f  ", kinds[k], c->name, bytes / (double)total,
                   bytes / tc / 1e9, bytes / td / 1e9);
            for (size_t l = 0; l < sizeof links_gbps / sizeof links_gbps[0]; l++) {
                double plain = bytes / (links_gbps[l] * 1e9);
                double wire = (double)total / (links_gbps[l] * 1e9);
                double piped = tc > wire ? tc : wire; /* chunks pipelined: the slowest stage */
                if (td > piped)
                    piped = td;
                printf(" %s%.1f->%.1f", l ? "/ " : "", plain * 1e3, piped * 1e3);
            }
            printf("\n");
        }
    }
    printf("a codec pays on a link where its compressed time (right of ->) is below the plain one\n");
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    free(src);
    free(out);
    free(z);
    free(zn);
    return 0;
}
