#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_exa (framed mode, see fuzz_server.c):
one file per short, valid exa call sequence. Call ids from generated/exa."""
import os, re, struct, sys

here = os.path.dirname(os.path.abspath(__file__))
wire = open(os.path.join(here, '../../generated/exa/exa_wire.h')).read()
ID = {m[0]: int(m[1]) for m in re.findall(r'EXA_CALL_(\w+) = (\d+)', wire)}

class P:
    def __init__(s): s.b = b''
    def u8(s, v): s.b += struct.pack('<B', v); return s
    def u32(s, v): s.b += struct.pack('<I', v & 0xffffffff); return s
    def u64(s, v): s.b += struct.pack('<Q', v & 0xffffffffffffffff); return s
    def f32(s, v): s.b += struct.pack('<f', v); return s
    def bytes_(s, data):
        s.u64(len(data)); s.b += b'\0' * ((-len(s.b)) % 16); s.b += data; return s
    def opt(s, data): return s.u8(1).bytes_(data)
    def str_(s, t): return s.u8(1).bytes_(t.encode() + b'\0')
    def ref(s, k): return s.u64(0xfeed000000000000 | k)  # the k-th harvested value

def rec(fn, p, async_=False):
    return struct.pack('<BBH', ID[fn], 1 if async_ else 0, len(p.b)) + p.b

seeds = {
  'devices': [rec('exaGetDeviceCount', P().u8(1)), rec('exaGetDeviceInfo', P().u32(1).u8(1)),
              rec('exaGetVersion', P().u8(1).u8(1))],
  'context': [rec('exaCreateContext', P().u32(0).str_('ctx').u8(1)),
              rec('exaGetContextName', P().ref(3).u64(16).u8(1).u8(1)),
              rec('exaFinish', P().ref(3)), rec('exaDestroyContext', P().ref(3))],
  'props': [rec('exaCreateContextWithProperties', P().u8(1).bytes_(struct.pack('<qqqq', 1, 1, 0, 0)).u8(1))],
  'buffer': [rec('exaCreateContext', P().u32(1).str_('b').u8(1)),
             rec('exaCreateBuffer', P().ref(3).u64(64).u8(1)),
             rec('exaWriteBuffer', P().ref(9).u64(0).u64(8).opt(b'abcdefgh')),
             rec('exaReadBuffer', P().ref(9).u64(0).u64(8).u8(1)),
             rec('exaEnqueueWrite', P().ref(9).u32(0).u64(8).u64(4).opt(b'wxyz'), True),
             rec('exaSumBuffers', P().ref(9).u32(1).u64(4).u8(1).u64(1).ref(9)),
             rec('exaGetBufferSize', P().ref(9).u8(1)),
             rec('exaReleaseBuffer', P().ref(9))],
  'device': [rec('exaMalloc', P().u64(64).u8(1)),
             rec('exaMemcpy', P().u64(16).u32(1).ref(3).opt(b'0123456789abcdef')),
             rec('exaMemcpy', P().u64(16).u32(2).u8(1).ref(3)),
             rec('exaMemcpy', P().u64(8).u32(3).ref(3).ref(3)),
             rec('exaFree', P().ref(3)), rec('exaFree', P().ref(3))],
  'kernels': [rec('exaCreateContext', P().u32(0).str_('k').u8(1)),
              rec('exaMalloc', P().u64(64).u8(1)),
              rec('exaLaunchFill', P().ref(3).ref(9).f32(1.5).u64(16), True),
              rec('exaLaunchSaxpy', P().ref(3).u32(1).u32(1).u32(1).f32(2.0).ref(9).ref(9).u64(16), True),
              rec('exaReduceSum', P().ref(3).ref(9).u64(16).u8(1)),
              rec('exaSetNotify', P().ref(3).u64(7)),
              rec('exaFinish', P().ref(3))],
}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'corpus/exa')
os.makedirs(out, exist_ok=True)
for name, recs in seeds.items():
    open(os.path.join(out, name), 'wb').write(b'\0' + b''.join(recs))
open(os.path.join(out, 'raw'), 'wb').write(b'\1' + b'APGN')
