#!/usr/bin/env bash
# Checks that the committed generated/<api>/ is what apigen makes from the
# spec today: a header or spec change that was not regenerated fails here.
#   check_generated.sh APIGEN SPEC GENERATED_DIR
set -u
APIGEN=${1:?usage: check_generated.sh APIGEN SPEC DIR}
SPEC=${2:?}
DIR=${3:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/apigen-regen.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
if ! "$APIGEN" "$SPEC" -o "$TMP/out"; then
    echo "FAIL: apigen $SPEC failed"
    exit 1
fi
if ! diff -ru "$DIR" "$TMP/out"; then
    echo "FAIL: $DIR is not current: run \`apigen $SPEC -o $DIR\` (or cmake --build <build> --target regen-<api>) and commit it"
    exit 1
fi
echo "PASS: $DIR is current ($(ls "$DIR" | wc -l) files)"
