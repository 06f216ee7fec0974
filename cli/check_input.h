/* check_input.h: `softmax-lab check --input FILE`: run kernels on a user's own logits (and
 * upstream gradient) and judge them against the reference under the numerics contract. */
#ifndef SML_CLI_CHECK_INPUT_H
#define SML_CLI_CHECK_INPUT_H

typedef struct sml_check_input_args {
    const char *input;     /* .npy logits */
    const char *dy;        /* .npy upstream gradient (backward ops), or NULL */
    const char *kernel;    /* a kernel name, or NULL / "all" */
    const char *op;        /* op name, "all", or NULL (softmax) */
    int dtype;             /* -1, or the dtype raw 16-bit data holds (--dtype bf16) */
    const char *save_dir;  /* write each kernel's output here, or NULL */
    const char *json;      /* write the report as JSON here, or NULL */
} sml_check_input_args;

/* Exit code: 0 every kernel run meets the contract, 1 some kernel broke it, 2 bad input
 * (nothing written). */
int sml_check_input(const sml_check_input_args *a);

#endif
