/* options.c: getopt_long over a command's option tables, and the help and reference printed
 * from the same tables (options.h). */
#define _GNU_SOURCE /* getopt_long */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The column option help starts at. */
#define HELP_COL 24
/* A space no line breaks at (usage: "[--save DIR]" stays whole); printed as a space. */
#define NBSP     '\x1f'

int sml_opt_is(const char *word, const sml_opt *o) {
    return word && !strncmp(word, "--", 2) && !strcmp(word + 2, o->name);
}

void sml_cli_wrap(FILE *f, int col, int indent, const char *text) {
    const char *p = text;
    int fresh = 1; /* nothing of text on this line yet */
    while (*p) {
        if (*p == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            fresh = 1;
            p++;
            continue;
        }
        size_t sp = strspn(p, " "), word = strcspn(p + sp, " \n");
        if (!word) { /* spaces before a newline or the end */
            p += sp;
            continue;
        }
        if (!fresh && col + (int)(sp + word) > SML_CLI_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            sp = 0;
            p += strspn(p, " ");
        }
        for (size_t i = 0; i < sp + word; i++) fputc(p[i] == NBSP ? ' ' : p[i], f);
        col += (int)(sp + word);
        p += sp + word;
        fresh = 0;
    }
    fputc('\n', f);
}

static void help_line(FILE *f, const sml_opt *o) {
    char left[128];
    int n =
        snprintf(left, sizeof left, "  --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    if (n <= HELP_COL - 2) {
        fprintf(f, "%-*s", HELP_COL, left);
        sml_cli_wrap(f, HELP_COL, HELP_COL, o->help);
    } else {
        fprintf(f, "%s  ", left);
        sml_cli_wrap(f, n + 2, HELP_COL, o->help);
    }
}

/* A group without a title goes on under the one before it. */
static void help_group(FILE *f, const sml_opt_group *g, int first) {
    if (g->title || first) fprintf(f, "\n%s:\n", g->title ? g->title : "Options");
    for (size_t i = 0; i < g->n; i++) help_line(f, &g->opt[i]);
}

void sml_cli_help_group(FILE *f, const sml_opt_group *g) {
    fprintf(f, "\n%s:\n", g->title ? g->title : "Options");
    for (size_t i = 0; i < g->n; i++) help_line(f, &g->opt[i]);
}

/* "usage: softmax-lab NAME FORM", one line per form, continuation lines under the form. */
static void usage_lines(FILE *f, const sml_cli_spec *spec, const char *lead, const char *next) {
    const char *p = spec->usage;
    char form[512];
    for (int first = 1; *p; first = 0) {
        size_t len = strcspn(p, "\n");
        snprintf(form, sizeof form, "%.*s", (int)len, p);
        for (int depth = 0, i = 0; form[i]; i++) {
            depth += (form[i] == '[') - (form[i] == ']');
            if (depth > 0 && form[i] == ' ') form[i] = NBSP;
        }
        int col = fprintf(f, "%ssoftmax-lab %s ", first ? lead : next, spec->name);
        sml_cli_wrap(f, col, col, form);
        p += len + (p[len] == '\n');
    }
}

void sml_cli_usage(FILE *f, const sml_cli_spec *spec) {
    usage_lines(f, spec, "usage: ", "       ");
}

void sml_cli_help(FILE *f, const sml_cli_spec *spec) {
    usage_lines(f, spec, "usage: ", "       ");
    fputc('\n', f);
    sml_cli_wrap(f, 0, 0, spec->about);
    for (int g = 0; g < SML_CLI_MAX_GROUPS && spec->groups[g].n; g++)
        help_group(f, &spec->groups[g], g == 0);
    if (spec->extra) spec->extra(f);
    fputc('\n', f);
    sml_cli_wrap(f, 0, 5, spec->exit);
}

void sml_cli_reference_group(FILE *f, const sml_opt_group *g) {
    fprintf(f, "\n%s:\n\n", g->title ? g->title : "Options");
    for (size_t i = 0; i < g->n; i++) {
        const sml_opt *o = &g->opt[i];
        char head[160];
        int n = snprintf(head, sizeof head, "* `--%s%s%s`: ", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        char text[2048];
        snprintf(text, sizeof text, "%s%s%s%s%s%s", o->help, o->more ? ". " : "",
                 o->more ? o->more : "", o->values ? ". Values: " : "", o->values ? o->values : "",
                 o->values || o->more ? "." : "");
        fputs(head, f);
        sml_cli_wrap(f, n, 2, text);
    }
}

void sml_cli_reference(FILE *f, const sml_cli_spec *spec) {
    fprintf(f, "\n## %s\n\n```\n", spec->name);
    usage_lines(f, spec, "", "");
    fprintf(f, "```\n\n");
    sml_cli_wrap(f, 0, 0, spec->about);
    for (int g = 0; g < SML_CLI_MAX_GROUPS && spec->groups[g].n; g++)
        sml_cli_reference_group(f, &spec->groups[g]);
    if (spec->extra) spec->extra(f);
    fputc('\n', f);
    sml_cli_wrap(f, 0, 0, spec->exit);
    if (spec->reference) spec->reference(f);
}

/* ---- parsing ---- */

static size_t count_opts(const sml_cli_spec *spec) {
    size_t n = 0;
    for (int g = 0; g < SML_CLI_MAX_GROUPS && spec->groups[g].n; g++) n += spec->groups[g].n;
    return n;
}

static const sml_opt *opt_at(const sml_cli_spec *spec, size_t i) {
    for (int g = 0; g < SML_CLI_MAX_GROUPS && spec->groups[g].n; g++) {
        if (i < spec->groups[g].n) return &spec->groups[g].opt[i];
        i -= spec->groups[g].n;
    }
    return NULL;
}

/* "unknown option '--x' (its options: --a, --b, ...)", one line: a caller that keeps the last
 * lines of standard error (the Python binding's errors) keeps all of it. */
static int unknown_option(const sml_cli_spec *spec, const char *word) {
    char list[4096] = "";
    size_t n = count_opts(spec), used = 0;
    for (size_t i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s", i ? ", " : "",
                                 opt_at(spec, i)->name);
    fprintf(stderr, "softmax-lab %s: unknown option '%.60s' (its options: %s)\n", spec->name, word,
            list);
    return 2;
}

static int bad_value(const sml_cli_spec *spec, const sml_opt *o, const char *v, const char *why) {
    fprintf(stderr, "softmax-lab %s: bad value for --%s: '%.200s' (%s%svalid: %s)\n", spec->name,
            o->name, v, why, why[0] ? "; " : "", o->values ? o->values : "none");
    return 2;
}

/* The word a long option was written as: getopt_long has just stepped past it (and past its
 * value when that was the next word). */
static const char *written(char **v, const sml_opt *o) {
    return o->arg && optarg == v[optind - 1] ? v[optind - 2] : v[optind - 1];
}

static int asks_help(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

/* One getopt_long answer: -1 go on, else the exit status. */
static int one(const sml_cli_spec *spec, char **v, int c, sml_opt_fn on, void *ctx,
               const char **pos, int maxpos, int *npos, const char *pos_text) {
    if (c == 1) { /* a word that is not an option */
        if (*npos < maxpos) {
            pos[(*npos)++] = optarg;
            return -1;
        }
        fprintf(stderr, "softmax-lab %s: unexpected argument '%.200s' (it takes %s)\n", spec->name,
                optarg, pos_text ? pos_text : "options only");
        return 2;
    }
    if (c == '?' && optopt > 0 && optopt < 256) {
        char word[3] = {'-', (char)optopt, 0};
        return unknown_option(spec, word);
    }
    if (c == '?' || c < 256) return unknown_option(spec, v[optind - 1]);
    const sml_opt *o = opt_at(spec, (size_t)(c - 256));
    if (!o || !sml_opt_is(written(v, o), o)) return unknown_option(spec, written(v, o));
    char why[256] = "";
    int r = on(ctx, o, o->arg ? optarg : NULL, why, sizeof why);
    if (r < 0) return bad_value(spec, o, optarg ? optarg : "", why);
    return r ? 2 : -1;
}

int sml_cli_parse(const sml_cli_spec *spec, int argc, char **argv, sml_opt_fn on, void *ctx,
                  const char **pos, int maxpos, int *npos, const char *pos_text) {
    *npos = 0;
    if (asks_help(argc, argv)) {
        sml_cli_help(stdout, spec);
        return 0;
    }
    size_t n = count_opts(spec);
    struct option *lo = calloc(n + 1, sizeof *lo);
    char **v = calloc((size_t)argc + 2, sizeof *v);
    if (!lo || !v) {
        free(lo);
        free(v);
        fprintf(stderr, "softmax-lab %s: out of memory reading the command line\n", spec->name);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        const sml_opt *o = opt_at(spec, i);
        lo[i] =
            (struct option){o->name, o->arg ? required_argument : no_argument, NULL, 256 + (int)i};
    }
    v[0] = (char *)spec->name;
    memcpy(v + 1, argv, (size_t)argc * sizeof *v);
    /* "-": words that are not options come back in order (code 1), POSIXLY_CORRECT or not;
     * ":": a missing value is answered ':' and nothing is printed by getopt itself. */
    int rc = -1, c;
    optind = 0;
    opterr = 0;
    while (rc < 0 && (c = getopt_long(argc + 1, v, "-:", lo, NULL)) != -1) {
        if (c == ':') {
            const sml_opt *o = optopt >= 256 ? opt_at(spec, (size_t)(optopt - 256)) : NULL;
            if (!o) {
                rc = unknown_option(spec, v[optind - 1]);
                break;
            }
            fprintf(stderr, "softmax-lab %s: --%s needs a value (valid: %s)\n", spec->name, o->name,
                    o->values ? o->values : "none");
            rc = 2;
            break;
        }
        rc = one(spec, v, c, on, ctx, pos, maxpos, npos, pos_text);
    }
    free(lo);
    free(v);
    return rc;
}
