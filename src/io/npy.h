/* npy.h: NumPy .npy files, the format users dump logits in (numpy.save) and reproducers are
 * saved in. Reads format 1.0 and 2.0, writes 1.0; little-endian, C order only.
 *
 *   fp32 is '<f4', fp16 is '<f2'. NumPy has no bf16, so bf16 is stored as its raw bits,
 *   '<u2', and named in a sidecar text file next to it: "<file>.npy.dtype" holding the
 *   word "bf16" (docs/PROPERTIES.md, "Files"). When reading, raw 16-bit data ('<u2', '<i2'
 *   or 2-byte void, as torch .view(torch.int16) or ml_dtypes produce) takes its dtype from
 *   that sidecar or from the caller (`--dtype bf16`); without either it is an error, never
 *   a guess.
 *
 * An N-D array is read as rows x cols with cols the last axis and rows the product of the
 * others (softmax over the last axis); a 1-D array is one row. */
#ifndef SML_PROP_NPY_H
#define SML_PROP_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "io/out_file.h"
#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SML_NPY_MAX_DIMS 8

typedef struct sml_npy {
    sml_dtype dtype;
    int ndim;
    int64_t shape[SML_NPY_MAX_DIMS];
    int64_t rows, cols; /* leading axes flattened, last axis */
    void *data;         /* rows * cols elements of dtype, dense, C order (malloc) */
    size_t bytes;
    int raw_bits; /* 1: the file held 16-bit raw bits, typed by the sidecar or the caller */
} sml_npy;

/* Read `path`. `want` is the dtype the caller expects, or -1 to take the file's own; raw
 * 16-bit data needs one of `want` and the sidecar. On failure, err holds one line saying
 * what is wrong and what to do (SML_ERR_IO: cannot read; SML_ERR_FORMAT: not a usable
 * .npy; SML_ERR_BAD_DTYPE: a dtype softmax-lab does not take, or a conflict). */
sml_status sml_npy_read(const char *path, int want, sml_npy *out, char *err, size_t errlen);
void sml_npy_free(sml_npy *a);

/* Write a C-order array of dtype dt with the given shape (ndim 1..SML_NPY_MAX_DIMS); bf16
 * also writes the sidecar. */
sml_status sml_npy_write(const char *path, sml_dtype dt, int ndim, const int64_t *shape,
                         const void *data, char *err, size_t errlen);
/* sml_npy_write in two steps, for files that must appear together or not at all (a
 * reproducer's inputs and its .json; check --input's --save outputs beside its --json):
 * sml_npy_stage writes the file (and a bf16 sidecar) whole into temporaries, where a full disk
 * shows; sml_npy_stage_place puts them in place; sml_npy_stage_abort drops them. */
typedef struct sml_npy_staged {
    sml_out_file file[2]; /* the .npy, and the bf16 sidecar */
    int n;                /* files staged */
    int stale_sidecar;    /* 1: remove an old sidecar of that name when placed */
} sml_npy_staged;
sml_status sml_npy_stage(sml_npy_staged *st, const char *path, sml_dtype dt, int ndim,
                         const int64_t *shape, const void *data, char *err, size_t errlen);
sml_status sml_npy_stage_place(sml_npy_staged *st, char *err, size_t errlen);
void sml_npy_stage_abort(sml_npy_staged *st);

/* The common case: a rows x cols matrix. */
sml_status sml_npy_write_2d(const char *path, sml_dtype dt, int64_t rows, int64_t cols,
                            const void *data, char *err, size_t errlen);

/* The sidecar's name for `path` ("<path>.dtype") into buf. */
void sml_npy_sidecar_path(const char *path, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
