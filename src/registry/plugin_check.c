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

/* The layouts of versions 1 and 2 are this build's up to `flags` and `deviation`: the offsets
 * agree, so an old line is copied field by field and its missing fields read as 0 / NULL. */
_Static_assert(offsetof(sml_kernel_v1, known_deviation) == offsetof(sml_kernel, known_deviation),
               "sml_kernel_v1 must lay out as sml_kernel before flags");
_Static_assert(offsetof(sml_kernel, flags) >= sizeof(sml_kernel_v1),
               "flags must follow the version 1 fields");
_Static_assert(offsetof(sml_kernel_v2, flags) == offsetof(sml_kernel, flags),
               "sml_kernel_v2 must lay out as sml_kernel before deviation");
_Static_assert(offsetof(sml_kernel, deviation) >= sizeof(sml_kernel_v2),
               "deviation must follow the version 2 fields");

static sml_kernel from_v1(const sml_kernel_v1 *o, unsigned flags) {
    return (sml_kernel){o->name,    o->file,     o->device,          o->ops,
                        o->dtypes,  o->min_cols, o->max_cols,        o->launch,
                        o->summary, o->claim,    o->known_deviation, flags,
                        NULL};
}

const sml_kernel *sml_plugin_table_current(const void *table, size_t count, unsigned abi_version,
                                           sml_kernel **copy) {
    *copy = NULL;
    if ((abi_version != 1u && abi_version != 2u) || !table || count == 0 ||
        count > SML_PLUGIN_MAX_KERNELS)
        return table;
    sml_kernel *k = calloc(count, sizeof *k);
    if (!k) return NULL;
    for (size_t i = 0; i < count; i++)
        k[i] = abi_version == 1u ? from_v1(&((const sml_kernel_v1 *)table)[i], 0u)
                                 : from_v1(&((const sml_kernel_v2 *)table)[i].v1,
                                           ((const sml_kernel_v2 *)table)[i].flags);
    *copy = k;
    return k;
}

/* NULL when line k's declared deviation (if any) is well formed, else what is wrong, in why. */
static const char *deviation_problem(const sml_kernel *k, char *why, size_t n) {
    const sml_deviation *d = k->deviation;
    if (!d) return NULL;
    if (d->exceptions & ~SML_DEV_EXCEPTIONS_ALL) {
        snprintf(why, n, "deviation.exceptions 0x%x has bits outside SML_DEV_EXCEPTIONS_ALL (0x%x)",
                 d->exceptions, SML_DEV_EXCEPTIONS_ALL);
        return why;
    }
    for (int op = 0; op < SML_OP_COUNT; op++)
        for (int dt = 0; dt < SML_DTYPE_COUNT; dt++) {
            double u = d->ulps[op][dt], f = d->bound_factor[op][dt];
            const char *on = sml_op_name((sml_op)op), *dn = sml_dtype_name((sml_dtype)dt);
            if (!isfinite(u) || u < 0 || !isfinite(f) || f < 0) {
                snprintf(why, n, "deviation for %s %s: ulps %g, bound_factor %g (finite, >= 0)", on,
                         dn, u, f);
                return why;
            }
            if (f > 0 && f < 1) {
                snprintf(why, n,
                         "deviation for %s %s: bound_factor %g is tighter than the contract (0, or "
                         ">= 1)",
                         on, dn, f);
                return why;
            }
            if ((u > 0 || f > 0) && (!(k->ops >> op & 1u) || !(k->dtypes >> dt & 1u))) {
                snprintf(why, n, "deviation declares a bound for %s %s, which it does not run", on,
                         dn);
                return why;
            }
        }
    return NULL;
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
        char dev_why[200];
        if (deviation_problem(k, dev_why, sizeof dev_why)) REFUSE("%s", dev_why);
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
