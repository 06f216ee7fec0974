/* exec.h: run one kernel on one case the way the whole suite does, on the CPU or the GPU
 * through the sml_buffer API. The tensors live in one allocation, each in its own region
 * behind a guard of SML_PROP_GUARD bytes, `offset` elements in and with row stride `ld`:
 *
 *   [guard | x | guard][guard | dy | guard][guard | out | guard]   (no out region in place)
 *
 * Everything of the output's region that is not output (guards, the offset, stride padding)
 * holds canary bytes and the output itself is poisoned with 0xFF (NaN in every dtype);
 * everything of an input's region that is not input holds 0xFF, so a kernel that reads
 * padding as data reads NaN. One upload before and one download after each launch (they
 * dominate a GPU case's cost), all on the exec's own stream; the main run of a case also checks that the canaries held and
 * the inputs did not change. The buffer is kept and grown across runs.
 *
 * On the GPU each region also sits between two guard zones of SML_PROP_DEVICE_GUARD (1 MiB)
 * in the device allocation, which the main run poisons before the launch and compares on the
 * device after it (devguard.h); a changed zone counts as changed canaries, named by buffer,
 * side and bytes. After each launch the exec waits for its stream and for the legacy default
 * stream, so a kernel that launched elsewhere has finished before its output is read (no
 * race), and sml_prop_exec_stream_check tells whether it did. On the CPU the regions sit in
 * the guarded arena instead (arena.h). */
#ifndef SML_PROP_EXEC_H
#define SML_PROP_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "prop/arena.h"
#include "prop/case.h"
#include "prop/devguard.h"
#include "softmax_lab.h"

#define SML_PROP_GUARD   256  /* bytes before and after each tensor; keeps 256-byte alignment */
#define SML_PROP_CANARY  0xA5 /* output-side canary byte (0xA5A5 is no plausible output) */
#define SML_PROP_POISON  0xFF /* output poison and input padding: NaN in every dtype */
#define SML_PROP_PIN_MAX ((size_t)256 << 20) /* the largest host buffer page-locked (GPU) */

typedef struct sml_prop_exec {
    sml_device device;
    void *stream; /* its own non-blocking stream (GPU): engine runs on several
                                  host threads must not wait for one another's copies */
    sml_buffer buf;
    unsigned char *img, *back; /* host image uploaded, and what came back */
    size_t cap_img, cap_back;
    int img_pinned, back_pinned; /* page-locked (GPU, up to SML_PROP_PIN_MAX), else malloc's */
    size_t host_bytes;           /* the machine's physical memory, asked once (0: unknown) */
    sml_prop_arena arena;        /* CPU kernels: the guarded slots they run in (arena.h) */
    sml_prop_gpu gpu;            /* GPU: guard zones and the stream check (devguard.h) */
    int held_off; /* the stream check stopped: a held launch did not return in time */
} sml_prop_exec;

typedef struct sml_prop_run_report {
    sml_status status;  /* what the kernel (or the device sync after it) returned */
    int64_t canary_bad; /* bytes of the output allocation changed outside the output */
    int input_modified; /* an input allocation changed (out-of-place runs) */
    int off_stream;     /* the stream check saw the kernel run outside its stream */
    char where[192];    /* the first such change, in words */
} sml_prop_run_report;

sml_status sml_prop_exec_init(sml_prop_exec *e, sml_device d);
void sml_prop_exec_free(sml_prop_exec *e);

/* Run k on case c (its x and dy, its layout) and read the output back dense into `out`
 * (rows * cols elements of c->dtype). With `verify`, read the whole allocation back and
 * report changed canaries and inputs; without, only the output comes back. A failure of the
 * engine itself (allocation, a transfer) is the return value; the kernel's own status is
 * rep->status. */
sml_status sml_prop_exec_run(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                             const sml_prop_case *c, int verify, void *out,
                             sml_prop_run_report *rep);

/* The stream check (GPU; devguard.h): run k on case c again with the exec's stream held.
 * *ran: 1 the output changed while the stream was held (the kernel ran outside the stream it
 * was given), 0 it did not, -1 no verdict (a CPU kernel, the launch failed, or the check
 * could not finish inside the hold: a launch that waits for its own stream returns only when
 * the hold gives up, after which this exec checks no more). The return value is the
 * engine's own failure. A launch that never returns is the worker's deadline's to end. */
sml_status sml_prop_exec_stream_check(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                      const sml_prop_case *c, int *ran);

#endif
