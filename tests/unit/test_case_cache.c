/* test_case_cache.c: src/prop/case_cache.c, the suite's big cases shared across kernels. A
 * wrong entry handed out would judge a kernel on another case's reference, so: keys that
 * differ in any field are different entries; the budget is kept, and an entry some job may
 * still take is never let go for another; a kind only one job draws is not shared; a failed
 * fill leaves no entry; a case every announced job took is made over first; a job that asks
 * for a case being drawn waits and then reads what was drawn. test_suite shows that judging
 * with shared cases changes no result. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prop/case_cache.h"
#include "unit_case.h"

static sml_prop_case_key key_of(uint64_t seed) {
    const sml_kernel *k = sml_kernel_find("cpu_online");
    sml_prop_sizes sz = {1, 1024, 0.5, 1 << 20, 0, 0.0, 0};
    return sml_prop_case_key_of(k, SML_SOFTMAX, SML_F32, &sz, seed, 50);
}

/* Acquire key k for `bytes`: its role, the entry in *en. */
static sml_prop_share_role get(sml_prop_case_cache *cc, sml_prop_case_key k, size_t bytes,
                               sml_prop_case_entry **en) {
    return sml_prop_case_cache_acquire(cc, &k, bytes, en);
}

/* Two jobs announced for key k's kind. */
static void two_jobs(sml_prop_case_cache *cc, sml_prop_case_key k) {
    sml_prop_case_cache_expect(cc, &k);
    sml_prop_case_cache_expect(cc, &k);
}

/* Each field of the key on its own makes another entry; the same key finds the entry; a kind
 * only one job draws is not shared. */
static void keys(unit_run *u) {
    sml_prop_case_cache *cc = sml_prop_case_cache_new(1 << 20);
    sml_prop_case_entry *a, *b;
    sml_prop_case_key base = key_of(7), lone = key_of(7);
    lone.dtype = SML_BF16;
    sml_prop_case_cache_expect(cc, &lone);
    int alone = get(cc, lone, 100, &a);
    UNIT_EXPECT(u, alone == SML_PROP_SHARE_NONE && !a,
                "a kind announced for one job: role %d (want NONE)", alone);
    two_jobs(cc, base);
    sml_prop_case_cache_expect(cc, &base); /* a third job: base's entry stays, not made over */
    int role = get(cc, base, 100, &a);
    sml_prop_case_cache_publish(cc, a, 1);
    int again = get(cc, base, 100, &b), same = b == a;
    sml_prop_case_cache_release(cc, a);
    sml_prop_case_cache_release(cc, b);
    UNIT_EXPECT(u, role == SML_PROP_SHARE_MINE && again == SML_PROP_SHARE_READY && same,
                "the same key twice: roles %d then %d, same entry %d (want MINE, then READY, 1)",
                role, again, same);
    sml_prop_case_key other[8];
    for (int i = 0; i < 8; i++) other[i] = base;
    other[0].op = SML_LOG_SOFTMAX;
    other[1].dtype = SML_F16;
    other[2].level = 51;
    other[3].seed = 8;
    other[4].min_cols = 2;
    other[5].max_cols = 1024;
    other[6].sizes.big_max_elems = 1 << 21;
    other[7].sizes.tall_prob = 0.1;
    for (int i = 0; i < 8; i++) {
        sml_prop_case_entry *e;
        two_jobs(cc, other[i]);
        int r = get(cc, other[i], 100, &e);
        UNIT_EXPECT(u, r == SML_PROP_SHARE_MINE && e != a,
                    "a key differing in field %d found another's entry (role %d)", i, r);
        sml_prop_case_cache_publish(cc, e, 1);
        sml_prop_case_cache_release(cc, e);
    }
    sml_prop_case_cache_free(cc);
}

/* The budget: a case bigger than it, or one that fits only by dropping entries some job may
 * still take (held or not), is not shared; a failed fill leaves nothing and gives its room
 * back. */
static void budget(unit_run *u) {
    sml_prop_case_cache *cc = sml_prop_case_cache_new(1000);
    two_jobs(cc, key_of(0));
    sml_prop_case_entry *a, *b, *c, *x;
    int big = get(cc, key_of(1), 1001, &x);
    UNIT_EXPECT(u, big == SML_PROP_SHARE_NONE && !x, "a case over the budget: role %d", big);
    get(cc, key_of(1), 400, &a);
    get(cc, key_of(2), 400, &b);
    sml_prop_case_cache_publish(cc, a, 1);
    sml_prop_case_cache_publish(cc, b, 1);
    int held = get(cc, key_of(3), 400, &c);
    sml_prop_case_cache_release(cc, a);
    sml_prop_case_cache_release(cc, b);
    int wanted = get(cc, key_of(3), 400, &c);
    int r1 = get(cc, key_of(1), 400, &a), r2 = get(cc, key_of(2), 400, &b);
    sml_prop_case_cache_release(cc, a);
    sml_prop_case_cache_release(cc, b);
    int small = get(cc, key_of(4), 200, &x);
    if (x) sml_prop_case_cache_publish(cc, x, 0); /* a failed fill */
    int again = get(cc, key_of(4), 200, &x);
    if (x) sml_prop_case_cache_publish(cc, x, 0);
    int room = get(cc, key_of(5), 200, &x);
    if (x) sml_prop_case_cache_publish(cc, x, 0);
    UNIT_EXPECT(u,
                held == SML_PROP_SHARE_NONE && wanted == SML_PROP_SHARE_NONE &&
                    r1 == SML_PROP_SHARE_READY && r2 == SML_PROP_SHARE_READY &&
                    small == SML_PROP_SHARE_MINE && again == SML_PROP_SHARE_MINE &&
                    room == SML_PROP_SHARE_MINE,
                "a third case beside two held %d, beside two kept %d; the two %d %d; a small "
                "one %d, again after a failed fill %d, another in its room %d (want NONE, NONE, "
                "READY, READY, MINE, MINE, MINE)",
                held, wanted, r1, r2, small, again, room);
    sml_prop_case_cache_free(cc);
}

/* Two jobs announced for the kind: once both took a case, the next case made is that entry
 * made over (its buffers kept), though the budget has room for a new one. */
static void spent(unit_run *u) {
    sml_prop_case_cache *cc = sml_prop_case_cache_new(1 << 20);
    two_jobs(cc, key_of(0));
    sml_prop_case_entry *a, *b, *c, *d;
    get(cc, key_of(1), 100, &a);
    sml_prop_pool *pool = sml_prop_case_entry_pool(a);
    sml_prop_case_cache_publish(cc, a, 1);
    get(cc, key_of(2), 100, &c); /* another case, still wanted by the second job */
    sml_prop_case_cache_publish(cc, c, 1);
    sml_prop_case_cache_release(cc, c);
    sml_prop_case_cache_release(cc, a);
    int early = get(cc, key_of(3), 100, &d), kept = d && sml_prop_case_entry_pool(d) != pool;
    sml_prop_case_cache_publish(cc, d, 1);
    sml_prop_case_cache_release(cc, d);
    get(cc, key_of(1), 100, &b); /* the second job takes case 1: now spent */
    sml_prop_case_cache_release(cc, b);
    int role = get(cc, key_of(4), 100, &d), reused = d && sml_prop_case_entry_pool(d) == pool;
    sml_prop_case_cache_publish(cc, d, 1);
    sml_prop_case_cache_release(cc, d);
    int gone = get(cc, key_of(1), 100, &b);
    sml_prop_case_cache_publish(cc, b, 0);
    UNIT_EXPECT(u,
                early == SML_PROP_SHARE_MINE && kept && role == SML_PROP_SHARE_MINE && reused &&
                    gone == SML_PROP_SHARE_MINE,
                "a case one of two jobs took kept %d; the next case reused the spent one's "
                "buffers %d; the spent case asked again: role %d (want 1, 1, MINE)",
                kept, reused, gone);
    sml_prop_case_cache_free(cc);
}

typedef struct waiter {
    sml_prop_case_cache *cc;
    int role;
    int64_t rows;
} waiter;

static void *wait_for(void *arg) {
    waiter *w = arg;
    sml_prop_case_entry *en;
    w->role = get(w->cc, key_of(9), 100, &en);
    if (en) {
        w->rows = sml_prop_case_entry_case(en)->rows;
        sml_prop_case_cache_release(w->cc, en);
    }
    return NULL;
}

/* A job that asks for a case another is drawing waits, then reads what was drawn. */
static void waits(unit_run *u) {
    sml_prop_case_cache *cc = sml_prop_case_cache_new(1 << 20);
    two_jobs(cc, key_of(9));
    sml_prop_case_entry *a;
    get(cc, key_of(9), 100, &a);
    waiter w = {cc, -1, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, wait_for, &w)) {
        UNIT_EXPECT(u, 0, "no thread");
        sml_prop_case_cache_free(cc);
        return;
    }
    struct timespec pause = {0, 50 * 1000000L};
    nanosleep(&pause, NULL);
    sml_prop_case_entry_case(a)->rows = 7;
    sml_prop_case_cache_publish(cc, a, 1);
    sml_prop_case_cache_release(cc, a);
    pthread_join(t, NULL);
    UNIT_EXPECT(u, w.role == SML_PROP_SHARE_READY && w.rows == 7,
                "the waiting job: role %d, rows %lld (want READY and the drawn case's 7)", w.role,
                (long long)w.rows);
    sml_prop_case_cache_free(cc);
}

int main(int argc, char **argv) {
    unit_run u;
    if (unit_init(&u, "test_case_cache", argc, argv)) return 2;
    if (unit_case(&u, 0, NULL)) keys(&u);
    if (unit_case(&u, 1, NULL)) budget(&u);
    if (unit_case(&u, 2, NULL)) spent(&u);
    if (unit_case(&u, 3, NULL)) waits(&u);
    return sml_tally_finish(&u.tally);
}
