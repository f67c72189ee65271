# Sourced by run_diff.sh and servers_diff.sh after they found the native and
# the forwarded run identical. A native run that failed passes only as the
# failure the test declares (EXPECT, its last argument):
#   expect-no-gpu   no GPU here: the program stops at its first CUDA call, with
#                   cudaErrorInsufficientDriver or cudaErrorNoDevice, exit 1, and
#                   prints that one line. This checks that the error is forwarded
#                   and nothing else; the program's own paths run without a GPU in
#                   cuda.replay.<name> (recorded on a GPU, tests/gpu/record.sh).
# Anything else (both runs failing the same other way, or no declaration) fails:
# a stub that answered one error to every call would pass a bare comparison.
#   expected_failure NAME NATIVE_RC NATIVE_OUT EXPECT  -> returns when it is a pass
expected_failure() {
    ef_name=$1 ef_rc=$2 ef_out=$3 ef_expect=$4
    [ "$ef_rc" = 0 ] && return 0
    if [ "$ef_expect" = expect-no-gpu ] && [ "$ef_rc" = 1 ] && [ "$(wc -l < "$ef_out")" -eq 1 ] &&
        grep -Eq '^error: [A-Za-z_0-9]+\(.*\): cudaError(InsufficientDriver|NoDevice) ' "$ef_out"; then
        echo "PASS (the declared no-GPU path): $ef_name stops at its first CUDA call natively and forwarded: $(cat "$ef_out")"
        echo "  (only error forwarding is checked here; cuda.replay.$ef_name runs the program's paths)"
        return 0
    fi
    echo "FAIL: $ef_name: native and forwarded agree, but the native run failed (exit $ef_rc) and the test"
    echo "  does not declare this failure (${ef_expect:-no declaration}; expect-no-gpu allows only one line,"
    echo "  exit 1, the first CUDA call failing with cudaErrorInsufficientDriver/NoDevice):"
    sed 's/^/  | /' "$ef_out"
    exit 1
}
