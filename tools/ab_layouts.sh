#!/bin/bash
# ab_layouts.sh PLAN ROUNDS "NAME:ENV ..." ...: one GPU-machine call: build the tree and tune
# once, then run `tune PLAN` under each layout (NAME:VAR=VALUE,VAR=VALUE; the
# knobs are tune's TUNE_LD_PAD, TUNE_X_SHIFT, TUNE_OUT_SHIFT), the layouts in turn, ROUNDS
# times. Lines of $OUT/place.txt are "NAMEi <tune's line>".
#   tools/ab_layouts.sh tools/plan_example.txt 3 base: pad32:TUNE_LD_PAD=32
export PATH=/usr/local/cuda/bin:$PATH; OUT=${OUT:-out}; mkdir -p "$OUT"; B=build-gpu
PLAN=${1:?usage: ab_layouts.sh PLAN ROUNDS NAME:ENV ...}; ROUNDS=${2:?rounds}; shift 2
(cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
  cmake --build $B -j"$(nproc)" --target softmax_lab >"$OUT/build.log" 2>&1 && tools/build_tune.sh $B >/dev/null 2>&1) ||
  { tail -30 "$OUT/build.log"; exit 1; }
for i in $(seq "$ROUNDS"); do for spec in "$@"; do n=${spec%%:*}; e=${spec#*:}
  env $(echo "$e" | tr ',' ' ') ./$B/tune "$PLAN" 2>&1 | grep -vE "^#|BEST|^$|^device" | sed "s/^/$n$i /" |
    sed -E 's/ +\[C=.*//' >> "$OUT/place.txt"
done; done
grep -v copyk "$OUT/place.txt"
