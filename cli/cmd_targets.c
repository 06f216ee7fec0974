/* targets: the bandwidth targets T1-T6 for one kernel of a ledger JSON (src/analysis/targets.c
 * holds the rules; docs/BENCHMARKING.md explains them), as text on stdout and optionally JSON and Markdown. Reads only the ledger,
 * so it runs anywhere, no GPU needed. Exit 0 when every target is met, 1 when one is missed
 * (like a missed gate), 2 on bad usage or input, with nothing written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json_write.h"
#include "analysis/targets.h"
#include "bench/ledger.h"
#include "commands.h"
#include "options.h"
#include "io/out_file.h"
#include "io/path_same.h"

typedef struct opts {
    const char *ledger, *kernel, *json, *md;
} opts;

enum { G_KERNEL, G_JSON, G_MD };

static const sml_opt OPTS[] = {
    {"kernel", "NAME", "the name of a kernel with a record in the ledger",
     "the kernel whose record is evaluated (default auto)", NULL, G_KERNEL},
    {"json", "FILE", "a file name, or - for standard output",
     "also write the report as JSON (softmax-lab-targets/1)", NULL, G_JSON},
    {"md", "FILE", "a file name, or - for standard output", "also write the report as Markdown",
     NULL, G_MD},
};

static void rules(FILE *f) {
    fprintf(f, "\nThe targets, each over the kernel's evidence rows (every op and dtype):\n");
    sml_cli_wrap(f, 0, 2,
                 "  T1  frac_memcpy >= 0.90 on rows moving >= 64 MiB (2^26 bytes)\n"
                 "T2  frac_memcpy >= 0.90 on the long rows 128x1048576 and 1024x131072\n"
                 "T3  vs_cudnn >= 1.20 on every row\n"
                 "T4  vs_best_other >= 1 - the ledger's decision margin on every row\n"
                 "T5  frac_copy_kernel >= 1/1.3 on rows of 128 to 512 columns\n"
                 "T6  the kernel's status is Supported\n"
                 "vs-field        time(fastest framework baseline) / time >= 1.00, >= 64 MiB\n"
                 "at-limit        frac_limit >= 0.97 on rows moving >= 64 MiB\n"
                 "short-vs-field  time(fastest framework baseline) / time >= 1.00, < 64 MiB");
    sml_cli_wrap(f, 0, 0,
                 "A row with no baseline timed on its cell, or no limit in the ledger, is NOT "
                 "MEASURED, and so is a target with such a row or no row: never met. "
                 "docs/BENCHMARKING.md (\"Targets\") has the rules in full.");
}

static void rules_more(FILE *f) {
    sml_cli_wrap(f, 0, 0,
                 "\nThe limit moves the same bytes with the op's own pattern: 1 read + 1 write "
                 "forward, 2 reads + 1 write backward. The framework baselines are the ledger's "
                 "records with \"framework\": true (the bench writes it from the kernel's "
                 "registry line); a softmax-lab-ledger/1 ledger has no such field, and there they "
                 "are the records of torch, triton, triton_online, liger and cudnn. A row that "
                 "passes T3, T4 or a field target while a kernel it is compared with on its cell "
                 "(cudnn; any other; a framework baseline) was timed without the launch hold "
                 "(`held`: 0) is NOT DECIDED, neither met nor missed: that time includes the "
                 "host's launch calls. Its target is then NOT MEASURED at best. A row whose check "
                 "is not ok misses every target it is in.");
}

static const sml_cli_spec SPEC = {
    "targets",
    "LEDGER.json [--kernel NAME] [--json OUT.json] [--md OUT.md]",
    "The bandwidth and speed targets of one kernel of a ledger written by `softmax-lab bench "
    "--json` (or --ledger DIR): met / missed rows, read from the ledger alone (no GPU needed).",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0 every target met, 1 a target missed, 2 bad usage or input, or an output could not "
    "be written (the old file, or none, is left), 3 none missed but one NOT MEASURED or NOT "
    "DECIDED",
    rules,
    rules_more};

const sml_cli_spec *sml_spec_targets(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    (void)why, (void)n;
    opts *a = ctx;
    if (!*v) return -1;
    *(o->id == G_KERNEL ? &a->kernel : o->id == G_JSON ? &a->json : &a->md) = v;
    return 0;
}

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, opts *o) {
    *o = (opts){NULL, "auto", NULL, NULL};
    int npos;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, o, &o->ledger, 1, &npos, "one ledger");
    if (rc >= 0) return rc;
    if (!o->ledger) {
        fprintf(stderr, "softmax-lab targets: which ledger?\n");
        sml_cli_usage(stderr, &SPEC);
        return 2;
    }
    /* An output over the ledger (or over the other output) would lose what was just read. */
    const sml_path_arg paths[] = {
        {"the ledger", o->ledger, 0}, {"--json", o->json, 1}, {"--md", o->md, 1}};
    char err[1024];
    if (sml_paths_clash(paths, 3, err, sizeof err)) {
        fprintf(stderr, "softmax-lab targets: %s\n", err);
        return 2;
    }
    return -1;
}

/* ---- shared formatting ---- */

static const char *num(char *buf, size_t n, const char *fmt, double v) {
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, v);
    return buf;
}

/* A missed row's cells, formatted once for the text and the Markdown tables. */
typedef struct row_cells {
    char shape[32], gbps[24], memcpy[24], copyk[24], limit[24], cudnn[24], best[24], other[64],
        field[64];
} row_cells;

static void cells(row_cells *c, const sml_tgt_row *x) {
    snprintf(c->shape, sizeof c->shape, "%lldx%lld", (long long)x->rows, (long long)x->cols);
    num(c->gbps, sizeof c->gbps, "%.1f", x->gbps);
    num(c->memcpy, sizeof c->memcpy, "%.1f%%", x->frac_memcpy * 100);
    num(c->copyk, sizeof c->copyk, "%.1f%%", x->frac_copy_kernel * 100);
    num(c->limit, sizeof c->limit, "%.1f%%", x->frac_limit * 100);
    num(c->cudnn, sizeof c->cudnn, "%.3fx", x->vs_cudnn);
    num(c->best, sizeof c->best, "%.3fx", x->vs_best_other);
    snprintf(c->other, sizeof c->other, "%s%s", x->best_other,
             sml_tgt_own_kernel(x) ? ", which auto ran" : "");
    if (x->field[0])
        snprintf(c->field, sizeof c->field, "%.3fx %s", x->vs_field, x->field);
    else
        snprintf(c->field, sizeof c->field, "-");
}

/* w: the width of the counts, so the text summary lines up (0 in Markdown). */
static void met_words(char *buf, size_t n, const sml_tgt_report *r, int id, int w) {
    const sml_tgt_result *t = &r->t[id];
    if (t->state == SML_TGT_NOT_MEASURED && !t->counted && !t->nundecided) {
        char none[128] = "no record with \"framework\": true";
        if (r->version == 1) { /* a version 1 ledger's baselines go by name */
            memcpy(none, "no ", 4);
            sml_ledger_v1_framework_list(" or ", none + 3, sizeof none - 3);
            strcat(none, " record");
        }
        snprintf(buf, n, "NOT MEASURED (%s)",
                 !t->not_measured         ? "no row in it"
                 : id == SML_TGT_AT_LIMIT ? "no traffic-matched limit in the ledger"
                 : r->field[0]            ? "no framework baseline timed on these rows"
                                          : strcat(none, " in the ledger"));
        return;
    }
    int used = id == SML_TGT_STATE ? snprintf(buf, n, "%s (%s)", t->met ? "yes" : "no", r->status)
                                   : snprintf(buf, n, "%*d of %*d rows", w, t->met, w, t->counted);
    if (id == SML_TGT_BEST && used > 0 && (size_t)used < n) {
        if (t->own_kernel)
            used += snprintf(buf + used, n - (size_t)used,
                             " (%d at >= 1.00x; %d miss%s against the kernel auto ran)",
                             t->at_parity, t->own_kernel, t->own_kernel == 1 ? "" : "es");
        else
            used += snprintf(buf + used, n - (size_t)used, " (%d at >= 1.00x)", t->at_parity);
    }
    if (t->not_measured && used > 0 && (size_t)used < n)
        used += snprintf(buf + used, n - (size_t)used, "; %d NOT MEASURED (%s)", t->not_measured,
                         id == SML_TGT_AT_LIMIT ? "no limit" : "no framework baseline timed there");
    if (t->nundecided && used > 0 && (size_t)used < n)
        snprintf(buf + used, n - (size_t)used,
                 "; %zu NOT DECIDED (compared with a kernel timed unheld)", t->nundecided);
}

/* ---- text ---- */

static void text_header(FILE *f, const sml_tgt_report *r, const char *path) {
    char mc[32];
    fprintf(f, "softmax-lab targets: kernel %s\n", r->kernel);
    fprintf(f, "  ledger  %s\n", path);
    fprintf(f, "  sweep   %s%s%s%s\n", r->sweep, r->ops[0] ? " (" : "", r->ops,
            r->ops[0] ? ")" : "");
    fprintf(f, "  GPU     %s, memcpy %s GB/s, decision margin %.0f%%\n", r->gpu,
            num(mc, sizeof mc, "%.0f", r->memcpy_gbps), r->margin * 100);
    fprintf(f, "  plans   %s\n", r->auto_plans);
    fprintf(f, "  status  %s\n", r->status);
    fprintf(f, "  field   %s\n",
            r->field[0] ? r->field : "none (no framework baseline in the ledger)");
    if (r->cases_planned > 0)
        fprintf(f,
                "  PARTIAL %lld of %lld cases measured (time limit): every count is of the rows "
                "present\n",
                (long long)r->cases_measured, (long long)r->cases_planned);
    fprintf(f, "\n");
}

static void text_misses(FILE *f, const sml_tgt_report *r, int id) {
    const sml_tgt_result *t = &r->t[id];
    fprintf(f, "\n%s misses: %zu of %d rows, furthest first\n  rule: %s\n", t->name, t->nmiss,
            t->counted, t->rule);
    fprintf(f, "  %-15s %-5s %-11s %7s %7s %7s %7s %8s  %-24s %s\n", "op", "dtype", "shape", "GB/s",
            "memcpy", "copy-k", "limit", "vs cuDNN", "vs field", "vs best other");
    for (size_t k = 0; k < t->nmiss; k++) {
        const sml_tgt_row *x = &r->rows[t->miss[k]];
        row_cells c;
        cells(&c, x);
        const int ok = sml_tgt_row_ok(x);
        fprintf(f, "  %-15s %-5s %-11s %7s %7s %7s %7s %8s  %-24s %s (%s)%s%s\n", x->op, x->dtype,
                c.shape, c.gbps, c.memcpy, c.copyk, c.limit, c.cudnn, c.field, c.best, c.other,
                ok ? "" : "  check ", ok ? "" : x->check);
    }
}

/* The rows a target could not decide (sml_tgt_undecided), with the kernels timed unheld on each. */
static const char UNDECIDED_WHY[] = "At or past the threshold, but a kernel it is compared with on "
                                    "the cell was timed without the launch "
                                    "hold (`held`: 0 in the ledger): that time includes the host's "
                                    "launch calls, so the pass is not shown";

static void text_undecided(FILE *f, const sml_tgt_report *r, int id) {
    const sml_tgt_result *t = &r->t[id];
    fprintf(f, "\n%s not decided: %zu row%s\n  %s\n", t->name, t->nundecided,
            t->nundecided == 1 ? "" : "s", UNDECIDED_WHY);
    for (size_t k = 0; k < t->nundecided; k++) {
        const sml_tgt_row *x = &r->rows[t->undecided[k]];
        row_cells c;
        cells(&c, x);
        fprintf(f, "  %-15s %-5s %-11s %7s  vs field %-24s vs best other %s (%s)  unheld: %s\n",
                x->op, x->dtype, c.shape, c.gbps, c.field, c.best, c.other,
                sml_tgt_unheld_for((sml_target_id)id, x));
    }
}

static void print_text(FILE *f, const sml_tgt_report *r, const char *path) {
    text_header(f, r, path);
    for (int id = 0; id < SML_TGT_COUNT; id++) {
        char label[128], met[192];
        snprintf(label, sizeof label, "%s:", r->t[id].title);
        met_words(met, sizeof met, r, id, 3);
        /* The met column lines up whatever the target's name. */
        fprintf(f, "%s %-*s %s\n", r->t[id].name, (int)(72 - strlen(r->t[id].name)), label, met);
    }
    for (int id = 0; id < SML_TGT_COUNT; id++) {
        if (r->t[id].nmiss) text_misses(f, r, id);
        if (r->t[id].nundecided) text_undecided(f, r, id);
    }
}

/* ---- JSON ---- */

static void json_row(sml_jw *w, const sml_tgt_row *x, double value) {
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "op", x->op);
    sml_jw_kstr(w, "dtype", x->dtype);
    sml_jw_kint(w, "rows", x->rows);
    sml_jw_kint(w, "cols", x->cols);
    sml_jw_kint(w, "bytes_moved", x->bytes);
    sml_jw_kstr(w, "check", x->check);
    sml_jw_knum(w, "value", value);
    sml_jw_knum(w, "gbps", x->gbps);
    sml_jw_knum(w, "frac_memcpy", x->frac_memcpy);
    sml_jw_knum(w, "frac_copy_kernel", x->frac_copy_kernel);
    sml_jw_knum(w, "vs_cudnn", x->vs_cudnn);
    sml_jw_knum(w, "vs_best_other", x->vs_best_other);
    sml_jw_kstr(w, "best_other", strcmp(x->best_other, "-") ? x->best_other : NULL);
    sml_jw_knum(w, "frac_limit", x->frac_limit);
    sml_jw_knum(w, "vs_field", x->vs_field);
    sml_jw_kstr(w, "field", x->field[0] ? x->field : NULL);
    sml_jw_kstr(w, "auto_path", x->auto_path[0] ? x->auto_path : NULL);
    sml_jw_kstr(w, "unheld", x->unheld[0] ? x->unheld : NULL);
    sml_jw_end(w);
}

static void json_target(sml_jw *w, const sml_tgt_report *r, int id) {
    const sml_tgt_result *t = &r->t[id];
    sml_jw_object(w);
    sml_jw_kstr(w, "name", t->name);
    sml_jw_kstr(w, "title", t->title);
    sml_jw_kstr(w, "rule", t->rule);
    sml_jw_knum(w, "threshold", t->threshold);
    sml_jw_kint(w, "rows_counted", t->counted);
    sml_jw_kint(w, "rows_met", t->met);
    if (id == SML_TGT_BEST) {
        sml_jw_kint(w, "rows_at_or_above_1", t->at_parity);
        sml_jw_kint(w, "misses_against_own_kernel", t->own_kernel);
    }
    if (id == SML_TGT_STATE) sml_jw_kstr(w, "status", r->status);
    sml_jw_kint(w, "rows_not_measured", t->not_measured);
    sml_jw_kint(w, "rows_not_decided", (int64_t)t->nundecided);
    sml_jw_kstr(w, "state", sml_tgt_state_name(t->state));
    sml_jw_kbool(w, "met", t->state == SML_TGT_MET);
    sml_jw_key(w, "missing");
    sml_jw_array(w);
    for (size_t k = 0; k < t->nmiss; k++)
        json_row(w, &r->rows[t->miss[k]], sml_tgt_value((sml_target_id)id, &r->rows[t->miss[k]]));
    sml_jw_end(w);
    sml_jw_key(w, "not_decided");
    sml_jw_array(w);
    for (size_t k = 0; k < t->nundecided; k++)
        json_row(w, &r->rows[t->undecided[k]],
                 sml_tgt_value((sml_target_id)id, &r->rows[t->undecided[k]]));
    sml_jw_end(w);
    sml_jw_end(w);
}

static int write_json(FILE *f, const sml_tgt_report *r, const char *path) {
    sml_jw w;
    sml_jw_init(&w, f);
    sml_jw_object(&w);
    sml_jw_kstr(&w, "schema", SML_TARGETS_SCHEMA);
    sml_jw_kstr(&w, "version", SML_VERSION);
    sml_jw_kstr(&w, "ledger", path);
    sml_jw_kstr(&w, "sweep", r->sweep);
    sml_jw_kstr(&w, "ops", r->ops);
    sml_jw_kstr(&w, "gpu", r->gpu);
    sml_jw_kstr(&w, "auto_plans", r->auto_plans);
    sml_jw_knum(&w, "memcpy_d2d_gbps", r->memcpy_gbps);
    sml_jw_knum(&w, "decision_margin", r->margin);
    sml_jw_kstr(&w, "kernel", r->kernel);
    sml_jw_kstr(&w, "status", r->status);
    sml_jw_kstr(&w, "field", r->field);
    sml_jw_key(&w, "partial");
    if (r->cases_planned > 0) {
        sml_jw_object_inline(&w);
        sml_jw_kint(&w, "cases_measured", r->cases_measured);
        sml_jw_kint(&w, "cases_planned", r->cases_planned);
        sml_jw_end(&w);
    } else {
        sml_jw_null(&w);
    }
    sml_jw_kbool(&w, "all_met", sml_tgt_all_met(r));
    sml_jw_key(&w, "targets");
    sml_jw_array(&w);
    for (int id = 0; id < SML_TGT_COUNT; id++) json_target(&w, r, id);
    sml_jw_end(&w);
    sml_jw_end(&w);
    return sml_jw_finish(&w);
}

/* ---- Markdown ---- */

static void md_misses(FILE *f, const sml_tgt_report *r, int id) {
    const sml_tgt_result *t = &r->t[id];
    fprintf(f, "\n## %s misses: %zu of %d rows\n\n`%s`; furthest first.\n\n", t->name, t->nmiss,
            t->counted, t->rule);
    fprintf(f, "| op | dtype | shape | GB/s | %% of memcpy | %% of copy kernel | %% of limit | vs "
               "cuDNN | vs field | "
               "vs best other | check |\n");
    fprintf(f, "|---|---|---|---:|---:|---:|---:|---:|---|---|---|\n");
    for (size_t k = 0; k < t->nmiss; k++) {
        const sml_tgt_row *x = &r->rows[t->miss[k]];
        row_cells c;
        cells(&c, x);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n", x->op,
                x->dtype, c.shape, c.gbps, c.memcpy, c.copyk, c.limit, c.cudnn, c.field, c.best,
                c.other, x->check);
    }
}

static void md_undecided(FILE *f, const sml_tgt_report *r, int id) {
    const sml_tgt_result *t = &r->t[id];
    fprintf(f, "\n## %s not decided: %zu row%s\n\n%s.\n\n", t->name, t->nundecided,
            t->nundecided == 1 ? "" : "s", UNDECIDED_WHY);
    fprintf(f,
            "| op | dtype | shape | GB/s | vs cuDNN | vs field | vs best other | timed unheld |\n"
            "|---|---|---|---:|---:|---|---|---|\n");
    for (size_t k = 0; k < t->nundecided; k++) {
        const sml_tgt_row *x = &r->rows[t->undecided[k]];
        row_cells c;
        cells(&c, x);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n", x->op, x->dtype, c.shape,
                c.gbps, c.cudnn, c.field, c.best, c.other,
                sml_tgt_unheld_for((sml_target_id)id, x));
    }
}

static int write_md(FILE *f, const sml_tgt_report *r, const char *path) {
    char mc[32];
    fprintf(f, "# Targets: `%s`\n\n", r->kernel);
    fprintf(
        f,
        "Ledger `%s`; sweep %s%s%s%s; %s, memcpy %s GB/s; decision margin %.0f%%; status %s.\n\n",
        path, r->sweep, r->ops[0] ? " (" : "", r->ops, r->ops[0] ? ")" : "", r->gpu,
        num(mc, sizeof mc, "%.0f", r->memcpy_gbps), r->margin * 100, r->status);
    fprintf(f, "`auto`'s plans in that run: %s.\n\n", r->auto_plans);
    fprintf(f, "Framework baselines in the ledger: %s.\n\n", r->field[0] ? r->field : "none");
    if (r->cases_planned > 0)
        fprintf(f,
                "**Partial ledger:** %lld of %lld cases measured (time limit); every count below "
                "is of the "
                "rows present.\n\n",
                (long long)r->cases_measured, (long long)r->cases_planned);
    fprintf(f, "| target | what | rule | met |\n|---|---|---|---|\n");
    for (int id = 0; id < SML_TGT_COUNT; id++) {
        char met[192];
        met_words(met, sizeof met, r, id, 0);
        fprintf(f, "| %s | %s | `%s` | %s |\n", r->t[id].name, r->t[id].title, r->t[id].rule, met);
    }
    fprintf(f, "\nA row whose check is not ok misses every target it is in.\n");
    for (int id = 0; id < SML_TGT_COUNT; id++) {
        if (r->t[id].nmiss) md_misses(f, r, id);
        if (r->t[id].nundecided) md_undecided(f, r, id);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- output files ---- */

typedef int (*render_fn)(FILE *, const sml_tgt_report *, const char *);

/* Both reports are written to their temporaries first and renamed only when both are whole
 * (util/out_file.h): a failure leaves the old files, or none. */
static int write_outputs(const opts *o, const sml_tgt_report *r) {
    const render_fn fns[2] = {write_json, write_md};
    const char *want[2] = {o->json, o->md};
    sml_out_file out[2];
    int open[2] = {0, 0}, ok = 1;
    char err[1200];
    for (int i = 0; i < 2 && ok; i++) {
        if (!want[i]) continue;
        ok = sml_out_open(&out[i], want[i], err, sizeof err) == SML_OK;
        if (!ok) break;
        open[i] = 1;
        if (fns[i](out[i].f, r, o->ledger) != 0 || fflush(out[i].f) != 0) {
            snprintf(err, sizeof err, "%s: write failed: %s", want[i], strerror(errno));
            ok = 0;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!open[i]) continue;
        if (!ok)
            sml_out_abort(&out[i]);
        else
            ok = sml_out_commit(&out[i], err, sizeof err) == SML_OK;
    }
    if (!ok) fprintf(stderr, "softmax-lab targets: %s\n", err);
    return ok;
}

int sml_cmd_targets(int argc, char **argv) {
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    sml_tgt_report r;
    char err[512];
    if (sml_targets_file(o.ledger, o.kernel, &r, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab targets: %s\n", err);
        return 2;
    }
    if (!write_outputs(&o, &r)) {
        sml_tgt_report_free(&r);
        return 2;
    }
    print_text(stdout, &r, o.ledger);
    if (o.json) printf("\nwrote %s\n", o.json);
    if (o.md) printf("%swrote %s\n", o.json ? "" : "\n", o.md);
    rc = sml_tgt_any_missed(&r) ? 1 : sml_tgt_all_met(&r) ? 0 : 3;
    sml_tgt_report_free(&r);
    return rc;
}
