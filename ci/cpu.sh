#!/usr/bin/env bash
# The CPU job: configure (CUDA kernels compiled where nvcc exists), build, run every test.
# On a machine without a GPU the GPU tests exit 77 and ctest lists them as skipped. Then the
# install path: install into a temporary prefix, and configure, build and test
# examples/external-kernel against it (its GPU tests skip here too).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# The README's test command:
cmake --workflow --preset default
# A Debug build must compile too (-Werror sees other warnings at -O0); build only, ~20 s.
cmake --preset debug >/dev/null
cmake --build --preset debug

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix"
rm -rf build/example
cmake -S examples/external-kernel -B build/example -DCMAKE_PREFIX_PATH="$prefix"
cmake --build build/example -j 4
ctest --test-dir build/example --output-on-failure --no-tests=error
echo "ci/cpu.sh: done in $(( $(date +%s) - start )) s"
