/* --cpus GUEST:SERVER: see cpus.h. */
#define _GNU_SOURCE
#include "cpus.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool pinning;
static cpu_set_t guest_set, server_set, start_set;

/* "2", "2,3", "2-5,8": every CPU must be one this process may run on. */
static bool parse_list(const char *s, size_t len, cpu_set_t *set, char *why, size_t whylen)
{
    CPU_ZERO(set);
    char buf[256];
    if (!len || len >= sizeof buf) {
        snprintf(why, whylen, "empty or overlong CPU list");
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long lo = strtol(t, &end, 10), hi = lo;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        if (end == t || *end || lo < 0 || hi < lo || hi >= CPU_SETSIZE) {
            snprintf(why, whylen, "\"%s\" is not a CPU or a range of CPUs", t);
            return false;
        }
        for (long c = lo; c <= hi; c++) {
            if (!CPU_ISSET((int)c, &start_set)) {
                snprintf(why, whylen, "CPU %ld is not one this process may run on", c);
                return false;
            }
            CPU_SET((int)c, set);
        }
    }
    return true;
}

bool cpus_parse(const char *spec, char *why, size_t whylen)
{
    const char *colon = strchr(spec, ':');
    if (!colon) {
        snprintf(why, whylen, "want GUEST:SERVER, two CPU lists (\"2:3\", \"2-3:4-5\")");
        return false;
    }
    if (sched_getaffinity(0, sizeof start_set, &start_set) < 0) {
        snprintf(why, whylen, "cannot read this process's CPUs");
        return false;
    }
    if (!parse_list(spec, (size_t)(colon - spec), &guest_set, why, whylen) ||
        !parse_list(colon + 1, strlen(colon + 1), &server_set, why, whylen))
        return false;
    pinning = true;
    return true;
}

static void pin(const cpu_set_t *set)
{
    if (pinning && sched_setaffinity(0, sizeof *set, set) < 0)
        perror("apigen-bench: sched_setaffinity");
}

void cpus_pin_guest(void)
{
    pin(&guest_set);
}

void cpus_pin_server(void)
{
    pin(&server_set);
}

void cpus_unpin(void)
{
    pin(&start_set);
}
