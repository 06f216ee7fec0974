#!/usr/bin/env bash
# run_sanitizers.sh BUILD ARTIFACTS: compute-sanitizer on a reduced budget.
#
#   1. the production GPU kernels (sanitize_driver --production: every kernel of the registry
#      but the vendor cudnn, on a few tiny shapes, all ops and dtypes, outputs checked against
#      the reference) under memcheck, racecheck, synccheck and initcheck: each must be clean;
#   2. the planted out-of-bounds write (mutant 9, gpu_past_row) must be caught by memcheck;
#   3. the planted missing barrier (mutant 8, gpu_no_barrier) must be caught by racecheck;
#   4. the two tall shapes (sanitize_driver --production --tall: more rows than split and coop
#      keep resident) under the same four tools, on the kernels that walk rows.
# Logs go to ARTIFACTS/sanitizers/, a summary to ARTIFACTS/sanitizers.txt (the mutation
# table of the last test_mutants_gpu run is copied next to it). Exit 1 if any check fails.
# Clocks and device settings are never touched.
#
# Budget: memcheck sees every op and dtype; racecheck, synccheck and initcheck (slower, and
# blind to the dtype: the log ops are the same kernels with a flag, bf16 the same code as
# fp16) see softmax and softmax_bwd in fp32 and fp16.
#
# Environment: COMPUTE_SANITIZER (the tool's path), SML_SANITIZE_TIMEOUT (seconds per run,
# default 300), SML_SANITIZE_ARGS (driver flags for every production run, replacing the
# defaults above, e.g. "--kernels split --dtypes fp32").
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD ARTIFACTS" >&2
  exit 2
fi
BUILD=$1
ART=$2
here=$(cd "$(dirname "$0")" && pwd)
DRIVER=$here/sanitize_driver
mkdir -p "$ART/sanitizers"
SUMMARY=$ART/sanitizers.txt
: >"$SUMMARY"
ERR=86
TMO=${SML_SANITIZE_TIMEOUT:-300}
say() { echo "$*" | tee -a "$SUMMARY"; }

CS=${COMPUTE_SANITIZER:-}
if [ -z "$CS" ]; then
  for c in "$(command -v compute-sanitizer 2>/dev/null)" \
           "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/nvcc)")/compute-sanitizer" \
           "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer \
           /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    if [ -n "$c" ] && [ -x "$c" ]; then CS=$c; break; fi
  done
fi
if [ -z "$CS" ] || [ ! -x "$CS" ]; then
  say "FAIL compute-sanitizer not found (set COMPUTE_SANITIZER=/path/to/compute-sanitizer): nothing was checked"
  exit 1
fi
if [ ! -x "$DRIVER" ]; then
  say "FAIL $DRIVER is missing: build the tree first (cmake --build $BUILD)"
  exit 1
fi
say "compute-sanitizer: $CS ($("$CS" --version 2>&1 | tail -1))"
help=$("$CS" --help 2>&1 || true)
MEMCHECK_EXTRA=()
# Padding after every allocation keeps a neighbouring allocation from hiding an overflow.
if grep -q -- '--padding' <<<"$help"; then MEMCHECK_EXTRA+=(--padding 512); fi

status=0
total0=$(date +%s)
# check NAME TOOL EXPECT [driver args...]; EXPECT: clean, or a regex the report must contain.
check() {
  local name=$1 tool=$2 expect=$3
  shift 3
  local log="$ART/sanitizers/$tool.$name.log" extra=()
  [ "$tool" = memcheck ] && extra=("${MEMCHECK_EXTRA[@]}")
  local cmd=("$CS" --tool "$tool" --error-exitcode "$ERR" "${extra[@]}" "$DRIVER" "$@")
  local t0 rc dt
  t0=$(date +%s.%N)
  echo "== run_sanitizers: $tool $name: ${cmd[*]}" >&2
  timeout "$TMO" "${cmd[@]}" >"$log" 2>&1
  rc=$?
  dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  local errs launches verdict
  errs=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')
  launches=$(grep -E '^sanitize_driver: [0-9]+ launches' "$log" | tail -1 | sed 's/^sanitize_driver: //')
  if [ "$expect" = clean ]; then
    if [ $rc -eq 0 ]; then verdict="PASS"; else verdict="FAIL"; fi
    local what="production kernels clean"
    [ $rc -eq 124 ] && what="production kernels: timed out after $TMO s"
    [ $rc -eq "$ERR" ] && what="production kernels: ${errs:-errors reported}"
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne "$ERR" ] && what="production kernels: driver exit $rc (see log)"
    say "$(printf '%-4s %-9s %-45s %7s s  %s  log %s' "$verdict" "$tool" "$what" "$dt" "${launches:-}" "sanitizers/$(basename "$log")")"
  else
    if [ $rc -eq "$ERR" ] && grep -qiE "$expect" "$log"; then
      verdict="PASS"
      say "$(printf '%-4s %-9s %-45s %7s s  %s' "$verdict" "$tool" "$name caught (${errs:-reported})" "$dt" "log sanitizers/$(basename "$log")")"
      grep -m1 -iE "$expect" "$log" | sed 's/^/       first: /' | tee -a "$SUMMARY"
    else
      verdict="FAIL"
      say "$(printf '%-4s %-9s %-45s %7s s  %s' "$verdict" "$tool" "$name NOT caught (exit $rc)" "$dt" "log sanitizers/$(basename "$log")")"
    fi
  fi
  if [ "$verdict" = FAIL ]; then
    status=1
    echo "   reproduce: ${cmd[*]}" | tee -a "$SUMMARY"
  fi
}

REDUCED="--ops softmax,softmax_bwd --dtypes fp32,fp16"
# shellcheck disable=SC2086
for tool in memcheck racecheck synccheck initcheck; do
  if [ -n "${SML_SANITIZE_ARGS:-}" ]; then args=$SML_SANITIZE_ARGS
  elif [ "$tool" = memcheck ]; then args=""
  else args=$REDUCED; fi
  check production "$tool" clean --production $args
done
# The tall shapes: more rows than split and coop keep resident, so the code that carries a next
# row runs under the tools. Only the kernels that walk rows with shared memory (naive and the
# vendor cudnn do not), on the reduced set, because each launch moves millions of elements.
TALL="--tall --kernels split,coop,block,online,auto $REDUCED"
for tool in memcheck racecheck synccheck initcheck; do
  if [ -n "${SML_SANITIZE_ARGS:-}" ]; then args="--tall $SML_SANITIZE_ARGS"; else args=$TALL; fi
  check production_tall "$tool" clean --production $args
done
check gpu_past_row memcheck 'Invalid __global__ write' --mutant gpu_past_row
check gpu_no_barrier racecheck 'hazard|race reported' --mutant gpu_no_barrier

say "sanitizers: $(grep -c '^PASS' "$SUMMARY") passed, $(grep -c '^FAIL' "$SUMMARY") failed, $(( $(date +%s) - total0 )) s (timeout $TMO s per run)"
[ -f "$here/mutation_table.md" ] && cp "$here/mutation_table.md" "$ART/mutation_table.md"
exit $status
