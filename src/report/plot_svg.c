/* plot_svg.c: see plot_svg.h. Points of a WRONG kernel are drawn as crosses: its time is
 * shown, but it is not a result. */
#include "report/plot_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ledger.h"

#define W 960
#define H 600
#define ML 80
#define MR 250
#define MT 60
#define MB 60
#define MAX_SERIES 24
#define MAX_POINTS 64

typedef struct point {
    double x, y;
    int wrong;
} point;

typedef struct series {
    char name[40];
    int n;
    point p[MAX_POINTS];
} series;

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79",
                                     "#637939", "#843c39"};
#define NCOLORS (sizeof COLORS / sizeof COLORS[0])

/* Text as XML 1.0 character data: markup escaped, and what is not an XML character (bytes
 * that are not UTF-8, control characters, U+FFFE and U+FFFF) replaced by U+FFFD. */
static void xml_text(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    while (p < end) {
        size_t n = sml_utf8_len(p, end);
        int bad = n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') ||
                  (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE);
        if (bad) {
            fputs("\xEF\xBF\xBD", f);
            p += n ? n : 1;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fwrite(p, 1, n, f);
        }
        p += n;
    }
}

/* The largest value plotted: GB/s past it are no measurement (and would overflow the axis). */
#define MAX_GBPS 1e9
/* A plotted value of e's `key`: finite and in [0, MAX_GBPS], else NAN. */
static double gbps_of(const sml_json *e, const char *key) {
    double g = sml_json_num(sml_json_get(e, key), NAN);
    return g >= 0 && g <= MAX_GBPS ? g : NAN;
}

static void add_point(series *s, double x, double y, int wrong) {
    for (int i = 0; i < s->n; i++)
        if (s->p[i].x == x) return; /* first value per column count wins */
    if (s->n < MAX_POINTS) s->p[s->n++] = (point){x, y, wrong};
}

static int cmp_point(const void *a, const void *b) {
    double x = ((const point *)a)->x, y = ((const point *)b)->x;
    return (x > y) - (x < y);
}

static series *find_series(series *all, int *n, const char *name) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(all[i].name, name)) return &all[i];
    if (*n >= MAX_SERIES) return NULL;
    series *s = &all[(*n)++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

static int matches(const sml_json *e, const char *op, const char *dtype, int64_t rows) {
    const char *eo = sml_json_str(sml_json_get(e, "op")), *ed = sml_json_str(sml_json_get(e, "dtype"));
    if (!eo || !ed || strcmp(eo, op) || strcmp(ed, dtype)) return 0;
    int64_t r;
    return rows == 0 || (sml_json_int(sml_json_get(e, "rows"), 1, INT64_MAX / 2, &r) && r == rows);
}

/* A row length to plot: a whole number in [1, 2^53] (the x axis spans its log2), else 0. */
static double cols_of(const sml_json *e) {
    int64_t c;
    return sml_json_int(sml_json_get(e, "cols"), 1, (int64_t)1 << 53, &c) ? (double)c : 0;
}

/* A 1-2-5 step giving about 6 ticks up to max. */
static double nice_step(double max) {
    double raw = max / 6, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void col_label(double cols, char *buf, size_t n) {
    long long c = (long long)cols;
    if (c >= 1048576 && c % 1048576 == 0) snprintf(buf, n, "%lldM", c / 1048576);
    else if (c >= 1024 && c % 1024 == 0) snprintf(buf, n, "%lldK", c / 1024);
    else snprintf(buf, n, "%lld", c);
}

/* The row count whose shapes span the most distinct column counts (0: none). */
static int64_t choose_rows(const sml_json *recs, const char *op, const char *dtype) {
    int64_t rows = 0;
    /* The row count whose shapes span the most distinct column counts. */
    int64_t cand[64];
    int ncand = 0, best = 0;
    for (size_t i = 0; i < recs->n; i++) {
        const sml_json *ev = sml_json_get(recs->items[i], "evidence");
        for (size_t j = 0; j < sml_json_len(ev); j++) {
            const sml_json *e = sml_json_at(ev, j);
            if (!matches(e, op, dtype, 0)) continue;
            int64_t r;
            if (!sml_json_int(sml_json_get(e, "rows"), 1, INT64_MAX / 2, &r)) continue;
            int seen = 0;
            for (int k = 0; k < ncand; k++) seen |= cand[k] == r;
            if (!seen && ncand < 64) cand[ncand++] = r;
        }
    }
    for (int k = 0; k < ncand; k++) {
        double cols[MAX_POINTS];
        int nc = 0;
        for (size_t i = 0; i < recs->n; i++) {
            const sml_json *ev = sml_json_get(recs->items[i], "evidence");
            for (size_t j = 0; j < sml_json_len(ev); j++) {
                const sml_json *e = sml_json_at(ev, j);
                if (!matches(e, op, dtype, cand[k])) continue;
                double c = cols_of(e);
                int seen = 0;
                for (int q = 0; q < nc; q++) seen |= cols[q] == c;
                if (!seen && nc < MAX_POINTS) cols[nc++] = c;
            }
        }
        if (nc > best) { best = nc; rows = cand[k]; }
    }
    return rows;
}

/* The op, dtype and row count to plot: what was asked, else what has the most points. */
static void choose_view(const sml_json *recs, const sml_plot_opts *o, const char **op_out, const char **dtype_out,
                        int64_t *rows_out) {
    const char *op = o && o->op ? o->op : NULL;
    const char *dtype = o && o->dtype ? o->dtype : NULL;
    int64_t rows = o ? o->rows : 0;
    if (!op) {
        for (size_t i = 0; i < recs->n && !op; i++) {
            const sml_json *ev = sml_json_get(recs->items[i], "evidence");
            for (size_t j = 0; j < sml_json_len(ev); j++) {
                const char *eo = sml_json_str(sml_json_get(sml_json_at(ev, j), "op"));
                if (eo && !strcmp(eo, "softmax")) { op = "softmax"; break; }
                if (eo && !op) op = eo;
            }
        }
        if (!op) op = "softmax";
    }
    if (!dtype) {
        /* On a tie the 16-bit types come first: they are what models run softmax in. */
        static const char *const DT[] = {"fp16", "bf16", "fp32"};
        int best = -1;
        for (int d = 0; d < 3; d++) {
            int count = 0;
            for (size_t i = 0; i < recs->n; i++) {
                const sml_json *ev = sml_json_get(recs->items[i], "evidence");
                for (size_t j = 0; j < sml_json_len(ev); j++) count += matches(sml_json_at(ev, j), op, DT[d], 0);
            }
            if (count > best) { best = count; dtype = DT[d]; }
        }
    }
    *op_out = op;
    *dtype_out = dtype;
    *rows_out = rows ? rows : choose_rows(recs, op, dtype);
}

/* Every kernel's points at (op, dtype, rows) into all[0..*ns), the copy kernel's into
 * all[MAX_SERIES]; the columns' range into *xmin, *xmax. */
static void collect(const sml_json *recs, const char *op, const char *dtype, int64_t rows, series *all, int *ns_out,
                    int *device_gpu_out, double *xmin_out, double *xmax_out) {
    int ns = 0, device_gpu = 0;
    double xmin = INFINITY, xmax = -INFINITY;
    series *copyk = &all[MAX_SERIES];
    for (size_t i = 0; i < recs->n; i++) {
        const sml_json *r = recs->items[i];
        const char *k = sml_json_str(sml_json_get(r, "kernel"));
        const sml_json *ev = sml_json_get(r, "evidence");
        if (!k) continue;
        const char *dev = sml_json_str(sml_json_get(r, "device"));
        for (size_t j = 0; j < sml_json_len(ev); j++) {
            const sml_json *e = sml_json_at(ev, j);
            if (!matches(e, op, dtype, rows)) continue;
            double c = cols_of(e), g = gbps_of(e, "gbps");
            if (!(c > 0) || isnan(g)) continue;
            const char *chk = sml_json_str(sml_json_get(e, "check"));
            series *s = find_series(all, &ns, k);
            if (!s) continue;
            add_point(s, c, g, !chk || strcmp(chk, "ok") != 0);
            if (dev && !strcmp(dev, "gpu")) device_gpu = 1;
            double ck = gbps_of(e, "copy_kernel_gbps");
            if (!isnan(ck)) add_point(copyk, c, ck, 0);
            if (c < xmin) xmin = c;
            if (c > xmax) xmax = c;
        }
    }
    *ns_out = ns;
    *device_gpu_out = device_gpu;
    *xmin_out = xmin;
    *xmax_out = xmax;
}

/* The plot area: log2 columns across, GB/s up. */
typedef struct frame {
    double lx0, lx1, pw, ph, ytop, step;
} frame;

static double px(const frame *fr, double c) { return ML + (log2(c) - fr->lx0) / (fr->lx1 - fr->lx0) * fr->pw; }
static double py(const frame *fr, double g) { return MT + fr->ph - g / fr->ytop * fr->ph; }

static void draw_axes(FILE *f, const frame *fr) {
    /* Axes and grid. */
    fprintf(f, "<g stroke=\"#ddd\" stroke-width=\"1\">\n");
    for (double g = 0; g <= fr->ytop + fr->step / 2; g += fr->step)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", ML, py(fr, g), ML + fr->pw, py(fr, g));
    for (double lx = fr->lx0; lx <= fr->lx1; lx += 1)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(fr, pow(2, lx)), MT, px(fr, pow(2, lx)), MT + fr->ph);
    fprintf(f, "</g>\n<g stroke=\"black\" stroke-width=\"1\">\n");
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", ML, MT + fr->ph, ML + fr->pw, MT + fr->ph);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\"/>\n</g>\n", ML, MT, ML, MT + fr->ph);
    fprintf(f, "<g text-anchor=\"end\">\n");
    for (double g = 0; g <= fr->ytop + fr->step / 2; g += fr->step)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">%.0f</text>\n", ML - 6, py(fr, g) + 4, g);
    fprintf(f, "</g>\n<g text-anchor=\"middle\">\n");
    for (double lx = fr->lx0; lx <= fr->lx1; lx += 1) {
        char lab[32];
        col_label(pow(2, lx), lab, sizeof lab);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", px(fr, pow(2, lx)), MT + fr->ph + 18, lab);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%d\">columns per row (log2 scale)</text>\n", ML + fr->pw / 2, H - 14);
    fprintf(f, "</g>\n<text x=\"18\" y=\"%.1f\" transform=\"rotate(-90 18 %.1f)\" text-anchor=\"middle\">GB/s</text>\n",
            MT + fr->ph / 2, MT + fr->ph / 2);
}

/* The copy bandwidth of the same run, and its legend line; the next legend line's y. */
static int draw_copy_line(FILE *f, const frame *fr, double memcpy_gbps, int device_gpu, int ly) {
    if (!isnan(memcpy_gbps)) {
        fprintf(f, "<line class=\"copy-bandwidth\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
                   "stroke-width=\"1.5\" stroke-dasharray=\"8 5\"/>\n", ML, py(fr, memcpy_gbps), ML + fr->pw, py(fr, memcpy_gbps));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"1.5\" "
                   "stroke-dasharray=\"8 5\"/>\n", ML + fr->pw + 16, ly, ML + fr->pw + 46, ly);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s %.0f GB/s</text>\n", ML + fr->pw + 52, ly + 4,
                device_gpu ? "cudaMemcpy D2D" : "host memcpy", memcpy_gbps);
        ly += 20;
    }
    return ly;
}

static int draw_series(FILE *f, const frame *fr, series *all, int ns, int ly) {
    for (int i = 0; i <= MAX_SERIES; i++) {
        if (i >= ns && i < MAX_SERIES) continue;
        series *s = &all[i];
        if (!s->n) continue;
        int ref = i >= MAX_SERIES;
        const char *color = ref ? "#777" : COLORS[i % NCOLORS];
        const char *dash = ref ? " stroke-dasharray=\"4 4\"" : "";
        fprintf(f, "<polyline class=\"series\" data-name=\"");
        xml_text(f, s->name);
        fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color, dash);
        for (int j = 0; j < s->n; j++) fprintf(f, "%s%.1f,%.1f", j ? " " : "", px(fr, s->p[j].x), py(fr, s->p[j].y));
        fprintf(f, "\"/>\n");
        for (int j = 0; j < s->n && !ref; j++) {
            double x = px(fr, s->p[j].x), y = py(fr, s->p[j].y);
            if (s->p[j].wrong)
                fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                        x - 5, y - 5, x + 5, y + 5, x - 5, y + 5, x + 5, y - 5, color);
            else
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x, y, color);
        }
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                ML + fr->pw + 16, ly, ML + fr->pw + 46, ly, color, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">", ML + fr->pw + 52, ly + 4);
        xml_text(f, s->name);
        fprintf(f, "</text>\n");
        ly += 20;
    }
    return ly;
}

sml_status sml_plot_svg(const sml_json *doc, const sml_plot_opts *o, FILE *f, char *info,
                        size_t infolen, char *err, size_t errlen) {
    const char *schema = sml_json_str(sml_json_get(doc, "schema"));
    const sml_json *recs = sml_json_get(doc, "records");
    if (!sml_ledger_schema_ok(schema, err, errlen)) return SML_ERR_FORMAT;
    if (!recs || recs->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "not a softmax-lab ledger (no 'records')");
        return SML_ERR_FORMAT;
    }
    const char *op, *dtype;
    int64_t rows;
    choose_view(recs, o, &op, &dtype, &rows);
    series *all = calloc(MAX_SERIES + 1, sizeof *all);
    if (!all) return SML_ERR_OUT_OF_MEMORY;
    snprintf(all[MAX_SERIES].name, sizeof all[MAX_SERIES].name, "copy kernel, same bytes");
    int ns, device_gpu;
    double xmin, xmax, ymax = 0;
    collect(recs, op, dtype, rows, all, &ns, &device_gpu, &xmin, &xmax);
    if (ns == 0) {
        snprintf(err, errlen, "nothing to plot for op %s, dtype %s%s", op, dtype ? dtype : "?",
                 rows ? "" : " (no timed evidence)");
        free(all);
        return SML_ERR_FORMAT;
    }
    const sml_json *copy = sml_json_get(sml_json_get(doc, "environment"), "copy");
    double memcpy_gbps = gbps_of(copy, device_gpu ? "memcpy_d2d_gbps" : "host_memcpy_gbps");
    for (int i = 0; i <= MAX_SERIES; i++) {
        series *s = &all[i];
        if (i >= ns && i < MAX_SERIES) continue;
        qsort(s->p, (size_t)s->n, sizeof s->p[0], cmp_point);
        for (int j = 0; j < s->n; j++)
            if (s->p[j].y > ymax) ymax = s->p[j].y;
    }
    if (!isnan(memcpy_gbps) && memcpy_gbps > ymax) ymax = memcpy_gbps;
    if (!(ymax >= 1e-6)) ymax = 1; /* no axis from a subnormal maximum (its tick step would be 0) */
    double step = nice_step(ymax * 1.05);
    double ytop = ceil(ymax * 1.05 / step) * step;
    double lx0 = floor(log2(xmin)), lx1 = ceil(log2(xmax));
    if (lx1 <= lx0) { lx0 -= 1; lx1 += 1; }
    frame fr0 = {lx0, lx1, W - ML - MR, H - MT - MB, ytop, step};
    const frame *fr = &fr0;
    const char *gpu = sml_json_str(sml_json_get(sml_json_get(sml_json_get(doc, "environment"), "gpu"), "name"));
    const char *when = sml_json_str(sml_json_get(sml_json_get(doc, "environment"), "time_utc"));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\">", ML);
    char title[256];
    snprintf(title, sizeof title, "%s %s, %lld rows: GB/s against columns", op, dtype ? dtype : "?",
             (long long)rows);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"42\" fill=\"#555\">", ML);
    snprintf(title, sizeof title, "%s, %s (GB/s counts forward 2x, backward 3x the tensor bytes)",
             gpu ? gpu : "CPU only", when ? when : "");
    xml_text(f, title);
    fprintf(f, "</text>\n");
    draw_axes(f, fr);
    int ly = draw_copy_line(f, fr, memcpy_gbps, device_gpu, MT + 10);
    ly = draw_series(f, fr, all, ns, ly);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#555\">x = check not ok: WRONG or KNOWN-DEV (never a win)</text>\n", ML + fr->pw + 16, ly + 10);
    fprintf(f, "</svg>\n");
    if (info) snprintf(info, infolen, "plotted %s %s at %lld rows: %d backends", op, dtype ? dtype : "?",
                       (long long)rows, ns);
    free(all);
    return ferror(f) ? SML_ERR_IO : SML_OK;
}
