#!/usr/bin/env bash
# The GPU matrix engine (src/cuda/pairwise.cu, its plan, kernels and strategies, the whole-GPU one
# through the one-pair engine) and the GPU index (src/cuda/index.cu) without a GPU: compiled as
# plain C++ against the fake CUDA runtime of tests/emulation/cuda_runtime.h (blocks on host
# threads side by side, a block's threads as fibers switching at every barrier and shuffle in a
# random order, streams that finish each call at once), then compared with the CPU engine
# (tests/emulation/matrix_emulation.cpp says what it covers). The GPU itself runs test_cuda_*.
#
#   tests/matrix_gpu_emulation.sh [build-dir] [quick]   (default build; needs g++ and perl)
# EMU_SANITIZE=1 builds it with AddressSanitizer and UndefinedBehaviorSanitizer (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-full}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_matrix_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT

tests/emulation/rewrite.sh "$work/cuda"
tests/emulation/build.sh "$build" "$work/emulation" -- "$work"/cuda/{pairwise,pairwise_plan,index,pair}.cu \
  "$work"/cuda/instances/{pairwise,wavefront}_*.cu tests/emulation/matrix_emulation.cpp
"$work/emulation" "$mode"
