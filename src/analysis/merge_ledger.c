/* merge_ledger.c: the ledgers of a bench run's shards (bench --shard K/N) joined into the
 * ledger of the whole sweep (merge.h). The run is rebuilt from the shards' evidence rows,
 * case by case in the sweep's order, and the decisions and accuracy are made again by the
 * bench's own code (sml_ledger_build) from those rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/merge.h"

static double num(const sml_json *o, const char *key) {
    return sml_json_num(sml_json_get(o, key), NAN);
}
static int64_t whole(const sml_json *o, const char *key) {
    int64_t v = 0;
    sml_json_int(sml_json_get(o, key), INT64_MIN, INT64_MAX, &v);
    return v;
}
static void copy_str(char *dst, size_t n, const sml_json *o, const char *key) {
    const char *s = sml_json_str(sml_json_get(o, key));
    snprintf(dst, n, "%s", s ? s : "");
}

static int parse_op(const sml_json *o, sml_op *op, sml_dtype *dt) {
    const char *a = sml_json_str(sml_json_get(o, "op")),
               *b = sml_json_str(sml_json_get(o, "dtype"));
    return a && b && sml_op_parse(a, op) == SML_OK && sml_dtype_parse(b, dt) == SML_OK;
}

static void read_measurement(const sml_json *o, const char *prefix, sml_measurement *m) {
    char k[64];
    double *dst[] = {&m->t.median, &m->t.q1, &m->t.q3, &m->t.min, &m->t.max};
    const char *keys[] = {"median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms"};
    for (int i = 0; i < 5; i++) {
        snprintf(k, sizeof k, "%s%s", prefix, keys[i]);
        *dst[i] = num(o, k) * 1e-3;
    }
    m->t.rel_spread = num(o, "rel_spread");
    m->t.n = (int)whole(o, "samples");
    m->batch = (int)whole(o, "batch");
    m->held = (int)whole(o, "held");
    m->holds_lost = (int)whole(o, "holds_lost");
    const char *stop = sml_json_str(sml_json_get(o, "stop"));
    for (int r = 0; stop && r <= SML_STOP_SAMPLE_CAP; r++)
        if (!strcmp(stop, sml_stop_reason_name((sml_stop_reason)r))) m->stop = (sml_stop_reason)r;
}

static void read_case(const sml_json *e, sml_bench_case *c) {
    memset(c, 0, sizeof *c);
    parse_op(e, &c->op, &c->dtype);
    c->rows = whole(e, "rows");
    c->cols = whole(e, "cols");
    c->requested_rows = whole(e, "requested_rows");
    c->seed = strtoull(sml_json_str(sml_json_get(e, "seed")) ? sml_json_str(sml_json_get(e, "seed"))
                                                             : "0",
                       NULL, 16);
    c->checked_rows = whole(e, "checked_rows");
    c->tensor_bytes = (size_t)c->rows * (size_t)c->cols * sml_dtype_size(c->dtype);
    c->bytes_moved = (size_t)whole(e, "bytes_moved");
    c->nsets = (int)whole(e, "buffer_sets");
    c->plan_index = (size_t)whole(e, "case");
    copy_str(c->cache, sizeof c->cache, e, "cache");
    c->has_copy = sml_json_get(e, "copy_kernel_ms") != NULL;
    c->copy.t.median = num(e, "copy_kernel_ms") * 1e-3;
    c->copy_gbps = num(e, "copy_kernel_gbps");
    c->has_limit = sml_json_get(e, "limit_ms") != NULL;
    const char *pat = sml_json_str(sml_json_get(e, "limit_pattern"));
    c->limit_reads = pat && pat[0] == '2' ? 2 : 1;
    c->limit.t.median = num(e, "limit_ms") * 1e-3;
    c->limit.t.rel_spread = num(e, "limit_rel_spread");
    c->limit_gbps = num(e, "limit_gbps");
}

static void read_result(const sml_json *rec, const sml_json *e, size_t ci, sml_bench_result *x) {
    memset(x, 0, sizeof *x);
    copy_str(x->kernel, sizeof x->kernel, rec, "kernel");
    const char *dev = sml_json_str(sml_json_get(rec, "device"));
    x->device = dev && !strcmp(dev, "gpu") ? SML_DEVICE_GPU : SML_DEVICE_CPU;
    x->baseline_only =
        sml_json_get(rec, "baseline_only") && sml_json_get(rec, "baseline_only")->boolean;
    x->case_index = ci;
    parse_op(e, &x->op, &x->dtype);
    x->rows = whole(e, "rows");
    x->cols = whole(e, "cols");
    const char *v = sml_json_str(sml_json_get(e, "check"));
    for (int i = 0; v && i <= SML_VERDICT_KNOWN_DEVIATION; i++)
        if (!strcmp(v, sml_bench_verdict_name((sml_bench_verdict)i)))
            x->verdict = (sml_bench_verdict)i;
    copy_str(x->check, sizeof x->check, e, "check_detail");
    x->worst_ulps = num(e, "worst_ulps");
    x->worst_ratio = num(e, "worst_ratio");
    x->timed = sml_json_get(e, "median_ms") != NULL;
    if (x->timed) read_measurement(e, "", &x->m);
    x->gbps = num(e, "gbps");
    x->frac_memcpy = num(e, "frac_memcpy");
    x->frac_copy_kernel = num(e, "frac_copy_kernel");
    x->frac_limit = num(e, "frac_limit");
    x->vs_cudnn = num(e, "vs_cudnn");
    x->vs_naive = num(e, "vs_naive");
    x->vs_best_other = num(e, "vs_best_other");
    copy_str(x->best_other, sizeof x->best_other, e, "best_other");
    copy_str(x->auto_path, sizeof x->auto_path, e, "auto_path");
}

static void read_env(const sml_json *doc, sml_bench_env *e) {
    const sml_json *env = sml_json_get(doc, "environment"), *g = sml_json_get(env, "gpu");
    const sml_json *cp = sml_json_get(env, "copy");
    memset(e, 0, sizeof *e);
    copy_str(e->time_utc, sizeof e->time_utc, env, "time_utc");
    copy_str(e->host, sizeof e->host, env, "host");
    copy_str(e->version, sizeof e->version, env, "softmax_lab_version");
    e->threads = (int)whole(env, "host_threads");
    e->gpu.present = g && g->type == SML_JSON_OBJECT;
    const char *plans = sml_json_str(sml_json_get(env, "auto_plans"));
    if (plans && strcmp(plans, "rules")) {
        copy_str(e->auto_plans, sizeof e->auto_plans, env, "auto_plans");
        sml_printable(e->auto_plans);
    }
    if (e->gpu.present) {
        copy_str(e->gpu.name, sizeof e->gpu.name, g, "name");
        e->gpu.sm_count = (int)whole(g, "sm_count");
        const char *cc = sml_json_str(sml_json_get(g, "compute_capability"));
        if (cc) sscanf(cc, "%d.%d", &e->gpu.cc_major, &e->gpu.cc_minor);
        e->gpu.sm_clock_mhz = (int)whole(g, "sm_clock_mhz");
        e->gpu.mem_clock_mhz = (int)whole(g, "mem_clock_mhz");
        e->gpu.driver_version = (int)whole(g, "driver_version");
        e->gpu.runtime_version = (int)whole(g, "runtime_version");
        e->gpu.l2_bytes = (size_t)whole(g, "l2_bytes");
        e->gpu.global_mem_bytes = (size_t)whole(g, "global_mem_bytes");
    }
    if ((e->has_memcpy = sml_json_get(cp, "memcpy_d2d") != NULL)) {
        e->memcpy_gbps = num(cp, "memcpy_d2d_gbps");
        e->memcpy_bytes = (size_t)whole(cp, "memcpy_d2d_bytes");
        read_measurement(sml_json_get(cp, "memcpy_d2d"), "", &e->memcpy);
    }
    if ((e->has_host_memcpy = sml_json_get(cp, "host_memcpy") != NULL)) {
        e->host_memcpy_gbps = num(cp, "host_memcpy_gbps");
        e->host_memcpy_bytes = (size_t)whole(cp, "host_memcpy_bytes");
        read_measurement(sml_json_get(cp, "host_memcpy"), "", &e->host_memcpy);
    }
}

static void read_config(const sml_json *doc, sml_bench_run *run) {
    const sml_json *c = sml_json_get(doc, "config"), *ops = sml_json_get(doc, "ops");
    sml_bench_config *k = &run->cfg;
    sml_bench_config_default(k);
    k->stop.min_samples = (int)whole(c, "min_samples");
    k->stop.max_samples = (int)whole(c, "max_samples");
    k->stop.noise = num(c, "noise");
    k->stop.max_seconds = num(c, "max_seconds");
    k->gpu_sample_s = num(c, "gpu_sample_seconds");
    k->gpu_min_batch = (int)whole(c, "gpu_min_batch");
    const char *launches = sml_json_str(sml_json_get(c, "gpu_launches"));
    k->gpu_hold = launches && strncmp(launches, "as made", 7) != 0;
    k->cpu_sample_s = num(c, "cpu_sample_seconds");
    const char *l2 = sml_json_str(sml_json_get(c, "l2"));
    k->l2_warm = l2 && !strcmp(l2, "warm");
    k->l2_multiple = num(c, "l2_multiple");
    const char *seed = sml_json_str(sml_json_get(c, "seed"));
    k->seed = seed ? strtoull(seed, NULL, 16) : 0;
    k->margin = num(c, "decision_margin");
    double tl = num(c, "time_limit_s");
    k->time_limit_s = isnan(tl) ? 0.0 : tl;
    copy_str(run->plan.sweep, sizeof run->plan.sweep, doc, "sweep");
    for (size_t i = 0; i < sml_json_len(ops); i++) {
        sml_op op;
        if (sml_json_str(sml_json_at(ops, i)) &&
            sml_op_parse(sml_json_str(sml_json_at(ops, i)), &op) == SML_OK)
            run->plan.ops |= 1u << op;
    }
    const sml_json *shrunk = sml_json_get(doc, "shrunk_for_cpu");
    run->plan.shrunk = shrunk && shrunk->boolean;
    /* The notes without the shard's own sentence. */
    copy_str(run->notes, sizeof run->notes, doc, "notes");
    char *s = strstr(run->notes, "Shard ");
    if (s) *(s > run->notes ? s - 1 : s) = 0;
}

/* The kernels the shards measured: the same list in every shard, each as its record says. */
static sml_status read_kernels(sml_merge *m, const sml_json *const *docs, const char *const *paths,
                               int first, char *err, size_t errlen) {
    const sml_json *kl = sml_json_get(sml_json_get(docs[first], "shard"), "kernels");
    size_t nk = sml_json_len(kl);
    for (int k = 0; k < m->count; k++) {
        const sml_json *other =
            docs[k] ? sml_json_get(sml_json_get(docs[k], "shard"), "kernels") : kl;
        int same = sml_json_len(other) == nk;
        for (size_t i = 0; same && i < nk; i++) {
            const char *a = sml_json_str(sml_json_at(kl, i)),
                       *b = sml_json_str(sml_json_at(other, i));
            same = a && b && !strcmp(a, b);
        }
        if (!same) {
            snprintf(err, errlen,
                     "shards of different runs: kernels differ (%s and %s measured other backends; "
                     "see their 'shard'.'kernels')",
                     paths[first], paths[k]);
            return SML_ERR_INVALID_ARG;
        }
    }
    m->kernels = calloc(nk + 1, sizeof *m->kernels);
    m->baseline_only = calloc(nk + 1, sizeof *m->baseline_only);
    if (!m->kernels || !m->baseline_only) return SML_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < nk; i++) {
        sml_kernel *kk = &m->kernels[i];
        kk->name = sml_json_str(sml_json_at(kl, i));
        for (int d = 0; d < m->count && !kk->file; d++) {
            const sml_json *recs = docs[d] ? sml_json_get(docs[d], "records") : NULL;
            /* merge.c took only ledger versions this build reads */
            const int version =
                docs[d] ? sml_ledger_schema_version(sml_json_str(sml_json_get(docs[d], "schema")),
                                                    err, errlen)
                        : 0;
            for (size_t r = 0; r < sml_json_len(recs) && !kk->file; r++) {
                const sml_json *rec = sml_json_at(recs, r), *cl = sml_json_get(rec, "claim");
                const char *name = sml_json_str(sml_json_get(rec, "kernel"));
                if (!name || strcmp(name, kk->name)) continue;
                char where[600];
                snprintf(where, sizeof where, "%s: records[%zu]", paths[d], r);
                const int framework = sml_ledger_record_framework(version, rec, where, err, errlen);
                if (framework < 0) return SML_ERR_FORMAT;
                kk->flags = framework ? SML_KERNEL_FRAMEWORK : 0u;
                kk->file = sml_json_str(sml_json_get(rec, "file"));
                const char *dev = sml_json_str(sml_json_get(rec, "device"));
                kk->device = dev && !strcmp(dev, "gpu") ? SML_DEVICE_GPU : SML_DEVICE_CPU;
                m->baseline_only[i] = sml_json_get(rec, "baseline_only") &&
                                      sml_json_get(rec, "baseline_only")->boolean;
                if (cl && cl->type == SML_JSON_OBJECT)
                    kk->claim = (sml_claim){sml_json_str(sml_json_get(cl, "baseline")),
                                            num(cl, "min_speedup"),
                                            sml_json_str(sml_json_get(cl, "shapes"))};
            }
        }
    }
    m->run.plan.kernels = (const sml_kernel **)calloc(nk + 1, sizeof(sml_kernel *));
    if (!m->run.plan.kernels) return SML_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < nk; i++) m->run.plan.kernels[i] = &m->kernels[i];
    m->run.plan.nkernels = nk;
    m->run.plan.baseline_only = m->baseline_only;
    return SML_OK;
}

/* Every shard's evidence rows by kernel and case of the sweep: row[k * in_sweep + case]. */
static sml_status index_rows(sml_merge *m, const sml_json *const *docs, const char *const *paths,
                             size_t in_sweep, const sml_json **rec_of, const sml_json **row,
                             char *err, size_t errlen) {
    size_t nk = m->run.plan.nkernels;
    for (int d = 0; d < m->count; d++) {
        const sml_json *recs = docs[d] ? sml_json_get(docs[d], "records") : NULL;
        for (size_t r = 0; r < sml_json_len(recs); r++) {
            const sml_json *rec = sml_json_at(recs, r), *ev = sml_json_get(rec, "evidence");
            const char *name = sml_json_str(sml_json_get(rec, "kernel"));
            size_t k = 0;
            while (k < nk && name && strcmp(m->kernels[k].name, name)) k++;
            if (k == nk) {
                snprintf(err, errlen,
                         "%s: records[%zu]: kernel '%s' is not in the shard's 'kernels'", paths[d],
                         r, name ? name : "?");
                return SML_ERR_FORMAT;
            }
            for (size_t i = 0; i < sml_json_len(ev); i++) {
                int64_t c;
                sml_op op;
                sml_dtype dt;
                const sml_json *e = sml_json_at(ev, i);
                if (!sml_json_int(sml_json_get(e, "case"), 0, (int64_t)in_sweep - 1, &c) ||
                    !parse_op(e, &op, &dt)) {
                    snprintf(err, errlen,
                             "%s: records[%zu].evidence[%zu]: 'case' (0 to %zu), 'op' or 'dtype' "
                             "missing "
                             "or out of range",
                             paths[d], r, i, in_sweep - 1);
                    return SML_ERR_FORMAT;
                }
                row[k * in_sweep + (size_t)c] = e;
                rec_of[k] = rec;
            }
        }
    }
    return SML_OK;
}

/* Cases in the sweep's order; each case's results as run_case makes them: the CPU backends,
 * then the GPU kernels, each in the plan's order. */
static sml_status rebuild(sml_merge *m, size_t in_sweep, const sml_json **rec_of,
                          const sml_json **row) {
    size_t nk = m->run.plan.nkernels, nrows = 0;
    for (size_t i = 0; i < nk * in_sweep; i++) nrows += row[i] != NULL;
    m->run.cases = calloc(in_sweep + 1, sizeof *m->run.cases);
    m->run.results = calloc(nrows + 1, sizeof *m->run.results);
    if (!m->run.cases || !m->run.results) return SML_ERR_OUT_OF_MEMORY;
    for (size_t c = 0; c < in_sweep; c++) {
        size_t first = m->run.nresults;
        for (int dev = 0; dev < 2; dev++)
            for (size_t k = 0; k < nk; k++) {
                const sml_json *e = row[k * in_sweep + c];
                if (!e || (int)m->kernels[k].device != dev) continue;
                if (first == m->run.nresults) read_case(e, &m->run.cases[m->run.ncases]);
                read_result(rec_of[k], e, m->run.ncases, &m->run.results[m->run.nresults++]);
            }
        if (m->run.nresults > first) m->run.ncases++;
    }
    m->run.cap = nrows + 1;
    return SML_OK;
}

sml_status sml_merge_ledger_docs(sml_merge *m, const sml_json *const *docs,
                                 const char *const *paths, char *err, size_t errlen) {
    int first = 0;
    while (!docs[first]) first++;
    int64_t in_sweep = 0;
    const sml_json *sh = sml_json_get(docs[first], "shard");
    if (!sml_json_int(sml_json_get(sh, "cases_in_sweep"), 1, 1 << 20, &in_sweep)) {
        snprintf(err, errlen, "%s: 'shard'.'cases_in_sweep' missing", paths[first]);
        return SML_ERR_FORMAT;
    }
    sml_status s = read_kernels(m, docs, paths, first, err, errlen);
    if (s != SML_OK) return s;
    read_env(docs[first], &m->run.env);
    read_config(docs[first], &m->run);
    size_t nk = m->run.plan.nkernels, cells = nk * (size_t)in_sweep + 1;
    const sml_json **row = calloc(cells, sizeof *row), **rec_of = calloc(nk + 1, sizeof *rec_of);
    s = !row || !rec_of ? SML_ERR_OUT_OF_MEMORY
                        : index_rows(m, docs, paths, (size_t)in_sweep, rec_of, row, err, errlen);
    if (s == SML_OK) s = rebuild(m, (size_t)in_sweep, rec_of, row);
    free(row);
    free(rec_of);
    if (s != SML_OK) return s;
    /* Planned: what each shard planned (less than it measured where its time limit struck),
     * and the whole slice of a shard not given. */
    m->run.ncases_in_plan = (size_t)in_sweep;
    m->run.ncases_planned = m->run.ncases;
    for (int k = 0; k < m->count; k++) {
        const sml_json *part = docs[k] ? sml_json_get(docs[k], "partial") : NULL;
        sml_shard one = {k + 1, m->count};
        if (!docs[k])
            m->run.ncases_planned += (size_t)sml_shard_size(&one, in_sweep);
        else if (part && part->type == SML_JSON_OBJECT)
            m->run.ncases_planned +=
                (size_t)(whole(part, "cases_planned") - whole(part, "cases_measured"));
        if (docs[k]) m->run.seconds += num(docs[k], "seconds");
    }
    if (sml_ledger_build(&m->run, &m->ledger) != SML_OK) return SML_ERR_OUT_OF_MEMORY;
    int broken = 0;
    for (size_t i = 0; i < m->run.nresults; i++)
        broken |=
            !m->run.results[i].baseline_only && sml_bench_verdict_failed(m->run.results[i].verdict);
    m->exit_code = broken ? 1 : (m->missing[0] || m->run.nresults == 0) ? 3 : 0;
    return SML_OK;
}
