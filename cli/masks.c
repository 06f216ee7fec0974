/* masks.c: see masks.h. */
#include "masks.h"

#include <stdio.h>
#include <string.h>

#include "softmax_lab.h"

int sml_cli_parse_mask(const char *s, int ops, unsigned *mask) {
    char buf[256];
    *mask = 0;
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "all")) {
            *mask |= ops ? SML_OPS_ALL : SML_DTYPES_ALL;
        } else if (ops) {
            sml_op o;
            if (sml_op_parse(t, &o) != SML_OK) return 0;
            *mask |= 1u << o;
        } else {
            sml_dtype d;
            if (sml_dtype_parse(t, &d) != SML_OK) return 0;
            *mask |= 1u << d;
        }
    }
    return *mask != 0;
}
