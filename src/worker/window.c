/* window.c: the shared image-and-answer memory of a channel and a worker's slot (window.h). */
#define _GNU_SOURCE
#include "worker/window.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t page_round(size_t n) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

int sml_wk_window_fit(wk_window *w, size_t bytes, uint64_t id) {
    if (w->base && bytes <= w->half) return 0;
    if (bytes > SIZE_MAX / 4) return -1;
    size_t half = page_round(bytes + bytes / 2 < (1u << 16) ? (1u << 16) : bytes + bytes / 2);
    int fd = memfd_create("sml-worker-window", MFD_CLOEXEC);
    if (fd < 0) return -1;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)(2 * half)) == 0)
        p = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    sml_wk_window_free(w);
    *w = (wk_window){fd, p, half, id};
    return 0;
}

void sml_wk_window_free(wk_window *w) {
    if (w->base) munmap(w->base, 2 * w->half);
    if (w->fd >= 0) close(w->fd);
    *w = (wk_window)SML_WK_WINDOW_NONE;
}

int sml_wk_view_map(int fd, uint64_t half, wk_view *v) {
    *v = (wk_view){NULL, NULL, 0};
    struct stat st;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    int ok = half > 0 && half % pg == 0 && half <= SIZE_MAX / 4 && fstat(fd, &st) == 0 &&
             st.st_size >= 0 && (uint64_t)st.st_size >= 2 * half;
    void *img = MAP_FAILED, *back = MAP_FAILED;
    if (ok) img = mmap(NULL, (size_t)half, PROT_READ, MAP_SHARED, fd, 0);
    if (img != MAP_FAILED)
        back = mmap(NULL, (size_t)half, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)half);
    close(fd);
    if (back == MAP_FAILED) {
        if (img != MAP_FAILED) munmap(img, (size_t)half);
        return -1;
    }
    *v = (wk_view){img, back, (size_t)half};
    return 0;
}

void sml_wk_view_unmap(wk_view *v) {
    if (v->img) munmap((void *)v->img, v->half);
    if (v->back) munmap(v->back, v->half);
    *v = (wk_view){NULL, NULL, 0};
}
