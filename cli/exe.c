/* exe.c: the softmax-lab executable, one call into libsoftmax_lab_cli (cli/main.c). */
#include "softmax_lab_cli.h"

int main(int argc, char **argv) { return sml_cli_main(argc, argv); }
