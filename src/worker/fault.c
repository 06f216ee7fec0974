/* fault.c: the worker's SIGSEGV/SIGBUS handler. Where the fault hit one of the guard zones
 * around the judged host buffers (prop/guard.h), it writes "wrote past the end of out by K
 * bytes" into the board; then it restores the default action and returns, so the faulting
 * access runs again and the signal ends the worker as it would have. Only async-signal-safe
 * work here. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "prop/guard.h"
#include "worker/board.h"

static struct sml_worker_board *the_board;

static void on_fault(int sig, siginfo_t *si, void *uc_) {
    int write = -1;
#if defined(__x86_64__) && defined(REG_ERR)
    ucontext_t *uc = uc_;
    if (sig == SIGSEGV) write = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
    (void)uc_;
#endif
    if (the_board && sml_prop_guard_describe((const void *)si->si_addr, write, the_board->fault,
                                             sizeof the_board->fault))
        atomic_store(&the_board->fault_set, 1);
    signal(sig, SIG_DFL);
}

void sml_wk_fault_install(struct sml_worker_board *b) {
    the_board = b;
    sml_prop_guard_enable();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}
