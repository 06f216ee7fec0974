/* main.c: the command line over the library, as one call (libsoftmax_lab_cli): the
 * softmax-lab executable is this call, and a host that registers kernels of its own into the
 * one registry of libsoftmax_lab calls it to run every subcommand on them. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "plugins.h"
#include "softmax_lab_cli.h"
#include "worker/worker.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *help;
} COMMANDS[] = {
    {"bench", sml_cmd_bench, "time backends on shapes or named sweeps; write the decision ledger"},
    {"check", sml_cmd_check, "run the property suite, or check kernels on your own .npy logits"},
    {"replay", sml_cmd_replay, "re-run a saved reproducer and say whether it still fails"},
    {"compare", sml_cmd_compare, "compare two benchmark JSON files: FAST / SLOW / SAME / UNCLEAR"},
    {"plot", sml_cmd_plot, "SVG of GB/s against columns per backend from a ledger JSON"},
    {"targets", sml_cmd_targets, "the bandwidth targets T1-T6 for one kernel of a ledger JSON: met / missed rows"},
    {"list", sml_cmd_list, "print the kernel registry"},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *f) {
    fprintf(f, "usage: softmax-lab COMMAND [options]   (softmax-lab help COMMAND, or COMMAND --help)\n"
               "       softmax-lab --version\n\n");
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].help);
    fprintf(f, "\nexit status: 0 ok; 1 a failure was found (a kernel broke the contract, a gate or\n"
               "target was missed, a case got slower); 2 bad usage or input; 3 nothing was checked\n"
               "(a kernel or backend named on the command line could not run here, or nothing\n"
               "matched). An output that could not be written is never 0 and leaves the old file\n"
               "or none. Each command's --help gives its own codes.\n");
    fprintf(f, "\nCommands that take a kernel also take --load PATH (plugin kernels; env SML_LOAD).\n");
}

static int run_command(const char *name, int argc, char **argv) {
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, COMMANDS[i].name)) return sml_cli_run_with_plugins(name, COMMANDS[i].run, argc, argv);
    fprintf(stderr, "softmax-lab: unknown command '%s'\n", name);
    usage(stderr);
    return 2;
}

int sml_cli_main(int argc, char **argv) {
    /* Past a file-size limit a write must fail (and be reported, the old file kept) rather
     * than kill the process half-way through it. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("softmax-lab %s\n", SML_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout);
        return 0;
    }
    /* A worker process judged kernels run in (src/worker/worker.h), started by a supervisor. */
    if (!strcmp(argv[1], "__worker")) return sml_cli_run_with_plugins("__worker", sml_worker_main, argc - 2, argv + 2);
    if (!strcmp(argv[1], "help")) {
        if (argc > 3) {
            fprintf(stderr, "softmax-lab help: one command at a time\n");
            return 2;
        }
        char help[] = "--help";
        char *args[] = {help, NULL};
        return run_command(argv[2], 1, args);
    }
    return run_command(argv[1], argc - 2, argv + 2);
}
