/* sweeps.c: the shapes each named sweep measures. `seeds` are the cases of the studies this
 * project started from, and `seed-row-fusion` / `seed-cutedsl` each study's own cells; `cols` walks the row length at a fixed batch (the Triton tutorial's
 * picture); `long` is few rows of very long rows (the split-row path); `short` is many
 * short rows (launch- and latency-bound); `standard` is their union, the sweep the perf
 * gate and the ledger use. */
#include "bench/sweeps.h"

#include <stdio.h>
#include <string.h>

#define F32  (1u << SML_F32)
#define F16  (1u << SML_F16)
#define BF16 (1u << SML_BF16)
#define ALL  (F32 | F16 | BF16)

static void add(sml_sweep *s, int64_t rows, int64_t cols, unsigned dtypes) {
    for (size_t i = 0; i < s->n; i++)
        if (s->shape[i].rows == rows && s->shape[i].cols == cols) {
            s->shape[i].dtypes |= dtypes;
            return;
        }
    if (s->n < SML_SWEEP_MAX_SHAPES) s->shape[s->n++] = (sml_sweep_shape){rows, cols, dtypes, 0};
}

static void add_seeds(sml_sweep *s) {
    add(s, 4096, 1024, F16 | F32);
    add(s, 4096, 8192, F16 | BF16);
    add(s, 4096, 16384, F16 | BF16);
}
/* The kernel lab's row-softmax experiment: PyTorch against a fused Triton kernel. */
static void add_seed_row_fusion(sml_sweep *s) { add(s, 4096, 1024, F16 | F32); }
/* The CuTeDSL softmax README's table (forward and backward, softmax and log-softmax). */
static void add_seed_cutedsl(sml_sweep *s) {
    add(s, 4096, 8192, F16 | BF16);
    add(s, 4096, 16384, F16);
}
static void add_cols(sml_sweep *s) {
    for (int64_t c = 256; c <= 32768; c *= 2) add(s, 4096, c, ALL);
}
static void add_long(sml_sweep *s) {
    add(s, 1024, 131072, ALL);
    add(s, 128, 1048576, ALL);
}
static void add_short(sml_sweep *s) {
    add(s, 32768, 512, ALL);
    add(s, 16384, 128, ALL);
}

static const struct {
    const char *name;
    void (*fill)(sml_sweep *);
} SWEEPS[] = {{"seeds", add_seeds},
              {"seed-row-fusion", add_seed_row_fusion},
              {"seed-cutedsl", add_seed_cutedsl},
              {"cols", add_cols},
              {"long", add_long},
              {"short", add_short}};

sml_status sml_sweep_get(const char *name, sml_sweep *out) {
    if (!name || !out) return SML_ERR_NULL_POINTER;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    if (!strcmp(name, "standard")) {
        for (size_t i = 0; i < sizeof SWEEPS / sizeof SWEEPS[0]; i++) SWEEPS[i].fill(out);
        return SML_OK;
    }
    for (size_t i = 0; i < sizeof SWEEPS / sizeof SWEEPS[0]; i++)
        if (!strcmp(name, SWEEPS[i].name)) {
            SWEEPS[i].fill(out);
            return SML_OK;
        }
    return SML_ERR_INVALID_ARG;
}

const char *sml_sweep_names(void) { return SML_SWEEP_NAMES; }

void sml_sweep_describe(const char *name, char *buf, size_t n) {
    sml_sweep s;
    buf[0] = 0;
    if (sml_sweep_get(name, &s) != SML_OK) return;
    size_t used = 0;
    for (size_t i = 0; i < s.n && used + 1 < n; i++) {
        char dts[24] = "";
        for (int d = 0; d < SML_DTYPE_COUNT; d++)
            if (s.shape[i].dtypes & (1u << d)) {
                if (dts[0]) strncat(dts, "/", sizeof dts - strlen(dts) - 1);
                strncat(dts, sml_dtype_name((sml_dtype)d), sizeof dts - strlen(dts) - 1);
            }
        int w = snprintf(buf + used, n - used, "%s%lldx%lld %s", i ? ", " : "",
                         (long long)s.shape[i].rows, (long long)s.shape[i].cols, dts);
        if (w < 0) break;
        used += (size_t)w;
    }
}

int64_t sml_sweep_shrink_rows(int64_t rows, int64_t cols, int64_t max_elems) {
    if (cols <= 0 || rows <= 0) return rows;
    int64_t cap = max_elems / cols;
    if (cap < 1) cap = 1;
    return rows < cap ? rows : cap;
}
