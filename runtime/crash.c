/* A session process that faults (a library bug, a driver fault, a call the
 * spec let through with a bad pointer) ends only its own session; the
 * parent logs the signal. This adds where it happened: the faulting
 * process writes its stack to stderr (the server's log) before it dies by
 * the same signal, so an operator can report it without a debugger. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char line[160];
    void *frames[48];
    /* snprintf is not async-signal-safe in theory; the process is about to
     * die and this is its last word, so a best effort is right */
    int n = snprintf(line, sizeof line,
                     "apigen[server %ld]: session process %ld: signal %d (%s) at address %p; "
                     "its stack:\n",
                     (long)getpid(), (long)getpid(), sig, strsignal(sig), si ? si->si_addr : NULL);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    int k = backtrace(frames, 48);
    backtrace_symbols_fd(frames, k, STDERR_FILENO);
    signal(sig, SIG_DFL); /* die by the same signal: the parent logs it */
    raise(sig);
}

/* Under a sanitizer its own handler reports better: keep it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KEEP_SANITIZER_HANDLER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KEEP_SANITIZER_HANDLER 1
#endif
#endif

void rt_crash_report_install(void)
{
#ifdef KEEP_SANITIZER_HANDLER
    return;
#endif
    void *warm[1];
    (void)backtrace(warm, 1); /* loads libgcc now, not inside the handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}
