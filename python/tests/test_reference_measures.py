"""The plain references of reference_measures.py against aeon, tslearn and dtaidistance.

Checks the band definitions stated in reference_measures' docstring: cell sets against the rivals'
own mask functions, and values to 1e-12 relative. Each rival is skipped when not installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import reference_twed
from reference_measures import (
    aeon_band_may_differ,
    band_differs_only_at_exact_steps,
    dtw_reference,
    radius_from_window,
    sakoe_chiba_cells,
    twed_band_cells,
    twed_reference,
)

RTOL = 1e-12
WINDOWS = [None, 0.0, 0.05, 0.1, 0.2, 0.29, 0.5, 0.9, 1.0]


def _close(got, want, rtol=RTOL):
    if np.isinf(want):
        return np.isinf(got)
    return abs(got - want) <= rtol * max(abs(want), 1e-300)


def _aeon():
    mod = pytest.importorskip("aeon.distances", reason="aeon is not installed: pip install aeon")
    return mod


def _corner_band(n, m, r):
    """tslearn's sakoe_chiba_mask (and dtaidistance's window=r+1): i-(n-m)^+-r <= j <= i+(m-n)^+ +r."""
    i, j = np.indices((n, m))
    return (j >= i - max(n - m, 0) - r) & (j <= i + max(m - n, 0) + r)


def _dtw_on_cells(x, y, cells):
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    n, m = len(x), len(y)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(n):
        for j in range(m):
            if cells[i, j]:
                D[i + 1, j + 1] = cost[i, j] + min(D[i, j], D[i, j + 1], D[i + 1, j])
    return float(D[n, m])


def _has_path(cells):
    n, m = cells.shape
    R = np.zeros((n + 1, m + 1), dtype=bool)
    R[0, 0] = True
    for i in range(n):
        for j in range(m):
            R[i + 1, j + 1] = cells[i, j] and (R[i, j] or R[i, j + 1] or R[i + 1, j])
    return bool(R[n, m])


# ------------------------------------------------------------------------------------ our band


def test_band_definition_small_cases():
    assert np.array_equal(sakoe_chiba_cells(3, 3, 0), np.eye(3, dtype=bool))
    assert sakoe_chiba_cells(4, 7, None).all()
    # lengths 3 and 5, radius 0: steps 0..5 give (S, L) = (0,0) (0,0) (1,1) (1,2) (2,3) (2,4)
    want = np.zeros((3, 5), dtype=bool)
    for k, L in [(0, 0), (1, 1), (1, 2), (2, 3), (2, 4)]:
        want[k, L] = True
    assert np.array_equal(sakoe_chiba_cells(3, 5, 0), want)
    assert np.array_equal(sakoe_chiba_cells(5, 3, 0), want.T)


def test_radius_zero_holds_a_path():
    for n in range(1, 41):
        for m in range(1, 41):
            assert _has_path(sakoe_chiba_cells(n, m, 0)), (n, m)
            assert _has_path(sakoe_chiba_cells(n, m, 0, float_floors=True)), (n, m)


def test_twed_band_is_the_shifted_dtw_band():
    for n, m, r in [(1, 1, 0), (5, 5, 1), (4, 9, 0), (9, 4, 2), (7, 12, None)]:
        cells = twed_band_cells(n, m, r)
        assert cells.shape == (n + 1, m + 1) and cells[0, 0]
        assert not cells[1:, 0].any() and not cells[0, 1:].any()
        assert np.array_equal(cells[1:, 1:], sakoe_chiba_cells(n, m, r))


def test_twed_without_window_is_the_readme_measure(rng):
    for n, m, dim, degree in [(1, 1, 1, 2), (6, 9, 1, 1), (10, 7, 3, 2), (8, 8, 2, 3)]:
        a, b = rng.normal(size=(n, dim)), rng.normal(size=(m, dim))
        ta = np.cumsum(rng.uniform(0.1, 2.0, size=n))
        tb = np.cumsum(rng.uniform(0.1, 2.0, size=m))
        for nu, lmbda in [(0.001, 1.0), (0.3, 0.0)]:
            want = reference_twed(a, b, ta, tb, nu=nu, lmbda=lmbda, degree=degree)
            got = twed_reference(a, b, nu, lmbda, degree=degree, tx=ta, ty=tb)
            assert _close(got, want)
            # a radius that covers everything changes nothing
            got = twed_reference(a, b, nu, lmbda, degree, radius=max(n, m), tx=ta, ty=tb)
            assert _close(got, want)


# ----------------------------------------------------------------------------------------- aeon


def test_radius_from_window_is_aeon_truncation():
    assert radius_from_window(None, 5, 7) is None
    assert radius_from_window(0.1, 10, 10) == 1
    assert radius_from_window(0.29, 100, 100) == 28  # 0.29 * 100 = 28.999999999999996 in double
    assert radius_from_window(0.5, 9, 40) == 4  # of the shorter length
    assert radius_from_window(1.0, 9, 40) == 9
    with pytest.raises(ValueError):
        radius_from_window(1.5, 3, 3)
    with pytest.raises(ValueError):
        radius_from_window(-0.1, 3, 3)


def test_cells_equal_aeon_bounding_matrix():
    _aeon()
    from aeon.distances.elastic._bounding_matrix import create_band_bounds, create_bounding_matrix

    for n in range(1, 41):
        for m in range(1, 41):
            for w in (0.0, 0.1, 0.29, 0.5):
                r = radius_from_window(w, n, m)
                want = create_bounding_matrix(n, m, w)
                if aeon_band_may_differ(n, m):
                    assert band_differs_only_at_exact_steps(want, n, m, r), (n, m, w)
                    continue
                assert np.array_equal(sakoe_chiba_cells(n, m, r), want), (n, m, w)
                if (n * m) % 7 == 0:  # dtw_distance's row bounds: same cells
                    lo, hi = create_band_bounds(n, m, w)
                    rows = np.zeros((n, m), dtype=bool)
                    for i in range(n):
                        rows[i, lo[i] : hi[i]] = True
                    assert np.array_equal(rows, want), (n, m, w)


def test_aeon_float_floors_differ_from_exact_band():
    """aeon floors (step / (l + 1)) * s in floating point: where the short index is an exact integer
    its compiled code may take one less, and not the same in every environment. Its band differs
    from ours there only, and its value is the DTW of its own band."""
    aeon = _aeon()
    from aeon.distances.elastic._bounding_matrix import create_band_bounds, create_bounding_matrix

    rng = np.random.default_rng(7)
    for n, m in [(22, 43), (43, 22), (23, 45), (51, 26), (6, 33)]:
        assert aeon_band_may_differ(n, m)
        for w in (0.0, 0.1):
            r = radius_from_window(w, n, m)
            assert band_differs_only_at_exact_steps(create_bounding_matrix(n, m, w), n, m, r), (n, m, w)
            # dtw_distance's own row bounds (a second function, which may round otherwise again)
            lo, hi = create_band_bounds(n, m, w)
            rows = np.zeros((n, m), dtype=bool)
            for i in range(n):
                rows[i, lo[i] : hi[i]] = True
            assert band_differs_only_at_exact_steps(rows, n, m, r), (n, m, w)
            x, y = rng.normal(size=n), rng.normal(size=m)
            assert _close(aeon.dtw_distance(x, y, window=w), _dtw_on_cells(x, y, rows)), (n, m, w)


@pytest.mark.parametrize("dim", [1, 3])
def test_dtw_matches_aeon(rng, dim):
    aeon = _aeon()
    for n, m in [(1, 1), (1, 6), (7, 7), (12, 12), (9, 19), (19, 9), (17, 31), (40, 3), (33, 40)]:
        assert not aeon_band_may_differ(n, m)
        x, y = rng.normal(size=(n, dim)), rng.normal(size=(m, dim))
        ax, ay = (x[:, 0].copy(), y[:, 0].copy()) if dim == 1 else (x.T.copy(), y.T.copy())
        for w in WINDOWS:
            want = aeon.dtw_distance(ax, ay, window=w)
            assert np.isfinite(want)
            assert _close(dtw_reference(x, y, radius_from_window(w, n, m)), want), (n, m, w)
            assert _close(aeon.dtw_distance(ay, ax, window=w), want)  # symmetric


def test_dtw_pairwise_matches_aeon_per_pair_radius(rng):
    aeon = _aeon()
    series = [rng.normal(size=k) for k in (7, 9, 16, 16, 30)]  # no pair where aeon's band may differ
    for w in (0.0, 0.2, 0.5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = aeon.dtw_pairwise_distance(series, window=w)
        for i, a in enumerate(series):
            for j, b in enumerate(series):
                if i != j:
                    want = dtw_reference(a, b, radius_from_window(w, len(a), len(b)))
                    assert _close(got[i, j], want), (i, j, w)


@pytest.mark.parametrize("dim", [1, 2])
def test_twed_matches_aeon(rng, dim):
    aeon = _aeon()
    for n, m in [(1, 1), (1, 5), (8, 8), (15, 15), (6, 12), (12, 6), (25, 11), (30, 29)]:
        assert not aeon_band_may_differ(n, m)
        x, y = rng.normal(size=(n, dim)), 2.0 * rng.normal(size=(m, dim))
        ax, ay = (x[:, 0].copy(), y[:, 0].copy()) if dim == 1 else (x.T.copy(), y.T.copy())
        for nu, lmbda in [(0.001, 1.0), (0.5, 0.2), (0.0, 0.0), (2.0, 3.0)]:
            for w in WINDOWS:
                want = aeon.twe_distance(ax, ay, window=w, nu=nu, lmbda=lmbda)
                assert np.isfinite(want)
                got = twed_reference(x, y, nu, lmbda, radius=radius_from_window(w, n, m))
                assert _close(got, want), (n, m, nu, lmbda, w)


def test_twed_band_cells_are_aeon_twe_cells():
    """aeon's twe_cost_matrix is finite exactly on our band cells (i, j >= 1), shifted by one."""
    aeon = _aeon()
    rng = np.random.default_rng(3)
    for n, m, w in [(6, 6, 0.2), (5, 11, 0.0), (11, 5, 0.3), (9, 13, 0.1)]:
        cm = aeon.twe_cost_matrix(rng.normal(size=n), rng.normal(size=m), window=w)  # D[1:, 1:]
        cells = twed_band_cells(n, m, radius_from_window(w, n, m))
        assert np.array_equal(np.isfinite(cm), cells[1:, 1:]), (n, m, w)


def test_aeon_twe_pairwise_unequal_lengths_uses_padded_band():
    """aeon 1.6 quirk: on a collection of unequal lengths, twe_pairwise_distance builds the band on
    the padded lengths (n + 1, m + 1), radius int(window * min(n + 1, m + 1)), indexed [i-1, j-1]:
    not twe_distance's band (it may even leave no path: inf)."""
    aeon = _aeon()
    import aeon as aeon_pkg

    if not aeon_pkg.__version__.startswith("1.6"):
        pytest.skip(f"documents aeon 1.6 behaviour, found {aeon_pkg.__version__}")
    rng = np.random.default_rng(11)
    # lengths 10, 21: padded 11, 22, off the pairs where aeon's own floors may differ
    assert not aeon_band_may_differ(11, 22)
    x, y = rng.normal(size=10), rng.normal(size=21)
    for w in (0.0, 0.1, 0.3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = aeon.twe_pairwise_distance([x, y], window=w)[0, 1]
        cells = np.zeros((11, 22), dtype=bool)
        cells[0, 0] = True
        cells[1:, 1:] = sakoe_chiba_cells(11, 22, radius_from_window(w, 11, 22))[:10, :21]
        # the reference with those cells, by hand
        D = np.full((11, 22), np.inf)
        D[0, 0] = 0.0
        a, b = np.concatenate([[0.0], x]), np.concatenate([[0.0], y])
        for i in range(1, 11):
            for j in range(1, 22):
                if cells[i, j]:
                    D[i, j] = min(
                        D[i - 1, j] + abs(a[i] - a[i - 1]) + 1.001,
                        D[i, j - 1] + abs(b[j] - b[j - 1]) + 1.001,
                        D[i - 1, j - 1] + abs(a[i] - b[j]) + abs(a[i - 1] - b[j - 1]) + 0.002 * abs(i - j),
                    )
        assert _close(got, D[10, 21]), w
        if w == 0.0:  # no path in that band, while twe_distance's band has one
            assert np.isinf(got) and np.isfinite(aeon.twe_distance(x, y, window=w))


# -------------------------------------------------------------------------------------- tslearn


def test_tslearn_mask_and_values(rng):
    metrics = pytest.importorskip("tslearn.metrics", reason="tslearn is not installed: pip install tslearn")
    for n in range(1, 25, 3):
        for m in range(1, 25, 4):
            for r in (0, 1, 3):
                mask = metrics.sakoe_chiba_mask(n, m, radius=r)
                assert np.array_equal(mask, _corner_band(n, m, r)), (n, m, r)
                if n == m:
                    assert np.array_equal(mask, sakoe_chiba_cells(n, m, r))
    for n, m, dim in [(10, 10, 1), (16, 16, 3), (7, 15, 1), (15, 7, 2)]:
        x, y = rng.normal(size=(n, dim)), rng.normal(size=(m, dim))
        for r in (0, 2, 5):
            got = metrics.dtw(x, y, global_constraint="sakoe_chiba", sakoe_chiba_radius=r)
            want = np.sqrt(_dtw_on_cells(x, y, _corner_band(n, m, r)))
            assert _close(got, want)
            if n == m:
                assert _close(got, np.sqrt(dtw_reference(x, y, r)))
        assert _close(metrics.dtw(x, y), np.sqrt(dtw_reference(x, y)))
    series = [rng.normal(size=k) for k in (6, 11, 11)]
    got = metrics.cdist_dtw(series, global_constraint="sakoe_chiba", sakoe_chiba_radius=1)
    for i, a in enumerate(series):
        for j, b in enumerate(series):
            want = 0.0 if i == j else np.sqrt(_dtw_on_cells(a, b, _corner_band(len(a), len(b), 1)))
            assert _close(got[i, j], want)


# --------------------------------------------------------------------------------- dtaidistance


def test_dtaidistance_window_is_radius_plus_one(rng):
    pytest.importorskip("dtaidistance", reason="dtaidistance is not installed: pip install dtaidistance")
    from dtaidistance import dtw, dtw_ndim

    for n, m in [(1, 1), (9, 9), (20, 20), (6, 14), (14, 6), (3, 19)]:
        x, y = rng.normal(size=n), rng.normal(size=m)
        X, Y = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
        for r in (0, 1, 4):
            want = np.sqrt(_dtw_on_cells(x, y, _corner_band(n, m, r)))
            assert _close(dtw.distance_fast(x, y, window=r + 1, use_pruning=False), want)
            want_nd = np.sqrt(_dtw_on_cells(X, Y, _corner_band(n, m, r)))
            assert _close(dtw_ndim.distance_fast(X, Y, window=r + 1), want_nd)
            if n == m:
                assert _close(want, np.sqrt(dtw_reference(x, y, r)))
        for w in (0, None):  # no band
            assert _close(dtw.distance_fast(x, y, window=w, use_pruning=False), np.sqrt(dtw_reference(x, y)))
    series = [rng.normal(size=k) for k in (5, 9, 12)]
    got = dtw.distance_matrix_fast(series, window=2)
    for i, a in enumerate(series):
        for j, b in enumerate(series):
            want = 0.0 if i == j else np.sqrt(_dtw_on_cells(a, b, _corner_band(len(a), len(b), 1)))
            assert _close(got[i, j], want)


def test_dtaidistance_inputs_and_default_pruning(rng):
    pytest.importorskip("dtaidistance", reason="dtaidistance is not installed: pip install dtaidistance")
    from dtaidistance import dtw

    with pytest.raises(ValueError):  # C buffers of double only
        dtw.distance_fast(np.arange(5, dtype=np.float32), np.arange(6, dtype=np.float32))
    with pytest.raises(ValueError):
        dtw.distance_fast(np.arange(5), np.arange(6))
    strided = rng.normal(size=16)[::2]  # not C-contiguous: copied
    assert _close(dtw.distance_fast(strided, np.ones(4), use_pruning=False), np.sqrt(dtw_reference(strided, np.ones(4))))
    # distance_fast defaults to use_pruning=True: exact, or inf when the optimum is the Euclidean
    # bound's own path (rounding of sqrt(ub)**2), never another finite value
    for _ in range(50):
        n = int(rng.integers(2, 12))
        x, y = rng.normal(size=n), rng.normal(size=n)
        plain = dtw.distance_fast(x, y, window=1, use_pruning=False)
        pruned = dtw.distance_fast(x, y, window=1)
        assert np.isinf(pruned) or pruned == plain
