/* proto.c: the frames on a worker's socket. Whole frames are written with one send where
 * they fit; MSG_NOSIGNAL so a peer that died is an error, not SIGPIPE. A window's memfd
 * (window.h) travels with its frame's first bytes (SCM_RIGHTS). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "worker/board.h"

int sml_wk_send_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

int sml_wk_recv_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t k = recv(fd, c, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

#define SMALL_FRAME 4096 /* a frame up to this size, head included, goes out in one send */

/* The frame [type][na + nb][a][b] laid out in buf (SMALL_FRAME bytes): its size. */
static size_t pack(char *buf, uint32_t type, const void *a, size_t na, const void *b, size_t nb) {
    uint32_t head[2] = {type, (uint32_t)(na + nb)};
    memcpy(buf, head, sizeof head);
    if (na) memcpy(buf + sizeof head, a, na);
    if (nb) memcpy(buf + sizeof head + na, b, nb);
    return sizeof head + na + nb;
}

int sml_wk_send(int fd, uint32_t type, const void *a, size_t na, const void *b, size_t nb) {
    uint32_t head[2] = {type, (uint32_t)(na + nb)};
    if (na + nb > 0x7fffffffu) return -1;
    char small[SMALL_FRAME];
    if (sizeof head + na + nb <= sizeof small)
        return sml_wk_send_all(fd, small, pack(small, type, a, na, b, nb));
    if (sml_wk_send_all(fd, head, sizeof head)) return -1;
    if (na && sml_wk_send_all(fd, a, na)) return -1;
    if (nb && sml_wk_send_all(fd, b, nb)) return -1;
    return 0;
}

int sml_wk_send_fd(int fd, uint32_t type, const void *a, size_t na, int passed) {
    char frame[SMALL_FRAME];
    if (na > sizeof frame - 2 * sizeof(uint32_t)) return -1;
    size_t total = pack(frame, type, a, na, NULL, 0);
    struct iovec iov = {frame, total};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &passed, sizeof passed);
    ssize_t k;
    do k = sendmsg(fd, &m, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    if (k <= 0) return -1;
    /* The descriptor went with the first byte; the rest of a short send follows plainly. */
    return (size_t)k == total ? 0 : sml_wk_send_all(fd, frame + k, total - (size_t)k);
}

/* The frame's head, and a descriptor that came with it (-1: none; any beyond one closed). */
static int recv_head(int fd, uint32_t head[2], int *passed) {
    *passed = -1;
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    size_t got = 0;
    while (got < 2 * sizeof(uint32_t)) {
        struct iovec iov = {(char *)head + got, 2 * sizeof(uint32_t) - got};
        struct msghdr m = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl.buf,
                           .msg_controllen = sizeof ctl.buf};
        ssize_t k = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (*passed >= 0) close(*passed);
            *passed = -1;
            return -1;
        }
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
            if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
            size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < n; i++) {
                int d;
                memcpy(&d, CMSG_DATA(cm) + i * sizeof(int), sizeof d);
                if (*passed < 0)
                    *passed = d;
                else
                    close(d);
            }
        }
        got += (size_t)k;
    }
    return 0;
}

int sml_wk_recv(int fd, uint32_t *type, char **payload, size_t *len, size_t max) {
    int passed;
    int r = sml_wk_recv_fd(fd, type, payload, len, max, &passed);
    if (passed >= 0) close(passed);
    return r;
}

int sml_wk_recv_fd(int fd, uint32_t *type, char **payload, size_t *len, size_t max, int *passed) {
    uint32_t head[2];
    *payload = NULL;
    if (recv_head(fd, head, passed)) return -1;
    char *p = head[1] > max ? NULL : malloc((size_t)head[1] + 1);
    if (!p || (head[1] && sml_wk_recv_all(fd, p, head[1]))) {
        free(p);
        if (*passed >= 0) close(*passed);
        *passed = -1;
        return -1;
    }
    p[head[1]] = 0;
    *type = head[0];
    *payload = p;
    *len = head[1];
    return 0;
}
