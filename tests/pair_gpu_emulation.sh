#!/usr/bin/env bash
# The GPU one-pair engine (src/cuda/pair.cu and its kernels) without a GPU: compiled as plain C++
# against the fake CUDA runtime of tests/emulation/cuda_runtime.h (blocks on host threads side by
# side, a block's threads as fibers switching at every barrier and shuffle in a random order), then
# compared with the CPU engine on pairs around every tile shape's band and warp edges
# (tests/emulation/pair_emulation.cpp says what it covers and what it cannot see). The GPU itself
# runs test_cuda_*.
#
#   tests/pair_gpu_emulation.sh [build-dir] [quick]   (default build; needs g++ and perl)
# EMU_SANITIZE=1 builds it with AddressSanitizer and UndefinedBehaviorSanitizer (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-full}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_pair_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT

tests/emulation/rewrite.sh "$work/cuda"
tests/emulation/build.sh "$build" "$work/emulation" -- "$work"/cuda/pair.cu "$work"/cuda/instances/wavefront_*.cu \
  tests/emulation/pair_emulation.cpp
"$work/emulation" "$mode"
