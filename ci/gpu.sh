#!/usr/bin/env bash
# The GPU job: build for this host's GPU(s), run every test label (unit, property, perf,
# mutants) spread over all GPUs through ctest's resource allocation (SML_GPU_TEST_SLOTS tests
# per GPU, default 2; the perf label after the rest, alone), run the benchmark sweeps,
# and collect logs, ledgers and reproducers under $ARTIFACTS (default: ./artifacts).
#
#   ci/gpu.sh                 everything
#   SML_GPU_STAGES="build test" ci/gpu.sh   a subset of: build test bench frameworks sanitize
#                                            patch-mutants
#   frameworks: the Python binding's backends (torch, triton, liger where importable) through
#   the property suite, and the seeds' experiments with every backend, each backend's claim
#   decided against PyTorch (bench --versus torch)
#   nightly (not in the default set; the scheduled job runs SML_GPU_STAGES="build nightly"): the
#   property suite's long profile (check --long: 100,000 cases per GPU kernel, op and dtype,
#   10,000 per CPU kernel's on bigger shapes) on every registered kernel, CPU and GPU, through
#   ci/nightly.sh: SML_NIGHTLY_SHARDS=N runs it as N slices one after another and merges them,
#   SML_NIGHTLY_SECONDS caps each run (default none)
#   SML_BENCH_TIME_LIMIT=240 ci/gpu.sh      the bench starts no case after 240 s and writes a
#                                            partial ledger (docs/BENCHMARKING.md, "Partial runs")
set -uo pipefail
cd "$(dirname "$0")/.."
ARTIFACTS=${ARTIFACTS:-$PWD/artifacts}
BUILD=${BUILD:-build-gpu}
STAGES=${SML_GPU_STAGES:-build test bench frameworks sanitize patch-mutants}
mkdir -p "$ARTIFACTS"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
log() { echo "== ci/gpu.sh: $*" >&2; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "ci/gpu.sh: no NVIDIA GPU on this machine; run ci/cpu.sh instead" >&2
  exit 77
fi
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu \
  --format=csv | tee "$ARTIFACTS/gpu.csv"

if has build; then
  log "configure + build ($BUILD, CUDA architectures native)"
  t=$(date +%s)
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native \
    >"$ARTIFACTS/configure.log" 2>&1 || { cat "$ARTIFACTS/configure.log"; exit 1; }
  grep 'softmax-lab:' "$ARTIFACTS/configure.log" >&2
  cmake --build "$BUILD" -j "$(nproc)" >"$ARTIFACTS/build.log" 2>&1 || { tail -50 "$ARTIFACTS/build.log"; exit 1; }
  log "built in $(( $(date +%s) - t )) s"
fi

if has test; then
  # Two passes. First every test but the timed ones: each GPU offers SML_GPU_TEST_SLOTS slots
  # (default 2; the property tests are host-bound, and a verdict does not depend on a shared
  # GPU), and the CPU tests run beside them on a quarter of the cores. Then the perf label
  # alone, one test at a time: a timing shares neither the GPU nor the host.
  slots=${SML_GPU_TEST_SLOTS:-2}
  spec="$ARTIFACTS/resources.json"
  ids=$(nvidia-smi --query-gpu=index --format=csv,noheader | tr -d ' ')
  { printf '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": ['
    sep=""; for i in $ids; do printf '%s{"id": "%s", "slots": %d}' "$sep" "$i" "$slots"; sep=", "; done
    printf ']}]}\n'; } >"$spec"
  ngpu=$(echo "$ids" | wc -w)
  jobs=$((ngpu * slots + $(nproc) / 4))
  t=$(date +%s)
  log "ctest on $ngpu GPU(s) x $slots slots, -j $jobs: every label but perf"
  (cd "$BUILD" && ctest --output-on-failure -LE perf -j "$jobs" --resource-spec-file "$spec" \
     --output-junit "$ARTIFACTS/ctest.xml") 2>&1 | tee "$ARTIFACTS/ctest.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  log "perf label, one test at a time"
  (cd "$BUILD" && ctest --output-on-failure -L perf -j 1 --resource-spec-file "$spec" \
     --output-junit "$ARTIFACTS/ctest-perf.xml") 2>&1 | tee -a "$ARTIFACTS/ctest.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  log "tests took $(( $(date +%s) - t )) s"
fi

# The Python binding (python/ on this build's libraries), for the stages below where PyTorch
# imports: the framework backends (torch, triton, liger where installed) then run beside the
# project's kernels.
torch=0
if { has bench || has frameworks; } && python3 -c 'import torch' 2>/dev/null; then
  torch=1
  export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" SML_LIBRARY_DIR="$PWD/$BUILD/lib"
fi

if has bench; then
  # Through the binding where PyTorch imports, so that the framework backends are timed in the
  # same run as the project's kernels.
  bench=("./$BUILD/softmax-lab" bench)
  if [ $torch = 1 ]; then
    bench=(python3 -m softmax_lab bench)
    log "benchmark: standard sweep, all ops, every backend with the frameworks', ledger"
  else
    log "benchmark: standard sweep, all ops, ledger (no torch: no framework backends)"
  fi
  mkdir -p "$ARTIFACTS/ledger"
  "${bench[@]}" --backend all --sweep standard --op all \
    ${SML_BENCH_TIME_LIMIT:+--time-limit "$SML_BENCH_TIME_LIMIT"} \
    --ledger "$ARTIFACTS/ledger" --json "$ARTIFACTS/bench.json" --md "$ARTIFACTS/bench.md" \
    2>"$ARTIFACTS/bench.stderr" | tee "$ARTIFACTS/bench.txt" || status=1
fi

if has frameworks; then
  if [ $torch = 0 ]; then
    log "frameworks: skipped (python3 cannot import torch)"
  else
    py="python3 -m softmax_lab"
    mkdir -p "$ARTIFACTS/frameworks"
    log "frameworks: versions and registry"
    $py list 2>&1 | tee "$ARTIFACTS/frameworks/list.txt"
    fw=$($py list --json 2>/dev/null | python3 -c 'import json,sys; print(",".join(k["name"] for k in json.load(sys.stdin) if (k.get("origin") or "").startswith("python:") and k["device"]=="gpu"))')
    log "frameworks: property suite on $fw"
    $py check --kernel "$fw" --cases "${SML_FRAMEWORK_CASES:-400}" --seconds "${SML_FRAMEWORK_SECONDS:-240}" \
      --save "$ARTIFACTS/frameworks/failures" --json "$ARTIFACTS/frameworks/check.json" \
      2>&1 | tee "$ARTIFACTS/frameworks/check.txt"
    for sw in seed-row-fusion seed-cutedsl; do
      log "frameworks: the $sw sweep, every backend, claims against torch"
      $py bench --backend all --sweep "$sw" --op all --versus torch \
        --json "$ARTIFACTS/frameworks/$sw.json" --md "$ARTIFACTS/frameworks/$sw.md" \
        2>"$ARTIFACTS/frameworks/$sw.stderr" | tee "$ARTIFACTS/frameworks/$sw.txt" || status=1
    done
  fi
fi

if has nightly; then
  log "nightly: check --long on every kernel (${SML_NIGHTLY_SHARDS:-1} slice(s))"
  ci/nightly.sh "$BUILD" "$ARTIFACTS/nightly" || status=1
fi

if has sanitize && [ -x "$BUILD/tests/mutants/run_sanitizers.sh" ]; then
  log "compute-sanitizer on a reduced budget"
  "$BUILD/tests/mutants/run_sanitizers.sh" "$BUILD" "$ARTIFACTS" || status=1
fi

if has patch-mutants; then
  log "patch mutants: bugs planted in the production kernels, on a copy ($BUILD-patch)"
  tests/mutants/run_patch_mutants.sh "$BUILD-patch" "$ARTIFACTS" || status=1
fi

# The perf gate writes its ledger and plot into the build tree; failures land beside the tests,
# and the mutation test's new corpus inputs in the build tree too.
# Copied into the folder, not as a folder: a second run into the same ARTIFACTS (a stage at a
# time, tools/gpu_verify.sh) refreshes the files instead of nesting a copy inside.
copy_into() { [ -d "$1" ] || return 0; mkdir -p "$2" && cp -r "$1/." "$2/"; }
copy_into "$BUILD/ledger" "$ARTIFACTS/perf-gate-ledger"
copy_into "$BUILD/tests/property/failures" "$ARTIFACTS/property-failures"
copy_into "$BUILD/tests/mutants/corpus" "$ARTIFACTS/mutants-corpus"
log "artifacts in $ARTIFACTS; status $status"
exit $status
