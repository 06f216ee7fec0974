/* compare: placeholder until its issue lands. */
#include <stdio.h>

#include "commands.h"

int sml_cmd_compare(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "softmax-lab compare: not implemented yet\n");
    return 2;
}
