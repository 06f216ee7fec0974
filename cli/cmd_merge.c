/* merge: the results of the shards of one run (check --json or bench ledgers made with
 * --shard K/N, on N GPUs, hosts or CI jobs) joined into one report with one exit code: the
 * counts, verdicts and digest of the unsharded run (src/analysis/merge.h). Offline: no
 * kernel runs. Bad usage or shards that do not make one run: exit 2, nothing written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/merge.h"
#include "commands.h"
#include "options.h"
#include "io/out_file.h"
#include "report/ledger_write.h"
#include "report/table.h"

#define ME "softmax-lab merge"

typedef struct merge_args {
    const char *json, *md;
    int partial;
} merge_args;

static const sml_opt OPTS[] = {
    {"json", "FILE", "a file name, or - for standard output",
     "the merged result as check --json (or a ledger) writes it", NULL, 0},
    {"md", "FILE", "a file name, or - for standard output", "the merged result as Markdown", NULL,
     1},
    {"partial", NULL, NULL, "merge although shards are missing (then exit 3 at best)",
     "the result says which shards are missing, and is not a pass (exit 3 unless something "
     "failed)",
     2},
};

static const sml_cli_spec SPEC = {
    "merge",
    "SHARD.json SHARD.json... [--json OUT.json] [--md OUT.md] [--partial]",
    "Joins the results of the shards of one run into the result of the whole run: check --json "
    "files of `softmax-lab check --shard K/N`, or ledgers of `softmax-lab bench --shard K/N`. Per "
    "kernel, op and dtype the merge gives the unsharded run's case counts, outcome, first failure "
    "of each property (with its reproducer), accuracy (worst, p99, median over every judged "
    "case) and case digest; for ledgers every row, and the decisions and accuracy made again "
    "from them by the bench's rule. The shards must be of one run: the same seed, softmax-lab "
    "version, kernels, ops and dtypes and case settings (check), sweep and GPU model (ledger); "
    "each shard once.",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0 every shard given and every property held (or every measurement checked), 1 a "
    "kernel failed in some shard, 2 bad usage, an unreadable file, shards that are not of one "
    "run, a shard given twice or missing without --partial, or a failed write (the old file, or "
    "none, is left), 3 nothing (or not all) was checked",
    NULL,
    NULL};

const sml_cli_spec *sml_spec_merge(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    (void)why, (void)n;
    merge_args *a = ctx;
    if (o->id == 2)
        a->partial = 1;
    else
        *(o->id == 0 ? &a->json : &a->md) = v;
    return 0;
}

static int write_check(const sml_merge *m, const char *const *paths, const char *path, int json) {
    sml_out_file o;
    char err[1200];
    if (sml_out_open(&o, path, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 0;
    }
    int bad = json ? sml_merge_check_json(m, paths, o.f) : sml_merge_check_md(m, o.f);
    if (bad) {
        sml_out_abort(&o);
        fprintf(stderr, ME ": %s: write failed (nothing written)\n", path);
        return 0;
    }
    if (sml_out_commit(&o, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 0;
    }
    printf("merge: wrote %s\n", path);
    return 1;
}

static int write_one(const sml_merge *m, const char *const *paths, const char *path, int json) {
    if (!path) return 1;
    if (m->kind == SML_MERGE_CHECK) return write_check(m, paths, path, json);
    char err[1200];
    if (sml_ledger_save_file(&m->run, &m->ledger, path, json, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        return 0;
    }
    printf("merge: wrote %s\n", path);
    return 1;
}

static const char *verdict_line(int rc) {
    return rc == 1   ? "FAILED (see the FAIL lines and each shard's output for the commands that "
                       "replay each)"
           : rc == 3 ? "NOT (ALL) CHECKED: shards missing, or a named kernel could not run; exit 3"
                     : "every shard given; every property held on every kernel that ran";
}

int sml_cmd_merge(int argc, char **argv) {
    merge_args a = {NULL, NULL, 0};
    int n = 0;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    if (!files) return 2;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, &a, files, argc, &n, "SHARD.json files");
    if (rc >= 0) {
        free(files);
        return rc;
    }
    const char *json = a.json, *md = a.md;
    int partial = a.partial;
    sml_merge m;
    char err[2048];
    if (sml_merge_files(files, n, partial, &m, err, sizeof err) != SML_OK) {
        fprintf(stderr, ME ": %s\n", err);
        sml_merge_free(&m);
        free(files);
        return 2;
    }
    if (m.kind == SML_MERGE_CHECK)
        sml_merge_print(&m, stdout);
    else
        sml_bench_print_decisions(stdout, &m.run, &m.ledger);
    if (m.missing[0]) printf("merge: PARTIAL: shard(s) %s of %d missing\n", m.missing, m.count);
    rc = m.exit_code;
    if (!write_one(&m, files, json, 1) || !write_one(&m, files, md, 0)) rc = rc == 1 ? 1 : 2;
    if (m.kind == SML_MERGE_CHECK)
        printf("merge: %s\n", verdict_line(m.exit_code));
    else
        printf("merge: %s\n", m.exit_code == 1   ? "a kernel was WRONG or failed in some shard"
                              : m.exit_code == 3 ? "NOT (ALL) CHECKED; exit 3"
                                                 : "every shard given and checked");
    sml_merge_free(&m);
    free(files);
    return rc;
}
