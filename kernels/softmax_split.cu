/* softmax_split.cu: `split`, long rows and few rows. A row is cut into C contiguous slices,
 * one per block of a thread-block cluster (C = 1, 2, 4, 8 or 16; 16 needs the non-portable
 * cluster size). Each block streams its slice from global memory once, keeping it in shared
 * memory in its own dtype while it accumulates per-thread online (max, sum) statistics;
 * the block's partial goes to a shared slot, the cluster synchronises once, and every block
 * reads all C partials through distributed shared memory (DSMEM) and merges them in the same
 * order, so all blocks agree on the row's max and sum bit for bit. The output is then
 * written from shared memory: x is read once, as in `block`, but the row may be 2^20 columns
 * and 128 such rows still keep every SM busy (128 rows x 16 blocks).
 *
 * When a slice does not fit in shared memory (fp32 rows of 2^20 columns and beyond, or
 * backward, which keeps y and dy), the block keeps the first `cap` chunks and re-reads the
 * rest in the output pass; those are the chunks it read last, so they are likely still in
 * L2, and the output is stored evict-first to leave them there.
 *
 * Sizing (host): C is the smallest cluster size whose slice fits in 96 KB (two or more blocks
 * per SM, so one block's cluster barrier hides behind another's loads) while rows * C fills
 * the SMs (slices of 512 chunks or fewer are not cut further); failing that, C = 16 (or 8 where 16 cannot be scheduled) with up to ~220 KB of
 * cache and one block per SM. Clusters are persistent: the grid is the number of clusters
 * that can be resident, each walking rows. A device without cluster launch gets `online`.
 *
 * Partials are double-buffered by row parity, so one cluster barrier per row suffices: a
 * block can only overwrite a slot two rows later, after every block has passed the barrier
 * that follows the reads of it. A final barrier keeps shared memory alive for late readers. */
#include <cooperative_groups.h>

#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace cg = cooperative_groups;

#define SPLIT_MAX_THREADS 1024
#define SPLIT_UNROLL(bwd) ((bwd) ? 2 : 4) /* vectors in flight per tensor */
#define SPLIT_FIT_BYTES (96 * 1024)
#define SPLIT_MAX_CLUSTER 16
#define SPLIT_MIN_CHUNKS 512 /* a slice this short is not split further: the cluster barrier
                                would cost more than the slice's loads */

template <typename T, int V, bool BWD>
__global__ void __launch_bounds__(SPLIT_MAX_THREADS)
    sml_split_kernel(const T *x, const T *dy, T *out, int64_t rows, int64_t cols, int64_t ld,
                     int log_op, int64_t cap) {
    typedef sml_vec<T, V> VT;
    extern __shared__ __align__(16) unsigned char sml_split_smem[];
    VT *cx = reinterpret_cast<VT *>(sml_split_smem);
    VT *cd = cx + cap;
    __shared__ float red[2][64];
    __shared__ float part[2][2];
    __shared__ float total[2];

    cg::cluster_group cluster = cg::this_cluster();
    const int64_t C = cluster.num_blocks();
    const int64_t rank = cluster.block_rank();
    const int64_t ncl = gridDim.x / C, cid = blockIdx.x / C;
    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t nch = (cols + V - 1) / V, per = (nch + C - 1) / C;
    const int64_t lo = sml_min64(per * rank, nch), hi = sml_min64(lo + per, nch);
    const int64_t mine = hi - lo, lim = sml_min64(hi * V, cols), ncache = sml_min64(cap, mine);
    const T pad = BWD ? sml_zero<T>() : sml_neg_inf<T>();

    int parity = 0;
    for (int64_t row = cid; row < rows; row += ncl, parity ^= 1) {
        const int64_t off = row * ld;
        /* Pass 1: read the slice once, cache it, accumulate statistics. */
        float m = -FLT_MAX;
        sml_ksum acc = {0.0f, 0.0f};
        for (int64_t i0 = tid; i0 < mine; i0 += (int64_t)SPLIT_UNROLL(BWD) * nt) {
            VT a[SPLIT_UNROLL(BWD)], b[SPLIT_UNROLL(BWD)];
#pragma unroll
            for (int u = 0; u < SPLIT_UNROLL(BWD); u++) {
                const int64_t i = i0 + (int64_t)u * nt, col = (lo + i) * V;
                a[u] = sml_ld<T, V>(x + off, col, lim, pad);
                if (BWD) b[u] = sml_ld<T, V>(dy + off, col, lim, pad);
            }
#pragma unroll
            for (int u = 0; u < SPLIT_UNROLL(BWD); u++) {
                const int64_t i = i0 + (int64_t)u * nt;
                if (i < ncache) {
                    cx[i] = a[u];
                    if (BWD) cd[i] = b[u];
                }
            }
            float t = 0.0f;
            if (!BWD) {
                float cm = -FLT_MAX;
#pragma unroll
                for (int u = 0; u < SPLIT_UNROLL(BWD); u++)
#pragma unroll
                    for (int j = 0; j < V; j++) cm = fmaxf(cm, sml_f(a[u].v[j]));
                if (cm > m) {
                    sml_kscale(acc, exp2f((m - cm) * SML_LOG2E));
                    m = cm;
                }
#pragma unroll
                for (int u = 0; u < SPLIT_UNROLL(BWD); u++) {
                    float tu = 0.0f;
#pragma unroll
                    for (int j = 0; j < V; j++) tu += sml_exp_shift(sml_f(a[u].v[j]), m);
                    t += tu;
                }
            } else {
#pragma unroll
                for (int u = 0; u < SPLIT_UNROLL(BWD); u++) {
                    float tu = 0.0f;
#pragma unroll
                    for (int j = 0; j < V; j++) tu += sml_bwd_term(sml_f(a[u].v[j]), sml_f(b[u].v[j]), log_op);
                    t += tu;
                }
            }
            sml_kadd(acc, t);
        }
        float s = sml_kval(acc);
        if (!BWD) sml_block_merge(m, s, red[parity]);
        else s = sml_block_sum(s, red[parity]);
        if (tid == 0) {
            part[parity][0] = m;
            part[parity][1] = s;
        }
        /* Cross-block: publish, barrier, every block merges all partials in rank order. */
        cluster.sync();
        if (tid < 32) {
            float pm = -FLT_MAX, ps = 0.0f;
            if (tid < C) {
                const float *rp = cluster.map_shared_rank(&part[parity][0], (unsigned)tid);
                pm = rp[0];
                ps = rp[1];
            }
            if (!BWD) sml_warp_merge(pm, ps, 32);
            else ps = sml_warp_sum(ps, 32);
            if (tid == 0) {
                total[0] = pm;
                total[1] = ps;
            }
        }
        __syncthreads();
        const float M = total[0];
        const float post = BWD ? total[1] : sml_fwd_post(total[1], log_op);

        /* Pass 2: the uncached tail first (most recently read, so likeliest in L2), then the
         * cached chunks; each thread revisits exactly the cache slots it filled. */
        for (int64_t i0 = ncache + tid; i0 < mine; i0 += (int64_t)SPLIT_UNROLL(BWD) * nt) {
            VT a[SPLIT_UNROLL(BWD)], b[SPLIT_UNROLL(BWD)];
#pragma unroll
            for (int u = 0; u < SPLIT_UNROLL(BWD); u++) {
                const int64_t col = (lo + i0 + (int64_t)u * nt) * V;
                a[u] = sml_ld<T, V>(x + off, col, lim, pad);
                if (BWD) b[u] = sml_ld<T, V>(dy + off, col, lim, pad);
            }
#pragma unroll
            for (int u = 0; u < SPLIT_UNROLL(BWD); u++) {
                VT o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(BWD ? sml_bwd_out(sml_f(a[u].v[j]), sml_f(b[u].v[j]), post, log_op)
                                               : sml_fwd_out(sml_f(a[u].v[j]), M, post, log_op));
                sml_st<T, V, true>(out + off, (lo + i0 + (int64_t)u * nt) * V, lim, o);
            }
        }
        for (int64_t i = tid; i < ncache; i += nt) {
            const VT a = cx[i];
            VT o;
            if (BWD) {
                const VT b = cd[i];
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(sml_bwd_out(sml_f(a.v[j]), sml_f(b.v[j]), post, log_op));
            } else {
#pragma unroll
                for (int j = 0; j < V; j++) o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(a.v[j]), M, post, log_op));
            }
            sml_st<T, V, true>(out + off, (lo + i) * V, lim, o);
        }
    }
    cluster.sync();
}

typedef struct split_plan {
    int C, threads;
    int64_t cap;   /* cached chunks per block */
    size_t smem;   /* dynamic shared memory per block */
} split_plan;

/* Smallest C whose slice fits SPLIT_FIT_BYTES with rows * C >= SMs (or slices already down
 * to SPLIT_MIN_CHUNKS); else cmax with the largest cache the device allows. */
static split_plan split_size(int64_t rows, int64_t nch, size_t chunk_bytes, int sms, int cmax,
                             size_t smem_avail) {
    split_plan pl;
    int C = 1;
    while (C < cmax) {
        const int64_t per = (nch + C - 1) / C;
        if ((size_t)per * chunk_bytes <= SPLIT_FIT_BYTES && (rows * C >= sms || per <= SPLIT_MIN_CHUNKS))
            break;
        C *= 2;
    }
    const int64_t per = (nch + C - 1) / C;
    const size_t want = (size_t)per * chunk_bytes;
    const size_t have = want <= smem_avail ? want : smem_avail / chunk_bytes * chunk_bytes;
    pl.C = C;
    pl.cap = (int64_t)(have / chunk_bytes);
    pl.smem = have;
    if (have > SPLIT_FIT_BYTES) pl.threads = SPLIT_MAX_THREADS;
    else pl.threads = (int)sml_min64(512, sml_max64(64, sml_pow2_ceil((per + 7) / 8)));
    return pl;
}

template <typename T, int V, bool BWD>
static sml_status split_go(const sml_problem *p, int sms, int dev) {
    void (*kern)(const T *, const T *, T *, int64_t, int64_t, int64_t, int, int64_t) =
        sml_split_kernel<T, V, BWD>;
    const int64_t nch = (p->cols + V - 1) / V;
    const size_t chunk_bytes = sizeof(T) * V * (BWD ? 2 : 1);
    int optin = 0;
    sml_status s = sml_cuda_ok(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (s != SML_OK) return s;
    cudaFuncAttributes fa;
    s = sml_cuda_ok(cudaFuncGetAttributes(&fa, kern));
    if (s != SML_OK) return s;
    /* Leave room for the static shared memory and a little slack. */
    const size_t avail = (size_t)optin - fa.sharedSizeBytes - 1024;

    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeClusterDimension;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cfg.stream = (cudaStream_t)p->stream;

    int active = 0;
    split_plan pl;
    for (int cmax = SPLIT_MAX_CLUSTER; cmax >= 1; cmax /= 2) {
        pl = split_size(p->rows, nch, chunk_bytes, sms, cmax, avail);
        s = sml_cuda_ok(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)pl.smem));
        if (s == SML_OK && pl.C > 8)
            s = sml_cuda_ok(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        if (s != SML_OK) return s;
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
        if (active > 0 || pl.C < cmax) break; /* schedulable, or cmax was not the limit */
    }
    if (active <= 0) active = (int)sml_max64(1, sms / pl.C);
    const int64_t clusters = sml_min64(p->rows, sml_min64(active, (int64_t)INT32_MAX / pl.C));
    cfg.gridDim = dim3((unsigned)(clusters * pl.C), 1, 1);
    const int log_op = p->op == SML_LOG_SOFTMAX || p->op == SML_LOG_SOFTMAX_BWD;
    s = sml_cuda_ok(cudaLaunchKernelEx(&cfg, kern, (const T *)p->x, (const T *)p->dy, (T *)p->out,
                                       p->rows, p->cols, p->ld, log_op, pl.cap));
    if (s != SML_OK) return s;
    return sml_launch_ok();
}

template <typename T>
static sml_status split_typed(const sml_problem *p, int sms, int dev) {
    const bool bwd = sml_op_is_backward(p->op);
    if (sml_vec_elems(p) == 16 / (int)sizeof(T))
        return bwd ? split_go<T, 16 / sizeof(T), true>(p, sms, dev)
                   : split_go<T, 16 / sizeof(T), false>(p, sms, dev);
    return bwd ? split_go<T, 1, true>(p, sms, dev) : split_go<T, 1, false>(p, sms, dev);
}

extern "C" sml_status sml_launch_split(sml_handle *h, const sml_problem *p) {
    int dev = 0, sms = 0, clusters = 0;
    sml_status s = sml_cuda_ok(cudaGetDevice(&dev));
    if (s == SML_OK) s = sml_cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (s == SML_OK) s = sml_cuda_ok(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, dev));
    if (s != SML_OK) return s;
    if (!clusters) return sml_launch_online(h, p);
    return SML_DISPATCH_DTYPE(p->dtype, split_typed, p, sms, dev);
}
