#!/usr/bin/env bash
# The GPU tree edit distance engine (src/cuda/ted.cu) without a GPU: its host code and kernels
# compiled as plain C++ against a fake CUDA runtime where a launch runs its blocks one after the
# other, each as one thread (every block- or grid-stride loop then covers all its tasks, in the
# order of the launches: the dependency order the engine relies on; a block's sweep owns all the
# rows), then compared bit for bit with the CPU engine on random trees, with every strategy
# forced in turn, and on matrices (self, blocks with strides, float output, x against y). What it
# cannot see: races between threads of a real launch (the tables of one launch write disjoint
# entries and read only earlier launches' by construction) and the multi-block strategy's memory
# ordering between warps, and the overlap of depths: its launches run in order, so the waits for
# unwritten td entries never run (a read that finds an entry still marked unwritten aborts: an
# entry read before the order of the plan writes it, or never written); the overlapped batches'
# host side runs in every other call (their own forest slots, td marked), the in-order one
# (shared slots) in the others, and the fallback to it when the device lacks the memory for the
# overlap. What it checks of the
# multi-block strategy: its values (forced on every table, and mixed with the others in one
# launch), and its queue's order: the first warp of the role takes every
# band in turn, and a wait on a band not yet finished aborts (on a GPU it could deadlock). The GPU
# itself runs test_ted_cuda_*.
# With LANES = 32 a block is one warp of 32 cooperative threads (ucontext fibers) that switch at
# every barrier and shuffle, in an order drawn anew each round: the engine's 32-lane code (the
# tiles' sweep from registers and shuffles) runs too, on fewer pairs (the fibers are slow), and the
# block and warp sweeps run with the GPU's rows per thread (one or two for a block, one for a warp's
# lane), so their one- and two-row steps are the GPU's (a store predicate of the one-row step,
# broken on purpose, gave 538 differences).
#
#   tests/ted_gpu_emulation.sh [cpu-build-dir] [LANES]   (default build-cpu, 1; needs g++ and perl)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cpu}
lanes=${2:-1}
case "$lanes" in 1 | 32) ;; *) echo "LANES must be 1 or 32" >&2; exit 2 ;; esac
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/ww_ted_emu.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/fake_cuda.cuh" <<'EOF'
/* A fake CUDA runtime: launches run their blocks one after the other, each on one thread or on
 * EMU_LANES fibers; memory is host memory. */
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <ucontext.h>
#include "common/internal.h"
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __noinline__
#define __shared__ static
#if EMU_LANES == 1 /* one thread owns every row */
#define WW_TED_ROWS_PER_THREAD 4096
#define WW_TED_WARP_ROWS_PER_LANE 4096
#else /* the GPU's rows per thread (ted.cu): the same sweeps as there, K = 1 and 2 */
#define WW_TED_ROWS_PER_THREAD 2
#define WW_TED_WARP_ROWS_PER_LANE 1
#endif
#define WW_TED_EARLY_EXIT 1
#define WW_TED_MULTI_SLOT_BYTES (1u << 18) /* a depth's multi-block tables over several launches */
#define WW_TED_PLAN_TABLES_PER_WORKER 8    /* a matrix's plan over several threads */
#define WW_TED_TWO_PART_UPLOAD_TASKS 256   /* the larger batches uploaded in two parts */
#define WW_TED_LAUNCH(kernel, grid, threads, shared, stream, ...)                                  \
    do {                                                                                           \
        gridDim.x = (grid), blockDim.x = EMU_LANES, threadIdx.x = 0;                               \
        for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)                                 \
            fibers::run_block([&] { kernel(__VA_ARGS__); });                                       \
    } while (0)
/* A launch that may overlap the one before it on a GPU: here in order, as every launch */
#define WW_TED_LAUNCH_OVERLAPPED(kernel, grid, threads, shared, stream, ...)                       \
    ([&] {                                                                                         \
        WW_TED_LAUNCH(kernel, grid, threads, shared, stream, __VA_ARGS__);                         \
        fake_overlapped_launches++;                                                                \
        return 0;                                                                                  \
    }())
extern "C" {
long fake_overlapped_launches; /* (the driver requires some) */
}
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
typedef void *cudaStream_t;
struct fake_dim { unsigned x; };
static fake_dim blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
/* A block's threads: one runs the kernel directly; EMU_LANES > 1 are fibers, each resumed in turn
 * (in a random order each round) until it waits at a barrier or ends. */
namespace fibers {
struct fiber {
    ucontext_t context;
    char *stack;
    bool done;
};
static fiber all[EMU_LANES];
static ucontext_t scheduler;
static int current, alive, arrived, generation;
static std::function<void()> body;
static std::mt19937 order_rng(12345);
static void pause() { swapcontext(&all[current].context, &scheduler); }
static void start()
{
    body();
    all[current].done = true;
    alive--;
    if (arrived > 0 && arrived == alive) { /* the others wait for this one no more */
        arrived = 0;
        generation++;
    }
    swapcontext(&all[current].context, &scheduler);
}
static void barrier()
{
    if (EMU_LANES == 1)
        return;
    const int g = generation;
    if (++arrived == alive) {
        arrived = 0;
        generation++;
        pause();
    } else {
        while (generation == g)
            pause();
    }
}
static void run_block(const std::function<void()> &kernel)
{
    if (EMU_LANES == 1) {
        kernel();
        return;
    }
    body = kernel, alive = EMU_LANES, arrived = 0;
    const size_t stack_bytes = 4u << 20;
    int order[EMU_LANES];
    for (int i = 0; i < EMU_LANES; i++) {
        if (all[i].stack == nullptr && (all[i].stack = (char *)malloc(stack_bytes)) == nullptr)
            abort();
        all[i].done = false;
        getcontext(&all[i].context);
        all[i].context.uc_stack.ss_sp = all[i].stack;
        all[i].context.uc_stack.ss_size = stack_bytes;
        all[i].context.uc_link = nullptr;
        makecontext(&all[i].context, start, 0);
        order[i] = i;
    }
    for (bool any = true; any;) {
        any = false;
        std::shuffle(order, order + EMU_LANES, order_rng);
        for (int i : order)
            if (!all[i].done) {
                any = true;
                current = i, threadIdx.x = (unsigned)i;
                swapcontext(&scheduler, &all[i].context);
            }
    }
}
} // namespace fibers
static inline void __syncthreads() { fibers::barrier(); }
static inline void __syncwarp() { fibers::barrier(); }
/* the engine only asks for any(v) && v, which is v: no lane needs the others' (the sweeps' lanes
 * here may leave their loops early, WW_TED_EARLY_EXIT) */
static inline bool __any_sync(unsigned, bool v) { return v; }
template <typename T> static inline T __shfl_up_sync(unsigned, T v, int delta)
{
    if (EMU_LANES == 1) /* never: the 32-lane code only runs in a warp of 32 */
        abort();
    static T posted[EMU_LANES];
    posted[threadIdx.x] = v;
    fibers::barrier();
    const T got = (int)threadIdx.x % 32 >= delta ? posted[threadIdx.x - delta] : v;
    fibers::barrier();
    return got;
}
template <typename T> static inline T __shfl_sync(unsigned, T v, int lane)
{
    if (EMU_LANES == 1)
        abort();
    static T posted[EMU_LANES];
    posted[threadIdx.x] = v;
    fibers::barrier();
    const T got = posted[threadIdx.x / 32 * 32 + lane];
    fibers::barrier();
    return got;
}
static inline void __threadfence() {}
static inline int atomicAdd(int *p, int v) { const int old = *p; *p += v; return old; }
static inline int atomicExch(int *p, int v) { const int old = *p; *p = v; return old; }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
template <typename T> static inline T __ldg(const T *p) { return *p; }
/* one block's dynamic shared memory, the same array wherever the kernels name it */
alignas(16) static unsigned char emulated_dynamic_shared[1 << 18];
#define WW_TED_DYNAMIC_SHARED(name) unsigned char *const name = emulated_dynamic_shared
enum { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <typename F> static inline cudaError_t cudaFuncSetAttribute(F, int, int) { return 0; }
/* The multi-block strategy's wait on the band above: one thread runs the bands in queue order, so
 * the wait must be met already; if not, the queue's order is wrong (on a GPU, a deadlock risk). */
#define WW_TED_SPIN_WAIT(flag, value, failed)                                                      \
    do {                                                                                           \
        if (*(flag) < (value)) {                                                                   \
            fprintf(stderr, "multi-block wait on a band not yet done\n");                          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
/* A read of a td entry not yet written: on a GPU, where depths overlap, it waits; here, where the
 * launches run in order, the entry should have been written (a wrong order or a missed entry). */
#define WW_TED_TD_RELOAD
template <typename T> static T td_reload(const T *)
{
    fprintf(stderr, "a td entry read before it was written\n");
    abort();
}
static inline unsigned __activemask() { return 1u; }
static inline long long clock64() { return 0; }
static inline void __nanosleep(unsigned) {}
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t) { memset(d, v, n); return 0; }
static inline cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }
static inline cudaError_t cudaFree(void *p) { free(p); return 0; }
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, int, cudaStream_t) { memcpy(d, s, n); return 0; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
static inline cudaError_t cudaGetLastError() { return 0; }
static inline ww_status ww_cuda_status(cudaError_t e) { return e ? WW_ERR_DEVICE_MEMORY : WW_OK; }
struct ww_device_buffer { void *ptr; size_t bytes; };
/* Device memory poisoned at every reserve: nothing a call finds there from the call before (the
 * same pair under another strategy) can hide an entry it failed to compute. */
extern "C" {
size_t fake_device_limit = (size_t)-1; /* a reservation over it fails, as cudaMalloc's (the old buffer freed) */
}
static inline ww_status ww_device_reserve(ww_device_buffer *b, size_t bytes)
{
    if (bytes > fake_device_limit) {
        free(b->ptr);
        b->ptr = NULL;
        b->bytes = 0;
        return WW_ERR_DEVICE_MEMORY;
    }
    if (bytes > b->bytes) {
        free(b->ptr);
        b->ptr = malloc(bytes);
        b->bytes = b->ptr ? bytes : 0;
    }
    if (b->ptr)
        memset(b->ptr, 0x5a, bytes);
    return b->ptr ? WW_OK : WW_ERR_DEVICE_MEMORY;
}
static inline ww_status ww_pinned_reserve(void **p, size_t *bytes, size_t want)
{
    if (want <= *bytes)
        return WW_OK;
    free(*p);
    *p = malloc(want);
    *bytes = *p ? want : 0;
    return *p ? WW_OK : WW_ERR_MEMORY;
}
struct ww_cuda_state { int sm_count; cudaStream_t stream; ww_device_buffer input, prepared, work; void *pinned; size_t pinned_bytes; size_t smem_optin; bool programmatic_launch; };
struct ww_cuda_device_guard { int previous; };
static inline ww_cuda_device_guard ww_cuda_enter(ww_cuda_state *) { return {0}; }
static inline void ww_cuda_leave(ww_cuda_device_guard) {}
static inline void ww_cuda_recover(ww_cuda_state *, ww_status) {}
EOF

cat >"$work/driver.c" <<'EOF'
#include "common/ted_internal.h"
#include "ww_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int ww_test_failures, ww_test_skipped;
extern long fake_overlapped_launches;
extern size_t fake_device_limit;
struct fake_buffer { void *ptr; size_t bytes; };
struct fake_state { int sm_count; void *stream; struct fake_buffer input, prepared, work; void *pinned; size_t pinned_bytes; size_t smem_optin; _Bool programmatic_launch; };

static void tree(ww_rng *r, int n, double up, int labels, int32_t *p, int32_t *l)
{
    for (int i = 0; i < n; i++) {
        l[i] = (int32_t)(ww_rng_uniform(r) * labels);
        if (i == 0) {
            p[i] = -1;
            continue;
        }
        int v = i - 1;
        while (v > 0 && ww_rng_uniform(r) < up)
            v = p[v];
        p[i] = v;
    }
}

int main(void)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    ww_ctx *cpu;
    if (ww_ctx_create(&cpu, &o) != WW_OK)
        return 2;
    struct fake_state fs;
    memset(&fs, 0, sizeof fs);
    fs.sm_count = 4;
    fs.smem_optin = (size_t)227 << 10; /* an H100's */
    /* the depths overlapped (their own forest slots, td marked, every read checked) in every other
     * batch below, in order with shared slots (GPUs before compute capability 9.0) in the others */
    fs.programmatic_launch = 1;
    ww_ctx fake;
    memset(&fake, 0, sizeof fake);
    fake.cuda = (ww_cuda_state *)&fs;
    fake.num_threads = 3; /* the plan of a matrix's batch over three threads */
    ww_cpu_scratch scratch[3];
    memset(scratch, 0, sizeof scratch);
    fake.cpu = scratch; /* the plan's workers' (unused) scratch */
    /* every table on a block, a warp, a thread, in tiles over many warps (multi-block); mixes */
    const size_t all = (size_t)1 << 40;
    const ww_ted_gpu_thresholds limits[] = {{0, 0, all},      {0, all, all},       {all, all, all},
                                            {16, 200, all},   {1024, 65536, all}, {0, 0, 0},
                                            {16, 200, 2000}, {64, 4225, 16641}};
    enum { STRATEGIES = sizeof limits / sizeof limits[0] };
    const ww_ted_params costs[] = {{1, 1, 1}, {0.5, 2, 1.25}, {3, 1, 0.3}};
    ww_rng r = {99};
    static int32_t pa[300], la[300], pb[300], lb[300];
    int bad = 0, compared = 0;
    for (int t = 0; t < EMU_PAIRS; t++) {
        const int na = (int)ww_rng_below(&r, t % 10 == 0 ? 300 : 60), nb = (int)ww_rng_below(&r, t % 10 == 0 ? 300 : 60);
        const double up = t % 3 == 0 ? 0.2 : t % 3 == 1 ? 0.5 : 0.8;
        tree(&r, na, up, t % 2 ? 3 : 20, pa, la);
        tree(&r, nb, 1.0 - up, t % 2 ? 3 : 20, pb, lb);
        const ww_tree a = {(size_t)na, pa, la}, b = {(size_t)nb, pb, lb};
        double want = -1;
        ww_ted(cpu, &a, &b, &costs[t % 3], &want);
        for (int k = 0; k < STRATEGIES; k++) {
            fs.programmatic_launch = (t + k) % 2 == 0;
            double got = -1;
            const ww_status st = ww_cuda_ted(&fake, &a, &b, &costs[t % 3], &limits[k], &got);
            compared++;
            if (st != WW_OK || got != want) {
                bad++;
                printf("pair %d (%d x %d), thresholds %d: %.17g, cpu %.17g (%s)\n", t, na, nb, k, got, want, ww_strerror(st));
            }
        }
    }
    /* larger tables: a block sweep of many rows in shared memory, and (2100-node paths in doubles)
     * in global memory */
    static int32_t pl[2100], ll[2100], pm[2100], lm[2100];
    for (int t = 0; t < EMU_LARGE_PAIRS; t++) {
        const int na = t ? 2100 : 800, nb = t ? 2050 : 900;
        tree(&r, na, t ? 0.0 : 0.4, 6, pl, ll);
        tree(&r, nb, t ? 0.0 : 0.6, 6, pm, lm);
        const ww_tree a = {(size_t)na, pl, ll}, b = {(size_t)nb, pm, lm};
        for (int c = 0; c < (t ? 2 : 3); c++) {
            double want = -1;
            ww_ted(cpu, &a, &b, &costs[c], &want);
            for (int k = 0; k < STRATEGIES; k += 1 + (k < 4) * 3) { /* 0, 4, 5, 6, 7 */
                fs.programmatic_launch = (c + k) % 2 == 0;
                double got = -1;
                const ww_status st = ww_cuda_ted(&fake, &a, &b, &costs[c], &limits[k], &got);
                compared++;
                if (st != WW_OK || got != want) {
                    bad++;
                    printf("large pair %d (%d x %d), thresholds %d: %.17g, cpu %.17g (%s)\n", t, na, nb, k, got, want,
                           ww_strerror(st));
                }
            }
        }
    }
    /* a matrix whose small pairs are exact on the CPU and whose large ones are not (costs of 2^20:
     * int32 tables only up to about 170 nodes per pair): the GPU computes the batch in doubles, the
     * same values */
    {
        static int32_t pp[4][150], ll2[4][150];
        const int sizes[4] = {40, 60, 120, 150};
        ww_tree big[4];
        for (int k = 0; k < 4; k++) {
            tree(&r, sizes[k], 0.5, 5, pp[k], ll2[k]);
            big[k] = (ww_tree){(size_t)sizes[k], pp[k], ll2[k]};
        }
        const ww_ted_params heavy[2] = {{1048576, 1048576, 1048576}, {1048576, 3145728, 524288}};
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < STRATEGIES; k += 1 + (k < 4) * 3) {
                double got[16], want[16];
                fs.programmatic_launch = (c + k) % 2 == 0;
                ww_pairwise_options po = ww_pairwise_options_default();
                po.row_end = po.col_end = po.out_stride = 4;
                const ww_status st = ww_cuda_ted_pairwise(&fake, big, NULL, &heavy[c], &limits[k], got, &po);
                ww_ted_pairwise(cpu, big, 4, NULL, 0, &heavy[c], want, NULL);
                for (int e = 0; e < 16; e++)
                    bad += st != WW_OK || got[e] != want[e];
                compared++;
            }
    }
    enum { C = 9, N = 50 };
    static int32_t par[C][N], lab[C][N];
    ww_tree trees[C];
    for (int k = 0; k < C; k++) {
        const int n = k == 4 ? 0 : 1 + (int)ww_rng_below(&r, N);
        tree(&r, n, 0.5, 4, par[k], lab[k]);
        trees[k] = (ww_tree){(size_t)n, par[k], lab[k]};
    }
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < STRATEGIES; k++) {
            double got[C * C], want[C * C];
            fs.programmatic_launch = (c + k) % 2 == 0;
            for (int e = 0; e < C * C; e++)
                got[e] = NAN;
            ww_pairwise_options po = ww_pairwise_options_default();
            po.row_end = po.col_end = po.out_stride = C;
            ww_status st = ww_cuda_ted_pairwise(&fake, trees, NULL, &costs[c], &limits[k], got, &po);
            ww_ted_pairwise(cpu, trees, C, NULL, 0, &costs[c], want, NULL);
            for (int e = 0; e < C * C; e++)
                bad += st != WW_OK || got[e] != want[e];
            float f[30];
            for (int e = 0; e < 30; e++)
                f[e] = -7;
            po.row_begin = 2, po.row_end = 5, po.col_begin = 1, po.col_end = 8, po.out_stride = 10, po.out_dtype = WW_F32;
            st = ww_cuda_ted_pairwise(&fake, trees, NULL, &costs[c], &limits[k], f, &po);
            for (int i = 2; i < 5; i++)
                for (int j = 0; j < 10; j++)
                    bad += st != WW_OK || f[(i - 2) * 10 + j] != (j < 7 ? (float)want[i * C + j + 1] : -7.0f);
            double xy[18], xy_want[18];
            ww_pairwise_options q = ww_pairwise_options_default();
            q.row_end = 3, q.col_end = 6, q.out_stride = 6;
            st = ww_cuda_ted_pairwise(&fake, trees, trees + 3, &costs[c], &limits[k], xy, &q);
            ww_ted_pairwise(cpu, trees, 3, trees + 3, 6, &costs[c], xy_want, NULL);
            for (int e = 0; e < 18; e++)
                bad += st != WW_OK || xy[e] != xy_want[e];
            compared += 3;
        }
    /* a device with the memory of the depths in order but not of their overlap (its own forest
     * slots per launch): the call falls back to the order, the same value, no launch overlapped */
    {
        static int32_t pf[160], lf[160], qf[160], mf[160];
        tree(&r, 150, 0.4, 6, pf, lf);
        tree(&r, 160, 0.6, 6, qf, mf);
        const ww_tree a = {150, pf, lf}, b = {160, qf, mf};
        double want = -1, in_order = -1, fallback = -1;
        ww_ted(cpu, &a, &b, &costs[0], &want);
        free(fs.prepared.ptr), free(fs.input.ptr); /* (grow-only: their sizes then are this call's) */
        fs.prepared.ptr = fs.input.ptr = NULL, fs.prepared.bytes = fs.input.bytes = 0;
        fs.programmatic_launch = 0;
        const ww_status st0 = ww_cuda_ted(&fake, &a, &b, &costs[0], &limits[0], &in_order);
        fake_device_limit = fs.prepared.bytes > fs.input.bytes ? fs.prepared.bytes : fs.input.bytes;
        free(fs.prepared.ptr);
        fs.prepared.ptr = NULL, fs.prepared.bytes = 0;
        fs.programmatic_launch = 1;
        const long overlapped = fake_overlapped_launches;
        const ww_status st1 = ww_cuda_ted(&fake, &a, &b, &costs[0], &limits[0], &fallback);
        fake_device_limit = (size_t)-1;
        if (st0 != WW_OK || st1 != WW_OK || in_order != want || fallback != want ||
            fake_overlapped_launches != overlapped) {
            bad++;
            printf("overlap refused by memory: %s %s, %.17g %.17g, cpu %.17g, %ld overlapped launches\n",
                   ww_strerror(st0), ww_strerror(st1), in_order, fallback, want, fake_overlapped_launches - overlapped);
        }
        compared += 2;
    }
    /* a GPU whose blocks may not have the depth kernel's shared memory: a clear error, nothing
     * written, whatever the strategy (the closed forms alone would fit) */
    fs.smem_optin = (size_t)64 << 10;
    for (int k = 0; k < STRATEGIES; k++) {
        double got = -7;
        const ww_status st = ww_cuda_ted(&fake, &trees[0], &trees[1], &costs[0], &limits[k], &got);
        bad += st != WW_ERR_UNSUPPORTED || got != -7;
        compared++;
    }
    /* the overlapped launches ran (their depths in order here, every td read checked for the mark) */
    if (fake_overlapped_launches == 0) {
        printf("no depth was launched overlapped\n");
        bad++;
    }
    printf("ted_gpu_emulation, blocks of %d thread(s): %d comparisons, %d differences\n", EMU_LANES, compared, bad);
    ww_ctx_destroy(cpu);
    return bad != 0;
}
EOF

perl -pe 's|#include "cuda_common.cuh"|#include "fake_cuda.cuh"|' src/cuda/ted.cu >"$work/ted_emulated.cpp"
# with fibers: 40 random pairs (of 300), no large pair (minutes each)
if [ "$lanes" = 1 ]; then sizes=(-DEMU_PAIRS=300 -DEMU_LARGE_PAIRS=2); else sizes=(-DEMU_PAIRS=40 -DEMU_LARGE_PAIRS=0); fi
g++ -O1 -std=c++17 -DEMU_LANES="$lanes" -I"$work" -I"$repo/src/cuda" -I"$repo/src" -I"$repo/include" \
  -c "$work/ted_emulated.cpp" -o "$work/ted_emulated.o"
gcc -O1 -std=c11 -DEMU_LANES="$lanes" "${sizes[@]}" -I"$repo/src" -I"$repo/include" -I"$repo/tests" \
  -c "$work/driver.c" -o "$work/driver.o"
# the emulated engine's ww_cuda_ted* come first, so the library's own (stub or real) is not linked;
# a CUDA build's library needs the CUDA runtime for its other objects
cuda_libs=()
nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2 || true)
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  cuda_libs=(-L"$(dirname "$nvcc")/../lib64" -lcudart_static -ldl -lrt -lpthread)
fi
g++ "$work/driver.o" "$work/ted_emulated.o" "$build/libwavewarp.a" "${cuda_libs[@]}" -fopenmp -lm -o "$work/emulation"
"$work/emulation"
