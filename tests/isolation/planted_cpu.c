/* planted_cpu.c: CPU kernels that break the process they run in, one per shared library
 * (-DPLANT=...), each named planted_<plant>: a right fp32 softmax except that on a case with
 * at least PLANT_COLS columns it
 *
 *   exit0     calls exit(0)              uexit0   calls _exit(0)
 *   abort     calls abort()              segv     writes through a null pointer
 *   loop      never returns              write4k  writes one float 4 KiB past the end of out
 *   write1m   ... 1 MiB past the end     readx    reads one float 4 KiB past the end of x
 *   slow      sleeps 3.7 s, then computes the right answer (within the 4 s case deadline)
 *   cudaerr   returns SML_ERR_CUDA, as a GPU kernel does after a fault that may have lost
 *             the CUDA context (the engine stops the job and does not shrink in that process)
 *   ctor      always right; its library's constructor appends the process id to the file
 *             SML_TEST_CTOR_LOG names: which processes loaded it
 *
 * The isolation test (test_isolation.c) checks each beside a right kernel: the supervisor
 * must name the kernel and the cause, save a reproducer that replays to the same cause, and
 * judge the right kernel as if alone. Public headers only, as a user's plugin. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "softmax_lab_plugin.h"

#define PLANT_COLS 8

#if PLANT == 11
#include <stdio.h>
__attribute__((constructor)) static void loaded(void) {
    const char *log = getenv("SML_TEST_CTOR_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (!f) return;
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
}
#endif

static volatile float sink;
static volatile uintptr_t zero;

/* Built under the sanitizer presets too: the plant must reach the fault itself, not a
 * sanitizer's report of it. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((no_sanitize("address,undefined")))
#endif
static void
plant(const sml_problem *p) {
    float *end = (float *)p->out + (p->rows - 1) * p->ld + p->cols;
    const float *xend = (const float *)p->x + (p->rows - 1) * p->ld + p->cols;
    (void)end;
    (void)xend;
#if PLANT == 1
    exit(0);
#elif PLANT == 2
    _exit(0);
#elif PLANT == 3
    abort();
#elif PLANT == 4
    *(volatile float *)zero = 1.0f; /* a null pointer the compiler cannot see */
#elif PLANT == 5
    for (volatile int spin = 1; spin;) {}
#elif PLANT == 6
    ((volatile float *)end)[1024] = 1.0f;
#elif PLANT == 7
    ((volatile float *)end)[1 << 18] = 1.0f;
#elif PLANT == 8
    sink = ((const volatile float *)xend)[1024];
#elif PLANT == 10
    struct timespec ts = {3, 700000000};
    nanosleep(&ts, NULL);
#endif
}

static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->dtype != SML_F32 || p->op != SML_SOFTMAX) return SML_ERR_UNSUPPORTED;
    if (p->cols >= PLANT_COLS && PLANT == 9) return SML_ERR_CUDA;
    if (p->cols >= PLANT_COLS) plant(p);
    for (int64_t r = 0; r < p->rows; r++) {
        const float *x = (const float *)p->x + r * p->ld;
        float *y = (float *)p->out + r * p->ld;
        double m = -INFINITY, s = 0.0;
        for (int64_t i = 0; i < p->cols; i++) m = x[i] > m ? x[i] : m;
        for (int64_t i = 0; i < p->cols; i++) s += exp((double)x[i] - m);
        for (int64_t i = 0; i < p->cols; i++) y[i] = (float)(exp((double)x[i] - m) / s);
    }
    return SML_OK;
}

static const sml_kernel KERNELS[] = {
    {PLANT_NAME,
     "tests/isolation/planted_cpu.c",
     SML_DEVICE_CPU,
     1u << SML_SOFTMAX,
     1u << SML_F32,
     1,
     0,
     launch,
     "test plugin: a right fp32 softmax that breaks its process on rows of 8 columns or more",
     {NULL, 0.0, NULL},
     NULL,
     0,
     NULL},
};

SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version);
SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version) {
    *count = sizeof KERNELS / sizeof KERNELS[0];
    *abi_version = SML_PLUGIN_ABI_VERSION;
    return KERNELS;
}
