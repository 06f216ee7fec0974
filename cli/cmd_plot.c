/* plot: GB/s against columns per backend from a ledger JSON, as an SVG file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_read.h"
#include "report/plot_svg.h"
#include "commands.h"
#include "io/out_file.h"
#include "io/path_same.h"

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: softmax-lab plot LEDGER.json OUT.svg [--op OP] [--dtype D] [--rows R]\n"
        "  one line per backend, log2 columns on x, GB/s on y; the run's device copy bandwidth\n"
        "  dashed, the copy kernel on the same bytes dashed grey. Defaults: op softmax, the\n"
        "  dtype with most points, the row count that spans the most column counts.\n"
        "exit: 0 written, 1 the SVG could not be written (no file left), 2 bad usage or input\n");
}

int sml_cmd_plot(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    sml_plot_opts o = {NULL, NULL, 0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--op") || !strcmp(a, "--dtype") || !strcmp(a, "--rows")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "softmax-lab plot: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--op")) {
                sml_op op;
                if (sml_op_parse(v, &op) != SML_OK) {
                    fprintf(stderr, "softmax-lab plot: bad --op '%s'\n", v);
                    return 2;
                }
                o.op = sml_op_name(op);
            } else if (!strcmp(a, "--dtype")) {
                sml_dtype d;
                if (sml_dtype_parse(v, &d) != SML_OK) {
                    fprintf(stderr, "softmax-lab plot: bad --dtype '%s'\n", v);
                    return 2;
                }
                o.dtype = sml_dtype_name(d);
            } else {
                char *end;
                errno = 0;
                long long r = strtoll(v, &end, 10);
                if (!*v || *end || errno || r < 1) {
                    fprintf(stderr, "softmax-lab plot: bad --rows '%s'\n", v);
                    return 2;
                }
                o.rows = r;
            }
        } else if (!strncmp(a, "--", 2)) {
            fprintf(stderr, "softmax-lab plot: unknown option '%s'\n", a);
            return 2;
        } else if (!in) {
            in = a;
        } else if (!out) {
            out = a;
        } else {
            fprintf(stderr, "softmax-lab plot: too many arguments\n");
            return 2;
        }
    }
    if (!in || !out) {
        usage(stderr);
        return 2;
    }
    sml_json *doc = NULL;
    char err[1200], info[256];
    const sml_path_arg paths[] = {{"the ledger", in, 0}, {"the SVG", out, 1}};
    if (sml_paths_clash(paths, 2, err, sizeof err)) {
        fprintf(stderr, "softmax-lab plot: %s\n", err);
        return 2;
    }
    if (sml_json_parse_file(in, &doc, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab plot: %s: %s\n", in, err);
        return 2;
    }
    /* Render to memory first, so a ledger that cannot be plotted leaves no file behind. */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        sml_json_free(doc);
        fprintf(stderr, "softmax-lab plot: out of memory\n");
        return 1;
    }
    sml_status s = sml_plot_svg(doc, &o, mem, info, sizeof info, err, sizeof err);
    fclose(mem);
    sml_json_free(doc);
    if (s != SML_OK) {
        free(buf);
        fprintf(stderr, "softmax-lab plot: %s: %s\n", in, err);
        return 2;
    }
    if (sml_out_write(out, buf, len, err, sizeof err) != SML_OK) {
        fprintf(stderr, "softmax-lab plot: %s\n", err);
        free(buf);
        return 1;
    }
    free(buf);
    printf("%s: %s\n", out, info);
    return 0;
}
