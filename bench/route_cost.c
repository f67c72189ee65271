/* bench/route_cost.c: what the several-servers routing adds to a call when
 * there is one server (docs/performance.md): ns per apigen_route_id,
 * apigen_route_dev and apigen_dev_note, the calls a generated stub makes
 * before apigen_call_begin_on. Not built by CMake (links the guest runtime):
 *   gcc -O2 -Iruntime -Itransports bench/route_cost.c build/runtime/libapigen_guest.a \
 *       build/transports/libapigen_transport.a -lssl -lcrypto -lpthread -ldl -o route_cost
 *   APIGEN_SERVER=unix:///tmp/x.sock ./route_cost [CALLS]
 * (under valgrind --tool=callgrind: instructions per call, whatever the load) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "apigen_rt.h"
static const apigen_api api = {.name = "x"};
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 20000000; /* calls per measurement */
    volatile int sink = 0;
    (void)apigen_server_count(&api);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (int i = 0; i < n; i++) sink += apigen_route_id(&api, 0x1234500000001ull + (unsigned)i);
        double t1 = now();
        for (int i = 0; i < n; i++) sink += apigen_route_dev(&api, 0x7f0000000000ull + (unsigned)i);
        double t2 = now();
        for (int i = 0; i < n; i++) { apigen_dev_note(&api, 0, 0x1000, 8); }
        double t3 = now();
        printf("route_id %.2f ns, route_dev %.2f ns, dev_note %.2f ns\n", (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n);
    }
    return sink == 42;
}
