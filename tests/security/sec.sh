#!/usr/bin/env bash
# Security tests of apigen-server-exa: one mode per invariant of
# runtime/SECURITY.md (ctest names them security.<mode>).
#
#   sec.sh MODE BUILD_DIR
#
# Every server this script starts runs with EXA_LEAK_REPORT (libexa writes
# what is still alive at exit) and is stopped with SIGTERM at the end of the
# mode; stop_server checks that nothing a client created is left.
set -u

MODE=${1:?usage: sec.sh MODE BUILD_DIR}
BUILD=$(cd "${2:?usage: sec.sh MODE BUILD_DIR}" && pwd)
STUB_DIR=$BUILD/stub
SERVER=$BUILD/examples/exa/apigen-server-exa
WIRE=$BUILD/tests/security/sec_wire
GUEST=$BUILD/tests/security/sec_guest
LOAD_SECONDS=${SEC_LOAD_SECONDS:-8}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/apigen-sec.XXXXXX")
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FAILED=0
fail() { echo "FAIL: $*"; FAILED=1; }
ok() { echo "ok: $*"; }
die() { echo "FAIL: $*"; exit 1; }
show() { echo "---- $2"; cat "$1" 2>/dev/null; echo "----"; }

for f in "$SERVER" "$WIRE" "$GUEST" "$STUB_DIR/libexa.so.1"; do
    [ -e "$f" ] || die "missing $f"
done

# Under AddressSanitizer freed memory sits in quarantine, so RSS does not
# come back: memory numbers are reported, not asserted (the leak report and
# LeakSanitizer still are).
SANITIZED=0
ldd "$SERVER" 2>/dev/null | grep -q -E 'libasan|libclang_rt.asan' && SANITIZED=1
nm "$SERVER" 2>/dev/null | grep -q __asan_init && SANITIZED=1
mem_ok() { # condition-result message
    if [ "$1" = 0 ]; then ok "$2"; elif [ "$SANITIZED" = 1 ]; then echo "note (sanitized build, not asserted): $2"; else fail "$2"; fi
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
vsz_kb() { awk '/^VmSize:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# start_server URL [ARGS...]: sets SPID, SLOG, LEAKS, URL
start_server() {
    URL=$1
    shift
    SLOG=$TMP/server.log
    LEAKS=$TMP/leaks
    rm -f "$LEAKS" "$SLOG" # a previous server's "listening on" must not be read as this one's
    env -u LD_LIBRARY_PATH -u APIGEN_SERVER EXA_LEAK_REPORT="$LEAKS" \
        "$SERVER" --listen "$URL" "$@" >"$SLOG" 2>&1 &
    SPID=$!
    PIDS+=("$SPID")
    local i
    for i in $(seq 1 100); do
        if grep -q "listening on" "$SLOG" 2>/dev/null; then
            URL=$(sed -n 's/.*listening on \([^ ]*\) .*/\1/p' "$SLOG" | head -1)
            return 0
        fi
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    show "$SLOG" "server log"
    die "server did not start on $URL"
}
start_unix() { start_server "unix://$TMP/s.sock" "$@"; }
# tls:// with throwaway certificates (tls_certs.sh into $TMP/c; 77 without
# TLS or the openssl command); the guest trusts their CA unless told otherwise.
CERTS=$TMP/c
make_certs() {
    [ -e "$CERTS/ca.pem" ] && return 0
    "$(dirname "$0")/tls_certs.sh" "$CERTS" >"$TMP/certs.log" 2>&1
    case $? in
    0) ;;
    77) cat "$TMP/certs.log"; exit 77 ;;
    *) show "$TMP/certs.log" tls_certs.sh; die "cannot make test certificates" ;;
    esac
    export APIGEN_TLS_CA=$CERTS/ca.pem
    # without certificates a TLS build refuses at once: does it have TLS at all?
    "$SERVER" --listen tls://127.0.0.1:0 2>&1 | grep -q "no TLS support" && { echo "SKIP: this build has no TLS"; exit 77; }
    return 0
}
start_tls() { # [CERT-NAME] [ARGS...]: CERT-NAME.pem (default server) + server.key
    make_certs
    local cert=server
    case ${1:-} in server|expired) cert=$1; shift ;; esac
    start_server "tls://127.0.0.1:0" --tls-cert "$CERTS/$cert.pem" --tls-key "$CERTS/server.key" "$@"
}
start_tls_self() { # a server whose certificate no CA vouches for
    make_certs
    start_server "tls://127.0.0.1:0" --tls-cert "$CERTS/self.pem" --tls-key "$CERTS/self.key" "$@"
}
# guest_env [-u VAR | VAR=VAL]...: runs "sec_guest token" with the stub,
# APIGEN_SERVER=$URL and these changes to the environment, 30 s at most.
guest_env() {
    local unset=() set=()
    while [ $# -gt 0 ]; do
        if [ "$1" = -u ]; then unset+=(-u "$2"); shift 2; else set+=("$1"); shift; fi
    done
    env "${unset[@]}" LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "${set[@]}" timeout -k 5 30 "$GUEST" token 2>&1
}
# guest_expect NAME PATTERN [ENV...]: the guest's call must fail with
# CONNECTION_LOST and print PATTERN, without hanging.
guest_expect() {
    local name=$1 pat=$2 out rc
    shift 2
    out=$(guest_env "$@")
    rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then fail "$name: the guest hung"; return; fi
    if echo "$out" | grep -q CONNECTION_LOST && echo "$out" | grep -qF -- "$pat"; then
        ok "$name: refused: $(echo "$out" | grep -F -- "$pat" | head -1 | cut -c1-240)"
    else
        fail "$name: expected CONNECTION_LOST and '$pat', got: $out"
    fi
}
guest_served() { # NAME [ENV=VAL...]
    local name=$1 out
    shift
    out=$(guest_env "$@")
    echo "$out" | grep -q SUCCESS && ok "$name" || fail "$name: $out"
}
start_tcp() { start_server "tcp://127.0.0.1:0" "$@"; }

# Stops the server; checks it was alive, exits on SIGTERM, and left nothing.
stop_server() {
    kill -0 "$SPID" 2>/dev/null || { show "$SLOG" "server log"; fail "the server died"; return; }
    kill -TERM "$SPID"
    local i
    # 20 s: the server gives busy connections 5 s, and a sanitizer's exit
    # checks on a loaded machine take seconds more
    for i in $(seq 1 400); do
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$SPID" 2>/dev/null && fail "the server did not exit within 20 s of SIGTERM"
    wait "$SPID" 2>/dev/null
    if grep -q "^live at exit: 0 contexts, 0 buffers, 0 device allocations" "$LEAKS"; then
        ok "release: libexa in the server has nothing left at exit"
    else
        show "$LEAKS" "libexa at exit"
        fail "objects of clients were left in the real library"
    fi
    if grep -qiE "sanitizer|runtime error|double free|corrupt" "$SLOG"; then
        show "$SLOG" "server log"
        fail "the server log reports memory errors"
    fi
}

# log_has PATTERN (grep's basic regex): whether the server's log has a line
# matching PATTERN, waiting up to 10 s for it. What the server logs about a
# peer that closed or failed (a handshake, a lane) it writes after noticing,
# which may come after that peer's own end has returned.
log_has() {
    local i
    for i in $(seq 1 200); do
        grep -q -- "$1" "$SLOG" && return 0
        sleep 0.05
    done
    return 1
}

guest() { LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" timeout -k 5 120 "$GUEST" "$@"; }
wire() { timeout -k 5 120 "$WIRE" "$1" "$URL" "${@:2}"; }

check_served() {
    if wire session >"$TMP/alive.out" 2>&1; then ok "$1"; else show "$TMP/alive.out" session; fail "$1"; fi
}

case $MODE in
frame.hostile_frames)
    start_unix --max-arg 64M
    wire frames >"$TMP/frames.out" 2>&1 || fail "sec_wire frames"
    cat "$TMP/frames.out"
    check_served "contain: the server still serves new clients"
    grep -q "further rejections not logged" "$SLOG" && ok "contain: rejections are logged at most 20 times per connection" ||
        fail "no rejection log cap"
    grep -q "bad magic" "$SLOG" && ok "log: bad magic logged" || fail "bad magic not logged"
    stop_server
    ;;
contain.byte_cuts)
    start_unix
    wire bytes >"$TMP/bytes.out" 2>&1 || fail "sec_wire bytes"
    cat "$TMP/bytes.out"
    stop_server
    ;;
release.truncated_sessions)
    start_tcp
    wire bytes >"$TMP/bytes.out" 2>&1 || fail "sec_wire bytes over tcp"
    tail -3 "$TMP/bytes.out"
    stop_server
    ;;
alloc.stalled_frame)
    start_unix
    check_served "warm-up"
    base_rss=$(rss_kb "$SPID") base_vsz=$(vsz_kb "$SPID")
    stalls=()
    for i in 1 2 3 4 5 6 7 8; do
        wire stall 4 >"$TMP/stall.$i" 2>&1 &
        stalls+=($!)
        PIDS+=($!)
    done
    for i in $(seq 1 100); do
        [ "$(cat "$TMP"/stall.* 2>/dev/null | grep -c stalling)" = 8 ] && break
        sleep 0.05
    done
    sleep 0.5
    rss=$(rss_kb "$SPID") vsz=$(vsz_kb "$SPID")
    echo "server RSS ${base_rss} -> ${rss} kB, VmSize ${base_vsz} -> ${vsz} kB with 8 x 1 GiB frames announced"
    [ $((rss - base_rss)) -lt 65536 ]
    mem_ok $? "alloc: 8 stalled 1 GiB frames cost < 64 MiB of RSS ($(((rss - base_rss) / 1024)) MiB)"
    [ $((vsz - base_vsz)) -lt $((1024 * 1024)) ]
    mem_ok $? "alloc: and < 1 GiB of address space ($(((vsz - base_vsz) / 1024)) MiB)"
    check_served "contain: others are served while frames stall"
    for p in "${stalls[@]}"; do wait "$p"; done
    stop_server
    ;;
contain.slow_clients)
    start_unix
    wire idle 50 14 >"$TMP/idle.out" 2>&1 &
    ip=$!
    PIDS+=("$ip")
    for i in $(seq 1 100); do grep -q holding "$TMP/idle.out" && break; sleep 0.05; done
    t0=$(date +%s%N)
    check_served "contain: a client is served while 50 connections say nothing"
    t1=$(date +%s%N)
    # blocked by the silent ones, it would wait for their 10 s handshake
    # timeout; 5 s leaves a loaded machine and a sanitizer room
    [ $(((t1 - t0) / 1000000)) -lt 5000 ] && ok "contain: ... within 5 s" || fail "served too slowly"
    wait "$ip"
    cat "$TMP/idle.out"
    grep -q "dropped by the server: 50 of 50" "$TMP/idle.out" &&
        ok "contain: connections silent before their handshake are dropped (10 s)" ||
        fail "silent connections were not dropped"
    stop_server
    ;;
contain.max_conns)
    start_unix --max-conns 8
    wire idle 8 4 >"$TMP/idle.out" 2>&1 &
    ip=$!
    PIDS+=("$ip")
    for i in $(seq 1 100); do grep -q holding "$TMP/idle.out" && break; sleep 0.05; done
    sleep 0.3
    if wire session >"$TMP/s9.out" 2>&1; then fail "a 9th connection was served with --max-conns 8"; else ok "alloc: the 9th connection is refused at accept"; fi
    grep -q "max-conns" "$SLOG" && ok "log: refusal logged" || fail "refusal not logged"
    wait "$ip"
    # the server counts a connection out when its thread has seen it close,
    # a moment after the client closed it: tried for up to 10 s
    for i in $(seq 1 50); do wire session >"$TMP/alive.out" 2>&1 && break; sleep 0.2; done
    check_served "contain: served again once connections close"
    stop_server
    ;;
handle.foreign_wire)
    start_unix
    wire foreign >"$TMP/foreign.out" 2>&1 || fail "sec_wire foreign"
    cat "$TMP/foreign.out"
    stop_server
    ;;
lanes.wire)
    # lanes (runtime/lanes.c) by hand over tcp: forged lanes refused, a lane that dies
    # mid-transfer or a forged piece ends only its connection; both session modes
    for iso in thread process; do
        start_tcp --isolation $iso
        wire lanes >"$TMP/lanes.out" 2>&1 || fail "sec_wire lanes (--isolation $iso)"
        cat "$TMP/lanes.out"
        log_has "closed the connection in the middle" ||
            fail "no log line names the lane closed mid-transfer (--isolation $iso)"
        stop_server
    done
    ;;
handle.foreign_api)
    start_unix
    guest owner "$TMP/ids" "$TMP/go" >"$TMP/owner.out" 2>&1 &
    op=$!
    PIDS+=("$op")
    guest intruder "$TMP/ids" >"$TMP/intruder.out" 2>&1 || fail "intruder: a foreign object was usable"
    touch "$TMP/go"
    wait "$op" || fail "owner: its objects were changed or lost"
    show "$TMP/intruder.out" "intruder (another process, another session)"
    show "$TMP/owner.out" "owner"
    stop_server
    ;;
release.killed_client)
    start_unix
    guest work 0.5 1 >/dev/null 2>&1
    base=$(rss_kb "$SPID")
    LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "$GUEST" hog 256 >"$TMP/hog.out" 2>&1 &
    hp=$!
    PIDS+=("$hp")
    for i in $(seq 1 400); do grep -q ready "$TMP/hog.out" && break; sleep 0.05; done
    grep -q ready "$TMP/hog.out" || { show "$TMP/hog.out" hog; die "hog never got ready"; }
    full=$(rss_kb "$SPID")
    kill -KILL "$hp"
    wait "$hp" 2>/dev/null
    after=$full
    for i in $(seq 1 100); do
        after=$(rss_kb "$SPID")
        [ $((after - base)) -lt 32768 ] && break
        sleep 0.05
    done
    echo "server RSS: ${base} kB before, ${full} kB with 256 MiB of the client's device memory, ${after} kB after kill -9"
    [ $((full - base)) -gt 200000 ] || fail "the client's memory did not show in the server"
    [ $((after - base)) -lt 32768 ]
    mem_ok $? "release: the killed client's device memory and buffers are freed (RSS back within 32 MiB; $(((after - base) / 1024)) MiB)"
    check_served "contain: the server serves after the kill"
    stop_server
    ;;
auth.token)
    echo "s3cret-token" >"$TMP/token"
    start_tcp --token-file "$TMP/token"
    out=$(env -u APIGEN_TOKEN -u APIGEN_TOKEN_FILE LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "$GUEST" token 2>&1)
    echo "$out" | grep -q "authentication failed: no token sent" && echo "$out" | grep -q CONNECTION_LOST &&
        ok "auth: no token -> refused, clear error, connection-lost status" || fail "no token: $out"
    out=$(APIGEN_TOKEN=guess LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "$GUEST" token 2>&1)
    echo "$out" | grep -q "authentication failed: wrong token" && ok "auth: wrong token -> refused" || fail "wrong token: $out"
    out=$(APIGEN_TOKEN=s3cret-token LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "$GUEST" token 2>&1)
    echo "$out" | grep -q "SUCCESS" && ok "auth: APIGEN_TOKEN -> served" || fail "right token: $out"
    out=$(env -u APIGEN_TOKEN APIGEN_TOKEN_FILE="$TMP/token" LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "$GUEST" token 2>&1)
    echo "$out" | grep -q "SUCCESS" && ok "auth: APIGEN_TOKEN_FILE -> served" || fail "token file: $out"
    out=$(env -u APIGEN_TOKEN APIGEN_TOKEN_FILE="$TMP/nope" LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" "$GUEST" token 2>&1)
    echo "$out" | grep -q "APIGEN_TOKEN_FILE=$TMP/nope: No such file" && ok "auth: unreadable APIGEN_TOKEN_FILE -> clear error" ||
        fail "missing token file: $out"
    APIGEN_TOKEN=guess "$WIRE" session "$URL" >/dev/null 2>&1 && fail "a wire client got in with a wrong token"
    grep -q "refused tcp://127.0.0.1:[0-9]*: authentication failed" "$SLOG" && ok "auth: the server logs each refusal with the peer" ||
        { show "$SLOG" "server log"; fail "refusals not logged"; }
    stop_server
    ;;
auth.tls_token)
    # S7 over tls://: the token travels inside TLS and is still required
    echo "s3cret-token" >"$TMP/token"
    start_tls --token-file "$TMP/token"
    guest_expect "auth: tls://, no token" "authentication failed: no token sent" -u APIGEN_TOKEN -u APIGEN_TOKEN_FILE
    guest_expect "auth: tls://, wrong token" "authentication failed: wrong token" APIGEN_TOKEN=guess
    guest_served "auth: tls://, APIGEN_TOKEN -> served" APIGEN_TOKEN=s3cret-token
    grep -q "refused tls://127.0.0.1:[0-9]*: authentication failed" "$SLOG" &&
        ok "auth: the server logs each refusal with its tls:// peer" || { show "$SLOG" "server log"; fail "refusals not logged"; }
    stop_server
    ;;
transport.tls_verify)
    # S11: the guest talks only to a server whose certificate its CA vouches
    # for, under the name it connects to
    start_tls
    guest_served "transport: the right CA and name -> served"
    guest_expect "transport: wrong CA" "certificate is not trusted: unable to get local issuer certificate (checked against APIGEN_TLS_CA=$CERTS/other-ca.pem" \
        APIGEN_TLS_CA="$CERTS/other-ca.pem"
    guest_expect "transport: wrong host name" "for the name 'wrong.example'" APIGEN_TLS_SERVER_NAME=wrong.example
    guest_expect "transport: wrong host name" "hostname mismatch" APIGEN_TLS_SERVER_NAME=wrong.example
    guest_expect "transport: no system CA knows a test CA" "certificate is not trusted" -u APIGEN_TLS_CA
    guest_expect "transport: CA file missing" "APIGEN_TLS_CA $TMP/nope.pem: No such file or directory" APIGEN_TLS_CA="$TMP/nope.pem"
    guest_served "transport: the server still serves after the refusals"
    stop_server
    start_tls expired
    guest_expect "transport: expired certificate" "certificate has expired"
    stop_server
    start_tls_self
    guest_expect "transport: self-signed unknown certificate" "self-signed certificate"
    stop_server
    # the server's own files: missing, or a key of another certificate
    for args in "--tls-cert $TMP/nope.pem --tls-key $CERTS/server.key|certificate $TMP/nope.pem: No such file" \
        "--tls-cert $CERTS/server.pem --tls-key $CERTS/client.key|does not belong to certificate" \
        "--tls-cert $CERTS/server.pem|give both --tls-cert FILE and --tls-key FILE"; do
        # shellcheck disable=SC2086 # the options, split on spaces
        out=$(timeout -k 5 10 "$SERVER" --listen tls://127.0.0.1:0 ${args%%|*} 2>&1)
        rc=$?
        [ $rc = 2 ] && echo "$out" | grep -qF -- "${args#*|}" && ok "transport: server refuses to start: $out" ||
            fail "server with ${args%%|*}: exit $rc, $out"
    done
    out=$(timeout -k 5 10 "$SERVER" --listen tls://127.0.0.1:0 2>&1)
    [ $? = 1 ] && echo "$out" | grep -q "no server certificate and key were given" &&
        ok "transport: a tls:// listener without a certificate does not start: $out" || fail "no cert: $out"
    ;;
transport.tls_mtls)
    # S11 + S7: --tls-client-ca admits only clients with a certificate from that CA
    for iso in thread process; do
        start_tls --tls-client-ca "$CERTS/ca.pem" --isolation $iso
        guest_expect "transport ($iso): mTLS, no client certificate" "set APIGEN_TLS_CERT and APIGEN_TLS_KEY" \
            -u APIGEN_TLS_CERT -u APIGEN_TLS_KEY
        guest_expect "transport ($iso): mTLS, certificate of another CA" "TLS" \
            APIGEN_TLS_CERT="$CERTS/other-client.pem" APIGEN_TLS_KEY="$CERTS/other-client.key"
        guest_expect "transport ($iso): mTLS, only half of the pair" "needs both APIGEN_TLS_CERT and APIGEN_TLS_KEY" \
            APIGEN_TLS_CERT="$CERTS/client.pem" -u APIGEN_TLS_KEY
        guest_served "transport ($iso): mTLS, client certificate from the CA -> served" \
            APIGEN_TLS_CERT="$CERTS/client.pem" APIGEN_TLS_KEY="$CERTS/client.key"
        log_has "the client sent no certificate" && log_has "client certificate is not trusted\|TLS handshake failed" &&
            ok "transport ($iso): the server logs why each client was refused" || { show "$SLOG" "server log"; fail "refusals not logged"; }
        stop_server
    done
    ;;
transport.tls_mismatch)
    # S11: plain and TLS ends never hang on each other: one line each side
    start_tls
    t0=$(date +%s)
    guest_expect "transport: plain tcp:// guest -> tls:// server" "speaks TLS and this end does not" APIGEN_SERVER="${URL/tls:/tcp:}"
    log_has "is not a TLS client (a plain tcp:// guest? it must connect with tls://)" &&
        ok "transport: the tls:// server logs the plain client in one line" || { show "$SLOG" "server log"; fail "no log line"; }
    stop_server
    start_tcp
    URL=${URL/tcp:/tls:}
    guest_expect "transport: tls:// guest -> plain tcp:// server" "closed the connection during the TLS handshake (a plain tcp:// server?"
    log_has "speaks TLS and this end does not" && ok "transport: the plain server logs the TLS client in one line" ||
        { show "$SLOG" "server log"; fail "no log line"; }
    [ $(($(date +%s) - t0)) -lt 20 ] && ok "transport: all refused within $(($(date +%s) - t0)) s" || fail "too slow: a handshake waited"
    stop_server
    ;;
transport.tls_hostile)
    # S6 + S11: bytes that are not a ClientHello, a ClientHello cut short, and
    # silent connections: the server survives and serves others meanwhile
    start_tls
    port=${URL##*:}
    for i in 1 2 3 4 5 6 7 8; do
        head -c $((i * 997)) /dev/urandom >"$TMP/junk"
        timeout 5 bash -c "cat '$TMP/junk' >/dev/tcp/127.0.0.1/$port" 2>/dev/null
        # a TLS record header (0x16) and then garbage, as a hostile TLS client would
        { printf '\026\003\001\000\100'; head -c 64 /dev/urandom; } >"$TMP/junk"
        timeout 5 bash -c "cat '$TMP/junk' >/dev/tcp/127.0.0.1/$port" 2>/dev/null
    done
    # silent and half-handshake connections held open while a client is served
    exec 5<>"/dev/tcp/127.0.0.1/$port"
    exec 6<>"/dev/tcp/127.0.0.1/$port"
    printf '\026\003\001\002\000\001' >&6
    guest_served "transport: served while hostile connections hang around"
    check_served "transport: a wire client is served too"
    exec 5>&- 6>&-
    # each closed connection's line comes once the server has seen it close
    for i in $(seq 1 200); do [ "$(grep -c "before the handshake" "$SLOG")" -ge 8 ] && break; sleep 0.05; done
    kill -0 "$SPID" 2>/dev/null && ok "transport: the server survived hostile TLS bytes" || fail "the server died"
    n=$(grep -c "before the handshake" "$SLOG")
    [ "$n" -ge 8 ] && ok "transport: $n hostile connections closed with a log line each" || { show "$SLOG" "server log"; fail "only $n log lines"; }
    stop_server
    ;;
auth.unix_mode)
    start_unix
    mode=$(stat -c %a "$TMP/s.sock")
    [ "$mode" = 600 ] && ok "auth: the unix socket is mode 600" || fail "unix socket mode is $mode"
    stop_server
    ;;
load.guests_threads)
    start_unix
    guest work 1 2 >/dev/null 2>&1
    base=$(rss_kb "$SPID")
    NG=${SEC_LOAD_GUESTS:-4} NT=${SEC_LOAD_THREADS:-4}
    pids=()
    for g in $(seq 1 "$NG"); do
        guest work "$LOAD_SECONDS" "$NT" >"$TMP/load.$g" 2>&1 &
        pids+=($!)
        PIDS+=($!)
    done
    peak=0
    for p in "${pids[@]}"; do wait "$p" || fail "guest $p reported errors"; done
    cat "$TMP"/load.*
    n=$(cat "$TMP"/load.* | grep -c "errors=0 ")
    [ "$n" = "$NG" ] && ok "load: $NG guests x $NT threads, zero errors" || fail "load: errors in $((NG - n)) guests"
    [ "$(cat "$TMP"/load.* | sed -n 's/.*checksum=//p' | sort -u | wc -l)" = 1 ] &&
        ok "load: identical results in every guest" || fail "load: results differ between guests"
    sleep 0.5
    after=$(rss_kb "$SPID")
    echo "server RSS: ${base} kB after warm-up, ${after} kB after the load"
    [ $((after - base)) -lt 16384 ]
    mem_ok $? "load: server memory flat (within 16 MiB; grew $(((after - base) / 1024)) MiB)"
    grep -q "rejected" "$SLOG" && fail "load: the server rejected calls" || true
    stop_server
    ;;
valgrind.exa_demo)
    # S1 S5 S6 under memcheck: the server and a forwarded exa_demo and exa_edge,
    # each with --error-exitcode; the demo's output as natively.
    command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 0; }
    DEMO=$BUILD/examples/exa/exa_demo EDGE=$BUILD/examples/exa/exa_edge
    VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no"
    SERVER_SAVE=$SERVER
    SERVER="$VG $SERVER_SAVE"
    URL="unix://$TMP/s.sock"
    SLOG=$TMP/server.log LEAKS=$TMP/leaks
    env -u LD_LIBRARY_PATH -u APIGEN_SERVER EXA_LEAK_REPORT="$LEAKS" $SERVER --listen "$URL" >"$SLOG" 2>&1 &
    SPID=$!
    PIDS+=("$SPID")
    for i in $(seq 1 400); do grep -q "listening on" "$SLOG" 2>/dev/null && break; sleep 0.05; done
    env -u APIGEN_SERVER LD_LIBRARY_PATH="$BUILD/real" "$DEMO" >"$TMP/native.out" 2>/dev/null
    LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" $VG "$DEMO" >"$TMP/remote.out" 2>"$TMP/remote.err"
    rc=$?
    [ "$rc" = 0 ] && ok "valgrind: the forwarded demo is clean" || { show "$TMP/remote.err" "demo under valgrind"; fail "demo under valgrind: exit $rc"; }
    cmp -s "$TMP/native.out" "$TMP/remote.out" && ok "valgrind: same output as native" || { diff "$TMP/native.out" "$TMP/remote.out" | head; fail "output differs from native"; }
    LD_LIBRARY_PATH="$STUB_DIR" APIGEN_SERVER="$URL" $VG "$EDGE" >"$TMP/edge.out" 2>"$TMP/edge.err"
    rc=$?
    [ "$rc" = 0 ] && ok "valgrind: the forwarded edge cases are clean" || { show "$TMP/edge.err" "edge under valgrind"; fail "edge under valgrind: exit $rc"; }
    wire frames >/dev/null 2>&1 || fail "hostile frames under valgrind"
    wire bytes >/dev/null 2>&1 || fail "byte cuts under valgrind"
    kill -TERM "$SPID"
    for i in $(seq 1 200); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.05; done
    wait "$SPID"
    rc=$?
    [ "$rc" = 0 ] && ok "valgrind: the server is clean (hostile frames and byte cuts included)" ||
        { show "$SLOG" "server under valgrind"; fail "server under valgrind: exit $rc"; }
    grep -q "^live at exit: 0 contexts, 0 buffers, 0 device allocations" "$LEAKS" || fail "objects left"
    ;;
*)
    die "unknown mode $MODE"
    ;;
esac
[ "$FAILED" = 0 ] && echo "PASS: security.$MODE" || echo "FAILED: security.$MODE"
exit "$FAILED"
