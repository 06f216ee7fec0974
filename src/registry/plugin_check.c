/* plugin_check.c: a plugin's kernel table, line by line, before any of it is registered. */
#include "registry/plugin_check.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "softmax_lab_plugin.h"

static int name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

/* NULL when the name is usable, else what is wrong with it. */
static const char *name_problem(const char *name) {
    if (!name) return "name is NULL";
    if (!name[0]) return "name is empty";
    size_t n = strlen(name);
    if (n > SML_PLUGIN_MAX_NAME) return "name is longer than 63 characters";
    for (size_t i = 0; i < n; i++)
        if (!name_char(name[i])) return "name has a character outside [A-Za-z0-9_.-]";
    if (name[0] == '-' || name[0] == '.') return "name starts with '-' or '.'";
    if (!strcmp(name, "all") || !strcmp(name, "cpu") || !strcmp(name, "gpu"))
        return "name is reserved (all, cpu and gpu select groups of kernels)";
    return NULL;
}

/* The line of table[0..count) named `name`, other than `self`; -1 if none. */
static long line_named(const sml_kernel *table, size_t count, const char *name, size_t self) {
    for (size_t i = 0; i < count; i++)
        if (i != self && table[i].name && !strcmp(table[i].name, name)) return (long)i;
    return -1;
}

/* The layout of version 1 is this build's up to `flags`: the offsets agree, so a version 1
 * line is copied field by field and its flags read as 0. */
_Static_assert(offsetof(sml_kernel_v1, known_deviation) == offsetof(sml_kernel, known_deviation),
               "sml_kernel_v1 must lay out as sml_kernel before flags");
_Static_assert(offsetof(sml_kernel, flags) >= sizeof(sml_kernel_v1),
               "flags must follow the version 1 fields");

const sml_kernel *sml_plugin_table_current(const void *table, size_t count, unsigned abi_version,
                                           sml_kernel **copy) {
    *copy = NULL;
    if (abi_version != 1u || !table || count == 0 || count > SML_PLUGIN_MAX_KERNELS) return table;
    const sml_kernel_v1 *old = table;
    sml_kernel *k = calloc(count, sizeof *k);
    if (!k) return NULL;
    for (size_t i = 0; i < count; i++)
        k[i] = (sml_kernel){old[i].name,    old[i].file,     old[i].device,          old[i].ops,
                            old[i].dtypes,  old[i].min_cols, old[i].max_cols,        old[i].launch,
                            old[i].summary, old[i].claim,    old[i].known_deviation, 0u};
    *copy = k;
    return k;
}

sml_status sml_plugin_check_table(const sml_kernel *table, size_t count, unsigned abi_version,
                                  const char *origin, sml_name_taken_fn taken, char *msg,
                                  size_t msglen) {
    const sml_status E = SML_ERR_PLUGIN;
    if (abi_version < SML_PLUGIN_ABI_OLDEST || abi_version > SML_PLUGIN_ABI_VERSION)
        return sml_errorf(
            E, msg, msglen,
            "%s: plugin ABI version %u, this softmax-lab takes versions %u to %u (rebuild "
            "the plugin against this softmax-lab's softmax_lab_plugin.h)",
            origin, abi_version, SML_PLUGIN_ABI_OLDEST, SML_PLUGIN_ABI_VERSION);
    if (!table || count == 0)
        return sml_errorf(E, msg, msglen, "%s: the kernel table is %s", origin,
                          table ? "empty (count 0)" : "NULL");
    if (count > SML_PLUGIN_MAX_KERNELS)
        return sml_errorf(E, msg, msglen, "%s: %zu kernels (at most %d): a bad count?", origin,
                          count, SML_PLUGIN_MAX_KERNELS);
    for (size_t i = 0; i < count; i++) {
        const sml_kernel *k = &table[i];
        const char *bad = name_problem(k->name);
        if (bad) return sml_errorf(E, msg, msglen, "%s: kernel %zu: %s", origin, i, bad);
#define REFUSE(...)                                                                             \
    do {                                                                                        \
        char why_[256];                                                                         \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                               \
        return sml_errorf(E, msg, msglen, "%s: kernel %zu '%s': %s", origin, i, k->name, why_); \
    } while (0)
        const char *from = NULL;
        if (taken(k->name, &from)) {
            REFUSE("the name is taken by a registered kernel (%s)",
                   from ? from : "built into softmax-lab");
        }
        long twin = line_named(table, count, k->name, i);
        if (twin >= 0) REFUSE("the name is also kernel %ld's in the same table", twin);
        if (!k->launch) REFUSE("launch is NULL");
        if (k->device != SML_DEVICE_CPU && k->device != SML_DEVICE_GPU)
            REFUSE("device %d is neither SML_DEVICE_CPU (0) nor SML_DEVICE_GPU (1)",
                   (int)k->device);
        if (k->ops == 0) REFUSE("ops is 0 (no op supported)");
        if (k->ops & ~SML_OPS_ALL)
            REFUSE("ops 0x%x has bits outside SML_OPS_ALL (0x%x)", k->ops, SML_OPS_ALL);
        if (k->dtypes == 0) REFUSE("dtypes is 0 (no dtype supported)");
        if (k->dtypes & ~SML_DTYPES_ALL)
            REFUSE("dtypes 0x%x has bits outside SML_DTYPES_ALL (0x%x)", k->dtypes, SML_DTYPES_ALL);
        if (k->min_cols < 1) REFUSE("min_cols %lld < 1", (long long)k->min_cols);
        if (k->max_cols < 0) REFUSE("max_cols %lld < 0 (0 means no limit)", (long long)k->max_cols);
        if (k->max_cols != 0 && k->min_cols > k->max_cols)
            REFUSE("min_cols %lld > max_cols %lld", (long long)k->min_cols, (long long)k->max_cols);
        if (k->flags & ~SML_KERNEL_FLAGS_ALL)
            REFUSE("flags 0x%x has bits outside SML_KERNEL_FLAGS_ALL (0x%x)", k->flags,
                   SML_KERNEL_FLAGS_ALL);
        const sml_claim *c = &k->claim;
        if (c->baseline) {
            if (!strcmp(c->baseline, k->name)) REFUSE("the claim's baseline is the kernel itself");
            /* Only an earlier line: a later one could name this line back, and two claims that are
             * each other's baselines (A >= 1x B, B >= 1x A) would each pass the other's noise. */
            long later = line_named(table, count, c->baseline, i);
            if (!taken(c->baseline, &from) && line_named(table, i, c->baseline, i) < 0)
                REFUSE(
                    "the claim's baseline '%s' is %s", c->baseline,
                    later > (long)i
                        ? "a later line of the table: only a registered kernel or an earlier line "
                          "can be a baseline"
                        : "not a registered kernel (softmax-lab list)");
            if (!(c->min_speedup > 0) || !isfinite(c->min_speedup))
                REFUSE("the claim's min_speedup %g is not a number > 0", c->min_speedup);
            if (!sml_shape_class_valid(c->shapes))
                REFUSE("the claim's shapes '%s' is not all, short, mid or long",
                       c->shapes ? c->shapes : "(NULL)");
        }
#undef REFUSE
    }
    return SML_OK;
}
