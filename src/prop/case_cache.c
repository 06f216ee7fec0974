/* case_cache.c: the suite's shared cases (case_cache.h). One lock and one condition for the
 * whole cache: it is taken once or twice per big case and job. */
#include "prop/case_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef enum { COMPUTING, READY } entry_state;

struct sml_prop_case_entry {
    sml_prop_case_key key;
    entry_state state;
    int users; /* jobs holding it */
    int taken; /* jobs that took it, and how many will (kind's expect; 0: not known) */
    int expect;
    size_t bytes;
    sml_prop_case c;    /* its arrays in pool's case buffers */
    sml_prop_derived d; /* in pool's first set */
    sml_prop_pool *pool;
    sml_prop_case_entry *next;
};

struct sml_prop_case_cache {
    pthread_mutex_t lock;
    pthread_cond_t published;
    size_t budget, held;
    sml_prop_case_entry *first;
    sml_prop_case_key *kind; /* the kinds of case the suite's jobs draw, and how many jobs each */
    int *jobs, nkinds;
};

sml_prop_case_cache *sml_prop_case_cache_new(size_t budget) {
    sml_prop_case_cache *cc = calloc(1, sizeof *cc);
    if (!cc) return NULL;
    pthread_mutex_init(&cc->lock, NULL);
    pthread_cond_init(&cc->published, NULL);
    cc->budget = budget;
    return cc;
}

static void entry_free(sml_prop_case_entry *en) {
    if (!en) return;
    sml_prop_case_free(&en->c);
    sml_prop_pool_free(en->pool);
    free(en);
}

void sml_prop_case_cache_free(sml_prop_case_cache *cc) {
    if (!cc) return;
    for (sml_prop_case_entry *en = cc->first, *next; en; en = next) {
        next = en->next;
        entry_free(en);
    }
    pthread_cond_destroy(&cc->published);
    pthread_mutex_destroy(&cc->lock);
    free(cc->kind);
    free(cc->jobs);
    free(cc);
}

sml_prop_case_key sml_prop_case_key_of(const sml_kernel *k, sml_op op, sml_dtype dt,
                                       const sml_prop_sizes *sizes, uint64_t seed, int level) {
    sml_prop_case_key key;
    memset(&key, 0, sizeof key);
    key.op = (int)op;
    key.dtype = (int)dt;
    key.level = level;
    key.seed = seed;
    key.min_cols = k->min_cols;
    key.max_cols = k->max_cols;
    key.sizes = *sizes;
    return key;
}

/* The same kind of case: all but the seed and level agree. */
static int same_kind(const sml_prop_case_key *a, const sml_prop_case_key *b) {
    const sml_prop_sizes *x = &a->sizes, *y = &b->sizes;
    return a->op == b->op && a->dtype == b->dtype && a->min_cols == b->min_cols &&
           a->max_cols == b->max_cols && x->small_min_elems == y->small_min_elems &&
           x->small_max_elems == y->small_max_elems && x->big_prob == y->big_prob &&
           x->big_max_elems == y->big_max_elems && x->max_cols == y->max_cols &&
           x->tall_prob == y->tall_prob && x->tall_max_elems == y->tall_max_elems;
}

static int same_key(const sml_prop_case_key *a, const sml_prop_case_key *b) {
    return a->seed == b->seed && a->level == b->level && same_kind(a, b);
}

int sml_prop_case_cache_expect(sml_prop_case_cache *cc, const sml_prop_case_key *kind) {
    for (int i = 0; i < cc->nkinds; i++)
        if (same_kind(&cc->kind[i], kind)) {
            cc->jobs[i]++;
            return 1;
        }
    sml_prop_case_key *k = realloc(cc->kind, (size_t)(cc->nkinds + 1) * sizeof *k);
    if (k) cc->kind = k;
    int *j = k ? realloc(cc->jobs, (size_t)(cc->nkinds + 1) * sizeof *j) : NULL;
    if (j) cc->jobs = j;
    if (!k || !j) return 0;
    cc->kind[cc->nkinds] = *kind;
    cc->jobs[cc->nkinds++] = 1;
    return 1;
}

static int jobs_of(const sml_prop_case_cache *cc, const sml_prop_case_key *key) {
    for (int i = 0; i < cc->nkinds; i++)
        if (same_kind(&cc->kind[i], key)) return cc->jobs[i];
    return 0;
}

/* Taken by every job announced for it, and held by none. */
static int spent(const sml_prop_case_entry *en) {
    return en->state == READY && !en->users && en->expect > 0 && en->taken >= en->expect;
}

static void unlink_entry(sml_prop_case_cache *cc, sml_prop_case_entry *en) {
    for (sml_prop_case_entry **p = &cc->first; *p; p = &(*p)->next)
        if (*p == en) {
            *p = en->next;
            cc->held -= en->bytes;
            return;
        }
}

/* The first entry every announced job took and none holds (under lock); NULL: none. */
static sml_prop_case_entry *first_spent(const sml_prop_case_cache *cc) {
    for (sml_prop_case_entry *en = cc->first; en; en = en->next)
        if (spent(en)) return en;
    return NULL;
}

/* An entry for `bytes` more (under lock): spent entries are let go until it fits, the last of
 * them made over (its buffers are grown in place, not mapped and faulted in afresh), else a
 * new one is made. Entries some job may still take are kept: NULL when it does not fit. */
static sml_prop_case_entry *make_room(sml_prop_case_cache *cc, size_t bytes) {
    sml_prop_case_entry *spare = NULL, *sp;
    while ((!spare || cc->held + bytes > cc->budget) && (sp = first_spent(cc)) != NULL) {
        unlink_entry(cc, sp);
        entry_free(spare);
        spare = sp;
    }
    if (cc->held + bytes > cc->budget) {
        entry_free(spare);
        return NULL;
    }
    if (spare) {
        sml_prop_case_free(&spare->c);
        sml_prop_pool *pool = spare->pool;
        memset(spare, 0, sizeof *spare);
        spare->pool = pool;
        return spare;
    }
    sml_prop_case_entry *en = calloc(1, sizeof *en);
    if (en && !(en->pool = sml_prop_pool_new())) {
        free(en);
        en = NULL;
    }
    return en;
}

sml_prop_share_role sml_prop_case_cache_acquire(sml_prop_case_cache *cc,
                                                const sml_prop_case_key *key, size_t bytes,
                                                sml_prop_case_entry **out) {
    *out = NULL;
    if (!cc || bytes > cc->budget) return SML_PROP_SHARE_NONE;
    pthread_mutex_lock(&cc->lock);
    if (jobs_of(cc, key) < 2) { /* no other job draws this kind of case: nothing to share */
        pthread_mutex_unlock(&cc->lock);
        return SML_PROP_SHARE_NONE;
    }
    sml_prop_share_role role = SML_PROP_SHARE_NONE;
    for (;;) {
        sml_prop_case_entry *en = cc->first;
        while (en && !same_key(&en->key, key)) en = en->next;
        if (en && en->state == COMPUTING) { /* another job draws it: wait for its publish */
            pthread_cond_wait(&cc->published, &cc->lock);
            continue;
        }
        if (en) {
            en->users++;
            en->taken++;
            *out = en;
            role = SML_PROP_SHARE_READY;
        } else if ((en = make_room(cc, bytes)) != NULL) {
            en->key = *key;
            en->state = COMPUTING;
            en->users = en->taken = 1;
            en->expect = jobs_of(cc, key);
            en->bytes = bytes;
            en->next = cc->first;
            cc->first = en;
            cc->held += bytes;
            *out = en;
            role = SML_PROP_SHARE_MINE;
        }
        break;
    }
    pthread_mutex_unlock(&cc->lock);
    return role;
}

sml_prop_case *sml_prop_case_entry_case(sml_prop_case_entry *en) { return &en->c; }
sml_prop_pool *sml_prop_case_entry_pool(sml_prop_case_entry *en) { return en->pool; }
sml_prop_derived *sml_prop_case_entry_derived(sml_prop_case_entry *en) { return &en->d; }

void sml_prop_case_cache_publish(sml_prop_case_cache *cc, sml_prop_case_entry *en, int ok) {
    pthread_mutex_lock(&cc->lock);
    if (ok) {
        en->state = READY;
    } else {
        unlink_entry(cc, en); /* its waiters find no entry and make their own */
    }
    pthread_cond_broadcast(&cc->published);
    pthread_mutex_unlock(&cc->lock);
    if (!ok) entry_free(en);
}

void sml_prop_case_cache_release(sml_prop_case_cache *cc, sml_prop_case_entry *en) {
    if (!en) return;
    pthread_mutex_lock(&cc->lock);
    en->users--;
    pthread_mutex_unlock(&cc->lock);
}

size_t sml_prop_case_share_bytes(const sml_prop_case *shape) {
    size_t n = (size_t)(shape->rows * shape->cols), esz = sml_dtype_size(shape->dtype);
    int bwd = sml_op_is_backward(shape->op);
    /* x (and dy, logits), then xd (and dyd), ex, want, and a row's facts */
    return n * esz * (bwd ? 3 : 1) + n * sizeof(double) * (bwd ? 4 : 3) +
           (size_t)shape->rows * sizeof(sml_row_facts);
}
