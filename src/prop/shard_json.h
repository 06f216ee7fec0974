/* shard_json.h: what a slice's `check --json` records so that `softmax-lab merge` can join
 * the slices into the result of the whole run (src/analysis/merge.h reads it back):
 *   top level  "shard": {"index": K, "count": N, "ramp": "cases"}
 *   each run   "merge": {"max_cases": M, "planned": P, "plan": "0x..", "ratios": "hex.."}
 * max_cases: the whole run's case count of the kernel, op and dtype; planned: the cases of
 * this slice among them; plan: a hash of every setting that decides the cases (case count,
 * properties, sizes, shrinking), so that slices of different runs are refused; ratios: the
 * agreement err/bound of each case the slice ran, in case order (the j-th is case
 * j * N + K - 1), as the 8 hex digits of its float32 bits, NaN where the case was not judged:
 * the merge computes from them the whole run's p99 and median, over the cases the unsharded
 * run judges (up to agreement's first failure). */
#ifndef SML_PROP_SHARD_JSON_H
#define SML_PROP_SHARD_JSON_H

#include <stdint.h>

#include "json/json_write.h"
#include "prop/suite.h"

/* Give each job a per-case ratio array (cfg.case_ratio, NaN-filled): 0, or -1 when out of
 * memory (nothing left allocated). */
int sml_shard_jobs_prepare(sml_prop_job *jobs, int njobs);
void sml_shard_jobs_free(sml_prop_job *jobs, int njobs);
/* The hash of the settings that decide a run's cases. */
uint64_t sml_shard_plan_hash(const sml_prop_config *c);
void sml_shard_json_head(sml_jw *w, const sml_shard *s);
void sml_shard_json_run(sml_jw *w, const sml_prop_job *job);

#endif
