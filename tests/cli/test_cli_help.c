/* test_cli_help.c: the help a user reads is the parser the command runs. Every command's
 * --help fits 60 lines of at most 100 characters; every option its help lists is one the
 * command parses (a value option missing its value is refused naming the option and its valid
 * values; a flag is taken, and an unknown option after it is the one refused); an unknown
 * option is refused with the command's options listed; a bad --op or --dtype names the valid
 * ones; docs/CLI.md is what `softmax-lab help --reference` prints from the same tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_filter.h"
#include "cli_exec.h"
#include "test_support.h"

static sml_tally T = {"test_cli_help", 0, 0, 0};
static sml_case_filter F;
static char TMP[256], LOG[1 << 17], HELP[1 << 17];

#define MAX_LINES 60
#define MAX_WIDTH 100

static int run(const char *const *args) { return sml_run_cli(F.cli, TMP, args, LOG, sizeof LOG); }

static void check(int n, int ok, const char *what) {
    sml_test_check_case(&T, &F, LOG, n, ok, what);
}

/* Lines of text, and the longest one's width, into *lines and *widest. */
static void measure(const char *text, int *lines, int *widest) {
    *lines = *widest = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        (*lines)++;
        if ((int)len > *widest) *widest = (int)len;
        p += len + (p[len] == '\n');
    }
}

/* The commands main's --help lists: "  NAME     what it does". */
static int commands(char names[][16], int max) {
    const char *a[] = {"--help", NULL};
    if (run(a) != 0) return 0;
    int n = 0;
    for (const char *p = LOG; (p = strstr(p, "\n  ")) && n < max; p++) {
        char name[16];
        if (sscanf(p + 3, "%15[a-z] ", name) == 1 && p[3] != ' ' && p[3 + strlen(name)] == ' ')
            snprintf(names[n++], 16, "%s", name);
    }
    return n;
}

/* 1. --help of every command fits 60 lines of at most 100 characters; so does the usage. */
static void sizes(char names[][16], int n) {
    char bad[1024] = "";
    const char *top[] = {"--help", NULL};
    int lines, widest;
    run(top);
    measure(LOG, &lines, &widest);
    if (widest > MAX_WIDTH) snprintf(bad, sizeof bad, " usage: widest %d;", widest);
    for (int i = 0; i < n; i++) {
        const char *a[] = {names[i], "--help", NULL};
        int rc = run(a);
        measure(LOG, &lines, &widest);
        if (rc != 0 || lines > MAX_LINES || widest > MAX_WIDTH)
            snprintf(bad + strlen(bad), sizeof bad - strlen(bad),
                     " %s: exit %d, %d lines, widest %d;", names[i], rc, lines, widest);
    }
    if (bad[0]) snprintf(LOG, sizeof LOG, "over the limits:%s\n", bad);
    check(1, !bad[0], "every --help fits 60 lines of at most 100 characters");
}

/* The options of one command's --help: "  --name" at the start of a line; *has_arg[i] when a
 * placeholder follows the name. Those under "Plugin kernels:" and "Plan tables:" (taken out
 * before the command parses) are marked shared. */
typedef struct opt_line {
    char name[48];
    int has_arg, shared;
} opt_line;

static int options_of(const char *help, opt_line *o, int max) {
    int n = 0, shared = 0;
    for (const char *p = help; *p && n < max;) {
        size_t len = strcspn(p, "\n");
        if (!strncmp(p, "Plugin kernels:", 15) || !strncmp(p, "Plan tables:", 12)) shared = 1;
        if (!strncmp(p, "  --", 4)) {
            size_t k = strcspn(p + 4, " \n");
            snprintf(o[n].name, sizeof o[n].name, "--%.*s", (int)k, p + 4);
            o[n].has_arg = p[4 + k] == ' ' && p[5 + k] != ' ';
            o[n].shared = shared;
            n++;
        }
        p += len + (p[len] == '\n');
    }
    return n;
}

/* 2. Each option of each --help is parsed: a value option without its value says
 * "--NAME needs a value (valid: ...)", a flag is taken (the unknown option after it is the
 * one refused). 3. An unknown option is refused with each of the command's options named. */
static void parity(char names[][16], int n) {
    char bad[4096] = "", unlisted[2048] = "";
    int count = 0;
    for (int i = 0; i < n; i++) {
        const char *h[] = {names[i], "--help", NULL};
        run(h);
        snprintf(HELP, sizeof HELP, "%s", LOG);
        opt_line o[64];
        int no = options_of(HELP, o, 64);
        for (int j = 0; j < no; j++, count++) {
            char want[160];
            const char *a[] = {names[i], o[j].name, o[j].has_arg ? NULL : "--no-such-option", NULL};
            int rc = run(a);
            if (o[j].has_arg)
                snprintf(want, sizeof want, "%.47s needs a value (valid: ", o[j].name);
            else
                snprintf(want, sizeof want, "unknown option '--no-such-option'");
            if (rc != 2 || !strstr(LOG, want))
                snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %.15s %.47s (exit %d);",
                         names[i], o[j].name, rc);
        }
        const char *u[] = {names[i], "--no-such-option", NULL};
        int rc = run(u);
        for (int j = 0; j < no; j++) {
            char item[64], last[64];
            snprintf(item, sizeof item, "%.47s,", o[j].name);
            snprintf(last, sizeof last, "%.47s)", o[j].name);
            int named = strstr(LOG, "(its options: ") && (strstr(LOG, item) || strstr(LOG, last));
            if (!o[j].shared && (rc != 2 || !named))
                snprintf(unlisted + strlen(unlisted), sizeof unlisted - strlen(unlisted),
                         " %.15s %.47s;", names[i], o[j].name);
        }
    }
    snprintf(LOG, sizeof LOG,
             "%d options in the helps (80 or more wanted); those the parser does not take as the "
             "help says:%s\n",
             count, bad);
    check(2, count >= 80 && !bad[0],
          "every option of every --help is parsed: a value is asked for with its valid values");
    snprintf(LOG, sizeof LOG, "options an unknown option's message does not list:%s\n", unlisted);
    check(3, !unlisted[0], "an unknown option is refused with the command's options listed");
}

/* 4. A bad op or dtype names every valid one, in the suite and with --input. */
static void values(void) {
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    char p[600], err[512];
    snprintf(p, sizeof p, "%s/x.npy", TMP);
    FILE *f = fopen(p, "wb");
    if (f) { /* a 2x4 float32 .npy, header padded to 128 bytes */
        char head[128];
        memset(head, ' ', sizeof head);
        memcpy(head, "\x93NUMPY\x01\x00\x76\x00", 10);
        const char *d = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }";
        memcpy(head + 10, d, strlen(d));
        head[127] = '\n';
        fwrite(head, 1, sizeof head, f);
        fwrite(x, sizeof x[0], 8, f);
        fclose(f);
    }
    (void)err;
    struct {
        const char *args[8];
        const char *needs[5];
    } cases[] = {
        {{"check", "--op", "softmx", NULL},
         {"softmax,", "log_softmax,", "softmax_bwd,", "log_softmax_bwd", "all"}},
        {{"check", "--dtype", "fp33", NULL}, {"fp32,", "fp16,", "bf16", "all", NULL}},
        {{"check", "--input", "x.npy", "--op", "softmx", NULL},
         {"softmax,", "log_softmax,", "softmax_bwd,", "log_softmax_bwd", "all"}},
        {{"check", "--input", "x.npy", "--dtype", "fp33", NULL}, {"fp32,", "fp16,", "bf16", NULL}},
        {{"bench", "--op", "softmx", NULL}, {"softmax,", "log_softmax_bwd", "all", NULL}},
        {{"bench", "--l2", "hot", NULL}, {"cold or warm", NULL}},
        {{"bench", "--sweep", "nosuch", NULL}, {"seeds,", "standard", NULL}},
        {{"tune", "--dtype", "fp33", NULL}, {"fp32,", "bf16", NULL}},
        {{"plot", "a.json", "b.svg", "--op", "softmx", NULL},
         {"softmax,", "log_softmax_bwd", NULL}},
        {{"check", "--props", "nosuch", NULL}, {"agreement,", "bwd_sum,", "all", NULL}},
        {{"check", "--kern", "cpu_naive", NULL},
         {"unknown option '--kern' (its options: --kernel,", NULL}},
        {{"check", "--kernel", "nosuch", NULL},
         {"'nosuch'", "cpu_naive, cpu_online,", "or all", NULL}},
        {{"check", "--kernel", "cpu_naive", "--against", "nosuch", NULL},
         {"cpu_naive, cpu_online,", NULL}},
        {{"bench", "--backend", "cpu,nosuch", NULL},
         {"'nosuch'", "cpu_naive, cpu_online,", "gpu, cpu", NULL}},
        {{"bench", "--versus", "nosuch", NULL}, {"cpu_naive, cpu_online,", NULL}},
        {{"replay", "x.json", "--kernel", "nosuch", NULL}, {"cpu_naive, cpu_online,", NULL}},
    };
    char bad[2048] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run(cases[i].args), ok = rc == 2;
        for (int k = 0; k < 5 && cases[i].needs[k]; k++) ok = ok && strstr(LOG, cases[i].needs[k]);
        if (!ok) {
            snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "\n  exit %d:", rc);
            for (int k = 0; cases[i].args[k]; k++)
                snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %s", cases[i].args[k]);
            snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "\n  %.300s", LOG);
        }
    }
    snprintf(LOG, sizeof LOG, "refusals that do not name the valid values:%s\n", bad);
    check(4, !bad[0], "a bad value (or an abbreviated option) is refused naming the valid ones");
}

/* 5. docs/CLI.md is the reference the tables print. */
static void reference(void) {
    char path[1200], cmd[1600];
    snprintf(path, sizeof path, "%s/../../../docs/CLI.md", F.fixtures);
    const char *a[] = {"help", "--reference", NULL};
    int rc = run(a);
    char *doc = malloc(sizeof LOG);
    const char *text = doc ? cli_slurp(path, doc, sizeof LOG) : "";
    int same = rc == 0 && doc && !strcmp(text, LOG);
    snprintf(cmd, sizeof cmd, "%s help --reference > %s", F.cli, path);
    if (!same)
        snprintf(LOG, sizeof LOG,
                 "%s differs from `softmax-lab help --reference`; to update it: %s\n", path, cmd);
    check(5, same, "docs/CLI.md is what `softmax-lab help --reference` prints");
    free(doc);
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    if (sml_cli_setup(T.test, F.cli, TMP, sizeof TMP)) return 1;
    char names[32][16];
    int n = commands(names, 32);
    if (!sml_test_check(&T, n >= 9, F.repro, "softmax-lab --help lists %d commands, want 9+", n))
        return sml_tally_finish(&T);
    if (sml_case_filter_want(&F, 1)) sizes(names, n);
    if (sml_case_filter_want(&F, 2) || sml_case_filter_want(&F, 3)) parity(names, n);
    if (sml_case_filter_want(&F, 4)) values();
    if (sml_case_filter_want(&F, 5)) reference();
    char cmd[400], out[256];
    sml_shell(cmd, sizeof cmd, out, sizeof out, 0, "rm -rf '%s'", TMP);
    return sml_tally_finish(&T);
}
