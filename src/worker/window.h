/* window.h: where a launch's image and answer lie (src/worker only). A channel (channel.c)
 * has a window, its own or borrowed from its suite thread for the runs of one kernel
 * (pool.c): a memfd mapped in the supervisor, whose first half holds the image of the
 * case being launched and whose second half receives the bytes that come back. The worker is
 * sent the memfd once per slot and maps the image half read-only and the answer half
 * writable, so a launch's frames carry only its request and its answer's fixed part; no image
 * or answer is copied through the socket. The supervisor judges the answer half only after
 * the DONE frame that names its bytes, and keeps its reference, its cases and its verdicts in
 * memory the worker never maps. */
#ifndef SML_WORKER_WINDOW_H
#define SML_WORKER_WINDOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct wk_window {
    int fd; /* the memfd (-1: none yet) */
    unsigned char
        *base;   /* the supervisor's mapping: the image at base, the answer at base + half */
    size_t half; /* bytes of each half, a whole number of pages */
    uint64_t id; /* which window a worker's slot holds (unique in the pool; 0: none) */
} wk_window;

#define SML_WK_WINDOW_NONE \
    { -1, NULL, 0, 0 }

/* Room for an image of `bytes` (a new, larger memfd when the window is smaller, named `id`);
 * 0, or -1 when the memory cannot be had (the old window stays). */
int sml_wk_window_fit(wk_window *w, size_t bytes, uint64_t id);
void sml_wk_window_free(wk_window *w);

/* The worker's view of a window: the image read-only, the answer half writable. */
typedef struct wk_view {
    const unsigned char *img;
    unsigned char *back;
    size_t half;
} wk_view;

/* Map the memfd fd (closed either way) as a window of `half` bytes per half; 0, or -1 when
 * the memfd is smaller than two halves or cannot be mapped (v is then empty). */
int sml_wk_view_map(int fd, uint64_t half, wk_view *v);
void sml_wk_view_unmap(wk_view *v);

#endif
