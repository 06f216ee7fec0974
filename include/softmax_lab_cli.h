/* softmax_lab_cli.h: the softmax-lab command line as one call, from libsoftmax_lab_cli.
 *
 * The library links libsoftmax_lab and shares its registry: kernels a host process adds to
 * the registry before the call are seen by every subcommand (list, check, bench, replay, ...),
 * as the built-in ones are. */
#ifndef SOFTMAX_LAB_CLI_H
#define SOFTMAX_LAB_CLI_H

#ifdef __cplusplus
extern "C" {
#endif

/* Run one command line: argv[0] is the program name, argv[1] the subcommand. Returns the
 * exit code the softmax-lab executable would (softmax-lab --help): 0 ok, 1 a failure was
 * found, 2 bad usage or input, 3 nothing was checked. Prints to stdout and stderr. */
int sml_cli_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
