/* Kernels of the one-pair engines, templates over the measure functor M (measure.cuh); the tile
 * choice, launches and copies are pair.cu's.
 *
 *  diagonal   - the ITWED paper's scheme (what cuTWED does): three anti-diagonal buffers in global
 *               memory cycled by pointer, one kernel launch per anti-diagonal. Baseline only.
 *  wavefront  - the rows are cut into bands of 128*R rows, one thread block of 4 warps per band. A
 *               thread owns R consecutive rows and sweeps the columns in blocks of C, computing an
 *               R x C tile of the matrix in registers per step. Tiles pass down between lanes by
 *               warp shuffles, between warps through shared memory (a barrier every few steps), and
 *               between bands through one row buffer in global memory whose values carry a check of
 *               the band and call that wrote them, so the whole matrix is one launch and nothing
 *               waits on the host. Bands are taken in order from an atomic counter: a band only ever
 *               waits for an earlier band, which is already running, so any grid size is
 *               deadlock-free; the blocks that share a multiprocessor take their first bands a
 *               round of multiprocessors apart, so that consecutive bands run on distinct ones.
 *               With a window (WIN) a band sweeps only the column blocks its rows' windows reach,
 *               and cells outside a row's window are +inf.
 */
#ifndef WW_CUDA_PAIR_KERNELS_CUH
#define WW_CUDA_PAIR_KERNELS_CUH

#include "prepare.cuh"

#include <type_traits>

#define FULL_MASK 0xffffffffu

#define WAVEFRONT_SM_SLOTS 256 /* counters of a call's blocks per multiprocessor (%smid, folded) */

/* A call's result and its state on the device. It travels to the device with the input series, in
 * the same copy: value NaN (the poison: an engine that fails to write it is caught), no flags, the
 * band dispenser at 0, no blocks counted. */
struct pair_result {
    double value;
    int flags;
    unsigned next_band;                   /* the wavefront engine's band dispenser */
    unsigned sm_blocks[WAVEFRONT_SM_SLOTS]; /* its blocks so far on each multiprocessor (spread) */
};

/* ------------------------------------------------------------------------------------------ */
/* Baseline: one launch per anti-diagonal (the paper's algorithm as written).                  */
/* ------------------------------------------------------------------------------------------ */

template <class M, typename T>
__device__ __forceinline__ T diagonal_local(const M &m, const device_series<T> &a, const device_series<T> &b, size_t i,
                                            size_t j)
{
    return m.local(a.values + i * a.dim, b.values + j * b.dim, a.dim, a.stamps[i], b.stamps[j]);
}

/* D[i][j] from diagonals z1 (d-1) and z2 (d-2), all indexed by row. */
template <class M, typename T>
__device__ __forceinline__ T diagonal_cell(const M &m, const device_series<T> &a, const device_series<T> &b, size_t i,
                                           size_t j, const T *z1, const T *z2)
{
    if (i == 0 || j == 0)
        return infinity_of<T>();
    return M::cell(z1[i - 1], z1[i], z2[i - 1], a.delete_cost[i], b.delete_cost[j], diagonal_local(m, a, b, i, j),
                   diagonal_local(m, a, b, i - 1, j - 1));
}

template <class M, typename T>
__global__ void diagonal_kernel(device_series<T> a, device_series<T> b, M m, size_t d, size_t lo, size_t hi,
                                const T *z1, const T *z2, T *z0)
{
    size_t i = lo + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i <= hi)
        z0[i] = diagonal_cell(m, a, b, i, d - i, z1, z2);
}

template <typename T> __global__ void diagonal_start_kernel(T *z1) { z1[0] = 0; }

template <typename T> __global__ void diagonal_finish_kernel(const T *z, size_t i, pair_result *r)
{
    r->value = (double)z[i];
}

/* ------------------------------------------------------------------------------------------ */
/* The wavefront engine: register tiles, one thread block per band of rows.                    */
/* ------------------------------------------------------------------------------------------ */

#define WAVEFRONT_WARPS 4 /* one warp per scheduler of a multiprocessor; a band has 128 * R rows */
#define WAVEFRONT_THREADS (32 * WAVEFRONT_WARPS)
/* A lane runs LAG steps behind the lane above (the tile above it was computed LAG steps before),
 * and a warp 31 LAG + SYNC steps behind the warp above, SYNC being the steps between two block
 * barriers (template parameters: small tiles want rarer barriers). The lanes' bottom rows wait in
 * a ring of 2 * SYNC steps: lane 0 of the warp below reads lane 31's SYNC steps after they were
 * written, and the slot is written again SYNC steps after that, past a barrier. */
#define XFER_SLOTS(sync) (2 * (sync))
/* steps from a band's top thread to its bottom one (see WARP_SKEW) */
#define WAVEFRONT_LAST_SKEW(sync, lag) ((WAVEFRONT_WARPS - 1) * (31 * (lag) + (sync)) + 31 * (lag))
/* blocks of the row above the band fetched at a time: a stage of 16 is fetched a stage ahead and
 * checked half a stage later (SYNC < 16), or fetched an interval ahead and checked just before use
 * (SYNC = 16) */
#define TOP_STAGE 16
#define TOP_SLOTS 32

/* The bottom row of a band travels to the next band through global memory as (value, check)
 * pairs, check = id ^ bits(value), where id numbers the band and the call. A reader takes a pair
 * only when its check matches the id it waits for: a value of another band or call, a torn read
 * (half old, half new) or never-written memory all fail it, so no flag, fence or reset is needed,
 * and one buffer serves every band: band b + 1 overwrites column block j only after it has
 * computed it, hence after reading band b's value there. */
struct handover {
    double value;
    unsigned long long check;
};

__device__ __forceinline__ unsigned long long handover_check(double v, unsigned long long id)
{
    return id ^ (unsigned long long)__double_as_longlong(v);
}

/* Where the result is: in the last band, the last row of thread `thread`'s tiles, column `c` of
 * the last column block. For measures whose padding does not repeat D(na, nb) past the end, and
 * for windows, the rows are shifted down by `row_shift` (< R) padding rows so that row na is such
 * a row; row 0 of the dynamic program is then the padding row just above row 1, in thread 0 (the
 * only thread that starts at column block 0, so the value it holds in column 0, D(0, 0) = 0, is
 * still there when it gets to column 1). Otherwise (TWED without a window) the rows are not
 * shifted and the result is read at the last cell of the last tile: the cells past the end repeat
 * D(na, nb) (see SERIES_PAD_BACK). */
struct result_cell {
    int thread, c, row_shift;
};

template <class M> struct wavefront_args {
    device_series<double> a, b; /* a: rows (cut into bands), b: columns (cut into blocks of C) */
    M m;
    int column_blocks;
    handover *rows;          /* column_blocks * C: the last published bottom row of each column */
    unsigned long long call; /* ids of this call's bands: call << 24 | band (bands < 2^23) */
    unsigned *next_band;     /* band dispenser */
    unsigned nbands;
    unsigned spread;         /* > 0: the k-th block of a multiprocessor waits for k * spread bands taken */
    pair_result *result;
    pair_band band;          /* the window (WIN kernels) */
    result_cell at;          /* the result's cell (kernels that read it exactly) */
};

/* C consecutive values from 16-byte aligned memory (the prepared layout guarantees it). */
template <int C> __device__ __forceinline__ void load_block(const double *p, double *v)
{
    if constexpr (C == 1) {
        v[0] = __ldg(p);
    } else {
#pragma unroll
        for (int c = 0; c < C; c += 2) {
            const double2 x = __ldg((const double2 *)(p + c));
            v[c] = x.x;
            v[c + 1] = x.y;
        }
    }
}

/* The values of columns col0 .. col0 + C - 1 into registers: VD = 1 as one block, VD > 1 as C
 * vectors of VD (16-byte aligned: sample 0 is, and VD is even), VD = 0 (read per cell) none. */
template <int C, int VD>
__device__ __forceinline__ void load_values(const double *values, int col0, double (&v)[C][VD > 0 ? VD : 1])
{
    if constexpr (VD == 1) {
        double flat[C];
        load_block<C>(values + col0, flat);
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c][0] = flat[c];
    } else if constexpr (VD > 1) {
#pragma unroll
        for (int c = 0; c < C; c++)
#pragma unroll
            for (int k = 0; k < VD; k += 2) {
                const double2 x = __ldg((const double2 *)(values + (ptrdiff_t)(col0 + c) * VD + k));
                v[c][k] = x.x;
                v[c][k + 1] = x.y;
            }
    }
}

/* The column blocks a band of a windowed pair sweeps: from the one before its first row's first
 * column (band 0: block 0) to the one of its last row's last column; and the last block of the row
 * above the band (the band above published up to it). */
struct band_sweep {
    int start, last, above_last;
};

__host__ __device__ __forceinline__ band_sweep windowed_sweep(const pair_band &pb, unsigned band, int na, int shift,
                                                              int R, int C)
{
    const int band_first = (int)band * (WAVEFRONT_THREADS * R) + 1 - shift; /* rows of the dynamic program */
    const int first_row = band_first > 1 ? band_first : 1;
    const int last_row = band_first + WAVEFRONT_THREADS * R - 1 < na ? band_first + WAVEFRONT_THREADS * R - 1 : na;
    int lo, hi, unused;
    pb.row(first_row, &lo, &unused);
    pb.row(last_row, &unused, &hi);
    band_sweep s;
    s.start = band == 0 ? 0 : (lo - 1) / C - 1;
    s.last = (hi - 1) / C;
    s.above_last = s.last;
    if (band > 0) {
        pb.row(first_row - 1, &unused, &hi);
        s.above_last = (hi - 1) / C;
    }
    return s;
}

/* Thread t of a band owns R consecutive rows and sweeps the columns in blocks of C: at each step it
 * computes an R x C tile of D in registers (R + C - 1 dependent levels, up to min(R, C) cells
 * independent at each). Small pairs are bound by the latency of a step and want narrow tiles and
 * rare barriers; large ones by the work of a step and want wider tiles (pair.cu chooses).
 * A tile needs the tile above it (same columns, one step earlier): inside a warp it comes from the
 * lane above by shuffles; lane 0 reads it from shared memory, where lane 31 of the warp above left
 * it, or for warp 0 from the row above the band. Lane l of warp w handles column block
 * start + S - LAG l - w * WARP_SKEW at block step S (start = 0 without a window). Warps meet at a
 * barrier every SYNC steps, so the warp above must be SYNC steps ahead of the natural pipeline:
 * WARP_SKEW = 31 LAG + SYNC.
 * Lanes one step apart (LAG 1) chain every step to the one before through the lane above: its
 * bottom row, a shuffle, then the R cells of a column, about 170 cycles for 4 x 1 on an H200. Two
 * steps apart (LAG 2), the tile above was computed two steps before, so a step's first row can
 * start while the rows below of the step before are still in flight: the chain is one shuffle and
 * R cells per two steps, for 31 more steps of skew per warp. The overlap needs ptxas to interleave
 * the steps, which it does only if nothing else orders them: the lagged kernels keep the predicate
 * registers for the cells (FREE_PREDICATES), read lane 0's rows above LAG steps ahead (a load
 * after the step's store to shared memory waits for it: ptxas cannot tell the slots apart), and
 * address their column loads from the group's (DTW, 4 x 1 at 65,536: 6.7 against 7.9 ms;
 * bench/results/gpu-dtw.md). TWED's carried term made its lagged kernels slower: it keeps LAG 1.
 * A step is a few dozen instructions issued by one warp per scheduler, so everything that is not
 * a cell is kept out of it (each item below saved instructions in every step):
 *  - the rings in shared memory are indexed by step, not by block: lane 31 of warp w writes its
 *    bottom row of step S in slot S, and lane 0 of warp w + 1 needs it exactly SYNC steps later, so
 *    the slots of a step group are consecutive and their addresses constants of the group;
 *  - dim-1 columns are read without clamping: the prepared series are padded far enough on both
 *    sides for every block a thread can reach (WAVEFRONT_COLUMN_PAD); vectors read blocks -1 to
 *    the last only (CLAMP_BLOCKS below: a root of the +inf padding is slow);
 *  - only lane 31 stores its bottom row (and, in the last band, the result's thread, with the same
 *    predicated store, in a ring of its own): the band's bottom row goes from the last warp's ring
 *    to global memory once per group, one block per lane, and the result is read once per group;
 *  - dim-1 tiles of up to 4 rows load their columns a whole group ahead, into a ring of registers:
 *    a load issued one step ahead, in the same basic block as its use, is moved down by ptxas to
 *    just before the use, and the L1 latency then lands in every step (it did so in the windowed
 *    kernels); a load for the next group cannot cross the loop's back edge;
 *  - TWED's windowed 4 x 1 step masks its cells by bit operations: it is short of predicate
 *    registers, and ptxas ran the comparisons of all its cells through the one left, one after
 *    the other (encoded stall cycles per group 4797, and 3096 with the bit mask).
 * bench/results/gpu-dtw.md has the figures of each.
 * Global memory is read only for the columns (vector loads of the block's C values, or C sample
 * vectors of VD components, L1 hits: all lanes walk the same series; VD = 0 reads each cell's two
 * vectors of any width instead) and, by warp 0, for the row above the band: fetched in stages of
 * TOP_STAGE blocks, one per lane, ahead of use, so that their latency is hidden; warp 0 waits
 * only if the band above is really behind.
 * Tiles outside the matrix are computed anyway, which keeps the loop free of branches: before
 * column 1 they read the padding in front of sample 0, which makes them infinite (the boundary
 * column, see SERIES_PAD_FRONT); past the last column or row they read the padding behind
 * (vector samples: the last block's columns, see CLAMP_BLOCKS), and their values only flow into
 * other outside cells.
 * With a window (WIN), band b sweeps the blocks from the one before its first row's first column
 * (whose cells are outside every row's window: +inf, and they bring the row above's value left of
 * the window in as the next tile's corner) to its last row's last column; a thread masks the cells
 * of each of its rows outside that row's window to +inf (DTW: a warp's groups of steps wholly inside
 * its rows' windows skip the masks), and the band reads the row above only
 * where the band above published it (beyond its last block, the row above is outside its window:
 * +inf). */
template <class M, int R, int C, int SYNC, int LAG, int VD, int DEG, bool WIN>
__global__ void __launch_bounds__(WAVEFRONT_THREADS, 1) wavefront_kernel(wavefront_args<M> w)
{
    constexpr int VW = VD > 0 ? VD : 1; /* registers per sample value (VD = 0: read from L1) */
    static_assert(SYNC <= TOP_STAGE && (SYNC & (SYNC - 1)) == 0, "SYNC: a power of two up to TOP_STAGE");
    static_assert(LAG >= 1 && SYNC % LAG == 0, "a step's bottom-row slot is its index in the group modulo LAG");
    constexpr int WARP_SKEW = 31 * LAG + SYNC, SLOTS = XFER_SLOTS(SYNC);
    /* steps between a column's load and its use (see above: 8 rows, or vectors in registers, have
     * no registers for a ring) */
    constexpr int AHEAD = VD == 1 && R <= 4 ? SYNC : 1;
    static_assert(SYNC % AHEAD == 0, "a step's ring slot is its index in the group modulo AHEAD");
    constexpr bool MASK_BY_BITS = WIN && M::carries_before && AHEAD > 1; /* TWED's, see above */
    /* groups inside the window run unmasked (see the step loop), except for a measure that carries
     * the diagonal's term: ptxas scheduled TWED's split kernels worse (4 x 1: 1.6x the stall cycles
     * per step, 1.45x slower at 2^16; vectors of 4: 5% slower) */
    constexpr bool SPLIT_INTERIOR = WIN && !M::carries_before;
    /* the same kernels, and the lagged ones, keep the step's predicate registers for its cells (see
     * the step loop) */
    constexpr bool FREE_PREDICATES = SPLIT_INTERIOR || LAG > 1;
    constexpr int LAST_SKEW = WAVEFRONT_LAST_SKEW(SYNC, LAG); /* of the band's bottom thread */
    static_assert(LAST_SKEW == (WAVEFRONT_WARPS - 1) * WARP_SKEW + 31 * LAG, "the skews agree");
    static_assert((LAST_SKEW + SYNC + AHEAD) * C <= WAVEFRONT_COLUMN_PAD, "the column padding covers every block read");
    /* the result is read at its exact cell unless the padding repeats it past the end */
    constexpr bool EXACT_RESULT = WIN || !M::pad_repeats_last;
    /* lane 31's bottom row by step (of each warp), and the result's thread's in the last band */
    __shared__ double xfer[WAVEFRONT_WARPS][SLOTS][C], at_row[SLOTS][C];
    __shared__ double top[TOP_SLOTS][C]; /* the row above the band, by step */
    __shared__ unsigned band_shared;
    /* FREE_PREDICATES: where the lanes that keep no row store theirs (see the step loop) */
    __shared__ double discarded[FREE_PREDICATES ? WAVEFRONT_WARPS : 1][FREE_PREDICATES ? SYNC : 1][C];
    /* not const: FREE_PREDICATES kernels hide them from the compiler once a group (the step loop) */
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int na = (int)w.a.length, blocks = w.column_blocks;
    const size_t dim = w.a.dim;
    const double inf = infinity_of<double>();
    const M m = w.m;

    /* Bands go to blocks in the order they ask, and the blocks that share a multiprocessor start
     * together, so left alone they take consecutive bands, which then run side by side on one
     * multiprocessor while others hold bands that wait: under a window only the few bands that
     * span the band's width are busy at once (DTW at 2^20, radius 10%: 0.59 s with 4 blocks per
     * multiprocessor, 0.24 s with 1). So the k-th block to start on a multiprocessor asks for its
     * first band once k * spread bands are taken: each round of `spread` consecutive bands starts
     * on distinct multiprocessors, and later bands go to the blocks that finish first, in the same
     * order. Still deadlock-free at any grid: a waiting block holds no band, the first block of each
     * multiprocessor never waits, and the wait ends once all bands are taken. (The wait sits in the
     * ticket's branch: a loop of its own before this one made ptxas schedule the steps of the
     * windowed TWED 4 x 1 kernel 1.36x slower, and a call to it more registers everywhere.) */
    unsigned gate = 0; /* (thread 0's) tickets taken before this block's first */
    if (threadIdx.x == 0 && w.spread > 0) {
        const unsigned k = atomicAdd(&w.result->sm_blocks[multiprocessor_id() & (WAVEFRONT_SM_SLOTS - 1)], 1u);
        gate = k <= w.nbands / w.spread ? k * w.spread : w.nbands;
    }
    for (;;) {
        if (threadIdx.x == 0) {
            while (*(volatile unsigned *)w.next_band < gate)
                __nanosleep(256);
            gate = 0;
            band_shared = atomicAdd(w.next_band, 1u);
        }
        __syncthreads();
        unsigned band = band_shared;
        __syncthreads();
        if (band >= w.nbands)
            return;

        /* the rows are shifted down by `shift` padding rows (0 for TWED without a window) */
        const int shift = EXACT_RESULT ? w.at.row_shift : 0;
        /* the blocks this band sweeps, [start, last], and the last one the band above published */
        const band_sweep sweep = WIN ? windowed_sweep(w.band, band, na, shift, R, C) : band_sweep{0, blocks - 1, blocks - 1};
        const int start = WIN ? sweep.start : 0, last = WIN ? sweep.last : blocks - 1;
        const int above_last = WIN ? sweep.above_last : blocks - 1;
        const int steps = (WIN ? last - start + 1 : blocks) + LAST_SKEW;

        /* rows row0 - 1 .. row0 + R - 1: the row above this thread's first, then its own (rows of
         * the dynamic program: shifted by `shift`) */
        const int row0 = (int)band * (WAVEFRONT_THREADS * R) + 1 + (int)threadIdx.x * R - shift;
        double a_val[R + 1][VW], a_t[R + 1], a_del[R];
        int a_row[R + 1];
#pragma unroll
        for (int r = 0; r <= R; r++) {
            /* rows past na: the padding; before row 0 (shifted rows): sample 0, padding too */
            a_row[r] = EXACT_RESULT ? min(max(row0 - 1 + r, 0), na + 1) : min(row0 - 1 + r, na + 1);
#pragma unroll
            for (int k = 0; k < VW; k++)
                a_val[r][k] = VD > 0 ? w.a.values[(size_t)a_row[r] * VW + k] : 0.0;
            a_t[r] = M::uses_stamps ? w.a.stamps[a_row[r]] : 0.0;
            if (r > 0)
                a_del[r - 1] = M::has_aux ? w.a.delete_cost[a_row[r]] : 0.0;
        }
        /* the window's columns of this thread's rows (rows past na: none) */
        int row_lo[WIN ? R : 1], row_hi[WIN ? R : 1];
        if constexpr (WIN) {
#pragma unroll
            for (int k = 0; k < R; k++) {
                row_lo[k] = 1, row_hi[k] = 0; /* no column (and no overflow in the bit mask) */
                if (row0 + k >= 1 && row0 + k <= na)
                    w.band.row(row0 + k, &row_lo[k], &row_hi[k]);
            }
        }
        int rows_lo = 1, rows_hi = 0; /* the columns inside every row's window (SPLIT_INTERIOR) */
        if constexpr (SPLIT_INTERIOR) {
            rows_lo = row_lo[0], rows_hi = row_hi[0];
#pragma unroll
            for (int k = 1; k < R; k++)
                rows_lo = max(rows_lo, row_lo[k]), rows_hi = min(rows_hi, row_hi[k]);
        }
        /* carried from the previous tile: its last column of D and of local terms, and D of the
         * row above at that column */
        double d_left[R], m_left[R + 1], d_bottom[LAG][C]; /* bottom rows of the last LAG steps */
        double corner = row0 == 1 ? 0.0 : inf; /* D(0, 0) above-left of the first tile */
#pragma unroll
        for (int k = 0; k < R; k++) /* D(r, 0); D(0, 0) = 0 when row 0 is a shifted padding row */
            d_left[k] = EXACT_RESULT && row0 + k == 0 ? 0.0 : inf;
#pragma unroll
        for (int r = 0; r <= R; r++)
            m_left[r] = 0;
#pragma unroll
        for (int l = 0; l < LAG; l++)
#pragma unroll
            for (int c = 0; c < C; c++)
                d_bottom[l][c] = inf;
        const int skew = warp * WARP_SKEW + LAG * lane; /* this thread's block at step S is start + S - skew */
        const unsigned long long in_id = (w.call << 24) | (band - 1), out_id = (w.call << 24) | band;
        /* lane 0 of warp w > 0 reads lane 31's slots of the warp above before that warp has written
         * them: their blocks are outside the matrix (or the window), infinite */
        for (int k = threadIdx.x; k < WAVEFRONT_WARPS * SLOTS * C; k += WAVEFRONT_THREADS)
            (&xfer[0][0][0])[k] = inf;
        /* the result's thread, in the last band; if it is a lane 31, its row is in xfer */
        int at_thread = band + 1 == w.nbands && (int)threadIdx.x == w.at.thread && lane != 31;
        const bool keeps_row = lane == 31 || at_thread;
        /* lane 0's row above by bits (FREE_PREDICATES, see the step loop): all ones in lane 0 */
        long long lane0_bits = lane == 0 ? -1ll : 0ll;
        if constexpr (FREE_PREDICATES)
            hide_from_compiler(lane0_bits);

        /* warp 0: the row above the band, TOP_STAGE blocks per stage (one block per lane), in the
         * slots of the steps that use them; with a window, blocks from `start` on, and +inf where
         * the row above has no cell (before block 0 or past the band above's last block) */
        handover staged[C];
        auto top_fetch = [&](int first) {
            const int blk = (WIN ? start : 0) + first + lane;
            if (WIN ? band == 0 || lane >= TOP_STAGE || blk >= blocks || blk < 0 || blk > above_last
                    : band == 0 || lane >= TOP_STAGE || blk >= blocks)
                return;
#pragma unroll
            for (int c = 0; c < C; c++) {
                const double2 x = __ldcg((const double2 *)(w.rows + (size_t)blk * C + c));
                staged[c].value = x.x;
                staged[c].check = (unsigned long long)__double_as_longlong(x.y);
            }
        };
        auto top_commit = [&](int first) { /* waits for the band above if it is behind */
            const int blk = (WIN ? start : 0) + first + lane;
            if (lane < TOP_STAGE) {
                double *dst = top[(first + lane) & (TOP_SLOTS - 1)];
                /* row 0 of the matrix, or past the last block */
                if (WIN ? band == 0 || blk >= blocks || blk < 0 || blk > above_last : band == 0 || blk >= blocks) {
#pragma unroll
                    for (int c = 0; c < C; c++)
                        dst[c] = inf;
                } else {
                    for (;;) {
                        bool ready = true;
#pragma unroll
                        for (int c = 0; c < C; c++)
                            ready &= staged[c].check == handover_check(staged[c].value, in_id);
                        if (ready)
                            break;
                        __nanosleep(32);
                        top_fetch(first);
                    }
#pragma unroll
                    for (int c = 0; c < C; c++)
                        dst[c] = staged[c].value;
                }
            }
            __syncwarp();
        };
        if (warp == 0) {
            top_fetch(0);
            top_commit(0);
            top_fetch(TOP_STAGE);
        }
        __syncthreads();

        /* the columns of a tile are loaded AHEAD steps ahead, so that their latency is hidden; blocks
         * before 0 and past the end read the padding (WAVEFRONT_COLUMN_PAD), or for vectors block -1
         * and the last block (CLAMP_BLOCKS) */
        const double *b_values = w.b.values + (ptrdiff_t)(1 + (start - skew) * C) * VW;
        const double *b_stamps = w.b.stamps + (1 + (start - skew) * C);
        const double *b_delete = w.b.delete_cost + (1 + (start - skew) * C);
        /* vector samples (and those read per cell) are read only from blocks -1 to the last, as
         * the tiles outside flow into no cell of the matrix: behind, the padding is +inf, and a
         * norm's root of +inf takes sqrt's slow path in every step of a band's last ~170, which
         * delays the band below (TWED, 4 components: 14-18% slower on an H200); in front, every
         * lane would read a sample of its own (a cache line each for 16 components) where block -1
         * serves them all with the same padding values. Two integer ops a step, next to a step
         * of vectors' norms. */
        constexpr bool CLAMP_BLOCKS = VD != 1;
        const int first_load = -1 - (start - skew), last_load = blocks - 1 - (start - skew); /* in steps */
        auto load_step = [&](int k) { return CLAMP_BLOCKS ? min(max(k, first_load), last_load) : k; };
        double ring_val[AHEAD][C][VW], ring_t[AHEAD][C], ring_del[AHEAD][C];
#pragma unroll
        for (int j = 0; j < AHEAD; j++) {
            load_values<C, VD>(b_values, load_step(j) * C, ring_val[j]);
            if constexpr (M::uses_stamps)
                load_block<C>(b_stamps + load_step(j) * C, ring_t[j]);
            if constexpr (M::has_aux)
                load_block<C>(b_delete + load_step(j) * C, ring_del[j]);
        }
        for (int s0 = 0; s0 < steps; s0 += SYNC) {
            /* A step's compare-selects each need a predicate register, and ptxas kept the loop's
             * invariant conditions (warp 0, the last warp, the last band, the result's thread, lane
             * 0's row above, the kept row's store) in the others, which left one or two for the
             * cells and serialised them: windowed 4 x 2 steps took twice a 4 x 1 step, and steps of
             * lanes two apart did not overlap. So DTW's windowed kernels and the lagged ones
             * (FREE_PREDICATES) hide these values from the compiler once a group,
             * which recomputes the group's conditions where they are used and lets them go, select
             * lane 0's row above by bits, and let every lane store its bottom row, the lanes that
             * keep none into a slot of their own; and in their tiles the columns left of a cell are
             * ahead of the one above it, which is taken last (DTW, 10% window: 4 x 2 0.72-0.80 of
             * its time, 4 x 1 0.97-0.99). Kernels of lanes one step apart without a window made
             * their pairs 3-5% slower that way, and TWED's windowed 4 x 1 up to 3%: they keep the
             * loop as it was (bench/results/gpu-dtw.md). */
            if constexpr (FREE_PREDICATES) {
                hide_from_compiler(lane), hide_from_compiler(warp);
                hide_from_compiler(band), hide_from_compiler(at_thread);
            }
            /* the row above the band: each stage is fetched ahead and checked (a wait only if the
             * band above is behind) before lane 0 needs it (see TOP_STAGE) */
            if (warp == 0 && TOP_STAGE > SYNC) {
                if ((s0 & (TOP_STAGE - 1)) == TOP_STAGE / 2)
                    top_commit(s0 + TOP_STAGE / 2);
                else if ((s0 & (TOP_STAGE - 1)) == 0 && s0 > 0)
                    top_fetch(s0 + TOP_STAGE);
            } else if (warp == 0 && s0 > 0) {
                top_commit(s0);
                top_fetch(s0 + TOP_STAGE);
            }
            /* this group's slots: lane 0 reads lane 31's of the warp above, SYNC steps before (or the
             * row above the band); lane 31 (or the result's thread) writes its own */
            const int slot0 = s0 & (SLOTS - 1);
            const double *edge = warp == 0 ? top[s0 & (TOP_SLOTS - 1)] : xfer[warp - 1][(s0 - SYNC) & (SLOTS - 1)];
            double *mine = at_thread ? at_row[slot0] : xfer[warp][slot0];
            if constexpr (FREE_PREDICATES)
                mine = keeps_row ? mine : &discarded[warp][0][0];
            /* a group whose cells are all inside their rows' windows, for every lane of the warp,
             * runs without the masks: most of a band's groups, and the masks were a third of a DTW
             * step's instructions and on its dependent chain (2^20, 10% window: 237 -> 205 ms) */
            auto run_group = [&](auto masked_tag) {
                constexpr bool MASKED = decltype(masked_tag)::value;
                /* lanes LAG steps apart: lane 0's rows above are read LAG steps ahead, so that no
                 * load waits for the store of the step before (ptxas cannot tell them apart) */
                double edge_ring[LAG][C];
                if constexpr (LAG > 1) {
#pragma unroll
                    for (int j = 0; j < LAG; j++)
#pragma unroll
                        for (int c = 0; c < C; c++)
                            edge_ring[j][c] = edge[j * C + c];
                }
#pragma unroll
                for (int i = 0; i < SYNC; i++) {
                    const int s = s0 + i;
                    const int col0 = 1 + (start + s - skew) * C; /* of the tile; masks of windows */
                    double b_val[C][VW], b_t[C], b_del[C];
                    const int slot = i % AHEAD;
#pragma unroll
                    for (int c = 0; c < C; c++) {
#pragma unroll
                        for (int k = 0; k < VW; k++)
                            b_val[c][k] = ring_val[slot][c][k];
                        b_t[c] = M::uses_stamps ? ring_t[slot][c] : 0.0;
                        b_del[c] = M::has_aux ? ring_del[slot][c] : 0.0;
                    }
                    { /* 64-bit offsets: the address of a step is the group's plus a constant (unless
                       * clamped) */
                        const ptrdiff_t next =
                            CLAMP_BLOCKS ? (ptrdiff_t)load_step(s + AHEAD) * C : ((ptrdiff_t)s0 + i + AHEAD) * C;
                        if constexpr (LAG > 1 && !CLAMP_BLOCKS) /* (LAG 1: TWED's kernels kept as they were) */
                            load_values<C, VD>(b_values + next * VW, 0, ring_val[slot]);
                        else
                            load_values<C, VD>(b_values, load_step(s + AHEAD) * C, ring_val[slot]);
                        if constexpr (M::uses_stamps)
                            load_block<C>(b_stamps + next, ring_t[slot]);
                        if constexpr (M::has_aux)
                            load_block<C>(b_delete + next, ring_del[slot]);
                    }

                    /* D of the row above this tile: the lane above computed it LAG steps ago */
                    double above[C];
#pragma unroll
                    for (int c = 0; c < C; c++)
                        above[c] = __shfl_up_sync(FULL_MASK, d_bottom[i % LAG][c], 1);
                    /* lane 0: from shared memory (every lane reads the same address: a broadcast, and no
                     * branch, which would split the unrolled steps' basic block) */
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const double e = LAG > 1 ? edge_ring[i % LAG][c] : edge[i * C + c];
                        if (LAG > 1 && i + LAG < SYNC)
                            edge_ring[i % LAG][c] = edge[(i + LAG) * C + c];
                        if constexpr (FREE_PREDICATES)
                            above[c] = __longlong_as_double((__double_as_longlong(e) & lane0_bits) |
                                                            (__double_as_longlong(above[c]) & ~lane0_bits));
                        else
                            above[c] = lane == 0 ? e : above[c];
                    }

                    /* local terms of rows row0 - 1 .. row0 + R - 1 against the tile's columns (the
                     * row above only for a measure that carries the diagonal's term) */
                    double mm[R + 1][C];
#pragma unroll
                    for (int r = M::carries_before ? 0 : 1; r <= R; r++)
#pragma unroll
                        for (int c = 0; c < C; c++) {
                            if constexpr (VD == 1) /* the shared formula, on registers */
                                mm[r][c] = m.local(a_val[r], b_val[c], 1, a_t[r], b_t[c]);
                            else if constexpr (VD > 1) /* unrolled over registers, the norm's p fixed */
                                mm[r][c] = m.template local_p<DEG>(a_val[r], b_val[c], (size_t)VD, a_t[r], b_t[c]);
                            else
                                mm[r][c] = m.local(w.a.values + (size_t)a_row[r] * dim,
                                                   w.b.values + (ptrdiff_t)(1 + (start - skew + load_step(s)) * C + c) *
                                                                    (ptrdiff_t)dim,
                                                   dim, a_t[r], b_t[c]);
                        }
                    double d[R][C];
#pragma unroll
                    for (int k = 0; k < R; k++)
#pragma unroll
                        for (int c = 0; c < C; c++) {
                            const double up = k == 0 ? above[c] : d[k - 1][c];
                            const double left = c == 0 ? d_left[k] : d[k][c - 1];
                            const double diag = k == 0 ? (c == 0 ? corner : above[c - 1])
                                                       : (c == 0 ? d_left[k - 1] : d[k - 1][c - 1]);
                            const double before = !M::carries_before ? 0.0 : c == 0 ? m_left[k] : mm[k][c - 1];
                            /* the input computed last is taken last: `up` in the first column (from
                             * the lane above, or the row above in this tile), `left` in the rest of
                             * the first row; inside the tile both come from the same level */
                            double v;
                            if (c == 0)
                                v = M::cell_up_last(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                            else if (k == 0)
                                v = M::cell_left_last(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                            else if (FREE_PREDICATES) /* the columns on the left are ahead */
                                v = M::cell_up_last(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                            else
                                v = M::cell(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                            if constexpr (WIN && MASKED) {
                                const int col = col0 + c;
                                if constexpr (MASK_BY_BITS) { /* all ones outside [lo, hi] */
                                    const long long out = (long long)(((col - row_lo[k]) | (row_hi[k] - col)) >> 31);
                                    v = __longlong_as_double((__double_as_longlong(v) & ~out) |
                                                             (0x7ff0000000000000ll & out));
                                } else {
                                    v = col >= row_lo[k] && col <= row_hi[k] ? v : inf;
                                }
                            }
                            d[k][c] = v;
                        }
#pragma unroll
                    for (int k = 0; k < R; k++)
                        d_left[k] = d[k][C - 1];
                    if constexpr (M::carries_before) {
#pragma unroll
                        for (int r = 0; r <= R; r++)
                            m_left[r] = mm[r][C - 1];
                    }
                    corner = above[C - 1];
#pragma unroll
                    for (int c = 0; c < C; c++)
                        d_bottom[i % LAG][c] = d[R - 1][c];
                    if (FREE_PREDICATES || keeps_row) { /* a predicated store: no branch in the steps */
#pragma unroll
                        for (int c = 0; c < C; c++)
                            mine[i * C + c] = d[R - 1][c];
                    }
                }
            };
            if constexpr (SPLIT_INTERIOR) {
                const int first_col = 1 + (start + s0 - skew) * C, last_col = first_col + SYNC * C - 1;
                if (__all_sync(FULL_MASK, first_col >= rows_lo && last_col <= rows_hi))
                    run_group(std::false_type());
                else
                    run_group(std::true_type());
            } else {
                run_group(std::bool_constant<WIN>());
            }
            /* the band's bottom row of this group to global memory for the band below, by the last
             * warp, one block per lane; and the result, from its thread's slots in the last band */
            if (warp == WAVEFRONT_WARPS - 1 && band + 1 < w.nbands) {
                __syncwarp();
                const int j = start + s0 + lane - LAST_SKEW;
                if (lane < SYNC && j >= (WIN ? max(start, 0) : 0) && j <= last) {
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const double v = xfer[warp][slot0 + lane][c];
                        __stcg((double2 *)(w.rows + (size_t)j * C + c),
                               make_double2(v, __longlong_as_double((long long)handover_check(v, out_id))));
                    }
                }
            }
            if (band + 1 == w.nbands && warp == w.at.thread >> 5) {
                __syncwarp();
                const int at_lane = w.at.thread & 31;
                if (lane < SYNC && start + s0 + lane - (warp * WARP_SKEW + LAG * at_lane) == blocks - 1)
                    w.result->value = M::finish((at_lane == 31 ? xfer[warp] : at_row)[slot0 + lane][w.at.c]);
            }
            __syncthreads();
        }
    }
}

#endif
