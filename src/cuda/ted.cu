/* Tree edit distance on the GPU (issue 13): X-TED's schedule of keyroot tables by dependency
 * depth, for a batch of pairs at once.
 *
 * Design. The keyroot pairs of one depth (level(k1) + level(k2)) write disjoint entries of their
 * pair's td and read only shallower ones, so one launch per depth computes all of them, for every
 * pair of the batch together. In that launch, by block index, the first blocks take the largest
 * tables in tiles over many warps (the multi-block strategy, below), the next ones the large tables
 * one per block, then the medium tables one per warp, the rest the small tables one per thread
 * (sizes by the thresholds of ww_ted_gpu_thresholds): the four strategies of a depth run side by
 * side, not one launch after the other.
 * - Exact pairs (costs integral after a power-of-two scale, the CPU's rule in src/measures/ted.h)
 *   have int32 tables and td, as the CPU: half the memory traffic, integer min/add. Their keyroots
 *   of one node (a leaf) and of two nodes (a node and its leaf child) have no tables: their tree
 *   distances against every subtree of the other tree follow in closed form from one scan of it
 *   (one warp per such keyroot, the formulas of src/cpu/ted.c's two_node_rows), in a first launch
 *   that needs nothing else; on the Swissport trees they are most of the tables. An exact table on
 *   a block or a warp is computed with its smaller side as rows (its values do not depend on the
 *   orientation), so that its rows fit the shared-memory sweep.
 * - Other costs: double tables, every cell ww_ted_cell of the same operands as on the CPU, so the
 *   same bits whatever order the cells are computed in; borders summed in the CPU's order.
 * - A table on a block or a warp is swept by anti-diagonals, one barrier (or warp sync) each: the
 *   block sweeps were the critical path at the deep depths (on an H200, the roots' table of a
 *   1000-node pair alone: 2000 barriers on one block, 0.8 of 8.3 ms), hence the multi-block
 *   strategy for the largest tables. Each thread owns fixed rows (a block's
 *   thread up to WW_TED_ROWS_PER_THREAD, a warp's lane WW_TED_WARP_ROWS_PER_LANE); the last two
 *   anti-diagonals sit in shared memory (the up and left neighbours, in two of the three
 *   anti-diagonals reserved in 48 KB of the block's, or a sixteenth per warp; the diagonal
 *   neighbour is the up neighbour of the step before, kept in a register), and the operands that
 *   come from global memory (the forest left of both subtrees, fd[l(i) - l1][l(j) - l2], and td)
 *   are loaded ahead into registers, the forest two anti-diagonals ahead (it may lie three back),
 *   td and the Y leftmost leaves the forest's address needs four ahead, so that their latency
 *   overlaps two or four steps (see `cell_operands` and
 *   `column_operands`; a thread's fixed state per row: `sweep_row`; one block of 512 threads per
 *   SM, so that it stays in registers). A step is branch-free but for the rare td stores and the
 *   warp's vote on unwritten td entries (see sweep_step). Tables with more rows fall back to a
 *   sweep in global memory. Memory is laid out for the sweeps: one
 *   anti-diagonal's global accesses are the cells it stores and the td entries it reads, so a
 *   sweep's forest table is stored by anti-diagonals (when it has no more rows than columns) and
 *   td is kept twice, by rows (the thread strategy reads along rows) and by anti-diagonals
 *   (td[i][j] at (i + j) na + i); what is left scattered is one read per cell of the forest left
 *   of both subtrees.
 * - The host sorts the tables by depth and strategy by runs of them (a matrix has millions of
 *   tables: no pass per table but the one that writes it), on the CPU threading layer's threads,
 *   uploads trees and task lists from pinned memory (a large batch in two copies, its closed forms
 *   running while its tasks are written), launches the closed forms, one kernel per depth and one
 *   that gathers each pair's root entry, and copies the results back in one copy.
 * - The depths overlap (on GPUs of compute capability 9.0 on: programmatic dependent launch): a
 *   depth's launch starts as soon as every block of the one before it has started, and a table
 *   that reads a td entry not written yet waits for it (td holds a mark until written; one vote of
 *   the warp a step, td_ready), so the deep depths' few large tables sweep staggered behind the
 *   tables they read instead of each depth waiting for its slowest table (the 1000-node pair: 1.3
 *   to 1.45 ms against 2.0 to 2.2 on an H100 or an H200; see run_batch). Waits are only on
 *   launches whose blocks have all started: no deadlock whatever the residency.
 * - The multi-block strategy (X-TED's Algorithm 2, see "the multi-block strategy" below): a table of
 *   more than block_cells cells is cut into bands of 32 rows, each band swept by one warp in tiles of
 *   32 x 32 cells, left to right, a band one tile behind the band above (per-band progress counters
 *   in global memory, release/acquire by fences); warps take bands from one queue per launch, in an
 *   order in which every wait is on a band already handed out: deadlock-free whatever the grid and
 *   residency. A table's critical path becomes about (rows + cols) / 32 tiles of 63 warp steps in
 *   shared memory, not rows + cols block barriers each waiting on global memory; and the bands of
 *   all the depth's large tables (of every pair of the batch) fill the GPU together. Why a warp per
 *   band and not a block per tile: a warp's sync is cheap and the band's left neighbours stay in its
 *   shared memory, so only the band above is waited on. Forest tables of the multi-block tables of
 *   a depth sit side by side (MULTI_SLOT_BYTES a launch: more makes more launches for the depth).
 * Not here: the thresholds between the strategies (src/common/ted.c takes them from the GPU's cost
 * model, which `calibrate` measures: src/cuda/calibrate.cu). */
#include "../common/ted_internal.h"
#include "../cpu/work_queue.h"
#include "../measures/ted.h"
#include "cuda_common.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <vector>

/* The launches, as a macro so that tests/ted_gpu_emulation.sh can run the kernels on the CPU. */
#ifndef WW_TED_LAUNCH
#define WW_TED_LAUNCH(kernel, grid, threads, shared, stream, ...)                                                     \
    kernel<<<(grid), (threads), (shared), (stream)>>>(__VA_ARGS__)
#endif
/* A depth's launch that may start while the depth before it runs (programmatic dependent launch):
 * as a macro for the same reason (the emulation's launches run in order). */
#ifndef WW_TED_LAUNCH_OVERLAPPED
#define WW_TED_LAUNCH_OVERLAPPED(kernel, grid, threads, shared, stream, ...)                                          \
    launch_overlapped(kernel, (grid), (threads), (shared), (stream), __VA_ARGS__)
#endif
/* The depth kernel's shared memory: dynamic, over the 48 KiB of static shared memory (see
 * depth_shared_bytes). */
#ifndef WW_TED_DYNAMIC_SHARED
#define WW_TED_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif
/* The three strategies are separate functions, not inlined into the kernel that runs them side by
 * side: each gets its own registers (inlined, the block sweep spilled). */
/* Rows of a block-strategy table per thread in the shared-memory sweep (with 2, 1,024 rows: a
 * 1000-node pair's tables in the sweep; registers per row: see BLOCKS_PER_SM). The
 * loops over them run to the end, so that they unroll into registers; the emulation, whose one
 * thread owns every row, leaves them early. */
/* The warp sweep's td entries are prefetched into L2 this many anti-diagonals before their loads:
 * a warp's steps are short, and a matrix's td is hundreds of MB, mostly in DRAM (ncu of the matrix
 * of the ten 1000-node trees: 58% of its largest launch's samples waited on the loads of a warp
 * sweep's cell). The matrix 16.1 to 16.6 ms against 16.9 to 17.0 (12 or 24 ahead); one pair's td
 * fits L2, and its times did not change (bench/results/gpu-ted.md, eleventh session). */
#ifndef WW_TED_WARP_TD_PREFETCH
#define WW_TED_WARP_TD_PREFETCH 24
#endif
#ifndef WW_TED_ROWS_PER_THREAD
#define WW_TED_ROWS_PER_THREAD 2
#endif
#ifndef WW_TED_WARP_ROWS_PER_LANE /* ... of a warp-strategy table: a warp sweeps up to 32 rows */
#define WW_TED_WARP_ROWS_PER_LANE 1
#endif
#ifndef WW_TED_EARLY_EXIT
#define WW_TED_EARLY_EXIT 0
#endif

namespace {

/* Threads of every role's block, and blocks per SM in the launch bounds. One block of 512 per SM
 * gives a thread 128 registers: the block and warp sweeps then keep their rows' state in registers
 * (with two blocks, 64 registers, they spilled inside the anti-diagonal loop). Measured on an H100
 * (bench/results/gpu-ted.md, seventh session): pairs 1.4 to 1.55 times faster, the matrix of the
 * 1000-node trees unchanged; 1024 threads with one row each (64 registers) were slower. */
const int BLOCK_THREADS = 512;
const int BLOCKS_PER_SM = 1;
const int WARPS_PER_BLOCK = BLOCK_THREADS / 32;
/* forest tables of one launch, per role (at least one table of each role in any case) */
const size_t BLOCK_SLOT_BYTES = 256u << 20, WARP_SLOT_BYTES = 64u << 20, THREAD_SLOT_BYTES = 256u << 20;
/* the multi-block tables of one launch (at least one; the emulation makes it small, so that a depth
 * takes several launches) */
#ifndef WW_TED_MULTI_SLOT_BYTES
#define WW_TED_MULTI_SLOT_BYTES (512u << 20)
#endif
const size_t MULTI_SLOT_BYTES = WW_TED_MULTI_SLOT_BYTES;
const size_t BATCH_TD_BYTES = 1u << 30; /* tree distances (both layouts) of one batch, in its cell type */
const size_t BATCH_TABLES = 1u << 26;   /* keyroot tables of one batch */
const size_t PREPARED_CACHE_BYTES = 256u << 20; /* a matrix's column trees, prepared once */
/* Thread-strategy tables of a batch of several pairs go in runs of about this many cells per task
 * (a matrix has millions of small tables: fewer tasks to write and upload); one pair's, one table
 * per task (its depths wait for their slowest thread). Runs of 1,024 cells left the matrix of the
 * ten 1000-node trees 6 blocks at depth 0 and 1.7 ms slower; 64 to 256 cells were equal, 32 and
 * single tables slower again (bench/results/gpu-ted.md, eleventh session). */
const size_t THREAD_RUN_CELLS = 128;
/* The host's plan of a batch: a worker for about this many tables (the keyroot pairs it counts),
 * at most the context's threads and PLAN_MAX_WORKERS (measured with 16: bench/results/gpu-ted.md).
 * The workers are the CPU threading layer's (OpenMP), whose waiting threads spin: on a host whose
 * cores are busy with other work a parallel region can wait milliseconds for a core (a 500-node
 * pair's plan took 16 ms instead of 0.05 on two workers, one core busy), so only a plan of
 * milliseconds on one core takes workers: a matrix (the ten 1000-node trees: 11 million keyroot
 * pairs, 16 workers), not a pair of up to about 1,000 nodes (250,000 keyroot pairs, 0.1 to 0.2
 * ms; on 8 workers about 3% faster end to end on an idle host). (The emulation makes it small, so
 * that its pairs and matrices are planned by several workers.) */
#ifndef WW_TED_PLAN_TABLES_PER_WORKER
#define WW_TED_PLAN_TABLES_PER_WORKER 262144
#endif
const size_t PLAN_TABLES_PER_WORKER = WW_TED_PLAN_TABLES_PER_WORKER, PLAN_MAX_WORKERS = 16;
/* A batch of at least this many tasks is uploaded in two copies, its closed forms launched between
 * them (see run_batch); the 1000-node pair has 26,128 tasks, the 100-node pair a few hundred (the
 * emulation makes it small, so that both ways are tested) */
#ifndef WW_TED_TWO_PART_UPLOAD_TASKS
#define WW_TED_TWO_PART_UPLOAD_TASKS 4096
#endif
const size_t TWO_PART_UPLOAD_TASKS = WW_TED_TWO_PART_UPLOAD_TASKS;
/* Overlapping depths (see run_batch): each launch then has forest slots of its own, at most this
 * many bytes for the whole batch (else the depths run one after the other, their launches sharing
 * one set of slots); WW_TED_OVERLAP_DEPTHS 0 turns it off (to compare). */
#ifndef WW_TED_OVERLAP_DEPTHS
#define WW_TED_OVERLAP_DEPTHS 1
#endif
const size_t OVERLAP_SLOT_BYTES = 1u << 30;

/* Cells per anti-diagonal in shared memory (three reserved in 48,000 bytes of the block's, of
 * which the sweeps use two): the block sweep keeps tables of fewer rows there. */
template <typename T> struct ring_cells;
template <> struct ring_cells<int32_t> {
    static const int value = 4000;
};
template <> struct ring_cells<double> {
    static const int value = 2000;
};

__device__ __forceinline__ double cell_of(double up, double left, double match, double del, double ins)
{
    return ww_ted_cell(up, left, match, del, ins);
}
__device__ __forceinline__ int32_t cell_of(int32_t up, int32_t left, int32_t match, int32_t del, int32_t ins)
{
    return ww_ted_cell_exact(up, left, match, del, ins);
}

/* A pair of the batch: where its trees' arrays and its td start. */
struct pair_meta {
    int a, b;   /* offsets of A's and B's nodes in the label and leftmost arrays */
    int na, nb; /* their nodes (td is na x nb) */
    size_t td;  /* offset of its td, by rows */
    size_t tdd; /* ... of its copy by anti-diagonals: td[a][b] at (a + b) na + a, (na + nb - 1) na entries */
    int sorted_b; /* offset of B's tabled keyroots (by level, then size) in batch_view::sorted_b */
};

/* A table (pair, k1, k2); on the thread strategy a run of `count` tables (pair, k1, the pair's
 * sorted_b[k2 + q]), one after the other; a closed form (pair, keyroot, side: 0 a keyroot of A, 1
 * of B). */
struct table_task {
    int pair, k1, k2, count;
};

template <typename T> struct batch_view {
    const int32_t *label, *leftmost, *sorted_b;
    const pair_meta *meta;
    T *td;
    T del, ins, ren;
};

/* One table as its kernels read it: rows are the nodes of subtree X, columns of Y (A and B, or B
 * and A for an exact table with more nodes in A's subtree). */
template <typename T> struct table {
    const int32_t *x_left, *x_label, *y_left, *y_label;
    T *td, *tdd;
    int sx, sy; /* td entry of X node u and Y node v: u * sx + v * sy (as size_t) */
    int na;     /* tdd entry: (u + v) na + (the A node of u and v) */
    bool a_rows; /* X is A */
    int l1, l2, rows, cols;
    int w; /* a forest table row: cols + 1 */
    T del, ins, ren; /* deleting a node of X, inserting one of Y */
    int *failed;     /* set when a wait is never met (the call then fails) */
};

template <typename T>
__device__ __forceinline__ table<T> table_of(const batch_view<T> &v, const table_task &task, int *failed,
                                            bool may_flip = true)
{
    const pair_meta m = v.meta[task.pair];
    const int32_t *a_left = v.leftmost + m.a, *b_left = v.leftmost + m.b;
    const bool exact = sizeof(T) == sizeof(int32_t);
    const bool flip = may_flip && exact && task.k1 - a_left[task.k1] > task.k2 - b_left[task.k2];
    table<T> t;
    t.td = v.td + m.td;
    t.tdd = v.td + m.tdd;
    t.na = m.na;
    t.a_rows = !flip;
    t.ren = v.ren;
    t.failed = failed;
    int kx, ky;
    if (flip) {
        t.x_left = b_left, t.x_label = v.label + m.b, t.y_left = a_left, t.y_label = v.label + m.a;
        t.sx = 1, t.sy = m.nb, t.del = v.ins, t.ins = v.del, kx = task.k2, ky = task.k1;
    } else {
        t.x_left = a_left, t.x_label = v.label + m.a, t.y_left = b_left, t.y_label = v.label + m.b;
        t.sx = m.nb, t.sy = 1, t.del = v.del, t.ins = v.ins, kx = task.k1, ky = task.k2;
    }
    t.l1 = t.x_left[kx];
    t.l2 = t.y_left[ky];
    t.rows = kx - t.l1 + 1;
    t.cols = ky - t.l2 + 1;
    t.w = t.cols + 1;
    return t;
}

template <typename T> __device__ __forceinline__ T relabel_of(int32_t a, int32_t b, T ren) { return a == b ? (T)0 : ren; }

/* A wait that is never met (a fault: the queue's order and the launches' rule it out) fails the
 * call after WAIT_LIMIT_CYCLES (about a minute) rather than hang it: *failed is set, the work goes
 * on, the host returns WW_ERR_CUDA. A wait that is met can last as long as the call, not just a
 * tile: with the depths overlapped, a table may wait for the rest of a sweep of an earlier
 * launch, which may itself wait (hence not the 10 s it was). */
const long long WAIT_LIMIT_CYCLES = 120000000000LL;

/* td entries of a batch whose depths overlap (see the design note) hold all bits set until written
 * (an int32 -1, a double NaN: no distance is either), and a table that reads one that a table of a
 * smaller depth has not written yet waits for it (td_ready). Entries are written once, so a value
 * read that is not the mark is final, wherever it was read from (an SM's L1 may hold a stale line:
 * of marks only; the wait reads L2). */
__device__ __forceinline__ bool td_unset(int32_t v) { return v < 0; }
__device__ __forceinline__ bool td_unset(double v) { return v != v; }
#ifndef WW_TED_TD_RELOAD /* (the emulation's own: its launches run in order, no read ever waits) */
template <typename T> __device__ __forceinline__ T td_reload(const T *p) { return __ldcg(p); }
#endif
/* v, read from p where `needed` (else unused): its final value. The wait is a loop on the vote of
 * the warp's active lanes, its body predicated, not a branch that some lanes take: a divergent
 * branch or a call in a sweep's step cost the step its uniform registers (each global access then
 * rebuilt its memory descriptor, R2UR: 56 more instructions in four steps of the block sweep, its
 * launches 15 to 40% slower; ncu and SASS, twelfth session). */
template <typename T> __device__ __forceinline__ T td_ready(T v, const T *p, bool needed, int *failed)
{
    const unsigned lanes = __activemask();
    bool wait = needed && td_unset(v);
    if (!__any_sync(lanes, wait))
        return v;
    const long long start = clock64();
    do {
        __nanosleep(64);
        if (wait) {
            v = td_reload(p);
            wait = td_unset(v);
        }
        if (__any_sync(lanes, *(volatile int *)failed || clock64() - start > WAIT_LIMIT_CYCLES)) {
            if (wait)
                atomicExch(failed, 1);
            break;
        }
    } while (__any_sync(lanes, wait));
    return v;
}

/* td[u][v] of X node u and Y node v, by rows and by anti-diagonals. The sweeps read the second: the
 * entries that one anti-diagonal of a table reads are then contiguous (u + v is the same for all),
 * not one cache line each. Every writer writes both. */
template <typename T> __device__ __forceinline__ size_t td_row_index(const table<T> &t, int u, int v)
{
    return (size_t)u * (size_t)t.sx + (size_t)v * (size_t)t.sy;
}
template <typename T> __device__ __forceinline__ size_t td_diagonal_index(const table<T> &t, int u, int v)
{
    return (size_t)(u + v) * (size_t)t.na + (size_t)(t.a_rows ? u : v);
}
template <typename T> __device__ __forceinline__ void store_td(const table<T> &t, int u, int v, T val)
{
    t.td[td_row_index(t, u, v)] = val;
    t.tdd[td_diagonal_index(t, u, v)] = val;
}

/* Where cell (x, y) of a forest table is: by rows (pitch 0), or by anti-diagonals of `pitch`
 * (rows + 1) cells each (the shared-memory sweeps of tables with no more rows than columns: one
 * anti-diagonal's stores are then contiguous, at most twice the cells). */
template <typename T> __device__ __forceinline__ size_t cell_index(const table<T> &t, int pitch, int x, int y)
{
    return pitch ? (size_t)(x + y) * (size_t)pitch + (size_t)x : (size_t)x * t.w + (size_t)y;
}

/* The borders of a forest table by one thread, summed in the CPU's order. */
template <typename T> __device__ __forceinline__ void borders_serial(const table<T> &t, T *fd, int pitch = 0)
{
    fd[0] = 0;
    for (int y = 1; y <= t.cols; y++)
        fd[cell_index(t, pitch, 0, y)] = fd[cell_index(t, pitch, 0, y - 1)] + t.ins;
    for (int x = 1; x <= t.rows; x++)
        fd[cell_index(t, pitch, x, 0)] = fd[cell_index(t, pitch, x - 1, 0)] + t.del;
}

/* The match operand of cell (x, y): when both prefix forests are trees rooted at i and j, the
 * relabelling (the diagonal neighbour is added by the caller: *trees); else the forests left of the
 * two subtrees plus their distance. */
template <typename T>
__device__ __forceinline__ T match_operand(const table<T> &t, const T *fd, int li, int32_t la, int x, int y, bool *trees)
{
    const int i = t.l1 + x - 1, j = t.l2 + y - 1, lj = t.y_left[j];
    *trees = li == t.l1 && lj == t.l2;
    if (*trees)
        return relabel_of(la, t.y_label[j], t.ren);
    const T *tree = t.tdd + td_diagonal_index(t, i, j);
    return fd[(size_t)(li - t.l1) * t.w + (lj - t.l2)] + td_ready(*tree, tree, true, t.failed);
}

/* Cell (x, y) of a forest table in global memory whose earlier anti-diagonals are done. */
template <typename T> __device__ __forceinline__ void global_cell(const table<T> &t, T *fd, int x, int y)
{
    const int i = t.l1 + x - 1;
    bool trees;
    const T m = match_operand(t, fd, t.x_left[i], t.x_label[i], x, y, &trees);
    const size_t at = (size_t)x * t.w + y;
    const T val = cell_of(fd[at - t.w], fd[at - 1], trees ? fd[at - t.w - 1] + m : m, t.del, t.ins);
    fd[at] = val;
    if (trees)
        store_td(t, i, t.l2 + y - 1, val);
}

/* One table by one thread, row by row (never flipped: its rows then read td along td's rows). */
template <typename T> __device__ __noinline__ void table_by_thread(const table<T> t, T *fd)
{
    fd[0] = 0;
    for (int y = 1; y <= t.cols; y++)
        fd[y] = fd[y - 1] + t.ins;
    /* a row's cells wait on each other through `left` only: the row written (restrict) is apart
     * from the rows read and from the td entries read, so the loads of the next cell may be
     * issued before this one's store (not unrolled: unrolled, it spills under 64 registers) */
    const int32_t *__restrict__ col_left = t.y_left + t.l2, *__restrict__ col_label = t.y_label + t.l2;
    for (int x = 1; x <= t.rows; x++) {
        const int i = t.l1 + x - 1, li = t.x_left[i];
        const int32_t la = t.x_label[i];
        T *__restrict__ row = fd + (size_t)x * t.w;
        const T *__restrict__ up = fd + (size_t)(x - 1) * t.w;
        const T *__restrict__ sub = fd + (size_t)(li - t.l1) * t.w; /* sub[l(j) - l2] */
        const T *__restrict__ td_read = t.td + (size_t)i * t.sx + (size_t)t.l2 * t.sy;
        T *__restrict__ td_write = t.td + (size_t)i * t.sx + (size_t)t.l2 * t.sy; /* other entries */
        T left = up[0] + t.del;
        row[0] = left;
#pragma unroll 1
        for (int y = 1; y <= t.cols; y++) {
            const int lj = col_left[y - 1] - t.l2;
            const bool trees = li == t.l1 && lj == 0;
            const T m = trees ? up[y - 1] + relabel_of(la, col_label[y - 1], t.ren)
                              : sub[lj] + td_ready(td_read[(size_t)(y - 1) * t.sy], td_read + (size_t)(y - 1) * t.sy,
                                                   true, t.failed);
            left = cell_of(up[y], left, m, t.del, t.ins);
            row[y] = left;
            if (trees) {
                td_write[(size_t)(y - 1) * t.sy] = left;
                t.tdd[td_diagonal_index(t, i, t.l2 + y - 1)] = left;
            }
        }
    }
}

/* A group of threads that sweeps one table: the block, or one warp. */
struct block_group {
    __device__ static void sync() { __syncthreads(); }
    static constexpr int td_prefetch = 0; /* see load_columns */
};
struct warp_group {
    __device__ static void sync() { __syncwarp(); }
    static constexpr int td_prefetch = WW_TED_WARP_TD_PREFETCH;
};

/* The rows of a sweeping thread: rank `me` of `size` in its group owns rows 1 + me + k size. */
struct sweep_rows {
    int me, size;
    int pitch; /* the forest table's layout (cell_index) */
};

/* A step of the sweep runs on one SM, one barrier per anti-diagonal, with every instruction of it
 * on the table's critical path (a warp alone on its scheduler issues a dependent instruction every
 * few cycles): a step costs what it executes, hence sweep_step's branch-free form. */

/* What a sweeping thread keeps of one of its rows, x = 1 + me + k size (X node i = l1 + x - 1), for
 * the whole sweep; its cell on anti-diagonal s is (x, s - x), Y node j = l2 + s - x - 1. Step s
 * stores the cell of s, loads the operands of the cell of s + 2 and the column of s + 4: every
 * address is a base kept here plus s (or l(j)) times a step in bytes, one IMAD.WIDE. The bases may
 * point before their arrays (only cells in the table are read or written); the steps in bytes are
 * ints (checked: sweep_steps_fit), their products 64-bit. */
template <typename T> struct sweep_row {
    int ahead_first, ahead_last; /* the cell of s + 2 is in the table: ahead_first <= s <= ahead_last */
    int ring_at;                 /* x: its cells' place in an anti-diagonal of the ring (1 for a row past
                                  * the table, which stores nothing) */
    int32_t label;               /* of i */
    int l2_if_on_left_path; /* l2 if l(i) == l1 (then l(j) == l2 makes both prefix forests trees), else -1 */
    int leaf_offset;        /* if i is a leaf, j - s of the cell of s + 2 (j a leaf too: l(j) - s == it), else
                             * INT_MIN */
    T *fd_at;               /* the cell of s at fd_at + s step */
    T *td_at;               /* ... and td[i][j] at td_at + s sy (by rows) */
    const T *forest_at;     /* fd[l(i) - l1][l(j) - l2] at forest_at + l(j) step */
    const T *tdd_ahead;     /* td[i][j] of the cell of s + 2 at tdd_ahead + s j_step (by anti-diagonals) */
    const int32_t *col_left_ahead, *col_label_ahead; /* l(j) of the cell of s + 4, j's label of s + 2: at + s */
};

/* A table's strides of the sweep, in bytes: cell_index(pitch, x, y), y = s - x, is x + s pitch by
 * anti-diagonals and x (w - 1) + s by rows (`step` per s); the forest left of both subtrees moves
 * by `step` with l(j); td[i][j] by rows moves by sy with j, by anti-diagonals (td_diagonal_index) by
 * j_step. */
struct sweep_steps {
    int step, sy, j_step;
};

/* The steps in bytes of a table's sweep fit an int (a pitch is under 4,001; na and nb so large that
 * they would not are trees of hundreds of millions of nodes) */
template <typename T> __device__ __forceinline__ bool sweep_steps_fit(const table<T> &t)
{
    return (long long)sizeof(T) * (t.na + 1) <= INT_MAX && (long long)sizeof(T) * t.sy <= INT_MAX;
}

template <typename T>
__device__ __forceinline__ sweep_row<T> sweep_row_of(const table<T> &t, T *fd, int x, int pitch)
{
    sweep_row<T> r;
    const bool used = x <= t.rows;
    const int i = t.l1 + x - 1;
    const int li = used ? t.x_left[i] : t.l1;
    r.ahead_first = x - 1;                          /* y = s + 2 - x >= 1 */
    r.ahead_last = used ? x + t.cols - 2 : x - 2; /* y <= cols; none past the table */
    r.ring_at = used ? x : 1;
    r.label = used ? t.x_label[i] : 0;
    r.l2_if_on_left_path = li == t.l1 ? t.l2 : -1;
    r.leaf_offset = li == i ? t.l2 + 1 - x : INT_MIN;
    const long long sub = li - t.l1, l2 = t.l2; /* sub: the row of the forest left of i's subtree */
    const long long j0 = l2 - 1 - x;            /* j of the cell of s = 0 */
    r.fd_at = fd + (pitch ? (long long)x : (long long)x * (t.w - 1));
    r.td_at = t.td + i * (long long)t.sx + j0 * t.sy;
    r.forest_at = fd + (pitch ? (sub - l2) * pitch + sub : sub * t.w - l2);
    const long long i_step = t.na + (t.a_rows ? 1 : 0), j_step = t.na + (t.a_rows ? 0 : 1);
    r.tdd_ahead = t.tdd + i * i_step + (j0 + 2) * j_step;
    r.col_left_ahead = t.y_left + (j0 + 4);
    r.col_label_ahead = t.y_label + (j0 + 2);
    return r;
}

/* base + c step bytes, c step the 64-bit product of two ints: one IMAD.WIDE (written in C, the
 * compiler widened the loop's s to 64 bits and multiplied in 64 bits, three instructions more; the
 * emulation compiles the C) */
template <typename T> __device__ __forceinline__ T *at_step(T *base, int c, int step)
{
#ifdef __CUDA_ARCH__
    long long offset;
    asm("mul.wide.s32 %0, %1, %2;" : "=l"(offset) : "r"(c), "r"(step));
#else
    const long long offset = (long long)c * step;
#endif
    return (T *)((char *)base + offset);
}
template <typename T> __device__ __forceinline__ const T *at_step(const T *base, int c, int step)
{
    return at_step(const_cast<T *>(base), c, step);
}

/* The operands of a thread's cells on anti-diagonal s, loaded on s - 2 (slot k: its k-th row), kept
 * as loaded: nothing waits for a load before the group's sync (a sum of two loads formed here would
 * wait a full memory latency per anti-diagonal). The match operand is the forest left of both
 * subtrees, fd[l(i) - l1][l(j) - l2] (forest[k], on an anti-diagonal at least three back: done when
 * loaded), plus td[i][j] (loaded with the columns, four steps ahead: see column_operands), except:
 * - when i and j are both leaves (leaf_pair) that forest is the diagonal neighbour itself (two
 *   back), which the cell takes from its row's register instead;
 * - when both prefix forests are trees (`trees`, rare) it is the diagonal neighbour plus the
 *   relabelling (with col_label, loaded for those only), computed in the cell's branch that
 *   stores td[i][j]: the common cell computes no relabelling. */
template <typename T, int K> struct cell_operands {
    T forest[K];
    int32_t col_label[K];
    bool in[K], trees[K], leaf_pair[K];
};

/* The leftmost leaves of the Y nodes of a thread's cells on anti-diagonal s + 4, loaded on s, two
 * steps before the operands whose addresses need them (loaded together, every step waited for them
 * before it could issue its other loads; a step ahead, the roots' table of a 1000-node pair still
 * waited for them: ncu, ninth session), and whether the cells are in the table. Two sets
 * alternate, for the even and the odd anti-diagonals, as the operands do.
 * The same step loads those cells' td[i][j] (`tree`, one of four sets, one per step of the loop's
 * four): td entries of shallower depths, not written during this launch, so they can be loaded
 * as far ahead as registers allow. Two steps ahead with the operands, the sweeps waited for them:
 * with td loads left out (wrong values), the 1000-node pair's four deepest launches took 35% less
 * (ncu, tenth session). A cell whose prefix forests are both trees loads its own td entry, which it
 * writes later, and uses none of it: hence a plain load, not the read-only path (__ldg), which
 * PTX allows only for data that nothing writes during the kernel. */
template <int K> struct column_operands {
    int32_t left[K];
    bool in[K];
};

template <typename T, int K, int PREFETCH>
__device__ __forceinline__ void load_columns(const table<T> &t, const sweep_row<T> *rows, sweep_steps st, int s,
                                             sweep_rows g, column_operands<K> &col, T *tree)
{
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int x = 1 + g.me + k * g.size;
        if ((x > t.rows || s + 4 - x < 0) && WW_TED_EARLY_EXIT) /* (load_operands reads `in` at y = 0) */
            break;
        const bool in = rows[k].ahead_first <= s + 2 && s + 2 <= rows[k].ahead_last;
        col.in[k] = in;
        if (in) {
            col.left[k] = __ldg(at_step(rows[k].col_left_ahead, s, (int)sizeof(int32_t)));
            tree[k] = *at_step(rows[k].tdd_ahead, s + 2, st.j_step); /* (see below) */
        }
#ifdef __CUDA_ARCH__
        if constexpr (PREFETCH > 0) {
            if (rows[k].ahead_first <= s + 2 + PREFETCH && s + 2 + PREFETCH <= rows[k].ahead_last)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(at_step(rows[k].tdd_ahead, s + 2 + PREFETCH, st.j_step)));
        }
#endif
    }
}

template <typename T, int K>
__device__ __forceinline__ void load_operands(const table<T> &t, const sweep_row<T> *rows, sweep_steps st, int s,
                                              sweep_rows g, const column_operands<K> &col, cell_operands<T, K> &op)
{
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int x = 1 + g.me + k * g.size;
        if ((x > t.rows || s + 2 - x < 0) && WW_TED_EARLY_EXIT) /* (the cell step reads `in` at y = 0) */
            break;
        const sweep_row<T> &r = rows[k];
        const int lj = col.left[k];
        const bool in = col.in[k];
        const bool trees = in && lj == r.l2_if_on_left_path;
        const bool leaf_pair = lj - s == r.leaf_offset;
        op.in[k] = in;
        op.trees[k] = trees;
        op.leaf_pair[k] = leaf_pair;
        if (trees)
            op.col_label[k] = __ldg(at_step(r.col_label_ahead, s, (int)sizeof(int32_t)));
        if (in && !trees && !leaf_pair)
            op.forest[k] = *at_step(r.forest_at, lj, st.step);
    }
}

/* Anti-diagonal s of the sweep from the operands loaded for it, which are then reloaded for s + 2,
 * the columns for s + 4, then the group's sync. The ring holds two anti-diagonals, by row: `from`
 * has s - 1 (done: the last sync), `to` gets s. A cell reads its up and left neighbours from `from`
 * and its diagonal neighbour is the up neighbour its row read on the step before (up_last, a
 * register): no cell needs s - 2 from the ring. Row 0 of `to` gets the border cell (0, s),
 * border_row, summed in the CPU's order by every thread: each stores the same value there, a store
 * with no predicate (thread 0's alone, its address was recomputed every step; a race checker may
 * report these identical stores). The border cells (x, 0) were put in the ring before the sweep,
 * each in the anti-diagonal of x's parity, where nothing overwrites them until their readers are
 * done. A step's only branches are the rare td stores and the warp's vote on unwritten td entries
 * (see td_ready): the other stores and loads are predicated (cells outside the table compute
 * garbage that goes nowhere), and every address is one multiply-add (see sweep_row). */
template <typename T, int K, typename G>
__device__ __forceinline__ void sweep_step(const table<T> &t, const T *from, T *to, const sweep_row<T> *rows,
                                           sweep_steps st, int s, sweep_rows g, T *up_last, T &border_row,
                                           column_operands<K> &col, cell_operands<T, K> &op, T *tree)
{
    /* the td entries of the step's cells (loaded four steps ahead) that are not written yet, when
     * depths overlap: one vote of the warp a step, not one a cell (the roots' table of the
     * 1000-node pair 714 against 748 us, ncu); a cell whose prefix forests are trees loaded its
     * own entry, which it does not use */
    {
        bool wait = false;
#pragma unroll
        for (int k = 0; k < K; k++) {
            const sweep_row<T> &r = rows[k];
            const bool in_table = K == 1 ? op.in[k] : (r.ahead_first + 2 <= s && s <= r.ahead_last + 2);
            wait = wait || (in_table && !op.trees[k] && td_unset(tree[k]));
        }
        if (__any_sync(__activemask(), wait)) {
#pragma unroll
            for (int k = 0; k < K; k++) {
                const sweep_row<T> &r = rows[k];
                const bool in_table = K == 1 ? op.in[k] : (r.ahead_first + 2 <= s && s <= r.ahead_last + 2);
                tree[k] = td_ready(tree[k], at_step(r.tdd_ahead, s - 2, st.j_step), in_table && !op.trees[k],
                                   t.failed);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int x = 1 + g.me + k * g.size;
        if ((x > t.rows || s - x < 0) && WW_TED_EARLY_EXIT) /* (at y = 0 the row reads its up_last) */
            break;
        const sweep_row<T> &r = rows[k];
        const T up = from[r.ring_at - 1], left = from[r.ring_at], diagonal = up_last[k];
        up_last[k] = up;
        T val = cell_of(up, left, (op.leaf_pair[k] ? diagonal : op.forest[k]) + tree[k], t.del, t.ins);
        if (op.trees[k]) { /* both prefix forests are trees: the cell is td[i][j] too */
            val = cell_of(up, left, diagonal + relabel_of(r.label, op.col_label[k], t.ren), t.del, t.ins);
            *at_step(r.td_at, s, st.sy) = val;
            *at_step(const_cast<T *>(r.tdd_ahead), s - 2, st.j_step) = val;
        }
        /* in the table: kept from the loads for one row, recomputed for more (fewer predicates for
         * the compiler to keep across steps: 3 instructions a step fewer with two rows; the same
         * test written once in a function made the two-row loop 19 instructions longer) */
        if (K == 1 ? op.in[k] : (r.ahead_first + 2 <= s && s <= r.ahead_last + 2)) {
            to[r.ring_at] = val;
            *at_step(r.fd_at, s, st.step) = val;
        }
    }
    border_row = border_row + t.ins; /* cell (0, s) (past the columns: never read) */
    to[0] = border_row;
    load_operands<T, K>(t, rows, st, s, g, col, op);
    load_columns<T, K, G::td_prefetch>(t, rows, st, s, g, col, tree);
    G::sync();
}

/* One table by a group (the block or a warp; rank g.me of g.size). The borders go to global memory
 * first (the forests left of two subtrees may be border cells). Then, when the rows fit (fewer than
 * `stride`, at most K per thread), the shared-memory sweep of the design note: the thread of rank
 * me owns rows 1 + me + k size; ring holds two anti-diagonals by row (of the three anti-diagonals
 * of `stride` cells given); two sets of operands alternate, for the even and the odd
 * anti-diagonals. Else the sweep in global memory. */
template <typename T, typename G, int K>
__device__ void table_by_group(const table<T> &t, T *fd, T *ring, int stride, sweep_rows g)
{
    const bool in_shared = t.rows < stride && t.rows <= K * g.size &&
                           (long long)(t.rows + 1) * (t.rows + t.cols + 1) < 0x7fffffffLL && /* (s, x + cols: ints) */
                           sweep_steps_fit(t);
    g.pitch = in_shared && t.rows <= t.cols ? t.rows + 1 : 0;
    if (sizeof(T) == sizeof(int32_t)) { /* exact: the sums are products */
        for (int y = g.me; y <= t.cols; y += g.size)
            fd[cell_index(t, g.pitch, 0, y)] = (T)y * t.ins;
        for (int x = 1 + g.me; x <= t.rows; x += g.size)
            fd[cell_index(t, g.pitch, x, 0)] = (T)x * t.del;
    } else if (g.me == 0) {
        borders_serial(t, fd, g.pitch);
    }
    G::sync();
    if (!in_shared) {
        for (int s = 2; s <= t.rows + t.cols; s++) {
            const int x_lo = s - t.cols > 1 ? s - t.cols : 1, x_hi = s - 1 < t.rows ? s - 1 : t.rows;
            for (int x = x_lo + g.me; x <= x_hi; x += g.size)
                global_cell(t, fd, x, s - x);
            G::sync();
        }
        return;
    }
    sweep_row<T> rows[K];
    T up_last[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int x = 1 + g.me + k * g.size;
        if (x > t.rows && WW_TED_EARLY_EXIT)
            break;
        rows[k] = sweep_row_of(t, fd, x, g.pitch);
        up_last[k] = 0; /* row 1's diagonal on anti-diagonal 2, cell (0, 0); the others read theirs first */
        if (x <= t.rows) /* the border cell (x, 0), in anti-diagonal x's place */
            ring[(x & 1) * stride + x] = fd[cell_index(t, g.pitch, x, 0)];
    }
    const sweep_steps st = {(int)sizeof(T) * (g.pitch ? g.pitch : 1), (int)sizeof(T) * t.sy,
                            (int)sizeof(T) * (t.na + (t.a_rows ? 0 : 1))};
    T border_row = fd[cell_index(t, g.pitch, 0, 1)]; /* cell (0, 1) */
    ring[stride] = border_row; /* (by every thread, as in the sweep) */
    cell_operands<T, K> even = {}, odd = {};
    column_operands<K> col_even = {}, col_odd = {};
    T tree[4][K] = {}; /* td of the cells of s, s + 1, s + 2, s + 3 at the loop's steps */
    load_columns<T, K, G::td_prefetch>(t, rows, st, -2, g, col_even, tree[0]);
    load_columns<T, K, G::td_prefetch>(t, rows, st, -1, g, col_odd, tree[1]);
    load_operands<T, K>(t, rows, st, 0, g, col_even, even); /* anti-diagonals 2 and 3 read borders only */
    load_columns<T, K, G::td_prefetch>(t, rows, st, 0, g, col_even, tree[2]);
    load_operands<T, K>(t, rows, st, 1, g, col_odd, odd);
    load_columns<T, K, G::td_prefetch>(t, rows, st, 1, g, col_odd, tree[3]);
    G::sync();
    /* anti-diagonal s in ring[(s % 2) stride]; four steps per iteration (the loop's own instructions
     * and the register moves at its end, once per four): the up to three steps past the last one
     * store nothing to global memory and load nothing from it (they write cell (0, s) into the
     * ring and take part in the barrier, as every thread does every step) */
    const int last = t.rows + t.cols;
    for (int s = 2; s <= last; s += 4) {
        sweep_step<T, K, G>(t, ring + stride, ring, rows, st, s, g, up_last, border_row, col_even, even, tree[0]);
        sweep_step<T, K, G>(t, ring, ring + stride, rows, st, s + 1, g, up_last, border_row, col_odd, odd, tree[1]);
        sweep_step<T, K, G>(t, ring + stride, ring, rows, st, s + 2, g, up_last, border_row, col_even, even,
                            tree[2]);
        sweep_step<T, K, G>(t, ring, ring + stride, rows, st, s + 3, g, up_last, border_row, col_odd, odd, tree[3]);
    }
}

/* The strategies, as separate functions (see WW_TED_ROWS_PER_THREAD). */
template <typename T> __device__ __noinline__ void table_by_block(const table<T> t, T *fd, T *ring, int stride)
{
    const sweep_rows g = {(int)threadIdx.x, (int)blockDim.x, 0};
    if (t.rows <= g.size) /* a row per thread: no step spends instructions on a second, unused one */
        table_by_group<T, block_group, 1>(t, fd, ring, stride, g);
    else
        table_by_group<T, block_group, WW_TED_ROWS_PER_THREAD>(t, fd, ring, stride, g);
}

template <typename T> __device__ __noinline__ void table_by_warp(const table<T> t, T *fd, T *ring, int stride)
{
    /* a launch of fewer than 32 threads per block (the emulation) has narrower warps */
    const int lanes = blockDim.x < 32 ? (int)blockDim.x : 32;
    table_by_group<T, warp_group, WW_TED_WARP_ROWS_PER_LANE>(t, fd, ring, stride,
                                                           sweep_rows{(int)threadIdx.x % lanes, lanes, 0});
}

/* ------------------------------------------------------------------ the multi-block strategy
 * A large table in tiles of TILE x TILE cells over many warps of several blocks (X-TED's
 * multi-block strategy, its Algorithm 2, with a warp per band of tiles). The table's rows are cut
 * into bands of TILE rows; a warp takes a band from the launch's queue (one counter, atomicAdd) and
 * sweeps its tiles left to right, each tile by anti-diagonals (a lane per row, values in registers
 * and shared memory), one __syncwarp per anti-diagonal (2 TILE - 1 of them). Before tile J a band
 * waits until the band above has published tile J (a counter per band: the tiles it has finished,
 * stored after an acquire-release fence, read volatile then fenced): every operand of the tile is
 * then done, transitively, since a cell's long-range operand fd[l(i) - l1][l(j) - l2] is up and
 * to the left of it. The queue hands out the bands of a table top to bottom, so a band only ever
 * waits on a band handed out before it, to a warp that is running: no deadlock whatever the grid,
 * the residency or the order of blocks (the emulation runs one block after the other: its first
 * warp takes every band in order, each wait already met). All tables of a launch share the
 * queue, so a depth of few large tables still spreads over the GPU.
 * A tile in shared memory: its cells with the row above and the column to the left (the halo:
 * the band above's last row, from global memory; the last column of the band's previous tile, kept
 * in shared memory); first every cell's operand that needs no other cell of the tile (relabelling,
 * td, and the forest left of both subtrees when it lies outside the tile and halo: done, from
 * global memory, all loads independent; most of them before the wait on the band above), then the
 * sweep, which adds the in-tile operands from shared memory, then the tile is stored to global
 * memory row by row and published. Rows of a lane: TILE / 32 (one on a GPU); lanes of a warp:
 * fewer in the emulation. Global reads of forest cells that other warps wrote skip L1 (__ldcg): L1
 * is not coherent between SMs. Cost along a table's critical path: a band starts tile J one tile
 * (a sweep of 63 steps, the tile's stores, a fence, the flag's trip through L2) after the band
 * above, so about (rows + cols) / 32 tiles, each a few us (to be measured), against rows + cols
 * block barriers of 0.4 to 0.9 us each (measured). A wait never met ends after WAIT_LIMIT_CYCLES
 * with the call's error, never a hang. Per warp a tile space (4.9 KiB for exact tables, 9.3 KiB for
 * doubles) of the block's shared memory (depth_shared_bytes), for all 16 warps of a block; the
 * role's blocks come first in the launch. */
const int TILE = 32;
const int TILE_PITCH = TILE + 2; /* row r's cell c at r PITCH + c: an anti-diagonal's cells (one per
                                  * lane, rows apart by PITCH - 1 = 33 words) fall in distinct banks */
const int OPERAND_BATCH = 8;

/* A warp's shared memory, one base pointer (the parts at fixed offsets: fewer registers) */
template <typename T> struct tile_space {
    char *base;
    /* (TILE + 1) x TILE_PITCH cells: row 0 and column 0 the halo */
    __device__ T *cell() const { return (T *)base; }
    __device__ int32_t *ints() const { return (int32_t *)(base + (size_t)(TILE + 1) * TILE_PITCH * sizeof(T)); }
    /* per tile row: l(i) - l1 (the forest left of i), i's label; per column: l(j) - l2, j's label */
    __device__ int32_t *row_from() const { return ints(); }
    __device__ int32_t *row_label() const { return ints() + TILE; }
    __device__ int32_t *col_from() const { return ints() + 2 * TILE; }
    __device__ int32_t *col_label() const { return ints() + 3 * TILE; }
    __device__ int32_t *word() const { return ints() + 4 * TILE; } /* the queue's answer, for the warp */
};
template <typename T> __host__ __device__ constexpr size_t tile_space_bytes()
{
    return ((size_t)(TILE + 1) * TILE_PITCH * sizeof(T) + (4 * TILE + 4) * sizeof(int32_t) + 15) & ~(size_t)15;
}

/* The depth kernel's shared memory: the block and warp sweeps' rings (three anti-diagonals), or a
 * tile space for each warp of the block (the multi-block role), whichever is larger (within the 48 KiB
 * of static shared memory only 9 warps of 16 took tiles, 5 for doubles). One block runs per SM
 * anyway (its registers); an H100 or H200 lets it have 227 KiB (run_batch checks the GPU's limit).
 * Measured on an H100 (bench/results/gpu-ted.md, seventh session): many tiled tables 4 to 24%
 * faster each, the 1000-node matrix 3 to 7% faster, the pairs unchanged. */
template <typename T> __host__ __device__ constexpr size_t depth_shared_bytes()
{
    return std::max(3 * (size_t)ring_cells<T>::value * sizeof(T), (size_t)WARPS_PER_BLOCK * tile_space_bytes<T>());
}

/* A table of the multi-block strategy: its task, its forest table (offset in the launch's slots, by
 * rows), its first band in the launch's queue, its first band's counter in the batch's. */
struct multi_table {
    table_task task;
    size_t fd;
    int first_band, progress;
};

/* (a wait that is never met: see WAIT_LIMIT_CYCLES) */
#ifndef WW_TED_SPIN_WAIT /* (the emulation's checks that its waits are met before they start) */
#define WW_TED_SPIN_WAIT(flag, value, failed)                                                                          \
    do {                                                                                                               \
        const long long wait_start = clock64();                                                                        \
        while (*(volatile int *)(flag) < (value)) {                                                                    \
            __nanosleep(32); /* fewer polls of L2 while the band above finishes its tile (a few us) */                \
            if (clock64() - wait_start > WAIT_LIMIT_CYCLES) {                                                          \
                atomicExch((failed), 1);                                                                               \
                break;                                                                                                 \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)
#endif

template <typename T> __device__ __forceinline__ T relaxed_cell(const T *p) { return __ldcg(p); }

/* The tile space of a warp: from the shared-memory symbol itself, not from a pointer passed down,
 * so that its accesses compile to shared-memory instructions (through a generic pointer they were
 * generic loads and stores, and every store made the compiler reload the table's fields). */
template <typename T> __device__ __forceinline__ tile_space<T> tile_space_of(int warp)
{
    WW_TED_DYNAMIC_SHARED(depth_shared);
    return tile_space<T>{(char *)depth_shared + (size_t)warp * tile_space_bytes<T>()};
}

/* Orders a warp's stores before a progress counter that other SMs read (the warp's sync, then one
 * lane's fence and store: the sync puts the other lanes' stores before the fence), and a wait's
 * read before the loads it guards: acquire-release at GPU scope, lighter than __threadfence's
 * sequentially consistent fence. */
__device__ __forceinline__ void fence_acq_rel_gpu()
{
#ifdef __CUDA_ARCH__
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
}

/* The sweep of a tile whose operands and halo are in shared memory: anti-diagonal s holds the
 * cells (r, s - r), one __syncwarp each. A warp of TILE lanes (a GPU): lane r owns row r and
 * keeps its last value (the left neighbour) and the last up operand it used (the next diagonal) in
 * registers, and gets the up neighbour from lane r - 1 by a shuffle, so that a step waits for one
 * shuffle and three operations. Every value still goes to shared memory, for the store and for
 * the in-tile forest operands: those lie on anti-diagonals at least two back, and are loaded a step
 * ahead with the cell's other operands. Narrower warps (the emulation's one-thread blocks) sweep
 * from shared memory. Not inlined into the band's loop: it gets registers of its own. */
template <typename T>
__device__ __noinline__ void sweep_tile(const table<T> &t, int warp, int x0, int y0, int rows_here, int cols_here,
                                        int me, int lanes)
{
    const tile_space<T> sp = tile_space_of<T>(warp);
    T *const cells = sp.cell();
    const int32_t *const row_from = sp.row_from(), *const col_from = sp.col_from();
    const T del = t.del, ins = t.ins;
    const int steps = rows_here + cols_here - 1;
    if (lanes == TILE) {
        const int r = me;
        const bool used = r < rows_here;
        const int xf = used ? row_from[r] : -1;
        const bool forest_in_tile = xf >= x0 - 1; /* the forest left of row r's subtree: a tile or halo row */
        const T *const forest_row = cells + (forest_in_tile ? xf - x0 + 1 : 0) * TILE_PITCH - (y0 - 1);
        T *const row = cells + (r + 1) * TILE_PITCH + 1; /* cell (r, c) at row[c], (r, -1) the halo */
        /* td[u][v] of this row's node u and column c's node v: td_at[c sy], tdd_at[c tdd_step] */
        const int u = t.l1 + x0 + r - 1, v0 = t.l2 + y0 - 1;
        T *const td_at = t.td + td_row_index(t, u, v0);
        T *const tdd_at = t.tdd + td_diagonal_index(t, u, v0);
        const size_t sy = (size_t)t.sy, tdd_step = (size_t)t.na + (t.a_rows ? 0 : 1);
        /* the left neighbour and the last up operand (the next diagonal): at column 0 the halo's */
        T val = row[-1], up_last = row[-TILE_PITCH - 1];
        /* column c's operands, loaded a step ahead (c clamped: a lane outside its columns loads
         * harmlessly): the prepared one, and the forest left of both subtrees when in the tile */
        T op = (T)0, forest = (T)0;
        bool trees = false, in_tile = false;
        auto load = [&](int c) {
            const int cc = c < 0 ? 0 : c >= cols_here ? cols_here - 1 : c;
            const int yf = col_from[cc];
            op = row[cc];
            trees = xf == 0 && yf == 0;
            in_tile = !trees && forest_in_tile && yf >= y0 - 1;
            if (in_tile)
                forest = forest_row[yf];
        };
        load(-r);
        /* branch-free but for the rare td stores: a warp alone on its scheduler issues a dependent
         * instruction every few cycles, so a step costs what it executes */
        for (int s = 0; s < steps; s++) {
            T up = __shfl_up_sync(0xffffffffu, val, 1);
            if (r == 0)
                up = cells[s + 1]; /* the halo row (in the tile space whatever s) */
            const int c = s - r;
            const bool active = used && (unsigned)c < (unsigned)cols_here;
            const T value = cell_of(up, val, op + (trees ? up_last : in_tile ? forest : (T)0), del, ins);
            if (active) {
                val = value;
                up_last = up;
                row[c] = value;
                if (trees) {
                    td_at[(size_t)c * sy] = value;
                    tdd_at[(size_t)c * tdd_step] = value;
                }
            }
            __syncwarp(); /* one anti-diagonal per step; the forest operands load(c + 1) reads are two back */
            load(c + 1);
        }
        return;
    }
    for (int s = 0; s < steps; s++) {
        for (int r = me; r < rows_here; r += lanes) {
            const int c = s - r;
            if (c < 0 || c >= cols_here)
                continue;
            const int xf = row_from[r], yf = col_from[c];
            T *const at = cells + (r + 1) * TILE_PITCH + c + 1;
            const T op = *at;
            T m;
            const bool trees = xf == 0 && yf == 0;
            if (trees)
                m = at[-TILE_PITCH - 1] + op;
            else if (xf >= x0 - 1 && yf >= y0 - 1)
                m = cells[(xf - x0 + 1) * TILE_PITCH + (yf - y0 + 1)] + op;
            else
                m = op;
            const T val = cell_of(at[-TILE_PITCH], at[-1], m, del, ins);
            *at = val;
            if (trees)
                store_td(t, t.l1 + x0 + r - 1, t.l2 + y0 + c - 1, val);
        }
        __syncwarp();
    }
}

/* One band of a table by one warp (lane `me` of `lanes`). */
template <typename T>
__device__ void band_by_warp(const table<T> &t, T *fd, int band, int *mine, int *failed, int warp, int me, int lanes)
{
    const tile_space<T> sp = tile_space_of<T>(warp);
    const int x0 = band * TILE + 1; /* the band's first row (rows from 1; row 0 the border) */
    const int rows_here = t.rows - x0 + 1 < TILE ? t.rows - x0 + 1 : TILE;
    const size_t w = (size_t)t.w;
    for (int r = me; r < rows_here; r += lanes) {
        const int i = t.l1 + x0 + r - 1;
        sp.row_from()[r] = t.x_left[i] - t.l1;
        sp.row_label()[r] = t.x_label[i];
    }
    for (int y0 = 1, tile_j = 0; y0 <= t.cols; y0 += TILE, tile_j++) {
        const int cols_here = t.cols - y0 + 1 < TILE ? t.cols - y0 + 1 : TILE;
        for (int c = me; c < cols_here; c += lanes) {
            const int j = t.l2 + y0 + c - 1;
            sp.col_from()[c] = t.y_left[j] - t.l2;
            sp.col_label()[c] = t.y_label[j];
        }
        __syncwarp();
        /* each cell's operand that needs no other cell of the tile, from td by rows, in two passes:
         * before the wait on the band above, td and the forests left of both subtrees in columns
         * left of the tile's halo (in tiles this band and the bands above finished before: the
         * last wait covers them); after it, those in the tile's columns but above the halo row
         * (rows of the bands above, this tile's columns). Lanes along td's rows (the tile's
         * columns when X is A, else its rows), so that their reads of td are contiguous;
         * OPERAND_BATCH loads in flight per lane before their stores. */
        const bool lanes_by_columns = t.sy == 1;
        const int outer = lanes_by_columns ? cols_here : rows_here, inner = lanes_by_columns ? rows_here : cols_here;
        /* loaded apart from their sum, which waits for the loads: all OPERAND_BATCH loads first
         * (a td entry not yet written is waited for at the sum: td_ready) */
        struct operand_parts {
            T forest, tree; /* both prefix forests trees: the relabelling and 0 */
            bool trees;
        };
        auto operand = [&](int r, int c) -> operand_parts {
            const int xf = sp.row_from()[r], yf = sp.col_from()[c];
            if (xf == 0 && yf == 0)
                return operand_parts{relabel_of(sp.row_label()[r], sp.col_label()[c], t.ren), (T)0, true};
            return operand_parts{yf < y0 - 1 ? relaxed_cell(fd + (size_t)xf * w + (size_t)yf) : (T)0,
                                 t.td[td_row_index(t, t.l1 + x0 + r - 1, t.l2 + y0 + c - 1)], false};
        };
        auto operand_sum = [&](operand_parts o, int r, int c) -> T {
            return o.forest +
                   td_ready(o.tree, t.td + td_row_index(t, t.l1 + x0 + r - 1, t.l2 + y0 + c - 1), !o.trees, t.failed);
        };
        auto late = [&](int r, int c) { /* the second pass's cells */
            const int xf = sp.row_from()[r], yf = sp.col_from()[c];
            return xf < x0 - 1 && yf >= y0 - 1 && !(xf == 0 && yf == 0);
        };
        for (int o = me; o < outer; o += lanes)
            for (int n0 = 0; n0 < inner; n0 += OPERAND_BATCH) {
                operand_parts op[OPERAND_BATCH];
#pragma unroll
                for (int k = 0; k < OPERAND_BATCH; k++)
                    if (n0 + k < inner)
                        op[k] = lanes_by_columns ? operand(n0 + k, o) : operand(o, n0 + k);
#pragma unroll
                for (int k = 0; k < OPERAND_BATCH; k++)
                    if (n0 + k < inner) {
                        const int r = lanes_by_columns ? n0 + k : o, c = lanes_by_columns ? o : n0 + k;
                        sp.cell()[(r + 1) * TILE_PITCH + c + 1] = operand_sum(op[k], r, c);
                    }
            }
        if (band > 0 && me == 0) {
            WW_TED_SPIN_WAIT(mine - 1, tile_j + 1, failed);
            fence_acq_rel_gpu();
        }
        __syncwarp();
        /* the halo row: the border (band 0: computed here, in the CPU's order of sums, and stored
         * for the other bands' long-range operands), else the band above's last row */
        if (band == 0) {
            if (me == 0) {
                T v = tile_j == 0 ? (T)0 : sp.cell()[0]; /* fd[0][y0 - 1] */
                if (tile_j == 0)
                    fd[0] = 0;
                sp.cell()[0] = v;
                for (int c = 0; c < cols_here; c++) {
                    v = v + t.ins;
                    sp.cell()[c + 1] = v;
                    fd[y0 + c] = v;
                }
            }
        } else {
            for (int c = me; c <= cols_here; c += lanes)
                sp.cell()[c] = relaxed_cell(fd + (size_t)(x0 - 1) * w + (size_t)(y0 - 1 + c));
            /* the second pass (no cell of it in band 0: rows above the halo) */
            for (int o = me; o < outer; o += lanes)
                for (int n0 = 0; n0 < inner; n0 += OPERAND_BATCH) {
                    T forest[OPERAND_BATCH];
#pragma unroll
                    for (int k = 0; k < OPERAND_BATCH; k++) {
                        const int r = lanes_by_columns ? n0 + k : o, c = lanes_by_columns ? o : n0 + k;
                        if (n0 + k < inner && late(r, c))
                            forest[k] = relaxed_cell(fd + (size_t)sp.row_from()[r] * w + (size_t)sp.col_from()[c]);
                    }
#pragma unroll
                    for (int k = 0; k < OPERAND_BATCH; k++) {
                        const int r = lanes_by_columns ? n0 + k : o, c = lanes_by_columns ? o : n0 + k;
                        if (n0 + k < inner && late(r, c)) {
                            T *at = sp.cell() + (r + 1) * TILE_PITCH + c + 1;
                            *at = forest[k] + *at;
                        }
                    }
                }
        }
        __syncwarp();
        if (tile_j == 0 && me == 0) { /* the border column, from fd[x0 - 1][0], likewise */
            T v = sp.cell()[0];
            for (int r = 0; r < rows_here; r++) {
                v = v + t.del;
                sp.cell()[(r + 1) * TILE_PITCH] = v;
                fd[(size_t)(x0 + r) * w] = v;
            }
        }
        __syncwarp();
        sweep_tile(t, warp, x0, y0, rows_here, cols_here, me, lanes);
        /* the tile to global memory, row by row; its last column becomes the next tile's halo */
        for (int r = 0; r < rows_here; r++)
            for (int c = me; c < cols_here; c += lanes)
                fd[(size_t)(x0 + r) * w + (size_t)(y0 + c)] = sp.cell()[(r + 1) * TILE_PITCH + c + 1];
        __syncwarp();
        for (int r = me; r <= rows_here; r += lanes)
            sp.cell()[r * TILE_PITCH] = sp.cell()[r * TILE_PITCH + cols_here];
        __syncwarp(); /* every lane's stores, then one lane's fence and counter: a release pattern */
        if (me == 0) {
            fence_acq_rel_gpu();
            atomicExch(mine, tile_j + 1);
        }
    }
}

/* The multi-block role of a depth's launch: warps take bands from the queue until it is empty. */
template <typename T> struct multi_work {
    const multi_table *tables;
    int table_count, bands, blocks;
    T *slots;
    int *queue, *progress;
    int *failed; /* (every role's: see WAIT_LIMIT_CYCLES) */
};

template <typename T> __device__ __noinline__ void multi_role(const batch_view<T> &v, const multi_work<T> m)
{
    const int lanes = blockDim.x < 32 ? (int)blockDim.x : 32;
    const int warp = (int)threadIdx.x / lanes, me = (int)threadIdx.x % lanes; /* each has a tile space */
    const tile_space<T> sp = tile_space_of<T>(warp);
    for (;;) {
        if (me == 0)
            *sp.word() = atomicAdd(m.queue, 1);
        __syncwarp();
        const int q = *sp.word();
        __syncwarp();
        if (q >= m.bands)
            return;
        int lo = 0, hi = m.table_count - 1; /* the last table whose first band is at most q */
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (m.tables[mid].first_band <= q)
                lo = mid;
            else
                hi = mid - 1;
        }
        const multi_table mt = m.tables[lo];
        const int band = q - mt.first_band;
        band_by_warp(table_of(v, mt.task, m.failed), m.slots + mt.fd, band, m.progress + mt.progress + band, m.failed,
                     warp, me, lanes);
    }
}

/* The tables of one depth: block-strategy tasks, then warp tasks, then thread tasks; the blocks
 * of the launch by role in the same order, after the multi-block role's (first, so that its long
 * pipelines start first); each role's units take its tasks in a grid-stride loop, each unit with
 * its own forest table (a slot). The shared memory for the sweeps' rings: the block's, or a
 * sixteenth per warp; the multi-block role's warps each a tile_space in it. */
template <typename T> struct depth_work {
    multi_work<T> multi;
    const table_task *tasks;
    int block_tasks, warp_tasks, thread_tasks;
    int block_blocks, warp_blocks; /* the thread role: the remaining blocks */
    int warp_units, thread_units;  /* warps and threads with a slot (the last block's others idle) */
    T *block_slots, *warp_slots, *thread_slots;
    size_t block_slot, warp_slot, thread_slot; /* entries per slot */
};

template <typename T>
__global__ void __launch_bounds__(BLOCK_THREADS, BLOCKS_PER_SM) depth_kernel(batch_view<T> v, depth_work<T> d)
{
    WW_TED_DYNAMIC_SHARED(depth_shared);
    T *const ring = (T *)depth_shared;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* the next depth's launch may start once every block of this one has (see run_batch) */
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    if ((int)blockIdx.x < d.multi.blocks) {
        multi_role(v, d.multi);
        return;
    }
    const int b = (int)blockIdx.x - d.multi.blocks;
    if (b < d.block_blocks) {
        T *fd = d.block_slots + (size_t)b * d.block_slot;
        for (int p = b; p < d.block_tasks; p += d.block_blocks)
            table_by_block(table_of(v, d.tasks[p], d.multi.failed), fd, ring, ring_cells<T>::value);
    } else if (b < d.block_blocks + d.warp_blocks) {
        /* a launch of fewer than 32 threads per block (the emulation) has narrower warps */
        const int lanes = blockDim.x < 32 ? (int)blockDim.x : 32, per_block = (int)blockDim.x / lanes;
        const int in_block = (int)threadIdx.x / lanes, warp = (b - d.block_blocks) * per_block + in_block;
        const int warps = d.warp_blocks * per_block < d.warp_units ? d.warp_blocks * per_block : d.warp_units;
        if (warp >= warps)
            return;
        T *fd = d.warp_slots + (size_t)warp * d.warp_slot;
        const int stride = ring_cells<T>::value / per_block;
        for (int p = warp; p < d.warp_tasks; p += warps)
            table_by_warp(table_of(v, d.tasks[d.block_tasks + p], d.multi.failed), fd, ring + 3 * stride * in_block,
                          stride);
    } else {
        const int first = d.block_blocks + d.warp_blocks;
        const int thread = (b - first) * (int)blockDim.x + (int)threadIdx.x;
        const int all = ((int)gridDim.x - d.multi.blocks - first) * (int)blockDim.x;
        const int threads = all < d.thread_units ? all : d.thread_units;
        if (thread >= threads)
            return;
        T *fd = d.thread_slots + (size_t)thread * d.thread_slot;
        for (int p = thread; p < d.thread_tasks; p += threads) {
            const table_task run = d.tasks[d.block_tasks + d.warp_tasks + p];
            const int32_t *b = v.sorted_b + v.meta[run.pair].sorted_b + run.k2;
            for (int q = 0; q < run.count; q++)
                table_by_thread(table_of(v, table_task{run.pair, run.k1, b[q], 1}, d.multi.failed, false), fd);
        }
    }
}

/* The closed forms of exact pairs: per keyroot of one or two nodes, its nodes' tree distances to
 * every subtree of the other tree (src/cpu/ted.c: the leaf case of forest_table_exact and
 * two_node_rows). Subtree T(j) is the postorder range [l(j), j], so "T(j) holds a node of label L"
 * is "the last node of label L up to j is at or after l(j)". */

/* td of a leaf keyroot against T(j) of s nodes; has: T(j) holds the leaf's label */
__device__ __forceinline__ int32_t leaf_distance(int s, bool has, int32_t del, int32_t ins, int32_t ren)
{
    const int32_t best = has ? 0 : ren, base = del + ins;
    return (s - 1) * ins + (best < base ? best : base);
}

/* td of a node p over its leaf child c against T(j) of s nodes, from the last nodes up to j of
 * their labels (c_below: the last of c's label before j) */
struct two_node_state {
    int last_c, c_below, last_p, last_p_over_c, last_p_inner;
};
__device__ __forceinline__ void two_node_distances(int s, int l, const two_node_state &z, int32_t del, int32_t ins,
                                                   int32_t ren, int32_t *dc, int32_t *dp)
{
    const bool has_c = z.last_c >= l, has_p = z.last_p >= l;
    const int32_t alone = has_c ? 0 : ren, base = del + ins;
    *dc = (s - 1) * ins + (alone < base ? alone : base);
    const int32_t none = 2 * del + s * ins, one = del + (s - 1) * ins + (has_c || has_p ? 0 : ren);
    int32_t d = none < one ? none : one;
    if (s >= 2) {
        const int32_t relabel = z.last_p_over_c >= l ? 0 : z.last_p_inner >= l || z.c_below >= l ? ren : 2 * ren;
        const int32_t both = (s - 2) * ins + relabel;
        d = both < d ? both : d;
    }
    *dp = d;
}

/* The running maximum over a warp's lanes (inclusive), after `carry` */
__device__ __forceinline__ int warp_running_max(int x, int lane, int carry)
{
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const int t = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d)
            x = t > x ? t : x;
    }
    return carry > x ? carry : x;
}

/* One closed form per warp: the Y nodes 32 at a time, a lane each, the last nodes of each label up
 * to j as running maxima over the lanes (one closed form per thread, scanning Y alone, took about
 * 100 us for the 1000-node pair: its stores, one at a time). Narrower warps (the emulation's
 * one-thread blocks) scan Y in turn. */
__global__ void closed_form_kernel(batch_view<int32_t> v, const table_task *tasks, int count)
{
    const int lanes = blockDim.x < 32 ? (int)blockDim.x : 32, lane = (int)threadIdx.x % lanes;
    const int per_block = (int)blockDim.x / lanes, all = (int)gridDim.x * per_block;
    for (int q = (int)blockIdx.x * per_block + (int)threadIdx.x / lanes; q < count; q += all) {
        const table_task task = tasks[q];
        const pair_meta m = v.meta[task.pair];
        const bool in_b = task.k2 != 0;
        const int32_t *x_left = v.leftmost + (in_b ? m.b : m.a), *x_label = v.label + (in_b ? m.b : m.a);
        const int32_t *y_left = v.leftmost + (in_b ? m.a : m.b), *y_label = v.label + (in_b ? m.a : m.b);
        const int ny = in_b ? m.na : m.nb;
        const size_t sx = in_b ? 1 : (size_t)m.nb, sy = in_b ? (size_t)m.nb : 1;
        const int32_t del = in_b ? v.ins : v.del, ins = in_b ? v.del : v.ins, ren = v.ren;
        int32_t *td = v.td + m.td, *tdd = v.td + m.tdd;
        const int k = task.k1;
        /* td[u][j] of X node u and Y node j, both layouts */
        auto store = [&](int u, int j, int32_t d) {
            td[(size_t)u * sx + (size_t)j * sy] = d;
            tdd[(size_t)(u + j) * (size_t)m.na + (size_t)(in_b ? j : u)] = d;
        };
        const bool leaf = k == x_left[k];
        /* a leaf k, or a node p = k with its leaf child c = k - 1 */
        const int c = k - 1, p = k;
        const int32_t lk = x_label[k], lc = leaf ? 0 : x_label[c];
        if (lanes < 32) {
            int last = -1;
            two_node_state z = {-1, -1, -1, -1, -1};
            for (int j = 0; j < ny; j++) {
                const int l = y_left[j], s = j - l + 1;
                const int32_t label = y_label[j];
                if (leaf) {
                    if (label == lk)
                        last = j;
                    store(k, j, leaf_distance(s, last >= l, del, ins, ren));
                    continue;
                }
                z.c_below = z.last_c;
                if (label == lk) {
                    if (z.c_below >= l)
                        z.last_p_over_c = j;
                    if (l < j)
                        z.last_p_inner = j;
                    z.last_p = j;
                }
                if (label == lc)
                    z.last_c = j;
                int32_t dc, dp;
                two_node_distances(s, l, z, del, ins, ren, &dc, &dp);
                store(c, j, dc);
                store(p, j, dp);
            }
            continue;
        }
        int carry = -1, carry_c = -1, carry_p = -1, carry_over = -1, carry_inner = -1; /* up to the last lane */
        for (int j0 = 0; j0 < ny; j0 += 32) {
            const int j = j0 + lane;
            const bool in = j < ny;
            const int l = in ? y_left[j] : 0, s = j - l + 1;
            const int32_t label = in ? y_label[j] : 0;
            if (leaf) {
                const int last = warp_running_max(in && label == lk ? j : -1, lane, carry);
                carry = __shfl_sync(0xffffffffu, last, 31);
                if (in)
                    store(k, j, leaf_distance(s, last >= l, del, ins, ren));
                continue;
            }
            two_node_state z;
            z.last_c = warp_running_max(in && label == lc ? j : -1, lane, carry_c);
            const int before = __shfl_up_sync(0xffffffffu, z.last_c, 1);
            z.c_below = lane == 0 ? carry_c : before;
            const bool is_p = in && label == lk;
            z.last_p = warp_running_max(is_p ? j : -1, lane, carry_p);
            z.last_p_over_c = warp_running_max(is_p && z.c_below >= l ? j : -1, lane, carry_over);
            z.last_p_inner = warp_running_max(is_p && l < j ? j : -1, lane, carry_inner);
            carry_c = __shfl_sync(0xffffffffu, z.last_c, 31);
            carry_p = __shfl_sync(0xffffffffu, z.last_p, 31);
            carry_over = __shfl_sync(0xffffffffu, z.last_p_over_c, 31);
            carry_inner = __shfl_sync(0xffffffffu, z.last_p_inner, 31);
            if (in) {
                int32_t dc, dp;
                two_node_distances(s, l, z, del, ins, ren, &dc, &dp);
                store(c, j, dc);
                store(p, j, dp);
            }
        }
    }
}

/* Each pair's distance: its roots' entry, the last of its td, in the caller's unit; then whether a
 * multi-block wait failed (1), or 0 (out[pairs]). */
template <typename T> __global__ void roots_kernel(batch_view<T> v, int pairs, double unit, const int *failed, double *out)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        out[pairs] = failed ? (double)*failed : 0.0;
    const int stride = (int)(gridDim.x * blockDim.x);
    for (int k = (int)(blockIdx.x * blockDim.x + threadIdx.x); k < pairs; k += stride) {
        const pair_meta m = v.meta[k];
        out[k] = (double)v.td[m.td + (size_t)m.na * (size_t)m.nb - 1] * unit;
    }
}

double sum_of(size_t n, double cost) /* as the CPU sums an empty side */
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += cost;
    return s;
}

/* A keyroot as the host schedules it. */
struct keyroot {
    int32_t node, level, size;
};

/* A checked non-empty tree prepared in both orientations (src/cpu/ted.c's ww_ted_prepare). */
struct prepared_tree {
    std::vector<int32_t> storage;
    ww_ted_prepared left, right;

    explicit prepared_tree(const ww_tree *t)
    {
        const size_t n = t->count, ints = ww_ted_prepared_ints(n);
        /* left, right, then right's temporaries (left's lie where right then goes) */
        storage.resize(2 * ints + 4 * n);
        ww_ted_prepare(t, 0, storage.data(), &left);
        ww_ted_prepare(t, 1, storage.data() + ints, &right);
    }
};

/* A batch being built on the host: the chosen orientation of each pair's trees, its keyroots. */
struct batch {
    std::vector<int32_t> label, leftmost;
    std::vector<pair_meta> meta;
    std::vector<std::vector<keyroot>> keyroots_a, keyroots_b;
    size_t td_entries = 0, tables = 0, largest_sum = 0; /* largest na + nb */

    void clear()
    {
        label.clear(), leftmost.clear(), meta.clear(), keyroots_a.clear(), keyroots_b.clear();
        td_entries = tables = largest_sum = 0;
    }

    static std::vector<keyroot> keyroots_of(const ww_ted_prepared &t)
    {
        std::vector<keyroot> k((size_t)t.keyroot_count);
        for (int32_t q = 0; q < t.keyroot_count; q++)
            k[(size_t)q] = keyroot{t.keyroots[q], t.level[q], t.keyroots[q] - t.leftmost[t.keyroots[q]] + 1};
        return k;
    }

    /* Adds a pair of non-empty trees, prepared, in its cheaper orientation. */
    void add(const prepared_tree &a, const prepared_tree &b)
    {
        const size_t na = (size_t)a.left.n, nb = (size_t)b.left.n;
        const bool right = a.right.cost * b.right.cost < a.left.cost * b.left.cost;
        const ww_ted_prepared &A = right ? a.right : a.left, &B = right ? b.right : b.left;
        pair_meta m;
        m.a = (int)label.size();
        label.insert(label.end(), A.label, A.label + na);
        leftmost.insert(leftmost.end(), A.leftmost, A.leftmost + na);
        m.b = (int)label.size();
        label.insert(label.end(), B.label, B.label + nb);
        leftmost.insert(leftmost.end(), B.leftmost, B.leftmost + nb);
        m.na = (int)na;
        m.nb = (int)nb;
        m.td = td_entries;
        td_entries += na * nb;
        m.tdd = td_entries;
        td_entries += (na + nb - 1) * na;
        tables += (size_t)A.keyroot_count * (size_t)B.keyroot_count;
        largest_sum = na + nb > largest_sum ? na + nb : largest_sum;
        meta.push_back(m);
        keyroots_a.push_back(keyroots_of(A));
        keyroots_b.push_back(keyroots_of(B));
    }
};

/* A depth's launch on the host: per role (block, warp, thread) its tasks, units' blocks, cells per
 * slot and first slot entry; its first task. Units (blocks, warps, threads) get slots; the
 * blocks of the warp and thread roles are rounded up, their extra warps and threads idle. */
struct depth_plan {
    size_t task_at, count[3], units[3], blocks[3], cells[3], slot_at[3];
    size_t first_group, groups; /* its multi-block groups (multi_group), one launch each */
};

/* Multi-block tables of a depth launched together: their forest tables side by side within
 * MULTI_SLOT_BYTES (at least one table), their bands in one queue. */
struct multi_group {
    size_t first, count, bands, cells; /* records [first, first + count) */
};

/* The closed forms exist for exact (int32) tables only: a warp each, 8 warps to a block. */
cudaError_t launch_closed_forms(cudaStream_t stream, const batch_view<int32_t> &v, const table_task *tasks, size_t count)
{
    const size_t warps = 8;
    WW_TED_LAUNCH(closed_form_kernel, (unsigned)((count + warps - 1) / warps), (unsigned)(32 * warps), 0, stream, v, tasks,
                  (int)count);
    return cudaGetLastError();
}
cudaError_t launch_closed_forms(cudaStream_t, const batch_view<double> &, const table_task *, size_t)
{
    return cudaSuccess;
}

size_t aligned(size_t bytes) { return (bytes + 255) & ~(size_t)255; }
size_t at_least_one(size_t x) { return x > 0 ? x : 1; }
size_t smaller(size_t x, size_t y) { return x < y ? x : y; }

#ifdef __CUDACC__ /* (not in the emulation, which has its own WW_TED_LAUNCH_OVERLAPPED) */
/* kernel<<<grid, threads, shared, stream>>>(args), allowed to start before the kernel before it
 * in the stream ends: as soon as all of that one's blocks have started (they signal it first
 * thing, griddepcontrol.launch_dependents); its reads of what that kernel writes wait by
 * themselves (td_ready) */
template <typename... P, typename... A>
cudaError_t launch_overlapped(void (*kernel)(P...), unsigned grid, unsigned threads, size_t shared,
                              cudaStream_t stream, A... args)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, kernel, args...);
}
#endif

/* A worker of the host's plan as an item of the CPU threading layer (src/cpu/work_queue.h), whose
 * threads persist between calls: starting a thread per worker and pass cost the matrix of the ten
 * 1000-node trees about a millisecond a pass on a 16-core host (bench/results/gpu-ted.md, eleventh
 * session). Exceptions stay on this side of the C layer. */
template <typename F> ww_status plan_worker(void *job, size_t w, ww_cpu_scratch *, uint64_t *cells)
{
    *cells = 0;
    try {
        (*(F *)job)(w);
        return WW_OK;
    } catch (...) {
        return WW_ERR_MEMORY;
    }
}

/* Computes every pair of the batch in tables of T (int32_t: exact, costs scaled by 1 / unit);
 * out[k]: the distance of pair k. */
template <typename T>
ww_status run_batch(ww_ctx *ctx, const batch &bt, T del, T ins, T ren, double unit, const ww_ted_gpu_thresholds *limits,
                    double *out)
{
    ww_cuda_state *s = ctx->cuda;
    const int threads = ctx->num_threads;
    const bool exact = sizeof(T) == sizeof(int32_t);
    const size_t pairs = bt.meta.size();
    if (pairs == 0)
        return WW_OK;
    if (bt.label.size() > (size_t)INT32_MAX || bt.tables > (size_t)INT32_MAX)
        return WW_ERR_TREE_SIZE;
    if (depth_shared_bytes<T>() > s->smem_optin) /* a GPU with less shared memory than an H100's */
        return WW_ERR_UNSUPPORTED;
    /* an exact pair's keyroots of one or two nodes are closed forms, not tables */
    auto tabled = [&](const keyroot &k) { return !exact || k.size > 2; };
    int depths = 1;
    for (size_t k = 0; k < pairs; k++) {
        int la = 0, lb = 0;
        for (const keyroot &r : bt.keyroots_a[k])
            la = tabled(r) && r.level + 1 > la ? r.level + 1 : la;
        for (const keyroot &r : bt.keyroots_b[k])
            lb = tabled(r) && r.level + 1 > lb ? r.level + 1 : lb;
        depths = la + lb - 1 > depths ? la + lb - 1 : depths;
    }
    /* the tables by key = 4 depth + role (0 multi-block, 1 block, 2 warp, 3 thread), a counting
     * sort by runs, not by tables (a matrix has millions): per pair, B's tabled keyroots by level and
     * by size within a level, so that one keyroot u of A against one level of B is four runs of
     * tables, thread, warp, block and multi-block, split by three binary searches (the cells grow
     * with the size). The runs are counted, then their tables written straight into the upload. */
    const int keys = 4 * depths;
    std::vector<size_t> start((size_t)keys + 1, 0), slot((size_t)keys, 0);
    /* The split of the keyroots and the two passes over the runs (count, then write) run on several
     * workers when the batch is large (PLAN_TABLES_PER_WORKER): a matrix's plan is hundreds of
     * thousands of tables, several ms on one core (bench/ted_host_plan.sh), and so is a very large
     * pair's. The split takes ranges of pairs, pair_at[w] .. pair_at[w + 1] - 1; the passes
     * take ranges of A's tabled keyroots over all pairs in order (one pair's are many), units
     * unit_at_worker[w] .. unit_at_worker[w + 1] - 1. The counts per worker place each worker's tasks
     * where one pass in order would have put them, so the upload is the same whatever the workers. */
    const size_t workers = smaller(smaller((size_t)(threads > 0 ? threads : 1), PLAN_MAX_WORKERS),
                                   1 + bt.tables / PLAN_TABLES_PER_WORKER);
    /* the split's workers: no more than the pairs (one large pair: one worker, no idle region) */
    const size_t split_workers = smaller(workers, pairs);
    std::vector<size_t> pair_at(split_workers + 1);
    for (size_t w = 0; w <= split_workers; w++)
        pair_at[w] = pairs * w / split_workers;
    /* body(w) for w < count, on the CPU threading layer */
    auto in_parallel = [&](size_t count, auto body) {
        if (count == 1)
            return body(0);
        ww_pairwise_options quiet = ww_pairwise_options_default();
        if (ww_cpu_run_items(ctx, (int)count, count, 0, &quiet, NULL, plan_worker<decltype(body)>, &body) != WW_OK)
            throw std::bad_alloc();
    };
    std::vector<std::vector<keyroot>> big_a(pairs), big_b(pairs);
    std::vector<std::vector<size_t>> level_at(pairs); /* B's level l: big_b[k][level_at[l] ..] */
    in_parallel(split_workers, [&](size_t w) {
        for (size_t k = pair_at[w]; k < pair_at[w + 1]; k++) {
            for (const keyroot &r : bt.keyroots_a[k])
                if (tabled(r))
                    big_a[k].push_back(r);
            int levels_b = 0;
            for (const keyroot &r : bt.keyroots_b[k])
                if (tabled(r)) {
                    big_b[k].push_back(r);
                    levels_b = r.level + 1 > levels_b ? r.level + 1 : levels_b;
                }
            std::sort(big_b[k].begin(), big_b[k].end(), [](const keyroot &x, const keyroot &y) {
                return x.level != y.level ? x.level < y.level : x.size != y.size ? x.size < y.size : x.node < y.node;
            });
            level_at[k].assign((size_t)levels_b + 1, 0);
            for (const keyroot &r : big_b[k])
                level_at[k][(size_t)r.level + 1]++;
            for (int l = 0; l < levels_b; l++)
                level_at[k][(size_t)l + 1] += level_at[k][(size_t)l];
        }
    });
    std::vector<table_task> closed; /* the keyroots that are closed forms, in pair order, A's first */
    for (size_t k = 0; k < pairs; k++) {
        for (const keyroot &r : bt.keyroots_a[k])
            if (!tabled(r))
                closed.push_back(table_task{(int)k, r.node, 0, 1});
        for (const keyroot &r : bt.keyroots_b[k])
            if (!tabled(r))
                closed.push_back(table_task{(int)k, r.node, 1, 1});
    }
    /* the passes' units: A's tabled keyroots of all pairs in order, pair k's from unit_at[k] on */
    std::vector<size_t> unit_at(pairs + 1, 0), unit_at_worker(workers + 1);
    for (size_t k = 0; k < pairs; k++)
        unit_at[k + 1] = unit_at[k] + big_a[k].size();
    for (size_t w = 0; w <= workers; w++)
        unit_at_worker[w] = unit_at[pairs] * w / workers;
    /* calls run(k, u, key, first, end, largest cells) for every nonempty run of units q0 .. q1 - 1 */
    auto for_each_run = [&](size_t q0, size_t q1, auto run) {
        size_t k = (size_t)(std::upper_bound(unit_at.begin(), unit_at.end(), q0) - unit_at.begin()) - 1;
        for (size_t q = q0; q < q1; q++) {
            while (q >= unit_at[k + 1])
                k++;
            const std::vector<keyroot> &bk = big_b[k];
            const size_t levels_b = level_at[k].size() - 1;
            const keyroot &u = big_a[k][q - unit_at[k]];
            for (size_t lb = 0; lb < levels_b; lb++) {
                const size_t lo = level_at[k][lb], hi = level_at[k][lb + 1];
                if (lo == hi)
                    continue;
                const size_t su = (size_t)u.size + 1;
                auto cells = [&](size_t v) { return su * ((size_t)bk[v].size + 1); };
                /* the first table from `from` on over `limit` cells (sizes grow along the level) */
                auto first_over = [&](size_t from, size_t limit) {
                    for (size_t n = hi - from; n > 0;) {
                        const size_t half = n / 2;
                        if (cells(from + half) <= limit)
                            from += half + 1, n -= half + 1;
                        else
                            n = half;
                    }
                    return from;
                };
                const size_t thread_end = first_over(lo, limits->thread_cells);
                const size_t warp_end = first_over(thread_end, limits->warp_cells);
                const size_t block_end = first_over(warp_end, limits->block_cells);
                const size_t depth_key = 4 * ((size_t)u.level + lb);
                if (thread_end > lo)
                    run(k, u, depth_key + 3, lo, thread_end, cells(thread_end - 1));
                if (warp_end > thread_end)
                    run(k, u, depth_key + 2, thread_end, warp_end, cells(warp_end - 1));
                if (block_end > warp_end)
                    run(k, u, depth_key + 1, warp_end, block_end, cells(block_end - 1));
                if (hi > block_end)
                    run(k, u, depth_key, block_end, hi, cells(hi - 1));
            }
        }
    };
    /* the thread strategy's runs split into tasks of at most run_cells cells (at least a table) */
    const size_t run_cells = pairs > 1 ? THREAD_RUN_CELLS : 0;
    auto for_each_task = [&](size_t k, const keyroot &u, size_t first, size_t end, auto task) {
        const size_t su = (size_t)u.size + 1;
        size_t at = first, cells = 0;
        for (size_t v = first; v < end; v++) {
            const size_t c = su * ((size_t)big_b[k][v].size + 1);
            if (v > at && cells + c > run_cells) {
                task(at, v);
                at = v, cells = 0;
            }
            cells += c;
        }
        task(at, end);
    };
    /* a multi-block table's bands: TILE rows each, of its rows as table_of orients it */
    auto bands_of = [&](const keyroot &u, const keyroot &v) {
        const size_t rows = (size_t)(exact && u.size > v.size ? v.size : u.size);
        return (rows + TILE - 1) / TILE;
    };
    struct multi_found {
        size_t key, cells, bands;
        table_task task;
    };
    struct worker_counts {
        std::vector<size_t> tasks, slot; /* per key */
        std::vector<multi_found> multi;  /* in the order of the runs (few: the largest tables) */
    };
    std::vector<worker_counts> counted(workers);
    in_parallel(workers, [&](size_t w) {
        worker_counts &c = counted[w];
        c.tasks.assign((size_t)keys, 0);
        c.slot.assign((size_t)keys, 0);
        for_each_run(unit_at_worker[w], unit_at_worker[w + 1],
                     [&](size_t k, const keyroot &u, size_t key, size_t first, size_t end, size_t largest) {
                         if (key % 4 == 0)
                             for (size_t v = first; v < end; v++) {
                                 const keyroot &b = big_b[k][v];
                                 c.multi.push_back(multi_found{key, ((size_t)u.size + 1) * ((size_t)b.size + 1),
                                                               bands_of(u, b), table_task{(int)k, u.node, b.node, 1}});
                             }
                         if (key % 4 == 3)
                             for_each_task(k, u, first, end, [&](size_t, size_t) { c.tasks[key]++; });
                         else
                             c.tasks[key] += end - first;
                         /* a block or warp sweep may lay its table out by anti-diagonals: twice the
                          * cells (the multi-block tables have their own slots, below) */
                         const size_t need = key % 4 == 3 ? largest : key % 4 == 0 ? 0 : 2 * largest;
                         c.slot[key] = need > c.slot[key] ? need : c.slot[key];
                     });
    });
    std::vector<multi_found> multi_found_list; /* in the order of the runs */
    for (const worker_counts &c : counted) {
        for (int k = 0; k < keys; k++) {
            start[(size_t)k + 1] += c.tasks[(size_t)k];
            slot[(size_t)k] = c.slot[(size_t)k] > slot[(size_t)k] ? c.slot[(size_t)k] : slot[(size_t)k];
        }
        multi_found_list.insert(multi_found_list.end(), c.multi.begin(), c.multi.end());
    }
    for (int k = 0; k < keys; k++)
        start[(size_t)k + 1] += start[(size_t)k];
    const size_t task_count = start[(size_t)keys];
    /* the multi-block tables: record q of depth d is its task start[4 d] + (q - multi_at[d]) */
    std::vector<size_t> multi_at((size_t)depths + 1, 0);
    for (int d = 0; d < depths; d++)
        multi_at[(size_t)d + 1] = multi_at[(size_t)d] + start[4 * (size_t)d + 1] - start[4 * (size_t)d];
    const size_t multi_count = multi_at[(size_t)depths];
    /* their records by depth, then grouped within the slot budget; a band's counter: its index
     * among all bands of the batch */
    std::vector<multi_table> multi(multi_count);
    std::vector<size_t> multi_cells(multi_count), multi_bands(multi_count);
    {
        std::vector<size_t> cursor(multi_at.begin(), multi_at.end() - 1);
        for (const multi_found &f : multi_found_list) {
            const size_t q = cursor[f.key / 4]++;
            multi[q].task = f.task;
            multi_cells[q] = f.cells;
            multi_bands[q] = f.bands;
        }
    }
    std::vector<multi_group> groups;
    size_t all_bands = 0, multi_slot_entries = 0;
    const size_t group_cells = MULTI_SLOT_BYTES / sizeof(T);
    for (int d = 0; d < depths; d++)
        for (size_t q = multi_at[(size_t)d]; q < multi_at[(size_t)d + 1]; q++) {
            if (q == multi_at[(size_t)d] || groups.back().cells + multi_cells[q] > group_cells)
                groups.push_back(multi_group{q, 0, 0, 0});
            multi_group &g = groups.back();
            if (all_bands + multi_bands[q] > (size_t)INT32_MAX || g.cells + multi_cells[q] < g.cells)
                return WW_ERR_TREE_SIZE;
            multi[q].fd = g.cells;
            multi[q].first_band = (int)g.bands;
            multi[q].progress = (int)all_bands;
            g.count++;
            g.bands += multi_bands[q];
            g.cells += multi_cells[q];
            all_bands += multi_bands[q];
            multi_slot_entries = g.cells > multi_slot_entries ? g.cells : multi_slot_entries;
        }

    /* each depth's launch: units per role within the role's slot budget, as many as the GPU holds;
     * slots and tasks as offsets until the buffers are known */
    const size_t sms = (size_t)s->sm_count;
    std::vector<depth_plan> plans((size_t)depths);
    std::vector<size_t> role_entries((size_t)depths);
    size_t slot_entries = 0;
    for (int d = 0; d < depths; d++) {
        depth_plan &w = plans[(size_t)d];
        const size_t *at = &start[4 * (size_t)d + 1], *cells = &slot[4 * (size_t)d + 1];
        const size_t count[3] = {at[1] - at[0], at[2] - at[1], at[3] - at[2]};
        const size_t units[3] = {
            smaller(smaller(count[0], 4 * sms), at_least_one(BLOCK_SLOT_BYTES / (at_least_one(cells[0]) * sizeof(T)))),
            smaller(smaller(count[1], 64 * sms), at_least_one(WARP_SLOT_BYTES / (at_least_one(cells[1]) * sizeof(T)))),
            smaller(smaller(count[2], 2048 * sms), at_least_one(THREAD_SLOT_BYTES / (at_least_one(cells[2]) * sizeof(T))))};
        w.task_at = at[0];
        for (int r = 0; r < 3; r++)
            w.count[r] = count[r], w.cells[r] = cells[r];
        w.units[0] = units[0], w.units[1] = units[1], w.units[2] = units[2];
        w.blocks[0] = units[0];
        w.blocks[1] = (units[1] + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
        w.blocks[2] = (units[2] + BLOCK_THREADS - 1) / BLOCK_THREADS;
        w.slot_at[0] = 0;
        w.slot_at[1] = w.blocks[0] * cells[0];
        w.slot_at[2] = w.slot_at[1] + units[1] * cells[1];
        const size_t end = w.slot_at[2] + units[2] * cells[2];
        role_entries[(size_t)d] = end;
        slot_entries = end > slot_entries ? end : slot_entries;
    }
    for (size_t g = 0, d = 0; g < groups.size(); g++) {
        while (multi_at[d + 1] <= groups[g].first)
            d++;
        if (plans[d].groups++ == 0)
            plans[d].first_group = g;
    }
    /* The depths overlap (programmatic dependent launch, on GPUs of compute capability 9.0 on): a
     * depth's launch starts once every block of the launch before it has started, and a read of a
     * td entry not yet written waits for it (td_ready; td is set to the unwritten mark first). A
     * table waits only on tables of smaller depths, of launches whose blocks have all started, so
     * every wait is met whatever the residency. Why: the deep depths are few large tables, each
     * depth waiting for its slowest table, and their sweeps can run staggered instead (the
     * 1000-node pair: depths 5 to 8 took 389, 235, 230 and 609 us one after the other; the roots'
     * table reads entries of depth 7 from its 14th anti-diagonal on, but each as soon as written).
     * Launches that may run together need forest slots of their own: each launch's after the
     * other's, within OVERLAP_SLOT_BYTES and when the GPU has the memory; else one set shared by
     * all: the roles' at 0, the multi-block groups' after the largest. */
    std::vector<size_t> role_base((size_t)depths, 0), group_base(groups.size(), slot_entries);
    std::vector<size_t> own_role((size_t)depths), own_group(groups.size());
    const size_t shared_entries = slot_entries + multi_slot_entries;
    size_t own_entries = 0;
    for (size_t d = 0, g = 0; d < (size_t)depths; d++) {
        own_role[d] = own_entries;
        own_entries += role_entries[d];
        for (; g < groups.size() && g < plans[d].first_group + plans[d].groups; g++) {
            own_group[g] = own_entries;
            own_entries += groups[g].cells;
        }
    }
    bool overlap = WW_TED_OVERLAP_DEPTHS && s->programmatic_launch && (depths > 1 || groups.size() > 1) &&
                   own_entries <= OVERLAP_SLOT_BYTES / sizeof(T);
    /* the failed flag, per group its queue's counter, then per band its progress: zeros, at the end
     * of the upload (no separate memset: one operation fewer per call) */
    const size_t counters_bytes = aligned((1 + groups.size() + all_bands) * sizeof(int)); /* the first: failed */

    /* device memory: two of the context's grow-only buffers, kept for the next call, whose
     * contents no other engine expects to find again (`work` is left alone: the wavefront engine
     * keeps hand-over records there): td, forest tables and results in `prepared`; trees, pairs and
     * tasks in `input`, uploaded in one copy from the pinned staging buffer */
    const size_t td_bytes = aligned(bt.td_entries * sizeof(T));
    size_t slot_bytes = aligned((overlap ? own_entries : shared_entries) * sizeof(T));
    size_t sorted_count = 0;
    for (size_t k = 0; k < pairs; k++)
        sorted_count += big_b[k].size();
    const size_t ints_bytes = aligned((2 * bt.label.size() + sorted_count) * sizeof(int32_t));
    const size_t meta_bytes = aligned(pairs * sizeof(pair_meta));
    const size_t closed_bytes = aligned(closed.size() * sizeof(table_task));
    const size_t tasks_bytes = aligned(task_count * sizeof(table_task));
    const size_t counters_at =
        aligned(ints_bytes + meta_bytes + closed_bytes + tasks_bytes + multi_count * sizeof(multi_table));
    const size_t upload = counters_at + counters_bytes;
    const size_t results_bytes = (pairs + 1) * sizeof(double); /* and the failed flag */
    ww_status st = ww_device_reserve(&s->prepared, td_bytes + slot_bytes + results_bytes);
    if (st != WW_OK && overlap) { /* the depths one after the other fit in less */
        overlap = false;
        slot_bytes = aligned(shared_entries * sizeof(T));
        st = ww_device_reserve(&s->prepared, td_bytes + slot_bytes + results_bytes);
    }
    if (overlap) {
        role_base.swap(own_role);
        group_base.swap(own_group);
    }
    if (st == WW_OK)
        st = ww_device_reserve(&s->input, upload);
    if (st == WW_OK)
        st = ww_pinned_reserve(&s->pinned, &s->pinned_bytes, upload > results_bytes ? upload : results_bytes);
    if (st != WW_OK)
        return st;
    char *staged = (char *)s->pinned;
    memcpy(staged, bt.label.data(), bt.label.size() * sizeof(int32_t));
    memcpy(staged + bt.label.size() * sizeof(int32_t), bt.leftmost.data(), bt.leftmost.size() * sizeof(int32_t));
    {
        int32_t *sorted = (int32_t *)staged + 2 * bt.label.size();
        pair_meta *meta = (pair_meta *)(staged + ints_bytes);
        memcpy(meta, bt.meta.data(), pairs * sizeof(pair_meta));
        for (size_t k = 0, at = 0; k < pairs; k++) {
            meta[k].sorted_b = (int)at;
            for (const keyroot &r : big_b[k])
                sorted[at++] = r.node;
        }
    }
    if (!closed.empty())
        memcpy(staged + ints_bytes + meta_bytes, closed.data(), closed.size() * sizeof(table_task));
    char *input = (char *)s->input.ptr;
    const multi_table *dmulti = (const multi_table *)(input + ints_bytes + meta_bytes + closed_bytes + tasks_bytes);
    int *counters = (int *)(input + counters_at); /* the first: failed */
    const table_task *dclosed = (const table_task *)(input + ints_bytes + meta_bytes);
    const table_task *dtasks = (const table_task *)(input + ints_bytes + meta_bytes + closed_bytes);
    T *slots = (T *)((char *)s->prepared.ptr + td_bytes);
    double *results = (double *)((char *)s->prepared.ptr + td_bytes + slot_bytes);
    batch_view<T> view;
    view.td = (T *)s->prepared.ptr;
    view.label = (const int32_t *)input;
    view.leftmost = (const int32_t *)input + bt.label.size();
    view.sorted_b = (const int32_t *)input + 2 * bt.label.size();
    view.meta = (const pair_meta *)(input + ints_bytes);
    view.del = del, view.ins = ins, view.ren = ren;
    /* the upload in two parts when there are many tasks: the trees and closed forms first, whose
     * kernel then runs while the tasks are written (the matrix's closed forms take about 1.5 ms,
     * its tasks about as long to write; a small batch's are not worth a second copy) */
    const size_t trees_part = ints_bytes + meta_bytes + closed_bytes;
    const size_t first_copy = task_count >= TWO_PART_UPLOAD_TASKS ? trees_part : 0;
    cudaError_t e = overlap ? cudaMemsetAsync(view.td, 0xff, td_bytes, s->stream) : cudaSuccess;
    if (e == cudaSuccess && first_copy) {
        e = cudaMemcpyAsync(input, staged, first_copy, cudaMemcpyHostToDevice, s->stream);
        if (e == cudaSuccess && !closed.empty())
            e = launch_closed_forms(s->stream, view, dclosed, closed.size());
    }
    {
        table_task *staged_tasks = (table_task *)(staged + trees_part);
        in_parallel(workers, [&](size_t w) {
            /* worker w's first task of each key: after the key's tasks of the workers before it */
            std::vector<size_t> at(start.begin(), start.end() - 1);
            for (size_t before = 0; before < w; before++)
                for (int k = 0; k < keys; k++)
                    at[(size_t)k] += counted[before].tasks[(size_t)k];
            for_each_run(unit_at_worker[w], unit_at_worker[w + 1], [&](size_t k, const keyroot &u, size_t key, size_t first, size_t end, size_t) {
                if (key % 4 == 0) /* multi-block: its records instead (their places left unused) */
                    return;
                if (key % 4 == 3) {
                    for_each_task(k, u, first, end, [&](size_t from, size_t to) {
                        staged_tasks[at[key]++] = table_task{(int)k, u.node, (int)from, (int)(to - from)};
                    });
                    return;
                }
                table_task *to = staged_tasks + at[key];
                for (size_t v = first; v < end; v++)
                    *to++ = table_task{(int)k, u.node, big_b[k][v].node, 1};
                at[key] += end - first;
            });
        });
    }
    if (multi_count)
        memcpy(staged + ints_bytes + meta_bytes + closed_bytes + tasks_bytes, multi.data(),
               multi_count * sizeof(multi_table));
    memset(staged + counters_at, 0, counters_bytes);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(input + first_copy, staged + first_copy, upload - first_copy, cudaMemcpyHostToDevice,
                            s->stream);
    if (e == cudaSuccess && !first_copy && !closed.empty())
        e = launch_closed_forms(s->stream, view, dclosed, closed.size());
    /* the multi-block role's blocks: enough warps for the bands, at most one block per SM when
     * other roles' blocks share the launch (they fill the rest), as many as are resident alone (a
     * block that waits for a resident one to leave would find the queue empty; the queue needs
     * no residency either way) */
    if (e == cudaSuccess) /* over 48 KiB of dynamic shared memory: asked for */
        e = cudaFuncSetAttribute(depth_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)depth_shared_bytes<T>());
    bool first_launch = true;
    for (int d = 0; d < depths && e == cudaSuccess; d++) {
        const depth_plan &w = plans[(size_t)d];
        /* the first launch of the depth has its other roles and its first multi-block group */
        for (size_t g = 0; g < (w.groups ? w.groups : 1) && e == cudaSuccess; g++) {
            depth_work<T> work;
            memset(&work, 0, sizeof work);
            work.multi.failed = counters; /* (every role's waits) */
            if (w.groups) {
                const multi_group &mg = groups[w.first_group + g];
                work.multi.tables = dmulti + mg.first;
                work.multi.table_count = (int)mg.count;
                work.multi.bands = (int)mg.bands;
                const bool alone = g > 0 || w.count[0] + w.count[1] + w.count[2] == 0;
                work.multi.blocks = (int)smaller((mg.bands + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK,
                                                 (alone ? (size_t)BLOCKS_PER_SM : 1) * sms);
                work.multi.slots = slots + group_base[w.first_group + g];
                work.multi.queue = counters + 1 + w.first_group + g;
                work.multi.progress = counters + 1 + groups.size();
            }
            work.tasks = dtasks + w.task_at;
            if (g == 0) {
                work.block_tasks = (int)w.count[0], work.warp_tasks = (int)w.count[1];
                work.thread_tasks = (int)w.count[2];
                work.block_blocks = (int)w.blocks[0], work.warp_blocks = (int)w.blocks[1];
                work.warp_units = (int)w.units[1], work.thread_units = (int)w.units[2];
                T *const role_slots = slots + role_base[(size_t)d];
                work.block_slots = role_slots + w.slot_at[0], work.warp_slots = role_slots + w.slot_at[1];
                work.thread_slots = role_slots + w.slot_at[2];
                work.block_slot = w.cells[0], work.warp_slot = w.cells[1], work.thread_slot = w.cells[2];
            }
            const size_t grid = (size_t)work.multi.blocks + (size_t)work.block_blocks + (size_t)work.warp_blocks +
                                (g == 0 ? w.blocks[2] : 0);
            if (grid == 0)
                continue;
            bool launched = false;
            if (overlap && !first_launch) {
                launched = WW_TED_LAUNCH_OVERLAPPED(depth_kernel<T>, (unsigned)grid, (unsigned)BLOCK_THREADS,
                                                    depth_shared_bytes<T>(), s->stream, view, work) == cudaSuccess;
                if (!launched) /* a driver that refuses it: the plain launch (the same values) */
                    cudaGetLastError();
            }
            if (!launched)
                WW_TED_LAUNCH(depth_kernel<T>, (unsigned)grid, (unsigned)BLOCK_THREADS, depth_shared_bytes<T>(),
                              s->stream, view, work);
            e = cudaGetLastError();
            first_launch = false;
        }
    }
    if (e == cudaSuccess) {
        WW_TED_LAUNCH(roots_kernel<T>, (unsigned)((pairs + 127) / 128), 128u, 0, s->stream, view, (int)pairs, unit,
                      (const int *)counters, results);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(staged, results, results_bytes, cudaMemcpyDeviceToHost, s->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess)
        return ww_cuda_status(e);
    if (((const double *)staged)[pairs] != 0)
        return WW_ERR_CUDA;
    memcpy(out, staged, pairs * sizeof(double));
    return WW_OK;
}

/* A batch in exact int32 tables when the costs allow it for its largest pair (the CPU's rule; the
 * values are the same either way), else in doubles. */
ww_status run_batch_costs(ww_ctx *ctx, const batch &bt, const ww_ted_params *p, const ww_ted_gpu_thresholds *limits,
                          double *out)
{
    int32_t del, ins, ren;
    double unit;
    if (ww_ted_exact_costs(p->delete_cost, p->insert_cost, p->relabel_cost, bt.largest_sum, 0, &del, &ins, &ren, &unit))
        return run_batch<int32_t>(ctx, bt, del, ins, ren, unit, limits, out);
    return run_batch<double>(ctx, bt, p->delete_cost, p->insert_cost, p->relabel_cost, 1.0, limits, out);
}

} // namespace

ww_status ww_cuda_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                      const ww_ted_gpu_thresholds *limits, double *out)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    if (a->count == 0 || b->count == 0) {
        *out = a->count == 0 ? sum_of(b->count, p->insert_cost) : sum_of(a->count, p->delete_cost);
        return WW_OK;
    }
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st;
    try {
        batch bt;
        bt.add(prepared_tree(a), prepared_tree(b));
        st = run_batch_costs(ctx, bt, p, limits, out);
    } catch (...) { /* std::bad_alloc of the host vectors */
        st = WW_ERR_MEMORY;
    }
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}

ww_status ww_cuda_ted_pairwise(ww_ctx *ctx, const ww_tree *x, const ww_tree *y, const ww_ted_params *p,
                               const ww_ted_gpu_thresholds *limits, void *out, const ww_pairwise_options *o)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    const int self = y == NULL;
    const ww_tree *cols = self ? x : y;
    const int mirror = self && p->delete_cost == p->insert_cost;
    /* the entries to compute, in row-major order; a mirrored one is copied afterwards */
    auto computed = [&](size_t i, size_t j) {
        if (self && i == j)
            return false;
        const bool mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
        return !(mirror && mirror_in_block && j < i);
    };
    auto store = [&](size_t i, size_t j, double d) {
        const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
        if (o->out_dtype == WW_F32)
            ((float *)out)[at] = (float)d;
        else
            ((double *)out)[at] = d;
    };
    uint64_t total = 0, done = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++)
            if (computed(i, j))
                total += (uint64_t)(x[i].count * cols[j].count > 0 ? x[i].count * cols[j].count : 1);
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = WW_OK;
    try {
        /* batches of pairs within the td and table budgets, computed together */
        batch bt;
        std::vector<size_t> rows_of, cols_of;
        std::vector<double> results;
        auto flush = [&]() {
            results.resize(bt.meta.size());
            ww_status r = run_batch_costs(ctx, bt, p, limits, results.data());
            if (r != WW_OK)
                return r;
            for (size_t k = 0; k < results.size(); k++) {
                store(rows_of[k], cols_of[k], results[k]);
                done += (uint64_t)x[rows_of[k]].count * cols[cols_of[k]].count;
            }
            bt.clear();
            rows_of.clear();
            cols_of.clear();
            if (o->progress && o->progress(done, total, o->progress_user))
                return WW_ERR_CANCELLED;
            return WW_OK;
        };
        /* each tree prepared once: a row's for its row, the columns' kept for all rows while
         * they stay within PREPARED_CACHE_BYTES (else prepared per pair) */
        std::vector<std::unique_ptr<prepared_tree>> col_prepared(o->col_end - o->col_begin);
        size_t cached = 0;
        for (size_t i = o->row_begin; i < o->row_end && st == WW_OK; i++) {
            std::unique_ptr<prepared_tree> row_prepared;
            for (size_t j = o->col_begin; j < o->col_end && st == WW_OK; j++) {
                if (!computed(i, j))
                    continue;
                const ww_tree *a = &x[i], *b = &cols[j];
                if (a->count == 0 || b->count == 0) {
                    store(i, j, a->count == 0 ? sum_of(b->count, p->insert_cost) : sum_of(a->count, p->delete_cost));
                    done++;
                    continue;
                }
                const size_t td = a->count * b->count + (a->count + b->count) * a->count; /* both layouts */
                /* in the batch's cell type: int32 while its largest pair stays exact (the rule of
                 * run_batch_costs; a larger pair can only end it). Counted as doubles, the matrix
                 * of the ten 1000-node trees made a second batch of its last pair, a pair's whole
                 * critical path more (bench/results/gpu-ted.md, eleventh session). */
                const size_t sum = a->count + b->count > bt.largest_sum ? a->count + b->count : bt.largest_sum;
                int32_t unused_cost;
                double unused_unit;
                const size_t cell = ww_ted_exact_costs(p->delete_cost, p->insert_cost, p->relabel_cost, sum, 0,
                                                       &unused_cost, &unused_cost, &unused_cost, &unused_unit)
                                        ? sizeof(int32_t)
                                        : sizeof(double);
                if (!bt.meta.empty() && ((bt.td_entries + td) * cell > BATCH_TD_BYTES ||
                                         bt.tables + a->count * b->count > BATCH_TABLES))
                    st = flush();
                if (st != WW_OK)
                    break;
                if (!row_prepared)
                    row_prepared.reset(new prepared_tree(a));
                std::unique_ptr<prepared_tree> &column = col_prepared[j - o->col_begin];
                std::unique_ptr<prepared_tree> once;
                if (!column && cached + 14 * b->count * sizeof(int32_t) <= PREPARED_CACHE_BYTES) {
                    column.reset(new prepared_tree(b));
                    cached += column->storage.size() * sizeof(int32_t);
                }
                if (!column)
                    once.reset(new prepared_tree(b));
                bt.add(*row_prepared, column ? *column : *once);
                rows_of.push_back(i);
                cols_of.push_back(j);
            }
        }
        if (st == WW_OK)
            st = flush();
    } catch (...) {
        st = WW_ERR_MEMORY;
    }
    if (st == WW_OK && self) { /* mirrored entries and the diagonal */
        for (size_t i = o->row_begin; i < o->row_end; i++)
            for (size_t j = o->col_begin; j < o->col_end; j++)
                if (i == j)
                    store(i, j, 0);
                else if (!computed(i, j))
                    store(i, j,
                          o->out_dtype == WW_F32
                              ? (double)((float *)out)[(j - o->row_begin) * o->out_stride + (i - o->col_begin)]
                              : ((double *)out)[(j - o->row_begin) * o->out_stride + (i - o->col_begin)]);
    }
    if (st == WW_OK && o->progress && o->progress(total, total, o->progress_user))
        st = WW_ERR_CANCELLED;
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}
