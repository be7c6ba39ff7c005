#!/usr/bin/env bash
# Runs every fuzzer (fuzz/CMakeLists.txt) for a fixed number of executions from its seed corpus,
# with a fixed random seed, so a CI run is reproducible; new inputs go to a temporary directory,
# not into the repository. A crash prints the input (base64) and the harness's report, and fails.
#   fuzz/run.sh BUILD-DIR [RUNS] [SEED]     (RUNS: executions of every harness, default
#                                            WW_FUZZ_RUNS or each harness's own count below, sized
#                                            for about a minute in all on 2 cores; SEED: WW_FUZZ_SEED
#                                            or 1)
# For a longer hunt: fuzz/run.sh build-fuzz 10000000 $RANDOM, or run a harness by hand, e.g.
#   build-fuzz/fuzz/fuzz_ts -dict=fuzz/ts.dict NEWDIR fuzz/corpus/ts
# A crash found becomes a C regression test (tests/test_fuzz_regressions.c) and its input a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz/run.sh BUILD-DIR [RUNS] [SEED]}
runs=${2:-${WW_FUZZ_RUNS:-}}
seed=${3:-${WW_FUZZ_SEED:-1}}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
# harness:dictionary:executions (about a minute in all on 2 idle cores)
for spec in text:text:1500000 csv:text:1500000 ts:ts:1500000 npy:npy:1500000 calibration:calibration:1000000 \
            tree:tree:400000; do
  IFS=: read -r name dict_name default_runs <<<"$spec"
  dict=fuzz/$dict_name.dict
  exe=$build/fuzz/fuzz_$name
  [ -x "$exe" ] || { echo "fuzz/run.sh: $exe is missing (cmake --build $build --target fuzzers)" >&2; exit 2; }
  mkdir -p "$work/$name" "$work/$name-crash"
  start=$(date +%s%N)
  if "$exe" -runs="${runs:-$default_runs}" -seed="$seed" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -dict="$dict" \
       -artifact_prefix="$work/$name-crash/" -print_final_stats=1 "$work/$name" "fuzz/corpus/$name" \
       >"$work/$name.log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
    cov=$(grep -o 'cov: [0-9]*' "$work/$name.log" | tail -1)
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf 'fuzz_%-12s ok: %s executions, %s, %d.%01d s\n' "$name" "$execs" "$cov" $((ms / 1000)) $((ms % 1000 / 100))
  else
    status=1
    echo "fuzz_$name FAILED; its report:" >&2
    grep -v '^#[0-9]' "$work/$name.log" | tail -60 >&2
    for crash in "$work/$name-crash"/*; do
      [ -f "$crash" ] || continue
      echo "input $(basename "$crash") (base64):" >&2
      base64 "$crash" >&2
    done
  fi
done
exit $status
