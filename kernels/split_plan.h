/* split_plan.h: `split`'s launch plan (cluster size, threads, cached chunks, blocks per SM) from
 * the shape and the device's shared memory, in plain C so that tests/unit/test_split_plan.c can
 * pin it on the CPU. kernels/softmax_split.cu holds the kernel and asks the device (static
 * shared memory, occupancy of the cluster); this is the one place its configuration is chosen. */
#ifndef SML_KERNELS_SPLIT_PLAN_H
#define SML_KERNELS_SPLIT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/int_math.h"

#define SML_SPLIT_MAX_THREADS 1024
#define SML_SPLIT_FIT_BYTES (96 * 1024)
#define SML_SPLIT_MIN_CACHED 0.85 /* of a slice, for a smaller cluster to be preferred */
#define SML_SPLIT_MAX_CLUSTER 16
#define SML_SPLIT_FWD_CHUNKS_PER_THREAD 8
#define SML_SPLIT_FWD_CHUNKS_PER_THREAD_16BIT 16
#define SML_SPLIT_BWD_CHUNKS_PER_THREAD 4
#define SML_SPLIT_MIN_CHUNKS 512 /* a slice this short is not split further: the exchange of
                                    partials would cost more than the slice's loads */

typedef struct sml_split_cfg {
    int C, threads;
    int bps;       /* blocks per SM the cache is sized for: 2 by the two-block rule, else 1 or as forced */
    int64_t cap;   /* cached chunks per block */
    size_t smem;   /* dynamic shared memory per block */
} sml_split_cfg;

/* The bytes a slice should fit in, by element size and direction. 16-bit forward slices are
 * cut to half the bytes: twice the elements per byte to exponentiate, and more, smaller blocks
 * hide that better (run 24: 1024 x 131072 in clusters of 8, 93.5-95.1% of memcpy against
 * 92.0-93.6% in clusters of 4). */
static inline size_t sml_split_fit_bytes(size_t elem_size, int bwd) {
    return !bwd && elem_size == 2 ? SML_SPLIT_FIT_BYTES / 2 : SML_SPLIT_FIT_BYTES;
}

/* Cached chunks per thread when the slice fits: backward, with one tile of y and dy in
 * flight per thread, takes half as many as forward, so twice the threads (run 33, H200:
 * 4096 x 32768 backward 95.1% of memcpy against 89.7-89.8% with 8 per thread). 16-bit
 * forward takes twice as many as fp32, so half the threads (session 8, kernels/tune/plan39
 * and plan40, % of memcpy in `tune`, 16 per thread against 8): 4096 x 32768 H100
 * 93.9-95.1 against 89.7-90.7, H200 89.5-91.0 against 85.9-87.2; 4096 x 65536 H100
 * 95.8-96.1 against 95.0-95.5, H200 87.6-87.7 against 84.3-84.8; 1024 x 131072 H200 85.0
 * against 82.8-83.2, but H100 93.5-93.7 against 95.0-95.1 (in the bench, run 68, 92.1-93.1%
 * against run 59's 92.8-93.1). fp32 lost with 16 (H200 4096 x 32768 89.7-90.0 against
 * 93.1-93.6; 1024 x 131072 on both), and 16-bit with 32 (2 x 64 at 4096 x 32768: 72-82%). */
static inline int sml_split_chunks_per_thread(size_t elem_size, int bwd) {
    return bwd ? SML_SPLIT_BWD_CHUNKS_PER_THREAD
               : elem_size == 2 ? SML_SPLIT_FWD_CHUNKS_PER_THREAD_16BIT : SML_SPLIT_FWD_CHUNKS_PER_THREAD;
}

/* Smallest C whose slice fits `fit` bytes with rows * C >= SMs (or slices already down to
 * SML_SPLIT_MIN_CHUNKS); else cmax with the largest cache the device allows. smem1 is what a
 * block may cache alone on its SM, smemb its share with force_bps blocks per SM (two when not
 * forced). force_* > 0 take that value as given (tuning). */
static inline sml_split_cfg sml_split_size(int64_t rows, int64_t nch, size_t chunk_bytes, size_t fit, int per_thread,
                                           int sms, int cmax, size_t smem1, size_t smemb, int force_C,
                                           int force_threads, int force_bps) {
    sml_split_cfg pl;
    int C = 1;
    if (force_C > 0) C = force_C;
    else
        while (C < cmax) {
            const int64_t per = (nch + C - 1) / C;
            if ((size_t)per * chunk_bytes <= fit && (rows * C >= sms || per <= SML_SPLIT_MIN_CHUNKS))
                break;
            C *= 2;
        }
    int bps = force_bps > 0 ? force_bps : 1;
    const size_t slice = (size_t)((nch + C - 1) / C) * chunk_bytes;
    const int big = slice > SML_SPLIT_FIT_BYTES;
    /* One block that caches its whole slice beats two that each re-read a tail from L2, though
     * it fits half the clusters (v19, runs 138-140, H100, % of a copy kernel, 16-bit 2^20
     * columns, a 128 KB slice: one block of 1,024 threads, 7 clusters, 91.8-93.6 in softmax
     * against 88.6-90.2 for two blocks at 88% cached and 14 clusters; log_softmax level,
     * 88.7-92.2 against 90.0-91.3; at 256 rows 93.6-95.7 against 91.6-92.8; fp32 2 MiB rows
     * 93.2-95.9 against 91.8-94.0). Where two blocks cache it whole too (128 x 917,504, 112 KB),
     * two win: 91.6-92.6 against 83.2-86.2. Forward only (the launcher's own plan): backward was
     * not measured. */
    const int whole_alone = force_C <= 0 && force_bps <= 0 && slice > smemb && slice <= smem1;
    /* The slice is over SML_SPLIT_FIT_BYTES. Two blocks per SM, each caching SML_SPLIT_MIN_CACHED
     * of its slice in half the SM, come first: one block's wait for the row's partials then hides
     * behind the other's loads (measured when that wait was a cluster barrier), and a cluster of
     * 16 fits 14 times on an H100 instead of 7 (run 23, 128 x 2^20 fp16 forward: 89.6% of
     * memcpy, against 84.3% in clusters of 8 with one block per SM). */
    if (force_C <= 0 && force_bps <= 0 && big && !whole_alone &&
        (double)smemb >= SML_SPLIT_MIN_CACHED * (double)slice)
        bps = 2;
    /* Else one block per SM: fewer blocks per cluster means more clusters resident (a cluster
     * of 16 fits 7 times on an H100, one of 8 fits 15 times), worth a small uncached tail
     * re-read from L2, not a large one. */
    if (force_C <= 0 && bps == 1 && !whole_alone)
        while (C > 1 && (size_t)((nch + C - 1) / C) * chunk_bytes > SML_SPLIT_FIT_BYTES &&
               (double)smem1 >= SML_SPLIT_MIN_CACHED * (double)((nch + C / 2 - 1) / (C / 2)) * (double)chunk_bytes &&
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
    if (force_threads > 0) pl.threads = force_threads;
    else if (have > SML_SPLIT_FIT_BYTES) pl.threads = SML_SPLIT_MAX_THREADS / bps;
    else
        pl.threads = (int)sml_min64(512, sml_max64(64, sml_pow2_ceil((per + per_thread - 1) / per_thread)));
    return pl;
}

/* Whether a forward block prefetches the next row's second tile into L2 at each row's exchange
 * (v21): only a block alone on its SM, whose cache leaves no room for a second block (smem2: a
 * block's share when two share the SM). Alone, nothing else on the SM loads while the block
 * waits for its cluster's partials; where blocks share an SM, another block's loads cover the
 * wait, and prefetching there lost 1-1.6 points (run 159, fp32 1024 x 131072). */
static inline int sml_split_prefetch(const sml_split_cfg *pl, int bwd, size_t smem2) {
    return !bwd && pl->smem > smem2;
}

#endif
