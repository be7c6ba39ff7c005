#!/usr/bin/env bash
# A GPU engine without a GPU: its CUDA sources compiled as plain C++ against the fake CUDA runtime
# of tests/emulation/ (cuda_runtime.h: a launch's blocks side by side on host threads, a block's
# threads as fibers switching at every barrier and shuffle in a random order, streams that finish
# each call at once), then compared with the CPU engine by its driver, which says what it covers:
#   pair     the one-pair engine (pair.cu: wavefront, per-diagonal and preparation kernels)
#   matrix   the matrix engine and the index (pairwise.cu, its plan and strategies; index.cu)
#   softdtw  the soft-DTW engine (softdtw.cu)
#   image    the image engine (image.cu)
# (the tree engine has its own script, tests/ted_gpu_emulation.sh). The GPU itself runs test_cuda_*.
#
#   tests/gpu_emulation.sh ENGINE [build-dir] [quick]   (default build; needs g++ and perl)
# EMU_SANITIZE=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
engine=${1:-}
build=${2:-build}
mode=${3:-full}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_${engine:-x}_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT
case "$engine" in
  pair | matrix | softdtw | image) ;;
  *) echo "usage: tests/gpu_emulation.sh pair|matrix|softdtw|image [build-dir] [quick]" >&2; exit 2 ;;
esac
c=$work/cuda
tests/emulation/rewrite.sh "$c"
case "$engine" in
  pair) sources=("$c"/pair.cu "$c"/instances/wavefront_*.cu) ;;
  matrix) sources=("$c"/{pairwise,pairwise_plan,index,pair}.cu "$c"/instances/{pairwise,wavefront}_*.cu) ;;
  softdtw) sources=("$c"/softdtw.cu "$c"/instances/softdtw_*.cu) ;;
  image) sources=("$c"/image.cu) ;;
esac
tests/emulation/build.sh "$build" "$work/emulation" -- "${sources[@]}" "tests/emulation/${engine}_emulation.cpp"
# (a spinning loop that never ends would hang here as on a GPU: the watch is the time limit)
timeout 20m "$work/emulation" "$mode"
