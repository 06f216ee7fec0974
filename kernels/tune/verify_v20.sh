#!/bin/bash
# verify_v20.sh: one GPU-machine call (session 17) for v20, split's forward tail loaded inside the
# fused loop: build; test_gpu_kernels --kernel split per op at fp32 with one seed (which op gives
# the worst ulps); the patch mutants of the prologue's tiles; compute-sanitizer's four tools on a
# shape whose slices keep an uncached tail and a partial last chunk, rows in rounds. Logs in $OUT.
export PATH=/usr/local/cuda/bin:$PATH; OUT=${OUT:-out}; mkdir -p "$OUT"; B=build-gpu
(cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
  cmake --build $B -j"$(nproc)" >"$OUT/build.log" 2>&1) || { tail -30 "$OUT/build.log"; exit 1; }
S=0x5eed17
t=$(date +%s); ./$B/tests/unit/test_gpu_kernels --kernel split --seed $S >"$OUT/gpuk-split.log" 2>&1
echo "test_gpu_kernels split exit $? in $(( $(date +%s) - t )) s"; tail -5 "$OUT/gpuk-split.log"
for op in softmax log_softmax; do
  ./$B/tests/unit/test_gpu_kernels --kernel split --dtype fp32 --op $op --seed $S 2>&1 | grep -E "^split|passed" | sed "s/^/$op: /"
done
t=$(date +%s)
SML_PATCH_MUTANTS="split_first_row_tiles split_first_row_tiles_twin split_first_row_refill split_first_row_refill_twin" \
  tests/mutants/run_patch_mutants.sh $B-patch "$OUT/patch" >"$OUT/patch.log" 2>&1
echo "patch mutants exit $? in $(( $(date +%s) - t )) s"; grep -E "^(KILLED|SURVIVED|ERROR)|of [0-9]+ killed" "$OUT/patch.log"
for tool in memcheck racecheck synccheck initcheck; do
  t=$(date +%s)
  compute-sanitizer --tool $tool --error-exitcode 9 ./$B/tests/unit/test_gpu_kernels --kernel split --op softmax \
    --dtype fp32 --rows 16 --cols 1048579 --ld 1048584 --seed $S >"$OUT/san-$tool.log" 2>&1
  echo "$tool exit $? in $(( $(date +%s) - t )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$OUT/san-$tool.log" | tr '\n' ' ')"
done
