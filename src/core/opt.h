/* opt.h: one command-line option, as a line of its command's table. The table is the one
 * place an option is declared: getopt_long parses the command line from it (cli/options.h),
 * --help and the reference (docs/CLI.md) are printed from it, and an error names the values
 * it lists. The property engine's own flags are such a table too (prop/prop.h). */
#ifndef SML_CORE_OPT_H
#define SML_CORE_OPT_H

typedef struct sml_opt {
    const char *name;   /* without the dashes: "kernel" is --kernel */
    const char *arg;    /* the value's placeholder in help ("K[,K]", "N"); NULL: a flag */
    const char *values; /* what the value may be, as help and every error say it; NULL: a flag */
    const char *help;   /* what it does, one line of --help (wrapped at 100 columns) */
    const char *more;   /* further text for the reference only (docs/CLI.md), or NULL */
    int id;             /* the code its command's handler switches on */
} sml_opt;

#endif
