"""Bad input named precisely (issue 12): where a NaN or infinite value is, and 1-D arrays refused
where a collection of series is expected, the same way in every function that takes one."""

import warnings

import numpy as np
import pytest

import wavewarp


LIB = "a series value is NaN or infinite"  # the library's message, which the position follows


@pytest.fixture
def rng():
    return np.random.default_rng(12)


# ------------------------------------------------------------------ NaN / inf: series and sample


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad, word", [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_pair_names_the_sample(rng, dtype, bad, word):
    a = rng.normal(size=30).astype(dtype)
    b = rng.normal(size=20).astype(dtype)
    a_bad = a.copy()
    a_bad[17] = bad
    with pytest.raises(ValueError, match=rf"^{LIB}: a: sample 17 \(0-based\) is {word}$"):
        wavewarp.distance(a_bad, b)
    b_bad = b.copy()
    b_bad[0] = bad
    for call in (lambda: wavewarp.distance(a, b_bad, "twed"), lambda: wavewarp.twed(a, b_bad)):
        with pytest.raises(ValueError, match=rf"^{LIB}: b: sample 0 \(0-based\) is {word}"):
            call()
    # multivariate: the component too; any layout (a strided view)
    m = rng.normal(size=(12, 3)).astype(dtype)
    m[5, 2] = bad
    with pytest.raises(ValueError, match=rf"^{LIB}: a: sample 5, component 2 \(0-based\) is {word}"):
        wavewarp.distance(m, np.ones((4, 3), dtype))
    f = np.asfortranarray(m)
    with pytest.raises(ValueError, match=rf"^{LIB}: a: sample 5, component 2 \(0-based\)"):
        wavewarp.distance(f, np.ones((4, 3), dtype))


@pytest.mark.parametrize("measure", ["dtw", "twed"])
def test_collections_name_the_series_and_sample(rng, measure):
    X = rng.normal(size=(6, 15))
    Y = rng.normal(size=(4, 15))
    Xb = X.copy()
    Xb[3, 11] = np.nan
    Yb = Y.copy()
    Yb[1, 0] = -np.inf
    with pytest.raises(ValueError, match=rf"^{LIB}: X: series 3, sample 11 \(0-based\) is NaN"):
        wavewarp.pairwise(Xb, measure=measure)
    with pytest.raises(ValueError, match=rf"^{LIB}: Y: series 1, sample 0 \(0-based\) is -inf"):
        wavewarp.pairwise(X, Yb, measure=measure)
    with pytest.raises(ValueError, match=rf"^{LIB}: queries: series 3, sample 11 \(0-based\) is NaN"):
        wavewarp.knn(Xb, Y, 2, measure=measure)
    with pytest.raises(ValueError, match=rf"^{LIB}: X: series 1, sample 0 \(0-based\) is -inf"):
        wavewarp.knn(X, Yb, 2, measure=measure)
    # ragged lists: the list's index; 3-D: the component
    ragged = [rng.normal(size=n) for n in (5, 9, 3, 7)]
    ragged[2][1] = np.inf
    with pytest.raises(ValueError, match=rf"^{LIB}: X: series 2, sample 1 \(0-based\) is inf"):
        wavewarp.pairwise(ragged, measure=measure)
    cube = rng.normal(size=(5, 8, 2)).astype(np.float32)
    cube[4, 7, 1] = np.nan
    with pytest.raises(ValueError, match=rf"^{LIB}: Y: series 4, sample 7, component 1 \(0-based\) is NaN"):
        wavewarp.pairwise(cube[:2], cube, measure=measure)


def test_twed_functions_index_and_estimator_name_the_position(rng):
    X = rng.normal(size=(6, 15))
    Q = rng.normal(size=(3, 15))
    Q[2, 14] = np.nan
    with pytest.raises(ValueError, match=rf"^{LIB}: X: series 2, sample 14 \(0-based\) is NaN"):
        wavewarp.twed_pairwise(Q, X)
    with pytest.raises(ValueError, match=rf"^{LIB}: queries: series 2, sample 14 \(0-based\) is NaN"):
        wavewarp.twed_knn(Q, X, 1)
    with pytest.raises(ValueError, match=rf"^{LIB}: X: series 2, sample 14 \(0-based\) is NaN"):
        wavewarp.Index(Q, "dtw")
    with pytest.raises(ValueError, match=rf"^{LIB}: X: series 2, sample 14 \(0-based\) is NaN"):
        wavewarp.TwedIndex(Q)
    with wavewarp.Index(X, "twed") as index:
        with pytest.raises(ValueError, match=rf"^{LIB}: queries: series 2, sample 14 \(0-based\) is NaN"):
            index.pairwise(Q)
        with pytest.raises(ValueError, match=rf"^{LIB}: queries: series 2, sample 14 \(0-based\) is NaN"):
            index.knn(Q, 2)
        assert index.pairwise(Q[:2]).shape == (2, 6)  # the index still works
    clf = wavewarp.KNeighborsClassifier("dtw").fit(X, np.arange(6) % 2)
    with pytest.raises(ValueError, match=r"series 2, sample 14 \(0-based\) is NaN"):
        clf.predict(Q)


# ------------------------------------------------------------------ 1-D arrays as collections


def _collection_calls(x1, X):
    """Every public call with a collection argument, with the 1-D array x1 in that argument."""
    index = wavewarp.Index(X, "dtw")
    twed_index = wavewarp.TwedIndex(X)
    clf = wavewarp.KNeighborsClassifier("dtw").fit(X, np.arange(len(X)) % 2)
    return {
        "pairwise X": ("X", lambda: wavewarp.pairwise(x1)),
        "pairwise Y": ("Y", lambda: wavewarp.pairwise(X, x1)),
        "twed_pairwise X": ("X", lambda: wavewarp.twed_pairwise(x1, X)),
        "twed_pairwise Y": ("Y", lambda: wavewarp.twed_pairwise(X, x1)),
        "knn queries": ("queries", lambda: wavewarp.knn(x1, X, 1)),
        "knn X": ("X", lambda: wavewarp.knn(X, x1, 1)),
        "twed_knn queries": ("queries", lambda: wavewarp.twed_knn(x1, X, 1)),
        "twed_knn X": ("X", lambda: wavewarp.twed_knn(X, x1, 1)),
        "Index": ("X", lambda: wavewarp.Index(x1)),
        "TwedIndex": ("X", lambda: wavewarp.TwedIndex(x1)),
        "Index.pairwise": ("queries", lambda: index.pairwise(x1)),
        "Index.knn": ("queries", lambda: index.knn(x1, 1)),
        "TwedIndex.knn": ("queries", lambda: twed_index.knn(x1, 1)),
        "fit": ("X", lambda: wavewarp.KNeighborsClassifier().fit(x1, np.zeros(len(x1)))),
        "predict": ("X", lambda: clf.predict(x1)),
        "kneighbors": ("X", lambda: clf.kneighbors(x1)),
    }


@pytest.mark.parametrize("case", list(_collection_calls(np.ones(3), np.ones((4, 3))).keys()))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_one_dimensional_collections_are_refused(rng, case, dtype):
    X = rng.normal(size=(4, 10))
    x1 = (rng.normal(size=10) * 10).astype(dtype)
    what, call = _collection_calls(x1, X)[case]
    with pytest.raises(ValueError, match=rf"^{what} is a 1-D array, but a collection of series is expected: "
                                         rf"pass {what}\[None\]"):
        call()


def test_one_dimensional_refusal_message_and_the_fix(rng):
    X = rng.normal(size=(4, 10))
    x = rng.normal(size=10)
    with pytest.raises(ValueError) as info:
        wavewarp.twed_pairwise(x)
    message = str(info.value)
    assert "X[None]" in message and "2-D array (n_series, length)" in message
    assert "one series or 10 series of one sample" in message
    # the fixes the message names give what distance gives
    want = [wavewarp.twed(x, X[j]) for j in range(4)]
    np.testing.assert_allclose(wavewarp.twed_pairwise(x[None], X)[0], want, rtol=1e-14)
    np.testing.assert_allclose(wavewarp.twed_pairwise(np.reshape(x, (1, -1)), X)[0], want, rtol=1e-14)
    np.testing.assert_allclose(wavewarp.twed_pairwise([x], X)[0], want, rtol=1e-14)
    # a list of numbers is the same ambiguity; a list of 1-D series is a collection
    with pytest.raises(ValueError, match=r"^X is a list of numbers, but a collection of series is expected"):
        wavewarp.pairwise([1.0, 2.0, 3.0])
    assert wavewarp.pairwise([[1.0, 2.0, 3.0]]).shape == (1, 1)
    # series themselves stay 1-D or 2-D
    assert wavewarp.distance(x, X[0]) == wavewarp.pairwise(x[None], X[:1])[0, 0]


# ------------------------------------------------------------------ aeon's layout read as ours


def test_aeon_layout_warns_and_the_transpose_fixes_it(rng):
    """aeon's (n_channels, n_timepoints) series read as (length, dim) are one sample each: DTW
    would silently be the squared Euclidean distance. A LayoutWarning says so, at the caller's line."""
    X = rng.normal(size=(6, 1, 40))  # aeon's (n_cases, n_channels, n_timepoints)
    y = np.arange(6) % 2
    assert issubclass(wavewarp.LayoutWarning, UserWarning)
    with pytest.warns(wavewarp.LayoutWarning, match=r"^a and b have shape \(1, 40\): .*a\.T and b\.T") as record:
        wrong = wavewarp.distance(X[0], X[1], "dtw")
    assert record[0].filename == __file__  # the user's line, not the package's
    assert wrong == pytest.approx(np.sum((X[0] - X[1]) ** 2))  # what the warning is about
    collection = r"^every series of X has length 1 and dim 40: .*X\.transpose\(0, 2, 1\)$"
    for call in (lambda: wavewarp.pairwise(X, measure="dtw"),
                 lambda: wavewarp.twed_pairwise(X),
                 lambda: wavewarp.Index(X, "dtw"),
                 lambda: wavewarp.KNeighborsClassifier("dtw").fit(X, y)):
        with pytest.warns(wavewarp.LayoutWarning, match=collection) as record:
            call()
        assert record[0].filename == __file__
    with pytest.warns(wavewarp.LayoutWarning, match=r"of queries and X .*queries\.transpose\(0, 2, 1\)"):
        wavewarp.knn(X, X, 1)
    with pytest.warns(wavewarp.LayoutWarning, match=r"of X and Y .*\[x\.T for x in X\]"):
        wavewarp.pairwise(list(X), X)
    with pytest.warns(wavewarp.LayoutWarning, match="of X and Y"):
        wavewarp.soft_dtw_batch(X, X, grad=False)
    # transposed as the warning says: DTW, and no warning
    fixed = X.transpose(0, 2, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", wavewarp.LayoutWarning)
        assert wavewarp.distance(X[0].T, X[1].T, "dtw") == wavewarp.distance(X[0, 0], X[1, 0], "dtw")
        D = wavewarp.pairwise(fixed, measure="dtw")
        assert D[0, 1] == wavewarp.distance(X[0, 0], X[1, 0], "dtw") != pytest.approx(wrong)
        wavewarp.KNeighborsClassifier("dtw").fit(fixed, y).predict(fixed)


def test_layout_warning_spares_genuine_series(rng):
    """One-sample series beside longer ones, of a few channels, or 2-D (univariate) collections of
    one-sample series are meant as they are: no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", wavewarp.LayoutWarning)
        wavewarp.distance(rng.normal(size=(1, 6)), rng.normal(size=(9, 6)))
        wavewarp.distance(rng.normal(size=(1, 3)), rng.normal(size=(1, 3)))  # a few channels
        wavewarp.pairwise([rng.normal(size=(1, 6)), rng.normal(size=(5, 6))])  # not every series
        wavewarp.pairwise(rng.normal(size=(4, 1, 6)), rng.normal(size=(3, 7, 6)))  # Y's are longer
        wavewarp.knn(rng.normal(size=(4, 1, 6)), rng.normal(size=(3, 7, 6)), 1)
        wavewarp.pairwise(rng.normal(size=(4, 1)))  # univariate series of one sample
    # users who mean such series can silence the category
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=wavewarp.LayoutWarning)
        wavewarp.pairwise(rng.normal(size=(4, 1, 6)))
