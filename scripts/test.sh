#!/usr/bin/env bash
# Builds everything and runs every test: the C test runner (which also drives the CLI), then the
# Python package's tests in a private virtual environment. GPU tests skip with a message when no
# GPU is present. Usage: scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)"
"$build"/tests/ww_tests
if [ -x scripts/test_python.sh ]; then
  scripts/test_python.sh
fi
