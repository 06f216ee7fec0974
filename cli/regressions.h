/* regressions.h: the saved reproducers `check` replays before its cases, found wherever it
 * runs: --regressions DIR[:DIR], else SML_REGRESSIONS=DIR[:DIR], else the default corpus. */
#ifndef SML_CLI_REGRESSIONS_H
#define SML_CLI_REGRESSIONS_H

#include <stddef.h>

/* The default corpus into dirs (DIR[:DIR], "" when none): the one installed with softmax-lab
 * (share/softmax_lab/regressions and share/softmax_lab/mutants-corpus beside its library; a
 * build tree holds a copy of the checkout's), then ./tests/regressions and
 * ./tests/mutants/corpus where they exist. A folder with no reproducer, or with the same
 * reproducers (by name) as one before it, is left out. */
void sml_cli_default_regressions(char *dirs, size_t n);

/* How many of dirs' reproducers there are (sml_prop_repro_list). */
size_t sml_cli_count_reproducers(const char *dirs);

#endif
