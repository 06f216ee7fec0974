/* run_input.c: one input of the shape set on every selected kernel. The whole tensor lives on
 * the host too: outputs poisoned inside the rows, canaries around them, each kernel's output
 * downloaded whole and checked against one reference. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "edge/harness.h"
#include "reference/reference.h"

/* One input's host images and device buffers. */
typedef struct dense_run {
    size_t esz, bytes, data; /* element size; buffer bytes; bytes before the first row */
    int bwd;
    int64_t base, total; /* elements before the first row; elements of the buffer */
    unsigned char *hx, *hdy, *hout0, *hgot, *hcheck;
    double *want;
    sml_buffer bx, bdy, bout;
} dense_run;

static void dense_free(sml_edge_ctx *c, void *state) {
    dense_run *r = state;
    sml_edge_buf_free(c, &r->bx);
    sml_edge_buf_free(c, &r->bdy);
    sml_edge_buf_free(c, &r->bout);
    free(r->hx);
    free(r->hdy);
    free(r->hout0);
    free(r->hgot);
    free(r->hcheck);
    free(r->want);
}

/* The inputs, their reference, the output image and the device buffers; 0, or 1 after
 * counting and printing a failure. */
static int dense_setup(sml_edge_ctx *c, const sml_edge_case *t, void *state) {
    dense_run *r = state;
    r->esz = sml_dtype_size(t->dt);
    r->bwd = sml_op_is_backward(t->op);
    const int64_t span = (t->rows - 1) * t->ld + t->cols;
    r->base = GUARD + t->offset;
    r->total = r->base + span + GUARD;
    r->bytes = (size_t)r->total * r->esz;
    r->data = (size_t)r->base * r->esz;
    const size_t bytes = r->bytes, data = r->data, esz = r->esz;
    r->hx = sml_edge_canary_image(bytes);
    r->hdy = r->bwd ? sml_edge_canary_image(bytes) : NULL;
    r->hout0 = sml_edge_canary_image(bytes);
    r->hgot = malloc(bytes);
    r->want = malloc((size_t)(t->rows * t->cols) * sizeof *r->want);
    if (!r->hx || (r->bwd && !r->hdy) || !r->hout0 || !r->hgot || !r->want) {
        printf("FAIL %s: out of host memory for rows=%" PRId64 " cols=%" PRId64 "\n", c->tally.name,
               t->rows, t->cols);
        c->tally.failed++;
        return 1;
    }
    unsigned char *dy = r->bwd ? r->hdy + data : NULL;
    sml_status s = sml_edge_make_inputs(t, sml_edge_case_seed(c->o.seed, t), r->hx + data, dy);
    if (s == SML_OK)
        s = sml_ref_run(t->op, t->dt, t->rows, t->cols, t->ld, r->hx + data, dy, r->want);
    if (s != SML_OK) {
        printf("FAIL %s: reference failed (%s) for %s %s rows=%" PRId64 " cols=%" PRId64 "\n",
               c->tally.name, sml_strerror(s), sml_op_name(t->op), sml_dtype_name(t->dt), t->rows,
               t->cols);
        c->tally.failed++;
        return 1;
    }
    /* The output image: poison inside the rows, canaries around them. */
    for (int64_t row = 0; row < t->rows; row++)
        memset(r->hout0 + data + (size_t)(row * t->ld) * esz, POISON, (size_t)t->cols * esz);
    s = sml_edge_buf_alloc(c, &r->bx, bytes);
    if (s == SML_OK && r->bwd) s = sml_edge_buf_alloc(c, &r->bdy, bytes);
    if (s == SML_OK && !t->inplace) s = sml_edge_buf_alloc(c, &r->bout, bytes);
    if (s == SML_OK) s = sml_edge_upload(c, &r->bx, 0, r->hx, bytes);
    if (s == SML_OK && r->bwd) s = sml_edge_upload(c, &r->bdy, 0, r->hdy, bytes);
    if (s != SML_OK) {
        printf("FAIL %s: device buffers (%zu bytes): %s\n", c->tally.name, bytes, sml_strerror(s));
        c->tally.failed++;
        return 1;
    }
    if (bytes <= INPUT_CHECK_BYTES) r->hcheck = malloc(bytes);
    return 0;
}

/* 1 when a kernel changed an input buffer (then uploaded again for the kernels after it). */
static int inputs_changed(sml_edge_ctx *c, const sml_edge_case *t, dense_run *r) {
    if (!r->hcheck || t->inplace) return 0;
    sml_status s = sml_edge_download(c, &r->bx, 0, r->hcheck, r->bytes);
    int bad = s != SML_OK || memcmp(r->hcheck, r->hx, r->bytes);
    if (!bad && r->bwd) {
        s = sml_edge_download(c, &r->bdy, 0, r->hcheck, r->bytes);
        bad = s != SML_OK || memcmp(r->hcheck, r->hdy, r->bytes);
    }
    if (bad) {
        sml_edge_upload(c, &r->bx, 0, r->hx, r->bytes);
        if (r->bwd) sml_edge_upload(c, &r->bdy, 0, r->hdy, r->bytes);
    }
    return bad;
}

/* Kernel k on the input; returns 1 when the run must stop (a CUDA error). */
static int run_kernel(sml_edge_ctx *c, const sml_edge_case *t, void *state, size_t ki,
                      const sml_kernel *k) {
    dense_run *r = state;
    const size_t data = r->data;
    sml_buffer *out = t->inplace ? &r->bx : &r->bout;
    sml_problem p = {t->op,
                     t->dt,
                     t->rows,
                     t->cols,
                     t->ld,
                     (char *)r->bx.ptr + data,
                     r->bwd ? (char *)r->bdy.ptr + data : NULL,
                     (char *)out->ptr + data,
                     NULL};
    sml_status s = sml_validate(k, &p);
    if (s == SML_ERR_UNSUPPORTED || (s == SML_ERR_NO_DEVICE && !k->launch)) {
        c->tally.skipped++;
        return 0;
    }
    if (s != SML_OK) {
        sml_edge_fail_run(c, ki, k, t, "sml_validate: ", sml_strerror(s));
        return 0;
    }
    const unsigned char *image = t->inplace ? r->hx : r->hout0;
    s = sml_edge_upload(c, out, 0, image, r->bytes);
    if (s == SML_OK) s = sml_edge_launch(c, ki, k, t, &p);
    if (s == SML_ERR_KERNEL_FAILED) return 0; /* its worker ended: reported, the case lost */
    if (s == SML_ERR_UNSUPPORTED && t->ld != t->cols && strcmp(k->name, "auto") != 0) {
        /* A layout the launcher cannot honour (cuDNN and row strides): refused, counted. */
        c->stats[ki][t->dt].refused++;
        c->tally.skipped++;
        return 0;
    }
    if (s == SML_OK) s = sml_edge_download(c, out, 0, r->hgot, r->bytes);
    if (s != SML_OK) return sml_edge_fail_status(c, ki, k, t, s);
    int64_t at = sml_edge_changed_outside_rows(r->hgot, image, r->esz, r->total, r->base, t);
    if (at >= 0) {
        char msg[160];
        int64_t rel = at - r->base, row = rel >= 0 ? rel / t->ld : -1;
        snprintf(msg, sizeof msg,
                 "element %" PRId64 " from the base (row %" PRId64 ", col %" PRId64
                 ") outside the rows was overwritten",
                 rel, row, rel >= 0 ? rel % t->ld : rel);
        sml_edge_fail_run(c, ki, k, t, "", msg);
        return 0;
    }
    if (inputs_changed(c, t, r)) {
        sml_edge_fail_run(c, ki, k, t, "", "an input buffer changed");
        return 0;
    }
    sml_check_report rep;
    sml_dev_report dev;
    s = sml_edge_check(c, k, t, t->rows, t->ld, r->hx + data, r->bwd ? r->hdy + data : NULL,
                       r->want, r->hgot + data, &rep, &dev);
    sml_edge_judge(c, ki, k, t, s, &rep, &dev, s != SML_OK ? sml_strerror(s) : rep.message);
    return 0;
}

void sml_edge_run_input(sml_edge_ctx *c, const sml_edge_case *t) {
    static const sml_edge_case_runner runner = {dense_setup, run_kernel, dense_free};
    dense_run r;
    sml_edge_each_kernel(c, t, &runner, &r, sizeof r);
}
