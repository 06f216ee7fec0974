/* merge_write.c: a merged check run written out: the check --json document (as the unsharded
 * run writes it, with "merged" saying what was joined), Markdown, and the summary lines. */
#include <math.h>
#include <string.h>

#include "analysis/merge.h"
#include "json/json_write.h"
#include "prop/accuracy_json.h"

static const char *result_word(int rc) {
    return rc == 1 ? "failed" : rc == 3 ? "not-checked" : "passed";
}

static void json_failures(sml_jw *w, const sml_merge_run *r) {
    sml_jw_key(w, "failures");
    sml_jw_array_inline(w);
    for (int f = 0; f < r->nfail; f++) {
        const sml_merge_failure *x = &r->failures[f];
        sml_jw_object_inline(w);
        sml_jw_kstr(w, "property", x->property);
        sml_jw_kstr(w, "outcome", x->outcome);
        sml_jw_kint(w, "case", x->case_index);
        sml_jw_kint(w, "level", x->level);
        sml_jw_kint(w, "rows", x->rows);
        sml_jw_kint(w, "cols", x->cols);
        sml_jw_kint(w, "shrunk_rows", x->shrunk_rows);
        sml_jw_kint(w, "shrunk_cols", x->shrunk_cols);
        sml_jw_kstr(w, "reproducer", x->reproducer);
        sml_jw_end(w);
    }
    sml_jw_end(w);
}

static void json_run(sml_jw *w, const sml_merge_run *r) {
    sml_jw_object_inline(w);
    sml_jw_kstr(w, "kernel", r->kernel);
    sml_jw_kstr(w, "library", r->library[0] ? r->library : NULL);
    sml_jw_kstr(w, "op", r->op);
    sml_jw_kstr(w, "dtype", r->dtype);
    sml_jw_kstr(w, "outcome", r->outcome);
    sml_jw_kstr(w, "note",
                !strcmp(r->outcome, "skip") || !strcmp(r->outcome, "error") ? r->note : NULL);
    sml_jw_kint(w, "cases", r->cases);
    sml_jw_kint(w, "failed_cases", r->failed_cases);
    sml_jw_kint(w, "regressions", r->regressions);
    sml_jw_kint(w, "regressions_failed", r->regressions_failed);
    sml_jw_knum(w, "worst_ratio", r->worst_ratio);
    sml_jw_knum(w, "worst_ulps", r->worst_ulps);
    sml_jw_knum(w, "seconds", r->seconds);
    sml_jw_kint(w, "ramp", r->ramp);
    sml_acc_write(w, "accuracy", &r->acc);
    json_failures(w, r);
    sml_jw_end(w);
}

int sml_merge_check_json(const sml_merge *m, const char *const *paths, FILE *f) {
    sml_jw w;
    sml_jw_init(&w, f);
    sml_jw_object(&w);
    sml_jw_kstr(&w, "schema", "softmax-lab-check/1");
    sml_jw_kstr(&w, "version", m->version);
    char seed[24];
    snprintf(seed, sizeof seed, "0x%016llx", (unsigned long long)m->seed);
    sml_jw_kstr(&w, "seed", seed);
    sml_jw_kint(&w, "threads", m->threads);
    if (m->strict >= 0) sml_jw_kbool(&w, "strict", m->strict);
    if (m->long_profile >= 0) sml_jw_kbool(&w, "long", m->long_profile);
    sml_jw_key(&w, "merged");
    sml_jw_object_inline(&w);
    sml_jw_kint(&w, "shards", m->count);
    sml_jw_key(&w, "files");
    sml_jw_array_inline(&w);
    for (int i = 0; i < m->given; i++) sml_jw_str(&w, paths[i]);
    sml_jw_end(&w);
    sml_jw_kstr(&w, "missing", m->missing[0] ? m->missing : NULL);
    sml_jw_end(&w);
    sml_jw_key(&w, "runs");
    sml_jw_array(&w);
    for (size_t i = 0; i < m->nruns; i++) json_run(&w, &m->runs[i]);
    sml_jw_end(&w);
    sml_jw_key(&w, "not_run");
    sml_jw_array_inline(&w);
    char buf[sizeof m->not_run];
    snprintf(buf, sizeof buf, "%s", m->not_run);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
        sml_jw_str(&w, t);
    sml_jw_end(&w);
    sml_jw_kstr(&w, "result", result_word(m->exit_code));
    sml_jw_kbool(&w, "passed", m->exit_code == 0);
    sml_jw_kint(&w, "exit", m->exit_code);
    sml_jw_end(&w);
    return sml_jw_finish(&w);
}

int sml_merge_check_md(const sml_merge *m, FILE *f) {
    fprintf(f, "# softmax-lab check: %d shards merged\n\n", m->count);
    fprintf(
        f, "Seed `0x%016llx`, softmax-lab %s, %d of %d shards%s%s. Result: **%s** (exit %d).\n\n",
        (unsigned long long)m->seed, m->version, m->given, m->count,
        m->missing[0] ? "; missing: " : "", m->missing, result_word(m->exit_code), m->exit_code);
    fprintf(f, "| kernel | op | dtype | outcome | cases | failed | worst err/bound | p99 | median "
               "| digest |\n");
    fprintf(f, "|---|---|---|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < m->nruns; i++) {
        const sml_merge_run *r = &m->runs[i];
        fprintf(f, "| %s | %s | %s | %s | %lld | %lld | %.3g | %.3g | %.3g | `0x%016llx` |\n",
                r->kernel, r->op, r->dtype, r->outcome, (long long)r->cases,
                (long long)r->failed_cases, r->acc.worst, r->acc.p99, r->acc.median,
                (unsigned long long)r->acc.digest);
    }
    for (size_t i = 0; i < m->nruns; i++)
        for (int j = 0; j < m->runs[i].nfail; j++) {
            const sml_merge_failure *x = &m->runs[i].failures[j];
            fprintf(f, "%s- FAIL %s %s %s: %s (%s) at case %lld, level %lld; reproducer %s\n",
                    i + j ? "" : "\n", m->runs[i].kernel, m->runs[i].op, m->runs[i].dtype,
                    x->property, x->outcome, (long long)x->case_index, (long long)x->level,
                    x->reproducer[0] ? x->reproducer : "not saved");
        }
    return ferror(f) ? -1 : 0;
}

void sml_merge_print(const sml_merge *m, FILE *f) {
    int64_t all = 0;
    fprintf(f, "%-12s %-16s %-5s %-7s %8s %8s %12s  %s\n", "kernel", "op", "dtype", "outcome",
            "cases", "failed", "worst/bound", "digest");
    for (size_t i = 0; i < m->nruns; i++) {
        const sml_merge_run *r = &m->runs[i];
        all += r->cases;
        fprintf(f, "%-12s %-16s %-5s %-7s %8lld %8lld %12.3g  0x%016llx\n", r->kernel, r->op,
                r->dtype, r->outcome, (long long)r->cases, (long long)r->failed_cases,
                r->worst_ratio, (unsigned long long)r->acc.digest);
        for (int j = 0; j < r->nfail; j++)
            fprintf(f,
                    "  FAIL %s (%s) at case %lld level %lld, shrunk to %lldx%lld; reproducer %s\n",
                    r->failures[j].property, r->failures[j].outcome,
                    (long long)r->failures[j].case_index, (long long)r->failures[j].level,
                    (long long)r->failures[j].shrunk_rows, (long long)r->failures[j].shrunk_cols,
                    r->failures[j].reproducer[0] ? r->failures[j].reproducer : "not saved");
    }
    fprintf(f, "\nmerge: %d of %d shards, seed 0x%016llx, %lld cases\n", m->given, m->count,
            (unsigned long long)m->seed, (long long)all);
    if (m->not_run[0]) fprintf(f, "merge: not run (skipped in every shard): %s\n", m->not_run);
}
