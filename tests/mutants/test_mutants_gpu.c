/* test_mutants_gpu: the mutation test. Runs the property engine's standard GPU
 * budget on every planted-bug kernel of the zoo (mutants.c) and fails if any survives.
 *
 * Per mutant, in its own child process (a mutant that faults takes only its own CUDA
 * context down):
 *   1. the standard budget (sml_prop_config's GPU profile, the run seed printed above the
 *      table) on each op and dtype the mutant declares, in order, until one is killed;
 *   2. if none was, and the mutant has a shape hint (a bug the standard generators reach
 *      rarely or never: > 2^31 elements, > 65,535 rows, races), a few cases at that shape,
 *      reported as "targeted";
 *   3. the killing case is shrunk and saved as a reproducer (build tree) and, when the kill
 *      was not a CUDA fault, replayed on the mutant to see whether it reproduces.
 * Then, in this process, every kill is checked against the control, the production kernel
 * the mutant copies: a kill counts only if the control passes the same reproducer. With
 * --save-regressions DIR, each counted kill's reproducer is copied there when every
 * registered kernel passes it and its replay needs at most 64 MiB per tensor (the corpus in
 * tests/mutants/corpus, which `--save-regressions tests/mutants/corpus` refreshes, is
 * replayed on every kernel by every property run).
 *
 * Output: the mutation table (stdout, and as Markdown at SML_MUT_TABLE_PATH) and the score.
 *
 *   --mutant NAME (or --kernel NAME)  only this mutant, in this process
 *   --op OP --dtype DT                only this op / dtype of it
 *   --replay FILE [--kernel K]        re-run a reproducer on the mutant it names (or on K)
 *   --list                            the zoo, one line per mutant
 *   --no-targeted                     the standard budget only
 *   --save-regressions DIR            see above (ctest passes corpus/ in the build tree)
 *   --table FILE                      the Markdown table's path
 *   --verbose                         the engine's own failure reports
 *   --seconds S                       budget of the whole test (default 280; env SML_PROP_SECONDS)
 *   engine flags (--seed, --cases, --props, --case/--level, --no-shrink)
 * Internal: --result FILE (child mode: write the record there). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/out_file.h"
#include "prop/case.h"
#include "prop/prop.h"
#include "prop/repro.h"
#include "test_support.h"
#include "tests/mutants/mutants.h"
#include "tests/mutants/targeted.h"

#ifndef SML_PROP_SAVE_DIR
#define SML_PROP_SAVE_DIR "prop-failures"
#endif
#ifndef SML_MUT_TABLE_PATH
#define SML_MUT_TABLE_PATH "mutation_table.md"
#endif

#define TEST             "test_mutants_gpu"
#define DEFAULT_BUDGET   280.0                /* seconds for the whole test on one H100 */
#define MIN_SHARE        8.0                  /* seconds of standard budget any mutant gets */
#define CORPUS_MAX_BYTES ((double)(64 << 20)) /* per tensor, for tests/mutants/corpus */
#define CHILD_GRACE      240.0                /* seconds past its share before a child is killed */
#define MAX_FWD          32

/* One mutant's outcome. The child fills the first part; this process the rest. */
typedef struct mrow {
    const sml_gpu_mutant *m;
    char verdict[16]; /* "killed", "survived", "error" */
    char how[16];     /* "standard" or "targeted" */
    sml_op op;
    sml_dtype dt;
    sml_mut_kill k;
    int64_t std_cases; /* standard-budget cases run over all its ops and dtypes */
    double std_seconds, seconds;
    int replays; /* the reproducer fails again on the mutant: 1; does not: 0; -1 not tried */
    char note[400];
    /* checked here */
    int counted; /* killed, and the control passes the reproducer */
    char control[400];
    char saved[1024];
} mrow;

typedef struct opts {
    const char *argv0, *only, *replay, *replay_kernel, *result, *save_regr, *table;
    int only_op, only_dt, targeted, verbose, list;
    double budget;
    const char *fwd[MAX_FWD]; /* engine flags, forwarded to the children */
    int nfwd;
} opts;

/* ---- the record passed from a child -------------------------------------------------------- */

static void clean(char *s) {
    for (; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
}

static int write_record(const char *path, mrow *r) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    clean(r->k.message);
    clean(r->note);
    fprintf(f, "verdict=%s\nhow=%s\nop=%d\ndtype=%d\nprop=%d\noutcome=%d\ncases=%lld\n", r->verdict,
            r->how, (int)r->op, (int)r->dt, (int)r->k.prop, (int)r->k.outcome,
            (long long)r->k.cases);
    fprintf(f, "std_cases=%lld\nstd_seconds=%.3f\nseconds=%.3f\nreplays=%d\n",
            (long long)r->std_cases, r->std_seconds, r->seconds, r->replays);
    fprintf(f, "rows=%lld\ncols=%lld\nld=%lld\noffset=%lld\n", (long long)r->k.rows,
            (long long)r->k.cols, (long long)r->k.ld, (long long)r->k.offset);
    fprintf(f, "s_rows=%lld\ns_cols=%lld\ns_ld=%lld\ns_offset=%lld\nshrink_steps=%lld\n",
            (long long)r->k.s_rows, (long long)r->k.s_cols, (long long)r->k.s_ld,
            (long long)r->k.s_offset, (long long)r->k.shrink_steps);
    fprintf(f, "family=%s\nrepro=%s\nmessage=%s\nnote=%s\n", r->k.family, r->k.repro, r->k.message,
            r->note);
    return fclose(f) == 0;
}

static int read_record(const char *path, mrow *r) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[2048];
    int fields = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        const char *k = line, *v = eq + 1;
        long long n = strtoll(v, NULL, 10);
        fields++;
        if (!strcmp(k, "verdict"))
            snprintf(r->verdict, sizeof r->verdict, "%s", v);
        else if (!strcmp(k, "how"))
            snprintf(r->how, sizeof r->how, "%s", v);
        else if (!strcmp(k, "op"))
            r->op = (sml_op)n;
        else if (!strcmp(k, "dtype"))
            r->dt = (sml_dtype)n;
        else if (!strcmp(k, "prop"))
            r->k.prop = (sml_prop_id)n;
        else if (!strcmp(k, "outcome"))
            r->k.outcome = (sml_prop_outcome)n;
        else if (!strcmp(k, "cases"))
            r->k.cases = n;
        else if (!strcmp(k, "std_cases"))
            r->std_cases = n;
        else if (!strcmp(k, "std_seconds"))
            r->std_seconds = strtod(v, NULL);
        else if (!strcmp(k, "seconds"))
            r->seconds = strtod(v, NULL);
        else if (!strcmp(k, "replays"))
            r->replays = (int)n;
        else if (!strcmp(k, "rows"))
            r->k.rows = n;
        else if (!strcmp(k, "cols"))
            r->k.cols = n;
        else if (!strcmp(k, "ld"))
            r->k.ld = n;
        else if (!strcmp(k, "offset"))
            r->k.offset = n;
        else if (!strcmp(k, "s_rows"))
            r->k.s_rows = n;
        else if (!strcmp(k, "s_cols"))
            r->k.s_cols = n;
        else if (!strcmp(k, "s_ld"))
            r->k.s_ld = n;
        else if (!strcmp(k, "s_offset"))
            r->k.s_offset = n;
        else if (!strcmp(k, "shrink_steps"))
            r->k.shrink_steps = n;
        else if (!strcmp(k, "family"))
            snprintf(r->k.family, sizeof r->k.family, "%s", v);
        else if (!strcmp(k, "repro"))
            snprintf(r->k.repro, sizeof r->k.repro, "%s", v);
        else if (!strcmp(k, "message"))
            snprintf(r->k.message, sizeof r->k.message, "%s", v);
        else if (!strcmp(k, "note"))
            snprintf(r->note, sizeof r->note, "%s", v);
        else
            fields--;
    }
    fclose(f);
    r->k.killed = !strcmp(r->verdict, "killed");
    return fields >= 8;
}

/* ---- one mutant, in this process ------------------------------------------------------------ */

static void from_failure(mrow *r, const sml_prop_failure *f) {
    sml_mut_kill *k = &r->k;
    k->killed = 1;
    k->prop = f->prop;
    k->outcome = f->outcome;
    k->cases = f->case_index + 1;
    k->rows = f->rows;
    k->cols = f->cols;
    k->ld = f->ld;
    k->offset = f->offset;
    k->s_rows = f->s_rows;
    k->s_cols = f->s_cols;
    k->s_ld = f->s_ld;
    k->s_offset = f->s_offset;
    k->shrink_steps = f->shrink_steps;
    snprintf(k->family, sizeof k->family, "%s", f->family);
    snprintf(k->message, sizeof k->message, "%s", f->message);
    snprintf(k->repro, sizeof k->repro, "%s", f->repro);
}

static int cuda_fault(const mrow *r) {
    return r->k.outcome == SML_PROP_ERROR && strstr(r->k.message, "CUDA") != NULL;
}

/* Bytes one tensor of the shrunk case spans (what replaying it allocates, per tensor). */
static double tensor_bytes(const sml_mut_kill *k, sml_dtype dt) {
    return ((double)(k->s_rows - 1) * (double)k->s_ld + (double)k->s_cols) *
           (double)sml_dtype_size(dt);
}

/* Does the saved reproducer fail again on the mutant? (A race may not; a 16 GiB case is not
 * worth a second run.) */
static void replay_on_mutant(mrow *r) {
    r->replays = -1;
    if (!r->k.repro[0] || cuda_fault(r) || tensor_bytes(&r->k, r->dt) > CORPUS_MAX_BYTES) return;
    sml_prop_replay_result rr;
    if (sml_prop_replay(r->k.repro, &r->m->kernel, NULL, NULL, &rr) != SML_OK) return;
    r->replays = rr.outcome == SML_PROP_FAIL || rr.outcome == SML_PROP_ERROR;
}

static void run_mutant(const opts *o, const sml_prop_config *base, const sml_gpu_mutant *m,
                       mrow *r) {
    memset(r, 0, sizeof *r);
    r->m = m;
    r->replays = -1;
    snprintf(r->verdict, sizeof r->verdict, "survived");
    const sml_kernel *k = &m->kernel;
    const double t0 = sml_prop_now();
    int configs = 0, done = 0;
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++)
            configs += (k->ops >> op & 1) && (k->dtypes >> dt & 1) &&
                       (o->only_op < 0 || o->only_op == op) && (o->only_dt < 0 || o->only_dt == dt);
    sml_prop_result *res = malloc(sizeof *res);
    if (!res) {
        snprintf(r->verdict, sizeof r->verdict, "error");
        snprintf(r->note, sizeof r->note, "out of memory");
        return;
    }
    for (int op = 0; op < SML_OP_COUNT && !r->k.killed; op++) {
        for (int dt = 0; dt < SML_DTYPE_COUNT && !r->k.killed; dt++) {
            if (!(k->ops >> op & 1) || !(k->dtypes >> dt & 1)) continue;
            if ((o->only_op >= 0 && o->only_op != op) || (o->only_dt >= 0 && o->only_dt != dt))
                continue;
            sml_prop_config c = *base;
            c.max_seconds = sml_prop_next_seconds(base, sml_prop_now() - t0, configs - done, 1);
            done++;
            if (sml_prop_run(k, (sml_op)op, (sml_dtype)dt, &c, res) != SML_OK) continue;
            r->std_cases += res->cases;
            r->std_seconds += res->seconds;
            r->op = (sml_op)op;
            r->dt = (sml_dtype)dt;
            for (int f = 0; f < res->nfail; f++) {
                const sml_prop_failure *fl = &res->failures[f];
                if (fl->outcome == SML_PROP_ERROR && !sml_mut_error_is_kernels(k, fl->message)) {
                    snprintf(r->note, sizeof r->note, "engine error on %s %s (not a kill): %.300s",
                             sml_op_name((sml_op)op), sml_dtype_name((sml_dtype)dt), fl->message);
                    continue;
                }
                from_failure(r, fl);
                snprintf(r->how, sizeof r->how, "standard");
                break;
            }
            if (!r->k.killed && res->outcome == SML_PROP_SKIP)
                snprintf(r->note, sizeof r->note, "%s", res->note);
        }
    }
    free(res);
    const sml_mut_hint *h = &m->hint;
    if (!r->k.killed && o->targeted && h->shape.rows > 0 &&
        (o->only_op < 0 || o->only_op == (int)h->shape.op) &&
        (o->only_dt < 0 || o->only_dt == (int)h->shape.dtype) && base->only_case < 0) {
        sml_mut_kill tk;
        sml_status s = sml_mut_targeted_run(k, h, base, &tk);
        if (tk.killed) {
            int64_t std_cases = r->std_cases;
            r->k = tk;
            r->std_cases = std_cases;
            r->op = h->shape.op;
            r->dt = h->shape.dtype;
            snprintf(r->how, sizeof r->how, "targeted");
        } else {
            snprintf(r->note, sizeof r->note, "targeted shape (%lld cases): %.340s",
                     (long long)tk.cases,
                     s != SML_OK ? (tk.message[0] ? tk.message : sml_strerror(s))
                                 : "no property failed");
        }
    }
    if (r->k.killed) {
        snprintf(r->verdict, sizeof r->verdict, "killed");
        replay_on_mutant(r);
    }
    r->seconds = sml_prop_now() - t0;
}

/* ---- checks made here: the control, the corpus -------------------------------------------- */

static void check_control(mrow *r) {
    r->counted = 0;
    if (!r->k.killed) return;
    const sml_kernel *control = sml_kernel_find(r->m->parent);
    if (!r->k.repro[0]) {
        snprintf(r->control, sizeof r->control,
                 "no reproducer was saved, so the kill cannot be checked");
        return;
    }
    if (!control) {
        snprintf(r->control, sizeof r->control, "control '%s' is not in the registry",
                 r->m->parent);
        return;
    }
    sml_prop_replay_result rr;
    sml_status s = sml_prop_replay(r->k.repro, control, NULL, NULL, &rr);
    if (s != SML_OK || rr.outcome != SML_PROP_PASS) {
        snprintf(r->control, sizeof r->control, "the control %s %s it too (%s): %.280s",
                 control->name,
                 s != SML_OK                   ? "cannot replay"
                 : rr.outcome == SML_PROP_SKIP ? "skips"
                                               : "fails",
                 s != SML_OK ? sml_strerror(s) : sml_prop_outcome_name(rr.outcome), rr.message);
        return;
    }
    r->counted = 1;
    snprintf(r->control, sizeof r->control, "%s passes it", control->name);
}

/* Copy the reproducer into the corpus if every registered kernel passes it. */
static void save_to_corpus(const opts *o, mrow *r) {
    if (!o->save_regr || !r->counted) return;
    double bytes = tensor_bytes(&r->k, r->dt);
    if (bytes > CORPUS_MAX_BYTES) {
        snprintf(r->saved, sizeof r->saved,
                 "(kept in the build tree: replaying it needs %.1f GiB per tensor)",
                 bytes / (double)(1u << 30));
        return;
    }
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        sml_prop_replay_result rr;
        if (sml_prop_replay(r->k.repro, k, NULL, NULL, &rr) != SML_OK) continue;
        if (rr.outcome == SML_PROP_FAIL || rr.outcome == SML_PROP_ERROR) {
            snprintf(r->saved, sizeof r->saved,
                     "(not added to the corpus: registered kernel %s fails it: %.200s)", k->name,
                     rr.message);
            return;
        }
    }
    sml_prop_case c;
    sml_prop_repro meta;
    char err[512], cmd[1200];
    if (sml_prop_repro_load(r->k.repro, &c, &meta, err, sizeof err) != SML_OK) {
        snprintf(r->saved, sizeof r->saved, "(could not read it back: %.300s)", err);
        return;
    }
    snprintf(cmd, sizeof cmd, "./build/tests/mutants/%s --replay", TEST);
    if (sml_prop_repro_save(o->save_regr, &c, &meta, cmd, r->saved, sizeof r->saved, err,
                            sizeof err) != SML_OK)
        snprintf(r->saved, sizeof r->saved, "(could not save: %.300s)", err);
    sml_prop_case_free(&c);
}

/* ---- children -------------------------------------------------------------------------------- */

static int spawn(const opts *o, const sml_gpu_mutant *m, double share, double deadline_s, mrow *r) {
    char result[256], secs[32];
    snprintf(result, sizeof result, "%s/%s.%ld.result", SML_PROP_SAVE_DIR, m->kernel.name,
             (long)getpid());
    sml_mkdir_p(SML_PROP_SAVE_DIR);
    remove(result);
    snprintf(secs, sizeof secs, "%.1f", share);
    const char *args[MAX_FWD + 16];
    int n = 0;
    args[n++] = o->argv0;
    args[n++] = "--mutant";
    args[n++] = m->kernel.name;
    args[n++] = "--result";
    args[n++] = result;
    args[n++] = "--seconds";
    args[n++] = secs;
    if (!o->targeted) args[n++] = "--no-targeted";
    if (o->verbose) args[n++] = "--verbose";
    for (int i = 0; i < o->nfwd; i++) args[n++] = o->fwd[i];
    args[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        execv("/proc/self/exe", (char *const *)args);
        execv(o->argv0, (char *const *)args);
        _exit(127);
    }
    const double t0 = sml_prop_now();
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return 0;
        if (sml_prop_now() - t0 > deadline_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            snprintf(r->verdict, sizeof r->verdict, "error");
            snprintf(r->note, sizeof r->note, "the child ran past %.0f s and was killed",
                     deadline_s);
            return 1;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!read_record(result, r)) {
        snprintf(r->verdict, sizeof r->verdict, "error");
        if (WIFSIGNALED(status))
            snprintf(r->note, sizeof r->note, "the child died of signal %d before reporting",
                     WTERMSIG(status));
        else
            snprintf(r->note, sizeof r->note, "the child exited with %d and no record",
                     WEXITSTATUS(status));
    }
    remove(result);
    return 1;
}

/* ---- the table -------------------------------------------------------------------------------- */

static void shape_str(char *b, size_t n, int64_t rows, int64_t cols, int64_t ld, int64_t off) {
    int k = snprintf(b, n, "%lldx%lld", (long long)rows, (long long)cols);
    if (ld != cols && k > 0 && (size_t)k < n)
        k += snprintf(b + k, n - (size_t)k, " ld %lld", (long long)ld);
    if (off && k > 0 && (size_t)k < n) snprintf(b + k, n - (size_t)k, " +%lld", (long long)off);
}

static void killer_str(char *b, size_t n, const mrow *r) {
    if (!r->k.killed)
        snprintf(b, n, "%s", !strcmp(r->verdict, "error") ? "ERROR" : "SURVIVED");
    else
        snprintf(b, n, "%s%s", sml_prop_name(r->k.prop),
                 r->k.outcome == SML_PROP_ERROR ? " (error)" : "");
}

static const char *basename_of(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void print_table(FILE *f, int md, mrow *rows, int n, uint64_t seed) {
    if (md) {
        fprintf(f, "| # | mutant | copies | killed by | how | op | dtype | cases | shrunk | "
                   "reproducer |\n");
        fprintf(f, "|---|---|---|---|---|---|---|---|---|---|\n");
    } else {
        fprintf(f, "\n%-3s %-19s %-7s %-24s %-9s %-12s %-5s %7s %-22s %s\n", "#", "mutant",
                "copies", "killed by", "how", "op", "dtype", "cases", "shrunk", "reproducer");
    }
    for (int i = 0; i < n; i++) {
        mrow *r = &rows[i];
        char num[8], killer[64], cases[48], shrunk[96], repro[1100];
        if (r->m->item)
            snprintf(num, sizeof num, "%d", r->m->item);
        else
            snprintf(num, sizeof num, "+");
        killer_str(killer, sizeof killer, r);
        if (r->k.killed && r->k.outcome != SML_PROP_ERROR && !r->counted) {
            size_t L = strlen(killer);
            snprintf(killer + L, sizeof killer - L, " (NOT COUNTED)");
        }
        if (!r->k.killed)
            snprintf(cases, sizeof cases, "%lld", (long long)r->std_cases);
        else if (!strcmp(r->how, "targeted"))
            snprintf(cases, sizeof cases, "%lld (+%lld std)", (long long)r->k.cases,
                     (long long)r->std_cases);
        else
            snprintf(cases, sizeof cases, "%lld", (long long)r->k.cases);
        if (r->k.killed)
            shape_str(shrunk, sizeof shrunk, r->k.s_rows, r->k.s_cols, r->k.s_ld, r->k.s_offset);
        else
            snprintf(shrunk, sizeof shrunk, "-");
        if (r->saved[0] && r->saved[0] != '(')
            snprintf(repro, sizeof repro, "%s", r->saved);
        else if (r->k.repro[0])
            snprintf(repro, sizeof repro, "%s", basename_of(r->k.repro));
        else
            snprintf(repro, sizeof repro, "-");
        const char *how =
            r->k.killed ? (!strcmp(r->how, "targeted") ? "targeted" : "standard") : "-";
        const char *op = r->k.killed ? sml_op_name(r->op) : "",
                   *dt = r->k.killed ? sml_dtype_name(r->dt) : "";
        if (md)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", num,
                    r->m->kernel.name, r->m->parent, killer,
                    !strcmp(how, "targeted") ? "killed with targeted shape" : how, op, dt, cases,
                    shrunk, repro);
        else
            fprintf(f, "%-3s %-19s %-7s %-24s %-9s %-12s %-5s %7s %-22s %s\n", num,
                    r->m->kernel.name, r->m->parent, killer, how, op, dt, cases, shrunk, repro);
    }
    if (md) {
        fprintf(f,
                "\nRun seed 0x%016llx. \"cases\": cases until the kill (for targeted kills, the\n"
                "targeted cases, plus the standard cases it survived first); \"shrunk\": rows x "
                "cols of\n"
                "the shrunk reproducer.\n",
                (unsigned long long)seed);
        for (int i = 0; i < n; i++) {
            mrow *r = &rows[i];
            fprintf(f, "\n- `%s` (%s): %s", r->m->kernel.name, r->verdict,
                    r->k.killed ? r->k.message : r->note);
            if (r->k.killed)
                fprintf(f, " [control: %s; replays on the mutant: %s]", r->control,
                        r->replays < 0 ? "not tried"
                        : r->replays   ? "yes"
                                       : "no (flaky)");
            if (r->saved[0] == '(') fprintf(f, " %s", r->saved);
        }
        fprintf(f, "\n");
    }
}

static void print_details(mrow *rows, int n) {
    printf("\n");
    for (int i = 0; i < n; i++) {
        mrow *r = &rows[i];
        printf("%s: %s", r->m->kernel.name, r->verdict);
        if (r->k.killed) {
            printf(" by %s at case %lld of %s %s %s (%s, drawn %lldx%lld), %lld standard cases in "
                   "%.1f s\n",
                   sml_prop_name(r->k.prop), (long long)r->k.cases, r->how, sml_op_name(r->op),
                   sml_dtype_name(r->dt), r->k.family, (long long)r->k.rows, (long long)r->k.cols,
                   (long long)r->std_cases, r->std_seconds);
            printf("  %s\n  control: %s; replays on the mutant: %s\n", r->k.message, r->control,
                   r->replays < 0 ? "not tried"
                   : r->replays   ? "yes"
                                  : "no (flaky)");
            printf("  reproducer: %s%s%s\n", r->k.repro, r->saved[0] ? "\n  corpus: " : "",
                   r->saved);
        } else {
            printf(" after %lld standard cases in %.1f s%s%s\n", (long long)r->std_cases,
                   r->std_seconds, r->note[0] ? ": " : "", r->note);
        }
    }
}

/* ---- main ------------------------------------------------------------------------------------ */

static int usage(const char *argv0, int rc) {
    fprintf(rc ? stderr : stdout,
            "usage: %s [--mutant NAME] [--op OP] [--dtype DT] [--no-targeted] [--save-regressions "
            "DIR]\n"
            "       [--table FILE] [--verbose] [--seconds S] [engine flags]\n"
            "       %s --replay FILE [--kernel K]\n       %s --list\nengine flags:\n%s",
            argv0, argv0, argv0, sml_prop_flags_help());
    return rc;
}

static int replay_one(const opts *o) {
    const sml_kernel *k = NULL;
    if (o->replay_kernel) {
        k = sml_gpu_mutant_find(o->replay_kernel, NULL);
        if (!k) k = sml_kernel_find(o->replay_kernel);
        if (!k) {
            fprintf(stderr, "%s: no mutant or kernel named '%s'\n", TEST, o->replay_kernel);
            return 2;
        }
    }
    sml_prop_replay_result r;
    sml_status s = sml_prop_replay(o->replay, k, sml_gpu_mutant_find, NULL, &r);
    if (s != SML_OK) {
        fprintf(stderr, "%s: %s: %s\n", TEST, sml_strerror(s), r.message);
        return 2;
    }
    printf("%s on %s %s %lldx%lld (ld %lld, offset %lld), property %s: %s (recorded: %s)\n  %s\n",
           r.kernel, sml_op_name(r.op), sml_dtype_name(r.dtype), (long long)r.rows,
           (long long)r.cols, (long long)r.ld, (long long)r.offset, sml_prop_name(r.prop),
           r.outcome == SML_PROP_FAIL    ? "STILL FAILS"
           : r.outcome == SML_PROP_ERROR ? "STILL ERRORS"
                                         : sml_prop_outcome_name(r.outcome),
           r.recorded, r.message);
    return r.outcome == SML_PROP_FAIL || r.outcome == SML_PROP_ERROR ? 1 : 0;
}

static void mask_str(char *b, size_t n, unsigned mask, int ops) {
    b[0] = 0;
    for (int i = 0; i < (ops ? SML_OP_COUNT : SML_DTYPE_COUNT); i++) {
        if (!(mask >> i & 1)) continue;
        size_t L = strlen(b);
        snprintf(b + L, n - L, "%s%s", L ? "," : "",
                 ops ? sml_op_name((sml_op)i) : sml_dtype_name((sml_dtype)i));
    }
}

static void list_zoo(void) {
    for (size_t i = 0; i < sml_gpu_mutant_count(); i++) {
        const sml_gpu_mutant *m = sml_gpu_mutant_at(i);
        char num[8], ops[96], dts[32];
        if (m->item)
            snprintf(num, sizeof num, "%d", m->item);
        else
            snprintf(num, sizeof num, "+");
        mask_str(ops, sizeof ops, m->kernel.ops, 1);
        mask_str(dts, sizeof dts, m->kernel.dtypes, 0);
        printf("%-2s %-19s copy of %s (%s), %s %s\n   bug: %s\n   expect: %s\n", num,
               m->kernel.name, m->parent, m->kernel.file, ops, dts, m->bug, m->expect);
        if (m->hint.shape.rows) {
            char shape[96];
            shape_str(shape, sizeof shape, m->hint.shape.rows, m->hint.shape.cols,
                      m->hint.shape.ld ? m->hint.shape.ld : m->hint.shape.cols,
                      m->hint.shape.offset);
            printf("   targeted shape: %s %s %s, %s logits, %d cases: %s\n", shape,
                   sml_op_name(m->hint.shape.op), sml_dtype_name(m->hint.shape.dtype),
                   m->hint.family, m->hint.cases, m->hint.why);
        }
        if (m->sanitizer) printf("   sanitizer: %s must catch it\n", m->sanitizer);
    }
}

int main(int argc, char **argv) {
    opts o;
    memset(&o, 0, sizeof o);
    o.argv0 = argv[0];
    o.only_op = o.only_dt = -1;
    o.targeted = 1;
    o.table = SML_MUT_TABLE_PATH;
    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_GPU);
    /* The budget docs/MUTANTS.md's table was measured with: 30 s per op and dtype, sizes
     * ramping with time as well as cases (so a mutant that only big shapes expose meets
     * them within seconds). The property suite's GPU profile has since moved to a case-count
     * ramp; the mutation test keeps its own until it is re-measured. */
    cfg.max_seconds = 30.0;
    cfg.ramp_by_time = 1;
    cfg.total_seconds = DEFAULT_BUDGET;
    sml_prop_config_env(&cfg);
    for (int i = 1; i < argc;) {
        int at = i;
        const int is_seconds = !strcmp(argv[i], "--seconds");
        const double per_config = cfg.max_seconds;
        int r = sml_prop_config_flag(&cfg, argc, argv, &i);
        if (r < 0) return usage(argv[0], 2);
        if (r > 0) {
            /* --seconds is the whole test's (or a child's) budget; each op and dtype keeps the
             * standard budget's own limit. */
            if (is_seconds) cfg.max_seconds = per_config;
            for (int j = at; j < i && !is_seconds && o.nfwd < MAX_FWD; j++)
                o.fwd[o.nfwd++] = argv[j];
            continue;
        }
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            o.list = 1;
            i++;
            continue;
        }
        if (!strcmp(a, "--no-targeted")) {
            o.targeted = 0;
            i++;
            continue;
        }
        if (!strcmp(a, "--verbose")) {
            o.verbose = 1;
            i++;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(argv[0], 0);
        if (!v) return usage(argv[0], 2);
        if (!strcmp(a, "--mutant") || !strcmp(a, "--kernel"))
            o.only = v;
        else if (!strcmp(a, "--replay"))
            o.replay = v;
        else if (!strcmp(a, "--result"))
            o.result = v;
        else if (!strcmp(a, "--save-regressions"))
            o.save_regr = v;
        else if (!strcmp(a, "--table"))
            o.table = v;
        else if (!strcmp(a, "--op")) {
            sml_op op;
            if (sml_op_parse(v, &op) != SML_OK) return usage(argv[0], 2);
            o.only_op = op;
        } else if (!strcmp(a, "--dtype")) {
            sml_dtype dt;
            if (sml_dtype_parse(v, &dt) != SML_OK) return usage(argv[0], 2);
            o.only_dt = dt;
        } else
            return usage(argv[0], 2);
        i += 2;
    }
    if (o.list) {
        list_zoo();
        return 0;
    }
    if (o.replay) {
        o.replay_kernel = o.only;
        int g = sml_test_require_gpu(TEST);
        if (g) return g;
        return replay_one(&o);
    }
    if (o.only && !sml_gpu_mutant_by_name(o.only)) {
        fprintf(stderr, "%s: no mutant named '%s' (--list shows them)\n", TEST, o.only);
        return 2;
    }
    int g = sml_test_require_gpu(TEST);
    if (g) return g;
    o.budget = cfg.total_seconds > 0 ? cfg.total_seconds : DEFAULT_BUDGET;

    char rerun[1024], replay[1100];
    snprintf(rerun, sizeof rerun, "%s", argv[0]);
    snprintf(replay, sizeof replay, "%s --replay", argv[0]);
    cfg.rerun_cmd = rerun;
    cfg.replay_cmd = replay;
    cfg.regressions_dir = NULL; /* measure the generators, not the corpus the mutants made */
    cfg.stop_on_failure = 1;
    cfg.save_dir = SML_PROP_SAVE_DIR "/gpu-mutants";
    cfg.progress = stderr;
    FILE *devnull = NULL;
    if (o.verbose)
        cfg.log = stdout;
    else
        cfg.log = devnull =
            fopen("/dev/null", "w"); /* the table is the report; mutants fail by design */

    if (o.result) { /* child: one mutant, the record to a file */
        mrow r;
        run_mutant(&o, &cfg, sml_gpu_mutant_by_name(o.only), &r);
        int ok = write_record(o.result, &r);
        if (devnull) fclose(devnull);
        return ok ? 0 : 1;
    }

    size_t nm = sml_gpu_mutant_count();
    mrow *rows = calloc(nm, sizeof *rows);
    if (!rows) return 1;
    int n = 0;
    printf("%s: run seed 0x%016llx, standard GPU budget (%lld cases, %.0f s per mutant/op/dtype), "
           "%.0f s for the whole test\n",
           TEST, (unsigned long long)cfg.seed, (long long)cfg.max_cases, cfg.max_seconds, o.budget);
    fflush(stdout);
    const double t0 = sml_prop_now();
    int todo = 0;
    for (size_t i = 0; i < nm; i++)
        todo += !o.only || !strcmp(o.only, sml_gpu_mutant_at(i)->kernel.name);
    for (size_t i = 0; i < nm; i++) {
        const sml_gpu_mutant *m = sml_gpu_mutant_at(i);
        if (o.only && strcmp(o.only, m->kernel.name)) continue;
        mrow *r = &rows[n++];
        if (o.only) {
            sml_prop_config c = cfg;
            run_mutant(&o, &c, m, r);
            if (cuda_fault(
                    r)) /* this process's CUDA context is gone: the control cannot run here */
                snprintf(r->note, sizeof r->note,
                         "the kill was a CUDA fault: run without --mutant to check it "
                         "against the control in a clean process");
        } else {
            double share = (o.budget - (sml_prop_now() - t0)) / (double)(todo - (n - 1));
            if (share < MIN_SHARE) share = MIN_SHARE;
            memset(r, 0, sizeof *r);
            r->m = m;
            r->replays = -1;
            fprintf(stderr, "== %s (%s copy): %s; up to %.0f s of standard budget\n",
                    m->kernel.name, m->parent, m->bug, share);
            if (!spawn(&o, m, share, share + CHILD_GRACE, r)) {
                snprintf(r->verdict, sizeof r->verdict, "error");
                snprintf(r->note, sizeof r->note, "could not start a child process: %s",
                         strerror(errno));
            }
        }
        if (!(o.only && cuda_fault(r)))
            check_control(r);
        else
            snprintf(r->control, sizeof r->control, "not checked in this process (CUDA fault)");
        save_to_corpus(&o, r);
    }

    sml_tally t = {TEST, 0, 0, 0};
    int killed = 0, targeted = 0;
    for (int i = 0; i < n; i++) {
        mrow *r = &rows[i];
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "%s --mutant %s", argv[0], r->m->kernel.name);
        if (r->counted || (o.only && r->k.killed && cuda_fault(r))) {
            killed++;
            targeted += !strcmp(r->how, "targeted");
            sml_tally_pass(&t);
        } else if (r->k.killed) {
            sml_tally_fail(&t, cmd, "mutant %s: the kill by %s does not count: %s",
                           r->m->kernel.name, sml_prop_name(r->k.prop), r->control);
        } else if (!strcmp(r->verdict, "error")) {
            sml_tally_fail(&t, cmd, "mutant %s: the harness failed: %s", r->m->kernel.name,
                           r->note);
        } else {
            sml_tally_fail(&t, cmd, "mutant %s (%s) survived %lld standard cases%s%s",
                           r->m->kernel.name, r->m->bug, (long long)r->std_cases,
                           r->note[0] ? "; " : "", r->note);
        }
    }
    print_details(rows, n);
    print_table(stdout, 0, rows, n, cfg.seed);
    printf("\nmutation score: %d/%d killed (%d with a targeted shape) in %.1f s\n", killed, n,
           targeted, sml_prop_now() - t0);
    if (!o.only) {
        FILE *f = fopen(o.table, "w");
        if (f) {
            fprintf(f, "# Mutation table (%s)\n\n", TEST);
            print_table(f, 1, rows, n, cfg.seed);
            fprintf(f, "\nMutation score: %d/%d killed (%d with a targeted shape).\n", killed, n,
                    targeted);
            fclose(f);
            printf("table: %s\n", o.table);
        }
    }
    free(rows);
    if (devnull) fclose(devnull);
    return sml_tally_finish(&t);
}
