/* main.c: the command line over the library, as one call (libsoftmax_lab_cli): the
 * softmax-lab executable is this call, and a host that registers kernels of its own into the
 * one registry of libsoftmax_lab calls it to run every subcommand on them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argv_norm.h"
#include "commands.h"
#include "worker/describe.h"
#include "options.h"
#include "plans_flag.h"
#include "plugins.h"
#include "softmax_lab_cli.h"
#include "worker/worker.h"

/* Every command: its name, its function, whether it takes a kernel (and so --load and
 * SML_LOAD, plugins.c), whether it runs `auto` (and so --plans), its line in the usage, and
 * its options table (the help and the reference's section). */
static const struct {
    const char *name;
    int (*run)(int, char **);
    int takes_load; /* --load PATH: plugin kernels (plugins.c); 2: SML_LOAD too (it runs kernels) */
    int takes_plans; /* --plans PATH|off and SML_PLANS: auto's plan table (plans_flag.c) */
    const char *help;
    const sml_cli_spec *(*spec)(void);
} COMMANDS[] = {
    {"bench", sml_cmd_bench, 2, 1,
     "time backends on shapes or named sweeps; write the decision ledger", sml_spec_bench},
    {"check", sml_cmd_check, 2, 1,
     "run the property suite, or check kernels on your own .npy logits", sml_spec_check},
    {"replay", sml_cmd_replay, 2, 1, "re-run a saved reproducer and say whether it still fails",
     sml_spec_replay},
    {"compare", sml_cmd_compare, 1, 0,
     "compare two benchmark JSON files: FAST / SLOW / SAME / UNCLEAR", sml_spec_compare},
    {"plot", sml_cmd_plot, 0, 0, "SVG of GB/s against columns per backend from a ledger JSON",
     sml_spec_plot},
    {"targets", sml_cmd_targets, 1, 0,
     "the bandwidth targets of one kernel of a ledger JSON: met / missed rows", sml_spec_targets},
    {"merge", sml_cmd_merge, 0, 0,
     "join the results of a run's shards (--shard K/N) into one report", sml_spec_merge},
    {"tune", sml_cmd_tune, 0, 0, "time auto's candidate plans on this GPU; write its plan table",
     sml_spec_tune},
    {"list", sml_cmd_list, 2, 0, "print the kernel registry", sml_spec_list},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

/* The name usage shows: argv[0] as the caller gave it (the Python binding passes
 * "python3 -m softmax_lab"), its last path component for a path, "softmax-lab" without one. */
static const char *prog_name(const char *argv0) {
    if (!argv0 || !argv0[0]) return "softmax-lab";
    if (strchr(argv0, ' ')) return argv0;
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s COMMAND [options]   (%s help COMMAND, or COMMAND --help)\n"
            "       %s --version\n"
            "       %s help --reference   (every command's options: docs/CLI.md)\n\n",
            prog, prog, prog, prog);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].help);
    fprintf(f,
            "\nexit status: 0 ok; 1 a failure was found (a kernel broke the contract, a gate or\n"
            "target was missed, a case got slower); 2 bad usage or input; 3 nothing was checked\n"
            "(a kernel or backend named on the command line could not run here, or nothing\n"
            "matched). An output that could not be written is never 0 and leaves the old file\n"
            "or none. Each command's --help gives its own codes.\n");
    fprintf(f,
            "\nCommands that take a kernel also take --load PATH (plugin kernels; env SML_LOAD).\n"
            "check, bench and replay take --plans PATH|off (auto's plan table; env SML_PLANS).\n"
            "Options are also written --name=value; -- ends the options (later words are files);\n"
            "--json - and --md - write to standard output (the report goes to standard error).\n"
            "--json-nan null writes NaN and the infinities as JSON null (default: the strings\n"
            "\"nan\", \"inf\", \"-inf\"; softmax-lab's own readers take the strings).\n");
}

/* "--json -" and "--md -": the document goes to standard output, and what the command prints
 * for a person goes to standard error meanwhile, so the document can be piped. The "-" (a
 * string of the normalised copy, argv_norm.h) is replaced by "/dev/fd/N" of a copy of
 * standard output, which src/io/out_file.h writes in place; *saved is that copy (-1 when no
 * output is "-"). 0, or -1 when a descriptor or memory is not had. */
static int dash_to_stdout(int argc, char **argv, int *saved) {
    *saved = -1;
    for (int i = 0; i + 1 < argc; i++) {
        if ((strcmp(argv[i], "--json") && strcmp(argv[i], "--md")) || strcmp(argv[i + 1], "-"))
            continue;
        if (*saved < 0) {
            fflush(stdout);
            if ((*saved = dup(1)) < 0 || dup2(2, 1) < 0) return -1;
        }
        char *name = malloc(32);
        if (!name) return -1;
        snprintf(name, 32, "/dev/fd/%d", *saved);
        free(argv[i + 1]);
        argv[i + 1] = name;
    }
    return 0;
}

/* The copy of standard output while "--json -" or "--md -" sends what a person reads to
 * standard error (-1: none): a command that runs itself again in a worker process gives the
 * child the real standard output (src/worker/command.c). */
static int stdout_copy = -1;

int sml_cli_stdout(void) { return stdout_copy; }

/* The command line sml_cli_main was given (NULL-terminated), for a command that runs itself
 * again in a worker process through SML_COMMAND_ARGV's program (src/worker/command.c). */
static char *const *command_line;

char *const *sml_cli_line(void) { return command_line; }

static void restore_stdout(int saved) {
    stdout_copy = -1;
    if (saved < 0) return;
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
}

/* One command on its normalised arguments: --plans taken out and checked where the command
 * runs `auto`, --load where it takes a kernel (main's table says which). */
static int run_table_entry(size_t i, int argc, char **argv) {
    const char *name = COMMANDS[i].name;
    int help = 0;
    for (int a = 0; a < argc; a++) help |= !strcmp(argv[a], "--help") || !strcmp(argv[a], "-h");
    if (COMMANDS[i].takes_plans) {
        const int rc = sml_cli_take_plans(name, &argc, argv);
        if (rc) return rc;
    }
    if (!COMMANDS[i].takes_load) return COMMANDS[i].run(argc, argv);
    const int rc =
        sml_cli_run_with_plugins(name, COMMANDS[i].run, argc, argv, COMMANDS[i].takes_load == 2);
    if (help && COMMANDS[i].takes_plans) sml_cli_plans_help();
    return rc;
}

/* "--json-nan null|string": how JSON writes NaN and the infinities (json/json_write.h reads
 * SML_JSON_NAN, so workers and every writer of this process agree). Taken out of args (*n
 * shrinks; the strings are freed). 0, or 2 after the message for a bad value. */
static int take_json_nan(const char *name, int *n, char **args) {
    for (int i = 0; i < *n; i++) {
        if (strcmp(args[i], "--json-nan")) continue;
        const char *v = i + 1 < *n ? args[i + 1] : "";
        if (strcmp(v, "null") && strcmp(v, "string")) {
            fprintf(stderr, "softmax-lab %s: --json-nan takes null or string, not '%.40s'\n", name,
                    v);
            return 2;
        }
        setenv("SML_JSON_NAN", v, 1);
        free(args[i]);
        free(args[i + 1]);
        for (int j = i; j + 2 <= *n; j++) args[j] = args[j + 2];
        *n -= 2;
        i--;
    }
    return 0;
}

static int run_command(const char *prog, const char *name, int argc, char **argv) {
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, COMMANDS[i].name)) continue;
        int n = 0, version = 0;
        char **args = NULL;
        if (sml_cli_args_normalize(argc, argv, &n, &args, &version) != 0) {
            fprintf(stderr, "softmax-lab %s: out of memory reading the command line\n", name);
            return 2;
        }
        int rc = take_json_nan(name, &n, args), saved = -1;
        if (rc) {
            /* a bad --json-nan: said, exit 2 */
        } else if (version) {
            printf("softmax-lab %s\n", SML_VERSION);
        } else if (dash_to_stdout(n, args, &saved) != 0) {
            fprintf(stderr, "softmax-lab %s: cannot send an output to standard output\n", name);
            rc = 2;
        } else {
            stdout_copy = saved;
            /* The commands may reorder their argv (--load is taken out): they get a copy of
             * the pointers, and the strings are freed through args. */
            char **view = malloc(((size_t)n + 1) * sizeof *view);
            if (view) {
                memcpy(view, args, ((size_t)n + 1) * sizeof *view);
                rc = run_table_entry(i, n, view);
                free(view);
            } else {
                fprintf(stderr, "softmax-lab %s: out of memory reading the command line\n", name);
                rc = 2;
            }
        }
        restore_stdout(saved);
        sml_cli_args_free(n, args);
        return rc;
    }
    fprintf(stderr, "%s: unknown command '%s'\n", prog, name);
    usage(stderr, prog);
    return 2;
}

/* docs/CLI.md: the usage, then every command's section from its table, each with the shared
 * options it takes. */
static void print_reference(void) {
    printf("# The softmax-lab command line\n\n"
           "<!-- Made by `softmax-lab help --reference` from the commands' option tables "
           "(cli/);\n     test_cli_help fails when this file differs from it. -->\n\n```\n");
    usage(stdout, "softmax-lab");
    printf("```\n");
    const sml_opt_group load = SML_OPT_GROUP("Plugin kernels", sml_cli_plugin_opts),
                        plans = SML_OPT_GROUP("Plan tables", sml_cli_plans_opts);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        sml_cli_reference(stdout, COMMANDS[i].spec());
        if (COMMANDS[i].takes_load) sml_cli_reference_group(stdout, &load);
        if (COMMANDS[i].takes_plans) sml_cli_reference_group(stdout, &plans);
    }
}

int sml_cli_main(int argc, char **argv) {
    /* Past a file-size limit a write must fail (and be reported, the old file kept) rather
     * than kill the process half-way through it. */
    signal(SIGXFSZ, SIG_IGN);
    const char *prog = prog_name(argc > 0 ? argv[0] : NULL);
    command_line = argv;
    /* A command's worker process (src/worker/command.c) says when its command returned. */
    if (sml_worker_command_child()) {
        int rc = argc < 2 ? 2 : run_command(prog, argv[1], argc - 2, argv + 2);
        sml_worker_command_done(rc);
        return rc;
    }
    if (argc < 2) {
        usage(stderr, prog);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("softmax-lab %s\n", SML_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout, prog);
        return 0;
    }
    /* A worker process judged kernels run in (src/worker/worker.h), started by a supervisor. */
    if (!strcmp(argv[1], "__worker"))
        return sml_cli_run_with_plugins("__worker", sml_worker_main, argc - 2, argv + 2, 1);
    /* A plugin library's table, read for a process that does not load it (describe.c). */
    if (!strcmp(argv[1], "__describe"))
        return sml_cli_run_with_plugins("__describe", sml_wk_describe_main, argc - 2, argv + 2, 0);
    if (!strcmp(argv[1], "help") && argc == 3 && !strcmp(argv[2], "--reference")) {
        print_reference();
        return 0;
    }
    if (!strcmp(argv[1], "help")) {
        if (argc > 3) {
            fprintf(stderr, "%s help: one command at a time\n", prog);
            return 2;
        }
        char help[] = "--help";
        char *args[] = {help, NULL};
        return run_command(prog, argv[2], 1, args);
    }
    return run_command(prog, argv[1], argc - 2, argv + 2);
}
