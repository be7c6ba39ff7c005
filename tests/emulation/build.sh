#!/usr/bin/env bash
# Builds an emulation program (tests/*_gpu_emulation.sh): each SOURCE compiled as C++ against the
# fake CUDA runtime (cuda_runtime.h here), with the GPU engines' entry points and the backend's
# functions renamed (ww_cuda_pair to emu_cuda_pair, ...: emulated_gpu.h says why), then linked with
# the fake backend and BUILD's libwavewarp.a (the CPU engines the emulations compare with).
#
#   tests/emulation/build.sh BUILD OUT [g++ flags] -- SOURCE...
# EMU_SANITIZE=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$1 out=$2
shift 2
extra=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do extra+=("$1"); shift; done
shift
sources=("$@" tests/emulation/backend.cpp)
# (every source includes the fake runtime first, as nvcc includes cuda_runtime.h in every .cu file)
flags=(-std=c++17 -O2 -g -fno-strict-aliasing -Wall -Werror -Wno-unused-function -Wno-unknown-pragmas
  -I"$PWD/tests/emulation" -I"$PWD/tests" -I"$PWD/src/cuda" -I"$PWD/src" -I"$PWD/include"
  -include "$PWD/tests/emulation/cuda_runtime.h")
for f in ww_cuda_pair ww_cuda_distance ww_cuda_ted ww_cuda_ted_pairwise ww_cuda_pairwise ww_cuda_pairwise_release \
  ww_cuda_run_pairwise ww_cuda_check_set ww_cuda_upload_set ww_cuda_make_plan ww_cuda_describe_plan \
  ww_cuda_warps_in_flight ww_cuda_warp_strategy_warps ww_cuda_block_strategy_steps ww_cuda_block_strategy_blocks \
  ww_cuda_index_create ww_cuda_index_destroy ww_cuda_index_pairwise ww_cuda_softdtw_batch ww_cuda_softdtw_gradient \
  ww_cuda_image_pairwise \
  ww_device_reserve ww_pinned_reserve ww_cuda_status ww_cuda_read_flags ww_cuda_check_device_pointer ww_cuda_enter \
  ww_cuda_leave; do
  flags+=("-D$f=emu_${f#ww_}")
done
if [ "${EMU_SANITIZE:-0}" = 1 ]; then
  flags+=(-fsanitize=address,undefined -fno-omit-frame-pointer)
fi
objects=() pids=()
for src in "${sources[@]}"; do
  obj="$out.$(basename "$src").o"
  g++ "${flags[@]}" "${extra[@]}" -x c++ -c "$src" -o "$obj" &
  pids+=($!) objects+=("$obj")
done
for pid in "${pids[@]}"; do wait "$pid"; done
# a CUDA build's library needs the CUDA runtime for its own GPU objects
cuda_libs=()
nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || true)
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  cuda_libs=(-L"$(dirname "$nvcc")/../lib64" -lcudart_static -ldl -lrt)
fi
g++ "${flags[@]}" "${objects[@]}" "$build/libwavewarp.a" "${cuda_libs[@]}" -fopenmp -lpthread -lm -o "$out"
