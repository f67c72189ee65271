// arrays: CUDA arrays of every kind with textures and surfaces over them.
// 1D, 2D, 3D, 1D/2D layered, cubemap and layered cubemap arrays filled from
// the host (cudaMemcpy3D, cudaMemcpy2DToArray), copied between arrays
// (cudaMemcpy3D, cudaMemcpy2DArrayToArray, cudaMemcpy3DPeer) and read by
// kernels through texture objects (point sampling: exact values checked;
// linear filtering: a checksum, the hardware's own weights); surfaces (2D,
// 3D, 2D layered) written by kernels and read back (cudaMemcpy3DAsync,
// cudaMemcpy2DFromArray); every level of a mipmapped array
// (cudaGetMipmappedArrayLevel) sampled with tex2DLod; a 64 MiB 3D array
// up and back (the stub moves it in 4 MiB boxes). Prints counts of wrong
// values and checksums: the same natively and forwarded over every
// transport. tests/cuda/arrays_ci.c runs the copy calls without a GPU.
#include "common.h"

#include <cstring>
#include <vector>

static int bad_total = 0;
static void report(const char *what, size_t wrong, size_t n)
{
    std::printf("%s: %zu of %zu wrong\n", what, wrong, n);
    bad_total += wrong != 0;
}

static cudaTextureObject_t texture(cudaArray_t a, bool linear, bool normalized = false)
{
    cudaResourceDesc r{};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc t{};
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = cudaAddressModeClamp;
    t.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
    t.readMode = cudaReadModeElementType;
    t.normalizedCoords = normalized;
    cudaTextureObject_t o = 0;
    CHECK(cudaCreateTextureObject(&o, &r, &t, nullptr));
    return o;
}

static cudaSurfaceObject_t surface(cudaArray_t a)
{
    cudaResourceDesc r{};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaSurfaceObject_t o = 0;
    CHECK(cudaCreateSurfaceObject(&o, &r));
    return o;
}

static float val(size_t i) { return (float)((i * 37) % 1009) * 0.25f; }

__global__ void read1d_layered(cudaTextureObject_t t, float *out, int w, int layers)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < w)
        for (int l = 0; l < layers; l++) out[l * w + x] = tex1DLayered<float>(t, x + 0.5f, l);
}
__global__ void read2d(cudaTextureObject_t t, float *out, int w, int h, float dx)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w) out[y * w + x] = tex2D<float>(t, x + 0.5f + dx, y + 0.5f);
}
__global__ void read3d(cudaTextureObject_t t, float *out, int w, int h, int d)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x < w) out[(z * h + y) * w + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}
__global__ void read2d_layered(cudaTextureObject_t t, float *out, int w, int h, int layers)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, l = blockIdx.z;
    if (x < w) out[(l * h + y) * w + x] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}
// The centre of each face along its major axis: +x, -x, +y, -y, +z, -z.
__device__ void face_dir(int f, float *d)
{
    d[0] = d[1] = d[2] = 0.0f;
    d[f / 2] = (f & 1) ? -1.0f : 1.0f;
}
__global__ void read_cube(cudaTextureObject_t t, float *out, int layers, bool layered)
{
    int f = threadIdx.x, l = blockIdx.x;
    float d[3];
    face_dir(f, d);
    out[l * 6 + f] = layered ? texCubemapLayered<float>(t, d[0], d[1], d[2], l)
                             : texCubemap<float>(t, d[0], d[1], d[2]);
}
__global__ void write_surf2d(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w) surf2Dwrite((float)(y * w + x) * 0.5f, s, x * (int)sizeof(float), y);
}
__global__ void write_surf3d(cudaSurfaceObject_t s, int w, int h, int d)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x < w) surf3Dwrite((float)((z * h + y) * w + x) + 1.0f, s, x * (int)sizeof(float), y, z);
}
__global__ void write_surf2d_layered(cudaSurfaceObject_t s, int w, int h, int layers)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, l = blockIdx.z;
    if (x < w) surf2DLayeredwrite((float)(l * 1000 + y * w + x), s, x * (int)sizeof(float), y, l);
}
__global__ void read_lod(cudaTextureObject_t t, float *out, int levels)
{
    int l = threadIdx.x;
    if (l < levels) out[l] = tex2DLod<float>(t, 0.5f, 0.5f, (float)l);
}
__global__ void sum3d(cudaTextureObject_t t, double *out, int w, int h, int d)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    double s = 0;
    for (int z = 0; z < d; z++) s += tex3D<float4>(t, x + 0.5f, y + 0.5f, z + 0.5f).w;
    atomicAdd(out, s);
}

static const cudaChannelFormatDesc F1 = cudaCreateChannelDesc<float>();

static size_t wrong(const std::vector<float> &got, const std::vector<float> &want)
{
    size_t b = 0;
    for (size_t i = 0; i < want.size(); i++) b += got[i] != want[i];
    return b;
}

static cudaMemcpy3DParms to_array(cudaArray_t a, const void *host, size_t w, size_t h, size_t d)
{
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr((void *)host, w * sizeof(float), w, h);
    p.dstArray = a;
    p.extent = make_cudaExtent(w, h, d);
    p.kind = cudaMemcpyHostToDevice;
    return p;
}

int main()
{
    float *dout = nullptr;
    CHECK(cudaMalloc(&dout, 1 << 22));
    std::vector<float> got;
    auto fetch = [&](size_t n) {
        got.assign(n, 0.0f);
        CHECK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    };

    { // 1D layered
        const int w = 300, L = 4;
        std::vector<float> h(w * L);
        for (size_t i = 0; i < h.size(); i++) h[i] = val(i);
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &F1, make_cudaExtent(w, 0, L), cudaArrayLayered));
        cudaMemcpy3DParms p = to_array(a, h.data(), w, 1, L);
        CHECK(cudaMemcpy3D(&p));
        cudaTextureObject_t t = texture(a, false);
        read1d_layered<<<(w + 127) / 128, 128>>>(t, dout, w, L);
        CHECK(cudaGetLastError());
        fetch(h.size());
        report("1D layered texture", wrong(got, h), h.size());
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFreeArray(a));
    }
    { // 2D: cudaMemcpy2DToArray, a copy to a second array, point and linear sampling
        const int w = 200, hh = 50;
        std::vector<float> h(w * hh);
        for (size_t i = 0; i < h.size(); i++) h[i] = val(i);
        cudaArray_t a, b;
        CHECK(cudaMallocArray(&a, &F1, w, hh));
        CHECK(cudaMallocArray(&b, &F1, w, hh));
        CHECK(cudaMemcpy2DToArray(a, 0, 0, h.data(), w * sizeof(float), w * sizeof(float), hh,
                                  cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, w * sizeof(float), hh));
        cudaTextureObject_t t = texture(b, false), tl = texture(b, true);
        read2d<<<dim3((w + 127) / 128, hh), 128>>>(t, dout, w, hh, 0.0f);
        CHECK(cudaGetLastError());
        fetch(h.size());
        report("2D texture (point)", wrong(got, h), h.size());
        read2d<<<dim3((w + 127) / 128, hh), 128>>>(tl, dout, w, hh, 0.3f);
        CHECK(cudaGetLastError());
        fetch(h.size());
        std::printf("2D texture (linear): checksum %016llx\n",
                    (unsigned long long)fnv((const unsigned char *)got.data(), got.size() * 4));
        std::vector<float> back(w * hh);
        CHECK(cudaMemcpy2DFromArray(back.data(), w * sizeof(float), b, 0, 0, w * sizeof(float), hh,
                                    cudaMemcpyDeviceToHost));
        report("2D array back on the host", wrong(back, h), h.size());
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaDestroyTextureObject(tl));
        CHECK(cudaFreeArray(a));
        CHECK(cudaFreeArray(b));
    }
    { // 3D, through device memory (cudaMemcpy3DPeer from the array)
        const int w = 40, hh = 30, d = 20;
        std::vector<float> h(w * hh * d);
        for (size_t i = 0; i < h.size(); i++) h[i] = val(i);
        cudaArray_t a, b;
        CHECK(cudaMalloc3DArray(&a, &F1, make_cudaExtent(w, hh, d)));
        CHECK(cudaMalloc3DArray(&b, &F1, make_cudaExtent(w, hh, d)));
        cudaMemcpy3DParms p = to_array(a, h.data(), w, hh, d);
        CHECK(cudaMemcpy3D(&p));
        float *lin;
        CHECK(cudaMalloc(&lin, h.size() * sizeof(float)));
        cudaMemcpy3DPeerParms pp{};
        pp.srcArray = a;
        pp.dstPtr = make_cudaPitchedPtr(lin, w * sizeof(float), w, hh);
        pp.extent = make_cudaExtent(w, hh, d);
        CHECK(cudaMemcpy3DPeer(&pp));
        cudaMemcpy3DParms q{};
        q.srcPtr = make_cudaPitchedPtr(lin, w * sizeof(float), w, hh);
        q.dstArray = b;
        q.extent = make_cudaExtent(w, hh, d);
        q.kind = cudaMemcpyDeviceToDevice;
        CHECK(cudaMemcpy3DAsync(&q, 0));
        cudaTextureObject_t t = texture(b, false);
        read3d<<<dim3((w + 63) / 64, hh, d), 64>>>(t, dout, w, hh, d);
        CHECK(cudaGetLastError());
        fetch(h.size());
        report("3D texture", wrong(got, h), h.size());
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(lin));
        CHECK(cudaFreeArray(a));
        CHECK(cudaFreeArray(b));
    }
    { // 2D layered
        const int w = 64, hh = 16, L = 5;
        std::vector<float> h(w * hh * L);
        for (size_t i = 0; i < h.size(); i++) h[i] = val(i + 7);
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &F1, make_cudaExtent(w, hh, L), cudaArrayLayered));
        cudaMemcpy3DParms p = to_array(a, h.data(), w, hh, L);
        CHECK(cudaMemcpy3D(&p));
        cudaTextureObject_t t = texture(a, false);
        read2d_layered<<<dim3(1, hh, L), 64>>>(t, dout, w, hh, L);
        CHECK(cudaGetLastError());
        fetch(h.size());
        report("2D layered texture", wrong(got, h), h.size());
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFreeArray(a));
    }
    for (int layered = 0; layered < 2; layered++) { // cubemap, layered cubemap: each face its value
        const int w = 8, L = layered ? 3 : 1;
        std::vector<float> h(w * w * 6 * L), want(6 * L);
        for (int l = 0; l < L; l++)
            for (int f = 0; f < 6; f++) {
                want[l * 6 + f] = (float)(l * 10 + f);
                for (int i = 0; i < w * w; i++) h[(l * 6 + f) * w * w + i] = want[l * 6 + f];
            }
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &F1, make_cudaExtent(w, w, 6 * L),
                                cudaArrayCubemap | (layered ? cudaArrayLayered : 0)));
        cudaMemcpy3DParms p = to_array(a, h.data(), w, w, 6 * L);
        CHECK(cudaMemcpy3D(&p));
        cudaTextureObject_t t = texture(a, false, true);
        read_cube<<<L, 6>>>(t, dout, L, layered);
        CHECK(cudaGetLastError());
        fetch(want.size());
        report(layered ? "layered cubemap texture (every face)" : "cubemap texture (every face)",
               wrong(got, want), want.size());
        // one face read back by position: face 3 of the last layer
        std::vector<float> face(w * w);
        cudaMemcpy3DParms q{};
        q.srcArray = a;
        q.srcPos = make_cudaPos(0, 0, (L - 1) * 6 + 3);
        q.dstPtr = make_cudaPitchedPtr(face.data(), w * sizeof(float), w, w);
        q.extent = make_cudaExtent(w, w, 1);
        q.kind = cudaMemcpyDeviceToHost;
        CHECK(cudaMemcpy3D(&q));
        size_t b = 0;
        for (float v : face) b += v != want[(L - 1) * 6 + 3];
        report(layered ? "layered cubemap face by position" : "cubemap face by position", b, face.size());
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFreeArray(a));
    }
    { // surfaces: 2D, 3D, 2D layered, written by kernels, read back
        const int w = 48, hh = 20, d = 6;
        cudaArray_t a2, a3, al;
        CHECK(cudaMallocArray(&a2, &F1, w, hh, cudaArraySurfaceLoadStore));
        CHECK(cudaMalloc3DArray(&a3, &F1, make_cudaExtent(w, hh, d), cudaArraySurfaceLoadStore));
        CHECK(cudaMalloc3DArray(&al, &F1, make_cudaExtent(w, hh, d),
                                cudaArraySurfaceLoadStore | cudaArrayLayered));
        cudaSurfaceObject_t s2 = surface(a2), s3 = surface(a3), sl = surface(al);
        write_surf2d<<<dim3(1, hh), 64>>>(s2, w, hh);
        write_surf3d<<<dim3(1, hh, d), 64>>>(s3, w, hh, d);
        write_surf2d_layered<<<dim3(1, hh, d), 64>>>(sl, w, hh, d);
        CHECK(cudaGetLastError());
        std::vector<float> got2(w * hh), want2(w * hh), got3(w * hh * d), want3(w * hh * d),
            gotl(w * hh * d), wantl(w * hh * d);
        for (int i = 0; i < w * hh; i++) want2[i] = (float)i * 0.5f;
        for (int i = 0; i < w * hh * d; i++) want3[i] = (float)i + 1.0f;
        for (int l = 0; l < d; l++)
            for (int i = 0; i < w * hh; i++) wantl[l * w * hh + i] = (float)(l * 1000 + i);
        CHECK(cudaMemcpy2DFromArray(got2.data(), w * sizeof(float), a2, 0, 0, w * sizeof(float), hh,
                                    cudaMemcpyDeviceToHost));
        cudaMemcpy3DParms q{};
        q.srcArray = a3;
        q.dstPtr = make_cudaPitchedPtr(got3.data(), w * sizeof(float), w, hh);
        q.extent = make_cudaExtent(w, hh, d);
        q.kind = cudaMemcpyDeviceToHost;
        CHECK(cudaMemcpy3DAsync(&q, 0));
        q.srcArray = al;
        q.dstPtr = make_cudaPitchedPtr(gotl.data(), w * sizeof(float), w, hh);
        CHECK(cudaMemcpy3DAsync(&q, 0));
        CHECK(cudaStreamSynchronize(0));
        report("2D surface", wrong(got2, want2), want2.size());
        report("3D surface", wrong(got3, want3), want3.size());
        report("2D layered surface", wrong(gotl, wantl), wantl.size());
        CHECK(cudaDestroySurfaceObject(s2));
        CHECK(cudaDestroySurfaceObject(s3));
        CHECK(cudaDestroySurfaceObject(sl));
        CHECK(cudaFreeArray(a2));
        CHECK(cudaFreeArray(a3));
        CHECK(cudaFreeArray(al));
    }
    { // mipmapped: every level filled with its index, sampled with tex2DLod
        const int w = 64, levels = 5;
        cudaMipmappedArray_t m;
        CHECK(cudaMallocMipmappedArray(&m, &F1, make_cudaExtent(w, w, 0), levels));
        std::vector<float> want(levels);
        for (int l = 0; l < levels; l++) {
            cudaArray_t a;
            CHECK(cudaGetMipmappedArrayLevel(&a, m, l));
            cudaExtent e;
            CHECK(cudaArrayGetInfo(nullptr, &e, nullptr, a));
            std::printf("mipmap level %d: %zux%zu\n", l, e.width, e.height);
            std::vector<float> h(e.width * e.height, (float)(l + 1));
            want[l] = (float)(l + 1);
            CHECK(cudaMemcpy2DToArray(a, 0, 0, h.data(), e.width * sizeof(float),
                                      e.width * sizeof(float), e.height, cudaMemcpyHostToDevice));
        }
        cudaResourceDesc r{};
        r.resType = cudaResourceTypeMipmappedArray;
        r.res.mipmap.mipmap = m;
        cudaTextureDesc td{};
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.mipmapFilterMode = cudaFilterModePoint;
        td.maxMipmapLevelClamp = (float)(levels - 1);
        td.normalizedCoords = 1;
        cudaTextureObject_t t;
        CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
        read_lod<<<1, 32>>>(t, dout, levels);
        CHECK(cudaGetLastError());
        fetch(levels);
        report("mipmapped texture (every level)", wrong(got, want), want.size());
        cudaArray_t past;
        cudaError_t e = cudaGetMipmappedArrayLevel(&past, m, levels);
        std::printf("level past the last: %s\n", cudaGetErrorName(e));
        cudaGetLastError();
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFreeMipmappedArray(m));
    }
    { // 64 MiB of float4 up and back, and summed through a texture
        const int w = 256, hh = 256, d = 64;
        const size_t n = (size_t)w * hh * d;
        std::vector<float4> h(n), back(n);
        for (size_t i = 0; i < n; i++) h[i] = make_float4(val(i), val(i + 1), val(i + 2), (float)(i % 7));
        cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
        cudaArray_t a;
        CHECK(cudaMalloc3DArray(&a, &f4, make_cudaExtent(w, hh, d)));
        cudaMemcpy3DParms p{};
        p.srcPtr = make_cudaPitchedPtr(h.data(), w * sizeof(float4), w, hh);
        p.dstArray = a;
        p.extent = make_cudaExtent(w, hh, d);
        p.kind = cudaMemcpyHostToDevice;
        CHECK(cudaMemcpy3D(&p));
        cudaMemcpy3DParms q{};
        q.srcArray = a;
        q.dstPtr = make_cudaPitchedPtr(back.data(), w * sizeof(float4), w, hh);
        q.extent = make_cudaExtent(w, hh, d);
        q.kind = cudaMemcpyDeviceToHost;
        CHECK(cudaMemcpy3D(&q));
        report("64 MiB 3D array up and back", std::memcmp(h.data(), back.data(), n * sizeof(float4)) != 0, 1);
        cudaTextureObject_t t = texture(a, false);
        double *sum;
        CHECK(cudaMalloc(&sum, sizeof(double)));
        CHECK(cudaMemset(sum, 0, sizeof(double)));
        sum3d<<<dim3(w / 128, hh), 128>>>(t, sum, w, hh, d);
        CHECK(cudaGetLastError());
        double s = 0, want = 0;
        CHECK(cudaMemcpy(&s, sum, sizeof s, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) want += (double)(i % 7);
        std::printf("64 MiB 3D texture: sum %.0f, want %.0f\n", s, want);
        bad_total += s != want;
        CHECK(cudaDestroyTextureObject(t));
        CHECK(cudaFree(sum));
        CHECK(cudaFreeArray(a));
    }
    CHECK(cudaFree(dout));
    std::printf("%s\n", bad_total ? "FAILED" : "all checks passed");
    return bad_total != 0;
}
