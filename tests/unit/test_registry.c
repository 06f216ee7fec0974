/* test_registry: the registry is complete and coherent. Every kernel source file in the tree
 * (CMake passes the list it globbed) has a registry line, every line names a file that
 * exists, names are unique, limits make sense, claims name a registered baseline, and this
 * build can launch what it says it built. An unlisted kernel cannot ship. */
#include <stdio.h>
#include <string.h>

#include "softmax_lab.h"
#include "test_support.h"

#ifndef SML_KERNEL_FILES
#error "CMake must define SML_KERNEL_FILES"
#endif

static const char *const REPRO = "ctest --test-dir build -R test_registry --output-on-failure";

static int listed(const char *file) {
    for (size_t i = 0; i < sml_kernel_count(); i++)
        if (!strcmp(sml_kernel_at(i)->file, file)) return 1;
    return 0;
}

static int in_tree(const char *file) {
    char files[] = SML_KERNEL_FILES, *save = NULL;
    for (char *f = strtok_r(files, ",", &save); f; f = strtok_r(NULL, ",", &save))
        if (!strcmp(f, file)) return 1;
    return 0;
}

int main(void) {
    sml_tally t = {"test_registry", 0, 0, 0};
    char files[] = SML_KERNEL_FILES, *save = NULL;
    for (char *f = strtok_r(files, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        if (listed(f))
            sml_tally_pass(&t);
        else
            sml_tally_fail(&t, REPRO,
                           "%s implements a kernel but has no line in src/registry/registry.c", f);
    }
    for (size_t i = 0; i < sml_kernel_count(); i++) {
        const sml_kernel *k = sml_kernel_at(i);
        sml_test_check(&t, k->name && k->name[0], REPRO, "entry %zu has no name", i);
        sml_test_check(&t, sml_kernel_find(k->name) == k, REPRO, "kernel name '%s' is not unique",
                       k->name);
        sml_test_check(&t, in_tree(k->file), REPRO,
                       "kernel '%s' names %s, which is not a kernel file in the tree", k->name,
                       k->file);
        sml_test_check(&t, k->summary && k->summary[0], REPRO, "kernel '%s' has no summary",
                       k->name);
        sml_test_check(&t, k->ops && !(k->ops & ~SML_OPS_ALL), REPRO,
                       "kernel '%s' has a bad op mask 0x%x", k->name, k->ops);
        sml_test_check(&t, k->dtypes && !(k->dtypes & ~SML_DTYPES_ALL), REPRO,
                       "kernel '%s' has a bad dtype mask 0x%x", k->name, k->dtypes);
        sml_test_check(&t, k->min_cols >= 1 && (k->max_cols == 0 || k->max_cols >= k->min_cols),
                       REPRO, "kernel '%s' has bad column limits %lld..%lld", k->name,
                       (long long)k->min_cols, (long long)k->max_cols);
        if (k->claim.baseline)
            sml_test_check(
                &t,
                sml_kernel_find(k->claim.baseline) && k->claim.min_speedup > 0 && k->claim.shapes,
                REPRO, "kernel '%s' claims against '%s', which is not a registered kernel", k->name,
                k->claim.baseline);
        if (k->device == SML_DEVICE_CPU)
            sml_test_check(&t, k->launch != NULL, REPRO, "CPU kernel '%s' has no launcher",
                           k->name);
#ifdef SML_HAVE_CUDA
        int built = strcmp(k->name, "cudnn") != 0;
#ifdef SML_HAVE_CUDNN
        built = 1;
#endif
        if (built)
            sml_test_check(&t, k->launch != NULL, REPRO,
                           "kernel '%s' was built but has no launcher", k->name);
#else
        if (k->device == SML_DEVICE_GPU)
            sml_test_check(&t, !k->launch, REPRO,
                           "GPU kernel '%s' has a launcher in a build without CUDA", k->name);
#endif
    }
    printf("test_registry: %zu kernels registered\n", sml_kernel_count());
    return sml_tally_finish(&t);
}
