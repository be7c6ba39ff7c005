"""wavewarp.KNeighborsClassifier: a scikit-learn estimator over wavewarp.knn.

Checks that it equals a brute-force vote on the precomputed distance matrix (and scikit-learn's own
KNeighborsClassifier(metric="precomputed") on it), that it works in GridSearchCV over `window`, in
clone / get_params / set_params / pickle, on 2-D, 3-D and ragged collections, that misuse raises,
and that it works (with its own stand-in base classes) where scikit-learn is not installed.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import wavewarp

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed: pip install scikit-learn")
from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier as SkKNN  # noqa: E402


def _classes(rng, n_per_class=12, lengths=(40,), dim=None):
    """Three classes of noisy shapes (sine, square, ramp), lengths drawn from `lengths`."""
    X, y = [], []
    for label, shape in enumerate((np.sin, lambda t: np.sign(np.sin(t)), lambda t: (t % 6.3) / 3 - 1)):
        for _ in range(n_per_class):
            n = int(rng.choice(lengths))
            t = np.linspace(0, 6.3, n) + rng.uniform(0, 1)
            s = shape(t) + rng.normal(scale=0.4, size=n)
            X.append(s if dim is None else np.stack([s] + [rng.normal(size=n) for _ in range(dim - 1)], axis=1))
            y.append(["sine", "square", "ramp"][label])
    order = rng.permutation(len(y))
    return [X[i] for i in order], np.array(y)[order]


def _brute_force(D, y_train, k, weights="uniform"):
    """The vote on a precomputed (n_test, n_train) matrix, ties by smaller index / smaller class."""
    classes = np.unique(y_train)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    pred = []
    for row, nearest in zip(D, order):
        votes = np.zeros(len(classes))
        d = row[nearest]
        w = np.ones(k) if weights == "uniform" else (
            (d == 0).astype(float) if (d == 0).any() else 1.0 / d)
        for idx, weight in zip(nearest, w):
            votes[np.searchsorted(classes, y_train[idx])] += weight
        pred.append(classes[np.argmax(votes)])
    return np.array(pred)


@pytest.mark.parametrize("layout", ["2d", "3d", "ragged"])
@pytest.mark.parametrize("measure, extra", [("dtw", {}), ("dtw", dict(window=0.1)), ("twed", dict(nu=0.1))])
def test_equals_brute_force_on_the_precomputed_matrix(rng, layout, measure, extra):
    if layout == "ragged":
        X, y = _classes(rng, lengths=(25, 40, 57))
    else:
        X, y = _classes(rng, dim=2 if layout == "3d" else None)
        X = np.stack(X)
    train, test = np.arange(len(y)) % 3 != 0, np.arange(len(y)) % 3 == 0
    pick = (lambda m: [x for x, keep in zip(X, m) if keep]) if layout == "ragged" else (lambda m: X[m])
    X_train, X_test, y_train, y_test = pick(train), pick(test), y[train], y[test]
    D = wavewarp.pairwise(X_test, X_train, measure, **extra)
    for k in (1, 3, 5):
        for weights in ("uniform", "distance"):
            clf = wavewarp.KNeighborsClassifier(measure, k, weights=weights, **extra).fit(X_train, y_train)
            predicted = clf.predict(X_test)
            np.testing.assert_array_equal(predicted, _brute_force(D, y_train, k, weights))
            reference = SkKNN(n_neighbors=k, weights=weights, metric="precomputed").fit(
                wavewarp.pairwise(X_train, None, measure, **extra), y_train)
            np.testing.assert_array_equal(predicted, reference.predict(D))
            np.testing.assert_allclose(clf.predict_proba(X_test), reference.predict_proba(D), rtol=1e-12)
            assert clf.score(X_test, y_test) == pytest.approx(np.mean(predicted == y_test))
    one = wavewarp.KNeighborsClassifier(measure, **extra).fit(X_train, y_train)
    np.testing.assert_array_equal(one.predict(X_test), y_train[np.argmin(D, axis=1)])
    distances, indices = one.kneighbors(X_test, n_neighbors=2)
    np.testing.assert_array_equal(indices[:, 0], np.argmin(D, axis=1))
    np.testing.assert_allclose(distances[:, 0], D.min(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(one.kneighbors(X_test, return_distance=False), indices[:, :1])


def test_grid_search_over_window(rng):
    X, y = _classes(rng, n_per_class=10, lengths=(50,))
    X = np.stack(X)
    grid = {"window": [0.0, 0.05, 0.2, None]}
    search = GridSearchCV(wavewarp.KNeighborsClassifier("dtw"), grid, cv=3).fit(X, y)
    assert search.best_params_["window"] in grid["window"]
    assert len(search.cv_results_["mean_test_score"]) == 4
    assert search.best_score_ > 0.6  # three separable shapes
    # the refitted best estimator is the one of its parameters
    best = wavewarp.KNeighborsClassifier("dtw", window=search.best_params_["window"]).fit(X, y)
    np.testing.assert_array_equal(search.predict(X[:9]), best.predict(X[:9]))
    # each grid point's score is what a hand-made split gives
    folds = list(search.cv.split(X, y)) if hasattr(search.cv, "split") else None
    if folds is None:
        from sklearn.model_selection import StratifiedKFold

        folds = list(StratifiedKFold(3).split(X, y))
    for i, window in enumerate(grid["window"]):
        scores = []
        for tr, te in folds:
            D = wavewarp.pairwise(X[te], X[tr], "dtw", window=window)
            scores.append(np.mean(y[tr][np.argmin(D, axis=1)] == y[te]))
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(scores))


def test_grid_search_on_ragged_lists_and_twed_parameters(rng):
    X, y = _classes(rng, n_per_class=8, lengths=(20, 33, 41))
    search = GridSearchCV(wavewarp.KNeighborsClassifier("twed"), {"nu": [0.001, 0.1], "window": [0.1, None],
                                                                  "n_neighbors": [1, 3]}, cv=2)
    search.fit(X, y)
    assert set(search.best_params_) == {"nu", "window", "n_neighbors"}
    assert cross_val_score(wavewarp.KNeighborsClassifier("dtw", radius=3), X, y, cv=2).shape == (2,)


def test_estimator_protocol(rng):
    clf = wavewarp.KNeighborsClassifier("twed", 3, window=0.1, nu=0.5, weights="distance", threads=1)
    assert is_classifier(clf)
    params = clf.get_params()
    assert params == dict(measure="twed", n_neighbors=3, window=0.1, radius=None, weights="distance", nu=0.5,
                          lmbda=None, degree=None, backend="auto", threads=1)
    twin = clone(clf)
    assert twin is not clf and twin.get_params() == params
    assert clf.set_params(window=0.3, n_neighbors=1) is clf and clf.window == 0.3
    with pytest.raises(ValueError, match="Invalid parameter"):
        clf.set_params(windw=0.3)
    assert "window=0.3" in repr(clf)
    X, y = _classes(rng, n_per_class=4)
    fitted = clf.fit(np.stack(X), y)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(np.stack(X)), fitted.predict(np.stack(X)))
    assert fitted.measure_ == wavewarp.Measure("twed", nu=0.5, window=0.3)
    assert fitted.n_samples_fit_ == 12 and list(fitted.classes_) == ["ramp", "sine", "square"]
    with_measure = wavewarp.KNeighborsClassifier(wavewarp.Measure("dtw", radius=2)).fit(X, y)
    assert clone(with_measure).measure == wavewarp.Measure("dtw", radius=2)
    # labels of any type; predict returns them, integer labels stay integers
    int_labels = np.searchsorted(np.unique(y), y) + 10
    pred = wavewarp.KNeighborsClassifier().fit(X, int_labels).predict(X)
    assert pred.dtype == int_labels.dtype
    np.testing.assert_array_equal(pred, int_labels)  # 1-NN of the training set: itself


def test_distance_weights_with_exact_matches_and_callable_weights(rng):
    X, y = _classes(rng, n_per_class=5)
    X = np.stack(X)
    clf = wavewarp.KNeighborsClassifier("dtw", 5, weights="distance").fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)  # each series is at distance 0 of itself
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.max(axis=1), 1.0)
    calls = []

    def inverse_square(d):
        calls.append(d.shape)
        return 1.0 / (1e-9 + d) ** 2

    custom = wavewarp.KNeighborsClassifier("dtw", 3, weights=inverse_square).fit(X[1:], y[1:])
    assert custom.predict(X[:2]).shape == (2,) and calls == [(2, 3)]


def test_misuse(rng):
    X, y = _classes(rng, n_per_class=3)
    X = np.stack(X)
    with pytest.raises(NotFittedError):
        wavewarp.KNeighborsClassifier().predict(X)
    for clf, error, match in [
        (wavewarp.KNeighborsClassifier("dtw", nu=0.1), ValueError, "dtw takes no parameters, got nu"),
        (wavewarp.KNeighborsClassifier("dtwx"), ValueError, "unknown measure"),
        (wavewarp.KNeighborsClassifier(window=2.0), ValueError, "window must be between"),
        (wavewarp.KNeighborsClassifier(radius=-1), ValueError, "radius must be >= 0"),
        (wavewarp.KNeighborsClassifier(window=0.1, radius=1), ValueError, "not both"),
        (wavewarp.KNeighborsClassifier(wavewarp.Measure("dtw"), window=0.1), ValueError, "must be None"),
        (wavewarp.KNeighborsClassifier(n_neighbors=0), ValueError, "n_neighbors must be >= 1"),
        (wavewarp.KNeighborsClassifier(n_neighbors=2.0), TypeError, "n_neighbors must be an integer"),
        (wavewarp.KNeighborsClassifier(n_neighbors=10), ValueError, "larger than the number of training"),
        (wavewarp.KNeighborsClassifier(weights="inverse"), ValueError, "weights must be"),
        (wavewarp.KNeighborsClassifier(backend="gpu"), ValueError, "backend"),
    ]:
        with pytest.raises(error, match=match):
            clf.fit(X, y)
    clf = wavewarp.KNeighborsClassifier()
    with pytest.raises(ValueError, match="9 series but y has 8"):
        clf.fit(X, y[:8])
    with pytest.raises(ValueError, match="y must be 1-D"):
        clf.fit(X, np.stack([y, y], axis=1))
    with pytest.raises(ValueError, match="collection of series"):
        clf.fit(X[0], y[:1])
    clf.fit(X, y[:, None])  # a column of labels is accepted
    with pytest.raises(ValueError, match="dim"):
        clf.predict(np.zeros((2, 40, 3)))
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.full((1, 40), np.nan))


def test_fit_keeps_its_own_list_of_series(rng):
    """Appending to (or replacing items of) the list given to fit changes nothing: fit keeps a new
    list; an array is kept by reference, as scikit-learn does."""
    Xl = [rng.normal(size=5) for _ in range(4)]
    clf = wavewarp.KNeighborsClassifier("dtw").fit(Xl, [0, 1, 0, 1])
    want = clf.predict([np.zeros(5)])
    Xl.append(np.zeros(5))
    Xl[0] = np.full(5, 100.0)
    np.testing.assert_array_equal(clf.predict([np.zeros(5)]), want)
    assert len(clf.X_fit_) == clf.n_samples_fit_ == 4
    X = np.stack(Xl[1:])
    assert wavewarp.KNeighborsClassifier().fit(X, [0, 1, 0, 1]).X_fit_ is X


def _sparse(X):
    scipy_sparse = pytest.importorskip("scipy.sparse")
    return scipy_sparse.csr_matrix(X)


@pytest.mark.parametrize("make_X, error, match", [
    (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 23, np.nan, X), ValueError,
     r"^a series value is NaN or infinite: X: series 2, sample 3 \(0-based\) is NaN$"),
    (lambda X: [x if i != 4 else np.r_[x[:-1], -np.inf] for i, x in enumerate(X)], ValueError,
     r"^a series value is NaN or infinite: X: series 4, sample 9 \(0-based\) is -inf$"),
    (lambda X: X + 1j, ValueError, r"^X: cannot convert an array of dtype complex128 to float64$"),
    (lambda X: X.astype(object), ValueError, r"cannot convert an array of dtype object"),
    (_sparse, TypeError, r"^X is a sparse matrix, but series are dense: pass X\.toarray\(\)$"),
    (lambda X: [x if i != 1 else x[:0] for i, x in enumerate(X)], ValueError, "empty"),
])
def test_fit_checks_the_training_series(rng, make_X, error, match):
    """Bad training data fails at fit, with pairwise's message, not later at every predict."""
    X = rng.normal(size=(6, 10))
    y = np.arange(6) % 2
    clf = wavewarp.KNeighborsClassifier("dtw")
    with pytest.raises(error, match=match):
        clf.fit(make_X(X), y)
    with pytest.raises(NotFittedError):
        clf.predict(X)


def test_fit_checks_the_labels_and_empty_data(rng):
    X = rng.normal(size=(6, 10))
    clf = wavewarp.KNeighborsClassifier("dtw")
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        clf.fit(X, rng.normal(size=6))
    for bad in (np.inf, -np.inf, np.nan):
        with pytest.raises(ValueError, match="^y contains NaN or infinity"):
            clf.fit(X, [0.0, 1.0, 0.0, 1.0, 0.0, bad])
    with pytest.raises(ValueError, match="^X is empty: a collection needs at least one series$"):
        clf.fit(np.zeros((0, 5)), [])
    with pytest.raises(ValueError, match="^X is empty"):
        clf.fit([], [])
    clf.fit(X, [0.0, 1.0, 2.0, 0.0, 1.0, 2.0])  # integral floats are class labels
    np.testing.assert_array_equal(clf.classes_, [0.0, 1.0, 2.0])


def test_n_features_in_only_for_a_feature_matrix(rng):
    """scikit-learn's n_features_in_ describes a 2-D feature matrix: set for (n_series, length)
    arrays, absent for 3-D arrays and lists (and removed by a later fit on them)."""
    X, y = rng.normal(size=(6, 20)), np.arange(6) % 2
    clf = wavewarp.KNeighborsClassifier("dtw").fit(X, y)
    assert clf.n_features_in_ == 20
    assert clf.predict(rng.normal(size=(2, 25))).shape == (2,)  # elastic: queries of other lengths
    assert not hasattr(clf.fit(X[:, :, None], y), "n_features_in_")
    assert not hasattr(wavewarp.KNeighborsClassifier().fit(list(X), y), "n_features_in_")


def test_works_without_scikit_learn():
    """With scikit-learn unimportable, wavewarp imports and the estimator works on its own."""
    code = textwrap.dedent(
        """
        import sys
        sys.modules["sklearn"] = None  # import sklearn now raises ImportError
        import numpy as np
        import wavewarp
        assert "sklearn" not in [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
        from wavewarp import _neighbors
        assert not _neighbors.HAVE_SKLEARN
        rng = np.random.default_rng(1)
        X = np.concatenate([rng.normal(size=(5, 20)), rng.normal(3, 1, size=(5, 20))])
        y = np.repeat([0, 1], 5)
        clf = wavewarp.KNeighborsClassifier("dtw", 3, window=0.2)
        assert clf.get_params()["window"] == 0.2 and clf.set_params(window=0.1) is clf
        assert repr(clf) == "KNeighborsClassifier(n_neighbors=3, window=0.1)", repr(clf)
        assert clf.fit(X, y).score(X, y) == 1.0
        for bad_y, word in ((rng.normal(size=10), "continuous"), (np.r_[y[:-1], np.inf], "infinity")):
            try:
                wavewarp.KNeighborsClassifier().fit(X, bad_y)
            except ValueError as exc:
                assert word in str(exc), exc
            else:
                raise AssertionError("fit accepted labels that are not classes")
        try:
            clf.set_params(bogus=1)
        except ValueError as exc:
            assert "Invalid parameter" in str(exc)
        else:
            raise AssertionError("set_params accepted an unknown parameter")
        try:
            wavewarp.KNeighborsClassifier().predict(X)
        except AttributeError as exc:
            assert "not fitted" in str(exc)
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_importing_wavewarp_does_not_import_scikit_learn():
    code = "import sys, wavewarp; print('sklearn' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
