/* host.h: the supervisor's record of one worker process and the launches in it (src/worker
 * only). A host runs one kernel on one device; it is shared by the channels (channel.c) of
 * that kernel's jobs, one slot each, or belongs to one channel alone (a launch run again
 * alone, a rerun in a fresh worker, a job under a tool). Hosts are counted references: the
 * last channel to let go of a dead or retired host closes it. */
#ifndef SML_WORKER_HOST_H
#define SML_WORKER_HOST_H

#include <pthread.h>
#include <stdint.h>

#include "worker/board.h"
#include "worker/worker.h"

typedef struct wk_host {
    const sml_kernel *k;
    int device;
    sml_worker w;
    int shared;                         /* takes any channel of its kernel; 0: one channel's own */
    int users;                          /* channels holding a slot (under the pool's lock) */
    int busy[SML_PROP_MAX_THREADS];     /* the slot is held by a channel */
    int retired;                        /* takes no new channel: dead, or a CUDA error in it */
    uint64_t win[SML_PROP_MAX_THREADS]; /* the window each slot holds (window.h; 0: none) */
    /* Its end, recorded once by whoever saw it first (under `mu`): */
    pthread_mutex_t mu;
    int dead;             /* ended and reaped */
    int status;           /* its wait status */
    int fault_slot;       /* the slot whose thread took a fatal signal (-1: none) */
    int exit_slot;        /* the slot whose thread called exit() (-1: none) */
    int killed_slot;      /* the slot whose deadline had the supervisor kill it (-1: none) */
    int capped;           /* killed at the run's cap */
    unsigned busy_at_end; /* the slots that were running a launch when it ended (bits) */
    char fault[SML_PROP_MAX_THREADS][256]; /* what the fault handler wrote, per slot */
    struct wk_host *next;
} wk_host;

/* A new host for k on `device` with `slots` slots (started now); NULL with why[] filled. */
wk_host *sml_wk_host_start(const sml_kernel *k, int device, int slots, int shared,
                           const char *const *wrap, char *why, size_t n);
/* Record the host's end: the first caller reaps it (after killing it when `kill_slot` >= 0, or
 * with `cap`), copies what the board says, and marks it dead; later callers find it done. */
void sml_wk_host_ended(wk_host *h, int kill_slot, int cap);
/* Close it (quit, reap, free); its wait status (-1: it was dead already and reaped), and
 * *unasked 1 when it ended before it was told to quit (the kernel ended it). */
int sml_wk_host_close(wk_host *h, int *unasked);

#endif
