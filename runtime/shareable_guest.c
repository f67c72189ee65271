/* Shareable handles in the guest (shareable_host.c keeps the server's
 * descriptor): the program gets a descriptor of its own, a sealed memfd
 * holding the server's token, which it can pass to another process as it
 * would the library's (SCM_RIGHTS, pidfd_getfd, inheritance); importing
 * reads the token back from whatever descriptor the program hands in. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apigen_rt.h"

static const char header_[16] = "apigen-shareable"; /* not NUL-terminated: 16 bytes */

int apigen_shareable_fd(const unsigned char token[APIGEN_SHAREABLE_TOKEN])
{
    /* no close-on-exec: a library's descriptor is inherited like any other */
    int fd = memfd_create("apigen-shareable-handle", MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    unsigned char rec[sizeof header_ + APIGEN_SHAREABLE_TOKEN];
    memcpy(rec, header_, sizeof header_);
    memcpy(rec + sizeof header_, token, APIGEN_SHAREABLE_TOKEN);
    if (pwrite(fd, rec, sizeof rec, 0) != (ssize_t)sizeof rec ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

bool apigen_shareable_token(int fd, unsigned char token[APIGEN_SHAREABLE_TOKEN])
{
    unsigned char rec[sizeof header_ + APIGEN_SHAREABLE_TOKEN];
    if (fd < 0 || pread(fd, rec, sizeof rec, 0) != (ssize_t)sizeof rec) return false;
    if (memcmp(rec, header_, sizeof header_) != 0) return false;
    memcpy(token, rec + sizeof header_, APIGEN_SHAREABLE_TOKEN);
    return true;
}
