/* harness.h: what the files of the edge-shape harness share (edge.h is what its users see):
 * the byte patterns around and inside the tensors, the run's state, and the functions one
 * file calls in another. */
#ifndef SML_EDGE_HARNESS_H
#define SML_EDGE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "edge/edge.h"
#include "prop/deviation.h"
#include "reference/check.h"

#define GUARD             64   /* canary elements before and after every tensor */
#define CANARY            0x77 /* fp32 5.0e33, fp16 30576, bf16 5.0e33: poisons a max if read */
#define POISON            0xFF /* NaN in every dtype */
#define MAX_PICK          8    /* rows checked of a sampled (huge or tall) case */
#define INPUT_CHECK_BYTES ((size_t)64 << 20) /* re-read inputs after a run up to this size */
#define MAX_KERNELS       64
#define PRINT_CAP         8 /* failures printed per kernel and dtype; the rest are counted */

/* Passed, failed and skipped checks; `name` opens every line printed. */
typedef struct sml_edge_tally {
    const char *name;
    int64_t passed, failed, skipped;
} sml_edge_tally;

/* One kernel and dtype's results. */
typedef struct sml_edge_cell {
    int64_t cases, fails, known, refused; /* known: cases within the declared deviation only */
    double worst_ratio, worst_ulps;
    double known_ratio, known_ulps; /* the largest error the declaration excused */
} sml_edge_cell;

typedef struct sml_edge_ctx {
    sml_edge_opts o;
    sml_edge_tally tally;
    sml_handle *h;
    sml_device dev;
    int has_clusters, sms;
    float dram; /* what auto's decision reads of the device (src/core/internal.h) */
    sml_edge_cell stats[MAX_KERNELS][SML_DTYPE_COUNT];
    int64_t n_inputs, n_runs, n_elems, n_checked; /* --list-cases */
    int dead;                         /* a CUDA error: the context may be unusable, stop */
    int64_t visited;                  /* cases enumerated so far: the index --shard slices */
    const sml_edge_remote *remote;    /* where the kernels run (edge.h); NULL: here */
    uint64_t next_id;                 /* the next remote buffer's id */
    int lost;                         /* the remote worker ended: the case's buffers are gone */
    unsigned char ended[MAX_KERNELS]; /* the kernel ended its worker: it runs no more */
} sml_edge_ctx;

/* tally.c */
void sml_edge_tally_pass(sml_edge_tally *t);
/* "FAIL <name>: <message>" then "  reproduce: <command>". */
void sml_edge_tally_fail(sml_edge_tally *t, const char *reproduce, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "N passed, N failed[, N skipped]"; returns the exit code (0 / 1). */
int sml_edge_tally_finish(const sml_edge_tally *t);

/* cases.c: the shape set's parts the runs need */
int sml_edge_huge_case(const sml_edge_case *t);
uint64_t sml_edge_case_seed(uint64_t run_seed, const sml_edge_case *t);
int64_t sml_edge_sampled_block(const sml_edge_case *t);
int sml_edge_sampled_rows(const sml_edge_case *t, int64_t nb, int64_t *pick);
int64_t sml_edge_sampled_twin(const sml_edge_case *t, int64_t nb, int64_t i);

/* dev.c: the harness's device buffers and launches, here or in the kernels' worker (edge.h,
 * sml_edge_remote): the same calls either way. */
sml_status sml_edge_buf_alloc(sml_edge_ctx *c, sml_buffer *b, size_t bytes);
void sml_edge_buf_free(sml_edge_ctx *c, sml_buffer *b);
sml_status sml_edge_upload(sml_edge_ctx *c, sml_buffer *b, size_t off, const void *src, size_t n);
sml_status sml_edge_download(sml_edge_ctx *c, const sml_buffer *b, size_t off, void *dst, size_t n);
sml_status sml_edge_dev_fill(sml_edge_ctx *c, sml_buffer *b, size_t off, unsigned char byte,
                             size_t n);
/* height rows of width bytes, pitch apart, from the buffer's start. */
sml_status sml_edge_dev_fill2d(sml_edge_ctx *c, sml_buffer *b, size_t pitch, unsigned char byte,
                               size_t width, size_t height);
sml_status sml_edge_dev_copy(sml_edge_ctx *c, sml_buffer *dst, size_t dst_off,
                             const sml_buffer *src, size_t src_off, size_t n);
/* Kernel k (registry index ki) on p, then the device's sync. Where its worker ended, the FAIL
 * is printed here (naming k and the cause), k runs no more (c->ended) and c->lost says that the
 * case's buffers are gone: SML_ERR_KERNEL_FAILED. */
sml_status sml_edge_launch(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                           const sml_problem *p);

/* buffers.c: host images and device buffers */
int64_t sml_edge_changed_outside_rows(const unsigned char *got, const unsigned char *image,
                                      size_t esz, int64_t total, int64_t base,
                                      const sml_edge_case *t);
unsigned char *sml_edge_canary_image(size_t bytes);
sml_status sml_edge_make_inputs(const sml_edge_case *t, uint64_t seed, void *x, void *dy);
sml_status sml_edge_dev_poison_rows(sml_edge_ctx *c, sml_buffer *b, const sml_edge_case *t,
                                    size_t bytes);
sml_status sml_edge_sampled_upload(sml_edge_ctx *c, sml_buffer *b, const sml_edge_case *t,
                                   int64_t nb, const unsigned char *block);

/* verdict.c: which kernels run, and what a run's result counts as */
/* Kernel k (registry index ki) runs in this harness: its device, --kernel, and not ended. */
int sml_edge_kernel_selected(const sml_edge_ctx *c, size_t ki, const sml_kernel *k);
/* How a case runs its kernels: setup makes the case's inputs, reference and buffers in state
 * (0, or 1 after printing why it cannot), run runs kernel k on them (1: stop the case, a CUDA
 * error), release frees them. */
typedef struct sml_edge_case_runner {
    int (*setup)(sml_edge_ctx *c, const sml_edge_case *t, void *state);
    int (*run)(sml_edge_ctx *c, const sml_edge_case *t, void *state, size_t ki,
               const sml_kernel *k);
    void (*release)(sml_edge_ctx *c, void *state);
} sml_edge_case_runner;
/* Case t on every selected kernel, in registry order. A run that lost the kernels' worker
 * (c->lost) took the case's device buffers with it: the case is set up again, in a fresh
 * worker, for the kernels after it. state (state_bytes, zeroed here) holds one setup. */
void sml_edge_each_kernel(sml_edge_ctx *c, const sml_edge_case *t, const sml_edge_case_runner *r,
                          void *state, size_t state_bytes);
int sml_edge_kernel_supports(const sml_kernel *k, const sml_edge_case *t);
/* The terms kernel k declares for the case's op and dtype into t (none under --strict): 1 when
 * there are any. */
int sml_edge_terms(const sml_edge_ctx *c, const sml_kernel *k, const sml_edge_case *t,
                   sml_dev_terms *terms);
/* The contract's checker on rows x cols (stride ld) of the case, and each miss judged against
 * k's declared terms (deviation.h) into d. */
sml_status sml_edge_check(const sml_edge_ctx *c, const sml_kernel *k, const sml_edge_case *t,
                          int64_t rows, int64_t ld, const void *x, const void *dy,
                          const double *want, const void *got, sml_check_report *rep,
                          sml_dev_report *d);
void sml_edge_fail_run(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                       const char *what, const char *detail);
/* A run that stopped with status s: a failure (what it says, with the CUDA error on a GPU).
 * Returns 1 when the context may be unusable (a CUDA error), after marking c->dead; with the
 * kernels in a worker, the worker is replaced instead (c->lost) and 0. */
int sml_edge_fail_status(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                         sml_status s);
void sml_edge_judge(sml_edge_ctx *c, size_t ki, const sml_kernel *k, const sml_edge_case *t,
                    sml_status s, const sml_check_report *rep, const sml_dev_report *d,
                    const char *detail);

/* run_input.c, run_sampled.c: one case on every selected kernel */
void sml_edge_run_input(sml_edge_ctx *c, const sml_edge_case *t);
void sml_edge_run_sampled(sml_edge_ctx *c, const sml_edge_case *t);

/* summary.c: the table after the run */
void sml_edge_summary(const sml_edge_ctx *c);

#endif
