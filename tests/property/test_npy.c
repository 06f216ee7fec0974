/* test_npy: the .npy reader and writer (src/io/npy.c): round trips in every dtype and
 * rank, the header numpy expects byte for byte, the bf16 sidecar, and a clear error (never a
 * guess) for every file softmax-lab must refuse. Files go to a temporary folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/npy.h"
#include "test_support.h"

static sml_tally T = {"test_npy", 0, 0, 0};
static char DIR_[256];
static const char *REPRO = "./build/tests/property/test_npy";

static void path_of(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", DIR_, name);
}

/* A hand-made .npy: version, header text, then `data_bytes` bytes of data. */
static void write_raw(const char *name, int major, const char *hdr, size_t data_bytes) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    size_t hl = strlen(hdr);
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
    size_t pn;
    if (major == 1) {
        pre[8] = (unsigned char)(hl & 0xFF);
        pre[9] = (unsigned char)(hl >> 8);
        pn = 10;
    } else {
        pre[8] = (unsigned char)(hl & 0xFF);
        pre[9] = (unsigned char)(hl >> 8);
        pre[10] = pre[11] = 0;
        pn = 12;
    }
    fwrite(pre, 1, pn, f);
    fwrite(hdr, 1, hl, f);
    for (size_t i = 0; i < data_bytes; i++) fputc((int)(i * 37 & 0xFF), f);
    fclose(f);
}

/* A format major.minor file whose header is numpy's, padded, for a shape of float32: the
 * length field off by `hlen_delta`, `data_bytes` of data and `extra` bytes after them. */
static void write_npy(const char *name, int major, int minor, const char *fortran,
                      const char *shape, int hlen_delta, size_t data_bytes, size_t extra) {
    char p[512], hdr[256];
    path_of(p, sizeof p, name);
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': %s, 'shape': %s, }",
                      fortran, shape);
    size_t pre = major == 1 ? 10 : 12;
    while ((pre + (size_t)hl + 1) % 64) hdr[hl++] = ' ';
    hdr[hl++] = '\n';
    FILE *f = fopen(p, "wb");
    unsigned field = (unsigned)(hl + hlen_delta);
    unsigned char b[12] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           (unsigned char)major,
                           (unsigned char)minor,
                           (unsigned char)field,
                           (unsigned char)(field >> 8),
                           0,
                           0};
    fwrite(b, 1, pre, f);
    fwrite(hdr, 1, (size_t)hl, f);
    for (size_t i = 0; i < data_bytes + extra; i++) fputc(i < data_bytes ? 0x3F : 0, f);
    fclose(f);
}

/* Read `name` in a child under a 10 s alarm: 0 when it answered (a refusal counts), else
 * the signal that stopped it. */
static int read_answers(const char *name) {
    char p[512];
    path_of(p, sizeof p, name);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        sml_npy a;
        char err[256];
        _exit(sml_npy_read(p, -1, &a, err, sizeof err) == SML_OK ? 1 : 0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void write_text(const char *name, const char *text) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

/* Read `name`; expect status `want_status` and, on failure, `needle` in the message. */
static void expect_read(const char *name, int want_dtype, sml_status want_status,
                        const char *needle, sml_npy *out) {
    char p[512], err[1024] = "", what[1400];
    path_of(p, sizeof p, name);
    sml_npy a;
    sml_status s = sml_npy_read(p, want_dtype, &a, err, sizeof err);
    snprintf(what, sizeof what, "%s: status %s (%s), expected %s", name, sml_strerror(s), err,
             sml_strerror(want_status));
    sml_test_check(&T, s == want_status, REPRO, "%s", what);
    if (s != SML_OK && needle) {
        snprintf(what, sizeof what, "%s: the message should mention '%s'", name, needle);
        sml_test_check(&T, strstr(err, needle) != NULL, REPRO, "%s: %s", what, err);
    }
    if (s == SML_OK && out)
        *out = a;
    else if (s == SML_OK)
        sml_npy_free(&a);
}

static void round_trip(sml_dtype dt, int ndim, const int64_t *shape, const char *name) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t bytes = (size_t)n * sml_dtype_size(dt);
    unsigned char *data = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes; i++) data[i] = (unsigned char)(i * 131 + 7);
    char p[512], err[512] = "";
    path_of(p, sizeof p, name);
    sml_status s = sml_npy_write(p, dt, ndim, shape, data, err, sizeof err);
    sml_test_check(&T, s == SML_OK, REPRO, "write: %s", err);
    sml_npy a;
    s = sml_npy_read(p, -1, &a, err, sizeof err);
    sml_test_check(&T, s == SML_OK, REPRO, "read back: %s", err);
    if (s == SML_OK) {
        int same =
            a.dtype == dt && a.ndim == ndim && a.bytes == bytes && memcmp(a.data, data, bytes) == 0;
        for (int i = 0; same && i < ndim; i++) same = a.shape[i] == shape[i];
        int64_t rows = 1;
        for (int i = 0; i + 1 < ndim; i++) rows *= shape[i];
        same = same && a.rows == rows && a.cols == shape[ndim - 1];
        sml_test_check(&T, same, REPRO, "round trip keeps dtype, shape, rows x cols and bytes: %s",
                       name);
        sml_npy_free(&a);
    }
    free(data);
}

int main(void) {
    snprintf(DIR_, sizeof DIR_, "/tmp/sml_test_npy_%d", (int)getpid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", DIR_);
    if (system(cmd) != 0) return 1;

    int64_t s2[2] = {3, 5}, s1[1] = {7}, s3[3] = {2, 3, 4}, s0[2] = {0, 4};
    round_trip(SML_F32, 2, s2, "a.npy");
    round_trip(SML_F16, 1, s1, "b.npy");
    round_trip(SML_BF16, 3, s3, "c.npy");
    round_trip(SML_F32, 2, s0, "empty.npy");

    /* The header numpy writes (and reads): 64-byte aligned data, exact dict text. */
    {
        char p[512];
        path_of(p, sizeof p, "a.npy");
        FILE *f = fopen(p, "rb");
        unsigned char buf[128] = {0};
        size_t got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        size_t hl = (size_t)buf[8] | ((size_t)buf[9] << 8);
        const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }";
        sml_test_check(&T,
                       got >= 64 && buf[6] == 1 && buf[7] == 0 && (10 + hl) % 64 == 0 &&
                           buf[10 + hl - 1] == '\n' && memcmp(buf + 10, want, strlen(want)) == 0,
                       REPRO, "format 1.0 header as numpy writes it: %s", (const char *)buf + 10);
        path_of(p, sizeof p, "b.npy");
        f = fopen(p, "rb");
        got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        want = "{'descr': '<f2', 'fortran_order': False, 'shape': (7,), }";
        sml_test_check(&T, memcmp(buf + 10, want, strlen(want)) == 0, REPRO,
                       "1-D shape written as (7,)");
        char sc[600];
        path_of(p, sizeof p, "c.npy");
        sml_npy_sidecar_path(p, sc, sizeof sc);
        f = fopen(sc, "r");
        char word[16] = {0};
        if (f) {
            if (!fgets(word, sizeof word, f)) word[0] = 0;
            fclose(f);
        }
        sml_test_check(&T, f && !strncmp(word, "bf16", 4), REPRO,
                       "bf16 writes the sidecar saying bf16: %s", sc);
        f = fopen(p, "rb");
        got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        sml_test_check(&T, strstr((const char *)buf + 10, "'<u2'") != NULL, REPRO,
                       "bf16 data is stored as '<u2'");
        /* Overwriting with another dtype must not leave a lying sidecar. */
        float v[2] = {1.0f, 2.0f};
        int64_t sh[1] = {2};
        char err[256];
        sml_npy_write(p, SML_F32, 1, sh, v, err, sizeof err);
        sml_test_check(&T, access(sc, F_OK) != 0, REPRO,
                       "an fp32 file replacing a bf16 one removes the sidecar");
    }

    /* Files to take. */
    sml_npy a;
    write_raw("v2.npy", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 16);
    expect_read("v2.npy", -1, SML_OK, NULL, NULL);
    write_raw("spaces.npy", 1,
              "{\"shape\": ( 4 , 3 ) , \"fortran_order\":False,\"descr\":\"<f2\"}\n", 24);
    memset(&a, 0, sizeof a);
    expect_read("spaces.npy", -1, SML_OK, NULL, &a);
    sml_test_check(&T, a.rows == 4 && a.cols == 3 && a.dtype == SML_F16, REPRO,
                   "keys in any order, double quotes, spaces");
    sml_npy_free(&a);
    write_raw("raw.npy", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (5,), }\n", 10);
    memset(&a, 0, sizeof a);
    expect_read("raw.npy", SML_BF16, SML_OK, NULL, &a);
    sml_test_check(&T, a.dtype == SML_BF16 && a.raw_bits && a.rows == 1 && a.cols == 5, REPRO,
                   "raw 16-bit as bf16 on request");
    sml_npy_free(&a);
    write_raw("rawi.npy", 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }\n", 10);
    write_text("rawi.npy.dtype", "bfloat16\n");
    memset(&a, 0, sizeof a);
    expect_read("rawi.npy", -1, SML_OK, NULL, &a);
    sml_test_check(&T, a.dtype == SML_BF16, REPRO, "int16 bits with a 'bfloat16' sidecar are bf16");
    sml_npy_free(&a);
    write_raw("void.npy", 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (2, 3), }\n", 12);
    expect_read("void.npy", SML_BF16, SML_OK, NULL, NULL);
    write_raw("nd.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 5), }\n",
              480);
    memset(&a, 0, sizeof a);
    expect_read("nd.npy", -1, SML_OK, NULL, &a);
    sml_test_check(&T, a.rows == 24 && a.cols == 5 && a.ndim == 4, REPRO,
                   "4-D: softmax over the last axis");
    sml_npy_free(&a);

    /* Files to refuse, each with a message that says why and what to do. */
    expect_read("missing.npy", -1, SML_ERR_IO, "cannot open", NULL);
    write_text("text.npy", "this is not numpy\n");
    expect_read("text.npy", -1, SML_ERR_FORMAT, "not a .npy", NULL);
    write_raw("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8);
    expect_read("be.npy", -1, SML_ERR_FORMAT, "big-endian", NULL);
    write_raw("fo.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", 16);
    expect_read("fo.npy", -1, SML_ERR_FORMAT, "Fortran", NULL);
    write_raw("f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", 16);
    expect_read("f8.npy", -1, SML_ERR_BAD_DTYPE, "float32", NULL);
    write_raw("i4.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", 8);
    expect_read("i4.npy", -1, SML_ERR_BAD_DTYPE, "'<i4'", NULL);
    write_raw("rawnone.npy", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }\n", 4);
    expect_read("rawnone.npy", -1, SML_ERR_BAD_DTYPE, "--dtype bf16", NULL);
    write_raw("conflict.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }\n", 4);
    write_text("conflict.npy.dtype", "bf16\n");
    expect_read("conflict.npy", -1, SML_ERR_BAD_DTYPE, "sidecar", NULL);
    write_raw("badside.npy", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }\n", 4);
    write_text("badside.npy.dtype", "float128\n");
    expect_read("badside.npy", -1, SML_ERR_FORMAT, "float128", NULL);
    write_raw("want.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8);
    expect_read("want.npy", SML_F16, SML_ERR_BAD_DTYPE, "asked for", NULL);
    write_raw("short.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }\n", 20);
    expect_read("short.npy", -1, SML_ERR_FORMAT, "truncated", NULL);
    write_raw("scalar.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", 4);
    expect_read("scalar.npy", -1, SML_ERR_FORMAT, "0-d", NULL);
    write_raw("v9.npy", 9, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 4);
    expect_read("v9.npy", -1, SML_ERR_FORMAT, "version", NULL);
    write_raw("struct.npy", 1,
              "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", 4);
    expect_read("struct.npy", -1, SML_ERR_FORMAT, "structured", NULL);

    /* Files the reader once took, or refused for the wrong reason. */
    write_npy("ok2x3.npy", 1, 0, "False", "(2, 3)", 0, 24, 0);
    expect_read("ok2x3.npy", -1, SML_OK, NULL, NULL);
    write_npy("v2ok.npy", 2, 0, "False", "(2, 3)", 0, 24, 0);
    expect_read("v2ok.npy", -1, SML_OK, NULL, NULL);
    /* A length field 10 bytes short: the data was read from the header's padding. */
    write_npy("hlen_short.npy", 1, 0, "False", "(2, 3)", -10, 24, 0);
    expect_read("hlen_short.npy", -1, SML_ERR_FORMAT, "newline", NULL);
    write_npy("trailing.npy", 1, 0, "False", "(2, 3)", 0, 24, 8);
    expect_read("trailing.npy", -1, SML_ERR_FORMAT, "8 bytes after", NULL);
    write_npy("falsey.npy", 1, 0, "Falsey", "(2, 3)", 0, 24, 0);
    expect_read("falsey.npy", -1, SML_ERR_FORMAT, "'fortran_order' is not True or False", NULL);
    write_npy("nocomma.npy", 1, 0, "False", "(2 3)", 0, 24, 0);
    expect_read("nocomma.npy", -1, SML_ERR_FORMAT, "'shape' is not a tuple", NULL);
    write_npy("int_shape.npy", 1, 0, "False", "(6)", 0, 24, 0);
    expect_read("int_shape.npy", -1, SML_ERR_FORMAT, "not a tuple", NULL);
    write_npy("v1_5.npy", 1, 5, "False", "(2, 3)", 0, 24, 0);
    expect_read("v1_5.npy", -1, SML_ERR_FORMAT, "version 1.5", NULL);
    write_npy("v3.npy", 3, 0, "False", "(2, 3)", 0, 24, 0);
    expect_read("v3.npy", -1, SML_ERR_FORMAT, "version 3.0", NULL);
    write_raw("extra_key.npy", 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8);
    expect_read("extra_key.npy", -1, SML_ERR_FORMAT, "unknown key 'x'", NULL);
    write_raw("dup_key.npy", 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (3,)}\n", 12);
    expect_read("dup_key.npy", -1, SML_ERR_FORMAT, "twice", NULL);
    write_text("empty_file.npy", "");
    expect_read("empty_file.npy", -1, SML_ERR_FORMAT, "0 bytes: too short", NULL);
    write_text("four.npy", "\x93NUM");
    expect_read("four.npy", -1, SML_ERR_FORMAT, "4 bytes: too short", NULL);
    {
        char p[512];
        path_of(p, sizeof p, "folder.npy");
        mkdir(p, 0777);
        expect_read("folder.npy", -1, SML_ERR_IO, "a directory", NULL);
        /* A FIFO is refused at once; it blocked the reader until a writer came. */
        path_of(p, sizeof p, "pipe.npy");
        if (mkfifo(p, 0666) == 0) {
            int sig = read_answers("pipe.npy");
            sml_test_check(&T, sig == 0, REPRO, "a FIFO is refused, not waited on%s",
                           sig ? ": the read hung until the alarm" : "");
            if (!sig) expect_read("pipe.npy", -1, SML_ERR_IO, "FIFO", NULL);
        } else {
            printf("note: mkfifo failed here; the FIFO case is not run\n");
        }
    }
    /* A path long enough to fill the message keeps the reason at its end. */
    {
        char name[400];
        int n = snprintf(name, sizeof name, ".");
        while (n < 300) n += snprintf(name + n, sizeof name - (size_t)n, "/.");
        snprintf(name + n, sizeof name - (size_t)n, "/trailing.npy");
        char p[900], err[160] = "";
        path_of(p, sizeof p, name);
        sml_npy a;
        sml_status st = sml_npy_read(p, -1, &a, err, sizeof err);
        sml_test_check(&T, st == SML_ERR_FORMAT && strstr(err, "bytes after"), REPRO,
                       "a 350-character path leaves the reason in a 160-byte message: %s", err);
    }

    snprintf(cmd, sizeof cmd, "rm -rf %s", DIR_);
    if (system(cmd) != 0) printf("note: could not remove %s\n", DIR_);
    return sml_tally_finish(&T);
}
