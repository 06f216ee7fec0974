/* exec.c: lays a case out in one guarded, canaried, poisoned allocation, runs the kernel and
 * reads the output back, noting every byte that changed where nothing may be written. */
#include "prop/exec.h"

#include "prop/guard.h"
#include "prop/prop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where each region and its tensor sit in the allocation (bytes). */
typedef struct layout {
    size_t esz, span;  /* element size, elements from a tensor's first to its last */
    size_t region;     /* bytes of one region: guard, offset, span, guard */
    size_t base;       /* a tensor's first byte within its region */
    size_t x, dy, out; /* region starts; dy/out are (size_t)-1 when absent */
    size_t total;
} layout;

#define NONE ((size_t)-1)

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static sml_prop_shape shape_of(const sml_prop_case *c) {
    sml_prop_shape sh = {(int32_t)c->op, (int32_t)c->dtype, c->inplace, 0,
                         c->rows,        c->cols,           c->ld,      c->offset};
    return sh;
}

static layout layout_of(const sml_prop_shape *c) {
    layout L;
    L.esz = sml_dtype_size((sml_dtype)c->dtype);
    L.span = (size_t)((c->rows - 1) * c->ld + c->cols);
    L.base = SML_PROP_GUARD + (size_t)c->offset * L.esz;
    /* Regions start 256-byte aligned, as separate cudaMalloc allocations would. */
    L.region = round_up(L.base + L.span * L.esz + SML_PROP_GUARD, 256);
    L.x = 0;
    L.total = L.region;
    L.dy = L.out = NONE;
    if (sml_op_is_backward((sml_op)c->op)) {
        L.dy = L.total;
        L.total += L.region;
    }
    if (!c->inplace) {
        L.out = L.total;
        L.total += L.region;
    }
    return L;
}

/* The host memory a layout needs (its image and the copy read back) may not pass the
 * machine's physical memory: a case the bounds allow (src/prop/case.h) can lay out tens of
 * GiB, and committing more than the machine has would end in the kernel's OOM killer rather
 * than in an allocation that fails. */
size_t sml_prop_host_phys_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return (size_t)pages > SIZE_MAX / (size_t)page ? SIZE_MAX : (size_t)pages * (size_t)page;
}

sml_status sml_prop_exec_init(sml_prop_exec *e, sml_device d) {
    memset(e, 0, sizeof *e);
    e->device = d;
    e->buf.device = d;
    e->host_bytes = sml_prop_host_phys_bytes();
    sml_status s = sml_stream_create(d, &e->stream);
    return s != SML_OK || d == SML_DEVICE_CPU ? s : sml_prop_gpu_init(&e->gpu);
}

static void release_host(unsigned char *p, int pinned) {
    if (pinned)
        sml_prop_gpu_host_free(p);
    else
        free(p);
}

void sml_prop_exec_init_remote(sml_prop_exec *e, sml_device d, sml_prop_launcher l) {
    memset(e, 0, sizeof *e);
    e->device = d;
    e->buf.device = d;
    e->host_bytes = sml_prop_host_phys_bytes();
    e->remote = l;
}

static void drop_pending(sml_prop_exec *e);

void sml_prop_exec_free(sml_prop_exec *e) {
    drop_pending(e);
    if (!e->remote.launch) {
        if (e->device != SML_DEVICE_CPU) sml_prop_gpu_free(&e->gpu);
        sml_buffer_free(&e->buf);
        sml_prop_arena_free(&e->arena);
        sml_stream_destroy(e->device, e->stream);
    }
    if (!e->external) {
        release_host(e->img, e->img_pinned);
        release_host(e->back, e->back_pinned);
    }
    memset(e, 0, sizeof *e);
}

/* A host buffer of at least n bytes (its contents need not survive): where this process
 * launches on the GPU page-locked up to SML_PROP_PIN_MAX, so the copies are asynchronous and
 * unstaged, else malloc's. */
static sml_status grow_host(const sml_prop_exec *e, unsigned char **p, size_t *cap, int *pinned,
                            size_t n) {
    if (*cap >= n) return SML_OK;
    if (e->external) return SML_ERR_OUT_OF_MEMORY; /* a lent buffer is the size it is */
    size_t want = n + n / 2;
    release_host(*p, *pinned);
    *p = NULL;
    *cap = 0;
    *pinned = e->device != SML_DEVICE_CPU && !e->remote.launch && want <= SML_PROP_PIN_MAX &&
              sml_prop_gpu_host_alloc((void **)p, want) == SML_OK;
    if (!*pinned && (*p = malloc(want)) == NULL) return SML_ERR_OUT_OF_MEMORY;
    *cap = want;
    return SML_OK;
}

static sml_status grow_buf(sml_buffer *b, sml_device d, size_t n) {
    if (b->ptr && b->bytes >= n) return SML_OK;
    sml_buffer_free(b);
    size_t want = n + n / 2;
    if (want < (1u << 16)) want = 1u << 16;
    return sml_buffer_alloc(b, d, want);
}

/* A region's image: the dense rows at stride ld (each row's bytes copied from `dense`, or
 * `poison` where dense is NULL), `fill` everywhere else; every byte written once. */
static void lay_rows(unsigned char *region, const layout *L, const sml_prop_shape *c,
                     const void *dense, unsigned char poison, unsigned char fill) {
    size_t row_bytes = (size_t)c->cols * L->esz, ld_bytes = (size_t)c->ld * L->esz;
    size_t at = 0; /* the first byte not yet written */
    for (int64_t r = 0; r < c->rows; r++) {
        size_t start = L->base + (size_t)r * ld_bytes;
        memset(region + at, fill, start - at);
        if (dense)
            memcpy(region + start, (const unsigned char *)dense + (size_t)r * row_bytes, row_bytes);
        else
            memset(region + start, poison, row_bytes);
        at = start + row_bytes;
    }
    memset(region + at, fill, L->region - at);
}

/* A region's image: `fill` everywhere, the dense rows placed at stride ld. */
static void place_rows(unsigned char *region, const layout *L, const sml_prop_shape *c,
                       const void *dense, unsigned char fill) {
    lay_rows(region, L, c, dense, 0, fill);
}

/* The output region: canary everywhere, poison where the rows go. */
static void place_output(unsigned char *region, const layout *L, const sml_prop_shape *c) {
    lay_rows(region, L, c, NULL, SML_PROP_POISON, SML_PROP_CANARY);
}

/* The tensor a region holds, by its start in the layout. */
static const char *region_name(const layout *L, const sml_prop_shape *c, size_t at) {
    return at == L->dy ? "dy" : at == L->out || c->inplace ? "out" : "x";
}

static void describe_byte(char *buf, size_t n, const layout *L, const sml_prop_shape *c, size_t at,
                          const char *what) {
    size_t end = L->base + L->span * L->esz;
    if (at < SML_PROP_GUARD)
        snprintf(buf, n, "%s: %zu bytes before the tensor's area (front guard)", what,
                 SML_PROP_GUARD - at);
    else if (at < L->base)
        snprintf(buf, n, "%s: in the %lld-element offset before the tensor (element %zu)", what,
                 (long long)c->offset, (at - SML_PROP_GUARD) / L->esz);
    else if (at >= end)
        snprintf(buf, n, "%s: byte %zu past the tensor's end (back guard)", what, at - end);
    else {
        size_t el = (at - L->base) / L->esz;
        long long r = (long long)(el / (size_t)c->ld), j = (long long)(el % (size_t)c->ld);
        if (j >= c->cols)
            snprintf(buf, n, "%s: stride padding of row %lld, element %lld (cols %lld, ld %lld)",
                     what, r, j, (long long)c->cols, (long long)c->ld);
        else
            snprintf(buf, n, "%s: row %lld, col %lld", what, r, j);
    }
}

/* Changed canary bytes of the output region (everything but the rows' data). */
static int64_t check_canaries(const unsigned char *region, const layout *L, const sml_prop_shape *c,
                              char *where, size_t wn) {
    int64_t bad = 0;
    size_t first = NONE;
    size_t row_bytes = (size_t)c->cols * L->esz, ld_bytes = (size_t)c->ld * L->esz;
    size_t pos = 0;
    for (int64_t r = 0; r <= c->rows; r++) {
        size_t end = r < c->rows ? L->base + (size_t)r * ld_bytes : L->region;
        for (size_t i = pos; i < end; i++)
            if (region[i] != SML_PROP_CANARY) {
                if (first == NONE) first = i;
                bad++;
            }
        if (r < c->rows) pos = end + row_bytes;
    }
    if (bad) describe_byte(where, wn, L, c, first, "written outside the output");
    return bad;
}

/* How many bytes of a region differ from the image uploaded; the first is described in
 * `where` as `what`. */
static int64_t region_changed(const unsigned char *now, const unsigned char *img, const layout *L,
                              const sml_prop_shape *c, const char *what, char *where, size_t wn) {
    if (memcmp(now, img, L->region) == 0) return 0;
    size_t i = 0;
    while (now[i] == img[i]) i++;
    int64_t n = 0;
    for (size_t j = i; j < L->region; j++) n += now[j] != img[j];
    describe_byte(where, wn, L, c, i, what);
    return n;
}

/* GPU: the guard zones around the regions at reg[0..n-1], zone 2i before region i and
 * 2i + 1 after it. */
static void zones_of(const layout *L, unsigned char *const *reg, int n, unsigned char **zone) {
    for (int i = 0; i < n; i++) {
        zone[2 * i] = reg[i] - SML_PROP_DEVICE_GUARD;
        zone[2 * i + 1] = reg[i] + L->region;
    }
}

/* Where the kernel sees each region (reg[0..n-1], in layout order): the device buffer, each
 * region between guard zones (poisoned when `guard`), or for a CPU kernel the arena's
 * guarded slots, with the guard zones named for the fault handler. The image goes there. */
static sml_status stage(sml_prop_exec *e, const layout *L, const sml_prop_shape *c,
                        unsigned char **reg, int *n, int guard) {
    *n = (int)(L->total / L->region);
    sml_status s;
    if (e->device != SML_DEVICE_CPU) {
        size_t G = SML_PROP_DEVICE_GUARD, stride = L->region + 2 * G;
        if ((s = grow_buf(&e->buf, e->device, (size_t)*n * stride)) != SML_OK) return s;
        for (int i = 0; i < *n; i++) reg[i] = (unsigned char *)e->buf.ptr + G + (size_t)i * stride;
        /* One copy for all regions where the pitch allows, else one per region. */
        if (stride <= SML_PROP_PITCH_MAX)
            s = sml_prop_gpu_copy2d(reg[0], stride, e->img, L->region, L->region, (size_t)*n, 1,
                                    e->stream);
        for (int i = 0; i < *n && stride > SML_PROP_PITCH_MAX && s == SML_OK; i++)
            s = sml_prop_gpu_copy(reg[i], e->img + (size_t)i * L->region, L->region, 1, e->stream);
        if (s != SML_OK) return s;
        unsigned char *zone[SML_PROP_GUARD_ZONES_MAX];
        zones_of(L, reg, *n, zone);
        if (guard && (s = sml_prop_gpu_guard_fill(&e->gpu, zone, 2 * *n, G, e->stream)) != SML_OK)
            return s;
        return sml_prop_gpu_wait(&e->gpu, e->stream);
    }
    if ((s = sml_prop_arena_place(&e->arena, L->region, *n, reg)) != SML_OK) return s;
    for (int i = 0; i < *n; i++) {
        memcpy(reg[i], e->img + (size_t)i * L->region, L->region);
        size_t at = (size_t)i * L->region;
        const char *name = region_name(L, c, at);
        unsigned char *slot = sml_prop_arena_slot(&e->arena, i);
        sml_prop_guard_set(i, name, slot - SML_PROP_ARENA_GUARD, reg[i] + L->base,
                           reg[i] + L->base + L->span * L->esz,
                           slot + e->arena.cap + SML_PROP_ARENA_GUARD);
    }
    return SML_OK;
}

/* Bytes [from, from + n) of the layout (whole regions) back into e->back: on a GPU, queued on
 * the exec's stream (they are there once the stream is waited for). */
static sml_status fetch(sml_prop_exec *e, const layout *L, unsigned char *const *reg, size_t from,
                        size_t n) {
    if (e->device != SML_DEVICE_CPU) {
        size_t stride = L->region + 2 * SML_PROP_DEVICE_GUARD, first = from / L->region,
               count = n / L->region;
        sml_status s = SML_OK;
        if (stride <= SML_PROP_PITCH_MAX)
            s = sml_prop_gpu_copy2d(e->back + from, L->region, reg[first], stride, L->region, count,
                                    0, e->stream);
        for (size_t i = 0; i < count && stride > SML_PROP_PITCH_MAX && s == SML_OK; i++)
            s = sml_prop_gpu_copy(e->back + from + i * L->region, reg[first + i], L->region, 0,
                                  e->stream);
        return s;
    }
    for (size_t at = from; at < from + n; at += L->region)
        memcpy(e->back + at, reg[at / L->region], L->region);
    return SML_OK;
}

/* Room for a layout of `total` bytes in e->img and e->back, held against the machine's
 * memory. */
static sml_status room(sml_prop_exec *e, size_t total, char *where, size_t wn) {
    if (e->host_bytes && total > e->host_bytes / 2) {
        snprintf(where, wn,
                 "the layout needs 2 x %.1f GiB of host memory; this machine has %.1f GiB",
                 (double)total / (double)(1u << 30), (double)e->host_bytes / (double)(1u << 30));
        return SML_ERR_OUT_OF_MEMORY;
    }
    sml_status s;
    unsigned char *img, *back;
    /* The launcher's shared memory where it has some (the worker reads and writes there), else
     * this exec's own. */
    if (e->remote.window && e->remote.window(e->remote.ctx, total, &img, &back) == SML_OK) {
        sml_prop_exec_use(e, img, back, total);
        return SML_OK;
    }
    if (e->external) sml_prop_exec_use(e, NULL, NULL, 0);
    if ((s = grow_host(e, &e->img, &e->cap_img, &e->img_pinned, total)) != SML_OK) return s;
    return grow_host(e, &e->back, &e->cap_back, &e->back_pinned, total);
}

/* The case's layout and its host image in e->img (e->back sized for its return). */
static sml_status prepare(sml_prop_exec *e, const sml_prop_case *c, const sml_prop_shape *sh,
                          layout *L, char *where, size_t wn) {
    /* Sizes below are computed in size_t: only a case inside the bounds is laid out. */
    if (!sml_prop_case_in_bounds(c, where, wn)) return SML_ERR_INVALID_ARG;
    double t0 = sml_prop_now();
    *L = layout_of(sh);
    sml_status s = room(e, L->total, where, wn);
    if (s != SML_OK) return s;
    place_rows(e->img + L->x, L, sh, c->x, c->inplace ? SML_PROP_CANARY : SML_PROP_POISON);
    if (L->dy != NONE) place_rows(e->img + L->dy, L, sh, c->dy, SML_PROP_POISON);
    if (L->out != NONE) place_output(e->img + L->out, L, sh);
    e->copy_seconds += sml_prop_now() - t0;
    return SML_OK;
}

static size_t out_region_of(const layout *L) { return L->out != NONE ? L->out : L->x; }

static sml_problem problem_of(const sml_prop_exec *e, const layout *L, const sml_prop_shape *c,
                              unsigned char *const *reg) {
    sml_problem p = {(sml_op)c->op,
                     (sml_dtype)c->dtype,
                     c->rows,
                     c->cols,
                     c->ld,
                     reg[0] + L->base,
                     L->dy != NONE ? reg[L->dy / L->region] + L->base : NULL,
                     reg[out_region_of(L) / L->region] + L->base,
                     e->stream};
    return p;
}

/* Wait for the kernel's work: its stream. */
static sml_status wait_kernel(sml_prop_exec *e) {
    return e->device == SML_DEVICE_CPU ? SML_OK : sml_prop_gpu_wait(&e->gpu, e->stream);
}

/* The guard zones' changes after a GPU main run (res->hit) into rep: counted with the
 * canaries, and the first changed zone named in rep->where ("wrote past the end of out: bytes
 * 1048576..1048579 after it changed"), which then stands for the whole run's writes outside
 * the tensors. */
static void guard_report(const layout *L, const sml_prop_shape *c, const sml_prop_launch_res *res,
                         sml_prop_run_report *rep) {
    unsigned long long G = SML_PROP_DEVICE_GUARD, base = L->base, end = L->base + L->span * L->esz;
    unsigned long long region = L->region;
    int said = 0;
    for (int z = 0; z < res->nzones && z < SML_PROP_GUARD_ZONES_MAX; z++) {
        const sml_prop_zone_hit *hit = &res->hit[z];
        if (!hit->count) continue;
        rep->canary_bad += (int64_t)hit->count;
        if (said++) continue;
        const char *name = region_name(L, c, (size_t)(z / 2) * L->region);
        if (z % 2)
            snprintf(rep->where, sizeof rep->where,
                     "wrote past the end of %s: bytes %llu..%llu after it changed", name,
                     (unsigned long long)(region - end + hit->first),
                     (unsigned long long)(region - end + hit->last));
        else
            snprintf(rep->where, sizeof rep->where,
                     "wrote before the start of %s: bytes %llu..%llu before it changed", name,
                     (unsigned long long)(base + G - 1 - hit->last),
                     (unsigned long long)(base + G - 1 - hit->first));
    }
}

/* The main run's checks on what came back: canaries, inputs, the GPU's guard zones. */
static void verify_run(const sml_prop_exec *e, const layout *L, const sml_prop_shape *c,
                       const sml_prop_launch_res *res, sml_prop_run_report *rep) {
    const unsigned char *o = e->back + out_region_of(L);
    rep->canary_bad = check_canaries(o, L, c, rep->where, sizeof rep->where);
    char w[192];
    int said = rep->canary_bad > 0;
    if (!c->inplace &&
        region_changed(e->back + L->x, e->img + L->x, L, c, "input x modified", w, sizeof w)) {
        rep->input_modified = 1;
        if (!said) snprintf(rep->where, sizeof rep->where, "%s", w);
        said = 1;
    }
    if (L->dy != NONE &&
        region_changed(e->back + L->dy, e->img + L->dy, L, c, "input dy modified", w, sizeof w)) {
        rep->input_modified = 1;
        if (!said) snprintf(rep->where, sizeof rep->where, "%s", w);
    }
    guard_report(L, c, res, rep);
}

/* A refused run (SML_ERR_UNSUPPORTED) must have written nothing: its output region as
 * uploaded and, on a GPU main run, the guard zones as poisoned. */
static void refusal_check(const sml_prop_exec *e, const layout *L, const sml_prop_shape *c,
                          const sml_prop_launch_res *res, sml_prop_run_report *rep) {
    size_t out_region = out_region_of(L);
    rep->canary_bad =
        region_changed(e->back + out_region, e->img + out_region, L, c,
                       "refused with SML_ERR_UNSUPPORTED yet wrote", rep->where, sizeof rep->where);
    int64_t before = rep->canary_bad;
    char keep[sizeof rep->where], zone[sizeof rep->where];
    memcpy(keep, rep->where, sizeof keep);
    guard_report(L, c, res, rep);
    memcpy(zone, rep->where, sizeof zone);
    if (before)
        memcpy(rep->where, keep, sizeof keep); /* the region's own change first */
    else if (rep->canary_bad)
        snprintf(rep->where, sizeof rep->where, "refused with SML_ERR_UNSUPPORTED yet %.150s",
                 zone);
}

/* The kernel's run on the image in e->img, in this process: res says what it returned and
 * which bytes of the layout came back into e->back. */
static sml_status launch_run(sml_prop_exec *e, const sml_kernel *k, sml_handle *h, const layout *L,
                             const sml_prop_shape *c, int verify, sml_prop_launch_res *res) {
    unsigned char *reg[3], *zone[SML_PROP_GUARD_ZONES_MAX];
    int nreg, guarded = verify && e->device != SML_DEVICE_CPU;
    sml_status s = stage(e, L, c, reg, &nreg, guarded);
    if (s != SML_OK) return s;
    sml_problem p = problem_of(e, L, c, reg);
    double t0 = sml_prop_now();
    sml_status ks = sml_run(k, h, &p), q = SML_OK, w = SML_OK;
    zones_of(L, reg, nreg, zone);
    /* Behind the kernel on its stream, before one wait for all of it: the guard zones compared
     * on the device, and what comes back (a refusal must write nothing, the API's promise: its
     * output region comes back; else only the output region, unless everything is to be
     * verified). One wait, not one for the kernel and one for the copies: the GPU goes from
     * the kernel to the copies without waiting for this thread. */
    if (ks == SML_OK || ks == SML_ERR_UNSUPPORTED) {
        res->from = verify && ks == SML_OK ? 0 : out_region_of(L);
        res->n = verify && ks == SML_OK ? L->total : L->region;
        if (guarded)
            q = sml_prop_gpu_guard_check(&e->gpu, zone, 2 * nreg, SML_PROP_DEVICE_GUARD, e->stream);
        if (q == SML_OK) q = fetch(e, L, reg, res->from, res->n);
        w = wait_kernel(e);
    }
    res->seconds = sml_prop_now() - t0;
    /* An error the wait reports after a launch that returned SML_OK is the kernel's (an
     * asynchronous fault sticks to every later call); after a refusal, it is this exec's. */
    if (ks == SML_OK) ks = w;
    res->status = (int32_t)ks;
    sml_prop_guard_clear();
    if (ks == SML_ERR_CUDA) snprintf(res->error, sizeof res->error, "%s", sml_last_cuda_error());
    if (ks != SML_OK && ks != SML_ERR_UNSUPPORTED) {
        res->from = res->n = 0;
        return SML_OK;
    }
    if (w != SML_OK) return w;
    if (q != SML_OK) return q;
    if (guarded) {
        res->nzones = 2 * nreg;
        sml_prop_gpu_guard_hits(&e->gpu, 2 * nreg, res->hit);
    }
    return SML_OK;
}

/* The stream check's held run (GPU), in this process. */
static sml_status launch_held(sml_prop_exec *e, const sml_kernel *k, sml_handle *h, const layout *L,
                              const sml_prop_shape *c, sml_prop_launch_res *res) {
    res->ran = -1;
    if (e->device == SML_DEVICE_CPU || e->held_off) return SML_OK;
    unsigned char *reg[3];
    int nreg;
    sml_status s = stage(e, L, c, reg, &nreg, 0);
    if (s != SML_OK) return s;
    unsigned char *o = reg[out_region_of(L) / L->region];
    sml_problem p = problem_of(e, L, c, reg);
    sml_status ks = SML_OK;
    int ran = -1;
    s = sml_prop_gpu_hold(&e->gpu, o, L->region, e->stream);
    if (s == SML_OK && (ks = sml_run(k, h, &p)) == SML_OK)
        s = sml_prop_gpu_judge(&e->gpu, o, L->region, &ran);
    sml_prop_gpu_release(&e->gpu);
    sml_status w = sml_prop_gpu_wait(&e->gpu, e->stream);
    /* A launch that did not return inside the hold waits for its own stream: every later check
     * would cost it the whole hold again. */
    if (s == SML_OK && ks == SML_OK && w == SML_OK && ran < 0) e->held_off = 1;
    /* The kernel's own failure is the main run's to report, and its runs that follow. */
    res->ran = ks != SML_OK || w != SML_OK ? -1 : ran;
    res->status = (int32_t)(ks != SML_OK ? ks : w);
    return s;
}

int sml_prop_exec_req_valid(const sml_prop_launch_req *req) {
    const sml_prop_shape *sh = &req->shape;
    if ((unsigned)sh->op >= SML_OP_COUNT || (unsigned)sh->dtype >= SML_DTYPE_COUNT ||
        (req->kind != SML_PROP_LAUNCH_RUN && req->kind != SML_PROP_LAUNCH_HELD))
        return 0;
    sml_prop_case c = {.op = (sml_op)sh->op,
                       .dtype = (sml_dtype)sh->dtype,
                       .rows = sh->rows,
                       .cols = sh->cols,
                       .ld = sh->ld,
                       .offset = sh->offset,
                       .inplace = sh->inplace != 0};
    char why[64];
    if (!sml_prop_case_in_bounds(&c, why, sizeof why)) return 0;
    layout L = layout_of(sh);
    return req->image_bytes == L.total;
}

sml_status sml_prop_exec_image(sml_prop_exec *e, size_t bytes) {
    char why[192]; /* room() gives a lent buffer back before it makes its own */
    return room(e, bytes, why, sizeof why);
}

void sml_prop_exec_use(sml_prop_exec *e, const unsigned char *img, unsigned char *back,
                       size_t cap) {
    if (!e->external) {
        release_host(e->img, e->img_pinned);
        release_host(e->back, e->back_pinned);
    }
    /* The image is only ever read here (stage copies it to where the kernel runs). */
    e->img = (unsigned char *)img;
    e->back = back;
    e->cap_img = e->cap_back = img ? cap : 0;
    e->img_pinned = e->back_pinned = 0;
    e->external = img != NULL;
}

sml_status sml_prop_exec_launch(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                const sml_prop_launch_req *req, sml_prop_launch_res *res) {
    memset(res, 0, sizeof *res);
    res->ran = -1;
    if (!sml_prop_exec_req_valid(req)) return SML_ERR_INVALID_ARG;
    layout L = layout_of(&req->shape);
    if (req->kind == SML_PROP_LAUNCH_HELD) return launch_held(e, k, h, &L, &req->shape, res);
    return launch_run(e, k, h, &L, &req->shape, req->verify, res);
}

/* A remote launch's answer, counted: the launcher's status s, or the worker's own failure. */
static sml_status counted(sml_prop_exec *e, sml_prop_launch_res *res, sml_status s) {
    if (s != SML_OK) return s;
    if (!res->ended && res->engine != SML_OK) return (sml_status)res->engine;
    if (res->alone) e->alone++;
    if (res->deadline > 0 && !res->ended) e->slow++;
    if (res->ended == SML_PROP_ENDED_CAPPED) e->capped = 1;
    return SML_OK;
}

/* One launch of req: in this process, or through the exec's remote launcher. */
static sml_status launch(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                         const sml_prop_launch_req *req, sml_prop_launch_res *res) {
    if (!e->remote.launch) return sml_prop_exec_launch(e, k, h, req, res);
    if (e->capped) {
        memset(res, 0, sizeof *res);
        res->ended = SML_PROP_ENDED_CAPPED;
        snprintf(res->cause, sizeof res->cause, "the run's time cap had passed");
        return SML_OK;
    }
    return counted(e, res, e->remote.launch(e->remote.ctx, req, e->img, res, e->back));
}

static sml_prop_launch_req request(const sml_prop_exec *e, const sml_prop_shape *sh, int kind,
                                   int verify, const layout *L) {
    sml_prop_launch_req r = {*sh, kind, verify, e->phase, e->prop, e->index, L->total};
    return r;
}

/* A launch that gave no answer to judge, into rep. */
static int ended(const sml_prop_launch_res *res, sml_prop_run_report *rep) {
    if (!res->ended) return 0;
    rep->ended = res->ended;
    rep->status = SML_ERR_KERNEL_FAILED;
    snprintf(rep->where, sizeof rep->where, "%s", res->cause);
    return 1;
}

/* A begun run's answer nobody took (exec.h, sml_prop_exec_run_begin), taken and counted before
 * the exec lays out anything else: the worker's socket is in step again, the image unchanged
 * for a rerun alone. */
static void drop_pending(sml_prop_exec *e) {
    if (!e->pending) return;
    e->pending = 0;
    sml_prop_launch_res res;
    counted(e, &res, e->remote.recv(e->remote.ctx, &e->pending_req, e->img, &res, e->back));
}

static void read_back(sml_prop_exec *e, const sml_kernel *k, const sml_prop_case *c,
                      const sml_prop_shape *sh, const layout *L, int verify, void *out,
                      const sml_prop_launch_res *res, sml_prop_run_report *rep);

/* What a run's answer says, into rep and out. */
static sml_status finish(sml_prop_exec *e, const sml_kernel *k, const sml_prop_case *c,
                         const sml_prop_shape *sh, const layout *L, int verify, void *out,
                         const sml_prop_launch_res *res, sml_prop_run_report *rep);

sml_status sml_prop_exec_run_begin(sml_prop_exec *e, const sml_prop_case *c, int verify) {
    if (!e->remote.send || !e->remote.recv || e->capped || e->pending) return SML_OK;
    layout L;
    char why[sizeof((sml_prop_run_report *)0)->where];
    sml_prop_shape sh = shape_of(c);
    sml_status s = prepare(e, c, &sh, &L, why, sizeof why);
    if (s != SML_OK) return SML_OK; /* end lays it out again and says why */
    e->pending_req = request(e, &sh, SML_PROP_LAUNCH_RUN, verify, &L);
    e->pending_case = c;
    s = e->remote.send(e->remote.ctx, &e->pending_req, e->img);
    e->pending = s == SML_OK;
    return s;
}

sml_status sml_prop_exec_run_end(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                 const sml_prop_case *c, int verify, void *out,
                                 sml_prop_run_report *rep) {
    if (!e->pending || e->pending_case != c) return sml_prop_exec_run(e, k, h, c, verify, out, rep);
    e->pending = 0;
    memset(rep, 0, sizeof *rep);
    sml_prop_shape sh = shape_of(c);
    layout L = layout_of(&sh);
    sml_prop_launch_res res;
    sml_status s =
        counted(e, &res, e->remote.recv(e->remote.ctx, &e->pending_req, e->img, &res, e->back));
    if (s != SML_OK) return s;
    return finish(e, k, c, &sh, &L, verify, out, &res, rep);
}

sml_status sml_prop_exec_run(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                             const sml_prop_case *c, int verify, void *out,
                             sml_prop_run_report *rep) {
    drop_pending(e);
    memset(rep, 0, sizeof *rep);
    layout L;
    sml_prop_shape sh = shape_of(c);
    sml_status s = prepare(e, c, &sh, &L, rep->where, sizeof rep->where);
    if (s != SML_OK) return s;
    sml_prop_launch_req req = request(e, &sh, SML_PROP_LAUNCH_RUN, verify, &L);
    sml_prop_launch_res res;
    if ((s = launch(e, k, h, &req, &res)) != SML_OK) return s;
    return finish(e, k, c, &sh, &L, verify, out, &res, rep);
}

static sml_status finish(sml_prop_exec *e, const sml_kernel *k, const sml_prop_case *c,
                         const sml_prop_shape *sh, const layout *L, int verify, void *out,
                         const sml_prop_launch_res *res, sml_prop_run_report *rep) {
    if (ended(res, rep)) return SML_OK;
    double t0 = sml_prop_now();
    read_back(e, k, c, sh, L, verify, out, res, rep);
    e->copy_seconds += sml_prop_now() - t0;
    return SML_OK;
}

/* finish's work: the kernel's status, the output dense into out, the bytes around it. */
static void read_back(sml_prop_exec *e, const sml_kernel *k, const sml_prop_case *c,
                      const sml_prop_shape *sh, const layout *L, int verify, void *out,
                      const sml_prop_launch_res *res, sml_prop_run_report *rep) {
    rep->status = (sml_status)res->status;
    if (rep->status != SML_OK) {
        snprintf(rep->where, sizeof rep->where, "%s returned %s%s%.160s", k->name,
                 sml_strerror(rep->status), rep->status == SML_ERR_CUDA ? ": " : "",
                 rep->status == SML_ERR_CUDA ? res->error : "");
        if (rep->status == SML_ERR_UNSUPPORTED) refusal_check(e, L, sh, res, rep);
        return;
    }
    const unsigned char *o = e->back + out_region_of(L);
    size_t row_bytes = (size_t)c->cols * L->esz;
    for (int64_t r = 0; r < c->rows; r++)
        memcpy((unsigned char *)out + (size_t)r * row_bytes,
               o + L->base + (size_t)(r * c->ld) * L->esz, row_bytes);
    if (verify) verify_run(e, L, sh, res, rep);
}

sml_status sml_prop_exec_ping(sml_prop_exec *e, sml_prop_run_report *rep) {
    drop_pending(e);
    memset(rep, 0, sizeof *rep);
    if (!e->remote.launch || e->capped) return SML_OK;
    sml_prop_launch_req req;
    memset(&req, 0, sizeof req);
    req.kind = SML_PROP_LAUNCH_PING;
    req.phase = e->phase;
    req.index = e->index;
    sml_prop_launch_res res;
    sml_status s = e->remote.launch(e->remote.ctx, &req, NULL, &res, NULL);
    if (s == SML_OK) ended(&res, rep);
    return s;
}

void sml_prop_exec_expect(const sml_prop_launch_req *req, int32_t status, uint64_t *from,
                          uint64_t *n) {
    *from = *n = 0;
    if (req->kind != SML_PROP_LAUNCH_RUN || !sml_prop_exec_req_valid(req)) return;
    if (status != SML_OK && status != SML_ERR_UNSUPPORTED) return;
    layout L = layout_of(&req->shape);
    int all = req->verify && status == SML_OK;
    *from = all ? 0 : out_region_of(&L);
    *n = all ? L.total : L.region;
}

sml_status sml_prop_exec_stream_check(sml_prop_exec *e, const sml_kernel *k, sml_handle *h,
                                      const sml_prop_case *c, int *ran, sml_prop_run_report *rep) {
    *ran = -1;
    drop_pending(e);
    memset(rep, 0, sizeof *rep);
    if (e->device == SML_DEVICE_CPU || e->held_off) return SML_OK;
    layout L;
    sml_prop_shape sh = shape_of(c);
    sml_status s = prepare(e, c, &sh, &L, rep->where, sizeof rep->where);
    if (s != SML_OK) return s;
    sml_prop_launch_req req = request(e, &sh, SML_PROP_LAUNCH_HELD, 0, &L);
    sml_prop_launch_res res;
    if ((s = launch(e, k, h, &req, &res)) != SML_OK) return s;
    if (ended(&res, rep)) return SML_OK;
    *ran = res.ran;
    return SML_OK;
}
