/* exec.c: lays a case out in guarded, canaried, poisoned allocations, runs the kernel and
 * reads the output back, noting every byte that changed where nothing may be written. */
#include "prop/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct layout {
    size_t esz, base, span, total; /* span in elements; base, total in bytes */
} layout;

static layout layout_of(const sml_prop_case *c) {
    layout L;
    L.esz = sml_dtype_size(c->dtype);
    L.span = (size_t)((c->rows - 1) * c->ld + c->cols);
    L.base = SML_PROP_GUARD + (size_t)c->offset * L.esz;
    L.total = L.base + L.span * L.esz + SML_PROP_GUARD;
    return L;
}

void sml_prop_exec_init(sml_prop_exec *e, sml_device d) {
    memset(e, 0, sizeof *e);
    e->device = d;
    e->xb.device = e->dyb.device = e->ob.device = d;
}

void sml_prop_exec_free(sml_prop_exec *e) {
    sml_buffer_free(&e->xb);
    sml_buffer_free(&e->dyb);
    sml_buffer_free(&e->ob);
    free(e->hx);
    free(e->hdy);
    free(e->ho);
    free(e->hcheck);
    memset(e, 0, sizeof *e);
}

static sml_status grow_host(unsigned char **p, size_t *cap, size_t n) {
    if (*cap >= n) return SML_OK;
    size_t want = n + n / 2;
    unsigned char *q = realloc(*p, want);
    if (!q) return SML_ERR_OUT_OF_MEMORY;
    *p = q;
    *cap = want;
    return SML_OK;
}

static sml_status grow_buf(sml_buffer *b, sml_device d, size_t n) {
    if (b->ptr && b->bytes >= n) return SML_OK;
    sml_buffer_free(b);
    size_t want = n + n / 2;
    if (want < (1u << 16)) want = 1u << 16;
    return sml_buffer_alloc(b, d, want);
}

/* Image of an input allocation: `fill` everywhere, the dense rows placed at stride ld. */
static void place_rows(unsigned char *img, const layout *L, const sml_prop_case *c,
                       const void *dense, unsigned char fill) {
    memset(img, fill, L->total);
    size_t row_bytes = (size_t)c->cols * L->esz;
    for (int64_t r = 0; r < c->rows; r++)
        memcpy(img + L->base + (size_t)(r * c->ld) * L->esz,
               (const unsigned char *)dense + (size_t)r * row_bytes, row_bytes);
}

static void describe_byte(char *buf, size_t n, const layout *L, const sml_prop_case *c,
                          size_t at, const char *what) {
    if (at < SML_PROP_GUARD)
        snprintf(buf, n, "%s: byte %zu before the allocation's tensor area (front guard)", what,
                 SML_PROP_GUARD - at);
    else if (at < L->base)
        snprintf(buf, n, "%s: in the %lld-element offset before the tensor (element %zu)", what,
                 (long long)c->offset, (at - SML_PROP_GUARD) / L->esz);
    else if (at >= L->base + L->span * L->esz)
        snprintf(buf, n, "%s: byte %zu past the tensor's end (back guard)", what,
                 at - (L->base + L->span * L->esz));
    else {
        size_t el = (at - L->base) / L->esz;
        long long r = (long long)(el / (size_t)c->ld), j = (long long)(el % (size_t)c->ld);
        if (j >= c->cols)
            snprintf(buf, n, "%s: stride padding of row %lld, element %lld (cols %lld, ld %lld)", what,
                     r, j, (long long)c->cols, (long long)c->ld);
        else
            snprintf(buf, n, "%s: row %lld, col %lld", what, r, j);
    }
}

/* Count changed canary bytes of the output allocation (everything but the rows' data). */
static int64_t check_canaries(const unsigned char *img, const layout *L, const sml_prop_case *c,
                              char *where, size_t wn) {
    int64_t bad = 0;
    size_t first = (size_t)-1;
    size_t row_bytes = (size_t)c->cols * L->esz, ld_bytes = (size_t)c->ld * L->esz;
    size_t pos = 0;
    for (int64_t r = 0; r <= c->rows; r++) {
        size_t end = r < c->rows ? L->base + (size_t)r * ld_bytes : L->total;
        for (size_t i = pos; i < end; i++)
            if (img[i] != SML_PROP_CANARY) {
                if (first == (size_t)-1) first = i;
                bad++;
            }
        if (r < c->rows) pos = end + row_bytes;
    }
    if (bad) describe_byte(where, wn, L, c, first, "written outside the output");
    return bad;
}

static int input_changed(sml_prop_exec *e, const sml_buffer *b, const unsigned char *img,
                         const layout *L, const sml_prop_case *c, const char *name, char *where,
                         size_t wn, sml_status *st) {
    const unsigned char *now = b->ptr;
    if (b->device != SML_DEVICE_CPU) {
        *st = grow_host(&e->hcheck, &e->cap_check, L->total);
        if (*st != SML_OK) return 0;
        *st = sml_buffer_download(b, 0, e->hcheck, L->total);
        if (*st != SML_OK) return 0;
        now = e->hcheck;
    }
    if (memcmp(now, img, L->total) == 0) return 0;
    size_t i = 0;
    while (now[i] == img[i]) i++;
    char what[64];
    snprintf(what, sizeof what, "input %s modified", name);
    describe_byte(where, wn, L, c, i, what);
    return 1;
}

sml_status sml_prop_exec_run(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                             const sml_prop_case *c, void *out, sml_prop_run_report *rep) {
    memset(rep, 0, sizeof *rep);
    layout L = layout_of(c);
    int bwd = sml_op_is_backward(c->op);
    sml_status s;
    if ((s = grow_host(&e->hx, &e->cap_x, L.total)) != SML_OK) return s;
    if ((s = grow_host(&e->ho, &e->cap_o, L.total)) != SML_OK) return s;
    if ((s = grow_buf(&e->xb, e->device, L.total)) != SML_OK) return s;
    if (bwd) {
        if ((s = grow_host(&e->hdy, &e->cap_dy, L.total)) != SML_OK) return s;
        if ((s = grow_buf(&e->dyb, e->device, L.total)) != SML_OK) return s;
    }
    if (!c->inplace && (s = grow_buf(&e->ob, e->device, L.total)) != SML_OK) return s;

    place_rows(e->hx, &L, c, c->x, c->inplace ? SML_PROP_CANARY : SML_PROP_POISON);
    if ((s = sml_buffer_upload(&e->xb, 0, e->hx, L.total)) != SML_OK) return s;
    if (bwd) {
        place_rows(e->hdy, &L, c, c->dy, SML_PROP_POISON);
        if ((s = sml_buffer_upload(&e->dyb, 0, e->hdy, L.total)) != SML_OK) return s;
    }
    sml_buffer *ob = c->inplace ? &e->xb : &e->ob;
    if (!c->inplace) {
        memset(e->ho, SML_PROP_CANARY, L.total);
        for (int64_t r = 0; r < c->rows; r++)
            memset(e->ho + L.base + (size_t)(r * c->ld) * L.esz, SML_PROP_POISON,
                   (size_t)c->cols * L.esz);
        if ((s = sml_buffer_upload(ob, 0, e->ho, L.total)) != SML_OK) return s;
    }

    sml_problem p = {c->op, c->dtype, c->rows, c->cols, c->ld,
                     (const unsigned char *)e->xb.ptr + L.base,
                     bwd ? (const unsigned char *)e->dyb.ptr + L.base : NULL,
                     (unsigned char *)ob->ptr + L.base, NULL};
    rep->status = sml_run(k, h, &p);
    if (rep->status == SML_OK) rep->status = sml_device_sync(k->device, NULL);
    if (rep->status != SML_OK) {
        snprintf(rep->where, sizeof rep->where, "%s returned %s (%s)", k->name,
                 sml_strerror(rep->status),
                 rep->status == SML_ERR_CUDA ? sml_last_cuda_error() : "no CUDA error");
        return SML_OK;
    }
    if ((s = sml_buffer_download(ob, 0, e->ho, L.total)) != SML_OK) return s;
    rep->canary_bad = check_canaries(e->ho, &L, c, rep->where, sizeof rep->where);
    size_t row_bytes = (size_t)c->cols * L.esz;
    for (int64_t r = 0; r < c->rows; r++)
        memcpy((unsigned char *)out + (size_t)r * row_bytes,
               e->ho + L.base + (size_t)(r * c->ld) * L.esz, row_bytes);
    if (!c->inplace) {
        char w[192];
        if (input_changed(e, &e->xb, e->hx, &L, c, "x", w, sizeof w, &s)) {
            rep->input_modified = 1;
            if (!rep->canary_bad) snprintf(rep->where, sizeof rep->where, "%s", w);
        }
        if (s != SML_OK) return s;
        if (bwd && input_changed(e, &e->dyb, e->hdy, &L, c, "dy", w, sizeof w, &s)) {
            rep->input_modified = 1;
            if (!rep->canary_bad && !rep->where[0]) snprintf(rep->where, sizeof rep->where, "%s", w);
        }
        if (s != SML_OK) return s;
    }
    return SML_OK;
}
