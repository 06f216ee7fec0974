/* test_plot_svg.c: the SVG plot rendered from a fixture ledger is well-formed XML (every
 * tag closed, text escaped), has one series per backend plus the copy references, a dashed
 * copy-bandwidth line, a log2 x axis (x grows with cols) and crosses for WRONG points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_read.h"
#include "report/plot_svg.h"
#include "case_filter.h"
#include "test_support.h"

static sml_tally T = {"test_plot_svg", 0, 0, 0};
static sml_case_filter F;

/* Tags balance (a stack of names), attributes are quoted, no bare '&' or '<' in text.
 * Returns 0 when fine, else writes why. */
static int well_formed(const char *s, char *why, size_t n) {
    char stack[64][32];
    int depth = 0, roots = 0;
    const char *p = s;
    if (strncmp(p, "<?xml", 5) == 0) {
        p = strstr(p, "?>");
        if (!p) {
            snprintf(why, n, "unterminated XML declaration");
            return 1;
        }
        p += 2;
    }
    while (*p) {
        /* XML 1.0 characters only: UTF-8, no C0 control but tab and newlines, no U+FFFE/F. */
        const unsigned char *u = (const unsigned char *)p;
        size_t ul = sml_utf8_len(u, u + strlen(p));
        if (!ul || (*u < 0x20 && *u != '\t' && *u != '\n' && *u != '\r') ||
            (ul == 3 && u[0] == 0xEF && u[1] == 0xBF && u[2] >= 0xBE)) {
            snprintf(why, n, "byte 0x%02x at offset %ld is no XML character", *u, (long)(p - s));
            return 1;
        }
        if (ul > 1) {
            p += ul;
            continue;
        }
        if (*p == '&') {
            if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) &&
                strncmp(p, "&quot;", 6)) {
                snprintf(why, n, "bare '&' at offset %ld", (long)(p - s));
                return 1;
            }
            p++;
            continue;
        }
        if (*p != '<') {
            p++;
            continue;
        }
        const char *end = p + 1;
        int quote = 0;
        while (*end && (quote || *end != '>')) {
            if (*end == '"')
                quote = !quote;
            else if (*end == '<' && !quote) {
                snprintf(why, n, "'<' inside a tag at offset %ld", (long)(end - s));
                return 1;
            }
            end++;
        }
        if (!*end) {
            snprintf(why, n, "unterminated tag at offset %ld", (long)(p - s));
            return 1;
        }
        int closing = p[1] == '/', selfclose = end[-1] == '/';
        const char *name = p + 1 + closing;
        size_t len = strcspn(name, " \t\n/>");
        if (len == 0 || len >= 32) {
            snprintf(why, n, "bad tag name at offset %ld", (long)(p - s));
            return 1;
        }
        if (closing) {
            if (depth == 0 || strncmp(stack[depth - 1], name, len) || stack[depth - 1][len]) {
                snprintf(why, n, "</%.*s> does not close <%s>", (int)len, name,
                         depth ? stack[depth - 1] : "(nothing)");
                return 1;
            }
            depth--;
        } else if (!selfclose) {
            if (depth == 0) roots++;
            if (depth >= 64) {
                snprintf(why, n, "too deep");
                return 1;
            }
            memcpy(stack[depth], name, len);
            stack[depth][len] = 0;
            depth++;
        } else if (depth == 0) {
            roots++;
        }
        p = end + 1;
    }
    if (depth) {
        snprintf(why, n, "<%s> never closed", stack[depth - 1]);
        return 1;
    }
    if (roots != 1) {
        snprintf(why, n, "%d root elements", roots);
        return 1;
    }
    return 0;
}

static int count(const char *s, const char *needle) {
    int c = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) c++;
    return c;
}

/* The x coordinates of a polyline's points rise from left to right. */
static int rising(const char *svg, const char *series) {
    char key[96];
    snprintf(key, sizeof key, "data-name=\"%s\"", series);
    const char *p = strstr(svg, key);
    if (!p) return 0;
    p = strstr(p, "points=\"");
    if (!p) return 0;
    p += 8;
    double last = -1;
    int pts = 0;
    while (*p && *p != '"') {
        char *e;
        double x = strtod(p, &e);
        if (e == p || *e != ',') return 0;
        if (x <= last) return 0;
        last = x;
        pts++;
        p = e + 1;
        strtod(p, &e);
        p = e;
        while (*p == ' ') p++;
    }
    return pts;
}

static char *render(const char *file, const sml_plot_opts *o, sml_status *st, char *err, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", F.fixtures, file);
    sml_json *doc = NULL;
    *st = sml_json_parse_file(path, &doc, err, n);
    if (*st != SML_OK) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *st = sml_plot_svg(doc, o, f, NULL, 0, err, n);
    fclose(f);
    sml_json_free(doc);
    return buf;
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    sml_status st;
    char err[256] = "", why[160] = "";
    char *svg = render("plot_ledger.json", NULL, &st, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 1, st == SML_OK && svg, "the fixture ledger renders");
    if (st != SML_OK || !svg) {
        printf("  %s\n", err);
        free(svg);
        return sml_tally_finish(&T);
    }
    int bad = well_formed(svg, why, sizeof why);
    sml_test_check_case(&T, &F, NULL, 2, !bad, "the SVG is well-formed");
    if (bad) printf("  %s\n", why);
    sml_test_check_case(&T, &F, NULL, 3,
                        strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"") != NULL,
                        "root is an SVG element");
    /* warp, block, cudnn; split has no timed point; plus the copy kernel. */
    sml_test_check_case(&T, &F, NULL, 4, count(svg, "class=\"series\"") == 4,
                        "four series: warp, block, cudnn, copy kernel");
    sml_test_check_case(&T, &F, NULL, 5, strstr(svg, "data-name=\"split\"") == NULL,
                        "a backend with no timed point gets no series");
    sml_test_check_case(&T, &F, NULL, 6,
                        count(svg, "class=\"copy-bandwidth\"") == 1 &&
                            strstr(strstr(svg, "class=\"copy-bandwidth\""), "stroke-dasharray") !=
                                NULL,
                        "one dashed copy-bandwidth line");
    sml_test_check_case(&T, &F, NULL, 7, strstr(svg, "cudaMemcpy D2D 3200 GB/s") != NULL,
                        "the copy bandwidth is labelled with its value");
    sml_test_check_case(
        &T, &F, NULL, 8,
        rising(svg, "block") == 8 && rising(svg, "warp") == 3 && rising(svg, "cudnn") == 8,
        "x rises with cols, one point per cols (the 32768-row cudnn point left out)");
    sml_test_check_case(&T, &F, NULL, 9,
                        strstr(svg, ">256<") && strstr(svg, ">1K<") && strstr(svg, ">32K<"),
                        "log2 ticks 256, 1K ... 32K");
    sml_test_check_case(&T, &F, NULL, 10, count(svg, "<path d=\"M") == 1,
                        "the one WRONG point is a cross");
    sml_test_check_case(&T, &F, NULL, 11, strstr(svg, "Fixture GPU &lt;&amp;&gt;") != NULL,
                        "text is XML-escaped");
    sml_test_check_case(&T, &F, NULL, 12, strstr(svg, "softmax fp16, 4096 rows") != NULL,
                        "the title says op, dtype and the rows chosen");
    free(svg);

    sml_plot_opts rows512 = {"softmax", "fp16", 32768};
    svg = render("plot_ledger.json", &rows512, &st, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 13,
                        st == SML_OK && svg && count(svg, "class=\"series\"") == 2 &&
                            !well_formed(svg, why, sizeof why),
                        "--rows 32768: only cudnn (+ copy kernel)");
    free(svg);
    sml_plot_opts none = {"log_softmax", "fp16", 0};
    svg = render("plot_ledger.json", &none, &st, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 14, st == SML_ERR_FORMAT && strstr(err, "nothing to plot"),
                        "an op with no points is refused");
    free(svg);
    svg = render("bad_schema.json", NULL, &st, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 15,
                        st == SML_ERR_FORMAT && strstr(err, "not a softmax-lab ledger"),
                        "a non-ledger is refused");
    free(svg);
    /* The checker itself must reject broken XML, or the checks above prove nothing. */
    sml_test_check_case(
        &T, &F, NULL, 16,
        well_formed("<svg><g></svg>", why, sizeof why) &&
            well_formed("<svg a=\"1\">&</svg>", why, sizeof why) &&
            well_formed("<svg></svg><svg/>", why, sizeof why) &&
            !well_formed("<svg><g/></svg>", why, sizeof why),
        "the well-formedness check rejects an unclosed tag, a bare '&' and two roots");
    sml_test_check_case(&T, &F, NULL, 17,
                        well_formed("<svg>\x01</svg>", why, sizeof why) &&
                            well_formed("<svg>\xff</svg>", why, sizeof why) &&
                            well_formed("<svg>\xef\xbf\xbe</svg>", why, sizeof why) &&
                            !well_formed("<svg>\xc3\xa9\xef\xbf\xbd</svg>", why, sizeof why),
                        "the well-formedness check rejects a control character, a byte that is not "
                        "UTF-8 and U+FFFE");

    /* Names that are no XML text: control characters (JSON escapes), and bytes that are not
     * UTF-8 (the reader refuses them in a file; a document built otherwise may hold them).
     * Both were copied into the SVG as they were. */
    {
        const char *t =
            "{\"schema\": \"softmax-lab-ledger/1\", \"records\": ["
            "{\"kernel\": \"a\\u0001b\\u0008<c>\", \"evidence\": [{\"op\": \"softmax\", "
            "\"dtype\": \"fp32\", \"rows\": 4, \"cols\": 1024, \"gbps\": 5, \"check\": \"ok\"}]},"
            "{\"kernel\": \"XXXX\", \"evidence\": [{\"op\": \"softmax\", "
            "\"dtype\": \"fp32\", \"rows\": 4, \"cols\": 2048, \"gbps\": 6, \"check\": \"ok\"}]}]}";
        sml_json *doc = NULL;
        st = sml_json_parse(t, strlen(t), &doc, err, sizeof err);
        char *k = st == SML_OK ? (char *)sml_json_str(sml_json_get(
                                     sml_json_at(sml_json_get(doc, "records"), 1), "kernel"))
                               : NULL;
        if (k) memcpy(k, "k\xff\xc0z", 4);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (doc) st = sml_plot_svg(doc, NULL, f, NULL, 0, err, sizeof err);
        fclose(f);
        int bad = st == SML_OK ? well_formed(buf, why, sizeof why) : 1;
        sml_test_check_case(
            &T, &F, NULL, 18, k && st == SML_OK && !bad,
            "control characters and bytes that are not UTF-8 in names become U+FFFD");
        if (bad) printf("  %s\n", st == SML_OK ? why : err);
        sml_test_check_case(&T, &F, NULL, 19,
                            st == SML_OK &&
                                strstr(buf, "a\xef\xbf\xbd"
                                            "b\xef\xbf\xbd&lt;c&gt;") &&
                                strstr(buf, "k\xef\xbf\xbd\xef\xbf\xbdz"),
                            "each character that is not XML text is one U+FFFD, the rest kept");
        free(buf);
        sml_json_free(doc);
    }
    /* Numbers past what is plotted: rows 1e300 was cast to int64_t (undefined; the plot
     * said "at -9223372036854775808 rows"), GB/s 1e308 made the axis infinite. */
    {
        const char *t =
            "{\"schema\": \"softmax-lab-ledger/1\", \"records\": [{\"kernel\": \"k\", "
            "\"evidence\": ["
            "{\"op\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 1e300, \"cols\": 1e308, "
            "\"gbps\": 5},"
            "{\"op\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 4, \"cols\": 4096, \"gbps\": "
            "1e308},"
            "{\"op\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 4, \"cols\": 1e308, \"gbps\": 5},"
            "{\"op\": \"softmax\", \"dtype\": \"fp32\", \"rows\": 4, \"cols\": 1024, \"gbps\": 5, "
            "\"copy_kernel_gbps\": -1e308, \"check\": \"ok\"}]}],"
            "\"environment\": {\"copy\": {\"host_memcpy_gbps\": 1e308}}}";
        sml_json *doc = NULL;
        st = sml_json_parse(t, strlen(t), &doc, err, sizeof err);
        char *buf = NULL, info[160] = "";
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (doc) st = sml_plot_svg(doc, NULL, f, info, sizeof info, err, sizeof err);
        fclose(f);
        sml_test_check_case(
            &T, &F, NULL, 20,
            doc && st == SML_OK && strstr(info, "at 4 rows") &&
                !well_formed(buf, why, sizeof why) && !strstr(buf, "inf") && !strstr(buf, "nan") &&
                count(buf, "<circle") == 1 && !strstr(buf, "copy-bandwidth"),
            "values out of range are left out: one point, at 4 rows, no infinite axis");
        if (st == SML_OK && !strstr(info, "at 4 rows")) printf("  %s\n", info);
        free(buf);
        sml_json_free(doc);
    }
    return sml_tally_finish(&T);
}
