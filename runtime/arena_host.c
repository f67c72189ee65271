/* The server's side of a guest's shared-memory arena (arena_guest.c): the
 * handshake adopts the memfd (rt_arena_adopt), every connection of the
 * session binds its thread to it (rt_arena_bind), and an (offset, length)
 * buffer argument resolves to a pointer into this process's mapping
 * (wire.c). The mapping is registered with the accelerator
 * (apigen_set_host_memory) when a buffer argument first uses it, and
 * unregistered and unmapped when the session's last connection is gone. */
#define _GNU_SOURCE
#include "apigen_rt.h"
#include "rt_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct srv_arena {
    struct apigen_session *s;
    uint8_t *map;
    size_t size;
    unsigned refs;
    int reg; /* 0: not tried, 1: registered, -1: the hook declined */
    struct srv_arena *next;
} srv_arena;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static srv_arena *arenas;
static _Thread_local srv_arena *tl;
static const apigen_api *accepting[8];

void apigen_arena_accept(const apigen_api *api)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++)
        if (!accepting[i] || accepting[i] == api) {
            accepting[i] = api;
            break;
        }
    pthread_mutex_unlock(&mu);
}

bool rt_arena_taken(const apigen_api *api)
{
    bool yes = false;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++)
        yes |= accepting[i] == api;
    pthread_mutex_unlock(&mu);
    return yes;
}

bool rt_arena_taken_family(const apigen_api *api)
{
    bool yes = false;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++)
        yes |= accepting[i] && rt_same_family(accepting[i], api);
    pthread_mutex_unlock(&mu);
    return yes;
}

static void pin_once(srv_arena *a)
{
    if (!__atomic_load_n(&a->reg, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&mu);
        if (!a->reg)
            __atomic_store_n(&a->reg, rt_host_pin(a->map, a->size) ? 1 : -1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&mu);
    }
}

static const void *wire_at(uint64_t off, uint64_t n, bool *bound)
{
    srv_arena *a = tl;
    *bound = a != NULL;
    if (!a || off > a->size || n > a->size - off || !n)
        return NULL;
    pin_once(a);
    return a->map + off;
}

bool rt_arena_holds(struct apigen_session *s, uint64_t addr, uint64_t n)
{
    srv_arena *a = tl;
    uint64_t b = a ? (uint64_t)(uintptr_t)a->map : 0;
    if (!a || a->s != s || addr < b || addr - b >= a->size || n > a->size - (addr - b))
        return false;
    pin_once(a);
    return true;
}

bool rt_arena_adopt(struct apigen_session *s, int fd, uint64_t *base, char *why, size_t whylen)
{
    struct stat st;
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    *base = 0;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || seals < 0 ||
        !(seals & F_SEAL_SHRINK) || (uint64_t)st.st_size > SIZE_MAX) {
        snprintf(why, whylen, "not a sealed memfd");
        if (fd >= 0)
            close(fd);
        return false;
    }
    size_t size = (size_t)st.st_size;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    srv_arena *a = m == MAP_FAILED ? NULL : calloc(1, sizeof *a);
    if (!a) {
        if (m != MAP_FAILED)
            munmap(m, size);
        snprintf(why, whylen, "cannot map %zu bytes", size);
        return false;
    }
    a->s = s;
    a->map = m;
    a->size = size;
    pthread_mutex_lock(&mu);
    a->next = arenas;
    arenas = a;
    rt_wire_arena_at = wire_at;
    pthread_mutex_unlock(&mu);
    *base = (uint64_t)(uintptr_t)m;
    return true;
}

void rt_arena_bind(struct apigen_session *s)
{
    pthread_mutex_lock(&mu);
    tl = NULL;
    for (srv_arena *a = arenas; a; a = a->next)
        if (a->s == s) {
            a->refs++;
            tl = a;
            break;
        }
    pthread_mutex_unlock(&mu);
}

void rt_arena_unbind(void)
{
    srv_arena *a = tl, *dead = NULL;
    tl = NULL;
    if (!a)
        return;
    pthread_mutex_lock(&mu);
    if (--a->refs == 0) {
        for (srv_arena **pp = &arenas; *pp; pp = &(*pp)->next)
            if (*pp == a) {
                *pp = a->next;
                dead = a;
                break;
            }
    }
    pthread_mutex_unlock(&mu);
    if (dead) {
        if (dead->reg == 1)
            rt_host_unpin(dead->map);
        munmap(dead->map, dead->size);
        free(dead);
    }
}
