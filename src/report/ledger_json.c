/* ledger_json.c: the ledger as JSON (report/ledger_write.h), the form `compare`, `targets`
 * and `plot` read back. */
#include "report/ledger_write.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_write.h"
#include "prop/accuracy_json.h"
#include "softmax_lab_plugin.h"

static void json_measurement(sml_jw *w, const char *key, const sml_measurement *m) {
    sml_jw_key(w, key);
    sml_jw_object_inline(w);
    sml_jw_knum(w, "median_ms", m->t.median * 1e3);
    sml_jw_knum(w, "q1_ms", m->t.q1 * 1e3);
    sml_jw_knum(w, "q3_ms", m->t.q3 * 1e3);
    sml_jw_knum(w, "min_ms", m->t.min * 1e3);
    sml_jw_knum(w, "max_ms", m->t.max * 1e3);
    sml_jw_knum(w, "rel_spread", m->t.rel_spread);
    sml_jw_kint(w, "samples", m->t.n);
    sml_jw_kint(w, "batch", m->batch);
    sml_jw_kstr(w, "stop", sml_stop_reason_name(m->stop));
    sml_jw_kint(w, "held", m->held);
    sml_jw_kint(w, "holds_lost", m->holds_lost);
    sml_jw_end(w);
}

static void json_env(sml_jw *w, const sml_bench_run *run) {
    const sml_bench_env *e = &run->env;
    sml_jw_key(w, "environment");
    sml_jw_object(w);
    sml_jw_kstr(w, "time_utc", e->time_utc);
    sml_jw_kstr(w, "host", e->host);
    sml_jw_kint(w, "host_threads", e->threads);
    sml_jw_kstr(w, "softmax_lab_version", e->version);
    sml_jw_key(w, "gpu");
    if (e->gpu.present) {
        sml_jw_object(w);
        sml_jw_kstr(w, "name", e->gpu.name);
        sml_jw_kint(w, "sm_count", e->gpu.sm_count);
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", e->gpu.cc_major, e->gpu.cc_minor);
        sml_jw_kstr(w, "compute_capability", cc);
        sml_jw_kint(w, "sm_clock_mhz", e->gpu.sm_clock_mhz);
        sml_jw_kint(w, "mem_clock_mhz", e->gpu.mem_clock_mhz);
        sml_jw_kint(w, "driver_version", e->gpu.driver_version);
        sml_jw_kint(w, "runtime_version", e->gpu.runtime_version);
        sml_jw_kint(w, "l2_bytes", (int64_t)e->gpu.l2_bytes);
        sml_jw_kint(w, "global_mem_bytes", (int64_t)e->gpu.global_mem_bytes);
        sml_jw_end(w);
        sml_jw_kstr(w, "auto_plans", e->auto_plans[0] ? e->auto_plans : "rules");
    } else {
        sml_jw_null(w);
    }
    sml_jw_key(w, "copy");
    sml_jw_object(w);
    if (e->has_memcpy) {
        sml_jw_knum(w, "memcpy_d2d_gbps", e->memcpy_gbps);
        sml_jw_kint(w, "memcpy_d2d_bytes", (int64_t)e->memcpy_bytes);
        json_measurement(w, "memcpy_d2d", &e->memcpy);
    }
    if (e->has_host_memcpy) {
        sml_jw_knum(w, "host_memcpy_gbps", e->host_memcpy_gbps);
        sml_jw_kint(w, "host_memcpy_bytes", (int64_t)e->host_memcpy_bytes);
        json_measurement(w, "host_memcpy", &e->host_memcpy);
    }
    sml_jw_end(w);
    sml_jw_end(w);
}

static void json_config(sml_jw *w, const sml_bench_run *run) {
    const sml_bench_config *c = &run->cfg;
    sml_jw_key(w, "config");
    sml_jw_object(w);
    sml_jw_kint(w, "min_samples", c->stop.min_samples);
    sml_jw_kint(w, "max_samples", c->stop.max_samples);
    sml_jw_knum(w, "noise", c->stop.noise);
    sml_jw_knum(w, "max_seconds", c->stop.max_seconds);
    sml_jw_knum(w, "gpu_sample_seconds", c->gpu_sample_s);
    sml_jw_kint(w, "gpu_min_batch", c->gpu_min_batch);
    sml_jw_kstr(w, "gpu_launches",
                c->gpu_hold ? "queued behind a hold kernel, then released" : "as made");
    sml_jw_knum(w, "cpu_sample_seconds", c->cpu_sample_s);
    sml_jw_kstr(w, "l2", c->l2_warm ? "warm" : "cold");
    sml_jw_knum(w, "l2_multiple", c->l2_multiple);
    char seed[24];
    snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)c->seed);
    sml_jw_kstr(w, "seed", seed);
    sml_jw_knum(w, "decision_margin", c->margin);
    sml_jw_knum(w, "time_limit_s", c->time_limit_s > 0 ? c->time_limit_s : NAN);
    sml_jw_kstr(w, "shape_classes",
                "short: cols <= 1024; mid: 1024 < cols < 131072; long: cols >= 131072");
    sml_jw_end(w);
}

static void json_evidence(sml_jw *w, const sml_bench_run *run, const sml_ledger_record *r,
                          size_t i) {
    const sml_bench_result *x = &run->results[r->result[i]];
    const sml_bench_case *c = &run->cases[x->case_index];
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "op", sml_op_name(x->op));
    sml_jw_kstr(w, "dtype", sml_dtype_name(x->dtype));
    sml_jw_kint(w, "rows", x->rows);
    sml_jw_kint(w, "cols", x->cols);
    if (c->requested_rows && c->requested_rows != c->rows)
        sml_jw_kint(w, "requested_rows", c->requested_rows);
    sml_jw_kstr(w, "class", sml_shape_class(x->cols));
    sml_jw_kstr(w, "check", sml_bench_verdict_name(x->verdict));
    sml_jw_kint(w, "case", (int64_t)c->plan_index);
    sml_jw_kstr(w, "check_detail", x->check);
    sml_jw_knum(w, "worst_ratio", x->worst_ratio);
    sml_jw_kint(w, "checked_rows", c->checked_rows);
    sml_jw_knum(w, "worst_ulps", x->worst_ulps);
    sml_jw_kstr(w, "outcome", sml_row_outcome_name(r->outcome[i]));
    if (x->auto_path[0]) sml_jw_kstr(w, "auto_path", x->auto_path);
    if (x->timed) {
        sml_jw_knum(w, "median_ms", x->m.t.median * 1e3);
        sml_jw_knum(w, "q1_ms", x->m.t.q1 * 1e3);
        sml_jw_knum(w, "q3_ms", x->m.t.q3 * 1e3);
        sml_jw_knum(w, "min_ms", x->m.t.min * 1e3);
        sml_jw_knum(w, "max_ms", x->m.t.max * 1e3);
        sml_jw_knum(w, "rel_spread", x->m.t.rel_spread);
        sml_jw_kint(w, "samples", x->m.t.n);
        sml_jw_kint(w, "batch", x->m.batch);
        sml_jw_kstr(w, "stop", sml_stop_reason_name(x->m.stop));
        sml_jw_kint(w, "held", x->m.held);
        sml_jw_kint(w, "holds_lost", x->m.holds_lost);
        sml_jw_knum(w, "gbps", x->gbps);
        sml_jw_knum(w, "frac_memcpy", x->frac_memcpy);
        sml_jw_knum(w, "frac_copy_kernel", x->frac_copy_kernel);
        sml_jw_knum(w, "frac_limit", x->frac_limit);
        sml_jw_knum(w, "vs_cudnn", x->vs_cudnn);
        sml_jw_knum(w, "vs_naive", x->vs_naive);
        sml_jw_knum(w, "vs_baseline", r->vs_baseline[i]);
        if (r->claim.baseline) {
            const sml_bench_result *b = sml_bench_find(run, x->case_index, r->claim.baseline);
            sml_jw_kstr(w, "baseline_check", b ? sml_bench_verdict_name(b->verdict) : NULL);
        }
        sml_jw_knum(w, "vs_best_other", x->vs_best_other);
        sml_jw_kstr(w, "best_other", x->best_other[0] ? x->best_other : NULL);
    }
    sml_jw_kint(w, "bytes_moved", (int64_t)c->bytes_moved);
    sml_jw_kstr(w, "cache", c->cache);
    sml_jw_kint(w, "buffer_sets", c->nsets);
    if (c->has_copy) {
        sml_jw_knum(w, "copy_kernel_ms", c->copy.t.median * 1e3);
        sml_jw_knum(w, "copy_kernel_gbps", c->copy_gbps);
    }
    if (c->has_limit) {
        sml_jw_kstr(w, "limit_pattern", sml_ledger_limit_pattern(c->limit_reads));
        sml_jw_knum(w, "limit_ms", c->limit.t.median * 1e3);
        sml_jw_knum(w, "limit_rel_spread", c->limit.t.rel_spread);
        sml_jw_knum(w, "limit_gbps", c->limit_gbps);
    }
    char seed[24];
    snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)c->seed);
    sml_jw_kstr(w, "seed", seed);
    sml_jw_end(w);
}

/* Per op and dtype: the accuracy summary in the form compare reads (accuracy_compare.h), and
 * the verdict against the baseline on the cases both judged. */
static void json_accuracy(sml_jw *w, const sml_ledger_record *r) {
    sml_jw_key(w, "accuracy");
    sml_jw_array(w);
    for (size_t i = 0; i < r->nacc; i++) {
        const sml_ledger_accuracy *a = &r->acc[i];
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "op", sml_op_name(a->op));
        sml_jw_kstr(w, "dtype", sml_dtype_name(a->dtype));
        sml_acc_write_fields(w, &a->a);
        sml_jw_key(w, "vs_baseline");
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "baseline", a->baseline[0] ? a->baseline : NULL);
        sml_jw_kstr(w, "verdict", sml_acc_verdict_name(a->verdict));
        sml_jw_kstr(w, "why", a->why);
        sml_jw_end(w);
        sml_jw_end(w);
    }
    sml_jw_end(w);
}

int sml_ledger_write_json(const sml_bench_run *run, const sml_ledger *l, FILE *f) {
    sml_jw w;
    sml_jw_init(&w, f);
    sml_jw_object(&w);
    sml_jw_kstr(&w, "schema", SML_LEDGER_SCHEMA);
    sml_jw_kstr(&w, "sweep", run->plan.sweep);
    sml_jw_key(&w, "ops");
    sml_jw_array_inline(&w);
    for (int o = 0; o < SML_OP_COUNT; o++)
        if (run->plan.ops & (1u << o)) sml_jw_str(&w, sml_op_name((sml_op)o));
    sml_jw_end(&w);
    sml_jw_kbool(&w, "shrunk_for_cpu", run->plan.shrunk);
    sml_jw_kstr(&w, "notes", run->notes);
    sml_jw_kstr(&w, "decision_rule",
                "docs/BENCHMARKING.md; code: sml_decide in src/bench/decide.c. A row meets the "
                "claim when speedup >= min_speedup*(1-margin); below that but >= "
                "min_speedup*(1-m), m = max(margin, 2*sqrt(ks^2+bs^2)) from both relative "
                "spreads, it is unclear (noise never turns a miss into a pass); Supported: every "
                "row in the claim's class meets; Rejected: none meets, is unclear or is faster "
                "than the baseline beyond m; Caveated: otherwise; Measured: no claim or nothing "
                "to test. A WRONG kernel's row is a loss.");
    sml_jw_knum(&w, "seconds", run->seconds);
    sml_jw_key(&w, "partial"); /* null: every planned case was measured */
    if (sml_bench_partial(run)) {
        sml_jw_object_inline(&w);
        sml_jw_kint(&w, "cases_measured", (int64_t)run->ncases);
        sml_jw_kint(&w, "cases_planned", (int64_t)run->ncases_planned);
        sml_jw_knum(&w, "time_limit_s", run->cfg.time_limit_s);
        sml_jw_end(&w);
    } else {
        sml_jw_null(&w);
    }
    sml_jw_key(&w, "shard"); /* null: the whole sweep; else slice index of count (bench --shard) */
    if (run->plan.shard.count) {
        sml_jw_object_inline(&w);
        sml_jw_kint(&w, "index", run->plan.shard.index);
        sml_jw_kint(&w, "count", run->plan.shard.count);
        sml_jw_kint(&w, "cases_in_sweep", (int64_t)run->ncases_in_plan);
        sml_jw_key(&w, "kernels");
        sml_jw_array_inline(&w);
        for (size_t i = 0; i < run->plan.nkernels; i++) sml_jw_str(&w, run->plan.kernels[i]->name);
        sml_jw_end(&w);
        sml_jw_end(&w);
    } else {
        sml_jw_null(&w);
    }
    json_env(&w, run);
    json_config(&w, run);
    sml_jw_key(&w, "records");
    sml_jw_array(&w);
    for (size_t j = 0; j < l->n; j++) {
        const sml_ledger_record *r = &l->rec[j];
        sml_jw_object(&w);
        sml_jw_kstr(&w, "kernel", r->kernel);
        sml_jw_kstr(&w, "sweep", run->plan.sweep);
        sml_jw_kstr(&w, "device", r->device == SML_DEVICE_GPU ? "gpu" : "cpu");
        sml_jw_kstr(&w, "file", r->file);
        sml_jw_kstr(&w, "origin", r->origin);
        sml_jw_kbool(&w, "baseline_only", r->baseline_only);
        sml_jw_kbool(&w, "framework", r->framework);
        sml_jw_key(&w, "claim");
        if (r->claim.baseline) {
            sml_jw_object_inline(&w);
            sml_jw_kstr(&w, "baseline", r->claim.baseline);
            sml_jw_knum(&w, "min_speedup", r->claim.min_speedup);
            sml_jw_kstr(&w, "shapes", r->claim.shapes);
            sml_jw_end(&w);
        } else {
            sml_jw_null(&w);
        }
        sml_jw_kstr(&w, "status", sml_decision_name(r->decision.status));
        sml_jw_kstr(&w, "reason", r->reason);
        sml_jw_key(&w, "counts");
        sml_jw_object_inline(&w);
        sml_jw_kint(&w, "counted", r->decision.counted);
        sml_jw_kint(&w, "meets", r->decision.meets);
        sml_jw_kint(&w, "above_parity", r->decision.above_parity);
        sml_jw_kint(&w, "losses", r->decision.losses);
        sml_jw_kint(&w, "wrong", r->decision.wrong);
        sml_jw_kint(&w, "no_baseline", r->decision.no_baseline);
        sml_jw_kint(&w, "unclear", r->decision.unclear);
        sml_jw_end(&w);
        sml_jw_key(&w, "evidence");
        sml_jw_array(&w);
        for (size_t i = 0; i < r->n; i++) json_evidence(&w, run, r, i);
        sml_jw_end(&w);
        json_accuracy(&w, r);
        sml_jw_end(&w);
    }
    sml_jw_end(&w);
    sml_jw_end(&w);
    return sml_jw_finish(&w);
}
