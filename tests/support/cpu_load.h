/* cpu_load.h: busy loops on every core, for tests that must give the same answer on a busy
 * machine as on an idle one. sml_cpu_load_start forks n child processes (n <= 0: one per
 * online core) that spin until sml_cpu_load_stop kills and reaps them; each child dies with
 * the process that started it (PR_SET_PDEATHSIG), holds none of its descriptors (stdin,
 * stdout and stderr on /dev/null, the rest closed, so a pipe reader such as ctest sees the
 * end of the test's output when the test ends) and runs at the default priority. */
#ifndef SML_TESTS_SUPPORT_CPU_LOAD_H
#define SML_TESTS_SUPPORT_CPU_LOAD_H

#include <sys/types.h>

#define SML_CPU_LOAD_MAX 256

typedef struct sml_cpu_load {
    int n;                       /* children running */
    pid_t pid[SML_CPU_LOAD_MAX]; /* their process ids */
} sml_cpu_load;

/* The online cores (sysconf), at least 1. */
int sml_cpu_online(void);

/* Start n busy children (n <= 0: sml_cpu_online(); at most SML_CPU_LOAD_MAX): 0 when all
 * started, -1 when a fork failed (those started are stopped again, l->n is 0). */
int sml_cpu_load_start(sml_cpu_load *l, int n);

/* Kill (SIGKILL) and reap every child; l->n is 0 after. Safe to call twice. */
void sml_cpu_load_stop(sml_cpu_load *l);

#endif
