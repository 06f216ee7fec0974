/* host.c: starting a worker for one kernel, recording how it ended, closing it. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "worker/host.h"

wk_host *sml_wk_host_start(const sml_kernel *k, int device, int slots, int shared,
                           const char *const *wrap, char *why, size_t n) {
    wk_host *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    const char *lib = sml_kernel_library(k);
    sml_worker_opts o = {k->name, 0,    device, lib && sml_source_is_python(lib) ? lib : NULL,
                         wrap,    slots};
    if (sml_worker_spawn(&h->w, &o, why, n) != SML_OK) {
        free(h);
        return NULL;
    }
    h->k = k;
    h->device = device;
    h->shared = shared;
    h->fault_slot = h->exit_slot = h->killed_slot = -1;
    pthread_mutex_init(&h->mu, NULL);
    return h;
}

void sml_wk_host_ended(wk_host *h, int kill_slot, int cap) {
    pthread_mutex_lock(&h->mu);
    if (!h->dead) {
        if (kill_slot >= 0 || cap) {
            kill(h->w.pid, SIGKILL);
            h->killed_slot = kill_slot;
            h->capped = cap;
        }
        h->status = sml_wk_reap(&h->w, 2.0);
        sml_worker_board *b = h->w.board;
        h->fault_slot = atomic_load(&b->fault_slot);
        h->exit_slot = atomic_load(&b->exit_slot);
        for (int i = 0; i < b->nslots && i < SML_PROP_MAX_THREADS; i++) {
            if (atomic_load(&b->slot[i].busy)) h->busy_at_end |= 1u << i;
            if (atomic_load(&b->slot[i].fault_set))
                snprintf(h->fault[i], sizeof h->fault[i], "%.255s", b->slot[i].fault);
        }
        h->dead = 1;
    }
    pthread_mutex_unlock(&h->mu);
}

int sml_wk_host_close(wk_host *h, int *unasked) {
    *unasked = 0;
    int status = -1;
    if (!h->dead && h->w.pid > 0) {
        sml_wk_send(h->w.sock[0], SML_WK_QUIT, NULL, 0, NULL, 0);
        status = sml_wk_reap(&h->w, h->w.wrap ? 60.0 : 1.0);
        /* Told to quit, a worker says so on the board before it ends: one that ended without
         * (a timer in its kernel, after the kernel's last launch) ended on its own. */
        *unasked = !atomic_load(&h->w.board->quitting);
    }
    sml_worker_close(&h->w); /* its sockets and board, where they are left */
    pthread_mutex_destroy(&h->mu);
    free(h);
    return status;
}
