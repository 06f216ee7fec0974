/* test_plugin_api: sml_register_kernels and sml_kernel_origin from C, as a binding (Python,
 * say) calls them without a shared library: a table registers after the built-in kernels and
 * is found by name with its origin; a table with one bad line registers nothing (all or
 * nothing), with the line and the origin in the message; a wrong ABI version and a taken name
 * are refused; tables registered from several threads while others read the registry all
 * land, each whole. */
#include <pthread.h>
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

#define LINE(name) {name, NULL, SML_DEVICE_CPU, SML_OPS_FWD, 1u << SML_F32, 1, 0, noop, NULL, {NULL, 0, NULL}, NULL}

static const sml_kernel GOOD[] = {LINE("py_a"), LINE("py_b")};
static const sml_kernel HALF_BAD[] = {LINE("py_c"), {"py_d", NULL, SML_DEVICE_CPU, SML_OPS_FWD, 1u << SML_F32, 5, 2,
                                                     noop, NULL, {NULL, 0, NULL}, NULL}};
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
    return (void *)(size_t)(sml_register_kernels(PER_THREAD[t], 8, SML_PLUGIN_ABI_VERSION, origin, NULL, 0) != SML_OK);
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

int main(void) {
    size_t builtin = sml_kernel_count();
    char msg[512];
    sml_status s = sml_register_kernels(GOOD, 2, SML_PLUGIN_ABI_VERSION, "python:mod.fn", msg, sizeof msg);
    expect(s == SML_OK, "a good table was refused: %s", msg);
    expect(sml_kernel_count() == builtin + 2, "%s: the count did not grow by 2", "GOOD");
    expect(sml_kernel_at(builtin) == &GOOD[0] && sml_kernel_at(builtin + 1) == &GOOD[1],
           "%s: registered lines are not after the built-ins, in order", "GOOD");
    expect(sml_kernel_find("py_b") == &GOOD[1], "%s: py_b not found", "GOOD");
    const char *o = sml_kernel_origin(&GOOD[0]);
    expect(o && !strcmp(o, "python:mod.fn"), "the origin is '%s', want python:mod.fn", o ? o : "(null)");
    expect(sml_kernel_origin(sml_kernel_find("cpu_naive")) == NULL, "%s: a built-in kernel has an origin", "cpu_naive");
    sml_kernel copy = GOOD[0];
    expect(sml_kernel_origin(&copy) == NULL, "%s: a pointer outside the registry has an origin", "copy");
    expect(sml_kernel_origin(NULL) == NULL, "%s: NULL has an origin", "NULL");

    s = sml_register_kernels(HALF_BAD, 2, SML_PLUGIN_ABI_VERSION, "python:half", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN && strstr(msg, "python:half: kernel 1 'py_d': min_cols 5 > max_cols 2"),
           "one bad line: message '%s'", msg);
    expect(sml_kernel_find("py_c") == NULL, "%s: the good line of a refused table was registered", "py_c");
    s = sml_register_kernels(GOOD, 2, SML_PLUGIN_ABI_VERSION + 1, "python:abi", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN && strstr(msg, "python:abi: plugin ABI version 2"), "ABI mismatch: '%s'", msg);
    s = sml_register_kernels(TAKEN, 2, SML_PLUGIN_ABI_VERSION, "python:taken", msg, sizeof msg);
    expect(s == SML_ERR_PLUGIN && strstr(msg, "kernel 1 'py_a': the name is taken by a registered kernel (python:mod.fn)"),
           "a taken name: '%s'", msg);
    expect(sml_kernel_find("py_e") == NULL, "%s: registered from a refused table", "py_e");
    s = sml_register_kernels(NULL, 3, SML_PLUGIN_ABI_VERSION, NULL, NULL, 0);
    expect(s == SML_ERR_PLUGIN, "%s: a NULL table with no message buffer was not refused", "NULL");
    expect(sml_kernel_count() == builtin + 2, "%s: refused tables changed the count", "refusals");
    expect(!strcmp(sml_strerror(SML_ERR_PLUGIN), "plugin refused (cannot be loaded, or its kernel table is invalid)"),
           "sml_strerror(SML_ERR_PLUGIN) = '%s'", sml_strerror(SML_ERR_PLUGIN));

    /* Withdrawal: the names leave every lookup and can be registered again. */
    expect(sml_unregister_kernels(GOOD) == SML_OK, "%s: withdrawing a registered table failed", "GOOD");
    expect(sml_kernel_count() == builtin && sml_kernel_find("py_a") == NULL && sml_kernel_find("py_b") == NULL,
           "%s: a withdrawn table is still counted or found", "GOOD");
    expect(sml_unregister_kernels(GOOD) == SML_ERR_INVALID_ARG, "%s: withdrawn twice", "GOOD");
    expect(sml_unregister_kernels(TAKEN) == SML_ERR_INVALID_ARG, "%s: a table never registered was withdrawn", "TAKEN");
    s = sml_register_kernels(TAKEN, 2, SML_PLUGIN_ABI_VERSION, "python:again", msg, sizeof msg);
    expect(s == SML_OK && sml_kernel_find("py_a") == &TAKEN[1] && sml_kernel_at(builtin) == &TAKEN[0],
           "a withdrawn name was not free again: '%s'", msg);
    expect(sml_unregister_kernels(TAKEN) == SML_OK && sml_kernel_count() == builtin, "%s: second withdrawal", "TAKEN");
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
    expect(sml_kernel_count() == builtin + 2 + THREADS * 8, "%s: not every thread's table landed", "threads");
    for (int t = 0; t < THREADS; t++)
        expect(sml_kernel_find(NAMES[t][7]) == &PER_THREAD[t][7], "%s: not found", NAMES[t][7]);
    return sml_tally_finish(&T);
}
