#!/usr/bin/env python3
"""Runs the commands of docs/tutorial.md as written, so the tutorial cannot go stale.

    run_tutorial.py DOC BUILD_DIR          (UPDATE=1: rewrite DOC's output blocks)

Every ```sh block of DOC runs, in order, in one bash session whose HOME is a
fresh temporary folder (so `~/apigen`, the install prefix, and `~/zstd-remote`,
the tutorial's project, are the test's own). A ```sh block followed directly
by a ```text block is expected to print exactly that text (stdout and stderr
together; its exit status may be non-zero: the errors apigen gives on the
way); any other block must succeed. One exception: the block that builds and
installs apigen from a clone runs only its `cmake --install build` line, with
`build` replaced by BUILD_DIR (the test must not reconfigure the tree it is
part of): what the tutorial's project then uses are the installed files only.

Exit status 0 when everything matched, 77 (SKIP) when the tutorial's library
(libzstd-dev) or BUILD_DIR's apigen is missing, 1 otherwise.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def blocks(lines):
    """[(kind, first_line_index, last_line_index_exclusive, text)] of fenced blocks."""
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        kind, j = m.group(1), i + 1
        while j < len(lines) and lines[j].rstrip("\n") != "```":
            j += 1
        out.append((kind, i + 1, j, "".join(lines[i + 1:j])))
        i = j + 1
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    doc, build = sys.argv[1], os.path.abspath(sys.argv[2])
    if os.environ.get("APIGEN_TUTORIAL_SKIP"):
        print("SKIP: " + os.environ["APIGEN_TUTORIAL_SKIP"])
        return SKIP
    if not os.path.exists("/usr/include/zstd.h"):
        print("SKIP: zstd.h not found (Debian: libzstd-dev, scripts/install-deps.sh)")
        return SKIP
    if not os.access(os.path.join(build, "gen", "apigen"), os.X_OK):
        print("SKIP: %s has no apigen (configured with -DAPIGEN_BUILD_GENERATOR=OFF?)" % build)
        return SKIP
    with open(doc) as f:
        lines = f.readlines()
    bl = blocks(lines)
    steps = []  # (block index, expected text block index or None)
    for k, (kind, _, _, _) in enumerate(bl):
        if kind == "sh":
            nxt = bl[k + 1] if k + 1 < len(bl) else None
            # "directly followed": only blank lines between the two blocks
            exp = None
            if nxt and nxt[0] == "text":
                between = "".join(lines[bl[k][2] + 1:nxt[1] - 1])
                if not between.strip():
                    exp = k + 1
            steps.append((k, exp))
    if not steps:
        print("FAIL: no ```sh blocks in %s" % doc)
        return 1

    tmp = tempfile.mkdtemp(prefix="apigen-tutorial.")
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    outdir = os.path.join(tmp, "out")
    os.mkdir(outdir)
    # a server the tutorial started in the background goes with the script
    script = ["set -u", "trap 'kill $(jobs -p) 2>/dev/null' EXIT", 'cd "$HOME"']
    installs = 0
    for n, (k, exp) in enumerate(steps):
        text = bl[k][3]
        if re.search(r"^cmake --install build\b", text, re.M):
            m = re.search(r"^cmake --install build --prefix (\S+)\s*$", text, re.M)
            if not m:
                print("FAIL: the install block must say `cmake --install build --prefix DIR`")
                return 1
            text = 'cmake --install "%s" --prefix %s >/dev/null\n' % (build, m.group(1))
            installs += 1
        script.append("# ---- block %d (line %d of the tutorial)" % (n, bl[k][1]))
        script.append('echo "---- block %d: line %d" >&2' % (n, bl[k][1]))
        if exp is None:
            script.append("set -e")
            script.append(text.rstrip("\n"))
            script.append("set +e")
        else:
            script.append("{")
            script.append(text.rstrip("\n"))
            script.append('} >"%s/%d.out" 2>&1' % (outdir, n))
    script.append("exit 0")
    if installs != 1:
        print("FAIL: the tutorial must install apigen once (`cmake --install build --prefix DIR`)")
        return 1
    with open(os.path.join(tmp, "tutorial.sh"), "w") as f:
        f.write("\n".join(script) + "\n")
    env = dict(os.environ)
    env["HOME"] = home
    # only what the tutorial sets up: no apigen of the tree on PATH
    for var in ("APIGEN_SERVER", "APIGEN_INCLUDE_PATH", "APIGEN_PROGRESS", "LD_LIBRARY_PATH", "CMAKE_PREFIX_PATH"):
        env.pop(var, None)
    r = subprocess.run(["bash", os.path.join(tmp, "tutorial.sh")], env=env)
    status = 0
    if r.returncode != 0:
        print("FAIL: a tutorial command failed (exit status %d); the script: %s/tutorial.sh"
              % (r.returncode, tmp))
        return 1
    update = os.environ.get("UPDATE") == "1"
    replace = {}
    for n, (k, exp) in enumerate(steps):
        if exp is None:
            continue
        with open(os.path.join(outdir, "%d.out" % n)) as f:
            got = f.read()
        want = bl[exp][3]
        if got != want:
            if update:
                replace[exp] = got
                continue
            status = 1
            print("FAIL: the output of the block at line %d differs from the tutorial's "
                  "(line %d):" % (bl[k][1], bl[exp][1]))
            print("---- tutorial\n%s---- now\n%s----" % (want, got))
    if update and replace:
        for exp in sorted(replace, reverse=True):
            _, a, b, _ = bl[exp]
            lines[a:b] = [replace[exp]] if replace[exp] else []
        with open(doc, "w") as f:
            f.writelines(lines)
        print("updated %d output block(s) of %s" % (len(replace), doc))
    if status == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        print("the tutorial's %d command blocks ran as written" % len(steps))
    return status


if __name__ == "__main__":
    sys.exit(main())
