/* Cells of the dynamic program that a measure computes for one pair of series, as the library
 * counts them for its progress reports: n x m without a window, the Sakoe-Chiba band's cells with
 * one. Written from the band's definition in wavewarp.h ("Window") with the public API only, so
 * that the CLI's cells/s count only the cells the engines compute; test_cli.c checks it against the
 * library's own count. Header-only, for the CLI and its tests. */
#ifndef WW_CLI_CELLS_H
#define WW_CLI_CELLS_H

#include <stddef.h>
#include <stdint.h>

#include "wavewarp.h"

/* Cells of the band of radius r for lengths n and m (both >= 1). Equal lengths: the cells with
 * |p - q| <= r, n (2r + 1) less the r (r + 1) cut off at the two corners. Otherwise, with s the
 * shorter and l the longer length, the union over step = 0 .. l of the cells (short index k, long
 * index L) with L = floor(step l / (l + 1)), S = floor(step s / (l + 1)) and S - r <= k <= S + r
 * (clipped to 0 .. s - 1). L and S never decrease and S grows by at most 1 a step, so the cells of
 * one L form one interval: from the first step with that L to the last. */
static inline uint64_t cli_band_cells(size_t n, size_t m, size_t r)
{
    const uint64_t s = n < m ? n : m, l = n < m ? m : n;
    if (s == 0)
        return 0;
    if (r >= s || l > UINT32_MAX) /* as wide as the matrix (the library has no window past 2^32) */
        return (uint64_t)n * m;
    if (n == m)
        return s * (2 * (uint64_t)r + 1) - (uint64_t)r * ((uint64_t)r + 1);
    uint64_t cells = 0, row = 0, lo = 0, hi = 0;
    for (uint64_t step = 0; step <= l; step++) {
        const uint64_t long_index = step * l / (l + 1), short_index = step * s / (l + 1);
        const uint64_t k_lo = short_index > r ? short_index - r : 0;
        const uint64_t k_hi = short_index + r < s - 1 ? short_index + r : s - 1;
        if (step == 0 || long_index != row) {
            if (step > 0)
                cells += hi - lo + 1;
            row = long_index;
            lo = k_lo;
        }
        hi = k_hi;
    }
    return cells + (hi - lo + 1);
}

/* Cells measure m computes for a pair of lengths n and m_length (its window's radius for that pair,
 * ww_measure_radius, which turns a --window-fraction into a radius as aeon does). */
static inline uint64_t cli_pair_cells(const ww_measure *m, size_t n, size_t m_length)
{
    const size_t r = ww_measure_radius(m, n, m_length);
    return r == WW_NO_WINDOW ? (uint64_t)n * m_length : cli_band_cells(n, m_length, r);
}

#endif
