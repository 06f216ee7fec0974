/* channel.h: one job's launcher to its kernel's worker (src/worker only). A channel holds a
 * slot of a host (host.h) while it launches; pool.c hands hosts out, channel.c speaks the
 * protocol and turns every way a launch can end into an answer or an end (worker.h lists
 * them). */
#ifndef SML_WORKER_CHANNEL_H
#define SML_WORKER_CHANNEL_H

#include <stdint.h>

#include "prop/exec.h"
#include "worker/host.h"
#include "worker/window.h"

struct sml_worker_pool;

typedef struct wk_chan {
    struct sml_worker_pool *pool;
    const sml_kernel *k;
    int device;
    int own;       /* a host of its own (never shared): a rerun, a replay, a job under a tool */
    wk_host *host; /* the host it holds a slot of (NULL: none yet, or it let go) */
    int slot;
    uint64_t seq;
    int status;       /* the wait status of its own host when it was closed (-1: none) */
    int unasked;      /* ... and 1 when that host had ended before it was told to quit */
    wk_host *sent_to; /* sml_wk_chan_send's host (NULL: none could start; why[] says why) */
    int sent;         /* ... and 1 when the request went out whole */
    const unsigned char *image; /* ... its image (the caller keeps it until the answer) */
    int inline_sent;            /* ... which went through the socket, and so comes its answer: no
                         window could be had (a file-size limit holds memfds too) */
    wk_window win;              /* its images and answers (a channel run alone borrows its job's) */
    int borrowed;               /* win is its suite thread's, given back when it closes (pool.c) */
    char why[512];
} wk_chan;

/* The launcher's functions (exec.h, sml_prop_launcher) with a wk_chan as ctx: launch is send
 * then recv; window lays the image out in the channel's window. */
sml_status sml_wk_chan_window(void *ctx, size_t bytes, unsigned char **img, unsigned char **back);
sml_status sml_wk_chan_launch(void *ctx, const sml_prop_launch_req *req, const unsigned char *image,
                              sml_prop_launch_res *res, unsigned char *back);
sml_status sml_wk_chan_send(void *ctx, const sml_prop_launch_req *req, const unsigned char *image);
sml_status sml_wk_chan_recv(void *ctx, const sml_prop_launch_req *req, const unsigned char *image,
                            sml_prop_launch_res *res, unsigned char *back);

/* pool.c's side, for the channel: a slot of a live host of the channel's kernel (a host of its
 * own when chan->own); NULL with why[] filled when no worker can be started. */
wk_host *sml_wk_pool_attach(struct sml_worker_pool *p, wk_chan *c, char *why, size_t n);
/* Let go of the slot (closing the host when it is its own, or retired and unused). */
void sml_wk_pool_detach(struct sml_worker_pool *p, wk_chan *c);
/* Retire a host: it takes no new channel (a CUDA error in it may have lost its context). */
void sml_wk_pool_retire(struct sml_worker_pool *p, wk_host *h);
/* The seconds a launch of req may take before it is a suspect; the run's cap (0: none). */
double sml_wk_pool_deadline(const struct sml_worker_pool *p, const sml_prop_launch_req *req);
double sml_wk_pool_cap(const struct sml_worker_pool *p);
/* A name for a new window, unique in the pool. */
uint64_t sml_wk_pool_window_id(struct sml_worker_pool *p);
/* The channels holding a slot of h now, the caller among them. */
int sml_wk_pool_users(struct sml_worker_pool *p, wk_host *h);

#endif
