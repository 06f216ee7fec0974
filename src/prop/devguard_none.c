/* devguard_none.c: devguard.h in a build without CUDA, where no GPU exec is ever made
 * (sml_stream_create refuses): every call answers SML_ERR_NO_DEVICE. */
#include <string.h>

#include "prop/devguard.h"

sml_status sml_prop_gpu_init(sml_prop_gpu *g) {
    memset(g, 0, sizeof *g);
    return SML_ERR_NO_DEVICE;
}

void sml_prop_gpu_free(sml_prop_gpu *g) { memset(g, 0, sizeof *g); }

sml_status sml_prop_gpu_copy(void *dst, const void *src, size_t n, int to_device, void *stream) {
    (void)dst, (void)src, (void)n, (void)to_device, (void)stream;
    return SML_ERR_NO_DEVICE;
}

sml_status sml_prop_gpu_wait(sml_prop_gpu *g, void *stream) {
    (void)g, (void)stream;
    return SML_ERR_NO_DEVICE;
}

sml_status sml_prop_gpu_guard_fill(sml_prop_gpu *g, unsigned char *const *zone, int n, size_t len,
                                   void *stream) {
    (void)g, (void)zone, (void)n, (void)len, (void)stream;
    return SML_ERR_NO_DEVICE;
}

sml_status sml_prop_gpu_guard_check(sml_prop_gpu *g, unsigned char *const *zone, int n, size_t len,
                                    void *stream) {
    (void)g, (void)zone, (void)n, (void)len, (void)stream;
    return SML_ERR_NO_DEVICE;
}

void sml_prop_gpu_guard_hits(const sml_prop_gpu *g, int n, sml_prop_zone_hit *hit) {
    (void)g;
    memset(hit, 0, (size_t)(n > 0 ? n : 0) * sizeof *hit);
}

sml_status sml_prop_gpu_hold(sml_prop_gpu *g, const void *region, size_t bytes, void *stream) {
    (void)g, (void)region, (void)bytes, (void)stream;
    return SML_ERR_NO_DEVICE;
}

sml_status sml_prop_gpu_judge(sml_prop_gpu *g, const void *region, size_t bytes, int *ran) {
    (void)g, (void)region, (void)bytes;
    *ran = -1;
    return SML_ERR_NO_DEVICE;
}

void sml_prop_gpu_release(sml_prop_gpu *g) { (void)g; }

sml_status sml_prop_gpu_host_alloc(void **p, size_t n) {
    (void)n;
    *p = NULL;
    return SML_ERR_NO_DEVICE;
}

void sml_prop_gpu_host_free(void *p) { (void)p; }

sml_status sml_prop_gpu_host_register(void *p, size_t n, int readonly) {
    (void)p, (void)n, (void)readonly;
    return SML_ERR_NO_DEVICE;
}

void sml_prop_gpu_host_unregister(void *p) { (void)p; }

sml_status sml_prop_gpu_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t rows, int to_device, void *stream) {
    (void)dst, (void)dpitch, (void)src, (void)spitch, (void)width, (void)rows, (void)to_device,
        (void)stream;
    return SML_ERR_NO_DEVICE;
}
