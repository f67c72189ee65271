# cuda.core / cuda.bindings (NVIDIA's cuda-python): NVRTC program compiled
# to a cubin, loaded as a library (cuLibraryLoadData), launched with a
# launch config, on a stream; the driver's own Python bindings. Driver mode
# (NVRTC runs in the guest).
import numpy as np
from common import digest, section, done
from cuda.bindings import driver as drv

def check(r):
    err = r[0]
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(str(err))
    return r[1:] if len(r) > 2 else (r[1] if len(r) == 2 else None)

check(drv.cuInit(0))
section("count", lambda: check(drv.cuDeviceGetCount()))
section("version", lambda: check(drv.cuDriverGetVersion()) >= 13000)
def core():
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    code = r'''
    extern "C" __global__ void fill(float *y, float a, size_t n) {
        size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * (float)i;
    }'''
    arch = "sm_" + "".join(str(v) for v in dev.compute_capability)
    mod = Program(code, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin")
    k = mod.get_kernel("fill")
    n = 1 << 20
    buf = dev.allocate(n * 4, stream=s)
    launch(s, LaunchConfig(grid=(n + 255) // 256, block=256), k, buf, np.float32(0.25), np.uint64(n))
    s.sync()
    host = np.empty(n, dtype=np.float32)
    check(drv.cuMemcpyDtoH(host.ctypes.data, int(buf.handle), n * 4))
    buf.close()
    return digest(host)
section("core_launch", core)
done()
