#!/bin/sh
# bench/model-check.sh [BUILD_DIR]: does apigen-trace-model predict a program's
# time on one network from its trace on another? On loopback, where both are
# known: the unix and tcp floors (64-byte ping-pong, plain-C stream bandwidth:
# apigen-bench) give each transport's round-trip time and bandwidth; each exa
# program runs traced (APIGEN_TRACE) over unix:// and over tcp://, and the
# model turns each trace into a prediction for the other transport, printed
# beside the time measured there (the span of its own trace), then for a few
# real networks. Prints numbers only.
#
# Environment: PROGRAMS (default: exa_demo, exa_bulk 32, bench_exa with
# BENCH_COPY_MB=32), COPY_MB (the bulk floor's size, default 32).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:-$root/build}" && pwd) || exit 1
tmp=$(mktemp -d /tmp/apigen-model.XXXXXX)
spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
model=$b/bench/apigen-trace-model
server=$b/examples/exa/apigen-server-exa
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. floors: apigen-bench with a worker that does nothing
BENCH_COPY_MB=${COPY_MB:-32} "$b/bench/apigen-bench" --worker /bin/true --server "$server" \
    --native-dir "$b/real" --stub-dir "$b/stub" --transports unix,tcp --rounds 3 > "$tmp/floors" 2>/dev/null
grep -E "ping-pong|plain-C stream" "$tmp/floors"
col() { # ROW-PATTERN unix|tcp: that cell of apigen-bench's table
    awk -v want="$2" -v pat="$1" 'index($0, pat) { print (want == "unix" ? $(NF-1) : $NF); exit }' "$tmp/floors"
}
net() { # unix|tcp -> "RTT_US,GBIT_S": the bulk rate the mean of both ways, in Gb/s
    up=$(col "plain-C stream" "$1")
    down=$(awk -v want="$1" '/plain-C stream.*down/ { print (want == "unix" ? $(NF-1) : $NF); exit }' "$tmp/floors")
    echo "$(col "ping-pong floor" "$1"),$(echo "$up $down" | awk '{ printf "%.3f", ($1 + $2) / 2 * 8 }')"
}
NU=$(net unix) NT=$(net tcp)
echo "unix: rtt us, Gb/s = $NU; tcp: $NT"

# 2. each program traced over each transport
run() { # NAME TRANSPORT CMD...
    name=$1 tp=$2
    shift 2
    case $tp in
        unix) url="unix://$tmp/s.sock" ;;
        tcp) url="tcp://127.0.0.1:0" ;;
    esac
    "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
    spid=$!
    for _ in $(seq 100); do grep -q "listening on" "$tmp/server.log" && break; sleep 0.05; done
    real=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$tmp/server.log" | head -1)
    rm -f "$tmp/$name.$tp.trace"
    LD_LIBRARY_PATH=$b/stub APIGEN_SERVER=$real APIGEN_TRACE=$tmp/$name.$tp.trace "$@" > /dev/null 2>&1 ||
        echo "$name over $tp: exit $?"
    kill $spid 2>/dev/null
    wait $spid 2>/dev/null
    spid=
}
span() { "$model" "$1" | sed -n 's/^span: \([0-9.]*\) ms.*/\1/p'; }
predict() { # TRACE ON AT -> total ms
    "$model" "$1" --on "$2" --at "$3" | awk '/^predicted at/ { getline; print $(NF-1); exit }'
}
printf '\n%-22s %8s %10s %12s | %10s %12s | %s\n' "program" "trips" "unix ms" "tcp predicted" "tcp ms" \
    "unix predicted" "from the unix trace at 50 us/25 Gb/s, 200 us/10 Gb/s (ms)"
check() { # NAME CMD...
    name=$1
    shift
    run "$name" unix "$@"
    run "$name" tcp "$@"
    tu=$tmp/$name.unix.trace tt=$tmp/$name.tcp.trace
    trips=$("$model" "$tu" | sed -n 's/^round trips: //p')
    far=$("$model" "$tu" --on "$NU" --at 50,25 --at 200,10 | awk '/^predicted at/ { getline; a = $(NF-1); getline; print a " / " $(NF-1) }')
    printf '%-22s %8s %10s %12s | %10s %12s | %s\n' "$name" "$trips" "$(span "$tu")" "$(predict "$tu" "$NU" "$NT")" \
        "$(span "$tt")" "$(predict "$tt" "$NT" "$NU")" "$far"
}
if [ -n "${PROGRAMS:-}" ]; then
    for p in $PROGRAMS; do check "$(basename "$p")" "$p"; done
else
    check exa_demo "$b/examples/exa/exa_demo"
    check "exa_bulk 32" "$b/examples/exa/exa_bulk" 32
    BENCH_COPY_MB=32 check "bench_exa (32 MiB)" "$b/bench/bench_exa"
fi
echo "(ms: the span of the run's own trace, first request to last reply; predicted: apigen-trace-model"
echo " on the other transport's trace with --on its floors --at this one's)"
