/* runtime/mirror.c: mirrors of remote memory at a fixed address, with
 * page-granular tracking of the application's writes. A fake "server copy"
 * (a plain buffer) stands for the device's memory: pushes copy dirty runs
 * into it, pulls copy clean runs of stale mirrors back. Checked: a taken
 * address is refused (EEXIST), never mapped elsewhere; new pages start dirty;
 * after a push only pages written again are pushed; a pull keeps pages the
 * host wrote and refreshes the others; the application's own SIGSEGV handler
 * still gets faults outside mirrors, also one installed after the mirror. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "rt_internal.h"
#include "check.h"

static uint8_t *server_; /* the "device" copy of the mirrored range */
static uint64_t base_;
static size_t pushed_, pulled_, calls_;

static int push_fn(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)user;
    memcpy(server_ + (addr - base_), alias, len);
    pushed_ += len;
    calls_++;
    return 0;
}

static int pull_fn(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)user;
    memcpy(alias, server_ + (addr - base_), len);
    pulled_ += len;
    calls_++;
    return 0;
}

static int fail_fn(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)alias, (void)addr, (void)len, (void)user;
    return 42;
}

static sigjmp_buf jb_;
static volatile sig_atomic_t app_faults_;
static volatile sig_atomic_t armed_; /* a sigsetjmp is waiting for the fault */
static void app_handler(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    if (!armed_) { /* not the test's fault: the default action, as a crash handler would */
        signal(sig, SIG_DFL);
        return;
    }
    armed_ = 0;
    app_faults_++;
    siglongjmp(jb_, 1);
}

static void install_app_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = app_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
}

/* A write to a page nobody mapped writable must reach the application. */
static void app_fault_reaches_app(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    volatile uint8_t *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED);
    sig_atomic_t before = app_faults_;
    armed_ = 1;
    if (sigsetjmp(jb_, 1) == 0) ro[0] = 1;
    CHECK(app_faults_ == before + 1);
    munmap((void *)ro, (size_t)pg);
}

/* An application handler installed after the runtime's: faults inside its
 * own read-only page (ro_own_) it takes (jumps out); others it passes to the
 * handler it replaced (ours), as signal-chaining libraries do. */
static struct sigaction replaced_;
static volatile sig_atomic_t chaining_installed_, passed_on_;
static void chaining_handler(int sig, siginfo_t *si, void *uc)
{
    if (si && si->si_code == SEGV_ACCERR) {
        /* a write the runtime may track: pass it on first */
        uint64_t b;
        if (apigen_mirror_find((uint64_t)(uintptr_t)si->si_addr, &b, NULL)) {
            passed_on_++;
            replaced_.sa_sigaction(sig, si, uc);
            return;
        }
        if (armed_) {
            armed_ = 0;
            app_faults_++;
            siglongjmp(jb_, 1);
        }
    }
    if (replaced_.sa_flags & SA_SIGINFO) replaced_.sa_sigaction(sig, si, uc);
}

/* In a child: a fault neither handler takes (an unmapped address) ends the
 * child by SIGSEGV through both, instead of looping. */
static void chain_back_test(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* a loop would end by SIGALRM, which the check below tells apart */
        volatile int *bad = (volatile int *)(uintptr_t)sysconf(_SC_PAGESIZE);
        *bad = 1;
        _exit(0);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
}

int main(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t np = 8, size = np * pg;
    CHECK(apigen_mirror_live() == 0);
    CHECK(apigen_mirror_push(fail_fn, NULL) == 0); /* no mirror: nothing to do */

    install_app_handler(); /* the application's, before any mirror */

    /* an address the guest uses already is refused, never moved */
    uint8_t *taken = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(taken != MAP_FAILED);
    CHECK(apigen_mirror_add((uint64_t)(uintptr_t)taken, size, true) == EEXIST);
    CHECK(apigen_mirror_add((uint64_t)(uintptr_t)taken + 1, size, true) == EINVAL);
    munmap(taken, size);
    /* now free: the mirror goes exactly there */
    base_ = (uint64_t)(uintptr_t)taken;
    CHECK(apigen_mirror_add(base_, size - 5, true) == 0); /* rounded up to pages */
    CHECK(apigen_mirror_remove(base_));
    CHECK(apigen_mirror_add(base_, size, true) == 0);
    CHECK(apigen_mirror_live() == 1);
    uint64_t b = 0, s = 0;
    CHECK(apigen_mirror_find(base_ + size - 1, &b, &s) && b == base_ && s == size);
    CHECK(!apigen_mirror_find(base_ + size, NULL, NULL));
    server_ = malloc(size);
    CHECK(server_ != NULL);
    if (!server_) return 1;
    memset(server_, 0xEE, size);

    volatile uint8_t *app = (volatile uint8_t *)(uintptr_t)base_;
    /* new pages are writable and dirty: all of them are pushed once */
    for (size_t i = 0; i < size; i++) app[i] = (uint8_t)i;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == size && calls_ == 1);
    for (size_t i = 0; i < size; i++) CHECK(server_[i] == (uint8_t)i);
    /* nothing written since: nothing pushed */
    pushed_ = calls_ = 0;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == 0 && calls_ == 0);
    /* reads do not dirty */
    unsigned sum = 0;
    for (size_t i = 0; i < size; i++) sum += app[i];
    CHECK(sum > 0);
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == 0);
    /* writes to pages 1, 2 and 5: two runs, three pages */
    app[1 * pg + 3] = 0xA1;
    app[2 * pg] = 0xA2;
    app[5 * pg + pg - 1] = 0xA5;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == 3 * pg && calls_ == 2);
    CHECK(server_[1 * pg + 3] == 0xA1 && server_[2 * pg] == 0xA2 && server_[5 * pg + pg - 1] == 0xA5);

    /* the "device" writes every page; not stale: a pull moves nothing */
    memset(server_, 0x5D, size);
    pulled_ = calls_ = 0;
    CHECK(!apigen_mirror_any_stale());
    CHECK(apigen_mirror_pull(pull_fn, NULL, false) == 0);
    CHECK(pulled_ == 0 && app[0] == 0);
    /* stale: the host writes page 3 meanwhile (legal only where the device
     * did not write), the pull refreshes the other pages and keeps page 3 */
    apigen_mirror_mark_stale(base_ + pg, 1);
    CHECK(apigen_mirror_any_stale());
    app[3 * pg + 7] = 0x33;
    CHECK(apigen_mirror_pull(pull_fn, NULL, false) == 0);
    CHECK(pulled_ == size - pg && calls_ == 2);
    CHECK(app[0] == 0x5D && app[size - 1] == 0x5D && app[3 * pg + 7] == 0x33 && app[3 * pg] == 3 * pg % 256);
    CHECK(!apigen_mirror_any_stale());
    /* the pull left pages clean and read-only: a write is seen again */
    pushed_ = calls_ = 0;
    app[0] = 0x11;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == 2 * pg && calls_ == 2); /* pages 0 and 3 */
    CHECK(server_[0] == 0x11 && server_[3 * pg + 7] == 0x33);

    /* keep_stale: pulled, still marked */
    apigen_mirror_mark_stale(0, 0);
    CHECK(apigen_mirror_pull(pull_fn, NULL, true) == 0);
    CHECK(apigen_mirror_any_stale());
    CHECK(apigen_mirror_pull(pull_fn, NULL, false) == 0);
    CHECK(!apigen_mirror_any_stale());
    /* a failing push leaves the run dirty for the next one */
    app[4 * pg] = 0x44;
    CHECK(apigen_mirror_push(fail_fn, NULL) == 42);
    pushed_ = 0;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == pg && server_[4 * pg] == 0x44);

    /* faults elsewhere reach the application's handler, installed before */
    app_fault_reaches_app();
    /* ... and one installed after the mirror that passes faults it does not
     * take to the one before it (ours): writes to clean pages are still
     * tracked through it, and its own faults stay its own */
    chaining_installed_ = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = chaining_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, &replaced_) == 0);
    CHECK(apigen_mirror_push(push_fn, NULL) == 0); /* says so once; does not take over */
    app[6 * pg] = 0x66; /* tracked through the chaining handler */
    pushed_ = 0;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0);
    CHECK(pushed_ == pg && server_[6 * pg] == 0x66);
    CHECK(passed_on_ == 1);
    sig_atomic_t before = app_faults_;
    long pgl = sysconf(_SC_PAGESIZE);
    volatile uint8_t *ro = mmap(NULL, (size_t)pgl, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    armed_ = 1;
    if (sigsetjmp(jb_, 1) == 0) ro[0] = 1; /* its own: it jumps out */
    CHECK(app_faults_ == before + 1);
    munmap((void *)ro, (size_t)pgl);

    /* a library of the owner's family: its calls push first and mark every
     * mirror stale (for a queue nobody names: only a sync of all clears) */
    static const apigen_api owner = {.name = "own", .family = "fam"};
    static const apigen_api library = {.name = "lib", .family = "fam"};
    static const apigen_api stranger = {.name = "other", .family = "else"};
    CHECK(rt_mirror_foreign_call(&library) == 0); /* no owner yet: nothing */
    apigen_mirror_own(&owner, push_fn);
    app[7 * pg] = 0x77;
    pushed_ = 0;
    CHECK(rt_mirror_foreign_call(&owner) == 0 && pushed_ == 0);    /* moves mirrors itself */
    CHECK(rt_mirror_foreign_call(&stranger) == 0 && pushed_ == 0); /* another family */
    CHECK(!apigen_mirror_any_stale());
    CHECK(rt_mirror_foreign_call(&library) == 0 && pushed_ == pg && server_[7 * pg] == 0x77);
    CHECK(apigen_mirror_any_stale());
    CHECK(apigen_mirror_synced(APIGEN_SYNC_QUEUE, 1, 0, pull_fn, NULL) == 0);
    CHECK(apigen_mirror_any_stale()); /* the library's queue is not that one */
    CHECK(apigen_mirror_synced(APIGEN_SYNC_ALL, 0, 0, pull_fn, NULL) == 0);
    CHECK(!apigen_mirror_any_stale());

    /* a fault neither takes ends the process by SIGSEGV, never loops */
    chain_back_test();

    CHECK(apigen_mirror_remove(base_));
    CHECK(!apigen_mirror_remove(base_));
    /* clean first: nothing to push, and a pull fills every page */
    CHECK(apigen_mirror_add(base_, size, false) == 0);
    pushed_ = pulled_ = 0;
    CHECK(apigen_mirror_push(push_fn, NULL) == 0 && pushed_ == 0);
    memset(server_, 0x77, size);
    apigen_mirror_mark_stale(base_, size);
    CHECK(apigen_mirror_pull(pull_fn, NULL, false) == 0 && pulled_ == size);
    CHECK(app[0] == 0x77 && app[size - 1] == 0x77);
    app[pg] = 1; /* tracked from the start */
    CHECK(apigen_mirror_push(push_fn, NULL) == 0 && pushed_ == pg && server_[pg] == 1);
    CHECK(apigen_mirror_remove(base_));
    CHECK(apigen_mirror_live() == 0);
    /* allocations of any size, several in one page (as a library packs
     * small ones) and one that ends inside a page: only their bytes move,
     * since the server's library refuses a copy past an allocation's end */
    {
        uint64_t a1 = base_ + 16, a2 = base_ + 256, a3 = base_ + pg + 8;
        CHECK(apigen_mirror_map(a1, 8, true) == 0);    /* a variable, clean */
        CHECK(apigen_mirror_map(a2, 100, false) == 0); /* shares page 0 */
        CHECK(apigen_mirror_map(a3, 2 * pg, false) == 0);
        CHECK(apigen_mirror_live() == 2); /* page 0, then pages 1..3 */
        memset(server_, 0, size);
        pushed_ = calls_ = 0;
        CHECK(apigen_mirror_push(push_fn, NULL) == 0);
        /* new allocations are dirty, also where they share a page: page 0
         * (both allocations of it, the variable's bytes too), pages 1..3 */
        CHECK(pushed_ == 8 + 100 + 2 * pg && calls_ == 3);
        app[16] = 0x16; app[400] = 0x30; app[pg + 8] = 0x18; app[3 * pg + 100] = 0x99;
        pushed_ = calls_ = 0;
        CHECK(apigen_mirror_push(push_fn, NULL) == 0);
        /* page 0: the variable and the 100 bytes (app[400] belongs to
         * nobody); pages 1 and 3 (not 2): the allocation's bytes of each */
        CHECK(pushed_ == 8 + 100 + pg && calls_ == 4);
        CHECK(server_[16] == 0x16);
        CHECK(server_[400] == 0);
        CHECK(server_[pg + 8] == 0x18);
        CHECK(server_[3 * pg + 100] == 0);
        memset(server_, 0x42, size);
        apigen_mirror_mark_stale(0, 0);
        pulled_ = calls_ = 0;
        CHECK(apigen_mirror_pull(pull_fn, NULL, false) == 0);
        CHECK(pulled_ == 8 + 100 + 2 * pg && calls_ == 3);
        CHECK(app[16] == 0x42 && app[256] == 0x42 && app[400] == 0x30);
        CHECK(app[pg] == 0 && app[pg + 8] == 0x42);
        apigen_mirror_unmap(a2);
        CHECK(apigen_mirror_live() == 2); /* the variable still holds page 0 */
        apigen_mirror_unmap(a1);
        CHECK(apigen_mirror_live() == 1 && !apigen_mirror_find(base_, NULL, NULL));
        apigen_mirror_unmap(a3);
        CHECK(apigen_mirror_live() == 0);
        /* an allocation whose second page is taken in the guest: refused,
         * and the first page's mirror made for it goes again */
        void *t = mmap((void *)(uintptr_t)(base_ + pg), pg, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        CHECK(t == (void *)(uintptr_t)(base_ + pg));
        CHECK(apigen_mirror_map(base_ + 8, 2 * pg, false) == EEXIST);
        CHECK(apigen_mirror_live() == 0 && !apigen_mirror_find(base_, NULL, NULL));
        munmap(t, pg);
    }
    /* the range is free again */
    void *again = mmap((void *)(uintptr_t)base_, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(again == (void *)(uintptr_t)base_);
    munmap(again, size);
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    else printf("mirror: ok\n");
    return check_failures != 0;
}
