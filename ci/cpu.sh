#!/usr/bin/env bash
# The CPU job: configure (CUDA kernels compiled where nvcc exists), build, run every test.
# On a machine without a GPU the GPU tests exit 77 and ctest lists them as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# The README's test command:
cmake --workflow --preset default
# A Debug build must compile too (-Werror sees other warnings at -O0); build only, ~20 s.
cmake --preset debug >/dev/null
cmake --build --preset debug
echo "ci/cpu.sh: done in $(( $(date +%s) - start )) s"
