/* options.c: the edge-shape harness's command line (edge.h lists the options). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "edge/edge.h"
#include "softmax_lab_plugin.h"

static int usage(const char *argv0) {
    fprintf(
        stderr,
        "usage: %s [--list-cases] [--kernel NAME] [--op OP] [--dtype DT] [--rows R --cols C\n"
        "          [--ld L] [--offset ELEMS] [--inplace 0|1] [--sampled]] [--seed S] [--no-huge] "
        "[--cpu]\n"
        "          [--strict] [--plant padding|input|guard|value|twin] [--load PLUGIN]...\n"
        "          [--devices D[,D]] [--shard K/N] [--case-timeout S] [--in-process]\n"
        "  every visible GPU is used (--devices to choose): one worker process per GPU runs every\n"
        "  n-th case (--shard i/n); the run fails if any worker's slice fails. The kernels run in "
        "a\n"
        "  worker process: one that crashes, exits or hangs is a FAIL naming it (--in-process: "
        "here)\n",
        argv0);
    return 2;
}

int sml_edge_parse(sml_edge_opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->argv0 = argv[0];
    o->op = o->dt = -1;
    o->rows = o->cols = o->ld = o->offset = o->inplace = -1;
    o->huge = 1;
    const char *env = getenv("SML_SEED");
    o->seed = env ? strtoull(env, NULL, 0)
                  : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ 0x6B55ull;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list-cases")) {
            o->list = 1;
            continue;
        }
        if (!strcmp(a, "--cpu")) {
            o->cpu = 1;
            continue;
        }
        if (!strcmp(a, "--no-huge")) {
            o->huge = 0;
            continue;
        }
        if (!strcmp(a, "--sampled")) {
            o->sampled = 1;
            continue;
        }
        if (!strcmp(a, "--strict")) {
            o->strict = 1;
            continue;
        }
        if (!strcmp(a, "--in-process")) continue; /* the program decides that before it parses */
        if (!v) return usage(argv[0]);
        i++;
        if (!strcmp(a, "--kernel"))
            o->kernel = v;
        else if (!strcmp(a, "--op")) {
            sml_op op;
            if (sml_op_parse(v, &op) != SML_OK) return usage(argv[0]);
            o->op = (int)op;
        } else if (!strcmp(a, "--dtype")) {
            sml_dtype dt;
            if (sml_dtype_parse(v, &dt) != SML_OK) return usage(argv[0]);
            o->dt = (int)dt;
        } else if (!strcmp(a, "--rows"))
            o->rows = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--cols"))
            o->cols = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--ld"))
            o->ld = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--offset"))
            o->offset = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--inplace"))
            o->inplace = strtoll(v, NULL, 0);
        else if (!strcmp(a, "--seed"))
            o->seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--devices"))
            o->devices = v;
        else if (!strcmp(a, "--shard")) {
            char why[128];
            if (!sml_shard_parse(v, &o->shard, why, sizeof why)) {
                fprintf(stderr, "%s: bad value for --shard: '%.40s' (%s)\n", argv[0], v, why);
                return 2;
            }
        } else if (!strcmp(a, "--case-timeout")) {
            /* The supervisor of the worker process reads it (src/worker/command.c); checked here
             * so that a bad value is refused before anything runs. */
            char *end;
            double t = strtod(v, &end);
            if (*end || end == v || !(t > 0)) {
                fprintf(stderr,
                        "%s: bad value for --case-timeout: '%.40s' (seconds, more than 0)\n",
                        argv[0], v);
                return 2;
            }
        } else if (!strcmp(a, "--load")) {
            char msg[1024];
            if (o->nloads == (int)(sizeof o->loads / sizeof o->loads[0]) ||
                sml_load_plugin(v, msg, sizeof msg) != SML_OK) {
                fprintf(stderr, "%s: --load %s: %s\n", argv[0], v,
                        o->nloads == (int)(sizeof o->loads / sizeof o->loads[0])
                            ? "too many libraries"
                            : msg);
                return 2;
            }
            o->loads[o->nloads++] = v;
        } else if (!strcmp(a, "--plant")) {
            if (strcmp(v, "padding") && strcmp(v, "input") && strcmp(v, "guard") &&
                strcmp(v, "value") && strcmp(v, "twin"))
                return usage(argv[0]);
            o->plant = v;
        } else
            return usage(argv[0]);
    }
    if ((o->rows > 0) != (o->cols > 0) || (o->ld >= 0 && o->ld < o->cols)) return usage(argv[0]);
    if (o->sampled && (o->rows <= 0 || o->offset > 0 || o->inplace > 0)) return usage(argv[0]);
    if (o->plant && !o->sampled) return usage(argv[0]); /* it damages sampled cases only */
    if (o->kernel && !sml_kernel_find(o->kernel)) {
        fprintf(stderr, "%s: no kernel named '%s' in the registry\n", argv[0], o->kernel);
        return 2;
    }
    return 0;
}
