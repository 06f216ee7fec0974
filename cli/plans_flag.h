/* plans_flag.h: --plans PATH and SML_PLANS, the plan table `auto` uses (src/core/plan_cache.h),
 * for the commands that run kernels. */
#ifndef SML_CLI_PLANS_FLAG_H
#define SML_CLI_PLANS_FLAG_H

#include "core/opt.h"

/* For the commands that run `auto` (main.c's table): remove `--plans PATH` from the normalised
 * argv (*argc shrinks), read the table (PATH, else SML_PLANS when set) and refuse a bad one, or one for
 * another GPU than the one at hand, naming the field: 2, after the message. Then SML_PLANS
 * holds the table's absolute path (or `off`) for this process and the workers it starts.
 * 0 when there is nothing to refuse; with -h or --help nothing is read. */
int sml_cli_take_plans(const char *name, int *argc, char **argv);

/* --plans, as a line of an options table (options.h). */
extern const sml_opt sml_cli_plans_opts[1];

/* The lines --help adds for these commands. */
void sml_cli_plans_help(void);

#endif
