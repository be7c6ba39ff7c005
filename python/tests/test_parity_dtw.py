"""DTW parity with aeon, tslearn and dtaidistance, to 1e-10 relative, on random data and aeon's
bundled UCR/UEA data sets; and the documented places where their conventions differ from ours.

Conventions (reference_measures.py's docstring has the details read in the rivals' sources):

* aeon ``dtw_distance(x, y, window=w)`` / ``dtw_pairwise_distance``: exactly our value (squared
  Euclidean local cost, no square root), series ``(n_channels, n_timepoints)`` -> ``x.T``; window
  w -> radius ``int(w * min(n, m))`` per pair, our ``window=w``. Its band is ours except at the
  length pairs where its floating-point floors can land one below the exact integer (unequal
  lengths with gcd(min, max + 1) > 1, first (6, 33) or (22, 43) depending on how numba compiled
  aeon: ``aeon_band_may_differ``, see reference_measures.py): there we check our value against
  the exact reference instead.
* tslearn ``dtw`` / ``cdist_dtw``: the square root of ours; ``sakoe_chiba_radius=r`` is our
  ``radius=r`` for equal lengths; for unequal lengths tslearn's band is wider (the area between the
  two corner diagonals, widened by r), so its value is <= sqrt(ours) and may differ.
* dtaidistance ``dtw.distance_fast(use_pruning=False)``, ``dtw_ndim.distance_fast``,
  ``distance_matrix_fast``: the square root of ours; ``window=w`` is our ``radius=w - 1`` for equal
  lengths (tslearn's wider band for unequal lengths). ``use_pruning=True`` (distance_fast's default)
  may return inf where the optimum is its own upper bound: we compare with pruning off. Inputs
  must be C-contiguous float64.

Each rival's tests skip, with the reason in pytest's summary, only where it is not installed.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import wavewarp
from conftest import AEON_DATASETS, aeon_to_wavewarp, load_aeon_dataset
from reference_measures import aeon_band_may_differ, dtw_reference, radius_from_window

RTOL = 1e-10
WINDOWS = [None, 0.0, 0.05, 0.1, 0.2, 0.29, 0.5, 1.0]
RADII = [None, 0, 1, 3, 10]
# equal and unequal lengths; (22, 43), (43, 22), (23, 45) are pairs where aeon's band differs
LENGTH_PAIRS = [(1, 1), (1, 9), (10, 10), (50, 50), (20, 35), (22, 43), (43, 22), (23, 45), (60, 41)]


def _aeon():
    return pytest.importorskip("aeon.distances", reason="aeon is not installed (pip install aeon): aeon parity skipped")


def _tslearn():
    return pytest.importorskip("tslearn.metrics",
                               reason="tslearn is not installed (pip install tslearn): tslearn parity skipped")


def _dtaidistance():
    pytest.importorskip("dtaidistance",
                        reason="dtaidistance is not installed (pip install dtaidistance): its parity skipped")
    from dtaidistance import dtw, dtw_ndim

    return dtw, dtw_ndim


def _close(got, want, rtol=RTOL) -> bool:
    return bool(abs(got - want) <= rtol * max(abs(want), 1e-300))


def _quietly(call, *args, **kwargs):
    with warnings.catch_warnings():  # numba's uint64 -> int64 cast warnings inside aeon
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def _corner_band_dtw(x, y, r):
    """DTW on tslearn's / dtaidistance's band for unequal lengths: i-(n-m)^+-r <= j <= i+(m-n)^+ +r."""
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    n, m = len(x), len(y)
    i, j = np.indices((n, m))
    cells = (j >= i - max(n - m, 0) - r) & (j <= i + max(m - n, 0) + r)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for a in range(n):
        for b in range(m):
            if cells[a, b]:
                D[a + 1, b + 1] = cost[a, b] + min(D[a, b], D[a, b + 1], D[a + 1, b])
    return float(D[n, m])


def _lengths(X):
    return [x.shape[-1] for x in X]


def _check_aeon_matrix(ours, theirs, Q, X, window, Q_ours, X_ours, check_limit=4):
    """ours == aeon's matrix off the ambiguous length pairs; on them ours == the exact reference
    (checked on at most `check_limit` pairs, the smallest, to bound the pure-Python reference's
    time). Returns the number of ambiguous pairs."""
    ambiguous = np.zeros(ours.shape, dtype=bool)
    if window is not None and window != 1.0:
        for a, n in enumerate(_lengths(Q)):
            for b, m in enumerate(_lengths(X)):
                ambiguous[a, b] = aeon_band_may_differ(n, m)
    np.testing.assert_allclose(ours[~ambiguous], theirs[~ambiguous], rtol=RTOL, atol=0)
    pairs = sorted(zip(*np.nonzero(ambiguous)), key=lambda p: len(Q_ours[p[0]]) * len(X_ours[p[1]]))
    for a, b in pairs[:check_limit]:
        q, x = Q_ours[a], X_ours[b]
        assert _close(ours[a, b], dtw_reference(q, x, radius_from_window(window, len(q), len(x))))
    return int(ambiguous.sum())


# =================================================================================== aeon


@pytest.mark.parametrize("channels", [None, 1, 3])
def test_aeon_dtw_distance_random(rng, channels):
    dtw_distance = _aeon().dtw_distance
    ambiguous = 0
    for n, m in LENGTH_PAIRS:
        shape = (lambda k: (k,)) if channels is None else (lambda k: (channels, k))
        x, y = rng.normal(size=shape(n)), rng.normal(size=shape(m))
        xo, yo = (x, y) if channels is None else (x.T, y.T)
        for window in WINDOWS:
            ours = wavewarp.distance(xo, yo, "dtw", window=window)
            theirs = dtw_distance(x, y, window=window)
            assert np.isfinite(theirs)
            if window not in (None, 1.0) and aeon_band_may_differ(n, m):
                ambiguous += 1
                assert _close(ours, dtw_reference(xo, yo, radius_from_window(window, n, m))), (n, m, window)
            else:
                assert _close(ours, theirs), (n, m, window, ours, theirs)
    assert ambiguous > 0  # the ambiguous pairs were met (and checked against the exact reference)


@pytest.mark.parametrize("window", [None, 0.0, 0.1, 0.3])
def test_aeon_dtw_pairwise_random(rng, window):
    dtw_pairwise_distance = _aeon().dtw_pairwise_distance
    X2, Y2 = rng.normal(size=(15, 40)), rng.normal(size=(6, 40))
    np.testing.assert_allclose(wavewarp.pairwise(X2, measure="dtw", window=window),
                               _quietly(dtw_pairwise_distance, X2, window=window), rtol=RTOL, atol=0)
    np.testing.assert_allclose(wavewarp.pairwise(Y2, X2, "dtw", window=window),
                               _quietly(dtw_pairwise_distance, Y2, X2, window=window), rtol=RTOL, atol=0)
    X3, Y3 = rng.normal(size=(10, 3, 30)), rng.normal(size=(4, 3, 30))  # aeon (n_cases, n_channels, n_timepoints)
    np.testing.assert_allclose(wavewarp.pairwise(Y3.transpose(0, 2, 1), X3.transpose(0, 2, 1), "dtw", window=window),
                               _quietly(dtw_pairwise_distance, Y3, X3, window=window), rtol=RTOL, atol=0)
    ragged = [rng.normal(size=(2, n)) for n in (5, 22, 43, 13, 1, 45, 23, 30)]
    ours = wavewarp.pairwise(aeon_to_wavewarp(ragged), measure="dtw", window=window)
    theirs = _quietly(dtw_pairwise_distance, ragged, window=window)
    _check_aeon_matrix(ours, theirs, ragged, ragged, window, aeon_to_wavewarp(ragged), aeon_to_wavewarp(ragged))


def _subset(name):
    n_train, n_test = {"ACSF1": (8, 3), "OSULeaf": (20, 6)}.get(name, (30, 10))
    X, _ = load_aeon_dataset(name, "train")
    Q, _ = load_aeon_dataset(name, "test")
    return X[:n_train], Q[:n_test]


@pytest.mark.parametrize("name", list(AEON_DATASETS))
def test_aeon_dtw_on_datasets(name):
    dtw_pairwise_distance = _aeon().dtw_pairwise_distance
    X, Q = _subset(name)
    Xo, Qo = aeon_to_wavewarp(X), aeon_to_wavewarp(Q)
    for window in (None, 0.1):
        ours = wavewarp.pairwise(Qo, Xo, "dtw", window=window)
        _check_aeon_matrix(ours, _quietly(dtw_pairwise_distance, Q, X, window=window), Q, X, window, Qo, Xo)
        ours_self = wavewarp.pairwise(Xo, measure="dtw", window=window)
        _check_aeon_matrix(ours_self, _quietly(dtw_pairwise_distance, X, window=window), X, X, window, Xo, Xo)
    # one pair through dtw_distance, and the kNN of the matrix
    assert _close(wavewarp.distance(Qo[0], Xo[0], "dtw"), _aeon().dtw_distance(Q[0], X[0]))
    idx, _ = wavewarp.knn(Qo, Xo, 1, "dtw")
    np.testing.assert_array_equal(idx[:, 0], np.argmin(_quietly(dtw_pairwise_distance, Q, X), axis=1))


# =================================================================================== tslearn


@pytest.mark.parametrize("dim", [1, 3])
def test_tslearn_dtw_random(rng, dim):
    metrics = _tslearn()
    for n, m in LENGTH_PAIRS:
        x, y = rng.normal(size=(n, dim)), rng.normal(size=(m, dim))  # tslearn's layout is ours
        # no window: any lengths
        assert _close(metrics.dtw(x, y), np.sqrt(wavewarp.distance(x, y, "dtw")))
        if n != m:
            continue
        for radius in RADII[1:]:  # equal lengths: sakoe_chiba_radius=r is our radius=r
            theirs = metrics.dtw(x, y, global_constraint="sakoe_chiba", sakoe_chiba_radius=radius)
            assert _close(theirs, np.sqrt(wavewarp.distance(x, y, "dtw", radius=radius))), (n, radius)


def test_tslearn_cdist_dtw_random(rng):
    metrics = _tslearn()
    from tslearn.utils import to_time_series_dataset

    X, Y = rng.normal(size=(12, 35, 2)), rng.normal(size=(5, 35, 2))
    for radius in (None, 0, 2, 5):
        options = {} if radius is None else dict(global_constraint="sakoe_chiba", sakoe_chiba_radius=radius)
        np.testing.assert_allclose(metrics.cdist_dtw(Y, X, **options),
                                   np.sqrt(wavewarp.pairwise(Y, X, "dtw", radius=radius)), rtol=RTOL, atol=0)
        np.testing.assert_allclose(metrics.cdist_dtw(X, **options),
                                   np.sqrt(wavewarp.pairwise(X, measure="dtw", radius=radius)), rtol=RTOL, atol=1e-300)
    ragged = [rng.normal(size=n) for n in (5, 30, 12, 41, 1)]  # no window: any lengths (NaN-padded)
    np.testing.assert_allclose(metrics.cdist_dtw(to_time_series_dataset(ragged)),
                               np.sqrt(wavewarp.pairwise(ragged, measure="dtw")), rtol=RTOL, atol=1e-300)


def test_tslearn_band_differs_for_unequal_lengths(rng):
    """tslearn's sakoe_chiba_radius for unequal lengths keeps the area between the corner
    diagonals widened by r: a wider band than aeon's (ours), so tslearn's value is <= sqrt(ours),
    and it equals DTW on that corner band."""
    metrics = _tslearn()
    differs = 0
    for n, m in [(20, 35), (43, 22), (30, 31), (60, 41)]:
        x, y = rng.normal(size=n), rng.normal(size=m)
        for radius in (0, 2, 5):
            theirs = metrics.dtw(x, y, global_constraint="sakoe_chiba", sakoe_chiba_radius=radius)
            ours = wavewarp.distance(x, y, "dtw", radius=radius)
            assert _close(theirs, np.sqrt(_corner_band_dtw(x, y, radius)))
            assert _close(ours, dtw_reference(x, y, radius))
            assert theirs <= np.sqrt(ours) * (1 + RTOL)
            differs += not _close(theirs, np.sqrt(ours), 1e-9)
    assert differs > 0


@pytest.mark.parametrize("name", list(AEON_DATASETS))
def test_tslearn_on_datasets(name):
    metrics = _tslearn()
    from tslearn.utils import to_time_series_dataset

    X, Q = _subset(name)
    Xo, Qo = aeon_to_wavewarp(X), aeon_to_wavewarp(Q)
    if AEON_DATASETS[name][0]:  # equal lengths: with and without a radius
        for radius in (None, 5):
            options = {} if radius is None else dict(global_constraint="sakoe_chiba", sakoe_chiba_radius=radius)
            np.testing.assert_allclose(metrics.cdist_dtw(Qo, Xo, **options),
                                       np.sqrt(wavewarp.pairwise(Qo, Xo, "dtw", radius=radius)), rtol=RTOL, atol=0)
    else:  # ragged: no window (tslearn reads NaN-padded datasets)
        np.testing.assert_allclose(metrics.cdist_dtw(to_time_series_dataset(Qo), to_time_series_dataset(Xo)),
                                   np.sqrt(wavewarp.pairwise(Qo, Xo, "dtw")), rtol=RTOL, atol=0)


# =================================================================================== dtaidistance


def test_dtaidistance_random(rng):
    dtw, dtw_ndim = _dtaidistance()
    for n, m in LENGTH_PAIRS:
        x, y = rng.normal(size=n), rng.normal(size=m)
        assert _close(dtw.distance_fast(x, y, use_pruning=False), np.sqrt(wavewarp.distance(x, y, "dtw")))
        x3, y3 = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
        assert _close(dtw_ndim.distance_fast(x3, y3, use_pruning=False), np.sqrt(wavewarp.distance(x3, y3, "dtw")))
        if n != m:
            continue
        for radius in RADII[1:]:  # equal lengths: window=w is our radius=w - 1
            assert _close(dtw.distance_fast(x, y, window=radius + 1, use_pruning=False),
                          np.sqrt(wavewarp.distance(x, y, "dtw", radius=radius))), (n, radius)
            assert _close(dtw_ndim.distance_fast(x3, y3, window=radius + 1, use_pruning=False),
                          np.sqrt(wavewarp.distance(x3, y3, "dtw", radius=radius))), (n, radius)


def test_dtaidistance_matrices_random(rng):
    dtw, dtw_ndim = _dtaidistance()
    X = rng.normal(size=(12, 40))
    X3 = rng.normal(size=(8, 30, 2))
    for radius in (None, 0, 3):
        window = None if radius is None else radius + 1
        np.testing.assert_allclose(dtw.distance_matrix_fast(X, window=window, use_pruning=False),
                                   np.sqrt(wavewarp.pairwise(X, measure="dtw", radius=radius)), rtol=RTOL, atol=0)
        np.testing.assert_allclose(dtw_ndim.distance_matrix_fast(X3, window=window),  # never prunes
                                   np.sqrt(wavewarp.pairwise(X3, measure="dtw", radius=radius)), rtol=RTOL, atol=0)
    ragged = [rng.normal(size=n) for n in (5, 30, 12, 41, 1)]  # no window: any lengths
    np.testing.assert_allclose(dtw.distance_matrix_fast(ragged, use_pruning=False),
                               np.sqrt(wavewarp.pairwise(ragged, measure="dtw")), rtol=RTOL, atol=0)


def test_dtaidistance_band_differs_for_unequal_lengths(rng):
    """dtaidistance's window=w for unequal lengths is tslearn's corner band with r = w - 1."""
    dtw, _ = _dtaidistance()
    differs = 0
    for n, m in [(20, 35), (43, 22), (60, 41)]:
        x, y = rng.normal(size=n), rng.normal(size=m)
        for radius in (0, 2, 5):
            theirs = dtw.distance_fast(x, y, window=radius + 1, use_pruning=False)
            ours = wavewarp.distance(x, y, "dtw", radius=radius)
            assert _close(theirs, np.sqrt(_corner_band_dtw(x, y, radius)))
            assert theirs <= np.sqrt(ours) * (1 + RTOL)
            differs += not _close(theirs, np.sqrt(ours), 1e-9)
    assert differs > 0


@pytest.mark.parametrize("name", list(AEON_DATASETS))
def test_dtaidistance_on_datasets(name):
    dtw, dtw_ndim = _dtaidistance()
    equal, multivariate = AEON_DATASETS[name]
    X, _ = _subset(name)
    Xo = aeon_to_wavewarp(X)
    if multivariate:
        series = [np.ascontiguousarray(x, dtype=np.float64) for x in Xo]
        matrix = dtw_ndim.distance_matrix_fast  # never prunes
    else:
        series = [np.ascontiguousarray(x[:, 0], dtype=np.float64) for x in Xo]
        matrix = functools.partial(dtw.distance_matrix_fast, use_pruning=False)
    for radius in (None, 5) if equal else (None,):
        window = None if radius is None else radius + 1
        np.testing.assert_allclose(matrix(series, window=window),
                                   np.sqrt(wavewarp.pairwise(series, measure="dtw", radius=radius)), rtol=RTOL, atol=0)
