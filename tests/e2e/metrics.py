#!/usr/bin/env python3
"""apigen-server --metrics, end to end (docs/internals.md "Metrics").

  metrics.py exa SERVER STUB_DIR CLIENT ISOLATION TRANSPORT [PROMTOOL]
      tests/e2e/exa_metrics.c against a server with --metrics: while the
      client holds its allocations, one open session with the client's pid,
      process name and 1 MiB + 4 KiB of device memory; after it ended, exact
      call counts, the two errors, plausible bytes, the histogram's count,
      sessions open 0 and ended 1; promtool check metrics on both scrapes
      (when PROMTOOL is given). TRANSPORT tcp: the client sends its 64 KiB
      copy over 4 lanes (APIGEN_LANES=4, APIGEN_LANES_MIN=64K): 4 lanes
      opened, 65536 bytes received over lanes, none sent; over unix and shm
      the lane families say 0.
  metrics.py crash SERVER STUB_DIR CLIENT TRANSPORT [PROMTOOL]
      --isolation process: the session's process is killed (SIGKILL) while
      the client holds its allocations; the calls it ran stay counted, the
      session is ended and no longer listed.
  metrics.py nvml SERVER FAKE_DIR QUERY ISOLATION [PROMTOOL]
      the NVML server over the fake libnvidia-ml: each GPU's gauges equal
      what nvml_query --volatile reads natively from the same fake.
  metrics.py prometheus SERVER STUB_DIR CLIENT PROMETHEUS
      a real Prometheus (PROMETHEUS: its binary; "" skips, 77) scrapes the
      endpoint every second after exa_metrics ran: up is 1 and its queries
      answer the sequence's counts.
  metrics.py family SERVER STUB_DIR CLIENT ISOLATION
      tests/family/exa_family through both stubs of a family (exa and exb,
      one session): every call the server's trace shows served, of either
      API, synchronous or queued, is counted under its own API and function,
      and nothing else is (the second API's calls were once dropped).
  metrics.py http SERVER
      the endpoint under bad requests: garbage (400), another path (404),
      POST (405), an endless head (431), 20 clients that send nothing and one
      that sends half a request (dropped after the deadline without an
      answer, while a scrape behind them is answered), HTTP/1.0, a client
      that leaves before the answer; the server still serves afterwards.
  metrics.py promtool
      exits 77 (skip) naming the reason when promtool is absent.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

tmp = tempfile.mkdtemp(prefix="apigen-metrics-")
procs = []


def fail(msg, *texts):
    print("FAIL: " + msg)
    for t in texts:
        print("  | " + "\n  | ".join(str(t).splitlines()))
    log = os.path.join(tmp, "server.log")
    if os.path.exists(log):
        print("server log:\n  | " + "\n  | ".join(open(log).read().splitlines()))
    cleanup()
    sys.exit(1)


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def start_server(server, args, env=None):
    log = open(os.path.join(tmp, "server.log"), "w")
    p = subprocess.Popen([server] + args, stdout=log, stderr=subprocess.STDOUT, env=env)
    procs.append(p)
    port = None
    for _ in range(400):
        text = open(os.path.join(tmp, "server.log")).read()
        m = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", text)
        if m and "listening on" in text:
            port = int(m.group(1))
            break
        if p.poll() is not None:
            break
        time.sleep(0.05)
    if port is None:
        fail("the server did not start with --metrics")
    return p, port


def http(port, raw, timeout=10):
    """Sends raw bytes, returns (status line, headers dict, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(raw)
    data = b""
    while True:
        k = s.recv(65536)
        if not k:
            break
        data += k
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return lines[0], hdrs, body.decode()


def scrape(port):
    st, hdrs, body = http(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    if st != "HTTP/1.1 200 OK":
        fail("GET /metrics answered " + st)
    if hdrs.get("content-type") != "text/plain; version=0.0.4; charset=utf-8":
        fail("Content-Type " + str(hdrs.get("content-type")))
    if int(hdrs.get("content-length", -1)) != len(body.encode()):
        fail("Content-Length %s for %d bytes" % (hdrs.get("content-length"), len(body.encode())))
    return body


def samples(text):
    """{(name, frozenset(labels)): value} of a scrape."""
    out = {}
    for ln in text.splitlines():
        if not ln or ln.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', ln)
        if not m:
            fail("not a sample line: " + ln)
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def get(s, name, **labels):
    want = frozenset((k, str(v)) for k, v in labels.items())
    found = [v for (n, ls), v in s.items() if n == name and want <= ls]
    if len(found) != 1:
        fail("%s%s: %d samples, expected 1" % (name, labels, len(found)))
    return found[0]


def promtool_check(promtool, text, what):
    if not promtool:
        print("promtool absent: %s not validated (e2e.metrics.promtool says why)" % what)
        return
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    if r.returncode != 0:
        fail("promtool check metrics refused the %s" % what, r.stdout + r.stderr)
    print("promtool check metrics: %s ok" % what)


def url_for(transport):
    if transport == "unix":
        return "unix://" + os.path.join(tmp, "s.sock")
    if transport == "shm":
        return "shm://apigen-metrics-%d" % os.getpid()
    if transport == "tcp":
        return "tcp://127.0.0.1:0"
    fail("transport " + transport)


def listening_url(url):
    """The URL the server listens on (tcp://...:0 becomes its port)."""
    if not url.endswith(":0"):
        return url
    m = re.search(r"listening on (tcp://[0-9.]+:\d+) ", open(os.path.join(tmp, "server.log")).read())
    if not m:
        fail("no tcp port in the server's log")
    return m.group(1)


def mode_exa(server, stub_dir, client, isolation, transport, promtool=None):
    url = url_for(transport)
    _, port = start_server(server, ["--listen", url, "--isolation", isolation,
                                    "--metrics", "tcp://127.0.0.1:0"])
    url = listening_url(url)
    # APIGEN_CACHE=0: every call reaches the server, which counts it (the
    # stub would answer the repeated exaGetVersion itself: spec `cache:`)
    env = dict(os.environ, LD_LIBRARY_PATH=stub_dir, APIGEN_SERVER=url, APIGEN_CACHE="0")
    lanes = transport == "tcp"
    if lanes:  # the 64 KiB copy over 4 lanes (runtime/lanes.c)
        env.update(APIGEN_LANES="4", APIGEN_LANE_PIECE="4099", APIGEN_LANES_MIN="64K")
    c = subprocess.Popen([client], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    procs.append(c)
    line = c.stdout.readline()
    m = re.match(r"ready (\d+)", line)
    if not m:
        fail("the client did not get ready", line + c.stdout.read())
    pid = int(m.group(1))
    text = scrape(port)
    promtool_check(promtool, text, "scrape with a session open")
    s = samples(text)
    if get(s, "apigen_sessions_open", api="exa") != 1:
        fail("sessions open %s, expected 1" % get(s, "apigen_sessions_open", api="exa"))
    info = get(s, "apigen_session_info", api="exa", pid=pid, process="exa_metrics",
               peer="127.0.0.1" if lanes else "local")
    mem = get(s, "apigen_session_device_memory_bytes", api="exa", pid=pid)
    if info != 1 or mem != (1 << 20) + 4096:
        fail("session of pid %d: info %s, device memory %s (expected 1 MiB + 4 KiB)" % (pid, info, mem))
    out, _ = c.communicate("go\n", timeout=60)
    if c.returncode != 0 or "done" not in out:
        fail("the client failed (%s)" % c.returncode, out)
    # the session ends after the client's connections close (a session
    # process also has to be reaped): wait for it
    for _ in range(200):
        text = scrape(port)
        s = samples(text)
        if get(s, "apigen_sessions_ended_total", api="exa") == 1:
            break
        time.sleep(0.05)
    promtool_check(promtool, text, "scrape after the session ended")
    if get(s, "apigen_sessions_open", api="exa") != 0 or get(s, "apigen_sessions_ended_total", api="exa") != 1:
        fail("sessions after the client: open %s, ended %s (expected 0, 1)" % (
            get(s, "apigen_sessions_open", api="exa"), get(s, "apigen_sessions_ended_total", api="exa")))
    if [k for k in s if k[0] == "apigen_session_info"]:
        fail("a session is still listed after it ended", text)
    want = {"exaGetVersion": (3, 0), "exaMalloc": (2, 0), "exaMemcpy": (1, 0),
            "exaGetDeviceInfo": (1, 1), "exaFree": (3, 1)}
    for fn, (calls, errors) in want.items():
        got = (get(s, "apigen_calls_total", api="exa", function=fn),
               get(s, "apigen_call_errors_total", api="exa", function=fn))
        if got != (calls, errors):
            fail("%s: calls, errors %s, expected %s" % (fn, got, (calls, errors)))
        if get(s, "apigen_call_duration_seconds_count", api="exa", function=fn) != calls or \
           get(s, "apigen_call_duration_seconds_bucket", api="exa", function=fn, le="+Inf") != calls:
            fail("%s: histogram count differs from the calls" % fn)
        if get(s, "apigen_call_duration_seconds_sum", api="exa", function=fn) <= 0:
            fail("%s: no time summed" % fn)
    fns = sorted(ls for (n, ls) in s if n == "apigen_calls_total")
    if len(fns) != len(want):
        fail("functions counted: %s, expected only %s" % (fns, sorted(want)))
    # bytes: a 64 KiB copy went in; every sync call has a reply
    rin = get(s, "apigen_call_received_bytes_total", api="exa", function="exaMemcpy")
    if not 65536 < rin < 65536 + 1024:
        fail("exaMemcpy received %s bytes, expected 64 KiB and a little" % rin)
    for fn in want:
        i = get(s, "apigen_call_received_bytes_total", api="exa", function=fn)
        o = get(s, "apigen_call_sent_bytes_total", api="exa", function=fn)
        n = want[fn][0]
        if i < 32 * n or o < 32 * n or (fn != "exaMemcpy" and (i > 200 * n or o > 400 * n)):
            fail("%s: %s bytes in, %s out for %d calls" % (fn, i, o, n))
    # lanes: the copy's 64 KiB bulk came over the 4 lanes (tcp), else nothing
    got = (get(s, "apigen_lanes_opened_total"), get(s, "apigen_lane_received_bytes_total"),
           get(s, "apigen_lane_sent_bytes_total"))
    if got != ((4, 65536, 0) if lanes else (0, 0, 0)):
        fail("lanes opened, bytes received and sent over lanes %s, expected %s" %
             (got, (4, 65536, 0) if lanes else (0, 0, 0)), text)
    print("exa (%s, %s): counts, errors, bytes, sessions, device memory and lanes as expected" %
          (isolation, transport))


def mode_crash(server, stub_dir, client, transport, promtool=None):
    """--isolation process: the session's process is killed mid-session;
    the calls it ran stay counted (the parent folds its shared counters)."""
    url = url_for(transport)
    srv, port = start_server(server, ["--listen", url, "--isolation", "process",
                                      "--metrics", "tcp://127.0.0.1:0"])
    # APIGEN_CACHE=0: every call reaches the server, which counts it (the
    # stub would answer the repeated exaGetVersion itself: spec `cache:`)
    env = dict(os.environ, LD_LIBRARY_PATH=stub_dir, APIGEN_SERVER=url, APIGEN_CACHE="0")
    c = subprocess.Popen([client], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    procs.append(c)
    if not re.match(r"ready \d+", c.stdout.readline()):
        fail("the client did not get ready")
    kids = open("/proc/%d/task/%d/children" % (srv.pid, srv.pid)).read().split()
    if len(kids) != 1:
        fail("expected one session process, found %s" % kids)
    os.kill(int(kids[0]), 9)  # SIGKILL: no push, no cleanup (a sanitizer would catch a SIGSEGV)
    c.communicate("go\n", timeout=60)  # its next call finds the connection lost
    for _ in range(200):
        s = samples(scrape(port))
        if get(s, "apigen_sessions_ended_total", api="exa") == 1:
            break
        time.sleep(0.05)
    text = scrape(port)
    promtool_check(promtool, text, "scrape after a session process crashed")
    s = samples(text)
    got = (get(s, "apigen_sessions_open", api="exa"), get(s, "apigen_sessions_ended_total", api="exa"),
           get(s, "apigen_calls_total", api="exa", function="exaGetVersion"),
           get(s, "apigen_calls_total", api="exa", function="exaMalloc"),
           get(s, "apigen_call_errors_total", api="exa", function="exaGetDeviceInfo"))
    if got != (0, 1, 3, 2, 1):
        fail("after the crash: open, ended, exaGetVersion, exaMalloc, exaGetDeviceInfo errors = %s, "
             "expected (0, 1, 3, 2, 1)" % (got,), text)
    if [k for k in s if k[0].startswith("apigen_session_")]:
        fail("the crashed session is still listed", text)
    print("crash (%s): the dead session process's counts kept, the session ended" % transport)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def mode_prometheus(server, stub_dir, client, prometheus):
    """A real Prometheus scrapes the endpoint: the target is up and a query
    answers the counts of the known sequence."""
    import json
    import urllib.parse
    import urllib.request
    if not prometheus:
        print("prometheus not found (scripts/install-deps.sh puts it in /opt/apigen/bin, from "
              "Debian's prometheus package): no real scrape")
        sys.exit(77)

    def query_up(web):
        try:
            return urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % web, timeout=2).status == 200
        except Exception:
            return False

    url = url_for("unix")
    _, port = start_server(server, ["--listen", url, "--isolation", "thread",
                                    "--metrics", "tcp://127.0.0.1:0"])
    # APIGEN_CACHE=0: every call reaches the server, which counts it (the
    # stub would answer the repeated exaGetVersion itself: spec `cache:`)
    env = dict(os.environ, LD_LIBRARY_PATH=stub_dir, APIGEN_SERVER=url, APIGEN_CACHE="0")
    r = subprocess.run([client], input="go\n", capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        fail("the client failed", r.stdout + r.stderr)
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                "  - job_name: apigen\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % port)
    # Prometheus takes no port 0: a port found free here, which another
    # program may take before Prometheus binds it; then it exits saying so,
    # and another port is tried
    for _ in range(5):
        web = free_port()
        plog = open(os.path.join(tmp, "prometheus.log"), "w")
        p = subprocess.Popen([prometheus, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                              "--web.listen-address=127.0.0.1:%d" % web], stdout=plog, stderr=subprocess.STDOUT)
        procs.append(p)
        for _ in range(100):
            if p.poll() is not None or query_up(web):
                break
            time.sleep(0.1)
        plog.close()
        if p.poll() is None or "address already in use" not in open(os.path.join(tmp, "prometheus.log")).read():
            break

    def query(q):
        u = "http://127.0.0.1:%d/api/v1/query?query=%s" % (web, urllib.parse.quote(q))
        try:
            res = json.load(urllib.request.urlopen(u, timeout=5))
        except Exception:
            return None
        v = res.get("data", {}).get("result", [])
        return v[0]["value"][1] if len(v) == 1 else None

    want = {'up{job="apigen"}': "1",
            'apigen_calls_total{job="apigen",function="exaMalloc"}': "2",
            'apigen_call_errors_total{job="apigen",function="exaFree"}': "1",
            'apigen_sessions_ended_total{job="apigen"}': "1",
            'apigen_call_duration_seconds_count{job="apigen",function="exaGetVersion"}': "3"}
    got = {}
    for _ in range(120):
        got = {q: query(q) for q in want}
        if got == want or p.poll() is not None:
            break
        time.sleep(0.5)
    if got != want:
        fail("Prometheus answered %s, expected %s" % (got, want),
             open(os.path.join(tmp, "prometheus.log")).read()[-3000:])
    print("prometheus: scraped the endpoint; its queries answer the known sequence's counts")


def mode_nvml(server, fake_dir, query, isolation, promtool=None):
    env = dict(os.environ, LD_LIBRARY_PATH=fake_dir)
    r = subprocess.run([query, "--volatile"], env=env, capture_output=True, text=True, timeout=60)
    gpus, cur = [], None
    for ln in r.stdout.splitlines():
        if re.match(r"device \d+: handle ok", ln):
            cur = {}
            gpus.append(cur)
        m = re.match(r"  (uuid|memory total|memory used|utilization gpu|utilization memory): (\S+)$", ln)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2)
    if not gpus or any(len(g) != 5 for g in gpus):
        fail("nvml_query --volatile did not list the fake's GPUs", r.stdout + r.stderr)
    _, port = start_server(server, ["--listen", url_for("unix"), "--isolation", isolation,
                                    "--metrics", "tcp://127.0.0.1:0"], env=env)
    text = scrape(port)
    promtool_check(promtool, text, "NVML server's scrape")
    s = samples(text)
    for i, g in enumerate(gpus):
        lab = {"gpu": i, "uuid": g["uuid"]}
        got = (get(s, "apigen_gpu_memory_used_bytes", **lab), get(s, "apigen_gpu_memory_total_bytes", **lab),
               get(s, "apigen_gpu_utilization_ratio", **lab), get(s, "apigen_gpu_memory_utilization_ratio", **lab))
        want = (float(g["memory used"]), float(g["memory total"]), float(g["utilization gpu"]) / 100,
                float(g["utilization memory"]) / 100)
        if got != want:
            fail("GPU %d: gauges %s, the fake says %s" % (i, got, want))
    if len([k for k in s if k[0] == "apigen_gpu_memory_used_bytes"]) != len(gpus):
        fail("GPUs in the scrape differ from the fake's %d" % len(gpus), text)
    # twice: the collector (process isolation) or the server's own NVML
    # reference (threads) must be in the same state for the next scrape
    if samples(scrape(port)) != s:
        fail("a second scrape differs")
    print("nvml (%s): %d GPUs' gauges equal the fake's" % (isolation, len(gpus)))


def mode_family(server, stub_dir, client, isolation):
    url = url_for("unix")
    env = dict(os.environ, APIGEN_TRACE="1")
    env.pop("LD_LIBRARY_PATH", None)
    _, port = start_server(server, ["--listen", url, "--isolation", isolation,
                                    "--metrics", "tcp://127.0.0.1:0"], env)
    env = dict(os.environ, LD_LIBRARY_PATH=stub_dir, APIGEN_SERVER=url, APIGEN_CACHE="0")
    r = subprocess.run([client, "all"], capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0 or not r.stdout.rstrip().endswith("ok"):
        fail("the family client failed (%s)" % r.returncode, r.stdout + r.stderr)
    for _ in range(200):  # the session's end: every call traced and counted
        s = samples(scrape(port))
        if get(s, "apigen_sessions_ended_total", api="exa") == 1:
            break
        time.sleep(0.05)
    served = {}
    for m in re.finditer(r"server: (\w+)\.(\w+)( \[async\])? -> ",
                         open(os.path.join(tmp, "server.log")).read()):
        if m.group(2) != "apigenArenaSegment":
            served[(m.group(1), m.group(2))] = served.get((m.group(1), m.group(2)), 0) + 1
    counted = {}
    for (n, ls), v in s.items():
        if n == "apigen_calls_total":
            d = dict(ls)
            counted[(d["api"], d["function"])] = int(v)
    if counted != served:
        fail("counted calls differ from the served ones (trace): counted %s, served %s" %
             (sorted(counted.items()), sorted(served.items())))
    apis = sorted(set(a for a, _ in served))
    if apis != ["exa", "exb"]:
        fail("the trace shows calls of %s, expected exa's and exb's" % apis)
    print("family (%s): %d calls of %d functions of exa and exb, each counted under its own API" %
          (isolation, sum(served.values()), len(served)))


def mode_http(server):
    p, port = start_server(server, ["--listen", url_for("unix"), "--isolation", "thread",
                                    "--metrics", "tcp://127.0.0.1:0"])
    cases = [(b"garbage\r\n\r\n", "400"), (b"GET /other HTTP/1.1\r\n\r\n", "404"),
             (b"GET / HTTP/1.1\r\n\r\n", "404"), (b"POST /metrics HTTP/1.1\r\n\r\n", "405"),
             (b"GET /metrics HTTP/9.9\r\n\r\n", "400"), (b"\x00\xff\r\n\r\n", "400"),
             (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 10000, "431")]
    for raw, code in cases:
        st, _, _ = http(port, raw)
        if st.split(" ")[1:2] != [code]:
            fail("%r answered %r, expected %s" % (raw[:40], st, code))
    st, _, body = http(port, b"GET /metrics?x=1 HTTP/1.0\r\n\r\n")
    if st != "HTTP/1.0 200 OK" or "apigen_sessions_open" not in body:
        fail("HTTP/1.0 GET answered " + st)
    # silent and half-sent clients are dropped after the deadline; a scrape
    # queued behind them still gets its answer
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]  # more than it reads at once
    half = socket.create_connection(("127.0.0.1", port))
    half.sendall(b"GET /metr")
    t0 = time.time()
    scrape(port)
    waited = time.time() - t0
    for s in idle + [half]:
        s.settimeout(10)
        if s.recv(100) != b"":
            fail("a slow client got an answer")
        s.close()
    # a client that goes away mid-answer
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
    s.close()
    scrape(port)
    if p.poll() is not None:
        fail("the server exited")
    print("http: bad requests refused, slow clients dropped (a scrape waited %.1f s), server fine" % waited)


def main():
    a = sys.argv[1:]
    try:
        if a and a[0] == "exa" and len(a) in (6, 7):
            mode_exa(*a[1:])
        elif a and a[0] == "crash" and len(a) in (5, 6):
            mode_crash(*a[1:])
        elif a and a[0] == "prometheus" and len(a) == 5:
            mode_prometheus(*a[1:])
        elif a and a[0] == "nvml" and len(a) in (5, 6):
            mode_nvml(*a[1:])
        elif a and a[0] == "family" and len(a) == 5:
            mode_family(*a[1:])
        elif a and a[0] == "http" and len(a) == 2:
            mode_http(a[1])
        elif a and a[0] == "promtool":
            if len(a) < 2 or not a[1]:
                print("promtool not found (scripts/install-deps.sh puts it in /opt/apigen/bin, "
                      "from Debian's prometheus package): scrapes are checked by this test's "
                      "own parser only")
                sys.exit(77)
            print("promtool: " + a[1])
        else:
            print(__doc__)
            sys.exit(2)
        # the server's shutdown under a sanitizer (APIGEN_SANITIZE) says here
        # what it found
        cleanup()
        log = os.path.join(tmp, "server.log")
        if os.path.exists(log) and re.search(r"Sanitizer|runtime error:", open(log).read()):
            fail("the server's log has a sanitizer report")
    finally:
        cleanup()


if __name__ == "__main__":
    main()
