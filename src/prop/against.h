/* against.h: a candidate kernel against the kernel it replaces, on the same cases, in one run
 * (`softmax-lab check --kernel K --against BASE`). For each op and dtype both take, the
 * candidate runs the property suite and the base runs `agreement` on the very same cases:
 * both kernels get the limits they share (the larger min_cols, the smaller max_cols), sizes
 * ramp by case count, and the base runs exactly the case indices the candidate counted (a cap
 * can stop the candidate's parts at different indices), so the two runs' case digests must
 * match. The accuracy rule (accuracy.h) then judges the
 * candidate's err/bound against the base's over the cases both judged, and the case with the
 * largest loss is saved as a reproducer of the candidate (property agreement, verdict
 * "less_accurate") when the verdict is LESS ACCURATE and a save directory is given. */
#ifndef SML_PROP_AGAINST_H
#define SML_PROP_AGAINST_H

#include <stdio.h>

#include "prop/accuracy.h"
#include "prop/suite.h"

typedef struct sml_prop_against {
    sml_op op;
    sml_dtype dtype;
    sml_kernel cand_k, base_k;       /* the two kernels with the shared limits */
    sml_prop_job cand, base;         /* their runs (cand: every property asked; base: agreement) */
    float *cand_ratio, *base_ratio;  /* per case index, NaN where not judged */
    unsigned char *cand_ran;         /* per case index: 1 where the candidate counted the case */
    sml_accuracy acc_cand, acc_base; /* over the cases both judged */
    sml_acc_verdict verdict;
    char why[512];     /* the rule's figures, or why there is no verdict */
    int64_t loss_case; /* the case with the largest loss (-1: none) */
    int loss_level;
    double loss_cand, loss_base; /* its err/bound on each */
    char repro[1024];            /* the saved reproducer, or "" */
} sml_prop_against;

/* Run cand against base for every op in `ops` and dtype in `dtypes` (bit masks) that both
 * kernels take, `how` saying how many run side by side, where (its run and run_ctx: worker
 * processes, src/worker) and where the progress line goes. Where the kernels run in workers,
 * cfg->runner is thread 0's runner, which the reproducer's two agreement runs use. *out gets
 * the array (sml_prop_against_free). SML_ERR_INVALID_ARG when the two have no op and dtype in
 * common. */
sml_status sml_prop_against_run(const sml_kernel *cand, const sml_kernel *base, unsigned ops,
                                unsigned dtypes, const sml_prop_config *cfg,
                                const sml_prop_suite *how, sml_prop_against **out, int *n);
void sml_prop_against_free(sml_prop_against *a, int n);

#endif
