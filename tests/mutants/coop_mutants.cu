/* coop_mutants.cu: the mutant copied from the forward half of kernels/softmax_coop.cu (fp32),
 * reduced: the same slices over the blocks of a cooperative grid, the same partial slots of
 * (value, generation) words and the same gather by one thread per slice
 * (kernels/coop_slots.cuh), the same two block reductions; without the copy pipeline and the
 * skew (a slice is loaded, reduced, published, gathered and written in one iteration).
 *   gpu_coop_no_wait  the gather reads each slot once instead of waiting until it carries
 *                     this launch's generation, so a slice whose block has not published yet
 *                     counts with whatever the slot holds (zeros here: the slots are cleared
 *                     before each launch). The missing wait for another block is the race the
 *                     generation numbers exist to close.
 * Slices are at most MUT_SLICE elements, so any row longer than that is cut (rows of up to
 * 262,144 columns: S <= 128 <= the grid). Killer: agreement (row sums short by the
 * unpublished slices). Falls back to a targeted shape, 4 x 65,536, if the standard budget
 * draws too few long rows. The planted line is marked MUTANT with the mutant's name. */
#include "core/internal.h"
#include "tests/mutants/mutant.cuh"
#include "kernels/coop_slots.cuh"

#define MUT_THREADS  512
#define MUT_SLICE    2048   /* elements per slice */
#define MUT_MAX_COLS 262144 /* S <= 128 */

template <int V>
__global__ void __launch_bounds__(MUT_THREADS, 1)
    gpu_coop_no_wait_kernel(const float *x, float *out, int64_t rows, int64_t cols, int64_t ld,
                            int64_t S, coop_slot *slots, int log_op) {
    typedef sml_chunk<float, V> VT;
    __shared__ VT sx[MUT_SLICE / V];
    __shared__ float red[4][64];
    const int nt = blockDim.x, tid = threadIdx.x;
    const int64_t per = MUT_SLICE / V, nch = (cols + V - 1) / V;
    const float pad = -INFINITY;
    const unsigned gen = 1;
    for (int64_t it = blockIdx.x; it < rows * S; it += gridDim.x) {
        const int64_t row = it / S, sl = it % S, lo = sl * per;
        const int mine = (int)sml_min64(per, nch - lo);
        const int nval = (int)sml_min64((int64_t)mine * V, cols - lo * V);
        const float *xs = x + row * ld + lo * V;
        float m = -FLT_MAX;
        for (int i = tid; i < mine; i += nt) {
            sx[i] = sml_cld<float, V>(xs, (int64_t)i * V, nval, pad);
            sml_cld_fix<float, V>(xs, (int64_t)i * V, nval, sx[i]);
#pragma unroll
            for (int j = 0; j < V; j++) m = fmaxf(m, sml_cv(sx[i], j));
        }
        m = sml_block_max(m, red[0]);
        sml_ksum acc = {0.0f, 0.0f};
        for (int i = tid; i < mine; i += nt) {
            float t = 0.0f;
#pragma unroll
            for (int j = 0; j < V; j++) t += sml_exp_shift(sml_cv(sx[i], j), m);
            sml_kadd(acc, t);
        }
        float s = sml_block_sum(sml_kval(acc), red[1]);
        coop_slot *rs = slots + row * S;
        if (tid == 0) {
            coop_put(&rs[sl].m, m, gen);
            coop_put(&rs[sl].s, s, gen);
        }
        float pm = -FLT_MAX, ps = 0.0f;
        if (tid < S) {
            /* MUTANT gpu_coop_no_wait: the slot is read once; the production gather waits
             * until both words carry this launch's generation (coop_wait_word). */
            pm = __uint_as_float((unsigned)coop_get(&rs[tid].m));
            ps = __uint_as_float((unsigned)coop_get(&rs[tid].s));
        }
        const float M = sml_block_max(pm, red[2]);
        const float sum = sml_block_sum(__fmul_rn(ps, sml_exp2((pm - M) * SML_LOG2E)), red[3]);
        const float post = sml_fwd_post(sum, log_op);
        for (int i = tid; i < mine; i += nt) {
            float o[V];
#pragma unroll
            for (int j = 0; j < V; j++) o[j] = sml_fwd_out(sml_cv(sx[i], j), M, post, log_op);
            sml_cst<float, V>(out + row * ld + lo * V, (int64_t)i * V, nval,
                              sml_cpack<float, V>(o));
        }
        __syncthreads(); /* sx and red are reused by the next item */
    }
}

template <int V>
static sml_status go(const sml_problem *p, int64_t S, coop_slot *slots, int sms) {
    void (*kern)(const float *, float *, int64_t, int64_t, int64_t, int64_t, coop_slot *, int) =
        gpu_coop_no_wait_kernel<V>;
    int fit = 0;
    sml_status s =
        sml_cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kern, MUT_THREADS, 0));
    if (s != SML_OK) return s;
    if (fit < 1 || S > (int64_t)fit * sms) return SML_ERR_UNSUPPORTED;
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    coop_launch_config(&cfg, &attr, p->stream, (unsigned)sml_min64(p->rows * S, (int64_t)fit * sms),
                       MUT_THREADS, 0);
    s = sml_cuda_ok(cudaLaunchKernelEx(&cfg, kern, (const float *)p->x, (float *)p->out, p->rows,
                                       p->cols, p->ld, S, slots, (int)(p->op == SML_LOG_SOFTMAX)));
    if (s != SML_OK) return s;
    return sml_launch_ok();
}

extern "C" sml_status sml_mut_launch_coop_no_wait(sml_handle *h, const sml_problem *p) {
    if (p->dtype != SML_F32 || sml_op_is_backward(p->op) || p->cols > MUT_MAX_COLS)
        return SML_ERR_UNSUPPORTED;
    int sms = 0;
    sml_status s = sml_device_sms(h, &sms);
    if (s != SML_OK) return s;
    const int64_t S = (p->cols + MUT_SLICE - 1) / MUT_SLICE;
    void *slots = NULL;
    s = sml_handle_scratch(h, (size_t)(p->rows * S) * sizeof(coop_slot), &slots);
    if (s != SML_OK) return s;
    s = sml_cuda_ok(cudaMemsetAsync(slots, 0, (size_t)(p->rows * S) * sizeof(coop_slot),
                                    (cudaStream_t)p->stream));
    if (s != SML_OK) return s;
    if (sml_vec_elems(p) == 4) return go<4>(p, S, (coop_slot *)slots, sms);
    return go<1>(p, S, (coop_slot *)slots, sms);
}
