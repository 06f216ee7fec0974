/* radix.c: least-significant-digit radix sort of 64-bit keys, 8 passes of a byte, a pass
 * skipped where every key has the same byte there; short arrays by insertion. */
#include "prop/radix.h"

#include <string.h>

static void insertion(uint64_t *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* The passes over bytes d0..7 of the keys (stable, so the order of the bytes below d0 is kept
 * among equal upper bytes). */
static void radix_from(uint64_t *a, uint64_t *tmp, size_t n, int d0) {
    if (n < 64) {
        insertion(a, n);
        return;
    }
    size_t count[8][256];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++)
        for (int d = d0; d < 8; d++) count[d][(a[i] >> (8 * d)) & 255]++;
    uint64_t *src = a, *dst = tmp;
    for (int d = d0; d < 8; d++) {
        size_t *c = count[d];
        if (c[(src[0] >> (8 * d)) & 255] == n) continue; /* one byte value: already in order */
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t k = c[b];
            c[b] = at;
            at += k;
        }
        for (size_t i = 0; i < n; i++) dst[c[(src[i] >> (8 * d)) & 255]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

void sml_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n) { radix_from(a, tmp, n, 0); }

void sml_radix_sort_u64_hi(uint64_t *a, uint64_t *tmp, size_t n) { radix_from(a, tmp, n, 4); }
