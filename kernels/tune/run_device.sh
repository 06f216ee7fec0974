#!/bin/bash
# run_device.sh BIN PLAN: what runs 2-3 ran on the GPU machine, from the repository root, with
# prebuilt binaries in BIN (softmax-lab, test_gpu_kernels, tune): the GPU test, the tuning
# plan, optional bench sweeps (BENCH="sweep:backends ...", BENCH_FLAGS) and a memcheck of a
# few cases (SANITIZE=1); logs to $OUT (default ./out).
OUT=${OUT:-out}; mkdir -p "$OUT"
B=${1:?usage: run_device.sh BIN PLAN}; PLAN=$2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
echo "== test_gpu_kernels"
timeout ${TEST_LIMIT:-130} "$B/test_gpu_kernels" > "$OUT/gpu_kernels.log" 2>&1; echo "test exit $?"
grep -E "^FAIL" "$OUT/gpu_kernels.log" | head -20
sed -n '/^kernel /,$p' "$OUT/gpu_kernels.log"
if [ -n "$PLAN" ]; then
  echo "== tune $PLAN"
  timeout ${TUNE_LIMIT:-150} "$B/tune" "$PLAN" > "$OUT/tune.txt" 2>&1; echo "tune exit $?"
  grep -E "FAILED|DIFF" "$OUT/tune.txt" | head -20
fi
for sw in $BENCH; do
  name=${sw%%:*}; rest=${sw#*:}
  echo "== bench $name ($rest)"
  timeout ${BENCH_LIMIT:-60} "$B/softmax-lab" bench --sweep "$name" --backend "$rest" $BENCH_FLAGS --ledger "$OUT/ledger" \
    > "$OUT/bench_$name.txt" 2> "$OUT/bench_$name.err"; echo "bench exit $?"
  grep -E "Supported|Caveated|Refuted|Measured" "$OUT/bench_$name.txt"
done
if [ -n "$SANITIZE" ]; then
  for k in block warp split online; do
    for c in "--rows 7 --cols 4097 --ld 4104 --offset 1" "--rows 3 --cols 33 --ld 40" "--rows 2 --cols 65536"; do
      timeout 25 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu_kernels" --kernel $k $c --seed 0x5 \
        > "$OUT/san.log" 2>&1 && echo "memcheck $k $c: clean" || { echo "memcheck $k $c: FAILED"; grep -E "ERROR SUMMARY|Invalid" "$OUT/san.log" | head -5; }
    done
  done
fi
