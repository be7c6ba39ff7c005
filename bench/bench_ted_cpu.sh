#!/usr/bin/env bash
# CPU tree edit distance beside its rivals, in one run on one machine (issue 13):
#   wavewarp (bench/bench_ted.c), X-TED's CPU code (MIT; built here from ../shared/rivals/x-ted-cpu
#   in a temporary directory, never committed) and the PyPI `apted` package, on Swissport pair
#   (0, 1) at 100, 500 and 1000 nodes; then a table of X-TED's time over ours per size and thread
#   count (the issue's target: at least 2 at 500 and 1000 nodes, same threads).
#
#   bench/bench_ted_cpu.sh BUILD_DIR [THREADS...]      (default threads: 1 2)
#
# Run from anywhere; the repository root is this script's parent. BUILD_DIR without
# bench/ww_bench_ted is configured and built here (CPU only, Release: only what the benchmark
# needs). The shared directory is $WW_SHARED_DIR (default ../shared); APTED_PY: a python with apted
# installed (skipped when unset). X-TED prints its own time of the table computation (its parsing
# and cost matrix excluded); ours is the whole ww_ted call. Minimum of 20 runs each.
#   On the 16-core GPU host:  WW_SHARED_DIR=/path/to/shared bench/bench_ted_cpu.sh build-bench-cpu 1 16
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: bench/bench_ted_cpu.sh BUILD_DIR [THREADS...]}
shift
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
shared=${WW_SHARED_DIR:-../shared}
trees=$shared/data/trees
rival=$shared/rivals/x-ted-cpu
jobs=$(nproc)

if [ ! -x "$build/bench/ww_bench_ted" ]; then
  cmake -S . -B "$build" -DWAVEWARP_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$jobs" --target ww_bench_ted >/dev/null
fi

xted=$(mktemp -d /tmp/xted-XXXXXX)
trap 'rm -rf "$xted"' EXIT
cp "$rival"/*.cpp "$rival"/*.h "$rival"/CMakeLists.txt "$xted"/
cmake -S "$xted" -B "$xted/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$xted/build" -j"$jobs" >/dev/null

summary=()
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${threads[@]}"; do
  echo
  echo "## $t thread(s)"
  echo
  echo "wavewarp (ww_bench_ted $trees $t 20):"
  ours=$("$build/bench/ww_bench_ted" "$trees" "$t" 20)
  echo "$ours"
  echo
  echo "X-TED CPU ($t threads, 20 runs of pair (0, 1), min and median of its reported times):"
  for n in 100 500 1000; do
    log=$("$xted/build/X-TED_CPU" "$t" "$trees/swissport/swissport_nodes_$n.txt" "$trees/swissport/swissport_nodes_adj_$n.txt")
    times=$(echo "$log" | awk '/Total Time/ {print $(NF-1)}' | sort -g)
    count=$(echo "$times" | wc -l)
    xmin=$(echo "$times" | head -1)
    printf "  %4d nodes: distance %s, min %s ms, median %s ms\n" "$n" "$(echo "$log" | awk '/distance/ {d = $NF} END {print d}')" \
      "$xmin" "$(echo "$times" | sed -n "$(((count + 1) / 2))p")"
    # our row of this size: | swissport (0, 1) | NA x NB | distance | min | median |
    row=$(echo "$ours" | awk -F'|' -v k=$((n == 100 ? 1 : n == 500 ? 2 : 3)) '/swissport \(0, 1\)/ {c++; if (c == k) print $5}' | tr -d ' ')
    summary+=("| $n | $t | $row | $xmin | $(awk -v x="$xmin" -v o="$row" 'BEGIN {printf "%.2f", x / o}') |")
  done
done

echo
echo "## X-TED over wavewarp (minimum times; the target is >= 2 at 500 and 1000 nodes)"
echo
echo "| nodes | threads | wavewarp (ms) | X-TED (ms) | X-TED / wavewarp |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${summary[@]}"

if [ -n "${APTED_PY:-}" ]; then
  echo
  echo "apted (PyPI, one core, one run each):"
  "$APTED_PY" - "$trees" <<'PY'
import ast, sys, time
from pathlib import Path
from apted import APTED, Config

class Node:
    def __init__(self, name):
        self.name, self.children = name, []

def read(n):
    base = Path(sys.argv[1]) / "swissport"
    labels = (base / f"swissport_nodes_{n}.txt").read_text().splitlines()[:2]
    adj = (base / f"swissport_nodes_adj_{n}.txt").read_text().splitlines()[:2]
    out = []
    for names, lists in zip(labels, adj):
        nodes = [Node(x) for x in names.split()]
        for p, kids in enumerate(ast.literal_eval(lists)):
            nodes[p].children = [nodes[k] for k in kids]
        out.append(nodes[0])
    return out

for n in (100, 500, 1000):
    a, b = read(n)
    t0 = time.perf_counter()
    d = APTED(a, b, Config()).compute_edit_distance()
    print(f"  {n:4d} nodes: distance {d}, {time.perf_counter() - t0:.2f} s")
PY
fi
