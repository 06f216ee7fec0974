/* merge.c: see merge.h. This part reads the files and refuses shards that do not make one
 * run; merge_check.c and merge_ledger.c join them. */
#include "analysis/merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_SCHEMA "softmax-lab-check/1"

typedef struct shard_id {
    int64_t index, count;
    char seed[32], version[32], gpu[128], sweep[64];
    int strict, long_profile; /* a check's --strict and --long: 1, 0, or -1 not recorded */
} shard_id;

static const char *str_or(const sml_json *v, const char *dflt) {
    const char *s = sml_json_str(v);
    return s ? s : dflt;
}

/* A true/false field: 1 or 0; -1 when absent (a file written before it was). */
static int flag_of(const sml_json *v) {
    return v && v->type == SML_JSON_BOOL ? v->boolean != 0 : -1;
}

/* A flag of flag_of as one of two words; "" when not recorded. */
static const char *flag_word(int f, const char *yes, const char *no) {
    return f < 0 ? "" : f ? yes : no;
}

/* The fields that must agree across the shards of one run, as words (names in differs). */
#define ID_FIELDS 6
static void id_fields(const shard_id *x, const char *v[ID_FIELDS]) {
    v[0] = x->seed;
    v[1] = x->version;
    v[2] = x->gpu;
    v[3] = x->sweep;
    v[4] = flag_word(x->strict, "--strict", "declared deviations");
    v[5] = flag_word(x->long_profile, "--long", "default");
}

/* What says which run and which shard a document is. */
static int read_id(const sml_json *doc, sml_merge_kind kind, const char *path, shard_id *id,
                   char *err, size_t errlen) {
    const sml_json *sh = sml_json_get(doc, "shard");
    memset(id, 0, sizeof *id);
    id->strict = id->long_profile = -1; /* a ledger records neither */
    if (!sh || sh->type != SML_JSON_OBJECT) {
        snprintf(err, errlen,
                 "%s: not the result of a shard (no 'shard': made without --shard K/N)", path);
        return 0;
    }
    if (!sml_json_int(sml_json_get(sh, "count"), 1, 4096, &id->count) ||
        !sml_json_int(sml_json_get(sh, "index"), 1, id->count, &id->index)) {
        snprintf(err, errlen, "%s: 'shard' needs 'index' K and 'count' N with 1 <= K <= N", path);
        return 0;
    }
    const sml_json *env = sml_json_get(doc, "environment");
    if (kind == SML_MERGE_CHECK) {
        snprintf(id->seed, sizeof id->seed, "%s", str_or(sml_json_get(doc, "seed"), "?"));
        snprintf(id->version, sizeof id->version, "%s", str_or(sml_json_get(doc, "version"), "?"));
        id->strict = flag_of(sml_json_get(doc, "strict"));
        id->long_profile = flag_of(sml_json_get(doc, "long"));
    } else {
        snprintf(id->seed, sizeof id->seed, "%s",
                 str_or(sml_json_get(sml_json_get(doc, "config"), "seed"), "?"));
        snprintf(id->version, sizeof id->version, "%s",
                 str_or(sml_json_get(env, "softmax_lab_version"), "?"));
        snprintf(id->gpu, sizeof id->gpu, "%s",
                 str_or(sml_json_get(sml_json_get(env, "gpu"), "name"), "no GPU"));
        snprintf(id->sweep, sizeof id->sweep, "%s", str_or(sml_json_get(doc, "sweep"), "?"));
    }
    return 1;
}

/* The first field in which b differs from a, as "field (A: x, B: y)", or 0. A check's verdict
 * rule and profile count where both files record them: a --strict shard and one judged by the
 * kernels' declarations make no one verdict. */
static int differs(const shard_id *a, const shard_id *b, const char *pa, const char *pb, char *err,
                   size_t errlen) {
    const char *names[ID_FIELDS] = {"seed",  "softmax-lab version", "GPU model",
                                    "sweep", "verdict rule",        "profile"};
    const char *va[ID_FIELDS], *vb[ID_FIELDS];
    id_fields(a, va);
    id_fields(b, vb);
    const int recorded_by_all = 4; /* the rule and profile count only where both record them */
    if (a->count != b->count) {
        snprintf(err, errlen,
                 "shards of different splits: %s is shard %lld/%lld, %s is shard %lld/%lld", pa,
                 (long long)a->index, (long long)a->count, pb, (long long)b->index,
                 (long long)b->count);
        return 1;
    }
    for (int i = 0; i < ID_FIELDS; i++)
        if (strcmp(va[i], vb[i]) && (i < recorded_by_all || (va[i][0] && vb[i][0]))) {
            snprintf(err, errlen, "shards of different runs: %s differs (%s: %s, %s: %s)", names[i],
                     pa, va[i], pb, vb[i]);
            return 1;
        }
    return 0;
}

static sml_status load(const char *const *paths, int n, sml_merge *m, char *err, size_t errlen) {
    m->docs = calloc((size_t)n, sizeof *m->docs);
    if (!m->docs) return SML_ERR_OUT_OF_MEMORY;
    m->ndocs = n;
    for (int i = 0; i < n; i++) {
        char why[512];
        sml_status s = sml_json_parse_file(paths[i], &m->docs[i], why, sizeof why);
        if (s != SML_OK) {
            snprintf(err, errlen, "%s: %s", paths[i], why);
            return s;
        }
        const char *schema = sml_json_str(sml_json_get(m->docs[i], "schema"));
        sml_merge_kind kind =
            schema && !strcmp(schema, CHECK_SCHEMA) ? SML_MERGE_CHECK : SML_MERGE_LEDGER;
        if (!schema ||
            (kind == SML_MERGE_LEDGER && !sml_ledger_schema_ok(schema, why, sizeof why))) {
            snprintf(err, errlen,
                     "%s: not a check --json result (%s) or a ledger (%s): 'schema' is %s",
                     paths[i], CHECK_SCHEMA, SML_LEDGER_SCHEMA, schema ? schema : "missing");
            return SML_ERR_FORMAT;
        }
        if (i > 0 && kind != m->kind) {
            snprintf(err, errlen, "%s is a %s, %s a %s: merge one kind at a time", paths[0],
                     m->kind == SML_MERGE_CHECK ? "check result" : "ledger", paths[i],
                     kind == SML_MERGE_CHECK ? "check result" : "ledger");
            return SML_ERR_INVALID_ARG;
        }
        m->kind = kind;
    }
    return SML_OK;
}

/* Every shard once, of one run: docs and paths by shard index into by_index / path_at. */
static sml_status place(const char *const *paths, int n, int partial, sml_merge *m,
                        const sml_json **by_index, const char **path_at, char *err, size_t errlen) {
    shard_id first, id;
    for (int i = 0; i < n; i++) {
        if (!read_id(m->docs[i], m->kind, paths[i], i ? &id : &first, err, errlen))
            return SML_ERR_FORMAT;
        if (i == 0) {
            m->count = (int)first.count;
            by_index[first.index - 1] = m->docs[0];
            path_at[first.index - 1] = paths[0];
            continue;
        }
        if (differs(&first, &id, paths[0], paths[i], err, errlen)) return SML_ERR_INVALID_ARG;
        if (by_index[id.index - 1]) {
            snprintf(err, errlen, "%s and %s are both shard %lld/%lld: give each shard once",
                     path_at[id.index - 1], paths[i], (long long)id.index, (long long)id.count);
            return SML_ERR_INVALID_ARG;
        }
        by_index[id.index - 1] = m->docs[i];
        path_at[id.index - 1] = paths[i];
    }
    snprintf(m->version, sizeof m->version, "%s", first.version);
    m->seed = strtoull(first.seed, NULL, 16);
    m->strict = first.strict;
    m->long_profile = first.long_profile;
    m->given = n;
    for (int k = 0; k < m->count; k++) {
        if (by_index[k]) continue;
        size_t used = strlen(m->missing);
        if (used + 16 < sizeof m->missing)
            snprintf(m->missing + used, sizeof m->missing - used, "%s%d", used ? ", " : "", k + 1);
    }
    if (m->missing[0] && !partial) {
        snprintf(err, errlen,
                 "shard%s %s of %d missing (give %s file%s, or --partial to merge what there is)",
                 strchr(m->missing, ',') ? "s" : "", m->missing, m->count,
                 strchr(m->missing, ',') ? "their" : "its", strchr(m->missing, ',') ? "s" : "");
        return SML_ERR_INVALID_ARG;
    }
    return SML_OK;
}

sml_status sml_merge_files(const char *const *paths, int n, int partial, sml_merge *out, char *err,
                           size_t errlen) {
    memset(out, 0, sizeof *out);
    if (n < 2) {
        snprintf(err, errlen, "merge joins the results of at least 2 shards; %s",
                 n ? "one file given" : "no file given");
        return SML_ERR_INVALID_ARG;
    }
    sml_status s = load(paths, n, out, err, errlen);
    if (s != SML_OK) return s;
    const sml_json **by_index = calloc(4096, sizeof *by_index);
    const char **path_at = calloc(4096, sizeof *path_at);
    if (!by_index || !path_at) s = SML_ERR_OUT_OF_MEMORY;
    if (s == SML_OK) s = place(paths, n, partial, out, by_index, path_at, err, errlen);
    if (s == SML_OK && out->kind == SML_MERGE_CHECK)
        s = sml_merge_check_docs(out, (const sml_json *const *)by_index, path_at, err, errlen);
    else if (s == SML_OK)
        s = sml_merge_ledger_docs(out, (const sml_json *const *)by_index, path_at, err, errlen);
    free(by_index);
    free(path_at);
    return s;
}

void sml_merge_free(sml_merge *m) {
    for (size_t i = 0; i < m->nruns; i++) {
        free(m->runs[i].ratios);
        free(m->runs[i].index);
    }
    free(m->runs);
    sml_ledger_free(&m->ledger);
    free(m->run.cases);
    free(m->run.results);
    free((void *)m->run.plan.kernels);
    free(m->kernels);
    free(m->baseline_only);
    free(m->strings);
    for (int i = 0; i < m->ndocs; i++) sml_json_free(m->docs[i]);
    free(m->docs);
    memset(m, 0, sizeof *m);
}
