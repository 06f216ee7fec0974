/* mutants.h: the GPU mutant zoo, test-only (never in the registry). Each mutant is a
 * production kernel (warp, block, online or coop) with one classic bug planted: one copy of
 * each such kernel (warp_mutants.cu, ...) takes the mutant as a compile-time selector
 * (mutant.cuh). Its sml_kernel declares only the ops and dtypes the bug concerns, and its
 * launcher instantiates only those. The mutation test (test_mutants_gpu.c) runs the property
 * engine on each, and the sanitizer driver (sanitize_driver.c) launches the two that
 * compute-sanitizer must catch. docs/MUTANTS.md lists them and explains the table. */
#ifndef SML_TESTS_MUTANTS_H
#define SML_TESTS_MUTANTS_H

#include <stddef.h>
#include <stdint.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One problem shape. ld 0 means ld = cols. */
typedef struct sml_mut_shape {
    sml_op op;
    sml_dtype dtype;
    int64_t rows, cols, ld, offset;
} sml_mut_shape;

/* A shape to draw cases at when the standard budget's generators do not reach the bug
 * (rows == 0: none). Forward ops only. */
typedef struct sml_mut_hint {
    sml_mut_shape shape;
    const char *family;    /* logit family (src/prop/gen.c names: "normal", "ramp", ...) */
    int cases;             /* at most this many cases at that shape */
    double shrink_seconds; /* shrink budget; 0: report the case as drawn */
    const char *why;       /* why the standard budget may miss it */
} sml_mut_hint;

typedef struct sml_gpu_mutant {
    sml_kernel kernel;  /* name "gpu_*", its .cu file, ops/dtypes where the bug shows */
    int item;           /* 1..12: its number in the list of twelve classic softmax bugs
                               (docs/MUTANTS.md); 0: a bug beyond the list */
    const char *parent; /* the registry kernel it copies: the control for every kill */
    const char *bug;    /* one line: what is wrong */
    const char *expect; /* which property should kill it, and on what input */
    sml_mut_hint hint;
    const char *sanitizer;   /* compute-sanitizer tool that must catch it, or NULL */
    sml_mut_shape san_shape; /* the one launch the sanitizer driver makes for it */
} sml_gpu_mutant;

size_t sml_gpu_mutant_count(void);
const sml_gpu_mutant *sml_gpu_mutant_at(size_t i);
/* By kernel name (for replaying a mutant's reproducer), or NULL; fits sml_prop_lookup_fn. */
const sml_kernel *sml_gpu_mutant_find(const char *name, void *unused);
const sml_gpu_mutant *sml_gpu_mutant_by_name(const char *name);

/* The launchers, one per mutant (C linkage). */
sml_status sml_mut_launch_no_max(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_sum16(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_no_rescale(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_inf_merge(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_pad_zero(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_offset32(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_vec_tail(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_no_barrier(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_past_row(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_log_of_softmax(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_bwd_no_dot(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_bwd_dot_rows(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_grid65535(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_atomic_sum(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_assume_aligned(sml_handle *h, const sml_problem *p);
sml_status sml_mut_launch_coop_no_wait(sml_handle *h, const sml_problem *p);

#ifdef __cplusplus
}
#endif
#endif
