/* mutant.cuh: what the GPU mutants' kernel files share. Each file (warp_mutants.cu,
 * block_mutants.cu, online_mutants.cu, coop_mutants.cu) is one copy of a production kernel
 * whose kernels take the mutant as a compile-time selector M: every planted bug is an
 * `if constexpr (M == ...)` (or a choice on M) marked `MUTANT gpu_<name>`, so each mutant's
 * instantiation is its parent's code with that one change, and nothing else differs between
 * the mutants of one file. mutants.c lists them; docs/MUTANTS.md explains the table.
 *
 * Also here: the row accesses of the first kernels, which the copies are built from (the
 * production kernels moved on to kernels/common.cuh's sml_chunk loads): a chunk as V separate
 * elements, the whole-or-partial decision a branch per chunk. Two mutants plant their bug in
 * them. */
#ifndef SML_TESTS_MUTANTS_MUTANT_CUH
#define SML_TESTS_MUTANTS_MUTANT_CUH

#include "kernels/common.cuh"
#include "tests/mutants/mutants.h"

/* One value per mutant of the zoo (mutants.c names them gpu_*). */
typedef enum mut_id {
    GPU_NO_MAX,
    GPU_SUM16,
    GPU_PAD_ZERO,
    GPU_OFFSET32,
    GPU_VEC_TAIL,
    GPU_PAST_ROW,
    GPU_LOG_OF_SOFTMAX,
    GPU_ASSUME_ALIGNED,
    GPU_BWD_NO_DOT,
    GPU_BWD_DOT_ROWS,
    GPU_NO_BARRIER,
    GPU_GRID65535,
    GPU_ATOMIC_SUM,
    GPU_NO_RESCALE,
    GPU_INF_MERGE,
    GPU_COOP_NO_WAIT
} mut_id;

/* The C entry point of mutant gpu_<name> (mutants.h declares it): its file's launch<ID>. */
#define MUT_LAUNCHER(name, ID)                                                         \
    extern "C" sml_status sml_mut_launch_##name(sml_handle *h, const sml_problem *p) { \
        return launch<ID>(h, p);                                                       \
    }

/* ---- the first kernels' row accesses ------------------------------------------------------ */

template <typename T, int V>
struct alignas(sizeof(T) * V) mut_vec {
    T v[V];
};

template <int B>
struct mut_word;
template <>
struct mut_word<16> {
    typedef uint4 t;
};
template <>
struct mut_word<8> {
    typedef uint2 t;
};
template <>
struct mut_word<4> {
    typedef unsigned int t;
};
template <>
struct mut_word<2> {
    typedef unsigned short t;
};

/* One chunk of V elements starting at column `col` of a row with `cols` valid columns.
 * A whole chunk is one aligned load (the launcher guarantees alignment when V > 1); a
 * partial or absent chunk is read element by element and padded with `pad`. */
template <typename T, int V, mut_id M>
__device__ __forceinline__ mut_vec<T, V> mut_ld(const T *row, int64_t col, int64_t cols, T pad) {
    mut_vec<T, V> r;
    if (col + V <= cols) {
        typedef typename mut_word<sizeof(T) * V>::t W;
        W w = *reinterpret_cast<const W *>(row + col);
        memcpy(&r, &w, sizeof w);
    } else if constexpr (M == GPU_VEC_TAIL) {
        /* MUTANT gpu_vec_tail: off by one: cols - col elements remain, so a partial chunk
         * reads the row's last element as padding */
        const int64_t tail = cols - col - 1;
#pragma unroll
        for (int j = 0; j < V; j++) r.v[j] = j < tail ? row[col + j] : pad;
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) r.v[j] = (col + j < cols) ? row[col + j] : pad;
    }
    return r;
}

/* Store the valid part of a chunk. STREAM: evict-first (st.global.cs), for kernels that
 * want L2 to keep their input for a second read rather than their output. */
template <typename T, int V, mut_id M, bool STREAM = false>
__device__ __forceinline__ void mut_st(T *row, int64_t col, int64_t cols, const mut_vec<T, V> &r) {
    if (col + V <= cols) {
        typedef typename mut_word<sizeof(T) * V>::t W;
        W w;
        memcpy(&w, &r, sizeof w);
        if (STREAM)
            __stcs(reinterpret_cast<W *>(row + col), w);
        else
            *reinterpret_cast<W *>(row + col) = w;
    } else {
#pragma unroll
        for (int j = 0; j < V; j++)
            /* MUTANT gpu_past_row: <= also writes the element just past the row */
            if (M == GPU_PAST_ROW ? col + j <= cols : col + j < cols) row[col + j] = r.v[j];
    }
}

#endif
