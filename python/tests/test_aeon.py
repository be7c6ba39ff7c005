"""Parity with aeon's TWE (aeon.distances.twe_distance / twe_pairwise_distance), to 1e-10 relative.

Where the conventions meet and where they part (see also the wavewarp module docstring):

* layout: aeon's series are (n_channels, n_timepoints), ours (length, dim): transpose. Collections:
  aeon (n_cases, n_channels, n_timepoints) -> ours X.transpose(0, 2, 1); 2-D (n_cases, n_timepoints)
  collections are read the same way by both.
* local cost: aeon takes the Euclidean norm across channels, our degree=2. Other degrees have no aeon
  counterpart for multivariate series; for univariate series every degree is |x - y|.
* time: aeon uses sample indices 1..n (and 0 for the padded first sample), exactly our default
  stamps. Stamps t0 + c * (1..n), one t0 for both series, equal aeon with nu * c; other stamps
  (different starts, irregular sampling) have no aeon form.
* aeon's window: our window (the same fraction, radius int(window * min(n, m)) per pair), on the
  samples without the padding sample, as twe_distance does. Off the length pairs where aeon's
  floating-point floors make its band uncertain (reference_measures.aeon_band_may_differ), the two
  agree; there we equal the exact reference. aeon's twe_pairwise_distance on a collection of
  UNEQUAL lengths builds another band (on the padded lengths) than its own twe_distance: we equal
  twe_distance (test_twe_pairwise_of_unequal_lengths_is_not_twe_distance). itakura_max_slope has
  no counterpart.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import wavewarp
from conftest import aeon_to_wavewarp, load_aeon_dataset
from reference_measures import aeon_band_may_differ, radius_from_window, twed_reference

aeon_distances = pytest.importorskip("aeon.distances", reason="aeon is not installed: pip install aeon")
twe_distance = aeon_distances.twe_distance
twe_pairwise_distance = aeon_distances.twe_pairwise_distance

RTOL = 1e-10
PARAMS = [(0.001, 1.0), (0.0, 0.0), (0.05, 0.5), (0.5, 2.0), (1.0, 0.1), (3.0, 5.0)]


def _aeon_pairwise(X, Y=None, nu=0.001, lmbda=1.0, window=None):
    with warnings.catch_warnings():  # numba's uint64 -> int64 cast warning inside aeon
        warnings.simplefilter("ignore")
        return twe_pairwise_distance(X, Y, nu=nu, lmbda=lmbda, window=window)


# ----------------------------------------------------------------------------------- random data


@pytest.mark.parametrize("nu, lmbda", PARAMS)
def test_univariate_pairs(rng, nu, lmbda):
    for na, nb in [(1, 1), (1, 7), (30, 30), (45, 17), (100, 130)]:
        a, b = rng.normal(size=na), rng.normal(size=nb) * 3
        want = twe_distance(a, b, nu=nu, lmbda=lmbda)
        for degree in (1, 2, 3):  # univariate: the degree does not matter
            assert wavewarp.twed(a, b, nu=nu, lmbda=lmbda, degree=degree) == pytest.approx(want, rel=RTOL)


@pytest.mark.parametrize("nu, lmbda", PARAMS)
def test_multivariate_pairs(rng, nu, lmbda):
    for channels, na, nb in [(2, 20, 20), (3, 33, 12), (7, 50, 64)]:
        a = rng.normal(size=(channels, na))  # aeon layout
        b = rng.normal(size=(channels, nb))
        want = twe_distance(a, b, nu=nu, lmbda=lmbda)
        got = wavewarp.twed(a.T, b.T, nu=nu, lmbda=lmbda, degree=2)
        assert got == pytest.approx(want, rel=RTOL)


@pytest.mark.parametrize("nu, lmbda", PARAMS[:4])
def test_pairwise_random(rng, nu, lmbda):
    X2 = rng.normal(size=(25, 40))
    np.testing.assert_allclose(wavewarp.twed_pairwise(X2, nu=nu, lmbda=lmbda),
                               _aeon_pairwise(X2, nu=nu, lmbda=lmbda), rtol=RTOL, atol=0)
    X3 = rng.normal(size=(15, 3, 30))  # aeon (n_cases, n_channels, n_timepoints)
    Y3 = rng.normal(size=(9, 3, 22))
    np.testing.assert_allclose(wavewarp.twed_pairwise(X3.transpose(0, 2, 1), Y3.transpose(0, 2, 1),
                                                      nu=nu, lmbda=lmbda),
                               _aeon_pairwise(X3, Y3, nu=nu, lmbda=lmbda), rtol=RTOL, atol=0)
    ragged = [rng.normal(size=n) for n in (5, 40, 13, 27, 1, 60)]
    np.testing.assert_allclose(wavewarp.twed_pairwise(ragged, nu=nu, lmbda=lmbda),
                               _aeon_pairwise(ragged, nu=nu, lmbda=lmbda), rtol=RTOL, atol=0)


# ----------------------------------------------------------------------------------- aeon's data sets


_load = load_aeon_dataset
_to_wavewarp = aeon_to_wavewarp


@pytest.mark.parametrize("name", ["GunPoint", "ItalyPowerDemand", "ArrowHead", "BasicMotions",
                                  "JapaneseVowels", "PickupGestureWiimoteZ"])
@pytest.mark.parametrize("nu, lmbda", [(0.001, 1.0), (0.1, 0.5), (1.0, 4.0)])
def test_pairwise_on_aeon_datasets(name, nu, lmbda):
    X, _ = _load(name, "train")
    Xq, _ = _load(name, "test")
    X = X[:60]
    Xq = Xq[:20]
    ours = wavewarp.twed_pairwise(_to_wavewarp(X), nu=nu, lmbda=lmbda)
    np.testing.assert_allclose(ours, _aeon_pairwise(X, nu=nu, lmbda=lmbda), rtol=RTOL, atol=0)
    ours_q = wavewarp.twed_pairwise(_to_wavewarp(Xq), _to_wavewarp(X), nu=nu, lmbda=lmbda)
    np.testing.assert_allclose(ours_q, _aeon_pairwise(Xq, X, nu=nu, lmbda=lmbda), rtol=RTOL, atol=0)
    # one pair through twe_distance too
    a, b = X[0], Xq[0]
    assert wavewarp.twed(a.T, b.T, nu=nu, lmbda=lmbda) == pytest.approx(
        twe_distance(a, b, nu=nu, lmbda=lmbda), rel=RTOL)


# ----------------------------------------------------------------------------------- where they differ


def test_uniform_stamps_map_to_scaled_nu(rng):
    """Stamps t0 + c, t0 + 2c, ... (one start t0 for both series) are aeon's indices with nu * c:
    every time difference scales by c, and a common shift cancels (the zero sample at time 0 only
    meets the first samples through the match of (1, 1), whose time term |ta_1 - tb_1| + 0 ignores
    the shift; the other cells that touch it are infinite)."""
    a, b = rng.normal(size=30), rng.normal(size=41)
    for c, t0 in [(0.5, 0.0), (2.0, 0.0), (10.0, 0.0), (1.0, 5.0), (3.0, -7.0)]:
        ta, tb = t0 + c * np.arange(1, 31), t0 + c * np.arange(1, 42)
        got = wavewarp.twed(a, b, ta, tb, nu=0.2, lmbda=1.0)
        assert got == pytest.approx(twe_distance(a, b, nu=0.2 * c, lmbda=1.0), rel=RTOL)
    # series that start at different times, or are sampled irregularly, have no aeon counterpart
    aeon = twe_distance(a, b, nu=0.2)
    late_b = wavewarp.twed(a, b, np.arange(1, 31), np.arange(1, 42) + 5.0, nu=0.2)
    assert late_b > aeon * (1 + 1e-6)
    irregular = np.cumsum(rng.uniform(0.2, 1.8, size=30))
    assert wavewarp.twed(a, b, irregular, None, nu=0.2) != pytest.approx(aeon, rel=1e-6)


def test_multivariate_degree_other_than_2_is_not_aeon(rng):
    a, b = rng.normal(size=(3, 20)), rng.normal(size=(3, 25))
    aeon = twe_distance(a, b)
    assert wavewarp.twed(a.T, b.T, degree=2) == pytest.approx(aeon, rel=RTOL)
    assert wavewarp.twed(a.T, b.T, degree=1) > aeon * (1 + 1e-3)  # L1 >= L2 norms


def test_aeon_layout_without_transpose_is_a_different_series(rng):
    a, b = rng.normal(size=(3, 20)), rng.normal(size=(3, 25))
    # (3, 20) read our way is 3 samples of dim 20: not the same question at all
    with pytest.raises(ValueError, match="same dim"):
        wavewarp.twed(a, b)
    a2 = rng.normal(size=(3, 25))
    assert wavewarp.twed(a2, b) != pytest.approx(twe_distance(a2, b), rel=1e-6)


# ----------------------------------------------------------------------------------- windows

WINDOWS = [None, 0.0, 0.05, 0.1, 0.3, 1.0]


@pytest.mark.parametrize("channels", [None, 2])
def test_window_pairs(rng, channels):
    ambiguous = 0
    for na, nb in [(1, 1), (1, 7), (30, 30), (45, 17), (22, 43), (40, 41), (100, 130)]:
        shape = (lambda k: (k,)) if channels is None else (lambda k: (channels, k))
        a, b = rng.normal(size=shape(na)), rng.normal(size=shape(nb)) * 3
        ao, bo = (a, b) if channels is None else (a.T, b.T)
        for nu, lmbda in [(0.001, 1.0), (0.5, 0.2)]:
            for window in WINDOWS:
                ours = wavewarp.twed(ao, bo, nu=nu, lmbda=lmbda, window=window)
                if window not in (None, 1.0) and aeon_band_may_differ(na, nb):
                    ambiguous += 1  # aeon's band depends on its floors there: the exact reference
                    want = twed_reference(ao, bo, nu, lmbda, radius=radius_from_window(window, na, nb))
                    assert ours == pytest.approx(want, rel=1e-12)
                    continue
                want = twe_distance(a, b, nu=nu, lmbda=lmbda, window=window)
                assert ours == pytest.approx(want, rel=RTOL), (na, nb, window)
    assert ambiguous > 0


@pytest.mark.parametrize("window", [0.0, 0.1, 0.25])
def test_window_pairwise_equal_lengths(rng, window):
    X, Y = rng.normal(size=(15, 3, 30)), rng.normal(size=(6, 3, 30))
    np.testing.assert_allclose(wavewarp.twed_pairwise(X.transpose(0, 2, 1), window=window, nu=0.1),
                               _aeon_pairwise(X, nu=0.1, window=window), rtol=RTOL, atol=0)
    np.testing.assert_allclose(wavewarp.pairwise(Y.transpose(0, 2, 1), X.transpose(0, 2, 1), "twed", window=window),
                               _aeon_pairwise(Y, X, window=window), rtol=RTOL, atol=0)


def test_twe_pairwise_of_unequal_lengths_is_not_twe_distance(rng):
    """aeon 1.6: twe_pairwise_distance(window=w) on a collection of unequal lengths builds the band
    on the padded lengths, not twe_distance's band for the same pair. We give twe_distance's value
    (pairwise and one pair agree in wavewarp)."""
    series = [rng.normal(size=(1, n)) for n in (10, 25, 17, 40)]
    ours = wavewarp.twed_pairwise(_to_wavewarp(series), window=0.1)
    theirs_pairwise = _aeon_pairwise(series, window=0.1)
    differs = False
    for i, a in enumerate(series):
        for j, b in enumerate(series):
            if i == j or aeon_band_may_differ(a.shape[1], b.shape[1]):
                continue
            assert ours[i, j] == pytest.approx(twe_distance(a, b, window=0.1), rel=RTOL)
            differs |= not np.isclose(theirs_pairwise[i, j], ours[i, j], rtol=1e-9)
    assert differs


@pytest.mark.parametrize("name", ["GunPoint", "ItalyPowerDemand", "ArrowHead", "BasicMotions",
                                  "JapaneseVowels", "PickupGestureWiimoteZ"])
def test_window_on_aeon_datasets(name):
    X, _ = _load(name, "train")
    Xq, _ = _load(name, "test")
    if isinstance(X, np.ndarray):  # equal lengths: twe_pairwise_distance
        X, Xq = X[:30], Xq[:10]
        ours = wavewarp.twed_pairwise(_to_wavewarp(Xq), _to_wavewarp(X), window=0.1, nu=0.01)
        np.testing.assert_allclose(ours, _aeon_pairwise(Xq, X, nu=0.01, window=0.1), rtol=RTOL, atol=0)
        return
    # unequal lengths: per pair, through twe_distance (see the test above), off the ambiguous pairs
    X, Xq = X[:12], Xq[:5]
    ours = wavewarp.twed_pairwise(_to_wavewarp(Xq), _to_wavewarp(X), window=0.1, nu=0.01)
    checked = 0
    for i, q in enumerate(Xq):
        for j, x in enumerate(X):
            if not aeon_band_may_differ(q.shape[-1], x.shape[-1]):
                checked += 1
                assert ours[i, j] == pytest.approx(twe_distance(q, x, nu=0.01, window=0.1), rel=RTOL)
    assert checked > 0


# ----------------------------------------------------------------------------------- scikit-learn


def test_one_nearest_neighbour_with_scikit_learn():
    neighbors = pytest.importorskip("sklearn.neighbors", reason="scikit-learn is not installed")
    X_train, y_train = _load("GunPoint", "train")
    X_test, y_test = _load("GunPoint", "test")
    train, test = X_train[:, 0, :], X_test[:, 0, :]  # univariate: (n_cases, n_timepoints)
    clf = neighbors.KNeighborsClassifier(n_neighbors=1, metric="precomputed")
    clf.fit(wavewarp.twed_pairwise(train), y_train)
    D_test = wavewarp.twed_pairwise(test, train)
    predicted = clf.predict(D_test)
    accuracy = float(np.mean(predicted == y_test))
    assert accuracy > 0.85  # TWED 1-NN on GunPoint is in the 0.9s
    # the same neighbours as aeon's distances
    aeon_nearest = np.argmin(_aeon_pairwise(test, train), axis=1)
    np.testing.assert_array_equal(predicted, y_train[aeon_nearest])
    idx, _ = wavewarp.twed_knn(test, train, 1)
    np.testing.assert_array_equal(idx[:, 0], aeon_nearest)
