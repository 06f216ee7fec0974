/* test_json.c: the benchmark's JSON writer and reader: a written document reads back to the
 * same values; every kind of malformed input is refused with a line and column. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json_read.h"
#include "json/json_write.h"
#include "case_filter.h"
#include "test_support.h"

static sml_tally T = {"test_json", 0, 0, 0};
static sml_case_filter F;

/* The caller owns *buf (open_memstream's buffer pointer must outlive the stream). */
static void write_doc(char **buf, size_t *len, int *finish) {
    FILE *f = open_memstream(buf, len);
    sml_jw w;
    sml_jw_init(&w, f);
    sml_jw_object(&w);
    sml_jw_kstr(&w, "text", "quote \" backslash \\ newline \n tab \t bell \a end");
    sml_jw_knum(&w, "pi", 3.141592653589793);
    sml_jw_knum(&w, "tiny", 1e-300);
    sml_jw_knum(&w, "third", 1.0 / 3.0);
    sml_jw_knum(&w, "nan", NAN);
    sml_jw_knum(&w, "inf", INFINITY);
    sml_jw_knum(&w, "ninf", -INFINITY);
    sml_jw_kint(&w, "big", 9007199254740991LL);
    sml_jw_kint(&w, "neg", -42);
    sml_jw_kbool(&w, "yes", 1);
    sml_jw_kbool(&w, "no", 0);
    sml_jw_key(&w, "nothing");
    sml_jw_null(&w);
    sml_jw_key(&w, "list");
    sml_jw_array_inline(&w);
    sml_jw_int(&w, 1);
    sml_jw_object_inline(&w);
    sml_jw_kstr(&w, "k", "v");
    sml_jw_end(&w);
    sml_jw_array(&w);
    sml_jw_end(&w);
    sml_jw_end(&w);
    sml_jw_key(&w, "empty");
    sml_jw_object(&w);
    sml_jw_end(&w);
    sml_jw_end(&w);
    *finish = sml_jw_finish(&w);
    fclose(f);
}

static int parses(const char *text) {
    sml_json *v = NULL;
    char err[200];
    sml_status s = sml_json_parse(text, strlen(text), &v, err, sizeof err);
    sml_json_free(v);
    return s == SML_OK;
}

/* Refused, with a "line L, column C" message. */
static int refused(const char *text) {
    sml_json *v = NULL;
    char err[200] = "";
    sml_status s = sml_json_parse(text, strlen(text), &v, err, sizeof err);
    sml_json_free(v);
    return s == SML_ERR_FORMAT && v == NULL && strstr(err, "line ") && strstr(err, "column ");
}

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    size_t len;
    int finish;
    char *text = NULL;
    write_doc(&text, &len, &finish);
    sml_test_check_case(&T, &F, NULL, 1, finish == 0,
                        "the writer reports a balanced document as fine");
    sml_json *doc = NULL;
    char err[200] = "";
    sml_status s = sml_json_parse(text, len, &doc, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 2, s == SML_OK, "the written document parses back");
    if (s != SML_OK) printf("  parse error: %s\n  document:\n%s\n", err, text);
    sml_test_check_case(&T, &F, NULL, 3,
                        doc && !strcmp(sml_json_str(sml_json_get(doc, "text")),
                                       "quote \" backslash \\ newline \n tab \t bell \a end"),
                        "a string with escapes and a control character round-trips");
    sml_test_check_case(&T, &F, NULL, 4,
                        sml_json_num(sml_json_get(doc, "pi"), 0) == 3.141592653589793,
                        "pi round-trips exactly");
    sml_test_check_case(&T, &F, NULL, 5, sml_json_num(sml_json_get(doc, "tiny"), 0) == 1e-300,
                        "1e-300 round-trips exactly");
    sml_test_check_case(&T, &F, NULL, 6, sml_json_num(sml_json_get(doc, "third"), 0) == 1.0 / 3.0,
                        "1/3 round-trips exactly");
    sml_test_check_case(&T, &F, NULL, 7,
                        sml_json_str(sml_json_get(doc, "nan")) &&
                            !strcmp(sml_json_str(sml_json_get(doc, "nan")), "nan") &&
                            isnan(sml_json_num(sml_json_get(doc, "nan"), 0)),
                        "NaN is written as \"nan\" and reads back as NaN");
    sml_test_check_case(&T, &F, NULL, 8,
                        sml_json_str(sml_json_get(doc, "inf")) &&
                            !strcmp(sml_json_str(sml_json_get(doc, "inf")), "inf") &&
                            sml_json_num(sml_json_get(doc, "inf"), 0) == INFINITY,
                        "inf is written as \"inf\" and reads back as inf");
    sml_test_check_case(&T, &F, NULL, 83,
                        sml_json_str(sml_json_get(doc, "ninf")) &&
                            !strcmp(sml_json_str(sml_json_get(doc, "ninf")), "-inf") &&
                            sml_json_num(sml_json_get(doc, "ninf"), 0) == -INFINITY,
                        "-inf is written as \"-inf\" and reads back as -inf");
    sml_test_check_case(&T, &F, NULL, 9,
                        sml_json_num(sml_json_get(doc, "big"), 0) == 9007199254740991.0,
                        "2^53-1 round-trips");
    sml_test_check_case(&T, &F, NULL, 10, sml_json_num(sml_json_get(doc, "neg"), 0) == -42,
                        "a negative integer round-trips");
    sml_test_check_case(&T, &F, NULL, 11,
                        sml_json_get(doc, "yes") && sml_json_get(doc, "yes")->boolean == 1 &&
                            sml_json_get(doc, "no")->boolean == 0,
                        "booleans round-trip");
    const sml_json *list = sml_json_get(doc, "list");
    sml_test_check_case(&T, &F, NULL, 12,
                        sml_json_len(list) == 3 && sml_json_num(sml_json_at(list, 0), 0) == 1 &&
                            !strcmp(sml_json_str(sml_json_get(sml_json_at(list, 1), "k")), "v") &&
                            sml_json_at(list, 2)->type == SML_JSON_ARRAY &&
                            sml_json_len(sml_json_at(list, 2)) == 0,
                        "a nested inline array with an object and an empty array");
    sml_test_check_case(&T, &F, NULL, 13,
                        sml_json_get(doc, "empty") &&
                            sml_json_get(doc, "empty")->type == SML_JSON_OBJECT &&
                            sml_json_len(sml_json_get(doc, "empty")) == 0,
                        "an empty object");
    sml_test_check_case(&T, &F, NULL, 14,
                        text && strstr(text, "\"list\": [1, {\"k\": \"v\"}, []]") != NULL,
                        "inline containers stay on one line");
    sml_json_free(doc);
    free(text);

    /* Misuse of the writer is reported, not silently written. */
    {
        char *b = NULL;
        size_t l;
        FILE *f = open_memstream(&b, &l);
        sml_jw w;
        sml_jw_init(&w, f);
        sml_jw_object(&w);
        sml_jw_int(&w, 1); /* a value without a key */
        sml_jw_end(&w);
        sml_test_check_case(&T, &F, NULL, 15, sml_jw_finish(&w) != 0,
                            "a value without a key inside an object is an error");
        sml_jw_init(&w, f);
        sml_jw_array(&w);
        sml_jw_key(&w, "k"); /* a key inside an array */
        sml_jw_end(&w);
        sml_test_check_case(&T, &F, NULL, 16, sml_jw_finish(&w) != 0,
                            "a key inside an array is an error");
        sml_jw_init(&w, f);
        sml_jw_object(&w);
        sml_test_check_case(&T, &F, NULL, 17, sml_jw_finish(&w) != 0,
                            "an unclosed object is an error");
        fclose(f);
        free(b);
    }

    /* Reader: unicode escapes. */
    {
        sml_json *v = NULL;
        const char *t = "\"caf\\u00e9 \\ud83d\\ude00\"";
        s = sml_json_parse(t, strlen(t), &v, err, sizeof err);
        sml_test_check_case(&T, &F, NULL, 18,
                            s == SML_OK && !strcmp(sml_json_str(v), "caf\xc3\xa9 \xf0\x9f\x98\x80"),
                            "\\u00e9 and a surrogate pair decode to UTF-8");
        sml_json_free(v);
    }
    sml_test_check_case(&T, &F, NULL, 19,
                        parses(" {\"a\" : [ 1 , -2.5e+3 , true , false , null , \"x\" ] } \n"),
                        "whitespace everywhere");
    sml_test_check_case(&T, &F, NULL, 20,
                        parses("0") && parses("-0") && parses("1E5") && parses("[]") &&
                            parses("{}"),
                        "minimal values");

    static const char *const BAD[] = {"",          "   ",         "{",
                                      "[1,]",      "{\"a\":1,}",  "{'a':1}",
                                      "01",        "1.",          "-",
                                      ".5",        "+1",          "\"abc",
                                      "\"\\x\"",   "[1 2]",       "nul",
                                      "tru",       "{\"a\" 1}",   "{\"a\":}",
                                      "1 2",       "\"\\ud800\"", "\"\\udc00\"",
                                      "\"a\nb\"",  "NaN",         "Infinity",
                                      "[1,,2]",    "{,}",         "{\"a\":1 \"b\":2}",
                                      "\"\\u12\"", "\"\\u0000\"", "[",
                                      "]",         "1e",          "1e+",
                                      "{1:2}"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "malformed input %zu (%.40s) is refused with line and column",
                 i, BAD[i]);
        sml_test_check_case(&T, &F, NULL, 30 + (int)i, refused(BAD[i]), what);
    }
    /* Nesting past the limit is refused rather than recursed into. */
    {
        char deep[400];
        memset(deep, '[', 200);
        memset(deep + 200, ']', 200);
        sml_json *v = NULL;
        s = sml_json_parse(deep, sizeof deep, &v, err, sizeof err);
        sml_test_check_case(&T, &F, NULL, 80, s == SML_ERR_FORMAT && strstr(err, "nested"),
                            "200 levels of nesting are refused");
        sml_json_free(v);
    }
    /* The error position points at the problem. */
    {
        sml_json *v = NULL;
        const char *t = "{\n  \"a\": 1,\n  \"b\": x\n}";
        s = sml_json_parse(t, strlen(t), &v, err, sizeof err);
        sml_test_check_case(&T, &F, NULL, 81,
                            s == SML_ERR_FORMAT && strstr(err, "line 3, column 8"),
                            "the error says line 3, column 8");
        if (s == SML_ERR_FORMAT && !strstr(err, "line 3, column 8")) printf("  got: %s\n", err);
    }
    sml_test_check_case(&T, &F, NULL, 82,
                        sml_json_parse_file("/nonexistent/x.json", &doc, err, sizeof err) ==
                            SML_ERR_IO,
                        "a missing file is an I/O error");

    /* Strings are UTF-8 (RFC 8259): bytes that are not are refused where they stand. */
    {
        static const char *const NOT_UTF8[] = {"[\"\xffk\"]",        "[\"\xc0\xaf\"]",
                                               "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]",
                                               "[\"\xe2\x82\"]",     "[\"\x80\"]"};
        for (size_t i = 0; i < sizeof NOT_UTF8 / sizeof NOT_UTF8[0]; i++) {
            sml_json *v = NULL;
            s = sml_json_parse(NOT_UTF8[i], strlen(NOT_UTF8[i]), &v, err, sizeof err);
            char what[96];
            snprintf(what, sizeof what, "invalid UTF-8 %zu is refused as such", i);
            sml_test_check_case(
                &T, &F, NULL, 90 + (int)i,
                s == SML_ERR_FORMAT && strstr(err, "UTF-8") && strstr(err, "column 3"), what);
            sml_json_free(v);
        }
        sml_json *v = NULL;
        const char *ok = "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]";
        s = sml_json_parse(ok, strlen(ok), &v, err, sizeof err);
        sml_test_check_case(&T, &F, NULL, 96,
                            s == SML_OK && !strcmp(sml_json_str(sml_json_at(v, 0)),
                                                   "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
                            "2-, 3- and 4-byte UTF-8 is taken as it is");
        sml_json_free(v);
    }
    /* Whole numbers in range, never by casting a double out of int64_t's range. */
    {
        sml_json *v = NULL;
        const char *t = "[3, 2.5, 1e300, -1e300, 9007199254740993, -4, 1e999]";
        s = sml_json_parse(t, strlen(t), &v, err, sizeof err);
        int64_t x = 0;
        int ok = s == SML_OK && sml_json_int(sml_json_at(v, 0), 1, 10, &x) && x == 3 &&
                 !sml_json_int(sml_json_at(v, 0), 4, 10, &x) &&
                 !sml_json_int(sml_json_at(v, 1), 0, 10, &x) &&
                 !sml_json_int(sml_json_at(v, 2), 0, INT64_MAX, &x) &&
                 !sml_json_int(sml_json_at(v, 3), INT64_MIN, 0, &x) &&
                 sml_json_int(sml_json_at(v, 4), 0, INT64_MAX, &x) &&
                 !sml_json_int(sml_json_at(v, 5), 0, 10, &x) &&
                 !sml_json_int(sml_json_at(v, 6), 0, INT64_MAX, &x) &&
                 !sml_json_int(NULL, 0, 1, &x);
        sml_test_check_case(&T, &F, NULL, 97, ok, "sml_json_int takes whole numbers in range only");
        sml_json_free(v);
    }
    /* What is not a regular file is refused at once: a FIFO blocked the reader forever. */
    {
        char dir[] = "/tmp/sml_test_json_XXXXXX", p[64];
        if (mkdtemp(dir)) {
            snprintf(p, sizeof p, "%s/fifo.json", dir);
            if (mkfifo(p, 0666) == 0) {
                pid_t pid = fork();
                if (pid == 0) {
                    alarm(10);
                    sml_json *v = NULL;
                    char e[128] = "";
                    _exit(sml_json_parse_file(p, &v, e, sizeof e) == SML_ERR_IO && strstr(e, "FIFO")
                              ? 0
                              : 1);
                }
                int st = 0;
                waitpid(pid, &st, 0);
                sml_test_check_case(&T, &F, NULL, 98, WIFEXITED(st) && WEXITSTATUS(st) == 0,
                                    "a FIFO is refused, not waited on");
                remove(p);
            }
            sml_test_check_case(&T, &F, NULL, 99,
                                sml_json_parse_file(dir, &doc, err, sizeof err) == SML_ERR_IO &&
                                    strstr(err, "directory"),
                                "a directory is refused as one");
            snprintf(p, sizeof p, "%s/big.json", dir);
            FILE *f = fopen(p, "w");
            int sized = f && ftruncate(fileno(f), (off_t)SML_JSON_MAX_FILE + 1) == 0;
            if (f) fclose(f);
            sml_test_check_case(
                &T, &F, NULL, 100,
                sized && sml_json_parse_file(p, &doc, err, sizeof err) == SML_ERR_FORMAT &&
                    strstr(err, "more than"),
                "a file past SML_JSON_MAX_FILE is refused before it is read");
            remove(p);
            rmdir(dir);
        }
    }
    /* Memory follows the input: a string's buffer was the rest of the document, so 50,000
     * one-character strings (250 KB) took some 200 MB. Measured in a child, as the growth of
     * its peak resident set over the parse. */
    {
        size_t n = 50000, len = 0;
        char *t = malloc(n * 5 + 16);
        len += (size_t)sprintf(t, "[");
        for (size_t i = 0; i < n; i++) len += (size_t)sprintf(t + len, "%s\"a\"", i ? "," : "");
        len += (size_t)sprintf(t + len, "]");
        int fd[2];
        long grew = -1;
        if (pipe(fd) == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                struct rusage r0, r1;
                getrusage(RUSAGE_SELF, &r0);
                sml_json *v = NULL;
                char e[128];
                long kb = -1;
                if (sml_json_parse(t, len, &v, e, sizeof e) == SML_OK && sml_json_len(v) == n) {
                    getrusage(RUSAGE_SELF, &r1);
                    kb = r1.ru_maxrss - r0.ru_maxrss;
                }
                if (write(fd[1], &kb, sizeof kb) != (ssize_t)sizeof kb) _exit(1);
                _exit(0);
            }
            close(fd[1]);
            if (read(fd[0], &grew, sizeof grew) != (ssize_t)sizeof grew) grew = -1;
            close(fd[0]);
            waitpid(pid, NULL, 0);
        }
        /* 64 bytes a value (node, pointer, text) is 13 times the input; the member stack
         * and the allocator make it some 23 times, AddressSanitizer's bookkeeping some 37. */
        long limit = (long)(48 * len / 1024);
        char what[160];
        snprintf(what, sizeof what,
                 "parsing %zu bytes of one-character strings grew the resident set by %ld KB (at "
                 "most %ld)",
                 len, grew, limit);
        sml_test_check_case(&T, &F, NULL, 101, grew >= 0 && grew <= limit, what);
        printf("  %s\n", what);
        free(t);
    }
    return sml_tally_finish(&T);
}
