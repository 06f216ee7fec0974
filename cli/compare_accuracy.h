/* compare_accuracy.h: the accuracy half of `softmax-lab compare` (compare_accuracy.c). */
#ifndef SML_CLI_COMPARE_ACCURACY_H
#define SML_CLI_COMPARE_ACCURACY_H

/* Judge the accuracy summaries of OLD and NEW (check JSON or ledger JSON) and print the table.
 * Returns -1 when the files hold none (nothing printed; a ledger of an older version, or a
 * file that does not parse: the caller reports it), else the exit code: 0 nothing LESS
 * ACCURATE (or allow_less), 1 something is, 2 a malformed file, 3 nothing could be judged.
 * *check_json is set to 1 when OLD is a check JSON (which has no timings to compare); with
 * only_check_json, nothing is done (-1) for any other file. */
int sml_compare_accuracy_cli(const char *old_path, const char *new_path, int allow_less,
                             int only_check_json, int *check_json);

#endif
