#!/usr/bin/env bash
# One call on a GPU machine: build for sm_90, run every test (GPU ones included), run the GPU
# benchmark, and print a short table last. Logs and tables go to $OUT (or ./gpu-out).
# Usage: scripts/gpu_run.sh [max_log2_n]     (default 20, i.e. up to n = 1,048,576)
# Environment: WW_ALLPAIRS_N (series in the all-pairs benchmark, default 60000; 0 skips it),
# WW_SKIP_PAIR_BENCH=1 (skip the one-pair benchmark), WW_PROFILE=1 (ncu profile of one launch).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
# ../shared (golden cases, data sets) does not travel to the GPU machine by itself: a copy can be
# carried in .devcarry/shared (ignored by git).
if [ -d .devcarry/shared ]; then export WW_SHARED_DIR=$PWD/.devcarry/shared; fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B build-gpu -DWAVEWARP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
echo "== tests"
build-gpu/tests/ww_tests >"$out/tests.log" 2>&1
test_rc=$?
grep -E "FAIL|skipped|MISMATCH|failed" "$out/tests.log" | head -40
echo "== Python GPU-array tests"
# The extension built by CMake against the machine's python3 (which has NumPy, CuPy and PyTorch),
# placed beside the package's Python sources; pytest may be absent there, which skips this step.
if python3 -c "import numpy, pytest" 2>/dev/null; then
  cmake -S . -B build-gpu-py -DWAVEWARP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DWAVEWARP_PYTHON=ON \
    -DWAVEWARP_BUILD_TOOLS=OFF -DPython_EXECUTABLE="$(command -v python3)" >"$out/py_configure.log" 2>&1 &&
    cmake --build build-gpu-py -j "$(nproc)" >"$out/py_build.log" 2>&1 || { tail -30 "$out/py_build.log"; }
  rm -rf build-gpu-py/pkg && mkdir -p build-gpu-py/pkg && cp -r python/wavewarp build-gpu-py/pkg/ &&
    cp build-gpu-py/python/_wavewarp*.so build-gpu-py/pkg/wavewarp/ 2>/dev/null
  (cd python/tests && PYTHONPATH="$PWD/../../build-gpu-py/pkg" python3 -m pytest -q -rs -p no:cacheprovider \
     test_gpu.py test_api.py 2>&1 | tail -15) | tee "$out/py_tests.log"
else
  echo "skipped: python3 on this machine lacks numpy or pytest" | tee "$out/py_tests.log"
fi
if [ -z "${WW_SKIP_PAIR_BENCH:-}" ]; then
  echo "== GPU benchmark (one pair)"
  build-gpu/bench/ww_bench_gpu "${1:-20}" "$out/gpu_pair.md" 2>&1 | tee "$out/bench_pair.log"
fi
if [ -n "${WW_PROFILE:-}" ] && command -v ncu >/dev/null; then
  echo "== profile (ncu, one wavefront launch)"
  timeout 300 ncu --clock-control none -k regex:wavefront_kernel --launch-skip "${WW_PROFILE_SKIP:-60}" --launch-count 1 \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    build-gpu/bench/ww_bench_gpu "${WW_PROFILE_LOG2:-12}" >"$out/ncu.txt" 2>&1
  grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps|Registers|Achieved|Block Limit|Grid Size|Threads" "$out/ncu.txt" | head -60
fi
if [ -n "${WW_PROFILE_BATCH:-}" ] && command -v ncu >/dev/null; then
  echo "== profile (ncu, one matrix launch: launch number ${WW_PROFILE_BATCH} of pairs_thread_kernel)"
  timeout 300 ncu --clock-control none -k regex:pairs_thread_kernel --launch-skip "${WW_PROFILE_BATCH}" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats build-gpu/bench/ww_bench_gpu_batch /dev/null 0 >"$out/ncu_batch.txt" 2>&1
  grep -E "pairs_thread|Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Active Warps|Registers|Achieved|Hit Rate|Grid Size|Local" \
    "$out/ncu_batch.txt" | head -60
fi
if [ -x build-gpu/bench/ww_bench_gpu_batch ]; then
  echo "== GPU benchmark (matrices)"
  build-gpu/bench/ww_bench_gpu_batch "$out/gpu_batch.md" "${WW_ALLPAIRS_N:-60000}" 2>&1 | tee "$out/bench_batch.log"
fi
echo
echo "== summary"
tail -1 "$out/tests.log"
tail -1 "$out/py_tests.log"
[ -f "$out/gpu_pair.md" ] && cat "$out/gpu_pair.md"
[ -f "$out/gpu_batch.md" ] && cat "$out/gpu_batch.md"
exit $test_rc
