#!/bin/bash
# bench/tls.sh [BUILD_DIR] [RUNS]: what TLS costs. The exa worker (bench_exa)
# forwarded over tcp:// and over tls:// (throwaway certificates from
# tests/security/tls_certs.sh) to exa servers on loopback, RUNS times each
# (default 5); prints the best run of each metric per transport and the
# ratio tls/tcp (latencies: tls time / tcp time; rates: tcp / tls: 1.00x =
# TLS costs nothing). Needs the targets apigen-server-exa, exa_stub, bench_exa.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:-$root/build}" && pwd) || exit 1
runs=${2:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-bench-tls.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$root/tests/security/tls_certs.sh" "$tmp/c" >"$tmp/certs.log" 2>&1 || { cat "$tmp/certs.log"; exit 1; }
start() { # URL ARGS... -> URL with the real port
    local log=$tmp/server.${#pids[@]}.log
    "$b/examples/exa/apigen-server-exa" --listen "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.05; done
    sed -n 's/.*listening on \([^ ]*\) .*/\1/p' "$log" | head -1
}
tcp=$(start tcp://127.0.0.1:0)
tls=$(start tls://127.0.0.1:0 --tls-cert "$tmp/c/server.pem" --tls-key "$tmp/c/server.key")
best() { # URL: best of $runs per metric: name unit lo|hi value
    for _ in $(seq "$runs"); do
        APIGEN_TLS_CA=$tmp/c/ca.pem APIGEN_SERVER=$1 LD_LIBRARY_PATH="$b/stub" timeout 300 "$b/bench/bench_exa" 2>/dev/null
    done | awk -F'|' '{ k = $1; v = $4 + 0; u[k] = $2; d[k] = $3
        if (!(k in b) || (d[k] == "lo" && v < b[k]) || (d[k] == "hi" && v > b[k])) b[k] = v }
        END { for (k in b) print k, u[k], d[k], b[k] }' | sort
}
best "$tcp" >"$tmp/tcp"
best "$tls" >"$tmp/tls"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(openssl version 2>/dev/null), best of $runs"
printf '%-12s %-5s %12s %12s %8s\n' metric unit tcp tls tls/tcp
join "$tmp/tcp" "$tmp/tls" | awk '{ r = $3 == "lo" ? $7 / $4 : $4 / $7
    printf "%-12s %-5s %12.4g %12.4g %7.2fx\n", $1, $2, $4, $7, r }'
