/* test_host_cost.c: what the property suite costs the host per case, against what the judged
 * kernel itself costs, on the machine at hand. The suite is host-bound on a GPU host: each case
 * is drawn, referenced in double precision and compared on the CPU while the GPU waits. This
 * test runs the GPU profile's first 2,000 cases of three jobs (softmax fp32, log_softmax fp16,
 * softmax_bwd bf16: one forward, one log, one backward, every storage width) on cpu_online,
 * in this process on one thread, as each thread of a suite runs its jobs, and prints:
 *
 *   cases per second (wall), host ms per case (the thread's CPU time less the kernel's own
 *   launches), kernel ms per case, and their ratio.
 *
 * It asserts the ratio, not a time: both sides are CPU time of the same thread, drawn from the
 * same cases in the same run, so the machine's speed and its load scale them alike. The kernel
 * is cpu_online, a one-pass fp32 softmax: the ratio says how many such kernels' work the suite
 * spends on drawing, referencing and judging what one kernel computes. MAX_RATIO is what the
 * suite's host design reaches with room for the noise of a loaded 2-core runner; the design
 * before it (each property widening, exponentiating and allocating its own copy of the case)
 * measured well above it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/launchers.h"
#include "prop/prop.h"
#include "test_support.h"

static sml_tally T = {"test_host_cost", 0, 0, 0};

enum { CASES = 2000 };
static const double MAX_RATIO = 2.0;

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The kernel's own CPU seconds and launches, counted by its launch (one thread: this one). */
static double kernel_s;
static int64_t launches;

static sml_status launch_timed(sml_handle *h, const sml_problem *p) {
    double t0 = thread_cpu();
    sml_status s = sml_launch_cpu_online(h, p);
    kernel_s += thread_cpu() - t0;
    launches++;
    return s;
}

int main(int argc, char **argv) {
    (void)argc;
    const char *again = argv[0];
    const sml_kernel *online = sml_kernel_find("cpu_online");
    if (!online) {
        sml_test_check(&T, 0, again, "cpu_online is registered");
        return sml_tally_finish(&T);
    }
    sml_kernel k = *online;
    k.name = "timed_online";
    k.file = "tests/perf/test_host_cost.c";
    k.launch = launch_timed;
    static const struct {
        sml_op op;
        sml_dtype dt;
    } JOBS[] = {{SML_SOFTMAX, SML_F32}, {SML_LOG_SOFTMAX, SML_F16}, {SML_SOFTMAX_BWD, SML_BF16}};

    sml_prop_config cfg;
    sml_prop_config_init(&cfg, SML_PROP_PROFILE_GPU);
    cfg.max_cases = CASES;
    cfg.shrink = 0;
    cfg.threads = 1;
    cfg.save_dir = NULL;
    cfg.regressions_dir = NULL;
    FILE *devnull = fopen("/dev/null", "w");
    cfg.log = devnull ? devnull : stderr;
    cfg.pool = sml_prop_pool_new();
    double cpu = 0, secs = 0;
    int64_t cases = 0;
    int all_pass = 1;
    for (size_t j = 0; j < sizeof JOBS / sizeof JOBS[0]; j++) {
        sml_prop_result *res = calloc(1, sizeof *res);
        if (!res || !cfg.pool) {
            sml_test_check(&T, 0, again, "out of memory");
            return sml_tally_finish(&T);
        }
        double c0 = thread_cpu(), w0 = wall();
        sml_prop_run(&k, JOBS[j].op, JOBS[j].dt, &cfg, res);
        cpu += thread_cpu() - c0;
        secs += wall() - w0;
        cases += res->cases;
        if (res->verdict != SML_JOB_PASS || res->cases != CASES) {
            all_pass = 0;
            printf("  %s %s: %s after %lld of %d cases\n", sml_op_name(JOBS[j].op),
                   sml_dtype_name(JOBS[j].dt), sml_verdict_name(res->verdict),
                   (long long)res->cases, CASES);
        }
        free(res);
    }
    sml_prop_pool_free(cfg.pool);
    if (devnull) fclose(devnull);

    sml_test_check(&T, all_pass && cases == 3 * CASES, again,
                   "the three jobs pass all %d cases on cpu_online", CASES);
    sml_test_check(&T, launches >= cases && kernel_s > 0, again,
                   "the kernel's launches ran on this thread and were timed (%lld launches)",
                   (long long)launches);
    if (cases > 0 && kernel_s > 0) {
        double host = cpu - kernel_s, ratio = host / kernel_s;
        printf("test_host_cost: %lld cases, %.0f cases/s, host %.4f ms per case, kernel %.4f ms "
               "per case (%lld launches), host:kernel %.2f (at most %.2f)\n",
               (long long)cases, (double)cases / secs, 1e3 * host / (double)cases,
               1e3 * kernel_s / (double)cases, (long long)launches, ratio, MAX_RATIO);
        sml_test_check(&T, ratio <= MAX_RATIO, again,
                       "the host's CPU per case is at most %.2f times the kernel's "
                       "(measured %.2f)",
                       MAX_RATIO, ratio);
    }
    return sml_tally_finish(&T);
}
