/* apigen CLI: a thin layer over apigen_load + apigen_emit.
 * Exit status: 0 success, 1 errors in the spec or headers (or output not
 * written), 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apigen.h"
#include "compare.h"
#include "progress.h"

#ifndef APIGEN_VERSION
#define APIGEN_VERSION "0.0.0"
#endif

static void usage(FILE *f)
{
    fputs("usage: apigen SPEC.yaml -o OUTDIR [--strict] [-I DIR]... [-D NAME[=VALUE]]...\n"
          "              [--compare PREV_DIR] [--undecided-unsupported]\n"
          "       apigen --version | --help\n"
          "\n"
          "Reads the spec and the C headers it names and writes the remoting layer into\n"
          "OUTDIR: <api>_wire.h, <api>_stub.c, <api>_server.c, <api>_server_main.c,\n"
          "<api>.map, <api>_coverage.md and <api>_model.txt. Nothing is written when\n"
          "there are errors.\n"
          "\n"
          "  -o OUTDIR        output folder (created if missing)\n"
          "  --strict         annotations that match nothing are errors\n"
          "  -I DIR           extra include folder for the headers, searched first\n"
          "  -D NAME[=VALUE]  extra define for the headers\n"
          "  --compare DIR    print what changed against the model snapshot of a previous\n"
          "                   run in DIR (<api>_model.txt): functions added, removed and\n"
          "                   changed, struct layouts; a declaration that changed under an\n"
          "                   annotation is an error (the output is still written, exit 1).\n"
          "                   Default: OUTDIR's own snapshot when there is one. With\n"
          "                   --compare the report is also written to\n"
          "                   OUTDIR/<api>_changes.txt, errors or not\n"
          "  --undecided-unsupported\n"
          "                   a function with no spec entry that the defaults cannot\n"
          "                   decide is generated as unsupported (a warning) instead of an\n"
          "                   error: a new header version gives a working stub and a list\n"
          "  (APIGEN_INCLUDE_PATH: more include folders, ':'-separated, after -I)\n"
          "  --version        print the version\n"
          "  --help           this text\n",
          f);
}

/* "-o X" or "-oX": returns the value and advances *i, or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *flag)
{
    size_t fl = strlen(flag);
    if (strncmp(argv[*i], flag, fl) != 0) return NULL;
    if (argv[*i][fl]) return argv[*i] + fl;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
}


/* The change report against prev: to stdout and, when --compare was given,
 * to OUTDIR/<api>_changes.txt (created even when nothing else is written).
 * Returns model_compare's result. */
static int change_report(const api_model *m, const apigen_options *opt, const char *prev,
                         diag_sink *d, int verbose)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return model_compare(m, prev, stdout, d, verbose);
    int cmp = model_compare(m, prev, mem, d, verbose);
    fclose(mem);
    fwrite(text, 1, len, stdout);
    if (opt->compare_dir && cmp >= 0) {
        char *path = xasprintf("%s/%s_changes.txt", opt->out_dir, m->api.name);
        FILE *f = NULL;
        if (mkdir(opt->out_dir, 0777) == 0 || errno == EEXIST) f = fopen(path, "w");
        if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "apigen: error: cannot write %s: %s\n", path, strerror(errno));
            d->errors++;
        } else {
            fprintf(stderr, "apigen: the change report is also in %s\n", path);
        }
        free(path);
    }
    free(text);
    return cmp;
}

/* --compare with errors: the user who most needs the report (what changed,
 * what needs an annotation) gets it anyway, from a second load that
 * generates undecided functions as unsupported (its diagnostics dropped:
 * the first run's are the ones that count). Nothing but the report is
 * written. Returns the report's errors. */
static unsigned report_despite_errors(const apigen_options *opt)
{
    apigen_options o2 = *opt;
    o2.undecided_unsupported = 1;
    o2.strict = 0; /* --strict's own errors (annotations that match nothing) say nothing of what changed */
    FILE *quiet = tmpfile();
    diag_sink d2;
    diag_init(&d2, quiet ? quiet : stderr);
    d2.max_errors = 1;
    api_model m;
    if (!quiet || apigen_load(&o2, &d2, &m) != 0) {
        fprintf(stderr, "apigen: --compare: no change report: the errors above are not only "
                        "functions the defaults cannot decide\n");
        if (quiet) fclose(quiet);
        return 0;
    }
    fclose(quiet);
    char *prev = xasprintf("%s/%s_model.txt", opt->compare_dir, m.api.name);
    diag_sink d3;
    diag_init(&d3, stderr);
    if (change_report(&m, opt, prev, &d3, 1) < 0)
        fprintf(stderr, "apigen: error: --compare: cannot read %s\n", prev);
    free(prev);
    model_free(&m);
    return d3.errors; /* the report's own: declarations changed under annotations */
}

int main(int argc, char **argv)
{
    apigen_options opt = {0};
    char *envp = NULL;
    const char **incs = calloc((size_t)argc + 1, sizeof *incs);
    const char **defs = calloc((size_t)argc + 1, sizeof *defs);
    int rc = 2;
    if (!incs || !defs) {
        fputs("apigen: out of memory\n", stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (strcmp(a, "--version") == 0) {
            printf("apigen %s\n", APIGEN_VERSION);
            rc = 0;
            goto out;
        } else if (strcmp(a, "--strict") == 0) {
            opt.strict = 1;
        } else if (strcmp(a, "--undecided-unsupported") == 0) {
            opt.undecided_unsupported = 1;
        } else if ((v = opt_value(argc, argv, &i, "--compare"))) {
            if (!*v || opt.compare_dir) goto bad_usage;
            opt.compare_dir = v;
        } else if ((v = opt_value(argc, argv, &i, "-o"))) {
            if (!*v || opt.out_dir) goto bad_usage;
            opt.out_dir = v;
        } else if ((v = opt_value(argc, argv, &i, "-I"))) {
            if (!*v) goto bad_usage;
            incs[opt.nextra_include_dirs++] = v;
        } else if ((v = opt_value(argc, argv, &i, "-D"))) {
            if (!*v) goto bad_usage;
            defs[opt.nextra_defines++] = v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "apigen: unknown option '%s'\n", a);
            goto bad_usage;
        } else {
            if (opt.spec_path) {
                fprintf(stderr, "apigen: more than one spec: '%s' and '%s'\n", opt.spec_path, a);
                goto bad_usage;
            }
            opt.spec_path = a;
        }
    }
    if (!opt.spec_path || !opt.out_dir) goto bad_usage;
    /* APIGEN_INCLUDE_PATH: more -I folders, ':'-separated, after the command line's */
    const char *ev = getenv("APIGEN_INCLUDE_PATH");
    if (ev && *ev && (envp = malloc(strlen(ev) + 1))) {
        memcpy(envp, ev, strlen(ev) + 1);
        size_t extra = 1;
        for (const char *q = envp; *q; q++) extra += *q == ':';
        const char **n2 = realloc(incs, ((size_t)argc + extra + 1) * sizeof *incs);
        if (n2) {
            incs = n2;
            for (char *tok = strtok(envp, ":"); tok; tok = strtok(NULL, ":"))
                if (*tok) incs[opt.nextra_include_dirs++] = tok;
        }
    }
    opt.extra_include_dirs = incs;
    opt.extra_defines = defs;

    diag_sink d;
    diag_init(&d, stderr);
    d.strict = opt.strict;
    api_model m;
    if (apigen_load(&opt, &d, &m) != 0) {
        if (opt.compare_dir) d.errors += report_despite_errors(&opt);
        fprintf(stderr, "apigen: %s: %u error%s, nothing written%s\n", opt.spec_path, d.errors,
                d.errors == 1 ? "" : "s", opt.compare_dir ? " but the change report" : "");
        rc = 1;
        goto out;
    }
    /* the change report, before the output replaces the snapshot */
    char *prev = xasprintf("%s/%s_model.txt", opt.compare_dir ? opt.compare_dir : opt.out_dir,
                           m.api.name);
    int cmp = 0;
    if (opt.compare_dir || file_exists(prev)) {
        cmp = change_report(&m, &opt, prev, &d, opt.compare_dir != NULL);
        if (cmp < 0) {
            fprintf(stderr, "apigen: error: --compare: cannot read %s\n", prev);
            d.errors++;
        }
    }
    fflush(stdout);
    rc = apigen_emit(&m, &opt, &d) ? 1 : 0;
    gen_progress_done();
    /* warnings do not stop the output (one spec serves several header
     * versions), but they must not scroll by unnoticed */
    if (!rc && cmp == 0 && d.warnings)
        fprintf(stderr, "apigen: %s: %u warning%s above, output written (--strict makes them "
                        "errors)\n",
                opt.spec_path, d.warnings, d.warnings == 1 ? "" : "s");
    if (!rc && cmp != 0) {
        if (cmp > 0)
            fprintf(stderr, "apigen: %s: %d declaration%s changed under annotations: review %s "
                            "(output written)\n",
                    opt.spec_path, cmp, cmp == 1 ? "" : "s", cmp == 1 ? "it" : "them");
        rc = 1;
    }
    free(prev);
    model_free(&m);
    goto out;

bad_usage:
    usage(stderr);
    rc = 2;
out:
    free(incs);
    free(defs);
    free(envp);
    return rc;
}
