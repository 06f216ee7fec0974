/* shard.h: one run split into N deterministic slices, so that N processes (N GPUs of a
 * host, N hosts of a CI matrix or a Slurm array) each run one and `softmax-lab merge` joins
 * their results into the result of the whole run. Slice K of N (1-based) holds the cases
 * whose index i has i mod N == K - 1: the indices are spread evenly over the size ramp, so
 * every slice gets its share of the big cases. A case is a pure function of the seed and its
 * index, so the slices together run exactly the cases of the whole run. */
#ifndef SML_PROP_SHARD_H
#define SML_PROP_SHARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most slices a run takes. */
#define SML_SHARD_MAX 4096

typedef struct sml_shard {
    int index; /* 1..count; 0: the whole run (not sharded) */
    int count;
} sml_shard;

/* "K/N" with 1 <= K <= N <= SML_SHARD_MAX, decimal digits only: 1 and *out set; else 0 and
 * why[] says what is wrong (out untouched). */
int sml_shard_parse(const char *s, sml_shard *out, char *why, size_t why_n);
/* 1 when case index i belongs to the slice (always, for the whole run). */
static inline int sml_shard_has(const sml_shard *s, int64_t i) {
    return s->count <= 1 || i % s->count == s->index - 1;
}
/* How many of the indices 0..n-1 belong to the slice. */
int64_t sml_shard_size(const sml_shard *s, int64_t n);
/* SML_SHARD=K/N from the environment into *out when set and not empty: 0 when unset or
 * valid, -1 after a message on stderr naming SML_SHARD (prefixed with `me`). */
int sml_shard_env(const char *me, sml_shard *out);

#ifdef __cplusplus
}
#endif
#endif
