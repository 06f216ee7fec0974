/* plan_table.h: plan tables, what `auto` runs on a GPU model it has been tuned on. A table is
 * keyed by the GPU model (name, SM count, DRAM bytes per SM clock) and maps (op, dtype, column
 * band, optional row band) to a plan: a kernel family and its knobs (kernels/tuning.h; 0 = the
 * launcher's own choice). `softmax-lab tune` writes them; shipped ones live in data/plans/.
 *
 * The format, one item a line (lines of at most SML_PLAN_MAX_LINE characters; '#' starts a
 * comment line; blank lines are skipped):
 *
 *   softmax-lab-plans 1
 *   gpu.name NVIDIA H100 80GB HBM3
 *   gpu.sms 132
 *   gpu.dram 12.8
 *   OP DTYPE COLS ROWS FAMILY [KNOB=VALUE ...]
 *
 * OP: softmax, log_softmax, softmax_bwd, log_softmax_bwd; DTYPE: fp32, fp16, bf16; COLS:
 * LO-HI (HI a number or `max`); ROWS: `*` (every row count) or LO-HI; FAMILY: warp, block,
 * split, online, coop; knobs by family: warp K R blocks; block threads K blocks; online
 * threads blocks; split C threads blocks; coop threads stages blocks slices. Entries are
 * sorted by op, dtype (the enums' order), then the bands' low ends, and the bands of one op
 * and dtype do not overlap. The loader refuses anything else, naming the line and the field.
 *
 * Plain C in the core library (no JSON, no CUDA), so that `auto` can read a table. */
#ifndef SML_CORE_PLAN_TABLE_H
#define SML_CORE_PLAN_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SML_PLAN_FORMAT      "softmax-lab-plans 1"
#define SML_PLAN_MAX_LINE    512 /* characters a line may have, its newline excluded */
#define SML_PLAN_MAX_ENTRIES 4096
#define SML_PLAN_MAX_FILE    (1u << 20) /* bytes a table file may have */
#define SML_PLAN_NAME_LEN    96         /* the GPU name, its NUL included */
#define SML_PLAN_MAX_SMS     1024
#define SML_PLAN_MAX_BAND    ((int64_t)1 << 62) /* `max` */

typedef enum sml_plan_family {
    SML_PLAN_WARP = 0,
    SML_PLAN_BLOCK,
    SML_PLAN_SPLIT,
    SML_PLAN_ONLINE,
    SML_PLAN_COOP,
    SML_PLAN_FAMILY_COUNT
} sml_plan_family;

const char *sml_plan_family_name(sml_plan_family f); /* "warp", ...; "?" out of range */

/* A kernel family and its knobs (kernels/tuning.h); 0: the launcher's own choice. */
typedef struct sml_plan {
    sml_plan_family family;
    int threads, K, R, blocks, C, stages, slices;
} sml_plan;

/* The GPU model a table is for. dram: peak DRAM bytes per SM per SM clock (sml_gpu_facts);
 * two figures match when they agree to one decimal. */
typedef struct sml_plan_key {
    char name[SML_PLAN_NAME_LEN];
    int sms;
    double dram;
} sml_plan_key;

typedef struct sml_plan_entry {
    sml_op op;
    sml_dtype dtype;
    int64_t cols_lo, cols_hi, rows_lo, rows_hi; /* rows 1-SML_PLAN_MAX_BAND: `*` */
    sml_plan plan;
    int line; /* where it stood in its file; 0 when made in memory */
} sml_plan_entry;

typedef struct sml_plan_table {
    sml_plan_key key;
    size_t n;
    sml_plan_entry *e;
    size_t first[SML_OP_COUNT][SML_DTYPE_COUNT],
        end[SML_OP_COUNT][SML_DTYPE_COUNT]; /* per op, dtype */
} sml_plan_table;

/* Parse a table from text (len bytes, need not be NUL-terminated). `where` names it in
 * messages (a path). SML_ERR_FORMAT with "WHERE:LINE: FIELD: problem" in err on any bad
 * line; the table is then empty. Free with sml_plan_table_free. */
sml_status sml_plan_table_parse(const char *text, size_t len, const char *where, sml_plan_table *t,
                                char *err, size_t errlen);
/* The same from a file: SML_ERR_IO when it cannot be read, SML_ERR_FORMAT past
 * SML_PLAN_MAX_FILE bytes or on a bad line. */
sml_status sml_plan_table_load(const char *path, sml_plan_table *t, char *err, size_t errlen);
void sml_plan_table_free(sml_plan_table *t);

/* Check entries made in memory as the loader checks a file's (order, overlaps, knobs) and
 * build the index; the table takes e (malloc'ed) on success and on failure. */
sml_status sml_plan_table_adopt(sml_plan_table *t, const sml_plan_key *key, sml_plan_entry *e,
                                size_t n, char *err, size_t errlen);

/* Write the table in the format above (a header comment first, when not NULL). 0 on success. */
int sml_plan_table_write(const sml_plan_table *t, const char *comment, FILE *f);
/* "warp K=2 R=1" into buf: the family and its non-zero knobs. */
const char *sml_plan_describe(const sml_plan *p, char *buf, size_t n);

/* The entry whose bands hold (rows, cols) for op and dtype, or NULL. */
const sml_plan_entry *sml_plan_table_find(const sml_plan_table *t, sml_op op, sml_dtype dt,
                                          int64_t rows, int64_t cols);

/* 1 when a table keyed `table` is for the GPU `gpu`: the same name and SM count, and DRAM
 * figures equal to one decimal. */
int sml_plan_key_matches(const sml_plan_key *table, const sml_plan_key *gpu);
/* The first field that differs ("gpu.name", "gpu.sms", "gpu.dram"), or NULL when they match. */
const char *sml_plan_key_mismatch(const sml_plan_key *table, const sml_plan_key *gpu);

#ifdef __cplusplus
}
#endif
#endif
