/* npy.c: the .npy reader and writer (see npy.h for the bf16 convention). The header is a
 * Python dict literal; we parse just its three keys and refuse anything we would have to
 * guess about (byte order, Fortran order, dtypes softmax-lab does not compute in). */
#include "prop/npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/out_file.h"


void sml_npy_sidecar_path(const char *path, char *buf, size_t n) {
    snprintf(buf, n, "%s.dtype", path);
}

void sml_npy_free(sml_npy *a) {
    if (!a) return;
    free(a->data);
    a->data = NULL;
    a->bytes = 0;
}

/* Find `'key':` in the header dict and return the text after the colon. */
static const char *dict_value(const char *hdr, const char *key) {
    char pat[32];
    const char *quotes = "'\"";
    for (int q = 0; q < 2; q++) {
        snprintf(pat, sizeof pat, "%c%s%c", quotes[q], key, quotes[q]);
        const char *p = strstr(hdr, pat);
        if (!p) continue;
        p += strlen(pat);
        while (isspace((unsigned char)*p)) p++;
        if (*p != ':') return NULL;
        p++;
        while (isspace((unsigned char)*p)) p++;
        return p;
    }
    return NULL;
}

/* Read the sidecar's word, if any: 1 found (dtype in *out), 0 absent, -1 unreadable. */
static int read_sidecar(const char *path, sml_dtype *out, char *word, size_t wn) {
    char sp[4096];
    sml_npy_sidecar_path(path, sp, sizeof sp);
    FILE *f = fopen(sp, "r");
    if (!f) return 0;
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    snprintf(word, wn, "%s", s);
    return sml_dtype_parse(s, out) == SML_OK ? 1 : -1;
}

sml_status sml_npy_read(const char *path, int want, sml_npy *out, char *err, size_t errlen) {
    if (!path || !out) return SML_ERR_NULL_POINTER;
    memset(out, 0, sizeof *out);
    if (want >= SML_DTYPE_COUNT)
        return sml_errorf(SML_ERR_BAD_DTYPE, err, errlen, "%s: unknown requested dtype", path);
    FILE *f = fopen(path, "rb");
    if (!f) return sml_errorf(SML_ERR_IO, err, errlen, "%s: cannot open: %s", path, strerror(errno));
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fclose(f);
        return sml_errorf(SML_ERR_FORMAT, err, errlen,
                    "%s: not a .npy file (no \\x93NUMPY magic); save it with numpy.save", path);
    }
    int major = pre[6];
    uint64_t hlen;
    long data_at;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | ((uint64_t)pre[9] << 8);
        data_at = 10 + (long)hlen;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            fclose(f);
            return sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: truncated .npy header", path);
        }
        hlen = (uint64_t)pre[8] | ((uint64_t)pre[9] << 8) | ((uint64_t)pre[10] << 16) |
               ((uint64_t)pre[11] << 24);
        data_at = 12 + (long)hlen;
    } else {
        fclose(f);
        return sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: .npy format version %d.%d not supported (1.0 and 2.0 are)",
                    path, major, pre[7]);
    }
    if (hlen > (1u << 20)) {
        fclose(f);
        return sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: implausible .npy header length %llu", path,
                    (unsigned long long)hlen);
    }
    char *hdr = malloc(hlen + 1);
    if (!hdr) { fclose(f); return SML_ERR_OUT_OF_MEMORY; }
    if (fread(hdr, 1, hlen, f) != hlen) {
        free(hdr);
        fclose(f);
        return sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: truncated .npy header", path);
    }
    hdr[hlen] = 0;

    sml_status st = SML_OK;
    /* descr */
    const char *d = dict_value(hdr, "descr");
    char descr[32] = {0};
    if (!d || (*d != '\'' && *d != '"')) {
        st = sml_errorf(SML_ERR_FORMAT, err, errlen,
                  "%s: the header has no simple 'descr' (structured arrays are not supported)", path);
        goto out_hdr;
    }
    {
        char q = *d++;
        size_t i = 0;
        while (*d && *d != q && i + 1 < sizeof descr) descr[i++] = *d++;
    }
    /* fortran_order */
    const char *fo = dict_value(hdr, "fortran_order");
    if (!fo || (strncmp(fo, "False", 5) != 0 && strncmp(fo, "True", 4) != 0)) {
        st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: the header has no fortran_order", path);
        goto out_hdr;
    }
    if (strncmp(fo, "True", 4) == 0) {
        st = sml_errorf(SML_ERR_FORMAT, err, errlen,
                  "%s: Fortran-order array; save a C-order copy (numpy.ascontiguousarray)", path);
        goto out_hdr;
    }
    /* shape */
    const char *sh = dict_value(hdr, "shape");
    if (!sh || *sh != '(') {
        st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: the header has no shape tuple", path);
        goto out_hdr;
    }
    sh++;
    out->ndim = 0;
    for (;;) {
        while (isspace((unsigned char)*sh)) sh++;
        if (*sh == ')') break;
        if (!isdigit((unsigned char)*sh)) {
            st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: cannot parse the shape in the header", path);
            goto out_hdr;
        }
        if (out->ndim == SML_NPY_MAX_DIMS) {
            st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: more than %d dimensions", path, SML_NPY_MAX_DIMS);
            goto out_hdr;
        }
        errno = 0;
        char *end;
        long long v = strtoll(sh, &end, 10);
        if (errno || v < 0) {
            st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: bad dimension in the shape", path);
            goto out_hdr;
        }
        out->shape[out->ndim++] = v;
        sh = end;
        while (isspace((unsigned char)*sh)) sh++;
        if (*sh == ',') sh++;
    }
    if (out->ndim == 0) {
        st = sml_errorf(SML_ERR_FORMAT, err, errlen,
                  "%s: a 0-d array (a scalar); softmax needs at least one axis", path);
        goto out_hdr;
    }

    /* dtype */
    {
        int raw = 0;
        sml_dtype dt = SML_F32;
        if (descr[0] == '>' && strcmp(descr + 1, "u1") != 0) {
            st = sml_errorf(SML_ERR_FORMAT, err, errlen,
                      "%s: big-endian data ('%s'); save it as little-endian (x.astype(x.dtype.newbyteorder('<')))",
                      path, descr);
            goto out_hdr;
        }
        const char *t = (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') ? descr + 1 : descr;
        if (!strcmp(t, "f4")) dt = SML_F32;
        else if (!strcmp(t, "f2")) dt = SML_F16;
        else if (!strcmp(t, "u2") || !strcmp(t, "i2") || !strcmp(t, "V2")) raw = 1;
        else {
            st = sml_errorf(SML_ERR_BAD_DTYPE, err, errlen,
                      "%s: dtype '%s' is not one softmax-lab computes in: use float32 ('<f4'), "
                      "float16 ('<f2') or bf16 bits as uint16 with a '%s.dtype' sidecar saying bf16 "
                      "(for float64: x.astype(numpy.float32))",
                      path, descr, path);
            goto out_hdr;
        }
        sml_dtype side;
        char word[64] = {0};
        int sc = read_sidecar(path, &side, word, sizeof word);
        if (sc < 0) {
            st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s.dtype: unknown dtype '%s' (expected bf16, fp16 or fp32)",
                      path, word);
            goto out_hdr;
        }
        if (raw) {
            if (sc == 1 && side == SML_F32) {
                st = sml_errorf(SML_ERR_BAD_DTYPE, err, errlen, "%s: 16-bit data but the sidecar says fp32", path);
                goto out_hdr;
            }
            if (sc == 1 && want >= 0 && (sml_dtype)want != side) {
                st = sml_errorf(SML_ERR_BAD_DTYPE, err, errlen, "%s: the sidecar says %s but %s was asked for",
                          path, sml_dtype_name(side), sml_dtype_name((sml_dtype)want));
                goto out_hdr;
            }
            if (sc == 1) dt = side;
            else if (want == SML_F16 || want == SML_BF16) dt = (sml_dtype)want;
            else {
                st = sml_errorf(SML_ERR_BAD_DTYPE, err, errlen,
                          "%s: raw 16-bit data ('%s') with no dtype: write bf16 into %s.dtype or pass --dtype bf16",
                          path, descr, path);
                goto out_hdr;
            }
        } else {
            if (sc == 1 && side != dt) {
                st = sml_errorf(SML_ERR_BAD_DTYPE, err, errlen, "%s: data is %s but the sidecar says %s", path,
                          sml_dtype_name(dt), sml_dtype_name(side));
                goto out_hdr;
            }
            if (want >= 0 && (sml_dtype)want != dt) {
                st = sml_errorf(SML_ERR_BAD_DTYPE, err, errlen,
                          "%s: data is %s but %s was asked for (convert it with numpy first)", path,
                          sml_dtype_name(dt), sml_dtype_name((sml_dtype)want));
                goto out_hdr;
            }
        }
        out->dtype = dt;
        out->raw_bits = raw;
    }

    /* size */
    {
        uint64_t n = 1;
        for (int i = 0; i < out->ndim; i++) {
            uint64_t v = (uint64_t)out->shape[i];
            if (v && n > (UINT64_MAX / 8) / v) {
                st = sml_errorf(SML_ERR_FORMAT, err, errlen, "%s: shape too large", path);
                goto out_hdr;
            }
            n *= v;
        }
        out->cols = out->shape[out->ndim - 1];
        out->rows = 1;
        for (int i = 0; i + 1 < out->ndim; i++) out->rows *= out->shape[i];
        size_t esz = sml_dtype_size(out->dtype);
        out->bytes = (size_t)n * esz;
        if (fseek(f, 0, SEEK_END) != 0) { st = SML_ERR_IO; goto out_hdr; }
        long fsize = ftell(f);
        if (fsize < data_at || (uint64_t)(fsize - data_at) < out->bytes) {
            st = sml_errorf(SML_ERR_FORMAT, err, errlen,
                      "%s: truncated: the header promises %llu data bytes, the file holds %ld", path,
                      (unsigned long long)out->bytes, fsize < data_at ? 0L : fsize - data_at);
            goto out_hdr;
        }
        out->data = malloc(out->bytes ? out->bytes : 1);
        if (!out->data) { st = SML_ERR_OUT_OF_MEMORY; goto out_hdr; }
        if (fseek(f, data_at, SEEK_SET) != 0 || fread(out->data, 1, out->bytes, f) != out->bytes) {
            free(out->data);
            out->data = NULL;
            st = sml_errorf(SML_ERR_IO, err, errlen, "%s: read error", path);
            goto out_hdr;
        }
    }
out_hdr:
    free(hdr);
    fclose(f);
    return st;
}

sml_status sml_npy_write(const char *path, sml_dtype dt, int ndim, const int64_t *shape,
                         const void *data, char *err, size_t errlen) {
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
    int hn = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shp);
    /* Pad with spaces and a newline so the data starts on a 64-byte boundary, as numpy does. */
    int total = 10 + hn + 1;
    int pad = (64 - total % 64) % 64;
    for (int i = 0; i < pad; i++) hdr[hn++] = ' ';
    hdr[hn++] = '\n';
    sml_out_file out;
    if (sml_out_open(&out, path, err, errlen) != SML_OK) return SML_ERR_IO;
    FILE *f = out.f;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hn & 0xFF),
                             (unsigned char)(hn >> 8)};
    size_t bytes = (size_t)n * sml_dtype_size(dt);
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)hn, f) == (size_t)hn &&
             (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
    if (!ok) {
        int e = errno;
        sml_out_abort(&out);
        return sml_errorf(SML_ERR_IO, err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    if (sml_out_commit(&out, err, errlen) != SML_OK) return SML_ERR_IO;
    char sp[4096];
    sml_npy_sidecar_path(path, sp, sizeof sp);
    if (dt == SML_BF16) {
        if (sml_out_write(sp, "bf16\n", 5, err, errlen) != SML_OK) return SML_ERR_IO;
    } else {
        remove(sp); /* a stale sidecar from an earlier bf16 file of that name would lie */
    }
    return SML_OK;
}

sml_status sml_npy_write_2d(const char *path, sml_dtype dt, int64_t rows, int64_t cols,
                            const void *data, char *err, size_t errlen) {
    int64_t shape[2] = {rows, cols};
    return sml_npy_write(path, dt, 2, shape, data, err, errlen);
}
