#!/usr/bin/env bash
# CPU tree edit distance beside its rivals, in one run on one machine (issue 13):
#   wavewarp (bench/bench_ted.c), X-TED's CPU code (MIT; built here from ../shared/rivals/x-ted-cpu
#   in a temporary directory, never committed) and the PyPI `apted` package, on Swissport pair
#   (0, 1) at 100, 500 and 1000 nodes.
#
#   bench/bench_ted_cpu.sh BUILD_DIR [THREADS...]      (default threads: 1 2)
#
# APTED_PY: a python with apted installed (skipped when unset). X-TED prints its own time of the
# table computation (its parsing and cost matrix excluded); ours is the whole ww_ted call.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: bench/bench_ted_cpu.sh BUILD_DIR [THREADS...]}
shift
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
trees=${WW_SHARED_DIR:-../shared}/data/trees
rival=${WW_SHARED_DIR:-../shared}/rivals/x-ted-cpu

xted=$(mktemp -d /tmp/xted-XXXXXX)
trap 'rm -rf "$xted"' EXIT
cp "$rival"/*.cpp "$rival"/*.h "$rival"/CMakeLists.txt "$xted"/
cmake -S "$xted" -B "$xted/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$xted/build" -j2 >/dev/null

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for t in "${threads[@]}"; do
  echo
  echo "## $t thread(s)"
  echo
  echo "wavewarp (ww_bench_ted $trees $t 20):"
  "$build/bench/ww_bench_ted" "$trees" "$t" 20
  echo
  echo "X-TED CPU ($t threads, 20 runs of pair (0, 1), min and median of its reported times):"
  for n in 100 500 1000; do
    log=$("$xted/build/X-TED_CPU" "$t" "$trees/swissport/swissport_nodes_$n.txt" "$trees/swissport/swissport_nodes_adj_$n.txt")
    times=$(echo "$log" | awk '/Total Time/ {print $(NF-1)}' | sort -g)
    count=$(echo "$times" | wc -l)
    printf "  %4d nodes: distance %s, min %s ms, median %s ms\n" "$n" "$(echo "$log" | awk '/distance/ {d = $NF} END {print d}')" \
      "$(echo "$times" | head -1)" "$(echo "$times" | sed -n "$(((count + 1) / 2))p")"
  done
done

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
