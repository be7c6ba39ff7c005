/* DPA: the one-dimensional dynamic programming of elastic image matching (the approximate 2D DP of
 * ../shared/papers/approximate-2d-dpa-on-gpu.txt), Sakoe-Chiba's symmetric form with slope
 * constraint 1 (no two consecutive horizontal or vertical moves), 0-based:
 *   D(0, 0) = 2 d(0, 0)
 *   D(i, j) = min( D(i-1, j-2) + 2 d(i, j-1) + d(i, j),
 *                  D(i-1, j-1) + 2 d(i, j),
 *                  D(i-2, j-1) + 2 d(i-1, j) + d(i, j) )   (a term with a negative index is +inf)
 *   DPA(A, B) = D(N-1, M-1) / (N + M), +inf when no path exists (ww_dpa_feasible).
 * The image distance runs it twice: on the pixels of every row pair (row distances r), then on r.
 * Written once here for every engine (C and CUDA), for double (_f64) and float (_f32). */
#ifndef WW_REAL
#ifndef WW_MEASURES_DPA_H
#define WW_MEASURES_DPA_H
#include "real.h"

/* Does a path join (0, 0) to (n-1, m-1)? Its moves are (1, 2), (1, 1) and (2, 1), so it does when
 * neither length minus one exceeds twice the other's. */
WW_HD static inline int ww_dpa_feasible(long long n, long long m)
{
    return n >= 1 && m >= 1 && m - 1 <= 2 * (n - 1) && n - 1 <= 2 * (m - 1);
}

WW_HD static inline long long ww_dpa_ceil_half(long long v) { return v >= 0 ? (v + 1) / 2 : -((-v) / 2); }

/* Columns [*lo, *hi] of row i (of n rows, m columns) that an engine computes: the cells a path from
 * (0, 0) to (n-1, m-1) can visit, widened by one so that the intermediate cells of the two bent moves
 * (i, j-1) and (i-1, j) are inside too. Cells outside hold +inf and are never on a path, so the
 * banded DP equals the full one; about a third of the cells when n == m. Empty (*lo > *hi) when
 * the row has none. */
WW_HD static inline void ww_dpa_band_row(long long i, long long n, long long m, long long *lo, long long *hi)
{
    long long a = ww_dpa_ceil_half(i - 1), b = m - 2 - 2 * (n - 1 - i);
    long long l = a > b ? a : b;
    long long c = 2 * i + 1, e = m - 1 - ww_dpa_ceil_half(n - 2 - i);
    long long h = c < e ? c : e;
    *lo = l > 0 ? l : 0;
    *hi = h < m - 1 ? h : m - 1;
}

#define WW_MEASURE_HEADER "dpa.h"
#include "instantiate.h"
#undef WW_MEASURE_HEADER
#endif
#else

/* The local distance d of two pixels of `channels` components: |a - b| for one channel, the
 * Euclidean distance for several, or the squared Euclidean distance with `squared`. a's components
 * are contiguous, b's `b_stride` apart (the CPU engine interleaves rows of many images). */
WW_HD static inline WW_REAL WW_T(ww_dpa_local)(const WW_REAL *a, const WW_REAL *b, size_t b_stride, size_t channels,
                                               int squared)
{
    if (channels == 1) {
        const WW_REAL t = a[0] - b[0];
        return squared ? t * t : WW_FABS(t);
    }
    /* the first square starts the sum (0 + t * t is t * t: one addition less per pixel pair) */
    const WW_REAL t0 = a[0] - b[0];
    WW_REAL s = t0 * t0;
    for (size_t c = 1; c < channels; c++) {
        const WW_REAL t = a[c] - b[c * b_stride];
        s += t * t;
    }
    return squared ? s : WW_SQRT(s);
}

/* D(i, j) from D(i-1, j-1) (diag), D(i-1, j-2) (left2), D(i-2, j-1) (up2), 2 d(i, j-1) (twice_left),
 * 2 d(i-1, j) (twice_up) and d(i, j): for engines that keep 2 d of the cells they will read again
 * (2 d is exact, so it is the same number as doubling where it is read). The bent terms are
 *   min((left2 + 2 d_left) + d_here, (up2 + 2 d_up) + d_here) = min(left2 + 2 d_left, up2 + 2 d_up) + d_here
 * to the bit, since rounding is monotonic: one addition less. The two bent terms are the mirror
 * images of each other, added in the same order, so that DPA(A, B) == DPA(B, A) to the bit. */
WW_HD static inline WW_REAL WW_T(ww_dpa_cell_doubled)(WW_REAL diag, WW_REAL left2, WW_REAL up2, WW_REAL twice_left,
                                                      WW_REAL twice_up, WW_REAL d_here)
{
    const WW_REAL via_left = left2 + twice_left, via_up = up2 + twice_up;
    const WW_REAL from_bent = (via_up < via_left ? via_up : via_left) + d_here;
    const WW_REAL from_diag = diag + 2 * d_here;
    return from_bent < from_diag ? from_bent : from_diag;
}

/* CPU only (an engine that knows, as a constant, which of diag, left2 and up2 lie off the band, where
 * ww_dpa_cell_doubled would be handed +inf): ww_dpa_cell_doubled with those terms left out, to the
 * bit. Every value here is in [0, +inf] (no NaN: sums of non-negative terms), so +inf + x is +inf
 * and min(x, +inf) is x; a cell with none of the three is +inf. */
static inline WW_REAL WW_T(ww_dpa_cell_partial)(int has_diag, int has_left2, int has_up2, WW_REAL diag, WW_REAL left2,
                                                WW_REAL up2, WW_REAL twice_left, WW_REAL twice_up, WW_REAL d_here)
{
    const WW_REAL via_left = left2 + twice_left, via_up = up2 + twice_up;
    if (has_left2 && has_up2)
        return WW_T(ww_dpa_cell_doubled)(has_diag ? diag : WW_REAL_INF, left2, up2, twice_left, twice_up, d_here);
    if (!has_left2 && !has_up2)
        return has_diag ? diag + 2 * d_here : WW_REAL_INF;
    const WW_REAL from_bent = (has_left2 ? via_left : via_up) + d_here;
    if (!has_diag)
        return from_bent;
    const WW_REAL from_diag = diag + 2 * d_here;
    return from_bent < from_diag ? from_bent : from_diag;
}

/* D(i, j) as above from d(i, j-1) (d_left) and d(i-1, j) (d_up) themselves. */
WW_HD static inline WW_REAL WW_T(ww_dpa_cell)(WW_REAL diag, WW_REAL left2, WW_REAL up2, WW_REAL d_left, WW_REAL d_up,
                                              WW_REAL d_here)
{
    return WW_T(ww_dpa_cell_doubled)(diag, left2, up2, 2 * d_left, 2 * d_up, d_here);
}

/* D(0, 0). */
WW_HD static inline WW_REAL WW_T(ww_dpa_first)(WW_REAL d_here) { return 2 * d_here; }

/* DPA from D(n-1, m-1). */
WW_HD static inline WW_REAL WW_T(ww_dpa_finish)(WW_REAL d_last, size_t n, size_t m)
{
    return d_last / (WW_REAL)(n + m);
}


/* D of the DPA on a whole n x m matrix of local distances (row-major; the outer DP on row distances,
 * the warping map's DPs). A cost of +inf (a cell off the band) gives +inf: such cells are never on a
 * path. */
/* Cell (i, j) of it, from the cells of rows i - 1 and i - 2 (an engine may run the cells of one
 * anti-diagonal i + j together: they read only the two anti-diagonals before the last). */
WW_HD static inline void WW_T(ww_dpa_full_cell)(const WW_REAL *cost, size_t m, WW_REAL *D, size_t i, size_t j)
{
    const WW_REAL inf = WW_REAL_INF;
    const WW_REAL here = cost[i * m + j];
    if (i == 0 && j == 0) {
        D[0] = WW_T(ww_dpa_first)(here);
        return;
    }
    const WW_REAL diag = i >= 1 && j >= 1 ? D[(i - 1) * m + j - 1] : inf;
    const WW_REAL left2 = i >= 1 && j >= 2 ? D[(i - 1) * m + j - 2] : inf;
    const WW_REAL up2 = i >= 2 && j >= 1 ? D[(i - 2) * m + j - 1] : inf;
    const WW_REAL e_left = j >= 1 ? cost[i * m + j - 1] : 0;
    const WW_REAL e_up = i >= 1 ? cost[(i - 1) * m + j] : 0;
    D[i * m + j] = WW_T(ww_dpa_cell)(diag, left2, up2, e_left, e_up, here);
}

WW_HD static inline void WW_T(ww_dpa_full)(const WW_REAL *cost, size_t n, size_t m, WW_REAL *D)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            WW_T(ww_dpa_full_cell)(cost, m, D, i, j);
}

#endif
