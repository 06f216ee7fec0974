/* edge_serve.c: the edge-shape harness's worker (SML_WORKER_MODE=edge): it holds the harness's
 * device buffers by the ids the harness gave them and runs each operation the harness sends
 * (edge/edge.h): allocate, free, upload, download, fill, copy, and a kernel's launch on buffers
 * named by tokens. It judges nothing: what a kernel wrote goes back to the harness, which
 * compares it with its own reference. Every id, offset and size is checked against the buffer
 * it names before memory is touched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "worker/board.h"
#include "worker/worker.h"

#define MAX_IDS      ((uint64_t)1 << 20)
#define TOKEN_OFF(t) ((t) & (((uint64_t)1 << SML_EDGE_TOKEN_SHIFT) - 1))

typedef struct edge_worker {
    int fd;
    sml_worker_slot *slot;
    sml_buffer *buf; /* by id; ptr NULL: none */
    uint64_t nbuf;
    sml_handle *h;
} edge_worker;

/* The buffer id names, with [off, off + n) inside it; NULL when there is none. */
static sml_buffer *span(edge_worker *w, uint64_t id, uint64_t off, uint64_t n) {
    if (id == 0 || id >= w->nbuf || !w->buf[id].ptr) return NULL;
    sml_buffer *b = &w->buf[id];
    return off <= b->bytes && n <= b->bytes - off ? b : NULL;
}

static sml_status alloc(edge_worker *w, const sml_edge_op *op) {
    if (op->id == 0 || op->id >= MAX_IDS ||
        (op->device != SML_DEVICE_CPU && op->device != SML_DEVICE_GPU))
        return SML_ERR_INVALID_ARG;
    if (op->id >= w->nbuf) {
        uint64_t n = op->id * 2;
        sml_buffer *b = realloc(w->buf, (size_t)n * sizeof *b);
        if (!b) return SML_ERR_OUT_OF_MEMORY;
        memset(b + w->nbuf, 0, (size_t)(n - w->nbuf) * sizeof *b);
        w->buf = b;
        w->nbuf = n;
    }
    if (w->buf[op->id].ptr) return SML_ERR_INVALID_ARG;
    return sml_buffer_alloc(&w->buf[op->id], (sml_device)op->device, (size_t)op->n);
}

/* A token's memory: its buffer's start plus its offset (NULL when it names none). */
static void *memory(edge_worker *w, uint64_t token) {
    if (!token) return NULL;
    sml_buffer *b = span(w, token >> SML_EDGE_TOKEN_SHIFT, TOKEN_OFF(token), 0);
    return b ? (char *)b->ptr + TOKEN_OFF(token) : NULL;
}

static sml_status run(edge_worker *w, const sml_edge_op *op, char *why, size_t n) {
    char name[sizeof op->kernel];
    snprintf(name, sizeof name, "%.*s", (int)sizeof op->kernel - 1, op->kernel);
    const sml_kernel *k = sml_kernel_find(name);
    if (!k) {
        snprintf(why, n, "the worker has no kernel '%s'", name);
        return SML_ERR_UNKNOWN_KERNEL;
    }
    sml_problem p = {(sml_op)op->op,   (sml_dtype)op->dtype, op->rows,           op->cols, op->ld,
                     memory(w, op->x), memory(w, op->dy),    memory(w, op->out), NULL};
    atomic_store(&w->slot->busy, 1);
    sml_status s = sml_run(k, w->h, &p);
    if (s == SML_OK) s = sml_device_sync(k->device, NULL);
    atomic_store(&w->slot->busy, 0);
    if (s == SML_ERR_CUDA) snprintf(why, n, "%s", sml_last_cuda_error());
    return s;
}

/* One operation: its status, and what follows its answer (a download's bytes). */
static sml_status one(edge_worker *w, const sml_edge_op *op, const void **out, char *why,
                      size_t n) {
    sml_buffer *b = op->kind == SML_EDGE_ALLOC || op->kind == SML_EDGE_RUN
                        ? NULL
                        : span(w, op->id, op->off, op->kind == SML_EDGE_FILL2D ? 0 : op->n);
    if (op->kind != SML_EDGE_ALLOC && op->kind != SML_EDGE_RUN && !b) {
        snprintf(why, n, "no buffer %llu of %llu bytes at %llu", (unsigned long long)op->id,
                 (unsigned long long)op->n, (unsigned long long)op->off);
        return SML_ERR_INVALID_ARG;
    }
    switch (op->kind) {
    case SML_EDGE_ALLOC: return alloc(w, op);
    case SML_EDGE_FREE: sml_buffer_free(b); return SML_OK;
    case SML_EDGE_UPLOAD: return SML_OK; /* read into place by the caller */
    case SML_EDGE_DOWNLOAD:
        if (b->device == SML_DEVICE_CPU) {
            *out = (const char *)b->ptr + op->off;
            return SML_OK;
        }
        return SML_ERR_INVALID_ARG; /* a GPU download goes through a host copy: serve_op */
    case SML_EDGE_FILL: return sml_buffer_fill_range(b, (size_t)op->off, op->byte, (size_t)op->n);
    case SML_EDGE_FILL2D:
        return sml_buffer_fill_2d(b, (size_t)op->pitch, op->byte, (size_t)op->n,
                                  (size_t)op->height);
    case SML_EDGE_COPY: {
        sml_buffer *src = span(w, op->id2, op->off2, op->n);
        return src ? sml_buffer_copy(b, (size_t)op->off, src, (size_t)op->off2, (size_t)op->n)
                   : SML_ERR_INVALID_ARG;
    }
    case SML_EDGE_RUN: return run(w, op, why, n);
    default: return SML_ERR_INVALID_ARG;
    }
}

/* An UPLOAD's bytes, or a GPU DOWNLOAD's, through a host buffer of the worker's. */
static int staged(edge_worker *w, const sml_wk_edge_msg *m, sml_wk_edge_done *d) {
    const sml_edge_op *op = &m->op;
    sml_buffer *b = span(w, op->id, op->off, op->n);
    void *host = op->n ? malloc((size_t)op->n) : NULL;
    if (op->kind == SML_EDGE_UPLOAD) {
        /* The bytes follow the request whatever happens to them. */
        int got = op->n && !host ? -1 : op->n ? sml_wk_recv_all(w->fd, host, (size_t)op->n) : 0;
        if (got) {
            free(host);
            return -1;
        }
        d->status = b ? (int32_t)sml_buffer_upload(b, (size_t)op->off, host, (size_t)op->n)
                      : SML_ERR_INVALID_ARG;
        free(host);
        return sml_wk_send(w->fd, SML_WK_EDGE_DONE, d, sizeof *d, NULL, 0);
    }
    d->status = !b ? SML_ERR_INVALID_ARG
                : op->n && !host
                    ? SML_ERR_OUT_OF_MEMORY
                    : (int32_t)sml_buffer_download(b, (size_t)op->off, host, (size_t)op->n);
    d->n = d->status == SML_OK ? op->n : 0;
    int r = sml_wk_send(w->fd, SML_WK_EDGE_DONE, d, sizeof *d, NULL, 0);
    if (r == 0 && d->n) r = sml_wk_send_all(w->fd, host, (size_t)d->n);
    free(host);
    return r;
}

/* Serve operations on fd until it closes or QUIT comes: 1 for QUIT. */
int sml_wk_edge_serve(int fd, sml_worker_slot *slot) {
    edge_worker w = {fd, slot, NULL, 0, NULL};
    if (sml_handle_create(&w.h) != SML_OK) return 0;
    int quit = 0;
    for (;;) {
        uint32_t type;
        char *p;
        size_t len;
        if (sml_wk_recv(fd, &type, &p, &len, 4096) != 0) break;
        if (type == SML_WK_QUIT) quit = 1;
        if (type != SML_WK_EDGE || len != sizeof(sml_wk_edge_msg)) {
            free(p);
            break;
        }
        sml_wk_edge_msg m;
        memcpy(&m, p, sizeof m);
        free(p);
        sml_wk_edge_done d;
        memset(&d, 0, sizeof d);
        d.seq = m.seq;
        int up = m.op.kind == SML_EDGE_UPLOAD, down = m.op.kind == SML_EDGE_DOWNLOAD &&
                                                      span(&w, m.op.id, m.op.off, m.op.n) &&
                                                      w.buf[m.op.id].device != SML_DEVICE_CPU;
        if (up || down) {
            if (staged(&w, &m, &d) != 0) break;
            continue;
        }
        const void *out = NULL;
        d.status = (int32_t)one(&w, &m.op, &out, d.why, sizeof d.why);
        d.n = out ? m.op.n : 0;
        if (sml_wk_send(fd, SML_WK_EDGE_DONE, &d, sizeof d, NULL, 0) != 0) break;
        if (d.n && sml_wk_send_all(fd, out, (size_t)d.n) != 0) break;
    }
    for (uint64_t i = 0; i < w.nbuf; i++) sml_buffer_free(&w.buf[i]);
    free(w.buf);
    sml_handle_destroy(w.h);
    return quit;
}
