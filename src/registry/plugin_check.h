/* plugin_check.h: the rules a plugin's kernel table must meet before any of it is registered
 * (softmax_lab_plugin.h lists them). */
#ifndef SML_PLUGIN_CHECK_H
#define SML_PLUGIN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "softmax_lab.h"

/* The longest kernel name (reproducers and reports keep names in 64-byte fields). */
#define SML_PLUGIN_MAX_NAME    63
/* More lines than this is taken for a garbage count. */
#define SML_PLUGIN_MAX_KERNELS 4096

/* Whether `name` is a registered kernel's (1) or free (0); *origin gets the registered
 * kernel's origin, NULL for a built-in one. The registry passes its own lookup, so that the
 * rules below know nothing of how kernels are kept. */
typedef int (*sml_name_taken_fn)(const char *name, const char **origin);

/* A line of a table built against plugin ABI version 1: sml_kernel before `flags`. */
typedef struct sml_kernel_v1 {
    const char *name, *file;
    sml_device device;
    unsigned ops, dtypes;
    int64_t min_cols, max_cols;
    sml_launch_fn launch;
    const char *summary;
    sml_claim claim;
    const char *known_deviation;
} sml_kernel_v1;

/* A line of a table built against plugin ABI version 2: sml_kernel before `deviation`. */
typedef struct sml_kernel_v2 {
    sml_kernel_v1 v1;
    unsigned flags;
} sml_kernel_v2;

/* The lines of a table of `abi_version` in this build's layout: for versions 1 and 2, a
 * malloc'd copy (flags 0 for version 1, deviation NULL), put in *copy for the caller to free
 * (NULL: out of memory); for the current version, the table itself (*copy NULL). A NULL table, a count of 0 or one past
 * SML_PLUGIN_MAX_KERNELS is passed through for sml_plugin_check_table to refuse. */
const sml_kernel *sml_plugin_table_current(const void *table, size_t count, unsigned abi_version,
                                           sml_kernel **copy);

/* SML_OK when every line of table[count] (in this build's layout: sml_plugin_table_current)
 * may be registered now (names checked through taken: the registry calls this under its
 * lock), else SML_ERR_PLUGIN with a message naming
 * origin, the line and the problem. */
sml_status sml_plugin_check_table(const sml_kernel *table, size_t count, unsigned abi_version,
                                  const char *origin, sml_name_taken_fn taken, char *msg,
                                  size_t msglen);

#endif
