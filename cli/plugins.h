/* plugins.h: --load PATH and SML_LOAD, for every command that takes a kernel. */
#ifndef SML_CLI_PLUGINS_H
#define SML_CLI_PLUGINS_H

#include "core/opt.h"

/* Run command `name` (cmd), one that takes a kernel (main.c's command table says which), on
 * argv[0..argc): first remove each `--load PATH` (or --load=PATH) from argv and load the
 * libraries of SML_LOAD (colon-separated; only when read_env: a command that runs no kernel
 * reads data only, and a shell profile's SML_LOAD loads nothing for it), then those, in
 * order. A library that cannot be loaded, is writable by others (without
 * --allow-writable-plugin) or whose table is refused exits 2 with its message and nothing
 * run. With -h or --help nothing is loaded, and the options are described after the
 * command's own. */
/* --load and --allow-writable-plugin, as lines of an options table (options.h). */
extern const sml_opt sml_cli_plugin_opts[2];

int sml_cli_run_with_plugins(const char *name, int (*cmd)(int, char **), int argc, char **argv,
                             int read_env);

#endif
