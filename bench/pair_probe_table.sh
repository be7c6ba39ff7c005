#!/usr/bin/env bash
# One pair on the GPU, two builds side by side in one call: ww_bench_pair_probe of each build's
# bench/ on DTW and TWED pairs (full, 10% window, vectors; 1,024 to 2^20), in two rounds (the
# second in the other order), then a table of the minimum of each build, its ratio, and whether
# the values agree to the last digit. bench/results/gpu-dtw.md quotes its tables.
#   bench/pair_probe_table.sh OLD_BUILD NEW_BUILD [out-dir]      (default out-dir: ./pair-probe)
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD [out-dir]" >&2; exit 2; }
O=$1 N=$2 out=${3:-pair-probe}
mkdir -p "$out"
: >"$out/probe.txt"
probe() { # label n radius reps measure [dim]
  for v in $ORDER; do
    r=$(timeout 60 "${!v}/bench/ww_bench_pair_probe" "${@:2}" 2>&1 | tail -1)
    echo "$v $1 | $r" >>"$out/probe.txt"
  done
}
round() {
  for m in dtw twed; do
    probe "$m full" 1024 -1 21 $m; probe "$m full" 4096 -1 21 $m; probe "$m full" 16384 -1 15 $m
    probe "$m full" 65536 -1 11 $m; probe "$m full" 262144 -1 5 $m
    probe "$m w10" 1024 102 21 $m; probe "$m w10" 4096 409 21 $m; probe "$m w10" 16384 1638 15 $m
    probe "$m w10" 65536 6553 9 $m; probe "$m w10" 262144 26214 5 $m
    probe "$m dim4" 4096 -1 15 $m 4; probe "$m dim4" 65536 -1 7 $m 4; probe "$m dim3" 16384 -1 9 $m 3
    probe "$m dim2 w10" 16384 1638 9 $m 2
    probe "$m dim2" 16384 -1 9 $m 2; probe "$m dim8" 16384 -1 9 $m 8; probe "$m dim4 w10" 16384 1638 9 $m 4
  done
}
ORDER="O N" round
ORDER="N O" round
ORDER="O N"
for m in dtw twed; do probe "$m full" 1048576 -1 3 $m; probe "$m w10" 1048576 104857 3 $m; done
python3 - "$out/probe.txt" <<'PY' | tee "$out/summary.md"
import collections, re, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    v, rest = line.split(" ", 1)
    label, res = rest.split(" | ", 1)
    m = re.search(r"d=(\d+) n=(\d+)\s+r=(-?\d+).*min\s+([\d.]+) ms.*value (\S+)", res)
    if not m:
        print("| %s | failed: %s | | | | | |" % (label, res.strip()))
        continue
    key = "| %s | %s | %s" % (label, m.group(2), m.group(3) if m.group(3) != "-1" else "none")
    rows.setdefault(key, {}).setdefault(v, []).append((float(m.group(4)), m.group(5)))
print("| pair | n | radius | old ms | new ms | new / old | values |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for k, d in rows.items():
    o, n = d.get("O", []), d.get("N", [])
    if not o or not n:
        print(k, "| missing | | | |")
        continue
    same = "same" if len({x for _, x in o + n}) == 1 else "DIFFER"
    to, tn = min(t for t, _ in o), min(t for t, _ in n)
    print("%s | %.3f | %.3f | %.3f | %s |" % (k, to, tn, tn / to, same))
PY
