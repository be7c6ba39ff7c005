/* Soft-DTW's batch kernels: one block per pair, the techniques of the cuTimeWarp report done our way.
 *
 * The block's P threads own the rows of a band of H = P K rows, K consecutive rows each, and sweep
 * the band by anti-diagonals: at step d a thread computes its K cells (i, d - i), which are
 * independent of each other (instruction-level parallelism). A cell reads its left and diagonal
 * neighbours from the thread's own registers (the values of the two steps before) and, for the
 * thread's first row, the last row of the thread above: a warp shuffle, or shared memory across
 * warps, one block barrier per step. Bands follow each other down the table, the last row of one
 * being the boundary row of the next (device memory, one row per pair): any length in linear
 * memory for the value.
 *
 * For gradients the forward pass stores R. Compact: every band whole, at the cell's slot
 * ((i + j - b0 - 1) mod m) H + r P + t (row r of thread t; b0 the band's first row), which is
 * unique in the band and makes a step's stores and loads coalesced. Checkpointed: only the boundary
 * row of each band is kept, and the backward pass recomputes a band (into one band's table) before
 * walking it back: about twice the forward's work in O(n m / bands + bands m) memory, with the same
 * bits, since every cell is computed from the same operands by the same function.
 * The backward pass walks each band in reverse with the same tiling: E and Q = R - cost of the
 * successors come from the thread's registers or the thread below (shuffle down / shared memory /
 * the band below's boundary row, E and Q). The gradient of a row is summed in the registers of its
 * owner; the gradient of a column travels up the band with the wavefront (the cell (i, j) of step
 * d and the cell (i - 1, j) of step d - 1 are neighbours), added once per column and band by the
 * band's first thread. Series of more than SDTW_MAX_DIM dimensions (D = 0, the dimension at run
 * time) read their samples from device memory and add every cell's gradient directly.
 *
 * The cell and the backward weight are the measure's (src/measures/softdtw.h), in the computing type
 * T. Scheduling only: no policy here (softdtw.cu chooses P, K, the mode and the memory). */
#ifndef WW_CUDA_SOFTDTW_KERNELS_CUH
#define WW_CUDA_SOFTDTW_KERNELS_CUH

#include "measure.cuh"

#define SDTW_MAX_DIM 3 /* dimensions kept in registers (D = 1..3); more: D = 0 */
#define SDTW_FULL_MASK 0xffffffffu

/* What a pass over the pairs keeps of R. */
enum sdtw_mode {
    SDTW_VALUE = 0,       /* the value only: one boundary row per pair */
    SDTW_COMPACT = 1,     /* every band's R, for the backward pass */
    SDTW_CHECKPOINTS = 2, /* every band's boundary row; the backward pass recomputes the bands */
};

/* One pair of the batch. */
struct sdtw_pair {
    long long x0, y0;  /* first sample of each series in its values array */
    long long rows0;   /* offset of the pair's boundary rows: R ((bands or 1) x (m + 1)), then E and Q (m + 2 each) */
    long long table0;  /* offset of the pair's stored R: every band (compact) or one band (checkpoints) */
    long long radius;  /* the window's radius, -1: none */
    int n, m;
};

/* The pairs of a launch: their table in device memory, or, for a regular batch (every x of n
 * samples and every y of m, one after the other, one window), pair 0 and the steps from one pair
 * to the next, which spare the table's upload. `nonfinite`: the batch's NaN flag, set by
 * sdtw_check_kernel before: the kernels then write nothing. */
struct sdtw_pairs {
    const sdtw_pair *table; /* NULL: regular */
    sdtw_pair first;
    long long x_step, y_step, memory_step;
    const int *nonfinite;
};

__device__ __forceinline__ sdtw_pair sdtw_pair_at(const sdtw_pairs &ps, int b)
{
    if (ps.table)
        return ps.table[b];
    sdtw_pair p = ps.first;
    p.x0 += b * ps.x_step, p.y0 += b * ps.y_step;
    p.rows0 += b * ps.memory_step, p.table0 += b * ps.memory_step;
    return p;
}

/* Steps of a band's loop unrolled: two in float, which renames the registers that rotate from step to
 * step instead of moving them; one in double, where two took more registers than it saved. */
template <typename T> __host__ __device__ constexpr int sdtw_unroll() { return sizeof(T) == 4 ? 2 : 1; }

/* Threads per block at most: f64 cells hold twice the registers. */
template <typename T> __host__ __device__ constexpr int sdtw_max_threads() { return sizeof(T) == 8 ? 256 : 512; }
/* Blocks of that size per multiprocessor at least, for the forward pass: in double, 2 (at most 128
 * registers a thread), so that 4 blocks of 128 threads (a batch of 512 pairs on 132 SMs) fit at
 * once. The double backward pass needs more than 128 registers (it spilled); float fits in 128. */
template <typename T> __host__ __device__ constexpr int sdtw_min_blocks() { return sizeof(T) == 8 ? 2 : 1; }

/* The kernels' arithmetic in the computing type T. double computes R as the CPU engine does
 * (natural exponentials, +inf off the table and the window). float computes R' = R / (gamma ln 2)
 * in base 2 with a finite off value (src/measures/softmath.h, ww_softmin2_f32): a cell is about
 * half the instructions (no scaling of the exponentials' arguments, no selects guarding inf - inf).
 * The costs are scaled once a cell (cost_unit), after the differences: samples scaled before
 * subtracting would round each one at its own magnitude, losing the digits of close samples far
 * from 0 (float32 values 1e-4 off at an offset of 1e4). */
template <typename T> struct sdtw_math;
template <> struct sdtw_math<double> {
    ww_coef_f64 c;
    __device__ explicit sdtw_math(const ww_coef_f64 &coef) : c(coef) {}
    __device__ static double off() { return INFINITY; }
    __device__ static bool is_off(double r) { return !(r < INFINITY); }
    __device__ static double cost_unit() { return 1; } /* a cell's cost is the squared distance times it */
    __device__ double cell(double up, double left, double diag, double cost) const
    {
        return ww_softdtw_cell_f64(up, left, diag, 0, 0, cost, 0, &c);
    }
    __device__ double weight(double q, double here) const { return ww_softdtw_back_weight_f64(q, here, 0, c.inv_gamma, 1); }
    __device__ static double value(double r) { return r; }
    /* a cell's R, or off outside the window */
    __device__ static double in_window_or_off(double r, bool inside) { return inside ? r : INFINITY; }
    /* E is masked off the table: the f64 exponential of -inf is about 3e-308, not 0 */
    static constexpr bool mask_e = true;
};
template <> struct sdtw_math<float> {
    float k; /* 1 / (gamma ln 2) */
    __device__ explicit sdtw_math(const ww_coef_f32 &coef) : k(coef.inv_gamma * 1.44269504088896341f) {}
    __device__ static float off() { return WW_SOFT2_OFF_F32; }
    __device__ static bool is_off(float r) { return r >= 0.5f * WW_SOFT2_OFF_F32; }
    __device__ float cost_unit() const { return k; }
    __device__ float cell(float up, float left, float diag, float cost) const
    {
        return ww_softdtw2_cell_f32(up, left, diag, cost);
    }
    __device__ float weight(float q, float here) const { return ww_softdtw2_back_weight_f32(q, here); }
    __device__ float value(float r) const { return is_off(r) ? INFINITY : r / k; }
    /* as a max (r <= off): a select of r let the compiler branch around the cell's clamp, one
     * branch per cell, which kept the cells' chains from interleaving */
    __device__ static float in_window_or_off(float r, bool inside)
    {
        return fmaxf(r, inside ? -WW_SOFT2_OFF_F32 : WW_SOFT2_OFF_F32);
    }
    /* off the table E comes out 0 by itself: every weight there is 2^(finite - 2^125) = 0 */
    static constexpr bool mask_e = false;
};

template <typename T> __device__ __forceinline__ T sdtw_off() { return sdtw_math<T>::off(); }

/* The samples of a thread's rows and of the columns its rows are at: in registers for D > 0
 * (the columns shift by one per step: one new sample is read, one step ahead), read from device
 * memory at each cell for D = 0. */
template <typename T, int K, int D> struct sdtw_samples {
    static constexpr int DD = D > 0 ? D : 1;
    T x[K][DD], y[K][DD], next[DD];
    const T *X, *Y;
    int dim;
    T cost_unit; /* sdtw_math's: a cost is the squared distance times it */

    __device__ __forceinline__ void load_column(T *to, const sdtw_pair &p, int col) const
    {
#pragma unroll
        for (int k = 0; k < DD; k++)
            to[k] = col >= 1 && col <= p.m ? Y[(p.y0 + col - 1) * D + k] : (T)0;
    }
    /* rows i0 .. i0 + K - 1 at the first step: row r at column first_col - r. `next` is the column
     * that enters at the next step: row 0's forward (dir +1), row K - 1's backward (dir -1). */
    __device__ __forceinline__ void start(const sdtw_pair &p, int i0, int first_col, int dir)
    {
        if constexpr (D > 0) {
#pragma unroll
        for (int r = 0; r < K; r++) {
#pragma unroll
            for (int k = 0; k < DD; k++)
                x[r][k] = i0 + r <= p.n ? X[(p.x0 + i0 + r - 1) * D + k] : (T)0;
            load_column(y[r], p, first_col - r);
        }
        load_column(next, p, dir > 0 ? first_col + 1 : first_col - K);
        }
    }
    /* to the next step, whose row 0 is at column first_col: the columns shift by one row */
    __device__ __forceinline__ void advance(const sdtw_pair &p, int first_col, int dir)
    {
        if constexpr (D == 0)
            return;
        if (dir > 0) {
#pragma unroll
            for (int r = K - 1; r > 0; r--)
#pragma unroll
                for (int k = 0; k < DD; k++)
                    y[r][k] = y[r - 1][k];
#pragma unroll
            for (int k = 0; k < DD; k++)
                y[0][k] = next[k];
            load_column(next, p, first_col + 1);
        } else {
#pragma unroll
            for (int r = 0; r < K - 1; r++)
#pragma unroll
                for (int k = 0; k < DD; k++)
                    y[r][k] = y[r + 1][k];
#pragma unroll
            for (int k = 0; k < DD; k++)
                y[K - 1][k] = next[k];
            load_column(next, p, first_col - K);
        }
    }
    __device__ __forceinline__ T cost(const sdtw_pair &p, int r, int i, int j) const
    {
        T acc = 0;
        if constexpr (D > 0) {
#pragma unroll
            for (int k = 0; k < DD; k++) {
                const T diff = x[r][k] - y[r][k];
                acc += diff * diff;
            }
            acc *= cost_unit;
        } else if (i <= p.n && j >= 1 && j <= p.m) { /* samples outside the series are not read */
            const T *a = X + (p.x0 + i - 1) * (long long)dim, *b = Y + (p.y0 + j - 1) * (long long)dim;
            for (int k = 0; k < dim; k++) {
                const T diff = a[k] - b[k];
                acc += diff * diff;
            }
            acc *= cost_unit;
        }
        return acc;
    }
};

/* The window's columns of row i ([1, m] without a window; empty for rows outside 1..n). The window
 * is a band: lo and hi do not decrease with i. */
__device__ __forceinline__ void sdtw_window_row(const sdtw_pair &p, int i, int *lo, int *hi)
{
    *lo = 1, *hi = p.m;
    if (i < 1 || i > p.n)
        *lo = 1, *hi = 0;
    else if (p.radius >= 0) {
        size_t l, h;
        ww_window_row((size_t)p.n, (size_t)p.m, (size_t)p.radius, (size_t)i, &l, &h);
        *lo = (int)l, *hi = (int)h;
    }
}
template <int K> __device__ __forceinline__ void sdtw_window_rows(const sdtw_pair &p, int i0, int *lo, int *hi)
{
#pragma unroll
    for (int r = 0; r < K; r++)
        sdtw_window_row(p, i0 + r, &lo[r], &hi[r]);
}

/* The steps of a band's sweep: from its first row's first cell in the window to its last row's
 * last. A window shortens the sweep: the cells before and after are off the window, and a column's
 * gradient reaches the band's first row before the backward sweep ends (every cell of the band is
 * at a column >= lo of the first row). */
__device__ __forceinline__ void sdtw_band_steps(const sdtw_pair &p, int b0, int last_row, int *first, int *last)
{
    int lo, hi, lo_last, hi_last;
    sdtw_window_row(p, b0, &lo, &hi);
    sdtw_window_row(p, last_row, &lo_last, &hi_last);
    *first = b0 + lo, *last = last_row + hi_last;
}

/* R of the boundary row above a band at column c (row b0 - 1: row 0 of the table for the first
 * band); off outside that row's window [lo, hi], which the band above may not have swept. */
template <typename T> __device__ __forceinline__ T sdtw_top(const T *top, int b0, int lo, int hi, int c)
{
    if (b0 == 1)
        return c == 0 ? (T)0 : sdtw_off<T>();
    return c < lo || c > hi ? sdtw_off<T>() : top[c];
}

/* The forward sweep of one band (rows b0 .. b0 + H - 1 that exist): R into `table` (may be NULL),
 * the band's last row into `bottom` (NULL for the last band), scale R[n][m] added to *value (NULL:
 * not; stored when !accumulate). xch: 2 values per warp of shared memory. Every thread of the block
 * calls it. */
template <typename T, int K, int D>
__device__ void sdtw_band_forward(const sdtw_pair &p, sdtw_samples<T, K, D> &s, const sdtw_math<T> &math,
                                  int b0, const T *top, T *bottom, T *table, T *value, T scale, bool accumulate, T *xch)
{
    const int P = (int)blockDim.x, t = (int)threadIdx.x, lane = t & 31, warp = t >> 5;
    const int H = P * K, n = p.n, m = p.m, i0 = b0 + t * K;
    const int last_row = b0 + H - 1 < n ? b0 + H - 1 : n;
    int lo[K], hi[K], d_first, d_last, top_lo, top_hi;
    sdtw_window_rows<K>(p, i0, lo, hi);
    sdtw_band_steps(p, b0, last_row, &d_first, &d_last);
    sdtw_window_row(p, b0 - 1, &top_lo, &top_hi);
    s.start(p, i0, d_first - i0, 1);
    T prev[K], prev2[K];
#pragma unroll
    for (int r = 0; r < K; r++)
        prev[r] = prev2[r] = sdtw_off<T>();
    /* the first row's neighbours above: R(i0 - 1, j) and R(i0 - 1, j - 1); thread 0 reads them
     * from the boundary row two steps ahead */
    T up_in = sdtw_off<T>(), diag_in = sdtw_off<T>(), ahead1 = sdtw_off<T>(), ahead2 = sdtw_off<T>();
    const int c0 = d_first - b0; /* the first row's first column */
    if (t == 0) {
        diag_in = sdtw_top(top, b0, top_lo, top_hi, c0 - 1);
        up_in = sdtw_top(top, b0, top_lo, top_hi, c0);
        ahead1 = sdtw_top(top, b0, top_lo, top_hi, c0 + 1);
        ahead2 = sdtw_top(top, b0, top_lo, top_hi, c0 + 2);
    }
    int slot = c0 - 1; /* (d - b0 - 1) mod m, c0 <= m */
#pragma unroll sdtw_unroll<T>()
    for (int d = d_first; d <= d_last; d++) {
        T cur[K];
        /* the K cells are computed without branches, so that their chains interleave; a warp with
         * no cell in the table at this step (the ramps of the anti-diagonals) skips them */
        const int j0 = d - i0; /* row 0's column */
        if (__any_sync(SDTW_FULL_MASK, j0 >= 1 && j0 - (K - 1) <= m && i0 <= n)) {
#pragma unroll
            for (int r = 0; r < K; r++) {
                const int i = i0 + r, j = j0 - r;
                const T up = r == 0 ? up_in : prev[r - 1], diag = r == 0 ? diag_in : prev2[r - 1];
                const T v = math.cell(up, prev[r], diag, s.cost(p, r, i, j));
                cur[r] = sdtw_math<T>::in_window_or_off(v, j >= lo[r] && j <= hi[r]);
                /* the ramp's stores before column 1 land in slots of columns j + k m that are
                 * stored later (the row's columns 1..m fill its m slots in order) */
                if (table && j <= m)
                    table[(long long)slot * H + r * P + t] = cur[r];
            }
        } else {
#pragma unroll
            for (int r = 0; r < K; r++)
                cur[r] = sdtw_off<T>();
        }
        if (bottom && t == P - 1 && j0 - (K - 1) >= 1 && j0 - (K - 1) <= m)
            bottom[j0 - (K - 1)] = cur[K - 1];
        /* the thread below reads this thread's last row */
        T from = __shfl_up_sync(SDTW_FULL_MASK, cur[K - 1], 1);
        if (lane == 31)
            xch[2 * warp + (d & 1)] = cur[K - 1];
        __syncthreads();
        if (lane == 0) {
            if (warp > 0)
                from = xch[2 * (warp - 1) + (d & 1)];
            else {
                from = ahead1;
                ahead1 = ahead2;
                ahead2 = sdtw_top(top, b0, top_lo, top_hi, d + 3 - b0);
            }
        }
        diag_in = up_in;
        up_in = from;
#pragma unroll
        for (int r = 0; r < K; r++)
            prev2[r] = prev[r], prev[r] = cur[r];
        s.advance(p, d + 1 - i0, 1);
        slot = slot + 1 == m ? 0 : slot + 1;
    }
    /* R[n][m]: row n's cell of the last step */
    if (value)
#pragma unroll
        for (int r = 0; r < K; r++)
            if (i0 + r == n)
                *value = (accumulate ? *value : (T)0) + scale * math.value(prev[r]);
}

/* E and Q of the boundary row below a band at column c (the band below's first row; none: the
 * table's end); (0, -off) outside that row's window [lo, hi], which its band may not have swept. */
template <typename T>
__device__ __forceinline__ void sdtw_below(const T *be, const T *bq, int lo, int hi, int c, T *e, T *q)
{
    if (be == NULL || c < lo || c > hi)
        *e = 0, *q = -sdtw_off<T>();
    else
        *e = be[c], *q = bq[c];
}

/* R of a thread's cells at step d (slot: (d - b0 - 1) mod m), off outside the table and the window
 * (lo, hi: the rows' windows, empty past n), whose slots the forward sweep may not have written. */
template <typename T, int K>
__device__ __forceinline__ void sdtw_load_step(const T *table, int H, int i0, int d, int slot, const int *lo,
                                               const int *hi, T *out)
{
    const int P = (int)blockDim.x, t = (int)threadIdx.x;
#pragma unroll
    for (int r = 0; r < K; r++) {
        const int j = d - i0 - r;
        out[r] = j >= lo[r] && j <= hi[r] ? table[(long long)slot * H + r * P + t] : sdtw_off<T>();
    }
}

/* The backward sweep of one band, its R in `table`: E cell by cell from the last, the gradients
 * scaled by `scale` added into GX and GY (atomically when they are one array: a series against
 * itself). be, bq: E and Q of the band below (NULL: the last band); ae, aq: where this band's first
 * row goes for the band above (NULL: the first band). xch: (2 + max(D, 1)) x 2 values per warp. */
template <typename T, int K, int D>
__device__ void sdtw_band_backward(const sdtw_pair &p, sdtw_samples<T, K, D> &s, const sdtw_math<T> &math, int b0,
                                   const T *table, const T *be, const T *bq, T *ae, T *aq, T *GX, T *GY, T scale,
                                   T *xch)
{
    constexpr int DD = D > 0 ? D : 1, W = 2 + DD; /* values a thread passes up: E, Q, the column's partial */
    const int P = (int)blockDim.x, t = (int)threadIdx.x, lane = t & 31, warp = t >> 5, warps = P >> 5;
    const int H = P * K, n = p.n, m = p.m, i0 = b0 + t * K;
    const int last_row = b0 + H - 1 < n ? b0 + H - 1 : n;
    const bool shared_grads = GX == GY;
    const T two_scale = (T)2 * scale;

    int lo[K], hi[K], d_low, d_high, below_lo, below_hi;
    sdtw_window_rows<K>(p, i0, lo, hi);
    sdtw_band_steps(p, b0, last_row, &d_low, &d_high); /* walked from d_high down to d_low */
    sdtw_window_row(p, b0 + H, &below_lo, &below_hi);
    s.start(p, i0, d_high - i0, -1);
    T pe[K], pq[K], p2e[K], p2q[K], pcol[K][DD], gx[K][DD];
#pragma unroll
    for (int r = 0; r < K; r++) {
        pe[r] = p2e[r] = 0, pq[r] = p2q[r] = -sdtw_off<T>();
#pragma unroll
        for (int k = 0; k < DD; k++)
            pcol[r][k] = gx[r][k] = 0;
    }
    /* the successors below the thread's last row: (row i0 + K, same column) of the step before and
     * of two steps before; the band's last thread reads them from the boundary row ahead */
    T dn_e = 0, dn_q = -sdtw_off<T>(), dg_e = 0, dg_q = -sdtw_off<T>(), dn_col[DD];
    T ah1_e = 0, ah1_q = -sdtw_off<T>(), ah2_e = 0, ah2_q = -sdtw_off<T>();
#pragma unroll
    for (int k = 0; k < DD; k++)
        dn_col[k] = 0;
    /* the successor below the last row at step d is row b0 + H at column d - b0 - H + 1 */
    const int below_col0 = d_high - (b0 + H);
    if (t == P - 1) {
        sdtw_below(be, bq, below_lo, below_hi, below_col0 + 2, &dg_e, &dg_q);
        sdtw_below(be, bq, below_lo, below_hi, below_col0 + 1, &dn_e, &dn_q);
        sdtw_below(be, bq, below_lo, below_hi, below_col0, &ah1_e, &ah1_q);
        sdtw_below(be, bq, below_lo, below_hi, below_col0 - 1, &ah2_e, &ah2_q);
    }
    /* R of the thread's cells, read two steps ahead (the loads are off the critical path) */
    T here_now[K], here_next[K];
    int ahead_slot = (int)((long long)(d_high - b0 - 1) % m); /* the slot of step d - 2 in the loop */
    sdtw_load_step<T, K>(table, H, i0, d_high, ahead_slot, lo, hi, here_now);
    ahead_slot = ahead_slot == 0 ? m - 1 : ahead_slot - 1;
    sdtw_load_step<T, K>(table, H, i0, d_high - 1, ahead_slot, lo, hi, here_next);
    ahead_slot = ahead_slot == 0 ? m - 1 : ahead_slot - 1;
#pragma unroll sdtw_unroll<T>()
    for (int d = d_high; d >= d_low; d--) {
        T ce[K], cq[K], ccol[K][DD];
        /* without branches but for D = 0's gradients, as the forward pass; a warp with no cell in the
         * table skips (its E are 0, and so are the column sums passing through) */
        const int j0 = d - i0;
        if (__any_sync(SDTW_FULL_MASK, j0 >= 1 && j0 - (K - 1) <= m && i0 <= n)) {
#pragma unroll
            for (int r = 0; r < K; r++) {
                const int i = i0 + r, j = j0 - r;
                const T e_dn = r < K - 1 ? pe[r + 1] : dn_e, q_dn = r < K - 1 ? pq[r + 1] : dn_q;
                const T e_dg = r < K - 1 ? p2e[r + 1] : dg_e, q_dg = r < K - 1 ? p2q[r + 1] : dg_q;
                /* off the table or the window `here` is off (+inf in double): E is 0 and Q is -off */
                const T here = here_now[r];
                const T cost = s.cost(p, r, i, j);
                /* the last cell's successors are all off the table (E 0): its E is 0 + 1, exactly;
                 * added rather than selected, so that no branch skips the sum (cells interleave) */
                T e = ((e_dn * math.weight(q_dn, here) + pe[r] * math.weight(pq[r], here)) +
                       e_dg * math.weight(q_dg, here)) +
                      (i == n && j == m && !sdtw_math<T>::is_off(here) ? (T)1 : (T)0);
                if (sdtw_math<T>::mask_e)
                    e = sdtw_math<T>::is_off(here) ? (T)0 : e;
                ce[r] = e;
                cq[r] = sdtw_math<T>::is_off(here) ? -sdtw_off<T>() : here - cost;
                if (D == 0 && e != (T)0) {
                    const T *a = s.X + (p.x0 + i - 1) * (long long)s.dim, *b = s.Y + (p.y0 + j - 1) * (long long)s.dim;
                    for (int k = 0; k < s.dim; k++) {
                        const T g = two_scale * e * (a[k] - b[k]);
                        T *gxa = GX + (p.x0 + i - 1) * (long long)s.dim + k;
                        if (GX && shared_grads)
                            atomicAdd(gxa, g);
                        else if (GX)
                            *gxa += g;
                        if (GY)
                            atomicAdd(GY + (p.y0 + j - 1) * (long long)s.dim + k, -g);
                    }
                }
#pragma unroll
                for (int k = 0; k < DD; k++) {
                    const T below = r < K - 1 ? pcol[r + 1][k] : dn_col[k];
                    if constexpr (D > 0) { /* fused: the cell's term 2 scale e (x - y) is not rounded alone */
                        const T te = two_scale * e, diff = s.x[r][k] - s.y[r][k];
                        gx[r][k] = fma(te, diff, gx[r][k]);
                        ccol[r][k] = fma(-te, diff, below);
                    } else {
                        ccol[r][k] = below;
                    }
                }
            }
        } else {
#pragma unroll
            for (int r = 0; r < K; r++) {
                ce[r] = 0, cq[r] = -sdtw_off<T>();
#pragma unroll
                for (int k = 0; k < DD; k++)
                    ccol[r][k] = 0;
            }
        }
        /* the band's first row: its column's gradient, and E, Q for the band above */
        if (t == 0) {
            const int j = d - b0;
            if (j >= 1 && j <= m) {
                if (ae)
                    ae[j] = ce[0], aq[j] = cq[0];
                /* an atomic add whose result is unused is a reduction the warp does not wait for: a
                 * load and store (+=) kept the band's first warp, and through the barrier the whole
                 * block, waiting on the load every step. One thread adds to a column once per band,
                 * bands in order: the same sums as +=, in the same order (same-address atomics of a
                 * thread keep their program order). */
                if (D > 0 && GY) {
#pragma unroll
                    for (int k = 0; k < DD; k++)
                        atomicAdd(GY + (p.y0 + j - 1) * D + k, ccol[0][k]);
                }
            }
        }
        /* the thread above reads this thread's first row */
        T pass[W];
        pass[0] = ce[0], pass[1] = cq[0];
#pragma unroll
        for (int k = 0; k < DD; k++)
            pass[2 + k] = ccol[0][k];
        T from[W];
#pragma unroll
        for (int w = 0; w < W; w++)
            from[w] = __shfl_down_sync(SDTW_FULL_MASK, pass[w], 1);
        if (lane == 0)
#pragma unroll
            for (int w = 0; w < W; w++)
                xch[(2 * warp + (d & 1)) * W + w] = pass[w];
        __syncthreads();
        if (lane == 31) {
            if (warp < warps - 1) {
#pragma unroll
                for (int w = 0; w < W; w++)
                    from[w] = xch[(2 * (warp + 1) + (d & 1)) * W + w];
            } else {
                from[0] = ah1_e, from[1] = ah1_q;
#pragma unroll
                for (int k = 0; k < DD; k++)
                    from[2 + k] = 0;
                ah1_e = ah2_e, ah1_q = ah2_q;
                sdtw_below(be, bq, below_lo, below_hi, d - 2 - (b0 + H), &ah2_e, &ah2_q); /* for step d - 3 */
            }
        }
        dg_e = dn_e, dg_q = dn_q;
        dn_e = from[0], dn_q = from[1];
#pragma unroll
        for (int k = 0; k < DD; k++)
            dn_col[k] = from[2 + k];
#pragma unroll
        for (int r = 0; r < K; r++) {
            p2e[r] = pe[r], p2q[r] = pq[r], pe[r] = ce[r], pq[r] = cq[r];
#pragma unroll
            for (int k = 0; k < DD; k++)
                pcol[r][k] = ccol[r][k];
        }
        s.advance(p, d - 1 - i0, -1);
#pragma unroll
        for (int r = 0; r < K; r++)
            here_now[r] = here_next[r];
        sdtw_load_step<T, K>(table, H, i0, d - 2, ahead_slot, lo, hi, here_next);
        ahead_slot = ahead_slot == 0 ? m - 1 : ahead_slot - 1;
    }
    /* the rows' gradients */
    if (D > 0 && GX) {
#pragma unroll
        for (int r = 0; r < K; r++)
            if (i0 + r <= n)
#pragma unroll
                for (int k = 0; k < DD; k++) {
                    T *gxa = GX + (p.x0 + i0 + r - 1) * D + k;
                    if (shared_grads)
                        atomicAdd(gxa, gx[r][k]);
                    else
                        *gxa += gx[r][k];
                }
    }
}

/* The pair's boundary rows: R above band b (mode CHECKPOINTS keeps one per band, the others reuse
 * one row), then E and Q. */
template <typename T> __device__ __forceinline__ T *sdtw_r_row(T *work, const sdtw_pair &p, int band, int mode)
{
    return work + p.rows0 + (mode == SDTW_CHECKPOINTS ? (long long)band * (p.m + 1) : 0);
}
template <typename T> __device__ __forceinline__ T *sdtw_e_row(T *work, const sdtw_pair &p, int bands, int mode)
{
    return work + p.rows0 + (long long)(mode == SDTW_CHECKPOINTS ? bands : 1) * (p.m + 1);
}

/* Forward: values[b] = scale R[n][m] (accumulate: +=) for every pair of the launch, R kept as `mode`
 * says (storing spares the values a zeroing launch). */
template <typename T, int K, int D>
__global__ void __launch_bounds__(sdtw_max_threads<T>(), sdtw_min_blocks<T>())
    sdtw_forward_kernel(const sdtw_pairs pairs, const T *X, const T *Y, int dim, typename coef_of<T>::type c,
                        T *work, T *values, T scale, int mode, int accumulate)
{
    __shared__ T xch[2 * 32];
    if (*pairs.nonfinite)
        return;
    const sdtw_pair p = sdtw_pair_at(pairs, (int)blockIdx.x);
    sdtw_samples<T, K, D> s;
    const sdtw_math<T> math(c);
    s.X = X, s.Y = Y, s.dim = dim, s.cost_unit = math.cost_unit();
    const int H = (int)blockDim.x * K, bands = (p.n + H - 1) / H;
    for (int b = 0; b < bands; b++) {
        T *table = mode == SDTW_COMPACT ? work + p.table0 + (long long)b * H * p.m : NULL;
        T *bottom = b + 1 < bands ? sdtw_r_row(work, p, b + 1, mode) : NULL;
        sdtw_band_forward<T, K, D>(p, s, math, 1 + b * H, sdtw_r_row(work, p, b, mode), bottom, table,
                                   b + 1 == bands ? values + blockIdx.x : NULL, scale, accumulate != 0, xch);
        __syncthreads();
    }
}

/* Backward: the gradients of every pair of the launch, from R kept by the forward pass in `mode`
 * (COMPACT or CHECKPOINTS). */
template <typename T, int K, int D>
__global__ void __launch_bounds__(sdtw_max_threads<T>())
    sdtw_backward_kernel(const sdtw_pairs pairs, const T *X, const T *Y, int dim, typename coef_of<T>::type c,
                         T *work, T *GX, T *GY, T scale, int mode)
{
    constexpr int W = 2 + (D > 0 ? D : 1);
    __shared__ T xch_fwd[2 * 32];
    __shared__ T xch[2 * 32 * W];
    if (*pairs.nonfinite)
        return;
    const sdtw_pair p = sdtw_pair_at(pairs, (int)blockIdx.x);
    sdtw_samples<T, K, D> s;
    const sdtw_math<T> math(c);
    s.X = X, s.Y = Y, s.dim = dim, s.cost_unit = math.cost_unit();
    const int H = (int)blockDim.x * K, bands = (p.n + H - 1) / H;
    T *erow = sdtw_e_row(work, p, bands, mode), *qrow = erow + (p.m + 2);
    for (int b = bands - 1; b >= 0; b--) {
        T *table = work + p.table0 + (mode == SDTW_COMPACT ? (long long)b * H * p.m : 0);
        if (mode == SDTW_CHECKPOINTS) {
            sdtw_band_forward<T, K, D>(p, s, math, 1 + b * H, sdtw_r_row(work, p, b, mode), NULL, table, NULL, (T)0,
                                       false, xch_fwd);
            __syncthreads();
        }
        sdtw_band_backward<T, K, D>(p, s, math, 1 + b * H, table, b + 1 < bands ? erow : NULL,
                                    b + 1 < bands ? qrow : NULL, b > 0 ? erow : NULL, b > 0 ? qrow : NULL, GX, GY,
                                    scale, xch);
        __syncthreads();
    }
}

/* Zeroes v[0 .. count) unless the batch's NaN flag is set. */
template <typename T> __global__ void sdtw_zero_kernel(T *v, long long count, const int *nonfinite)
{
    if (*nonfinite)
        return;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count; k += (long long)gridDim.x * blockDim.x)
        v[k] = 0;
}

/* Sets *flag when a value of a or b is NaN or infinite (one launch for both). */
template <typename T> __global__ void sdtw_check_kernel(const T *a, long long na, const T *b, long long nb, int *flag)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < na + nb; k += step)
        if (!isfinite(k < na ? a[k] : b[k - na]))
            *flag = 1;
}

#endif
