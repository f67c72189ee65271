#!/usr/bin/env python3
"""Records fuzz seeds (framed mode of fuzz_server.c) from real programs:
a tcp proxy (no descriptors passed, as on unix sockets) between a forwarded program and apigen-server-<api>
writes the guest's frames on its busiest connection (the calls; the
other one carries callbacks) as records
[u8 call][u8 flags][u16 len][payload]; in a request, the server's ids of the
session (salt << 32 | n, salt from the session key) become 0xfeec....n and
guest-assigned ids (bit 63 | salt << 32 | n) 0xfeef....n: fuzz_server.c
puts back its own session's, so the fuzzer's server sees live ids.

  record_seeds.py SERVER STUB_DIR OUT_DIR NAME PROGRAM [ARGS...]

Used for tests/fuzz/corpus/opencl (see tests/fuzz/CMakeLists.txt)."""
import os, re, socket, struct, subprocess, sys, tempfile, threading, time

server, stub, out, name, prog = sys.argv[1:6]
args = sys.argv[6:]
tmp = tempfile.mkdtemp()
log = os.path.join(tmp, 'server.log')
env = {k: v for k, v in os.environ.items() if k not in ('LD_LIBRARY_PATH', 'APIGEN_SERVER')}
srv = subprocess.Popen([server, '--listen', 'tcp://127.0.0.1:0', '--isolation', 'thread'], env=env,
                       stdout=open(log, 'w'), stderr=subprocess.STDOUT)
port = None
for _ in range(200):
    m = re.search(r'listening on tcp://127.0.0.1:(\d+)', open(log).read())
    if m:
        port = int(m.group(1))
        break
    time.sleep(0.05)

conns = []
lock = threading.Lock()

salt = [None]

def key_salt(k):
    s = (k[0] << 24 | k[1] << 16 | k[2] << 8 | k[3]) ^ (k[4] << 8 | k[5])
    return (s & 0x7fffffff) | 0x10000

def substitute(p):
    p = bytearray(p)
    for i in range(0, len(p) - 7):
        v = struct.unpack_from('<Q', p, i)[0]
        if salt[0] is not None and (v >> 32) & 0x7fffffff == salt[0]:
            struct.pack_into('<Q', p, i, (0xfeef if v >> 63 else 0xfeec) << 48 | (v & 0xffffffff))
    return bytes(p)

def frames(sock, buf):
    """yields (header bytes, payload) read from sock; buf collects raw bytes."""
    data = b''
    while True:
        while len(data) < 32:
            b = sock.recv(65536)
            if not b:
                return
            buf(b)
            data += b
        plen = struct.unpack_from('<I', data, 24)[0]
        while len(data) < 32 + plen:
            b = sock.recv(1 << 20)
            if not b:
                return
            buf(b)
            data += b
        yield data[:32], data[32:32 + plen]
        data = data[32 + plen:]

def handle(g):
    rec = True
    records = []
    with lock:
        conns.append(records)
    s = socket.create_connection(('127.0.0.1', port))

    def up():  # guest -> server
        for h, p in frames(g, lambda b: None):
            flags, call = struct.unpack_from('<HI', h, 6)
            if rec and not flags & 4:  # not the handshake: the fuzzer sends its own
                with lock:
                    records.append((call, flags, p))
            s.sendall(h + p)  # after recording: its reply comes after it
        s.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=up, daemon=True)
    t.start()
    for h, p in frames(s, lambda b: g.sendall(b)):
        flags = struct.unpack_from('<H', h, 6)[0]
        if flags & 4 and flags & 1 and len(p) >= 16:  # the handshake's reply: the session key
            salt[0] = key_salt(p[-16:])
            continue
    t.join()
    g.close()

ls = socket.socket()
ls.bind(('127.0.0.1', 0))
ls.listen(16)

def acceptor():
    while True:
        try:
            g, _ = ls.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(g,), daemon=True).start()

threading.Thread(target=acceptor, daemon=True).start()
penv = dict(env, LD_LIBRARY_PATH=stub, APIGEN_SERVER='tcp://127.0.0.1:%d' % ls.getsockname()[1])
rc = subprocess.call([prog] + args, env=penv, stdout=subprocess.DEVNULL)
time.sleep(0.3)
srv.terminate()
srv.wait()

records = max(conns, key=len) if conns else []
out_b = bytearray(b'\0')
n = 0
for r in records:
    call, flags, p = r
    p = substitute(p)[:65535]
    if call > 255:
        continue
    out_b += struct.pack('<BBH', call, 1 if flags & 2 else 0, len(p)) + p
    n += 1
os.makedirs(out, exist_ok=True)
open(os.path.join(out, name), 'wb').write(out_b)
print(f'{name}: {n} calls, {len(out_b)} bytes (program exit {rc})')
