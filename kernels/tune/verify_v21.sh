#!/bin/bash
# verify_v21.sh: one GPU-machine call (session 18, run 160) for v21 (split's forward prefetches
# the next row's second tile into L2 at the exchange, a block alone on its SM): the tree and the
# same tree with -DSPLIT_NO_PREFETCH (that knob exists only in the tree of commit e4a9685), plan71
# alternated three times; then on the default build
# test_gpu_kernels --kernel split, the property suite for split, and compute-sanitizer memcheck
# on a shape that prefetches (16 rows of 2^20 + 3 fp32: alone, uncached tails, rows in rounds).
export PATH=/usr/local/cuda/bin:$PATH; OUT=${OUT:-out}; mkdir -p "$OUT"
for v in new old; do B=build-$v; F=""; T=""; [ $v = old ] && { F="-DSPLIT_NO_PREFETCH"; T="--target sml"; }
  t=$(date +%s)
  (cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_CUDA_FLAGS=$F" >/dev/null &&
    cmake --build $B -j"$(nproc)" $T >"$OUT/build-$v.log" 2>&1 && kernels/tune/build.sh $B >/dev/null 2>&1) ||
    { echo "build $v failed"; tail -20 "$OUT/build-$v.log"; exit 1; }
  echo "build $v $(( $(date +%s) - t )) s"
done
for i in 1 2 3; do for v in new old; do
  ./build-$v/tune kernels/tune/plan71.txt 2>&1 | grep -vE "^#|BEST|^$" | sed "s/^/$v$i /" | sed -E 's/ +\[C=.*//' >> "$OUT/ab.txt"
done; done
grep -v copyk "$OUT/ab.txt" | tail -3
S=0x5eed18
t=$(date +%s); timeout 150 ./build-new/tests/unit/test_gpu_kernels --kernel split --seed $S > "$OUT/gpuk-split.log" 2>&1
echo "gpuk split exit $? $(( $(date +%s) - t )) s"; grep ^FAIL "$OUT/gpuk-split.log" | head -5; tail -4 "$OUT/gpuk-split.log"
t=$(date +%s); timeout 100 ./build-new/softmax-lab check --kernel split --save "$OUT/failures" > "$OUT/props-split.log" 2>&1
echo "check split exit $? $(( $(date +%s) - t )) s"; tail -3 "$OUT/props-split.log"
t=$(date +%s)
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./build-new/tests/unit/test_gpu_kernels --kernel split --op softmax \
  --dtype fp32 --rows 16 --cols 1048579 --ld 1048584 --seed $S > "$OUT/san-memcheck.log" 2>&1
echo "memcheck exit $? in $(( $(date +%s) - t )) s: $(grep -E 'ERROR SUMMARY|passed' "$OUT/san-memcheck.log" | tr '\n' ' ')"
