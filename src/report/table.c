/* table.c: see table.h. A WRONG kernel's speedups are printed in parentheses: shown, never
 * counted. */
#include "report/table.h"

#include <math.h>
#include <string.h>

void sml_bench_print_header(FILE *f, const sml_bench_run *run) {
    const sml_bench_env *e = &run->env;
    if (e->gpu.present)
        fprintf(f,
                "device: %s, %d SMs, cc %d.%d, clocks SM %d / memory %d MHz (max), L2 %.0f MiB, "
                "driver %d, CUDA runtime %d\n",
                e->gpu.name, e->gpu.sm_count, e->gpu.cc_major, e->gpu.cc_minor, e->gpu.sm_clock_mhz,
                e->gpu.mem_clock_mhz, (double)e->gpu.l2_bytes / 1048576.0, e->gpu.driver_version,
                e->gpu.runtime_version);
    else
        fprintf(f, "device: no GPU; GPU backends are unavailable on this machine\n");
    if (e->has_memcpy)
        fprintf(f,
                "copy bandwidth (this run): cudaMemcpy D2D %.0f MiB = %.0f GB/s (read + write)\n",
                (double)e->memcpy_bytes / 1048576.0, e->memcpy_gbps);
    if (e->has_host_memcpy)
        fprintf(f, "copy bandwidth (this run): host memcpy %.0f MiB = %.1f GB/s (read + write)\n",
                (double)e->host_memcpy_bytes / 1048576.0, e->host_memcpy_gbps);
    /* The GPU's method (launches per sample, the hold kernel, the L2, the copy and limit
     * kernels) only where a GPU kernel was timed: a CPU run names what it did. */
    int gpu = 0;
    for (size_t i = 0; i < run->plan.nkernels; i++)
        gpu |= run->plan.kernels[i]->device == SML_DEVICE_GPU;
    fprintf(f, "method: >= %d samples", run->cfg.stop.min_samples);
    if (gpu)
        fprintf(f, " (GPU: >= %d launches each, %s)", run->cfg.gpu_min_batch,
                run->cfg.gpu_hold ? "queued behind a hold" : "as made");
    fprintf(f, " until IQR/median <= %.1f%% or %.2f s; ", run->cfg.stop.noise * 100,
            run->cfg.stop.max_seconds);
    if (gpu)
        fprintf(f, "L2 %s; ",
                run->cfg.l2_warm ? "warm (same buffers)" : "cold (rotated past 4x L2)");
    fprintf(f, "seed 0x%016llx; host %s, %d threads\n", (unsigned long long)run->cfg.seed, e->host,
            e->threads);
    fprintf(f,
            "columns: GB/s counts forward 2x, backward 3x the tensor bytes; %%copy = of the copy "
            "bandwidth above; ");
    if (gpu)
        fprintf(f,
                "%%copyk = copy kernel time on the same bytes / time; %%limit = time of a kernel "
                "with the op's own reads and write (2 reads + 1 write backward) / time; "
                "samples = count x launches per sample, ! = stopped by the time limit with the "
                "spread above the noise level, ~ = launch holds ran out of time in 3 samples "
                "(each taken again), so the rest was timed as made; ");
    else
        fprintf(f, "%%copyk = host memcpy time on the same bytes / time; %%limit = time of a host "
                   "pass with the op's own reads and write (2 reads + 1 write backward) / time; "
                   "samples = count x calls "
                   "per sample, ! = stopped by the time limit with the spread above the noise "
                   "level; ");
    fprintf(f, "* = added as a baseline; (x) = a WRONG kernel's ratio, never a win\n");
    if (run->notes[0]) fprintf(f, "note: %s\n", run->notes);
}

static void ratio(char *buf, size_t n, double v, int wrong) {
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (wrong)
        snprintf(buf, n, "(%.2fx)", v);
    else
        snprintf(buf, n, "%.2fx", v);
}

static void pct(char *buf, size_t n, double v) {
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.0f%%", v * 100);
}

void sml_bench_print_case(FILE *f, const sml_bench_run *run, size_t ci) {
    const sml_bench_case *c = &run->cases[ci];
    int any = 0;
    for (size_t i = 0; i < run->nresults; i++) any |= run->results[i].case_index == ci;
    if (!any) return;
    fprintf(f, "\n== %s %s %lldx%lld", sml_op_name(c->op), sml_dtype_name(c->dtype),
            (long long)c->rows, (long long)c->cols);
    if (c->requested_rows && c->requested_rows != c->rows)
        fprintf(f, " (shrunk from %lld rows)", (long long)c->requested_rows);
    fprintf(f, ": %.2f MiB moved, class %s, %s, seed 0x%016llx\n",
            (double)c->bytes_moved / 1048576.0, sml_shape_class(c->cols), c->cache,
            (unsigned long long)c->seed);
    fprintf(f, "  %-12s %10s %7s %15s %8s %6s %6s %6s %8s %8s %9s %s\n", "backend", "median ms",
            "spread", "min..max", "GB/s", "%copy", "%copyk", "%limit", "vs cudnn", "vs naive",
            "samples", "check");
    for (size_t i = 0; i < run->nresults; i++) {
        const sml_bench_result *r = &run->results[i];
        if (r->case_index != ci) continue;
        char name[40];
        snprintf(name, sizeof name, "%s%s", r->kernel, r->baseline_only ? "*" : "");
        if (!r->timed) {
            fprintf(f, "  %-12s %10s %7s %15s %8s %6s %6s %6s %8s %8s %9s %s\n", name, "-", "-",
                    "-", "-", "-", "-", "-", "-", "-", "-", sml_bench_verdict_name(r->verdict));
            fprintf(f, "      %s\n", r->check);
            continue;
        }
        int wrong = r->verdict != SML_VERDICT_OK;
        char range[32], a[16], b[16], lim[16], cu[16], nv[16], smp[24];
        double med = r->m.t.median;
        snprintf(range, sizeof range, "-%.1f..+%.1f%%", (med - r->m.t.min) / med * 100,
                 (r->m.t.max - med) / med * 100);
        pct(a, sizeof a, r->frac_memcpy);
        pct(b, sizeof b, r->frac_copy_kernel);
        pct(lim, sizeof lim, r->frac_limit);
        ratio(cu, sizeof cu, r->vs_cudnn, wrong);
        ratio(nv, sizeof nv, r->vs_naive, wrong);
        snprintf(smp, sizeof smp, "%dx%d%s%s", r->m.t.n, r->m.batch,
                 r->m.stop == SML_STOP_CONVERGED ? "" : "!",
                 sml_bench_hold_lost(run, r) ? "~" : "");
        fprintf(f, "  %-12s %10.5f %6.1f%% %15s %8.1f %6s %6s %6s %8s %8s %9s %s\n", name,
                med * 1e3, r->m.t.rel_spread * 100, range, r->gbps, a, b, lim, cu, nv, smp,
                sml_bench_verdict_name(r->verdict));
        if (wrong) fprintf(f, "      %s\n", r->check);
    }
    int host = !strncmp(c->cache, "host", 4);
    if (c->has_copy)
        fprintf(f,
                "  %-12s %10.5f %6.1f%% %15s %8.1f   (%s moving the same bytes, same buffer "
                "rotation)\n",
                host ? "memcpy" : "copy kernel", c->copy.t.median * 1e3, c->copy.t.rel_spread * 100,
                "", c->copy_gbps, host ? "host memcpy" : "16-byte copy kernel");
    if (c->has_limit && c->limit_reads == 2)
        fprintf(f,
                "  %-12s %10.5f %6.1f%% %15s %8.1f   (2 reads + 1 write of the same bytes, same "
                "buffer rotation)\n",
                "limit", c->limit.t.median * 1e3, c->limit.t.rel_spread * 100, "", c->limit_gbps);
}

void sml_bench_print_decisions(FILE *f, const sml_bench_run *run, const sml_ledger *l) {
    (void)run;
    fprintf(f, "\ndecisions (sweep %s):\n", run->plan.sweep);
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        fprintf(f, "  %-12s %-10s %s\n", r->kernel, sml_decision_name(r->decision.status),
                r->reason);
        char sp[96], ac[160];
        sml_ledger_side_by_side(r, sp, sizeof sp, ac, sizeof ac);
        fprintf(f, "  %-12s speedup: %s; accuracy: %s\n", "", sp, ac);
    }
}
