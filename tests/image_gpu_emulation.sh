#!/usr/bin/env bash
# The GPU image engine (src/cuda/image.cu) without a GPU: compiled as plain
# C++ against the fake CUDA runtime of tests/emulation/cuda_runtime.h (a block's threads as fibers
# switching at every barrier and shuffle in a random order), then compared with the CPU engine
# (tests/emulation/image_emulation.cpp says what it covers). The GPU itself runs test_image_cuda_*.
#
#   tests/image_gpu_emulation.sh [build-dir] [quick]   (default build; needs g++ and perl)
# EMU_SANITIZE=1 builds it with AddressSanitizer and UndefinedBehaviorSanitizer (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-full}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_image_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT

tests/emulation/rewrite.sh "$work/cuda"
tests/emulation/build.sh "$build" "$work/emulation" -- "$work"/cuda/image.cu \
  tests/emulation/image_emulation.cpp
"$work/emulation" "$mode"
