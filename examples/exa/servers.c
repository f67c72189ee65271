/* Several servers (APIGEN_SERVER=url0,url1): the devices of both, server 0's
 * first; a context on each device; objects of two servers in one call get
 * exa's own errors. Natively (or over one server) it shows the one
 * library's devices. */
#include <stdio.h>
#include <string.h>

#include "exa.h"

#define N 256

int main(void)
{
    int n = 0;
    exaStatus st = exaGetDeviceCount(&n);
    printf("devices: %d (%s)\n", n, exaStatusString(st));
    if (st != EXA_SUCCESS || n < 1 || n > 8)
        return 1;
    exaContext ctx[8];
    exaBuffer buf[8];
    for (int d = 0; d < n; d++) {
        exaDeviceInfo info;
        char name[16];
        float v[N], back[N];
        double sum = 0;
        snprintf(name, sizeof name, "ctx%d", d);
        if (exaGetDeviceInfo(d, &info) != EXA_SUCCESS ||
            exaCreateContext(d, name, &ctx[d]) != EXA_SUCCESS ||
            exaCreateBuffer(ctx[d], sizeof v, &buf[d]) != EXA_SUCCESS) {
            printf("device %d: setup failed\n", d);
            return 1;
        }
        for (int i = 0; i < N; i++) v[i] = (float)(d * 1000 + i);
        st = exaWriteBuffer(buf[d], 0, sizeof v, v);
        if (st == EXA_SUCCESS) st = exaReadBuffer(buf[d], 0, sizeof back, back);
        for (int i = 0; i < N; i++) sum += back[i];
        printf("device %d: %s, %u units; context %s: %s, sum %.0f\n", d, info.name,
               info.compute_units, name, exaStatusString(st), sum);
    }
    /* the first and the last device's buffers in one call */
    exaBuffer pair[2] = {buf[0], buf[n - 1]};
    printf("exaSumBuffers(first, {first, last}): %s\n",
           exaStatusString(exaSumBuffers(buf[0], pair, 2, N)));
    /* device memory of the thread's server (0) filled by the last device's context */
    void *mem = NULL;
    st = exaMalloc(&mem, N * sizeof(float));
    if (st == EXA_SUCCESS) {
        st = exaLaunchFill(ctx[n - 1], mem, 1.0f, N);
        exaStatus f = exaFinish(ctx[n - 1]);
        printf("exaLaunchFill(last context, memory of server 0): %s\n",
               exaStatusString(st != EXA_SUCCESS ? st : f));
        exaFree(mem);
    }
    for (int d = 0; d < n; d++) {
        exaReleaseBuffer(buf[d]);
        exaDestroyContext(ctx[d]);
    }
    printf("done\n");
    return 0;
}
