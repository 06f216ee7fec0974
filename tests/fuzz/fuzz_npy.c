/* fuzz_npy: the .npy reader (src/io/npy.c) on mutated files. An accepted file must be a
 * format 1.0 or 2.0 file whose bytes are exactly the preamble, the header its length field
 * gives (ending in a newline) and the data handed back: rows x cols elements of the
 * dtype asked for, every byte readable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/npy.h"

const char sml_fuzz_name[] = "fuzz_npy";
const char sml_fuzz_suffix[] = ".npy";
const char *const sml_fuzz_dict[] = {"\x93NUMPY", "\x01\x00", "\x02\x00", "\x03\x00",
                                     "{",         "}",        "(",        ")",
                                     ",",         ":",        " ",        "\n",
                                     "'",         "\"",       "'descr'",  "'fortran_order'",
                                     "'shape'",   "True",     "False",    "Falsey",
                                     "'<f4'",     "'<f2'",    "'<u2'",    "'<i2'",
                                     "'|V2'",     "'>f4'",    "'<f8'",    "[('a', '<f4')]",
                                     "(2, 3)",    "(2 3)",    "(5,)",     "()",
                                     "(0, 4)",    NULL};

static char path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(path, sizeof path, "%s/in.npy", sml_fuzz_tmpdir());
    return 0;
}

static void check(const sml_npy *a, const char *how) {
    if (a->ndim < 1 || a->ndim > SML_NPY_MAX_DIMS) sml_fuzz_fail("%s: ndim %d", how, a->ndim);
    int64_t rows = 1;
    for (int i = 0; i + 1 < a->ndim; i++) rows *= a->shape[i];
    if (a->rows != rows || a->cols != a->shape[a->ndim - 1] || a->rows < 0 || a->cols < 0)
        sml_fuzz_fail("%s: rows %lld cols %lld do not match the shape", how, (long long)a->rows,
                      (long long)a->cols);
    if (a->bytes != (size_t)a->rows * (size_t)a->cols * sml_dtype_size(a->dtype))
        sml_fuzz_fail("%s: %zu bytes for %lldx%lld %s", how, a->bytes, (long long)a->rows,
                      (long long)a->cols, sml_dtype_name(a->dtype));
    unsigned sum = 0; /* every byte is read: a short buffer is a sanitizer report */
    for (size_t i = 0; i < a->bytes; i++) sum += ((const unsigned char *)a->data)[i];
    (void)sum;
}

/* The file's own account of itself, read from its bytes (not by the reader under test). */
static void check_layout(const uint8_t *d, size_t size, const sml_npy *a) {
    if (size < 12 || (d[6] != 1 && d[6] != 2) || d[7] != 0)
        sml_fuzz_fail("accepted a file of %zu bytes, version %d.%d", size, size > 7 ? d[6] : -1,
                      size > 7 ? d[7] : -1);
    size_t pre = d[6] == 1 ? 10 : 12;
    size_t hlen =
        d[8] | (size_t)d[9] << 8 | (d[6] == 2 ? (size_t)d[10] << 16 | (size_t)d[11] << 24 : 0);
    if (pre + hlen + a->bytes != size)
        sml_fuzz_fail("accepted %zu bytes as %zu of preamble, %zu of header and %zu of data", size,
                      pre, hlen, a->bytes);
    if (!hlen || d[pre + hlen - 1] != '\n')
        sml_fuzz_fail("accepted a header that does not end in a newline");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sml_fuzz_write(path, data, size);
    /* The dtype asked for, and the sidecar next to the file (NULL: none). */
    static const struct {
        int want;
        const char *sidecar;
    } RUNS[] = {{-1, NULL},     {SML_F32, NULL},     {SML_F16, NULL}, {SML_BF16, NULL},
                {-1, "bf16\n"}, {SML_F16, "bf16\n"}, {-1, "fp32"},    {-1, "float128\n"}};
    char side[600];
    snprintf(side, sizeof side, "%s.dtype", path);
    for (size_t i = 0; i < sizeof RUNS / sizeof RUNS[0]; i++) {
        if (RUNS[i].sidecar)
            sml_fuzz_write(side, (const uint8_t *)RUNS[i].sidecar, strlen(RUNS[i].sidecar));
        else
            remove(side);
        sml_npy a;
        char err[512] = "";
        sml_status s = sml_npy_read(path, RUNS[i].want, &a, err, sizeof err);
        if (s == SML_OK) {
            check(&a, "accepted");
            check_layout(data, size, &a);
            if (RUNS[i].want >= 0 && a.dtype != (sml_dtype)RUNS[i].want)
                sml_fuzz_fail("asked for %d, got %d", RUNS[i].want, a.dtype);
            sml_npy_free(&a);
        } else if (!err[0]) {
            sml_fuzz_fail("refused with status %s and no message", sml_strerror(s));
        }
    }
    return 0;
}
