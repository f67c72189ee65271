# shellcheck shell=sh disable=SC2034  # the sourcing script uses what this sets
# Sourced by the version scripts (scripts/cuda-versions.sh,
# cuda-driver-versions.sh, cuda-lib-versions.sh, cudnn-versions.sh) after
# `set -u` and `root=...`, before they shift their arguments: the first
# three are theirs alike (APIGEN GUEST_LIB TRANSPORT_LIB). Sets
#   apigen guest_lib tp_lib  those arguments
#   tp_libs   the transport library, with OpenSSL when it was built with tls://
#             (a library built so needs it at link time)
#   host_lib  libapigen_host.a beside GUEST_LIB (the servers link it)
#   cache     APIGEN_WHEEL_CACHE (default ~/.cache/apigen-cuda-wheels)
#   pip, cc   PIP (default pip), CC (default cc)
apigen=$1 guest_lib=$2 tp_lib=$3
tp_libs=$tp_lib
if nm "$tp_lib" 2>/dev/null | grep -q ' U SSL_'; then tp_libs="$tp_lib -lssl -lcrypto"; fi
host_lib=$(dirname "$guest_lib")/libapigen_host.a
cache=${APIGEN_WHEEL_CACHE:-$HOME/.cache/apigen-cuda-wheels}
pip=${PIP:-pip}
cc=${CC:-cc}
