/* anchors.c: see anchors.h. Columns are found by header name, so the files may grow. */
#include "bench/anchors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 32

/* Bounded copy that always terminates (snprintf("%s") trips -Wformat-truncation here). */
static void copy_str(char *dst, size_t n, const char *src) {
    size_t len = strlen(src);
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = 0;
}

static int split(char *line, char **f) {
    int n = 0;
    char *p = line;
    for (;;) {
        if (n < MAX_FIELDS) f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0;
        p = c + 1;
    }
    return n;
}

static void chomp(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = 0;
}

static int col_index(char **hdr, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return i;
    return -1;
}

static int parse_op(const char *dir, const char *op, sml_op *out) {
    int bwd;
    if (!strcmp(dir, "fwd")) bwd = 0;
    else if (!strcmp(dir, "bwd")) bwd = 1;
    else return 0;
    if (!strcmp(op, "softmax")) *out = bwd ? SML_SOFTMAX_BWD : SML_SOFTMAX;
    else if (!strcmp(op, "log_softmax")) *out = bwd ? SML_LOG_SOFTMAX_BWD : SML_LOG_SOFTMAX;
    else return 0;
    return 1;
}

static int parse_num(const char *s, double *v) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == 0 && errno == 0;
}

static sml_anchor *cell(sml_anchors *a, sml_op op, sml_dtype dt, int64_t rows, int64_t cols) {
    for (size_t i = 0; i < a->n; i++) {
        sml_anchor_cell *c = &a->cells[i];
        if (c->op == op && c->dtype == dt && c->rows == rows && c->cols == cols) return &c->a;
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        sml_anchor_cell *nc = realloc(a->cells, cap * sizeof *nc);
        if (!nc) return NULL;
        a->cells = nc;
        a->cap = cap;
    }
    sml_anchor_cell *c = &a->cells[a->n++];
    memset(c, 0, sizeof *c);
    c->op = op;
    c->dtype = dt;
    c->rows = rows;
    c->cols = cols;
    c->a.found = 1;
    return &c->a;
}

sml_status sml_anchors_load(const char *path, sml_anchors *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return SML_ERR_IO;
    }
    copy_str(out->source, sizeof out->source, path);
    const char *base = strrchr(path, '/');
    copy_str(out->label, sizeof out->label, base ? base + 1 : path);
    char line[1024], hdr_buf[1024];
    char *hdr[MAX_FIELDS], *fld[MAX_FIELDS];
    int nh = 0, lineno = 0, first_comment = 1;
    int i_dir = -1, i_op, i_dt, i_rows, i_cols, i_best, i_bestb, i_cudnn, i_copyk, i_memcpy, i_backend,
        i_gbps;
    i_op = i_dt = i_rows = i_cols = i_best = i_bestb = i_cudnn = i_copyk = i_memcpy = i_backend =
        i_gbps = -1;
    sml_status st = SML_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        chomp(line);
        if (line[0] == '#') {
            /* The first comment names the machine: use it as the label. */
            if (first_comment) {
                const char *p = line + 1;
                while (*p == ' ') p++;
                copy_str(out->label, sizeof out->label, p);
                first_comment = 0;
            }
            continue;
        }
        if (!line[0]) continue;
        if (!nh) {
            copy_str(hdr_buf, sizeof hdr_buf, line);
            nh = split(hdr_buf, hdr);
            i_dir = col_index(hdr, nh, "direction");
            i_op = col_index(hdr, nh, "op");
            i_dt = col_index(hdr, nh, "dtype");
            i_rows = col_index(hdr, nh, "rows");
            i_cols = col_index(hdr, nh, "cols");
            i_best = col_index(hdr, nh, "best");
            i_bestb = col_index(hdr, nh, "best_backend");
            i_cudnn = col_index(hdr, nh, "cudnn");
            i_copyk = col_index(hdr, nh, "copy_kernel_same_bytes");
            i_memcpy = col_index(hdr, nh, "memcpy_d2d_same_bytes");
            i_backend = col_index(hdr, nh, "backend");
            i_gbps = col_index(hdr, nh, "GBps");
            if (i_dir < 0 || i_op < 0 || i_dt < 0 || i_rows < 0 || i_cols < 0 ||
                (i_best < 0 && (i_backend < 0 || i_gbps < 0))) {
                snprintf(err, errlen,
                         "%s:%d: header lacks direction,op,dtype,rows,cols and either best or "
                         "backend,GBps",
                         path, lineno);
                st = SML_ERR_FORMAT;
                break;
            }
            continue;
        }
        int nf = split(line, fld);
        if (nf != nh) {
            snprintf(err, errlen, "%s:%d: %d fields, the header has %d", path, lineno, nf, nh);
            st = SML_ERR_FORMAT;
            break;
        }
        sml_op op;
        sml_dtype dt;
        double rows, cols;
        if (!parse_op(fld[i_dir], fld[i_op], &op) || sml_dtype_parse(fld[i_dt], &dt) != SML_OK ||
            !parse_num(fld[i_rows], &rows) || !parse_num(fld[i_cols], &cols)) {
            snprintf(err, errlen, "%s:%d: bad direction/op/dtype/rows/cols", path, lineno);
            st = SML_ERR_FORMAT;
            break;
        }
        sml_anchor *a = cell(out, op, dt, (int64_t)rows, (int64_t)cols);
        if (!a) {
            st = SML_ERR_OUT_OF_MEMORY;
            snprintf(err, errlen, "out of memory");
            break;
        }
        double v;
        if (i_best >= 0) {
            if (parse_num(fld[i_best], &v)) a->best_gbps = v;
            if (i_bestb >= 0) copy_str(a->best_backend, sizeof a->best_backend, fld[i_bestb]);
            if (i_cudnn >= 0 && parse_num(fld[i_cudnn], &v)) a->cudnn_gbps = v;
            if (i_copyk >= 0 && parse_num(fld[i_copyk], &v)) a->copy_kernel_gbps = v;
            if (i_memcpy >= 0 && parse_num(fld[i_memcpy], &v)) a->memcpy_gbps = v;
        } else if (parse_num(fld[i_gbps], &v)) {
            if (v > a->best_gbps) {
                a->best_gbps = v;
                copy_str(a->best_backend, sizeof a->best_backend, fld[i_backend]);
            }
            if (!strcmp(fld[i_backend], "cudnn")) a->cudnn_gbps = v;
        }
    }
    fclose(f);
    if (st == SML_OK && !nh) {
        snprintf(err, errlen, "%s: no header line", path);
        st = SML_ERR_FORMAT;
    }
    if (st != SML_OK) sml_anchors_free(out);
    return st;
}

void sml_anchors_free(sml_anchors *a) {
    free(a->cells);
    a->cells = NULL;
    a->n = a->cap = 0;
}

int sml_anchors_find(const sml_anchors *a, sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                     sml_anchor *out) {
    memset(out, 0, sizeof *out);
    if (!a) return 0;
    for (size_t i = 0; i < a->n; i++) {
        const sml_anchor_cell *c = &a->cells[i];
        if (c->op == op && c->dtype == dt && c->rows == rows && c->cols == cols) {
            *out = c->a;
            return 1;
        }
    }
    return 0;
}
