#!/bin/bash
# run_verify.sh [PLAN]: one GPU-machine call that builds the tree for sm_90 and runs the checks
# that ci/gpu.sh's `test` stage would not fit in a 10-minute lease call: the tuning plan (if
# given), the GPU mutation test, test_gpu_threads and test_api, then compute-sanitizer
# (run_sanitizers.sh, tall shapes last). SKIP="ctest san" leaves those stages out. Logs under $OUT (default ./out): the
# summaries, and every log in logs.tgz; a summary table last.
set -uo pipefail
# At most a few files come back from a lease call: every log goes to one archive, logs.tgz.
OUT=${OUT:-out}; mkdir -p "$OUT"
FINAL=$OUT; OUT=$(mktemp -d)
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
B=build-gpu
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
t=$(date +%s)
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/configure.log" 2>&1 &&
  cmake --build $B -j "$(nproc)" >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "== built in $(( $(date +%s) - t )) s"
if [ -n "${1:-}" ]; then
  kernels/tune/build.sh $B >/dev/null 2>&1 || echo "tune: build failed"
  t=$(date +%s)
  timeout "${TUNE_LIMIT:-150}" ./$B/tune "$1" >"$OUT/tune.txt" 2>&1; echo "== tune exit $? in $(( $(date +%s) - t )) s"
fi
skip() { [[ " ${SKIP:-} " == *" $1 "* ]]; }
t=$(date +%s)
skip ctest || (cd $B && timeout "${CTEST_LIMIT:-300}" ctest --output-on-failure -R '^(test_mutants_gpu|test_gpu_threads|test_api)$' >"$OUT/ctest.log" 2>&1)
echo "== ctest exit $? in $(( $(date +%s) - t )) s"; cp $B/tests/mutants/mutation_table.md "$OUT/" 2>/dev/null
grep -E 'Test +#|tests passed|killed|runs' "$OUT/ctest.log" | tail -12
t=$(date +%s)
skip san || SML_SANITIZE_TIMEOUT=${SAN_LIMIT:-120} ./$B/tests/mutants/run_sanitizers.sh $B "$OUT/san" >/dev/null 2>&1
echo "== sanitizers exit $? in $(( $(date +%s) - t )) s"; cat "$OUT/san/sanitizers.txt"
[ -f "$OUT/tune.txt" ] && grep -vE '^(#|$)' "$OUT/tune.txt" | tail -40
cp "$OUT"/gpu.txt "$OUT"/tune.txt "$OUT"/mutation_table.md "$OUT"/san/sanitizers.txt "$FINAL"/ 2>/dev/null
tar czf "$FINAL/logs.tgz" -C "$OUT" .
