/* per_device.h: one child process per GPU. A driver that splits a run over the GPUs of a host
 * (check, bench, the edge-shape test) starts one child per device, each seeing only its own
 * GPU (CUDA_VISIBLE_DEVICES), each running one slice of the run (--shard i/n), with its output
 * in a log file; it waits for all of them and then joins their results. The children are the
 * same program: nothing but the arguments and the visible device differ. */
#ifndef SML_IO_PER_DEVICE_H
#define SML_IO_PER_DEVICE_H

#include <stddef.h>
#include <stdio.h>

#define SML_MAX_DEVICES 64

/* "0,1,3": device indices (as this process sees them), each once, each below `count`: 1 with
 * out[0..*n) set, else 0 and why[] says what is wrong. */
int sml_devices_parse(const char *s, int count, int *out, int *n, char *why, size_t why_n);
/* SML_WORKERS_TEST_COUNT=n stands in for n GPUs that are not there, so that the CPU tests run
 * a split over the CPU kernels: n, or 0 when it is not set. */
int sml_gpu_stand_in(void);
/* How many GPUs this process sees: the stand-in count where set, else sml_gpu_count(). */
int sml_visible_gpus(void);
/* A --devices value against `count` GPUs: sml_devices_parse, with "no CUDA device on this
 * host" when count is 0; a refusal's why[] ends with the GPUs this process sees ("; GPUs here:
 * 0 NVIDIA H100 80GB HBM3"), unless the count is a test's stand-in (SML_WORKERS_TEST_COUNT)
 * for GPUs that are not there. */
int sml_devices_choose(const char *s, int count, int stand_in, int *out, int *n, char *why,
                       size_t why_n);
/* The value of CUDA_VISIBLE_DEVICES that shows a child only device `dev` of this process: the
 * dev-th entry of this process's own CUDA_VISIBLE_DEVICES where set, else dev. */
void sml_device_env(int dev, char *buf, size_t n);

/* This program's path (/proc/self/exe) in buf; 0 when it cannot be read. */
int sml_self_exe(char *buf, size_t n);
/* 1 when this program's file name (its path in buf) is `name`. */
int sml_self_exe_is(char *buf, size_t n, const char *name);

/* Start child i (0 <= i < n) as argvs[i] (argvs[i][0] the program to run) with
 * CUDA_VISIBLE_DEVICES set for devices[i] and SML_LOAD unset (the parent passes its plugins
 * with --load), its stdout and stderr into logs[i]; wait for all. codes[i]: the exit status,
 * 128 + signal when killed, 127 when it could not start. 0, or -1 when no child could be
 * started (message in why). */
int sml_per_device_run(char *const *const *argvs, const int *devices, int n,
                       const char *const *logs, int *codes, char *why, size_t why_n);

/* A private directory for the workers' files (mkdtemp under TMPDIR or /tmp) into buf: 0, or
 * -1. sml_per_device_cleanup removes the files named and then the directory. */
int sml_per_device_dir(char *buf, size_t n);
void sml_per_device_cleanup(const char *dir, const char *const *files, int nfiles);
/* Copy a worker's log to f under a header line "--- <label> ---". */
void sml_per_device_print_log(FILE *f, const char *label, const char *log);

#endif
