#!/bin/sh
# tests/gpu/sweep.sh: every script of the CUDA stack on a GPU machine, one
# after the other, into one table: the regression sweep of a session's start
# or end. Each script runs with its own time limit and its own logs folder;
# the table says per script its exit status, its seconds and its last lines
# (its own verdict), and where a script failed, the lines that say what
# differed. With OUT set, OUT gets two files only (the device tool returns a
# few): sweep.txt (the table) and sweep-logs.tar.gz (every script's output and
# logs).
#
#   BUILD=/tmp/bd CUDA_ARCH=sm_90 sh tests/gpu/sweep.sh      (from the repository root)
#
# Environment: BUILD (built first, with the cudnn root of PyTorch's wheel when
# there is one), CUDA_ARCH, SCRIPTS (default: the list below), LIMIT (seconds
# per script, default 200), NOBUILD=1 (BUILD already built).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-/tmp/bd}
arch=${CUDA_ARCH:-sm_90}
limit=${LIMIT:-200}
scripts=${SCRIPTS:-"run-all driver honest cublas cublaslt cudnn fftrand sparse-solver nvml nvrtc async-errors family-libs"}
work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-sweep.XXXXXX")
table=$work/sweep.txt
if [ "${NOBUILD:-0}" != 1 ]; then
    cudnn=
    for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn; do [ -d "$d" ] && cudnn=$d; done
    t0=$(date +%s)
    { cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DAPIGEN_CUDA_ARCH="$arch" ${cudnn:+-DAPIGEN_CUDNN_ROOT=$cudnn} &&
      cmake --build "$build" -j"$(nproc)"; } > "$work/build.log" 2>&1 ||
        { tail -n 40 "$work/build.log"; exit 1; }
    echo "build: $(($(date +%s) - t0)) s" > "$table"
fi
{
    echo "# tests/gpu/sweep.sh, $(git log --oneline -1 2>/dev/null | cut -c1-60), $(date -u '+%Y-%m-%d %H:%M UTC')"
    command -v nvidia-smi > /dev/null 2>&1 &&
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1
} >> "$table"
fails=0
for s in $scripts; do
    [ -f "tests/gpu/$s.sh" ] || { echo "$s: no tests/gpu/$s.sh" >> "$table"; fails=$((fails + 1)); continue; }
    mkdir -p "$work/$s"
    t0=$(date +%s)
    BUILD=$build CUDA_ARCH=$arch NOBUILD=1 NO_BUILD=1 OUT=$work/$s timeout "$limit" sh "tests/gpu/$s.sh" \
        > "$work/$s/stdout.txt" 2>&1
    rc=$?
    [ $rc = 0 ] || fails=$((fails + 1))
    printf '\n== %s: exit %s, %s s\n' "$s" "$rc" "$(($(date +%s) - t0))" >> "$table"
    tail -n 3 "$work/$s/stdout.txt" | sed 's/^/   /' >> "$table"
    if [ $rc != 0 ]; then
        # the rows a script marks as not as native, and the first lines of its diffs
        grep -E 'DIFFERS|differs|FAIL|NOT|not as expected|MISMATCH' "$work/$s/stdout.txt" | head -n 20 |
            cut -c1-200 | sed 's/^/   ! /' >> "$table"
    fi
done
printf '\n%s of %s scripts exited non-zero\n' "$fails" "$(echo $scripts | wc -w)" >> "$table"
cat "$table"
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$table" "$OUT/sweep.txt"
    tar czf "$OUT/sweep-logs.tar.gz" -C "$work" . 2>/dev/null
fi
rm -rf "$work"
[ $fails = 0 ]
