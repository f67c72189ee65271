#!/bin/sh
# bench/torch_step_table.sh RUNS TRANSPORTS: bench/torch-step.sh's table from
# its runs file (CPU only: CI checks it on a fixture, e2e.bench.torch_step_table).
# RUNS has one line per run, "MODE CASE CONFIG ROUND" and then
# bench/torch_step.py's line ("step CASE median_ms M ... loss HEX"), or
# "MODE CASE CONFIG ROUND FAILED rc=N". TRANSPORTS: the forwarded columns,
# in order ("shm unix tcp"). Per mode and case: native's median step (ms)
# and CPU ms per step, then per transport the median step, speed (native /
# forwarded), the guest's CPU ms, the server's handler ms and calls per step
# (each the median over rounds), and DIFFERS where a round's last loss is
# not native's, FAILED where a run failed. Then one "rounds" line per mode,
# case and transport: each round's own speed (its native run / its
# forwarded run), so that a machine whose native time moves between rounds
# shows it instead of hiding in the medians.
set -u
[ $# = 2 ] && [ -r "$1" ] || { echo "usage: $0 RUNS \"TRANSPORTS\"" >&2; exit 2; }
awk -v transports="$2" '
function median(key,   n, i, j, t, a) {
    n = split(vals[key], a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    if (!n || a[1] == "-") return "-"
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function num(v, f) { return v == "-" || v == "" ? "-" : sprintf(f, v) }
# whether a run of list a has a last loss no native run of list b had
function differs(a, b,   na, nb, x, y, i, j, hit) {
    na = split(a, x, " "); nb = split(b, y, " ")
    if (!nb) return 1
    for (i = 1; i <= na; i++) {
        hit = 0
        for (j = 1; j <= nb; j++) if (x[i] == y[j]) hit = 1
        if (!hit) return 1
    }
    return 0
}
$5 == "FAILED" { failed[$1 " " $2 " " $3] = 1; next }
$5 == "step" {
    k = $1 " " $2 " " $3
    for (i = 7; i < NF; i += 2) vals[k "|" $i] = vals[k "|" $i] " " $(i + 1)
    byround[k "|" $4] = $7 == "median_ms" ? $8 : "-"
    if (!(($4) in rseen)) { rseen[$4] = 1; rounds[++nr] = $4 }
    losses[k] = losses[k] " " $NF
    if (!($1 " " $2 in seen)) { seen[$1 " " $2] = 1; order[++n] = $1 " " $2 }
}
END {
    nt = split(transports, tr, " ")
    printf "%-8s %-12s %-22s", "mode", "case", "native ms (cpu)"
    for (t = 1; t <= nt; t++) printf " | %-44s", tr[t] " ms, speed, cpu ms, server ms/calls"
    printf "\n"
    for (o = 1; o <= n; o++) {
        split(order[o], mc, " ")
        nk = order[o] " native"
        nm = median(nk "|median_ms")
        printf "%-8s %-12s %-22s", mc[1], mc[2], nk in failed ? "FAILED" : sprintf("%.2f (%.2f)", nm, median(nk "|cpu_ms"))
        for (t = 1; t <= nt; t++) {
            k = order[o] " " tr[t]
            if (k in failed || !((k "|median_ms") in vals)) { printf " | %-44s", "FAILED"; continue }
            fm = median(k "|median_ms")
            same = differs(losses[k], losses[nk]) ? " DIFFERS" : ""
            printf " | %-44s", sprintf("%.2f %.2fx cpu %s srv %s/%s%s", fm, fm > 0 ? nm / fm : 0,
                   num(median(k "|cpu_ms"), "%.2f"), num(median(k "|server_ms"), "%.2f"),
                   num(median(k "|server_calls"), "%.0f"), same)
        }
        printf "\n"
    }
    for (o = 1; o <= n; o++)
        for (t = 1; t <= nt; t++) {
            line = ""; lo = ""; hi = ""
            for (r = 1; r <= nr; r++) {
                a = byround[order[o] " native|" rounds[r]]; b = byround[order[o] " " tr[t] "|" rounds[r]]
                if (a == "" || b == "" || a == "-" || b == "-" || b + 0 <= 0) continue
                v = a / b
                line = line sprintf(" %.2fx", v)
                if (lo == "" || v < lo) lo = v
                if (hi == "" || v > hi) hi = v
            }
            split(order[o], mc, " ")
            if (line != "")
                printf "rounds   %-8s %-12s %-10s%s (%.2f-%.2fx)\n", mc[1], mc[2], tr[t], line, lo, hi
        }
}' "$1"
