#!/bin/bash
# multi_gpu_scaling.sh: one run over every GPU of a host against the same run on one GPU.
# On a host with 2 or more GPUs, from the repository root:
#
#   tools/multi_gpu_scaling.sh            # OUT=dir keeps the logs and JSONs (default: a temp dir)
#
# builds the tree (cmake --preset gpu, unless BUILD=0), then times, with one seed:
#   default  the GPU profile (check --kernel all --op softmax: 10,000 cases per GPU kernel and
#            dtype; DEFAULT_ARGS replaces the selection) on GPU 0 (--devices 0) and on GPUs
#            0,1 (--devices 0,1: one worker per GPU, merged)
#   long     --long of one kernel (KERNEL, default block; LONG_CASES cases per op and dtype,
#            default 20,000), likewise
#   shards   the long run as two processes by hand: --shard 1/2 on GPU 0 and --shard 2/2 on
#            GPU 1 at once, then softmax-lab merge
# and prints a table: wall time, cases, cases/s, speedup and scaling efficiency (speedup / 2)
# against the 1-GPU run, and whether the verdict, the counts and every case digest are those
# of the 1-GPU run (softmax-lab compare: SAME on every kernel, op and dtype, nothing NOT
# COMPARABLE). Time budgets are off (--seconds 0): a budget would cut the runs at different
# cases. About 4 to 5 minutes on 2 H100s after the build; exit 1 if any run's verdict or
# digest differs from its 1-GPU run.
set -uo pipefail
B=${B:-build-gpu}
CLI=$B/softmax-lab
OUT=${OUT:-$(mktemp -d)}
SEED=${SEED:-0x5eed42005eed4200}
KERNEL=${KERNEL:-block}
LONG_CASES=${LONG_CASES:-20000}
read -r -a DEFAULT_ARGS <<< "${DEFAULT_ARGS:---kernel all --op softmax}"
mkdir -p "$OUT"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
if [ "${BUILD:-1}" = 1 ]; then
  { cmake --preset gpu && cmake --build --preset gpu; } >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
ngpu=${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)}
if [ "$ngpu" -lt 2 ]; then echo "multi_gpu_scaling: needs 2 GPUs, this host shows $ngpu"; exit 77; fi
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpus.txt"
nproc | sed 's/^/host cores: /'

now() { date +%s.%N; }
# cases: the runs' case counts in a check JSON, added up
cases() { grep -o '"cases": [0-9]*, "failed_cases"' "$1" | awk '{s += $2} END {print s + 0}'; }
# wall NAME START: seconds since START, kept in $OUT/NAME.wall
wall() { awk -v a="$2" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}' | tee "$OUT/$1.wall"; }

# run NAME ARGS...: softmax-lab check ARGS --seed --seconds 0 --json OUT/NAME.json
run() {
  local name=$1; shift
  local t0; t0=$(now)
  "$CLI" check "$@" --seed "$SEED" --seconds 0 --regressions none --json "$OUT/$name.json" >"$OUT/$name.log" 2>&1
  echo $? >"$OUT/$name.rc"
  echo "$name: exit $(cat "$OUT/$name.rc") in $(wall "$name" "$t0") s"
}

# same ONE OTHER: the verdicts, counts and digests of OTHER are ONE's
same() {
  local one=$OUT/$1.json other=$OUT/$2.json
  [ -s "$one" ] && [ -s "$other" ] || { echo no; return; }
  local fields='"(kernel|op|dtype|outcome|cases|failed_cases|regressions_failed|digest|judged|worst)": [^,]*'
  if diff <(grep -Eo "$fields" "$one") <(grep -Eo "$fields" "$other") >"$OUT/$2.diff" &&
     [ "$(cat "$OUT/$1.rc")" = "$(cat "$OUT/$2.rc")" ] &&
     "$CLI" compare "$one" "$other" >"$OUT/$2.compare" 2>&1 &&
     grep -q ', 0 NOT COMPARABLE; 0 only in OLD, 0 only in NEW' "$OUT/$2.compare"; then
    echo yes
  else
    echo NO
  fi
}

run default-1gpu --devices 0 "${DEFAULT_ARGS[@]}"
run default-2gpu --devices 0,1 "${DEFAULT_ARGS[@]}"
LONG=(--long --kernel "$KERNEL" --cases "$LONG_CASES")
run long-1gpu --devices 0 "${LONG[@]}"
run long-2gpu --devices 0,1 "${LONG[@]}"

# The same split by hand, as two hosts (or two CI jobs) would run it.
t0=$(now)
for k in 1 2; do
  CUDA_VISIBLE_DEVICES=$((k - 1)) "$CLI" check "${LONG[@]}" --seed "$SEED" --seconds 0 --regressions none \
    --threads $(( $(nproc) / 2 < 16 ? $(nproc) / 2 : 16 )) --shard $k/2 --json "$OUT/shard-$k.json" >"$OUT/shard-$k.log" 2>&1 &
done
wait
"$CLI" merge "$OUT/shard-1.json" "$OUT/shard-2.json" --json "$OUT/long-shards.json" --md "$OUT/long-shards.md" \
  >"$OUT/long-shards.log" 2>&1
echo $? >"$OUT/long-shards.rc"
echo "long-shards: exit $(cat "$OUT/long-shards.rc") in $(wall long-shards "$t0") s"

bad=0
printf '\n%-14s %4s %8s %9s %9s %8s %10s %13s\n' run GPUs wall_s cases cases/s speedup efficiency same_as_1GPU
for pair in default-1gpu:default-1gpu default-2gpu:default-1gpu long-1gpu:long-1gpu long-2gpu:long-1gpu \
            long-shards:long-1gpu; do
  name=${pair%%:*} base=${pair##*:}
  g=1; [ "$name" != "$base" ] && g=2
  w=$(cat "$OUT/$name.wall"); wb=$(cat "$OUT/$base.wall"); c=$(cases "$OUT/$name.json")
  s=$( [ "$name" = "$base" ] && echo "-" || same "$base" "$name")
  [ "$s" = NO ] && bad=1
  awk -v n="$name" -v g="$g" -v w="$w" -v wb="$wb" -v c="$c" -v s="$s" 'BEGIN {
    sp = wb / w; printf "%-14s %4d %8.1f %9d %9.0f %8.2f %10.2f %13s\n", n, g, w, c, c / w, sp, sp / g, s }'
done
echo
echo "logs and JSONs: $OUT (same_as_1GPU: verdict, exit, counts, digests and compare SAME; NO: see NAME.diff)"
exit $bad
