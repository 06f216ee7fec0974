#!/usr/bin/env bash
# The CPU job: the format check, then configure (CUDA kernels compiled where nvcc exists), build, run every test.
# On a machine without a GPU the GPU tests exit 77 and ctest lists them as skipped. Then the
# install path: install into a temporary prefix, and configure, build and test
# examples/external-kernel against it (its GPU tests skip here too).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# The source format (.clang-format): first, since it takes seconds and says where.
bash ci/format.sh
# The README's test command:
cmake --workflow --preset default
# A Debug build must compile too (-Werror sees other warnings at -O0); build only, ~20 s.
cmake --preset debug >/dev/null
cmake --build --preset debug

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix"
# auto's shipped plan tables go beside the library (share/softmax_lab/plans, src/core/plan_cache.h).
test -d "$prefix/share/softmax_lab/plans" || { echo "ci/cpu.sh: no share/softmax_lab/plans in the install"; exit 1; }
# ... and the saved regressions check replays wherever it runs (cli/regressions.h).
for d in regressions mutants-corpus; do
  ls "$prefix/share/softmax_lab/$d/"*.json >/dev/null 2>&1 ||
    { echo "ci/cpu.sh: no reproducers in share/softmax_lab/$d of the install"; exit 1; }
done
rm -rf build/example
cmake -S examples/external-kernel -B build/example -DCMAKE_PREFIX_PATH="$prefix"
cmake --build build/example -j 4
ctest --test-dir build/example --output-on-failure --no-tests=error
# The host code under AddressSanitizer + UndefinedBehaviorSanitizer (CPU only, so the CUDA
# default cannot break it): every CPU test, and the fuzz drivers of the .npy, ledger and
# reproducer readers over their corpus (tests/fuzz). A report fails the job even where the
# test's exit status would not show it (a CLI child whose non-zero exit was expected):
# ASan writes its reports to build-asan/sanitizer-report.*, UBSan's (which gcc's runtime
# cannot send to a file next to ASan) are found in every test's output, which ctest keeps.
log=build-asan/Testing/Temporary/LastTest.log
rm -f build-asan/sanitizer-report.* "$log"
cmake --workflow --preset asan
if ls build-asan/sanitizer-report.* >/dev/null 2>&1 || grep -q "runtime error:" "$log"; then
  cat build-asan/sanitizer-report.* 2>/dev/null || true
  grep -B2 -A12 "runtime error:" "$log" || true
  echo "ci/cpu.sh: sanitizer reports above"
  exit 1
fi
echo "ci/cpu.sh: done in $(( $(date +%s) - start )) s"
