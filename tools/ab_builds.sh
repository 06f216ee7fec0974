#!/bin/bash
# ab_builds.sh PLAN ROUNDS NAME=CUDA_FLAGS ...: one GPU-machine call that builds the tree once
# per NAME (build-NAME, with CMAKE_CUDA_FLAGS set to its flags, "" for the default), then runs
# each build's `tune PLAN` in turn, ROUNDS times, so that machine drift falls on all builds
# alike. Lines of $OUT/ab.txt are "NAMEi <tune's line>". E.g.
#   tools/ab_builds.sh tools/plan_example.txt 2 base= other=-DSOME_KNOB
export PATH=/usr/local/cuda/bin:$PATH; OUT=${OUT:-out}; mkdir -p "$OUT"
PLAN=${1:?usage: ab_builds.sh PLAN ROUNDS NAME=FLAGS ...}; ROUNDS=${2:?rounds}; shift 2
names=()
for spec in "$@"; do n=${spec%%=*}; f=${spec#*=}; B=build-$n; names+=("$n"); t=$(date +%s)
  (cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_CUDA_FLAGS=$f" >/dev/null &&
    cmake --build $B -j"$(nproc)" --target softmax_lab >"$OUT/build-$n.log" 2>&1 && tools/build_tune.sh $B >/dev/null 2>&1) ||
    { echo "build $n failed"; tail -20 "$OUT/build-$n.log"; exit 1; }
  echo "build $n ($f) $(( $(date +%s) - t )) s"
done
for i in $(seq "$ROUNDS"); do for n in "${names[@]}"; do
  ./build-$n/tune "$PLAN" 2>&1 | grep -vE "^#|BEST|^$" | sed "s/^/$n$i /" | sed -E 's/ +\[C=.*//' >> "$OUT/ab.txt"
done; done
grep -v copyk "$OUT/ab.txt"
