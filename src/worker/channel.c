/* channel.c: a launch sent to the kernel's worker, its answer read and checked, and every
 * other end of it turned into an answer or an end (worker.h lists the rules). Nothing a
 * worker sends is taken on trust: an answer must be a DONE frame of the right size carrying
 * the request's sequence number and naming exactly the bytes of the layout the request allows,
 * which the worker wrote into the channel's window (window.h); the engine then judges those
 * bytes itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "worker/channel.h"
#include "worker/ending.h"

typedef enum { T_GOT, T_FORGED, T_BROKE, T_LATE, T_CAP, T_NO_KERNEL } t_end;

/* "during case 12", "while shrinking case 12", ... (what the engine was doing). */
static void doing(const sml_prop_launch_req *q, char *buf, size_t n) {
    if (q->kind == SML_PROP_LAUNCH_PING)
        snprintf(buf, n, "after its last case");
    else if (q->phase == SML_PROP_PHASE_CASE && q->index >= 0)
        snprintf(buf, n, "during case %lld", (long long)q->index);
    else if (q->phase == SML_PROP_PHASE_CASE)
        snprintf(buf, n, "during the replayed case");
    else if (q->phase == SML_PROP_PHASE_SHRINK)
        snprintf(buf, n, "while shrinking case %lld", (long long)q->index);
    else if (q->phase == SML_PROP_PHASE_RERUN)
        snprintf(buf, n, "rerunning case %lld in a fresh worker", (long long)q->index);
    else if (q->phase == SML_PROP_PHASE_INPUT)
        snprintf(buf, n, "on the input");
    else if (q->phase == SML_PROP_PHASE_REGRESSION)
        snprintf(buf, n, "during saved reproducer %lld", (long long)q->index + 1);
    else
        snprintf(buf, n, "before its first case");
}

/* Wait until fd is readable, the launch's deadline passes or the run's cap does. */
static t_end await(int fd, double until, double cap) {
    for (;;) {
        double now = sml_prop_now();
        if (cap > 0 && now >= cap) return T_CAP;
        if (now >= until) return T_LATE;
        double end = cap > 0 && cap < until ? cap : until;
        int ms = (int)((end - now) * 1000.0) + 1;
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, ms > 1000 ? 1000 : ms);
        if (r > 0) return T_GOT;
        if (r < 0 && errno != EINTR) return T_BROKE;
    }
}

static unsigned char *answer_half(const wk_chan *c) { return c->win.base + c->win.half; }

/* The answer on fd to request `seq` (q), checked; the worker's part of it into res, its bytes
 * into back. detail[]: what did not match. */
static t_end read_answer(const wk_chan *c, int fd, uint64_t seq, const sml_prop_launch_req *q,
                         sml_prop_launch_res *res, unsigned char *back, char *detail, size_t n) {
    uint32_t head[2];
    if (sml_wk_recv_all(fd, head, sizeof head)) return T_BROKE;
    if (head[0] == SML_WK_NO_KERNEL && head[1] < 4096) {
        char text[4096];
        if (sml_wk_recv_all(fd, text, head[1])) return T_BROKE;
        snprintf(detail, n, "%.*s", (int)head[1], text);
        return T_NO_KERNEL;
    }
    if (q->kind == SML_PROP_LAUNCH_PING) {
        uint64_t got;
        if (head[0] != SML_WK_PONG || head[1] != sizeof got) {
            snprintf(detail, n, "frame type %u of %u bytes for a ping", head[0], head[1]);
            return T_FORGED;
        }
        if (sml_wk_recv_all(fd, &got, sizeof got)) return T_BROKE;
        if (got != seq)
            snprintf(detail, n, "ping %llu answered as %llu", (unsigned long long)seq,
                     (unsigned long long)got);
        return got == seq ? T_GOT : T_FORGED;
    }
    sml_wk_done_msg d;
    if (head[0] != SML_WK_DONE || head[1] != sizeof d) {
        snprintf(detail, n, "frame type %u of %u bytes", head[0], head[1]);
        return T_FORGED;
    }
    if (sml_wk_recv_all(fd, &d, sizeof d)) return T_BROKE;
    uint64_t from, want;
    sml_prop_exec_expect(q, d.res.status, &from, &want);
    if (d.res.engine != SML_OK) from = want = 0; /* the worker's own failure: nothing back */
    if (d.seq != seq || d.res.n != want || (want && d.res.from != from) || d.res.nzones < 0 ||
        d.res.nzones > SML_PROP_GUARD_ZONES_MAX) {
        snprintf(detail, n, "answer %llu to request %llu, %llu bytes at %llu where %llu at %llu",
                 (unsigned long long)d.seq, (unsigned long long)seq, (unsigned long long)d.res.n,
                 (unsigned long long)d.res.from, (unsigned long long)want,
                 (unsigned long long)from);
        return T_FORGED;
    }
    if (c->inline_sent) {
        if (want && sml_wk_recv_all(fd, back + from, (size_t)want)) return T_BROKE;
    } else if (want && back != answer_half(c)) {
        memcpy(back + from, answer_half(c) + from, (size_t)want);
    }
    d.res.error[sizeof d.res.error - 1] = 0;
    memcpy(res, &d.res, offsetof(sml_prop_launch_res, ended));
    return T_GOT;
}

/* The request q on the channel's host, its image (c->image) in the channel's window (the
 * window sent first where the slot holds another), or after the frame where it is not in
 * one: 1 sent, 0 the socket broke. */
static int send_request(wk_chan *c, const sml_prop_launch_req *q) {
    int fd = c->host->w.sock[c->slot];
    uint64_t seq = ++c->seq;
    c->inline_sent = 0;
    if (q->kind == SML_PROP_LAUNCH_PING)
        return sml_wk_send(fd, SML_WK_PING, &seq, sizeof seq, NULL, 0) == 0;
    c->inline_sent = !c->win.base || c->image != c->win.base;
    if (!c->inline_sent && c->host->win[c->slot] != c->win.id) {
        uint64_t half = c->win.half;
        if (sml_wk_send_fd(fd, SML_WK_WINDOW, &half, sizeof half, c->win.fd)) return 0;
        c->host->win[c->slot] = c->win.id;
    }
    sml_wk_run_msg m = {seq, *q, c->inline_sent ? q->image_bytes : 0};
    return sml_wk_send(fd, SML_WK_RUN, &m, sizeof m, NULL, 0) == 0 &&
           (!c->inline_sent || sml_wk_send_all(fd, c->image, (size_t)q->image_bytes) == 0);
}

sml_status sml_wk_chan_window(void *ctx, size_t bytes, unsigned char **img, unsigned char **back) {
    wk_chan *c = ctx;
    if (!c->win.base || bytes > c->win.half) {
        if (sml_wk_window_fit(&c->win, bytes, sml_wk_pool_window_id(c->pool)) != 0)
            return SML_ERR_OUT_OF_MEMORY;
    }
    *img = c->win.base;
    *back = answer_half(c);
    return SML_OK;
}

/* The image of q, in the channel's window where one can be had (copied there when it lies
 * elsewhere), else where it is (it then goes through the socket). */
static const unsigned char *place_image(wk_chan *c, const sml_prop_launch_req *q,
                                        const unsigned char *image) {
    unsigned char *img, *back;
    if (q->kind == SML_PROP_LAUNCH_PING || image == c->win.base ||
        sml_wk_chan_window(c, (size_t)q->image_bytes, &img, &back) != SML_OK)
        return image;
    memcpy(img, image, (size_t)q->image_bytes);
    return img;
}

/* The answer to the request just sent (sent: whether it went), within `seconds`. */
static t_end take_answer(wk_chan *c, int sent, const sml_prop_launch_req *q, double seconds,
                         sml_prop_launch_res *res, unsigned char *back, char *detail, size_t n) {
    if (!sent) return T_BROKE;
    int fd = c->host->w.sock[c->slot];
    t_end e = await(fd, sml_prop_now() + seconds, sml_wk_pool_cap(c->pool));
    return e == T_GOT ? read_answer(c, fd, c->seq, q, res, back, detail, n) : e;
}

/* One try of q on the channel's host: send, wait, read. */
static t_end try_launch(wk_chan *c, const sml_prop_launch_req *q, double seconds,
                        sml_prop_launch_res *res, unsigned char *back, char *detail, size_t n) {
    return take_answer(c, send_request(c, q), q, seconds, res, back, detail, n);
}

/* "the kernel's worker SIGSEGV during case 3", with what the fault handler saw. */
static void death_cause(const wk_host *h, int slot, const char *at, const char *tail, char *buf,
                        size_t n) {
    char how[64];
    sml_wk_status_words(h->status, how, sizeof how);
    if (WIFSIGNALED(h->status) && slot >= 0 && h->fault[slot][0])
        snprintf(buf, n, "the kernel's worker %.150s (%s) %.64s%.16s", h->fault[slot], how, at,
                 tail);
    else
        snprintf(buf, n, "the kernel's worker %s %.64s%.16s", how, at, tail);
}

static void end_with(sml_prop_launch_res *res, int ended, const char *fmt, const char *a,
                     const char *b) {
    res->ended = ended;
    snprintf(res->cause, sizeof res->cause, fmt, a, b);
}

/* q run again alone, in a host of its own, under `seconds`: the answer, or the end there. */
static void alone(wk_chan *c, const sml_prop_launch_req *q, double seconds, double first,
                  sml_prop_launch_res *res, unsigned char *back) {
    char at[96], why[512], detail[256] = "";
    doing(q, at, sizeof at);
    wk_chan solo = {.pool = c->pool,
                    .k = c->k,
                    .device = c->device,
                    .own = 1,
                    .slot = -1,
                    .status = -1,
                    .image = c->image,
                    .win = c->win};
    wk_host *h = sml_wk_pool_attach(c->pool, &solo, why, sizeof why);
    if (!h) {
        end_with(res, SML_PROP_ENDED_NOT_RUN, "no worker to run it again alone: %.250s%s", why, "");
        return;
    }
    t_end e = try_launch(&solo, q, seconds, res, back, detail, sizeof detail);
    if (e == T_GOT) {
        res->alone = 1;
        if (first > 0) res->deadline = first;
    } else if (e == T_LATE) {
        snprintf(
            res->cause, sizeof res->cause,
            "the kernel's worker did not finish %.64s in %.1f s, nor run again alone in %.1f s "
            "(killed)",
            strncmp(at, "during ", 7) ? at : at + 7, first > 0 ? first : seconds, seconds);
        res->ended = SML_PROP_ENDED_HUNG;
    } else if (e == T_CAP) {
        end_with(res, SML_PROP_ENDED_CAPPED, "the run's time cap ended it %s%s", at, "");
    } else if (e == T_FORGED) {
        end_with(res, SML_PROP_ENDED_FORGED,
                 "the kernel's worker answered with a frame that does not match the request "
                 "(%.150s) %.64s",
                 detail, at);
    } else if (e == T_NO_KERNEL) {
        end_with(res, SML_PROP_ENDED_NOT_RUN, "the worker cannot run the kernel: %.250s%s", detail,
                 "");
    }
    if (e == T_LATE || e == T_FORGED) sml_wk_host_ended(h, 0, 0);
    if (e == T_CAP) sml_wk_host_ended(h, -1, 1);
    if (e == T_BROKE) {
        sml_wk_host_ended(h, -1, 0);
        death_cause(h, 0, at, " (run alone)", res->cause, sizeof res->cause);
        res->ended = SML_PROP_ENDED_DIED;
    }
    sml_wk_pool_detach(c->pool, &solo);
}

/* The host the launch in `slot` was on ended (BROKE): was it this launch's doing? Its thread
 * faulted or called exit(); or nothing names another's, and no other launch was running in
 * the worker (the kernel ended it during this launch, or between launches, which this one
 * found: a worker runs one kernel, so the end is that kernel's). */
static int my_death(const wk_host *h, int slot) {
    if (h->fault_slot == slot || h->exit_slot == slot) return 1;
    return h->fault_slot < 0 && h->exit_slot < 0 && h->killed_slot < 0 &&
           (h->busy_at_end & ~(1u << slot)) == 0;
}

sml_status sml_wk_chan_send(void *ctx, const sml_prop_launch_req *q, const unsigned char *image) {
    wk_chan *c = ctx;
    c->why[0] = 0;
    c->sent = 0;
    c->image = place_image(c, q, image);
    c->sent_to = sml_wk_pool_attach(c->pool, c, c->why, sizeof c->why);
    if (c->sent_to) c->sent = send_request(c, q);
    return SML_OK;
}

sml_status sml_wk_chan_recv(void *ctx, const sml_prop_launch_req *q, const unsigned char *image,
                            sml_prop_launch_res *res, unsigned char *back) {
    wk_chan *c = ctx;
    (void)image; /* sml_wk_chan_send kept where it lies */
    memset(res, 0, sizeof *res);
    res->ran = -1;
    char at[96], detail[256] = "";
    doing(q, at, sizeof at);
    double D = sml_wk_pool_deadline(c->pool, q);
    wk_host *h = c->sent_to;
    if (!h) {
        end_with(res, SML_PROP_ENDED_NOT_RUN, "cannot start the kernel's worker: %.250s%s", c->why,
                 "");
        return SML_OK;
    }
    int slot = c->slot;
    t_end e = take_answer(c, c->sent, q, D, res, back, detail, sizeof detail);
    if (e == T_GOT) {
        /* A CUDA error may have lost the worker's context: it takes no new launch. Where other
         * jobs' launches shared it, the error may be theirs: this one runs again alone. */
        if (res->status == SML_ERR_CUDA && q->kind != SML_PROP_LAUNCH_PING) {
            int others = sml_wk_pool_users(c->pool, h) > 1;
            sml_wk_pool_retire(c->pool, h);
            sml_wk_pool_detach(c->pool, c);
            if (others) alone(c, q, D, 0.0, res, back);
        }
        return SML_OK;
    }
    if (e == T_NO_KERNEL) {
        end_with(res, SML_PROP_ENDED_NOT_RUN, "the worker cannot run the kernel: %.250s%s", detail,
                 "");
    } else if (e == T_FORGED) {
        sml_wk_host_ended(h, slot, 0);
        end_with(res, SML_PROP_ENDED_FORGED,
                 "the kernel's worker answered with a frame that does not match the request "
                 "(%.150s) %.64s",
                 detail, at);
    } else if (e == T_CAP) {
        sml_wk_host_ended(h, -1, 1);
        end_with(res, SML_PROP_ENDED_CAPPED, "the run's time cap ended it %s%s", at, "");
    } else if (e == T_LATE) {
        /* A suspicion only: confirmed alone under ten times the deadline. */
        sml_wk_host_ended(h, slot, 0);
        sml_wk_pool_detach(c->pool, c);
        alone(c, q, 10.0 * D, D, res, back);
        return SML_OK;
    } else { /* T_BROKE: the worker ended */
        sml_wk_host_ended(h, -1, 0);
        if (h->capped) {
            end_with(res, SML_PROP_ENDED_CAPPED, "the run's time cap ended it %s%s", at, "");
        } else if (my_death(h, slot)) {
            death_cause(h, slot, at, "", res->cause, sizeof res->cause);
            res->ended = SML_PROP_ENDED_DIED;
        } else if (q->kind == SML_PROP_LAUNCH_PING) {
            /* Another launch's doing, judged there: this job's last case stands. */
        } else { /* another launch's doing, or nobody can say whose: run it again alone */
            sml_wk_pool_detach(c->pool, c);
            alone(c, q, D, 0.0, res, back);
            return SML_OK;
        }
    }
    sml_wk_pool_detach(c->pool, c);
    return SML_OK;
}

sml_status sml_wk_chan_launch(void *ctx, const sml_prop_launch_req *q, const unsigned char *image,
                              sml_prop_launch_res *res, unsigned char *back) {
    sml_wk_chan_send(ctx, q, image);
    return sml_wk_chan_recv(ctx, q, image, res, back);
}
