/* call_watch.c: who is told of each kernel call (internal.h). Only a command's worker process
 * sets a watcher (src/worker/command.c), once, before it runs anything; everywhere else the
 * calls go unwatched. */
#include "core/internal.h"

static sml_call_watch_fn the_watch;

void sml_call_watch_set(sml_call_watch_fn fn) { the_watch = fn; }

void sml_call_watch(const sml_kernel *k, const sml_problem *p) {
    if (the_watch) the_watch(k, p);
}
