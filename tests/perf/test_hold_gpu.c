/* test_hold_gpu.c: the launch hold when the host is late. A launch callback sleeps 30 ms (three
 * times the hold's 10 ms limit) inside chosen samples, so that their hold runs out and the
 * GPU starts before the sample's launch calls have all returned. Such a sample timed a host
 * sleep: it must be discarded and taken again, the measurement stay held and count it; after
 * SML_HOLD_MAX_LOST of them the holds stop and the row says so (held 0). GPU only: exits 77
 * without one.
 * Each case measures a 1 MiB copy kernel with exactly 4 launches a sample and exactly 10
 * samples, so launch k of the callback is known to fall in sample (k - 6) / 4.
 * Planted checks it must catch (each fails the named cases on a GPU): a lost sample kept
 * (measure.c's `continue` dropped) fails cases 2 and 3; the holds never stopped (the
 * SML_HOLD_MAX_LOST test in timer_end dropped) fails case 4; the lost count not cleared
 * (launch_hold.cu's host[1] = 0 dropped) fails cases 2 and 3. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench/copy_ref.h"
#include "bench/measure.h"
#include "case_filter.h"
#include "core/internal.h"
#include "test_support.h"

static sml_tally T = {"test_hold_gpu", 0, 0, 0};
static sml_case_filter F;

#ifdef SML_HAVE_CUDA
#define BATCH               4
#define SAMPLES             10
#define FIRST_SAMPLE_LAUNCH 6 /* 2 probe launches, 1 warm-up batch */

typedef struct late_host {
    void *dst, *src;
    size_t bytes;
    long long launch;
    unsigned late_samples; /* bit i: sample i's second launch call sleeps */
} late_host;

static sml_status launch(void *ctx, int set) {
    (void)set;
    late_host *h = ctx;
    long long k = h->launch++ - FIRST_SAMPLE_LAUNCH;
    if (k >= 0 && k % BATCH == 1 && k / BATCH < 32 && (h->late_samples >> (k / BATCH) & 1u)) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return sml_bench_copy_kernel(h->dst, h->src, h->bytes, NULL);
}

static void one(int n, int hold, unsigned late, int want_held, int want_lost, int want_clean,
                const char *what) {
    if (!sml_case_filter_want(&F, n)) return;
    sml_buffer a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    late_host h = {NULL, NULL, (size_t)1 << 20, 0, late};
    int ok = sml_buffer_alloc(&a, SML_DEVICE_GPU, h.bytes) == SML_OK;
    ok = ok && sml_buffer_alloc(&b, SML_DEVICE_GPU, h.bytes) == SML_OK;
    ok = ok && sml_buffer_fill(&b, 0x3C) == SML_OK;
    sml_measurement m;
    memset(&m, 0, sizeof m);
    char err[256] = "";
    if (ok) {
        h.dst = a.ptr;
        h.src = b.ptr;
        sml_measure_opts o;
        memset(&o, 0, sizeof o);
        o.stop.min_samples = SAMPLES;
        o.stop.max_samples = SAMPLES;
        o.stop.noise = 0.02;
        o.stop.max_seconds = 60;
        o.sample_seconds = 0; /* the batch is min_batch = max_batch */
        o.min_batch = BATCH;
        o.max_batch = BATCH;
        o.warmup_seconds = 0; /* one warm-up batch */
        o.hold = hold;
        sml_status s = sml_measure(SML_DEVICE_GPU, NULL, launch, &h, 1, &o, &m, err, sizeof err);
        ok = s == SML_OK;
        if (!ok) printf("  sml_measure: %s (%s)\n", sml_strerror(s), err);
    }
    /* A 1 MiB copy takes microseconds; a sample that timed a 30 ms sleep reads >= 2.5 ms a
     * launch. */
    int clean = ok && m.t.max < 1e-3;
    int good = ok && m.batch == BATCH && m.t.n == SAMPLES && m.held == want_held &&
               m.holds_lost == want_lost && clean == want_clean;
    if (good)
        sml_tally_pass(&T);
    else
        sml_tally_fail(&T, F.repro,
                       "case %d: %s: batch %d, samples %d, held %d, holds_lost %d, slowest sample "
                       "%.3f ms a launch "
                       "(want batch %d, %d samples, held %d, holds_lost %d, slowest %s 1 ms)",
                       n, what, m.batch, m.t.n, m.held, m.holds_lost, m.t.max * 1e3, BATCH, SAMPLES,
                       want_held, want_lost, want_clean ? "under" : "over");
    if (a.ptr) sml_buffer_free(&a);
    if (b.ptr) sml_buffer_free(&b);
}
#endif

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    int skip = sml_test_require_gpu("test_hold_gpu");
    if (skip) return skip;
#ifdef SML_HAVE_CUDA
    one(1, 1, 0x0, 1, 0, 1, "a punctual host: every sample held, none lost");
    one(2, 1, 0x4, 1, 1, 1, "one late sample: discarded and taken again, still held");
    one(3, 1, 0x14, 1, 2, 1, "two late samples: both taken again, still held");
    one(4, 1, 0xFFFFFFFFu, 0, SML_HOLD_MAX_LOST, 0,
        "late in every sample: the holds stop after the limit, the row says held 0");
    one(5, 0, 0x4, 0, 0, 0,
        "no hold: the late sample is timed as made (what cases 2-3 must not see)");
#endif
    return sml_tally_finish(&T);
}
