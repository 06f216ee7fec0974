/* test_plugin_api: sml_register_kernels and sml_kernel_origin from C, as a binding (Python,
 * say) calls them without a shared library: a table registers after the built-in kernels and
 * is found by name with its origin; a table with one bad line registers nothing (all or
 * nothing), with the line and the origin in the message; a wrong ABI version, a taken name and
 * flags outside SML_KERNEL_FLAGS_ALL are refused; a line's SML_KERNEL_FRAMEWORK is kept; a
 * table of ABI version 1 (sml_kernel before `flags`, laid out here as such a plugin has it)
 * registers with every line read right and flags 0, and is withdrawn by its own pointer;
 * tables registered from several threads while others read the registry all land, each whole.
 * The version 1 case fails when such a table is read in this build's layout (its second line
 * then starts inside the first). */
#include <pthread.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "softmax_lab_plugin.h"
#include "test_support.h"

static sml_tally T = {"test_plugin_api", 0, 0, 0};
#define REPRO "build/tests/plugins/test_plugin_api"

/* A check; a failure prints the message and the test's own command to reproduce it. */
#define expect(ok, ...) sml_expect(&T, (ok), REPRO, 1024, NULL, 0, __VA_ARGS__)

static sml_status noop(sml_handle *h, const sml_problem *p) {
    (void)h;
    (void)p;
    return SML_OK;
}

#define LINE(name)                                                                                 \
    {                                                                                              \
        name, NULL, SML_DEVICE_CPU, SML_OPS_FWD, 1u << SML_F32, 1, 0, noop, NULL, {NULL, 0, NULL}, \
            NULL, 0, NULL                                                                          \
    }

static const sml_kernel GOOD[] = {LINE("py_a"), LINE("py_b")};
static const sml_kernel HALF_BAD[] = {LINE("py_c"),
                                      {"py_d",
                                       NULL,
                                       SML_DEVICE_CPU,
                                       SML_OPS_FWD,
                                       1u << SML_F32,
                                       5,
                                       2,
                                       noop,
                                       NULL,
                                       {NULL, 0, NULL},
                                       NULL,
                                       0,
                                       NULL}};
static const sml_kernel TAKEN[] = {LINE("py_e"), LINE("py_a")};

#define THREADS 4
static sml_kernel PER_THREAD[THREADS][8];
static char NAMES[THREADS][8][16];

static void *register_one(void *arg) {
    int t = (int)(size_t)arg;
    for (int i = 0; i < 8; i++) {
        snprintf(NAMES[t][i], sizeof NAMES[t][i], "thr%d_%d", t, i);
        PER_THREAD[t][i] = (sml_kernel)LINE(NAMES[t][i]);
    }
    char origin[32];
    snprintf(origin, sizeof origin, "python:thread%d", t);
    return (void *)(size_t)(sml_register_kernels(PER_THREAD[t], 8, SML_PLUGIN_ABI_VERSION, origin,
                                                 NULL, 0) != SML_OK);
}

static void *read_registry(void *arg) {
    (void)arg;
    size_t bad = 0;
    for (int round = 0; round < 2000; round++) {
        size_t n = sml_kernel_count();
        for (size_t i = 0; i < n; i++) {
            const sml_kernel *k = sml_kernel_at(i);
            if (!k || !k->name || sml_kernel_find(k->name) != k) bad++;
        }
    }
    return (void *)bad;
}

/* sml_kernel as ABI version 1 laid it out: no flags. */
typedef struct line_v1 {
    const char *name, *file;
    sml_device device;
    unsigned ops, dtypes;
    int64_t min_cols, max_cols;
    sml_launch_fn launch;
    const char *summary;
    sml_claim claim;
    const char *known_deviation;
} line_v1;

static const line_v1 V1[] = {
    {"v1_a",
     "a.c",
     SML_DEVICE_CPU,
     SML_OPS_FWD,
     1u << SML_F32,
     2,
     0,
     noop,
     "first",
     {NULL, 0, NULL},
     NULL},
    {"v1_b",
     "b.c",
     SML_DEVICE_CPU,
     SML_OPS_ALL,
     1u << SML_F32,
     3,
     900,
     noop,
     "second",
     {"cpu_naive", 1.5, "short"},
     "its deviation"},
};

/* sml_kernel as ABI version 2 laid it out: version 1's fields, then flags. */
typedef struct line_v2 {
    line_v1 v1;
    unsigned flags;
} line_v2;

static const line_v2 V2[] = {
    {{"v2_a",
      "a2.c",
      SML_DEVICE_CPU,
      SML_OPS_FWD,
      1u << SML_F16,
      1,
      0,
      noop,
      "v2 first",
      {NULL, 0, NULL},
      "fp16 within 2 ulp (words only)"},
     SML_KERNEL_FRAMEWORK},
};

/* A table of one line carrying deviation d (fp32 forward kernel), registered: its status. */
static sml_status register_declared(const sml_deviation *d, char *msg, size_t n) {
    static sml_kernel line[1];
    line[0] = (sml_kernel){"py_dev", NULL, SML_DEVICE_CPU, SML_OPS_FWD,     1u << SML_F32, 1,
                           0,        noop, NULL,           {NULL, 0, NULL}, "label",       0,
                           d};
    sml_status s = sml_register_kernels(line, 1, SML_PLUGIN_ABI_VERSION, "python:dev", msg, n);
    if (s == SML_OK) sml_unregister_kernels(line);
    return s;
}

/* A declared deviation is checked when the table is: every figure finite and >= 0, a factor 0
 * or >= 1, known exception bits, and bounds only for what the line runs. */
static void declared_deviations(void) {
    char msg[512];
    static const struct {
        sml_deviation d;
        const char *want;
    } BAD[] = {
        {{.exceptions = 0x80u}, "deviation.exceptions 0x80 has bits outside"},
        {{.ulps = {[SML_SOFTMAX] = {[SML_F32] = -1.0}}}, "deviation for softmax fp32: ulps -1"},
        {{.ulps = {[SML_SOFTMAX] = {[SML_F32] = INFINITY}}},
         "deviation for softmax fp32: ulps inf"},
        {{.bound_factor = {[SML_LOG_SOFTMAX] = {[SML_F32] = 0.5}}},
         "bound_factor 0.5 is tighter than the contract"},
        {{.ulps = {[SML_SOFTMAX] = {[SML_F16] = 1.5}}},
         "deviation declares a bound for softmax fp16, which it does not run"},
        {{.bound_factor = {[SML_SOFTMAX_BWD] = {[SML_F32] = 2.0}}},
         "deviation declares a bound for softmax_bwd fp32, which it does not run"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        sml_status s = register_declared(&BAD[i].d, msg, sizeof msg);
        expect(s == SML_ERR_PLUGIN && strstr(msg, "kernel 0 'py_dev': ") &&
                   strstr(msg, BAD[i].want),
               "bad declaration %zu: want '%s', got status %d '%s'", i, BAD[i].want, (int)s, msg);
    }
    static const sml_deviation GOOD_DEV = {.ulps = {[SML_SOFTMAX] = {[SML_F32] = 1.5}},
                                           .bound_factor = {[SML_LOG_SOFTMAX] = {[SML_F32] = 3.0}},
                                           .exceptions = SML_DEV_EXCEPTIONS_ALL};
    sml_status s = register_declared(&GOOD_DEV, msg, sizeof msg);
    expect(s == SML_OK, "a well-formed declaration is refused: '%s'", msg);
}

static void flags_and_old_abi(size_t builtin) {
    char msg[512];
    static const sml_kernel BAD_FLAGS[] = {{"py_f",
                                            NULL,
                                            SML_DEVICE_CPU,
                                            SML_OPS_FWD,
                                            1u << SML_F32,
                                            1,
                                            0,
                                            noop,
                                            NULL,
                                            {NULL, 0, NULL},
                                            NULL,
                                            0x10u,
                                            NULL}};
    sml_status s =
        sml_register_kernels(BAD_FLAGS, 1, SML_PLUGIN_ABI_VERSION, "python:flags", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN &&
               strstr(msg, "kernel 0 'py_f': flags 0x10 has bits outside SML_KERNEL_FLAGS_ALL"),
           "flags 0x10: '%s'", msg);
    static const sml_kernel FW[] = {{"py_fw",
                                     NULL,
                                     SML_DEVICE_CPU,
                                     SML_OPS_FWD,
                                     1u << SML_F32,
                                     1,
                                     0,
                                     noop,
                                     NULL,
                                     {NULL, 0, NULL},
                                     NULL,
                                     SML_KERNEL_FRAMEWORK,
                                     NULL}};
    s = sml_register_kernels(FW, 1, SML_PLUGIN_ABI_VERSION, "python:fw", msg, sizeof msg);
    const sml_kernel *k = sml_kernel_find("py_fw");
    expect(s == SML_OK && k && k->flags == SML_KERNEL_FRAMEWORK,
           "a framework baseline's flags kept: '%s'", msg);
    expect(sml_unregister_kernels(FW) == SML_OK, "%s: withdrawn", "py_fw");

    s = sml_register_kernels((const sml_kernel *)V1, 2, 1, "python:v1", msg, sizeof msg);
    const sml_kernel *a = sml_kernel_find("v1_a"), *b = sml_kernel_find("v1_b");
    expect(s == SML_OK && sml_kernel_count() == builtin + 4,
           "an ABI version 1 table registers: '%s'", msg);
    expect(a && b && sml_kernel_at(builtin + 2) == a && sml_kernel_at(builtin + 3) == b,
           "%s: its lines are found, in order, after the others", "v1");
    expect(a && !strcmp(a->file, "a.c") && a->ops == SML_OPS_FWD && a->min_cols == 2 &&
               a->launch == noop && !strcmp(a->summary, "first") && a->flags == 0,
           "%s: the first line read wrong", "v1_a");
    expect(b && !strcmp(b->file, "b.c") && b->ops == SML_OPS_ALL && b->min_cols == 3 &&
               b->max_cols == 900 && b->claim.min_speedup == 1.5 &&
               !strcmp(b->claim.shapes, "short") && !strcmp(b->known_deviation, "its deviation") &&
               b->flags == 0,
           "%s: the second line read wrong (read in this build's layout?)", "v1_b");
    expect(a && sml_kernel_origin(a) && !strcmp(sml_kernel_origin(a), "python:v1"), "%s: origin",
           "v1_a");
    expect(sml_unregister_kernels((const sml_kernel *)V1) == SML_OK && !sml_kernel_find("v1_b") &&
               sml_kernel_count() == builtin + 2,
           "%s: withdrawn by the table registered", "v1");
    /* Version 2 (no deviation): flags kept, the words kept as a label, no declaration. */
    s = sml_register_kernels((const sml_kernel *)V2, 1, 2, "python:v2", msg, sizeof msg);
    const sml_kernel *c = sml_kernel_find("v2_a");
    expect(s == SML_OK && c && c != (const sml_kernel *)V2 && !strcmp(c->file, "a2.c") &&
               c->dtypes == 1u << SML_F16 && c->flags == SML_KERNEL_FRAMEWORK &&
               !strcmp(c->known_deviation, "fp16 within 2 ulp (words only)") && !c->deviation,
           "an ABI version 2 table: read wrong or refused: '%s'", msg);
    expect(sml_unregister_kernels((const sml_kernel *)V2) == SML_OK && !sml_kernel_find("v2_a"),
           "%s: withdrawn by the table registered", "v2");
}

int main(void) {
    size_t builtin = sml_kernel_count();
    char msg[512];
    sml_status s =
        sml_register_kernels(GOOD, 2, SML_PLUGIN_ABI_VERSION, "python:mod.fn", msg, sizeof msg);
    expect(s == SML_OK, "a good table was refused: %s", msg);
    expect(sml_kernel_count() == builtin + 2, "%s: the count did not grow by 2", "GOOD");
    expect(sml_kernel_at(builtin) == &GOOD[0] && sml_kernel_at(builtin + 1) == &GOOD[1],
           "%s: registered lines are not after the built-ins, in order", "GOOD");
    expect(sml_kernel_find("py_b") == &GOOD[1], "%s: py_b not found", "GOOD");
    const char *o = sml_kernel_origin(&GOOD[0]);
    expect(o && !strcmp(o, "python:mod.fn"), "the origin is '%s', want python:mod.fn",
           o ? o : "(null)");
    expect(sml_kernel_origin(sml_kernel_find("cpu_naive")) == NULL,
           "%s: a built-in kernel has an origin", "cpu_naive");
    sml_kernel copy = GOOD[0];
    expect(sml_kernel_origin(&copy) == NULL, "%s: a pointer outside the registry has an origin",
           "copy");
    expect(sml_kernel_origin(NULL) == NULL, "%s: NULL has an origin", "NULL");

    s = sml_register_kernels(HALF_BAD, 2, SML_PLUGIN_ABI_VERSION, "python:half", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN &&
               strstr(msg, "python:half: kernel 1 'py_d': min_cols 5 > max_cols 2"),
           "one bad line: message '%s'", msg);
    expect(sml_kernel_find("py_c") == NULL, "%s: the good line of a refused table was registered",
           "py_c");
    s = sml_register_kernels(GOOD, 2, SML_PLUGIN_ABI_VERSION + 1, "python:abi", msg, sizeof msg);
    expect(
        s == SML_ERR_PLUGIN &&
            strstr(msg, "python:abi: plugin ABI version 4, this softmax-lab takes versions 1 to 3"),
        "ABI mismatch: '%s'", msg);
    s = sml_register_kernels(GOOD, 2, 0, "python:abi0", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN && strstr(msg, "python:abi0: plugin ABI version 0"), "ABI 0: '%s'",
           msg);
    flags_and_old_abi(builtin);
    declared_deviations();
    s = sml_register_kernels(TAKEN, 2, SML_PLUGIN_ABI_VERSION, "python:taken", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN &&
               strstr(msg,
                      "kernel 1 'py_a': the name is taken by a registered kernel (python:mod.fn)"),
           "a taken name: '%s'", msg);
    expect(sml_kernel_find("py_e") == NULL, "%s: registered from a refused table", "py_e");
    s = sml_register_kernels(NULL, 3, SML_PLUGIN_ABI_VERSION, NULL, NULL, 0);
    expect(s == SML_ERR_PLUGIN, "%s: a NULL table with no message buffer was not refused", "NULL");
    expect(sml_kernel_count() == builtin + 2, "%s: refused tables changed the count", "refusals");
    expect(!strcmp(sml_strerror(SML_ERR_PLUGIN),
                   "plugin refused (cannot be loaded, or its kernel table is invalid)"),
           "sml_strerror(SML_ERR_PLUGIN) = '%s'", sml_strerror(SML_ERR_PLUGIN));

    /* Withdrawal: the names leave every lookup and can be registered again. */
    expect(sml_unregister_kernels(GOOD) == SML_OK, "%s: withdrawing a registered table failed",
           "GOOD");
    expect(sml_kernel_count() == builtin && sml_kernel_find("py_a") == NULL &&
               sml_kernel_find("py_b") == NULL,
           "%s: a withdrawn table is still counted or found", "GOOD");
    expect(sml_unregister_kernels(GOOD) == SML_ERR_INVALID_ARG, "%s: withdrawn twice", "GOOD");
    expect(sml_unregister_kernels(TAKEN) == SML_ERR_INVALID_ARG,
           "%s: a table never registered was withdrawn", "TAKEN");
    s = sml_register_kernels(TAKEN, 2, SML_PLUGIN_ABI_VERSION, "python:again", msg, sizeof msg);
    expect(s == SML_OK && sml_kernel_find("py_a") == &TAKEN[1] &&
               sml_kernel_at(builtin) == &TAKEN[0],
           "a withdrawn name was not free again: '%s'", msg);
    expect(sml_unregister_kernels(TAKEN) == SML_OK && sml_kernel_count() == builtin,
           "%s: second withdrawal", "TAKEN");
    s = sml_register_kernels(GOOD, 2, SML_PLUGIN_ABI_VERSION, "python:mod.fn", msg, sizeof msg);
    expect(s == SML_OK && sml_kernel_count() == builtin + 2, "GOOD again: '%s'", msg);

    /* Registration from several threads while others read. */
    pthread_t w[THREADS], r[2];
    for (int i = 0; i < 2; i++) pthread_create(&r[i], NULL, read_registry, NULL);
    for (int t = 0; t < THREADS; t++) pthread_create(&w[t], NULL, register_one, (void *)(size_t)t);
    size_t failed = 0, torn = 0;
    for (int t = 0; t < THREADS; t++) {
        void *v;
        pthread_join(w[t], &v);
        failed += (size_t)v;
    }
    for (int i = 0; i < 2; i++) {
        void *v;
        pthread_join(r[i], &v);
        torn += (size_t)v;
    }
    expect(failed == 0, "%s: a thread's table was refused", "threads");
    expect(torn == 0, "%s: a reader saw a kernel it could not find again", "threads");
    expect(sml_kernel_count() == builtin + 2 + THREADS * 8, "%s: not every thread's table landed",
           "threads");
    for (int t = 0; t < THREADS; t++)
        expect(sml_kernel_find(NAMES[t][7]) == &PER_THREAD[t][7], "%s: not found", NAMES[t][7]);
    return sml_tally_finish(&T);
}
