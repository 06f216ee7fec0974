/* test_cli_run.c: the CLI tests' shell runner (tests/support/cli_run.h) reads back what every
 * step of a command line writes, standard error included: a test that looks for a message in
 * the output of "a && b" must see a's too, or its check (or its skip) never matches. */
#include <stdio.h>
#include <string.h>

#include "cli_run.h"
#include "test_support.h"

static sml_tally T = {"test_cli_run", 0, 0, 0};

int main(int argc, char **argv) {
    (void)argc;
    char cmd[256], out[256];
    const char *repro = argv[0];
    int rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0, "echo first >&2 && echo second >&2");
    sml_test_check(&T, rc == 0 && strstr(out, "first") && strstr(out, "second"), repro,
                   "sml_shell of 'a && b': exit %d, both steps' stderr wanted, got '%s'", rc, out);
    rc = sml_shell(cmd, sizeof cmd, out, sizeof out, SML_SHELL_ECHO_RC,
                   "echo first >&2 && (exit 3) && echo never");
    sml_test_check(&T, rc == 3 && strstr(out, "first") && !strstr(out, "never"), repro,
                   "sml_shell ECHO_RC of a failing chain: %d (want 3) and the first step's "
                   "stderr, got '%s'",
                   rc, out);
    rc = sml_shell(cmd, sizeof cmd, out, sizeof out, 0, "echo to-stderr >&2; exit 5");
    sml_test_check(&T, rc == 5 && strstr(out, "to-stderr"), repro,
                   "sml_shell of 'a; exit 5': %d (want 5) and a's stderr, got '%s'", rc, out);
    return sml_tally_finish(&T);
}
