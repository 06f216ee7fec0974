/* ledger_schema.c: which ledger versions this build reads, and what a record's role is in
 * each (ledger.h). */
#include <stdio.h>
#include <string.h>

#include "bench/ledger.h"

#define SCHEMA_PREFIX "softmax-lab-ledger/"

int sml_ledger_schema_version(const char *schema, char *err, size_t errlen) {
    if (schema && !strcmp(schema, SCHEMA_PREFIX "1")) return 1;
    if (schema && !strcmp(schema, SML_LEDGER_SCHEMA)) return SML_LEDGER_VERSION;
    if (schema && !strncmp(schema, SCHEMA_PREFIX, strlen(SCHEMA_PREFIX)))
        snprintf(err, errlen, "'schema' is \"%.40s\": this build reads " SCHEMA_PREFIX "1 and %s",
                 schema, SML_LEDGER_SCHEMA);
    else
        snprintf(err, errlen, "'schema' is not \"%s\": not a softmax-lab ledger",
                 SML_LEDGER_SCHEMA);
    return 0;
}

int sml_ledger_schema_ok(const char *schema, char *err, size_t errlen) {
    return sml_ledger_schema_version(schema, err, errlen) != 0;
}

/* COMPATIBILITY with version 1 ledgers only: they carry no "framework", and their framework
 * baselines were the records of these kernels (cuDNN built in; PyTorch, the Triton kernels
 * and Liger registered by the Python binding). Version 2 records say their role themselves;
 * nothing else reads this list, and a new framework baseline is marked with
 * SML_KERNEL_FRAMEWORK on its registry line, never added here. */
static const char *const V1_FRAMEWORK_KERNELS[] = {"torch", "triton", "triton_online", "liger",
                                                   "cudnn"};

int sml_ledger_v1_framework(const char *kernel) {
    for (size_t i = 0; kernel && i < sizeof V1_FRAMEWORK_KERNELS / sizeof V1_FRAMEWORK_KERNELS[0];
         i++)
        if (!strcmp(kernel, V1_FRAMEWORK_KERNELS[i])) return 1;
    return 0;
}

void sml_ledger_v1_framework_list(const char *last, char *buf, size_t n) {
    const size_t count = sizeof V1_FRAMEWORK_KERNELS / sizeof V1_FRAMEWORK_KERNELS[0];
    buf[0] = 0;
    for (size_t i = 0, used = 0; i < count && used < n; i++, used = strlen(buf))
        snprintf(buf + used, n - used, "%s%s",
                 i == 0           ? ""
                 : i + 1 == count ? last
                                  : ", ",
                 V1_FRAMEWORK_KERNELS[i]);
}

int sml_ledger_record_framework(int version, const sml_json *rec, const char *where, char *err,
                                size_t errlen) {
    if (version == 1) return sml_ledger_v1_framework(sml_json_str(sml_json_get(rec, "kernel")));
    const sml_json *f = sml_json_get(rec, "framework");
    if (!f || f->type != SML_JSON_BOOL) {
        snprintf(
            err, errlen,
            "%s: 'framework' missing or not true/false (a %s record says whether its kernel is a "
            "framework baseline)",
            where, SML_LEDGER_SCHEMA);
        return -1;
    }
    return f->boolean != 0;
}
