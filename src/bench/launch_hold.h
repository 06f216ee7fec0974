/* launch_hold.h: a kernel that holds a stream until the host releases it, so that a GPU
 * sample's launches are all queued before the first one runs and the sample times the GPU,
 * not the host's launch calls (docs/BENCHMARKING.md, "Launch hold"). */
#ifndef SML_BENCH_LAUNCH_HOLD_H
#define SML_BENCH_LAUNCH_HOLD_H

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The release flag: one word of pinned, mapped host memory that the hold kernel polls. */
typedef struct sml_hold {
    volatile unsigned *host; /* the host's view: [0] the release word, [1] holds that timed out;
                                NULL: no hold */
    unsigned *dev;           /* the kernel's view of the same words */
    unsigned gen;            /* the value the last hold kernel waits for */
} sml_hold;

sml_status sml_hold_init(sml_hold *h);
void sml_hold_free(sml_hold *h);
/* Queue a kernel on `stream` that returns once the flag holds a new generation, or after
 * SML_HOLD_MAX_NS: a launch call that waits for the GPU (a synchronising allocation, a full
 * launch queue) would otherwise wait for ever behind the hold. */
sml_status sml_hold_stream(sml_hold *h, void *stream);
/* Let the queued work run. */
void sml_hold_release(sml_hold *h);
/* After the sample's work has finished: 1 if its hold ran out of time (the sample's launch
 * calls did not all return before the GPU started), then the count is cleared for the next. */
int sml_hold_lost(sml_hold *h);

#define SML_HOLD_MAX_NS \
    10000000ull /* 10 ms; a sample's launch calls take the host well under 1 ms */

#ifdef __cplusplus
}
#endif
#endif
