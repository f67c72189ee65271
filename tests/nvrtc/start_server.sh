# Sourced by the NVRTC test scripts: start_server SERVER TRANSPORT DIR starts
# SERVER listening over TRANSPORT in DIR (its current folder: a folder of
# its own, not the guest's), with the CUDA driver of NODRIVER (when set) on
# its library path; sets $spid and $url. stop_server ends it.
start_server() {
    _srv=$1 _tr=$2 _dir=$3
    case "$_tr" in
    unix) url="unix://$_dir/s.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-nvrtc-$$" ;;
    *) echo "unknown transport $_tr"; exit 2 ;;
    esac
    (cd "$_dir" && LD_LIBRARY_PATH="${NODRIVER:-}" exec "$_srv" --listen "$url") > "$_dir/server.log" 2>&1 &
    spid=$!
    _i=0
    while [ $_i -lt 200 ]; do
        grep -q "listening" "$_dir/server.log" 2>/dev/null && break
        sleep 0.05; _i=$((_i + 1))
    done
    [ "$_tr" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$_dir/server.log" | head -1)
    return 0
}
stop_server() {
    [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    spid=
}
