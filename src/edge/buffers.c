/* buffers.c: the edge-shape harness's memory: host images with canaries, the random inputs,
 * and the sampled cases' device tensors built and poisoned (through dev.c). */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/rng.h"
#include "edge/harness.h"
#include "reference/reference.h"

#define LOGIT_SCALE 3.0

/* First byte outside the rows where `got` differs from `image`; -1 if none. The rows are
 * elements [base + r*ld, base + r*ld + cols) of a buffer of `total` elements. */
int64_t sml_edge_changed_outside_rows(const unsigned char *got, const unsigned char *image,
                                      size_t esz, int64_t total, int64_t base,
                                      const sml_edge_case *t) {
    int64_t from = 0;
    for (int64_t r = 0; r <= t->rows; r++) {
        int64_t to = r < t->rows ? base + r * t->ld : total;
        if (to > from && memcmp(got + from * esz, image + from * esz, (size_t)(to - from) * esz)) {
            for (int64_t i = from; i < to; i++)
                if (memcmp(got + i * esz, image + i * esz, esz)) return i;
        }
        if (r < t->rows) from = base + r * t->ld + t->cols;
    }
    return -1;
}

/* Host images [GUARD + offset | rows with stride ld | GUARD] full of canaries. */
unsigned char *sml_edge_canary_image(size_t bytes) {
    unsigned char *p = malloc(bytes);
    if (p) memset(p, CANARY, bytes);
    return p;
}

/* Random logits (forward) or a real y plus random dy (backward), written in the dtype into
 * x and dy laid out with stride ld. */
sml_status sml_edge_make_inputs(const sml_edge_case *t, uint64_t seed, void *x, void *dy) {
    sml_rng rng;
    sml_rng_seed(&rng, seed);
    for (int64_t r = 0; r < t->rows; r++)
        for (int64_t j = 0; j < t->cols; j++)
            sml_store(t->dt, x, r * t->ld + j, LOGIT_SCALE * sml_rng_normal(&rng));
    if (!sml_op_is_backward(t->op)) return SML_OK;
    double *y = malloc((size_t)(t->rows * t->cols) * sizeof *y);
    if (!y) return SML_ERR_OUT_OF_MEMORY;
    sml_op fwd = t->op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
    sml_status s = sml_ref_run(fwd, t->dt, t->rows, t->cols, t->ld, x, NULL, y);
    if (s == SML_OK)
        for (int64_t r = 0; r < t->rows; r++)
            for (int64_t j = 0; j < t->cols; j++) {
                sml_store(t->dt, x, r * t->ld + j, y[r * t->cols + j]);
                sml_store(t->dt, dy, r * t->ld + j, sml_rng_normal(&rng));
            }
    free(y);
    return s;
}

/* The output image of a sampled case, built on the device (run_input builds it on the host and
 * uploads it; these tensors are too big to): rows poisoned, stride padding and guard canaries. */
sml_status sml_edge_dev_poison_rows(sml_edge_ctx *c, sml_buffer *b, const sml_edge_case *t,
                                    size_t bytes) {
    const size_t esz = sml_dtype_size(t->dt),
                 span = (size_t)((t->rows - 1) * t->ld + t->cols) * esz;
    if (t->ld == t->cols) { /* the rows are one run of elements */
        sml_status s = sml_edge_dev_fill(c, b, 0, POISON, span);
        return s == SML_OK ? sml_edge_dev_fill(c, b, span, CANARY, bytes - span) : s;
    }
    sml_status s = sml_edge_dev_fill(c, b, 0, CANARY, bytes);
    if (s != SML_OK) return s;
    return sml_edge_dev_fill2d(c, b, (size_t)t->ld * esz, POISON, (size_t)t->cols * esz,
                               (size_t)t->rows);
}

/* A sampled case's input on the device: the nb-row host block uploaded, then doubled by device
 * copies until it fills the tensor (row r holds block row r % nb). */
sml_status sml_edge_sampled_upload(sml_edge_ctx *c, sml_buffer *b, const sml_edge_case *t,
                                   int64_t nb, const unsigned char *block) {
    const size_t esz = sml_dtype_size(t->dt);
    sml_status s = sml_edge_upload(c, b, 0, block, (size_t)(nb * t->ld) * esz);
    for (int64_t done_rows = nb; s == SML_OK && done_rows < t->rows;) {
        const int64_t n = done_rows < t->rows - done_rows ? done_rows : t->rows - done_rows;
        s = sml_edge_dev_copy(c, b, (size_t)(done_rows * t->ld) * esz, b, 0,
                              (size_t)(n * t->ld) * esz);
        done_rows += n;
    }
    return s;
}
