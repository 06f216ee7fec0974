#!/usr/bin/env bash
# The source format check: every C, CUDA and header file named (or, with no names, every
# tracked one under src, cli, reference, kernels, include, tests, examples and tools) must be
# what clang-format makes of it under .clang-format. Exit 0: all formatted; 1: the files
# listed are not (clang-format's diagnostics show where); 2: no clang-format.
#   ci/format.sh [--fix] [FILE...]     --fix: rewrite the files in place instead
# CLANG_FORMAT names the binary (default: clang-format; version 14 or newer).
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
if [ "${1:-}" = "--fix" ]; then
  fix=1
  shift
fi
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null; then
  echo "ci/format.sh: $cf not found (apt-get install clang-format, or set CLANG_FORMAT)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- src cli reference kernels include tests examples tools |
                       grep -E '\.(c|h|cu|cuh)$' | grep -v '/corpus/')
fi
if [ $fix -eq 1 ]; then
  "$cf" -i --style=file "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'ci/format.sh: not formatted (%s of %s files): run ci/format.sh --fix FILE\n' "${#bad[@]}" "${#files[@]}"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "ci/format.sh: ${#files[@]} files formatted"
