/* edge_remote.c: the edge-shape harness's side of its worker (edge/edge.h, sml_edge_remote).
 * Each operation goes to the worker with its bytes and its answer is checked (the frame's type
 * and size, the sequence number, the bytes a download may bring); the harness judges what comes
 * back. A kernel's launch has a deadline from its size (or --case-timeout): past it the launch
 * is slow, and only past ten times it (the worker runs nothing else meanwhile: that wait is the
 * launch run alone) is the worker killed as a hang. An end of the worker during a launch is
 * that kernel's FAIL, with the cause; the next operation starts a fresh worker. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "worker/board.h"
#include "worker/ending.h"
#include "worker/worker.h"

struct sml_wk_edge {
    sml_worker w; /* pid 0: none running */
    int device;
    double case_timeout;
    uint64_t seq;
    long long slow; /* launches past their deadline that finished within ten times it */
};

sml_wk_edge *sml_worker_edge_new(int device, double case_timeout) {
    sml_wk_edge *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->device = device;
    e->case_timeout = case_timeout;
    return e;
}

void sml_worker_edge_free(sml_wk_edge *e) {
    if (!e) return;
    if (e->w.pid > 0 || e->w.board) sml_worker_close(&e->w);
    if (e->slow)
        printf("note: %lld kernel launch%s passed %s deadline and finished within ten times it: "
               "slow, not failed\n",
               e->slow, e->slow == 1 ? "" : "es", e->slow == 1 ? "its" : "their");
    free(e);
}

/* "auto softmax fp16 4097x12345" */
static void what(const sml_edge_op *op, char *buf, size_t n) {
    if (op->kind != SML_EDGE_RUN) {
        static const char *const NAMES[] = {"",           "an allocation", "a free", "an upload",
                                            "a download", "a fill",        "a fill", "a copy"};
        snprintf(buf, n, "%s", op->kind > 0 && op->kind < SML_EDGE_RUN ? NAMES[op->kind] : "?");
        return;
    }
    snprintf(buf, n, "%.63s %s %s %lldx%lld", op->kernel, sml_op_name((sml_op)op->op),
             sml_dtype_name((sml_dtype)op->dtype), (long long)op->rows, (long long)op->cols);
}

/* The seconds op may take: a launch's deadline (slow past it), or a generous one for the
 * harness's own memory work. */
static double deadline(const sml_wk_edge *e, const sml_edge_op *op) {
    if (op->kind != SML_EDGE_RUN) return 120.0 + (double)op->n / 1e8;
    return e->case_timeout > 0 ? e->case_timeout
                               : sml_worker_case_deadline((double)op->rows * (double)op->cols);
}

/* The worker ended (or was killed): reaped, and the cause in why. */
static void ended(sml_wk_edge *e, const sml_edge_op *op, int killed, double limit, char *why,
                  size_t n) {
    if (killed) kill(e->w.pid, SIGKILL);
    int status = sml_wk_reap(&e->w, 2.0);
    char at[160], how[64];
    what(op, at, sizeof at);
    sml_wk_status_words(status, how, sizeof how);
    const sml_worker_slot *s = e->w.board ? &e->w.board->slot[0] : NULL;
    if (killed)
        snprintf(why, n,
                 "the kernel's worker did not finish %s in %.1f s, ten times its deadline (killed)",
                 at, limit);
    else if (WIFSIGNALED(status) && s && atomic_load(&s->fault_set))
        snprintf(why, n, "the kernel's worker %.150s (%s) during %s", s->fault, how, at);
    else
        snprintf(why, n, "the kernel's worker %s during %s", how, at);
    sml_worker_close(&e->w);
}

/* The answer to request seq; 0, -1 the stream broke, -2 a frame that does not match. */
static int answer(sml_wk_edge *e, const sml_edge_op *op, void *out, sml_wk_edge_done *d) {
    uint32_t head[2];
    int fd = e->w.sock[0];
    if (sml_wk_recv_all(fd, head, sizeof head)) return -1;
    if (head[0] != SML_WK_EDGE_DONE || head[1] != sizeof *d) return -2;
    if (sml_wk_recv_all(fd, d, sizeof *d)) return -1;
    d->why[sizeof d->why - 1] = 0;
    uint64_t may = op->kind == SML_EDGE_DOWNLOAD && d->status == SML_OK ? op->n : 0;
    if (d->seq != e->seq || d->n != may) return -2;
    if (may && sml_wk_recv_all(fd, out, (size_t)may)) return -1;
    return 0;
}

static sml_status start(sml_wk_edge *e, char *why, size_t n) {
    if (e->w.pid > 0) return SML_OK;
    if (e->w.board) sml_worker_close(&e->w);
    sml_worker_opts o = {NULL, 1, e->device, NULL, NULL, 1};
    char msg[512];
    sml_status s = sml_worker_spawn(&e->w, &o, msg, sizeof msg);
    if (s != SML_OK) snprintf(why, n, "cannot start the kernels' worker: %s", msg);
    return s;
}

/* Wait for fd until `limit` seconds: 0 readable (after *took seconds), 1 the limit passed, -1 an
 * error. */
static int await(const sml_wk_edge *e, double limit, double *took) {
    double t0 = sml_prop_now();
    for (;;) {
        struct pollfd pf = {e->w.sock[0], POLLIN, 0};
        int r = poll(&pf, 1, 200);
        *took = sml_prop_now() - t0;
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return -1;
        if (*took > limit) return 1;
    }
}

static sml_status edge_op(void *ctx, const sml_edge_op *op, const void *in, void *out, char *why,
                          size_t n) {
    sml_wk_edge *e = ctx;
    why[0] = 0;
    sml_status s = start(e, why, n);
    if (s != SML_OK) return op->kind == SML_EDGE_RUN ? SML_ERR_KERNEL_FAILED : s;
    sml_wk_edge_msg m = {++e->seq, *op};
    int fd = e->w.sock[0];
    int sent =
        sml_wk_send(fd, SML_WK_EDGE, &m, sizeof m, NULL, 0) == 0 &&
        (op->kind != SML_EDGE_UPLOAD || !op->n || sml_wk_send_all(fd, in, (size_t)op->n) == 0);
    double d = deadline(e, op), took = 0.0;
    int late = sent ? await(e, 10.0 * d, &took) : -1;
    sml_wk_edge_done done;
    int got = late == 0 ? answer(e, op, out, &done) : -1;
    if (got == 0) {
        if (op->kind == SML_EDGE_RUN && took > d) e->slow++; /* slow, not hung */
        snprintf(why, n, "%s", done.why);
        /* A CUDA error may have lost the worker's context: the next operation starts anew. */
        if (done.status == SML_ERR_CUDA) sml_worker_close(&e->w);
        return (sml_status)done.status;
    }
    if (got == -2) {
        char at[160];
        what(op, at, sizeof at);
        kill(e->w.pid, SIGKILL);
        sml_wk_reap(&e->w, 2.0);
        sml_worker_close(&e->w);
        snprintf(why, n,
                 "the kernel's worker answered %s with a frame that does not match the request",
                 at);
    } else {
        ended(e, op, late == 1, 10.0 * d, why, n);
    }
    return op->kind == SML_EDGE_RUN ? SML_ERR_KERNEL_FAILED : SML_ERR_IO;
}

sml_edge_remote sml_worker_edge_remote(sml_wk_edge *e) {
    sml_edge_remote r = {edge_op, e};
    return r;
}
