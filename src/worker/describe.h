/* describe.h: a plugin library's kernels registered without loading it here (describe.c). */
#ifndef SML_WORKER_DESCRIBE_H
#define SML_WORKER_DESCRIBE_H

#include <stddef.h>

#include "softmax_lab.h"

/* `PROGRAM __describe --load LIB`, once LIB is loaded: write its table to standard output. */
int sml_wk_describe_main(int argc, char **argv);
/* sml_load_plugin's work done through that child (this same program, run again with
 * __describe): the library's lines registered with a launch that runs only in workers. The
 * plugin loader of a process that judges kernels (sml_registry_set_plugin_loader). */
sml_status sml_wk_describe_load(const char *path, char *msg, size_t msglen);

#endif
