/* ledger_md.c: the ledger as Markdown (report/ledger_write.h), for people. */
#include "report/ledger_write.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void md_num(FILE *f, double v, const char *fmt) {
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("-", f);
}

/* GB/s with three significant figures at CPU scale, whole numbers at GPU scale. */
static void md_gbps(FILE *f, double v) {
    md_num(f, v, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f");
}

static void md_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

/* The run: ops, host, GPU, copy bandwidths, the timing method, notes, a partial run. */
static void md_header(const sml_bench_run *run, FILE *f) {
    const sml_bench_env *e = &run->env;
    fprintf(f, "# softmax-lab decision ledger: sweep `%s`\n\n", run->plan.sweep);
    fprintf(f, "Ops:");
    for (int o = 0; o < SML_OP_COUNT; o++)
        if (run->plan.ops & (1u << o)) fprintf(f, " %s", sml_op_name((sml_op)o));
    fprintf(f, ". Run at %s on host `%s` (%d threads), softmax-lab %s, %.1f s.\n\n", e->time_utc,
            e->host, e->threads, e->version, run->seconds);
    if (e->gpu.present) {
        fprintf(f,
                "GPU: %s, %d SMs, cc %d.%d, SM clock %d MHz, memory clock %d MHz (maximum clocks "
                "as the runtime reports them), L2 %.0f MiB, driver %d, CUDA runtime %d.\n\n",
                e->gpu.name, e->gpu.sm_count, e->gpu.cc_major, e->gpu.cc_minor, e->gpu.sm_clock_mhz,
                e->gpu.mem_clock_mhz, (double)e->gpu.l2_bytes / 1048576.0, e->gpu.driver_version,
                e->gpu.runtime_version);
        fprintf(f, "`auto`'s plans: %s.\n\n",
                e->auto_plans[0] ? e->auto_plans : "its rules (no plan table for this GPU)");
    } else {
        fprintf(f, "GPU: none on this machine.\n\n");
    }
    if (e->has_memcpy)
        fprintf(f,
                "Device copy bandwidth, same run: cudaMemcpy D2D of %.0f MiB: **%.0f GB/s** "
                "(read + written; spread %.1f%%).\n\n",
                (double)e->memcpy_bytes / 1048576.0, e->memcpy_gbps, e->memcpy.t.rel_spread * 100);
    if (e->has_host_memcpy)
        fprintf(f, "Host copy bandwidth, same run: memcpy of %.0f MiB: **%.1f GB/s**.\n\n",
                (double)e->host_memcpy_bytes / 1048576.0, e->host_memcpy_gbps);
    fprintf(f,
            "Timing: at least %d samples of at least %d back-to-back GPU launches (%s), until "
            "IQR/median <= %.1f%% or %.2f s per measurement; "
            "L2 %s; seed 0x%016llx; decision margin %.0f%%. Shape classes: short cols <= %d, "
            "long cols >= %d, mid between. Method: docs/BENCHMARKING.md.\n\n",
            run->cfg.stop.min_samples, run->cfg.gpu_min_batch,
            run->cfg.gpu_hold ? "queued behind a hold kernel" : "timed as made",
            run->cfg.stop.noise * 100, run->cfg.stop.max_seconds,
            run->cfg.l2_warm ? "warm (same buffers every call)" : "cold (buffers rotated past L2)",
            (unsigned long long)run->cfg.seed, run->cfg.margin * 100, SML_SHORT_MAX_COLS,
            SML_LONG_MIN_COLS);
    if (run->notes[0]) fprintf(f, "**Notes:** %s\n\n", run->notes);
    if (sml_bench_partial(run)) {
        char part[128];
        fprintf(f,
                "**Partial run:** %s; the cases after those below were not measured, and no kernel "
                "with a claim is called Supported.\n\n",
                sml_bench_partial_text(run, part, sizeof part));
    }
}

/* One line per kernel: its claim, status, speed and accuracy side by side, and why. */
static void md_decisions(const sml_ledger *l, FILE *f) {
    fprintf(f,
            "## Decisions\n\nSpeed and accuracy against the same baseline (the claim's, else "
            "cudnn), side by "
            "side; accuracy by the rule of docs/NUMERICS.md, section 8, on the cases both ran.\n\n"
            "| kernel | device | claim | status | speedup | accuracy | why "
            "|\n|---|---|---|---|---|---|---|\n");
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        fprintf(f, "| %s | %s | ", r->kernel, r->device == SML_DEVICE_GPU ? "gpu" : "cpu");
        if (r->claim.baseline)
            fprintf(f, ">= %.2fx %s (%s)", r->claim.min_speedup, r->claim.baseline,
                    r->claim.shapes);
        else
            fprintf(f, "none");
        fprintf(f, " | **%s** | ", sml_decision_name(r->decision.status));
        char sp[96], ac[160];
        sml_ledger_side_by_side(r, sp, sizeof sp, ac, sizeof ac);
        fprintf(f, "%s | %s | ", sp, ac);
        md_escape(f, r->reason);
        fprintf(f, " |\n");
    }
}

/* Row i of a kernel's table: one case's timing against every reference, its outcome, and the
 * check's message under it when the check was not ok. */
static void md_row(const sml_bench_run *run, const sml_ledger_record *r, size_t i, FILE *f) {
    const sml_bench_result *x = &run->results[r->result[i]];
    const sml_bench_case *c = &run->cases[x->case_index];
    char label[64];
    sml_case_label(x->op, x->dtype, x->rows, x->cols, label, sizeof label);
    fprintf(f, "| %s | %s | %s | ", label, sml_shape_class(x->cols),
            sml_bench_verdict_name(x->verdict));
    if (x->timed) {
        md_num(f, x->m.t.median * 1e3, "%.4f");
        fputs(" | ", f);
        md_num(f, x->m.t.rel_spread * 100, "%.1f%%");
        fputs(" | ", f);
        md_gbps(f, x->gbps);
        fputs(" | ", f);
        md_num(f, x->frac_memcpy * 100, "%.0f%%");
        fputs(" | ", f);
        md_num(f, x->frac_copy_kernel * 100, "%.0f%%");
        fputs(" | ", f);
        md_num(f, x->frac_limit * 100, "%.0f%%");
        fputs(" | ", f);
        md_num(f, x->vs_cudnn, "%.2fx");
        fputs(" | ", f);
        md_num(f, x->vs_naive, "%.2fx");
        fputs(" | ", f);
        md_num(f, r->vs_baseline[i], "%.2fx");
        fputs(" | ", f);
        md_num(f, x->vs_best_other, "%.2fx");
        fprintf(f, "%s%s", x->best_other[0] ? " " : "", x->best_other);
    } else {
        fputs("- | - | - | - | - | - | - | - | - | -", f);
    }
    fprintf(f, " | %s | %s | %d x%d%s |", sml_row_outcome_name(r->outcome[i]), c->cache, x->m.t.n,
            x->m.batch, sml_bench_hold_lost(run, x) ? " (unheld)" : "");
    fputc('\n', f);
    if (x->verdict != SML_VERDICT_OK) {
        fputs("| | | ", f);
        md_escape(f, x->check);
        fputs(" | | | | | | | | | | | | | |", f);
        fputc('\n', f);
    }
}

/* A kernel's section: its file, the reason for its status, and one row per case. */
static void md_kernel(const sml_bench_run *run, const sml_ledger_record *r, FILE *f) {
    fprintf(f, "\n## %s: %s\n\n", r->kernel, sml_decision_name(r->decision.status));
    fprintf(f, "`%s`. ", r->file);
    md_escape(f, r->reason);
    fprintf(f, "\n\n| case | class | check | ms | spread | GB/s | of memcpy | of copy kernel | "
               "of limit | vs cudnn | vs naive | vs claim baseline | vs best other | outcome | "
               "cache | samples |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->n; i++) md_row(run, r, i, f);
}

/* A kernel's accuracy table, per op and dtype, when it has one. */
static void md_accuracy(const sml_ledger_record *r, FILE *f) {
    if (!r->nacc) return;
    fprintf(f,
            "\n### %s: accuracy (err/bound per case: its worst element)\n\n| op | dtype | cases | "
            "judged | "
            "worst | p99 | median | worst ulp | baseline | accuracy vs baseline |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n",
            r->kernel);
    for (size_t i = 0; i < r->nacc; i++) {
        const sml_ledger_accuracy *a = &r->acc[i];
        fprintf(f, "| %s | %s | %lld | %lld | ", sml_op_name(a->op), sml_dtype_name(a->dtype),
                (long long)a->a.cases, (long long)a->a.judged);
        md_num(f, a->a.worst, "%.3g");
        fputs(" | ", f);
        md_num(f, a->a.p99, "%.3g");
        fputs(" | ", f);
        md_num(f, a->a.median, "%.3g");
        fputs(" | ", f);
        md_num(f, a->a.worst_ulps, "%.3g");
        fprintf(f, " | %s | **%s**: ", a->baseline[0] ? a->baseline : "-",
                sml_acc_verdict_name(a->verdict));
        md_escape(f, a->why);
        fputs(" |\n", f);
    }
}

/* The copy and limit references of every case that has them. */
static void md_copies(const sml_bench_run *run, FILE *f) {
    fprintf(f,
            "\n## Copy references (same run, same buffer rotation as the case)\n\n"
            "The limit moves the case's bytes with the op's own pattern: one read and one write "
            "forward (the copy itself), two reads and one write backward.\n\n"
            "| case | bytes moved | cache | copy ms | copy GB/s | limit | limit ms | limit GB/s |\n"
            "|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < run->ncases; i++) {
        const sml_bench_case *c = &run->cases[i];
        if (!c->has_copy && !c->has_limit) continue;
        char label[64];
        sml_case_label(c->op, c->dtype, c->rows, c->cols, label, sizeof label);
        fprintf(f, "| %s | %.1f MiB | %s | ", label, (double)c->bytes_moved / 1048576.0, c->cache);
        md_num(f, c->has_copy ? c->copy.t.median * 1e3 : NAN, "%.4f");
        fputs(" | ", f);
        md_gbps(f, c->has_copy ? c->copy_gbps : NAN);
        fprintf(f, " | %s | ", c->has_limit ? sml_ledger_limit_pattern(c->limit_reads) : "-");
        md_num(f, c->has_limit ? c->limit.t.median * 1e3 : NAN, "%.4f");
        fputs(" | ", f);
        md_gbps(f, c->has_limit ? c->limit_gbps : NAN);
        fputs(" |\n", f);
    }
}

int sml_ledger_write_md(const sml_bench_run *run, const sml_ledger *l, FILE *f) {
    md_header(run, f);
    md_decisions(l, f);
    for (size_t j = 0; j < l->n; j++) md_kernel(run, &l->rec[j], f);
    for (size_t j = 0; j < l->n; j++) md_accuracy(&l->rec[j], f);
    md_copies(run, f);
    return ferror(f) ? -1 : 0;
}
