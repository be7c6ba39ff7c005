#!/usr/bin/env bash
# Copies the CUDA sources (src/cuda: *.cu, *.cuh, instances/) into OUT with the two things g++
# cannot read rewritten for the fake runtime (cuda_runtime.h here):
#   kernel<<<grid, block, shared, stream>>>(args);  ->  emu::launch([&] { kernel(args); }, grid, block, shared, stream);
#   extern __shared__ [__align__(n)] T name[];      ->  T *const name = (T *)emu::dynamic_shared();
# A file keeps its name and folder, so its quoted includes find the rewritten ones first.
#
#   tests/emulation/rewrite.sh OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1
mkdir -p "$out/instances"
# (a launch's arguments never hold a `;`, a brace, a comment's next line or a macro's __VA_ARGS__: the
# launches written in comments and in ted.cu's launch macro stay as they are)
launch='s/(\w+(?:<[^<>;]*>)?)\s*<<<([^;{}]*?)>>>\s*\(((?:(?!\n\s*\*|__VA_ARGS__)[^;{}])*?)\);/emu::launch([&] { $1($3); }, $2);/gs'
shared='s/extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w ]+?)\s+(\w+)\[\];/$1 *const $2 = ($1 *)emu::dynamic_shared();/g'
for f in src/cuda/*.cu src/cuda/*.cuh src/cuda/instances/*.cu; do
  perl -0pe "$launch; $shared" "$f" >"$out/${f#src/cuda/}"
done
# what is left would not compile, or would compile as something else: say which (launches written
# in comments and in macros are left as they are)
left=$(grep -n '<<<' "$out"/*.cu "$out"/*.cuh "$out"/instances/*.cu |
  grep -v '#define\|__VA_ARGS__\|^[^:]*:[0-9]*: *\*\|^[^:]*:[0-9]*: */[*/]' || true)
if [ -n "$left" ]; then
  echo "$left" >&2
  echo "rewrite.sh: a launch was not rewritten" >&2
  exit 1
fi
