/* Trampolines of the driver tracing shim (x86-64 SysV).
 * Each stub loads its index into r11 and jumps to a common part that saves
 * every argument register (rdi..r9, rax for varargs, xmm0-7), asks C for the
 * target, restores them and tail-jumps: the callee sees the caller's frame
 * untouched, so stack arguments and variadic calls work. */
        .text

        .macro SAVE_ARGS
        push    %rbp
        mov     %rsp, %rbp
        sub     $192, %rsp
        mov     %rdi, 0(%rsp)
        mov     %rsi, 8(%rsp)
        mov     %rdx, 16(%rsp)
        mov     %rcx, 24(%rsp)
        mov     %r8, 32(%rsp)
        mov     %r9, 40(%rsp)
        mov     %rax, 48(%rsp)
        movdqu  %xmm0, 64(%rsp)
        movdqu  %xmm1, 80(%rsp)
        movdqu  %xmm2, 96(%rsp)
        movdqu  %xmm3, 112(%rsp)
        movdqu  %xmm4, 128(%rsp)
        movdqu  %xmm5, 144(%rsp)
        movdqu  %xmm6, 160(%rsp)
        movdqu  %xmm7, 176(%rsp)
        .endm

        .macro RESTORE_AND_JUMP
        mov     %rax, %r11
        mov     0(%rsp), %rdi
        mov     8(%rsp), %rsi
        mov     16(%rsp), %rdx
        mov     24(%rsp), %rcx
        mov     32(%rsp), %r8
        mov     40(%rsp), %r9
        mov     48(%rsp), %rax
        movdqu  64(%rsp), %xmm0
        movdqu  80(%rsp), %xmm1
        movdqu  96(%rsp), %xmm2
        movdqu  112(%rsp), %xmm3
        movdqu  128(%rsp), %xmm4
        movdqu  144(%rsp), %xmm5
        movdqu  160(%rsp), %xmm6
        movdqu  176(%rsp), %xmm7
        leave
        jmp     *%r11
        .endm

        .globl  drvtrace_sym_common
        .hidden drvtrace_sym_common
        .type   drvtrace_sym_common, @function
drvtrace_sym_common:
        SAVE_ARGS
        mov     %r11, %rdi
        mov     %rsp, %rsi
        lea     8(%rbp), %rdx           /* where the return address lies */
        call    drvtrace_sym_enter
        RESTORE_AND_JUMP
        .size   drvtrace_sym_common, .-drvtrace_sym_common

        .globl  drvtrace_dyn_common
        .hidden drvtrace_dyn_common
        .type   drvtrace_dyn_common, @function
drvtrace_dyn_common:
        SAVE_ARGS
        mov     %r11, %rdi
        mov     %rsp, %rsi
        lea     8(%rbp), %rdx
        call    drvtrace_dyn_enter
        RESTORE_AND_JUMP
        .size   drvtrace_dyn_common, .-drvtrace_dyn_common

/* A logged call returns here (its return address was swapped): log the
 * result, then go back to the real caller taken from a per-thread stack.
 * rsp is 16-aligned on arrival (the callee's ret popped 8). */
        .globl  drvtrace_ret_thunk
        .hidden drvtrace_ret_thunk
        .type   drvtrace_ret_thunk, @function
drvtrace_ret_thunk:
        sub     $48, %rsp
        mov     %rax, 0(%rsp)
        mov     %rdx, 8(%rsp)
        movdqu  %xmm0, 16(%rsp)
        movdqu  %xmm1, 32(%rsp)
        mov     %rax, %rdi
        call    drvtrace_ret_leave
        mov     %rax, %r11
        mov     0(%rsp), %rax
        mov     8(%rsp), %rdx
        movdqu  16(%rsp), %xmm0
        movdqu  32(%rsp), %xmm1
        add     $48, %rsp
        jmp     *%r11
        .size   drvtrace_ret_thunk, .-drvtrace_ret_thunk

/* Pool of anonymous trampolines, 16 bytes apart, handed out at run time for
 * export-table entries and for cuGetProcAddress results the driver does not
 * export under any name. */
        .globl  drvtrace_dyn_pool
        .hidden drvtrace_dyn_pool
        .balign 16
drvtrace_dyn_pool:
        .set    slot, 0
        .rept   DRVTRACE_POOL
        .balign 16
        mov     $slot, %r11d
        jmp     drvtrace_dyn_common
        .set    slot, slot + 1
        .endr
        .balign 16

        .section .note.GNU-stack,"",@progbits
