/* dev.c: the harness's device buffers and kernel launches, in this process or in the kernels'
 * worker (edge.h, sml_edge_remote). Here a buffer is an sml_buffer; remote, its pointer is the
 * token (id << SML_EDGE_TOKEN_SHIFT), so the harness computes its problem's pointers the same
 * way and the worker turns them into memory. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "edge/harness.h"

static uint64_t id_of(const void *p) { return (uint64_t)(uintptr_t)p >> SML_EDGE_TOKEN_SHIFT; }

/* One remote operation; its failure (the worker's end, a CUDA error) marks the case lost. */
static sml_status remote(sml_edge_ctx *c, sml_edge_op *op, const void *in, void *out) {
    char why[384];
    sml_status s = c->remote->op(c->remote->ctx, op, in, out, why, sizeof why);
    if (s == SML_ERR_KERNEL_FAILED || s == SML_ERR_CUDA) c->lost = 1;
    if (s != SML_OK && why[0] && op->kind != SML_EDGE_RUN)
        printf("note %s: the kernels' worker: %s\n", c->tally.name, why);
    return s;
}

sml_status sml_edge_buf_alloc(sml_edge_ctx *c, sml_buffer *b, size_t bytes) {
    if (!c->remote) return sml_buffer_alloc(b, c->dev, bytes);
    uint64_t id = ++c->next_id;
    sml_edge_op op = {.kind = SML_EDGE_ALLOC, .device = (int32_t)c->dev, .id = id, .n = bytes};
    sml_status s = remote(c, &op, NULL, NULL);
    if (s != SML_OK) return s;
    b->device = c->dev;
    b->ptr = (void *)(uintptr_t)(id << SML_EDGE_TOKEN_SHIFT);
    b->bytes = bytes;
    return SML_OK;
}

void sml_edge_buf_free(sml_edge_ctx *c, sml_buffer *b) {
    if (!c->remote) {
        sml_buffer_free(b);
        return;
    }
    if (b->ptr && !c->lost) {
        sml_edge_op op = {.kind = SML_EDGE_FREE, .id = id_of(b->ptr)};
        remote(c, &op, NULL, NULL);
    }
    memset(b, 0, sizeof *b);
}

sml_status sml_edge_upload(sml_edge_ctx *c, sml_buffer *b, size_t off, const void *src, size_t n) {
    if (!c->remote) return sml_buffer_upload(b, off, src, n);
    sml_edge_op op = {.kind = SML_EDGE_UPLOAD, .id = id_of(b->ptr), .off = off, .n = n};
    return remote(c, &op, src, NULL);
}

sml_status sml_edge_download(sml_edge_ctx *c, const sml_buffer *b, size_t off, void *dst,
                             size_t n) {
    if (!c->remote) return sml_buffer_download(b, off, dst, n);
    sml_edge_op op = {.kind = SML_EDGE_DOWNLOAD, .id = id_of(b->ptr), .off = off, .n = n};
    return remote(c, &op, NULL, dst);
}

sml_status sml_edge_dev_fill(sml_edge_ctx *c, sml_buffer *b, size_t off, unsigned char byte,
                             size_t n) {
    if (c->remote) {
        sml_edge_op op = {
            .kind = SML_EDGE_FILL, .byte = byte, .id = id_of(b->ptr), .off = off, .n = n};
        return remote(c, &op, NULL, NULL);
    }
    return sml_buffer_fill_range(b, off, byte, n);
}

sml_status sml_edge_dev_fill2d(sml_edge_ctx *c, sml_buffer *b, size_t pitch, unsigned char byte,
                               size_t width, size_t height) {
    if (c->remote) {
        sml_edge_op op = {.kind = SML_EDGE_FILL2D,
                          .byte = byte,
                          .id = id_of(b->ptr),
                          .n = width,
                          .pitch = pitch,
                          .height = height};
        return remote(c, &op, NULL, NULL);
    }
    return sml_buffer_fill_2d(b, pitch, byte, width, height);
}

sml_status sml_edge_dev_copy(sml_edge_ctx *c, sml_buffer *dst, size_t dst_off,
                             const sml_buffer *src, size_t src_off, size_t n) {
    if (c->remote) {
        sml_edge_op op = {.kind = SML_EDGE_COPY,
                          .id = id_of(dst->ptr),
                          .off = dst_off,
                          .id2 = id_of(src->ptr),
                          .off2 = src_off,
                          .n = n};
        return remote(c, &op, NULL, NULL);
    }
    return sml_buffer_copy(dst, dst_off, src, src_off, n);
}

sml_status sml_edge_launch(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                           const sml_problem *p) {
    if (!c->remote) {
        sml_status s = sml_run(k, c->h, p);
        return s == SML_OK ? sml_device_sync(c->dev, NULL) : s;
    }
    sml_edge_op op = {.kind = SML_EDGE_RUN,
                      .op = (int32_t)p->op,
                      .dtype = (int32_t)p->dtype,
                      .rows = p->rows,
                      .cols = p->cols,
                      .ld = p->ld,
                      .x = (uint64_t)(uintptr_t)p->x,
                      .dy = (uint64_t)(uintptr_t)p->dy,
                      .out = (uint64_t)(uintptr_t)p->out};
    snprintf(op.kernel, sizeof op.kernel, "%s", k->name);
    char why[384];
    sml_status s = c->remote->op(c->remote->ctx, &op, NULL, NULL, why, sizeof why);
    if (s == SML_ERR_CUDA) {
        /* The worker's context may be lost: its buffers go with it, and the case is set up
         * again for the kernels after this one. */
        c->lost = 1;
        char msg[512];
        snprintf(msg, sizeof msg, "%s (%.300s)", sml_strerror(s), why);
        sml_edge_fail_run(c, ki, k, t, "run failed: ", msg);
        return SML_ERR_KERNEL_FAILED;
    }
    if (s != SML_ERR_KERNEL_FAILED) return s;
    c->lost = 1;
    if (ki < MAX_KERNELS) c->ended[ki] = 1;
    sml_edge_fail_run(c, ki, k, t, "", why);
    printf("note %s: %s ended its worker: it runs on no later case\n", c->tally.name, k->name);
    return SML_ERR_KERNEL_FAILED;
}
