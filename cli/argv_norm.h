/* argv_norm.h: the GNU getopt_long conventions for every subcommand, applied once before the
 * subcommand's own parser sees its arguments (argv_norm.c). */
#ifndef SML_CLI_ARGV_NORM_H
#define SML_CLI_ARGV_NORM_H

/* The arguments of one subcommand, normalised:
 *   --name=value  becomes  --name value (split at the first '=');
 *   --            ends the options: it is dropped, and every later word that starts with '-'
 *                 is a file name, passed as ./WORD so that no parser reads it as an option;
 * *version is set when --version appears among the options. argv is argc words, out
 * receives a NULL-terminated copy (free with sml_cli_args_free). 0, or -1 out of memory. */
int sml_cli_args_normalize(int argc, char **argv, int *out_argc, char ***out, int *version);
void sml_cli_args_free(int argc, char **argv);

#endif
