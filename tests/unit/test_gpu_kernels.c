/* test_gpu_kernels: the edge-shape harness (src/edge/edge.h, installed as
 * softmax-lab-edge-shapes) driven as a test.
 *
 * With no arguments: first its CPU-side checks, which need no GPU:
 *   - the command line: each malformed one is refused with exit code 2, a well-formed one
 *     gives the values it names;
 *   - the case list: for every op and dtype, one-row cases on every `auto` column threshold
 *     (kernels/auto_dispatch.h) and one either side, and on the edge columns; every layout;
 *     no backward case in place; the two huge cases only without --no-huge and --cpu; the
 *     tall (sampled) cases only on the GPU;
 *   - an explicit shape gives one case per op and dtype in the layout its ld names, sampled
 *     with --sampled.
 * Then the whole shape set on every GPU kernel of the registry (exit 77 with no GPU).
 * Any arguments are the harness's own (edge.h): a failure's reproduce line re-runs one case
 * through this program, and ctest runs the harness's sampled path on the CPU kernels with
 * them (tests/unit/CMakeLists.txt). */
#include <stdio.h>
#include <string.h>

#include "edge/edge.h"
#include "kernels/auto_dispatch.h"
#include "test_support.h"

#define NAME     "test_gpu_kernels"
#define MAX_SEEN 4096

typedef struct seen {
    int n;
    sml_edge_case c[MAX_SEEN];
} seen;

static void collect(void *arg, const sml_edge_case *t) {
    seen *s = arg;
    if (s->n < MAX_SEEN) s->c[s->n] = *t;
    s->n++;
}

static int parse_args(sml_edge_opts *o, const char *line) {
    char buf[512], *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    argv[argc++] = (char *)NAME;
    for (char *tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    return sml_edge_parse(o, argc, argv);
}

static void list_cases(seen *s, const char *line) {
    static sml_edge_opts o;
    s->n = 0;
    if (parse_args(&o, line) == 0) sml_edge_cases(&o, collect, s);
}

static int has_case(const seen *s, sml_op op, sml_dtype dt, int64_t rows, int64_t cols) {
    for (int i = 0; i < s->n && i < MAX_SEEN; i++)
        if (s->c[i].op == op && s->c[i].dt == dt && s->c[i].rows == rows && s->c[i].cols == cols)
            return 1;
    return 0;
}

static void check_parse(sml_tally *t, const char *repro) {
    static const char *const bad[] = {
        "--rows 5",                              /* rows without cols */
        "--rows 1 --cols 3 --ld 2",              /* ld < cols */
        "--plant value",                         /* --plant without --sampled */
        "--rows 3 --cols 3 --sampled --plant x", /* no such damage */
        "--sampled",                             /* --sampled without a shape */
        "--op nope",
        "--dtype fp64",
        "--kernel no_such_kernel",
        "--known-deviation cpu_naive", /* a deviation comes from the kernel's own line only */
        "--bogus 1",
        "--seed", /* a value missing */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sml_edge_opts o;
        int rc = parse_args(&o, bad[i]);
        sml_expect(t, rc == 2, repro, 256, NULL, 0, "'%s' gave exit code %d, not 2", bad[i], rc);
    }
    sml_edge_opts o;
    int rc = parse_args(
        &o, "--cpu --kernel cpu_naive --op softmax_bwd --dtype bf16 --rows 300 --cols 1001 "
            "--ld 1008 --sampled --seed 7 --no-huge --plant twin --strict");
    sml_expect(
        t,
        rc == 0 && o.cpu && o.kernel && !strcmp(o.kernel, "cpu_naive") && o.op == SML_SOFTMAX_BWD &&
            o.dt == SML_BF16 && o.rows == 300 && o.cols == 1001 && o.ld == 1008 && o.sampled &&
            o.seed == 7 && !o.huge && o.plant && !strcmp(o.plant, "twin") && o.strict,
        repro, 256, NULL, 0, "a well-formed command line parsed to other values (exit %d)", rc);
}

static void check_thresholds(sml_tally *t, const char *repro, const seen *s) {
    static const int64_t edges[] = {
        1,   2,    3,    31,   32,   33,   127,   128,
        129, 1023, 1024, 1025, 4096, 4097, 65536, ((int64_t)1 << 20) + 3};
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            int64_t missing = -1;
            for (int i = 0; i < SML_AUTO_N_COL_THRESHOLDS && missing < 0; i++)
                for (int d = -1; d <= 1; d++)
                    if (!has_case(s, (sml_op)op, (sml_dtype)dt, 1, sml_auto_col_threshold(i) + d))
                        missing = sml_auto_col_threshold(i) + d;
            for (size_t i = 0; i < sizeof edges / sizeof edges[0] && missing < 0; i++)
                if (!has_case(s, (sml_op)op, (sml_dtype)dt, 1, edges[i])) missing = edges[i];
            sml_expect(t, missing < 0, repro, 256, NULL, 0,
                       "%s %s: no one-row case of %lld columns", sml_op_name((sml_op)op),
                       sml_dtype_name((sml_dtype)dt), (long long)missing);
        }
}

static void check_layouts(sml_tally *t, const char *repro, const seen *s) {
    int layouts[SML_EDGE_LAYOUT_COUNT] = {0}, bwd_inplace = 0, huge = 0, tall = 0;
    for (int i = 0; i < s->n && i < MAX_SEEN; i++) {
        const sml_edge_case *c = &s->c[i];
        layouts[c->var]++;
        bwd_inplace += c->inplace && sml_op_is_backward(c->op);
        huge += (c->rows - 1) * c->ld + c->cols > ((int64_t)1 << 31);
        tall += c->sampled;
    }
    for (int v = 0; v < SML_EDGE_LAYOUT_COUNT; v++)
        sml_expect(t, layouts[v] > 0, repro, 256, NULL, 0, "no case in layout %d", v);
    sml_expect(t, bwd_inplace == 0, repro, 256, NULL, 0, "%d backward cases in place", bwd_inplace);
    sml_expect(t, huge == 2, repro, 256, NULL, 0, "%d cases past 2^31 elements, not 2", huge);
    sml_expect(t, tall > 0, repro, 256, NULL, 0, "no tall (sampled) case");
    sml_expect(t, s->n <= MAX_SEEN, repro, 256, NULL, 0, "%d cases, more than this test keeps",
               s->n);
}

static void check_lists(sml_tally *t, const char *repro) {
    static seen s;
    list_cases(&s, "");
    check_thresholds(t, repro, &s);
    check_layouts(t, repro, &s);
    const int all = s.n;
    list_cases(&s, "--no-huge");
    sml_expect(t, s.n == all - 2, repro, 256, NULL, 0, "--no-huge left %d of %d cases, not 2 fewer",
               s.n, all);
    list_cases(&s, "--cpu");
    int sampled = 0;
    for (int i = 0; i < s.n && i < MAX_SEEN; i++)
        sampled += s.c[i].sampled || s.c[i].rows > (1 << 20);
    sml_expect(t, s.n > 0 && sampled == 0, repro, 256, NULL, 0, "--cpu: %d cases, %d huge or tall",
               s.n, sampled);
    list_cases(&s, "--rows 300 --cols 1001 --ld 1008 --sampled --dtype fp16");
    int ok = s.n == SML_OP_COUNT;
    for (int i = 0; i < s.n && i < MAX_SEEN; i++)
        ok &= s.c[i].sampled && s.c[i].var == SML_EDGE_PADDED && s.c[i].dt == SML_F16 &&
              s.c[i].ld == 1008;
    sml_expect(t, ok, repro, 256, NULL, 0,
               "an explicit padded sampled fp16 shape gave %d cases, not %d padded "
               "sampled fp16 ones",
               s.n, SML_OP_COUNT);
    list_cases(&s, "--rows 7 --cols 33 --offset 1 --op softmax");
    sml_expect(t, s.n == SML_DTYPE_COUNT && s.c[0].var == SML_EDGE_MISALIGNED && s.c[0].offset == 1,
               repro, 256, NULL, 0,
               "an explicit offset shape gave %d cases, not %d misaligned ones", s.n,
               SML_DTYPE_COUNT);
}

int main(int argc, char **argv) {
    if (argc > 1) return sml_edge_main(NAME, argc, argv, NULL);
    sml_tally t = {NAME " (CPU checks of the harness)", 0, 0, 0};
    char repro[512];
    snprintf(repro, sizeof repro, "%s", argv[0]);
    check_parse(&t, repro);
    check_lists(&t, repro);
    int rc = sml_tally_finish(&t);
    if (rc) return rc;
    fflush(stdout);
    return sml_edge_main(NAME, argc, argv, NULL);
}
