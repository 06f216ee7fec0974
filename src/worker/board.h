/* board.h: what a worker and its supervisor share, inside src/worker only.
 *
 * The board is shared memory with one slot per launch the worker can run at once: the thread
 * serving a slot writes the request it is about to run before it runs the kernel, and, from
 * the fault handler, where a fault hit; the supervisor reads it after the worker died (the
 * cause, and whose it was). Each slot has its own socket, carrying frames [u32 type][u32
 * length][payload] both ways, and its window (window.h): a RUN frame's image lies in the
 * window's first half, and the bytes a DONE frame names in its second, checked against what
 * the request allows before a byte is read. (Where no window can be had, and in the edge
 * worker's frames, the bytes follow their frames raw.) Nothing on the board, in a frame or in a window decides a verdict: the supervisor
 * judges the bytes that come back itself, and reads the board only to say how a worker
 * ended. */
#ifndef SML_WORKER_BOARD_H
#define SML_WORKER_BOARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "edge/edge.h"
#include "prop/exec.h"

/* One slot: what the thread serving it is doing. */
typedef struct sml_worker_slot {
    atomic_int busy;      /* 1 from a request's arrival until its answer is sent */
    atomic_llong seq;     /* the request it serves or served last */
    atomic_int fault_set; /* the fault handler wrote `fault` */
    char fault[256];      /* "wrote past the end of out by 4096 bytes" */
} sml_worker_slot;

/* The whole board: which slot's thread ended the worker, when the worker knows, then the
 * slots. A fatal signal is raised in the thread that faulted and exit() runs its handlers
 * in the thread that called it, so both name their slot; _exit() and a signal sent from
 * outside name none. */
typedef struct sml_worker_board sml_worker_board;
struct sml_worker_board {
    int nslots;
    atomic_int fault_slot; /* took a fatal signal (-1: none) */
    atomic_int exit_slot;  /* called exit() (-1: none) */
    atomic_int quitting;   /* the worker was told to quit, and is ending so */
    atomic_int started;    /* the worker has its kernel (or knows it has none) and its device
                              set up: a launch's deadline starts from here, never from the
                              exec (sml_worker_await_start) */
    sml_worker_slot slot[];
};

/* Bytes of the board of n slots, a whole number of pages. */
size_t sml_wk_board_bytes(int nslots);

enum {
    SML_WK_RUN = 1,  /* supervisor -> worker: a launch (sml_wk_run_msg; the image lies in the
                        slot's window) */
    SML_WK_PING = 2, /* supervisor -> worker: are you there (u64 seq) */
    SML_WK_QUIT = 3,
    SML_WK_WINDOW = 5,     /* supervisor -> worker: the slot's window from now on (u64 bytes of a
                          half, the memfd with the frame; window.h) */
    SML_WK_DONE = 16,      /* worker -> supervisor: a launch's answer (sml_wk_done_msg; the
                             bytes of the layout that came back lie in the window's answer half) */
    SML_WK_PONG = 17,      /* worker -> supervisor: the PING's seq */
    SML_WK_NO_KERNEL = 18, /* worker -> supervisor: it cannot run its kernel (text: why) */
    SML_WK_EDGE = 4,       /* supervisor -> edge worker: one operation (sml_wk_edge_msg, then
                              op.n bytes for an UPLOAD) */
    SML_WK_EDGE_DONE = 19  /* edge worker -> supervisor: sml_wk_edge_done, then op.n bytes for
                              a DOWNLOAD that succeeded */
};

/* The edge-shape harness's operations (edge/edge.h) as they travel. */
typedef struct sml_wk_edge_msg {
    uint64_t seq;
    sml_edge_op op;
} sml_wk_edge_msg;

typedef struct sml_wk_edge_done {
    uint64_t seq;
    int32_t status, unused;
    uint64_t n;    /* bytes that follow */
    char why[256]; /* a CUDA error's words, a refused operation's reason */
} sml_wk_edge_done;

typedef struct sml_wk_run_msg {
    uint64_t seq;
    sml_prop_launch_req req;
    uint64_t inline_bytes; /* 0: the image lies in the slot's window; else it follows the frame
                              raw (req.image_bytes of it), and the answer's bytes follow the
                              DONE frame: the fallback where no window can be had */
} sml_wk_run_msg;

typedef struct sml_wk_done_msg {
    uint64_t seq;
    sml_prop_launch_res res; /* the worker's part (status, ran, from, n, zones, error, seconds) */
} sml_wk_done_msg;

int sml_wk_send(int fd, uint32_t type, const void *a, size_t na, const void *b, size_t nb);
/* A frame of at most 4088 bytes of payload with the descriptor `passed` (a window's memfd). */
int sml_wk_send_fd(int fd, uint32_t type, const void *a, size_t na, int passed);
/* Read one frame: type and a malloc'd payload (NUL-terminated for convenience) of at most
 * `max` bytes; 0 ok, -1 end of stream, an error, or a longer frame. A descriptor that came
 * with it is closed; sml_wk_recv_fd hands it over in *passed instead (-1: none). */
int sml_wk_recv(int fd, uint32_t *type, char **payload, size_t *len, size_t max);
int sml_wk_recv_fd(int fd, uint32_t *type, char **payload, size_t *len, size_t max, int *passed);
/* Exactly n bytes, to or from fd: 0 ok, -1 end of stream or error. */
int sml_wk_send_all(int fd, const void *p, size_t n);
int sml_wk_recv_all(int fd, void *p, size_t n);

struct sml_worker;
/* Wait for the worker to end, up to `seconds`, then kill it; its wait status. */
int sml_wk_reap(struct sml_worker *w, double seconds);

/* The edge-shape harness's worker loop on one socket (edge_serve.c): 1 when QUIT came. */
int sml_wk_edge_serve(int fd, sml_worker_slot *slot);

/* The worker's handler of fatal signals (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) and of
 * exit(): names the slot of the thread they came from in the board, and for a fault the
 * guard zone it hit (prop/guard.h), then lets the signal (or the exit) end the worker. */
void sml_wk_fault_install(struct sml_worker_board *b);
/* The slot the calling thread serves (-1: none), and the worker ending normally. */
void sml_wk_fault_slot(int slot);
void sml_wk_fault_quitting(void);

#endif
