/* devices.h: --devices LIST (and every visible GPU by default) for check and bench: a suite
 * or sweep run on a host with several GPUs is split into one worker process per GPU
 * (io/per_device.h), worker i running slice i of n (--shard i/n) on its own device, and the
 * slices are merged (analysis/merge.h): the result, verdict and digest of the 1-GPU run. */
#ifndef SML_CLI_DEVICES_H
#define SML_CLI_DEVICES_H

#include "core/opt.h"

/* Called first by `cmd` ("check" or "bench") with its arguments: takes --devices LIST out of
 * them (argc and argv are updated). Returns -1 when the command should run here, in this
 * process (one device, no GPU, or a form of the command that is not split); otherwise the
 * command's exit status after the split run, or 2 for a bad --devices. */
int sml_cli_devices(const char *cmd, int *argc, char **argv);

/* The flag, as a line of the options tables of check and bench (options.h). */
extern const sml_opt sml_cli_devices_opts[1];

#endif
