#!/usr/bin/env bash
# Builds an emulation program (tests/gpu_emulation.sh, tests/ted_gpu_emulation.sh): each SOURCE
# compiled as C++ against the fake CUDA runtime (cuda_runtime.h here), with the GPU engines' entry
# points and the backend's functions renamed (ww_cuda_pair to emu_cuda_pair, ...: emulated_gpu.h
# says why), then linked with the fake backend and BUILD's libwavewarp.a (the CPU engines the
# emulations compare with).
#
#   tests/emulation/build.sh BUILD OUT [g++ flags] -- SOURCE...
# EMU_SANITIZE=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 3 ]; then
  echo "usage: tests/emulation/build.sh BUILD OUT [g++ flags] -- SOURCE..." >&2
  exit 2
fi
build=$1 out=$2
shift 2
extra=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do extra+=("$1"); shift; done
if [ $# -eq 0 ]; then
  echo "tests/emulation/build.sh: no -- before the sources" >&2
  exit 2
fi
shift
sources=("$@" tests/emulation/backend.cpp)
# A library older than the sources links CPU engines (and library symbols) that the sources no
# longer match: a function added to a CUDA file links here only when it is renamed below, which a
# stale library hides (it has no such function yet).
stale=$(find src include -newer "$build/libwavewarp.a" \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | head -1)
if [ -n "$stale" ]; then
  echo "tests/emulation/build.sh: $build/libwavewarp.a is older than $stale: rebuild $build first" >&2
  exit 1
fi
# (every source includes the fake runtime first, as nvcc includes cuda_runtime.h in every .cu file)
flags=(-std=c++17 -O2 -g -fno-strict-aliasing -Wall -Werror -Wno-unused-function -Wno-unknown-pragmas
  -I"$PWD/tests/emulation" -I"$PWD/tests" -I"$PWD/src/cuda" -I"$PWD/src" -I"$PWD/include"
  -include "$PWD/tests/emulation/cuda_runtime.h")
for f in ww_cuda_pair ww_cuda_distance ww_cuda_ted ww_cuda_ted_pairwise ww_cuda_pairwise ww_cuda_pairwise_release \
  ww_cuda_run_pairwise ww_cuda_check_set ww_cuda_upload_set ww_cuda_release_set ww_cuda_make_plan ww_cuda_describe_plan \
  ww_cuda_pairs_roll ww_cuda_band_radius \
  ww_cuda_warps_in_flight ww_cuda_warp_strategy_warps ww_cuda_block_strategy_steps ww_cuda_block_strategy_blocks \
  ww_cuda_index_create ww_cuda_index_destroy ww_cuda_index_pairwise ww_cuda_softdtw_batch ww_cuda_softdtw_gradient \
  ww_cuda_image_pairwise \
  ww_device_reserve ww_pinned_reserve ww_cuda_status ww_cuda_read_flags ww_cuda_check_device_pointer ww_cuda_enter \
  ww_cuda_leave; do
  flags+=("-D$f=emu_${f#ww_}")
done
if [ "${EMU_SANITIZE:-0}" = 1 ]; then
  flags+=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
fi
# the sources compiled as many at a time as there are cores (a failed one leaves OBJ.failed)
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
objects=()
for src in "${sources[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  obj="$out.$(basename "$src").o"
  rm -f "$obj.failed"
  { g++ "${flags[@]}" "${extra[@]}" -x c++ -c "$src" -o "$obj" || touch "$obj.failed"; } &
  objects+=("$obj")
done
wait
for obj in "${objects[@]}"; do
  if [ -e "$obj.failed" ]; then
    echo "tests/emulation/build.sh: $obj did not compile" >&2
    exit 1
  fi
done
# a library built with CUDA objects needs the CUDA runtime (the toolkit CMake found for it)
cuda_libs=()
if ar t "$build/libwavewarp.a" | grep -q '\.cu\.o$'; then
  nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)
  cuda_libs=(-L"$(dirname "$nvcc")/../lib64" -lcudart_static -ldl -lrt)
fi
g++ "${flags[@]}" "${objects[@]}" "$build/libwavewarp.a" "${cuda_libs[@]}" -fopenmp -lpthread -lm -o "$out"
