/* online_mutants.cu: the two mutants copied from the forward half of kernels/softmax_online.cu
 * (fp32; one row per block, tiles of ONLINE_UNROLL chunks per thread folded into a running
 * (max, compensated sum), the block's partials merged by sml_block_merge):
 *   gpu_no_rescale  when a tile raises a thread's running max, the sum so far is not
 *                   multiplied by exp(m_old - m_new), so the terms of earlier tiles keep their
 *                   larger weight. Only a thread that walks two or more tiles can be wrong,
 *                   i.e. rows longer than one tile of the block (threads x 4 chunks: more than
 *                   8,192 columns on the 16-byte path, more than 2,048 on the scalar path of a
 *                   misaligned row), and only when a later tile's max is larger. Falls back to a
 *                   targeted shape (4 rows of 65,536 ascending logits, the "ramp" family) if the
 *                   standard budget misses it. Killer: agreement.
 *   gpu_inf_merge   the running max and tile max start at -inf instead of -FLT_MAX
 *                   (kernels/common.cuh explains why production uses -FLT_MAX). A thread whose
 *                   tiles so far are all -inf (masked logits, or padding past the row's end)
 *                   keeps m = -inf and adds exp(-inf - -inf) = NaN to its sum; a thread with no
 *                   chunk at all keeps (-inf, 0), and the block merge of two such evaluates
 *                   exp(-inf - -inf) too (common.cuh's merge is only safe for finite maxima).
 *                   Either way the row's sum, and every output, becomes NaN; rows whose every
 *                   thread has a finite logit are still right. Killer: agreement (NaN where the
 *                   reference is finite), on masked rows or rows shorter than the block's
 *                   threads.
 * Every planted line is marked MUTANT with the mutant's name; everything else is the
 * production code. */
#include "tests/mutants/mutant.cuh"

#define ONLINE_MAX_THREADS 512
#define ONLINE_UNROLL      4 /* vectors in flight (the forward value of the production macro) */

template <mut_id M, typename T, int V>
__global__ void __launch_bounds__(ONLINE_MAX_THREADS)
    online_fwd(const T *x, T *out, int64_t rows, int64_t cols, int64_t ld, int log_op) {
    /* MUTANT gpu_inf_merge: the max's identity is -inf, not -FLT_MAX, for the running max and
     * the tile max, so an all -inf tile keeps m = -inf */
    constexpr float lowest = M == GPU_INF_MERGE ? -INFINITY : -FLT_MAX;
    __shared__ float red[2][64];
    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t nch = (cols + V - 1) / V;
    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1) {
        const int64_t off = row * ld;
        const T pad = sml_neg_inf<T>();
        float m = lowest;
        sml_ksum acc = {0.0f, 0.0f};
        for (int64_t j0 = tid; j0 < nch; j0 += (int64_t)ONLINE_UNROLL * nt) {
            mut_vec<T, V> a[ONLINE_UNROLL];
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL; u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                a[u] = mut_ld<T, V, M>(x + off, col, cols, pad);
            }
            float t = 0.0f;
            float cm = lowest;
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL; u++)
#pragma unroll
                for (int j = 0; j < V; j++) cm = fmaxf(cm, sml_f(a[u].v[j]));
            if (cm > m) {
                /* MUTANT gpu_no_rescale: the running sum is not rescaled by exp(m_old - m_new) */
                if constexpr (M != GPU_NO_RESCALE) sml_kscale(acc, exp2f((m - cm) * SML_LOG2E));
                m = cm;
            }
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL; u++) {
                float tu = 0.0f;
#pragma unroll
                for (int j = 0; j < V; j++) tu += sml_exp_shift(sml_f(a[u].v[j]), m);
                t += tu;
            }
            sml_kadd(acc, t);
        }
        float s = sml_kval(acc);
        /* Alternate the reduction buffers between rows: one barrier per reduction. */
        sml_block_merge(m, s, red[parity]);
        const float post = sml_fwd_post(s, log_op);
        for (int64_t j0 = tid; j0 < nch; j0 += (int64_t)ONLINE_UNROLL * nt) {
            mut_vec<T, V> a[ONLINE_UNROLL];
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL; u++) {
                const int64_t col = (j0 + (int64_t)u * nt) * V;
                a[u] = mut_ld<T, V, M>(x + off, col, cols, pad);
            }
#pragma unroll
            for (int u = 0; u < ONLINE_UNROLL; u++) {
                mut_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = sml_from_f<T>(sml_fwd_out(sml_f(a[u].v[j]), m, post, log_op));
                mut_st<T, V, M, true>(out + off, (j0 + (int64_t)u * nt) * V, cols, o);
            }
        }
    }
}

template <mut_id M, typename T, int V>
static sml_status go(const sml_problem *p, int threads, int64_t blocks) {
    online_fwd<M, T, V><<<(unsigned)blocks, threads, 0, (cudaStream_t)p->stream>>>(
        (const T *)p->x, (T *)p->out, p->rows, p->cols, p->ld, p->op == SML_LOG_SOFTMAX);
    return sml_launch_ok();
}

template <mut_id M, typename T>
static sml_status typed(const sml_problem *p, int sms) {
    const int V = sml_vec_elems(p);
    const int64_t chunks = (p->cols + V - 1) / V;
    /* Enough threads for one tile to cover the row when it is short; 512 otherwise. */
    const int threads =
        (int)sml_min64(ONLINE_MAX_THREADS,
                       sml_max64(32, sml_pow2_ceil((chunks + ONLINE_UNROLL - 1) / ONLINE_UNROLL)));
    const int64_t blocks = sml_min64(p->rows, (int64_t)sms * (2048 / threads) * 2);
    if (V == 16 / (int)sizeof(T)) return go<M, T, 16 / sizeof(T)>(p, threads, blocks);
    return go<M, T, 1>(p, threads, blocks);
}

template <mut_id M>
static sml_status launch(sml_handle *h, const sml_problem *p) {
    if (p->dtype != SML_F32 || sml_op_is_backward(p->op)) return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    return typed<M, float>(p, sms);
}

MUT_LAUNCHER(no_rescale, GPU_NO_RESCALE)
MUT_LAUNCHER(inf_merge, GPU_INF_MERGE)
