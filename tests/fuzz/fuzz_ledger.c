/* fuzz_ledger: the JSON reader (src/json/json_read.c) and what reads ledgers with it:
 * compare, targets and plot, on mutated ledgers. A parsed document must be a tree whose
 * strings are UTF-8 of the length they claim; an SVG the plot writes must be XML text
 * (UTF-8, no control characters, markup only where the plot put it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "json/json_read.h"
#include "report/plot_svg.h"
#include "analysis/targets.h"
#include "fuzz.h"

const char sml_fuzz_name[] = "fuzz_ledger";
const char sml_fuzz_suffix[] = ".json";
const char *const sml_fuzz_dict[] = {"{",
                                     "}",
                                     "[",
                                     "]",
                                     "\"",
                                     ":",
                                     ",",
                                     "\\",
                                     "\\u",
                                     "\\uD800",
                                     "\\uDC00",
                                     "\\u0000",
                                     "\\u0001",
                                     "\\uFFFF",
                                     "true",
                                     "false",
                                     "null",
                                     "1e999",
                                     "-1e999",
                                     "1e-400",
                                     "9007199254740993",
                                     "\xff",
                                     "\xc0\xaf",
                                     "\xed\xa0\x80",
                                     "\xf4\x90\x80\x80",
                                     "\xef\xbf\xbe",
                                     "\"schema\"",
                                     "\"softmax-lab-ledger/1\"",
                                     "\"softmax-lab-ledger/2\"",
                                     "\"framework\"",
                                     "\"records\"",
                                     "\"evidence\"",
                                     "\"kernel\"",
                                     "\"op\"",
                                     "\"dtype\"",
                                     "\"rows\"",
                                     "\"cols\"",
                                     "\"gbps\"",
                                     "\"check\"",
                                     "\"ok\"",
                                     "\"median_ms\"",
                                     "\"spread\"",
                                     "\"environment\"",
                                     "\"copy\"",
                                     "\"config\"",
                                     "\"decision_margin\"",
                                     "\"partial\"",
                                     "\"cases_measured\"",
                                     "\"softmax\"",
                                     "\"fp16\"",
                                     "\"held\"",
                                     "\"cudnn\"",
                                     "\"triton\"",
                                     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
                                     NULL};

/* Bytes of the UTF-8 character at p, 0 if there is none: written here from RFC 3629, apart
 * from the reader's own sml_utf8_len, so that the check does not share its bugs. */
static size_t utf8_char(const unsigned char *p, const unsigned char *end) {
    size_t n = *p < 0x80             ? 1
               : (*p & 0xE0) == 0xC0 ? 2
               : (*p & 0xF0) == 0xE0 ? 3
               : (*p & 0xF8) == 0xF0 ? 4
                                     : 0;
    if (!n || (size_t)(end - p) < n) return 0;
    uint32_t cp = n == 1 ? *p : n == 2 ? *p & 0x1Fu : n == 3 ? *p & 0x0Fu : *p & 0x07u;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    static const uint32_t MIN[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < MIN[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static void walk(const sml_json *v, int depth) {
    if (depth > 64) sml_fuzz_fail("a tree deeper than the reader's limit");
    if (v->type == SML_JSON_STRING) {
        const unsigned char *s = (const unsigned char *)v->string, *end = s + strlen(v->string);
        while (s < end) {
            size_t n = utf8_char(s, end);
            if (!n) sml_fuzz_fail("a string that is not UTF-8 was accepted");
            s += n;
        }
    }
    for (size_t i = 0; i < v->n; i++) {
        if (v->type == SML_JSON_OBJECT && !v->keys[i]) sml_fuzz_fail("a member without a name");
        walk(v->items[i], depth + 1);
    }
}

/* XML 1.0 text: UTF-8, no C0 control other than tab and newlines, no U+FFFE/U+FFFF, and
 * '&' only as one of the entities the plot writes. */
static void check_xml(const char *svg, size_t len) {
    const unsigned char *p = (const unsigned char *)svg, *end = p + len;
    while (p < end) {
        size_t n = utf8_char(p, end);
        if (!n)
            sml_fuzz_fail("the SVG is not UTF-8 at byte %zu",
                          (size_t)(p - (const unsigned char *)svg));
        if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
            sml_fuzz_fail("control character 0x%02x in the SVG", *p);
        if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE)
            sml_fuzz_fail("U+FFFE/U+FFFF in the SVG");
        if (*p == '&' && strncmp((const char *)p, "&amp;", 5) &&
            strncmp((const char *)p, "&lt;", 4) && strncmp((const char *)p, "&gt;", 4) &&
            strncmp((const char *)p, "&quot;", 6))
            sml_fuzz_fail("a bare '&' in the SVG");
        p += n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sml_json *doc = NULL;
    char err[512] = "";
    if (sml_json_parse((const char *)data, size, &doc, err, sizeof err) != SML_OK) {
        if (!err[0]) sml_fuzz_fail("refused with no message");
        return 0;
    }
    walk(doc, 0);
    sml_cmp_report cr;
    memset(&cr, 0, sizeof cr);
    if (sml_compare_docs(doc, doc, 0.05, &cr, err, sizeof err) == SML_OK) sml_cmp_report_free(&cr);
    sml_tgt_report tr;
    memset(&tr, 0, sizeof tr);
    if (sml_targets_doc(doc, NULL, &tr, err, sizeof err) == SML_OK) sml_tgt_report_free(&tr);
    char *svg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&svg, &len);
    if (!f) sml_fuzz_fail("open_memstream");
    sml_status s = sml_plot_svg(doc, NULL, f, NULL, 0, err, sizeof err);
    fclose(f);
    if (s == SML_OK) check_xml(svg, len);
    free(svg);
    sml_json_free(doc);
    return 0;
}
