"""Plain full-matrix references for DTW and TWED with a Sakoe-Chiba window (tests only).

Our band (what wavewarp implements). For series of lengths n and m and an integer radius r >= 0,
the allowed DTW cells (i, j), 0-based sample indices, are:

* n == m: |i - j| <= r.
* n != m, with s = min(n, m), l = max(n, m): for every step = 0..l let
  L = (step * l) // (l + 1) and S = (step * s) // (l + 1); the cells (short index k, long index L)
  with max(0, S - r) <= k <= min(s - 1, S + r). Symmetric: cells(n, m) == cells(m, n).T.
  Each step moves (S, L) by 0 or 1 in each coordinate, from (0, 0) to (s - 1, l - 1), so even r = 0
  holds a warping path. (For n == m this rule gives |i - j| <= r too.)

Rivals, as read in their sources and checked by tests/test_reference_measures.py:

aeon 1.6.0 (aeon/distances/elastic/_bounding_matrix.py, _dtw.py, _twe.py)
  * ``window`` is a fraction in [0, 1] (ValueError outside); None or exactly 1.0 means no band.
    radius = int(window * min(n, m)), the product in IEEE double, truncated (so window=0.29 with
    min length 100 gives 28, not 29): ``radius_from_window``.
  * The band is ``_sakoe_chiba_bounding`` (dense, also used by dtw_cost_matrix and TWE) or
    ``_sakoe_chiba_bounds`` (row bounds, used by dtw_distance; same cells). Both walk the steps
    above but evaluate ``floor((step / (l + 1)) * s)`` in floating point. L is always exact; S
    comes out one too small when step * s / (l + 1) is an exact integer and the double product
    rounds below it. Where that happens depends on the environment: in one venv the first such
    lengths were (s, l) = (22, 43) (step 30 gives 14, not 15), then (23, 45), (26, 51), ...; in
    another venv of the same aeon and numba versions, on the same machine, (6, 33) already differed,
    and dtw_distance's row bounds and the dense matrix disagreed with each other. So compare with
    aeon only where its band cannot differ: equal lengths, or gcd(s, l + 1) == 1 (no step puts S on
    an exact integer): ``aeon_band_may_differ``; ``band_differs_only_at_exact_steps`` checks the
    rest. ``sakoe_chiba_cells(..., float_floors=True)`` is the floor in plain double arithmetic
    (what aeon's source gives when Python runs it: ``_sakoe_chiba_bounding.py_func``).
    r = 0 still holds a path in aeon's band.
    Why it varies: the band functions are ``@njit(cache=True)`` without fastmath, but numba
    compiles a callee with the fastmath flag of the caller that compiles it first, and
    dtw_distance / twe_distance are ``fastmath=True``; LLVM then evaluates ``(step / (l + 1)) * s``
    in another order, whose floor falls one low at other exact-integer steps (e.g. (6, 33), step
    17) than Python's. Calling ``create_bounding_matrix`` before or after ``twe_distance`` in a
    fresh process (``NUMBA_CACHE_DIR`` empty) gives the two bands; numba's on-disk cache then keeps
    whichever came first. Off the pairs of ``aeon_band_may_differ`` both compile orders give our
    band (checked for all lengths 1..79, windows 0, 0.1, 0.3, 0.5).
  * dtw_distance: squared Euclidean local cost summed over channels, no square root, inf when no
    path. Equal lengths: |i - j| <= int(window * n) (closed form in the code).
  * twe_distance pads both series with a zero sample at time 0 but builds the band on the
    UNPADDED lengths: cost-matrix cell (i, j), i, j >= 1, is computed iff band(n, m)[i-1, j-1], with
    radius int(window * min(n, m)). So in our TWED matrix D[i][j] (i = 0..n, j = 0..m) the window
    keeps D[0][0] and the cells i, j >= 1 with (i - 1, j - 1) in the DTW band of lengths n, m:
    ``twed_band_cells``. Caveat: twe_pairwise_distance on a collection of UNEQUAL lengths builds
    the band on the padded lengths (n + 1, m + 1), radius int(window * min(n + 1, m + 1)), but
    still indexes it with [i - 1, j - 1]: a different band from twe_distance for the same pair
    (equal-length collections use the unpadded length, like twe_distance).

tslearn 0.10.0 (tslearn/metrics/_masks.py, _dtw.py)
  * dtw(x, y, global_constraint="sakoe_chiba", sakoe_chiba_radius=r) and cdist_dtw: cells
    i - (n - m)^+ - r <= j <= i + (m - n)^+ + r (x index i, y index j; (a)^+ = max(a, 0)), i.e. the
    area between the two corner diagonals widened by r. Equal lengths: |i - j| <= r, ours. Unequal
    lengths: a wider, different band from aeon's. Returns sqrt of the summed squared distances.
    sakoe_chiba_radius=None with the constraint named means r = 1. cdist_dtw strips trailing NaN.

dtaidistance 2.5.1 (dtaidistance/dtw.py, C dd_dtw.c)
  * dtw.distance_fast(s1, s2, window=w), dtw_ndim.distance_fast, distance_matrix_fast: row i
    of s1 keeps max(0, i - (n - m)^+ - w + 1) <= j < min(m, i + (m - n)^+ + w), i.e. tslearn's band
    with r = w - 1 (equal lengths: |i - j| <= w - 1, our radius w - 1). window=0 or None: no band
    (so radius 0 is window=1). Returns sqrt of the summed squared distances.
  * dtw.distance_fast defaults use_pruning=True: cells above max_dist = ub_euclidean(s1, s2)**2
    are pruned (ub: the diagonal, then the short series' last sample against the rest of the long
    one; that path lies in every band). When the optimum IS that path (always with window=1 and
    equal lengths) sqrt-then-square rounding can put max_dist an ulp below it and the result is inf
    (random normal pairs of equal lengths 2..29: 22% with window=1, 2% with window=2 or none).
    Otherwise exact. Compare with use_pruning=False; dtw_ndim.distance_fast and
    distance_matrix_fast default to False.
  * The C functions take double buffers: float64 only (other dtypes raise ValueError "Buffer dtype
    mismatch"); non-C-contiguous arrays are copied. dtw.distance_fast is univariate only (2-D input
    raises); use dtw_ndim.distance_fast for (length, dim).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np


def radius_from_window(window: Optional[float], n: int, m: int) -> Optional[int]:
    """aeon's radius for a window fraction: int(window * min(n, m)) in double; None -> None.

    aeon treats window == 1.0 as "no band"; the radius min(n, m) returned here is equivalent
    (it covers every cell). Raises ValueError outside [0, 1], as aeon does.
    """
    if window is None:
        return None
    window = float(window)
    if not 0.0 <= window <= 1.0:
        raise ValueError("window must be between 0 and 1")
    return int(window * min(n, m))


def _short_index(step: int, s: int, l: int, float_floors: bool) -> int:
    if float_floors:  # aeon: math.floor((step / max_size) * size)
        return math.floor((step / (l + 1)) * s)
    return (step * s) // (l + 1)


def aeon_band_may_differ(n: int, m: int) -> bool:
    """Whether aeon's band may differ from the exact one for lengths n, m: only where some step puts
    the short index exactly on an integer (step * s / (l + 1) with S >= 1), which needs
    gcd(s, l + 1) > 1. How aeon's compiled floating-point code rounds there varies between
    environments (seen: two venvs of the same aeon 1.6.0 and numba 0.63.1 on one machine gave
    different bands for lengths 6 and 33), so tests compare with aeon only on other length pairs,
    or allow exactly these cells to differ (band_differs_only_at_exact_steps)."""
    if n == m:
        return False
    s, l = min(n, m), max(n, m)
    return math.gcd(s, l + 1) > 1


def band_differs_only_at_exact_steps(got: np.ndarray, n: int, m: int, radius: int) -> bool:
    """True when the boolean band `got` (n, m) equals ours but at long indices L of the steps
    whose short index is an exact integer (where a floating-point floor may take S - 1)."""
    want = sakoe_chiba_cells(n, m, radius)
    diff = got != want
    if not diff.any():
        return True
    s, l = min(n, m), max(n, m)
    allowed = np.zeros((s, l), dtype=bool)
    for step in range(1, l + 1):
        if (step * s) % (l + 1) == 0:
            allowed[:, (step * l) // (l + 1)] = True
    if n > m:
        allowed = allowed.T
    return bool(not (diff & ~allowed).any())


def sakoe_chiba_cells(n: int, m: int, radius: Optional[int], float_floors: bool = False) -> np.ndarray:
    """Boolean (n, m): the allowed DTW cells (i, j) for lengths n (x) and m (y); None: all.

    float_floors=True evaluates the short index as aeon does (floating point), reproducing
    aeon's band exactly; the default is our exact integer definition.
    """
    if radius is None:
        return np.ones((n, m), dtype=bool)
    if radius < 0:
        raise ValueError("radius must be >= 0")
    if n == m:
        i, j = np.indices((n, m))
        return np.abs(i - j) <= radius
    if n > m:
        return sakoe_chiba_cells(m, n, radius, float_floors).T
    s, l = n, m  # rows short, columns long
    cells = np.zeros((s, l), dtype=bool)
    for step in range(l + 1):
        big = (step * l) // (l + 1)
        small = _short_index(step, s, l, float_floors)
        cells[max(0, small - radius) : min(s - 1, small + radius) + 1, big] = True
    return cells


def _as_2d(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(len(x), -1)


def dtw_reference(x, y, radius: Optional[int] = None, *, float_floors: bool = False) -> float:
    """DTW, squared Euclidean local cost, full matrix; D[n][m] without a square root.

    x, y: (length,) or (length, dim). radius None: no window. inf when no path is in the band.
    """
    x, y = _as_2d(x), _as_2d(y)
    n, m = len(x), len(y)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    cells = sakoe_chiba_cells(n, m, radius, float_floors)
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if cells[i - 1, j - 1]:
                D[i, j] = cost[i - 1, j - 1] + min(D[i - 1, j - 1], D[i - 1, j], D[i, j - 1])
    return float(D[n, m])


def twed_band_cells(n: int, m: int, radius: Optional[int], float_floors: bool = False) -> np.ndarray:
    """Boolean (n + 1, m + 1): the cells of our TWED matrix D[i][j] that the window keeps.

    D[0][0] always; D[i][j] for i, j >= 1 iff (i - 1, j - 1) is in sakoe_chiba_cells(n, m, radius),
    the DTW band of the unpadded lengths (aeon's twe_distance, radius int(window * min(n, m))).
    The border D[i][0], D[0][j] (i, j > 0) is +inf by definition and marked False.
    """
    cells = np.zeros((n + 1, m + 1), dtype=bool)
    cells[0, 0] = True
    cells[1:, 1:] = sakoe_chiba_cells(n, m, radius, float_floors)
    return cells


def twed_reference(
    x,
    y,
    nu: float,
    lmbda: float,
    degree: float = 2,
    radius: Optional[int] = None,
    tx=None,
    ty=None,
    *,
    float_floors: bool = False,
) -> float:
    """TWED as in the README ("The measure"), full matrix, D[n][m].

    Sample 0 of each series is the zero vector at time 0; stamps default to 1..length. With a
    radius, D[i][j] is computed only on twed_band_cells(n, m, radius) (D[0][0] and i, j >= 1
    with (i - 1, j - 1) in the DTW band of lengths n, m); every other cell is +inf. The band is
    on sample indices, whatever the stamps. aeon: radius = int(window * min(n, m)).
    """
    a, b = _as_2d(x), _as_2d(y)
    n, m = len(a), len(b)
    ta = np.arange(1, n + 1, dtype=np.float64) if tx is None else np.asarray(tx, dtype=np.float64)
    tb = np.arange(1, m + 1, dtype=np.float64) if ty is None else np.asarray(ty, dtype=np.float64)
    a = np.vstack([np.zeros((1, a.shape[1])), a])
    b = np.vstack([np.zeros((1, b.shape[1])), b])
    ta = np.concatenate([[0.0], ta])
    tb = np.concatenate([[0.0], tb])

    def norm(v: np.ndarray) -> float:
        return float(np.sum(np.abs(v) ** degree) ** (1.0 / degree))

    cells = twed_band_cells(n, m, radius, float_floors)
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        del_a = norm(a[i] - a[i - 1]) + nu * (ta[i] - ta[i - 1]) + lmbda
        for j in range(1, m + 1):
            if not cells[i, j]:
                continue
            del_b = norm(b[j] - b[j - 1]) + nu * (tb[j] - tb[j - 1]) + lmbda
            match = (
                D[i - 1, j - 1]
                + norm(a[i] - b[j])
                + norm(a[i - 1] - b[j - 1])
                + nu * (abs(ta[i] - tb[j]) + abs(ta[i - 1] - tb[j - 1]))
            )
            D[i, j] = min(D[i - 1, j] + del_a, D[i, j - 1] + del_b, match)
    return float(D[n, m])
