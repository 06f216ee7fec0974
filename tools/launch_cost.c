/* launch_cost: what one launch call costs the host, per kernel (the figure behind the bench's
 * minimum of 4 launches per GPU sample, docs/BENCHMARKING.md). 20 calls are enqueued back to
 * back and timed on the host clock, before the GPU is waited for; best of 5. Not a test.
 *   gcc -std=c11 -O2 -Iinclude -I/usr/local/cuda/include -c tools/launch_cost.c -o lc.o
 *   nvcc -o launch_cost lc.o BUILD/libsml.a -lcudnn -lm && ./launch_cost */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <time.h>

#include "softmax_lab.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    sml_handle *h = NULL;
    void *x = NULL, *dy = NULL, *out = NULL;
    const size_t bytes = (size_t)600 << 20;
    if (sml_handle_create(&h) != SML_OK || cudaMalloc(&x, bytes) != cudaSuccess ||
        cudaMalloc(&dy, bytes) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess ||
        cudaMemset(x, 0, bytes) != cudaSuccess || cudaMemset(dy, 0, bytes) != cudaSuccess) {
        fprintf(stderr, "launch_cost: no GPU or out of memory\n");
        return 1;
    }
    const struct {
        const char *k;
        sml_op op;
        sml_dtype dt;
        int64_t rows, cols;
    } cs[] = {{"split", SML_SOFTMAX, SML_F16, 128, 1 << 20},
              {"split", SML_SOFTMAX, SML_F16, 1024, 131072},
              {"split", SML_SOFTMAX, SML_F32, 4096, 32768},
              {"split", SML_SOFTMAX_BWD, SML_F16, 4096, 32768},
              {"coop", SML_SOFTMAX_BWD, SML_F32, 1024, 131072},
              {"coop", SML_SOFTMAX_BWD, SML_F16, 128, 1 << 20},
              {"block", SML_SOFTMAX, SML_F32, 4096, 4096},
              {"warp", SML_SOFTMAX, SML_F32, 4096, 128},
              {"online", SML_SOFTMAX, SML_F32, 4096, 4096},
              {"cudnn", SML_SOFTMAX, SML_F32, 4096, 4096},
              {"auto", SML_SOFTMAX, SML_F16, 128, 1 << 20},
              {"auto", SML_SOFTMAX, SML_F32, 4096, 256}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const sml_kernel *k = sml_kernel_find(cs[i].k);
        sml_problem p = {cs[i].op, cs[i].dt, cs[i].rows, cs[i].cols, cs[i].cols, x, dy, out, NULL};
        sml_status s = SML_OK;
        for (int j = 0; j < 3 && s == SML_OK; j++) s = sml_run(k, h, &p);
        if (s != SML_OK || cudaDeviceSynchronize() != cudaSuccess) {
            fprintf(stderr, "launch_cost: %s failed: %s\n", cs[i].k, sml_strerror(s));
            return 1;
        }
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            const double t0 = now();
            for (int j = 0; j < 20; j++) sml_run(k, h, &p);
            const double t1 = now();
            cudaDeviceSynchronize();
            if ((t1 - t0) / 20 < best) best = (t1 - t0) / 20;
        }
        printf("%-6s %-15s %s %lldx%lld: host %.2f us per launch call\n", cs[i].k,
               sml_op_name(cs[i].op), sml_dtype_name(cs[i].dt), (long long)cs[i].rows,
               (long long)cs[i].cols, best * 1e6);
    }
    sml_handle_destroy(h);
    return 0;
}
