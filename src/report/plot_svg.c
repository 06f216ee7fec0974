/* plot_svg.c: see plot_svg.h. Points of a WRONG kernel are drawn as crosses: its time is
 * shown, but it is not a result. */
#include "report/plot_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ledger.h"

#define W          960
#define H          600
#define ML         80
#define MR         250
#define MT         60
#define MB         60
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

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                     "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                     "#bcbd22", "#393b79", "#637939", "#843c39"};
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
    const char *eo = sml_json_str(sml_json_get(e, "op")),
               *ed = sml_json_str(sml_json_get(e, "dtype"));
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
    if (c >= 1048576 && c % 1048576 == 0)
        snprintf(buf, n, "%lldM", c / 1048576);
    else if (c >= 1024 && c % 1024 == 0)
        snprintf(buf, n, "%lldK", c / 1024);
    else
        snprintf(buf, n, "%lld", c);
}

/* ---- What to plot ---- */

/* The op asked for, else softmax if the ledger has it, else the first op of its evidence. */
static const char *choose_op(const sml_json *recs) {
    const char *op = NULL;
    for (size_t i = 0; i < recs->n && !op; i++) {
        const sml_json *ev = sml_json_get(recs->items[i], "evidence");
        for (size_t j = 0; j < sml_json_len(ev); j++) {
            const char *eo = sml_json_str(sml_json_get(sml_json_at(ev, j), "op"));
            if (eo && !strcmp(eo, "softmax")) {
                op = "softmax";
                break;
            }
            if (eo && !op) op = eo;
        }
    }
    return op ? op : "softmax";
}

/* The dtype with the most points of op; on a tie the 16-bit types come first: they are what
 * models run softmax in. */
static const char *choose_dtype(const sml_json *recs, const char *op) {
    static const char *const DT[] = {"fp16", "bf16", "fp32"};
    const char *dtype = NULL;
    int best = -1;
    for (int d = 0; d < 3; d++) {
        int count = 0;
        for (size_t i = 0; i < recs->n; i++) {
            const sml_json *ev = sml_json_get(recs->items[i], "evidence");
            for (size_t j = 0; j < sml_json_len(ev); j++)
                count += matches(sml_json_at(ev, j), op, DT[d], 0);
        }
        if (count > best) {
            best = count;
            dtype = DT[d];
        }
    }
    return dtype;
}

/* The distinct column counts of op and dtype at `rows`, at most MAX_POINTS. */
static int distinct_cols(const sml_json *recs, const char *op, const char *dtype, int64_t rows) {
    double cols[MAX_POINTS];
    int nc = 0;
    for (size_t i = 0; i < recs->n; i++) {
        const sml_json *ev = sml_json_get(recs->items[i], "evidence");
        for (size_t j = 0; j < sml_json_len(ev); j++) {
            const sml_json *e = sml_json_at(ev, j);
            if (!matches(e, op, dtype, rows)) continue;
            double c = cols_of(e);
            int seen = 0;
            for (int q = 0; q < nc; q++) seen |= cols[q] == c;
            if (!seen && nc < MAX_POINTS) cols[nc++] = c;
        }
    }
    return nc;
}

/* The row count whose shapes span the most distinct column counts (0 if none). */
static int64_t choose_rows(const sml_json *recs, const char *op, const char *dtype) {
    int64_t cand[64], rows = 0;
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
        const int nc = distinct_cols(recs, op, dtype, cand[k]);
        if (nc > best) {
            best = nc;
            rows = cand[k];
        }
    }
    return rows;
}

/* The plot's series (all[0..ns), one per kernel, and all[MAX_SERIES], the copy kernel) and
 * the ranges its axes must cover. */
typedef struct plot {
    const char *op, *dtype;
    int64_t rows;
    series *all;
    int ns, device_gpu;
    double xmin, xmax, memcpy_gbps;
    /* the frame: log2 column range, GB/s top and tick step, plot area */
    double lx0, lx1, ytop, step, pw, ph;
} plot;

/* Every timed point of op, dtype and rows into its kernel's series. */
static void collect(const sml_json *recs, plot *pl) {
    series *copyk = &pl->all[MAX_SERIES];
    snprintf(copyk->name, sizeof copyk->name, "copy kernel, same bytes");
    pl->xmin = INFINITY;
    pl->xmax = -INFINITY;
    for (size_t i = 0; i < recs->n; i++) {
        const sml_json *r = recs->items[i];
        const char *k = sml_json_str(sml_json_get(r, "kernel"));
        const sml_json *ev = sml_json_get(r, "evidence");
        if (!k) continue;
        const char *dev = sml_json_str(sml_json_get(r, "device"));
        for (size_t j = 0; j < sml_json_len(ev); j++) {
            const sml_json *e = sml_json_at(ev, j);
            if (!matches(e, pl->op, pl->dtype, pl->rows)) continue;
            double c = cols_of(e), g = gbps_of(e, "gbps");
            if (!(c > 0) || isnan(g)) continue;
            const char *chk = sml_json_str(sml_json_get(e, "check"));
            series *s = find_series(pl->all, &pl->ns, k);
            if (!s) continue;
            add_point(s, c, g, !chk || strcmp(chk, "ok") != 0);
            if (dev && !strcmp(dev, "gpu")) pl->device_gpu = 1;
            double ck = gbps_of(e, "copy_kernel_gbps");
            if (!isnan(ck)) add_point(copyk, c, ck, 0);
            if (c < pl->xmin) pl->xmin = c;
            if (c > pl->xmax) pl->xmax = c;
        }
    }
}

/* Each series sorted by columns; the axes' ranges from the points and the copy bandwidth. */
static void frame(plot *pl) {
    double ymax = 0;
    for (int i = 0; i <= MAX_SERIES; i++) {
        series *s = &pl->all[i];
        if (i >= pl->ns && i < MAX_SERIES) continue;
        qsort(s->p, (size_t)s->n, sizeof s->p[0], cmp_point);
        for (int j = 0; j < s->n; j++)
            if (s->p[j].y > ymax) ymax = s->p[j].y;
    }
    if (!isnan(pl->memcpy_gbps) && pl->memcpy_gbps > ymax) ymax = pl->memcpy_gbps;
    if (!(ymax >= 1e-6)) ymax = 1; /* no axis from a subnormal maximum (its tick step would be 0) */
    pl->step = nice_step(ymax * 1.05);
    pl->ytop = ceil(ymax * 1.05 / pl->step) * pl->step;
    pl->lx0 = floor(log2(pl->xmin));
    pl->lx1 = ceil(log2(pl->xmax));
    if (pl->lx1 <= pl->lx0) {
        pl->lx0 -= 1;
        pl->lx1 += 1;
    }
    pl->pw = W - ML - MR;
    pl->ph = H - MT - MB;
}

static double px(const plot *pl, double c) {
    return ML + (log2(c) - pl->lx0) / (pl->lx1 - pl->lx0) * pl->pw;
}
static double py(const plot *pl, double g) { return MT + pl->ph - (g) / pl->ytop * pl->ph; }

/* ---- Drawing ---- */

static void draw_title(FILE *f, const sml_json *doc, const plot *pl) {
    const char *gpu =
        sml_json_str(sml_json_get(sml_json_get(sml_json_get(doc, "environment"), "gpu"), "name"));
    const char *when = sml_json_str(sml_json_get(sml_json_get(doc, "environment"), "time_utc"));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
            "%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\">", ML);
    char title[256];
    snprintf(title, sizeof title, "%s %s, %lld rows: GB/s against columns", pl->op,
             pl->dtype ? pl->dtype : "?", (long long)pl->rows);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"42\" fill=\"#555\">", ML);
    snprintf(title, sizeof title, "%s, %s (GB/s counts forward 2x, backward 3x the tensor bytes)",
             gpu ? gpu : "CPU only", when ? when : "");
    xml_text(f, title);
    fprintf(f, "</text>\n");
}

static void draw_axes(FILE *f, const plot *pl) {
    const double pw = pl->pw, ph = pl->ph, step = pl->step;
    fprintf(f, "<g stroke=\"#ddd\" stroke-width=\"1\">\n");
    for (double g = 0; g <= pl->ytop + step / 2; g += step)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", ML, py(pl, g),
                ML + pw, py(pl, g));
    for (double lx = pl->lx0; lx <= pl->lx1; lx += 1)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(pl, pow(2, lx)),
                MT, px(pl, pow(2, lx)), MT + ph);
    fprintf(f, "</g>\n<g stroke=\"black\" stroke-width=\"1\">\n");
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", ML, MT + ph, ML + pw,
            MT + ph);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\"/>\n</g>\n", ML, MT, ML, MT + ph);
    fprintf(f, "<g text-anchor=\"end\">\n");
    for (double g = 0; g <= pl->ytop + step / 2; g += step)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">%.0f</text>\n", ML - 6, py(pl, g) + 4, g);
    fprintf(f, "</g>\n<g text-anchor=\"middle\">\n");
    for (double lx = pl->lx0; lx <= pl->lx1; lx += 1) {
        char lab[32];
        col_label(pow(2, lx), lab, sizeof lab);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", px(pl, pow(2, lx)), MT + ph + 18,
                lab);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%d\">columns per row (log2 scale)</text>\n", ML + pw / 2,
            H - 14);
    fprintf(f,
            "</g>\n<text x=\"18\" y=\"%.1f\" transform=\"rotate(-90 18 %.1f)\" "
            "text-anchor=\"middle\">GB/s</text>\n",
            MT + ph / 2, MT + ph / 2);
}

/* The copy bandwidth of the same run, a dashed line and its legend entry; returns the next
 * legend line's y. */
static int draw_copy_line(FILE *f, const plot *pl, int ly) {
    if (isnan(pl->memcpy_gbps)) return ly;
    const double pw = pl->pw;
    fprintf(f,
            "<line class=\"copy-bandwidth\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"black\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"8 5\"/>\n",
            ML, py(pl, pl->memcpy_gbps), ML + pw, py(pl, pl->memcpy_gbps));
    fprintf(
        f,
        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"8 5\"/>\n",
        ML + pw + 16, ly, ML + pw + 46, ly);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s %.0f GB/s</text>\n", ML + pw + 52, ly + 4,
            pl->device_gpu ? "cudaMemcpy D2D" : "host memcpy", pl->memcpy_gbps);
    return ly + 20;
}

/* Series i: its line, its points (crosses where the check was not ok; none for the copy
 * kernel) and its legend entry at ly. */
static void draw_series(FILE *f, const plot *pl, int i, int ly) {
    const series *s = &pl->all[i];
    const double pw = pl->pw;
    int ref = i >= MAX_SERIES;
    const char *color = ref ? "#777" : COLORS[i % NCOLORS];
    const char *dash = ref ? " stroke-dasharray=\"4 4\"" : "";
    fprintf(f, "<polyline class=\"series\" data-name=\"");
    xml_text(f, s->name);
    fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color, dash);
    for (int j = 0; j < s->n; j++)
        fprintf(f, "%s%.1f,%.1f", j ? " " : "", px(pl, s->p[j].x), py(pl, s->p[j].y));
    fprintf(f, "\"/>\n");
    for (int j = 0; j < s->n && !ref; j++) {
        double x = px(pl, s->p[j].x), y = py(pl, s->p[j].y);
        if (s->p[j].wrong)
            fprintf(f,
                    "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" "
                    "stroke-width=\"2\"/>\n",
                    x - 5, y - 5, x + 5, y + 5, x - 5, y + 5, x + 5, y - 5, color);
        else
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x, y, color);
    }
    fprintf(
        f,
        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
        ML + pw + 16, ly, ML + pw + 46, ly, color, dash);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\">", ML + pw + 52, ly + 4);
    xml_text(f, s->name);
    fprintf(f, "</text>\n");
}

static void draw(FILE *f, const sml_json *doc, const plot *pl) {
    draw_title(f, doc, pl);
    draw_axes(f, pl);
    int ly = draw_copy_line(f, pl, MT + 10);
    for (int i = 0; i <= MAX_SERIES; i++) {
        if (i >= pl->ns && i < MAX_SERIES) continue;
        if (!pl->all[i].n) continue;
        draw_series(f, pl, i, ly);
        ly += 20;
    }
    fprintf(f,
            "<text x=\"%.1f\" y=\"%d\" fill=\"#555\">x = check not ok: WRONG or KNOWN-DEV (never a "
            "win)</text>\n",
            ML + pl->pw + 16, ly + 10);
    fprintf(f, "</svg>\n");
}

/* ---- parse -> collect -> draw ---- */

sml_status sml_plot_svg(const sml_json *doc, const sml_plot_opts *o, FILE *f, char *info,
                        size_t infolen, char *err, size_t errlen) {
    const char *schema = sml_json_str(sml_json_get(doc, "schema"));
    const sml_json *recs = sml_json_get(doc, "records");
    if (!sml_ledger_schema_ok(schema, err, errlen)) return SML_ERR_FORMAT;
    if (!recs || recs->type != SML_JSON_ARRAY) {
        snprintf(err, errlen, "not a softmax-lab ledger (no 'records')");
        return SML_ERR_FORMAT;
    }
    /* Choose op, dtype and rows: what was asked, else what has the most points. */
    plot pl;
    memset(&pl, 0, sizeof pl);
    pl.op = o && o->op ? o->op : choose_op(recs);
    pl.dtype = o && o->dtype ? o->dtype : choose_dtype(recs, pl.op);
    pl.rows = o && o->rows ? o->rows : choose_rows(recs, pl.op, pl.dtype);
    pl.all = calloc(MAX_SERIES + 1, sizeof *pl.all);
    if (!pl.all) return SML_ERR_OUT_OF_MEMORY;
    collect(recs, &pl);
    if (pl.ns == 0) {
        snprintf(err, errlen, "nothing to plot for op %s, dtype %s%s", pl.op,
                 pl.dtype ? pl.dtype : "?", pl.rows ? "" : " (no timed evidence)");
        free(pl.all);
        return SML_ERR_FORMAT;
    }
    const sml_json *copy = sml_json_get(sml_json_get(doc, "environment"), "copy");
    pl.memcpy_gbps = gbps_of(copy, pl.device_gpu ? "memcpy_d2d_gbps" : "host_memcpy_gbps");
    frame(&pl);
    draw(f, doc, &pl);
    if (info)
        snprintf(info, infolen, "plotted %s %s at %lld rows: %d backends", pl.op,
                 pl.dtype ? pl.dtype : "?", (long long)pl.rows, pl.ns);
    free(pl.all);
    return ferror(f) ? SML_ERR_IO : SML_OK;
}
