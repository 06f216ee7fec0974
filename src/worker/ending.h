/* ending.h: how a worker ends, in words, and when a launch's time is up (src/worker only). */
#ifndef SML_WORKER_ENDING_H
#define SML_WORKER_ENDING_H

#include <stddef.h>

/* "SIGSEGV" and the like; NULL for a signal it does not name. */
const char *sml_wk_signal_name(int sig);
/* How a process with wait status `status` ended: "SIGSEGV" ("signal N" where it has no name),
 * "exited with status N", or "ended (wait status 0x...)". */
void sml_wk_status_words(int status, char *buf, size_t n);

#endif
