# Natively, on the GPU machine: what the driver's CONTEXT_IDENTITY [51] object holds for the
# NULL stream and a created stream (every word; device addresses named by cuMemGetAddressRange)
# and what [39] answers (docs/export-tables.md; docs/gpu-runs/2026-11-29.md session 29, call 4).
#   python3 tests/gpu/exptab/context_object_probe.py
import ctypes as C
cu = C.CDLL("libcuda.so.1")
def ok(r, what):
    if r: print(what, "failed", r)
ok(cu.cuInit(0), "init")
dev = C.c_int(); ok(cu.cuDeviceGet(C.byref(dev), 0), "dev")
ctx = C.c_void_p(); ok(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain"); ok(cu.cuCtxSetCurrent(ctx), "set")
t = C.c_void_p(); uuid = (C.c_ubyte * 16)(*bytes.fromhex("21318c60971432488ca641ff7324c8f2"))
ok(cu.cuGetExportTable(C.byref(t), uuid), "table")
words = (C.c_uint64 * 93).from_address(t.value)
get = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.POINTER(C.c_void_p))(words[51])
query = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.POINTER(C.c_uint64))(words[39])
s = C.c_void_p(); ok(cu.cuStreamCreate(C.byref(s), 1), "stream")
buf = C.c_void_p(); ok(cu.cuMemAlloc_v2(C.byref(buf), 1 << 20), "alloc")
for name, st in (("null", None), ("stream", s)):
    o = C.c_void_p(); r = get(ctx, st, C.byref(o)); v = C.c_uint64(); r2 = query(ctx, o, C.byref(v))
    print(name, "[51]", r, hex(o.value or 0), "[39]", r2, v.value)
    ws = (C.c_uint64 * 64).from_address(o.value)
    for i, w in enumerate(ws):
        if not w: continue
        base = C.c_uint64(); size = C.c_size_t()
        rr = cu.cuMemGetAddressRange_v2(C.byref(base), C.byref(size), C.c_uint64(w))
        print("  word %d: %#x%s" % (i, w, " device range %#x + %d" % (base.value, size.value) if rr == 0 else ""))
