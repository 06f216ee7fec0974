/* proto.c: the frames on a worker's socket. Whole frames are written with one send where
 * they fit; MSG_NOSIGNAL so a peer that died is an error, not SIGPIPE. */
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

int sml_wk_send(int fd, uint32_t type, const void *a, size_t na, const void *b, size_t nb) {
    uint32_t head[2] = {type, (uint32_t)(na + nb)};
    if (na + nb > 0x7fffffffu) return -1;
    size_t total = sizeof head + na + nb;
    char small[4096];
    if (total <= sizeof small) {
        memcpy(small, head, sizeof head);
        if (na) memcpy(small + sizeof head, a, na);
        if (nb) memcpy(small + sizeof head + na, b, nb);
        return sml_wk_send_all(fd, small, total);
    }
    if (sml_wk_send_all(fd, head, sizeof head)) return -1;
    if (na && sml_wk_send_all(fd, a, na)) return -1;
    if (nb && sml_wk_send_all(fd, b, nb)) return -1;
    return 0;
}

int sml_wk_recv(int fd, uint32_t *type, char **payload, size_t *len, size_t max) {
    uint32_t head[2];
    *payload = NULL;
    if (sml_wk_recv_all(fd, head, sizeof head)) return -1;
    if (head[1] > max) return -1;
    char *p = malloc((size_t)head[1] + 1);
    if (!p) return -1;
    if (head[1] && sml_wk_recv_all(fd, p, head[1])) {
        free(p);
        return -1;
    }
    p[head[1]] = 0;
    *type = head[0];
    *payload = p;
    *len = head[1];
    return 0;
}
