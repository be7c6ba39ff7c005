#!/usr/bin/env bash
# The GPU tree edit distance engine (src/cuda/ted.cu) without a GPU: its host code and kernels
# compiled as plain C++ against the fake CUDA runtime of tests/emulation/ (cuda_runtime.h, with the
# engine's switches in ted_hooks.h), where a launch runs its blocks one after the other, each as one
# thread (every block- or grid-stride loop then covers all its tasks, in the
# order of the launches: the dependency order the engine relies on; a block's sweep owns all the
# rows), then compared bit for bit with the CPU engine on random trees, with every strategy
# forced in turn, and on matrices (self, blocks with strides, float output, x against y). What it
# cannot see: races between threads of a real launch (the tables of one launch write disjoint
# entries and read only earlier launches' by construction) and the multi-block strategy's memory
# ordering between warps, and the overlap of depths: its launches run in order, so the waits for
# unwritten td entries never run (a read that finds an entry still marked unwritten aborts: an
# entry read before the order of the plan writes it, or never written); the overlapped batches'
# host side runs in every other call (their own forest slots, td marked), the in-order one
# (shared slots) in the others, and the fallback to it when the device lacks the memory for the
# overlap. What it checks of the
# multi-block strategy: its values (forced on every table, and mixed with the others in one
# launch), and its queue's order: the first warp of the role takes every
# band in turn, and a wait on a band not yet finished aborts (on a GPU it could deadlock). The GPU
# itself runs test_ted_cuda_*.
# With LANES = 32 a block is one warp of 32 cooperative threads (the runtime's fibers) that switch at
# every barrier and shuffle, in an order drawn anew each round: the engine's 32-lane code (the
# tiles' sweep from registers and shuffles) runs too, on fewer pairs (the fibers are slow), and the
# block and warp sweeps run with the GPU's rows per thread (one or two for a block, one for a warp's
# lane), so their one- and two-row steps are the GPU's (a store predicate of the one-row step,
# broken on purpose, gave 538 differences).
#
#   tests/ted_gpu_emulation.sh [build-dir] [LANES]   (default build-cpu, 1; needs g++)
# (tests/emulation/ted_emulation.cpp is the driver; EMU_SANITIZE=1 builds it with the sanitizers.)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cpu}
lanes=${2:-1}
case "$lanes" in 1 | 32) ;; *) echo "LANES must be 1 or 32" >&2; exit 2 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_ted_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT
# with fibers: 40 random pairs (of 300), no large pair (minutes each)
if [ "$lanes" = 1 ]; then sizes=(-DEMU_PAIRS=300 -DEMU_LARGE_PAIRS=2); else sizes=(-DEMU_PAIRS=40 -DEMU_LARGE_PAIRS=0); fi
tests/emulation/build.sh "$build" "$work/emulation" -DEMU_LANES="$lanes" "${sizes[@]}" \
  -include "$PWD/tests/emulation/ted_hooks.h" -- src/cuda/ted.cu tests/emulation/ted_emulation.cpp
timeout 20m "$work/emulation" # (a spinning loop that never ends would hang, as on a GPU)
