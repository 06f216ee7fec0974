/* judge_output.c: `softmax-lab check --input x.npy --output y.npy --op OP [--dy dy.npy]`:
 * judges an output made elsewhere (PyTorch, JAX, a Triton kernel) against the
 * double-precision reference under the numerics contract, with the contract's own checker
 * (reference/check.c). The inputs are those of the op as in sml_problem: forward, x holds the
 * logits; backward, x holds the forward output y, --dy the upstream gradient and --output the
 * dx to judge. Every file is read and validated before anything is written. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_input.h"
#include "check_report.h"
#include "prop/repro.h"
#include "core/dtype.h"
#include "masks.h"
#include "reference/reference.h"
#include "io/path_same.h"

#define ME "softmax-lab check"

/* The reference rounded to the dtype, as DIR/reference.<op>.npy in x's shape, staged: put in
 * place only once the --json report is (sml_npy_stage_place), so a failed report leaves
 * nothing. The directory is made here. */
static int save_reference(const char *dir, sml_op op, const sml_npy *x, const double *want,
                          char *path, size_t pn, sml_npy_staged *st) {
    int64_t n = x->rows * x->cols;
    void *buf = malloc((size_t)(n ? n : 1) * sml_dtype_size(x->dtype));
    if (!buf) {
        fprintf(stderr, ME ": out of memory\n");
        return -1;
    }
    for (int64_t i = 0; i < n; i++) sml_store(x->dtype, buf, i, want[i]);
    snprintf(path, pn, "%s/reference.%s.npy", dir, sml_op_name(op));
    char err[1200];
    sml_status s = sml_mkdir_p(dir) == SML_OK ? SML_OK : SML_ERR_IO;
    if (s != SML_OK) snprintf(err, sizeof err, "%s: cannot create the folder", dir);
    if (s == SML_OK) s = sml_npy_stage(st, path, x->dtype, x->ndim, x->shape, buf, err, sizeof err);
    free(buf);
    if (s == SML_OK) return 0;
    fprintf(stderr, ME ": cannot write the --save output (nothing written): %s\n", err);
    return -1;
}

static void write_json(sml_jw *w, const sml_check_input_args *a, sml_op op, const sml_npy *x,
                       const char *verdict, const sml_check_report *r, const sml_check_elem *worst,
                       int nworst, const char *saved) {
    sml_jw_object(w);
    sml_jw_check_head(w);
    sml_jw_kstr(w, "mode", "output");
    sml_jw_kstr(w, "input", a->input);
    sml_jw_kstr(w, "output", a->output);
    sml_jw_kstr(w, "dy", a->dy);
    sml_jw_kstr(w, "op", sml_op_name(op));
    sml_jw_kstr(w, "dtype", sml_dtype_name(x->dtype));
    sml_jw_shape(w, x);
    sml_jw_kstr(w, "verdict", verdict);
    sml_jw_kint(w, "checked", r ? r->checked : 0);
    sml_jw_kint(w, "bad", r ? r->bad : 0);
    sml_jw_kint(w, "nan_mismatch", r ? r->nan_mismatch : 0);
    sml_jw_kint(w, "inf_mismatch", r ? r->inf_mismatch : 0);
    sml_jw_report_worst(w, x, r);
    sml_jw_worst(w, "violations", x, worst, nworst);
    sml_jw_kstr(w, "reference", saved && saved[0] ? saved : NULL);
    sml_jw_end(w);
}

/* The report into the opened --json file, put in place; 0, or -1 after a message (nothing
 * written). No file asked for: 0. */
static int json_report(sml_out_file *jf, const sml_check_input_args *a, sml_op op, const sml_npy *x,
                       const char *verdict, const sml_check_report *r, const sml_check_elem *worst,
                       int nworst, const char *saved) {
    if (!jf->f) return 0;
    sml_jw w;
    sml_jw_init(&w, jf->f);
    write_json(&w, a, op, x, verdict, r, worst, nworst, saved);
    return sml_check_json_close(jf, &w, a->json);
}

/* An output (--json, or the --save file `saved`) that names an input or the other output:
 * -1 after the message, else 0. */
static int refuse_clash(const sml_check_input_args *a, const char *saved) {
    const sml_path_arg paths[] = {{"--input", a->input, 0},
                                  {"--output", a->output, 0},
                                  {"--dy", a->dy, 0},
                                  {"--json", a->json, 1},
                                  {"the --save file", saved, 1}};
    char err[1200];
    if (!sml_paths_clash(paths, 5, err, sizeof err)) return 0;
    fprintf(stderr, ME ": %s\n", err);
    return -1;
}

/* The op (into *op) and the flags that go with it: 1 if they are usable, else 0 after the
 * message. */
static int usable_args(const sml_check_input_args *a, sml_op *op) {
    int one = SML_SOFTMAX;
    if (a->op && !sml_cli_mask_one(a->ops, &one)) {
        fprintf(stderr, ME ": --output judges one op (valid: " SML_CLI_OPS "), not '%s'\n", a->op);
        return 0;
    }
    *op = (sml_op)one;
    if (a->kernel) {
        fprintf(stderr, ME ": --output judges a given output; --kernel runs kernels on --input: "
                           "use one or the other\n");
        return 0;
    }
    int bwd = sml_op_is_backward(*op);
    if (bwd && !a->dy) {
        fprintf(stderr,
                ME
                ": %s needs the upstream gradient: --dy dy.npy (--input is the forward output y)\n",
                sml_op_name(*op));
        return 0;
    }
    if (!bwd && a->dy) {
        fprintf(stderr,
                ME ": --dy applies to backward ops only (--op softmax_bwd or log_softmax_bwd)\n");
        return 0;
    }
    return 1;
}

int sml_judge_output(const sml_check_input_args *a) {
    sml_op op;
    if (!usable_args(a, &op)) return SML_EXIT_UNUSABLE;
    int bwd = sml_op_is_backward(op);
    char err[1200];
    sml_npy x, y, dy;
    memset(&y, 0, sizeof y);
    memset(&dy, 0, sizeof dy);
    if (sml_npy_read(a->input, a->dtype, &x, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": --input %s\n", err);
        return SML_EXIT_UNUSABLE;
    }
    int rc = SML_EXIT_UNUSABLE;
    struct stat sd;
    const int had_dir = a->save_dir && stat(a->save_dir, &sd) == 0;
    double *want = NULL;
    sml_npy_staged *ref = NULL;
    sml_out_file jf;
    memset(&jf, 0, sizeof jf);
    if (refuse_clash(a, NULL) || !(ref = calloc(1, sizeof *ref))) goto done;
    if (sml_read_companion(a->output, "--output", &x, a->input, a->dtype, &y) != 0) goto done;
    if (bwd && sml_read_companion(a->dy, "--dy", &x, a->input, a->dtype, &dy) != 0) goto done;
    if (a->json && sml_out_open(&jf, a->json, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": cannot write the --json report: %s\n", err);
        goto done;
    }
    char shape[200];
    sml_shape_text(&x, shape, sizeof shape);
    int64_t n = x.rows * x.cols;
    printf("judging %s: %s of %s%s%s, %s, shape %s (%lld rows of %lld), against the "
           "double-precision reference\n",
           a->output, sml_op_name(op), a->input, bwd ? " (y) and " : "", bwd ? a->dy : "",
           sml_dtype_name(x.dtype), shape, (long long)x.rows, (long long)x.cols);
    if (n == 0) {
        if (json_report(&jf, a, op, &x, "NOTHING_CHECKED", NULL, NULL, 0, NULL) != 0) goto done;
        printf("verdict: NOTHING CHECKED: the tensor is empty (exit %d)\n", SML_EXIT_UNCHECKED);
        rc = SML_EXIT_UNCHECKED;
        goto done;
    }
    want = malloc((size_t)n * sizeof *want);
    if (!want || sml_ref_run(op, x.dtype, x.rows, x.cols, x.cols, x.data, bwd ? dy.data : NULL,
                             want) != SML_OK) {
        fprintf(stderr, ME ": out of memory\n");
        goto done;
    }
    sml_check_report r;
    sml_check_elem worst[SML_CHECK_SHOW_WORST];
    int nworst = 0;
    if (sml_check_against_worst(op, x.dtype, x.rows, x.cols, x.cols, x.data, bwd ? dy.data : NULL,
                                want, y.data, &r, worst, SML_CHECK_SHOW_WORST, &nworst) != SML_OK) {
        fprintf(stderr, ME ": out of memory\n");
        goto done;
    }
    if (r.pass) {
        char at[200];
        sml_index_tuple(&x, r.worst_row, r.worst_col, at, sizeof at);
        printf("PASS: all %lld elements within the numerics contract; worst at %s: got %.9g want "
               "%.9g, %.3g ulp, "
               "%.3g of the bound\n",
               (long long)r.checked, at, r.got, r.want, r.worst_ulps, r.worst_ratio);
    } else {
        printf("FAIL: %lld of %lld elements break the numerics contract (%lld NaN, %lld inf "
               "mismatches); the worst %d:\n",
               (long long)r.bad, (long long)r.checked, (long long)r.nan_mismatch,
               (long long)r.inf_mismatch, nworst);
        sml_print_worst(stdout, "  ", &x, worst, nworst);
    }
    char saved[4200] = "";
    if (a->save_dir) {
        snprintf(saved, sizeof saved, "%s/reference.%s.npy", a->save_dir, sml_op_name(op));
        if (refuse_clash(a, saved) ||
            save_reference(a->save_dir, op, &x, want, saved, sizeof saved, ref) != 0)
            goto done;
    }
    if (json_report(&jf, a, op, &x, r.pass ? "PASS" : "FAIL", &r, worst, nworst, saved) != 0)
        goto done;
    if (a->save_dir) {
        if (sml_npy_stage_place(ref, err, sizeof err) != SML_OK) {
            fprintf(stderr, ME ": cannot write the --save output: %s\n", err);
            goto done;
        }
        printf("reference (rounded to %s) saved to %s\n", sml_dtype_name(x.dtype), saved);
    }
    rc = r.pass ? SML_EXIT_HOLDS : SML_EXIT_BROKEN;
    printf("verdict: %s (exit %d)\n",
           r.pass ? "PASS: the output meets the numerics contract"
                  : "FAIL: the output breaks the numerics contract",
           rc);
done:
    if (jf.f) sml_out_abort(&jf);
    if (ref) sml_npy_stage_abort(ref);
    if (a->save_dir && !had_dir && rc == SML_EXIT_UNUSABLE)
        rmdir(a->save_dir); /* made here, left empty */
    free(ref);
    free(want);
    sml_npy_free(&x);
    sml_npy_free(&y);
    sml_npy_free(&dy);
    return rc;
}
