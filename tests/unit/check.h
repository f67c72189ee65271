/* Tiny assertion helpers for the unit tests: print file:line, keep going,
 * fail the test at the end. */
#ifndef APIGEN_UNIT_CHECK_H
#define APIGEN_UNIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                                 \
    do {                                                                                \
        const char *a_ = (a), *b_ = (b);                                                \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                        \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s == \"%s\", expected \"%s\"\n", \
                    __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");    \
            check_failures++;                                                           \
        }                                                                               \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                        \
    do {                                                                                   \
        const char *h_ = (hay), *n_ = (needle);                                            \
        if (!h_ || !strstr(h_, n_)) {                                                      \
            fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: %s = \"%s\" lacks \"%s\"\n",    \
                    __FILE__, __LINE__, #hay, h_ ? h_ : "(null)", n_);                     \
            check_failures++;                                                              \
        }                                                                                  \
    } while (0)

#define CHECK_DONE()                                                              \
    do {                                                                          \
        if (check_failures)                                                       \
            fprintf(stderr, "%d check(s) failed\n", check_failures);              \
        return check_failures ? 1 : 0;                                            \
    } while (0)

#endif
