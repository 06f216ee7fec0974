// tune: times kernel configurations side by side on one GPU, cold L2 (buffer sets rotated
// past 4x L2), against a 16-byte copy kernel moving the same bytes and cudaMemcpy.
//   tune PLANFILE      lines: "RxC dtypes ops : variant ..." (dtypes f32,f16,bf16|all;
//                      ops softmax,log_softmax,softmax_bwd,log_softmax_bwd|fwd|bwd|all)
// variants: v1auto v1warp v1block v1online v1split auto cudnn block:T:K:B warp:K:R:B
//           online:T:B split:C:T[:B] coop:T:NST:B:S (kernels/tuning.h; 0 = the launcher's own choice)
// Per case it prints the copy kernel, each variant's median time, GB/s, % of memcpy and %
// of the copy kernel, and the best variant. Not a test: correctness is test_gpu_kernels'
// job; DIFF only flags a variant whose output strays far from the old auto's. Layout knobs
// (environment): TUNE_LD_PAD, TUNE_X_SHIFT, TUNE_OUT_SHIFT (see `layout`). Build:
// tools/build_tune.sh; an example plan: tools/plan_example.txt.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/launchers.h"
#include "kernels/tuning.h"
#include "softmax_lab.h"

#ifdef TUNE_NO_V1 /* build_tune.sh without git: today's kernels stand in for v1 */
#define v1_auto   sml_launch_auto
#define v1_warp   sml_launch_warp
#define v1_block  sml_launch_block
#define v1_online sml_launch_online
#define v1_split  sml_launch_split
#else
extern "C" sml_status v1_auto(sml_handle *, const sml_problem *);
extern "C" sml_status v1_warp(sml_handle *, const sml_problem *);
extern "C" sml_status v1_block(sml_handle *, const sml_problem *);
extern "C" sml_status v1_online(sml_handle *, const sml_problem *);
extern "C" sml_status v1_split(sml_handle *, const sml_problem *);
#endif

#define CK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(3);                                                                        \
        }                                                                                   \
    } while (0)

static const size_t POOL = (size_t)800 << 20; // per tensor pool
static char *gx, *gdy, *gout, *gref;
static double memcpy_gbs;

__device__ __forceinline__ uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
template <typename T>
__device__ T cvt(float v);
template <>
__device__ float cvt<float>(float v) {
    return v;
}
template <>
__device__ __half cvt<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 cvt<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <typename T>
__device__ float tof(T v);
template <>
__device__ float tof<float>(float v) {
    return v;
}
template <>
__device__ float tof<__half>(__half v) {
    return __half2float(v);
}
template <>
__device__ float tof<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <typename T>
__global__ void fill_normal(T *p, size_t n, uint64_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t a = mix(seed ^ (i * 2)), b = mix(seed ^ (i * 2 + 1));
        float u1 = ((a >> 40) + 1) * (1.0f / 16777217.0f), u2 = (b >> 40) * (1.0f / 16777216.0f);
        p[i] = cvt<T>(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
    }
}
/* Elements of a (kernel) and b (reference) that disagree beyond a loose tolerance. */
template <typename T>
__global__ void diff_count(const T *a, const T *b, size_t n, float rel, float absf,
                           unsigned long long *bad) {
    unsigned long long c = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float x = tof<T>(a[i]), y = tof<T>(b[i]);
        if (isnan(x) != isnan(y) ||
            (!isnan(x) && !(fabsf(x - y) <= rel * fmaxf(fabsf(x), fabsf(y)) + absf)))
            c++;
    }
    if (c) atomicAdd(bad, c);
}
__global__ void copy16(uint4 *__restrict__ d, const uint4 *__restrict__ s, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = s[i];
}

struct Case {
    int64_t rows, cols;
    sml_dtype dt;
    sml_op op;
    size_t bytes; // one tensor
    int sets;
};

static size_t esz(sml_dtype d) { return d == SML_F32 ? 4 : 2; }

static void fill(sml_dtype dt, void *p, size_t n, uint64_t seed) {
    if (dt == SML_F32)
        fill_normal<float><<<1024, 256>>>((float *)p, n, seed);
    else if (dt == SML_F16)
        fill_normal<__half><<<1024, 256>>>((__half *)p, n, seed);
    else
        fill_normal<__nv_bfloat16><<<1024, 256>>>((__nv_bfloat16 *)p, n, seed);
    CK(cudaGetLastError());
}

typedef sml_status (*runner)(sml_handle *, const sml_problem *, const std::string &, int64_t *);

static sml_status run_variant(sml_handle *h, const sml_problem *p, const std::string &v,
                              int64_t *plan) {
    int a = 0, b = 0, c = 0;
    if (v == "v1auto") return v1_auto(h, p);
    if (v == "v1warp") return v1_warp(h, p);
    if (v == "v1block") return v1_block(h, p);
    if (v == "v1online") return v1_online(h, p);
    if (v == "v1split") return v1_split(h, p);
    if (v == "auto") return sml_launch_auto(h, p);
    if (v == "cudnn") return sml_launch_cudnn(h, p);
    if (sscanf(v.c_str(), "block:%d:%d:%d", &a, &b, &c) == 3) return sml_block_run(h, p, a, b, c);
    if (sscanf(v.c_str(), "warp:%d:%d:%d", &a, &b, &c) == 3) return sml_warp_run(h, p, a, b, c);
    if (sscanf(v.c_str(), "online:%d:%d", &a, &b) == 2) return sml_online_run(h, p, a, b);
    if (sscanf(v.c_str(), "split:%d:%d:%d", &a, &b, &c) == 3)
        return sml_split_run(h, p, a, b, c, plan);
    if (sscanf(v.c_str(), "split:%d:%d", &a, &b) == 2) return sml_split_run(h, p, a, b, 0, plan);
    int d = 0;
    if (sscanf(v.c_str(), "coop:%d:%d:%d:%d", &a, &b, &c, &d) == 4)
        return sml_coop_run(h, p, a, b, c, d, plan);
    return SML_ERR_INVALID_ARG;
}

/* Layout knobs for placement experiments (tools/ab_layouts.sh; default 0), set once by
 * main() from the environment, which refuses bad values: TUNE_LD_PAD elements added to each
 * row's stride, TUNE_X_SHIFT and TUNE_OUT_SHIFT bytes (a multiple of 256) added to where x and
 * out start in their pools. */
static struct { long long ld_pad, x_shift, out_shift; } layout;
/* A knob from the environment: 0 when unset; false unless a whole number in 0..2^30 that is a
 * multiple of `align`. */
static bool env_knob(const char *name, long long align, long long *out) {
    const char *v = getenv(name);
    *out = 0;
    if (!v || !*v) return true;
    char *end = nullptr;
    *out = strtoll(v, &end, 10);
    return !*end && *out >= 0 && *out <= (1LL << 30) && *out % align == 0;
}
static int64_t ld_of(const Case &c) { return c.cols + layout.ld_pad; }

static sml_problem problem(const Case &c, int set) {
    sml_problem p;
    memset(&p, 0, sizeof p);
    p.op = c.op;
    p.dtype = c.dt;
    p.rows = c.rows;
    p.cols = c.cols;
    p.ld = ld_of(c);
    p.x = gx + (size_t)set * c.bytes + layout.x_shift;
    p.dy = sml_op_is_backward(c.op) ? gdy + (size_t)set * c.bytes : NULL;
    p.out = gout + (size_t)set * c.bytes + layout.out_shift;
    return p;
}

/* Median over samples of the mean time of n back-to-back launches (buffer sets rotated);
 * *spread, when asked: (6th - 2nd of the 7 sorted samples) / median, so a line's median can be
 * read with its spread. TUNE_SAMPLE_MS (default 1.5) sets a sample's length. */
template <typename F>
static double time_it(F launch, int sets, double *spread = nullptr) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int set = 0;
    for (int i = 0; i < 2; i++) {
        launch(set);
        set = (set + 1) % sets;
    }
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(e0));
    for (int i = 0; i < 3; i++) {
        launch(set);
        set = (set + 1) % sets;
    }
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    const char *env = getenv("TUNE_SAMPLE_MS");
    const double env_ms = env ? atof(env) : 0, sample_ms = env_ms > 0 ? env_ms : 1.5;
    int n = (int)std::min(2000.0, std::max(3.0, sample_ms / (ms / 3)));
    std::vector<double> t;
    for (int s = 0; s < 7; s++) {
        CK(cudaEventRecord(e0));
        for (int i = 0; i < n; i++) {
            launch(set);
            set = (set + 1) % sets;
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms / n);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    if (spread) *spread = (t[5] - t[1]) / t[3];
    return t[3];
}

static const char *DTN[] = {"f32", "f16", "bf16"};
static const char *OPN[] = {"sm", "lsm", "sm_bwd", "lsm_bwd"};

static void run_case(sml_handle *h, Case c, const std::vector<std::string> &vars) {
    const size_t n = (size_t)c.rows * ld_of(c);
    c.bytes = (n * esz(c.dt) + 255) / 256 * 256;
    const int bwd = sml_op_is_backward(c.op);
    const size_t per_set = c.bytes * (bwd ? 3 : 2);
    const size_t shift = (size_t)std::max(layout.x_shift, layout.out_shift);
    c.sets = (int)std::max<size_t>(1, std::min<size_t>((POOL - std::min(shift, POOL)) / c.bytes,
                                                       ((size_t)220 << 20) / per_set + 1));
    if (c.bytes + shift > POOL) {
        printf("skip %lldx%lld: too big\n", (long long)c.rows, (long long)c.cols);
        return;
    }
    // inputs: x normal; backward: y = forward(x) by the old auto, dy normal
    for (int s = 0; s < c.sets; s++) {
        fill(c.dt, (char *)problem(c, s).x, n, 0x1234 + s * 7919 + c.cols);
        if (bwd) {
            fill(c.dt, gdy + (size_t)s * c.bytes, n, 0x9876 + s * 7919 + c.cols);
            Case f = c;
            f.op = c.op == SML_SOFTMAX_BWD ? SML_SOFTMAX : SML_LOG_SOFTMAX;
            sml_problem p = problem(f, s);
            p.out = (void *)p.x; // in place
            if (v1_auto(h, &p) != SML_OK) {
                printf("fwd for bwd inputs failed\n");
                exit(3);
            }
        }
    }
    CK(cudaDeviceSynchronize());
    const double traffic = (double)c.rows * c.cols * esz(c.dt) * (bwd ? 3 : 2);
    // reference output (set 0) by the old auto, on the same poison as each variant's output,
    // so that the columns of a padded stride (TUNE_LD_PAD), which no kernel writes, agree
    {
        sml_problem p = problem(c, 0);
        p.out = gref;
        CK(cudaMemset(gref, 0xFF, c.bytes));
        if (v1_auto(h, &p) != SML_OK) {
            printf("reference failed\n");
            exit(3);
        }
        CK(cudaDeviceSynchronize());
    }
    // copy kernel moving the same bytes: traffic/2 read + traffic/2 written
    const size_t cbytes = (size_t)(traffic / 2) / 16 * 16;
    const int csets = (int)std::max<size_t>(
        1, std::min<size_t>(POOL / cbytes, ((size_t)220 << 20) / (2 * cbytes) + 1));
    double tc = time_it(
        [&](int s) {
            size_t v = cbytes / 16;
            copy16<<<(unsigned)((v + 255) / 256), 256>>>(
                (uint4 *)(gout + (size_t)s * cbytes), (const uint4 *)(gx + (size_t)s * cbytes), v);
        },
        csets);
    CK(cudaGetLastError());
    char head[96];
    snprintf(head, sizeof head, "%lldx%lld %s %s", (long long)c.rows, (long long)c.cols, DTN[c.dt],
             OPN[c.op]);
    printf("%-26s %-16s %9.2f us %7.0f GB/s %5.1f%%mc\n", head, "copyk", tc * 1e3,
           traffic / tc / 1e6, 100.0 * traffic / tc / 1e6 / memcpy_gbs);
    std::string best;
    double tbest = 1e30;
    unsigned long long *bad;
    CK(cudaMalloc(&bad, sizeof *bad));
    for (const std::string &v : vars) {
        int64_t plan[4] = {0, 0, 0, 0};
        sml_problem p0 = problem(c, 0);
        CK(cudaMemset(p0.out, 0xFF, c.bytes));
        sml_status st = run_variant(h, &p0, v, plan);
        cudaError_t ce = cudaDeviceSynchronize();
        if (st != SML_OK || ce != cudaSuccess) {
            if (st == SML_ERR_UNSUPPORTED) continue;
            printf("%-26s %-16s FAILED %s / %s\n", head, v.c_str(), sml_strerror(st),
                   cudaGetErrorString(ce));
            if (ce != cudaSuccess) exit(4);
            continue;
        }
        CK(cudaMemset(bad, 0, sizeof *bad));
        const float rel = c.dt == SML_F32 ? 1e-4f : c.dt == SML_F16 ? 4e-3f : 3e-2f;
        const float absf = bwd ? 1e-4f : 1e-6f;
        if (c.dt == SML_F32)
            diff_count<float>
                <<<512, 256>>>((const float *)p0.out, (const float *)gref, n, rel, absf, bad);
        else if (c.dt == SML_F16)
            diff_count<__half>
                <<<512, 256>>>((const __half *)p0.out, (const __half *)gref, n, rel, absf, bad);
        else
            diff_count<__nv_bfloat16><<<512, 256>>>((const __nv_bfloat16 *)p0.out,
                                                    (const __nv_bfloat16 *)gref, n, rel, absf, bad);
        unsigned long long nb = 0;
        CK(cudaMemcpy(&nb, bad, sizeof nb, cudaMemcpyDeviceToHost));
        double spread = 0;
        double t = time_it(
            [&](int s) {
                sml_problem p = problem(c, s);
                run_variant(h, &p, v, NULL);
            },
            c.sets, &spread);
        CK(cudaGetLastError());
        char extra[96] = "";
        if (plan[0])
            snprintf(extra, sizeof extra,
                     v.compare(0, 4, "coop") == 0 ? " [S=%lld thr=%lld slice=%lld grid=%lld]"
                                                  : " [C=%lld thr=%lld cap=%lld act=%lld]",
                     (long long)plan[0], (long long)plan[1], (long long)plan[2],
                     (long long)plan[3]);
        printf("%-26s %-16s %9.2f us %7.0f GB/s %5.1f%%mc %5.1f%%ck +-%.1f%%%s%s\n", head,
               v.c_str(), t * 1e3, traffic / t / 1e6, 100.0 * traffic / t / 1e6 / memcpy_gbs,
               100.0 * tc / t, 50.0 * spread, extra,
               nb > (unsigned long long)(n / 1000) ? "  DIFF!" : "");
        if (v != "cudnn" && t < tbest && nb <= n / 1000) {
            tbest = t;
            best = v;
        }
    }
    CK(cudaFree(bad));
    printf("%-26s BEST %-16s %9.2f us %7.0f GB/s %5.1f%%mc %5.1f%%ck\n\n", head, best.c_str(),
           tbest * 1e3, traffic / tbest / 1e6, 100.0 * traffic / tbest / 1e6 / memcpy_gbs,
           100.0 * tc / tbest);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tune PLANFILE\n");
        return 2;
    }
    const bool pad_ok = env_knob("TUNE_LD_PAD", 1, &layout.ld_pad);
    const bool x_ok = env_knob("TUNE_X_SHIFT", 256, &layout.x_shift);
    const bool out_ok = env_knob("TUNE_OUT_SHIFT", 256, &layout.out_shift);
    if (!pad_ok || !x_ok || !out_ok) {
        fprintf(stderr, "tune: TUNE_LD_PAD, TUNE_X_SHIFT and TUNE_OUT_SHIFT must be whole numbers "
                        "from 0 to 2^30, "
                        "the shifts multiples of 256\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    CK(cudaMalloc(&gx, POOL));
    CK(cudaMalloc(&gdy, POOL));
    CK(cudaMalloc(&gout, POOL));
    CK(cudaMalloc(&gref, POOL));
    sml_handle *h;
    sml_handle_create(&h);
    { // memcpy bandwidth, 512 MiB
        const size_t mb = (size_t)512 << 20;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaMemcpy(gout, gx, mb, cudaMemcpyDeviceToDevice));
        std::vector<double> t;
        for (int i = 0; i < 7; i++) {
            CK(cudaEventRecord(e0));
            CK(cudaMemcpy(gout, gx, mb, cudaMemcpyDeviceToDevice));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        memcpy_gbs = 2.0 * mb / t[3] / 1e6;
        cudaDeviceProp pr;
        CK(cudaGetDeviceProperties(&pr, 0));
        printf("device %s, %d SMs, L2 %d MiB; cudaMemcpy D2D 512 MiB: %.0f GB/s\n\n", pr.name,
               pr.multiProcessorCount, pr.l2CacheSize >> 20, memcpy_gbs);
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line)) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = 0;
        long long r, cc;
        char dts[64], ops[128];
        if (sscanf(line, "%lldx%lld %63s %127s", &r, &cc, dts, ops) != 4) continue;
        std::vector<std::string> vars;
        for (char *t = strtok(colon + 1, " \t\r\n"); t; t = strtok(NULL, " \t\r\n"))
            vars.push_back(t);
        for (int d = 0; d < 3; d++) {
            if (strcmp(dts, "all") && !strstr((std::string(",") + dts + ",").c_str(),
                                              (std::string(",") + DTN[d] + ",").c_str()))
                continue;
            for (int o = 0; o < 4; o++) {
                static const char *ON[] = {"softmax", "log_softmax", "softmax_bwd",
                                           "log_softmax_bwd"};
                bool take = !strcmp(ops, "all") || (!strcmp(ops, "fwd") && o < 2) ||
                            (!strcmp(ops, "bwd") && o >= 2) ||
                            strstr((std::string(",") + ops + ",").c_str(),
                                   (std::string(",") + ON[o] + ",").c_str());
                if (!take) continue;
                Case c = {r, cc, (sml_dtype)d, (sml_op)o, 0, 0};
                run_case(h, c, vars);
            }
        }
    }
    sml_handle_destroy(h);
    return 0;
}
