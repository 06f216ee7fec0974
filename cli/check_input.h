/* check_input.h: `softmax-lab check --input FILE`: run kernels on a user's own logits (and
 * upstream gradient) and judge them against the reference under the numerics contract; or,
 * with --output, judge an output made elsewhere on those inputs. */
#ifndef SML_CLI_CHECK_INPUT_H
#define SML_CLI_CHECK_INPUT_H

typedef struct sml_check_input_args {
    const char *input;    /* .npy logits (with --output and a backward op: the forward output y) */
    const char *output;   /* .npy output to judge (made elsewhere), or NULL: run kernels */
    const char *dy;       /* .npy upstream gradient (backward ops), or NULL */
    const char *kernel;   /* a kernel name, or NULL / "all" */
    const char *op;       /* --op as given, or NULL (softmax) */
    unsigned ops;         /* the ops --op names (masks.h); SML_OPS_ALL without --dy: forward */
    int dtype;            /* -1, or the dtype raw 16-bit data holds (--dtype bf16) */
    const char *save_dir; /* write each kernel's output here, or NULL */
    const char *json;     /* write the report as JSON here, or NULL */
    int isolated;         /* each kernel runs in a worker process, judged here (src/worker) */
    double case_timeout;  /* --case-timeout: a worker's deadline (0: derived from the size) */
} sml_check_input_args;

/* Exit code: 0 everything checked meets the contract, 1 something breaks it (a kernel
 * errored too), 2 bad input or a failed write (nothing written), 3 nothing was checked (an
 * empty tensor; the named kernel could not run here; no kernel could). */
int sml_check_input(const sml_check_input_args *a);
/* The --output form (judge_output.c); the same exit codes. */
int sml_judge_output(const sml_check_input_args *a);

#endif
