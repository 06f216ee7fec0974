#!/bin/bash
# gpu_verify.sh [PLAN]: on a GPU machine, from the repository root: build the tree for sm_90,
# then the stages named in STAGES (default "tune ctest san"), each under its own time limit, so
# that ci/gpu.sh's work can be run a part at a time where a session's time is short:
#   tune    the tuning plan PLAN (tools/tune.cu); TUNE_SAMPLE_MS lengthens samples
#   ctest   the GPU mutation test, test_gpu_threads and test_api (or the tests CTEST_RE names)
#   gpuk    test_gpu_kernels for each kernel of KERNELS (default "split auto")
#   props   the property suite (softmax-lab check, GPU profile) for each kernel of KERNELS
#   san     compute-sanitizer: ci/gpu.sh's stage `sanitize` (run_sanitizers.sh, the tall shapes last)
#   bench   the ledger: ci/gpu.sh's stage `bench` (bench --backend all --sweep standard --op all,
#           through the Python binding where torch imports, so the framework backends are in
#           it: about 380 s on an H100; no case started after BENCH_CASES_LIMIT s), and its targets
# The summaries land in $OUT (default ./out), every log in $OUT/logs.tgz (a few files are
# easier to fetch than many); a summary table last.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
FINAL=$OUT; OUT=$(mktemp -d)
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
B=build-gpu
STAGES=${STAGES:-tune ctest san}
has() { [[ " $STAGES " == *" $1 "* ]]; }
t=0; start() { t=$(date +%s); }
took() { echo "== $1 exit $2 in $(( $(date +%s) - t )) s"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
start
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/configure.log" 2>&1 &&
  cmake --build $B -j "$(nproc)" >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
took build 0
if has tune && [ -n "${1:-}" ]; then
  tools/build_tune.sh $B >/dev/null 2>&1 || echo "tune: build failed"
  start; timeout "${TUNE_LIMIT:-150}" ./$B/tune "$1" >"$OUT/tune.txt" 2>&1; took tune $?
fi
if has ctest; then
  start
  (cd $B && timeout "${CTEST_LIMIT:-300}" ctest -V -R "${CTEST_RE:-^(test_mutants_gpu|test_gpu_threads|test_api)\$}" >"$OUT/ctest.log" 2>&1)
  took ctest $?; cp $B/tests/mutants/mutation_table.md "$OUT/" 2>/dev/null
  [ -d $B/ledger ] && mkdir -p "$OUT/perf-gate-ledger" && cp -r $B/ledger/. "$OUT/perf-gate-ledger/" # as ci/gpu.sh copies it
  grep -E "^[0-9]+/[0-9]+ Test +#|tests passed" "$OUT/ctest.log" | tail -6
fi
for k in ${KERNELS:-split auto}; do
  if has gpuk; then
    start; timeout "${GPUK_LIMIT:-200}" ./$B/tests/unit/test_gpu_kernels --kernel "$k" >"$OUT/gpuk-$k.log" 2>&1; took "test_gpu_kernels $k" $?
    grep -E '^FAIL' "$OUT/gpuk-$k.log" | head -5; tail -4 "$OUT/gpuk-$k.log"
  fi
  if has props; then
    start; timeout "${PROPS_LIMIT:-200}" ./$B/softmax-lab check --kernel "$k" --save "$OUT/failures" >"$OUT/props-$k.log" 2>&1; took "check $k" $?
    tail -5 "$OUT/props-$k.log"
  fi
done
# san and bench are ci/gpu.sh's own stages, run on this build, so the GPU job and this script
# cannot drift apart; only the time limits are added here.
if has san; then
  start; SML_SANITIZE_TIMEOUT=${SAN_LIMIT:-120} SML_GPU_STAGES=sanitize BUILD=$B ARTIFACTS="$OUT/san" \
    ci/gpu.sh >/dev/null 2>"$OUT/san.stderr"
  took sanitizers $?; cat "$OUT/san/sanitizers.txt"
fi
if has bench; then
  start
  SML_GPU_STAGES=bench SML_BENCH_TIME_LIMIT=${BENCH_CASES_LIMIT:-420} BUILD=$B ARTIFACTS="$OUT" \
    timeout "${BENCH_LIMIT:-490}" ci/gpu.sh >/dev/null 2>"$OUT/gpu-sh.stderr"
  took bench $?
  ./$B/softmax-lab targets "$OUT/bench.json" --kernel auto --md "$OUT/targets.md" >"$OUT/targets.txt" 2>&1
  tail -14 "$OUT/targets.txt"
fi
[ -f "$OUT/tune.txt" ] && grep -vE '^(#|$)' "$OUT/tune.txt" | tail -40
cp "$OUT"/gpu.txt "$OUT"/tune.txt "$OUT"/mutation_table.md "$OUT"/san/sanitizers.txt "$OUT"/bench.json \
   "$OUT"/bench.md "$OUT"/targets.md "$FINAL"/ 2>/dev/null
tar czf "$FINAL/logs.tgz" -C "$OUT" .
