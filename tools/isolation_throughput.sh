#!/usr/bin/env bash
# isolation_throughput.sh: the property suite's throughput (cases per second of wall time)
# with kernels in worker processes (judged by the supervisor) against --in-process,
# alternated REPEATS times on the same build, on the profile's cases (or CASES per kernel, op
# and dtype).
#
#   tools/isolation_throughput.sh [BUILD_DIR] [KERNELS] [REPEATS] [CASES]
#   tools/isolation_throughput.sh build cpu_naive,cpu_online 3        (CPU)
#   tools/isolation_throughput.sh build-gpu warp,block 3              (GPU: the GPU profile's cases)
#
# Prints each run's cases, seconds and cases/s, then the median of each mode and the
# workers' median as a percentage of the in-process one.
set -euo pipefail
build=${1:-build}
kernels=${2:-cpu_naive,cpu_online}
repeats=${3:-3}
cases=${4:+--cases $4}
cli="$build/softmax-lab"
[ -x "$cli" ] || { echo "isolation_throughput.sh: no $cli (build first)" >&2; exit 2; }
one() { # mode flag -> "cases seconds"
  local line
  line=$("$cli" check --kernel "$kernels" --regressions none $cases $1 2>/dev/null |
         grep -E '^[0-9]+ of [0-9]+ planned cases in [0-9.]+ s of wall time' || true)
  [ -n "$line" ] || { echo "isolation_throughput.sh: no summary line from check $1" >&2; exit 1; }
  awk '{print $1, $7}' <<<"$line"
}
declare -a inproc workers
for ((i = 0; i < repeats; i++)); do
  read -r c s < <(one --in-process)
  r=$(awk -v c="$c" -v s="$s" 'BEGIN{printf "%.0f", c / s}')
  echo "in-process: $c cases in $s s: $r cases/s"
  inproc+=("$r")
  read -r c s < <(one "")
  r=$(awk -v c="$c" -v s="$s" 'BEGIN{printf "%.0f", c / s}')
  echo "workers:    $c cases in $s s: $r cases/s"
  workers+=("$r")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
mi=$(median "${inproc[@]}")
mw=$(median "${workers[@]}")
echo "median: in-process $mi cases/s, workers $mw cases/s ($(awk -v a="$mw" -v b="$mi" 'BEGIN{printf "%.1f", 100 * a / b}')% of in-process)"
