/* test_limit_gpu.c: the traffic-matched limit on the GPU. The two-read kernel writes a ^ b on
 * every byte (16-byte path, the byte tail, and misaligned pointers that take the byte path
 * alone), nothing past the end; the limit is timed with a positive time and GB/s counting
 * 3x the buffer; and a bench run of one forward and one backward case puts each case's limit
 * (the copy forward, the two-read kernel backward) and every timed row's frac_limit in the
 * ledger JSON. GPU only: exits 77 without one.
 * Planted checks it must catch (each fails the named cases on a GPU): the 16-byte kernel
 * writing x.x ^ y.x into all four words fails case 1; the tail launch dropped fails cases 2
 * and 3; the backward limit timed as a copy (reads 1) fails case 12. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/copy_ref.h"
#include "json/json_read.h"
#include "report/ledger_write.h"
#include "case_filter.h"
#include "test_support.h"

static sml_tally T = {"test_limit_gpu", 0, 0, 0};
static sml_case_filter F;

#ifdef SML_HAVE_CUDA
/* dst = a ^ b over bytes starting `off` bytes into each buffer; 1 when every byte of the
 * range is right and the 64 bytes after it are untouched. */
static int read2_once(size_t bytes, size_t off) {
    size_t total = bytes + off + 64;
    unsigned char *a = malloc(total), *b = malloc(total), *d = malloc(total);
    sml_buffer da, db, dd;
    int ok = a && b && d && sml_buffer_alloc(&da, SML_DEVICE_GPU, total) == SML_OK;
    ok = ok && sml_buffer_alloc(&db, SML_DEVICE_GPU, total) == SML_OK;
    ok = ok && sml_buffer_alloc(&dd, SML_DEVICE_GPU, total) == SML_OK;
    for (size_t i = 0; ok && i < total; i++) {
        a[i] = (unsigned char)(i * 7 + 1);
        b[i] = (unsigned char)(i * 13 + 5);
    }
    ok = ok && sml_buffer_upload(&da, 0, a, total) == SML_OK &&
         sml_buffer_upload(&db, 0, b, total) == SML_OK && sml_buffer_fill(&dd, 0xEE) == SML_OK;
    ok = ok && sml_bench_read2_kernel((char *)dd.ptr + off, (char *)da.ptr + off,
                                      (char *)db.ptr + off, bytes, NULL) == SML_OK;
    ok = ok && sml_device_sync(SML_DEVICE_GPU, NULL) == SML_OK &&
         sml_buffer_download(&dd, 0, d, total) == SML_OK;
    for (size_t i = 0; ok && i < total; i++) {
        int in = i >= off && i < off + bytes;
        if (d[i] != (in ? (unsigned char)(a[i] ^ b[i]) : 0xEE)) {
            printf("  byte %zu of %zu (offset %zu): got 0x%02x\n", i, bytes, off, d[i]);
            ok = 0;
        }
    }
    sml_buffer_free(&dd);
    sml_buffer_free(&db);
    sml_buffer_free(&da);
    free(a);
    free(b);
    free(d);
    return ok;
}

static void bench_run(void) {
    const sml_kernel *kernels[] = {sml_kernel_find("auto")};
    int baseline_only[] = {0};
    sml_bench_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.sweep, sizeof plan.sweep, "test");
    plan.shapes.n = 1;
    plan.shapes.shape[0] = (sml_sweep_shape){1024, 4096, 1u << SML_BF16, 0};
    plan.ops = (1u << SML_SOFTMAX) | (1u << SML_SOFTMAX_BWD);
    plan.dtypes = SML_DTYPES_ALL;
    plan.kernels = kernels;
    plan.baseline_only = baseline_only;
    plan.nkernels = 1;
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    cfg.stop.max_seconds = 0.05;
    cfg.progress = 0;
    sml_bench_run run;
    char err[256];
    sml_status s = sml_bench_execute(&plan, &cfg, NULL, NULL, &run, err, sizeof err);
    sml_test_check_case(&T, &F, NULL, 10, s == SML_OK && run.ncases == 2,
                        "a bench run of softmax and softmax_bwd bf16 1024x4096");
    if (s != SML_OK) {
        printf("  %s\n", err);
        return;
    }
    for (size_t c = 0; c < run.ncases; c++) {
        const sml_bench_case *k = &run.cases[c];
        const sml_bench_result *r = sml_bench_find(&run, c, "auto");
        int bwd = sml_op_is_backward(k->op);
        double want = (bwd ? 3.0 : 2.0) * (double)k->tensor_bytes / k->limit.t.median * 1e-9;
        sml_test_check_case(
            &T, &F, NULL, 11 + (int)c,
            k->has_limit && k->limit_reads == (bwd ? 2 : 1) &&
                fabs(k->limit_gbps - want) <= 1e-9 * want &&
                (bwd || k->limit.t.median == k->copy.t.median) && r && r->timed &&
                fabs(r->frac_limit - k->limit.t.median / r->m.t.median) < 1e-12,
            bwd ? "backward: the two-read limit, 3x the tensor bytes, frac_limit on auto's row"
                : "forward: the limit is the copy kernel's measurement, frac_limit on auto's row");
    }
    sml_ledger l;
    char *buf = NULL;
    size_t len = 0;
    int ok = sml_ledger_build(&run, &l) == SML_OK;
    FILE *f = open_memstream(&buf, &len);
    ok = ok && f && sml_ledger_write_json(&run, &l, f) == 0;
    if (f) fclose(f);
    sml_json *doc = NULL;
    ok = ok && sml_json_parse(buf, len, &doc, err, sizeof err) == SML_OK;
    const sml_json *ev = sml_json_get(sml_json_at(sml_json_get(doc, "records"), 0), "evidence");
    int rows = 0;
    for (size_t i = 0; i < sml_json_len(ev); i++) {
        const sml_json *e = sml_json_at(ev, i);
        rows += sml_json_is_num(sml_json_get(e, "frac_limit")) &&
                sml_json_is_num(sml_json_get(e, "limit_gbps")) &&
                sml_json_str(sml_json_get(e, "limit_pattern")) != NULL;
    }
    sml_test_check_case(&T, &F, NULL, 13, ok && rows == 2,
                        "the ledger JSON: frac_limit, limit_gbps and limit_pattern on both rows");
    sml_json_free(doc);
    free(buf);
    if (ok) sml_ledger_free(&l);
    sml_bench_run_free(&run);
}
#endif

int main(int argc, char **argv) {
    if (sml_case_filter_init(&F, argc, argv)) return 2;
    int skip = sml_test_require_gpu("test_limit_gpu");
    if (skip) return skip;
#ifdef SML_HAVE_CUDA
    sml_test_check_case(&T, &F, NULL, 1, read2_once(1 << 20, 0),
                        "read2: 1 MiB, every 16-byte vector a ^ b, nothing past the end");
    sml_test_check_case(&T, &F, NULL, 2, read2_once((1 << 12) + 5, 0),
                        "read2: 4101 bytes, the tail past the last vector");
    sml_test_check_case(&T, &F, NULL, 3, read2_once(4099, 3),
                        "read2: misaligned pointers, bytes one at a time");
    sml_measure_opts o;
    memset(&o, 0, sizeof o);
    sml_bench_config cfg;
    sml_bench_config_default(&cfg);
    o.stop = cfg.stop;
    o.stop.max_seconds = 0.05;
    o.sample_seconds = cfg.gpu_sample_s;
    o.max_batch = cfg.max_batch;
    o.min_batch = cfg.gpu_min_batch;
    o.warmup_seconds = 0.01;
    o.hold = cfg.gpu_hold;
    sml_measurement m;
    double gbps = 0;
    char err[256] = "";
    sml_status s = sml_bench_limit_same_traffic(SML_DEVICE_GPU, (size_t)64 << 20, 2, 2, &o, &m,
                                                &gbps, err, sizeof err);
    sml_test_check_case(
        &T, &F, NULL, 4,
        s == SML_OK && m.t.median > 0 &&
            fabs(gbps - 3.0 * (double)(64 << 20) / m.t.median * 1e-9) < 1e-6 * gbps,
        "the two-read limit on 64 MiB buffers: a positive time, GB/s counting 3x the buffer");
    if (s != SML_OK) printf("  %s\n", err);
    sml_test_check_case(&T, &F, NULL, 5,
                        sml_bench_limit_same_traffic(SML_DEVICE_GPU, 1024, 3, 1, &o, &m, &gbps, err,
                                                     sizeof err) == SML_ERR_INVALID_ARG,
                        "a limit of 3 reads is refused");
    bench_run();
#endif
    return sml_tally_finish(&T);
}
