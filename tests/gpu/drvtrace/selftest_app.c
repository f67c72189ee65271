/* selftest_app: calls the shim as the runtime would (dlopen, GetProcAddress,
 * export table) and checks every answer. Exit 0 on success. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "selftest: %s:%d: %s failed\n", __FILE__, __LINE__, #c); exit(1); } } while (0)

int main(int argc, char **argv)
{
    int want_driver = argc > 1 && argv[1][0] == '1';
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(h);
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*gpa)(const char *, void **, int, uint64_t, int *) =
        (int (*)(const char *, void **, int, uint64_t, int *))dlsym(h, "cuGetProcAddress_v2");
    int (*get)(const void **, const void *) = (int (*)(const void **, const void *))dlsym(h, "cuGetExportTable");
    CHECK(init && gpa && get);
    if (!want_driver) { /* no real driver: every call answers 100 */
        CHECK(init(0) == 100);
        void *p = (void *)1;
        CHECK(gpa("cuInit", &p, 12000, 0, NULL) == 100 && p == NULL);
        puts("selftest: no-driver path ok");
        return 0;
    }
    CHECK(init(0) == 0 && init(7) == 1);
    void *p = NULL;
    int q = -1;
    CHECK(gpa("cuInit", &p, 12000, 0, &q) == 0 && q == 0);
    CHECK(p == (void *)init); /* the shim's own exported stub */
    CHECK(((int (*)(unsigned))p)(0) == 0);
    CHECK(gpa("cuNothing", &p, 12000, 0, &q) == 500 && q == 1);
    CHECK(gpa("cuHidden", &p, 12000, 0, &q) == 0 && p);
    long (*hid)(long, long, long, long, long, long, long, long, double, double) =
        (long (*)(long, long, long, long, long, long, long, long, double, double))p;
    CHECK(hid(1, 2, 3, 4, 5, 6, 7, 8, 1.5, 0.25) == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 15 + 25);
    unsigned char id[16] = { 0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    const void *const *t = NULL;
    CHECK(get((const void **)&t, id) == 0 && t);
    const void *const *t2 = NULL;
    CHECK(get((const void **)&t2, id) == 0 && t2 == t); /* the same copy each time */
    CHECK((uintptr_t)t[0] == 6 * sizeof(void *));
    uint64_t out = 0;
    CHECK(((int (*)(uint64_t *))t[5])(&out) == 7 && out == 0x1122334455667788ull);
    CHECK(*(const int *)t[3] == 42 && (uintptr_t)t[4] == 0x1234); /* data words untouched */
    double (*e1)(double, long, double) = (double (*)(double, long, double))t[1];
    long (*e2)(long, long, long, long, long, long, long) = (long (*)(long, long, long, long, long, long, long))t[2];
    for (int i = 0; i < 100; i++) { /* past the per-entry log limit */
        CHECK(e1(2.5, 4, 0.5) == 10.5);
        CHECK(e2(1, 2, 3, 4, 5, 6, i) == -3 + 1000L * i);
    }
    id[0] = 0xac; /* a table without a size word */
    CHECK(get((const void **)&t, id) == 0 && t);
    CHECK(((long (*)(long, long, long, long, long, long, long))t[0])(1, 2, 3, 4, 5, 6, 7) == 6997);
    CHECK(((double (*)(double, long, double))t[1])(1.5, 2, 0.25) == 3.25 && t[2] == NULL);
    id[0] = 0;
    CHECK(get((const void **)&t, id) == 500);
    puts("selftest: traced path ok");
    return 0;
}
