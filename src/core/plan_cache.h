/* plan_cache.h: which plan table `auto` uses on a device, found once per handle and device.
 *
 * Where tables come from, the first that is for the device (its GPU key matches):
 *   1. SML_PLANS=PATH, a user's table (`softmax-lab ... --plans PATH` sets it); SML_PLANS=off:
 *      no table at all, today's rules everywhere;
 *   2. the shipped tables, *.plans in the data directory: share/softmax_lab/plans beside the
 *      library's lib/ directory (installed, or the build tree's copy of data/plans/);
 *   3. none: the rules (kernels/auto_dispatch.h).
 * A table that cannot be read or is refused is passed over (the CLI refuses a bad one with
 * exit 2 before anything runs). */
#ifndef SML_CORE_PLAN_CACHE_H
#define SML_CORE_PLAN_CACHE_H

#include "core/internal.h"
#include "core/plan_table.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SML_PLAN_MAX_DEVICES 16
#define SML_PLAN_SOURCE_LEN  512

/* The lookup's result for one device. */
typedef struct sml_plan_slot {
    int state; /* 0 not looked up yet, 1 `table` is in use, 2 no table */
    sml_plan_table table;
    char source[SML_PLAN_SOURCE_LEN]; /* the file the table came from */
} sml_plan_slot;

struct sml_plan_cache {
    sml_plan_slot dev[SML_PLAN_MAX_DEVICES];
};

/* The table for device `dev` (the current one), looked up on the handle's first ask and then
 * kept there; NULL when there is none (or no GPU). h may be NULL: then `tmp` holds the table,
 * which the caller frees with sml_plan_slot_free. *source (may be NULL) receives its path. */
const sml_plan_table *sml_plans_for(sml_handle *h, int dev, sml_plan_slot *tmp,
                                    const char **source);
void sml_plan_slot_free(sml_plan_slot *s);
void sml_plan_cache_free(struct sml_plan_cache *c);

/* The lookup itself, for a given GPU key: fills slot (state 1 or 2). Reads SML_PLANS and the
 * data directory as above; dir (may be NULL: the library's own) replaces the data directory. */
void sml_plans_lookup(const sml_plan_key *gpu, const char *dir, sml_plan_slot *slot);

/* A folder of the data installed with the library: share/softmax_lab/SUB beside the library's
 * lib/ (the first that exists of the install layout and the build tree's), into buf. 0 when
 * none is found. */
int sml_data_dir(const char *sub, char *buf, size_t n);
/* The shipped tables' directory: sml_data_dir("plans"). */
int sml_plans_data_dir(char *buf, size_t n);

/* The GPU key of device dev (name, SMs, DRAM bytes per SM clock). SML_ERR_NO_DEVICE without
 * CUDA. */
sml_status sml_gpu_plan_key(int dev, sml_plan_key *key);

#ifdef __cplusplus
}
#endif
#endif
