/* Images and samplers: a 2D image written from the host, a kernel that
 * samples it (sampler and image kernel arguments) into a second image, read
 * back with an explicit row pitch, a mapped image, and a reduction. */
#include "common.h"

static const char *src =
    "__kernel void blur(__read_only image2d_t in, __write_only image2d_t out, sampler_t s) {\n"
    "    int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "    float4 acc = (float4)(0.0f);\n"
    "    for (int dy = -1; dy <= 1; dy++)\n"
    "        for (int dx = -1; dx <= 1; dx++) acc += read_imagef(in, s, p + (int2)(dx, dy));\n"
    "    write_imagef(out, p, acc / 9.0f);\n"
    "}\n"
    "__kernel void sum(__global const float *x, __global float *partial, __local float *tmp) {\n"
    "    size_t l = get_local_id(0), n = get_local_size(0);\n"
    "    tmp[l] = x[get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (size_t s = n / 2; s > 0; s /= 2) {\n"
    "        if (l < s) tmp[l] += tmp[l + s];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (l == 0) partial[get_group_id(0)] = tmp[0];\n"
    "}\n";

int main(void)
{
    enum { W = 32, H = 16 };
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    first_device(&plat, &dev);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    cl_uint nfmt = 0;
    CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &nfmt));
    printf("image formats: %s\n", nfmt > 0 ? "some" : "none");
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = W;
    desc.image_height = H;
    cl_mem in = clCreateImage(ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
    CHECK(err);
    cl_mem out = clCreateImage(ctx, CL_MEM_WRITE_ONLY, &fmt, &desc, NULL, &err);
    CHECK(err);
    size_t w = 0, es = 0;
    CHECK(clGetImageInfo(in, CL_IMAGE_WIDTH, sizeof w, &w, NULL));
    CHECK(clGetImageInfo(in, CL_IMAGE_ELEMENT_SIZE, sizeof es, &es, NULL));
    printf("image width %zu, element size %zu\n", w, es);
    static float pix[H][W][4], res[H][W + 3][4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++)
                pix[y][x][c] = (float)((x * 3 + y * 5 + c) % 17);
    size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    CHECK(clEnqueueWriteImage(q, in, CL_TRUE, origin, region, 0, 0, pix, 0, NULL, NULL));
    cl_sampler smp = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
    CHECK(err);
    cl_context sctx;
    CHECK(clGetSamplerInfo(smp, CL_SAMPLER_CONTEXT, sizeof sctx, &sctx, NULL));
    printf("sampler context matches: %s\n", sctx == ctx ? "yes" : "no");
    cl_program prog = build(ctx, dev, src);
    cl_kernel blur = clCreateKernel(prog, "blur", &err);
    CHECK(err);
    CHECK(clSetKernelArg(blur, 0, sizeof in, &in));
    CHECK(clSetKernelArg(blur, 1, sizeof out, &out));
    CHECK(clSetKernelArg(blur, 2, sizeof smp, &smp));
    size_t g[2] = {W, H};
    CHECK(clEnqueueNDRangeKernel(q, blur, 2, NULL, g, NULL, 0, NULL, NULL));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W + 3; x++)
            res[y][x][0] = -1.0f;
    /* rows of W + 3 pixels: the 3 padding pixels of each row stay as they are */
    CHECK(clEnqueueReadImage(q, out, CL_TRUE, origin, region, (W + 3) * 4 * sizeof(float), 0,
                             res, 0, NULL, NULL));
    double s = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            s += res[y][x][0] + res[y][x][1] + res[y][x][2] + res[y][x][3];
    printf("blur: checksum %.4f, res[3][5] = %.4f %.4f, padding %.1f\n", s, res[3][5][0],
           res[3][5][3], res[2][W + 1][0]);

    size_t rp = 0;
    size_t morg[3] = {4, 2, 0}, mreg[3] = {3, 2, 1};
    float *m = clEnqueueMapImage(q, in, CL_TRUE, CL_MAP_READ, morg, mreg, &rp, NULL, 0, NULL,
                                 NULL, &err);
    CHECK(err);
    printf("mapped image: (4,2) = %.1f, (6,3) = %.1f\n", m[0], m[(rp / sizeof(float)) + 2 * 4]);
    CHECK(clEnqueueUnmapMemObject(q, in, m, 0, NULL, NULL));

    /* reduction */
    enum { N = 4096, L = 64 };
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 100) * 0.25f;
    cl_mem dx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    CHECK(err);
    cl_mem dp = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, (N / L) * sizeof(float), NULL, &err);
    CHECK(err);
    cl_kernel sum = clCreateKernel(prog, "sum", &err);
    CHECK(err);
    CHECK(clSetKernelArg(sum, 0, sizeof dx, &dx));
    CHECK(clSetKernelArg(sum, 1, sizeof dp, &dp));
    CHECK(clSetKernelArg(sum, 2, L * sizeof(float), NULL));
    size_t gs = N, ls = L;
    CHECK(clEnqueueNDRangeKernel(q, sum, 1, NULL, &gs, &ls, 0, NULL, NULL));
    float part[N / L];
    CHECK(clEnqueueReadBuffer(q, dp, CL_TRUE, 0, sizeof part, part, 0, NULL, NULL));
    double tot = 0, ref = 0;
    for (int i = 0; i < N / L; i++)
        tot += part[i];
    for (int i = 0; i < N; i++)
        ref += x[i];
    printf("reduction: %.2f (CPU %.2f)\n", tot, ref);

    /* a 1D image array: 3 images of 5 RGBA8 texels, written and read back
     * with an explicit slice pitch (padding between the images) */
    {
        cl_image_format f8 = {CL_RGBA, CL_UNSIGNED_INT8};
        cl_image_desc d1 = {CL_MEM_OBJECT_IMAGE1D_ARRAY, 5, 0, 0, 3, 0, 0, 0, 0, {NULL}};
        cl_mem arr = clCreateImage(ctx, CL_MEM_READ_WRITE, &f8, &d1, NULL, &err);
        CHECK(err);
        unsigned char src8[3 * 24], dst8[3 * 24];
        for (int i = 0; i < (int)sizeof src8; i++)
            src8[i] = (unsigned char)(i * 7);
        memset(dst8, 0xee, sizeof dst8);
        size_t o1[3] = {0, 0, 0}, r1[3] = {5, 3, 1}, o2[3] = {1, 1, 0}, r2[3] = {3, 2, 1};
        CHECK(clEnqueueWriteImage(q, arr, CL_TRUE, o1, r1, 0, 24, src8, 0, NULL, NULL));
        CHECK(clEnqueueReadImage(q, arr, CL_TRUE, o2, r2, 0, 24, dst8, 0, NULL, NULL));
        unsigned h = 0;
        for (int i = 0; i < (int)sizeof dst8; i++)
            h = h * 31 + dst8[i];
        printf("1D image array: texel[1][1] = %u %u %u %u, hash %08x\n", dst8[0], dst8[1],
               dst8[2], dst8[3], h);
        clReleaseMemObject(arr);
    }

    /* images created from host memory (CL_MEM_COPY_HOST_PTR / USE_HOST_PTR)
     * with padded rows and slices: read back packed */
    {
        enum { IW = 5, IH = 3, ID = 2, RP = 6 * 4, SP = RP * (IH + 1) };
        static unsigned char host[SP * ID + 64], back[IW * IH * ID * 4];
        for (int i = 0; i < (int)sizeof host; i++)
            host[i] = (unsigned char)(i * 13 + 1);
        cl_image_format f8 = {CL_RGBA, CL_UNSIGNED_INT8};
        cl_image_desc d2 = {CL_MEM_OBJECT_IMAGE2D, IW, IH, 0, 0, RP, 0, 0, 0, {NULL}};
        cl_image_desc d3 = {CL_MEM_OBJECT_IMAGE3D, IW, IH, ID, 0, RP, SP, 0, 0, {NULL}};
        cl_image_desc da = {CL_MEM_OBJECT_IMAGE1D_ARRAY, IW, 0, 0, 3, RP, RP, 0, 0, {NULL}};
        struct {
            const char *name;
            cl_mem_flags flags;
            const cl_image_desc *d;
            size_t region[3];
        } cases[] = {
            {"2D copy", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &d2, {IW, IH, 1}},
            {"2D use", CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &d2, {IW, IH, 1}},
            {"3D copy", CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &d3, {IW, IH, ID}},
            {"1D array copy", CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &da, {IW, 3, 1}},
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            cl_mem im = clCreateImage(ctx, cases[k].flags, &f8, cases[k].d, host, &err);
            CHECK(err);
            memset(back, 0xee, sizeof back);
            size_t o0[3] = {0, 0, 0};
            CHECK(clEnqueueReadImage(q, im, CL_TRUE, o0, cases[k].region, 0, 0, back, 0, NULL,
                                     NULL));
            unsigned hh = 0;
            for (int i = 0; i < (int)sizeof back; i++)
                hh = hh * 31 + back[i];
            printf("image from host memory, %s: first texel %u %u %u %u, hash %08x\n",
                   cases[k].name, back[0], back[1], back[2], back[3], hh);
            clReleaseMemObject(im);
        }
        /* the OpenCL 1.1 entry points */
        cl_mem i2 = clCreateImage2D(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f8, IW, IH, RP,
                                    host, &err);
        CHECK(err);
        cl_mem i3 = clCreateImage3D(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f8, IW, IH, ID,
                                    RP, SP, host, &err);
        CHECK(err);
        size_t o0[3] = {0, 0, 0}, r3[3] = {IW, IH, ID}, o1[3] = {2, 1, 1}, r1[3] = {1, 1, 1};
        size_t o2[3] = {2, 1, 0};
        unsigned char t2[4], t3[4];
        CHECK(clEnqueueReadImage(q, i2, CL_TRUE, o2, r1, 0, 0, t2, 0, NULL, NULL));
        CHECK(clEnqueueReadImage(q, i3, CL_TRUE, o1, r1, 0, 0, t3, 0, NULL, NULL));
        memset(back, 0, sizeof back);
        CHECK(clEnqueueReadImage(q, i3, CL_TRUE, o0, r3, 0, 0, back, 0, NULL, NULL));
        printf("clCreateImage2D/3D from host memory: (2,1) %u %u, (2,1,1) %u %u, 3D %s\n", t2[0],
               t2[3], t3[0], t3[3],
               back[((1 * IH + 1) * IW + 2) * 4] == host[SP + RP + 8] ? "matches" : "differs");
        clReleaseMemObject(i2);
        clReleaseMemObject(i3);
        /* host_ptr without the flags (a row pitch below the row is refused
         * forwarded, CL_INVALID_IMAGE_DESCRIPTOR, but PoCL takes it) */
        cl_mem bad = clCreateImage(ctx, CL_MEM_READ_ONLY, &f8, &d2, host, &err);
        printf("host_ptr without COPY/USE: %s (%d)\n", bad ? "created" : "refused", err);
        if (bad)
            clReleaseMemObject(bad);
    }

    /* the context's properties name the application's platform */
    {
        cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
        cl_context c2 = clCreateContext(props, 1, &dev, NULL, NULL, &err);
        CHECK(err);
        cl_context_properties back[8] = {0};
        size_t n = 0;
        CHECK(clGetContextInfo(c2, CL_CONTEXT_PROPERTIES, sizeof back, back, &n));
        printf("context properties: %zu bytes, platform %s\n", n,
               back[0] == CL_CONTEXT_PLATFORM && back[1] == (cl_context_properties)plat
                   ? "the application's" : "other");
        clReleaseContext(c2);
    }

    /* sub-devices by counts (when the device can be partitioned so) */
    {
        cl_device_partition_property kinds[8] = {0};
        size_t n = 0;
        CHECK(clGetDeviceInfo(dev, CL_DEVICE_PARTITION_PROPERTIES, sizeof kinds, kinds, &n));
        cl_uint cu = 0;
        CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
        int by_counts = 0;
        for (size_t i = 0; i < n / sizeof kinds[0]; i++)
            by_counts |= kinds[i] == CL_DEVICE_PARTITION_BY_COUNTS;
        if (by_counts && cu >= 2) {
            cl_device_partition_property pp[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1, 1,
                                                 CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
            cl_device_id subs[2];
            cl_uint nsub = 0;
            CHECK(clCreateSubDevices(dev, pp, 2, subs, &nsub));
            cl_uint c0 = 0, c1 = 0;
            CHECK(clGetDeviceInfo(subs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof c0, &c0, NULL));
            CHECK(clGetDeviceInfo(subs[1], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof c1, &c1, NULL));
            printf("sub-devices by counts: %u (%u and %u compute units)\n", nsub, c0, c1);
            clReleaseDevice(subs[0]);
            clReleaseDevice(subs[1]);
        } else {
            printf("sub-devices by counts: not supported\n");
        }
    }

    clReleaseKernel(sum);
    clReleaseKernel(blur);
    clReleaseProgram(prog);
    clReleaseSampler(smp);
    clReleaseMemObject(dx);
    clReleaseMemObject(dp);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("done\n");
    return 0;
}
