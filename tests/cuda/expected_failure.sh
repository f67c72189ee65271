# Sourced by run_diff.sh and servers_diff.sh after they found the native and
# the forwarded run identical. A native run that failed passes only as the
# failure the test declares (EXPECT, its last argument):
#   expect-no-gpu   no GPU here: the program stops at the first CUDA call it needs,
#                   exit 1, its last line "error: CALL: cudaErrorInsufficientDriver (...)"
#                   (or NoDevice), and every line before it names one of those two
#                   errors too (calls whose failure it reports and goes on, e.g.
#                   graph_nodes' queries). This checks that the error is forwarded
#                   and nothing else; the program's own paths run without a GPU in
#                   cuda.replay.<name> (recorded on a GPU, tests/gpu/record.sh).
# Anything else (both runs failing the same other way, or no declaration) fails:
# a stub that answered one error to every call would pass a bare comparison.
#   expected_failure NAME NATIVE_RC NATIVE_OUT EXPECT  -> returns when it is a pass
expected_failure() {
    ef_name=$1 ef_rc=$2 ef_out=$3 ef_expect=$4
    [ "$ef_rc" = 0 ] && return 0
    if [ "$ef_expect" = expect-no-gpu ] && [ "$ef_rc" = 1 ] && [ -s "$ef_out" ] &&
        tail -n 1 "$ef_out" | grep -Eq '^error: [A-Za-z_0-9]+\(.*\): cudaError(InsufficientDriver|NoDevice) ' &&
        ! grep -Evq 'cudaError(InsufficientDriver|NoDevice)' "$ef_out"; then
        echo "PASS (the declared no-GPU path): $ef_name stops at the first CUDA call it needs, natively and forwarded: $(tail -n 1 "$ef_out")"
        echo "  (only error forwarding is checked here; cuda.replay.$ef_name runs the program's paths)"
        return 0
    fi
    echo "FAIL: $ef_name: native and forwarded agree, but the native run failed (exit $ef_rc) and the test"
    echo "  does not declare this failure (${ef_expect:-no declaration}; expect-no-gpu allows exit 1, every"
    echo "  line naming cudaErrorInsufficientDriver/NoDevice, the last one 'error: CALL: ...'):"
    sed 's/^/  | /' "$ef_out"
    exit 1
}
