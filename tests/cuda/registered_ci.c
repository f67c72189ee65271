/* registered_ci: cudaHostRegister(..., cudaHostRegisterMapped) memory used
 * by "kernels" through its device pointer (cudaHostGetDevicePointer), run
 * natively and through the cudart stub with the same stand-in device
 * (tests/cuda/fake_device.c: natively the device pointer is the host
 * pointer; forwarded it is a device allocation the stub keeps equal to the
 * range, specs/cudart/registered.c) and the outputs compared. The "kernels"
 * are copies and sets through the device pointer. Only what CUDA promises
 * for memory host and device do not use at the same time is checked: the
 * device sees what the host wrote before the launch, the host sees what the
 * device wrote after a synchronization, bytes the host wrote meanwhile
 * stay, and two "kernels" before one synchronization both land. Exit 1
 * when a check fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int bad_;

static void check(const char *what, cudaError_t e, cudaError_t want)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != want) {
        printf("  MISMATCH: want %s\n", cudaGetErrorName(want));
        bad_ = 1;
    }
}

static void expect(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "WRONG");
    bad_ |= !ok;
}

static int all(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

int main(void)
{
    const size_t N = (9u << 20) + 333; /* more than two of the stub's 4 MiB blocks */
    unsigned char *buf = malloc(N + 16) + 5, *out = malloc(N);
    void *d = NULL, *other = NULL;
    for (size_t i = 0; i < N; i++) buf[i] = (unsigned char)(i * 7);
    check("cudaHostRegister(cudaHostRegisterMapped)", cudaHostRegister(buf, N, cudaHostRegisterMapped),
          cudaSuccess);
    unsigned int f = 0;
    check("cudaHostGetFlags", cudaHostGetFlags(&f, buf), cudaSuccess);
    printf("flags: mapped %d\n", (f & cudaHostRegisterMapped) != 0);
    check("cudaHostGetDevicePointer", cudaHostGetDevicePointer(&d, buf, 0), cudaSuccess);
    void *d2 = NULL;
    check("cudaHostGetDevicePointer (inside)", cudaHostGetDevicePointer(&d2, buf + 1000, 0), cudaSuccess);
    expect("device pointer of an inner byte", (char *)d2 == (char *)d + 1000);
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    check("cudaPointerGetAttributes", cudaPointerGetAttributes(&a, buf), cudaSuccess);
    expect("attributes: its device pointer", a.devicePointer == d);
    check("cudaMalloc", cudaMalloc(&other, N), cudaSuccess);

    /* the device reads what the host wrote before */
    check("kernel reads (device to device copy)", cudaMemcpy(other, d, N, cudaMemcpyDeviceToDevice), cudaSuccess);
    check("cudaMemcpy", cudaMemcpy(out, other, N, cudaMemcpyDeviceToHost), cudaSuccess);
    expect("the device saw the host's bytes", !memcmp(out, buf, N));
    memset(buf + 4096 * 3 + 1, 0x11, 10);
    buf[N - 1] = 0x22;
    check("kernel reads again", cudaMemcpy(other, d, N, cudaMemcpyDeviceToDevice), cudaSuccess);
    check("cudaMemcpy", cudaMemcpy(out, other, N, cudaMemcpyDeviceToHost), cudaSuccess);
    expect("the device saw the host's later writes", !memcmp(out, buf, N));

    /* the device writes; the host writes other bytes meanwhile; a second
     * "kernel" before the synchronization must not undo the first one */
    cudaStream_t s;
    check("cudaStreamCreate", cudaStreamCreate(&s), cudaSuccess);
    check("kernel writes A", cudaMemsetAsync((char *)d + 100, 0x5a, 1000, s), cudaSuccess);
    memset(buf + 5000, 0x33, 20); /* the host, elsewhere */
    buf[1200] = 0x44;
    check("kernel writes C", cudaMemsetAsync((char *)d + (5u << 20), 0x6b, 70000, s), cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(s), cudaSuccess);
    expect("the host sees A", all(buf + 100, 1000, 0x5a));
    expect("the host sees C", all(buf + (5u << 20), 70000, 0x6b));
    expect("the host's own writes stay", all(buf + 5000, 20, 0x33) && buf[1200] == 0x44);
    check("kernel reads", cudaMemcpy(other, d, N, cudaMemcpyDeviceToDevice), cudaSuccess);
    check("cudaMemcpy", cudaMemcpy(out, other, N, cudaMemcpyDeviceToHost), cudaSuccess);
    expect("the device holds everything", !memcmp(out, buf, N));

    /* a copy into it from device memory, then a device synchronization */
    check("cudaMemset other", cudaMemset(other, 0x77, 4096), cudaSuccess);
    check("copy into it", cudaMemcpyAsync((char *)d + 8192, other, 4096, cudaMemcpyDeviceToDevice, s), cudaSuccess);
    check("cudaDeviceSynchronize", cudaDeviceSynchronize(), cudaSuccess);
    expect("the host sees the copy", all(buf + 8192, 4096, 0x77));

    /* unregistered right after a kernel: what it wrote stays */
    check("kernel writes D", cudaMemsetAsync((char *)d + 20000, 0x19, 300, s), cudaSuccess);
    check("cudaStreamSynchronize", cudaStreamSynchronize(s), cudaSuccess);
    check("cudaHostUnregister", cudaHostUnregister(buf), cudaSuccess);
    expect("D in the application's memory", all(buf + 20000, 300, 0x19));
    check("cudaStreamDestroy", cudaStreamDestroy(s), cudaSuccess);
    check("cudaFree", cudaFree(other), cudaSuccess);
    free(buf - 5);
    free(out);
    printf("%s\n", bad_ ? "FAILED" : "all checks passed");
    return bad_;
}
