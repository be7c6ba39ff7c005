#!/usr/bin/env bash
# One call on a GPU machine: build for sm_90 (this tree and, for the old-vs-new comparison, the commit
# before the measures were split out), run every test (GPU ones included), compare the TWED checksums
# of both builds, run the GPU benchmarks (TWED old against new, then DTW and windows), and print a
# short table last. Logs and tables go to $OUT (or ./gpu-out).
# Usage: scripts/gpu_run.sh [max_log2_n]     (default 20, i.e. up to n = 1,048,576)
# Environment:
#   WW_PHASES      the steps, any of "build tests python checksums bench-twed bench-dtw after-pair profile
#                  bench-ted image softdtw" (default: all but profile; a step needs the builds, which are
#                  kept between calls); bench-ted: the CPU tree edit distance beside X-TED's CPU code, host threads
#   WW_OLD_TREE    source tree of the old commit (default: `git archive $WW_OLD_COMMIT`, 283e189, when
#                  this is a git checkout); without one, the old-vs-new steps are skipped
#   WW_ALLPAIRS_N  series in the all-pairs benchmark (default 60000; 0 skips it)
#   WW_SKIP_PAIR_BENCH=1 skips the one-pair benchmark; WW_PROFILE=1 adds an ncu profile of one launch.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
phases=${WW_PHASES:-"build tests python checksums bench-twed bench-dtw after-pair bench-ted image softdtw"}
[ -n "${WW_PROFILE:-}" ] && phases="$phases profile"
has() { case " $phases " in *" $1 "*) return 0 ;; esac; return 1; }
jobs=$(nproc)
# ../shared (golden cases, data sets) does not travel to the GPU machine by itself: a copy can be
# carried in .devcarry/shared (ignored by git).
if [ -d .devcarry/shared ]; then export WW_SHARED_DIR=$PWD/.devcarry/shared; fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
start=$(date +%s)
stamp() { echo "   ($(($(date +%s) - start)) s)"; }

# ---------------------------------------------------------------- builds
old_src=build-old/src
if [ -n "${WW_OLD_TREE:-}" ]; then
  old_src=$WW_OLD_TREE
elif [ ! -d "$old_src" ] && git rev-parse --git-dir >/dev/null 2>&1; then
  mkdir -p "$old_src" && git archive "${WW_OLD_COMMIT:-283e189}" | tar -xf - -C "$old_src"
fi
have_old=0
[ -f "$old_src/CMakeLists.txt" ] && have_old=1
if has build; then
  echo "== build (this tree$([ $have_old = 1 ] && echo ' and the old commit'), in parallel)"
  cmake -S . -B build-gpu -DWAVEWARP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
  cmake --build build-gpu -j "$jobs" >"$out/build.log" 2>&1 &
  new_pid=$!
  if [ $have_old = 1 ]; then
    # the checksum program is newer than the old commit: built against it from this tree
    if ! grep -q ww_twed_checksums "$old_src/tests/CMakeLists.txt"; then
      cp tests/twed_checksums.c "$old_src/tests/"
      printf '%s\n' 'add_executable(ww_twed_checksums twed_checksums.c)' \
        'target_link_libraries(ww_twed_checksums PRIVATE wavewarp_static m)' >>"$old_src/tests/CMakeLists.txt"
    fi
    cmake -S "$old_src" -B build-old -DWAVEWARP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
      >"$out/configure_old.log" 2>&1 && cmake --build build-old -j "$jobs" >"$out/build_old.log" 2>&1 &
    old_pid=$!
  fi
  if has python && python3 -c "import numpy, pytest" 2>/dev/null; then
    cmake -S . -B build-gpu-py -DWAVEWARP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DWAVEWARP_PYTHON=ON \
      -DWAVEWARP_BUILD_TOOLS=OFF -DPython_EXECUTABLE="$(command -v python3)" >"$out/py_configure.log" 2>&1 &&
      cmake --build build-gpu-py -j "$jobs" >"$out/py_build.log" 2>&1 &
    py_pid=$!
  fi
  wait $new_pid || { tail -50 "$out/build.log"; exit 1; }
  if [ $have_old = 1 ]; then wait $old_pid || { tail -30 "$out/build_old.log"; have_old=0; }; fi
  [ -n "${py_pid:-}" ] && { wait $py_pid || tail -30 "$out/py_build.log"; }
  stamp
fi
[ -x build-old/tests/ww_twed_checksums ] || have_old=0

# ---------------------------------------------------------------- tests
test_rc=0
if has tests; then
  echo "== tests"
  build-gpu/tests/ww_tests >"$out/tests.log" 2>&1
  test_rc=$?
  grep -E "FAIL|skipped|MISMATCH|failed|differ|off \(" "$out/tests.log" | head -40
  stamp
fi
if has python; then
  echo "== Python GPU-array tests"
  # the extension built by CMake against the machine's python3 (which has NumPy, CuPy and PyTorch),
  # placed beside the package's Python sources; pytest may be absent there, which skips this step
  if [ -f build-gpu-py/python/CMakeFiles/Makefile.cmake ] || ls build-gpu-py/python/_wavewarp*.so >/dev/null 2>&1; then
    rm -rf build-gpu-py/pkg && mkdir -p build-gpu-py/pkg && cp -r python/wavewarp build-gpu-py/pkg/ &&
      cp build-gpu-py/python/_wavewarp*.so build-gpu-py/pkg/wavewarp/ 2>/dev/null
    (cd python/tests && PYTHONPATH="$PWD/../../build-gpu-py/pkg" python3 -m pytest -q -rs -p no:cacheprovider \
       test_gpu.py test_api.py test_ted.py test_image.py 2>&1 | tail -15) | tee "$out/py_tests.log"
  else
    echo "skipped: python3 on this machine lacks numpy or pytest" | tee "$out/py_tests.log"
  fi
  stamp
fi

# ---------------------------------------------------------------- TWED checksums, old against new
if has checksums && [ $have_old = 1 ]; then
  echo "== TWED checksums: the old commit against this tree (GPU engines, bit for bit)"
  build-old/tests/ww_twed_checksums cuda >"$out/checksums_old.txt" 2>&1
  build-gpu/tests/ww_twed_checksums cuda >"$out/checksums_new.txt" 2>&1
  if diff "$out/checksums_old.txt" "$out/checksums_new.txt" >"$out/checksums.diff"; then
    echo "checksums: $(wc -l <"$out/checksums_new.txt") cases, all identical" | tee "$out/checksums.txt"
  else
    echo "checksums: DIFFER ($(grep -c '^>' "$out/checksums.diff") of $(wc -l <"$out/checksums_new.txt") cases)" |
      tee "$out/checksums.txt"
    head -20 "$out/checksums.diff"
  fi
  stamp
fi

# ---------------------------------------------------------------- benchmarks
max_log2=${1:-20}
if has bench-twed; then
  echo "== TWED benchmarks, old and new builds in turn (same machine, same call)"
  for v in old new; do
    dir=build-gpu
    [ $v = old ] && dir=build-old
    [ $v = old ] && [ $have_old = 0 ] && continue
    if [ -z "${WW_SKIP_PAIR_BENCH:-}" ]; then
      WW_BENCH_TWED_ONLY=1 $dir/bench/ww_bench_gpu "$max_log2" "$out/gpu_pair_$v.md" >"$out/bench_pair_$v.log" 2>&1
    fi
    WW_BENCH_TWED_ONLY=1 $dir/bench/ww_bench_gpu_batch "$out/gpu_batch_$v.md" "${WW_ALLPAIRS_N:-60000}" \
      >"$out/bench_batch_$v.log" 2>&1
    stamp
  done
  grep -h MISMATCH "$out"/bench_*_new.log | head
  if [ $have_old = 1 ]; then
    {
      [ -f "$out/gpu_pair_old.md" ] && python3 scripts/compare_tables.py "$out/gpu_pair_old.md" "$out/gpu_pair_new.md"
      python3 scripts/compare_tables.py "$out/gpu_batch_old.md" "$out/gpu_batch_new.md"
    } >"$out/gpu_twed_old_new.md"
  fi
fi
if has bench-dtw; then
  echo "== DTW and window benchmarks"
  WW_BENCH_DTW_ONLY=1 build-gpu/bench/ww_bench_gpu "$max_log2" "$out/gpu_dtw_pair.md" >"$out/bench_dtw_pair.log" 2>&1
  WW_BENCH_DTW_ONLY=1 build-gpu/bench/ww_bench_gpu_batch "$out/gpu_dtw_batch.md" >"$out/bench_dtw_batch.log" 2>&1
  build-gpu/bench/ww_bench_gpu_band "$out/gpu_dtw_band.md" 41 >"$out/bench_dtw_band.log" 2>&1
  grep -h MISMATCH "$out"/bench_dtw_*.log | head
  stamp
fi
if has after-pair && [ -x build-gpu/bench/ww_bench_gpu_after_pair ]; then
  echo "== the matrix after other work in the same process (bench/results/gpu-after-pair.md)"
  for v in fresh cpu-work+pair; do
    build-gpu/bench/ww_bench_gpu_after_pair "${WW_SHARED_DIR:-../shared}/data/synthetic_control.data" "$v"
  done | tee "$out/after_pair.txt"
  stamp
fi
if has image; then
  echo "== elastic image matching (issue 11): GPU tests, GPU scenarios, CPU per core (bench/results/image.md)"
  build-gpu/tests/ww_tests image >"$out/image_tests.log" 2>&1 || test_rc=1
  grep -E "FAIL|skipped|failed|entry|passed" "$out/image_tests.log" | head -20
  build-gpu/bench/ww_bench_image --gpu --stored "${WW_IMAGE_STORED:-60000}" | tee "$out/image_gpu.md"
  build-gpu/bench/ww_bench_image --stored 60000 >"$out/image_cpu.md" 2>&1
  stamp
fi
if has softdtw; then
  # soft-DTW (issue 14): its GPU test, its Python tests (torch CUDA tensors included) and the
  # benchmark against pytorch-softdtw-cuda in the same process (the machine's PyTorch and Numba)
  echo "== soft-DTW: GPU test, Python tests, benchmark"
  build-gpu/tests/ww_tests softdtw >"$out/softdtw_tests.log" 2>&1
  tail -3 "$out/softdtw_tests.log"
  # the kernels alone (CUDA events, device arrays; float32, float32 checkpointed, float64)
  { build-gpu/bench/ww_bench_softdtw_gpu && build-gpu/bench/ww_bench_softdtw_gpu --budget 0 512:512 512:4096 64:8192 &&
      build-gpu/bench/ww_bench_softdtw_gpu --window 0.1 512:512 512:4096 64:8192 &&
      build-gpu/bench/ww_bench_softdtw_gpu --f64 512:512 512:1024 64:8192; } 2>&1 | tee "$out/gpu_softdtw_kernels.md"
  if ls build-gpu-py/python/_wavewarp*.so >/dev/null 2>&1; then
    rm -rf build-gpu-py/pkg && mkdir -p build-gpu-py/pkg && cp -r python/wavewarp build-gpu-py/pkg/ &&
      cp build-gpu-py/python/_wavewarp*.so build-gpu-py/pkg/wavewarp/ 2>/dev/null
    (cd python/tests && PYTHONPATH="$PWD/../../build-gpu-py/pkg" python3 -m pytest -q -rs -p no:cacheprovider \
       test_softdtw.py 2>&1 | tail -15) | tee "$out/softdtw_py_tests.log"
    PYTHONPATH="$PWD/build-gpu-py/pkg" timeout 900 python3 bench/bench_softdtw.py --gpu --rounds 5 \
      --shared "${WW_SHARED_DIR:-../shared}" 2>&1 | tee "$out/gpu_softdtw.md"
  else
    echo "skipped: no Python extension built (python3 lacks numpy)" | tee "$out/softdtw_py_tests.log"
  fi
  stamp
fi
if has profile && command -v ncu >/dev/null; then
  echo "== profile (ncu, one wavefront launch)"
  timeout 300 ncu --clock-control none -k regex:wavefront_kernel --launch-skip "${WW_PROFILE_SKIP:-60}" --launch-count 1 \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    build-gpu/bench/ww_bench_gpu "${WW_PROFILE_LOG2:-12}" >"$out/ncu.txt" 2>&1
  grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps|Registers|Achieved|Block Limit|Grid Size|Threads" "$out/ncu.txt" | head -60
fi

if has bench-ted; then
  # tree edit distance (issue 13): its tests ran with the others (test_ted_*; test_ted_cuda_matches_cpu
  # compares the GPU engine with the CPU). Here the CPU engine on the GPU host beside X-TED's CPU code
  # (built from ../shared/rivals/x-ted-cpu in /tmp), 1 thread and all host threads, then the GPU engine
  # (pairs and the 1000-node matrix, with and without the multi-block strategy; then each strategy
  # across table sizes, the threshold figure).
  echo "== bench-ted (CPU, Swissport pair (0, 1), wavewarp and X-TED CPU; then the GPU engine)"
  bench/bench_ted_cpu.sh build-gpu 1 "$jobs" 2>&1 | tee "$out/cpu_ted.md"
  build-gpu/bench/ww_bench_ted "${WW_SHARED_DIR:-../shared}/data/trees" 0 20 cuda 2>&1 | tee "$out/gpu_ted.md"
  # the same without the multi-block strategy (every large table on one block, as before it), and
  # with blocks up to 129 x 129 cells (the built-in value: 4225, tiles from 66 x 66 on)
  WW_TED_BLOCK_CELLS=1000000000000 build-gpu/bench/ww_bench_ted "${WW_SHARED_DIR:-../shared}/data/trees" 0 20 cuda \
    2>&1 | tee "$out/gpu_ted_no_multi_block.md"
  WW_TED_BLOCK_CELLS=16641 build-gpu/bench/ww_bench_ted "${WW_SHARED_DIR:-../shared}/data/trees" 0 20 cuda \
    2>&1 | tee "$out/gpu_ted_blocks_to_16641.md"
  build-gpu/bench/ww_bench_ted_gpu 1024 2>&1 | tee "$out/gpu_ted_strategies.md"
  build-gpu/bench/ww_bench_ted_gpu 1024 1 2>&1 | tee "$out/gpu_ted_strategies_one_table.md" # latency
  stamp
fi

# ---------------------------------------------------------------- the short table
echo
echo "== summary"
[ -f "$out/tests.log" ] && echo "C tests: $(tail -1 "$out/tests.log")"
[ -f "$out/py_tests.log" ] && echo "Python: $(tail -1 "$out/py_tests.log")"
[ -f "$out/softdtw_tests.log" ] && echo "soft-DTW C tests: $(tail -1 "$out/softdtw_tests.log")"
[ -f "$out/softdtw_py_tests.log" ] && echo "soft-DTW Python: $(tail -1 "$out/softdtw_py_tests.log")"
[ -f "$out/gpu_softdtw.md" ] && grep -E "^\| [0-9]+ \| [0-9]+ \|" "$out/gpu_softdtw.md"
[ -f "$out/gpu_softdtw_kernels.md" ] && grep -E "^\| 512 \| 512 \|" "$out/gpu_softdtw_kernels.md"
[ -f "$out/checksums.txt" ] && cat "$out/checksums.txt"
[ -f "$out/image_gpu.md" ] && grep -E "^\| (28|all)" "$out/image_gpu.md"
[ -f "$out/gpu_twed_old_new.md" ] && echo "TWED old/new: $(grep -h 'largest new/old' "$out/gpu_twed_old_new.md" | tr '\n' ' ')"
for f in "$out/cpu_ted.md" "$out/gpu_ted.md"; do
  [ -f "$f" ] && grep -E "^# cpu|^# cuda|^\| swissport|nodes: distance|All pairs" "$f"
done
[ -f "$out/gpu_dtw_band.md" ] && grep -E "^\| (DTW|TWED) \| [0-9.]+ us" "$out/gpu_dtw_band.md"
for f in "$out/gpu_dtw_pair.md" "$out/gpu_dtw_batch.md"; do
  [ -f "$f" ] && grep -E "^\| (1024|65536|1048576) \||synthetic control|ww_index of the 60|^\| [0-9]+ \| (DTW|TWED) \||^\| [0-9]+ x [0-9]+, length" "$f"
done
exit $test_rc
