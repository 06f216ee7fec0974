/* check_input.c: `softmax-lab check --input logits.npy`: how a user reproduces a numerical
 * bug from a real model. Each selected kernel runs on the user's tensor (softmax over the
 * last axis) with the property engine's guarded, poisoned buffers; its output is judged by
 * the contract's checker against the double-precision reference, computed once per op. All
 * inputs are validated before anything is written. With --output, judge_output.c judges an
 * output made elsewhere instead. */
#include "check_input.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_report.h"
#include "prop/case.h"
#include "prop/exec.h"
#include "io/npy.h"
#include "prop/repro.h"
#include "reference/check.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "softmax_lab.h"

#define ME "softmax-lab check"

typedef struct kres {
    const sml_kernel *k;
    sml_op op;
    const char *verdict;  /* PASS FAIL ERROR SKIP */
    char why[320];
    sml_check_report rep;
    sml_check_elem worst[SML_CHECK_SHOW_WORST];
    int nworst;
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

static void write_json(sml_jw *w, const sml_check_input_args *a, const sml_npy *x, const char *verdict,
                       const kres *res, size_t nres) {
    sml_jw_object(w);
    sml_jw_check_head(w);
    sml_jw_kstr(w, "mode", "kernels");
    sml_jw_kstr(w, "input", a->input);
    sml_jw_kstr(w, "dy", a->dy);
    sml_jw_kstr(w, "dtype", sml_dtype_name(x->dtype));
    sml_jw_shape(w, x);
    sml_jw_kint(w, "rows", x->rows);
    sml_jw_kint(w, "cols", x->cols);
    sml_jw_kstr(w, "verdict", verdict);
    sml_jw_key(w, "results");
    sml_jw_array(w);
    for (size_t i = 0; i < nres; i++) {
        const kres *r = &res[i];
        int judged = strcmp(r->verdict, "SKIP") && strcmp(r->verdict, "ERROR");
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "kernel", r->k->name);
        sml_jw_kstr(w, "op", sml_op_name(r->op));
        sml_jw_kstr(w, "verdict", r->verdict);
        if (judged) {
            sml_jw_kint(w, "checked", r->rep.checked);
            sml_jw_kint(w, "bad", r->rep.bad);
            sml_jw_knum(w, "worst_ulps", r->rep.worst_ulps);
            sml_jw_knum(w, "worst_rel", r->rep.worst_rel);
            sml_jw_knum(w, "worst_ratio", r->rep.worst_ratio);
            sml_jw_report_worst(w, x, &r->rep);
            sml_jw_worst(w, "violations", x, r->worst, r->nworst);
            sml_jw_kint(w, "nan_out", r->out_nan);
            sml_jw_kint(w, "pinf_out", r->out_pinf);
            sml_jw_kint(w, "ninf_out", r->out_ninf);
            sml_jw_knum(w, "row_sum_min", r->sum_rows ? r->sum_lo : NAN);
            sml_jw_knum(w, "row_sum_max", r->sum_rows ? r->sum_hi : NAN);
        }
        if (r->why[0]) sml_jw_kstr(w, "note", r->why);
        if (r->saved[0]) sml_jw_kstr(w, "output", r->saved);
        sml_jw_end(w);
    }
    sml_jw_end(w);
    sml_jw_end(w);
}

/* The report into the opened --json file, put in place; 0, or -1 after a message (nothing
 * written). No file asked for: 0. */
static int json_report(sml_out_file *jf, const sml_check_input_args *a, const sml_npy *x, const char *verdict,
                       const kres *res, size_t nres) {
    if (!jf->f) return 0;
    sml_jw w;
    sml_jw_init(&w, jf->f);
    write_json(&w, a, x, verdict, res, nres);
    return sml_check_json_close(jf, &w, a->json);
}

static void print_table(const sml_npy *x, const kres *res, size_t nres) {
    printf("\n%-10s %-15s %-6s %9s %10s %10s %10s  %-22s %-20s %s\n", "kernel", "op", "verdict", "bad",
           "worst ulp", "worst rel", "err/bound", "NaN/+inf/-inf out", "row sums", "worst at: got vs want");
    for (size_t i = 0; i < nres; i++) {
        const kres *r = &res[i];
        if (!strcmp(r->verdict, "SKIP") || !strcmp(r->verdict, "ERROR")) {
            printf("%-10s %-15s %-6s  %s\n", r->k->name, sml_op_name(r->op), r->verdict, r->why);
            continue;
        }
        char specials[48], sums[48], where[300], at[200];
        snprintf(specials, sizeof specials, "%lld/%lld/%lld", (long long)r->out_nan, (long long)r->out_pinf,
                 (long long)r->out_ninf);
        if (r->sum_rows) snprintf(sums, sizeof sums, "[%.9g, %.9g]", r->sum_lo, r->sum_hi);
        else snprintf(sums, sizeof sums, "(no finite row)");
        if (r->rep.worst_row >= 0) {
            sml_index_tuple(x, r->rep.worst_row, r->rep.worst_col, at, sizeof at);
            snprintf(where, sizeof where, "%s: %.9g vs %.9g", at, r->rep.got, r->rep.want);
        } else {
            snprintf(where, sizeof where, "-");
        }
        printf("%-10s %-15s %-6s %9lld %10.3g %10.3g %10.3g  %-22s %-20s %s%s%s\n", r->k->name, sml_op_name(r->op),
               r->verdict, (long long)r->rep.bad, r->rep.worst_ulps, r->rep.worst_rel, r->rep.worst_ratio, specials,
               sums, where, r->why[0] ? "  " : "", r->why);
        if (!strcmp(r->verdict, "FAIL") && r->rep.bad) {
            printf("%-10s %-15s FAIL: %lld of %lld elements break the numerics contract (%lld NaN, %lld inf "
                   "mismatches); the worst %d:\n",
                   "", "", (long long)r->rep.bad, (long long)r->rep.checked, (long long)r->rep.nan_mismatch,
                   (long long)r->rep.inf_mismatch, r->nworst);
            sml_print_worst(stdout, "                             ", x, r->worst, r->nworst);
        }
        if (r->saved[0]) printf("%-10s %-15s        output saved to %s\n", "", "", r->saved);
    }
}

int sml_check_input(const sml_check_input_args *a) {
    if (a->output) return sml_judge_output(a);
    char err[1200] = "";
    sml_npy x, dy;
    memset(&dy, 0, sizeof dy);
    if (sml_npy_read(a->input, a->dtype, &x, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return SML_EXIT_UNUSABLE;
    }
    int rc = SML_EXIT_UNUSABLE;
    kres *res = NULL;
    size_t nres = 0;
    double *want = NULL;
    void *out = NULL;
    sml_out_file jf;
    memset(&jf, 0, sizeof jf);
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
    if (a->dy && sml_read_companion(a->dy, "--dy", &x, a->input, a->dtype, &dy) != 0) goto done;
    const sml_kernel *only = NULL;
    if (a->kernel && strcmp(a->kernel, "all")) {
        only = sml_kernel_find(a->kernel);
        if (!only) {
            fprintf(stderr, ME ": no kernel '%s' in the registry (softmax-lab list)\n", a->kernel);
            goto done;
        }
    }
    if (a->json && sml_out_open(&jf, a->json, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": cannot write the --json report: %s\n", err);
        goto done;
    }
    if (x.rows == 0 || x.cols == 0) {
        char shape[200];
        sml_shape_text(&x, shape, sizeof shape);
        if (json_report(&jf, a, &x, "NOTHING_CHECKED", NULL, 0) != 0) goto done;
        printf("%s: empty tensor %s: nothing to check\n", a->input, shape);
        printf("\nverdict: NOTHING CHECKED (exit %d)\n", SML_EXIT_UNCHECKED);
        rc = SML_EXIT_UNCHECKED;
        goto done;
    }
    if (a->save_dir && sml_mkdir_p(a->save_dir) != SML_OK) {
        fprintf(stderr, ME ": cannot create the output directory %s\n", a->save_dir);
        goto done;
    }

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
    char shape[200];
    sml_shape_text(&x, shape, sizeof shape);
    printf("input %s: %s %s (%lld rows of %lld), finite logits in [%.6g, %.6g], %lld NaN, %lld +inf, %lld -inf\n",
           a->input, shape, sml_dtype_name(x.dtype), (long long)x.rows, (long long)x.cols, lo, hi,
           (long long)in_nan, (long long)in_pinf, (long long)in_ninf);
    if (hi > 88.72)
        printf("  note: logits above 88.72 overflow exp() in fp32 unless the row max is subtracted first\n");

    int tty = isatty(fileno(stderr));
    size_t cap = sml_kernel_count() * SML_OP_COUNT;
    res = calloc(cap, sizeof *res);
    want = malloc((size_t)n * sizeof *want);
    out = malloc((size_t)n * sml_dtype_size(x.dtype));
    sml_prop_case c;
    memset(&c, 0, sizeof c);
    c.dtype = x.dtype;
    c.rows = x.rows;
    c.cols = x.cols;
    c.ld = x.cols;
    c.offset = 0;
    if (!res || !want || !out) {
        fprintf(stderr, ME ": out of memory\n");
        goto done;
    }
    int broken = 0, unchecked = 0, judged = 0;
    for (int op = 0; op < SML_OP_COUNT; op++) {
        if (!(ops >> op & 1)) continue;
        c.op = (sml_op)op;
        if (sml_prop_case_alloc(&c) != SML_OK) {
            fprintf(stderr, ME ": out of memory\n");
            goto done;
        }
        if (sml_op_is_backward(c.op)) {
            /* y is what the forward op gives for these logits, rounded to the dtype. */
            memcpy(c.logits, x.data, x.bytes);
            memcpy(c.dy, dy.data, dy.bytes);
            if (sml_prop_case_derive_y(&c) != SML_OK) {
                fprintf(stderr, ME ": the reference failed\n");
                sml_prop_case_free(&c);
                goto done;
            }
        } else {
            memcpy(c.x, x.data, x.bytes);
        }
        if (sml_ref_run(c.op, c.dtype, c.rows, c.cols, c.cols, c.x, c.dy, want) != SML_OK) {
            fprintf(stderr, ME ": the reference failed\n");
            sml_prop_case_free(&c);
            goto done;
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
                unchecked++;
                continue;
            }
            if (!k->launch || (k->device == SML_DEVICE_GPU && !sml_gpu_available())) {
                snprintf(r->why, sizeof r->why, "%s", !k->launch ? "not built" : "no CUDA device");
                unchecked++;
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
                broken = 1;
                continue;
            }
            judged++;
            sml_check_against_worst(c.op, c.dtype, c.rows, c.cols, c.cols, c.x, c.dy, want, out, &r->rep,
                                    r->worst, SML_CHECK_SHOW_WORST, &r->nworst);
            count_special(c.dtype, out, n, &r->out_nan, &r->out_pinf, &r->out_ninf);
            row_sums(c.op, c.dtype, out, want, c.rows, c.cols, r);
            int ok = r->rep.pass && !run.canary_bad && !run.input_modified;
            r->verdict = ok ? "PASS" : "FAIL";
            if (run.canary_bad || run.input_modified) snprintf(r->why, sizeof r->why, "%s", run.where);
            if (!ok) broken = 1;
            if (a->save_dir) {
                snprintf(r->saved, sizeof r->saved, "%s/%s.%s.npy", a->save_dir, k->name, sml_op_name(c.op));
                if (sml_npy_write(r->saved, c.dtype, x.ndim, x.shape, out, err, sizeof err) != SML_OK) {
                    fprintf(stderr, ME ": cannot write the --save output (nothing written): %s\n", err);
                    sml_prop_case_free(&c);
                    goto done;
                }
            }
        }
        sml_prop_case_free(&c);
    }
    print_table(&x, res, nres);
    /* A named kernel that could not run, or nothing run at all, is not a pass. */
    int nothing = !broken && (judged == 0 || (only && unchecked));
    rc = broken ? SML_EXIT_BROKEN : nothing ? SML_EXIT_UNCHECKED : SML_EXIT_HOLDS;
    if (json_report(&jf, a, &x, broken ? "FAIL" : nothing ? "NOTHING_CHECKED" : "PASS", res, nres) != 0) {
        rc = SML_EXIT_UNUSABLE;
        goto done;
    }
    if (broken)
        printf("\nverdict: some kernel breaks the numerics contract on this input (exit %d)\n", rc);
    else if (nothing && only)
        printf("\nverdict: NOTHING CHECKED: %s could not run here (see SKIP above) (exit %d)\n", only->name, rc);
    else if (nothing)
        printf("\nverdict: NOTHING CHECKED: no kernel could run here (see SKIP above) (exit %d)\n", rc);
    else if (unchecked)
        printf("\nverdict: every kernel that ran meets the numerics contract on this input; %d kernel/op pairs "
               "skipped (see SKIP above)\n", unchecked);
    else
        printf("\nverdict: every kernel meets the numerics contract on this input\n");
done:
    if (jf.f) sml_out_abort(&jf);
    free(want);
    free(out);
    free(res);
    sml_npy_free(&x);
    sml_npy_free(&dy);
    return rc;
}
