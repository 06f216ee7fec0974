/* mutate.c: see mutate.h. */
#include "mutate.h"

#include <string.h>

/* Numbers at the edges of the types sizes are computed in, as text. */
static const char *const NUMBERS[] = {
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "255",
    "256",
    "4095",
    "4096",
    "4097",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "4611686018427387904",
    "2305843009213693953",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "1e309",
    "-1e308",
    "1e-320",
    "0.5",
    "1.5",
    "-0",
    "NaN",
    "Infinity",
    "99999999999999999999999999",
};
#define NNUMBERS (sizeof NUMBERS / sizeof NUMBERS[0])

static const uint8_t BYTES[] = {0x00, 0x01, 0x0A, 0x20, 0x22, 0x27, 0x28, 0x29, 0x2C,
                                0x3A, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x7F, 0x80, 0xC0,
                                0xE0, 0xED, 0xF0, 0xF4, 0xF8, 0xFE, 0xFF};

void sml_fuzz_mutator_init(sml_fuzz_mutator *m, uint64_t seed, const char *const *dict,
                           const sml_fuzz_corpus *corpus) {
    sml_rng_seed(&m->rng, seed);
    m->dict = dict;
    m->ndict = 0;
    while (dict && dict[m->ndict]) m->ndict++;
    m->corpus = corpus;
}

static size_t below(sml_fuzz_mutator *m, size_t n) {
    return n ? (size_t)(sml_rng_u64(&m->rng) % n) : 0;
}

/* Replace buf[at, at + del) by ins[0, n), within cap; returns the new length. */
static size_t splice(uint8_t *buf, size_t len, size_t cap, size_t at, size_t del,
                     const uint8_t *ins, size_t n) {
    if (at > len) at = len;
    if (del > len - at) del = len - at;
    if (len - del + n > cap) n = cap - (len - del);
    memmove(buf + at + n, buf + at + del, len - at - del);
    memcpy(buf + at, ins, n);
    return len - del + n;
}

/* A run of digits (with a sign) at or after `from`, as [*s, *e); 0 if none. */
static int find_number(const uint8_t *b, size_t len, size_t from, size_t *s, size_t *e) {
    for (size_t i = from; i < len; i++) {
        if (b[i] < '0' || b[i] > '9') continue;
        size_t a = i, z = i;
        while (a > 0 && ((b[a - 1] >= '0' && b[a - 1] <= '9') || b[a - 1] == '-')) a--;
        while (z < len &&
               ((b[z] >= '0' && b[z] <= '9') || b[z] == '.' || b[z] == 'e' || b[z] == 'E'))
            z++;
        *s = a;
        *e = z;
        return 1;
    }
    return 0;
}

static size_t mutate_once(sml_fuzz_mutator *m, uint8_t *buf, size_t len, size_t cap) {
    size_t at = below(m, len + 1);
    switch (below(m, 11)) {
    case 0: /* flip a bit */
        if (len) buf[below(m, len)] ^= (uint8_t)(1u << below(m, 8));
        return len;
    case 1: /* a byte that means something in one of the formats */
        if (len) buf[below(m, len)] = BYTES[below(m, sizeof BYTES)];
        return len;
    case 2: /* delete a range */
        return splice(buf, len, cap, at, 1 + below(m, 16), (const uint8_t *)"", 0);
    case 3: { /* repeat a range */
        if (!len) return len;
        size_t from = below(m, len), n = 1 + below(m, len - from < 64 ? len - from : 64);
        uint8_t tmp[64];
        memcpy(tmp, buf + from, n);
        return splice(buf, len, cap, at, 0, tmp, n);
    }
    case 4:   /* insert a token */
    case 5: { /* or put one in place of what is there */
        if (!m->ndict) return len;
        const char *t = m->dict[below(m, m->ndict)];
        size_t n = strlen(t);
        return splice(buf, len, cap, at, below(m, 2) ? n : 0, (const uint8_t *)t, n);
    }
    case 6:
    case 7: { /* a number becomes an edge of some type */
        size_t s, e;
        if (!find_number(buf, len, at, &s, &e) && !find_number(buf, len, 0, &s, &e)) return len;
        const char *t = NUMBERS[below(m, NNUMBERS)];
        return splice(buf, len, cap, s, e - s, (const uint8_t *)t, strlen(t));
    }
    case 8: { /* a binary little-endian field moved a little (header lengths) */
        if (len < 2) return len;
        size_t i = below(m, len - 1);
        unsigned v = buf[i] | (unsigned)buf[i + 1] << 8;
        int d = (int)below(m, 33) - 16;
        v = (unsigned)((int)v + (d ? d : 1));
        buf[i] = (uint8_t)v;
        buf[i + 1] = (uint8_t)(v >> 8);
        return len;
    }
    case 9: { /* the head of this input, the tail of another */
        const sml_fuzz_corpus *c = m->corpus;
        size_t k = below(m, c->n);
        if (!c->n || !c->lens[k]) return len;
        size_t from = below(m, c->lens[k]);
        return splice(buf, len, cap, at, len - at, c->items[k] + from, c->lens[k] - from);
    }
    default: /* cut it short */ return at;
    }
}

size_t sml_fuzz_mutate(sml_fuzz_mutator *m, uint8_t *buf, size_t cap) {
    const sml_fuzz_corpus *c = m->corpus;
    size_t k = below(m, c->n), len = c->lens[k] < cap ? c->lens[k] : cap;
    memcpy(buf, c->items[k], len);
    for (size_t i = 0, n = 1 + below(m, 8); i < n; i++) len = mutate_once(m, buf, len, cap);
    return len;
}
