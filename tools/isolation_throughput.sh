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
# Prints each run's cases, seconds, cases/s and host CPU time (user + system, every process
# of the run), then the median of each mode and the workers' median as a percentage of the
# in-process one.
set -euo pipefail
build=${1:-build}
kernels=${2:-cpu_naive,cpu_online}
repeats=${3:-3}
cases=${4:+--cases $4}
cli="$build/softmax-lab"
[ -x "$cli" ] || { echo "isolation_throughput.sh: no $cli (build first)" >&2; exit 2; }
# The CPU seconds (user + system) this shell's children have used so far (`times` runs in
# this shell: a subshell would count its own children only).
cpu_used() {
  times > "$tmp.t"
  tail -1 "$tmp.t" | awk '{t = 0; for (i = 1; i <= 2; i++) {split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2]} print t}'
}
one() { # mode flag -> "cases seconds cpu-seconds"
  local line c0 c1
  cpu_used > "$tmp.c"; read -r c0 < "$tmp.c"
  "$cli" check --kernel "$kernels" --regressions none $cases $1 > "$tmp" 2>/dev/null || true
  cpu_used > "$tmp.c"; read -r c1 < "$tmp.c"
  line=$(grep -E '^[0-9]+ of [0-9]+ planned cases in [0-9.]+ s of wall time' "$tmp" || true)
  [ -n "$line" ] || { echo "isolation_throughput.sh: no summary line from check $1" >&2; exit 1; }
  awk -v c="$(awk -v a="$c0" -v b="$c1" 'BEGIN{print b - a}')" '{print $1, $7, c}' <<<"$line"
}
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.r" "$tmp.t" "$tmp.c"' EXIT
declare -a inproc workers
for ((i = 0; i < repeats; i++)); do
  one --in-process > "$tmp.r"; read -r c s u < "$tmp.r"
  r=$(awk -v c="$c" -v s="$s" 'BEGIN{printf "%.0f", c / s}')
  echo "in-process: $c cases in $s s: $r cases/s, host CPU $u s ($(awk -v c="$c" -v u="$u" 'BEGIN{printf "%.3f", 1000 * u / c}') ms per case)"
  inproc+=("$r")
  one "" > "$tmp.r"; read -r c s u < "$tmp.r"
  r=$(awk -v c="$c" -v s="$s" 'BEGIN{printf "%.0f", c / s}')
  echo "workers:    $c cases in $s s: $r cases/s, host CPU $u s ($(awk -v c="$c" -v u="$u" 'BEGIN{printf "%.3f", 1000 * u / c}') ms per case)"
  workers+=("$r")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
mi=$(median "${inproc[@]}")
mw=$(median "${workers[@]}")
echo "median: in-process $mi cases/s, workers $mw cases/s ($(awk -v a="$mw" -v b="$mi" 'BEGIN{printf "%.1f", 100 * a / b}')% of in-process)"
