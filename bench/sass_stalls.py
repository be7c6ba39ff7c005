#!/usr/bin/env python3
"""Static report on the wavefront pair kernels' step loop, from their SASS, without a GPU.

One step of the wavefront engine is a few dozen instructions issued by a single warp per
scheduler, so its time is set by the schedule ptxas chose: the stall cycles it encoded between
dependent instructions, and how far ahead of their use the column loads were issued. Small source
changes can move both a lot (bench/results/gpu-dtw.md, fourteenth session: windowed TWED on an
H100 took 11.4, 14.4, 15.7 and 20.0 ms in four variants whose loops encode 3020, 3881, 4797 and
5050 stall cycles per 16-step group). This script compiles instance files of a source tree for
sm_90 and reports, for each kernel matched, its inner step-group loop (the backward branch whose
body holds 16 or more SHFL.UP and no collective fallback):

  instr    instructions in the loop (one 16-step group)
  stalls   the stall cycles encoded in the control bits (fixed-latency waits and issue spacing)
  waits    instructions that wait on a scoreboard (loads, shuffles, MUFU)
  load->use  instructions from each column load (LDG, not the row above's .STRONG.GPU loads) to
           the first read of its register: min / median, and how many are under 40 (the L1
           latency then lands in the step)
  preds    predicate registers the loop uses (a step short of them serialises its comparisons)

Usage: bench/sass_stalls.py [--tree DIR] [--kernel SUBSTRING] [INSTANCE ...]
  INSTANCE: a file of src/cuda/instances without .cu (default: the four wavefront_* files).
  --kernel: a substring of the mangled name, e.g. "Li4ELi1ELi16ELi1ELi0E" (4 x 1, SYNC 16, dim 1).
Needs nvcc, cuobjdump and nvdisasm: CUDA toolkits without the last two can take the PyPI wheels
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (`pip download --no-deps` both, unzip them in one
folder, set CUOBJDUMP to its bin/cuobjdump: nvdisasm is looked for beside it, then on PATH).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

DEFAULT = ["wavefront_dtw", "wavefront_dtw_window", "wavefront_twed", "wavefront_twed_window"]
SHAPES = ["Li4ELi1ELi16ELi1ELi0E", "Li8ELi1ELi16ELi1ELi0E", "Li4ELi1ELi16ELi4ELi2E", "Li8ELi2ELi8ELi1ELi0E"]


def sass_of(tree, instance, work):
    src = os.path.join(tree, "src", "cuda", "instances", instance + ".cu")
    cubin = os.path.join(work, instance + ".cubin")
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-O3", "-std=c++17", "--expt-relaxed-constexpr",
                    "-I" + os.path.join(tree, "include"), "-I" + os.path.join(tree, "src"), src, "-o", cubin],
                   check=True)
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    env = dict(os.environ)
    if os.path.dirname(tool):  # cuobjdump runs nvdisasm: the one beside it first
        env["PATH"] = os.path.dirname(os.path.abspath(tool)) + os.pathsep + env.get("PATH", "")
    return subprocess.run([tool, "-sass", cubin], check=True, capture_output=True, text=True, env=env).stdout


def kernels(sass):
    """(name, [(address, text, high control word)]) for every function of the listing."""
    lines = sass.split("\n")
    name, body = None, []
    for i, line in enumerate(lines):
        if "Function :" in line:
            if name:
                yield name, body
            name, body = line.split(":", 1)[1].strip(), []
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/", line)
        if m and name and i + 1 < len(lines):
            hi = re.search(r"/\* (0x[0-9a-f]+) \*/", lines[i + 1])
            if hi:
                body.append((int(m.group(1), 16), m.group(2).strip(), int(hi.group(1), 16)))
    if name:
        yield name, body


def step_loop(body):
    where = {a: k for k, (a, _, _) in enumerate(body)}
    for k, (a, text, _) in enumerate(body):
        m = re.search(r"BRA (?:`\()?.*?0x([0-9a-f]+)", text)
        if m and int(m.group(1), 16) < a and int(m.group(1), 16) in where:
            loop = body[where[int(m.group(1), 16)]:k + 1]
            if sum("SHFL.UP" in t for _, t, _ in loop) >= 16 and not any("COLLECTIVE" in t for _, t, _ in loop):
                return loop
    return None


def registers(text):
    return re.findall(r"\bR(\d+)\b", text)


def load_to_use(loop):
    texts = [re.sub(r"^@!?U?P\w+\s+", "", t) for _, t, _ in loop]
    out = []
    for k, t in enumerate(texts):
        if not t.startswith("LDG.E") or "STRONG.GPU" in t:
            continue
        ops = t.split(None, 1)[1].split(",")
        first = int(registers(ops[0])[0])
        width = 4 if ".128" in t else 2 if ".64" in t else 1
        dst = {str(first + w) for w in range(width)}
        for j in range(1, len(texts)):
            u = texts[(k + j) % len(texts)].split(None, 1)
            if len(u) < 2:
                continue
            parts = u[1].split(",")
            read = parts if u[0].startswith("ST") else parts[1:]
            if dst & {r for p in read for r in registers(p)}:
                out.append(j)
                break
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--kernel", action="append", help="substring of the mangled kernel name")
    ap.add_argument("instances", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    wanted = args.kernel or SHAPES
    print("| instance | kernel | instr | stalls | waits | load->use min / median (< 40) | preds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as work:
        for instance in args.instances:
            for name, body in kernels(sass_of(args.tree, instance, work)):
                shape = next((w for w in wanted if w in name), None)
                loop = step_loop(body) if shape else None
                if not loop:
                    continue
                measure = re.search(r"measure_functorI(\w+?)dE", name)
                stalls = sum((hi >> 41) & 0xF for _, _, hi in loop)
                waits = sum(1 for _, _, hi in loop if (hi >> 52) & 0x3F)
                d = load_to_use(loop)
                loads = f"{d[0]} / {d[len(d) // 2]} ({sum(x < 40 for x in d)} of {len(d)})" if d else "-"
                preds = sorted(set(re.findall(r"\bP[0-6]\b", " ".join(t for _, t, _ in loop))))
                print(f"| {instance} | {measure.group(1) if measure else '?'} {shape} | {len(loop)} | {stalls} | "
                      f"{waits} | {loads} | {' '.join(preds)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
