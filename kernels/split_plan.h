/* split_plan.h: `split`'s launch plan (cluster size, threads, cached chunks, blocks per SM) from
 * the shape and the device's shared memory, in plain C so that tests/unit/test_split_plan.c can
 * pin it on the CPU. kernels/softmax_split.cu holds the kernel and asks the device (static
 * shared memory, occupancy of the cluster); this is the one place its configuration is chosen. */
#ifndef SML_KERNELS_SPLIT_PLAN_H
#define SML_KERNELS_SPLIT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/int_math.h"

#define SML_SPLIT_MAX_THREADS                 1024
#define SML_SPLIT_FIT_BYTES                   (96 * 1024)
#define SML_SPLIT_MIN_CACHED                  0.85 /* of a slice, for a smaller cluster to be preferred */
#define SML_SPLIT_MAX_CLUSTER                 16
#define SML_SPLIT_FWD_CHUNKS_PER_THREAD       8
#define SML_SPLIT_FWD_CHUNKS_PER_THREAD_16BIT 16
#define SML_SPLIT_BWD_CHUNKS_PER_THREAD       4
#define SML_SPLIT_MIN_CHUNKS \
    512 /* a slice this short is not split further: the exchange of
                                    partials would cost more than the slice's loads */

typedef struct sml_split_cfg {
    int C, threads;
    int bps; /* blocks per SM the cache is sized for: 2 by the two-block rule, else 1 or as forced */
    int64_t cap; /* cached chunks per block */
    size_t smem; /* dynamic shared memory per block */
} sml_split_cfg;

/* The bytes a slice should fit in, by element size and direction. 16-bit forward slices are
 * cut to half the bytes: twice the elements per byte to exponentiate, and more, smaller blocks
 * hide that better (clusters of 8 against 4; docs/KERNELS.md, "Measurements behind the
 * design notes"). */
static inline size_t sml_split_fit_bytes(size_t elem_size, int bwd) {
    return !bwd && elem_size == 2 ? SML_SPLIT_FIT_BYTES / 2 : SML_SPLIT_FIT_BYTES;
}

/* Cached chunks per thread when the slice fits: backward, with one tile of y and dy in
 * flight per thread, takes half as many as forward, so twice the threads. 16-bit forward
 * takes twice as many as fp32, so half the threads. fp32 loses with 16, and 16-bit with 32
 * (docs/KERNELS.md, "Measurements behind the design notes"). */
static inline int sml_split_chunks_per_thread(size_t elem_size, int bwd) {
    return bwd              ? SML_SPLIT_BWD_CHUNKS_PER_THREAD
           : elem_size == 2 ? SML_SPLIT_FWD_CHUNKS_PER_THREAD_16BIT
                            : SML_SPLIT_FWD_CHUNKS_PER_THREAD;
}

/* Smallest C whose slice fits `fit` bytes with rows * C >= SMs (or slices already down to
 * SML_SPLIT_MIN_CHUNKS); else cmax with the largest cache the device allows. smem1 is what a
 * block may cache alone on its SM, smemb its share with force_bps blocks per SM (two when not
 * forced). force_* > 0 take that value as given (tuning). */
static inline sml_split_cfg sml_split_size(int64_t rows, int64_t nch, size_t chunk_bytes,
                                           size_t fit, int per_thread, int sms, int cmax,
                                           size_t smem1, size_t smemb, int force_C,
                                           int force_threads, int force_bps) {
    sml_split_cfg pl;
    int C = 1;
    if (force_C > 0)
        C = force_C;
    else
        while (C < cmax) {
            const int64_t per = (nch + C - 1) / C;
            if ((size_t)per * chunk_bytes <= fit &&
                (rows * C >= sms || per <= SML_SPLIT_MIN_CHUNKS))
                break;
            C *= 2;
        }
    int bps = force_bps > 0 ? force_bps : 1;
    const size_t slice = (size_t)((nch + C - 1) / C) * chunk_bytes;
    const int big = slice > SML_SPLIT_FIT_BYTES;
    /* One block that caches its whole slice beats two that each re-read a tail from L2, though
     * it fits half the clusters: 16-bit rows of 2^20 columns (a 128 KB slice) in one block of
     * 1,024 threads are ahead of two blocks that cache 88% (log_softmax level), and so are
     * fp32 2 MiB rows. Where two blocks cache the slice whole too (128 x 917,504, 112 KB), two
     * win (docs/KERNELS.md). Forward only (the launcher's own plan): backward is not measured. */
    const int whole_alone = force_C <= 0 && force_bps <= 0 && slice > smemb && slice <= smem1;
    /* The slice is over SML_SPLIT_FIT_BYTES. Two blocks per SM, each caching SML_SPLIT_MIN_CACHED
     * of its slice in half the SM, come first: one block's wait for the row's partials then hides
     * behind the other's loads, and twice the clusters of 16 fit (docs/KERNELS.md, "Measurements
     * behind the design notes"). */
    if (force_C <= 0 && force_bps <= 0 && big && !whole_alone &&
        (double)smemb >= SML_SPLIT_MIN_CACHED * (double)slice)
        bps = 2;
    /* Else one block per SM: fewer blocks per cluster means more clusters resident (a cluster
     * of 16 fits 7 times on an H100, one of 8 fits 15 times), worth a small uncached tail
     * re-read from L2, not a large one. */
    if (force_C <= 0 && bps == 1 && !whole_alone)
        while (C > 1 && (size_t)((nch + C - 1) / C) * chunk_bytes > SML_SPLIT_FIT_BYTES &&
               (double)smem1 >= SML_SPLIT_MIN_CACHED * (double)((nch + C / 2 - 1) / (C / 2)) *
                                    (double)chunk_bytes &&
               rows * (C / 2) >= sms / 2)
            C /= 2;
    const size_t avail = bps > 1 ? smemb : smem1;
    const int64_t per = (nch + C - 1) / C;
    const size_t want = (size_t)per * chunk_bytes;
    const size_t have = want <= avail ? want : avail / chunk_bytes * chunk_bytes;
    pl.C = C;
    pl.bps = bps;
    pl.cap = (int64_t)(have / chunk_bytes);
    pl.smem = have;
    if (force_threads > 0)
        pl.threads = force_threads;
    else if (have > SML_SPLIT_FIT_BYTES)
        pl.threads = SML_SPLIT_MAX_THREADS / bps;
    else
        pl.threads =
            (int)sml_min64(512, sml_max64(64, sml_pow2_ceil((per + per_thread - 1) / per_thread)));
    return pl;
}

/* Whether a forward block prefetches the next row's second tile into L2 at each row's
 * exchange: only a block alone on its SM, whose cache leaves no room for a second block
 * (smem2: a block's share when two share the SM). Alone, nothing else on the SM loads while
 * the block waits for its cluster's partials; where blocks share an SM, another block's loads
 * cover the wait, and prefetching there costs time (docs/KERNELS.md). */
static inline int sml_split_prefetch(const sml_split_cfg *pl, int bwd, size_t smem2) {
    return !bwd && pl->smem > smem2;
}

#endif
