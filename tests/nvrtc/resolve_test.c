/* The stub's include resolution (specs/nvrtc/includes.c) on a folder tree
 * of its own: which options reach the server, which files are sent under
 * which names, and which lines are not followed (comments, names the
 * application gave in memory, names found nowhere).
 *   resolve_test [TOOLKIT_INCLUDE_DIR] */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvrtc_guest.h"

/* includes.c logs through the guest runtime: printed here */
void apigen_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("log: ", stdout);
    vprintf(fmt, ap);
    fputs("\n", stdout);
    va_end(ap);
}

static int fails;
#define CHECK(cond, ...)                         \
    do {                                         \
        if (!(cond)) {                           \
            printf("FAIL: " __VA_ARGS__);        \
            printf("\n");                        \
            fails++;                             \
        }                                        \
    } while (0)

static void put(const char *dir, const char *name, const char *text)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) {
        printf("cannot write %s\n", p);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static int sent(const nvrtc_guest_headers *g, const char *name, const char *has)
{
    for (int i = 0; i < g->nh; i++)
        if (strcmp(g->names[i], name) == 0) return !has || strstr(g->h[i], has) != NULL;
    return 0;
}

int main(int argc, char **argv)
{
    char root[] = "/tmp/nvrtc-resolve.XXXXXX";
    if (!mkdtemp(root)) return 1;
    char inc[4200], inc2[4200], sub[4300], abs_e[4300], cwd[4200];
    snprintf(inc, sizeof inc, "%s/inc", root);
    snprintf(inc2, sizeof inc2, "%s/inc2", root);
    snprintf(sub, sizeof sub, "%s/sub", inc);
    snprintf(cwd, sizeof cwd, "%s/work", root);
    mkdir(inc, 0700), mkdir(inc2, 0700), mkdir(sub, 0700), mkdir(cwd, 0700);
    snprintf(abs_e, sizeof abs_e, "%s/e.h", root);
    char a[8192];
    put(inc, "pre.h", "#define PRE 1\n");
    snprintf(a, sizeof a,
             "#include \"b.h\"\n"
             "  #  include <sub/c.h>\n"
             "/* #include \"no1.h\"\n"
             "#include \"no2.h\" */ #include \"no3.h\"\n"
             "// #include \"no4.h\"\n"
             "#if 0\n#include \"dead.h\"\n#endif\n");
    put(inc, "a.h", a);
    put(inc, "b.h", "#include_next <d.h>\n");
    put(inc, "dead.h", "#define DEAD 1\n");
    put(inc2, "d.h", "#define D 1\n");
    snprintf(a, sizeof a, "#include \"%s\"\n#include \"near.h\"\n", abs_e);
    put(sub, "c.h", a);
    put(sub, "near.h", "#define NEAR 1\n");
    put(root, "e.h", "#define E 1\n");
    put(cwd, "local.h", "#define LOCAL 1\n");
    if (chdir(cwd) != 0) return 1;

    const char *src = "#include \"a.h\"\n#include \"mem.h\"\n#include <missing.h>\n"
                      "#include \"local.h\"\n";
    const char *h[] = {"#include \"memdep.h\"\n"}, *n[] = {"mem.h"};
    put(cwd, "memdep.h", "#define MEMDEP 1\n");
    char opt_inc2[4300];
    snprintf(opt_inc2, sizeof opt_inc2, "--include-path=%s", inc2);
    const char *tk = argc > 1 ? argv[1] : NULL;
    const char *opts[] = {"-I", inc, opt_inc2, "-default-device", "-include", "pre.h",
                          tk ? "-I" : "-DX", tk ? tk : "-DY"};
    int nopt = 8;
    nvrtc_guest_headers g;
    CHECK(nvrtc_resolve(src, "prog.cu", 1, h, n, nopt, opts, &g) == NVRTC_SUCCESS, "resolve");

    printf("options to the server:");
    for (int i = 0; i < g.nopt; i++) printf(" [%s]", g.opts[i] ? g.opts[i] : "(null)");
    printf("\nheaders sent:");
    for (int i = 0; i < g.nh; i++) printf(" %s", g.names[i]);
    printf("\n");

    for (int i = 0; i < g.nopt; i++) {
        CHECK(!strstr(g.opts[i], root), "option '%s' names a guest folder", g.opts[i]);
        CHECK(strcmp(g.opts[i], "-I") != 0 && strncmp(g.opts[i], "--include-path", 14) != 0,
              "an include-path option reached the server: %s", g.opts[i]);
    }
    CHECK(g.nopt == 3 + (tk ? 1 : 2), "%d options, want %d", g.nopt, 3 + (tk ? 1 : 2));
    CHECK(g.nopt >= 3 && strcmp(g.opts[0], "-default-device") == 0 &&
              strcmp(g.opts[1], "-include") == 0 && strcmp(g.opts[2], "pre.h") == 0,
          "the other options, in order");
    if (tk) CHECK(strcmp(g.opts[3], "-I@cuda-toolkit") == 0, "toolkit folder: '%s'", g.opts[3]);
    CHECK(sent(&g, "pre.h", "PRE"), "--pre-include's file");
    CHECK(sent(&g, "a.h", "b.h"), "a.h (-I)");
    CHECK(sent(&g, "b.h", "d.h"), "b.h (next to a.h)");
    CHECK(sent(&g, "sub/c.h", NULL), "sub/c.h (angled, -I)");
    CHECK(sent(&g, "d.h", "define D"), "d.h (include_next, the second folder)");
    CHECK(sent(&g, abs_e, "define E"), "an absolute name");
    CHECK(sent(&g, "near.h", "NEAR"), "near.h (next to sub/c.h, not in -I)");
    CHECK(sent(&g, "local.h", "LOCAL"), "local.h (next to the program: its name's folder)");
    CHECK(sent(&g, "memdep.h", "MEMDEP"), "memdep.h (an in-memory header's include)");
    CHECK(sent(&g, "dead.h", NULL), "#if 0 lines are followed (documented)");
    CHECK(!sent(&g, "mem.h", NULL), "mem.h was given in memory: not looked for");
    CHECK(!sent(&g, "missing.h", NULL), "missing.h exists nowhere");
    CHECK(!sent(&g, "no1.h", NULL) && !sent(&g, "no2.h", NULL) && !sent(&g, "no4.h", NULL),
          "names in comments are not followed");
    CHECK(sent(&g, "no3.h", NULL) == 0, "no3.h does not exist (after a comment's end)");
    CHECK(g.nh == 10, "%d headers sent, want 10", g.nh);
    nvrtc_resolved_free(&g);

    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) printf("could not remove %s\n", root);
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("PASS: the stub resolves the guest's #include lines as NVRTC would\n");
    return 0;
}
