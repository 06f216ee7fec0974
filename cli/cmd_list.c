/* list: the kernel registry as a table (or JSON with --json), with what this build can run
 * and, for plugin kernels, the library each came from. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "prop/deviation.h"
#include "softmax_lab.h"
#include "softmax_lab_plugin.h"

/* A JSON string, or null for NULL (plugin tables may leave file and summary NULL). */
static void json_str(const char *s) {
    if (!s) {
        printf("null");
        return;
    }
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void mask_names(char *buf, size_t n, unsigned mask, int ops, int short_all) {
    buf[0] = 0;
    unsigned count = ops ? SML_OP_COUNT : SML_DTYPE_COUNT;
    if (short_all && mask == (1u << count) - 1u) {
        strncpy(buf, "all", n - 1);
        buf[n - 1] = 0;
        return;
    }
    for (unsigned i = 0; i < count; i++) {
        if (!(mask & (1u << i))) continue;
        const char *name = ops ? sml_op_name((sml_op)i) : sml_dtype_name((sml_dtype)i);
        if (buf[0]) strncat(buf, ",", n - strlen(buf) - 1);
        strncat(buf, name, n - strlen(buf) - 1);
    }
}

static const char *availability(const sml_kernel *k, int gpu) {
    if (!k->launch) return "not built";
    if (k->device == SML_DEVICE_GPU && !gpu) return "no GPU";
    return "ready";
}

static const sml_opt OPTS[] = {
    {"json", NULL, NULL, "print the registry as a JSON array of objects", NULL, 0},
};

static const sml_cli_spec SPEC = {
    "list",
    "[--json]",
    "The kernel registry: each kernel's device, whether it can run here, ops, dtypes, row "
    "lengths, claim and summary, built-in kernels first, then plugin kernels with the library "
    "each came from.",
    {SML_OPT_GROUP(NULL, OPTS)},
    "exit: 0, or 2 on bad usage",
    NULL,
    NULL};

const sml_cli_spec *sml_spec_list(void) { return &SPEC; }

static int on_option(void *ctx, const sml_opt *o, const char *v, char *why, size_t n) {
    (void)o, (void)v, (void)why, (void)n;
    *(int *)ctx = 1; /* --json */
    return 0;
}

int sml_cmd_list(int argc, char **argv) {
    int json = 0, npos;
    int rc = sml_cli_parse(&SPEC, argc, argv, on_option, &json, NULL, 0, &npos, NULL);
    if (rc >= 0) return rc;
    int gpu = sml_gpu_available();
    char ops[96], dts[32], claim[64];
    if (json)
        printf("[\n");
    else
        printf("%-10s %-4s %-9s %-22s %-14s %-9s %-24s %s\n", "kernel", "dev", "status", "ops",
               "dtypes", "cols", "claim", "summary");
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        mask_names(ops, sizeof ops, k->ops, 1, !json);
        mask_names(dts, sizeof dts, k->dtypes, 0, !json);
        if (k->claim.baseline)
            snprintf(claim, sizeof claim, ">=%.2fx %s (%s)", k->claim.min_speedup,
                     k->claim.baseline, k->claim.shapes);
        else
            snprintf(claim, sizeof claim, "none");
        char cols[32];
        if (k->max_cols)
            snprintf(cols, sizeof cols, "%lld-%lld", (long long)k->min_cols,
                     (long long)k->max_cols);
        else
            snprintf(cols, sizeof cols, "%lld-", (long long)k->min_cols);
        if (json) {
            printf("  {\"name\": \"%s\", \"device\": \"%s\", \"status\": \"%s\", \"ops\": \"%s\", "
                   "\"dtypes\": \"%s\", \"min_cols\": %lld, \"max_cols\": %lld, \"file\": ",
                   k->name, k->device == SML_DEVICE_GPU ? "gpu" : "cpu", availability(k, gpu), ops,
                   dts, (long long)k->min_cols, (long long)k->max_cols);
            json_str(k->file);
            printf(", \"claim\": \"%s\", \"summary\": ", claim);
            json_str(k->summary);
            printf(", \"known_deviation\": ");
            json_str(k->known_deviation);
            char dev[512];
            sml_dev_describe(k->deviation, dev, sizeof dev);
            printf(", \"deviation\": ");
            json_str(sml_dev_declared(k->deviation) ? dev : NULL);
            printf(", \"origin\": ");
            json_str(sml_kernel_origin(k));
            printf(", \"framework\": %s}%s\n", k->flags & SML_KERNEL_FRAMEWORK ? "true" : "false",
                   i + 1 < sml_kernel_count() ? "," : "");
        } else {
            printf("%-10s %-4s %-9s %-22s %-14s %-9s %-24s %s\n", k->name,
                   k->device == SML_DEVICE_GPU ? "gpu" : "cpu", availability(k, gpu), ops, dts,
                   cols, claim, k->summary ? k->summary : "");
        }
    }
    if (json) {
        printf("]\n");
        return 0;
    }
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        char dev[512];
        sml_dev_describe(k->deviation, dev, sizeof dev);
        if (sml_dev_declared(k->deviation))
            printf("declared deviation, checked as a looser bound (check --strict: the contract): "
                   "%s: %s\n",
                   k->name, dev);
        else if (k->known_deviation)
            printf("%s: %s\n", k->name,
                   sml_dev_words_only_note(k->known_deviation, dev, sizeof dev));
    }
    char field[512] = "";
    for (size_t i = 0; i < sml_kernel_count(); i++)
        if (sml_kernel_at(i)->flags & SML_KERNEL_FRAMEWORK) {
            size_t used = strlen(field);
            snprintf(field + used, sizeof field - used, "%s%s", used ? ", " : "",
                     sml_kernel_at(i)->name);
        }
    if (field[0])
        printf("framework baselines (targets measures the others against them): %s\n", field);
    for (size_t i = 0; i < sml_kernel_count(); i++)
        if (sml_kernel_origin(sml_kernel_at(i)))
            printf("plugin kernel %s from %s\n", sml_kernel_at(i)->name,
                   sml_kernel_origin(sml_kernel_at(i)));
#ifdef SML_HAVE_CUDA
    printf("build: softmax-lab %s with the CUDA kernels; %s\n", sml_version(),
           gpu ? "a GPU is visible" : "no GPU visible: the GPU kernels cannot run here");
#else
    printf(
        "build: softmax-lab %s, CPU only (built without nvcc, or with SML_WITH_CUDA=OFF): the GPU "
        "kernels are not built\n",
        sml_version());
#endif
    return 0;
}
