/* targeted.c: cases at a mutant's hinted shape, judged, shrunk and saved by the engine's own
 * parts (see targeted.h for why this exists). */
#include "tests/mutants/targeted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop/case.h"
#include "prop/gen.h"
#include "prop/props.h"
#include "prop/repro.h"
#include "prop/shrink.h"
#include "core/dtype.h"
#include "core/rng.h"

/* Keeps targeted cases' values apart from the standard run's case i of the same seed. */
#define TARGET_SALT 0x7A26E7ED00000000ull

int sml_mut_error_is_kernels(const sml_kernel *k, const char *message) {
    size_t n = strlen(k->name);
    return strncmp(message, k->name, n) == 0 && message[n] == ' ';
}

static sml_status draw(const sml_mut_hint *h, uint64_t seed, sml_prop_case *c) {
    memset(c, 0, sizeof *c);
    c->op = h->shape.op;
    c->dtype = h->shape.dtype;
    c->rows = h->shape.rows;
    c->cols = h->shape.cols;
    c->ld = h->shape.ld > 0 ? h->shape.ld : h->shape.cols;
    c->offset = h->shape.offset;
    c->seed = seed;
    sml_status s = sml_prop_case_alloc(c);
    if (s != SML_OK) return s;
    double *row = malloc((size_t)c->cols * sizeof *row);
    if (!row) {
        sml_prop_case_free(c);
        return SML_ERR_OUT_OF_MEMORY;
    }
    sml_rng r;
    sml_rng_seed(&r, seed);
    char fam[32] = "";
    const int f = sml_prop_family_find(h->family);
    for (int64_t i = 0; i < c->rows; i++) {
        sml_prop_gen_logits(&r, c->dtype, f, row, c->cols, fam, sizeof fam);
        for (int64_t j = 0; j < c->cols; j++) sml_store(c->dtype, c->x, i * c->cols + j, row[j]);
    }
    free(row);
    snprintf(c->family, sizeof c->family, "%s (targeted)", f >= 0 ? fam : "mixed");
    return SML_OK;
}

static void record(sml_mut_kill *out, const sml_prop_case *c, const sml_prop_case *small,
                   sml_prop_id p, const sml_prop_verdict *v, int64_t steps) {
    out->killed = 1;
    out->prop = p;
    out->outcome = v->outcome;
    out->rows = c->rows;
    out->cols = c->cols;
    out->ld = c->ld;
    out->offset = c->offset;
    out->s_rows = small->rows;
    out->s_cols = small->cols;
    out->s_ld = small->ld;
    out->s_offset = small->offset;
    out->shrink_steps = steps;
    snprintf(out->family, sizeof out->family, "%s", c->family);
    snprintf(out->message, sizeof out->message, "%s", v->msg);
}

/* Shrink (within the hint's budget), save, and record the first failure of case c. */
static void handle(sml_prop_env *env, const sml_mut_hint *h, const sml_prop_config *cfg,
                   const sml_prop_case *c, sml_prop_id p, const sml_prop_verdict *v,
                   sml_mut_kill *out) {
    sml_prop_case small = *c;
    sml_prop_verdict sv = *v;
    sml_prop_shrink_stats st = {0, 0, 0};
    int shrunk = 0;
    const int cuda_lost = v->outcome == SML_PROP_ERROR && strstr(v->msg, "CUDA") != NULL;
    if (cfg->shrink && h->shrink_seconds > 0.0 && !cuda_lost &&
        sml_prop_shrink(env, p, v->outcome, c, v, cfg->shrink_max_evals, h->shrink_seconds, &small,
                        &sv, &st) == SML_OK)
        shrunk = 1;
    record(out, c, &small, p, &sv, st.steps);
    if (cfg->save_dir) {
        sml_prop_repro m;
        /* case -1: not a numbered case of the standard run */
        sml_prop_repro_describe(&m, env->k->name, p, sv.outcome, sv.msg, cfg->seed, -1, 0, c,
                                st.steps);
        char err[512] = "";
        if (sml_prop_repro_save(cfg->save_dir, &small, &m, cfg->replay_cmd, out->repro,
                                sizeof out->repro, err, sizeof err) != SML_OK) {
            out->repro[0] = 0;
            fprintf(stderr, "  (could not save the targeted reproducer: %s)\n", err);
        }
    }
    if (shrunk) sml_prop_case_free(&small);
}

sml_status sml_mut_targeted_run(const sml_kernel *k, const sml_mut_hint *h,
                                const sml_prop_config *cfg, sml_mut_kill *out) {
    memset(out, 0, sizeof *out);
    if (!k || !h || !cfg || h->shape.rows <= 0 || h->cases <= 0) return SML_ERR_INVALID_ARG;
    if (sml_op_is_backward(h->shape.op)) return SML_ERR_INVALID_ARG; /* no dy generator here */
    sml_prop_env env;
    sml_status s = sml_prop_env_init(&env, k, NULL);
    if (s != SML_OK) {
        sml_prop_env_free(&env);
        return s;
    }
    const double t0 = sml_prop_now();
    for (int i = 0; i < h->cases && !out->killed; i++) {
        sml_prop_case c;
        s = draw(h, sml_derive_seed(cfg->seed ^ TARGET_SALT, (uint64_t)i), &c);
        if (s != SML_OK) break;
        out->cases = i + 1;
        if (cfg->progress) {
            char shape[96];
            sml_prop_case_shape_str(&c, shape, sizeof shape);
            fprintf(cfg->progress, "targeted %s %s %s: case %d of %d, %s\n", k->name,
                    sml_op_name(c.op), sml_dtype_name(c.dtype), i + 1, h->cases, shape);
            fflush(cfg->progress);
        }
        sml_prop_eval e;
        sml_prop_eval_begin(&e, &env, &c);
        for (int p = 0; p < SML_PROP_COUNT; p++) {
            if (!(cfg->props & (1u << p)) || !sml_prop_applies((sml_prop_id)p, c.op)) continue;
            sml_prop_verdict v;
            sml_prop_eval_check(&e, (sml_prop_id)p, &v);
            const int kills = v.outcome == SML_PROP_FAIL ||
                              (v.outcome == SML_PROP_ERROR && sml_mut_error_is_kernels(k, v.msg));
            if (v.outcome == SML_PROP_ERROR && !kills) {
                snprintf(out->message, sizeof out->message, "engine error, not a kill: %.320s",
                         v.msg);
                s = SML_ERR_INTERNAL;
                break;
            }
            if (!kills) continue;
            handle(&env, h, cfg, &c, (sml_prop_id)p, &v, out);
            break;
        }
        sml_prop_eval_end(&e);
        sml_prop_case_free(&c);
        if (s != SML_OK) break;
    }
    out->seconds = sml_prop_now() - t0;
    sml_prop_env_free(&env);
    return s;
}
