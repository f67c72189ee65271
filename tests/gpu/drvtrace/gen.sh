#!/bin/sh
# gen.sh SYMLIST OUTDIR: writes OUTDIR/syms.S (one exported 16-byte stub per
# driver symbol, in list order) and OUTDIR/syms.inc (their names for C).
set -eu
list=$1; out=$2
n=$(wc -l < "$list")
{
    echo '        .text'
    echo '        .globl  drvtrace_sym_base'
    echo '        .hidden drvtrace_sym_base'
    echo '        .balign 16'
    echo 'drvtrace_sym_base:'
    awk '{
        printf "        .balign 16\n        .globl  %s\n        .type   %s, @function\n%s:\n", $1, $1, $1
        printf "        mov     $%d, %%r11d\n        jmp     drvtrace_sym_common\n        .size   %s, .-%s\n", NR-1, $1, $1
    }' "$list"
    echo '        .section .note.GNU-stack,"",@progbits'
} > "$out/syms.S"
{
    echo "#define DRVTRACE_NSYMS $n"
    echo "static const char *const sym_names[DRVTRACE_NSYMS] = {"
    awk '{ printf "    \"%s\",\n", $1 }' "$list"
    echo "};"
} > "$out/syms.inc"
