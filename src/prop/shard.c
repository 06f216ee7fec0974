/* shard.c: see shard.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "prop/shard.h"

static int parse_count(const char *s, const char *end, long *out) {
    if (s == end || end - s > 6) return 0;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return 0;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 1;
}

int sml_shard_parse(const char *s, sml_shard *out, char *why, size_t why_n) {
    const char *slash = s;
    while (*slash && *slash != '/') slash++;
    const char *end = slash;
    while (*end) end++;
    long k, n;
    if (!*slash || !parse_count(s, slash, &k) || !parse_count(slash + 1, end, &n)) {
        snprintf(why, why_n, "K/N, two whole numbers (the K-th of N slices, e.g. 1/4)");
        return 0;
    }
    if (n < 1 || n > SML_SHARD_MAX) {
        snprintf(why, why_n, "N is the number of slices, 1 to %d", SML_SHARD_MAX);
        return 0;
    }
    if (k < 1 || k > n) {
        snprintf(why, why_n, "K is 1 to N (%ld): slices are counted from 1", n);
        return 0;
    }
    out->index = (int)k;
    out->count = (int)n;
    return 1;
}

int64_t sml_shard_size(const sml_shard *s, int64_t n) {
    if (s->count <= 1) return n;
    int64_t k = s->index - 1;
    return n > k ? (n - k + s->count - 1) / s->count : 0;
}

int sml_shard_env(const char *me, sml_shard *out) {
    const char *v = getenv("SML_SHARD");
    if (!v || !*v) return 0;
    char why[128];
    if (sml_shard_parse(v, out, why, sizeof why)) return 0;
    fprintf(stderr, "%s: bad value for SML_SHARD: '%.40s' (%s)\n", me, v, why);
    return -1;
}
