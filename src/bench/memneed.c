/* memneed.c: see memneed.h. */
#include "bench/memneed.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "bench/inputs.h"
#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

void sml_bench_case_need(sml_op op, sml_dtype dt, int64_t rows, int64_t cols,
                         int64_t check_max_elems, int cpu_kernels, int gpu_kernels, double *host,
                         double *device) {
    const double tensors = sml_op_is_backward(op) ? 3.0 : 2.0; /* x (and dy), out */
    const double t = (double)rows * (double)cols * (double)sml_dtype_size(dt);
    double checked = (double)rows * (double)cols;
    if (check_max_elems > 0 && rows > 0 && cols > 0) {
        sml_rowset rs;
        sml_rowset_make(rows, cols, check_max_elems, &rs);
        checked = (double)rs.total_rows * (double)cols;
    }
    *host = tensors * t + checked * (double)sizeof(double) + (cpu_kernels ? tensors * t : 0.0);
    *device = gpu_kernels ? tensors * t : 0.0;
}

/* The "VmSize:" of this process, in bytes; 0 when unknown. */
static double vm_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024.0;
}

double sml_host_memory_available(void) {
    double avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        double kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) {
                avail = kb * 1024.0;
                break;
            }
        fclose(f);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        double left = (double)rl.rlim_cur - vm_size();
        if (left < 0) left = 0;
        if (avail <= 0 || left < avail) avail = left > 0 ? left : 1; /* 1: known to be none */
    }
    return avail;
}

/* The GPU memory free now (other processes hold some), 0 when it cannot be asked: then the
 * card's total is the bound. Asked only when GPU backends run, so no context is made for
 * nothing. */
static double gpu_free_bytes(void) {
#ifdef SML_HAVE_CUDA
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) return (double)free_b;
    (void)cudaGetLastError();
#endif
    return 0.0;
}

static void gib(double b, char *buf, size_t n) {
    if (b >= 1073741824.0)
        snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
    else
        snprintf(buf, n, "%.1f MiB", b / 1048576.0);
}

int sml_bench_memory_check(const sml_bench_plan *p, const sml_bench_config *c, int gpu, char *err,
                           size_t errlen) {
    sml_gpu_info info;
    memset(&info, 0, sizeof info);
    if (gpu) sml_gpu_query(&info);
    const double dev_free = gpu ? gpu_free_bytes() : 0.0;
    const double host_avail = sml_host_memory_available(),
                 dev_avail = dev_free > 0 ? dev_free : (double)info.global_mem_bytes;
    for (size_t s = 0; s < p->shapes.n; s++)
        for (int d = 0; d < SML_DTYPE_COUNT; d++) {
            const sml_sweep_shape *sh = &p->shapes.shape[s];
            if (!(sh->dtypes & p->dtypes & (1u << d))) continue;
            for (int o = 0; o < SML_OP_COUNT; o++) {
                if (!(p->ops & (1u << o))) continue;
                int use[2] = {0, 0};
                for (size_t k = 0; k < p->nkernels; k++)
                    if (sml_bench_supports(p->kernels[k], (sml_op)o, (sml_dtype)d, sh->cols, gpu))
                        use[p->kernels[k]->device] = 1;
                if (!use[SML_DEVICE_CPU] && !use[SML_DEVICE_GPU]) continue;
                double host, dev;
                sml_bench_case_need((sml_op)o, (sml_dtype)d, sh->rows, sh->cols, c->check_max_elems,
                                    use[SML_DEVICE_CPU], use[SML_DEVICE_GPU], &host, &dev);
                const int host_short = host_avail > 0 && host > host_avail;
                const int dev_short = dev > 0 && dev_avail > 0 && dev > dev_avail;
                if (!host_short && !dev_short) continue;
                char need[32], have[32];
                gib(host_short ? host : dev, need, sizeof need);
                gib(host_short ? host_avail : dev_avail, have, sizeof have);
                snprintf(err, errlen,
                         "%s %s %lldx%lld needs %s of %s memory, and %s %s (--rows/--cols or "
                         "--sweep: a smaller shape)",
                         sml_op_name((sml_op)o), sml_dtype_name((sml_dtype)d), (long long)sh->rows,
                         (long long)sh->cols, need, host_short ? "host" : "GPU", have,
                         host_short     ? "is available"
                         : dev_free > 0 ? "is free on the GPU"
                                        : "is the GPU's total");
                return 0;
            }
        }
    return 1;
}
