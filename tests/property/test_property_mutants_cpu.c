/* test_property_mutants_cpu: proof that the property engine finds real bugs, in CI with no
 * GPU. Runs the engine's standard properties on every CPU mutant (cpu_mutants.c) and:
 *   1. requires the no-max-subtraction mutant to be caught by `agreement` on softmax fp32,
 *      shrunk to one row of at most 4 columns, saved as a reproducer that still fails on
 *      the mutant and passes on cpu_naive (the engine's acceptance test);
 *   2. requires every mutant to be killed and the two controls (the same code without a
 *      bug) to survive every property;
 *   3. requires every property to kill at least one mutant;
 * and prints the mutation table: mutant, killed by, after how many cases, shrunk size.
 *
 * Flags: --mutant NAME, --replay FILE (re-run a mutant's reproducer), --save-regressions DIR
 * (write each mutant's killing reproducer there, e.g. tests/mutants/corpus), and the
 * engine's flags (--seed, --cases, --seconds, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpu_mutants.h"
#include "prop/case.h"
#include "prop/prop.h"
#include "prop/repro.h"
#include "test_support.h"

#ifndef SML_PROP_SAVE_DIR
#define SML_PROP_SAVE_DIR "prop-failures"
#endif

static const char *TEST = "test_property_mutants_cpu";

static int replay_one(const char *path) {
    sml_prop_replay_result r;
    sml_status s = sml_prop_replay(path, NULL, sml_mutant_find, NULL, &r);
    if (s != SML_OK) {
        fprintf(stderr, "%s: %s: %s\n", TEST, sml_strerror(s), r.message);
        return 2;
    }
    printf("%s on %s %s %lldx%lld, property %s: %s (recorded: %s)\n  %s\n", r.kernel,
           sml_op_name(r.op), sml_dtype_name(r.dtype), (long long)r.rows, (long long)r.cols,
           sml_prop_name(r.prop),
           r.outcome == SML_PROP_FAIL ? "STILL FAILS" : sml_prop_outcome_name(r.outcome),
           r.recorded, r.message);
    return r.outcome == SML_PROP_FAIL || r.outcome == SML_PROP_ERROR ? 1 : 0;
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* The engine's acceptance test: no-max subtraction caught, shrunk, saved, replayable. */
static void check_no_max(const sml_prop_config *base, sml_tally *t, char *rerun) {
    const sml_kernel *k = sml_mutant_find("mut_no_max", NULL);
    sml_prop_config cfg = *base;
    cfg.props = 1u << SML_PROP_AGREEMENT;
    cfg.stop_on_failure = 1;
    cfg.max_seconds = 0.0;
    cfg.log = stdout;
    sml_prop_result *res = calloc(1, sizeof *res);
    if (!res || sml_prop_run(k, SML_SOFTMAX, SML_F32, &cfg, res) != SML_OK) {
        sml_tally_fail(t, rerun, "no-max mutant: the engine did not run");
        free(res);
        return;
    }
    const sml_prop_failure *f = res->nfail ? &res->failures[0] : NULL;
    if (!f || f->prop != SML_PROP_AGREEMENT || f->outcome != SML_PROP_FAIL) {
        sml_tally_fail(t, rerun,
                       "no-max mutant survived %lld softmax fp32 cases of the agreement property",
                       (long long)res->cases);
        free(res);
        return;
    }
    printf("no-max mutant: agreement failed at case %lld (%lldx%lld), shrunk to %lldx%lld in %lld "
           "steps: %s\n",
           (long long)f->case_index + 1, (long long)f->rows, (long long)f->cols,
           (long long)f->s_rows, (long long)f->s_cols, (long long)f->shrink_steps, f->message);
    if (f->s_rows == 1 && f->s_cols <= 4)
        sml_tally_pass(t);
    else
        sml_tally_fail(t, rerun,
                       "no-max mutant shrunk only to %lldx%lld, not one row of <= 4 columns",
                       (long long)f->s_rows, (long long)f->s_cols);
    if (!f->repro[0] || !file_exists(f->repro)) {
        sml_tally_fail(t, rerun, "no-max mutant: no reproducer was saved");
        free(res);
        return;
    }
    sml_tally_pass(t);
    printf("  reproducer: %s\n", f->repro);
    sml_prop_replay_result r;
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "%s --replay %s", rerun, f->repro);
    if (sml_prop_replay(f->repro, NULL, sml_mutant_find, NULL, &r) != SML_OK ||
        r.outcome != SML_PROP_FAIL)
        sml_tally_fail(t, cmd, "the saved no-max reproducer does not fail on replay: %s",
                       r.message);
    else
        sml_tally_pass(t);
    const sml_kernel *good = sml_kernel_find("cpu_naive");
    if (sml_prop_replay(f->repro, good, NULL, NULL, &r) != SML_OK || r.outcome != SML_PROP_PASS)
        sml_tally_fail(t, cmd, "the no-max reproducer does not pass on cpu_naive: %s", r.message);
    else
        sml_tally_pass(t);
    free(res);
}

/* A kill counts only if the control (the same code without the bug) passes the shrunk input:
 * that is what tells the mutant apart. A failure the control shares (a gap in the contract,
 * or an engine bug) is reported and not counted. */
static void discount_shared(sml_prop_result *res) {
    const sml_kernel *control = sml_mutant_find("mut_control", NULL);
    for (int f = 0; f < res->nfail; f++) {
        sml_prop_failure *fl = &res->failures[f];
        if (!fl->repro[0] || !res->killed_at[fl->prop]) continue;
        sml_prop_replay_result r;
        if (sml_prop_replay(fl->repro, control, NULL, NULL, &r) != SML_OK) continue;
        if (r.outcome == SML_PROP_FAIL || r.outcome == SML_PROP_ERROR) {
            printf("  not counted: %s %s %s %s also fails on mut_control (%s): %.200s\n",
                   res->kernel->name, sml_op_name(res->op), sml_dtype_name(res->dtype),
                   sml_prop_name(fl->prop), fl->repro, r.message);
            res->killed_at[fl->prop] = 0;
        }
    }
}

typedef struct row {
    const sml_mutant *m;
    int killed;
    int64_t cases; /* cases until the first kill, in the combo that killed first */
    sml_prop_id by;
    int by_error; /* the kill was an error (the kernel refused or crashed) */
    sml_op op;
    sml_dtype dt;
    int64_t s_rows, s_cols;
    char repro[1024];
    unsigned killers; /* every property that killed it somewhere */
    char false_positive[1600];
} row;

int main(int argc, char **argv) {
    const char *only = NULL, *save_regr = NULL;
    int only_op = -1, only_dt = -1;
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_CI);
    cfg.max_cases = 200;
    cfg.total_seconds = 60.0;
    sml_prop_config_env(&cfg);
    cfg.save_dir = SML_PROP_SAVE_DIR "/mutants";
    char rerun[1024], replay[1100];
    snprintf(rerun, sizeof rerun, "%s", argv[0]);
    snprintf(replay, sizeof replay, "%s --replay", argv[0]);
    cfg.rerun_cmd = rerun;
    cfg.replay_cmd = replay;
    cfg.progress = stderr;
    cfg.log = fopen("/dev/null",
                    "w"); /* the table below is the report; failures of mutants are expected */
    /* Big shapes more often than in the registry suite: the grid mutant needs > 65,535 rows. */
    cfg.sizes.big_prob = 0.12;
    cfg.sizes.big_max_elems = 1 << 18;
    for (int i = 1; i < argc;) {
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return 2;
        if (r > 0) continue;
        if (!strcmp(argv[i], "--replay") && i + 1 < argc) return replay_one(argv[i + 1]);
        if ((!strcmp(argv[i], "--mutant") || !strcmp(argv[i], "--kernel")) && i + 1 < argc) {
            only = argv[i + 1];
            i += 2;
            continue;
        }
        if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            sml_op op;
            if (sml_op_parse(argv[i + 1], &op) != SML_OK) return 2;
            only_op = op;
            i += 2;
            continue;
        }
        if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            sml_dtype dt;
            if (sml_dtype_parse(argv[i + 1], &dt) != SML_OK) return 2;
            only_dt = dt;
            i += 2;
            continue;
        }
        if (!strcmp(argv[i], "--save-regressions") && i + 1 < argc) {
            save_regr = argv[i + 1];
            i += 2;
            continue;
        }
        if (!strcmp(argv[i], "--verbose")) {
            cfg.log = stdout;
            i++;
            continue;
        }
        printf("usage: %s [--mutant NAME] [--op OP] [--dtype D] [--replay FILE] "
               "[--save-regressions DIR] [--verbose] [engine flags]\n%s",
               argv[0], sml_prop_flags_help());
        return strcmp(argv[i], "--help") ? 2 : 0;
    }
    sml_tally t = {TEST, 0, 0, 0};
    printf("%s: seed 0x%016llx, up to %lld cases per mutant/op/dtype, %.0f s budget\n", TEST,
           (unsigned long long)cfg.seed, (long long)cfg.max_cases, cfg.total_seconds);
    double t0 = sml_prop_now();
    if ((!only || !strcmp(only, "mut_no_max")) && only_op < 0 && only_dt < 0 && cfg.only_case < 0)
        check_no_max(&cfg, &t, rerun);

    size_t nm = sml_mutant_count();
    row *rows = calloc(nm, sizeof *rows);
    sml_prop_result *res = malloc(sizeof *res);
    if (!rows || !res) return 1;
    int total = 0, done = 0;
    for (size_t i = 0; i < nm; i++) {
        const sml_kernel *k = &sml_mutant_at(i)->kernel;
        if (only && strcmp(only, k->name)) continue;
        for (int op = 0; op < SML_OP_COUNT; op++)
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
                total += (k->ops >> op & 1) && (k->dtypes >> dt & 1) &&
                         (only_op < 0 || only_op == op) && (only_dt < 0 || only_dt == dt);
    }
    int64_t cases_all = 0;
    double secs_all = 0.0;
    for (size_t i = 0; i < nm; i++) {
        const sml_mutant *m = sml_mutant_at(i);
        const sml_kernel *k = &m->kernel;
        row *rw = &rows[i];
        rw->m = m;
        if (only && strcmp(only, k->name)) continue;
        for (int op = 0; op < SML_OP_COUNT; op++) {
            for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
                if (!(k->ops >> op & 1) || !(k->dtypes >> dt & 1)) continue;
                if ((only_op >= 0 && only_op != op) || (only_dt >= 0 && only_dt != dt)) continue;
                sml_prop_config c = cfg;
                c.max_seconds = sml_prop_next_seconds(&cfg, sml_prop_now() - t0, total - done, 1);
                /* Once a mutant is dead, its other ops and dtypes only say how fast. */
                c.stop_on_failure = rw->killed;
                done++;
                if (sml_prop_run(k, (sml_op)op, (sml_dtype)dt, &c, res) != SML_OK) continue;
                cases_all += res->cases;
                secs_all += res->seconds;
                if (!m->expect_survive) discount_shared(res);
                int killer = sml_prop_result_killer(res);
                for (int p = 0; p < SML_PROP_COUNT; p++)
                    if (res->killed_at[p]) rw->killers |= 1u << p;
                if (killer < 0) continue;
                if (m->expect_survive && !rw->false_positive[0]) {
                    const sml_prop_failure *f = &res->failures[0];
                    snprintf(rw->false_positive, sizeof rw->false_positive,
                             "%s %s %s: %s: %.300s (reproducer %s)", k->name, sml_op_name(op),
                             sml_dtype_name(dt), sml_prop_name(f->prop), f->message, f->repro);
                }
                if (!rw->killed || res->killed_at[killer] < rw->cases) {
                    rw->killed = 1;
                    rw->cases = res->killed_at[killer];
                    rw->by = (sml_prop_id)killer;
                    rw->op = (sml_op)op;
                    rw->dt = (sml_dtype)dt;
                    for (int f = 0; f < res->nfail; f++)
                        if (res->failures[f].prop == (sml_prop_id)killer) {
                            rw->by_error = res->failures[f].outcome == SML_PROP_ERROR;
                            rw->s_rows = res->failures[f].s_rows;
                            rw->s_cols = res->failures[f].s_cols;
                            snprintf(rw->repro, sizeof rw->repro, "%s", res->failures[f].repro);
                        }
                }
            }
        }
    }
    free(res);

    printf("\n%-20s %-18s %-15s %-5s %6s %9s  %s\n", "mutant", "killed by", "op", "dtype", "cases",
           "shrunk", "also killed by");
    unsigned covered = 0;
    int killed = 0, mutants = 0;
    for (size_t i = 0; i < nm; i++) {
        row *rw = &rows[i];
        const char *name = rw->m->kernel.name;
        if (only && strcmp(only, name)) continue;
        char also[256] = "";
        for (int p = 0; p < SML_PROP_COUNT; p++)
            if ((rw->killers >> p & 1) && !(rw->killed && p == (int)rw->by)) {
                if (also[0]) strncat(also, ",", sizeof also - strlen(also) - 1);
                strncat(also, sml_prop_name((sml_prop_id)p), sizeof also - strlen(also) - 1);
            }
        if (rw->m->expect_survive) {
            printf("%-20s %-18s %-15s %-5s %6s %9s  %s\n", name,
                   rw->killed ? sml_prop_name(rw->by) : "survived (control)", "", "", "", "", also);
            if (rw->killed)
                sml_tally_fail(&t, rw->false_positive[0] ? rw->repro : NULL,
                               "control %s (no bug) failed a property: a false positive: %s", name,
                               rw->false_positive);
            else
                sml_tally_pass(&t);
            continue;
        }
        mutants++;
        covered |= rw->killers;
        char shrunk[32];
        snprintf(shrunk, sizeof shrunk, "%lldx%lld", (long long)rw->s_rows, (long long)rw->s_cols);
        char by[40];
        snprintf(by, sizeof by, "%s%s", sml_prop_name(rw->by), rw->by_error ? " (error)" : "");
        printf("%-20s %-18s %-15s %-5s %6lld %9s  %s\n", name, rw->killed ? by : "SURVIVED",
               rw->killed ? sml_op_name(rw->op) : "", rw->killed ? sml_dtype_name(rw->dt) : "",
               (long long)rw->cases, rw->killed ? shrunk : "", also);
        if (rw->killed) {
            killed++;
            sml_tally_pass(&t);
            if (save_regr && rw->repro[0]) {
                sml_prop_case c;
                sml_prop_repro meta;
                char err[512], out[1024];
                char cmd[1100];
                snprintf(cmd, sizeof cmd, "./build/tests/property/%s --replay", TEST);
                /* The corpus is replayed on every registered kernel, so only inputs a correct
                 * kernel passes belong there. */
                sml_prop_replay_result ok;
                if (sml_prop_replay(rw->repro, sml_kernel_find("cpu_naive"), NULL, NULL, &ok) !=
                        SML_OK ||
                    ok.outcome != SML_PROP_PASS) {
                    printf("  not saved: cpu_naive does not pass it either (%s): %s\n",
                           sml_prop_outcome_name(ok.outcome), ok.message);
                } else if (sml_prop_repro_load(rw->repro, &c, &meta, err, sizeof err) == SML_OK) {
                    if (sml_prop_repro_save(save_regr, &c, &meta, cmd, out, sizeof out, err,
                                            sizeof err) == SML_OK)
                        printf("  saved %s\n", out);
                    else
                        printf("  could not save: %s\n", err);
                    sml_prop_case_free(&c);
                }
            }
        } else {
            sml_tally_fail(&t, rerun, "mutant %s (%s) survived every property", name, rw->m->bug);
        }
    }
    printf("\nmutation score: %d/%d killed; %lld cases in %.1f s (%.0f cases/s)\n", killed, mutants,
           (long long)cases_all, secs_all, secs_all > 0 ? cases_all / secs_all : 0.0);
    if (!only && only_op < 0 && only_dt < 0 && cfg.only_case < 0) {
        for (int p = 0; p < SML_PROP_COUNT; p++) {
            if (covered >> p & 1) {
                sml_tally_pass(&t);
                continue;
            }
            sml_tally_fail(&t, rerun, "property %s killed no mutant: nothing shows it can fail",
                           sml_prop_name((sml_prop_id)p));
        }
    }
    free(rows);
    if (cfg.log && cfg.log != stdout) fclose(cfg.log);
    return sml_tally_finish(&t);
}
