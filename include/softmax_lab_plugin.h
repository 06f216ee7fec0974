/* softmax_lab_plugin.h: kernels softmax-lab did not compile.
 *
 * A plugin is a shared library that exports one C function, sml_plugin_kernels, returning a
 * table of sml_kernel (softmax_lab.h) and the plugin ABI version it was built against:
 *
 *     #include <softmax_lab_plugin.h>
 *     static sml_status my_launch(sml_handle *h, const sml_problem *p) { ... }
 *     static const sml_kernel KERNELS[] = {
 *         {"my_kernel", "my_kernel.cu", SML_DEVICE_GPU, SML_OPS_FWD, 1u << SML_F32, 1, 0,
 *          my_launch, "one line: what it does", {"cudnn", 1.0, "all"}, NULL, 0, NULL},
 *     };
 *     SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi) {
 *         *count = sizeof KERNELS / sizeof KERNELS[0];
 *         *abi = SML_PLUGIN_ABI_VERSION;
 *         return KERNELS;
 *     }
 *
 * `softmax-lab COMMAND --load libmine.so` (or SML_LOAD=libmine.so) then lists, checks,
 * benchmarks and replays its kernels as it does its own. A launch gets the same validated
 * sml_problem a built-in kernel gets: op, dtype and row length within what its table line
 * declares, pointers on the device it declares. The table and its strings must stay alive
 * while the library is loaded (static storage does); a loaded library is never unloaded.
 *
 * Every table line is checked before any is registered: a name of 1-63 characters from
 * [A-Za-z0-9_.-], not "all", not taken by a registered kernel or by another line; a launch
 * function; device SML_DEVICE_CPU or SML_DEVICE_GPU; ops and dtypes non-zero with no bit
 * past SML_OPS_ALL / SML_DTYPES_ALL; 1 <= min_cols and, with max_cols != 0, min_cols <=
 * max_cols; a claim's baseline a registered kernel (or an earlier line of the table), its
 * min_speedup > 0 and its shapes "all", "short", "mid" or "long"; flags with no bit past
 * SML_KERNEL_FLAGS_ALL (SML_KERNEL_FRAMEWORK marks a framework baseline: a library's kernel
 * the others are measured against); a deviation (sml_deviation, softmax_lab.h) with every
 * figure finite and >= 0, each bound_factor 0 or >= 1, no exception bit past
 * SML_DEV_EXCEPTIONS_ALL, and no bound for an op or dtype the line does not run. file,
 * summary, known_deviation and deviation may be NULL. One bad line refuses the whole table,
 * with a message naming the line, the problem and where the table came from.
 *
 * A kernel that misses the contract in a measured way declares how in `deviation`, in terms
 * the checker enforces; `known_deviation` is a label only. For example, a 16-bit softmax that
 * is not correctly rounded:
 *
 *     static const sml_deviation MY_DEVIATION = {
 *         .ulps = {[SML_SOFTMAX] = {[SML_F16] = 1.5, [SML_BF16] = 1.5}}};
 *     ... "fp16/bf16 softmax not correctly rounded", 0, &MY_DEVIATION},
 *
 * Tables built against ABI versions 1 (sml_kernel without `flags`) and 2 (without
 * `deviation`) still load: their lines are read in that layout, with flags 0 (none a
 * framework baseline) and no deviation, so a `known_deviation` text of theirs excuses nothing
 * (`softmax-lab list` and `check` say so). The registry then holds a copy of their lines, so
 * sml_kernel_at returns pointers into that copy, not into the plugin's table. */
#ifndef SOFTMAX_LAB_PLUGIN_H
#define SOFTMAX_LAB_PLUGIN_H

#include <stddef.h>

#include "softmax_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever sml_kernel, sml_problem, sml_claim or the launch signature change.
 * Version 2 added sml_kernel.flags at the end; version 3 added sml_kernel.deviation after it
 * (a declared deviation is a checked bound; the known_deviation text no longer excuses
 * anything). Version 1 and 2 tables are still taken. */
#define SML_PLUGIN_ABI_VERSION 3u
#define SML_PLUGIN_ABI_OLDEST  1u /* the oldest version sml_register_kernels still takes */

/* Kernels registered from Python give an origin "python:MODULE (versions)". Their source,
 * "python:MODULE", is what `list` shows, a reproducer records and `--load` may name; only the
 * Python binding (python3 -m softmax_lab) loads it, by importing MODULE, and it replays
 * such reproducers with SML_PYTHON_REPLAY. */
#define SML_PYTHON_SOURCE_PREFIX "python:"
#define SML_PYTHON_REPLAY        "python3 -m softmax_lab replay"

/* The name a plugin exports, and its type. */
#define SML_PLUGIN_SYMBOL "sml_plugin_kernels"
typedef const sml_kernel *(*sml_plugin_kernels_fn)(size_t *count, unsigned *abi_version);

#if defined(_WIN32)
#define SML_PLUGIN_EXPORT __declspec(dllexport)
#else
#define SML_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The entry point a plugin defines (declared here so its definition is checked). */
SML_PLUGIN_EXPORT const sml_kernel *sml_plugin_kernels(size_t *count, unsigned *abi_version);

/* Register `count` kernels of `table` (which must stay alive) after the registered ones:
 * sml_kernel_count / sml_kernel_at / sml_kernel_find see the built-in kernels first, then
 * registered ones in order. `origin` says where the table came from (a library path,
 * "python:module.fn"); it is copied and shown by `softmax-lab list`. All or nothing: a bad
 * line (see above) or an abi_version outside SML_PLUGIN_ABI_OLDEST..SML_PLUGIN_ABI_VERSION
 * registers none and returns SML_ERR_PLUGIN with the reason in msg (when msg is not NULL).
 * Thread-safe. */
sml_status sml_register_kernels(const sml_kernel *table, size_t count, unsigned abi_version,
                                const char *origin, char *msg, size_t msglen);

/* Withdraw a table registered with sml_register_kernels (the same pointer): its kernels leave
 * sml_kernel_count, sml_kernel_at and sml_kernel_find, so their names may be registered again.
 * The table must stay valid while a command that started before may still use it (the
 * registry keeps no copy). SML_ERR_INVALID_ARG for a table not registered this way (a loaded
 * library's table stays). */
sml_status sml_unregister_kernels(const sml_kernel *table);

/* dlopen the library at path, call its sml_plugin_kernels and register the table (origin:
 * the library's absolute path). Loading a library already loaded does nothing and succeeds.
 * SML_ERR_PLUGIN (reason in msg) when it cannot be opened, is not a shared library, lacks
 * the symbol, or its table is refused; the library is then closed again. */
sml_status sml_load_plugin(const char *path, char *msg, size_t msglen);

/* Where a registered kernel came from (the origin given at registration), or NULL for a
 * kernel built into softmax-lab (or a pointer that is not a registry entry). */
const char *sml_kernel_origin(const sml_kernel *k);

#ifdef __cplusplus
}
#endif
#endif
