#!/usr/bin/env bash
# The GPU one-pair engine (src/cuda/pair.cu and its kernels) without a GPU: compiled as plain C++
# against the fake CUDA runtime of tests/emulation/cuda_runtime.h (blocks on host threads side by
# side, a block's threads as fibers switching at every barrier and shuffle in a random order), then
# compared with the CPU engine on pairs around every tile shape's band and warp edges
# (tests/emulation/pair_emulation.cpp says what it covers and what it cannot see). The GPU itself
# runs test_cuda_*.
#
#   tests/pair_gpu_emulation.sh [build-dir] [quick]   (default build; needs g++ and perl)
# EMU_SANITIZE=1 builds it with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-full}
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_pair_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT

# kernel<<<grid, block, shared, stream>>>(args); -> emu::launch([&] { kernel(args); }, grid, ...);
launches='s/(\w+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\((.*?)\);/emu::launch([&] { $1($3); }, $2);/gs'
perl -0pe "$launches" src/cuda/pair.cu >"$work/pair.cu"
perl -0pe "$launches" src/cuda/wavefront_shapes.cuh >"$work/wavefront_shapes.cuh"
if grep -q '<<<' "$work/pair.cu" "$work/wavefront_shapes.cuh"; then
  echo "pair_gpu_emulation: a launch was not rewritten" >&2
  exit 1
fi
cat >"$work/engine.cpp" <<'EOF'
#include "pair.cu"
/* the shapes' kernels, compiled in src/cuda/instances/ for the GPU */
WW_WAVEFRONT_INSTANCE(, twed_ops, false)
WW_WAVEFRONT_INSTANCE(, twed_ops, true)
WW_WAVEFRONT_INSTANCE(, dtw_ops, false)
WW_WAVEFRONT_INSTANCE(, dtw_ops, true)
EOF

# the engine's entry points and the backend functions it calls: the emulation's, not the library's
renames=()
for f in ww_cuda_pair ww_cuda_distance ww_device_reserve ww_pinned_reserve ww_cuda_status \
  ww_cuda_check_device_pointer ww_cuda_enter ww_cuda_leave; do
  renames+=("-D$f=emu_${f#ww_}")
done
flags=(-std=c++17 -O2 -g -fno-strict-aliasing -Wall -Werror -Wno-unused-function -Wno-unknown-pragmas
  -I"$work" -I"$repo/tests/emulation" -I"$repo/src/cuda" -I"$repo/src" -I"$repo/include" "${renames[@]}")
if [ "${EMU_SANITIZE:-0}" = 1 ]; then
  flags+=(-fsanitize=address,undefined -fno-omit-frame-pointer)
fi
g++ "${flags[@]}" -c "$work/engine.cpp" -o "$work/engine.o" &
g++ "${flags[@]}" -c tests/emulation/pair_emulation.cpp -o "$work/driver.o"
wait $!
# a CUDA build's library needs the CUDA runtime for its own GPU objects
cuda_libs=()
nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || true)
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  cuda_libs=(-L"$(dirname "$nvcc")/../lib64" -lcudart_static -ldl -lrt)
fi
g++ "${flags[@]}" "$work/driver.o" "$work/engine.o" "$build/libwavewarp.a" "${cuda_libs[@]}" -fopenmp -lpthread -lm \
  -o "$work/emulation"
"$work/emulation" "$mode"
