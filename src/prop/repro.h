/* repro.h: reproducers on disk. One failing case is a small JSON file (what to run, what
 * failed, where it came from) next to its inputs as .npy: <stem>.json, <stem>.x.npy,
 * and for backward ops <stem>.dy.npy and <stem>.logits.npy (the logits y was computed
 * from). The format is documented in docs/PROPERTIES.md ("Reproducers"). */
#ifndef SML_PROP_REPRO_H
#define SML_PROP_REPRO_H

#include <stddef.h>
#include <stdint.h>

#include "prop/case.h"
#include "prop/prop.h"

#define SML_PROP_REPRO_FORMAT "softmax-lab reproducer 1"

typedef struct sml_prop_repro {
    char kernel[64];
    sml_prop_id prop;
    char verdict[16]; /* "fail" or "error", when saved */
    char message[384];
    uint64_t run_seed;
    int64_t case_index; /* -1: not from a numbered case */
    int level;
    sml_layout orig; /* the case as drawn, before shrinking */
    int64_t shrink_steps;
    char family[64];
    char load[4096]; /* the plugin library the kernel came from (`--load`); "" built-in */
    int strict;      /* saved by a --strict run: judged against the contract itself, its
                        kernel's declared deviation excusing nothing, wherever it replays */
} sml_prop_repro;

/* " --load PATH" (PATH quoted for a POSIX shell where it needs it) for a kernel loaded from a
 * plugin library, "" for NULL or "": what goes into a printed replay or rerun command. */
void sml_prop_load_arg(const char *library, char *buf, size_t n);
/* The flags of cfg beside the seed that decide which case an index draws and how it is judged
 * (" --long", " --strict", " --case-timeout S" where set), for a printed command that redraws a
 * case: "" for the default profile's run. */
void sml_prop_case_flags(const sml_prop_config *cfg, char *buf, size_t n);
/* The replay command a kernel's reproducers are printed with: replay_cmd (NULL: "softmax-lab
 * replay"), or SML_PYTHON_REPLAY for a kernel whose library is a Python module. */
const char *sml_prop_replay_prefix(const char *library, const char *replay_cmd);

/* The record of a failure: `original` is the case as drawn (its shape, its logit family),
 * outcome and message what the saved (shrunk) case shows; case_index -1 for a case that is
 * not a numbered case of a run. */
void sml_prop_repro_describe(sml_prop_repro *m, const char *kernel, sml_prop_id prop,
                             sml_prop_outcome outcome, const char *message, uint64_t run_seed,
                             int64_t case_index, int level, const sml_prop_case *original,
                             int64_t shrink_steps);

/* Write the reproducer into dir (created if missing); json_path gets the .json's path. */
sml_status sml_prop_repro_save(const char *dir, const sml_prop_case *c, const sml_prop_repro *m,
                               const char *replay_cmd, char *json_path, size_t n, char *err,
                               size_t errlen);
/* Read one back; c gets its own arrays (sml_prop_case_free). m->load is the optional field
 * "load" (a library path, or null). */
sml_status sml_prop_repro_load(const char *json_path, sml_prop_case *c, sml_prop_repro *m,
                               char *err, size_t errlen);
/* The .json files under each folder of `dirs` (one folder, or several separated by ':'),
 * recursively, sorted; returns how many (paths malloc'd, free with
 * sml_prop_repro_list_free). A missing folder adds nothing. */
size_t sml_prop_repro_list(const char *dirs, char ***paths);
void sml_prop_repro_list_free(char **paths, size_t n);
/* What a loaded reproducer is, into a replay's result: its property, op, dtype, layout, in
 * place or not, and the verdict it recorded (the kernel and library are the caller's). */
void sml_prop_replay_describe(const sml_prop_case *c, const sml_prop_repro *m,
                              sml_prop_replay_result *r);
/* Loads every reproducer under dirs (as sml_prop_repro_list finds them): the number that
 * cannot be read, with the first one's path and reason in err. */
size_t sml_prop_repro_unreadable(const char *dirs, char *err, size_t errlen);

#endif
