# shellcheck shell=sh disable=SC2154,SC2012  # $cache comes from the sourcing script; wheel names are plain
# Sourced by the version scripts (scripts/cuda-versions.sh,
# cuda-driver-versions.sh, cuda-lib-versions.sh): NVIDIA's wheels from PyPI,
# downloaded once into the cache and unpacked there.
#
# Needs: $cache (APIGEN_WHEEL_CACHE, default ~/.cache/apigen-cuda-wheels),
# $pip (default pip). Concurrent runs (ctest -j) share the cache: a download
# or an unpack of one wheel is done under a lock on that wheel (flock, when
# the machine has it).

# wheel_fetch REQ -> the wheel file in the cache (downloads it when missing).
# REQ is a pip requirement NAME==VERSION, VERSION exact (10.3.7.77) or a
# prefix (12.9.*). Status 1 when it is neither cached nor downloadable (the
# reason in $cache/pip-NAME.log).
wheel_fetch() {
    _wn=$(echo "${1%%==*}" | tr - _)
    _wv=${1##*==}
    _wv=${_wv%.\*}
    _wf=$(ls "$cache/$_wn-$_wv"-*.whl "$cache/$_wn-$_wv".*.whl 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$_wf" ]; then
        echo "downloading $1 from PyPI into $cache" >&2   # stdout is the answer
        "${pip:-pip}" download --no-deps --quiet --disable-pip-version-check -d "$cache" "$1" \
            >"$cache/pip-$_wn.log" 2>&1 || return 1
        _wf=$(ls "$cache/$_wn-$_wv"-*.whl "$cache/$_wn-$_wv".*.whl 2>/dev/null | sort -V | tail -n 1)
    fi
    [ -n "$_wf" ] && echo "$_wf"
}

# wheel_offline REQ: the SKIP message of a wheel neither cached nor downloadable
wheel_offline() {
    _wn=$(echo "${1%%==*}" | tr - _)
    echo "SKIP: cannot download $1 from the package registry and it is not cached in $cache:"
    tail -n 3 "$cache/pip-$_wn.log" 2>/dev/null | sed 's/^/  /'
}

# wheel_unpack REQ DEST: the wheel's include/ folder into DEST/include and its
# shared libraries (lib/*.so*) into DEST/lib, once (DEST/.ready). Status 77
# when the wheel cannot be had (offline, not cached), 1 on other failures.
wheel_unpack() {
    [ -f "$2/.ready" ] && return 0
    mkdir -p "$cache/.locks" || return 1
    (
        if command -v flock >/dev/null 2>&1; then
            flock 9 || exit 1
        fi
        [ -f "$2/.ready" ] && exit 0
        _wf=$(wheel_fetch "$1") || exit 77
        rm -rf "$2" && mkdir -p "$2/x" "$2/include" "$2/lib" || exit 1
        (cd "$2/x" && unzip -q -o "$_wf" '*/include/*' '*/lib/*.so*' 2>/dev/null
         [ $? -le 11 ]) || exit 1   # 11: a pattern matched nothing (a wheel without lib/)
        find "$2/x" -type d -name include -exec sh -c 'cp -r "$1/." "$2/include/"' _ {} "$2" \; || exit 1
        find "$2/x" -path '*/lib/*.so*' -type f -exec cp {} "$2/lib/" \; || exit 1
        rm -rf "$2/x" && touch "$2/.ready"
    ) 9>"$cache/.locks/$(echo "${1%%==*}" | tr - _)"
}
