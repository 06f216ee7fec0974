/* serve.c: the worker's side (`softmax-lab __worker`, started by spawn.c only). A worker runs
 * one kernel (SML_WORKER_KERNEL names it), or serves the edge-shape harness
 * (SML_WORKER_MODE=edge, edge_serve.c): it maps the board, installs the fault handler, and
 * serves each slot on a thread of its own (slot 0 on the main thread). What it serves is
 * launches: a request and the image of a case's layout come in, the kernel runs on it
 * (prop/exec.h, sml_prop_exec_launch: the guarded buffers, the canaries, the GPU's guard
 * zones), and the bytes that came back go out. Both lie in the slot's window (window.h),
 * which the supervisor sends before the first launch that needs it. It judges nothing: the
 * supervisor compares what comes back with its own reference, and decides. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/internal.h"
#include "worker/board.h"
#include "worker/window.h"
#include "worker/worker.h"

typedef struct serve {
    int fd;
    int slot;
    sml_worker_slot *b;
    const sml_kernel *k; /* NULL: the worker could not find its kernel (why in `why`) */
    const char *why;
    sml_prop_exec ex;
    sml_handle *h;
    int ready;   /* ex and h made (on the first launch: a GPU context only where one is used) */
    wk_view win; /* the slot's window (empty until the supervisor sends one) */
    int pinned;  /* its halves are page-locked for the GPU's copies */
} serve;

static void drop_window(serve *s) {
    if (s->pinned) {
        sml_prop_gpu_host_unregister((void *)s->win.img);
        sml_prop_gpu_host_unregister(s->win.back);
        s->pinned = 0;
    }
    sml_wk_view_unmap(&s->win);
}

/* Read the n bytes of an image that will not be run. */
static int drain(int fd, uint64_t n) {
    char sink[65536];
    while (n) {
        size_t k = n < sizeof sink ? (size_t)n : sizeof sink;
        if (sml_wk_recv_all(fd, sink, k)) return -1;
        n -= k;
    }
    return 0;
}

/* The kernel and its device, ready on this slot; 0, or why not in *why. */
static int ready(serve *s, const char **why) {
    if (!s->k) {
        *why = s->why;
        return 0;
    }
    if (!s->ready) {
        if (sml_prop_exec_init(&s->ex, s->k->device) != SML_OK ||
            sml_handle_create(&s->h) != SML_OK) {
            *why = "cannot set up the kernel's device";
            return 0;
        }
        s->ready = 1;
    }
    return 1;
}

/* A WINDOW frame: the memfd `passed` replaces the slot's window. -1: not a window. */
static int take_window(serve *s, const char *p, size_t len, int passed) {
    uint64_t half;
    if (len != sizeof half || passed < 0) {
        if (passed >= 0) close(passed);
        return -1;
    }
    memcpy(&half, p, sizeof half);
    if (s->ready && s->ex.external) sml_prop_exec_use(&s->ex, NULL, NULL, 0);
    drop_window(s);
    if (sml_wk_view_map(passed, half, &s->win) != 0) return 0; /* each launch then says so */
    /* A GPU kernel's copies run from and to page-locked memory where it can be had (up to
     * what an exec would lock of its own); else they are staged, and the same. */
    if (s->k && s->k->device != SML_DEVICE_CPU && half <= SML_PROP_PIN_MAX &&
        sml_prop_gpu_host_register((void *)s->win.img, s->win.half, 1) == SML_OK) {
        if (sml_prop_gpu_host_register(s->win.back, s->win.half, 0) == SML_OK)
            s->pinned = 1;
        else
            sml_prop_gpu_host_unregister((void *)s->win.img);
    }
    return 0;
}

/* The image of request m where the launch reads it: the window, or (sent raw after the
 * frame) the exec's own memory. SML_OK, the worker's own failure (the image read and
 * dropped), or -1 in *broke when the stream broke. */
static sml_status take_image(serve *s, const sml_wk_run_msg *m, int *broke) {
    *broke = 0;
    uint64_t n = m->req.image_bytes;
    if (m->inline_bytes) {
        sml_status st = sml_prop_exec_image(&s->ex, (size_t)n);
        if (st != SML_OK) {
            *broke = drain(s->fd, n) != 0;
            return st;
        }
        *broke = sml_wk_recv_all(s->fd, s->ex.img, (size_t)n) != 0;
        return SML_OK;
    }
    if (!s->win.img || n > s->win.half) return SML_ERR_OUT_OF_MEMORY; /* no window mapped */
    if (s->ex.img != s->win.img) sml_prop_exec_use(&s->ex, s->win.img, s->win.back, s->win.half);
    return SML_OK;
}

/* A request, the launch on its image, and its answer. 0 go on, -1 the stream broke. */
static int run_one(serve *s, const char *p, size_t len) {
    sml_wk_run_msg m;
    if (len != sizeof m) return -1;
    memcpy(&m, p, sizeof m);
    if (!sml_prop_exec_req_valid(&m.req) || (m.inline_bytes && m.inline_bytes != m.req.image_bytes))
        return -1;
    const char *why = NULL;
    if (!ready(s, &why)) { /* every request gets the same answer: no verdict on the kernel */
        if (m.inline_bytes && drain(s->fd, m.inline_bytes)) return -1;
        return sml_wk_send(s->fd, SML_WK_NO_KERNEL, why, strlen(why), NULL, 0);
    }
    sml_wk_done_msg d;
    memset(&d, 0, sizeof d);
    d.seq = m.seq;
    int broke;
    sml_status st = take_image(s, &m, &broke);
    if (broke) return -1;
    if (st == SML_OK) {
        atomic_store(&s->b->seq, (long long)m.seq);
        atomic_store(&s->b->busy, 1);
        st = sml_prop_exec_launch(&s->ex, s->k, s->h, &m.req, &d.res);
    }
    if (st != SML_OK) { /* the worker's own failure (a transfer, memory): no bytes come back */
        memset(&d.res, 0, sizeof d.res);
        d.res.engine = (int32_t)st;
        d.res.ran = -1;
    }
    int r = sml_wk_send(s->fd, SML_WK_DONE, &d, sizeof d, NULL, 0);
    if (r == 0 && m.inline_bytes && d.res.n)
        r = sml_wk_send_all(s->fd, s->ex.back + d.res.from, (size_t)d.res.n);
    atomic_store(&s->b->busy, 0);
    return r;
}

/* Serve one slot until its socket closes (or, on slot 0, until QUIT). 1: QUIT came. */
static int serve_slot(serve *s) {
    sml_wk_fault_slot(s->slot);
    int quit = 0;
    for (;;) {
        uint32_t type;
        char *p;
        size_t len;
        int passed;
        if (sml_wk_recv_fd(s->fd, &type, &p, &len, 4096, &passed) != 0) break;
        int r = 0;
        if (type == SML_WK_WINDOW)
            r = take_window(s, p, len, passed);
        else if (passed >= 0)
            close(passed);
        if (type == SML_WK_RUN) r = run_one(s, p, len);
        if (type == SML_WK_PING && len == sizeof(uint64_t))
            r = sml_wk_send(s->fd, SML_WK_PONG, p, len, NULL, 0);
        free(p);
        if (type == SML_WK_QUIT) quit = 1;
        if (quit || r != 0) break;
    }
    if (s->ready) { /* the exec frees only buffers of its own, never the window */
        sml_prop_exec_free(&s->ex);
        sml_handle_destroy(s->h);
    }
    drop_window(s);
    return quit;
}

static void *slot_thread(void *arg) {
    serve_slot(arg);
    return NULL;
}

/* The edge-shape harness's worker (edge_serve.c): one slot, every kernel of the registry. */
static int serve_edge(int bfd, int n, const int *fd) {
    unsetenv("SML_WORKER_FDS");
    size_t bytes = sml_wk_board_bytes(n);
    sml_worker_board *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
    close(bfd);
    if (b == MAP_FAILED || b->nslots != n || n != 1) return 2;
    sml_wk_fault_install(b);
    sml_wk_fault_slot(0);
    atomic_store(&b->started, 1);
    int quit = sml_wk_edge_serve(fd[0], &b->slot[0]);
    sml_wk_fault_quitting();
    if (quit) atomic_store(&b->quitting, 1);
    return 0;
}

/* SML_WORKER_FDS=<board fd>,<slots>,<slot 0's socket>,...: 0 ok. */
static int parse_fds(int *bfd, int *n, int *fd) {
    const char *v = getenv("SML_WORKER_FDS");
    int used = 0;
    if (!v || sscanf(v, "%d,%d%n", bfd, n, &used) != 2 || *n < 1 || *n > SML_PROP_MAX_THREADS)
        return -1;
    v += used;
    for (int i = 0; i < *n; i++) {
        if (sscanf(v, ",%d%n", &fd[i], &used) != 1) return -1;
        v += used;
    }
    return 0;
}

int sml_worker_main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    int bfd = -1, n = 0, fd[SML_PROP_MAX_THREADS];
    const char *name = getenv("SML_WORKER_KERNEL"), *mode = getenv("SML_WORKER_MODE");
    int edge = mode && !strcmp(mode, "edge");
    if (parse_fds(&bfd, &n, fd) != 0 || (!name && !edge)) {
        fprintf(stderr, "__worker: started by softmax-lab itself only\n");
        return 2;
    }
    unsetenv("SML_WORKER_MODE");
    if (edge) return serve_edge(bfd, n, fd);
    static char why[160];
    const sml_kernel *k = sml_kernel_find(name);
    if (!k) snprintf(why, sizeof why, "the worker has no kernel '%.100s'", name);
    unsetenv("SML_WORKER_FDS");
    unsetenv("SML_WORKER_KERNEL");
    size_t bytes = sml_wk_board_bytes(n);
    sml_worker_board *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
    close(bfd);
    if (b == MAP_FAILED || b->nslots != n) return 2;
    sml_wk_fault_install(b);
    static serve s[SML_PROP_MAX_THREADS];
    for (int i = 0; i < n; i++)
        s[i] = (serve){.fd = fd[i], .slot = i, .b = &b->slot[i], .k = k, .why = why};
    /* How this process waits for the GPU, set before its context exists (SML_GPU_WAIT: poll,
     * the default, src/prop/devguard.cu; spin, yield or block: CUDA's own wait in that mode;
     * another word: CUDA's own choice). */
    if (k && k->device == SML_DEVICE_GPU) (void)sml_gpu_wait_mode(sml_gpu_wait_env());
    /* The device's context is made here, before the supervisor starts any launch's clock; a
     * slot that could not set it up tries again at its first launch and says why there. */
    const char *not_ready;
    if (k) ready(&s[0], &not_ready);
    atomic_store(&b->started, 1);
    for (int i = 1; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, slot_thread, &s[i]) != 0) return 2;
        pthread_detach(t);
    }
    int quit = serve_slot(&s[0]);
    /* The supervisor asked it to quit (or went away): not a judged kernel's exit. */
    sml_wk_fault_quitting();
    if (quit) atomic_store(&b->quitting, 1);
    return 0;
}
