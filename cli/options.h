/* options.h: a command's options as tables of core/opt.h lines. getopt_long parses the command
 * line from them, --help and the reference (docs/CLI.md: `softmax-lab help --reference`) are
 * printed from them, and every error names the option's valid values: what a command accepts
 * and what its help says cannot drift apart. */
#ifndef SML_CLI_OPTIONS_H
#define SML_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "core/opt.h"

/* The width no line of help or reference text goes past. */
#define SML_CLI_WIDTH 100

/* Options under one heading. */
typedef struct sml_opt_group {
    const char *title; /* "Suite options"; NULL: "Options" */
    const sml_opt *opt;
    size_t n;
} sml_opt_group;

#define SML_OPT_GROUP(title, table) \
    { title, table, sizeof table / sizeof table[0] }
#define SML_CLI_MAX_GROUPS 4

/* One command: what its --help and its reference section say, and the options it parses. */
typedef struct sml_cli_spec {
    const char *name;                         /* "check" */
    const char *usage;                        /* its forms after "softmax-lab NAME ", one a line */
    const char *about;                        /* what it does: a paragraph of --help (wrapped) */
    sml_opt_group groups[SML_CLI_MAX_GROUPS]; /* its options; an empty group ends them */
    const char *exit;                         /* its exit status, "exit: 0 ..." (wrapped) */
    void (*extra)(FILE *f);                   /* more text of both, after the options, or NULL */
    void (*reference)(FILE *f);               /* more text of the reference only, or NULL */
} sml_cli_spec;

/* What a command does with one option: 0 taken; -1 a bad value (why: what is wrong, or left
 * empty; the parser's message names the option, the value and o->values); 2 it printed its
 * own message (that must name the valid values too). */
typedef int (*sml_opt_fn)(void *ctx, const sml_opt *o, const char *value, char *why, size_t n);

/* Parses the arguments after the command's name (argc words) by getopt_long over spec's
 * tables, calling on() for each option in order. Words that are not options go to pos (at
 * most maxpos; a word more is bad usage, said with pos_text, the words the command takes, or
 * "options only"), their count in *npos. -h or --help anywhere prints the help on stdout.
 * Returns -1 parsed; 0 help printed; 2 bad usage, said on stderr naming the option and its
 * valid values (an unknown option: the command's options). An option must be written whole:
 * no abbreviation is taken. */
int sml_cli_parse(const sml_cli_spec *spec, int argc, char **argv, sml_opt_fn on, void *ctx,
                  const char **pos, int maxpos, int *npos, const char *pos_text);

/* 1 when word is the option (its whole name). */
int sml_opt_is(const char *word, const sml_opt *o);

/* The command's "usage:" lines (after a message on bad usage). */
void sml_cli_usage(FILE *f, const sml_cli_spec *spec);
/* --help of the command, and one group (the shared ones main.c adds after it). */
void sml_cli_help(FILE *f, const sml_cli_spec *spec);
void sml_cli_help_group(FILE *f, const sml_opt_group *g);
/* The command's section of the reference (Markdown), and one group's list. */
void sml_cli_reference(FILE *f, const sml_cli_spec *spec);
void sml_cli_reference_group(FILE *f, const sml_opt_group *g);

/* text from column col (already printed) word-wrapped at SML_CLI_WIDTH, continuation lines
 * indented by indent; '\n' in text starts a new line (indented too). Ends with a newline. */
void sml_cli_wrap(FILE *f, int col, int indent, const char *text);

#endif
