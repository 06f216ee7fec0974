#!/bin/bash
# ab_order.sh: one GPU-machine call (session 18, run 154) for v21 (rejected; the code is only in
# the tree of commit 6d70f02): two builds of the tree, the
# default and -DSPLIT_OLD_ORDER (the fused loop's order before v21), their tune of plan67
# alternated twice; the SASS of both builds' split forward kernels for the loop order; then on
# the default build test_gpu_kernels --kernel split and the property suite for split. Logs in $OUT.
export PATH=/usr/local/cuda/bin:$PATH; OUT=${OUT:-out}; mkdir -p "$OUT"
for v in new old; do B=build-$v; F=""; [ $v = old ] && F="-DCMAKE_CUDA_FLAGS=-DSPLIT_OLD_ORDER"
  t=$(date +%s)
  (cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$F" >/dev/null &&
    cmake --build $B -j"$(nproc)" >"$OUT/build-$v.log" 2>&1 && kernels/tune/build.sh $B >/dev/null 2>&1) ||
    { echo "build $v failed"; tail -20 "$OUT/build-$v.log"; exit 1; }
  echo "build $v $(( $(date +%s) - t )) s"
  cuobjdump -sass ./$B/tests/unit/test_gpu_kernels 2>/dev/null | awk '/Function : .*sml_split_kernel/{p=1} /Function : /&&!/sml_split_kernel/{p=0} p' | gzip > "$OUT/sass-$v.txt.gz"
done
grep -c SPLIT_OLD_ORDER build-old/CMakeCache.txt
for i in 1 2; do for v in new old; do t=$(date +%s)
  ./build-$v/tune kernels/tune/plan67.txt 2>&1 | grep -vE "^#|BEST|^$" | sed "s/^/$v$i /" | sed -E 's/ +\[C=.*//' >> "$OUT/ab.txt"
  echo "tune $v$i $(( $(date +%s) - t )) s"; done; done
grep -v copyk "$OUT/ab.txt"
t=$(date +%s); timeout 150 ./build-new/tests/unit/test_gpu_kernels --kernel split > "$OUT/gpuk-split.log" 2>&1
echo "gpuk split exit $? $(( $(date +%s) - t )) s"; grep ^FAIL "$OUT/gpuk-split.log" | head -5; tail -4 "$OUT/gpuk-split.log"
t=$(date +%s); timeout 150 ./build-new/softmax-lab check --kernel split --save "$OUT/failures" > "$OUT/props-split.log" 2>&1
echo "check split exit $? $(( $(date +%s) - t )) s"; tail -4 "$OUT/props-split.log"
