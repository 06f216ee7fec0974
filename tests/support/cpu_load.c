/* cpu_load.c: see cpu_load.h. */
#define _GNU_SOURCE
#include "cpu_load.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int sml_cpu_online(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SML_CPU_LOAD_MAX ? SML_CPU_LOAD_MAX : (int)n;
}

/* The child: die with the parent, let go of its descriptors, spin. */
_Noreturn static void spin(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(1);
    if (getppid() != parent) _exit(0); /* the parent died before prctl took effect */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    for (int fd = 3; fd < 1024; fd++) close(fd);
    for (volatile unsigned long x = 0;; x++) {}
}

int sml_cpu_load_start(sml_cpu_load *l, int n) {
    l->n = 0;
    if (n <= 0) n = sml_cpu_online();
    if (n > SML_CPU_LOAD_MAX) n = SML_CPU_LOAD_MAX;
    pid_t parent = getpid();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            sml_cpu_load_stop(l);
            return -1;
        }
        if (pid == 0) spin(parent);
        l->pid[l->n++] = pid;
    }
    return 0;
}

void sml_cpu_load_stop(sml_cpu_load *l) {
    for (int i = 0; i < l->n; i++) kill(l->pid[i], SIGKILL);
    for (int i = 0; i < l->n; i++) {
        while (waitpid(l->pid[i], NULL, 0) < 0 && errno == EINTR) {}
    }
    l->n = 0;
}
