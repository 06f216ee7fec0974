/* check_input.c: `softmax-lab check --input logits.npy`: how a user reproduces a numerical
 * bug from a real model. Each selected kernel runs on the user's tensor (softmax over the
 * last axis) with the property engine's guarded, poisoned buffers; its output is judged by
 * the contract's checker against the double-precision reference, computed once per op. Run
 * as the softmax-lab executable, each kernel runs in a worker process of its own
 * (src/worker) and this process, which never calls a judged kernel, judges what comes back:
 * a worker that dies, hangs or answers out of turn is that kernel's FAIL. All inputs are
 * validated before anything is written. With --output, judge_output.c judges an output made
 * elsewhere instead. */
#include "check_input.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_report.h"
#include "masks.h"
#include "prop/case.h"
#include "prop/exec.h"
#include "io/npy.h"
#include "prop/repro.h"
#include "reference/check.h"
#include "core/dtype.h"
#include "reference/reference.h"
#include "io/path_same.h"
#include "softmax_lab.h"
#include "worker/worker.h"

#define ME "softmax-lab check"

typedef struct kres {
    const sml_kernel *k;
    sml_op op;
    const char *verdict; /* PASS FAIL ERROR SKIP */
    int judged;          /* its output was compared (a FAIL may have none: its worker died) */
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
        if (isnan(d))
            (*nan)++;
        else if (d == INFINITY)
            (*pinf)++;
        else if (d == -INFINITY)
            (*ninf)++;
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

/* The ops to run: softmax without --op; every op --op named, forward only for "all"
 * without --dy. */
static unsigned ops_to_run(const sml_check_input_args *a) {
    if (!a->op) return 1u << SML_SOFTMAX;
    return a->ops == SML_OPS_ALL && !a->dy ? SML_OPS_FWD : a->ops;
}

static void write_json(sml_jw *w, const sml_check_input_args *a, const sml_npy *x,
                       const char *verdict, const kres *res, size_t nres) {
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
        int judged = r->judged;
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
static int json_report(sml_out_file *jf, const sml_check_input_args *a, const sml_npy *x,
                       const char *verdict, const kres *res, size_t nres) {
    if (!jf->f) return 0;
    sml_jw w;
    sml_jw_init(&w, jf->f);
    write_json(&w, a, x, verdict, res, nres);
    return sml_check_json_close(jf, &w, a->json);
}

static void print_table(const sml_npy *x, const kres *res, size_t nres) {
    printf("\n%-10s %-15s %-6s %9s %10s %10s %10s  %-22s %-20s %s\n", "kernel", "op", "verdict",
           "bad", "worst ulp", "worst rel", "err/bound", "NaN/+inf/-inf out", "row sums",
           "worst at: got vs want");
    for (size_t i = 0; i < nres; i++) {
        const kres *r = &res[i];
        if (!r->judged) {
            printf("%-10s %-15s %-6s  %s\n", r->k->name, sml_op_name(r->op), r->verdict, r->why);
            continue;
        }
        char specials[48], sums[48], where[300], at[200];
        snprintf(specials, sizeof specials, "%lld/%lld/%lld", (long long)r->out_nan,
                 (long long)r->out_pinf, (long long)r->out_ninf);
        if (r->sum_rows)
            snprintf(sums, sizeof sums, "[%.9g, %.9g]", r->sum_lo, r->sum_hi);
        else
            snprintf(sums, sizeof sums, "(no finite row)");
        if (r->rep.worst_row >= 0) {
            sml_index_tuple(x, r->rep.worst_row, r->rep.worst_col, at, sizeof at);
            snprintf(where, sizeof where, "%s: %.9g vs %.9g", at, r->rep.got, r->rep.want);
        } else {
            snprintf(where, sizeof where, "-");
        }
        printf("%-10s %-15s %-6s %9lld %10.3g %10.3g %10.3g  %-22s %-20s %s%s%s\n", r->k->name,
               sml_op_name(r->op), r->verdict, (long long)r->rep.bad, r->rep.worst_ulps,
               r->rep.worst_rel, r->rep.worst_ratio, specials, sums, where, r->why[0] ? "  " : "",
               r->why);
        if (!strcmp(r->verdict, "FAIL") && r->rep.bad) {
            printf("%-10s %-15s FAIL: %lld of %lld elements break the numerics contract (%lld NaN, "
                   "%lld inf "
                   "mismatches); the worst %d:\n",
                   "", "", (long long)r->rep.bad, (long long)r->rep.checked,
                   (long long)r->rep.nan_mismatch, (long long)r->rep.inf_mismatch, r->nworst);
            sml_print_worst(stdout, "                             ", x, r->worst, r->nworst);
        }
        if (r->saved[0]) printf("%-10s %-15s        output saved to %s\n", "", "", r->saved);
    }
}

/* ---- parse ---- */

#define MAX_ONLY 64

typedef struct ci_state {
    const sml_check_input_args *a;
    sml_npy x, dy;
    unsigned ops;
    const sml_kernel *only[MAX_ONLY]; /* --kernel K[,K]; none: every kernel */
    size_t nonly;
    sml_out_file jf;
    kres *res;
    size_t nres;
    double *want;
    void *out;
    sml_npy_staged *saves; /* --save outputs, put in place after the --json report */
    size_t nsaves;
    int broken, unchecked, judged, oom;
} ci_state;

/* --kernel K[,K...] or all: 0, or -1 after the message naming the unknown one. */
static int parse_kernels(ci_state *st) {
    const char *spec = st->a->kernel;
    if (!spec || !strcmp(spec, "all")) return 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const sml_kernel *k = sml_kernel_find(t);
        if (!k) {
            char names[2048];
            fprintf(
                stderr,
                ME ": bad value for --kernel: no kernel '%s' in the registry (valid: %s, or all)\n",
                t, sml_cli_kernel_names(names, sizeof names));
            return -1;
        }
        if (st->nonly < MAX_ONLY) st->only[st->nonly++] = k;
    }
    if (st->nonly) return 0;
    fprintf(stderr, ME ": --kernel '%s' names no kernel\n", spec);
    return -1;
}

static int wanted(const ci_state *st, const sml_kernel *k) {
    if (!st->nonly) return 1;
    for (size_t i = 0; i < st->nonly; i++)
        if (st->only[i] == k) return 1;
    return 0;
}

/* An output (--json, or a --save file) that names an input or the other output: -1 after
 * the message, else 0. */
static int refuse_clash(const sml_check_input_args *a, const char *saved) {
    const sml_path_arg paths[] = {{"--input", a->input, 0},
                                  {"--dy", a->dy, 0},
                                  {"--json", a->json, 1},
                                  {"the --save file", saved, 1}};
    char err[1200];
    if (!sml_paths_clash(paths, 4, err, sizeof err)) return 0;
    fprintf(stderr, ME ": %s\n", err);
    return -1;
}

/* Reads and validates everything before anything runs or is written: -1 to go on, else the
 * exit code. */
static int prepare(ci_state *st) {
    const sml_check_input_args *a = st->a;
    char err[1200] = "";
    if (refuse_clash(a, NULL)) return SML_EXIT_UNUSABLE;
    if (sml_npy_read(a->input, a->dtype, &st->x, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return SML_EXIT_UNUSABLE;
    }
    st->ops = ops_to_run(a);
    if ((st->ops & ~SML_OPS_FWD) && !a->dy) {
        fprintf(stderr, ME ": backward ops need the upstream gradient: --dy grad.npy\n");
        return SML_EXIT_UNUSABLE;
    }
    if (a->dy && !(st->ops & ~SML_OPS_FWD)) {
        fprintf(stderr, ME
                ": --dy applies to backward ops only (--op softmax_bwd, log_softmax_bwd or all)\n");
        return SML_EXIT_UNUSABLE;
    }
    if (a->dy && sml_read_companion(a->dy, "--dy", &st->x, a->input, a->dtype, &st->dy) != 0)
        return SML_EXIT_UNUSABLE;
    if (parse_kernels(st) != 0) return SML_EXIT_UNUSABLE;
    if (a->json && sml_out_open(&st->jf, a->json, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": cannot write the --json report: %s\n", err);
        return SML_EXIT_UNUSABLE;
    }
    return -1;
}

/* ---- run ---- */

static void print_input(const ci_state *st) {
    const sml_npy *x = &st->x;
    int64_t n = x->rows * x->cols, in_nan, in_pinf, in_ninf;
    count_special(x->dtype, x->data, n, &in_nan, &in_pinf, &in_ninf);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = sml_load(x->dtype, x->data, i);
        if (isfinite(v)) {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    char shape[200];
    sml_shape_text(x, shape, sizeof shape);
    printf("input %s: %s %s (%lld rows of %lld), finite logits in [%.6g, %.6g], %lld NaN, %lld "
           "+inf, %lld -inf\n",
           st->a->input, shape, sml_dtype_name(x->dtype), (long long)x->rows, (long long)x->cols,
           lo, hi, (long long)in_nan, (long long)in_pinf, (long long)in_ninf);
    if (hi > 88.72)
        printf("  note: logits above 88.72 overflow exp() in fp32 unless the row max is subtracted "
               "first\n");
}

/* The kernel's output, staged under --save (put in place after the report): 0, or -1 after
 * the message. */
static int stage_output(ci_state *st, kres *r, const sml_prop_case *c) {
    char err[1200];
    snprintf(r->saved, sizeof r->saved, "%s/%s.%s.npy", st->a->save_dir, r->k->name,
             sml_op_name(c->op));
    if (refuse_clash(st->a, r->saved)) return -1;
    if (sml_mkdir_p(st->a->save_dir) != SML_OK) {
        fprintf(stderr, ME ": cannot create the output directory %s\n", st->a->save_dir);
        return -1;
    }
    if (sml_npy_stage(&st->saves[st->nsaves], r->saved, c->dtype, st->x.ndim, st->x.shape, st->out,
                      err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": cannot write the --save output (nothing written): %s\n", err);
        return -1;
    }
    st->nsaves++;
    return 0;
}

/* k on case c in this process (--in-process): the engine's status, the run's report. */
static sml_status run_here(const sml_kernel *k, const sml_prop_case *c, void *out,
                           sml_prop_run_report *run) {
    sml_handle *h = NULL;
    sml_prop_exec ex;
    memset(run, 0, sizeof *run);
    sml_status s = sml_prop_exec_init(&ex, k->device);
    if (s == SML_OK) s = sml_handle_create(&h);
    if (s == SML_OK) s = sml_prop_exec_run(&ex, k, h, c, 1, out, run);
    sml_prop_exec_free(&ex);
    sml_handle_destroy(h);
    return s;
}

/* k on case c in a worker process of its own, as the suite runs it: the run's report, and in
 * ended[] the worker's end after its answer (which voids the answer: it may not be the
 * kernel's whole work). */
static sml_status run_isolated(const sml_kernel *k, const sml_prop_case *c, double case_timeout,
                               void *out, sml_prop_run_report *run, char *ended, size_t n) {
    memset(run, 0, sizeof *run);
    sml_worker_pool *pool = sml_worker_pool_new(case_timeout, 1, -1, NULL);
    if (!pool) return SML_ERR_OUT_OF_MEMORY;
    sml_prop_runner rn = sml_worker_runner(pool, 0);
    sml_prop_launcher l = {0};
    sml_status s = rn.open(rn.ctx, k, 0, &l);
    if (s == SML_OK) {
        sml_prop_exec ex;
        sml_prop_exec_init_remote(&ex, k->device, l);
        ex.phase = SML_PROP_PHASE_INPUT; /* the words of a death: "SIGSEGV on the input" */
        ex.index = -1;
        s = sml_prop_exec_run(&ex, k, NULL, c, 1, out, run);
        sml_prop_run_report ping;
        if (s == SML_OK && !run->ended && sml_prop_exec_ping(&ex, &ping) == SML_OK && ping.ended)
            snprintf(ended, n, "%.250s", ping.where);
        sml_prop_exec_free(&ex);
        rn.close(rn.ctx, &l);
    }
    char cause[256] = "";
    if (sml_worker_pool_finish(pool, k, cause, sizeof cause) && !ended[0] && !run->ended)
        snprintf(ended, n, "%s", cause);
    return s;
}

/* One kernel on the case: its verdict into r. 0, or -1 when the run must stop. */
static int run_kernel(ci_state *st, kres *r, const sml_prop_case *c) {
    const sml_kernel *k = r->k;
    int tty = isatty(fileno(stderr));
    if (tty) {
        fprintf(stderr, "\r\033[K" ME ": running %s %s ...", k->name, sml_op_name(c->op));
        fflush(stderr);
    }
    sml_prop_run_report run;
    char ended[256] = "";
    sml_status s = st->a->isolated
                       ? run_isolated(k, c, st->a->case_timeout, st->out, &run, ended, sizeof ended)
                       : run_here(k, c, st->out, &run);
    if (tty) fprintf(stderr, "\r\033[K");
    if (s == SML_OK && (run.ended || ended[0])) {
        if (run.ended == SML_PROP_ENDED_NOT_RUN) { /* no worker could run it: no verdict */
            snprintf(r->why, sizeof r->why, "%.300s", run.where);
            st->unchecked++;
            return 0;
        }
        r->verdict = "FAIL"; /* it died, hung or answered out of turn: nothing to judge */
        snprintf(r->why, sizeof r->why, "%.300s", run.ended ? run.where : ended);
        st->broken = 1;
        return 0;
    }
    if (s == SML_ERR_OUT_OF_MEMORY || (s == SML_OK && run.status == SML_ERR_OUT_OF_MEMORY)) {
        /* A resource failure is no verdict on the kernel. */
        snprintf(r->why, sizeof r->why, "out of memory: not checked, no verdict on the kernel");
        st->oom = 1;
        st->unchecked++;
        return 0;
    }
    if (s != SML_OK || run.status != SML_OK) {
        r->verdict = "ERROR";
        snprintf(r->why, sizeof r->why, "%.300s", s != SML_OK ? sml_strerror(s) : run.where);
        st->broken = 1;
        return 0;
    }
    st->judged++;
    r->judged = 1;
    int64_t n = c->rows * c->cols;
    sml_check_against_worst(c->op, c->dtype, c->rows, c->cols, c->cols, c->x, c->dy, st->want,
                            st->out, &r->rep, r->worst, SML_CHECK_SHOW_WORST, &r->nworst);
    count_special(c->dtype, st->out, n, &r->out_nan, &r->out_pinf, &r->out_ninf);
    row_sums(c->op, c->dtype, st->out, st->want, c->rows, c->cols, r);
    int ok = r->rep.pass && !run.canary_bad && !run.input_modified;
    r->verdict = ok ? "PASS" : "FAIL";
    if (run.canary_bad || run.input_modified) snprintf(r->why, sizeof r->why, "%.300s", run.where);
    if (!ok) st->broken = 1;
    return st->a->save_dir ? stage_output(st, r, c) : 0;
}

/* The case of one op: its inputs and the reference. 0, or -1 after the message. */
static int make_case(ci_state *st, sml_prop_case *c) {
    if (sml_prop_case_alloc(c) != SML_OK) {
        fprintf(stderr,
                ME
                ": out of memory for the %s case (a resource failure, not a verdict on a kernel)\n",
                sml_op_name(c->op));
        st->oom = 1;
        return -1;
    }
    if (sml_op_is_backward(c->op)) {
        /* y is what the forward op gives for these logits, rounded to the dtype. */
        memcpy(c->logits, st->x.data, st->x.bytes);
        memcpy(c->dy, st->dy.data, st->dy.bytes);
        if (sml_prop_case_derive_y(c) != SML_OK) {
            fprintf(stderr, ME ": the reference failed\n");
            return -1;
        }
    } else {
        memcpy(c->x, st->x.data, st->x.bytes);
    }
    if (sml_ref_run(c->op, c->dtype, c->rows, c->cols, c->cols, c->x, c->dy, st->want) != SML_OK) {
        fprintf(stderr, ME ": the reference failed\n");
        return -1;
    }
    return 0;
}

/* Every selected kernel on one op: 0, or -1 after the message. */
static int run_op(ci_state *st, sml_op op) {
    sml_prop_case c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.dtype = st->x.dtype;
    c.rows = st->x.rows;
    c.cols = st->x.cols;
    c.ld = st->x.cols;
    int rc = make_case(st, &c);
    for (size_t i = 0; rc == 0 && i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        if (!wanted(st, k) || !(k->ops >> op & 1) || !(k->dtypes >> st->x.dtype & 1)) continue;
        kres *r = &st->res[st->nres++];
        r->k = k;
        r->op = op;
        r->verdict = "SKIP";
        if (c.cols < k->min_cols || (k->max_cols > 0 && c.cols > k->max_cols)) {
            snprintf(r->why, sizeof r->why, "takes %lld..%lld columns", (long long)k->min_cols,
                     (long long)k->max_cols);
            st->unchecked++;
        } else if (!k->launch || (k->device == SML_DEVICE_GPU && !sml_gpu_available())) {
            snprintf(r->why, sizeof r->why, "%s", !k->launch ? "not built" : "no CUDA device");
            st->unchecked++;
        } else {
            rc = run_kernel(st, r, &c);
        }
    }
    sml_prop_case_free(&c);
    return rc;
}

/* ---- report ---- */

/* The table, the --json report, then the --save outputs: the exit code. */
static int report(ci_state *st) {
    char err[1200];
    print_table(&st->x, st->res, st->nres);
    /* A named kernel that could not run, or nothing run at all, is not a pass; nor is a run
     * cut short by memory (exit 3, as replay: a resource failure is no verdict). */
    int nothing = !st->broken && (st->judged == 0 || (st->nonly && st->unchecked) || st->oom);
    int rc = st->broken ? SML_EXIT_BROKEN : nothing ? SML_EXIT_UNCHECKED : SML_EXIT_HOLDS;
    const char *verdict = st->broken ? "FAIL"
                          : st->oom  ? "OUT_OF_MEMORY"
                          : nothing  ? "NOTHING_CHECKED"
                                     : "PASS";
    if (json_report(&st->jf, st->a, &st->x, verdict, st->res, st->nres) != 0)
        return SML_EXIT_UNUSABLE;
    for (size_t i = 0; i < st->nsaves; i++)
        if (sml_npy_stage_place(&st->saves[i], err, sizeof err) != SML_OK) {
            fprintf(stderr, ME ": cannot write the --save output: %s\n", err);
            return SML_EXIT_UNUSABLE;
        }
    if (st->broken)
        printf("\nverdict: some kernel breaks the numerics contract on this input (exit %d)\n", rc);
    else if (st->oom)
        printf("\nverdict: NOT CHECKED: out of memory (a resource failure, not a verdict on a "
               "kernel; see above) "
               "(exit %d)\n",
               rc);
    else if (nothing && st->nonly)
        printf("\nverdict: NOTHING CHECKED: a kernel named with --kernel could not run here (see "
               "SKIP above) "
               "(exit %d)\n",
               rc);
    else if (nothing)
        printf("\nverdict: NOTHING CHECKED: no kernel could run here (see SKIP above) (exit %d)\n",
               rc);
    else if (st->unchecked)
        printf("\nverdict: every kernel that ran meets the numerics contract on this input; %d "
               "kernel/op pairs "
               "skipped (see SKIP above)\n",
               st->unchecked);
    else
        printf("\nverdict: every kernel meets the numerics contract on this input\n");
    return rc;
}

static int run_all(ci_state *st) {
    if (st->x.rows == 0 || st->x.cols == 0) {
        char shape[200];
        sml_shape_text(&st->x, shape, sizeof shape);
        if (json_report(&st->jf, st->a, &st->x, "NOTHING_CHECKED", NULL, 0) != 0)
            return SML_EXIT_UNUSABLE;
        printf("%s: empty tensor %s: nothing to check\n", st->a->input, shape);
        printf("\nverdict: NOTHING CHECKED (exit %d)\n", SML_EXIT_UNCHECKED);
        return SML_EXIT_UNCHECKED;
    }
    print_input(st);
    int64_t n = st->x.rows * st->x.cols;
    size_t cap = sml_kernel_count() * SML_OP_COUNT;
    st->res = calloc(cap, sizeof *st->res);
    st->saves = st->a->save_dir ? calloc(cap, sizeof *st->saves) : NULL;
    st->want = malloc((size_t)n * sizeof *st->want);
    st->out = malloc((size_t)n * sml_dtype_size(st->x.dtype));
    if (!st->res || !st->want || !st->out || (st->a->save_dir && !st->saves)) {
        fprintf(stderr, ME ": out of memory (%lld elements of input)\n", (long long)n);
        return SML_EXIT_UNCHECKED;
    }
    for (int op = 0; op < SML_OP_COUNT; op++)
        if ((st->ops >> op & 1) && run_op(st, (sml_op)op) != 0)
            return st->oom ? SML_EXIT_UNCHECKED : SML_EXIT_UNUSABLE;
    return report(st);
}

int sml_check_input(const sml_check_input_args *a) {
    if (a->output) return sml_judge_output(a);
    ci_state st;
    memset(&st, 0, sizeof st);
    st.a = a;
    int rc = prepare(&st);
    struct stat sd;
    const int had_dir = a->save_dir && stat(a->save_dir, &sd) == 0;
    if (rc < 0) rc = run_all(&st);
    if (st.jf.f) sml_out_abort(&st.jf);
    for (size_t i = 0; i < st.nsaves; i++) sml_npy_stage_abort(&st.saves[i]);
    if (a->save_dir && !had_dir && rc != SML_EXIT_HOLDS && rc != SML_EXIT_BROKEN)
        rmdir(a->save_dir); /* if empty */
    free(st.saves);
    free(st.want);
    free(st.out);
    free(st.res);
    sml_npy_free(&st.x);
    sml_npy_free(&st.dy);
    return rc;
}
