/* replay.c: one reproducer replayed in a fresh worker, so a reproducer of a crash crashes
 * the worker, not the command; the cause becomes the replay's FAIL. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "prop/repro.h"
#include "worker/board.h"
#include "worker/ending.h"
#include "worker/worker.h"

/* The library the reproducer's kernel needs a Python worker for ("" none). */
static void python_library(const char *path, const char *kernel, char *lib, size_t n) {
    lib[0] = 0;
    const sml_kernel *k = kernel && kernel[0] ? sml_kernel_find(kernel) : NULL;
    if (!k) {
        sml_prop_case c;
        sml_prop_repro m;
        char err[256];
        if (sml_prop_repro_load(path, &c, &m, err, sizeof err) != SML_OK) return;
        sml_prop_case_free(&c);
        k = sml_kernel_find(m.kernel);
        if (!k && sml_source_is_python(m.load)) snprintf(lib, n, "%s", m.load);
    }
    const char *l = k ? sml_kernel_library(k) : NULL;
    if (l && sml_source_is_python(l)) snprintf(lib, n, "%s", l);
}

static const char *registered_library(const char *path, const char *kernel) {
    const sml_kernel *k = kernel && kernel[0] ? sml_kernel_find(kernel) : NULL;
    if (!k) {
        sml_prop_case c;
        sml_prop_repro m;
        char err[256];
        if (sml_prop_repro_load(path, &c, &m, err, sizeof err) != SML_OK) return "";
        sml_prop_case_free(&c);
        k = sml_kernel_find(m.kernel);
    }
    const char *l = k ? sml_kernel_library(k) : NULL;
    return l ? l : "";
}

sml_status sml_worker_replay(const char *path, const char *kernel, sml_prop_replay_result *r) {
    memset(r, 0, sizeof *r);
    char lib[4096], why[512];
    python_library(path, kernel, lib, sizeof lib);
    sml_worker w;
    sml_worker_opts o = {-1, lib[0] ? lib : NULL, NULL, 1};
    sml_status s = sml_worker_spawn(&w, &o, why, sizeof why);
    if (s != SML_OK)
        return sml_prop_replay(path, kernel ? sml_kernel_find(kernel) : NULL, NULL, NULL, r);
    /* The library of the kernel as this process has it (a --load of a rebuilt plugin wins
     * over the one the reproducer recorded): the worker loads it first. */
    const char *klib = registered_library(path, kernel);
    size_t pl = strlen(path) + 1, kl = (kernel ? strlen(kernel) : 0) + 1, ll = strlen(klib) + 1;
    char *msg = malloc(pl + kl + ll);
    if (!msg) {
        sml_worker_close(&w);
        return SML_ERR_OUT_OF_MEMORY;
    }
    memcpy(msg, path, pl);
    memcpy(msg + pl, kernel ? kernel : "", kl);
    memcpy(msg + pl + kl, klib, ll);
    int sent = sml_wk_send(w.sock[0], SML_WK_REPLAY, msg, pl + kl + ll, NULL, 0) == 0;
    free(msg);
    double t0 = sml_prop_now();
    sml_wk_death d = {0, 0, 0.0, 0.0};
    for (int got = 0; sent && !got;) {
        struct pollfd pf = {w.sock[0], POLLIN, 0};
        int n = poll(&pf, 1, 50);
        if (n > 0) {
            uint32_t type;
            char *p;
            size_t len;
            if (sml_wk_recv(w.sock[0], &type, &p, &len) != 0) break;
            if (type == SML_WK_REPLAYED && len == sizeof(int32_t) + sizeof *r) {
                int32_t st;
                memcpy(&st, p, sizeof st);
                memcpy(r, p + sizeof st, sizeof *r);
                free(p);
                sml_worker_close(&w);
                return (sml_status)st;
            }
            free(p);
            continue;
        }
        int phase = atomic_load(&w.board->slot[0].phase);
        double limit = phase == SML_PROP_PHASE_IDLE
                           ? 60.0
                           : sml_worker_case_deadline(w.board->slot[0].elements);
        double since = phase == SML_PROP_PHASE_IDLE ? t0 : w.board->slot[0].start;
        if (sml_prop_now() - since > limit) {
            kill(w.pid, SIGKILL);
            d.killed = 1;
            d.limit = limit;
            break;
        }
    }
    d.status = sml_wk_reap(&w, 2.0);
    /* What the reproducer is, read here (no kernel runs in this process). */
    sml_prop_case c;
    sml_prop_repro m;
    char err[256];
    if (sml_prop_repro_load(path, &c, &m, err, sizeof err) == SML_OK) {
        snprintf(r->kernel, sizeof r->kernel, "%s", kernel && kernel[0] ? kernel : m.kernel);
        sml_prop_replay_describe(&c, &m, r);
        snprintf(r->library, sizeof r->library, "%s", m.load);
        sml_prop_case_free(&c);
    }
    r->outcome = SML_PROP_FAIL;
    char cause[320];
    sml_wk_cause(&d, &w.board->slot[0], cause, sizeof cause);
    snprintf(r->message, sizeof r->message, "the kernel's worker %s", cause);
    sml_worker_close(&w);
    return SML_OK;
}
