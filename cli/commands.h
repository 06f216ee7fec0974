/* commands.h: one function per `softmax-lab` subcommand, each in its own file. Each takes
 * the arguments after the subcommand's name and returns the process exit code:
 * 0 success, 1 a verdict failed (a kernel broke the contract, a gate was missed),
 * 2 bad usage or input (nothing was written), 3 nothing was checked (check --input:
 * check_input.h). */
#ifndef SML_CLI_COMMANDS_H
#define SML_CLI_COMMANDS_H

int sml_cmd_list(int argc, char **argv);    /* cmd_list.c */
int sml_cmd_bench(int argc, char **argv);   /* cmd_bench.c */
int sml_cmd_check(int argc, char **argv);   /* cmd_check.c */
int sml_cmd_replay(int argc, char **argv);  /* cmd_replay.c */
int sml_cmd_compare(int argc, char **argv); /* cmd_compare.c */
int sml_cmd_plot(int argc, char **argv);    /* cmd_plot.c */
int sml_cmd_targets(int argc, char **argv); /* cmd_targets.c */
int sml_cmd_tune(int argc, char **argv);    /* cmd_tune.c */
int sml_cmd_merge(int argc, char **argv);   /* cmd_merge.c */

/* Each command's options, help and reference section (options.h), from its own file. */
struct sml_cli_spec;
const struct sml_cli_spec *sml_spec_list(void);
const struct sml_cli_spec *sml_spec_bench(void);
const struct sml_cli_spec *sml_spec_check(void);
const struct sml_cli_spec *sml_spec_replay(void);
const struct sml_cli_spec *sml_spec_compare(void);
const struct sml_cli_spec *sml_spec_plot(void);
const struct sml_cli_spec *sml_spec_targets(void);
const struct sml_cli_spec *sml_spec_tune(void);
const struct sml_cli_spec *sml_spec_merge(void);

/* The real standard output while the command's own goes to standard error ("--json -",
 * "--md -"); -1 when standard output is itself. */
int sml_cli_stdout(void);
/* The command line sml_cli_main was given (its argv, NULL-terminated). */
char *const *sml_cli_line(void);

#endif
