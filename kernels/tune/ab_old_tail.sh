export PATH=/usr/local/cuda/bin:$PATH; mkdir -p $OUT
for v in new old; do B=build-$v; F=""; [ $v = old ] && F="-DCMAKE_CUDA_FLAGS=-DSPLIT_OLD_TAIL"
  (cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$F" >/dev/null && cmake --build $B -j16 >$OUT/build-$v.log 2>&1 && kernels/tune/build.sh $B >/dev/null 2>&1) || { echo "build $v failed"; tail -20 $OUT/build-$v.log; exit 1; }
done
grep -c SPLIT_OLD_TAIL build-old/CMakeCache.txt
for i in 1 2; do for v in new old; do ./build-$v/tune kernels/tune/plan66.txt 2>&1 | grep -vE "^#|BEST|^$" | sed "s/^/$v$i /" | sed -E 's/ +\[C=.*//' >> $OUT/ab.txt; done; done
cat $OUT/ab.txt | grep -v copyk
t=$(date +%s); timeout 200 ./build-new/tests/unit/test_gpu_kernels --kernel split > $OUT/gpuk-split.log 2>&1; echo "gpuk split exit $? $(( $(date +%s) - t )) s"; grep ^FAIL $OUT/gpuk-split.log | head -5; tail -5 $OUT/gpuk-split.log
t=$(date +%s); timeout 200 ./build-new/softmax-lab check --kernel split --save $OUT/failures > $OUT/props-split.log 2>&1; echo "check split exit $? $(( $(date +%s) - t )) s"; tail -4 $OUT/props-split.log
