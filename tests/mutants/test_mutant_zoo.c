/* test_mutant_zoo: the mutant table checked on the CPU, so a mistake in it fails CI on every
 * commit rather than on the GPU host: every mutant declares some op and dtype (an op given
 * as an enum value instead of its bit leaves the mask empty and the mutant never runs), is
 * named gpu_* and absent from the registry, copies a registered GPU kernel within that
 * kernel's limits, lives in a .cu file that says which kernel it copies and marks its planted
 * lines `MUTANT <its name>` (there or in a tests/mutants header it includes), and has hint
 * and sanitizer shapes the mutant itself accepts. Every item 1..12 of the list of classic
 * bugs has a mutant. Run from the repository root (ctest does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/gen.h"
#include "test_support.h"
#include "tests/mutants/mutants.h"

#define TEST "test_mutant_zoo"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

/* Does src mark a planted line "MUTANT name", the name whole (gpu_sum16, not gpu_sum16x)? */
static int marks_in(const char *src, const char *name) {
    char want[96];
    snprintf(want, sizeof want, "MUTANT %s", name);
    const size_t n = strlen(want);
    for (const char *p = strstr(src, want); p; p = strstr(p + 1, want)) {
        const char c = p[n];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9')))
            return 1;
    }
    return 0;
}

/* ... in the file src, or in a header of this folder that it includes (mutant.cuh's row
 * accesses carry two of the bugs). */
static int marks(const char *src, const char *name) {
    if (marks_in(src, name)) return 1;
    static const char inc[] = "#include \"tests/mutants/";
    for (const char *p = strstr(src, inc); p; p = strstr(p + 1, inc)) {
        char path[256];
        const char *q = p + strlen("#include \"");
        const size_t len = strcspn(q, "\"\n");
        if (len >= sizeof path) continue;
        memcpy(path, q, len);
        path[len] = 0;
        char *h = slurp(path);
        const int found = h && marks_in(h, name);
        free(h);
        if (found) return 1;
    }
    return 0;
}

static int fits(const sml_kernel *k, const sml_mut_shape *s) {
    return (k->ops >> s->op & 1) && (k->dtypes >> s->dtype & 1) && s->cols >= k->min_cols &&
           (k->max_cols == 0 || s->cols <= k->max_cols) && s->rows > 0 &&
           (s->ld == 0 || s->ld >= s->cols) && s->offset >= 0;
}

int main(int argc, char **argv) {
    (void)argc;
    sml_tally t = {TEST, 0, 0, 0};
    const char *rerun = argv[0];
    unsigned items = 0;
    for (size_t i = 0; i < sml_gpu_mutant_count(); i++) {
        const sml_gpu_mutant *m = sml_gpu_mutant_at(i);
        const sml_kernel *k = &m->kernel;
        const char *n = k->name;
        sml_test_check(&t, !strncmp(n, "gpu_", 4), rerun,
                       "%s: mutant names start with gpu_ (the CPU mutants own mut_*)", n);
        sml_test_check(&t, !sml_kernel_find(n), rerun,
                       "%s: a mutant's name is taken by a registered kernel", n);
        for (size_t j = 0; j < i; j++)
            sml_test_check(&t, strcmp(n, sml_gpu_mutant_at(j)->kernel.name), rerun,
                           "%s: listed twice", n);
        sml_test_check(&t, k->ops && !(k->ops & ~SML_OPS_ALL), rerun,
                       "%s: ops mask 0x%x is empty or has unknown bits", n, k->ops);
        sml_test_check(&t, k->dtypes && !(k->dtypes & ~SML_DTYPES_ALL), rerun,
                       "%s: dtypes mask 0x%x is empty or has unknown bits", n, k->dtypes);
        sml_test_check(&t, k->device == SML_DEVICE_GPU && k->launch, rerun,
                       "%s: not a GPU kernel with a launcher", n);
        sml_test_check(&t, m->bug && m->expect && m->item >= 0 && m->item <= 12, rerun,
                       "%s: bug, expect or list item missing", n);
        if (m->item) items |= 1u << m->item;

        const sml_kernel *p = sml_kernel_find(m->parent);
        sml_test_check(&t, p && p->device == SML_DEVICE_GPU, rerun,
                       "%s: control '%s' is not a registered GPU kernel", n, m->parent);
        if (p) {
            sml_test_check(
                &t,
                k->min_cols >= p->min_cols &&
                    (p->max_cols == 0 || (k->max_cols > 0 && k->max_cols <= p->max_cols)),
                rerun, "%s: takes rows its control %s does not (cols %lld..%lld vs %lld..%lld)", n,
                p->name, (long long)k->min_cols, (long long)k->max_cols, (long long)p->min_cols,
                (long long)p->max_cols);
            sml_test_check(&t, (k->ops & ~p->ops) == 0 && (k->dtypes & ~p->dtypes) == 0, rerun,
                           "%s: declares ops or dtypes its control %s lacks", n, p->name);
        }

        char *src = k->file ? slurp(k->file) : NULL;
        sml_test_check(&t, src != NULL, rerun, "%s: cannot read %s (run from the repository root)",
                       n, k->file ? k->file : "(none)");
        if (src && p) {
            char want[128];
            snprintf(want, sizeof want, "%s", p->file);
            sml_test_check(&t, strstr(src, want) != NULL, rerun,
                           "%s: %s does not name the kernel it copies (%s)", n, k->file, want);
            sml_test_check(
                &t, marks(src, n), rerun,
                "%s: %s (or a tests/mutants header it includes) marks no planted line 'MUTANT %s'",
                n, k->file, n);
        }
        free(src);

        const sml_mut_hint *h = &m->hint;
        if (h->shape.rows) {
            sml_test_check(&t, fits(k, &h->shape) && !sml_op_is_backward(h->shape.op), rerun,
                           "%s: the targeted shape %lldx%lld %s %s is not one the mutant takes "
                           "(forward ops only)",
                           n, (long long)h->shape.rows, (long long)h->shape.cols,
                           sml_op_name(h->shape.op), sml_dtype_name(h->shape.dtype));
            sml_test_check(
                &t, h->cases > 0 && h->why && sml_prop_family_find(h->family) >= 0, rerun,
                "%s: the targeted shape needs cases > 0, a reason and a known logit family ('%s')",
                n, h->family ? h->family : "(null)");
        }
        if (m->sanitizer) {
            sml_test_check(&t, fits(k, &m->san_shape), rerun,
                           "%s: the sanitizer shape is not one the mutant takes", n);
            sml_test_check(
                &t,
                !strcmp(m->sanitizer, "memcheck") || !strcmp(m->sanitizer, "racecheck") ||
                    !strcmp(m->sanitizer, "synccheck") || !strcmp(m->sanitizer, "initcheck"),
                rerun, "%s: unknown sanitizer tool '%s'", n, m->sanitizer);
        }
        sml_test_check(&t, sml_gpu_mutant_find(n, NULL) == k, rerun,
                       "%s: sml_gpu_mutant_find does not find it", n);
    }
    for (int item = 1; item <= 12; item++)
        sml_test_check(&t, items >> item & 1, rerun,
                       "item %d of the list of classic bugs has no mutant", item);
    printf("%s: %zu mutants\n", TEST, sml_gpu_mutant_count());
    return sml_tally_finish(&t);
}
