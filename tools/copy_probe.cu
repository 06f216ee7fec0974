// copy_probe: what a plain copy reaches at the sizes of the standard sweep's cases, so that a kernel's
// "% of memcpy" can be read against what any copy gets at its size. Traffic 8 MiB to 1 GiB
// (read + write), cold L2 (each launch at the next offset of two 1 GiB pools, up to 64
// sets), batches of 20 back-to-back launches, the median of 21 batches, as % of a 1 GiB
// cudaMemcpy D2D: cudaMemcpyAsync itself; the bench's copy kernel (one 16-byte vector per
// thread); the same with evict-first loads and stores (ld.cs / st.cs); 4 and 2 vectors per
// thread; grid-stride loops of 8 x 256 and 4 x 512 threads per SM. Not a test.
//   nvcc -O3 -arch=sm_90 -o copy_probe tools/copy_probe.cu && ./copy_probe
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>
#define CK(x)                                                              \
    do {                                                                   \
        cudaError_t e_ = (x);                                              \
        if (e_ != cudaSuccess) {                                           \
            printf("CUDA %s line %d\n", cudaGetErrorString(e_), __LINE__); \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

__global__ void k1(uint4 *__restrict__ d, const uint4 *__restrict__ s, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = s[i];
}
__global__ void k1cs(uint4 *__restrict__ d, const uint4 *__restrict__ s, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) __stcs(d + i, __ldcs(s + i));
}
template <int U>
__global__ void ku(uint4 *__restrict__ d, const uint4 *__restrict__ s, size_t n) {
    size_t base = (size_t)blockIdx.x * blockDim.x * U + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        size_t i = base + (size_t)u * blockDim.x;
        if (i < n) v[u] = s[i];
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        size_t i = base + (size_t)u * blockDim.x;
        if (i < n) d[i] = v[u];
    }
}
__global__ void kgs(uint4 *__restrict__ d, const uint4 *__restrict__ s, size_t n) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
        d[i] = a;
        d[i + stride] = b;
        d[i + 2 * stride] = c;
        d[i + 3 * stride] = e;
    }
    for (; i < n; i += stride) d[i] = s[i];
}

static char *P, *Q;
static const size_t POOL = (size_t)1 << 30;
static int sms;
static double run(int v, size_t bytes) {
    size_t n = bytes / 16;
    size_t sets = std::max<size_t>(1, std::min<size_t>(POOL / bytes, 64));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    size_t it = 0;
    auto launch = [&]() {
        size_t off = (it++ % sets) * bytes;
        uint4 *d = (uint4 *)(Q + off);
        const uint4 *s = (const uint4 *)(P + off);
        switch (v) {
        case 0: CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice)); break;
        case 1: k1<<<(unsigned)((n + 255) / 256), 256>>>(d, s, n); break;
        case 2: k1cs<<<(unsigned)((n + 255) / 256), 256>>>(d, s, n); break;
        case 3: ku<4><<<(unsigned)((n + 1023) / 1024), 256>>>(d, s, n); break;
        case 4: ku<2><<<(unsigned)((n + 511) / 512), 256>>>(d, s, n); break;
        case 5: kgs<<<sms * 8, 256>>>(d, s, n); break;
        case 6: kgs<<<sms * 4, 512>>>(d, s, n); break;
        }
        CK(cudaGetLastError());
    };
    for (int w = 0; w < 40; w++) launch();
    std::vector<float> t;
    for (int r = 0; r < 21; r++) {
        CK(cudaEventRecord(a));
        for (int k = 0; k < 20; k++) launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms / 20);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return 2.0 * bytes / (t[10] * 1e-3) / 1e9;
}
int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    sms = p.multiProcessorCount;
    CK(cudaMalloc(&P, POOL));
    CK(cudaMalloc(&Q, POOL));
    CK(cudaMemset(P, 1, POOL));
    CK(cudaMemset(Q, 2, POOL));
    double ref = run(0, (size_t)1 << 30);
    ref = run(0, (size_t)1 << 30);
    printf("%s: memcpy 1 GiB %.0f GB/s (read+write)\n", p.name, ref);
    const char *names[] = {"memcpy", "k1(bench)", "k1cs", "ku4", "ku2", "gs8x256", "gs4x512"};
    printf("%10s", "traffic");
    for (int v = 0; v < 7; v++) printf(" %10s", names[v]);
    printf("   (%% of memcpy 1 GiB)\n");
    size_t mib[] = {4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512};
    for (size_t m : mib) {
        size_t bytes = m << 20; // copied; traffic 2x
        printf("%7zu MiB", 2 * m);
        for (int v = 0; v < 7; v++) printf(" %9.1f%%", 100 * run(v, bytes) / ref);
        printf("\n");
    }
    return 0;
}
