/* parallel.c: see parallel.h. Threads take chunks from a shared counter, so a slow chunk
 * (a long row) does not hold up the others. */
#include "bench/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

int64_t sml_chunk_rows(int64_t cols) {
    int64_t r = cols > 0 ? ((int64_t)1 << 18) / cols : 1;
    return r < 1 ? 1 : r;
}

int sml_host_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    return (int)n;
}

typedef struct job {
    int64_t rows, chunk_rows, nchunks;
    atomic_llong next;
    sml_chunk_fn fn;
    void *ctx;
} job;

static void *worker(void *arg) {
    job *j = arg;
    for (;;) {
        long long c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nchunks) break;
        int64_t r0 = (int64_t)c * j->chunk_rows;
        int64_t r1 = r0 + j->chunk_rows < j->rows ? r0 + j->chunk_rows : j->rows;
        j->fn(j->ctx, (int64_t)c, r0, r1);
    }
    return NULL;
}

void sml_parallel_rows(int64_t rows, int64_t chunk_rows, int threads, sml_chunk_fn fn, void *ctx) {
    if (rows <= 0) return;
    if (chunk_rows < 1) chunk_rows = 1;
    job j;
    j.rows = rows;
    j.chunk_rows = chunk_rows;
    j.nchunks = (rows + chunk_rows - 1) / chunk_rows;
    atomic_init(&j.next, 0);
    j.fn = fn;
    j.ctx = ctx;
    if (threads > j.nchunks) threads = (int)j.nchunks;
    if (threads > 64) threads = 64;
    pthread_t tid[64];
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[started], NULL, worker, &j) != 0) break;
        started++;
    }
    worker(&j); /* the calling thread works too; with no threads started it does it all */
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
}
