/* run_sampled.c: a huge or tall case of the shape set on every selected kernel. The device
 * tensor repeats a block of random rows (sml_edge_sampled_block, sml_edge_sampled_upload);
 * only the rows of sml_edge_sampled_rows are downloaded, with their stride padding, and
 * checked, plus the inputs' same rows, the whole guard after the end, and each distinct row
 * against its twin. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "edge/harness.h"
#include "reference/reference.h"

/* Each of the nb distinct rows against its twin, bit for bit; 0, or 1 with msg filled. `a`, `b`:
 * row buffers of cols elements. */
static int twins_differ(sml_edge_ctx *c, const sml_edge_case *t, int64_t nb, sml_buffer *bout,
                        unsigned char *a, unsigned char *b, char *msg, size_t msg_n) {
    const size_t esz = sml_dtype_size(t->dt), n = (size_t)t->cols * esz;
    for (int64_t i = 0; i < nb; i++) {
        const int64_t twin = sml_edge_sampled_twin(t, nb, i);
        if (twin < 0) continue;
        sml_status s = sml_edge_download(c, bout, (size_t)(i * t->ld) * esz, a, n);
        if (s == SML_OK) s = sml_edge_download(c, bout, (size_t)(twin * t->ld) * esz, b, n);
        if (s != SML_OK) {
            snprintf(msg, msg_n, "downloading rows %" PRId64 " and %" PRId64 ": %s", i, twin,
                     sml_strerror(s));
            return 1;
        }
        if (!memcmp(a, b, n)) continue;
        int64_t d = 0;
        while (memcmp(a + (size_t)d * esz, b + (size_t)d * esz, esz) == 0) d++;
        snprintf(msg, msg_n,
                 "row %" PRId64 ", the same input as row %" PRId64
                 ", gives other bits at col %" PRId64 " (%.9g, row %" PRId64
                 " %.9g): a row's output depends on its place in the batch",
                 twin, i, d, sml_load(t->dt, b, d), i, sml_load(t->dt, a, d));
        return 1;
    }
    return 0;
}

/* Extreme rows among the checked rows of a tall forward case, so that `split`'s whole steps see
 * them too: one +inf (a NaN row), all -inf (a NaN row), one NaN, a spread of 2e4 (one-hot), every
 * other element -inf (masked). The first and the last checked rows stay normal; a block row
 * gets at most one pattern; the patterns rotate with the op and dtype, so each tall shape meets
 * several across its cases. The reference is computed after, from the same values. */
static void tall_extremes(const sml_edge_case *t, unsigned char *hx, int64_t nb,
                          const int64_t *pick, int np) {
    int k = (int)t->op + (int)t->dt;
    for (int i = 1; i + 1 < np; i++) {
        const int64_t src = pick[i] % nb, o = src * t->ld;
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= pick[j] % nb == src;
        if (dup) continue;
        switch (k++ % 5) {
        case 0: sml_store(t->dt, hx, o + t->cols / 3, INFINITY); break;
        case 1:
            for (int64_t j = 0; j < t->cols; j++) sml_store(t->dt, hx, o + j, -INFINITY);
            break;
        case 2: sml_store(t->dt, hx, o + 2 * t->cols / 3, NAN); break;
        case 3:
            for (int64_t j = 0; j < t->cols; j++)
                sml_store(t->dt, hx, o + j, -1e4 + (double)(j % 7));
            sml_store(t->dt, hx, o + t->cols / 2, 1e4);
            break;
        default:
            for (int64_t j = 0; j < t->cols; j += 2) sml_store(t->dt, hx, o + j, -INFINITY);
            break;
        }
    }
}

/* --plant: after each kernel run of a sampled case, the harness itself damages what the checks
 * look at, as a kernel bug would, so that a test of this harness can show each check fails. */
static sml_status plant(sml_edge_ctx *c, const sml_edge_case *t, const int64_t *pick, int np,
                        sml_buffer *bx, sml_buffer *bout, size_t bytes) {
    const size_t esz = sml_dtype_size(t->dt);
    const char *w = c->o.plant;
    if (!w) return SML_OK;
    if (!strcmp(w, "padding") &&
        t->ld > t->cols) /* one element of the first checked row's padding */
        return sml_edge_dev_fill(c, bout, (size_t)(pick[0] * t->ld + t->cols) * esz, 0, esz);
    if (!strcmp(w, "input"))
        return sml_edge_dev_fill(c, bx, (size_t)(pick[np - 1] * t->ld) * esz, 0, esz);
    if (!strcmp(w, "guard"))
        return sml_edge_dev_fill(c, bout, bytes - esz, 0, esz); /* the guard's last element */
    if (!strcmp(w, "value"))
        return sml_edge_dev_fill(c, bout, (size_t)(pick[np - 1] * t->ld + t->cols / 2) * esz,
                                 POISON, esz);
    const int64_t twin = sml_edge_sampled_twin(t, sml_edge_sampled_block(t), 0);
    if (!strcmp(w, "twin") && twin > 0) { /* row 0's twin's last element: its lowest bit flipped */
        const size_t at = (size_t)(twin * t->ld + t->cols - 1) * esz;
        unsigned char lo;
        sml_status s = sml_edge_download(c, bout, at, &lo, 1);
        lo ^= 0x01;
        return s == SML_OK ? sml_edge_upload(c, bout, at, &lo, 1) : s;
    }
    return SML_OK;
}

/* One sampled case's host block, its checked rows and the device tensors. */
typedef struct sampled_run {
    size_t esz, bytes, row_bytes, gbytes;
    int bwd, np;
    int64_t nb, span;
    int64_t pick[MAX_PICK];
    unsigned char *hx, *hdy, *px, *pdy, *pgot, *row, *twin_row, *guard;
    double *want, *pwant;
    sml_buffer bx, bdy, bout;
} sampled_run;

static void sampled_free(sml_edge_ctx *c, void *state) {
    sampled_run *r = state;
    sml_edge_buf_free(c, &r->bx);
    sml_edge_buf_free(c, &r->bdy);
    sml_edge_buf_free(c, &r->bout);
    free(r->hx);
    free(r->hdy);
    free(r->want);
    free(r->px);
    free(r->pdy);
    free(r->pgot);
    free(r->pwant);
    free(r->row);
    free(r->twin_row);
    free(r->guard);
}

/* The block of distinct rows, its reference, and the checked rows' inputs and reference. */
static sml_status sampled_host(sml_edge_ctx *c, const sml_edge_case *t, sampled_run *r) {
    const size_t esz = r->esz, block_bytes = (size_t)(r->nb * t->ld) * esz;
    const size_t pbytes = (size_t)(r->np * t->cols) * esz;
    const int64_t nb = r->nb;
    sml_edge_case blk = *t;
    blk.rows = nb;
    r->hx = sml_edge_canary_image(block_bytes);
    r->hdy = r->bwd ? sml_edge_canary_image(block_bytes) : NULL;
    r->want = malloc((size_t)(nb * t->cols) * sizeof *r->want);
    r->px = malloc(pbytes);
    r->pdy = malloc(pbytes);
    r->pgot = malloc(pbytes);
    r->row = malloc(r->row_bytes);
    r->twin_row = malloc(r->row_bytes);
    r->guard = malloc(r->gbytes);
    r->pwant = malloc((size_t)(r->np * t->cols) * sizeof *r->pwant);
    sml_status s = (r->hx && (!r->bwd || r->hdy) && r->want && r->px && r->pdy && r->pgot &&
                    r->pwant && r->row && r->twin_row && r->guard)
                       ? SML_OK
                       : SML_ERR_OUT_OF_MEMORY;
    unsigned char *hdy = r->bwd ? r->hdy : NULL;
    if (s == SML_OK) s = sml_edge_make_inputs(&blk, sml_edge_case_seed(c->o.seed, t), r->hx, hdy);
    if (s == SML_OK && !r->bwd && !sml_edge_huge_case(t))
        tall_extremes(t, r->hx, nb, r->pick, r->np);
    if (s == SML_OK) s = sml_ref_run(t->op, t->dt, nb, t->cols, t->ld, r->hx, hdy, r->want);
    if (s != SML_OK) return s;
    for (int i = 0; i < r->np; i++) {
        int64_t src = r->pick[i] % nb;
        memcpy(r->px + (size_t)(i * t->cols) * esz, r->hx + (size_t)(src * t->ld) * esz,
               (size_t)t->cols * esz);
        if (r->bwd)
            memcpy(r->pdy + (size_t)(i * t->cols) * esz, r->hdy + (size_t)(src * t->ld) * esz,
                   (size_t)t->cols * esz);
        memcpy(r->pwant + i * t->cols, r->want + src * t->cols, (size_t)t->cols * sizeof *r->want);
    }
    return SML_OK;
}

/* The host block and the device tensors; 0, or 1 after printing a failure or a skip. */
static int sampled_setup(sml_edge_ctx *c, const sml_edge_case *t, void *state) {
    sampled_run *r = state;
    r->esz = sml_dtype_size(t->dt);
    r->bwd = sml_op_is_backward(t->op);
    r->nb = sml_edge_sampled_block(t);
    r->span = (t->rows - 1) * t->ld + t->cols;
    r->bytes = (size_t)(t->rows * t->ld + GUARD) * r->esz;
    r->row_bytes = (size_t)t->ld * r->esz;
    r->gbytes = r->bytes - (size_t)r->span * r->esz;
    r->np = sml_edge_sampled_rows(t, r->nb, r->pick);
    sml_status s = sampled_host(c, t, r);
    if (s != SML_OK) {
        printf("FAIL %s: sampled case setup on the host: %s\n", c->tally.name, sml_strerror(s));
        c->tally.failed++;
        return 1;
    }
    s = sml_edge_buf_alloc(c, &r->bx, r->bytes);
    if (s == SML_OK && r->bwd) s = sml_edge_buf_alloc(c, &r->bdy, r->bytes);
    if (s == SML_OK) s = sml_edge_buf_alloc(c, &r->bout, r->bytes);
    if (s == SML_ERR_OUT_OF_MEMORY) {
        printf("SKIP %s: %s rows=%" PRId64 " cols=%" PRId64
               ": not enough device memory for 2-3 x %zu bytes\n",
               c->tally.name, sml_op_name(t->op), t->rows, t->cols, r->bytes);
        c->tally.skipped++;
        return 1;
    }
    if (s == SML_OK) s = sml_edge_sampled_upload(c, &r->bx, t, r->nb, r->hx);
    if (s == SML_OK && r->bwd) s = sml_edge_sampled_upload(c, &r->bdy, t, r->nb, r->hdy);
    if (s != SML_OK) {
        printf("FAIL %s: sampled case device setup: %s\n", c->tally.name, sml_strerror(s));
        c->tally.failed++;
        return 1;
    }
    return 0;
}

/* The checked rows downloaded into pgot, each with its stride padding (the last row has none:
 * the guard follows), its inputs compared with the block's, then the guard downloaded. *bad
 * names the first damage seen (in row *bad_row); inputs a kernel wrote are uploaded again, so
 * that it does not fail the kernels after it. */
static sml_status read_checked_rows(sml_edge_ctx *c, const sml_edge_case *t, sampled_run *r,
                                    const char **bad, int64_t *bad_row) {
    const size_t esz = r->esz;
    int inputs_changed = 0;
    sml_status s = SML_OK;
    for (int i = 0; i < r->np && s == SML_OK && !*bad; i++) {
        const int64_t pk = r->pick[i];
        const size_t n = pk == t->rows - 1 ? (size_t)t->cols * esz : r->row_bytes;
        const size_t at = (size_t)(pk * t->ld) * esz;
        s = sml_edge_download(c, &r->bout, at, r->row, n);
        if (s != SML_OK) break;
        memcpy(r->pgot + (size_t)(i * t->cols) * esz, r->row, (size_t)t->cols * esz);
        for (size_t j = (size_t)t->cols * esz; j < n && !*bad; j++)
            if (r->row[j] != CANARY) *bad = "wrote into the stride padding", *bad_row = pk;
        const size_t src = (size_t)((pk % r->nb) * t->ld) * esz;
        for (int pass = 0; pass < (r->bwd ? 2 : 1) && s == SML_OK && !*bad; pass++) {
            s = sml_edge_download(c, pass ? &r->bdy : &r->bx, at, r->row, n);
            if (s == SML_OK && memcmp(r->row, (pass ? r->hdy : r->hx) + src, n)) {
                *bad = pass ? "changed its input dy" : "changed its input x", *bad_row = pk;
                inputs_changed = 1;
            }
        }
    }
    if (s == SML_OK) s = sml_edge_download(c, &r->bout, (size_t)r->span * esz, r->guard, r->gbytes);
    if (s == SML_OK && inputs_changed) {
        s = sml_edge_sampled_upload(c, &r->bx, t, r->nb, r->hx);
        if (s == SML_OK && r->bwd) s = sml_edge_sampled_upload(c, &r->bdy, t, r->nb, r->hdy);
    }
    return s;
}

/* The checked rows' values under the contract, and the twins bit for bit. */
static void judge_values(sml_edge_ctx *c, const sml_edge_case *t, sampled_run *r, size_t ki,
                         const sml_kernel *k) {
    char msg[512];
    sml_check_report rep;
    sml_dev_report dev;
    sml_status s = sml_edge_check(c, k, t, r->np, t->cols, r->px, r->bwd ? r->pdy : NULL, r->pwant,
                                  r->pgot, &rep, &dev);
    /* rep's row r is checked row pick[r] of the tensor */
    int len = snprintf(msg, sizeof msg, "%s [checked-row index -> tensor row:",
                       s != SML_OK ? sml_strerror(s) : rep.message);
    for (int i = 0; i < r->np && len > 0 && (size_t)len < sizeof msg; i++)
        len += snprintf(msg + len, sizeof msg - (size_t)len, " %d->%" PRId64, i, r->pick[i]);
    if (len > 0 && (size_t)len < sizeof msg) snprintf(msg + len, sizeof msg - (size_t)len, "]");
    /* Twins that differ fail even a kernel whose values a declared deviation excuses: bits
     * that move with a row's place are no value bound. */
    char tmsg[512];
    if (s == SML_OK &&
        twins_differ(c, t, r->nb, &r->bout, r->row, r->twin_row, tmsg, sizeof tmsg)) {
        char both[1100];
        snprintf(both, sizeof both, "%s%s%s", rep.pass ? "" : msg, rep.pass ? "" : "; and ", tmsg);
        sml_edge_fail_run(c, ki, k, t, "", both);
        return;
    }
    sml_edge_judge(c, ki, k, t, s, &rep, &dev, msg);
}

/* Kernel k on the case; returns 1 when the run must stop (a CUDA error). */
static int run_kernel(sml_edge_ctx *c, const sml_edge_case *t, void *state, size_t ki,
                      const sml_kernel *k) {
    sampled_run *r = state;
    sml_problem p = {
        t->op,       t->dt, t->rows, t->cols, t->ld, r->bx.ptr, r->bwd ? r->bdy.ptr : NULL,
        r->bout.ptr, NULL};
    sml_status s = sml_validate(k, &p);
    if (s == SML_ERR_UNSUPPORTED || (s == SML_ERR_NO_DEVICE && !k->launch)) {
        c->tally.skipped++;
        return 0;
    }
    s = sml_edge_dev_poison_rows(c, &r->bout, t, r->bytes);
    if (s == SML_OK) s = sml_edge_launch(c, ki, k, t, &p);
    if (s == SML_ERR_KERNEL_FAILED) return 0; /* its worker ended: reported, the case lost */
    if (s == SML_ERR_UNSUPPORTED && t->ld != t->cols && strcmp(k->name, "auto") != 0) {
        c->stats[ki][t->dt].refused++; /* as in run_input.c */
        c->tally.skipped++;
        return 0;
    }
    if (s == SML_OK) s = plant(c, t, r->pick, r->np, &r->bx, &r->bout, r->bytes);
    const char *bad = NULL;
    int64_t bad_row = -1;
    if (s == SML_OK) s = read_checked_rows(c, t, r, &bad, &bad_row);
    if (s != SML_OK) return sml_edge_fail_status(c, ki, k, t, s);
    if (bad) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s (row %" PRId64 ")", bad, bad_row);
        sml_edge_fail_run(c, ki, k, t, "", msg);
        return 0;
    }
    int guard_ok = 1;
    for (size_t i = 0; i < r->gbytes; i++) guard_ok &= r->guard[i] == CANARY;
    if (!guard_ok) {
        sml_edge_fail_run(c, ki, k, t, "", "wrote past the end of the tensor");
        return 0;
    }
    judge_values(c, t, r, ki, k);
    return 0;
}

void sml_edge_run_sampled(sml_edge_ctx *c, const sml_edge_case *t) {
    static const sml_edge_case_runner runner = {sampled_setup, run_kernel, sampled_free};
    sampled_run r;
    sml_edge_each_kernel(c, t, &runner, &r, sizeof r);
}
