// capture_copy: copies inside a stream capture. Between pinned
// (cudaMallocHost) memory and the device they become graph nodes that run
// at every launch of the graph; from or to pageable (malloc) memory the
// runtime says what it allows. Sizes cover the forwarded copy paths (a few
// bytes in the call, one staging slot, pipelined staging). Then pitched
// copies (host rows with gaps that must survive), copies to and from a
// symbol and to and from a CUDA array, captured the same way. Prints the
// errors and what the graph's launches left in host memory: the output is
// the same natively and forwarded.
#include "common.h"

#include <cstdint>
#include <cstring>

__global__ void add_one(unsigned char *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i]++;
}

// Captures host -> device, +1, device -> host on s; launches the graph twice.
static void capture(const char *what, unsigned char *in, unsigned char *out, size_t n,
                    cudaStream_t s)
{
    unsigned char *d = nullptr;
    CHECK(cudaMalloc(&d, n));
    for (size_t i = 0; i < n; i++) in[i] = (unsigned char)(i * 7 + 1);
    std::memset(out, 0, n);
    cudaGraph_t g = nullptr;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaError_t e1 = cudaMemcpyAsync(d, in, n, cudaMemcpyHostToDevice, s);
    add_one<<<64, 256, 0, s>>>(d, n);
    cudaError_t e2 = cudaMemcpyAsync(out, d, n, cudaMemcpyDeviceToHost, s);
    cudaError_t e3 = cudaStreamEndCapture(s, &g);
    cudaError_t last = cudaGetLastError();
    std::printf("%-8s %8zu bytes: H2D %s, D2H %s, end %s, last %s", what, n, cudaGetErrorName(e1),
                cudaGetErrorName(e2), cudaGetErrorName(e3), cudaGetErrorName(last));
    if (e3 == cudaSuccess && g) {
        cudaGraphExec_t x = nullptr;
        CHECK(cudaGraphInstantiate(&x, g, 0));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        uint64_t h1 = fnv(out, n);
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)(in[i] + 3); // the next launch reads these
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            if (out[i] != (unsigned char)(in[i] + 1)) bad++;
        std::printf("; launches: %016llx, then %zu wrong", (unsigned long long)h1, bad);
        CHECK(cudaGraphExecDestroy(x));
    }
    std::printf("\n");
    if (g) CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(d));
}

__device__ unsigned char sym_bytes[16];

__global__ void add_one_sym()
{
    sym_bytes[threadIdx.x]++;
}

// Pitched, symbol and array copies captured on s, host memory from alloc
// (pinned or pageable); the graph launched twice, the inputs changed in
// between: each output must follow its input at every launch, and the gaps
// between host rows must keep their bytes.
static void capture_shapes(const char *what, bool pinned, cudaStream_t s)
{
    const size_t W = 37, H = 5, SP = 48, DP = 64;
    unsigned char *in, *out, *out_arr, sym_in[16], sym_out[16];
    unsigned char *pin_sym_in = nullptr, *pin_sym_out = nullptr;
    if (pinned) {
        CHECK(cudaMallocHost(&in, SP * H));
        CHECK(cudaMallocHost(&out, DP * H));
        CHECK(cudaMallocHost(&out_arr, DP * H));
        CHECK(cudaMallocHost(&pin_sym_in, 16));
        CHECK(cudaMallocHost(&pin_sym_out, 16));
    } else {
        in = (unsigned char *)std::malloc(SP * H);
        out = (unsigned char *)std::malloc(DP * H);
        out_arr = (unsigned char *)std::malloc(DP * H);
        if (!in || !out || !out_arr) std::exit(3);
    }
    unsigned char *si = pinned ? pin_sym_in : sym_in, *so = pinned ? pin_sym_out : sym_out;
    for (size_t i = 0; i < SP * H; i++) in[i] = (unsigned char)(i * 5 + 3);
    for (size_t i = 0; i < 16; i++) si[i] = (unsigned char)(i * 9);
    std::memset(out, 0xee, DP * H);
    std::memset(out_arr, 0xdd, DP * H);
    std::memset(so, 0, 16);
    unsigned char *d = nullptr;
    size_t dp = 0;
    CHECK(cudaMallocPitch((void **)&d, &dp, W, H));
    cudaArray_t arr = nullptr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned char>();
    CHECK(cudaMallocArray(&arr, &desc, W, H));

    cudaGraph_t g = nullptr;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaError_t e[7];
    e[0] = cudaMemcpy2DAsync(d, dp, in, SP, W, H, cudaMemcpyHostToDevice, s);
    add_one<<<4, 64, 0, s>>>(d, dp * H);
    e[1] = cudaMemcpy2DAsync(out, DP, d, dp, W, H, cudaMemcpyDeviceToHost, s);
    e[2] = cudaMemcpyToSymbolAsync(sym_bytes, si, 16, 0, cudaMemcpyHostToDevice, s);
    add_one_sym<<<1, 16, 0, s>>>();
    e[3] = cudaMemcpyFromSymbolAsync(so, sym_bytes, 16, 0, cudaMemcpyDeviceToHost, s);
    e[4] = cudaMemcpy2DToArrayAsync(arr, 0, 0, in, SP, W, H, cudaMemcpyHostToDevice, s);
    e[5] = cudaMemcpy2DFromArrayAsync(out_arr, DP, arr, 0, 0, W, H, cudaMemcpyDeviceToHost, s);
    e[6] = cudaStreamEndCapture(s, &g);
    cudaError_t last = cudaGetLastError();
    std::printf("%-8s shapes: 2D %s/%s, symbol %s/%s, array %s/%s, end %s, last %s", what,
                cudaGetErrorName(e[0]), cudaGetErrorName(e[1]), cudaGetErrorName(e[2]),
                cudaGetErrorName(e[3]), cudaGetErrorName(e[4]), cudaGetErrorName(e[5]),
                cudaGetErrorName(e[6]), cudaGetErrorName(last));
    if (e[6] == cudaSuccess && g) {
        cudaGraphExec_t x = nullptr;
        CHECK(cudaGraphInstantiate(&x, g, 0));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        uint64_t h1 = fnv(out, DP * H) ^ fnv(so, 16) * 3 ^ fnv(out_arr, DP * H) * 7;
        for (size_t i = 0; i < SP * H; i++) in[i] = (unsigned char)(in[i] + 3);
        for (size_t i = 0; i < 16; i++) si[i] = (unsigned char)(si[i] + 3);
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        size_t bad2d = 0, gaps = 0, badsym = 0, badarr = 0;
        for (size_t y = 0; y < H; y++)
            for (size_t x2 = 0; x2 < DP; x2++) {
                unsigned char o = out[y * DP + x2], a = out_arr[y * DP + x2];
                if (x2 < W) {
                    bad2d += o != (unsigned char)(in[y * SP + x2] + 1);
                    badarr += a != in[y * SP + x2];
                } else {
                    gaps += (o != 0xee) + (a != 0xdd);
                }
            }
        for (size_t i = 0; i < 16; i++) badsym += so[i] != (unsigned char)(si[i] + 1);
        std::printf("; launches: %016llx, then wrong: 2D %zu, symbol %zu, array %zu, gaps %zu",
                    (unsigned long long)h1, bad2d, badsym, badarr, gaps);
        CHECK(cudaGraphExecDestroy(x));
    }
    std::printf("\n");
    if (g) CHECK(cudaGraphDestroy(g));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d));
    if (pinned) {
        CHECK(cudaFreeHost(in));
        CHECK(cudaFreeHost(out));
        CHECK(cudaFreeHost(out_arr));
        CHECK(cudaFreeHost(pin_sym_in));
        CHECK(cudaFreeHost(pin_sym_out));
    } else {
        std::free(in);
        std::free(out);
        std::free(out_arr);
    }
}

int main()
{
    const size_t sizes[] = {16, 64 << 10, (size_t)9 << 20};
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (size_t n : sizes) {
        unsigned char *pin_in, *pin_out;
        CHECK(cudaMallocHost(&pin_in, n));
        CHECK(cudaMallocHost(&pin_out, n));
        capture("pinned", pin_in, pin_out, n, s);
        CHECK(cudaFreeHost(pin_in));
        CHECK(cudaFreeHost(pin_out));
        unsigned char *pg_in = (unsigned char *)std::malloc(n), *pg_out = (unsigned char *)std::malloc(n);
        if (!pg_in || !pg_out) return 3;
        capture("pageable", pg_in, pg_out, n, s);
        std::free(pg_in);
        std::free(pg_out);
    }
    capture_shapes("pinned", true, s);
    capture_shapes("pageable", false, s);
    // the stream still works after whatever the runtime said above
    unsigned char *d = nullptr, v = 41;
    CHECK(cudaMalloc(&d, 1));
    CHECK(cudaMemcpyAsync(d, &v, 1, cudaMemcpyHostToDevice, s));
    add_one<<<1, 1, 0, s>>>(d, 1);
    CHECK(cudaMemcpyAsync(&v, d, 1, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("after: %d\n", v);
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
