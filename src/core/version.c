/* version.c: the library's version, as its headers state it. */
#include "softmax_lab.h"
#include "softmax_lab_version.h"

const char *sml_version(void) { return SML_VERSION_STRING; }
