/* check_input.c: `softmax-lab check --input logits.npy`: how a user reproduces a numerical
 * bug from a real model. Each selected kernel runs on the user's tensor (softmax over the
 * last axis) with the property engine's guarded, poisoned buffers; its output is judged by
 * the contract's checker against the double-precision reference, computed once per op. All
 * inputs are validated before anything is written. */
#include "check_input.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prop/case.h"
#include "prop/exec.h"
#include "prop/npy.h"
#include "prop/repro.h"
#include "reference/check.h"
#include "reference/dtype.h"
#include "reference/reference.h"
#include "softmax_lab.h"

#define ME "softmax-lab check"

typedef struct kres {
    const sml_kernel *k;
    sml_op op;
    const char *verdict;  /* PASS FAIL ERROR SKIP */
    char why[320];
    sml_check_report rep;
    int64_t out_nan, out_pinf, out_ninf;
    double sum_lo, sum_hi;
    int64_t sum_rows;
    char saved[1024];
} kres;

static void count_special(sml_dtype dt, const void *v, int64_t n, int64_t *nan, int64_t *pinf,
                          int64_t *ninf) {
    *nan = *pinf = *ninf = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = sml_load(dt, v, i);
        if (isnan(d)) (*nan)++;
        else if (d == INFINITY) (*pinf)++;
        else if (d == -INFINITY) (*ninf)++;
    }
}

static void row_sums(sml_op op, sml_dtype dt, const void *out, const double *want, int64_t rows,
                     int64_t cols, kres *r) {
    r->sum_lo = INFINITY;
    r->sum_hi = -INFINITY;
    r->sum_rows = 0;
    for (int64_t i = 0; i < rows; i++) {
        int finite = 1;
        for (int64_t j = 0; j < cols && finite; j++) finite = !isnan(want[i * cols + j]);
        if (!finite) continue;
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            double g = sml_load(dt, out, i * cols + j);
            s += op == SML_LOG_SOFTMAX ? exp(g) : g;
        }
        if (s < r->sum_lo || isnan(s)) r->sum_lo = s;
        if (s > r->sum_hi || isnan(s)) r->sum_hi = s;
        r->sum_rows++;
    }
}

static int parse_ops(const char *s, int have_dy, unsigned *mask) {
    if (!s) {
        *mask = 1u << SML_SOFTMAX;
        return 1;
    }
    if (!strcmp(s, "all")) {
        *mask = have_dy ? SML_OPS_ALL : SML_OPS_FWD;
        return 1;
    }
    sml_op op;
    if (sml_op_parse(s, &op) != SML_OK) return 0;
    *mask = 1u << op;
    return 1;
}

static void json_escape(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

int sml_check_input(const sml_check_input_args *a) {
    char err[1024] = "";
    sml_npy x, dy;
    memset(&dy, 0, sizeof dy);
    if (sml_npy_read(a->input, a->dtype, &x, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 2;
    }
    int rc = 2;
    kres *res = NULL;
    size_t nres = 0;
    unsigned ops;
    if (!parse_ops(a->op, a->dy != NULL, &ops)) {
        fprintf(stderr, ME ": unknown op '%s' (softmax, log_softmax, softmax_bwd, log_softmax_bwd, all)\n", a->op);
        goto done;
    }
    if ((ops & ~SML_OPS_FWD) && !a->dy) {
        fprintf(stderr, ME ": backward ops need the upstream gradient: --dy grad.npy\n");
        goto done;
    }
    if (a->dy && !(ops & ~SML_OPS_FWD)) {
        fprintf(stderr, ME ": --dy applies to backward ops only (--op softmax_bwd, log_softmax_bwd or all)\n");
        goto done;
    }
    if (a->dy) {
        if (sml_npy_read(a->dy, (int)x.dtype, &dy, err, sizeof err) != SML_OK) {
            fprintf(stderr, ME ": %s\n", err);
            goto done;
        }
        int same = dy.ndim == x.ndim;
        for (int i = 0; same && i < x.ndim; i++) same = dy.shape[i] == x.shape[i];
        if (!same) {
            fprintf(stderr, ME ": %s and %s have different shapes\n", a->input, a->dy);
            goto done;
        }
    }
    const sml_kernel *only = NULL;
    if (a->kernel && strcmp(a->kernel, "all")) {
        only = sml_kernel_find(a->kernel);
        if (!only) {
            fprintf(stderr, ME ": no kernel '%s' in the registry (softmax-lab list)\n", a->kernel);
            goto done;
        }
    }
    if (x.rows == 0 || x.cols == 0) {
        printf("%s: empty tensor (%lld x %lld): nothing to check\n", a->input, (long long)x.rows,
               (long long)x.cols);
        rc = 0;
        goto done;
    }
    if (a->save_dir && sml_prop_mkdirs(a->save_dir) != SML_OK) {
        fprintf(stderr, ME ": cannot create the output directory %s\n", a->save_dir);
        goto done;
    }
    rc = 0;

    /* What the input holds, so the table below can be read against it. */
    int64_t n = x.rows * x.cols, in_nan, in_pinf, in_ninf;
    count_special(x.dtype, x.data, n, &in_nan, &in_pinf, &in_ninf);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = sml_load(x.dtype, x.data, i);
        if (isfinite(v)) {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    char shape[128] = "";
    for (int i = 0; i < x.ndim; i++) {
        char t[32];
        snprintf(t, sizeof t, "%s%lld", i ? "x" : "", (long long)x.shape[i]);
        strncat(shape, t, sizeof shape - strlen(shape) - 1);
    }
    printf("input %s: %s %s (%lld rows of %lld), finite logits in [%.6g, %.6g], %lld NaN, %lld +inf, %lld -inf\n",
           a->input, shape, sml_dtype_name(x.dtype), (long long)x.rows, (long long)x.cols, lo, hi,
           (long long)in_nan, (long long)in_pinf, (long long)in_ninf);
    if (hi > 88.72)
        printf("  note: logits above 88.72 overflow exp() in fp32 unless the row max is subtracted first\n");

    int tty = isatty(fileno(stderr));
    size_t cap = sml_kernel_count() * SML_OP_COUNT;
    res = calloc(cap, sizeof *res);
    double *want = malloc((size_t)n * sizeof *want);
    void *out = malloc((size_t)n * sml_dtype_size(x.dtype));
    sml_prop_case c;
    memset(&c, 0, sizeof c);
    c.dtype = x.dtype;
    c.rows = x.rows;
    c.cols = x.cols;
    c.ld = x.cols;
    c.offset = 0;
    if (!res || !want || !out) {
        fprintf(stderr, ME ": out of memory\n");
        free(want);
        free(out);
        rc = 2;
        goto done;
    }
    for (int op = 0; op < SML_OP_COUNT; op++) {
        if (!(ops >> op & 1)) continue;
        c.op = (sml_op)op;
        if (sml_prop_case_alloc(&c) != SML_OK) { rc = 2; break; }
        if (sml_op_is_backward(c.op)) {
            /* y is what the forward op gives for these logits, rounded to the dtype. */
            memcpy(c.logits, x.data, x.bytes);
            memcpy(c.dy, dy.data, dy.bytes);
            if (sml_prop_case_derive_y(&c) != SML_OK) { rc = 2; sml_prop_case_free(&c); break; }
        } else {
            memcpy(c.x, x.data, x.bytes);
        }
        if (sml_ref_run(c.op, c.dtype, c.rows, c.cols, c.cols, c.x, c.dy, want) != SML_OK) {
            fprintf(stderr, ME ": the reference failed\n");
            rc = 2;
            sml_prop_case_free(&c);
            break;
        }
        for (size_t i = 0; i < sml_kernel_count(); i++) {
            const sml_kernel *k = sml_kernel_at(i);
            if (only && k != only) continue;
            if (!(k->ops >> op & 1) || !(k->dtypes >> x.dtype & 1)) continue;
            kres *r = &res[nres++];
            r->k = k;
            r->op = c.op;
            r->verdict = "SKIP";
            if (c.cols < k->min_cols || (k->max_cols > 0 && c.cols > k->max_cols)) {
                snprintf(r->why, sizeof r->why, "takes %lld..%lld columns", (long long)k->min_cols,
                         (long long)k->max_cols);
                continue;
            }
            if (!k->launch || (k->device == SML_DEVICE_GPU && !sml_gpu_available())) {
                snprintf(r->why, sizeof r->why, "%s", !k->launch ? "not built" : "no CUDA device");
                continue;
            }
            if (tty) {
                fprintf(stderr, "\r\033[K" ME ": running %s %s ...", k->name, sml_op_name(c.op));
                fflush(stderr);
            }
            sml_handle *h = NULL;
            sml_prop_exec ex;
            sml_prop_run_report run;
            sml_status s = sml_prop_exec_init(&ex, k->device);
            if (s == SML_OK) s = sml_handle_create(&h);
            if (s == SML_OK) s = sml_prop_exec_run(&ex, k, h, &c, 1, out, &run);
            sml_prop_exec_free(&ex);
            sml_handle_destroy(h);
            if (tty) fprintf(stderr, "\r\033[K");
            if (s != SML_OK || run.status != SML_OK) {
                r->verdict = "ERROR";
                snprintf(r->why, sizeof r->why, "%s", s != SML_OK ? sml_strerror(s) : run.where);
                rc = 1;
                continue;
            }
            sml_check_against(c.op, c.dtype, c.rows, c.cols, c.cols, c.x, c.dy, want, out, &r->rep);
            count_special(c.dtype, out, n, &r->out_nan, &r->out_pinf, &r->out_ninf);
            row_sums(c.op, c.dtype, out, want, c.rows, c.cols, r);
            int ok = r->rep.pass && !run.canary_bad && !run.input_modified;
            r->verdict = ok ? "PASS" : "FAIL";
            if (run.canary_bad || run.input_modified) snprintf(r->why, sizeof r->why, "%s", run.where);
            if (!ok) rc = 1;
            if (a->save_dir) {
                snprintf(r->saved, sizeof r->saved, "%s/%s.%s.npy", a->save_dir, k->name, sml_op_name(c.op));
                if (sml_npy_write(r->saved, c.dtype, x.ndim, x.shape, out, err, sizeof err) != SML_OK) {
                    fprintf(stderr, ME ": %s\n", err);
                    r->saved[0] = 0;
                }
            }
        }
        sml_prop_case_free(&c);
    }
    free(want);
    free(out);

    printf("\n%-10s %-15s %-6s %10s %10s %10s  %-22s %-20s %s\n", "kernel", "op", "verdict", "worst ulp",
           "worst rel", "err/bound", "NaN/+inf/-inf out", "row sums", "worst at (row, col): got vs want");
    for (size_t i = 0; i < nres; i++) {
        kres *r = &res[i];
        if (!strcmp(r->verdict, "SKIP") || !strcmp(r->verdict, "ERROR")) {
            printf("%-10s %-15s %-6s  %s\n", r->k->name, sml_op_name(r->op), r->verdict, r->why);
            continue;
        }
        char specials[48], sums[48], where[160];
        snprintf(specials, sizeof specials, "%lld/%lld/%lld", (long long)r->out_nan, (long long)r->out_pinf,
                 (long long)r->out_ninf);
        if (r->sum_rows) snprintf(sums, sizeof sums, "[%.9g, %.9g]", r->sum_lo, r->sum_hi);
        else snprintf(sums, sizeof sums, "(no finite row)");
        if (r->rep.worst_row >= 0)
            snprintf(where, sizeof where, "(%lld, %lld): %.9g vs %.9g", (long long)r->rep.worst_row,
                     (long long)r->rep.worst_col, r->rep.got, r->rep.want);
        else
            snprintf(where, sizeof where, "-");
        printf("%-10s %-15s %-6s %10.3g %10.3g %10.3g  %-22s %-20s %s%s%s\n", r->k->name, sml_op_name(r->op),
               r->verdict, r->rep.worst_ulps, r->rep.worst_rel, r->rep.worst_ratio, specials, sums, where,
               r->why[0] ? "  " : "", r->why);
        if (r->saved[0]) printf("%-10s %-15s        output saved to %s\n", "", "", r->saved);
    }
    if (a->json) {
        FILE *f = fopen(a->json, "w");
        if (!f) {
            fprintf(stderr, ME ": cannot write %s\n", a->json);
        } else {
            fprintf(f, "{\n  \"input\": ");
            json_escape(f, a->input);
            fprintf(f, ",\n  \"dtype\": \"%s\",\n  \"rows\": %lld,\n  \"cols\": %lld,\n  \"results\": [\n",
                    sml_dtype_name(x.dtype), (long long)x.rows, (long long)x.cols);
            for (size_t i = 0; i < nres; i++) {
                kres *r = &res[i];
                int judged = strcmp(r->verdict, "SKIP") && strcmp(r->verdict, "ERROR");
                fprintf(f, "    {\"kernel\": \"%s\", \"op\": \"%s\", \"verdict\": \"%s\"", r->k->name,
                        sml_op_name(r->op), r->verdict);
                if (judged)
                    fprintf(f, ", \"worst_ulps\": %.6g, \"worst_rel\": %.6g, \"worst_ratio\": %.6g, "
                               "\"worst_row\": %lld, \"worst_col\": %lld, \"bad\": %lld, \"nan_out\": %lld, "
                               "\"pinf_out\": %lld, \"ninf_out\": %lld, \"row_sum_min\": %.17g, \"row_sum_max\": %.17g",
                            isfinite(r->rep.worst_ulps) ? r->rep.worst_ulps : 1e308,
                            isfinite(r->rep.worst_rel) ? r->rep.worst_rel : 1e308,
                            isfinite(r->rep.worst_ratio) ? r->rep.worst_ratio : 1e308,
                            (long long)r->rep.worst_row, (long long)r->rep.worst_col, (long long)r->rep.bad,
                            (long long)r->out_nan, (long long)r->out_pinf, (long long)r->out_ninf,
                            r->sum_rows && isfinite(r->sum_lo) ? r->sum_lo : 0.0,
                            r->sum_rows && isfinite(r->sum_hi) ? r->sum_hi : 0.0);
                if (r->why[0]) {
                    fprintf(f, ", \"note\": ");
                    json_escape(f, r->why);
                }
                if (r->saved[0]) {
                    fprintf(f, ", \"output\": ");
                    json_escape(f, r->saved);
                }
                fprintf(f, "}%s\n", i + 1 < nres ? "," : "");
            }
            fprintf(f, "  ]\n}\n");
            fclose(f);
        }
    }
    if (rc == 1) printf("\nverdict: some kernel breaks the numerics contract on this input (exit 1)\n");
    else printf("\nverdict: every kernel that ran meets the numerics contract on this input\n");
done:
    free(res);
    sml_npy_free(&x);
    sml_npy_free(&dy);
    return rc;
}
