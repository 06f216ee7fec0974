#!/bin/bash
# build_tune.sh BUILD_DIR [OUT]: the tuning harness (tune.cu) against BUILD_DIR/lib/libsoftmax_lab.so
# (a CUDA build of this repository), plus the kernels of commit 5a13f2a (the first family, "v1"
# in docs/KERNELS.md) compiled in a namespace so one run times old and new side by side. The
# old files are taken from git, not copied into the tree. Run from anywhere in the repo.
#   tools/build_tune.sh build-gpu && ./build-gpu/tune tools/plan_example.txt
# Without git (the GPU machine gets a copy of the tree, not the repository) the v1 kernels are
# left out and `v1*` variants, the reference and the backward inputs use today's `auto`.
set -e
B=$(realpath "${1:?usage: build_tune.sh BUILD_DIR [OUT]}")
OUT=${2:-$B/tune}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
if ! ROOT=$(git rev-parse --show-toplevel 2>/dev/null); then
  ROOT=$(cd "$(dirname "$0")/.." && pwd)
  I="-I$ROOT -I$ROOT/include -I$ROOT/src"
  nvcc -O3 -arch=sm_90 -std=c++17 $I -DTUNE_NO_V1 -o "$OUT" "$ROOT/tools/tune.cu" "$B/lib/libsoftmax_lab.so" -Xlinker -rpath="$B/lib" -lcudnn -lm
  echo "built $OUT (no git: without the v1 kernels)"
  exit 0
fi
mkdir -p "$W/v1"
for f in common.cuh auto_dispatch.h softmax_warp.cu softmax_block.cu softmax_online.cu softmax_split.cu softmax_auto.cu; do
  git -C "$ROOT" show 5a13f2a:kernels/$f > "$W/v1/$f"
done
sed -i -e 's|#include "kernels/common.cuh"|#include "common.cuh"|' -e 's|#include "kernels/auto_dispatch.h"|#include "auto_dispatch.h"|' \
       -e '/#include "kernels\/launchers.h"/d' -e 's/extern "C" sml_status sml_launch_/sml_status v1_launch_/' \
       -e 's/sml_launch_\(warp\|block\|online\|split\|auto\)(/v1_launch_\1(/g' "$W"/v1/*.cu
# The v1 kernels in a namespace, their launchers under v1_* names (tune.cu calls them).
{
  printf '#include <cooperative_groups.h>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n'
  printf '#include <cuda_runtime.h>\n#include <float.h>\n#include <stdint.h>\n#include <string.h>\n'
  printf '#include "softmax_lab.h"\nnamespace v1 {\n'
  for f in common.cuh softmax_warp.cu softmax_block.cu softmax_online.cu softmax_split.cu softmax_auto.cu; do
    printf '#include "v1/%s"\n' "$f"
  done
  printf '} // namespace v1\n'
  for k in auto warp block online split; do
    printf 'extern "C" sml_status v1_%s(sml_handle *h, const sml_problem *p) { return v1::v1_launch_%s(h, p); }\n' "$k" "$k"
  done
} > "$W/v1.cu"
I="-I$ROOT -I$ROOT/include -I$ROOT/src -I$W"
nvcc -O3 -arch=sm_90 -std=c++17 $I -c "$W/v1.cu" -o "$W/v1.o"
nvcc -O3 -arch=sm_90 -std=c++17 $I -c "$ROOT/tools/tune.cu" -o "$W/tune.o"
nvcc -arch=sm_90 -o "$OUT" "$W/tune.o" "$W/v1.o" "$B/lib/libsoftmax_lab.so" -Xlinker -rpath="$B/lib" -lcudnn -lm
echo "built $OUT"
