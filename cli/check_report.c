/* check_report.c: see check_report.h. */
#include "check_report.h"

#include <math.h>
#include <string.h>

#include "softmax_lab.h"

#ifndef SML_VERSION
#define SML_VERSION "unknown"
#endif

#define ME "softmax-lab check"

void sml_shape_text(const sml_npy *x, char *buf, size_t n) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < x->ndim && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? ", " : "(", (long long)x->shape[i]);
    if (at < n) snprintf(buf + at, n - at, "%s)", x->ndim == 1 ? "," : "");
}

/* The index into x's shape of the element at (row, col) of the rows x cols view. */
static void unravel(const sml_npy *x, int64_t row, int64_t col, int64_t *idx) {
    int64_t flat = row * x->cols + col;
    for (int i = x->ndim - 1; i >= 0; i--) {
        int64_t d = x->shape[i] > 0 ? x->shape[i] : 1;
        idx[i] = flat % d;
        flat /= d;
    }
}

void sml_index_tuple(const sml_npy *x, int64_t row, int64_t col, char *buf, size_t n) {
    sml_npy t = *x;
    unravel(x, row, col, t.shape);
    sml_shape_text(&t, buf, n);
}

int sml_read_companion(const char *path, const char *flag, const sml_npy *x, const char *xpath,
                       int want, sml_npy *out) {
    char err[1024];
    sml_status s = sml_npy_read(path, want, out, err, sizeof err);
    /* Raw 16-bit bits with no sidecar and no --dtype: typed like the input they go with. */
    if (s == SML_ERR_BAD_DTYPE && want < 0 && x->dtype != SML_F32) {
        char err2[1024];
        if (sml_npy_read(path, (int)x->dtype, out, err2, sizeof err2) == SML_OK && out->raw_bits)
            s = SML_OK;
        else
            sml_npy_free(out);
    }
    if (s != SML_OK) {
        fprintf(stderr, ME ": %s %s\n", flag, err);
        return -1;
    }
    if (out->dtype != x->dtype) {
        fprintf(stderr,
                ME ": dtype mismatch (header field 'descr'%s): %s %s is %s, --input %s is %s\n",
                out->raw_bits || x->raw_bits ? " with the .dtype sidecar or --dtype" : "", flag,
                path, sml_dtype_name(out->dtype), xpath, sml_dtype_name(x->dtype));
        sml_npy_free(out);
        return -1;
    }
    int same = out->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = out->shape[i] == x->shape[i];
    if (!same) {
        char a[200], b[200];
        sml_shape_text(out, a, sizeof a);
        sml_shape_text(x, b, sizeof b);
        fprintf(stderr,
                ME ": shape mismatch (header field 'shape'): %s %s has %s, --input %s has %s\n",
                flag, path, a, xpath, b);
        sml_npy_free(out);
        return -1;
    }
    return 0;
}

sml_check_elem sml_report_worst(const sml_check_report *r) {
    sml_check_elem e = {r->worst_row,   r->worst_col,  r->got, r->want,
                        r->worst_ratio, r->worst_ulps, NAN,    NAN};
    if (r->worst_ratio > 0.0 && isfinite(r->worst_ratio) && isfinite(r->worst_abs)) {
        e.allowed = r->worst_abs / r->worst_ratio;
        e.allowed_ulps = r->worst_ulps / r->worst_ratio;
    }
    return e;
}

void sml_print_worst(FILE *f, const char *indent, const sml_npy *x, const sml_check_elem *w,
                     int n) {
    if (n <= 0) return;
    fprintf(f, "%s%-22s %16s %16s %11s %11s %11s\n", indent, "index", "got", "want", "error ulp",
            "bound ulp", "error/bound");
    for (int i = 0; i < n; i++) {
        char at[200], bound[32];
        sml_index_tuple(x, w[i].row, w[i].col, at, sizeof at);
        if (isnan(w[i].allowed_ulps))
            snprintf(bound, sizeof bound, "special");
        else
            snprintf(bound, sizeof bound, "%.3g", w[i].allowed_ulps);
        fprintf(f, "%s%-22s %16.9g %16.9g %11.3g %11s %11.3g\n", indent, at, w[i].got, w[i].want,
                w[i].ulps, bound, w[i].ratio);
    }
}

void sml_jw_check_head(sml_jw *w) {
    sml_jw_kstr(w, "schema", SML_CHECK_INPUT_SCHEMA);
    sml_jw_kstr(w, "softmax_lab_version", SML_VERSION);
}

void sml_jw_elem(sml_jw *w, const sml_npy *x, const sml_check_elem *e) {
    int64_t idx[SML_NPY_MAX_DIMS];
    unravel(x, e->row, e->col, idx);
    sml_jw_object_inline(w);
    sml_jw_key(w, "index");
    sml_jw_array_inline(w);
    for (int i = 0; i < x->ndim; i++) sml_jw_int(w, idx[i]);
    sml_jw_end(w);
    sml_jw_knum(w, "got", e->got);
    sml_jw_knum(w, "want", e->want);
    sml_jw_knum(w, "error_ulps", e->ulps);
    sml_jw_knum(w, "bound_ulps", e->allowed_ulps);
    sml_jw_knum(w, "bound", e->allowed);
    sml_jw_knum(w, "error_over_bound", e->ratio);
    sml_jw_end(w);
}

void sml_jw_worst(sml_jw *w, const char *key, const sml_npy *x, const sml_check_elem *e, int n) {
    sml_jw_key(w, key);
    sml_jw_array(w);
    for (int i = 0; i < n; i++) sml_jw_elem(w, x, e + i);
    sml_jw_end(w);
}

void sml_jw_shape(sml_jw *w, const sml_npy *x) {
    sml_jw_key(w, "shape");
    sml_jw_array_inline(w);
    for (int i = 0; i < x->ndim; i++) sml_jw_int(w, x->shape[i]);
    sml_jw_end(w);
}

void sml_jw_report_worst(sml_jw *w, const sml_npy *x, const sml_check_report *r) {
    sml_jw_key(w, "worst");
    if (r && r->worst_row >= 0) {
        sml_check_elem e = sml_report_worst(r);
        sml_jw_elem(w, x, &e);
    } else {
        sml_jw_null(w);
    }
}

int sml_check_json_close(sml_out_file *jf, sml_jw *w, const char *path) {
    char err[1200];
    if (sml_jw_finish(w) != 0) {
        sml_out_abort(jf);
        fprintf(stderr, ME ": cannot write the --json report (nothing written): %s\n", path);
        return -1;
    }
    if (sml_out_commit(jf, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": cannot write the --json report (nothing written): %s\n", err);
        return -1;
    }
    return 0;
}
