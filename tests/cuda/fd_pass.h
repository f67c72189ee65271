/* One file descriptor (and a payload) passed to another process over a
 * unix socket by SCM_RIGHTS, as NVIDIA's IPC samples pass shareable
 * handles, to a child the program started: the tests' programs that
 * share memory between processes (driver/shareable_ci.c,
 * pool_shareable_rt.c, tests/gpu/pool_ipc.cu). */
#ifndef APIGEN_TEST_FD_PASS_H
#define APIGEN_TEST_FD_PASS_H
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* send: fd and len bytes of buf (len >= 1); 0 when all went */
static int fd_pass_send(int sock, int fd, const void *buf, size_t len)
{
    struct iovec io = {(void *)buf, len};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr m;
    memset(&m, 0, sizeof m);
    memset(&ctl, 0, sizeof ctl);
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = ctl.b;
    m.msg_controllen = sizeof ctl.b;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &m, 0) == (ssize_t)len ? 0 : -1;
}

/* receive: the descriptor (-1: none came) and len bytes into buf */
static int fd_pass_recv(int sock, void *buf, size_t len)
{
    struct iovec io = {buf, len};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = ctl.b;
    m.msg_controllen = sizeof ctl.b;
    int fd = -1;
    if (recvmsg(sock, &m, MSG_WAITALL) == (ssize_t)len && CMSG_FIRSTHDR(&m))
        memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}
/* this program again as "SELF child SOCK" with one end of a socket pair;
 * *sock: the other end; the child's pid, or -1 */
static pid_t fd_pass_spawn(const char *self, int *sock)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        char num[16];
        snprintf(num, sizeof num, "%d", sv[1]);
        execl(self, self, "child", num, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    *sock = sv[0];
    return pid;
}
#endif
