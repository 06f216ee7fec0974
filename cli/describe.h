/* describe.h: a plugin library's kernels registered without loading it here (describe.c). */
#ifndef SML_CLI_DESCRIBE_H
#define SML_CLI_DESCRIBE_H

#include <stddef.h>

#include "softmax_lab.h"

/* `softmax-lab __describe --load LIB`: write the loaded library's table to standard output. */
int sml_cli_describe_main(int argc, char **argv);
/* sml_load_plugin's work done through that child: the library's lines registered with a launch
 * that runs only in workers. The plugin loader of a process that judges kernels (plugins.c). */
sml_status sml_cli_describe_load(const char *path, char *msg, size_t msglen);

#endif
