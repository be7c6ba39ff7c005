#!/usr/bin/env bash
# The GPU tree engine's host part alone (issue 13): src/cuda/ted.cu compiled as plain C++ against
# the fake CUDA runtime of tests/ted_gpu_emulation.sh, every launch replaced by a timestamp and
# device memory left as it is (no poison), so that a call does on the host all that a real call
# does there (the trees prepared in both orientations, the plan, the tasks written into the staging
# buffer, the upload as a memcpy) and computes nothing. Prints, for Swissport pair (0, 1) at 100,
# 500 and 1000 nodes and for the matrix of the ten 1000-node trees (the built-in thresholds of one
# pair and of collections), the time until the first launch (the closed forms: a batch of many
# tasks writes them after it) and of the whole call, best of 20 (of 5 for the matrix). Run it on
# the GPU machine's host to set it beside bench/results/gpu-ted.md.
#
#   bench/ted_host_plan.sh [build-dir]   (a build with libwavewarp.a; default build-cpu; needs g++
#                                         and perl; the trees: $WW_SHARED_DIR, default ../shared)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cpu}
repo=$PWD
trees=${WW_SHARED_DIR:-../shared}/data/trees
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_ted_plan.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the emulation's fake runtime, launches timed instead of run, device memory not poisoned
perl -0ne 'print $1 if /cat >"\$work\/fake_cuda.cuh" <<.EOF.\n(.*?)\nEOF\n/s' tests/ted_gpu_emulation.sh |
  perl -0pe 's/^#define WW_TED_(MULTI_SLOT_BYTES|PLAN_TABLES_PER_WORKER|TWO_PART_UPLOAD_TASKS) .*\n//mg; s/#define WW_TED_LAUNCH\(kernel.*?\} while \(0\)\n/#include <time.h>\nstatic double plan_first_launch;\nstatic inline double plan_now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }\n#define WW_TED_LAUNCH(kernel, grid, threads, shared, stream, ...) do { if (plan_first_launch == 0) plan_first_launch = plan_now(); } while (0)\n/s; s/memset\(b->ptr, 0x5a, bytes\);/(void)0;/' \
  >"$work/fake_cuda.cuh"
grep -q plan_first_launch "$work/fake_cuda.cuh" || { echo "could not rewrite the fake runtime's launches" >&2; exit 1; }
# the emulation's test-only plan settings (small slots, many workers, two-part uploads) are left out:
# the host part is timed with the engine's own
! grep -q -E 'define WW_TED_(MULTI_SLOT_BYTES|PLAN_TABLES_PER_WORKER|TWO_PART_UPLOAD_TASKS)' "$work/fake_cuda.cuh" ||
  { echo "could not drop the emulation's plan settings" >&2; exit 1; }
{ perl -pe 's|#include "cuda_common.cuh"|#include "fake_cuda.cuh"|' src/cuda/ted.cu
  echo 'extern "C" double plan_launch_at(void) { return plan_first_launch; }'
  echo 'extern "C" void plan_reset(void) { plan_first_launch = 0; }'; } >"$work/ted_plan.cpp"

cat >"$work/driver.c" <<'DRIVER'
#define _POSIX_C_SOURCE 200809L
#include "common/ted_internal.h"
#include "bench_trees.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double plan_launch_at(void);
void plan_reset(void);
struct fake_buffer { void *ptr; size_t bytes; };
struct fake_state { int sm_count; void *stream; struct fake_buffer input, prepared, work; void *pinned; size_t pinned_bytes; size_t smem_optin; _Bool programmatic_launch; /* 0: no td marks to set */ };
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    struct fake_state fs;
    memset(&fs, 0, sizeof fs);
    fs.sm_count = 132; /* an H100's */
    fs.smem_optin = (size_t)227 << 10;
    ww_ctx fake;
    memset(&fake, 0, sizeof fake);
    fake.cuda = (ww_cuda_state *)&fs;
    fake.num_threads = (int)sysconf(_SC_NPROCESSORS_ONLN); /* as a context's default */
    fake.cpu = calloc((size_t)fake.num_threads, sizeof *fake.cpu); /* the plan's workers' (unused) scratch */
    /* src/common/calibration.c's built-in model: one pair, then collections */
    const ww_ted_gpu_thresholds pair = {64, 4225, 1050625}, collection = {64, 4225, 4225};
    const ww_ted_params p = ww_ted_params_default();
    ww_labels *d;
    ww_labels_create(&d);
    printf("| case | until the first launch, ms | whole call, ms |\n| --- | --- | --- |\n");
    const int sizes[3] = {100, 500, 1000};
    for (int k = 0; k < 3; k++) {
        ww_tree t[2];
        if (bench_read_swissport(d, argv[1], sizes[k], t, 2) < 2)
            return 1;
        double first = 1e9, whole = 1e9, out;
        for (int r = 0; r < 21; r++) {
            plan_reset();
            const double t0 = now();
            ww_cuda_ted(&fake, &t[0], &t[1], &p, &pair, &out);
            const double t1 = now();
            if (r > 0) { /* the first call allocates */
                first = plan_launch_at() - t0 < first ? plan_launch_at() - t0 : first;
                whole = t1 - t0 < whole ? t1 - t0 : whole;
            }
        }
        printf("| swissport (0, 1), %d nodes | %.3f | %.3f |\n", sizes[k], first * 1e3, whole * 1e3);
    }
    ww_tree t[10];
    if (bench_read_swissport(d, argv[1], 1000, t, 10) < 10)
        return 1;
    static double out[100];
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = o.col_end = o.out_stride = 10;
    double first = 1e9, whole = 1e9;
    for (int r = 0; r < 6; r++) {
        plan_reset();
        const double t0 = now();
        ww_cuda_ted_pairwise(&fake, t, NULL, &p, &collection, out, &o);
        const double t1 = now();
        if (r > 0) {
            first = plan_launch_at() - t0 < first ? plan_launch_at() - t0 : first;
            whole = t1 - t0 < whole ? t1 - t0 : whole;
        }
    }
    printf("| matrix of the ten 1000-node trees | %.3f | %.3f |\n", first * 1e3, whole * 1e3);
    return 0;
}
DRIVER

g++ -O2 -std=c++17 -DEMU_LANES=1 -I"$work" -I"$repo/src/cuda" -I"$repo/src" -I"$repo/include" -c "$work/ted_plan.cpp" -o "$work/ted_plan.o"
gcc -O2 -std=c11 -I"$repo/src" -I"$repo/include" -I"$repo/bench" -c "$work/driver.c" -o "$work/driver.o"
cuda_libs=()
nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || true)
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  cuda_libs=(-L"$(dirname "$nvcc")/../lib64" -lcudart_static -ldl -lrt -lpthread)
fi
g++ "$work/driver.o" "$work/ted_plan.o" "$build/libwavewarp.a" "${cuda_libs[@]}" -fopenmp -lm -o "$work/plan"
"$work/plan" "$trees"
