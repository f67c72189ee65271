/* The handshake request's fields (guest.c writes them; server.c and
 * replay.c read them with rt_hello_parse). rt_internal.h has the layout. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <string.h>

#define EXT_MAX 4096u /* bytes of one extension's value */

uint32_t rt_hello_parse(const uint8_t *p, size_t n, rt_hello *h, const char **err)
{
    apigen_rd rd;
    memset(h, 0, sizeof *h);
    *err = NULL;
    apigen_rd_init(&rd, p, n);
    if (!apigen_get_u32(&rd, &h->proto)) {
        *err = rd.err ? rd.err : "bad field";
        return RT_HELLO_MALFORMED;
    }
    if (h->proto != APIGEN_PROTO_VERSION && h->proto != RT_HELLO_V3)
        return RT_HELLO_PROTO;
    bool ok = apigen_get_str(&rd, &h->name, RT_NAME_MAX) && h->name && apigen_get_u64(&rd, &h->fp) &&
              apigen_get_u8(&rd, &h->join) && h->join <= 1 && apigen_get_raw(&rd, h->key, RT_KEY_LEN) &&
              apigen_get_str(&rd, &h->token, RT_TOKEN_MAX);
    if (ok && h->proto == APIGEN_PROTO_VERSION) {
        /* optional trailing u64s: the guest's API version (0: none sent),
         * the size of the arena a new session's guest passes next */
        ok = apigen_rd_done(&rd) ||
             (apigen_get_u64(&rd, &h->api_version) &&
              (apigen_rd_done(&rd) || (apigen_get_u64(&rd, &h->arena_size) && h->arena_size &&
                                       !h->join && apigen_rd_done(&rd))));
    } else if (ok) {
        ok = apigen_get_u64(&rd, &h->api_version) && apigen_get_u64(&rd, &h->arena_size) &&
             !(h->arena_size && h->join);
        /* extensions: (u32 tag, bytes value) to the end; unknown tags skipped */
        while (ok && !apigen_rd_done(&rd)) {
            uint32_t tag = 0;
            const void *v = NULL;
            uint64_t vn = 0;
            ok = apigen_get_u32(&rd, &tag) && apigen_get_bytes(&rd, &v, &vn, EXT_MAX);
            if (ok && tag == RT_HELLO_TAG_PID) {
                const uint8_t *b = v;
                ok = vn == 8;
                for (unsigned i = 0; ok && i < 8; i++)
                    h->pid |= (uint64_t)b[i] << (8 * i);
            } else if (ok && tag == RT_HELLO_TAG_COMM) {
                /* shown to people: printable ASCII only */
                size_t k = 0;
                for (uint64_t i = 0; i < vn && k < sizeof h->comm - 1; i++) {
                    char c = ((const char *)v)[i];
                    h->comm[k++] = c >= 0x20 && c < 0x7f ? c : '?';
                }
                h->comm[k] = 0;
            } else if (ok && tag == RT_HELLO_TAG_PIDNS) {
                /* a name compared byte for byte: printable ASCII only, or none */
                bool fine = vn > 0 && vn < sizeof h->pidns;
                for (uint64_t i = 0; fine && i < vn; i++)
                    fine = ((const char *)v)[i] > 0x20 && ((const char *)v)[i] < 0x7f;
                if (fine) {
                    memcpy(h->pidns, v, (size_t)vn);
                    h->pidns[vn] = 0;
                }
            } else if (ok && tag == RT_HELLO_TAG_FAMILY) {
                apigen_rd f;
                apigen_rd_init(&f, v, (size_t)vn);
                ok = apigen_get_u32(&f, &h->nmore) && h->nmore >= 1 && h->nmore < RT_FAMILY_MAX;
                for (uint32_t i = 0; ok && i < h->nmore; i++)
                    ok = apigen_get_str(&f, &h->more_name[i], RT_NAME_MAX) && h->more_name[i] &&
                         apigen_get_u64(&f, &h->more_fp[i]) && apigen_get_u64(&f, &h->more_version[i]);
                ok = ok && apigen_rd_done(&f);
            } else if (ok && tag == RT_HELLO_TAG_LANES) {
                apigen_rd f;
                apigen_rd_init(&f, v, (size_t)vn);
                ok = apigen_get_u32(&f, &h->lanes_version) && apigen_rd_done(&f);
            } else if (ok && tag == RT_HELLO_TAG_LANE) {
                apigen_rd f;
                apigen_rd_init(&f, v, (size_t)vn);
                ok = apigen_get_u32(&f, &h->lane_version) && apigen_get_u32(&f, &h->lane_index) &&
                     apigen_get_u32(&f, &h->lane_count) && apigen_get_u32(&f, &h->lane_piece) &&
                     apigen_get_u64(&f, &h->lane_min) && apigen_get_raw(&f, h->lane_key, RT_KEY_LEN) &&
                     apigen_rd_done(&f) && h->join;
                h->lane = ok;
            }
        }
    }
    if (!ok) {
        *err = rd.err ? rd.err : "bad field";
        return RT_HELLO_MALFORMED;
    }
    return RT_HELLO_OK;
}

/* the family's further APIs, after the two u64s */
static bool more(const rt_hello *h, apigen_wr *w)
{
    bool ok = !h->nmore || apigen_put_u32(w, h->nmore);
    for (uint32_t i = 0; ok && i < h->nmore; i++)
        ok = apigen_put_str(w, h->more_name[i]) && apigen_put_u64(w, h->more_fp[i]) &&
             apigen_put_u64(w, h->more_version[i]);
    return ok;
}

bool rt_hello_canon(const rt_hello *h, apigen_wr *w)
{
    /* as a version-2 guest writes it: the trailing u64s only when needed */
    return apigen_put_u32(w, APIGEN_PROTO_VERSION) && apigen_put_str(w, h->name) &&
           apigen_put_u64(w, h->fp) && apigen_put_u8(w, h->join) && apigen_put_raw(w, h->key, RT_KEY_LEN) &&
           apigen_put_str(w, h->token) &&
           (!(h->api_version || h->arena_size || h->nmore) || apigen_put_u64(w, h->api_version)) &&
           (!(h->arena_size || h->nmore) || apigen_put_u64(w, h->arena_size)) && more(h, w);
}
