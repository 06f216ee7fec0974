#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int sml_test_require_gpu(const char *test) {
    if (!sml_gpu_available()) {
#ifdef SML_HAVE_CUDA
        printf("SKIP %s: no CUDA device on this machine\n", test);
#else
        printf("SKIP %s: built without CUDA (nvcc not found at configure time)\n", test);
#endif
        return SML_TEST_SKIP;
    }
#ifdef SML_HAVE_CUDA
    /* ctest's resource allocation: "id:3,slots:1" names the GPU this test was given. */
    const char *res = getenv("CTEST_RESOURCE_GROUP_0_GPUS");
    if (res) {
        const char *id = strstr(res, "id:");
        if (id && cudaSetDevice(atoi(id + 3)) != cudaSuccess) {
            printf("FAIL %s: cannot select GPU %s\n", test, res);
            exit(1);
        }
    }
#endif
    return 0;
}

void sml_tally_pass(sml_tally *t) { t->passed++; }

void sml_tally_fail(sml_tally *t, const char *reproduce, const char *fmt, ...) {
    va_list ap;
    t->failed++;
    printf("FAIL %s: ", t->test);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n  reproduce: %s\n", reproduce ? reproduce : "(rerun the test)");
    fflush(stdout);
}

int sml_test_check(sml_tally *t, int ok, const char *reproduce, const char *fmt, ...) {
    if (ok) {
        sml_tally_pass(t);
        return 1;
    }
    va_list ap;
    t->failed++;
    printf("FAIL %s: ", t->test);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n  reproduce: %s\n", reproduce ? reproduce : "(rerun the test)");
    fflush(stdout);
    return 0;
}

void sml_expect(sml_tally *t, int ok, const char *reproduce, size_t msgmax, const char *out,
                int outmax, const char *fmt, ...) {
    if (ok) {
        sml_tally_pass(t);
        return;
    }
    char *msg = malloc(msgmax ? msgmax : 1);
    if (!msg) {
        sml_tally_fail(t, reproduce, "%s (and no memory for the message)", fmt);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgmax ? msgmax : 1, fmt, ap);
    va_end(ap);
    if (out)
        sml_tally_fail(t, reproduce, "%s\n--- output ---\n%.*s\n---", msg, outmax, out);
    else
        sml_tally_fail(t, reproduce, "%s", msg);
    free(msg);
}

int sml_tally_finish(const sml_tally *t) {
    if (t->skipped)
        printf("%s: %lld passed, %lld failed, %lld skipped\n", t->test, (long long)t->passed,
               (long long)t->failed, (long long)t->skipped);
    else
        printf("%s: %lld passed, %lld failed\n", t->test, (long long)t->passed,
               (long long)t->failed);
    return t->failed ? 1 : 0;
}
