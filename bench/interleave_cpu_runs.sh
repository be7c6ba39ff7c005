#!/usr/bin/env bash
# Runs two ww_bench binaries in turns (A, B, A, B, ...) so that the load of a shared machine falls
# on both alike, keeping each run's output; then compares them row by row (compare_cpu_runs.py).
#
#   bench/interleave_cpu_runs.sh ROUNDS OUTDIR BENCH_A BENCH_B [ww_bench arguments...]
#
# Example (the old commit in a worktree of its own, both built as bench/results/cpu.md says):
#   bench/interleave_cpu_runs.sh 5 /tmp/runs ../old/build-cpu/bench/ww_bench build-cpu/bench/ww_bench \
#       --data ../shared/data/synthetic_control.data
# Run from the repository root (ww_bench finds ../shared from there). Each run's output goes to
# OUTDIR/a-N.md and OUTDIR/b-N.md; the 1-minute load average at each start is printed.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
rounds=$1 out=$2 a=$3 b=$4
shift 4
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for side in a b; do
    bin=$a
    [ "$side" = b ] && bin=$b
    echo "round $r $side $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" >&2
    "$bin" "$@" > "$out/$side-$r.md"
  done
done
python3 "$(dirname "$0")/compare_cpu_runs.py" --labels old,new "$out"/a-*.md -- "$out"/b-*.md
