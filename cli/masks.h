/* masks.h: "a,b,c" lists of ops or dtypes on the command line (check, bench, tune, plot): one
 * rule, and the valid values every error and help names. */
#ifndef SML_CLI_MASKS_H
#define SML_CLI_MASKS_H

#include <stddef.h>

#define SML_CLI_OPS        "softmax, log_softmax, softmax_bwd, log_softmax_bwd"
#define SML_CLI_DTYPES     "fp32, fp16, bf16"
#define SML_CLI_OP_LIST    SML_CLI_OPS " or all, comma-separated"
#define SML_CLI_DTYPE_LIST SML_CLI_DTYPES " or all, comma-separated"

/* s ("softmax,log_softmax", "fp16,bf16", "all") into a bit mask of sml_op (ops = 1) or
 * sml_dtype (ops = 0) values; "all" sets every bit. 1, or 0 on an unknown name ("unknown op
 * 'x'" in why), an empty list or a list over 255 characters. */
int sml_cli_parse_mask(const char *s, int ops, unsigned *mask, char *why, size_t n);

/* The registry's kernel names, "cpu_naive, cpu_online, ..." (plugin and Python kernels
 * included), into buf: what an error about a kernel name lists as the valid ones. */
const char *sml_cli_kernel_names(char *buf, size_t n);

/* 1 when mask holds exactly one bit (its index in *one). */
int sml_cli_mask_one(unsigned mask, int *one);

#endif
