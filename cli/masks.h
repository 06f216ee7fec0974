/* masks.h: "a,b,c" lists of ops or dtypes on the command line (bench, tune). */
#ifndef SML_CLI_MASKS_H
#define SML_CLI_MASKS_H

/* s ("softmax,log_softmax", "fp16,bf16", "all") into a bit mask of sml_op (ops = 1) or
 * sml_dtype (ops = 0) values; "all" sets every bit. 0 on an unknown name, an empty list or a
 * list over 255 characters. */
int sml_cli_parse_mask(const char *s, int ops, unsigned *mask);

#endif
