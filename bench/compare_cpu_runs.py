#!/usr/bin/env python3
"""Compares repeated runs of two ww_bench binaries (e.g. an old commit and the new one), row by row.

    python bench/compare_cpu_runs.py OLD_RUN.md [OLD_RUN.md ...] -- NEW_RUN.md [NEW_RUN.md ...]
                                     [--tolerance 0.03] [--labels old,new]

Each file is the unedited output of one ww_bench run. Rows are matched by their section title and
their descriptive columns (engine, n, input, threads, ...); the figure compared is "time (s)". For
each row it prints the best (minimum) time of each side over its runs, the ratio new / old of the
best times, each side's spread (the slowest run / the best - 1), the ratio of the medians (for information: on
a loaded machine the medians carry the load) and a verdict:
  "yes"      new best <= old best x (1 + tolerance);
  "noise"    slower by more than the tolerance, but the new best lies within the old side's range
             of runs (or the old side's spread exceeds the difference): not distinguishable here;
  "SLOWER"   otherwise.
Runs should be interleaved (old, new, old, new, ...) so that the load of a shared machine falls on
both sides alike.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import OrderedDict
from typing import Dict, List, Tuple

FIGURES = {"time (s)", "GCUPS", "GCUPS/core", "vs reference", "vs Marteau", "distance", "peak RSS before (MiB)",
           "after (MiB)", "growth (MiB)", "expected scratch (MiB)", "GCUPS (band cells)", "time / full",
           "cells", "area / full"}
FIGURE_PREFIXES = ("vs Marteau",)


def parse(path: str) -> Dict[Tuple[str, ...], float]:
    rows: Dict[Tuple[str, ...], float] = OrderedDict()
    section, header = "", None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                section, header = line[3:].strip(), None
                continue
            if not line.startswith("|"):
                header = None if not line.strip() else header
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                continue
            if all(re.fullmatch(r"-+:?|:?-+:?", c) for c in cells):
                continue
            if "time (s)" not in header:
                continue
            key = [section]
            for name, value in zip(header, cells):
                if name in FIGURES or name.startswith(FIGURE_PREFIXES):
                    continue
                key.append(f"{name}={value}")
            try:
                rows[tuple(key)] = float(cells[header.index("time (s)")])
            except ValueError:
                pass
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--tolerance", type=float, default=0.03)
    ap.add_argument("--labels", default="old,new")
    args = ap.parse_args()
    if "--" in sys.argv:
        i = sys.argv.index("--")
        old_files = [f for f in sys.argv[1:i] if not f.startswith("--") and f in args.files]
        new_files = [f for f in sys.argv[i + 1:] if f in args.files]
    else:
        sys.exit("separate the two sides with --")
    lo, ln = args.labels.split(",")
    old = [parse(f) for f in old_files]
    new = [parse(f) for f in new_files]
    # every row that both sides measured (a run of --matrices has the matrix rows only), in order
    keys: List[Tuple[str, ...]] = []
    for r in old + new:
        keys += [k for k in r if k not in keys and any(k in x for x in old) and any(k in x for x in new)]
    print(f"| section | row | {lo} best (s) | {ln} best (s) | {ln} / {lo} | {lo} spread | {ln} spread | "
          f"{ln} / {lo}, medians | runs | within {args.tolerance:.0%} |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    worst = 0.0
    for k in keys:
        o = [r[k] for r in old if k in r]
        n = [r[k] for r in new if k in r]
        ob, nb = min(o), min(n)
        ratio = nb / ob if ob > 0 else float("nan")
        os_, ns = max(o) / ob - 1, max(n) / nb - 1
        if ratio <= 1 + args.tolerance:
            verdict = "yes"
        elif nb <= max(o) or ratio - 1 <= os_:
            verdict = "noise"
        else:
            verdict = "SLOWER"
        worst = max(worst, ratio)
        mratio = statistics.median(n) / statistics.median(o)
        print(f"| {k[0]} | {', '.join(x.split('=', 1)[1] for x in k[1:])} | {ob:.4f} | {nb:.4f} | {ratio:.3f} | "
              f"{os_:.0%} | {ns:.0%} | {mratio:.3f} | {len(o)}/{len(n)} | {verdict} |")
    print(f"\n{len(old)} {lo} runs, {len(new)} {ln} runs (a row counts the runs that measured it); {len(keys)} rows; "
          f"worst ratio {worst:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
