/* softmax_coop.cu: `coop`, long rows over the whole GPU. A row is cut into S slices and every
 * slice is a work item; a persistent grid of co-resident blocks (a cooperative launch, so all
 * blocks are resident at once) walks the items, keeping each slice in shared memory while the
 * blocks of one row exchange their partial (max, sum) through global memory: each block
 * publishes its slice's partial tagged with a per-launch generation number, waits until all
 * S partials of its row carry that number, combines them in a fixed order (so every block of
 * the row gets the same bits), and writes its slice's output from shared memory. The input is
 * read once and the output written once, as in `split`.
 *
 * Why not `split`: a thread-block cluster is confined to one GPC, so clusters of 8 or 16
 * blocks leave SMs idle (on an H100 a cluster of 16 fits 7 times, 112 of 132 SMs; one of 8
 * fits 15 times, 120 SMs) and a slice that outgrows the cluster's shared memory is re-read
 * from L2. Here any block may hold any slice, so every SM works, and S grows until a slice
 * fits. The price is a round trip through L2 for the partials instead of DSMEM.
 *
 * Loads are asynchronous copies straight into shared memory (cp.async, 16 bytes, no
 * registers), NST stages deep, and the loop is skewed by one item: a block reduces slice k and
 * publishes its partial, then gathers the partials of slice k - 1 (published an iteration
 * ago, so usually there already) and writes slice k - 1, while the copies of slices k + 1 ..
 * k + NST - 2 are in flight. As each slot of slice k - 1 is written out, the copy of slice
 * k + NST - 1 into that slot is issued: the loads of the slice after next start while
 * this one is still being written, not an iteration later, so a block keeps up to two
 * slices of loads in flight with three stages. Each thread copies, reduces and writes the
 * same slots of a stage, so only the reductions need barriers. Rows that fit one stage
 * (S = 1) need no exchange.
 *
 * Measured in `tune` (docs/KERNELS.md, "Measurements behind the design notes"): backward on long rows is ahead of
 * split (and of refilling a stage only at the next iteration's start), so `auto` sends long
 * backward rows here; forward trails split: the forward's per-slice chain (max, exp-sum, publish, gather, exp
 * again) is longer than the memory time it has to hide behind, and more blocks per SM only
 * shorten the slices.
 *
 * Progress: a block of item i waits only for the items of i's row, which are consecutive;
 * when S <= G (G = grid size) every item of the smallest unfinished item's row has been
 * reached by its block (a block only moves on after finishing its earlier items, and
 * prefetching never blocks), so the row completes. That needs every block resident, which
 * the cooperative launch guarantees (it fails rather than launch a grid that does not fit),
 * and S <= G, which the launcher enforces (with S > G a block would wait for a slice that it
 * must itself process later: the first GPU run found that deadlock, as a trap, with 4 stages
 * at fp32 backward 2^20 columns, S = 149 > 132). A row too long for G slices of 3 stages
 * (on an H100 over ~4.9 MB of y and dy backward, 4.7 MB forward) goes to `split`, which
 * re-reads what does not fit.
 * A wait longer than COOP_WAIT_NS (a broken invariant, or a handle's launches overlapping
 * on two streams) traps, which fails the launch instead of hanging the GPU.
 *
 * The partial slots live in the handle (two 64-bit words per slice of the tensor) and carry a
 * generation number that grows by one per launch, so no slot needs clearing between launches:
 * a slot written by an earlier launch never holds the current number. Two launches with one
 * handle must therefore not overlap (the header's rule: one handle per stream of work).
 *
 * Rows that are not 16-byte aligned run with element loads into shared memory (the scalar
 * path: correct, not fast). */
#include <stdlib.h>

#include "kernels/common.cuh"
#include "kernels/coop_slots.cuh"
#include "kernels/launchers.h"
#include "kernels/tuning.h"
#include "core/internal.h"

#define COOP_MAX_THREADS   1024
/* The launcher's plan: one block of 512 threads per SM and 3 stages, the best of the plans
 * measured (4 or 5 stages of smaller slices, 2 blocks per SM, 1,024 threads), with the
 * slot-by-slot refill too (docs/KERNELS.md, "Measurements behind the design notes"). */
#define COOP_THREADS       512
#define COOP_STAGES        3
#define COOP_MIN_STAGES    3 /* one awaiting output, one being reduced, one or more in flight */
#define COOP_MAX_STAGES    5
#define COOP_BLOCKS_PER_SM 1
#define COOP_ITEM_OVERHEAD 256 /* chunks: what one more item costs in the slice-count choice */

/* Which slice an item is, and where. */
typedef struct coop_item {
    int64_t row;
    int64_t sl;
    int mine;    /* chunks in the slice */
    int nval;    /* valid elements in the slice */
    int64_t off; /* element offset of the slice's first element */
} coop_item;

static __device__ __forceinline__ coop_item coop_locate(int64_t it, int64_t S, int64_t per,
                                                        int64_t nch, int64_t cols, int64_t ld,
                                                        int V) {
    coop_item r;
    /* 32-bit division where it fits: the 64-bit one is a long software sequence, per item. */
    r.row = (uint64_t)it <= 0xffffffffu ? (int64_t)((unsigned)it / (unsigned)S) : it / S;
    r.sl = it - r.row * S;
    const int64_t lo = r.sl * per;
    r.mine = (int)sml_min64(per, nch - lo);
    r.nval = (int)sml_min64((int64_t)r.mine * V, cols - lo * V);
    r.off = r.row * ld + lo * V;
    return r;
}

/* Start the copies of one slice (x, and dy backward) into a stage (sml_slot_async per slot). */
template <typename T, int V, bool BWD>
__device__ __forceinline__ void coop_issue(const T *xs, const T *ds, const coop_item &c,
                                           sml_chunk<T, V> *sx, sml_chunk<T, V> *sd, int tid,
                                           int nt) {
    for (int i = tid; i < c.mine; i += nt) sml_slot_async<T, V, BWD>(xs, ds, i, c.nval, sx, sd);
}

/* A slice's statistics, every thread of the block getting the same bits: forward the block's
 * max M of the slice (threads' maxima, one block reduction) and then the compensated sum of
 * exp(x - M) (a second one); backward the sum of dy * y (or dy). Two cheap reductions
 * instead of one merge of (max, sum) pairs, whose butterfly computes two exps per step on the
 * critical path of every item (the forward with the merge trailed the backward, with plain
 * sums, by far; docs/KERNELS.md). Both passes read shared memory, not
 * global. red: two reduction buffers. */
template <typename T, int V, bool BWD, bool LOG>
__device__ __forceinline__ void coop_stats(const sml_chunk<T, V> *sx, const sml_chunk<T, V> *sd,
                                           const coop_item &c, int tid, int nt, float &m, float &s,
                                           float (*red)[64]) {
    m = -FLT_MAX;
    sml_ksum acc = {0.0f, 0.0f};
    if (!BWD) {
        for (int i = tid; i < c.mine; i += nt) {
            const sml_chunk<T, V> a = sx[i]; /* a row's partial last chunk was padded with -inf */
#pragma unroll
            for (int j = 0; j < V; j++) m = fmaxf(m, sml_cv(a, j));
        }
        m = sml_block_max(m, red[0]);
    }
    for (int i = tid; i < c.mine; i += nt) {
        const sml_chunk<T, V> a = sx[i];
        float t = 0.0f;
        if (!BWD) {
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_exp_shift(sml_cv(a, j), m);
        } else {
            const sml_chunk<T, V> b = sd[i]; /* padded with 0 past the row: adds exact zeros */
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_bwd_term(sml_cv(a, j), sml_cv(b, j), LOG);
        }
        sml_kadd(acc, t);
    }
    s = sml_block_sum(sml_kval(acc), red[1]);
    if (BWD) {
        /* The sum's class (common.cuh), from the stage, only when the slice's sum is not
         * finite; its bits are published in the slot's max word, which backward does not use. */
        m = 0.0f;
        if (!isfinite(s)) {
            unsigned cls = 0;
            for (int i = tid; i < c.mine; i += nt) cls |= sml_chunk_class<T, V, LOG>(sx[i], sd[i]);
            cls = sml_block_class(cls);
            s = sml_class_sum(s, cls);
            m = (float)cls;
        }
    }
}

/* The row's statistics from its S published partials: thread j < S waits for slot j (all
 * threads wait in parallel: one round trip to L2, not S), then the row max (one block
 * reduction) and the sum of s_j exp(m_j - max) (another), in a fixed order, the same in every
 * block of the row, so all of them get the same bits. A slice of -inf only (m_j = -FLT_MAX,
 * s_j = 0) adds 0; a +inf anywhere makes the max +inf and its own term exp(inf - inf) = NaN. */
template <bool BWD>
__device__ __forceinline__ void coop_gather(const coop_slot *rs, int64_t S, unsigned gen, int tid,
                                            int nt, float &m, float &s, float (*red)[64]) {
    float pm = -FLT_MAX, ps = 0.0f;
    for (int64_t j = tid; j < S; j += nt) { /* S <= G: one slot per thread unless G > threads */
        const float vm = BWD ? 0.0f : coop_wait_word(&rs[j].m, gen);
        const float vs = coop_wait_word(&rs[j].s, gen);
        if (!BWD)
            sml_merge(pm, ps, vm, vs);
        else
            ps += vs;
    }
    if (!BWD) {
        m = sml_block_max(pm, red[0]);
        s = sml_block_sum(__fmul_rn(ps, sml_exp2((pm - m) * SML_LOG2E)), red[1]);
    } else {
        s = sml_block_sum(ps, red[1]);
        /* The sum's class (common.cuh): the slices' class bits, read only when the row's sum
         * is not finite (a slice's own sum already has its class; two slices' can still meet as
         * an overflow of finite terms and an infinity). */
        if (!isfinite(s)) {
            unsigned cls = 0;
            for (int64_t j = tid; j < S; j += nt) cls |= (unsigned)coop_wait_word(&rs[j].m, gen);
            s = sml_class_sum(s, sml_block_class(cls));
        }
    }
}

/* Items: it = blockIdx.x + k G for k = 0, 1, ...; item k lives in stage k % nst. The loop is
 * skewed by one item: iteration k reduces item k and publishes its partial, then gathers the
 * row statistics of item k - 1 (published an iteration ago, so usually there already) and
 * writes item k - 1, refilling its slots with item k + nst - 1 as it goes. Stages: k - 1
 * awaiting output (then filling), k being reduced, k + 1 .. k + nst - 2 in flight. Progress as
 * in the file comment: an item is published before its block waits for anything of a later
 * item. Copy groups: one per item, in item order (the prologue's nst - 1, then one per
 * iteration, empty past the last item), so item k's is complete once at most nst - 2 newer
 * ones are pending. */
template <typename T, int V, bool BWD, bool LOG>
__global__ void __launch_bounds__(COOP_MAX_THREADS, 1)
    sml_coop_kernel(const T *x, const T *dy, T *out, int64_t rows, int64_t cols, int64_t ld,
                    int64_t S, int64_t per, int nst, coop_slot *slots, unsigned gen) {
    typedef sml_chunk<T, V> VT;
    extern __shared__ __align__(16) unsigned char sml_coop_smem[];
    VT *stage0 = reinterpret_cast<VT *>(sml_coop_smem);
    const int64_t stage_chunks = per * (BWD ? 2 : 1);
    __shared__ float red[4][64]; /* [0..1]: a slice's reductions, [2..3]: the gather's; the
                                    barrier at the top of each iteration separates reuses */

    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t G = gridDim.x, nch = (cols + V - 1) / V, items = rows * S;
    const T *dsrc = BWD ? dy : x;

    /* Prologue: the first nst - 1 items in flight, one copy group each (empty groups too, so
     * that "all but the newest nst - 2 groups" always means "this item's"). */
    for (int j = 0; j < nst - 1; j++) {
        const int64_t it = blockIdx.x + j * G;
        if (it < items) {
            const coop_item c = coop_locate(it, S, per, nch, cols, ld, V);
            VT *sx = stage0 + j * stage_chunks;
            coop_issue<T, V, BWD>(x + c.off, dsrc + c.off, c, sx, sx + per, tid, nt);
        }
        sml_cp_commit();
    }

    coop_item prev = {0, 0, 0, 0, 0};
    float pm = 0.0f, ps = 0.0f; /* item k - 1's own partial (used when S == 1) */
    for (int64_t k = 0, it = blockIdx.x;; k++, it += G) {
        const bool have = it<items, had = k> 0;
        if (!have && !had) break;
        /* The reduction buffers' reuse (a thread's own slots need no barrier). */
        __syncthreads();

        coop_item c = prev;
        float m = 0.0f, s = 0.0f;
        if (have) {
            sml_cp_wait(nst - 2);
            c = coop_locate(it, S, per, nch, cols, ld, V);
            const VT *sx = stage0 + (k % nst) * stage_chunks;
            coop_stats<T, V, BWD, LOG>(sx, sx + per, c, tid, nt, m, s, red);
            if (S > 1 && tid == 0) {
                coop_slot *slot = slots + c.row * S + c.sl;
                coop_put(&slot->m, m, gen); /* backward: the slice's class bits */
                coop_put(&slot->s, s, gen);
            }
        }
        float M = pm, sum = ps;
        if (had && S > 1) coop_gather<BWD>(slots + prev.row * S, S, gen, tid, nt, M, sum, red + 2);
        const float post = BWD ? sum : sml_fwd_post(sum, LOG);
        VT *sx = stage0 + ((k + nst - 1) % nst) * stage_chunks, *sd = sx + per;
        T *os = out + prev.off;
        /* Item k + nst - 1 takes the stage of item k - 1 slot by slot: each slot's copy is
         * issued as soon as this thread has read the slot for its output (at k = 0 the stage
         * is empty). */
        const int wmine = had ? prev.mine : 0;
        const int64_t fill = it + (int64_t)(nst - 1) * G;
        const coop_item f =
            fill < items ? coop_locate(fill, S, per, nch, cols, ld, V) : coop_item{0, 0, 0, 0, 0};
        const T *fx = x + f.off, *fd = dsrc + f.off;
        int i = tid;
        for (; i < wmine && i < f.mine; i += nt) {
            const VT o = sml_chunk_out<T, V, BWD, LOG>(sx[i], BWD ? sd[i] : sx[i], M, post);
            sml_slot_async<T, V, BWD>(fx, fd, i, f.nval, sx, sd);
            sml_cst<T, V, true>(os, (int64_t)i * V, prev.nval, o);
        }
        for (; i < wmine; i += nt)
            sml_cst<T, V, true>(os, (int64_t)i * V, prev.nval,
                                sml_chunk_out<T, V, BWD, LOG>(sx[i], BWD ? sd[i] : sx[i], M, post));
        for (; i < f.mine; i += nt) sml_slot_async<T, V, BWD>(fx, fd, i, f.nval, sx, sd);
        sml_cp_commit();
        if (!have) break;
        prev = c;
        pm = m;
        ps = s;
    }
    sml_cp_wait(0); /* no copy outlives the block (groups past the last item are empty) */
}

/* ---- host ------------------------------------------------------------------------------ */

/* The partial slots and the generation counter, kept in the handle (h->coop). */
typedef struct coop_state {
    coop_slot *slots;
    size_t bytes;
    unsigned gen;
} coop_state;

static void coop_state_release(void *ptr) {
    coop_state *cs = (coop_state *)ptr;
    if (!cs) return;
    if (cs->slots) cudaFree(cs->slots);
    free(cs);
}

/* Slots for n slices, all older than the generation returned. */
static sml_status coop_slots(sml_handle *h, int64_t n, cudaStream_t stream, coop_slot **slots,
                             unsigned *gen) {
    if (!h->coop) {
        coop_state *cs = (coop_state *)calloc(1, sizeof *cs);
        if (!cs) return SML_ERR_OUT_OF_MEMORY;
        h->coop = cs;
        h->coop_release = coop_state_release;
    }
    coop_state *cs = (coop_state *)h->coop;
    const size_t want = (size_t)sml_max64(n, 1) * sizeof(coop_slot);
    sml_status s;
    if (cs->bytes < want) {
        if (cs->slots) {
            s = sml_cuda_ok(cudaFree(cs->slots));
            cs->slots = NULL;
            cs->bytes = 0;
            if (s != SML_OK) return s;
        }
        s = sml_cuda_ok(cudaMalloc((void **)&cs->slots, want));
        if (s != SML_OK) {
            cs->slots = NULL;
            return s;
        }
        cs->bytes = want;
        cs->gen = 0;
        s = sml_cuda_ok(cudaMemsetAsync(cs->slots, 0, want, stream));
        if (s != SML_OK) return s;
    }
    if (cs->gen == 0xffffffffu) { /* wrapped: clear, so no old slot can match */
        s = sml_cuda_ok(cudaMemsetAsync(cs->slots, 0, cs->bytes, stream));
        if (s != SML_OK) return s;
        cs->gen = 0;
    }
    *gen = ++cs->gen;
    *slots = cs->slots;
    return SML_OK;
}

typedef struct coop_plan {
    int threads, nst, bps;
    int64_t S, per, grid;
    size_t smem;
} coop_plan;

/* Slices per row: the fewest that fit a stage, or (up to twice that) a count whose items
 * divide more evenly over the grid: the time is about ceil(items / G) rounds of one slice
 * each, plus a fixed cost per item for the exchange. force_S > 0 takes that count. */
static int64_t coop_slices(int64_t rows, int64_t nch, int64_t cap, int64_t G, int64_t force_S) {
    if (force_S > 0) return force_S;
    const int64_t smin = (nch + cap - 1) / cap;
    int64_t best = smin;
    double tbest = 0.0;
    for (int64_t S = smin; S <= 2 * smin; S++) {
        const int64_t per = (nch + S - 1) / S;
        const double t =
            (double)((rows * S + G - 1) / G) * (double)(per + (S > 1 ? COOP_ITEM_OVERHEAD : 0));
        if (S == smin || t < tbest) {
            tbest = t;
            best = S;
        }
    }
    return best;
}

template <typename T, int V, bool BWD, bool LOG>
static sml_status coop_go(sml_handle *h, const sml_problem *p, const sml_gpu_facts *g, int threads,
                          int nst, int bps, int64_t force_S, int64_t *plan) {
    void (*kern)(const T *, const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t, int,
                 coop_slot *, unsigned) = sml_coop_kernel<T, V, BWD, LOG>;
    const int sms = g->sms, optin = g->smem_optin;
    cudaFuncAttributes fa;
    sml_status s = sml_cuda_ok(cudaFuncGetAttributes(&fa, kern));
    if (s != SML_OK) return s;
    const size_t avail = (size_t)optin - fa.sharedSizeBytes - 1024;
    /* The device's limit, the same on every call and thread (see softmax_split.cu). */
    s = sml_cuda_ok(
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)avail));
    if (s != SML_OK) return s;

    coop_plan pl;
    pl.threads = threads > 0 ? threads : COOP_THREADS;
    pl.bps = bps > 0 ? bps : COOP_BLOCKS_PER_SM;
    if (pl.threads % 32 || pl.threads > COOP_MAX_THREADS || nst > COOP_MAX_STAGES ||
        (nst > 0 && nst < COOP_MIN_STAGES) || pl.bps > 32)
        return SML_ERR_UNSUPPORTED;
    const size_t chunk_bytes = sizeof(sml_chunk<T, V>) * (BWD ? 2 : 1);
    const int64_t nch = (p->cols + V - 1) / V;
    const int64_t G = (int64_t)pl.bps * sms;
    /* The launcher's stage count, or fewer (larger slices) until S <= G; see "Progress". */
    for (pl.nst = nst > 0 ? nst : COOP_STAGES;; pl.nst--) {
        const int64_t cap = (int64_t)(avail / (size_t)pl.bps / (size_t)pl.nst / chunk_bytes);
        pl.S = cap < 1 ? 0 : coop_slices(p->rows, nch, cap, G, force_S);
        if (pl.S >= 1) {
            pl.per = (nch + pl.S - 1) / pl.S;
            pl.S = (nch + pl.per - 1) / pl.per;
            if (pl.per <= cap && pl.per * V < INT32_MAX && pl.S <= G && p->rows <= INT64_MAX / pl.S)
                break;
        }
        if (nst > 0 || pl.nst <= COOP_MIN_STAGES) /* no plan: a row too long to stay on chip */
            return threads > 0 || nst > 0 || bps > 0 || force_S > 0 ? SML_ERR_UNSUPPORTED
                                                                    : sml_launch_split(h, p);
    }
    pl.smem = (size_t)pl.nst * (size_t)pl.per * chunk_bytes;

    int fit = 0;
    s = sml_cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kern, pl.threads, pl.smem));
    if (s != SML_OK) return s;
    if (fit < pl.bps) return SML_ERR_UNSUPPORTED; /* the grid could not be co-resident */
    pl.grid = sml_min64(p->rows * pl.S, (int64_t)pl.bps * sms);

    coop_slot *slots = NULL;
    unsigned gen = 0;
    if (pl.S > 1) {
        s = coop_slots(h, p->rows * pl.S, (cudaStream_t)p->stream, &slots, &gen);
        if (s != SML_OK) return s;
    }
    if (plan) {
        plan[0] = pl.S;
        plan[1] = pl.threads;
        plan[2] = pl.per * V;
        plan[3] = pl.grid;
    }
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    coop_launch_config(&cfg, &attr, p->stream, (unsigned)pl.grid, (unsigned)pl.threads, pl.smem);
    s = sml_cuda_ok(cudaLaunchKernelEx(&cfg, kern, (const T *)p->x, (const T *)p->dy, (T *)p->out,
                                       p->rows, p->cols, p->ld, pl.S, pl.per, pl.nst, slots, gen));
    if (s != SML_OK) return s;
    return sml_launch_ok();
}

template <typename T>
static sml_status coop_typed(sml_handle *h, const sml_problem *p, const sml_gpu_facts *g,
                             int threads, int nst, int bps, int64_t S, int64_t *plan) {
    return SML_DISPATCH_VARIANT(T, p, sml_vec_elems(p), coop_go, h, p, g, threads, nst, bps, S,
                                plan);
}

extern "C" sml_status sml_coop_run(sml_handle *h, const sml_problem *p, int threads, int stages,
                                   int blocks_per_sm, int64_t slices, int64_t plan[4]) {
    sml_gpu_facts g;
    const sml_status s = sml_gpu_facts_get(h, &g);
    if (s != SML_OK) return s;
    if (!g.coop)
        return threads > 0 || stages > 0 || blocks_per_sm > 0 || slices > 0
                   ? SML_ERR_UNSUPPORTED
                   : sml_launch_online(h, p);
    return SML_DISPATCH_DTYPE(p->dtype, coop_typed, h, p, &g, threads, stages, blocks_per_sm,
                              slices, plan);
}

extern "C" sml_status sml_launch_coop(sml_handle *h, const sml_problem *p) {
    return sml_coop_run(h, p, 0, 0, 0, 0, NULL);
}
