#!/usr/bin/env python3
"""summarize.py [--short] LOG...: what each drvtrace log says, per attempt:
the export tables asked (UUID, status, size, wrapped entries), the entries
called with counts, the cuGetProcAddress answers that no exported symbol has,
the names asked that the driver does not know, and the busiest functions."""
import collections, gzip, re, sys

KNOWN = {  # from public reverse engineering; see docs/export-tables.md
    "6bd5fb6c-5bf4-e74a-8987-d93912fd9df9": "CUDART_INTERFACE",
    "42d85a81-23f6-cb47-8298-f6e78a3aecdc": "TOOLS_TLS",
    "a094798c-2e74-2e74-93f2-0800200c0a66": "TOOLS_RUNTIME_CALLBACK_HOOKS",
    "c693336e-1121-df11-a8c3-68f355d89593": "CONTEXT_LOCAL_STORAGE_V0301",
    "0ca50b8c-1004-929a-89a7-d0df10e77286": "CTX_CREATE_BYPASS",
    "195bcbf4-d67d-024a-acc5-1d29cea631ae": "HEAP_ACCESS",
    "b10541e1-f7c7-c74a-9f64-f223be99f1e2": "DEVICE_EXTENDED_RT",
    "d4082055-bde6-704b-8d34-ba123c66e1f2": "INTEGRITY_CHECK",
    "263e8860-7cd2-6143-92f6-bbd5006dfa7e": "CONTEXT_CHECKS/CONTEXT_WRAPPER",
    "f8cff951-2146-8b4e-b9e2-fb469e7c0dd9": "CUDA13_REQUIREMENTS (sectioned)",
    "21318c60-9714-3248-8ca6-41ff7324c8f2": "CONTEXT_IDENTITY (cuexpContext)",
    "6e163fbe-b958-444d-835c-e182aff1991e": "?(wine Relay9)",
    "127d4831-ee33-5744-9742-b8447b7a2364": "CUEXP_127d4831",
    "2c8e0ad8-0710-ab4e-90dd-54719fe5f74b": "CUEXP_2c8e0ad8",
    "7f9212d6-261d-dd4d-8af6-38dd1aeb10ae": "DLSS",
    "9af0707b-8e2d-d84c-8e4e-b994c82ddc35": "OPTICAL_FLOW",
    "dd9e98a4-f410-4844-99b0-e2aeb7b432b5": "?(wine Relay13)",
}

def opener(p):
    return gzip.open(p, "rt", errors="replace") if p.endswith(".gz") else open(p, errors="replace")

def parse(path):
    attempts, cur = [], None
    def new(title):
        a = dict(title=title, asked=collections.OrderedDict(), tables={}, slots={}, syms={},
                 gpa_anon=collections.OrderedDict(), gpa_fail=collections.OrderedDict(), rc=None, real=None, app=[])
        attempts.append(a)
        return a
    for line in opener(path):
        line = line.rstrip("\n")
        if line.startswith("# attempt"):
            cur = new(line[2:])
            continue
        if cur is None:
            cur = new("attempt ?")
        if line.startswith("# rc="):
            cur["rc"] = line[5:]
            continue
        if line.startswith("# app:"):
            cur["app"].append(line[6:])
            continue
        f = line.split(" ", 3)
        if len(f) < 3:
            continue
        ev, rest = f[2], (f[3] if len(f) > 3 else "")
        if ev == "export_table":
            m = re.search(r"uuid=(\S+) .*status=(\d+)", rest)
            if m:
                cur["asked"].setdefault(m.group(1), set()).add(int(m.group(2)))
        elif ev == "real":
            cur["real"] = rest
        elif ev == "gpa" or ev == "gpa_v2":
            m = re.search(r"sym=(\S*) ver=(\d+) flags=(\S+) status=(\d+).*via=(.*)$", rest)
            if m:
                key = "%s@%s/%s" % (m.group(1), m.group(2), m.group(3))
                if m.group(4) != "0":
                    cur["gpa_fail"][key] = m.group(4)
                elif not m.group(5).startswith("cu"):
                    cur["gpa_anon"][key] = m.group(5)
        elif ev == "table":
            m = re.match(r"(\S+): (\d+) words \((.*)\), (\d+) wrapped", rest)
            if m:
                cur["tables"][m.group(1)] = (int(m.group(2)), m.group(3), int(m.group(4)))
        elif ev == "summary":
            g = rest.split(" ")
            if g[0] == "sym" and len(g) >= 3:
                cur["syms"][g[1]] = int(g[-1])
            elif g[0] == "slot":
                cur["slots"][" ".join(g[1:-1])] = int(g[-1])
    return attempts

def show(path, short):
    out = []
    attempts = parse(path)
    for i, a in enumerate(attempts):
        out.append("  %s rc=%s" % (a["title"], a["rc"]))
        if short and 0 < i < len(attempts) - 1:
            continue  # the first and the last attempt tell the story
        for u, st in a["asked"].items():
            t = a["tables"].get(u)
            tinfo = " %d words (%s), %d wrapped" % t if t else ""
            out.append("    table %s %s status=%s%s" % (u, KNOWN.get(u, "?"), ",".join(map(str, sorted(st))), tinfo))
            ents = []
            for name, n in a["slots"].items():
                m = re.match(r"ET (\S+) \[(\d+)\]\+?", name)
                if m and m.group(1) == u and n:
                    ents.append("[%s]=%d" % (m.group(2), n))
            if ents:
                out.append("      entries called: " + " ".join(ents))
        anon = list(a["gpa_anon"].keys())
        if anon:
            used = {k: a["slots"].get(k, 0) for k in anon}
            lim = 25 if short else len(anon)
            out.append("    cuGetProcAddress, no exported symbol (%d): %s%s" % (len(anon), " ".join(
                "%s(%d calls)" % (k, used[k]) for k in anon[:lim]), " ..." if len(anon) > lim else ""))
        if a["gpa_fail"]:
            fl = list(a["gpa_fail"].items())
            lim = 15 if short else len(fl)
            out.append("    cuGetProcAddress failed (%d): %s%s" % (len(fl), " ".join("%s=%s" % kv for kv in fl[:lim]),
                                                                   " ..." if len(fl) > lim else ""))
        top = sorted(a["syms"].items(), key=lambda kv: -kv[1])
        if top:
            lim = 12 if short else len(top)
            out.append("    exported functions called: %d; top: %s" % (len(top), " ".join("%s=%d" % kv for kv in top[:lim])))
        if not short and a["app"]:
            out.append("    app output: " + " | ".join(a["app"][:20]))
    return out

if __name__ == "__main__":
    args = sys.argv[1:]
    short = bool(args) and args[0] == "--short"
    if short:
        args = args[1:]
    for p in args:
        print("== %s" % p.rsplit("/", 1)[-1])
        print("\n".join(show(p, short)))
