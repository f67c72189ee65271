/* What programs built on Thrust and CUB (the CUDA toolkit's own template
 * libraries, in most CUDA codes) do through the runtime: device vectors
 * (cudaMalloc, cudaFree, copies both ways), their kernels launched from
 * templates with occupancy-sized grids and the attributes CUB asks of them,
 * temporary storage, values read back (a reduction's result: a copy to the
 * host and a stream synchronize), algorithms on a stream of the program's,
 * and a pinned-memory vector. Every line it prints is the same natively and
 * forwarded; tests/gpu/run-all.sh and driver.sh compare them. */
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/memory_resource.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>
#include <thrust/unique.h>

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>

#include <vector>

#include "common.h"

/* A deterministic pseudo-random value of i (a hash, the same everywhere). */
struct hash_of {
    __host__ __device__ unsigned operator()(unsigned i) const
    {
        i ^= i >> 16;
        i *= 0x7feb352dU;
        i ^= i >> 15;
        i *= 0x846ca68bU;
        i ^= i >> 16;
        return i;
    }
};

struct is_even {
    __host__ __device__ bool operator()(unsigned v) const { return (v & 1) == 0; }
};

struct square {
    __host__ __device__ double operator()(float v) const { return (double)v * v; }
};

template <typename T> static uint64_t sum_of(const thrust::host_vector<T> &h)
{
    return fnv((const unsigned char *)h.data(), h.size() * sizeof(T));
}

int main()
{
    const int n = 1 << 22;

    /* vectors, a transform, a sort, a reduction read back */
    thrust::device_vector<unsigned> keys(n);
    thrust::transform(thrust::counting_iterator<unsigned>(0), thrust::counting_iterator<unsigned>(n),
                      keys.begin(), hash_of());
    thrust::device_vector<unsigned> sorted = keys;
    thrust::sort(sorted.begin(), sorted.end());
    bool ordered = thrust::is_sorted(sorted.begin(), sorted.end());
    unsigned long long total =
        thrust::reduce(keys.begin(), keys.end(), 0ull, thrust::plus<unsigned long long>());
    thrust::host_vector<unsigned> hs = sorted;
    std::printf("sort: %d keys, sorted %s, first %u last %u, sum %llu, fnv %016llx\n", n,
                ordered ? "yes" : "no", hs[0], hs[n - 1], total, (unsigned long long)sum_of(hs));

    /* sort by key, a scan, stream compaction, unique, count */
    thrust::device_vector<int> vals(n);
    thrust::sequence(vals.begin(), vals.end());
    thrust::device_vector<unsigned> k2 = keys;
    thrust::sort_by_key(k2.begin(), k2.end(), vals.begin());
    thrust::host_vector<int> hv = vals;
    thrust::device_vector<unsigned> small(n);
    thrust::transform(keys.begin(), keys.end(), small.begin(),
                      [] __device__(unsigned v) { return v % 1000u; });
    thrust::device_vector<unsigned long long> scanned(n);
    thrust::inclusive_scan(small.begin(), small.end(), scanned.begin(),
                           thrust::plus<unsigned long long>());
    unsigned long long last_scan = scanned.back();
    thrust::device_vector<unsigned> evens(n);
    auto evens_end = thrust::copy_if(small.begin(), small.end(), evens.begin(), is_even());
    long kept = (long)(evens_end - evens.begin());
    long n_even = (long)thrust::count_if(small.begin(), small.end(), is_even());
    thrust::sort(small.begin(), small.end());
    long distinct = (long)(thrust::unique(small.begin(), small.end()) - small.begin());
    std::printf("by key: fnv %016llx; scan last %llu; copy_if kept %ld (count_if %ld); %ld distinct\n",
                (unsigned long long)sum_of(hv), last_scan, kept, n_even, distinct);

    /* floats: transform_reduce, inner product, on a stream of the program's */
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    thrust::device_vector<float> x(n), y(n);
    thrust::transform(thrust::cuda::par.on(st), keys.begin(), keys.end(), x.begin(),
                      [] __device__(unsigned v) { return (float)(v % 4096) / 4096.0f; });
    thrust::transform(thrust::cuda::par.on(st), x.begin(), x.end(), y.begin(),
                      [] __device__(float v) { return 1.0f - v; });
    double ss = thrust::transform_reduce(thrust::cuda::par.on(st), x.begin(), x.end(), square(), 0.0,
                                         thrust::plus<double>());
    double dot = thrust::inner_product(thrust::cuda::par.on(st), x.begin(), x.end(), y.begin(), 0.0);
    CHECK(cudaStreamSynchronize(st));
    std::printf("stream: sum of squares %.6f, dot %.6f\n", ss, dot);

    /* CUB: temporary storage asked, then the work; results read back */
    unsigned *d_in = thrust::raw_pointer_cast(keys.data());
    thrust::device_vector<unsigned> out(n);
    thrust::device_vector<unsigned long long> one(1);
    size_t tmp_bytes = 0, need;
    CHECK(cub::DeviceReduce::Sum(nullptr, tmp_bytes, d_in, thrust::raw_pointer_cast(one.data()), n));
    need = tmp_bytes;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, need, d_in, thrust::raw_pointer_cast(out.data()), n));
    if (need > tmp_bytes) tmp_bytes = need;
    void *tmp = nullptr;
    CHECK(cudaMalloc(&tmp, tmp_bytes));
    CHECK(cub::DeviceReduce::Sum(tmp, need = tmp_bytes, d_in, thrust::raw_pointer_cast(one.data()), n, st));
    unsigned long long cub_sum = 0;
    CHECK(cudaMemcpyAsync(&cub_sum, thrust::raw_pointer_cast(one.data()), sizeof cub_sum,
                          cudaMemcpyDeviceToHost, st));
    CHECK(cudaStreamSynchronize(st));
    CHECK(cub::DeviceRadixSort::SortKeys(tmp, need = tmp_bytes, d_in, thrust::raw_pointer_cast(out.data()),
                                         n, 0, 32, st));
    CHECK(cudaStreamSynchronize(st));
    thrust::host_vector<unsigned> hout = out;
    std::printf("cub: sum %llu (thrust %llu), radix sort fnv %016llx (thrust's %s)\n", cub_sum, total,
                (unsigned long long)sum_of(hout), sum_of(hout) == sum_of(hs) ? "same" : "DIFFERS");

    /* CUB: histogram, flagged selection, segmented reduction */
    thrust::device_vector<int> hist(64);
    size_t hb = 0;
    const unsigned *small_p = thrust::raw_pointer_cast(small.data());
    thrust::device_vector<unsigned> mod(n);
    thrust::transform(keys.begin(), keys.end(), mod.begin(), [] __device__(unsigned v) { return v % 640u; });
    CHECK(cub::DeviceHistogram::HistogramEven(nullptr, hb, thrust::raw_pointer_cast(mod.data()),
                                              thrust::raw_pointer_cast(hist.data()), 65, 0u, 640u, n));
    void *htmp = nullptr;
    CHECK(cudaMalloc(&htmp, hb));
    CHECK(cub::DeviceHistogram::HistogramEven(htmp, hb, thrust::raw_pointer_cast(mod.data()),
                                              thrust::raw_pointer_cast(hist.data()), 65, 0u, 640u, n));
    thrust::host_vector<int> hh = hist;
    (void)small_p;
    std::vector<int> offsets(65);
    for (int s = 0; s <= 64; s++) offsets[s] = (int)((long long)n * s / 64);
    thrust::device_vector<int> d_off(offsets.begin(), offsets.end());
    thrust::device_vector<unsigned long long> seg(64);
    size_t sb = 0;
    thrust::device_vector<unsigned long long> wide(keys.begin(), keys.end());
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, sb, thrust::raw_pointer_cast(wide.data()),
                                          thrust::raw_pointer_cast(seg.data()), 64,
                                          thrust::raw_pointer_cast(d_off.data()),
                                          thrust::raw_pointer_cast(d_off.data()) + 1));
    void *stmp = nullptr;
    CHECK(cudaMalloc(&stmp, sb));
    CHECK(cub::DeviceSegmentedReduce::Sum(stmp, sb, thrust::raw_pointer_cast(wide.data()),
                                          thrust::raw_pointer_cast(seg.data()), 64,
                                          thrust::raw_pointer_cast(d_off.data()),
                                          thrust::raw_pointer_cast(d_off.data()) + 1));
    thrust::host_vector<unsigned long long> hseg = seg;
    unsigned long long seg_total = 0;
    for (int s = 0; s < 64; s++) seg_total += hseg[s];
    int hist_total = 0;
    for (int b = 0; b < 64; b++) hist_total += hh[b];
    std::printf("cub: histogram bin0 %d bin63 %d total %d; segments sum %llu (%s)\n", hh[0], hh[63],
                hist_total, seg_total, seg_total == total ? "same" : "DIFFERS");

    /* an allocation the device refuses: thrust reports it as an exception
     * with the runtime's text */
    try {
        thrust::device_vector<char> huge((size_t)1 << 50);
        std::printf("a 1 PiB device vector: allocated?\n");
    } catch (const std::exception &e) {
        std::printf("a 1 PiB device vector: %s\n", e.what());
    }
    CHECK(cudaGetLastError());
    CHECK(cudaFree(tmp));
    CHECK(cudaFree(htmp));
    CHECK(cudaFree(stmp));
    CHECK(cudaStreamDestroy(st));

    /* last: a pinned host vector that a kernel fills through its host
     * address (unified addressing: the device reaches pinned memory where
     * the host has it). Forwarded over tcp:// the device cannot reach the
     * program's memory: the kernel faults (docs/cuda.md) */
    std::fflush(stdout);
    try {
        thrust::host_vector<float, thrust::mr::stateless_resource_allocator<
                                       float, thrust::system::cuda::universal_host_pinned_memory_resource>>
            pinned(n);
        thrust::copy(x.begin(), x.end(), pinned.begin());
        double psum = 0;
        for (int i = 0; i < n; i += 4096) psum += pinned[i];
        std::printf("pinned host vector: every 4096th sums to %.6f\n", psum);
    } catch (const std::exception &e) {
        /* the context is lost: no destructor of main's vectors may run
         * (cudaFree would fail in it, and thrust terminates then) */
        std::printf("pinned host vector: %s\n", e.what());
        std::fflush(stdout);
        std::exit(1);
    }
    std::printf("done\n");
    return 0;
}
