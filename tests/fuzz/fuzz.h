/* fuzz.h: what a fuzz target defines, in libFuzzer's shape, so the same target builds with
 * the plain driver (fuzz_main.c, any C compiler) or, optionally, with clang's
 * -fsanitize=fuzzer. A target returns 0; a broken invariant calls sml_fuzz_fail, which
 * aborts, so the driver saves the input like any crash. */
#ifndef SML_FUZZ_H
#define SML_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Run one input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Once, before the first input (argv[0]'s folder and the like are not needed). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The target's name, the suffix of its corpus files (".npy"), and tokens its format is
 * made of, for the mutator (NULL-terminated). */
extern const char sml_fuzz_name[];
extern const char sml_fuzz_suffix[];
extern const char *const sml_fuzz_dict[];

/* A property of the reader that did not hold: prints it and aborts. */
void sml_fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A fresh temporary folder for the target's files (made once, removed at exit). */
const char *sml_fuzz_tmpdir(void);
/* Write size bytes to path; aborts if it cannot. */
void sml_fuzz_write(const char *path, const uint8_t *data, size_t size);

#endif
