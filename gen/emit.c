/* apigen_emit: every artifact is built in memory, written to a temporary
 * file next to its destination, and renamed into place only when all of
 * them were written (an unchanged file is left untouched). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit_util.h"
#include "progress.h"

typedef struct artifact {
    const char *suffix;
    int (*emit)(emit_ctx *, strbuf *);
    strbuf text;
    char *path, *tmp;
    int unchanged;
} artifact;

static int same_content(const char *path, const strbuf *b)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t len = b->len, i = 0;
    int c, same = 1;
    while ((c = fgetc(f)) != EOF) {
        if (i >= len || (unsigned char)b->s[i] != (unsigned char)c) {
            same = 0;
            break;
        }
        i++;
    }
    fclose(f);
    return same && i == len;
}

static int write_file(const char *path, const strbuf *b, FILE *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(err, "apigen: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t n = b->len ? fwrite(b->s, 1, b->len, f) : 0;
    int bad = n != b->len || fflush(f) != 0;
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        fprintf(err, "apigen: error: cannot write %s: %s\n", path, strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

int apigen_emit(const api_model *m, const apigen_options *opt, diag_sink *d)
{
    FILE *err = d && d->out ? d->out : stderr;
    emit_ctx e;
    artifact arts[] = {
        {"_wire.h", emit_wire, {0}, NULL, NULL, 0},
        {"_stub.c", emit_stub, {0}, NULL, NULL, 0},
        {"_server.c", emit_server, {0}, NULL, NULL, 0},
        {"_server_main.c", emit_server_main, {0}, NULL, NULL, 0},
        {".map", emit_map, {0}, NULL, NULL, 0},
        {"_coverage.md", emit_coverage, {0}, NULL, NULL, 0},
        {"_model.txt", emit_model, {0}, NULL, NULL, 0},
        {"_features.h", emit_features, {0}, NULL, NULL, 0},
    };
    const size_t narts = sizeof arts / sizeof arts[0];
    int rc = 0;
    if (emit_ctx_init(&e, m, opt, err)) {
        emit_ctx_free(&e);
        if (d) d->errors++;
        return 1;
    }
    for (size_t i = 0; i < narts && !rc; i++) {
        gen_progress("%s: writing %s%s", opt->spec_path, m->api.name, arts[i].suffix);
        if (arts[i].emit(&e, &arts[i].text)) rc = 1;
    }
    emit_ctx_free(&e);
    if (!rc && mkdir(opt->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(err, "apigen: error: cannot create %s: %s\n", opt->out_dir, strerror(errno));
        rc = 1;
    }
    for (size_t i = 0; i < narts; i++) {
        arts[i].path = xasprintf("%s/%s%s", opt->out_dir, m->api.name, arts[i].suffix);
        arts[i].tmp = xasprintf("%s/.%s%s.tmp", opt->out_dir, m->api.name, arts[i].suffix);
    }
    for (size_t i = 0; i < narts && !rc; i++) {
        if (same_content(arts[i].path, &arts[i].text)) {
            arts[i].unchanged = 1;
            continue;
        }
        if (write_file(arts[i].tmp, &arts[i].text, err)) rc = 1;
    }
    if (rc) {
        for (size_t i = 0; i < narts; i++)
            if (!arts[i].unchanged) remove(arts[i].tmp);
    } else {
        for (size_t i = 0; i < narts; i++) {
            if (arts[i].unchanged) continue;
            if (rename(arts[i].tmp, arts[i].path) != 0) {
                fprintf(err, "apigen: error: cannot rename %s to %s: %s\n", arts[i].tmp,
                        arts[i].path, strerror(errno));
                remove(arts[i].tmp);
                rc = 1;
            }
        }
    }
    for (size_t i = 0; i < narts; i++) {
        sb_free(&arts[i].text);
        free(arts[i].path);
        free(arts[i].tmp);
    }
    if (rc && d) d->errors++;
    return rc;
}
