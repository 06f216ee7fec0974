/* softmax_split.cu: `split`, long rows and few rows. A row is cut into C contiguous slices,
 * one per block of a thread-block cluster (C = 1, 2, 4, 8 or 16; 16 needs the non-portable
 * cluster size). Each block reads its slice from global memory once, keeping it in shared
 * memory in its own dtype while it accumulates per-thread online (max, sum) statistics;
 * the block's partial goes to a shared slot, the cluster synchronises once, and every block
 * reads all C partials through distributed shared memory (DSMEM) and merges them in the same
 * order, so all blocks agree on the row's max and sum bit for bit. The output is then
 * written from shared memory: x is read once, as in `block`, but the row may be 2^20 columns
 * and 128 such rows still keep the SMs busy.
 *
 * Clusters are persistent (as many as can be resident, each walking rows), and forward
 * overlaps rows: while a block writes row r's output from shared memory it loads row r + 1
 * into the slots it has just written out (each thread only touches the slots it filled, so
 * no barrier), and the first tile of row r + 2 is loaded before row r + 1's exchange of
 * partials, so loads stay in flight through it; a block alone on its SM also prefetches the
 * tile after that into L2 there, as nothing else on the SM keeps DRAM busy while it waits
 * for its cluster. Backward (two tensors per slot) is slower that way, with the next row's
 * loads held in registers. In clusters of 8 or more blocks it instead refills each slot with the next row's copy by cp.async, which needs no registers, as
 * it writes the slot, and reads the next row's statistics from shared memory once the copies
 * have landed; smaller clusters keep two passes per row: write, then read the next slice.
 *
 * When a slice does not fit in shared memory (fp32 rows of 2^20 columns; 16-bit ones cached
 * by two blocks per SM; backward, which keeps y and dy), the block keeps the first `cap`
 * chunks and re-reads the rest when it writes them; those were read last, so they are likely
 * still in L2, and the output is stored evict-first to leave them there. Forward loads the next
 * row's uncached chunks inside the fused loop, a step ahead like the cached ones, so no
 * load is waited for between the loop and the exchange.
 *
 * Sizing (host): C is the smallest cluster size whose slice fits in 96 KB (48 KB for 16-bit
 * forward; two or more blocks per SM, so one block's wait for the row's partials hides behind
 * another's loads)
 * while rows * C fills the SMs (slices of 512 chunks or fewer are not cut further); failing
 * that, up to 16. A forward slice still over 96 KB is then cached by two blocks of 512 threads
 * per SM when half an SM holds 85% of it (a cluster of 16 then fits 14 times on an H100);
 * otherwise one block of 1,024 threads per SM, C halved while the smaller cluster still caches
 * 85% of its slice (a cluster of 16 fits 7 times, 112 SMs; one of 8 fits 15 times, 120 SMs).
 * The plan (sml_split_size, kernels/split_plan.h) is plain C so a CPU test pins it;
 * cudaOccupancyMaxActiveClusters checks the choice. A device without cluster launch gets
 * `online`. Slice indices are 32-bit (a slice of 2^30 elements or more is refused).
 *
 * Partials travel by st.async into every block's slots and are counted on an mbarrier per
 * row parity (a cluster barrier would drain every load and store in flight, see
 * split_xsend). Double-buffering by row parity makes one exchange per row enough: a block
 * can only overwrite a slot two rows later, after every block has sent the partial that
 * follows its reads of it. The cluster synchronises twice per launch: after the mbarriers are
 * initialised and before it exits. */
#include <cooperative_groups.h>

#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/split_plan.h"
#include "kernels/tuning.h"

namespace cg = cooperative_groups;

#define SPLIT_UNROLL(bwd) \
    ((bwd) ? 1 : 2) /* fused loop: chunks per tensor in a tile; two tiles in flight */
#define SPLIT_PASS_UNROLL(bwd) \
    ((bwd) ? 2 : 4) /* a slice read on its own: chunks per tensor in flight */

/* One tile: U chunks per tensor at slots i0 + u * nt of this block's slice (xs, ds point at
 * the slice's first element; nval elements of it are valid), loaded with pad where a slot is
 * not wanted (past `upto`, or `want` false), all loads issued back to back. Slice-relative
 * 32-bit indices keep the address arithmetic (and the registers it needs) small. */
template <typename T, int V, int U, bool BWD>
__device__ __forceinline__ void split_load(const T *xs, const T *ds, int i0, int nt, int upto,
                                           int nval, bool want, T pad, sml_chunk<T, V> *a,
                                           sml_chunk<T, V> *b) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int i = i0 + u * nt;
        const int l =
            want && i < upto ? nval : 0; /* not wanted: reads as past the end, no access */
        a[u] = sml_cld<T, V, int>(xs, i * V, l, pad);
        b[u] = BWD ? sml_cld<T, V, int>(ds, i * V, l, pad) : a[u];
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int i = i0 + u * nt;
        const int l = want && i < upto ? nval : 0;
        sml_cld_fix<T, V, int>(xs, i * V, l, a[u]);
        if (BWD) sml_cld_fix<T, V, int>(ds, i * V, l, b[u]);
    }
}

/* Chunks [from, upto) of this block's slice, from = tid or a later chunk of this thread: each
 * loaded once (UP per tensor in flight), those under ncache kept in shared memory (each thread
 * always owns the same slots), accumulated into the row statistics in tiles of U, UP / U per
 * load tile, none that starts at or past upto (an all-pad tile is not a no-op: sml_kadd of 0
 * can move the compensation into the sum). U = UP is one pass over a slice as 2' reads it. */
template <typename T, int V, int UP, int U, bool BWD, bool LOG>
__device__ __forceinline__ void
split_read_range(const T *xs, const T *ds, int from, int upto, int nt, int ncache, int nval, T pad,
                 sml_chunk<T, V> *cx, sml_chunk<T, V> *cd, float &m, sml_ksum &acc) {
    static_assert(UP % U == 0, "a load tile must hold whole accumulation tiles");
    for (int i0 = from; i0 < upto; i0 += UP * nt) {
        sml_chunk<T, V> a[UP], b[UP];
        split_load<T, V, UP, BWD>(xs, ds, i0, nt, upto, nval, true, pad, a, b);
#pragma unroll
        for (int u = 0; u < UP; u++) {
            const int i = i0 + u * nt;
            if (i < ncache) {
                cx[i] = a[u];
                if (BWD) cd[i] = b[u];
            }
        }
#pragma unroll
        for (int h = 0; h < UP; h += U)
            if (i0 + h * nt < upto) sml_tile_acc<T, V, U, BWD, LOG>(a + h, b + h, m, acc);
    }
}

/* The statistics of a slice's uncached tail (chunks ncache .. mine), read from global memory in
 * tiles of U chunks per tensor; nothing is kept. */
template <typename T, int V, int U, bool BWD, bool LOG>
__device__ __forceinline__ void split_tail_stats(const T *xs, const T *ds, int tid, int nt,
                                                 int mine, int ncache, int nval, T pad, float &m,
                                                 sml_ksum &acc) {
    for (int i0 = ncache + tid; i0 < mine; i0 += U * nt) {
        sml_chunk<T, V> a[U], b[U];
        split_load<T, V, U, BWD>(xs, ds, i0, nt, mine, nval, true, pad, a, b);
        sml_tile_acc<T, V, U, BWD, LOG>(a, b, m, acc);
    }
}

/* The first row a cluster reads (the prologue) when backward refills by cp.async (2''): every
 * chunk once, the first ncache cached, and accumulated in exactly the tiles and the order its
 * successors are, so that a row's bits do not depend on whether it was its cluster's first.
 * A prologue that read in tiles of UP while its successors read in tiles of U would give the
 * same row different bits in different batch positions once there are more rows than
 * clusters (property row_independence, the property suite's tall cases). 2'' reads
 * the tail first, then each cached chunk on its own (U = 1); UP chunks per tensor stay in
 * flight for the cached part. Forward's prologue is split_read_range over the whole slice in
 * tiles of U, as the fused loop reads it (tile i0 holds i0 + u * nt; i0 = tid + k * U * nt
 * while i0 < mine). */
template <typename T, int V, int UP, int U, bool BWD, bool LOG>
__device__ __forceinline__ void
split_read_first(const T *xs, const T *ds, int tid, int nt, int mine, int ncache, int nval, T pad,
                 sml_chunk<T, V> *cx, sml_chunk<T, V> *cd, float &m, sml_ksum &acc) {
    split_tail_stats<T, V, U, BWD, LOG>(xs, ds, tid, nt, mine, ncache, nval, pad, m, acc);
    split_read_range<T, V, UP, U, BWD, LOG>(xs, ds, tid, ncache, nt, ncache, nval, pad, cx, cd, m,
                                            acc);
}

/* Backward in clusters of at least this many blocks refills its slots while writing them
 * (2''); smaller clusters read the next slice after writing (2'). Refilling gains in clusters
 * of 8 and 16 and loses in clusters of 2 and 4 (docs/KERNELS.md, "Measurements behind the design notes"). */
#define SPLIT_REFILL_MIN_C 8

/* ---- the per-row exchange of partials between the blocks of a cluster ----------------------
 * Each block sends its (max, sum) to slot `rank` of every block of the cluster with st.async,
 * whose arrival is counted in bytes on the receiver's mbarrier (one per row parity); a block
 * then waits on its own mbarrier only. cluster.sync() is not used for this: its cluster-scope
 * release compiles to MEMBAR.ALL.GPU, which waits for every load and store the thread has in
 * flight, so the next row's loads issued to run through the barrier, and the streaming stores
 * of the row just written, would be drained at every row. */
static __device__ __forceinline__ unsigned split_smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void split_xbar_init(uint64_t *bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(split_smem_addr(bar)) : "memory");
}
/* The one arrival a phase expects (this block's thread 0) plus the bytes its C partials bring. */
static __device__ __forceinline__ void split_xbar_expect(uint64_t *bar, unsigned bytes) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(split_smem_addr(bar)),
        "r"(bytes)
        : "memory");
}
/* (m, s) into slot `slot` of block `to`'s copy of the array, counted on `to`'s copy of bar. */
static __device__ __forceinline__ void split_xsend(float2 *slot, uint64_t *bar, unsigned to,
                                                   float m, float s) {
    unsigned ra, rb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(ra)
                 : "r"(split_smem_addr(slot)), "r"(to));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(rb)
                 : "r"(split_smem_addr(bar)), "r"(to));
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
            ra),
        "f"(m), "f"(s), "r"(rb)
        : "memory");
}
static __device__ __forceinline__ void split_xwait(uint64_t *bar, unsigned phase) {
    asm volatile("{\n\t.reg .pred done;\n"
                 "SPLIT_XWAIT:\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra SPLIT_XWAIT;\n\t}" ::"r"(split_smem_addr(bar)),
                 "r"(phase)
                 : "memory");
}

/* One step of forward's fused loop (2. in the kernel) at tile i0: the tile at i0 + step of
 * the next row is loaded into nxt, this row's output is written from the slots of tile i0,
 * and cur, that tile of the next row loaded one step earlier, takes their place and joins
 * the statistics. Past ncache (the uncached tail) there is no slot: nothing is written (the
 * tail was written at the row's start) and cur only joins the statistics, so the tail's loads
 * are in flight a step ahead like the rest, not waited for after the loop. WHOLE: the
 * caller has shown every chunk of both tiles whole, cached and wanted, so the accesses go
 * unpredicated and without bounds, pad words or fix-up branches, which took about 5 of the
 * loop's 20 instructions per element at fp16. */
template <typename T, int V, bool LOG, bool WHOLE>
__device__ __forceinline__ void split_fused_step(const T *nxs, T *os, sml_chunk<T, V> *cx, int i0,
                                                 int nt, int ncache, int mine, int nval, bool more,
                                                 T pad, float M, float post, sml_chunk<T, V> *cur,
                                                 sml_chunk<T, V> *nxt, float &m, sml_ksum &acc) {
    constexpr int U = SPLIT_UNROLL(false);
    const int step = U * nt;
    if constexpr (WHOLE) {
#pragma unroll
        for (int u = 0; u < U; u++) nxt[u] = sml_ld_whole<T, V>(nxs + (i0 + step + u * nt) * V);
    } else {
        split_load<T, V, U, false>(nxs, nxs, i0 + step, nt, mine, nval, more, pad, nxt, nxt);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int i = i0 + u * nt;
        if constexpr (WHOLE)
            sml_st_whole<T, V, true>(os + i * V,
                                     sml_chunk_out<T, V, false, LOG>(cx[i], cx[i], M, post));
        else if (i < ncache)
            sml_cst<T, V, true, int>(os, i * V, nval,
                                     sml_chunk_out<T, V, false, LOG>(cx[i], cx[i], M, post));
    }
    if (WHOLE || more) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int i = i0 + u * nt;
            if (WHOLE || i < ncache) cx[i] = cur[u];
        }
        sml_tile_acc<T, V, U, false, LOG>(cur, cur, m, acc);
    }
}

/* The next row's second tile (the first is in flight in registers) into L2, as the block
 * reaches a row's exchange (forward, a block alone on its SM). */
template <typename T, int V>
__device__ __forceinline__ void split_prefetch_tile(const T *nxs, int i0, int nt, int mine) {
#pragma unroll
    for (int u = 0; u < SPLIT_UNROLL(false); u++) {
        const int i = i0 + u * nt;
        if (i < mine) asm volatile("prefetch.global.L2 [%0];" ::"l"(nxs + (int64_t)i * V));
    }
}

/* FUSED: the next row's slice is read while this row's output is written (forward);
 * otherwise read after it, as a separate pass (backward, where the fused loop measured
 * slower: two tensors per slot leave it too few loads in flight). prefetch: the launcher
 * found the block alone on its SM (forward; see split_prefetch_tile). */
template <typename T, int V, bool BWD, bool LOG, bool FUSED>
__global__ void __launch_bounds__(SML_SPLIT_MAX_THREADS)
    sml_split_kernel(const T *x, const T *dy, T *out, int64_t rows, int64_t cols, int64_t ld,
                     int64_t cap, int prefetch) {
    typedef sml_chunk<T, V> VT;
    constexpr int U = SPLIT_UNROLL(BWD);
    static_assert(!(BWD && FUSED),
                  "split_fused_step is forward only: it neither reads nor writes dy's slots");
    static_assert(
        !BWD || U == 1,
        "2'' accumulates its cached slots one at a time, as split_read_first's tiles of U");
    extern __shared__ __align__(16) unsigned char sml_split_smem[];
    VT *cx = reinterpret_cast<VT *>(sml_split_smem);
    VT *cd = cx + cap;
    __shared__ float red[2][64];
    __shared__ float2 part[2][SML_SPLIT_MAX_CLUSTER]; /* [row parity][sender's rank] */
    __shared__ __align__(8) uint64_t xbar[2]; /* [row parity]: the partials of a row have arrived */
    __shared__ float total[2];

    cg::cluster_group cluster = cg::this_cluster();
    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const int64_t ncl = gridDim.x / C, cid = blockIdx.x / C;
    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t nch = (cols + V - 1) / V, per = (nch + C - 1) / C;
    const int64_t lo = sml_min64(per * rank, nch), hi = sml_min64(lo + per, nch);
    /* Slice-relative: `mine` chunks, `nval` valid elements, the first `ncache` cached. */
    const int mine = (int)(hi - lo), nval = (int)(sml_min64(hi * V, cols) - lo * V);
    const int ncache = (int)sml_min64(cap, mine);
    const T pad = BWD ? sml_zero<T>() : sml_neg_inf<T>();
    const int step = U * nt;
    const T *xs0 = x + lo * V, *ds0 = BWD ? dy + lo * V : x;
    T *os0 = out + lo * V;

    /* Statistics of the row being read. */
    float m = -FLT_MAX;
    sml_ksum acc = {0.0f, 0.0f};
    /* The next cached tile to be stored in shared memory, loaded ahead. */
    VT a[U], b[U];

    /* The mbarriers must be initialised, and that seen cluster-wide, before any block sends. */
    if (tid == 0) {
        split_xbar_init(&xbar[0]);
        split_xbar_init(&xbar[1]);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster.sync();

    /* Prologue: the first row's slice, read once, cached, accumulated as its successors will
     * be (the fused loop: tiles of U; 2'': tail first, split_read_first; 2': tiles of UP);
     * then the first tile of the second row, which stays in flight through the first exchange. */
    int64_t row = cid;
    if (row < rows) {
        constexpr int UP = SPLIT_PASS_UNROLL(BWD);
        const T *xr = xs0 + row * ld, *dr = ds0 + row * ld;
        if (FUSED) /* as the fused loop (2.) accumulates the next row */
            split_read_range<T, V, UP, U, BWD, LOG>(xr, dr, tid, mine, nt, ncache, nval, pad, cx,
                                                    cd, m, acc);
        else if (V > 1 && C >= SPLIT_REFILL_MIN_C) /* as 2'' does */
            split_read_first<T, V, UP, U, BWD, LOG>(xr, dr, tid, nt, mine, ncache, nval, pad, cx,
                                                    cd, m, acc);
        else /* as 2' does */
            split_read_range<T, V, UP, UP, BWD, LOG>(xr, dr, tid, mine, nt, ncache, nval, pad, cx,
                                                     cd, m, acc);
    }
    if (FUSED)
        split_load<T, V, U, BWD>(xs0 + (row + ncl) * ld, ds0 + (row + ncl) * ld, tid, nt, mine,
                                 nval, row + ncl < rows, pad, a, b);

    int parity = 0;
    unsigned phase = 0; /* bit p: the phase of xbar[p] to wait for */
    for (; row < rows; row += ncl, parity ^= 1) {
        /* A block alone on its SM has nothing in flight there while it waits for the cluster's
         * partials but the next row's first tile: the second is fetched into L2 now, so DRAM
         * keeps working through the wait and the fused loop's first step finds it there. */
        if (FUSED && prefetch && row + ncl < rows)
            split_prefetch_tile<T, V>(xs0 + (row + ncl) * ld, tid + step, nt, mine);
        /* Cross-block: send the block's partial to every block of the cluster, wait for all C,
         * merge them in rank order, so all blocks agree on the row statistics bit for bit.
         * A slot is written again two rows later only by a block that has received this
         * block's partial of the row in between, which this block sends after the
         * __syncthreads that follows its reads of the slot. */
        float s = sml_kval(acc);
        if (!BWD) {
            sml_block_merge(m, s, red[parity]);
        } else {
            s = sml_block_sum(s, red[parity]);
            /* The sum's class (common.cuh): this block's slice read again only when its sum is
             * not finite (this block has not written its slice of the row yet); the class bits
             * travel in the partial's max word, which backward does not use. */
            m = 0.0f;
            if (!isfinite(s)) {
                const unsigned c = sml_block_class(
                    sml_scan_class<T, LOG>(xs0 + row * ld, ds0 + row * ld, tid, nval, nt));
                s = sml_class_sum(s, c);
                m = (float)c;
            }
        }
        if (C == 1) { /* st.async needs a cluster of two or more (compute-sanitizer memcheck) */
            if (tid == 0) part[parity][0] = make_float2(m, s);
        } else {
            if (tid == 0) split_xbar_expect(&xbar[parity], (unsigned)(C * sizeof(float2)));
            if (tid < C) split_xsend(&part[parity][rank], &xbar[parity], (unsigned)tid, m, s);
        }
        if (tid < 32) {
            if (C > 1) split_xwait(&xbar[parity], (phase >> parity) & 1u);
            float pm = -FLT_MAX, ps = 0.0f;
            if (tid < C) {
                const float2 v = part[parity][tid];
                pm = v.x;
                ps = v.y;
            }
            if (!BWD) {
                sml_warp_merge(pm, ps, 32);
            } else {
                ps = sml_warp_sum(ps, 32); /* the same bits in every lane */
                if (!isfinite(ps))
                    ps = sml_class_sum(ps, sml_warp_class(tid < C ? (unsigned)pm : 0u, 32));
            }
            if (tid == 0) {
                total[0] = pm;
                total[1] = ps;
            }
        }
        __syncthreads();
        phase ^= 1u << parity;
        const float M = total[0];
        const float post = BWD ? total[1] : sml_fwd_post(total[1], LOG);
        const int64_t next = row + ncl;
        const bool more = next < rows;
        const T *xs = xs0 + row * ld, *ds = ds0 + row * ld;
        const T *nxs = xs0 + next * ld, *nds = ds0 + next * ld;
        T *os = os0 + row * ld;
        m = -FLT_MAX;
        acc.s = acc.c = 0.0f;

        /* 1. This row's uncached tail, read last, so likeliest still in L2: re-read, write. */
        for (int i0 = ncache + tid; i0 < mine; i0 += step) {
            VT ta[U], tb[U];
            split_load<T, V, U, BWD>(xs, ds, i0, nt, mine, nval, true, pad, ta, tb);
#pragma unroll
            for (int u = 0; u < U; u++)
                sml_cst<T, V, true, int>(os, (i0 + u * nt) * V, nval,
                                         sml_chunk_out<T, V, BWD, LOG>(ta[u], tb[u], M, post));
        }
        if constexpr (!FUSED) {
            if (V > 1 && C >= SPLIT_REFILL_MIN_C) { /* scalar rows keep 2': no 16-byte copies */
                /* 2''. The cached slots from shared memory, each slot's copy of the next row
                 * issued (cp.async, no registers) as soon as this thread has read the slot for
                 * its output; then the next row's uncached tail from global memory, and the
                 * statistics of its cached part from shared memory once the copies have landed. */
                for (int i = tid; i < ncache; i += nt) {
                    const VT o = sml_chunk_out<T, V, BWD, LOG>(cx[i], BWD ? cd[i] : cx[i], M, post);
                    if (more) sml_slot_async<T, V, BWD>(nxs, nds, i, nval, cx, cd);
                    sml_cst<T, V, true, int>(os, i * V, nval, o);
                }
                sml_cp_commit();
                if (more) {
                    split_tail_stats<T, V, U, BWD, LOG>(nxs, nds, tid, nt, mine, ncache, nval, pad,
                                                        m, acc);
                    sml_cp_wait(0);
#pragma unroll 1 /* unrolled, bf16 softmax_bwd and log_softmax_bwd spilled 4 bytes */
                    for (int i = tid; i < ncache; i += nt) {
                        const VT ta = cx[i], tb = BWD ? cd[i] : cx[i];
                        sml_tile_acc<T, V, 1, BWD, LOG>(&ta, &tb, m, acc);
                    }
                }
            } else {
                /* 2'. The cached slots from shared memory; then the next row's slice. */
                for (int i = tid; i < ncache; i += nt)
                    sml_cst<T, V, true, int>(
                        os, i * V, nval,
                        sml_chunk_out<T, V, BWD, LOG>(cx[i], BWD ? cd[i] : cx[i], M, post));
                if (more)
                    split_read_range<T, V, SPLIT_PASS_UNROLL(BWD), SPLIT_PASS_UNROLL(BWD), BWD,
                                     LOG>(nxs, nds, tid, mine, nt, ncache, nval, pad, cx, cd, m,
                                          acc);
            }
        } else {
            /* 2. The cached slots, one tile at a time: the following tile of the next row is
             * loaded first, this row's output is written from shared memory, and the tile of the
             * next row loaded one step earlier takes its place (a thread only ever touches the
             * slots it filled, so no barrier is needed). Reads and writes stream together and a
             * tile of loads is always in flight. */
            int i0 = tid;
            if constexpr (V > 1) {
                /* While both tiles of a pair of steps, and the next one's loads, lie in whole,
                 * cached chunks of a row that has a successor, no access needs a bound. */
                const int nwhole = (int)sml_min64(ncache, nval / V);
                if (more) {
                    for (; i0 + 2 * step + (U - 1) * nt < nwhole; i0 += 2 * step) {
                        split_fused_step<T, V, LOG, true>(nxs, os, cx, i0, nt, ncache, mine, nval,
                                                          true, pad, M, post, a, b, m, acc);
                        split_fused_step<T, V, LOG, true>(nxs, os, cx, i0 + step, nt, ncache, mine,
                                                          nval, true, pad, M, post, b, a, m, acc);
                    }
                    if (i0 + step + (U - 1) * nt < nwhole) { /* one more whole step, unpaired */
                        split_fused_step<T, V, LOG, true>(nxs, os, cx, i0, nt, ncache, mine, nval,
                                                          true, pad, M, post, a, b, m, acc);
#pragma unroll
                        for (int u = 0; u < U; u++) a[u] = b[u];
                        i0 += step;
                    }
                }
            }
            for (; i0 < mine; i0 += step) { /* the rest of the cached chunks, then the tail */
                split_fused_step<T, V, LOG, false>(nxs, os, cx, i0, nt, ncache, mine, nval, more,
                                                   pad, M, post, a, b, m, acc);
#pragma unroll
                for (int u = 0; u < U; u++) a[u] = b[u];
            }
            /* 3. The first tile of the row after next, in flight through the next exchange. */
            split_load<T, V, U, BWD>(xs0 + (next + ncl) * ld, ds0 + (next + ncl) * ld, tid, nt,
                                     mine, nval, next + ncl < rows, pad, a, b);
        }
    }
    /* Every partial a block was sent has arrived (it waited for each row's), but keep the
     * cluster together until its own sends have landed too. */
    cluster.sync();
}

template <typename T, int V, bool BWD, bool LOG>
static sml_status split_go(const sml_problem *p, const sml_gpu_facts *g, int force_C,
                           int force_threads, int bps, int64_t *plan) {
    void (*kern)(const T *, const T *, T *, int64_t, int64_t, int64_t, int64_t, int) =
        sml_split_kernel<T, V, BWD, LOG, !BWD>;
    const int64_t nch = (p->cols + V - 1) / V;
    const size_t chunk_bytes = sizeof(T) * V * (BWD ? 2 : 1);
    /* By dtype size and direction; the measurements behind them are in kernels/split_plan.h. */
    const size_t fit = sml_split_fit_bytes(sizeof(T), BWD);
    const int per_thread = sml_split_chunks_per_thread(sizeof(T), BWD);
    const int sms = g->sms, optin = g->smem_optin;
    cudaFuncAttributes fa;
    sml_status s = sml_cuda_ok(cudaFuncGetAttributes(&fa, kern));
    if (s != SML_OK) return s;
    /* Leave room for the static shared memory and a little slack. */
    const size_t avail = (size_t)optin - fa.sharedSizeBytes - 1024;
    /* A block's share when the SM holds bps blocks (two unless tuning asks for another count). */
    const size_t share = ((size_t)optin + 1024) / (bps > 1 ? bps : 2) - fa.sharedSizeBytes - 1024;

    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeClusterDimension;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cfg.stream = (cudaStream_t)p->stream;

    /* The maximum is a property of the kernel function, shared by every host thread: set it to
     * the device's limit, the same value on every call and for every plan tried below, never
     * to one plan's size (a thread with a smaller plan would lower it under another thread's
     * launch: "invalid argument", found by the threaded property suite; test_gpu_threads). */
    s = sml_cuda_ok(
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)avail));
    if (s != SML_OK) return s;

    int active = 0;
    sml_split_cfg pl;
    for (int cmax = SML_SPLIT_MAX_CLUSTER; cmax >= 1; cmax /= 2) {
        /* Backward keeps one block per SM unless asked: two were measured on forward only. */
        pl = sml_split_size(p->rows, nch, chunk_bytes, fit, per_thread, sms, cmax, avail, share,
                            force_C, force_threads,
                            bps > 0 ? bps
                            : BWD   ? 1
                                    : 0);
        if (pl.C > SML_SPLIT_MAX_CLUSTER || (pl.C & (pl.C - 1)) ||
            pl.threads > SML_SPLIT_MAX_THREADS || pl.threads < 32 || pl.threads % 32)
            return SML_ERR_UNSUPPORTED;
        if (pl.C > 8) {
            s = sml_cuda_ok(
                cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            if (s != SML_OK) return s;
        }
        cfg.blockDim = dim3(pl.threads, 1, 1);
        cfg.gridDim = dim3(pl.C, 1, 1);
        cfg.dynamicSmemBytes = pl.smem;
        attr[0].val.clusterDim.x = pl.C;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        active = 0;
        if (cudaOccupancyMaxActiveClusters(&active, kern, &cfg) != cudaSuccess) {
            (void)cudaGetLastError();
            active = 0;
        }
        if (active > 0 || pl.C < cmax || force_C > 0)
            break; /* schedulable, or cmax was not the limit */
    }
    if (active <= 0 && force_C > 0) return SML_ERR_UNSUPPORTED;
    if (active <= 0) active = (int)sml_max64(1, sms / pl.C);
    /* Slice indices are 32-bit, and a tile's index may run up to a block's threads times its
     * chunks past the slice before its load is predicated off: half the range leaves room. */
    if ((nch + pl.C - 1) / pl.C * V > INT32_MAX / 2) return SML_ERR_UNSUPPORTED;
    const int64_t clusters = sml_min64(p->rows, sml_min64(active, (int64_t)INT32_MAX / pl.C));
    if (plan) {
        plan[0] = pl.C;
        plan[1] = pl.threads;
        plan[2] = pl.cap;
        plan[3] = active;
    }
    cfg.gridDim = dim3((unsigned)(clusters * pl.C), 1, 1);
    const int prefetch =
        sml_split_prefetch(&pl, BWD, ((size_t)optin + 1024) / 2 - fa.sharedSizeBytes - 1024);
    s = sml_cuda_ok(cudaLaunchKernelEx(&cfg, kern, (const T *)p->x, (const T *)p->dy, (T *)p->out,
                                       p->rows, p->cols, p->ld, pl.cap, prefetch));
    if (s != SML_OK) return s;
    return sml_launch_ok();
}

template <typename T>
static sml_status split_typed(const sml_problem *p, const sml_gpu_facts *g, int C, int threads,
                              int bps, int64_t *plan) {
    return SML_DISPATCH_VARIANT(T, p, sml_vec_elems(p), split_go, p, g, C, threads, bps, plan);
}

extern "C" sml_status sml_split_run(sml_handle *h, const sml_problem *p, int C, int threads,
                                    int blocks_per_sm, int64_t plan[4]) {
    sml_gpu_facts g;
    const sml_status s = sml_gpu_facts_get(h, &g);
    if (s != SML_OK) return s;
    if (!g.clusters) return C > 0 ? SML_ERR_UNSUPPORTED : sml_launch_online(h, p);
    return SML_DISPATCH_DTYPE(p->dtype, split_typed, p, &g, C, threads, blocks_per_sm, plan);
}

extern "C" sml_status sml_launch_split(sml_handle *h, const sml_problem *p) {
    return sml_split_run(h, p, 0, 0, 0, NULL);
}
