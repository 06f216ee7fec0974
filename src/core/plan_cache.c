/* plan_cache.c: finding the plan table of a device (plan_cache.h) and keeping it per handle.
 * dladdr is a GNU extension: the library finds its data directory from its own path. */
#define _GNU_SOURCE
#include "core/plan_cache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef SML_SHARE_RELDIR
#define SML_SHARE_RELDIR "../share/softmax_lab"
#endif
#define SML_SHARE_BUILD_RELDIR "../share/softmax_lab"

void sml_plan_slot_free(sml_plan_slot *s) {
    if (!s) return;
    sml_plan_table_free(&s->table);
    memset(s, 0, sizeof *s);
}

void sml_plan_cache_free(struct sml_plan_cache *c) {
    if (!c) return;
    for (int i = 0; i < SML_PLAN_MAX_DEVICES; i++) sml_plan_slot_free(&c->dev[i]);
    free(c);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int sml_data_dir(const char *sub, char *buf, size_t n) {
    Dl_info info;
    if (!dladdr((void *)&sml_data_dir, &info) || !info.dli_fname) return 0;
    char lib[1024];
    if (snprintf(lib, sizeof lib, "%s", info.dli_fname) >= (int)sizeof lib) return 0;
    char *slash = strrchr(lib, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(lib, sizeof lib, ".");
    static const char *const REL[] = {SML_SHARE_RELDIR, SML_SHARE_BUILD_RELDIR};
    for (size_t i = 0; i < sizeof REL / sizeof REL[0]; i++) {
        if (snprintf(buf, n, "%s/%s/%s", lib, REL[i], sub) >= (int)n) continue;
        if (is_dir(buf)) return 1;
    }
    buf[0] = 0;
    return 0;
}

int sml_plans_data_dir(char *buf, size_t n) { return sml_data_dir("plans", buf, n); }

/* Load path into slot if it is a good table for gpu; 1 when it is. */
static int try_table(const char *path, const sml_plan_key *gpu, sml_plan_slot *slot) {
    char err[256];
    sml_plan_table t;
    if (sml_plan_table_load(path, &t, err, sizeof err) != SML_OK) return 0;
    if (!sml_plan_key_matches(&t.key, gpu)) {
        sml_plan_table_free(&t);
        return 0;
    }
    slot->table = t;
    slot->state = 1;
    snprintf(slot->source, sizeof slot->source, "%s", path);
    return 1;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.plans files of dir in name order: the first for gpu. */
static int try_dir(const char *dir, const sml_plan_key *gpu, sml_plan_slot *slot) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < sizeof names / sizeof names[0];) {
        const size_t l = strlen(e->d_name);
        if (l > 6 && !strcmp(e->d_name + l - 6, ".plans") && (names[n] = strdup(e->d_name))) n++;
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        char path[SML_PLAN_SOURCE_LEN];
        if (!found && snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path)
            found = try_table(path, gpu, slot);
        free(names[i]);
    }
    return found;
}

void sml_plans_lookup(const sml_plan_key *gpu, const char *dir, sml_plan_slot *slot) {
    memset(slot, 0, sizeof *slot);
    slot->state = 2;
    const char *env = getenv("SML_PLANS");
    if (env && !strcmp(env, "off")) return;
    if (env && *env && try_table(env, gpu, slot)) return;
    char data[SML_PLAN_SOURCE_LEN - 64];
    if (!dir && sml_plans_data_dir(data, sizeof data)) dir = data;
    if (dir) try_dir(dir, gpu, slot);
}

const sml_plan_table *sml_plans_for(sml_handle *h, int dev, sml_plan_slot *tmp,
                                    const char **source) {
    if (source) *source = NULL;
    if (dev < 0 || dev >= SML_PLAN_MAX_DEVICES) return NULL;
    sml_plan_slot *slot = tmp;
    if (h) {
        if (!h->plans && !(h->plans = calloc(1, sizeof *h->plans))) return NULL;
        slot = &h->plans->dev[dev];
    }
    if (!slot->state) {
        sml_plan_key key;
        if (sml_gpu_plan_key(dev, &key) != SML_OK) {
            slot->state = 2;
            return NULL;
        }
        sml_plans_lookup(&key, NULL, slot);
    }
    if (slot->state != 1) return NULL;
    if (source) *source = slot->source;
    return &slot->table;
}
