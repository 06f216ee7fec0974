/* plugin_check.h: the rules a plugin's kernel table must meet before any of it is registered
 * (softmax_lab_plugin.h lists them). */
#ifndef SML_PLUGIN_CHECK_H
#define SML_PLUGIN_CHECK_H

#include <stddef.h>

#include "softmax_lab.h"

/* The longest kernel name (reproducers and reports keep names in 64-byte fields). */
#define SML_PLUGIN_MAX_NAME 63
/* More lines than this is taken for a garbage count. */
#define SML_PLUGIN_MAX_KERNELS 4096

/* Whether `name` is a registered kernel's (1) or free (0); *origin gets the registered
 * kernel's origin, NULL for a built-in one. The registry passes its own lookup, so that the
 * rules below know nothing of how kernels are kept. */
typedef int (*sml_name_taken_fn)(const char *name, const char **origin);

/* SML_OK when every line of table[count] may be registered now (names checked through
 * taken: the registry calls this under its lock), else SML_ERR_PLUGIN with a message naming
 * origin, the line and the problem. */
sml_status sml_plugin_check_table(const sml_kernel *table, size_t count, unsigned abi_version,
                                  const char *origin, sml_name_taken_fn taken, char *msg, size_t msglen);

#endif
