// devguard.cu: the guard zones' poison and comparison kernels, the hold kernel and the
// stream check's comparison, and the copies and waits exec.c runs them with (devguard.h).
#include <cuda_runtime.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "prop/devguard.h"

namespace {

struct zones {
    unsigned char *p[SML_PROP_GUARD_ZONES_MAX];
};

const int THREADS = 256, BLOCKS = 512;

sml_status st(cudaError_t e) {
    if (e == cudaSuccess) return SML_OK;
    return e == cudaErrorMemoryAllocation ? SML_ERR_OUT_OF_MEMORY : SML_ERR_CUDA;
}

double now_s() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__global__ void guard_fill(zones z, int n, size_t words, unsigned long long *res) {
    const uint4 pat = make_uint4(SML_PROP_GUARD_PATTERN, SML_PROP_GUARD_PATTERN,
                                 SML_PROP_GUARD_PATTERN, SML_PROP_GUARD_PATTERN);
    size_t total = (size_t)n * words, step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step)
        reinterpret_cast<uint4 *>(z.p[i / words])[i % words] = pat;
    if (blockIdx.x == 0 && (int)threadIdx.x < n) {
        res[3 * threadIdx.x] = 0;
        res[3 * threadIdx.x + 1] = ~0ull;
        res[3 * threadIdx.x + 2] = 0;
    }
}

// Each 16-byte word that differs from the pattern: its changed bytes counted, the first and
// last of them folded into the zone's result. Atomics only where something changed.
__global__ void guard_check(zones z, int n, size_t words, unsigned long long *res) {
    size_t total = (size_t)n * words, step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        size_t zi = i / words, w = i % words;
        uint4 v = reinterpret_cast<const uint4 *>(z.p[zi])[w];
        const unsigned P = SML_PROP_GUARD_PATTERN;
        if (v.x == P && v.y == P && v.z == P && v.w == P) continue;
        unsigned part[4] = {v.x, v.y, v.z, v.w};
        unsigned long long cnt = 0, lo = ~0ull, hi = 0;
        for (int b = 0; b < 16; b++) {
            unsigned got = (part[b / 4] >> (8 * (b % 4))) & 0xFFu,
                     want = (P >> (8 * (b % 4))) & 0xFFu;
            if (got == want) continue;
            unsigned long long at = (unsigned long long)w * 16 + (unsigned long long)b;
            cnt++;
            lo = at < lo ? at : lo;
            hi = at > hi ? at : hi;
        }
        atomicAdd(&res[3 * zi], cnt);
        atomicMin(&res[3 * zi + 1], lo);
        atomicMax(&res[3 * zi + 2], hi);
    }
}

// Holds its stream until the host writes `want` into flag[0], or max_ns passed (then it
// counts the timeout in flag[1]). One thread, sleeping between reads of mapped host memory.
__global__ void hold_kernel(volatile unsigned *flag, unsigned want, unsigned long long max_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        if (flag[0] == want) return;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > max_ns) {
            flag[1] = flag[1] + 1;
            return;
        }
        __nanosleep(1000);
    }
}

__global__ void differs(const uint4 *a, const uint4 *b, size_t words, unsigned long long *flag) {
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += step) {
        uint4 x = a[i], y = b[i];
        if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
            atomicExch(flag, 1ull);
            return;
        }
    }
}

// Wait for an event already recorded, polling, at most `limit` seconds: 1 done, 0 not yet,
// -1 an error (the status in *s).
int wait_event(cudaEvent_t ev, double limit, sml_status *s) {
    double t0 = now_s();
    for (;;) {
        cudaError_t e = cudaEventQuery((cudaEvent_t)ev);
        if (e == cudaSuccess) return 1;
        if (e != cudaErrorNotReady) {
            *s = st(e);
            return -1;
        }
        if (now_s() - t0 > limit) return 0;
        struct timespec nap = {0, 5000};
        nanosleep(&nap, NULL);
    }
}

// The engine's wait for its stream (SML_GPU_WAIT unset or poll): the stream asked whether it
// is done, with a sleep between asks that doubles from 2 us to 256 us, in place of CUDA's
// spin, which holds a core for the whole of every copy and kernel: a suite's threads and
// workers outnumber the host's cores (docs/PROPERTIES.md gives the measured cost of each wait).
cudaError_t poll_stream(cudaStream_t sm) {
    long ns = 2000;
    for (;;) {
        cudaError_t e = cudaStreamQuery(sm);
        if (e != cudaErrorNotReady) return e;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 256000) ns *= 2;
    }
}

int blocks_for(size_t words) {
    size_t b = (words + THREADS - 1) / THREADS;
    return b < (size_t)BLOCKS ? (int)(b ? b : 1) : BLOCKS;
}

} // namespace

extern "C" sml_status sml_prop_gpu_init(sml_prop_gpu *g) {
    memset(g, 0, sizeof *g);
    g->poll = !strcmp(sml_gpu_wait_env(), "poll");
    // poll's sleeps are microseconds: the default timer slack would stretch each to 50 us.
    if (g->poll) (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    g->snap.device = SML_DEVICE_GPU;
    void *hp = NULL, *dp = NULL;
    const size_t res_bytes = (3 * SML_PROP_GUARD_ZONES_MAX + 1) * sizeof(uint64_t);
    sml_status s = st(cudaMalloc(&dp, res_bytes));
    if (s != SML_OK) return s;
    g->res_dev = (uint64_t *)dp;
    if ((s = st(cudaHostAlloc(&hp, res_bytes, cudaHostAllocDefault))) != SML_OK) return s;
    g->res_host = (uint64_t *)hp;
    hp = dp = NULL;
    if ((s = st(cudaHostAlloc(&hp, 2 * sizeof(unsigned), cudaHostAllocMapped))) != SML_OK) return s;
    g->hold = (volatile unsigned *)hp;
    g->hold[0] = g->hold[1] = 0;
    if ((s = st(cudaHostGetDevicePointer(&dp, hp, 0))) != SML_OK) return s;
    g->hold_dev = (unsigned *)dp;
    cudaStream_t side;
    if ((s = st(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking))) != SML_OK) return s;
    g->side = side;
    cudaEvent_t ev[3];
    for (int i = 0; i < 3; i++) {
        if ((s = st(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming))) != SML_OK) return s;
        (i == 0 ? g->ev_snap : i == 1 ? g->ev_legacy : g->ev_side) = ev[i];
    }
    /* Loaded now, not at their first launch: with lazy loading, loading a kernel may wait for
     * the device to go idle, which it does not while the hold spins (the comparison would
     * then wait for the hold to give up, every time). */
    cudaFuncAttributes a;
    if ((s = st(cudaFuncGetAttributes(&a, guard_fill))) != SML_OK) return s;
    if ((s = st(cudaFuncGetAttributes(&a, guard_check))) != SML_OK) return s;
    if ((s = st(cudaFuncGetAttributes(&a, hold_kernel))) != SML_OK) return s;
    return st(cudaFuncGetAttributes(&a, differs));
}

extern "C" void sml_prop_gpu_free(sml_prop_gpu *g) {
    if (g->res_dev) cudaFree(g->res_dev);
    if (g->res_host) cudaFreeHost(g->res_host);
    if (g->hold) cudaFreeHost((void *)g->hold);
    if (g->side) cudaStreamDestroy((cudaStream_t)g->side);
    void *ev[3] = {g->ev_snap, g->ev_legacy, g->ev_side};
    for (int i = 0; i < 3; i++)
        if (ev[i]) cudaEventDestroy((cudaEvent_t)ev[i]);
    sml_buffer_free(&g->snap);
    memset(g, 0, sizeof *g);
}

extern "C" sml_status sml_prop_gpu_copy(void *dst, const void *src, size_t n, int to_device,
                                        void *stream) {
    return st(cudaMemcpyAsync(dst, src, n,
                              to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                              (cudaStream_t)stream));
}

extern "C" sml_status sml_prop_gpu_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                          size_t width, size_t rows, int to_device, void *stream) {
    return st(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows,
                                to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                (cudaStream_t)stream));
}

// One wait for the stream. (Not for the legacy stream too: that would order an off-stream
// kernel before the read-back and hide it from every case but the held ones, and it cost the
// suite 15% on an H100.)
extern "C" sml_status sml_prop_gpu_wait(sml_prop_gpu *g, void *stream) {
    cudaStream_t sm = (cudaStream_t)stream;
    sml_status s = st(g->poll ? poll_stream(sm) : cudaStreamSynchronize(sm));
    return s != SML_OK ? s : st(cudaGetLastError());
}

extern "C" sml_status sml_prop_gpu_host_alloc(void **p, size_t n) {
    *p = NULL;
    sml_status s = st(cudaHostAlloc(p, n ? n : 1, cudaHostAllocDefault));
    if (s != SML_OK) {
        *p = NULL;
        (void)cudaGetLastError();
    }
    return s;
}

extern "C" void sml_prop_gpu_host_free(void *p) {
    if (p) cudaFreeHost(p);
}

extern "C" sml_status sml_prop_gpu_host_register(void *p, size_t n, int readonly) {
    sml_status s = st(cudaHostRegister(p, n, readonly ? cudaHostRegisterReadOnly : 0u));
    if (s != SML_OK) (void)cudaGetLastError();
    return s;
}

extern "C" void sml_prop_gpu_host_unregister(void *p) {
    if (p && cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
}

static zones zones_of(unsigned char *const *zone, int n) {
    zones z;
    memset(&z, 0, sizeof z);
    for (int i = 0; i < n && i < SML_PROP_GUARD_ZONES_MAX; i++) z.p[i] = zone[i];
    return z;
}

extern "C" sml_status sml_prop_gpu_guard_fill(sml_prop_gpu *g, unsigned char *const *zone, int n,
                                              size_t len, void *stream) {
    if (n < 1 || n > SML_PROP_GUARD_ZONES_MAX || len % 16) return SML_ERR_INVALID_ARG;
    size_t words = len / 16;
    guard_fill<<<blocks_for(n * words), THREADS, 0, (cudaStream_t)stream>>>(
        zones_of(zone, n), n, words, (unsigned long long *)g->res_dev);
    return st(cudaGetLastError());
}

extern "C" sml_status sml_prop_gpu_guard_check(sml_prop_gpu *g, unsigned char *const *zone, int n,
                                               size_t len, void *stream) {
    if (n < 1 || n > SML_PROP_GUARD_ZONES_MAX || len % 16) return SML_ERR_INVALID_ARG;
    size_t words = len / 16;
    guard_check<<<blocks_for(n * words), THREADS, 0, (cudaStream_t)stream>>>(
        zones_of(zone, n), n, words, (unsigned long long *)g->res_dev);
    sml_status s = st(cudaGetLastError());
    if (s != SML_OK) return s;
    return st(cudaMemcpyAsync(g->res_host, g->res_dev, 3 * (size_t)n * sizeof(uint64_t),
                              cudaMemcpyDeviceToHost, (cudaStream_t)stream));
}

extern "C" void sml_prop_gpu_guard_hits(const sml_prop_gpu *g, int n, sml_prop_zone_hit *hit) {
    for (int i = 0; i < n && i < SML_PROP_GUARD_ZONES_MAX; i++) {
        hit[i].count = g->res_host[3 * i];
        hit[i].first = g->res_host[3 * i + 1];
        hit[i].last = g->res_host[3 * i + 2];
    }
}

extern "C" sml_status sml_prop_gpu_hold(sml_prop_gpu *g, const void *region, size_t bytes,
                                        void *stream) {
    if (bytes % 16) return SML_ERR_INVALID_ARG;
    cudaStream_t sm = (cudaStream_t)stream;
    sml_status s = SML_OK;
    if (!g->snap.ptr || g->snap.bytes < bytes) {
        sml_buffer_free(&g->snap);
        if ((s = sml_buffer_alloc(&g->snap, SML_DEVICE_GPU, bytes + bytes / 2)) != SML_OK) return s;
    }
    if ((s = st(cudaMemcpyAsync(g->snap.ptr, region, bytes, cudaMemcpyDeviceToDevice, sm))) !=
        SML_OK)
        return s;
    /* The comparison's flag cleared here too, before the hold: the side stream waits for this
     * event and for nothing the hold keeps back. */
    unsigned long long *flag = (unsigned long long *)(g->res_dev + 3 * SML_PROP_GUARD_ZONES_MAX);
    if ((s = st(cudaMemsetAsync(flag, 0, sizeof *flag, sm))) != SML_OK) return s;
    if ((s = st(cudaEventRecord((cudaEvent_t)g->ev_snap, sm))) != SML_OK) return s;
    /* No hold of this exec runs now (its stream was waited for after the last one was
     * released): the timeout count starts again. */
    g->hold[1] = 0;
    g->gen++;
    g->held_at = now_s();
    hold_kernel<<<1, 1, 0, sm>>>(g->hold_dev, g->gen, SML_PROP_HOLD_NS);
    return st(cudaGetLastError());
}

extern "C" void sml_prop_gpu_release(sml_prop_gpu *g) {
    if (g->hold) g->hold[0] = g->gen;
}

// After the launch: the legacy default stream's work (and so every blocking stream's) done,
// then on the side stream, once the copy is made, the region compared with it. Conclusive
// only while the hold certainly still holds: the hold kernel cannot give up before
// SML_PROP_HOLD_NS after it was queued, and the comparison is read well inside that.
extern "C" sml_status sml_prop_gpu_judge(sml_prop_gpu *g, const void *region, size_t bytes,
                                         int *ran) {
    *ran = -1;
    cudaStream_t side = (cudaStream_t)g->side;
    sml_status s = st(cudaEventRecord((cudaEvent_t)g->ev_legacy, cudaStreamLegacy));
    if (s != SML_OK) return s;
    int w = wait_event((cudaEvent_t)g->ev_legacy, SML_PROP_HOLD_WAIT_S, &s);
    if (w <= 0) return w < 0 ? s : SML_OK;
    unsigned long long *flag = (unsigned long long *)(g->res_dev + 3 * SML_PROP_GUARD_ZONES_MAX);
    if ((s = st(cudaStreamWaitEvent(side, (cudaEvent_t)g->ev_snap, 0))) != SML_OK) return s;
    size_t words = bytes / 16;
    differs<<<blocks_for(words), THREADS, 0, side>>>((const uint4 *)region,
                                                     (const uint4 *)g->snap.ptr, words, flag);
    if ((s = st(cudaGetLastError())) != SML_OK) return s;
    uint64_t *out = g->res_host + 3 * SML_PROP_GUARD_ZONES_MAX;
    if ((s = st(cudaMemcpyAsync(out, flag, sizeof *flag, cudaMemcpyDeviceToHost, side))) != SML_OK)
        return s;
    if ((s = st(cudaEventRecord((cudaEvent_t)g->ev_side, side))) != SML_OK) return s;
    w = wait_event((cudaEvent_t)g->ev_side, SML_PROP_HOLD_WAIT_S, &s);
    if (w < 0) return s;
    if (w == 0) {
        /* Not done in time: the side stream must be idle before its next use, and the
         * comparison's result is no verdict. Released first: it may wait on nothing held. */
        sml_prop_gpu_release(g);
        if ((s = st(cudaStreamSynchronize(side))) != SML_OK) return s;
        return SML_OK;
    }
    int in_time = now_s() - g->held_at < 0.5 * 1e-9 * (double)SML_PROP_HOLD_NS && g->hold[1] == 0;
    if (in_time) *ran = *out != 0;
    return SML_OK;
}
