/* exec.h: run one kernel on one case the way the whole suite does, on the CPU or the GPU
 * through the sml_buffer API: each tensor sits in its own allocation behind a guard of
 * SML_PROP_GUARD bytes, `offset` elements in and with row stride `ld`; everything of the
 * output allocation that is not output (guards, the offset, stride padding) holds canary
 * bytes, the output itself is poisoned with 0xFF (NaN in every dtype); everything of an
 * input allocation that is not input holds 0xFF, so a kernel that reads padding as data
 * reads NaN. After the run the output allocation's canaries must be intact and the inputs
 * unchanged. Buffers are kept and grown across runs. */
#ifndef SML_PROP_EXEC_H
#define SML_PROP_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "prop/case.h"
#include "softmax_lab.h"

#define SML_PROP_GUARD 256      /* bytes before and after each tensor; keeps 256-byte alignment */
#define SML_PROP_CANARY 0xA5    /* output-side canary byte (0xA5A5 is no plausible output) */
#define SML_PROP_POISON 0xFF    /* output poison and input padding: NaN in every dtype */

typedef struct sml_prop_exec {
    sml_device device;
    sml_buffer xb, dyb, ob;
    unsigned char *hx, *hdy, *ho, *hcheck; /* host images of the allocations */
    size_t cap_x, cap_dy, cap_o, cap_check;
} sml_prop_exec;

typedef struct sml_prop_run_report {
    sml_status status;           /* what the kernel (or the device sync after it) returned */
    int64_t canary_bad;          /* bytes of the output allocation changed outside the output */
    int input_modified;          /* an input allocation changed (out-of-place runs) */
    char where[192];             /* the first such change, in words */
} sml_prop_run_report;

void sml_prop_exec_init(sml_prop_exec *e, sml_device d);
void sml_prop_exec_free(sml_prop_exec *e);

/* Run k on case c (its x and dy, its layout) and read the output back dense into `out`
 * (rows * cols elements of c->dtype). A failure of the engine itself (allocation, a
 * transfer) is the return value; the kernel's own status is rep->status. */
sml_status sml_prop_exec_run(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                             const sml_prop_case *c, void *out, sml_prop_run_report *rep);

#endif
