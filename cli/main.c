/* softmax-lab: the command line over the library. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

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
    fprintf(f, "usage: softmax-lab COMMAND [options]   (softmax-lab COMMAND --help for its options)\n\n");
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].help);
}

int main(int argc, char **argv) {
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], COMMANDS[i].name)) return COMMANDS[i].run(argc - 2, argv + 2);
    fprintf(stderr, "softmax-lab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
