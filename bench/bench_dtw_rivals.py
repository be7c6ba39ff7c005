#!/usr/bin/env python3
"""DTW on the CPU: wavewarp against dtaidistance, aeon and tslearn, in one run.

    python bench/bench_dtw_rivals.py [--rounds N] [--pair-rounds N] [--big] [--via auto|binary|python]
                                     [--bench build-cpu/bench/ww_bench] [--out FILE.md]

Run it with a Python that has numpy, dtaidistance, aeon and tslearn (e.g. a private venv). wavewarp
is driven either in this process through its Python package (``wavewarp.distance`` /
``wavewarp.pairwise`` with ``measure="dtw"``; ``--via python``), or through the C benchmark binary
(``ww_bench --dtw-pair`` / ``--dtw-matrix``, which times ``ww_distance`` / ``ww_pairwise`` in C on
the same data, read from temporary files; ``--via binary``). ``auto`` (the default) takes the
package when it has ``wavewarp.distance``, else the binary.

Workloads (the targets of issue 15):
  * one pair, n = 16,384 (``--big``: 65,536 too), uniform random in [0, 1), one thread;
  * synthetic control (600 x 60, ../shared/data or WW_SHARED_DIR), the whole self matrix, without
    window and with a Sakoe-Chiba radius of 6 samples (dtaidistance ``window=7``, aeon
    ``window=0.1``, i.e. ``int(0.1 * 60) = 6``, tslearn ``sakoe_chiba_radius=6``).

Method: every method is warmed up once (numba compiles aeon's code), then the workload runs
``rounds`` rounds; in each round every method makes one timed call, one after the other, so that
the load of the (shared) machine falls on all of them alike. The table gives each method's best
(and median) over the rounds; a ratio is a rival's best / wavewarp's best in the same run.
Through the binary, wavewarp's call is timed inside the binary (after one untimed warm-up call in
the same process), so process start and file reading are not counted.
Values: aeon returns the DTW distance with the squared Euclidean cost, as wavewarp does;
dtaidistance and tslearn return its square root: their values are squared before comparing. Every
value (each entry of the upper triangle of a matrix) must agree with wavewarp's to 1e-10
relative, else the script says so and exits with status 1 after printing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-10

# ------------------------------------------------------------------ machine


def lscpu() -> Dict[str, str]:
    info: Dict[str, str] = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return info
    for line in out.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    return info


def machine_lines() -> List[str]:
    info = lscpu()
    flags = info.get("Flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE only"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"CPU: {info.get('Model name', platform.processor() or 'unknown')} (family {info.get('CPU family', '?')} "
        f"model {info.get('Model', '?')}), {cores} cores available, {info.get('Thread(s) per core', '?')} "
        f"thread(s) per core, widest vector ISA {isa}, {info.get('Hypervisor vendor', 'no')} hypervisor; "
        f"{platform.system()} {platform.release()}",
    ]


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# ------------------------------------------------------------------ wavewarp


class WavewarpBinary:
    """ww_bench --dtw-pair / --dtw-matrix: one timed call in C per invocation."""

    def __init__(self, path: Path, tmp: Path):
        self.path = path
        self.tmp = tmp
        out = subprocess.run([str(path), "--dtw-pair", self._write("probe_a", np.zeros(2)),
                              self._write("probe_b", np.zeros(2)), "--reps", "1"],
                             capture_output=True, text=True, check=True).stdout
        self.library = json.loads(out)["library"]
        self.describe = f"C benchmark binary {path.relative_to(REPO) if path.is_relative_to(REPO) else path}"

    def _write(self, name: str, a: np.ndarray) -> str:
        p = self.tmp / f"{name}.f64"
        np.ascontiguousarray(a, dtype=np.float64).tofile(p)
        return str(p)

    def _run(self, args: List[str]) -> Tuple[float, float]:
        out = subprocess.run([str(self.path)] + args + ["--reps", "1"], capture_output=True, text=True,
                             check=True).stdout
        r = json.loads(out)
        return r["seconds"][0], r["value"]

    def pair(self, a: np.ndarray, b: np.ndarray, radius: Optional[int]) -> Callable[[], Tuple[float, float]]:
        fa, fb = self._write("pair_a", a), self._write("pair_b", b)
        extra = ["--radius", str(radius)] if radius is not None else []

        def call() -> Tuple[float, float]:
            return self._run(["--dtw-pair", fa, fb, "--threads", "1"] + extra)

        return call

    def matrix(self, X: np.ndarray, radius: Optional[int], threads: int) -> Callable[[], Tuple[float, np.ndarray]]:
        fx = self._write("matrix_x", X)
        fout = str(self.tmp / "matrix_out.f64")
        extra = ["--radius", str(radius)] if radius is not None else []

        def call() -> Tuple[float, np.ndarray]:
            t, _ = self._run(["--dtw-matrix", fx, str(X.shape[1]), "--threads", str(threads), "--out", fout] + extra)
            return t, np.fromfile(fout, dtype=np.float64).reshape(X.shape[0], X.shape[0])

        return call


class WavewarpPython:
    """The Python package, in this process."""

    def __init__(self, ww):
        self.ww = ww
        self.library = ww.describe("cpu", 2)
        self.describe = f"Python package wavewarp {getattr(ww, '__version__', '?')} (in this process)"

    def pair(self, a: np.ndarray, b: np.ndarray, radius: Optional[int]) -> Callable[[], Tuple[float, float]]:
        def call() -> Tuple[float, float]:
            t0 = time.perf_counter()
            v = self.ww.distance(a, b, measure="dtw", radius=radius, backend="cpu", threads=1)
            return time.perf_counter() - t0, float(v)

        return call

    def matrix(self, X: np.ndarray, radius: Optional[int], threads: int) -> Callable[[], Tuple[float, np.ndarray]]:
        def call() -> Tuple[float, np.ndarray]:
            t0 = time.perf_counter()
            m = self.ww.pairwise(X, measure="dtw", radius=radius, backend="cpu", threads=threads)
            return time.perf_counter() - t0, np.asarray(m)

        return call


def make_wavewarp(via: str, bench: Path, tmp: Path):
    if via in ("auto", "python"):
        try:
            import wavewarp  # noqa: PLC0415

            if hasattr(wavewarp, "distance") and hasattr(wavewarp, "pairwise"):
                return WavewarpPython(wavewarp)
            if via == "python":
                sys.exit("wavewarp has no distance()/pairwise() yet: use --via binary")
        except ImportError:
            if via == "python":
                raise
    if not bench.is_file():
        sys.exit(f"{bench} not found: build it (cmake -S . -B build-cpu -DWAVEWARP_CUDA=OFF && "
                 "cmake --build build-cpu -j2) or pass --bench")
    return WavewarpBinary(bench, tmp)


# ------------------------------------------------------------------ rivals


def timed(fn: Callable[[], object]) -> Callable[[], Tuple[float, object]]:
    def call() -> Tuple[float, object]:
        t0 = time.perf_counter()
        r = fn()
        return time.perf_counter() - t0, r

    return call


def versions() -> str:
    import aeon
    import dtaidistance
    import numba
    import tslearn

    return (f"Python {platform.python_version()}, NumPy {np.__version__}, dtaidistance {dtaidistance.__version__}, "
            f"aeon {aeon.__version__} (numba {numba.__version__}), tslearn {tslearn.__version__}")


def dtai_openmp() -> str:
    try:
        from dtaidistance import dtw_cc_omp  # noqa: F401, PLC0415

        return "with OpenMP"
    except ImportError:
        return "WITHOUT OpenMP (parallel=True runs one thread)"


# ------------------------------------------------------------------ running a workload


class Method:
    def __init__(self, name: str, call: Callable[[], Tuple[float, object]], to_dtw: Callable[[object], object],
                 threads: str, is_wavewarp: bool = False):
        self.name, self.call, self.to_dtw, self.threads = name, call, to_dtw, threads
        self.is_wavewarp = is_wavewarp
        self.times: List[float] = []
        self.value: object = None


def run_workload(methods: List[Method], rounds: int, log) -> None:
    for m in methods:  # warm-up: numba compilation, caches, the binary's first run
        _, m.value = m.call()
    for r in range(rounds):
        for m in methods:
            t, v = m.call()
            m.times.append(t)
            m.value = v
        log(f"  round {r + 1}/{rounds}: " + ", ".join(f"{m.name} {min(m.times):.4g}" for m in methods))


def max_relative_difference(ref, other, upper_only: bool) -> float:
    a = np.asarray(ref, dtype=np.float64)
    b = np.asarray(other, dtype=np.float64)
    if upper_only:
        iu = np.triu_indices(a.shape[0], 1)
        a, b = a[iu], b[iu]
    denom = np.maximum(np.abs(a), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(a - b) / denom))


# ------------------------------------------------------------------ main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the matrix workloads (default 5)")
    ap.add_argument("--pair-rounds", type=int, default=3, help="rounds of the one-pair workload (default 3)")
    ap.add_argument("--big", action="store_true", help="also one pair of n = 65,536 (1 round; about 2 minutes)")
    ap.add_argument("--via", choices=["auto", "binary", "python"], default="auto")
    ap.add_argument("--bench", type=Path, default=REPO / "build-cpu" / "bench" / "ww_bench")
    ap.add_argument("--out", type=Path, help="also write the report here")
    ap.add_argument("--only", choices=["pair", "matrix"], help="run one kind of workload only")
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    from aeon.distances import dtw_distance, dtw_pairwise_distance  # noqa: PLC0415
    from dtaidistance import dtw as dtai  # noqa: PLC0415
    from tslearn.metrics import cdist_dtw, dtw as ts_dtw  # noqa: PLC0415

    if not dtai.try_import_c():
        sys.exit("dtaidistance's C library is not available: its *_fast functions would fail")

    lines: List[str] = []

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    start = datetime.datetime.now()
    load_start = load_average()
    failures: List[str] = []
    results: Dict[str, List[Method]] = {}

    with tempfile.TemporaryDirectory() as tmpdir:
        ww = make_wavewarp(args.via, args.bench.resolve(), Path(tmpdir))
        log(f"wavewarp via {ww.describe}: {ww.library}")

        # -------------------------------------------------------------- one pair
        sizes = [16384] + ([65536] if args.big else [])
        for n in sizes if args.only != "matrix" else []:
            rng = np.random.default_rng(n)
            a, b = rng.random(n), rng.random(n)
            rounds = args.pair_rounds if n <= 16384 else 1
            methods = [
                Method("wavewarp", ww.pair(a, b, None), lambda v: v, "1", True),
                Method("dtaidistance distance_fast(use_pruning=False)",
                       timed(lambda: dtai.distance_fast(a, b, use_pruning=False)), lambda v: v * v, "1"),
                Method("dtaidistance distance_fast (default: use_pruning=True)",
                       timed(lambda: dtai.distance_fast(a, b)), lambda v: v * v, "1"),
                Method("aeon dtw_distance", timed(lambda: dtw_distance(a, b)), lambda v: v, "1"),
            ]
            if n <= 16384:  # tslearn fills the whole n x n matrix: 32 GiB at 65,536
                methods.append(Method("tslearn dtw", timed(lambda: ts_dtw(a, b)), lambda v: v * v, "1"))
            log(f"one pair n = {n}, {rounds} round(s)")
            run_workload(methods, rounds, log)
            results[f"pair{n}"] = methods

        # -------------------------------------------------------------- synthetic control
        base = Path(os.environ.get("WW_SHARED_DIR", REPO.parent / "shared"))
        path = base / "data" / "synthetic_control.data"
        if args.only != "pair":
            if not path.is_file():
                sys.exit(f"synthetic control not found at {path} (set WW_SHARED_DIR)")
            X = np.ascontiguousarray(np.loadtxt(path), dtype=np.float64)
            X3 = X[:, None, :]  # aeon's layout: (cases, channels, length)
            for radius in (None, 6):
                dt_kw = {} if radius is None else {"window": radius + 1}
                ae_kw = {} if radius is None else {"window": radius / X.shape[1]}
                ts_kw = {} if radius is None else {"global_constraint": "sakoe_chiba", "sakoe_chiba_radius": radius}
                if radius is not None:
                    assert int(ae_kw["window"] * X.shape[1]) == radius
                methods = [
                    Method("wavewarp", ww.matrix(X, radius, 2), lambda v: v, "2", True),
                    Method("wavewarp", ww.matrix(X, radius, 1), lambda v: v, "1", True),
                    Method("dtaidistance distance_matrix_fast(parallel=True)",
                           timed(lambda: dtai.distance_matrix_fast(X, parallel=True, **dt_kw)),
                           lambda v: np.square(v), "2"),
                    Method("dtaidistance distance_matrix_fast(parallel=False)",
                           timed(lambda: dtai.distance_matrix_fast(X, parallel=False, **dt_kw)),
                           lambda v: np.square(v), "1"),
                    Method("aeon dtw_pairwise_distance(n_jobs=2)",
                           timed(lambda: dtw_pairwise_distance(X3, n_jobs=2, **ae_kw)), lambda v: v, "2"),
                    Method("aeon dtw_pairwise_distance(n_jobs=1)",
                           timed(lambda: dtw_pairwise_distance(X3, n_jobs=1, **ae_kw)), lambda v: v, "1"),
                    Method("tslearn cdist_dtw(n_jobs=1)", timed(lambda: cdist_dtw(X, n_jobs=1, **ts_kw)),
                           lambda v: np.square(v), "1"),
                ]
                key = "sc" if radius is None else "sc_r6"
                log(f"synthetic control, radius {radius}, {args.rounds} rounds")
                run_workload(methods, args.rounds, log)
                results[key] = methods

    # ------------------------------------------------------------------ report
    load_end = load_average()
    lines.append("# DTW on the CPU: wavewarp and its rivals in one run")
    lines.append("")
    lines.append(f"- Date: {start:%Y-%m-%d %H:%M}; commit {git_commit()}.")
    for m in machine_lines():
        lines.append(f"- {m}.")
    lines.append(f"- Load average (1, 5, 15 min): {load_start} at the start, {load_end} at the end "
                 "(a shared machine: other jobs may run meanwhile).")
    lines.append(f"- Software: {versions()}; dtaidistance's C library {dtai_openmp()}.")
    lines.append(f"- wavewarp: {ww.describe}, `{ww.library}`.")
    cmd = " ".join([Path(sys.executable).name, "bench/bench_dtw_rivals.py"] + sys.argv[1:])
    lines.append(f"- Command (from the repository root): `{cmd}`.")
    lines.append("- Method: one warm-up call each, then rounds in which every method makes one timed call in "
                 "turn; best and median over the rounds. \"ratio\": the method's best / wavewarp's best with "
                 "the same threads. Values: aeon's and wavewarp's DTW are the sum of squared differences "
                 "along the path; dtaidistance and tslearn return its square root, squared here before the "
                 f"comparison; \"max rel. diff.\" is against wavewarp (tolerance {TOLERANCE:g}).")
    lines.append("")

    def table(key: str, title: str, cells: float, upper: bool) -> None:
        methods = results.get(key)
        if not methods:
            return
        lines.append(f"## {title}")
        lines.append("")
        lines.append("| method | threads | best (s) | median (s) | GCUPS | ratio to wavewarp | max rel. diff. |")
        lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        ref = {m.threads: m for m in methods if m.is_wavewarp}
        ref_value = methods[0].to_dtw(methods[0].value)
        for m in methods:
            best, med = min(m.times), statistics.median(m.times)
            same = ref.get(m.threads, methods[0])
            ratio = f"**{best / min(same.times):.1f}x**"
            if m.is_wavewarp:
                ratio = f"1 (reference for {m.threads} thread{'s' if m.threads != '1' else ''})"
            if m is methods[0] or (m.is_wavewarp and np.shape(m.value) == np.shape(ref_value) and
                                   np.array_equal(np.asarray(m.value), np.asarray(ref_value))):
                diff = "0" if m is not methods[0] else "-"
            else:
                d = max_relative_difference(ref_value, m.to_dtw(m.value), upper)
                diff = f"{d:.1e}"
                if not d <= TOLERANCE:
                    failures.append(f"{title}: {m.name} differs from wavewarp by {d:.3g} relative")
            name = m.name if not m.is_wavewarp else f"wavewarp {ww_call(upper)}"
            lines.append(f"| {name} | {m.threads} | {best:.4f} | {med:.4f} | {cells / best / 1e9:.3f} | {ratio} "
                         f"| {diff} |")
        lines.append("")

    def ww_call(matrix: bool) -> str:
        if isinstance(ww, WavewarpPython):
            return "`pairwise(X, measure=\"dtw\")`" if matrix else "`distance(a, b, measure=\"dtw\")`"
        return "(C `ww_pairwise`)" if matrix else "(C `ww_distance`)"

    pairs_sc = 600 * 599 / 2
    for n in (16384, 65536):
        table(f"pair{n}", f"One pair, n = {n:,}, dim 1, no window, one thread", float(n) * n, False)
    table("sc", "Synthetic control 600 x 600 (60 samples), no window", pairs_sc * 60 * 60, True)
    cells_r6 = pairs_sc * (60 * 13 - 6 * 7)
    table("sc_r6", "Synthetic control 600 x 600, Sakoe-Chiba radius 6 (dtaidistance window=7, aeon window=0.1)",
          cells_r6, True)

    # targets
    def best(key: str, name_prefix: str, threads: str) -> Optional[float]:
        for m in results.get(key, []):
            if m.name.startswith(name_prefix) and m.threads == threads:
                return min(m.times)
        return None

    rows = []
    w = best("pair16384", "wavewarp", "1")
    if w:
        for label, prefix in (("use_pruning=False", "dtaidistance distance_fast(use_pruning=False)"),
                              ("its default, use_pruning=True", "dtaidistance distance_fast (default")):
            r = best("pair16384", prefix, "1")
            rows.append((f"one pair n = 16,384, one thread: >= 10x dtaidistance `distance_fast` ({label})",
                         f"{r:.3f} s / {w:.4f} s = {r / w:.1f}x", r / w >= 10))
    for key, label, need in (("sc", "no window", 10), ("sc_r6", "radius 6 (window=7)", 5)):
        w2 = best(key, "wavewarp", "2")
        r = best(key, "dtaidistance distance_matrix_fast(parallel=True)", "2")
        if w2 and r:
            rows.append((f"synthetic control 600 x 600, {label}, 2 threads: >= {need}x dtaidistance "
                         "`distance_matrix_fast(parallel=True)`", f"{r:.3f} s / {w2:.4f} s = {r / w2:.1f}x",
                         r / w2 >= need))
    if rows:
        lines.append("## Targets (issue 15)")
        lines.append("")
        lines.append("| target | measured (rival's best / wavewarp's best) | met |")
        lines.append("| --- | --- | --- |")
        for t, mtxt, ok in rows:
            lines.append(f"| {t} | {mtxt} | {'yes' if ok else 'NO'} |")
        lines.append("")
    if failures:
        lines.append("## VALUES DISAGREE")
        lines.append("")
        for f in failures:
            lines.append(f"- {f}")
        lines.append("")

    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
