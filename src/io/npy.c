/* npy.c: the .npy reader and writer (see npy.h for the bf16 convention). The header is a
 * Python dict literal of three keys, parsed strictly; anything we would have to guess about
 * (byte order, Fortran order, dtypes softmax-lab does not compute in, bytes the header does
 * not account for) is refused. */
#include "io/npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/file_read.h"
#include "core/internal.h"
#include "io/out_file.h"

void sml_npy_sidecar_path(const char *path, char *buf, size_t n) {
    snprintf(buf, n, "%s.dtype", path);
}

void sml_npy_free(sml_npy *a) {
    if (!a) return;
    free(a->data);
    a->data = NULL;
    a->bytes = 0;
}

/* The header: a Python dict literal of exactly the keys descr, fortran_order and shape
 * (what numpy writes and reads), parsed strictly so that nothing is guessed: 'Falsey' is
 * no boolean, (2 3) no tuple. */
typedef struct header {
    char descr[32];
    int fortran;
    int ndim;
    int64_t shape[SML_NPY_MAX_DIMS];
    int seen[3];
} header;

static const char *skip_sp(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* A Python string without escapes, quoted with ' or "; NULL if there is none at p. */
static const char *py_str(const char *p, const char *end, char *out, size_t n) {
    if (p >= end || (*p != '\'' && *p != '"')) return NULL;
    char q = *p++;
    size_t k = 0;
    while (p < end && *p != q) {
        if (*p == '\\' || (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7F || k + 1 >= n)
            return NULL;
        out[k++] = *p++;
    }
    if (p >= end) return NULL;
    out[k] = 0;
    return p + 1;
}

/* A word (True, False): letters, digits and '_' up to a delimiter. */
static const char *py_word(const char *p, const char *end, char *out, size_t n) {
    size_t k = 0;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_')) {
        if (k + 1 >= n) return NULL;
        out[k++] = *p++;
    }
    out[k] = 0;
    return k ? p : NULL;
}

/* (d0, d1, ...): non-negative decimal integers; (n) is an int, not a tuple, as in Python. */
static const char *py_shape(const char *p, const char *end, header *h, char *why, size_t wn) {
    if (p >= end || *p != '(') return snprintf(why, wn, "'shape' is not a tuple"), NULL;
    p = skip_sp(p + 1, end);
    int commas = 0;
    h->ndim = 0;
    while (p < end && *p != ')') {
        if (!isdigit((unsigned char)*p))
            return snprintf(why, wn, "'shape' holds something other than non-negative integers"),
                   NULL;
        if (h->ndim == SML_NPY_MAX_DIMS)
            return snprintf(why, wn, "'shape' has more than %d dimensions", SML_NPY_MAX_DIMS), NULL;
        int64_t v = 0;
        for (; p < end && isdigit((unsigned char)*p); p++) {
            if (v > (INT64_MAX - 9) / 10)
                return snprintf(why, wn, "'shape' has a dimension too large"), NULL;
            v = v * 10 + (*p - '0');
        }
        h->shape[h->ndim++] = v;
        p = skip_sp(p, end);
        if (p < end && *p == ',') {
            commas++;
            p = skip_sp(p + 1, end);
        } else if (p < end && *p != ')') {
            return snprintf(why, wn, "'shape' is not a tuple: a ',' must separate its dimensions"),
                   NULL;
        }
    }
    if (p >= end) return snprintf(why, wn, "'shape' has no closing ')'"), NULL;
    if (h->ndim == 1 && commas == 0)
        return snprintf(why, wn, "'shape' (%lld) is an integer, not a tuple: write (%lld,)",
                        (long long)h->shape[0], (long long)h->shape[0]),
               NULL;
    return p + 1;
}

/* 1 when hdr[0..n) is a valid header; else 0 with why[wn] saying what is wrong. */
static int parse_header(const char *hdr, size_t n, header *h, char *why, size_t wn) {
    static const char *const KEYS[3] = {"descr", "fortran_order", "shape"};
    const char *p = hdr, *end = hdr + n;
    memset(h, 0, sizeof *h);
    if (n == 0 || hdr[n - 1] != '\n')
        return snprintf(why, wn,
                        "the header does not end with a newline (is its length field right?)"),
               0;
    p = skip_sp(p, end);
    if (p >= end || *p != '{') return snprintf(why, wn, "the header is not a dict"), 0;
    p = skip_sp(p + 1, end);
    while (p < end && *p != '}') {
        char key[32];
        const char *q = py_str(p, end, key, sizeof key);
        if (!q) return snprintf(why, wn, "the header's keys are not plain quoted strings"), 0;
        int k = 0;
        while (k < 3 && strcmp(key, KEYS[k])) k++;
        if (k == 3)
            return snprintf(why, wn,
                            "unknown key '%s' in the header (descr, fortran_order and shape only)",
                            key),
                   0;
        if (h->seen[k]++) return snprintf(why, wn, "'%s' appears twice in the header", key), 0;
        p = skip_sp(q, end);
        if (p >= end || *p != ':')
            return snprintf(why, wn, "no ':' after '%s' in the header", key), 0;
        p = skip_sp(p + 1, end);
        if (k == 0) {
            if (p < end && *p == '[') {
                return snprintf(why, wn, "'descr' is a list: structured arrays are not supported"),
                       0;
            }
            if (!(q = py_str(p, end, h->descr, sizeof h->descr)))
                return snprintf(why, wn, "'descr' is not a simple dtype string such as '<f4'"), 0;
        } else if (k == 1) {
            char w[8];
            q = py_word(p, end, w, sizeof w);
            if (!q || (strcmp(w, "True") && strcmp(w, "False")))
                return snprintf(why, wn, "'fortran_order' is not True or False"), 0;
            h->fortran = !strcmp(w, "True");
        } else if (!(q = py_shape(p, end, h, why, wn))) {
            return 0;
        }
        p = skip_sp(q, end);
        if (p < end && *p == ',')
            p = skip_sp(p + 1, end);
        else if (p < end && *p != '}')
            return snprintf(why, wn, "a ',' or '}' must follow '%s' in the header", key), 0;
    }
    if (p >= end) return snprintf(why, wn, "the header's dict has no closing '}'"), 0;
    if (skip_sp(p + 1, end) != end) return snprintf(why, wn, "text after the header's dict"), 0;
    for (int k = 0; k < 3; k++)
        if (!h->seen[k]) return snprintf(why, wn, "the header has no '%s'", KEYS[k]), 0;
    return 1;
}

/* The sidecar's dtype, if there is one: 1 found (in *out), 0 absent, -1 unusable (why[wn]
 * says how). */
static int read_sidecar(const char *path, sml_dtype *out, char *why, size_t wn) {
    char sp[4096];
    if (snprintf(sp, sizeof sp, "%s.dtype", path) >= (int)sizeof sp || access(sp, F_OK) != 0)
        return 0;
    char *buf, how[160];
    size_t n;
    if (sml_file_read_all(sp, 64, &buf, &n, how, sizeof how) != SML_OK) {
        snprintf(why, wn, "its .dtype sidecar: %s", how);
        return -1;
    }
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    int r = sml_dtype_parse(s, out) == SML_OK ? 1 : -1;
    if (r < 0)
        snprintf(why, wn, "its .dtype sidecar: unknown dtype '%.32s' (expected bf16, fp16 or fp32)",
                 s);
    free(buf);
    return r;
}

/* The magic, the version and the header text (hdr, malloc'ed, NUL-terminated) and where the
 * data starts. */
static sml_status read_preamble(const char *path, FILE *f, int64_t fsize, char **hdr_out,
                                size_t *hlen_out, int64_t *data_at_out, char *err, size_t errlen) {
    sml_status st = SML_OK;
    char *hdr = NULL;
    unsigned char pre[12];
    if (fsize < 10) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "%lld bytes: too short for a .npy file (an empty or cut-off file?)",
                             (long long)fsize);
        goto out;
    }
    if (fread(pre, 1, 10, f) != 10) {
        st = sml_file_errorf(SML_ERR_IO, err, errlen, path, "read error");
        goto out;
    }
    if (memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "not a .npy file (no \\x93NUMPY magic); save it with numpy.save");
        goto out;
    }
    int major = pre[6], minor = pre[7];
    if ((major != 1 && major != 2) || minor != 0) {
        st = sml_file_errorf(
            SML_ERR_FORMAT, err, errlen, path,
            ".npy format version %d.%d not supported (1.0 and 2.0 are%s)", major, minor,
            major == 3 ? "; 3.0 is for UTF-8 field names of structured arrays" : "");
        goto out;
    }
    uint64_t hlen = (uint64_t)pre[8] | ((uint64_t)pre[9] << 8);
    int64_t data_at = 10;
    if (major == 2) {
        if (fsize < 12 || fread(pre + 10, 1, 2, f) != 2) {
            st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                                 "truncated: %lld bytes, no room for a header", (long long)fsize);
            goto out;
        }
        hlen |= ((uint64_t)pre[10] << 16) | ((uint64_t)pre[11] << 24);
        data_at = 12;
    }
    if (hlen > (1u << 20)) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "implausible .npy header length %llu", (unsigned long long)hlen);
        goto out;
    }
    data_at += (int64_t)hlen;
    if (data_at > fsize) {
        st = sml_file_errorf(
            SML_ERR_FORMAT, err, errlen, path,
            "truncated: the header length field says %llu bytes, the file ends %lld bytes in",
            (unsigned long long)hlen, (long long)fsize);
        goto out;
    }
    if (!(hdr = malloc(hlen + 1))) {
        st = SML_ERR_OUT_OF_MEMORY;
        goto out;
    }
    if (fread(hdr, 1, hlen, f) != hlen) {
        st = sml_file_errorf(SML_ERR_IO, err, errlen, path, "read error");
        goto out;
    }
    hdr[hlen] = 0;
    *hdr_out = hdr;
    *hlen_out = (size_t)hlen;
    *data_at_out = data_at;
    return SML_OK;
out:
    free(hdr);
    return st;
}

/* The dtype of the data (descr, the sidecar and the caller's wish): SML_OK with out->dtype
 * and out->raw_bits set, else the error. Raw 16-bit data ('<u2', '<i2', 'V2') is taken as
 * bf16 bits only: NumPy has a float16 ('<f2'), so fp16 from raw bits would be a guess. */
static sml_status resolve_dtype(const char *path, const char *descr, int want, sml_npy *out,
                                char *err, size_t errlen) {
    char why[256];
    sml_status st = SML_OK;
    int raw = 0;
    sml_dtype dt = SML_F32;
    if (descr[0] == '>' && strcmp(descr + 1, "u1") != 0) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "big-endian data ('%s'); save it as little-endian "
                             "(x.astype(x.dtype.newbyteorder('<')))",
                             descr);
        goto out;
    }
    const char *t = (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') ? descr + 1 : descr;
    if (!strcmp(t, "f4"))
        dt = SML_F32;
    else if (!strcmp(t, "f2"))
        dt = SML_F16;
    else if (!strcmp(t, "u2") || !strcmp(t, "i2") || !strcmp(t, "V2"))
        raw = 1;
    else {
        st = sml_file_errorf(
            SML_ERR_BAD_DTYPE, err, errlen, path,
            "dtype '%s' is not one softmax-lab computes in: use float32 ('<f4'), "
            "float16 ('<f2') or bf16 bits as uint16 with a '.dtype' sidecar saying bf16 "
            "(for float64: x.astype(numpy.float32))",
            descr);
        goto out;
    }
    sml_dtype side;
    int sc = read_sidecar(path, &side, why, sizeof why);
    if (sc < 0) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path, "%s", why);
        goto out;
    }
    if (raw) {
        if (sc == 1 && side == SML_F32) {
            st = sml_file_errorf(SML_ERR_BAD_DTYPE, err, errlen, path,
                                 "16-bit data but the sidecar says fp32");
            goto out;
        }
        if (sc == 1 && want >= 0 && (sml_dtype)want != side) {
            st = sml_file_errorf(SML_ERR_BAD_DTYPE, err, errlen, path,
                                 "the sidecar says %s but %s was asked for", sml_dtype_name(side),
                                 sml_dtype_name((sml_dtype)want));
            goto out;
        }
        if (sc == 1)
            dt = side;
        else if (want == SML_F16 || want == SML_BF16)
            dt = (sml_dtype)want;
        if (dt == SML_F16) {
            st = sml_file_errorf(SML_ERR_BAD_DTYPE, err, errlen, path,
                                 "raw 16-bit data ('%s') read as fp16: only bf16 comes as raw bits "
                                 "(NumPy has no bf16); "
                                 "save fp16 as float16 ('<f2')",
                                 descr);
            goto out;
        }
        if (dt != SML_BF16) {
            st = sml_file_errorf(
                SML_ERR_BAD_DTYPE, err, errlen, path,
                "raw 16-bit data ('%s') with no dtype: write bf16 into the file's .dtype sidecar "
                "or pass --dtype bf16",
                descr);
            goto out;
        }
    } else {
        if (sc == 1 && side != dt) {
            st = sml_file_errorf(SML_ERR_BAD_DTYPE, err, errlen, path,
                                 "data is %s but the sidecar says %s", sml_dtype_name(dt),
                                 sml_dtype_name(side));
            goto out;
        }
        if (want >= 0 && (sml_dtype)want != dt) {
            st = sml_file_errorf(SML_ERR_BAD_DTYPE, err, errlen, path,
                                 "data is %s but %s was asked for (convert it with numpy first)",
                                 sml_dtype_name(dt), sml_dtype_name((sml_dtype)want));
            goto out;
        }
    }
    out->dtype = dt;
    out->raw_bits = raw;
out:
    return st;
}

/* The data after the header: exactly what the shape promises, no byte less and none more. */
static sml_status read_data(const char *path, FILE *f, int64_t fsize, int64_t data_at, sml_npy *out,
                            char *err, size_t errlen) {
    sml_status st = SML_OK;
    /* The product of the non-zero dimensions is bounded too, so no product of some of
     * them (rows) overflows, whatever dimension is 0. */
    uint64_t n = 1, nz = 1;
    for (int i = 0; i < out->ndim; i++) {
        uint64_t v = (uint64_t)out->shape[i];
        if (v && nz > (UINT64_MAX / 8) / v) {
            st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path, "shape too large");
            goto out;
        }
        if (v) nz *= v;
        n *= v;
    }
    out->cols = out->shape[out->ndim - 1];
    out->rows = 1;
    for (int i = 0; i + 1 < out->ndim; i++) out->rows *= out->shape[i];
    size_t esz = sml_dtype_size(out->dtype);
    uint64_t want_bytes = n * esz, have = (uint64_t)(fsize - data_at);
    if (have < want_bytes) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "truncated: the header promises %llu data bytes, the file holds %llu",
                             (unsigned long long)want_bytes, (unsigned long long)have);
        goto out;
    }
    if (have > want_bytes) {
        st = sml_file_errorf(
            SML_ERR_FORMAT, err, errlen, path,
            "%llu bytes after the %llu data bytes the header promises (a wrong header "
            "length or shape?)",
            (unsigned long long)(have - want_bytes), (unsigned long long)want_bytes);
        goto out;
    }
    out->bytes = (size_t)want_bytes;
    out->data = malloc(out->bytes ? out->bytes : 1);
    if (!out->data) {
        st = SML_ERR_OUT_OF_MEMORY;
        goto out;
    }
    if (fread(out->data, 1, out->bytes, f) != out->bytes) {
        free(out->data);
        out->data = NULL;
        out->bytes = 0;
        st = sml_file_errorf(SML_ERR_IO, err, errlen, path, "read error");
        goto out;
    }
out:
    return st;
}

sml_status sml_npy_read(const char *path, int want, sml_npy *out, char *err, size_t errlen) {
    if (!path || !out) return SML_ERR_NULL_POINTER;
    memset(out, 0, sizeof *out);
    if (want >= SML_DTYPE_COUNT)
        return sml_file_errorf(SML_ERR_BAD_DTYPE, err, errlen, path, "unknown requested dtype");
    char why[256];
    FILE *f;
    int64_t fsize, data_at = 0;
    if (sml_file_open_read(path, &f, &fsize, why, sizeof why) != SML_OK)
        return sml_file_errorf(SML_ERR_IO, err, errlen, path, "%s", why);
    char *hdr = NULL;
    size_t hlen = 0;
    sml_status st = read_preamble(path, f, fsize, &hdr, &hlen, &data_at, err, errlen);
    if (st != SML_OK) goto out;
    header h;
    if (!parse_header(hdr, hlen, &h, why, sizeof why)) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path, "%s", why);
        goto out;
    }
    if (h.fortran) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "Fortran-order array; save a C-order copy (numpy.ascontiguousarray)");
        goto out;
    }
    if (h.ndim == 0) {
        st = sml_file_errorf(SML_ERR_FORMAT, err, errlen, path,
                             "a 0-d array (a scalar); softmax needs at least one axis");
        goto out;
    }
    out->ndim = h.ndim;
    memcpy(out->shape, h.shape, sizeof h.shape);
    st = resolve_dtype(path, h.descr, want, out, err, errlen);
    if (st == SML_OK) st = read_data(path, f, fsize, data_at, out, err, errlen);
out:
    free(hdr);
    fclose(f);
    if (st != SML_OK) {
        out->bytes = 0;
        out->data = NULL;
    }
    return st;
}

sml_status sml_npy_stage(sml_npy_staged *st, const char *path, sml_dtype dt, int ndim,
                         const int64_t *shape, const void *data, char *err, size_t errlen) {
    memset(st, 0, sizeof *st);
    if (!path || !shape || !data) return SML_ERR_NULL_POINTER;
    if ((unsigned)dt >= SML_DTYPE_COUNT) return SML_ERR_BAD_DTYPE;
    if (ndim < 1 || ndim > SML_NPY_MAX_DIMS) return SML_ERR_INVALID_ARG;
    char shp[256] = "(";
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return SML_ERR_INVALID_ARG;
        n *= (uint64_t)shape[i];
        char t[32];
        snprintf(t, sizeof t, "%s%lld", i ? ", " : "", (long long)shape[i]);
        strncat(shp, t, sizeof shp - strlen(shp) - 1);
    }
    strncat(shp, ndim == 1 ? ",)" : ")", sizeof shp - strlen(shp) - 1);
    const char *descr = dt == SML_F32 ? "<f4" : dt == SML_F16 ? "<f2" : "<u2";
    char hdr[512];
    int hn = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                      descr, shp);
    /* Pad with spaces and a newline so the data starts on a 64-byte boundary, as numpy does. */
    int total = 10 + hn + 1;
    int pad = (64 - total % 64) % 64;
    for (int i = 0; i < pad; i++) hdr[hn++] = ' ';
    hdr[hn++] = '\n';
    sml_out_file *out = &st->file[0];
    if (sml_out_open(out, path, err, errlen) != SML_OK) return SML_ERR_IO;
    st->n = 1;
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hn & 0xFF), (unsigned char)(hn >> 8)};
    size_t bytes = (size_t)n * sml_dtype_size(dt);
    int ok = fwrite(pre, 1, 10, out->f) == 10 && fwrite(hdr, 1, (size_t)hn, out->f) == (size_t)hn &&
             (bytes == 0 || fwrite(data, 1, bytes, out->f) == bytes);
    sml_status s =
        ok ? sml_out_finish(out, err, errlen)
           : sml_errorf(SML_ERR_IO, err, errlen, "%s: write failed: %s", path, strerror(errno));
    char sp[4096];
    sml_npy_sidecar_path(path, sp, sizeof sp);
    if (s == SML_OK && dt == SML_BF16 &&
        (s = sml_out_open(&st->file[1], sp, err, errlen)) == SML_OK) {
        st->n = 2;
        fputs("bf16\n", st->file[1].f);
        s = sml_out_finish(&st->file[1], err, errlen);
    }
    st->stale_sidecar = dt != SML_BF16;
    if (s != SML_OK) sml_npy_stage_abort(st);
    return s == SML_OK ? SML_OK : SML_ERR_IO;
}

sml_status sml_npy_stage_place(sml_npy_staged *st, char *err, size_t errlen) {
    sml_status s = SML_OK;
    for (int i = 0; i < st->n && s == SML_OK; i++) s = sml_out_place(&st->file[i], err, errlen);
    if (s != SML_OK)
        sml_npy_stage_abort(st);
    else if (st->stale_sidecar && st->n) {
        char sp[4096]; /* a stale sidecar from an earlier bf16 file of that name would lie */
        sml_npy_sidecar_path(st->file[0].path, sp, sizeof sp);
        remove(sp);
    }
    st->n = 0;
    return s;
}

void sml_npy_stage_abort(sml_npy_staged *st) {
    for (int i = 0; i < st->n; i++) sml_out_abort(&st->file[i]);
    st->n = 0;
}

sml_status sml_npy_write(const char *path, sml_dtype dt, int ndim, const int64_t *shape,
                         const void *data, char *err, size_t errlen) {
    sml_npy_staged st;
    sml_status s = sml_npy_stage(&st, path, dt, ndim, shape, data, err, errlen);
    return s == SML_OK ? sml_npy_stage_place(&st, err, errlen) : s;
}

sml_status sml_npy_write_2d(const char *path, sml_dtype dt, int64_t rows, int64_t cols,
                            const void *data, char *err, size_t errlen) {
    int64_t shape[2] = {rows, cols};
    return sml_npy_write(path, dt, 2, shape, data, err, errlen);
}
