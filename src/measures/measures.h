/* Every measure, and the list that engines are instantiated over.
 *
 * A measure is one header of static inline functions (twed.h is the model; dtw.h the smallest):
 *   traits         enum constants WW_<M>_HAS_AUX, _CARRIES_BEFORE, _USES_STAMPS, _SYMMETRIC,
 *                  _ZERO_SELF, _NORM_ROOT (engines' branches on them fold away)
 *   norm_p         the p of the local cost's norm (lp_norm.h)
 *   local          the cell's local term from two samples (TWED: the match part; DTW: the cost),
 *                  and local_from_norm, the same from a norm an engine accumulated itself
 *   aux            the per-sample term of a series (TWED: the deletion cost), when has_aux
 *   cell           D[i][j] from up, left, diag, aux of row and column, local here and, when
 *                  carries_before, the local term of the diagonal neighbour, and the coefficients
 *                  (soft-DTW's gamma); cell_up_last and
 *                  cell_left_last give the same value with that input compared last
 *   finish         the distance from D[n][m]
 * Boundary: D[0][0] = 0 and D[i][0] = D[0][j] = +inf for every measure so far; the window
 * (window.h) keeps D[i][j] when the samples' cell (i - 1, j - 1) is in the band.
 *
 * To add a measure: its header here, a line in WW_FOR_EACH_MEASURE, a kind in wavewarp.h, its
 * constructor and parameter check in src/common/measure.c, and its row in the registry
 * (src/common/registry.c). Engines are instantiated from the list. */
#ifndef WW_MEASURES_H
#define WW_MEASURES_H

#include "dtw.h"
#include "softdtw.h"
#include "twed.h"
#include "window.h"

/* X(token, TOKEN, kind): every measure. */
#define WW_FOR_EACH_MEASURE(X) X(twed, TWED, WW_MEASURE_TWED) X(dtw, DTW, WW_MEASURE_DTW) \
    X(softdtw, SOFTDTW, WW_MEASURE_SOFTDTW)

#endif
