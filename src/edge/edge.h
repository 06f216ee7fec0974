/* edge.h: the edge-shape harness (the program softmax-lab-edge-shapes, and the ctest
 * test_gpu_kernels that drives it): every GPU kernel of the registry on the shape set of
 * cases.c, checked under the numerics contract (reference/check.h) against a double-precision
 * reference that is computed once per input and shared by all kernels.
 *
 * Per input: fresh random logits (normal, scale 3; for backward ops y is the reference
 * forward output rounded to the dtype and dy is random), one seed per input derived from the
 * printed run seed and the case's parameters, so a reproduce line re-creates the same data.
 * Per kernel: outputs poisoned with 0xFF bytes (NaN in every dtype) inside the rows; the
 * stride padding, 64 elements before and after every tensor and the bytes before a
 * misaligned base hold canaries (0x77 bytes: a large finite value, so a kernel that reads
 * them gets a wrong max) and must survive; inputs must be unchanged afterwards.
 *
 * Shapes: cols 1, 2, 3, 31, 32, 33, 127, 128, 129, 1000, 1024, 1025, 2048, 2049, 4096, 4097,
 * 8192, 8193, 12345, 65536, 2^20 + 3 and every `auto` threshold with one either side
 * (kernels/auto_dispatch.h);
 * rows 1 and 7; 7,001 rows of 1,000 columns (block's many-row plan); 4,099 forward rows of 1,000 and
 * 1,024 columns (its one-wave plan, the lean build); 9,281 forward rows of 255
 * columns (past auto's rows-per-SM limit for `warp`); 65,537 rows for two short rows; 48
 * backward rows of 131,077 columns, padded (the refill paths of `split` and `coop`); layouts:
 * dense, padded ld with canaries, base pointer offset by one element, in place (forward); plus
 * one tensor past 2^31 elements per direction, of which only rows around the 2^31 boundary and
 * the last rows are checked; plus the tall cases (TALL in cases.c): more rows than `split` has
 * resident clusters, on rows long enough for its whole-step loop, each op and dtype, checked
 * on sampled rows (run_sampled.c).
 *
 * Declared deviations: a kernel whose line declares a deviation (sml_kernel.deviation: the
 * cuDNN baseline, a plugin's) has each element outside the contract judged against the terms
 * it declares for the op and dtype (src/prop/deviation.h): within them, the case passes and is
 * printed as "WITHIN DECLARED DEVIATION" with the terms and the largest excused error (the
 * summary counts such cases apart); a miss outside them fails, naming the terms. A known_deviation label alone excuses nothing.
 * Overwritten canaries, changed inputs, twins that differ in bits and launch errors fail as
 * for any kernel; --strict applies no declaration. A launcher
 * may refuse a strided layout (ld > cols) with SML_ERR_UNSUPPORTED (cuDNN cannot honour the
 * row stride): that is counted as `refused`, never for `auto` and never for a dense layout.
 *
 *   --list-cases              print the number of inputs, kernel runs and elements; run nothing
 *   --kernel K --op O --dtype D --rows R --cols C --ld L --offset F --inplace 0|1 --seed S
 *                             re-run one case (any shape; the failure lines print this)
 *   --sampled                 with --rows/--cols: run it as a tall case (repeated rows, sampled
 *                             rows checked), as a tall case's reproduce line says
 *   --no-huge                 leave out the > 2^31-element cases
 *   --cpu                     run the CPU kernels instead (checks this harness without a GPU)
 *   --strict                  hold every kernel to the contract itself: no declared deviation
 *                             applies (the test plugins with declarations check the rule itself
 *                             with --cpu --load)
 *   --load PATH               load a plugin library's kernels (softmax_lab_plugin.h) into the
 *                             registry first, so they are tested like built-in ones (repeatable)
 *   --plant W                 after each run of a sampled case, damage one element of the
 *                             first checked row's padding, the last checked row's input, the
 *                             guard's last element, an output value, or one bit of row 0's
 *                             twin (W = padding, input, guard, value, twin), as a kernel bug
 *                             would: ctest runs each with --cpu to show that check fails
 *   --devices D[,D]           the GPUs to use (default: every visible GPU; under ctest the one
 *                             it assigned): with several, one worker process per GPU runs every
 *                             n-th case (--shard i/n) with the same seed, each worker's output is
 *                             printed whole, and the run fails if any worker fails (split.c)
 *   --shard K/N               run only the cases i with i mod N = K - 1
 *   --case-timeout S          a kernel call past S seconds is slow; past 10 x S it is a hang
 *                             and a FAIL (default: from the call's size, at least 4 s) */
#ifndef SML_EDGE_H
#define SML_EDGE_H

#include <stdint.h>

#include "prop/shard.h"
#include "softmax_lab.h"

/* How a case lays its rows out. */
typedef enum sml_edge_layout {
    SML_EDGE_DENSE,
    SML_EDGE_PADDED,
    SML_EDGE_MISALIGNED,
    SML_EDGE_INPLACE,
    SML_EDGE_LAYOUT_COUNT
} sml_edge_layout;

/* One input of the shape set: every selected kernel runs on it. */
typedef struct sml_edge_case {
    sml_op op;
    sml_dtype dt;
    int64_t rows, cols, ld, offset;
    int inplace;
    sml_edge_layout var;
    int sampled; /* a tall case: repeated rows, sampled rows checked (run_sampled.c) */
} sml_edge_case;

/* The command line, parsed. */
typedef struct sml_edge_opts {
    const char *argv0, *kernel;
    int op, dt;                              /* -1: all */
    int64_t rows, cols, ld, offset, inplace; /* -1: not given */
    uint64_t seed;
    int list, cpu, huge, sampled;
    int strict;           /* --strict: no kernel's declared deviation applies */
    const char *plant;    /* --plant: a harness self-check (sampled cases) */
    const char *loads[8]; /* --load: plugin libraries whose kernels join the registry */
    int nloads;
    sml_shard shard;     /* --shard K/N: every N-th case from K-1 (a worker's slice) */
    const char *devices; /* --devices D[,D]: the GPUs to split over (default: all visible) */
} sml_edge_opts;

/* Parse argv into o (loading --load plugins into the registry). 0, or 2 after printing the
 * usage or the reason to stderr. */
int sml_edge_parse(sml_edge_opts *o, int argc, char **argv);

/* Every case the options select, in order, each passed to visit(arg, case). */
typedef void (*sml_edge_visit_fn)(void *arg, const sml_edge_case *t);
void sml_edge_cases(const sml_edge_opts *o, sml_edge_visit_fn visit, void *arg);

/* 1 when the case runs through the sampled path (past 2^31 elements, or a tall case). */
int sml_edge_sampled_case(const sml_edge_case *t);

/* Where the kernels run when not in the harness's process (src/worker/edge_remote.c): every
 * operation on the harness's device buffers and every kernel launch is sent to a worker process
 * that holds the buffers and the kernels; the inputs, the references, the canaries and every
 * comparison stay in the harness, which never calls a judged kernel. A buffer is named by an id
 * the harness chooses; its pointer here (sml_buffer.ptr) is a token, (id << 40) | offset, that
 * only the worker turns into memory. */
typedef enum sml_edge_opkind {
    SML_EDGE_ALLOC = 1, /* id, device, n bytes */
    SML_EDGE_FREE,      /* id */
    SML_EDGE_UPLOAD,    /* id, off, n bytes that follow the request */
    SML_EDGE_DOWNLOAD,  /* id, off, n bytes that come back */
    SML_EDGE_FILL,      /* id, off, n bytes of `byte` */
    SML_EDGE_FILL2D,    /* id: height rows of width bytes, pitch apart, of `byte` */
    SML_EDGE_COPY,      /* id, off <- id2, off2: n bytes */
    SML_EDGE_RUN        /* kernel on the problem, pointers as tokens; then the device's sync */
} sml_edge_opkind;

#define SML_EDGE_TOKEN_SHIFT 40

typedef struct sml_edge_op {
    int32_t kind, device, byte, unused;
    uint64_t id, off, id2, off2, n, pitch, height;
    char kernel[64];
    int32_t op, dtype;
    int64_t rows, cols, ld;
    uint64_t x, dy, out; /* tokens; dy 0 for a forward op */
} sml_edge_op;

typedef struct sml_edge_remote {
    /* One operation in the worker: `in` (op->n bytes, UPLOAD) goes with it, `out` (op->n bytes,
     * DOWNLOAD) comes back. A RUN whose worker ended (a crash, an exit, past ten times its
     * deadline) returns SML_ERR_KERNEL_FAILED with the cause in why; the next operation starts a
     * fresh worker, in which none of the old buffers exists. */
    sml_status (*op)(void *ctx, const sml_edge_op *op, const void *in, void *out, char *why,
                     size_t n);
    void *ctx;
} sml_edge_remote;

/* The whole program: parse -> run every case on every selected kernel -> print the summary.
 * `name` opens every line it prints ("FAIL <name>: ..."). remote: where the kernels run (NULL:
 * in this process). Returns the exit code: 0 pass, 1 fail, 2 bad arguments, 77 no GPU (without
 * --cpu or --list-cases). */
int sml_edge_main(const char *name, int argc, char **argv, const sml_edge_remote *remote);
/* With several GPUs (o->devices, or every visible one) and no --shard: this program again per
 * GPU on its slice; returns the run's exit code. -1: run here. */
int sml_edge_split(const char *name, const sml_edge_opts *o, int argc, char **argv);

#endif
