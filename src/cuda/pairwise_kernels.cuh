/* Kernels of the matrix engine, templates over the measure functor M (measure.cuh) and the window
 * (WIN): one thread per pair (a row sweep; dim 2..32 with the block's shared series and the row
 * buffers in shared memory), one warp per pair, one block of warps per pair. Which kernel runs and
 * how the work is cut is policy (pairwise_plan.cu, pairwise.cu).
 *
 * With a window, a pair's rows sweep only the columns of their window (pair_band): a row's range
 * never moves left from one row to the next, so the row buffers need no reset but at most one
 * entry per row (the column left of the range, which a later row may read as its diagonal), and
 * the cells of several rows computed together over the union of their ranges are masked to +inf
 * outside each row's own. Kernels on pairs of strips of rows read the row above the strip only inside its
 * window (+inf outside, where the buffer may hold an older strip's value). */
#ifndef WW_CUDA_PAIRWISE_KERNELS_CUH
#define WW_CUDA_PAIRWISE_KERNELS_CUH

#include "cuda_common.cuh"

/* Entries (less one) of a row buffer of the one-thread-per-pair kernel: the longest series it takes,
 * or, with equal lengths under a window, the widest pass over the band (thread_buffer_span). */
#define THREAD_MAX_LENGTH 256

/* A dataset on the device in the prepared layout: series i at base[i] (its sentinel sample 0),
 * samples base[i] .. base[i] + length[i], values (dim contiguous), stamps and per-sample terms
 * (each only for a measure that has them). */
template <typename T> struct device_set {
    const T *values, *stamps, *delete_cost;
    const size_t *base;
    const int *length;
    size_t dim;
};

/* A chunk of rows of a rectangle of the output. Indices are those of the kernels' sets: the
 * caller's own, or, when the rectangle is a group of pairs (pair_plan), positions in gathered
 * views whose original indices are row_origin[] and col_origin[]. */
struct block_geometry {
    size_t row_begin, row_end; /* rows of this chunk */
    size_t col_begin, col_end; /* columns of the rectangle */
    size_t width;              /* output row length in the device buffer */
    /* the self matrix's mirror rule works on original indices and the caller's whole block */
    int self;
    const size_t *row_origin, *col_origin; /* NULL: indices are original */
    size_t block_row_begin, block_row_end, block_col_begin, block_col_end;
};

/* Same rule as the CPU engine: in the self matrix, (i, j) is computed unless it is on the diagonal
 * or its mirror (j, i) lies in the block and will be computed instead. */
__device__ __forceinline__ bool entry_needed(const block_geometry &g, size_t i, size_t j)
{
    if (!g.self)
        return true;
    if (g.row_origin) {
        i = g.row_origin[i];
        j = g.col_origin[j];
    }
    if (i == j)
        return false;
    bool mirror_in_block =
        j >= g.block_row_begin && j < g.block_row_end && i >= g.block_col_begin && i < g.block_col_end;
    return !(mirror_in_block && j < i);
}

/* The window's columns of DP row i of a pair, for a kernel without a window: every column. */
template <bool WIN>
__device__ __forceinline__ void band_row(const pair_band &b, int i, int nb, int *lo, int *hi)
{
    if constexpr (WIN) {
        b.row(i, lo, hi);
    } else {
        (void)b, (void)i;
        *lo = 1, *hi = nb;
    }
}

/* One thread per pair. The 32 lanes of a warp take 32 different series of one side ("lane" series)
 * and share one series of the other side ("shared" series): the sweep runs over the lane series'
 * samples (rows, outer loop) and the shared series' samples (columns, inner loop), so every load of
 * the shared series is the same address for the whole warp (one broadcast), and the row buffers in
 * local memory are read with unit stride across lanes. The measure is symmetric, so which side is
 * which does not change the value (bit for bit: the cell takes the same operands in another order).
 *
 * dim 1: four rows per pass over the columns, their left and diagonal neighbours in registers, so
 * the row buffer is read and written once per four rows. dim <= WIDE_DIM_MAX: the lane's sample
 * vector stays in registers, the shared sample vector is broadcast. Larger dims read both from
 * memory. */
#define ROWS_PER_PASS 4
#define WIDE_DIM_MAX 32

struct pair_map {
    int lanes_are_rows; /* lane series from x (rows) and shared series from y, or the reverse */
};

/* The pair (i, j) of the chunk's sets of lane series lane_i and shared series shared_i, and whether
 * it lies in the chunk. */
__device__ __forceinline__ bool lane_pair(const block_geometry &g, pair_map map, size_t lane_i, size_t shared_i,
                                          size_t *i, size_t *j)
{
    *i = map.lanes_are_rows ? g.row_begin + lane_i : g.row_begin + shared_i;
    *j = map.lanes_are_rows ? g.col_begin + shared_i : g.col_begin + lane_i;
    return *i < g.row_end && *j < g.col_end;
}

template <class M, typename Tout, int MODE, bool WIN> /* MODE: 1 = dim 1, 2 = dim <= WIDE_DIM_MAX, 0 = any dim */
__global__ void __launch_bounds__(128) pairs_thread_kernel(device_set<typename M::real> x, device_set<typename M::real> y,
                                                           block_geometry g, M mf, window_spec win, pair_map map,
                                                           Tout *out)
{
    typedef typename M::real T;
    static_assert(M::symmetric, "the sides of a pair are taken in either order");
    /* lanes (blockIdx.y, threadIdx.x) over one side, blockIdx.x over the other (x allows 2^31 blocks) */
    const size_t lane_i = blockIdx.y * (size_t)blockDim.x + threadIdx.x, shared_i = blockIdx.x;
    size_t i, j;
    if (!lane_pair(g, map, lane_i, shared_i, &i, &j))
        return;
    Tout *dst = out + (i - g.row_begin) * g.width + (j - g.col_begin);
    if (!entry_needed(g, i, j)) {
        *dst = 0; /* diagonal, or filled from its mirror by the host afterwards */
        return;
    }
    const device_set<T> &ls = map.lanes_are_rows ? x : y, &ss = map.lanes_are_rows ? y : x;
    const size_t li = map.lanes_are_rows ? i : j, si = map.lanes_are_rows ? j : i;
    const size_t dim = x.dim;
    const int na = ls.length[li], nb = ss.length[si];
    const T *av = ls.values + ls.base[li] * dim, *at = ls.stamps + ls.base[li], *adel = ls.delete_cost + ls.base[li];
    const T *bv = ss.values + ss.base[si] * dim, *bt = ss.stamps + ss.base[si], *bdel = ss.delete_cost + ss.base[si];
    const T inf = infinity_of<T>();
    const pair_band band = WIN ? pair_band::make(win, (size_t)na, (size_t)nb) : pair_band{};
    /* The row above the pass: row_d[k] = D(r - 1, base + k) (and row_m the local terms) for
     * base + k <= above_hi. Without a window base = 0 and the buffer spans the row. With one, base is
     * the column left of the pass's first column: the buffer follows the band, so one thread takes
     * any length whose band fits (thread_buffer_span, pairwise_plan.cu); the pass reads column c at
     * c - base and writes the row below at c - next_base (the next pass's base, never smaller: each
     * slot is read before it is written), and columns past above_hi, where the row above has no
     * cell, as +inf (their slots may hold an older pass's values). */
    T row_d[THREAD_MAX_LENGTH + 1], row_m[M::carries_before ? THREAD_MAX_LENGTH + 1 : 1];
    int base = 0, above_hi = WIN ? 0 : nb; /* row 0: D(0, 0) = 0 is all a window reads of it */
    row_d[0] = 0;
    if constexpr (M::carries_before)
        row_m[0] = 0;
    if constexpr (!WIN) {
        for (int c = 1; c <= nb; c++) {
            row_d[c] = inf;
            if constexpr (M::carries_before)
                row_m[c] = 0; /* local(0, c > 0) only meets D[0][c-1] = inf */
        }
    }
    if (MODE == 1) {
        for (int r0 = 1; r0 <= na; r0 += ROWS_PER_PASS) {
            /* rows r0 .. r0+3; a row past na repeats the row above, so row_d ends on row na; the
             * columns of the pass: the union of its rows' windows */
            T a[ROWS_PER_PASS], ta[ROWS_PER_PASS], da[ROWS_PER_PASS], left[ROWS_PER_PASS], diag[ROWS_PER_PASS],
                before[ROWS_PER_PASS];
            bool valid[ROWS_PER_PASS];
            int lo[ROWS_PER_PASS], hi[ROWS_PER_PASS], unused;
            const int c_lo = WIN ? (band_row<WIN>(band, r0, nb, &lo[0], &unused), lo[0]) : 1;
            int c_hi = nb, next_base = 0;
            if constexpr (WIN) {
                band_row<WIN>(band, min(r0 + ROWS_PER_PASS - 1, na), nb, &unused, &c_hi);
                next_base = base;
                if (r0 + ROWS_PER_PASS <= na) {
                    band_row<WIN>(band, r0 + ROWS_PER_PASS, nb, &next_base, &unused);
                    next_base -= 1;
                }
            }
#pragma unroll
            for (int k = 0; k < ROWS_PER_PASS; k++) {
                valid[k] = r0 + k <= na;
                const int r = valid[k] ? r0 + k : na;
                if constexpr (WIN)
                    band_row<WIN>(band, r, nb, &lo[k], &hi[k]);
                a[k] = av[r];
                ta[k] = M::uses_stamps ? at[r] : (T)0;
                da[k] = M::has_aux ? adel[r] : (T)0;
                left[k] = inf;                         /* D(r, c_lo - 1) */
                diag[k] = k == 0 ? row_d[c_lo - 1 - base] : inf;     /* D(r - 1, c_lo - 1) */
                before[k] = k == 0 && M::carries_before ? row_m[c_lo - 1 - base] : (T)0; /* M(r - 1, c_lo - 1) */
            }
            /* D(r0 + 3, c_lo - 1) = inf: where the next pass reads its diagonal when its first
             * column is this one's (the loop writes it otherwise) */
            if (next_base == base) {
                row_d[c_lo - 1 - base] = inf;
                if constexpr (M::carries_before)
                    row_m[c_lo - 1 - base] = 0;
            }
            for (int c = c_lo; c <= c_hi; c++) {
                const T b = bv[c], tb = M::uses_stamps ? bt[c] : (T)0, db = M::has_aux ? bdel[c] : (T)0;
                const bool above = !WIN || c <= above_hi;
                T up = above ? row_d[c - base] : inf, m_up = M::carries_before && above ? row_m[c - base] : (T)0;
#pragma unroll
                for (int k = 0; k < ROWS_PER_PASS; k++) {
                    const T here = mf.local(&a[k], &b, 1, ta[k], tb);
                    T v = M::cell(up, left[k], diag[k], da[k], db, here, before[k]);
                    if constexpr (WIN)
                        v = c >= lo[k] && c <= hi[k] ? v : inf;
                    const T m = valid[k] ? here : m_up;
                    v = valid[k] ? v : up;
                    diag[k] = up;   /* D(r - 1, c) is the next column's diagonal */
                    before[k] = m_up;
                    left[k] = v;
                    up = v;         /* the row below reads this cell as its up */
                    m_up = m;
                }
                if (!WIN || c >= next_base) {
                    row_d[c - next_base] = up;
                    if constexpr (M::carries_before)
                        row_m[c - next_base] = m_up;
                }
            }
            base = next_base, above_hi = c_hi;
        }
    } else {
        T a[MODE == 2 ? WIDE_DIM_MAX : 1];
        const int p = mf.norm_p();
        for (int r = 1; r <= na; r++) {
            const T ta = M::uses_stamps ? at[r] : (T)0, da = M::has_aux ? adel[r] : (T)0;
            const T *ar = av + (size_t)r * dim;
            if (MODE == 2) {
#pragma unroll
                for (int k = 0; k < WIDE_DIM_MAX; k++)
                    a[k] = k < (int)dim ? ar[k] : (T)0;
            }
            int c_lo = 1, c_hi = nb, next_base = 0;
            band_row<WIN>(band, r, nb, &c_lo, &c_hi);
            if constexpr (WIN) {
                next_base = base;
                if (r < na) {
                    int unused;
                    band_row<WIN>(band, r + 1, nb, &next_base, &unused);
                    next_base -= 1;
                }
            }
            T diag = row_d[c_lo - 1 - base], left = inf,
              before = M::carries_before ? row_m[c_lo - 1 - base] : (T)0;
            if (next_base == base) { /* D(r, c_lo - 1) = inf, the next row's diagonal (as above) */
                row_d[c_lo - 1 - base] = inf;
                if constexpr (M::carries_before)
                    row_m[c_lo - 1 - base] = 0;
            }
            for (int c = c_lo; c <= c_hi; c++) {
                const bool above = !WIN || c <= above_hi;
                const T up = above ? row_d[c - base] : inf, m_up = M::carries_before && above ? row_m[c - base] : (T)0;
                const T *bc = bv + (size_t)c * dim;
                T here;
                if (MODE == 2) {
                    /* the same L_p distance as lp_distance(), with the lane's vector in registers;
                     * the norm's p is dispatched outside the loop over dims, so that pow() is never
                     * evaluated (nor predicated) for p = 1 and p = 2 */
                    /* four partial sums: the dim loop is the bulk of the work and one running
                     * sum would make it one long dependent chain (the order of the additions
                     * differs from the CPU's by rounding only) */
                    T acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, dist;
                    if (p == 2) {
#pragma unroll
                        for (int k = 0; k < WIDE_DIM_MAX; k += 4) {
                            if (k < (int)dim) { const T d = a[k] - bc[k]; acc0 += d * d; }
                            if (k + 1 < (int)dim) { const T d = a[k + 1] - bc[k + 1]; acc1 += d * d; }
                            if (k + 2 < (int)dim) { const T d = a[k + 2] - bc[k + 2]; acc2 += d * d; }
                            if (k + 3 < (int)dim) { const T d = a[k + 3] - bc[k + 3]; acc3 += d * d; }
                        }
                        dist = M::template norm_from_sum<2>((acc0 + acc1) + (acc2 + acc3));
                    } else if (p == 1) {
#pragma unroll
                        for (int k = 0; k < WIDE_DIM_MAX; k += 4) {
                            if (k < (int)dim) acc0 += fabs(a[k] - bc[k]);
                            if (k + 1 < (int)dim) acc1 += fabs(a[k + 1] - bc[k + 1]);
                            if (k + 2 < (int)dim) acc2 += fabs(a[k + 2] - bc[k + 2]);
                            if (k + 3 < (int)dim) acc3 += fabs(a[k + 3] - bc[k + 3]);
                        }
                        dist = M::template norm_from_sum<1>((acc0 + acc1) + (acc2 + acc3));
                    } else {
                        for (int k = 0; k < (int)dim; k++)
                            acc0 += pow(fabs(ar[k] - bc[k]), (T)p); /* rare: from memory */
                        dist = pow(acc0, (T)1 / (T)p);
                    }
                    here = mf.local_from_norm(dist, ta, M::uses_stamps ? bt[c] : (T)0);
                } else {
                    here = mf.local(ar, bc, dim, ta, M::uses_stamps ? bt[c] : (T)0);
                }
                const T v = M::cell(up, left, diag, da, M::has_aux ? bdel[c] : (T)0, here, before);
                if (!WIN || c >= next_base) {
                    row_d[c - next_base] = v;
                    if constexpr (M::carries_before)
                        row_m[c - next_base] = here;
                }
                diag = up;
                left = v;
                before = m_up;
            }
            base = next_base, above_hi = c_hi;
        }
    }
    *dst = (Tout)M::finish(row_d[nb - base]);
}

/* One thread per pair under a narrow window, every series of one length n (the window's band of
 * equal lengths: row i's columns i - R .. i + R). Row i's band is 2 R + 1 cells in registers,
 * D(i, i - R + k) in band[k] (R, the radius, is a template argument, so every index is a constant),
 * and becomes row i + 1's in place: the cell at k reads its diagonal in band[k] and the cell above in
 * band[k + 1] before they are overwritten, its left neighbour in band[k - 1] after, +inf past either
 * end. No row buffer in memory, no mask inside the matrix: only rows 1 .. R meet its left edge, whose
 * columns <= 0 they set to +inf. BAND_ROWS rows are computed at once, unrolled, so that the chain of
 * a row's left neighbours overlaps the next rows' (a cell needs the row above only up to the next
 * column); the cell takes `left` last, the operand on that chain. The block's shared series is staged
 * in shared memory, sample j at j + R - 1 for j = 1 - R .. n + R, those outside 1 .. n as the nearest
 * sample: cells left of column 1 are masked, and those right of column n never reach a cell inside. */
#define BAND_ROWS 4
#define BAND_RADIUS_MIN 1          /* radius 0, one cell per row: the row sweep was as fast or faster (TWED 2,000 x 2,000) */
#define BAND_RADIUS_MAX 32         /* registers: 2 R + 1 cells (DTW in double: 254 registers at 32, no spill) */
#define BAND_RADIUS_MAX_CARRIED 16 /* ... twice as many for a measure with a carried term (TWED: 2 x 33 cells at 16) */

/* The widest radius of the band for measure M. */
template <class M> __host__ __device__ constexpr int band_radius_max()
{
    return M::carries_before ? BAND_RADIUS_MAX_CARRIED : BAND_RADIUS_MAX;
}

/* Entries of each array that pairs_band_kernel stages (the shared series' values, and its stamps
 * and per-sample terms for a measure with them) for series of n samples, and the bytes of them all. */
__host__ __device__ __forceinline__ size_t band_stage_count(size_t n, size_t radius) { return n + 2 * radius; }
static inline size_t band_smem_bytes(size_t n, size_t radius, size_t elem_size, bool stamps, bool aux)
{
    return (1 + (stamps ? 1 : 0) + (aux ? 1 : 0)) * band_stage_count(n, radius) * elem_size;
}

/* Row i of the band from row i - 1's (band, and the local terms of row i - 1 in terms for a measure
 * that carries them). s_val etc.: the staged arrays at column i - R (entry k is column i - R + k).
 * MASKED: columns <= 0 are +inf (rows 1 .. R). */
template <class M, int R, bool MASKED>
__device__ __forceinline__ void band_row_cells(typename M::real (&band)[2 * R + 1],
                                               typename M::real (&terms)[M::carries_before ? 2 * R + 1 : 1], const M &mf,
                                               typename M::real a, typename M::real ta, typename M::real da,
                                               const typename M::real *s_val, const typename M::real *s_time,
                                               const typename M::real *s_del, int i)
{
    typedef typename M::real T;
    const T inf = infinity_of<T>();
    T left = inf; /* D(i, i - R - 1): outside the window */
#pragma unroll
    for (int k = 0; k <= 2 * R; k++) {
        const T b = s_val[k], tb = M::uses_stamps ? s_time[k] : (T)0, db = M::has_aux ? s_del[k] : (T)0;
        const T here = mf.local(&a, &b, 1, ta, tb);
        const T up = k < 2 * R ? band[k < 2 * R ? k + 1 : k] : inf; /* D(i - 1, i - R + k): past the window at 2 R */
        T v = M::cell_left_last(up, left, band[k], da, db, here, M::carries_before ? terms[k] : (T)0);
        if constexpr (MASKED)
            v = i - R + k >= 1 ? v : inf;
        if constexpr (M::carries_before)
            terms[k] = here;
        band[k] = v;
        left = v;
    }
}

template <class M, typename Tout, int R>
__global__ void __launch_bounds__(128) pairs_band_kernel(device_set<typename M::real> x, device_set<typename M::real> y,
                                                         block_geometry g, M mf, pair_map map, int n, Tout *out)
{
    typedef typename M::real T;
    static_assert(M::symmetric, "the sides of a pair are taken in either order");
    extern __shared__ __align__(16) unsigned char band_bytes[];
    const int stage = (int)band_stage_count((size_t)n, R);
    T *s_val = (T *)band_bytes, *s_time = s_val + (M::uses_stamps ? stage : 0),
      *s_del = s_time + (M::has_aux ? stage : 0);
    const device_set<T> &ls = map.lanes_are_rows ? x : y, &ss = map.lanes_are_rows ? y : x;
    /* the shared series, the same for the whole block: staged before any thread leaves */
    const size_t shared_i = blockIdx.x;
    const size_t si = map.lanes_are_rows ? g.col_begin + shared_i : g.row_begin + shared_i;
    {
        const size_t b0 = ss.base[si];
        for (int e = (int)threadIdx.x; e < stage; e += (int)blockDim.x) {
            const int j = min(max(e - R + 1, 1), n); /* the nearest sample of the series */
            s_val[e] = ss.values[b0 + j];
            if constexpr (M::uses_stamps)
                s_time[e] = ss.stamps[b0 + j];
            if constexpr (M::has_aux)
                s_del[e] = ss.delete_cost[b0 + j];
        }
    }
    __syncthreads();
    const size_t lane_i = blockIdx.y * (size_t)blockDim.x + threadIdx.x;
    size_t i, j;
    if (!lane_pair(g, map, lane_i, shared_i, &i, &j))
        return;
    Tout *dst = out + (i - g.row_begin) * g.width + (j - g.col_begin);
    if (!entry_needed(g, i, j)) {
        *dst = 0; /* diagonal, or filled from its mirror afterwards */
        return;
    }
    const size_t li = map.lanes_are_rows ? i : j, a0 = ls.base[li];
    const T *av = ls.values + a0, *at = ls.stamps + a0, *adel = ls.delete_cost + a0;
    const T inf = infinity_of<T>();
    /* row 0: D(0, 0) = 0 (k = R), D(0, j) = +inf elsewhere; local terms 0 */
    T band[2 * R + 1], terms[M::carries_before ? 2 * R + 1 : 1];
#pragma unroll
    for (int k = 0; k <= 2 * R; k++)
        band[k] = k == R ? (T)0 : inf;
#pragma unroll
    for (int k = 0; k < (M::carries_before ? 2 * R + 1 : 1); k++)
        terms[k] = 0;
    int r = 1;
#pragma unroll 1
    for (; r <= R; r++) /* n > R: the window is narrower than the series */
        band_row_cells<M, R, true>(band, terms, mf, av[r], M::uses_stamps ? at[r] : (T)0, M::has_aux ? adel[r] : (T)0,
                                   s_val + (r - 1), s_time + (r - 1), s_del + (r - 1), r);
#pragma unroll 1
    for (; r + BAND_ROWS - 1 <= n; r += BAND_ROWS) {
        T a[BAND_ROWS], ta[BAND_ROWS], da[BAND_ROWS];
#pragma unroll
        for (int u = 0; u < BAND_ROWS; u++) {
            a[u] = av[r + u];
            ta[u] = M::uses_stamps ? at[r + u] : (T)0;
            da[u] = M::has_aux ? adel[r + u] : (T)0;
        }
#pragma unroll
        for (int u = 0; u < BAND_ROWS; u++)
            band_row_cells<M, R, false>(band, terms, mf, a[u], ta[u], da[u], s_val + (r + u - 1), s_time + (r + u - 1),
                                        s_del + (r + u - 1), r + u);
    }
#pragma unroll 1
    for (; r <= n; r++)
        band_row_cells<M, R, false>(band, terms, mf, av[r], M::uses_stamps ? at[r] : (T)0, M::has_aux ? adel[r] : (T)0,
                                    s_val + (r - 1), s_time + (r - 1), s_del + (r - 1), r);
    *dst = (Tout)M::finish(band[R]); /* D(n, n) */
}

#define FULL_MASK_PAIRS 0xffffffffu

/* D and the local term of the row above a strip at column c (for lane 0): from the row buffer
 * (top_d, top_m: the last row of the strip above, written in this pair), row 0 for the first strip
 * (D = +inf), and with a window +inf where the row above has no cell (the buffer may hold another
 * strip's value there). */
template <class M, bool WIN>
__device__ __forceinline__ void row_above(const typename M::real *top_d, const typename M::real *top_m, int c, int cc,
                                          bool first_strip, int above_lo, int above_hi, typename M::real *d,
                                          typename M::real *m)
{
    typedef typename M::real T;
    const bool inside = !WIN || (c >= above_lo && c <= above_hi);
    *d = first_strip || !inside ? infinity_of<T>() : top_d[cc];
    *m = first_strip || !inside || !M::carries_before ? (T)0 : top_m[cc];
}

/* The operands of one pair of a warp or block kernel: rows are the shorter series (fewer strips). */
template <typename T> struct pair_view {
    const T *av, *at, *adel, *bv, *bt, *bdel; /* rows' (a) and columns' (b) values, stamps, per-sample terms */
    int na, nb;
};

/* Pair (i, j) of sets x and y with the rows the shorter series. */
template <typename T>
__device__ __forceinline__ pair_view<T> rows_shorter(const device_set<T> &x, const device_set<T> &y, size_t i, size_t j)
{
    const bool x_rows = x.length[i] <= y.length[j];
    const device_set<T> &rs = x_rows ? x : y, &cs = x_rows ? y : x;
    const size_t ri = x_rows ? i : j, ci = x_rows ? j : i, dim = x.dim;
    pair_view<T> p;
    p.na = rs.length[ri], p.nb = cs.length[ci];
    p.av = rs.values + rs.base[ri] * dim, p.at = rs.stamps + rs.base[ri], p.adel = rs.delete_cost + rs.base[ri];
    p.bv = cs.values + cs.base[ci] * dim, p.bt = cs.stamps + cs.base[ci], p.bdel = cs.delete_cost + cs.base[ci];
    return p;
}

/* One pair by one warp in strips of 32 rows (X-TED's warp strategy): lane l owns row r0 + l and at
 * step s computes column s - l + 1, so the warp advances along an anti-diagonal; a lane takes the
 * cell above from the lane above by a shuffle, lane 0 from the strip above through a row buffer in
 * global memory (top_d, top_m: written by lane 31 of the previous strip, in the same warp). With a
 * window, a strip's steps start where lane 0's window starts and end where lane 31's ends: 2 r + 63
 * steps for the 2 r + 1 cells of a row of one length (warp_pair_rolling does better). Returns
 * D(na, nb) in every lane. */
template <class M, bool DIM1, bool WIN>
__device__ __forceinline__ typename M::real warp_pair_in_strips(const M &mf, const pair_view<typename M::real> &p,
                                                                 const pair_band &band, size_t dim, int lane,
                                                                 typename M::real *top_d, typename M::real *top_m)
{
    typedef typename M::real T;
    const T inf = infinity_of<T>();
    const int na = p.na, nb = p.nb;
    const T *av = p.av, *at = p.at, *adel = p.adel, *bv = p.bv, *bt = p.bt, *bdel = p.bdel;
    if constexpr (!WIN) {
        for (int c = lane; c <= nb; c += 32) { /* row 0 */
            top_d[c] = c == 0 ? (T)0 : inf;
            if constexpr (M::carries_before)
                top_m[c] = 0;
        }
    }
    __syncwarp();
    T result = 0;
    for (int r0 = 1; r0 <= na; r0 += 32) {
        const int r = r0 + lane <= na ? r0 + lane : na; /* lanes past na repeat row na, unused */
        const T a = DIM1 ? av[r] : (T)0, ta = M::uses_stamps ? at[r] : (T)0, da = M::has_aux ? adel[r] : (T)0;
        T d1 = inf, m1 = 0;                                   /* D(r, 0), M(r, 0) */
        /* D(r - 1, 0): 0 only above the first row (D[0][0]); column 0 is never in the row buffer */
        T above_prev_d = lane == 0 && r0 == 1 ? (T)0 : inf, above_prev_m = 0;
        /* the strip's steps; the window of this lane's row and of the row above the strip */
        int s_begin = 0, s_end = nb + 31, lo = 1, hi = nb, above_lo = 1, above_hi = nb;
        if constexpr (WIN) {
            int unused;
            band.row(r, &lo, &hi);
            band.row(r0, &s_begin, &unused);
            band.row(min(r0 + 31, na), &unused, &s_end);
            s_begin -= 1, s_end += 31;
            if (r0 > 1)
                band.row(r0 - 1, &above_lo, &above_hi);
            /* lane 0's first diagonal: D(r0 - 1, s_begin) (column s_begin is lane 0's first
             * minus one) */
            if (lane == 0 && s_begin > 0)
                row_above<M, WIN>(top_d, top_m, s_begin, s_begin, r0 == 1, above_lo, above_hi, &above_prev_d,
                                  &above_prev_m);
        }
        for (int s = s_begin; s < s_end; s++) {
            const int c = s - lane + 1;
            const bool active = c >= 1 && c <= nb;
            const int cc = active ? c : (c < 1 ? 1 : nb);
            T above_d = __shfl_up_sync(FULL_MASK_PAIRS, d1, 1), above_m = __shfl_up_sync(FULL_MASK_PAIRS, m1, 1);
            if (lane == 0) {
                if constexpr (WIN) {
                    row_above<M, WIN>(top_d, top_m, c, cc, r0 == 1, above_lo, above_hi, &above_d, &above_m);
                } else {
                    above_d = top_d[cc];
                    above_m = M::carries_before ? top_m[cc] : (T)0;
                }
            }
            T here;
            if (DIM1)
                here = mf.local(&a, bv + cc, 1, ta, M::uses_stamps ? bt[cc] : (T)0);
            else
                here = mf.local(av + (size_t)r * dim, bv + (size_t)cc * dim, dim, ta, M::uses_stamps ? bt[cc] : (T)0);
            T v = M::cell(above_d, d1, above_prev_d, da, M::has_aux ? bdel[cc] : (T)0, here, above_prev_m);
            if constexpr (WIN)
                v = c >= lo && c <= hi ? v : inf;
            if (active) {
                d1 = v;
                m1 = here;
            }
            above_prev_d = above_d;
            above_prev_m = above_m;
            if (lane == 31 && active) { /* the strip's last row, for the next strip */
                top_d[c] = v;
                if constexpr (M::carries_before)
                    top_m[c] = here;
            }
        }
        __syncwarp();
        if (r0 + 31 >= na)
            result = __shfl_sync(FULL_MASK_PAIRS, d1, na - r0);
    }
    return result;
}

/* A window's pair by one warp with its rows rolling over the lanes (pairs_warp_kernel): lane l computes rows l + 1,
 * l + 33, ... one after the other, each over its own window only, and starts a row as soon as the
 * row above is far enough ahead and the lane has finished its previous row, instead of waiting for
 * a strip of 32 rows to sweep the union of their windows (2 r + 63 steps for 2 r + 1 cells).
 *
 * Row i (window [lo(i), hi(i)]) starts at step T(i) = lo(i) - 1 + floor((i - 1) P / 32) and computes
 * column lo(i) + t - T(i) at step t. Cell (i, c) reads (i - 1, c), which row i - 1 computed lag(i) =
 * floor((i - 1) P / 32) - floor((i - 2) P / 32) >= 1 steps before (P >= 32), and (i - 1, c - 1) one
 * step before that. Row i + 32 takes over the lane at T(i) + lo(i + 32) - lo(i) + P, after row i's
 * last step when P >= hi(i) - lo(i + 32) + 1 (band_period). Each step a lane posts its cell in a
 * ring of ROLL_SLOTS steps in shared memory and reads the lane above's from lag steps before: a pair
 * of one length n with radius r takes n + (n - 1) P / 32 steps, P = max(32, 2 r - 31), for
 * n (2 r + 1) / 32 cells per lane. Pairs whose band does not roll (band_rolls), or whose steps an int cannot count,
 * run warp_pair_in_strips. */
#define ROLL_SLOTS 16
#define ROLL_PERIOD_MAX (32 * (ROLL_SLOTS - 2)) /* a lag and its diagonal's step stay in the ring */

/* P for a pair under a window (rows the shorter series): at least 32 and at least
 * hi(i) - lo(i + 32) + 1 for every row i. One length: 2 r - 31 exactly bounds it. Rows shorter (s
 * rows, l columns): hi(i) < (i + r) l / s + 1 and lo(i + 32) > (i + 31 - r) l / s (window.h's
 * formulas), so hi(i) - lo(i + 32) + 1 < (2 r - 31) l / s + 2 (checked exhaustively up to 300
 * samples and on random lengths up to 2,000: never exceeded, and P - 1 fails). 0: no window. */
__host__ __device__ __forceinline__ long long band_period(const pair_band &b)
{
    if (!b.windowed())
        return 0;
    const long long s = b.n < b.m ? b.n : b.m, l = b.n < b.m ? b.m : b.n, span = 2 * (long long)b.r - 31;
    long long x = 1;
    if (span > 0)
        x = b.mode == 1 ? span : (span * l + s - 1) / s + 1;
    return x > 32 ? x : 32;
}

/* Whether a pair's band rolls rather than takes the strips: its lag and its diagonal's step fit the
 * ring, and the columns that the lanes read at once stay in L1. The lanes are lag columns apart, so
 * a warp reads from P columns (of column_bytes each: the sample and any per-sample stamp and term)
 * where the strips read from 32: rolls while P is 32 or the P columns take ROLL_LIVE_BYTES at most.
 * On an H200 (bench/results/gpu-dtw.md, nineteenth session), TWED in double (24 bytes a column) took
 * 0.6 of the strips' time at P = 93 and 1.4 times at P = 169; DTW (8 bytes) 0.76 at P = 377. */
#define ROLL_LIVE_BYTES 3072
__host__ __device__ __forceinline__ bool band_rolls(long long period, long long bytes_per_column)
{
    return period != 0 && period <= ROLL_PERIOD_MAX && (period == 32 || period * bytes_per_column <= ROLL_LIVE_BYTES);
}

/* The bytes of a column that a step reads (band_rolls): its sample of `dim` values and any stamp
 * and per-sample term, of `real_size` bytes each (the kernel's and the plan's, pairs_roll). */
__host__ __device__ __forceinline__ long long column_bytes(size_t real_size, size_t dim, bool stamps, bool aux)
{
    return (long long)real_size * ((long long)dim + (stamps ? 1 : 0) + (aux ? 1 : 0));
}

template <class M, bool DIM1>
__device__ __forceinline__ typename M::real warp_pair_rolling(const M &mf, const pair_view<typename M::real> &p,
                                                              const pair_band &band, size_t dim, int period, int lane,
                                                              typename M::real (*ring_d)[32],
                                                              typename M::real (*ring_m)[32])
{
    typedef typename M::real T;
    const T inf = infinity_of<T>();
    const int na = p.na, nb = p.nb, above_lane = (lane + 31) & 31;
    const T *av = p.av, *at = p.at, *adel = p.adel, *bv = p.bv, *bt = p.bt, *bdel = p.bdel;
    /* the lane's next row, ready before it starts: its number, window, start, lag, the window of
     * the row above (+inf outside it), and its sample; start INT_MAX: none */
    int next = lane + 1, next_lo = 1, next_hi = 0, next_start = INT_MAX, next_lag = 1, next_above_lo = 1,
        next_above_hi = 0;
    T next_a = 0, next_ta = 0, next_da = 0;
    auto prepare = [&](int i) {
        next = i;
        if (i > na) {
            next_start = INT_MAX;
            return;
        }
        band.row(i, &next_lo, &next_hi);
        const long long delay = ((long long)(i - 1) * period) >> 5; /* floor((i - 1) P / 32) */
        next_start = next_lo - 1 + (int)delay;
        next_lag = i > 1 ? (int)(delay - (((long long)(i - 2) * period) >> 5)) : 1;
        next_above_lo = 1, next_above_hi = 0; /* row 0: no cell (D(0, 0) is the first diagonal) */
        if (i > 1)
            band.row(i - 1, &next_above_lo, &next_above_hi);
        next_a = DIM1 ? av[i] : (T)0;
        next_ta = M::uses_stamps ? at[i] : (T)0;
        next_da = M::has_aux ? adel[i] : (T)0;
    };
    prepare(lane + 1);
    bool prepared = true;
    /* the current row: steps [start, end], column t + shift at step t */
    int row = 0, start = 0, end = -1, shift = 0, lag = 1, above_hi = 0;
    T a = 0, ta = 0, da = 0, d1 = inf, diag_d = inf, diag_m = 0;
    const int steps = nb + (int)(((long long)(na - 1) * period) >> 5); /* row na's last cell is the last */
    for (int t0 = 0; t0 < steps; t0 += 32) {
        /* a lane changes rows at most once in 32 steps (P >= 32): the next row's data, computed
         * by the lanes that need it together, is ready when the row starts */
        if (!prepared) {
            prepare(row + 32);
            prepared = true;
        }
        const int t1 = min(t0 + 32, steps);
        for (int t = t0; t < t1; t++) {
            if (t == next_start) {
                row = next, start = t, end = t + next_hi - next_lo, shift = next_lo - t, lag = next_lag;
                above_hi = next_above_hi;
                a = next_a, ta = next_ta, da = next_da;
                d1 = inf; /* D(row, lo - 1): outside the window, or column 0 */
                /* D(row - 1, lo - 1): in the ring if inside the row above's window, else D(0, 0) = 0
                 * above the first row, +inf elsewhere */
                const int c0 = next_lo - 1;
                const bool inside = c0 >= next_above_lo && c0 <= above_hi;
                const int slot = (t - lag - 1) & (ROLL_SLOTS - 1);
                diag_d = inside ? ring_d[slot][above_lane] : row == 1 ? (T)0 : inf;
                diag_m = inside && M::carries_before ? ring_m[slot][above_lane] : (T)0;
                prepared = false;
            }
            const int c = t + shift;
            const bool active = t >= start && t <= end;
            const int cc = active ? c : 1;
            const int slot = (t - lag) & (ROLL_SLOTS - 1);
            const bool above_in = c <= above_hi; /* and c >= lo(row) >= lo(row - 1) */
            const T above_d = above_in ? ring_d[slot][above_lane] : inf;
            const T above_m = above_in && M::carries_before ? ring_m[slot][above_lane] : (T)0;
            T here;
            if (DIM1)
                here = mf.local(&a, bv + cc, 1, ta, M::uses_stamps ? bt[cc] : (T)0);
            else
                here = mf.local(av + (size_t)(row > 0 ? row : 1) * dim, bv + (size_t)cc * dim, dim, ta,
                                M::uses_stamps ? bt[cc] : (T)0);
            const T v = M::cell(above_d, d1, diag_d, da, M::has_aux ? bdel[cc] : (T)0, here, diag_m);
            d1 = v;
            diag_d = above_d, diag_m = above_m;
            ring_d[t & (ROLL_SLOTS - 1)][lane] = v;
            if constexpr (M::carries_before)
                ring_m[t & (ROLL_SLOTS - 1)][lane] = here;
            __syncwarp();
        }
    }
    /* the last step was row na's cell (na, nb) */
    return __shfl_sync(FULL_MASK_PAIRS, d1, (na - 1) & 31);
}

/* One warp per pair, for series too long for one thread. Without a window (or with one, ROLL
 * false) each pair in strips (warp_pair_in_strips); with ROLL, its rows rolling over the lanes
 * (warp_pair_rolling), or in strips where its band does not roll (or the window covers the pair).
 * Warps loop over the chunk's pairs; each has its own row buffer in `scratch` for the strips, and
 * with ROLL a ring in shared memory for the rolling rows (which costs the strips occupancy: the
 * plan takes ROLL only when the chunk's longest pairs roll, ww_cuda_pairs_roll). */
#define ROLL_WARPS 4 /* per block (the launch's 128 threads) */
template <class M, typename Tout, bool DIM1, bool WIN, bool ROLL>
__global__ void __launch_bounds__(ROLL_WARPS * 32) pairs_warp_kernel(device_set<typename M::real> x,
                                                                     device_set<typename M::real> y, block_geometry g,
                                                                     M mf, window_spec win, typename M::real *scratch,
                                                                     size_t scratch_stride, Tout *out)
{
    typedef typename M::real T;
    static_assert(M::symmetric, "rows are the shorter series of the pair");
    static_assert(WIN || !ROLL, "rows roll under a window only");
    __shared__ T ring_d_all[ROLL ? ROLL_WARPS : 1][ROLL_SLOTS][32];
    __shared__ T ring_m_all[ROLL && M::carries_before ? ROLL_WARPS : 1][ROLL_SLOTS][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const size_t warp_id = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = (gridDim.x * (size_t)blockDim.x) >> 5;
    T *top_d = scratch + warp_id * scratch_stride, *top_m = top_d + scratch_stride / 2;
    const size_t npairs = (g.row_end - g.row_begin) * g.width;
    for (size_t pair = warp_id; pair < npairs; pair += nwarps) {
        const size_t i = g.row_begin + pair / g.width, j = g.col_begin + pair % g.width;
        if (!entry_needed(g, i, j)) {
            if (lane == 0)
                out[pair] = 0; /* diagonal, or filled from its mirror by the host afterwards */
            continue;
        }
        const pair_view<T> p = rows_shorter(x, y, i, j);
        T result;
        if constexpr (ROLL) {
            const pair_band band = pair_band::make(win, (size_t)p.na, (size_t)p.nb);
            const long long period = band_period(band);
            /* (the steps' count and the step loop's t0 + 32 stay within an int) */
            const bool rolls = band_rolls(period, column_bytes(sizeof(T), x.dim, M::uses_stamps, M::has_aux)) &&
                               p.nb + (((long long)(p.na - 1) * period) >> 5) <= (long long)INT_MAX - 32;
            result = rolls ? warp_pair_rolling<M, DIM1>(mf, p, band, x.dim, (int)period, lane, ring_d_all[w],
                                                        ring_m_all[M::carries_before ? w : 0])
                           : warp_pair_in_strips<M, DIM1, true>(mf, p, band, x.dim, lane, top_d, top_m);
        } else {
            (void)w;
            const pair_band band = WIN ? pair_band::make(win, (size_t)p.na, (size_t)p.nb) : pair_band{};
            result = warp_pair_in_strips<M, DIM1, WIN>(mf, p, band, x.dim, lane, top_d, top_m);
        }
        if (lane == 0)
            out[pair] = (Tout)M::finish(result);
        __syncwarp();
    }
}

/* One thread per pair for dim 2 .. STAGED_DIM_MAX, with the block's shared series staged in shared
 * memory. The thread kernel's MODE 2 reads the shared sample vector from global memory (one scalar
 * load per component per cell) and keeps its row buffers in local memory, which does not stay in
 * L1 with thousands of threads in flight. Here every thread of a block has the same shared series
 * (blockIdx.x), so it is copied once, zero padded to a multiple of 4 components, and read with
 * 16-byte broadcast loads; the row buffers are in shared memory, thread-major (thread t's column c
 * at c * blockDim + t: a warp reads 32 consecutive words, no bank conflict). ROWS lane rows per
 * pass, their sample vectors in registers: each shared sample loaded serves ROWS cells, and the row
 * buffers are read and written once per ROWS rows. The padding adds exact zeros, so the distance is
 * lp_distance's up to the order of the additions (partial sums, as in MODE 2).
 * G = 2 lanes per pair (ROWS = 2 only): when a launch has too few pairs to hide latency (one query
 * against an index), each pair's two partial sums are computed by two lanes, one holding the even
 * components of the lane's rows and one the odd ones, and joined by one shuffle in the same order
 * as G = 1 joins them, so both give the same bits. Both lanes then run the same DP on their own row
 * buffers; the even lane writes the result. Half the registers per lane, twice the warps. */
#define STAGED_DIM_MAX 32
#define STAGED_SMEM_MAX (48 * 1024) /* per block, the most without opting in */
#define STAGED_THREADS 64           /* per block: blocks of 64 lanes waste fewer lanes at the grid's end */

/* Components per staged sample vector, and samples per staged series (the longest + sample 0, made
 * even so that every part of the layout stays 16-byte aligned). */
__host__ __device__ __forceinline__ int staged_vector_stride(int dim) { return (dim + 3) & ~3; }
__host__ __device__ __forceinline__ int staged_cap(size_t longest) { return (int)((longest + 2) & ~(size_t)1); }

/* Layout, in elements: cap sample vectors, cap stamps, cap per-sample terms, then the row buffers
 * (D, and the local terms for measures that carry them: `row_buffers` = 2; cap columns of `threads`
 * each). */
static inline size_t staged_smem_bytes(size_t longest, size_t dim, unsigned threads, size_t elem_size,
                                       size_t row_buffers)
{
    const size_t cap = (size_t)staged_cap(longest);
    return (cap * ((size_t)staged_vector_stride((int)dim) + 2) + row_buffers * cap * threads) * elem_size;
}

/* The staged sample vector keeps each group of four components as (c0, c2, c1, c3): the two that
 * one lane of a pair split over two lanes takes (c_g, c_{g+2}) are adjacent, one 16-byte load. */
__host__ __device__ __forceinline__ int staged_slot(int k) { return (k & ~3) | ((k & 1) << 1) | ((k >> 1) & 1); }

/* Components k .. k + 3 of a staged vector, in their own order. */
__device__ __forceinline__ void load4(const double *p, double v[4])
{
    const double2 lo = *(const double2 *)p, hi = *(const double2 *)(p + 2);
    v[0] = lo.x, v[1] = hi.x, v[2] = lo.y, v[3] = hi.y;
}
__device__ __forceinline__ void load4(const float *p, float v[4])
{
    const float4 q = *(const float4 *)p;
    v[0] = q.x, v[1] = q.z, v[2] = q.y, v[3] = q.w;
}
/* Components k + g and k + 2 + g of a staged vector (g = 0 or 1). */
__device__ __forceinline__ void load_pair(const double *p, double v[2])
{
    const double2 x = *(const double2 *)p;
    v[0] = x.x, v[1] = x.y;
}
__device__ __forceinline__ void load_pair(const float *p, float v[2])
{
    const float2 x = *(const float2 *)p;
    v[0] = x.x, v[1] = x.y;
}

/* The order of the additions of a sample distance's terms (measure_functor::pinned_sum_order):
 * pinned (TWED): 4 / ROWS partial sums per row, acc[k % NACC], joined (0 + 1) + (2 + 3); free: four
 * per row, acc[k % 4], joined (0 + 2) + (1 + 3). Both are independent chains of additions. */
template <class M, int ROWS> struct staged_order {
    static constexpr bool pinned = M::pinned_sum_order;
    static constexpr int sums = pinned ? 4 / ROWS : 4;
};

/* ||a_q - b||_P for the pass's ROWS rows, P = 1 or 2 (P is a template argument so that the loop
 * holds no test of the norm's p), as the measure M takes it (norm_from_sum: DTW without the root),
 * in staged_order's order. */
template <class M, typename T, int DIM_CAP, int ROWS, int P>
__device__ __forceinline__ void staged_distances(const T (&a)[ROWS][DIM_CAP], const T *b, T (&dist)[ROWS])
{
    constexpr int NACC = staged_order<M, ROWS>::sums;
    T acc[ROWS][NACC];
#pragma unroll
    for (int q = 0; q < ROWS; q++)
#pragma unroll
        for (int u = 0; u < NACC; u++)
            acc[q][u] = 0;
#pragma unroll
    for (int k = 0; k < DIM_CAP; k += 4) {
        T bk[4];
        load4(b + k, bk);
#pragma unroll
        for (int q = 0; q < ROWS; q++)
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const T d = a[q][k + u] - bk[u];
                acc[q][u % NACC] += P == 2 ? d * d : fabs(d);
            }
    }
#pragma unroll
    for (int q = 0; q < ROWS; q++) {
        T sum;
        if constexpr (!staged_order<M, ROWS>::pinned)
            sum = (acc[q][0] + acc[q][2 % NACC]) + (acc[q][1 % NACC] + acc[q][3 % NACC]);
        else
            sum = NACC == 4 ? (acc[q][0] + acc[q][1]) + (acc[q][2 % NACC] + acc[q][3 % NACC])
                            : NACC == 2 ? acc[q][0] + acc[q][1 % NACC] : acc[q][0];
        dist[q] = M::template norm_from_sum<P>(sum);
    }
}

/* staged_distances for G = 2, ROWS = 2: this lane (g = 0 or 1) holds components 4m + g and
 * 4m + 2 + g of its rows, as a[q][2m] and a[q][2m + 1]. Pinned order (two sums per row): both go
 * to acc[q][g], as in staged_distances; free order: to acc[q][g] and acc[q][g + 2], which the lane
 * joins first. The shuffle brings the other lane's sum, and both lanes add them as G = 1 does.
 * `mask`: the pair's two lanes. */
template <class M, typename T, int DIM_CAP, int P>
__device__ __forceinline__ void staged_distances_split(const T (&a)[2][DIM_CAP / 2], const T *b, int g, unsigned mask,
                                                       T (&dist)[2])
{
    constexpr bool pinned = staged_order<M, 2>::pinned;
    T acc[2] = {0, 0}, acc_hi[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < DIM_CAP; k += 4) {
        T bp[2];
        load_pair(b + k + 2 * g, bp);
#pragma unroll
        for (int q = 0; q < 2; q++) {
            const T d0 = a[q][k / 2] - bp[0], d2 = a[q][k / 2 + 1] - bp[1];
            acc[q] += P == 2 ? d0 * d0 : fabs(d0);
            (pinned ? acc[q] : acc_hi[q]) += P == 2 ? d2 * d2 : fabs(d2);
        }
    }
#pragma unroll
    for (int q = 0; q < 2; q++) {
        const T mine = pinned ? acc[q] : acc[q] + acc_hi[q];
        const T other = __shfl_xor_sync(mask, mine, 1);
        const T sum = g == 0 ? mine + other : other + mine;
        dist[q] = M::template norm_from_sum<P>(sum);
    }
}

template <class M, typename Tout, int DIM_CAP, int ROWS, bool WIN, int G>
__global__ void __launch_bounds__(128) pairs_staged_kernel(device_set<typename M::real> x, device_set<typename M::real> y,
                                                           block_geometry g, M mf, window_spec win, pair_map map,
                                                           int cap, Tout *out)
{
    typedef typename M::real T;
    static_assert(M::symmetric, "the sides of a pair are taken in either order");
    extern __shared__ __align__(16) unsigned char staged_bytes[];
    const int dim = (int)x.dim, vs = staged_vector_stride(dim), threads = (int)blockDim.x, t = (int)threadIdx.x;
    T *s_val = (T *)staged_bytes, *s_time = s_val + (size_t)cap * vs, *s_del = s_time + cap;
    T *row_d = s_del + cap + t, *row_m = row_d + (size_t)cap * threads; /* column c at [c * threads] */
    const device_set<T> &ls = map.lanes_are_rows ? x : y, &ss = map.lanes_are_rows ? y : x;
    /* the shared series, the same for the whole block: staged before any thread leaves */
    const size_t shared_i = blockIdx.x;
    const size_t si = map.lanes_are_rows ? g.col_begin + shared_i : g.row_begin + shared_i;
    const int nb = ss.length[si];
    {
        const T *bv = ss.values + ss.base[si] * dim, *bt = ss.stamps + ss.base[si], *bdel = ss.delete_cost + ss.base[si];
        for (int e = t; e < (nb + 1) * vs; e += threads) {
            const int c = e / vs, k = e - c * vs;
            s_val[c * vs + staged_slot(k)] = k < dim ? bv[(size_t)c * dim + k] : (T)0;
        }
        if constexpr (M::uses_stamps || M::has_aux)
            for (int c = t; c <= nb; c += threads) {
                if constexpr (M::uses_stamps)
                    s_time[c] = bt[c];
                if constexpr (M::has_aux)
                    s_del[c] = bdel[c];
            }
    }
    __syncthreads();
    static_assert(G == 1 || (G == 2 && ROWS == 2), "two lanes per pair split the two partial sums of ROWS = 2");
    /* G = 2: the pair's lanes are neighbours in a warp; they leave together (same pair) */
    const int gl = G == 2 ? t & 1 : 0;
    const unsigned pair_mask = G == 2 ? 3u << ((t & 31) & ~1) : 0u;
    const size_t lane_i = (blockIdx.y * (size_t)threads + t) / G;
    size_t i, j;
    if (!lane_pair(g, map, lane_i, shared_i, &i, &j))
        return;
    Tout *dst = out + (i - g.row_begin) * g.width + (j - g.col_begin);
    if (!entry_needed(g, i, j)) {
        if (gl == 0)
            *dst = 0; /* diagonal, or filled from its mirror by the host afterwards */
        return;
    }
    const size_t li = map.lanes_are_rows ? i : j;
    const int na = ls.length[li];
    const T *av = ls.values + ls.base[li] * dim, *at = ls.stamps + ls.base[li], *adel = ls.delete_cost + ls.base[li];
    const T inf = infinity_of<T>();
    const pair_band band = WIN ? pair_band::make(win, (size_t)na, (size_t)nb) : pair_band{};
    const int p = mf.norm_p();
    row_d[0] = 0;
    if constexpr (M::carries_before)
        row_m[0] = 0;
    for (int c = 1; c <= nb; c++) {
        row_d[c * threads] = inf;
        if constexpr (M::carries_before)
            row_m[c * threads] = 0; /* local(0, c > 0) only meets D[0][c-1] = inf */
    }
    for (int r0 = 1; r0 <= na; r0 += ROWS) {
        /* rows r0 .. r0 + ROWS - 1; a row past na repeats the row above, so row_d ends on row na;
         * the columns of the pass: the union of its rows' windows */
        T a[ROWS][DIM_CAP / G], ta[ROWS], da[ROWS], left[ROWS], diag[ROWS], before[ROWS];
        const T *ar[ROWS];
        bool valid[ROWS];
        int lo[ROWS], hi[ROWS], unused;
        const int c_lo = WIN ? (band_row<WIN>(band, r0, nb, &lo[0], &unused), lo[0]) : 1;
        int c_hi = nb;
        if constexpr (WIN)
            band_row<WIN>(band, min(r0 + ROWS - 1, na), nb, &unused, &c_hi);
#pragma unroll
        for (int q = 0; q < ROWS; q++) {
            valid[q] = r0 + q <= na;
            const int r = valid[q] ? r0 + q : na;
            if constexpr (WIN)
                band_row<WIN>(band, r, nb, &lo[q], &hi[q]);
            ar[q] = av + (size_t)r * dim;
#pragma unroll
            for (int e = 0; e < DIM_CAP / G; e++) {
                /* G = 2: components 4m + gl and 4m + 2 + gl (staged_distances_split) */
                const int k = G == 1 ? e : (e / 2) * 4 + (e % 2) * 2 + gl;
                a[q][e] = k < dim ? ar[q][k] : (T)0;
            }
            ta[q] = M::uses_stamps ? at[r] : (T)0;
            da[q] = M::has_aux ? adel[r] : (T)0;
            left[q] = inf;                           /* D(r, c_lo - 1) */
            diag[q] = q == 0 ? row_d[(c_lo - 1) * threads] : inf;       /* D(r - 1, c_lo - 1) */
            before[q] = q == 0 && M::carries_before ? row_m[(c_lo - 1) * threads] : (T)0;    /* M(r - 1, c_lo - 1) */
        }
        /* D(r0 + ROWS - 1, c_lo - 1) = inf: where a later pass may read its diagonal */
        row_d[(c_lo - 1) * threads] = inf;
        if constexpr (M::carries_before)
            row_m[(c_lo - 1) * threads] = 0;
        for (int c = c_lo; c <= c_hi; c++) {
            const T *b = s_val + c * vs;
            T dist[ROWS];
            if constexpr (G == 2) {
                if (p == 2)
                    staged_distances_split<M, T, DIM_CAP, 2>(a, b, gl, pair_mask, dist);
                else if (p == 1)
                    staged_distances_split<M, T, DIM_CAP, 1>(a, b, gl, pair_mask, dist);
            } else if (p == 2) {
                staged_distances<M, T, DIM_CAP, ROWS, 2>(a, b, dist);
            } else if (p == 1) {
                staged_distances<M, T, DIM_CAP, ROWS, 1>(a, b, dist);
            }
            if (p != 1 && p != 2) { /* rare: the lane's vectors from memory */
#pragma unroll
                for (int q = 0; q < ROWS; q++) {
                    T acc = 0;
                    for (int k = 0; k < dim; k++)
                        acc += pow(fabs(ar[q][k] - b[staged_slot(k)]), (T)p);
                    dist[q] = pow(acc, (T)1 / (T)p);
                }
            }
            const T tb = M::uses_stamps ? s_time[c] : (T)0, db = M::has_aux ? s_del[c] : (T)0;
            T up = row_d[c * threads], m_up = M::carries_before ? row_m[c * threads] : (T)0;
#pragma unroll
            for (int q = 0; q < ROWS; q++) {
                const T here = mf.local_from_norm(dist[q], ta[q], tb);
                T v = M::cell(up, left[q], diag[q], da[q], db, here, before[q]);
                if constexpr (WIN)
                    v = c >= lo[q] && c <= hi[q] ? v : inf;
                const T m = valid[q] ? here : m_up;
                v = valid[q] ? v : up;
                diag[q] = up;   /* D(r - 1, c) is the next column's diagonal */
                before[q] = m_up;
                left[q] = v;
                up = v;         /* the row below reads this cell as its up */
                m_up = m;
            }
            row_d[c * threads] = up;
            if constexpr (M::carries_before)
                row_m[c * threads] = m_up;
        }
    }
    if (gl == 0)
        *dst = (Tout)M::finish(row_d[nb * threads]);
}

/* One block per pair (X-TED's block strategy), for pairs of a few hundred samples and more when
 * there are too few of them to fill the GPU one per warp. The warp kernel's strips of 32 rows (lane
 * l owns row r0 + l and at step s computes column s - l + 1), with the block's warps on consecutive
 * strips at once, pipelined. Time is cut into phases of BLOCK_PHASE_STEPS steps separated by
 * __syncthreads(). Strip k hands its last row to strip k + 1 through one of two row buffers
 * (global scratch, per block; lane 31 writes column c at its step c + 30, lane 0 of the next strip
 * reads it at its step c - 1): so strip k + 1 runs two phases behind strip k, and a warp starts its
 * next strip k + W once its current one is done. With J phases per strip:
 *   start(k) = (k / W) * max(J, 2W) + 2 (k % W).
 * The buffer strip k writes is rewritten by strip k + 2, which runs two phases behind strip k + 1,
 * so every column is rewritten in a later phase than strip k + 1 reads it. */
#define BLOCK_WARPS 4
#define BLOCK_PHASE_STEPS 32

/* Phases of one pair in the block kernel (rows: the shorter series), in 64 bits (ww_block_phases,
 * internal.h): an int overflows for series of about 3 million samples. The cost model gives the
 * strategy no more than BLOCK_PHASES_MAX phases (it would not win there anyway); the kernel counts
 * them in 64 bits all the same, for a forced strategy. */
#define BLOCK_PHASES_MAX ((long long)INT_MAX)
__host__ __device__ __forceinline__ long long block_phases(long long rows, long long cols, int warps)
{
    return ww_block_phases(rows, cols, warps, BLOCK_PHASE_STEPS);
}

template <class M, typename Tout, bool DIM1>
__global__ void __launch_bounds__(BLOCK_WARPS * 32) pairs_block_kernel(device_set<typename M::real> x,
                                                                       device_set<typename M::real> y,
                                                                       block_geometry g, M mf,
                                                                       typename M::real *scratch,
                                                                       size_t scratch_stride, Tout *out)
{
    typedef typename M::real T;
    static_assert(M::symmetric, "rows are the shorter series of the pair");
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, W = blockDim.x >> 5;
    /* two row buffers, each D then local terms, of scratch_stride / 4 columns */
    const size_t L = scratch_stride / 4;
    T *buffers = scratch + blockIdx.x * scratch_stride;
    const T inf = infinity_of<T>();
    const size_t dim = x.dim, npairs = (g.row_end - g.row_begin) * g.width;
    for (size_t pair = blockIdx.x; pair < npairs; pair += gridDim.x) {
        const size_t i = g.row_begin + pair / g.width, j = g.col_begin + pair % g.width;
        if (!entry_needed(g, i, j)) { /* the same for the whole block: no barrier skipped unevenly */
            if (threadIdx.x == 0)
                out[pair] = 0; /* diagonal, or filled from its mirror by the host afterwards */
            continue;
        }
        /* rows: the shorter series */
        const bool x_rows = x.length[i] <= y.length[j];
        const device_set<T> &rs = x_rows ? x : y, &cs = x_rows ? y : x;
        const size_t ri = x_rows ? i : j, ci = x_rows ? j : i;
        const int na = rs.length[ri], nb = cs.length[ci];
        const T *av = rs.values + rs.base[ri] * dim, *at = rs.stamps + rs.base[ri], *adel = rs.delete_cost + rs.base[ri];
        const T *bv = cs.values + cs.base[ci] * dim, *bt = cs.stamps + cs.base[ci], *bdel = cs.delete_cost + cs.base[ci];
        const int strips = (na + 31) / 32, per_strip = (nb + 31 + BLOCK_PHASE_STEPS - 1) / BLOCK_PHASE_STEPS;
        const int round = per_strip > 2 * W ? per_strip : 2 * W;
        const long long phases = block_phases(na, nb, W); /* past INT_MAX for ~3 million samples */
        /* this warp's strip: its state lives across the phases of the strip */
        int r0 = 1, r = 1;
        T a = 0, ta = 0, da = 0, d1 = inf, m1 = 0, above_prev_d = inf, above_prev_m = 0;
        /* the phase counted in 64 bits; this warp's strip k = q W + w and its phase u in the current
         * round, counted along in int (no division; both stay below strips and round): u < 0 until
         * the warp's first strip starts, two phases per warp after the block's */
        int q = 0, u = -2 * w;
        for (long long phase = 0; phase < phases; phase++) {
            const int k = q * W + w;
            if (u >= 0 && k < strips && u < per_strip) { /* uniform in the warp: shuffles are safe */
                if (u == 0) {
                    r0 = 32 * k + 1;
                    r = r0 + lane <= na ? r0 + lane : na; /* lanes past na repeat row na, unused */
                    a = DIM1 ? av[r] : (T)0;
                    ta = M::uses_stamps ? at[r] : (T)0;
                    da = M::has_aux ? adel[r] : (T)0;
                    d1 = inf; /* D(r, 0) */
                    m1 = 0;
                    /* D(r - 1, 0): 0 only above the first row (D[0][0]) */
                    above_prev_d = lane == 0 && k == 0 ? (T)0 : inf;
                    above_prev_m = 0;
                }
                const T *in_d = buffers + ((k + 1) & 1) * 2 * L, *in_m = in_d + L;
                T *out_d = buffers + (k & 1) * 2 * L, *out_m = out_d + L;
                const int s_end = (u + 1) * BLOCK_PHASE_STEPS < nb + 31 ? (u + 1) * BLOCK_PHASE_STEPS : nb + 31;
                /* The step is warp_pair_in_strips's (edge from the row buffer or row 0). Folded into
                 * one device function shared by the two kernels, on an H200 (same run, A/B), the
                 * block kernel ran 4-7% slower (the warp kernel the same), so each keeps its copy:
                 * a change to one is a change to both. */
                for (int s = u * BLOCK_PHASE_STEPS; s < s_end; s++) {
                    const int c = s - lane + 1;
                    const bool active = c >= 1 && c <= nb;
                    const int cc = active ? c : (c < 1 ? 1 : nb);
                    T above_d = __shfl_up_sync(FULL_MASK_PAIRS, d1, 1), above_m = __shfl_up_sync(FULL_MASK_PAIRS, m1, 1);
                    if (lane == 0) { /* row 0 above the first strip; else the strip above's last row */
                        above_d = k == 0 ? inf : in_d[cc];
                        above_m = k == 0 || !M::carries_before ? (T)0 : in_m[cc];
                    }
                    T here;
                    if (DIM1)
                        here = mf.local(&a, bv + cc, 1, ta, M::uses_stamps ? bt[cc] : (T)0);
                    else
                        here = mf.local(av + (size_t)r * dim, bv + (size_t)cc * dim, dim, ta,
                                        M::uses_stamps ? bt[cc] : (T)0);
                    const T v = M::cell(above_d, d1, above_prev_d, da, M::has_aux ? bdel[cc] : (T)0, here, above_prev_m);
                    if (active) {
                        d1 = v;
                        m1 = here;
                    }
                    above_prev_d = above_d;
                    above_prev_m = above_m;
                    if (lane == 31 && active) { /* the strip's last row, for the next strip */
                        out_d[c] = v;
                        if constexpr (M::carries_before)
                            out_m[c] = here;
                    }
                }
                if (u == per_strip - 1 && r0 + 31 >= na && lane == na - r0)
                    out[pair] = (Tout)M::finish(d1); /* D(na, nb) */
            }
            __syncthreads(); /* this phase's row buffer writes are seen by the next phases */
            if (++u == round) { /* round >= 2 W > 2 w: a negative u reaches 0 first */
                u = 0;
                q++;
            }
        }
    }
}

/* The block strategy with a window: the strips' steps start and end with their windows, so strips
 * are no longer in step by a fixed schedule; each warp runs a phase of its strip when the strip
 * above has finished the next phase (two phases ahead, as in pairs_block_kernel: strip k reads
 * columns up to 32 (u + 1) in phase u, which strip k - 1 writes by the end of its phase u + 1), or
 * the whole strip. Phases are absolute (steps 32 u .. 32 u + 31 of every strip). Each strip posts
 * its progress in shared memory as one 64-bit word (its number, and the phases it has finished, or
 * all), in a ring of 2W slots (strip k - 1's slot is reused by strip k - 1 + 2W only, which starts
 * after strip k has finished). A warp posts, at the start of a round, what it had done before that
 * round's barrier, so whichever post a reader sees (the round's or the one before) covers only
 * row-buffer writes that the barrier has published; lane 0 reads it for the whole warp. The row
 * buffer strip k writes is the one strip k - 2 wrote; strip k - 1 has read each of its columns
 * before strip k writes it (two phases ahead). */
#define BLOCK_DONE_ALL 0xffffffffu
template <class M, typename Tout, bool DIM1>
__global__ void __launch_bounds__(BLOCK_WARPS * 32) pairs_block_window_kernel(device_set<typename M::real> x,
                                                                              device_set<typename M::real> y,
                                                                              block_geometry g, M mf, window_spec win,
                                                                              typename M::real *scratch,
                                                                              size_t scratch_stride, Tout *out)
{
    typedef typename M::real T;
    static_assert(M::symmetric, "rows are the shorter series of the pair");
    constexpr int SLOTS = 2 * BLOCK_WARPS;
    __shared__ unsigned long long slot[SLOTS]; /* strip << 32 | phases finished (BLOCK_DONE_ALL: all) */
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, W = blockDim.x >> 5;
    const size_t L = scratch_stride / 4;
    T *buffers = scratch + blockIdx.x * scratch_stride;
    const T inf = infinity_of<T>();
    const size_t dim = x.dim, npairs = (g.row_end - g.row_begin) * g.width;
    for (size_t pair = blockIdx.x; pair < npairs; pair += gridDim.x) {
        const size_t i = g.row_begin + pair / g.width, j = g.col_begin + pair % g.width;
        if (!entry_needed(g, i, j)) { /* the same for the whole block: no barrier skipped unevenly */
            if (threadIdx.x == 0)
                out[pair] = 0; /* diagonal, or filled from its mirror by the host afterwards */
            continue;
        }
        const bool x_rows = x.length[i] <= y.length[j];
        const device_set<T> &rs = x_rows ? x : y, &cs = x_rows ? y : x;
        const size_t ri = x_rows ? i : j, ci = x_rows ? j : i;
        const int na = rs.length[ri], nb = cs.length[ci];
        const T *av = rs.values + rs.base[ri] * dim, *at = rs.stamps + rs.base[ri], *adel = rs.delete_cost + rs.base[ri];
        const T *bv = cs.values + cs.base[ci] * dim, *bt = cs.stamps + cs.base[ci], *bdel = cs.delete_cost + cs.base[ci];
        const pair_band band = pair_band::make(win, (size_t)na, (size_t)nb);
        const int strips = (na + 31) / 32;
        __syncthreads(); /* the previous pair's last reads of the slots are done */
        if (threadIdx.x < SLOTS)
            slot[threadIdx.x] = ~0ull; /* no strip */
        __syncthreads();
        int k = w;             /* this warp's strip */
        bool started = false;  /* its state below is set up */
        bool first = false;    /* its first phase is next */
        int post_slot = -1;    /* the post due at the next round's start */
        unsigned long long post = 0;
        int r0 = 1, r = 1, lo = 1, hi = nb, above_lo = 1, above_hi = nb, s_begin = 0, s_end = 0, u = 0, u_last = 0;
        T a = 0, ta = 0, da = 0, d1 = inf, m1 = 0, above_prev_d = inf, above_prev_m = 0;
        while (__syncthreads_or(k < strips || post_slot >= 0)) { /* one phase per round */
            if (post_slot >= 0) {
                if (lane == 0)
                    slot[post_slot] = post;
                post_slot = -1;
            }
            if (k >= strips)
                continue;
            if (!started) {
                int unused;
                r0 = 32 * k + 1;
                r = r0 + lane <= na ? r0 + lane : na; /* lanes past na repeat row na, unused */
                band.row(r, &lo, &hi);
                band.row(r0, &s_begin, &unused);
                band.row(min(r0 + 31, na), &unused, &s_end);
                s_begin -= 1, s_end += 31;
                above_lo = 1, above_hi = nb;
                if (r0 > 1)
                    band.row(r0 - 1, &above_lo, &above_hi);
                u = s_begin / BLOCK_PHASE_STEPS;
                u_last = (s_end - 1) / BLOCK_PHASE_STEPS;
                a = DIM1 ? av[r] : (T)0;
                ta = M::uses_stamps ? at[r] : (T)0;
                da = M::has_aux ? adel[r] : (T)0;
                d1 = inf, m1 = 0;
                /* D(r - 1, 0): 0 only above the first row (D[0][0]) */
                above_prev_d = lane == 0 && k == 0 ? (T)0 : inf, above_prev_m = 0;
                started = first = true;
            }
            /* strip k - 1 two phases ahead, or finished: lane 0 decides for the warp */
            int go = 1;
            if (k > 0 && lane == 0) {
                const unsigned long long p = slot[(k - 1) % SLOTS];
                const unsigned done = (unsigned)p;
                go = (unsigned)(p >> 32) == (unsigned)(k - 1) && (done == BLOCK_DONE_ALL || done >= (unsigned)u + 2);
            }
            if (!__shfl_sync(FULL_MASK_PAIRS, go, 0))
                continue;
            const T *in_d = buffers + ((k + 1) & 1) * 2 * L, *in_m = in_d + L;
            T *out_d = buffers + (k & 1) * 2 * L, *out_m = out_d + L;
            if (first) { /* lane 0's first diagonal: D(r0 - 1, s_begin), now that it is written */
                if (lane == 0 && s_begin > 0)
                    row_above<M, true>(in_d, in_m, s_begin, s_begin, k == 0, above_lo, above_hi, &above_prev_d,
                                       &above_prev_m);
                first = false;
            }
            const int s_first = max(u * BLOCK_PHASE_STEPS, s_begin), s_stop = min((u + 1) * BLOCK_PHASE_STEPS, s_end);
            for (int s = s_first; s < s_stop; s++) {
                const int c = s - lane + 1;
                const bool active = c >= 1 && c <= nb;
                const int cc = active ? c : (c < 1 ? 1 : nb);
                T above_d = __shfl_up_sync(FULL_MASK_PAIRS, d1, 1), above_m = __shfl_up_sync(FULL_MASK_PAIRS, m1, 1);
                if (lane == 0)
                    row_above<M, true>(in_d, in_m, c, cc, k == 0, above_lo, above_hi, &above_d, &above_m);
                T here;
                if (DIM1)
                    here = mf.local(&a, bv + cc, 1, ta, M::uses_stamps ? bt[cc] : (T)0);
                else
                    here = mf.local(av + (size_t)r * dim, bv + (size_t)cc * dim, dim, ta, M::uses_stamps ? bt[cc] : (T)0);
                T v = M::cell(above_d, d1, above_prev_d, da, M::has_aux ? bdel[cc] : (T)0, here, above_prev_m);
                v = c >= lo && c <= hi ? v : inf;
                if (active) {
                    d1 = v;
                    m1 = here;
                }
                above_prev_d = above_d;
                above_prev_m = above_m;
                if (lane == 31 && active) {
                    out_d[c] = v;
                    if constexpr (M::carries_before)
                        out_m[c] = here;
                }
            }
            const bool finished = u == u_last;
            u++;
            post_slot = k % SLOTS;
            post = (unsigned long long)(unsigned)k << 32 | (finished ? BLOCK_DONE_ALL : (unsigned)u);
            if (finished) {
                if (r0 + 31 >= na && lane == na - r0)
                    out[pair] = (Tout)M::finish(d1); /* D(na, nb) */
                k += W;
                started = false;
            }
        }
    }
}

/* A square self block computed in one chunk (n x n, row stride n): the entries below the diagonal
 * from their mirrors above it, where the kernels computed them (they wrote 0 below), so that the
 * host copies the chunk as it is instead of mirroring a matrix of megabytes on its cores. Block
 * (x, y) of 32 x 8 threads fills tile (y, x) below the diagonal from tile (x, y) through shared
 * memory, so that reads and writes both run along rows; blocks above the diagonal return. */
template <typename Tout> __global__ void __launch_bounds__(256) mirror_lower_kernel(Tout *d, size_t n)
{
    __shared__ Tout tile[32][33]; /* one more column: the transposed reads hit 32 banks */
    const size_t tile_row = blockIdx.y, tile_col = blockIdx.x;
    if (tile_col > tile_row)
        return;
    for (unsigned k = threadIdx.y; k < 32; k += 8) { /* tile (tile_col, tile_row), above the diagonal */
        const size_t r = tile_col * 32 + k, c = tile_row * 32 + threadIdx.x;
        if (r < n && c < n)
            tile[k][threadIdx.x] = d[r * n + c];
    }
    __syncthreads();
    for (unsigned k = threadIdx.y; k < 32; k += 8) { /* (i, j) = (j, i), for j < i */
        const size_t i = tile_row * 32 + k, j = tile_col * 32 + threadIdx.x;
        if (i < n && j < i)
            d[i * n + j] = tile[threadIdx.x][k];
    }
}

#endif
