/* fault.c: the worker's handler of fatal signals and of exit(). A fatal signal raised by
 * what a thread did (SIGSEGV, SIGBUS, SIGFPE, SIGILL, or SIGABRT from abort()) runs the
 * handler in that thread, and exit() runs its handlers in the thread that called it: both
 * write the thread's slot into the board, so the supervisor knows whose job ended a worker
 * that ran several. Where a fault hit one of the guard zones around the judged host buffers
 * (prop/guard.h, a table per thread) the handler also writes "wrote past the end of out by
 * K bytes" into the slot. Then it restores the default action and returns, so the faulting
 * access runs again (or abort() raises again) and the signal ends the worker as it would
 * have. Only async-signal-safe work in the signal handler. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "prop/guard.h"
#include "worker/board.h"

static struct sml_worker_board *the_board;
static _Thread_local int my_slot = -1;
static volatile sig_atomic_t quitting;

static void on_fault(int sig, siginfo_t *si, void *uc_) {
    int write = -1;
#if defined(__x86_64__) && defined(REG_ERR)
    ucontext_t *uc = uc_;
    if (sig == SIGSEGV) write = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
    (void)uc_;
#endif
    sml_worker_board *b = the_board;
    int s = my_slot;
    /* A signal sent by another process (kill) is no thread's doing. */
    int raised_here = si->si_code > 0 || si->si_code == SI_TKILL;
    if (b && s >= 0 && s < b->nslots && raised_here) {
        int none = -1;
        atomic_compare_exchange_strong(&b->fault_slot, &none, s);
        sml_worker_slot *w = &b->slot[s];
        if ((sig == SIGSEGV || sig == SIGBUS) &&
            sml_prop_guard_describe((const void *)si->si_addr, write, w->fault, sizeof w->fault))
            atomic_store(&w->fault_set, 1);
    }
    signal(sig, SIG_DFL);
}

static void on_exit_call(void) {
    sml_worker_board *b = the_board;
    int s = my_slot;
    if (quitting || !b || s < 0 || s >= b->nslots) return;
    int none = -1;
    atomic_compare_exchange_strong(&b->exit_slot, &none, s);
}

void sml_wk_fault_slot(int slot) { my_slot = slot; }

void sml_wk_fault_quitting(void) { quitting = 1; }

void sml_wk_fault_install(struct sml_worker_board *b) {
    the_board = b;
    sml_prop_guard_enable();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
    atexit(on_exit_call);
}
