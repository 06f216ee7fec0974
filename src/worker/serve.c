/* serve.c: the worker's side (`softmax-lab __worker`, started by spawn.c only). It maps the
 * board, installs the fault handler, and serves each slot on a thread of its own (slot 0 on
 * the main thread): what the supervisor sends on the slot's socket, suite jobs (the engine,
 * with hooks that announce each case in the slot and send each failure report whole) and
 * reproducers to replay. It never decides a verdict the supervisor keeps when the worker
 * dies. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/internal.h"
#include "softmax_lab_plugin.h"
#include "worker/board.h"
#include "worker/worker.h"

typedef struct serve {
    int fd;
    int slot;
    sml_worker_slot *b;
    FILE *log; /* a memory stream: the engine's failure reports */
    char *logbuf;
    size_t loglen;
    long mark; /* where the current report began in it */
} serve;

static void hk_case_begin(void *ctx, int phase, int64_t index, int level, int prop,
                          double elements) {
    serve *s = ctx;
    sml_worker_slot *b = s->b;
    b->index = index;
    b->level = level;
    b->prop = prop;
    b->elements = elements;
    b->start = sml_prop_now();
    atomic_store(&b->phase, phase);
    atomic_fetch_add(&b->seq, 1);
}

static void hk_case_done(void *ctx, int failed) {
    serve *s = ctx;
    atomic_fetch_add(&s->b->cases, 1);
    if (failed) atomic_fetch_add(&s->b->failed_cases, 1);
}

/* Send what the engine wrote since the last send (a whole report, or a warning line). */
static void send_log(serve *s) {
    fflush(s->log);
    long end = ftell(s->log);
    if (end > s->mark)
        sml_wk_send(s->fd, SML_WK_TEXT, s->logbuf + s->mark, (size_t)(end - s->mark), NULL, 0);
    s->mark = end;
}

static void hk_report_begin(void *ctx) { send_log(ctx); }

static void hk_report_end(void *ctx) { send_log(ctx); }

/* Plugins are loaded by one slot's thread at a time, and only where the worker did not load
 * them at its start (spawn.c passes the supervisor's libraries). */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kernel a job names (NULL: none named, the library loaded all the same): in the
 * registry, or in the C library it came from, loaded now. */
static const sml_kernel *find_kernel(const char *name, const char *library) {
    pthread_mutex_lock(&load_lock);
    const sml_kernel *k = name ? sml_kernel_find(name) : NULL;
    if (!k && library && library[0] && !sml_source_is_python(library)) {
        char why[1024];
        if (sml_load_plugin(library, why, sizeof why) != SML_OK)
            fprintf(stderr, "softmax-lab worker: %s\n", why);
        else if (name)
            k = sml_kernel_find(name);
    }
    pthread_mutex_unlock(&load_lock);
    return k;
}

static void run_job(serve *s, const char *p, size_t len) {
    sml_prop_result res;
    memset(&res, 0, sizeof res);
    sml_worker_job_msg m;
    if (len < sizeof m) _exit(3);
    memcpy(&m, p, sizeof m);
    const char *str[5];
    const char *q = p + sizeof m, *end = p + len;
    for (int i = 0; i < 5; i++) {
        str[i] = q < end ? q : "";
        q += strlen(str[i]) + 1;
    }
    sml_prop_config cfg = m.cfg;
    cfg.save_dir = str[1][0] ? str[1] : NULL;
    cfg.regressions_dir = str[2][0] ? str[2] : NULL;
    cfg.replay_cmd = str[3][0] ? str[3] : NULL;
    cfg.rerun_cmd = str[4][0] ? str[4] : NULL;
    cfg.log = s->log;
    cfg.progress = NULL;
    cfg.tally = NULL;
    /* A shard's run records each case's err/bound for the merge: in a local array here,
     * sent back whole before the result. */
    float *ratios = NULL;
    cfg.case_ratio = NULL;
    if (m.cfg.case_cap > 0 && m.cfg.case_cap <= SML_WK_MAX_RATIOS &&
        (ratios = malloc((size_t)m.cfg.case_cap * sizeof *ratios)) != NULL) {
        for (int64_t i = 0; i < m.cfg.case_cap; i++) ratios[i] = NAN;
        cfg.case_ratio = ratios;
    } else {
        cfg.case_cap = 0;
    }
    cfg.hooks = (sml_prop_hooks){.case_done = hk_case_done,
                                 .report_begin = hk_report_begin,
                                 .report_end = hk_report_end,
                                 .case_begin = hk_case_begin,
                                 .ctx = s};
    atomic_store(&s->b->cases, 0);
    atomic_store(&s->b->failed_cases, 0);
    const sml_kernel *k = find_kernel(m.kernel, str[0]);
    sml_status st;
    if (!k) {
        res.outcome = SML_PROP_ERROR;
        snprintf(res.note, sizeof res.note, "worker: no kernel '%s' (library %s)", m.kernel,
                 str[0][0] ? str[0] : "none");
        st = SML_OK;
    } else {
        st = sml_prop_run(k, (sml_op)m.op, (sml_dtype)m.dtype, &cfg, &res);
    }
    atomic_store(&s->b->phase, SML_PROP_PHASE_IDLE);
    send_log(s);
    res.kernel = NULL;
    if (ratios)
        sml_wk_send(s->fd, SML_WK_RATIOS, ratios, (size_t)cfg.case_cap * sizeof *ratios, NULL, 0);
    free(ratios);
    int32_t status = (int32_t)st;
    sml_wk_send(s->fd, SML_WK_RESULT, &status, sizeof status, &res, sizeof res);
}

static void run_replay(serve *s, const char *p, size_t len) {
    /* path \0 kernel \0 library \0 (the payload is NUL-terminated past len too) */
    const char *str[3];
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
        str[i] = at < len ? p + at : "";
        at += strlen(str[i]) + 1;
    }
    const char *path = str[0], *kname = str[1], *lib = str[2];
    sml_prop_replay_result r;
    memset(&r, 0, sizeof r);
    const sml_kernel *k = find_kernel(kname[0] ? kname : NULL, lib);
    hk_case_begin(s, SML_PROP_PHASE_CASE, -1, 0, 0, 0.0);
    sml_status st = sml_prop_replay(path, k, NULL, NULL, &r);
    atomic_store(&s->b->phase, SML_PROP_PHASE_IDLE);
    int32_t status = (int32_t)st;
    sml_wk_send(s->fd, SML_WK_REPLAYED, &status, sizeof status, &r, sizeof r);
}

/* Serve one slot until its socket closes (or, on slot 0, until QUIT). 1: QUIT came. */
static int serve_slot(serve *s) {
    sml_wk_fault_slot(s->slot);
    s->log = open_memstream(&s->logbuf, &s->loglen);
    if (!s->log) return 0;
    int quit = 0;
    for (;;) {
        uint32_t type;
        char *p;
        size_t len;
        if (sml_wk_recv(s->fd, &type, &p, &len) != 0) break;
        if (type == SML_WK_JOB)
            run_job(s, p, len);
        else if (type == SML_WK_REPLAY)
            run_replay(s, p, len);
        free(p);
        if (type == SML_WK_QUIT) {
            quit = 1;
            break;
        }
    }
    fclose(s->log);
    free(s->logbuf);
    return quit;
}

static void *slot_thread(void *arg) {
    serve_slot(arg);
    return NULL;
}

/* SML_WORKER_FDS=<board fd>,<slots>,<slot 0's socket>,...: 0 ok. */
static int parse_fds(int *bfd, int *n, int *fd) {
    const char *v = getenv("SML_WORKER_FDS");
    int used = 0;
    if (!v || sscanf(v, "%d,%d%n", bfd, n, &used) != 2 || *n < 1 || *n > SML_PROP_MAX_THREADS)
        return -1;
    v += used;
    for (int i = 0; i < *n; i++) {
        if (sscanf(v, ",%d%n", &fd[i], &used) != 1) return -1;
        v += used;
    }
    return 0;
}

int sml_worker_main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    int bfd = -1, n = 0, fd[SML_PROP_MAX_THREADS];
    if (parse_fds(&bfd, &n, fd) != 0) {
        fprintf(stderr, "softmax-lab __worker: started by softmax-lab itself only\n");
        return 2;
    }
    unsetenv("SML_WORKER_FDS");
    size_t bytes = sml_wk_board_bytes(n);
    sml_worker_board *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
    close(bfd);
    if (b == MAP_FAILED || b->nslots != n) return 2;
    sml_wk_fault_install(b);
    static serve s[SML_PROP_MAX_THREADS];
    for (int i = 0; i < n; i++) s[i] = (serve){.fd = fd[i], .slot = i, .b = &b->slot[i]};
    for (int i = 1; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, slot_thread, &s[i]) != 0) return 2;
        pthread_detach(t);
    }
    serve_slot(&s[0]);
    /* The supervisor asked it to quit (or went away): not a judged kernel's exit. */
    sml_wk_fault_quitting();
    return 0;
}
