#!/usr/bin/env bash
# Builds everything and runs every test: the C test runner (which also drives the CLI), the
# installed package (tests/install_test.sh: cmake --install into a temporary prefix, the README's
# C example built with find_package and pkg-config, shared and static), the README's shell examples
# (tests/readme_examples.sh), then the Python package's tests in a private virtual environment.
# GPU tests skip with a message when no GPU is present. Usage: scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)"
"$build"/tests/ww_tests
tests/install_test.sh "$build"
tests/readme_examples.sh "$build"
tests/ted_gpu_emulation.sh "$build" # the GPU tree engine's logic, emulated on the CPU (issue 13)
tests/ted_gpu_emulation.sh "$build" 32 # ... with warps of 32 fibers: its 32-lane code too (2 minutes)
# the GPU engines for series and images, emulated on the CPU (4 minutes)
for engine in pair matrix softdtw image; do tests/gpu_emulation.sh "$engine" "$build"; done
if [ -x scripts/test_python.sh ]; then
  # the .ts tests drive this build's CLI
  WW_CLI="$PWD/$build/src/cli/wavewarp" scripts/test_python.sh
fi
