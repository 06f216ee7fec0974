// launch_hold.cu: the hold kernel of launch_hold.h. One thread polls a word of mapped host
// memory, sleeping between reads so that it takes no issue slots from anything else. What it
// keeps out of a sample is the host's launch calls, never GPU work: the sample's start event
// is recorded behind it. nvbench's "blocking kernel" does the same job.
#include <cuda_runtime.h>

#include "bench/launch_hold.h"

__global__ void sml_hold_kernel(volatile unsigned *flag, unsigned want, unsigned long long max_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        if (flag[0] == want) return;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > max_ns) {
            flag[1] = flag[1] + 1;
            return;
        }
        __nanosleep(500);
    }
}

static sml_status hold_status(cudaError_t e) {
    if (e == cudaSuccess) return SML_OK;
    return e == cudaErrorMemoryAllocation ? SML_ERR_OUT_OF_MEMORY : SML_ERR_CUDA;
}

extern "C" sml_status sml_hold_init(sml_hold *h) {
    void *hp = NULL, *dp = NULL;
    h->host = NULL;
    h->dev = NULL;
    h->gen = 0;
    sml_status s = hold_status(cudaHostAlloc(&hp, 2 * sizeof(unsigned), cudaHostAllocMapped));
    if (s != SML_OK) return s;
    s = hold_status(cudaHostGetDevicePointer(&dp, hp, 0));
    if (s != SML_OK) {
        cudaFreeHost(hp);
        return s;
    }
    ((volatile unsigned *)hp)[0] = 0;
    ((volatile unsigned *)hp)[1] = 0;
    h->host = (volatile unsigned *)hp;
    h->dev = (unsigned *)dp;
    return SML_OK;
}

extern "C" void sml_hold_free(sml_hold *h) {
    if (h->host) cudaFreeHost((void *)h->host);
    h->host = NULL;
    h->dev = NULL;
}

extern "C" sml_status sml_hold_stream(sml_hold *h, void *stream) {
    if (!h->host) return SML_OK;
    h->gen++;
    sml_hold_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(h->dev, h->gen, SML_HOLD_MAX_NS);
    return hold_status(cudaGetLastError());
}

extern "C" void sml_hold_release(sml_hold *h) {
    if (h->host) h->host[0] = h->gen;
}

extern "C" int sml_hold_lost(sml_hold *h) {
    if (!h->host || h->host[1] == 0) return 0;
    h->host[1] = 0;
    return 1;
}
