/* check_against.h: `softmax-lab check --kernel K --against BASE` (check_against.c). */
#ifndef SML_CLI_CHECK_AGAINST_H
#define SML_CLI_CHECK_AGAINST_H

#include "prop/prop.h"

typedef struct sml_check_against_args {
    const sml_kernel *cand;
    const char *base;
    unsigned ops, dtypes;
    const sml_prop_config *cfg;
    const char *json;
    int allow_less; /* --allow-less-accurate: report LESS ACCURATE, exit 0 for it */
    int isolated;   /* the kernels run in worker processes and are judged here (src/worker) */
} sml_check_against_args;

int sml_check_against_cli(const sml_check_against_args *x);

#endif
