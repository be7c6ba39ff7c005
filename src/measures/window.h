/* The Sakoe-Chiba band of every measure (wavewarp.h, "Window"), as a column range per row of the
 * dynamic program, for engines that skip the cells outside it. Exact integer arithmetic.
 *
 * ww_band_row: for lengths n (rows) and m (columns) and radius r, the 0-based columns [lo, hi] of
 * 0-based row p. The band is the union over step = 0..l of the cells (L(step), S(step) +- r) of
 * the long and short series (L = floor(step l / (l + 1)), S = floor(step s / (l + 1))); both are
 * non-decreasing in step and move by 0 or 1, so each row's columns are one interval, and lo and hi
 * never decrease from one row to the next. Products are of two lengths: lengths below 2^32 only
 * (the API layer refuses longer series with a window).
 *
 * ww_window_row: the same in the dynamic program's own indices, rows i = 1..n and columns 1..m
 * (row and column 0 are the boundary): DP cell (i, j) is in the window when band cell
 * (i - 1, j - 1) is. Every measure so far applies the band so (DTW as aeon's dtw_distance, TWED as
 * aeon's twe_distance, which builds it on the series without their padding sample). Every row has
 * at least one cell and the band is connected, so a path from corner to corner always exists. */
#ifndef WW_MEASURES_WINDOW_H
#define WW_MEASURES_WINDOW_H

#include "real.h"

#include <stdint.h>

#define WW_WINDOW_MAX_LENGTH ((size_t)1 << 32) /* longest series a window may apply to */

WW_HD static inline unsigned long long ww_ceil_div(unsigned long long a, unsigned long long b)
{
    return (a + b - 1) / b;
}

WW_HD static inline void ww_band_row(size_t n, size_t m, size_t r, size_t p, size_t *lo, size_t *hi)
{
    const unsigned long long l = n > m ? n : m, s = n > m ? m : n, pp = p;
    if (r >= s) { /* as wide as the shorter series: the whole matrix */
        *lo = 0;
        *hi = m - 1;
        return;
    }
    if (n == m) {
        *lo = p > r ? p - r : 0;
        *hi = p + r < m - 1 ? p + r : m - 1;
        return;
    }
    if (n > m) { /* rows are the long series: row p is L; the steps with L(step) = p */
        const unsigned long long st0 = ww_ceil_div(pp * (l + 1), l);
        unsigned long long st1 = ww_ceil_div((pp + 1) * (l + 1), l) - 1;
        if (st1 > l)
            st1 = l;
        const unsigned long long s0 = st0 * s / (l + 1), s1 = st1 * s / (l + 1);
        *lo = (size_t)(s0 > r ? s0 - r : 0);
        *hi = (size_t)(s1 + r < s - 1 ? s1 + r : s - 1);
        return;
    }
    /* rows are the short series: row p is k; the steps with S(step) in [p - r, p + r] */
    const unsigned long long v0 = pp > r ? pp - r : 0, v1 = pp + r;
    const unsigned long long st0 = ww_ceil_div(v0 * (l + 1), s);
    unsigned long long st1 = ww_ceil_div((v1 + 1) * (l + 1), s) - 1;
    if (st1 > l)
        st1 = l;
    *lo = (size_t)(st0 * l / (l + 1));
    *hi = (size_t)(st1 * l / (l + 1));
}

/* Row i (1..n) of the dynamic program: its columns [*lo, *hi] within 1..m (see above). */
WW_HD static inline void ww_window_row(size_t n, size_t m, size_t r, size_t i, size_t *lo, size_t *hi)
{
    size_t qlo, qhi;
    ww_band_row(n, m, r, i - 1, &qlo, &qhi);
    *lo = qlo + 1;
    *hi = qhi + 1;
}

/* Cells of the dynamic program inside the window (rows 1..n, columns 1..m). Equal lengths in
 * closed form: each of the n rows has 2r + 1 cells but for the r(r + 1) cut off at the corners. */
static inline uint64_t ww_window_cells(size_t n, size_t m, size_t r)
{
    if (r >= (n < m ? n : m))
        return (uint64_t)n * m;
    if (n == m) {
        const uint64_t rr = r < n - 1 ? r : n - 1;
        return (uint64_t)n * (2 * rr + 1) - rr * (rr + 1);
    }
    uint64_t cells = 0;
    for (size_t i = 1; i <= n; i++) {
        size_t lo, hi;
        ww_window_row(n, m, r, i, &lo, &hi);
        cells += hi - lo + 1;
    }
    return cells;
}

#endif
