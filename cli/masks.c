/* masks.c: see masks.h. */
#include "masks.h"

#include <stdio.h>
#include <string.h>

#include "softmax_lab.h"

int sml_cli_parse_mask(const char *s, int ops, unsigned *mask, char *why, size_t n) {
    char buf[256];
    unsigned m = 0;
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) {
        snprintf(why, n, "a list over 255 characters");
        return 0;
    }
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        sml_op o;
        sml_dtype d;
        if (!strcmp(t, "all"))
            m |= ops ? SML_OPS_ALL : SML_DTYPES_ALL;
        else if (ops && sml_op_parse(t, &o) == SML_OK)
            m |= 1u << o;
        else if (!ops && sml_dtype_parse(t, &d) == SML_OK)
            m |= 1u << d;
        else {
            snprintf(why, n, "unknown %s '%.60s'", ops ? "op" : "dtype", t);
            return 0;
        }
    }
    if (!m) {
        snprintf(why, n, "no %s named", ops ? "op" : "dtype");
        return 0;
    }
    *mask = m;
    return 1;
}

const char *sml_cli_kernel_names(char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sml_kernel_count() && used < n; i++)
        used +=
            (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", sml_kernel_at(i)->name);
    return buf;
}

int sml_cli_mask_one(unsigned mask, int *one) {
    if (!mask || (mask & (mask - 1))) return 0;
    for (*one = 0; !(mask >> *one & 1); (*one)++) {}
    return 1;
}
