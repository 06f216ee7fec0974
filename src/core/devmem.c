/* devmem.c: host or device buffers behind one interface, and the GPU's description.
 * Built with or without CUDA: without it, GPU requests answer SML_ERR_NO_DEVICE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/plan_cache.h"

#ifdef SML_HAVE_CUDA
#include <cuda_runtime_api.h>

const char *sml_last_cuda_error(void) { return cudaGetErrorString(cudaPeekAtLastError()); }
void sml_gpu_forget_error(void) { (void)cudaGetLastError(); }

int sml_gpu_available(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear "no device" so later calls start clean */
        return 0;
    }
    return n > 0;
}

int sml_gpu_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

static sml_status gpu_status(cudaError_t e) {
    if (e == cudaSuccess) return SML_OK;
    return e == cudaErrorMemoryAllocation ? SML_ERR_OUT_OF_MEMORY : SML_ERR_CUDA;
}

/* Peak DRAM bytes per SM per SM clock: double data rate x bus width over SMs x SM clock. A
 * ratio, not a bandwidth, because it says how many bytes each SM must keep moving per cycle,
 * what `auto` weighs between coop and split (kernels/auto_dispatch.h). 0 when the runtime
 * does not report the clocks (not an error: auto then keeps the older choice). */
static float dram_per_sm_clock(int dev, int sms) {
    int mem_khz = 0, bus_bits = 0, sm_khz = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0.0f;
    }
    if (mem_khz <= 0 || bus_bits <= 0 || sm_khz <= 0 || sms <= 0) return 0.0f;
    return (float)(2.0 * mem_khz * (bus_bits / 8.0) / ((double)sms * sm_khz));
}

sml_status sml_gpu_plan_key(int dev, sml_plan_key *key) {
    memset(key, 0, sizeof *key);
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return SML_ERR_CUDA;
    }
    memcpy(key->name, prop.name, strnlen(prop.name, sizeof key->name - 1));
    key->sms = prop.multiProcessorCount;
    key->dram = dram_per_sm_clock(dev, key->sms);
    return SML_OK;
}

sml_status sml_gpu_facts_get(sml_handle *h, sml_gpu_facts *out) {
    if (!out) return SML_ERR_NULL_POINTER;
    memset(out, 0, sizeof *out);
    int dev = 0;
    sml_status s = gpu_status(cudaGetDevice(&dev));
    if (s != SML_OK) return s;
    if (h && h->gpu_known && h->gpu.dev == dev) {
        *out = h->gpu;
        return SML_OK;
    }
    sml_gpu_facts g = {dev, 0, 0, 0, 0, 0.0f};
    s = gpu_status(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, dev));
    if (s == SML_OK)
        s = gpu_status(cudaDeviceGetAttribute(&g.clusters, cudaDevAttrClusterLaunch, dev));
    if (s == SML_OK)
        s = gpu_status(cudaDeviceGetAttribute(&g.coop, cudaDevAttrCooperativeLaunch, dev));
    if (s == SML_OK)
        s = gpu_status(
            cudaDeviceGetAttribute(&g.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (s != SML_OK) return s;
    g.dram = dram_per_sm_clock(dev, g.sms);
    if (h) {
        h->gpu = g;
        h->gpu_known = 1;
    }
    *out = g;
    return SML_OK;
}
void sml_gpu_list(char *buf, size_t n) {
    int count = sml_gpu_count();
    snprintf(buf, n, "%s", count ? "" : "none");
    for (int d = 0; d < count; d++) {
        struct cudaDeviceProp prop;
        size_t len = strlen(buf);
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(prop.name, sizeof prop.name, "?");
        }
        snprintf(buf + len, n - len, "%s%d %.*s", d ? ", " : "", d, (int)sizeof prop.name,
                 prop.name);
    }
}
#else
const char *sml_last_cuda_error(void) { return "built without CUDA"; }
void sml_gpu_list(char *buf, size_t n) { snprintf(buf, n, "none (a build without CUDA)"); }
sml_status sml_gpu_plan_key(int dev, sml_plan_key *key) {
    (void)dev;
    memset(key, 0, sizeof *key);
    return SML_ERR_NO_DEVICE;
}
sml_status sml_gpu_facts_get(sml_handle *h, sml_gpu_facts *out) {
    (void)h;
    if (!out) return SML_ERR_NULL_POINTER; /* the same order of checks as the CUDA build */
    memset(out, 0, sizeof *out);
    return SML_ERR_NO_DEVICE;
}
void sml_gpu_forget_error(void) {}
int sml_gpu_available(void) { return 0; }
int sml_gpu_count(void) { return 0; }
#endif

sml_status sml_buffer_alloc(sml_buffer *b, sml_device d, size_t bytes) {
    if (!b) return SML_ERR_NULL_POINTER;
    b->device = d;
    b->ptr = NULL;
    b->bytes = 0;
    size_t n = bytes ? bytes : 1;
    if (d == SML_DEVICE_CPU) {
        b->ptr = malloc(n);
        if (!b->ptr) return SML_ERR_OUT_OF_MEMORY;
    } else {
#ifdef SML_HAVE_CUDA
        if (!sml_gpu_available()) return SML_ERR_NO_DEVICE;
        sml_status s = gpu_status(cudaMalloc(&b->ptr, n));
        if (s != SML_OK) {
            b->ptr = NULL;
            return s;
        }
#else
        return SML_ERR_NO_DEVICE;
#endif
    }
    b->bytes = bytes;
    return SML_OK;
}

void sml_buffer_free(sml_buffer *b) {
    if (!b || !b->ptr) return;
    if (b->device == SML_DEVICE_CPU) free(b->ptr);
#ifdef SML_HAVE_CUDA
    else
        cudaFree(b->ptr);
#endif
    b->ptr = NULL;
    b->bytes = 0;
}

sml_status sml_buffer_upload_on(sml_buffer *b, size_t offset, const void *host, size_t n,
                                void *stream) {
    if (!b || !b->ptr || !host) return SML_ERR_NULL_POINTER;
    if (offset > b->bytes || n > b->bytes - offset) return SML_ERR_INVALID_ARG;
    if (b->device == SML_DEVICE_CPU) {
        memcpy((char *)b->ptr + offset, host, n);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    cudaStream_t st = (cudaStream_t)stream;
    sml_status s =
        gpu_status(cudaMemcpyAsync((char *)b->ptr + offset, host, n, cudaMemcpyHostToDevice, st));
    return s != SML_OK ? s : gpu_status(cudaStreamSynchronize(st));
#else
    (void)stream;
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_buffer_download_on(const sml_buffer *b, size_t offset, void *host, size_t n,
                                  void *stream) {
    if (!b || !b->ptr || !host) return SML_ERR_NULL_POINTER;
    if (offset > b->bytes || n > b->bytes - offset) return SML_ERR_INVALID_ARG;
    if (b->device == SML_DEVICE_CPU) {
        memcpy(host, (char *)b->ptr + offset, n);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    cudaStream_t st = (cudaStream_t)stream;
    sml_status s =
        gpu_status(cudaMemcpyAsync(host, (char *)b->ptr + offset, n, cudaMemcpyDeviceToHost, st));
    return s != SML_OK ? s : gpu_status(cudaStreamSynchronize(st));
#else
    (void)stream;
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_buffer_upload(sml_buffer *b, size_t offset, const void *host, size_t n) {
    return sml_buffer_upload_on(b, offset, host, n, NULL);
}

sml_status sml_buffer_download(const sml_buffer *b, size_t offset, void *host, size_t n) {
    return sml_buffer_download_on(b, offset, host, n, NULL);
}

int sml_gpu_current(void) {
#ifdef SML_HAVE_CUDA
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return dev;
#else
    return -1;
#endif
}

void sml_gpu_use(int dev) {
#ifdef SML_HAVE_CUDA
    if (dev >= 0 && cudaSetDevice(dev) != cudaSuccess) (void)cudaGetLastError();
#else
    (void)dev;
#endif
}

const char *sml_gpu_wait_env(void) {
    const char *w = getenv("SML_GPU_WAIT");
    return w && *w ? w : "poll";
}

sml_status sml_gpu_wait_mode(const char *mode) {
    if (!mode || !*mode) return SML_OK;
#ifdef SML_HAVE_CUDA
    unsigned flag = !strcmp(mode, "spin") || !strcmp(mode, "poll") ? cudaDeviceScheduleSpin
                    : !strcmp(mode, "yield")                       ? cudaDeviceScheduleYield
                    : !strcmp(mode, "block")                       ? cudaDeviceScheduleBlockingSync
                                                                   : ~0u;
    if (flag == ~0u) return SML_ERR_INVALID_ARG;
    return gpu_status(cudaSetDeviceFlags(flag));
#else
    return strcmp(mode, "spin") && strcmp(mode, "yield") && strcmp(mode, "block") &&
                   strcmp(mode, "poll")
               ? SML_ERR_INVALID_ARG
               : SML_OK;
#endif
}

sml_status sml_stream_create(sml_device d, void **out) {
    if (!out) return SML_ERR_NULL_POINTER;
    *out = NULL;
    if (d == SML_DEVICE_CPU) return SML_OK;
#ifdef SML_HAVE_CUDA
    if (!sml_gpu_available()) return SML_ERR_NO_DEVICE;
    cudaStream_t st;
    sml_status s = gpu_status(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (s == SML_OK) *out = st;
    return s;
#else
    return SML_ERR_NO_DEVICE;
#endif
}

void sml_stream_destroy(sml_device d, void *stream) {
#ifdef SML_HAVE_CUDA
    if (d == SML_DEVICE_GPU && stream) cudaStreamDestroy((cudaStream_t)stream);
#else
    (void)d;
    (void)stream;
#endif
}

sml_status sml_buffer_fill_on(sml_buffer *b, unsigned char byte, void *stream) {
    if (!b || !b->ptr) return SML_ERR_NULL_POINTER;
    if (b->device == SML_DEVICE_CPU) {
        memset(b->ptr, byte, b->bytes);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    cudaStream_t st = (cudaStream_t)stream;
    sml_status s = gpu_status(cudaMemsetAsync(b->ptr, byte, b->bytes, st));
    return s != SML_OK ? s : gpu_status(cudaStreamSynchronize(st));
#else
    (void)stream;
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_buffer_fill(sml_buffer *b, unsigned char byte) {
    if (!b || !b->ptr) return SML_ERR_NULL_POINTER;
    return sml_buffer_fill_range(b, 0, byte, b->bytes);
}

sml_status sml_buffer_fill_range(sml_buffer *b, size_t offset, unsigned char byte, size_t n) {
    if (!b || !b->ptr) return SML_ERR_NULL_POINTER;
    if (offset > b->bytes || n > b->bytes - offset) return SML_ERR_INVALID_ARG;
    if (b->device == SML_DEVICE_CPU) {
        memset((char *)b->ptr + offset, byte, n);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    sml_status s = gpu_status(cudaMemset((char *)b->ptr + offset, byte, n));
    return s != SML_OK ? s : gpu_status(cudaDeviceSynchronize());
#else
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_buffer_fill_2d(sml_buffer *b, size_t pitch, unsigned char byte, size_t width,
                              size_t height) {
    if (!b || !b->ptr) return SML_ERR_NULL_POINTER;
    if (height && (pitch < width || pitch > b->bytes / height)) return SML_ERR_INVALID_ARG;
    if (b->device == SML_DEVICE_CPU) {
        for (size_t r = 0; r < height; r++) memset((char *)b->ptr + r * pitch, byte, width);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    sml_status s = gpu_status(cudaMemset2D(b->ptr, pitch, byte, width, height));
    return s != SML_OK ? s : gpu_status(cudaDeviceSynchronize());
#else
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_buffer_copy(sml_buffer *dst, size_t dst_offset, const sml_buffer *src,
                           size_t src_offset, size_t n) {
    if (!dst || !dst->ptr || !src || !src->ptr) return SML_ERR_NULL_POINTER;
    if (dst->device != src->device || dst_offset > dst->bytes || n > dst->bytes - dst_offset ||
        src_offset > src->bytes || n > src->bytes - src_offset)
        return SML_ERR_INVALID_ARG;
    char *to = (char *)dst->ptr + dst_offset;
    const char *from = (const char *)src->ptr + src_offset;
    if (dst->device == SML_DEVICE_CPU) {
        memmove(to, from, n);
        return SML_OK;
    }
#ifdef SML_HAVE_CUDA
    return gpu_status(cudaMemcpy(to, from, n, cudaMemcpyDeviceToDevice));
#else
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_device_sync(sml_device d, void *stream) {
    if (d == SML_DEVICE_CPU) return SML_OK;
#ifdef SML_HAVE_CUDA
    sml_status s = gpu_status(cudaStreamSynchronize((cudaStream_t)stream));
    return s != SML_OK ? s : gpu_status(cudaGetLastError());
#else
    (void)stream;
    return SML_ERR_NO_DEVICE;
#endif
}

sml_status sml_gpu_query(sml_gpu_info *out) {
    if (!out) return SML_ERR_NULL_POINTER;
    memset(out, 0, sizeof *out);
#ifdef SML_HAVE_CUDA
    if (!sml_gpu_available()) return SML_OK;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return SML_ERR_CUDA;
    out->present = 1;
    /* memcpy, not strncpy: GCC's -Wstringop-truncation (an error here) flags the latter. */
    memcpy(out->name, prop.name, strnlen(prop.name, sizeof out->name - 1));
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
        out->sm_clock_mhz = khz / 1000;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
        out->mem_clock_mhz = khz / 1000;
    (void)cudaGetLastError();
    cudaDriverGetVersion(&out->driver_version);
    cudaRuntimeGetVersion(&out->runtime_version);
    out->l2_bytes = (size_t)prop.l2CacheSize;
    out->global_mem_bytes = prop.totalGlobalMem;
    out->max_smem_per_block_optin = (int)prop.sharedMemPerBlockOptin;
#endif
    return SML_OK;
}
