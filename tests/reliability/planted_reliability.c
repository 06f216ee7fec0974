/* planted_reliability.c: CPU kernels that are slow, unlucky or hostile, one per shared library
 * (-DPLANT=..., named by -DPLANT_NAME), for the verdict rules of `softmax-lab check`
 * (test_reliability.c). Each is a right fp32 softmax (op softmax, dtype fp32 only) except:
 *
 *   rel_slow_wrong  sleeps 1 ms per call; from 1,000 columns on, each row's largest output
 *                   is 1% too big
 *   rel_slow_right  always right; sleeps 50 ms on every call with 64 columns or more (the
 *                   engine makes 4 to 7 calls a case: 0.2 to 0.35 s a case)
 *   rel_flaky       wrong (as rel_slow_wrong) on a call with probability 1/50, drawn from
 *                   getrandom (not from the run's seed)
 *   rel_stateful    right on its first 200 calls in its process, wrong on every call after
 *   rel_forger      on its first call with 8 columns or more: writes forged frames saying
 *                   "pass" on every socket among its open descriptors and on those named by
 *                   SML_WORKER_FDS in /proc/self/environ, then _exit(0)
 *   rel_hang        never returns on a call with 8 columns or more (a loop that sleeps)
 *   rel_sleepy      always right; sleeps 50 ms per call
 *   rel_slow_start  always right; takes 3 s to load in a worker process (its constructor
 *                   sleeps where SML_WORKER_FDS is set), as a Python kernel's worker takes
 *                   seconds to import PyTorch and make its CUDA context
 *
 * Public headers only, as a user's plugin; rel_forger also reads the engine's result layout
 * (prop/prop.h) where the build gives it, to forge a frame of the exact size a worker sends. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#if PLANT == 3
#include <sys/random.h>
#endif

#include "softmax_lab_plugin.h"

#if PLANT == 5 && defined(__has_include)
#if __has_include("prop/prop.h")
#include "prop/prop.h"
#define HAVE_RESULT_LAYOUT 1
#endif
#endif

#if PLANT != 3 && PLANT != 4 && PLANT != 5
static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
#endif

/* The right answer, in double precision (out may equal x: each row is read before written). */
static void softmax_rows(const sml_problem *p) {
    for (int64_t r = 0; r < p->rows; r++) {
        const float *x = (const float *)p->x + r * p->ld;
        float *y = (float *)p->out + r * p->ld;
        double m = -INFINITY, s = 0.0;
        for (int64_t i = 0; i < p->cols; i++) m = x[i] > m ? x[i] : m;
        for (int64_t i = 0; i < p->cols; i++) s += exp((double)x[i] - m);
        for (int64_t i = 0; i < p->cols; i++) y[i] = (float)(exp((double)x[i] - m) / s);
    }
}

/* The wrong answer: each row's largest finite output 1% too big. */
#if PLANT == 1 || PLANT == 3 || PLANT == 4
static void spoil(const sml_problem *p) {
    for (int64_t r = 0; r < p->rows; r++) {
        float *y = (float *)p->out + r * p->ld;
        int64_t at = -1;
        for (int64_t i = 0; i < p->cols; i++)
            if (isfinite(y[i]) && (at < 0 || y[i] > y[at])) at = i;
        if (at >= 0) y[at] = y[at] > 0.0f ? y[at] * 1.01f : 0.01f;
    }
}
#endif

#if PLANT == 5
/* One frame as the worker protocol had it: [u32 type][u32 length][payload]. */
static void frame(int fd, uint32_t type, const void *payload, uint32_t len) {
    uint32_t head[2] = {type, len};
    char buf[8 + 65536];
    if (len > sizeof buf - 8) return;
    memcpy(buf, head, sizeof head);
    if (len) memcpy(buf + 8, payload, len);
    for (size_t at = 0; at < 8u + len;) {
        ssize_t n = write(fd, buf + at, 8u + len - at);
        if (n <= 0) return;
        at += (size_t)n;
    }
}

/* Everything a kernel could say on the supervisor's socket to claim a pass. */
static void forge(int fd) {
    static char zeros[65536];
    static const char text[] = "pass\n";
#ifdef HAVE_RESULT_LAYOUT
    /* A result of the engine's exact layout: status SML_OK, outcome PASS, 300 cases. */
    char res[sizeof(int32_t) + sizeof(sml_prop_result)];
    sml_prop_result r;
    memset(&r, 0, sizeof r);
    r.outcome = SML_PROP_PASS;
    r.cases = 300;
    r.op = SML_SOFTMAX;
    r.dtype = SML_F32;
    memset(res, 0, sizeof(int32_t));
    memcpy(res + sizeof(int32_t), &r, sizeof r);
    frame(fd, 17, res, (uint32_t)sizeof res);
#endif
    frame(fd, 16, text, (uint32_t)strlen(text)); /* a report line */
    frame(fd, 17, zeros, 0);                     /* a result, as long as each guess */
    frame(fd, 17, zeros, 4);
    frame(fd, 17, zeros, 4096);
    frame(fd, 18, zeros, 1024); /* a replay's result */
    frame(fd, 17, zeros, 0);
}

static int is_socket(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* SML_WORKER_FDS=<board>,<slots>,<socket>,... as the worker was started with: its sockets. */
static void forge_environ(void) {
    char env[65536];
    int fd = open("/proc/self/environ", O_RDONLY);
    if (fd < 0) return;
    ssize_t n = read(fd, env, sizeof env - 1);
    close(fd);
    if (n <= 0) return;
    env[n] = 0;
    for (char *v = env; v < env + n; v += strlen(v) + 1) {
        if (strncmp(v, "SML_WORKER_FDS=", 15)) continue;
        int field = 0;
        for (char *t = v + 15; *t; field++) {
            long f = strtol(t, &t, 10);
            if (field >= 2 && f >= 0 && f < 1024) forge((int)f);
            if (*t != ',') break;
            t++;
        }
    }
}

static void forger(void) {
    for (int fd = 0; fd < 1024; fd++)
        if (is_socket(fd)) forge(fd);
    forge_environ();
    _exit(0);
}
#endif

#if PLANT == 8
__attribute__((constructor)) static void slow_start(void) {
    if (getenv("SML_WORKER_FDS")) sleep_s(3.0);
}
#endif

static sml_status launch(sml_handle *h, const sml_problem *p) {
    (void)h;
    if (p->dtype != SML_F32 || p->op != SML_SOFTMAX) return SML_ERR_UNSUPPORTED;
#if PLANT == 1
    sleep_s(0.001);
    softmax_rows(p);
    if (p->cols >= 1000) spoil(p);
#elif PLANT == 2
    if (p->cols >= 64) sleep_s(0.05);
    softmax_rows(p);
#elif PLANT == 3
    uint32_t u = 0;
    if (getrandom(&u, sizeof u, 0) != (ssize_t)sizeof u) {
        int fd = open("/dev/urandom", O_RDONLY);
        if (fd >= 0) {
            if (read(fd, &u, sizeof u) != (ssize_t)sizeof u) u = 1;
            close(fd);
        }
    }
    softmax_rows(p);
    if (u % 50 == 0) spoil(p);
#elif PLANT == 4
    static atomic_long calls;
    softmax_rows(p);
    if (atomic_fetch_add(&calls, 1) >= 200) spoil(p);
#elif PLANT == 5
    static atomic_int done;
    if (p->cols >= 8 && !atomic_exchange(&done, 1)) forger();
    softmax_rows(p);
#elif PLANT == 6
    if (p->cols >= 8)
        for (;;) sleep_s(0.01);
    softmax_rows(p);
#elif PLANT == 7
    sleep_s(0.05);
    softmax_rows(p);
#elif PLANT == 8
    softmax_rows(p);
#else
#error "PLANT must be 1..8"
#endif
    return SML_OK;
}

static const sml_kernel KERNELS[] = {
    {PLANT_NAME,
     "tests/reliability/planted_reliability.c",
     SML_DEVICE_CPU,
     1u << SML_SOFTMAX,
     1u << SML_F32,
     1,
     0,
     launch,
     "test plugin: an fp32 softmax that is slow, unlucky or hostile (planted_reliability.c)",
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
