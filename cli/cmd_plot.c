/* plot: GB/s against columns per backend from a ledger JSON, as an SVG file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json_read.h"
#include "report/plot_svg.h"
#include "commands.h"
#include "masks.h"
#include "options.h"
#include "io/out_file.h"
#include "io/path_same.h"

enum { P_OP, P_DTYPE, P_ROWS };

static const sml_opt OPTS[] = {
    {"op", "OP", SML_CLI_OPS, "the op plotted (default softmax)", NULL, P_OP},
    {"dtype", "D", SML_CLI_DTYPES, "the dtype plotted (default: the one with most points)", NULL,
     P_DTYPE},
    {"rows", "R", "a row count of at least 1",
     "the row count plotted (default: the one spanning the most column counts)", NULL, P_ROWS},
};

static const sml_cli_spec SPEC = {
    "plot",
    "LEDGER.json OUT.svg [--op OP] [--dtype D] [--rows R]",
    "One line per backend, log2 columns on x, GB/s on y; the run's device copy bandwidth dashed, "
    "the copy kernel on the same bytes dashed grey.",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0 written, 1 the SVG could not be written (no file left), 2 bad usage or input",
    NULL,
    NULL};

const sml_cli_spec *sml_spec_plot(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    sml_plot_opts *p = ctx;
    unsigned mask;
    int one;
    char *end;
    switch (o->id) {
    case P_OP:
    case P_DTYPE:
        if (!sml_cli_parse_mask(v, o->id == P_OP, &mask, why, n)) return -1;
        if (!sml_cli_mask_one(mask, &one)) return -1; /* one op or dtype, not all */
        if (o->id == P_OP)
            p->op = sml_op_name((sml_op)one);
        else
            p->dtype = sml_dtype_name((sml_dtype)one);
        return 0;
    case P_ROWS:
        errno = 0;
        p->rows = strtoll(v, &end, 10);
        return !*v || *end || errno || p->rows < 1 ? -1 : 0;
    default: return -1;
    }
}

int sml_cmd_plot(int argc, char **argv) {
    const char *files[2] = {NULL, NULL};
    sml_plot_opts o = {NULL, NULL, 0};
    int nf;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, &o, files, 2, &nf, "LEDGER.json OUT.svg");
    if (rc >= 0) return rc;
    if (nf != 2) {
        fprintf(stderr, "softmax-lab plot: a ledger and the SVG to write\n");
        sml_cli_usage(stderr, &SPEC);
        return 2;
    }
    const char *in = files[0], *out = files[1];
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
