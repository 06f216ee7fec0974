/* coop_slots.cuh: the partial slots through which the blocks of one row exchange their
 * statistics in `coop` (softmax_coop.cu), and the waiting on them. One header so that the
 * GPU mutant of that exchange (tests/mutants/coop_mutants.cu) uses the same words. */
#ifndef SML_KERNELS_COOP_SLOTS_CUH
#define SML_KERNELS_COOP_SLOTS_CUH

#define COOP_WAIT_NS 10000000000ull /* 10 s: longer means a broken invariant; trap, not hang */

/* A slice's partial: its max and sum (backward: the class bits of its terms, kernels/common.cuh,
 * and its sum), each in a 64-bit word whose upper half is the generation of the launch that wrote
 * it. An aligned 64-bit access is single-copy atomic, so a reader that sees the current generation
 * in a word sees that launch's value beside it, with no fence on either side. A release store or
 * an acquire load would be one, and a fence waits for the thread's copies in flight: with
 * st.release publishing each partial, every exchange waits for the next slices' loads, the slower
 * the more stages are in flight (docs/KERNELS.md, "Measurements behind the design notes"). */
typedef struct coop_slot {
    unsigned long long m, s;
} coop_slot;

static __device__ __forceinline__ void coop_put(unsigned long long *p, float v, unsigned gen) {
    const unsigned long long w = ((unsigned long long)gen << 32) | __float_as_uint(v);
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
static __device__ __forceinline__ unsigned long long coop_get(const unsigned long long *p) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}
static __device__ __forceinline__ unsigned long long coop_now(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}
/* The value of a slot word once it carries `gen`; traps after COOP_WAIT_NS. */
static __device__ __forceinline__ float coop_wait_word(const unsigned long long *p, unsigned gen) {
    unsigned long long w = coop_get(p);
    if ((unsigned)(w >> 32) != gen) {
        const unsigned long long t0 = coop_now();
        do {
            __nanosleep(32);
            if (coop_now() - t0 > COOP_WAIT_NS) __trap();
            w = coop_get(p);
        } while ((unsigned)(w >> 32) != gen);
    }
    return __uint_as_float((unsigned)w);
}

/* A cooperative launch of grid x threads with smem bytes of dynamic shared memory on stream;
 * attr is the one attribute cfg points to, so it must live until the launch. */
static inline void coop_launch_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr,
                                      void *stream, unsigned grid, unsigned threads, size_t smem) {
    *cfg = cudaLaunchConfig_t{};
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeCooperative;
    attr->val.cooperative = 1;
    cfg->attrs = attr;
    cfg->numAttrs = 1;
    cfg->stream = (cudaStream_t)stream;
    cfg->blockDim = dim3(threads, 1, 1);
    cfg->gridDim = dim3(grid, 1, 1);
    cfg->dynamicSmemBytes = smem;
}
#endif
