/* ending.c: how and when a worker process ends, in words and in seconds: the deadline of a
 * launch (from the double reference's speed here), and the words of an end ("SIGSEGV",
 * "exited with status 0"). Below everything else in src/worker that says how a worker ended
 * (channel.c, pool.c, command.c). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "reference/reference.h"
#include "prop/prop.h"
#include "worker/ending.h"
#include "worker/worker.h"

/* Seconds per element of the double-precision forward reference here, measured once. */
static double ref_speed;
static pthread_once_t ref_once = PTHREAD_ONCE_INIT;

static void measure_ref(void) {
    const int64_t rows = 256, cols = 1024;
    float *x = malloc((size_t)(rows * cols) * sizeof *x);
    double *y = malloc((size_t)(rows * cols) * sizeof *y);
    ref_speed = 1e-7;
    if (!x || !y) {
        free(x);
        free(y);
        return;
    }
    for (int64_t i = 0; i < rows * cols; i++) x[i] = (float)(i % 97) * 0.1f;
    double t0 = sml_prop_now();
    sml_ref_run(SML_SOFTMAX, SML_F32, rows, cols, cols, x, NULL, y);
    double t = sml_prop_now() - t0;
    if (t > 0) ref_speed = t / (double)(rows * cols);
    free(x);
    free(y);
}

double sml_worker_case_deadline(double elements) {
    pthread_once(&ref_once, measure_ref);
    double d = 200.0 * elements * ref_speed;
    return d > SML_WORKER_FLOOR_S ? d : SML_WORKER_FLOOR_S;
}

const char *sml_wk_signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

void sml_wk_status_words(int status, char *buf, size_t n) {
    if (WIFSIGNALED(status)) {
        const char *name = sml_wk_signal_name(WTERMSIG(status));
        if (name)
            snprintf(buf, n, "%s", name);
        else
            snprintf(buf, n, "signal %d", WTERMSIG(status));
    } else if (WIFEXITED(status)) {
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    } else {
        snprintf(buf, n, "ended (wait status 0x%x)", (unsigned)status);
    }
}
