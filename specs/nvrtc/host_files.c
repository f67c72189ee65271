/* The file guard of NVRTC compiles on the server (specs/nvrtc.yaml, docs/
 * nvrtc.md). NVRTC resolves #include lines itself: quoted names next to the
 * including file and in the current folder, absolute names as they are, -I
 * folders. On the server all of those would be the SERVER's files, which a
 * guest must never read (an `#include "/etc/shadow"`, a macro that spells
 * one, an -I a forged client sends). While a compile runs, this file's
 * definitions of the C library's file functions that libnvrtc.so.13 imports
 * (open, fopen, fopen64, __xstat, __lxstat, access, opendir, realpath, and
 * openat, stat, lstat of the libstdc++ it loads)
 * interpose on the library's (the server exports them: -Wl,--dynamic-list,
 * nvrtc_files.list) and let through only paths inside the server's CUDA
 * toolkit (found from where libnvrtc.so.13 lies). The guest's headers come
 * as in-memory headers and need no file. Other threads, and this thread
 * outside a compile, see the C library unchanged. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nvrtc.h>

#include "apigen_rt.h"
#include "nvrtc_files.h"

static _Thread_local bool guarded;
static _Thread_local int refusals;
static _Thread_local char refused[1024]; /* the first four, for the log */
static _Thread_local const char *guest_cwd;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char root[PATH_MAX];    /* the toolkit: .../cuda-13.0 */
static char include[PATH_MAX + 16]; /* its include folder */

static char *(*real_realpath)(const char *, char *);

static void find_root(void)
{
    real_realpath = (char *(*)(const char *, char *))dlsym(RTLD_NEXT, "realpath");
    Dl_info info;
    char lib[PATH_MAX];
    if (!real_realpath || !dladdr((void *)nvrtcVersion, &info) || !info.dli_fname ||
        !real_realpath(info.dli_fname, lib))
        return;
    /* <root>/lib64/libnvrtc.so.13 or <root>/targets/<arch>/lib/libnvrtc.so.13 */
    char *s = strrchr(lib, '/');
    if (!s) return;
    *s = 0;
    s = strrchr(lib, '/');
    if (!s) return;
    *s = 0;
    char cand[PATH_MAX + 16];
    snprintf(cand, sizeof cand, "%s/include/nvrtc.h", lib);
    struct stat st;
    if (fstatat(AT_FDCWD, cand, &st, 0) != 0) return; /* fstatat: not a guarded name */
    snprintf(root, sizeof root, "%s", lib);
    snprintf(include, sizeof include, "%s/include", lib);
}

const char *nvrtc_toolkit_include(void)
{
    pthread_once(&once, find_root);
    return include[0] ? include : NULL;
}

/* Whether the call comes from the CUDA driver (libcuda.so.1 or one of the
 * libnvidia-* libraries it loads, such as the PTX JIT compiler): NVRTC
 * uses the driver during a compile, and the driver reads its own files
 * (its JIT cache, ~/.nv/ComputeCache) as natively; include lookups are
 * NVRTC's own calls and stay guarded. */
static bool from_driver(const void *caller)
{
    Dl_info info;
    if (!caller || !dladdr(caller, &info) || !info.dli_fname) return false;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    return strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libnvidia-", 10) == 0;
}

/* Whether a guarded thread may touch path: inside the toolkit (symbolic
 * links followed), or the driver's own files. Refusals are counted for the log. */
#define allowed(path) allowed_from(path, __builtin_return_address(0))
static bool allowed_from(const char *path, const void *caller)
{
    if (!guarded || !path) return true;
    if (from_driver(caller)) return true;
    pthread_once(&once, find_root);
    char canon[PATH_MAX];
    size_t n = strlen(root);
    if (root[0] && real_realpath && real_realpath(path, canon) &&
        strncmp(canon, root, n) == 0 && (canon[n] == '/' || canon[n] == 0))
        return true;
    /* logged: files that exist (NVRTC probes every -I folder for each name,
     * and looks at its current folder in every compile) */
    struct stat st;
    if (fstatat(AT_FDCWD, path, &st, 0) == 0 && S_ISREG(st.st_mode) && refusals++ < 4) {
        size_t used = strlen(refused);
        snprintf(refused + used, sizeof refused - used, "%s'%s'", used ? ", " : "", path);
    }
    errno = ENOENT;
    return false;
}

/* allowed() for a name relative to a folder descriptor: one relative to
 * another folder than the current one is not resolved here, so refused */
#define allowed_at(dirfd, path) allowed_at_from(dirfd, path, __builtin_return_address(0))
static bool allowed_at_from(int dirfd, const char *path, const void *caller)
{
    if (guarded && path && path[0] != '/' && dirfd != AT_FDCWD && !from_driver(caller)) {
        errno = ENOENT;
        return false;
    }
    return allowed_from(path, caller);
}

/* NVRTC loads the CUDA driver (libcuda.so.1) during a compile and may
 * initialize it. The driver's initialization reads its own files (/dev/nvidia*,
 * /proc/driver/nvidia/..., /proc/sys/vm/mmap_min_addr), which the guard would
 * refuse: the driver would then fail to initialize for the whole server
 * process (CUDA_ERROR_OPERATING_SYSTEM for every later cuInit, the
 * application's included). So the driver is initialized here, unguarded,
 * before the first compile, as NVRTC would have done it natively. Without a
 * driver nothing happens (NVRTC then finds none either). */
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void init_driver(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) return;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
    if (init) (void)init(0); /* its result is the driver's to give to whoever asks */
    /* the handle stays open: the library stays loaded for NVRTC and the server */
}

void nvrtc_files_guard(bool on, const char *cwd)
{
    if (on) pthread_once(&driver_once, init_driver);
    guest_cwd = on && cwd && cwd[0] == '/' ? cwd : NULL;
    pthread_once(&once, find_root);
    if (on) {
        refusals = 0;
        refused[0] = 0;
    } else if (refusals) {
        apigen_log("nvrtcCompileProgram: %d file(s) of the server refused to the compile (%s%s): "
                   "a compile reads only the headers the guest sent and the server's CUDA "
                   "toolkit (%s); NVRTC reports such an #include as a file it cannot open",
                   refusals, refused, refusals > 4 ? ", ..." : "", root[0] ? root : "not found");
    }
    guarded = on;
}

#define REAL(type, name, ...)                                   \
    static type (*real_)(__VA_ARGS__);                          \
    if (!real_) real_ = (type(*)(__VA_ARGS__))dlsym(RTLD_NEXT, name)

int open(const char *path, int flags, ...)
{
    REAL(int, "open", const char *, int, ...);
    mode_t mode = 0;
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) { /* glibc's __OPEN_NEEDS_MODE */
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (!allowed(path)) return -1;
    return real_(path, flags, mode);
}

/* libstdc++ (which libnvrtc-builtins.so loads) imports these three */
int openat(int dirfd, const char *path, int flags, ...)
{
    REAL(int, "openat", int, const char *, int, ...);
    mode_t mode = 0;
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) { /* glibc's __OPEN_NEEDS_MODE */
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (!allowed_at(dirfd, path)) return -1;
    return real_(dirfd, path, flags, mode);
}

int stat(const char *path, struct stat *st)
{
    if (!allowed(path)) return -1;
    return fstatat(AT_FDCWD, path, st, 0);
}

int lstat(const char *path, struct stat *st)
{
    if (!allowed(path)) return -1;
    return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

FILE *fopen(const char *path, const char *mode)
{
    REAL(FILE *, "fopen", const char *, const char *);
    return allowed(path) ? real_(path, mode) : NULL;
}

FILE *fopen64(const char *path, const char *mode)
{
    REAL(FILE *, "fopen64", const char *, const char *);
    return allowed(path) ? real_(path, mode) : NULL;
}

int access(const char *path, int mode)
{
    REAL(int, "access", const char *, int);
    return allowed(path) ? real_(path, mode) : -1;
}

DIR *opendir(const char *path)
{
    REAL(DIR *, "opendir", const char *);
    return allowed(path) ? real_(path) : NULL;
}

char *realpath(const char *path, char *resolved)
{
    pthread_once(&once, find_root);
    if (!real_realpath) {
        errno = ENOSYS;
        return NULL;
    }
    return allowed(path) ? real_realpath(path, resolved) : NULL;
}

/* The current folder is the guest's (NVRTC writes it into LTO-IR). */
char *getcwd(char *buf, size_t size)
{
    REAL(char *, "getcwd", char *, size_t);
    if (!guarded || !guest_cwd) return real_(buf, size);
    size_t n = strlen(guest_cwd) + 1;
    if (!buf) {
        buf = malloc(size > n ? size : n);
        if (!buf) {
            errno = ENOMEM;
            return NULL;
        }
        size = size > n ? size : n;
    }
    if (size < n) {
        errno = ERANGE;
        return NULL;
    }
    memcpy(buf, guest_cwd, n);
    return buf;
}

/* glibc's old stat entry points, which libnvrtc.so.13 imports
 * (__xstat@GLIBC_2.2.5): kept by the C library as compatibility symbols. */
int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);

int __xstat(int ver, const char *path, struct stat *st)
{
    static int (*real_)(int, const char *, struct stat *);
    if (!real_) real_ = (int (*)(int, const char *, struct stat *))dlvsym(RTLD_NEXT, "__xstat", "GLIBC_2.2.5");
    if (!allowed(path)) return -1;
    if (!real_) return fstatat(AT_FDCWD, path, st, 0);
    return real_(ver, path, st);
}

int __lxstat(int ver, const char *path, struct stat *st)
{
    static int (*real_)(int, const char *, struct stat *);
    if (!real_) real_ = (int (*)(int, const char *, struct stat *))dlvsym(RTLD_NEXT, "__lxstat", "GLIBC_2.2.5");
    if (!allowed(path)) return -1;
    if (!real_) return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
    return real_(ver, path, st);
}
