"""KNeighborsClassifier: k nearest neighbours under an elastic measure, as a scikit-learn estimator.

When scikit-learn is importable the class derives from its ``ClassifierMixin`` and
``BaseEstimator``: ``get_params`` / ``set_params``, ``clone``, ``GridSearchCV``,
``cross_val_score``, pipelines and pickling work as for scikit-learn's own estimators. Without
scikit-learn it derives from the small stand-ins below, which give the same ``get_params``,
``set_params`` and ``score`` (accuracy), so the estimator works on its own; ``wavewarp`` never needs
scikit-learn to import, and this module is only loaded when ``wavewarp.KNeighborsClassifier`` is
first used.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np

from . import _arrays
from ._functions import knn
from ._measure import Measure, MeasureLike, backend_name
from ._wavewarp import dataset_check as _dataset_check

__all__ = ["KNeighborsClassifier", "HAVE_SKLEARN"]


class _StandInBaseEstimator:
    """What the estimator uses of sklearn.base.BaseEstimator, for when scikit-learn is missing."""

    @classmethod
    def _get_param_names(cls) -> list:
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The estimator's parameters (those of ``__init__``), as scikit-learn's ``get_params``."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Any:
        """Sets parameters, as scikit-learn's ``set_params``; ValueError for unknown names."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                                 f"Valid parameters are: {valid!r}.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for name, value in self.get_params().items():
            default = defaults.get(name, inspect.Parameter.empty)
            if value is not default and not (isinstance(value, (str, int, float)) and value == default):
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"


class _StandInClassifierMixin:
    """What the estimator uses of sklearn.base.ClassifierMixin, for when scikit-learn is missing."""

    _estimator_type = "classifier"

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy of ``self.predict(X)`` against ``y`` (weighted by sample_weight)."""
        y = np.asarray(y)
        correct = (self.predict(X) == y).astype(np.float64)  # type: ignore[attr-defined]
        return float(np.average(correct, weights=sample_weight))


try:
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import ClassifierMixin as _ClassifierMixin

    HAVE_SKLEARN = True
except ImportError:  # scikit-learn is optional
    _BaseEstimator = _StandInBaseEstimator  # type: ignore[misc, assignment]
    _ClassifierMixin = _StandInClassifierMixin  # type: ignore[misc, assignment]
    HAVE_SKLEARN = False


Weights = Union[str, Callable[[np.ndarray], np.ndarray]]


def _training_series(X: Any) -> Tuple[Any, int, Optional[int]]:
    """The training collection checked as pairwise and knn check theirs (shape, dtype, empty series,
    NaN and inf values), so that bad training data fails at fit, not at every predict.

    Returns what the estimator keeps (the array itself, as scikit-learn keeps its training data, or
    a new list of the series of a list, so that the caller appending to theirs changes nothing),
    the number of series, and the length of an equal-length univariate 2-D host array (None for
    other layouts).
    """
    opened = _arrays.open_collection(X, "X")
    pack = _arrays.pack(opened, None, opened.is_f32, "X", "tX")
    if pack.count == 0:
        raise ValueError("X is empty: a collection needs at least one series")
    _dataset_check(pack, "X")
    _arrays.warn_if_single_samples(X=pack)
    if opened.kind == "list":
        return [item.obj for item in opened.obj], pack.count, None
    univariate_matrix = not opened.device and opened.obj.ndim == 2
    return opened.obj, pack.count, pack.length if univariate_matrix else None


def _check_labels(y: Any, n: int) -> np.ndarray:
    """y as a 1-D array of class labels, one per training series."""
    if type(y).__module__.startswith("scipy.sparse"):
        raise TypeError("y is a sparse matrix: give the labels as a 1-D array")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per series), got shape {y.shape}")
    if len(y) != n:
        raise ValueError(f"X has {n} series but y has {len(y)} labels")
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity: class labels must be finite")
    if HAVE_SKLEARN:
        from sklearn.utils.multiclass import check_classification_targets

        check_classification_targets(y)  # ValueError for real values (continuous targets)
    elif y.dtype.kind in "fc" and np.any(y != np.round(y)):
        raise ValueError("Unknown label type: continuous. y must hold class labels, not real values")
    return y


def _count_series(X: Any, what: str) -> int:
    """Number of series in a collection given to the estimator (2-D, 3-D array or list)."""
    opened = _arrays.open_collection(X, what)
    if opened.kind == "list":
        return len(opened.obj)
    if opened.device:
        iface = _arrays.cuda_interface(opened.obj, what)
        assert iface is not None
        shape = tuple(iface["shape"])
    else:
        shape = opened.obj.shape
    if len(shape) not in (2, 3):
        raise ValueError(
            f"{what} must be a collection of series: a 2-D array (n_series, length), a 3-D array "
            f"(n_series, length, dim) or a list of series; got an array of shape {shape}"
        )
    return int(shape[0])


class KNeighborsClassifier(_ClassifierMixin, _BaseEstimator):
    """k-nearest-neighbours classification of time series under DTW or TWED.

    A scikit-learn estimator (``fit``, ``predict``, ``predict_proba``, ``kneighbors``, ``score``)
    whose neighbours are found by :func:`wavewarp.knn`: no precomputed matrices to build by hand,
    and ``GridSearchCV`` can tune ``window``, ``n_neighbors`` or the TWED parameters.

    Parameters
    ----------
    measure : {"dtw", "twed"} or Measure
        The measure, as in :func:`wavewarp.distance`. A :class:`wavewarp.Measure` holds its window
        and parameters; ``window``, ``radius``, ``nu``, ``lmbda``, ``degree`` must then be None.
    n_neighbors : int
        Neighbours that vote, >= 1 and at most the number of training series.
    window : float, optional
        aeon's Sakoe-Chiba window, a fraction in [0, 1] of the shorter series (None: none).
    radius : int, optional
        The Sakoe-Chiba radius in samples. Not together with ``window``.
    weights : {"uniform", "distance"} or callable
        "uniform": each neighbour has one vote; "distance": a vote of 1 / distance (neighbours at
        distance 0, when there are any, share all the weight); a callable maps the
        ``(n_queries, n_neighbors)`` array of distances to weights of the same shape.
    nu, lmbda, degree : optional
        TWED's parameters (None: the defaults 0.001, 1.0, 2). Given for DTW they are a ValueError
        at ``fit``.
    backend : {"auto", "cpu", "cuda"}
        As in :func:`wavewarp.knn`.
    threads : int, optional
        CPU threads (None: all cores).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels, sorted.
    measure_ : Measure
        The measure in use (from ``measure``, ``window``, ``radius`` and the parameters).
    n_samples_fit_ : int
        Number of training series.
    X_fit_ : array or list
        The training series: the array given to ``fit`` (not copied: do not modify it in place),
        or for a list a new list of its series (as arrays; the series themselves are not copied).
    n_features_in_ : int
        The length of the training series, set only when ``X`` is a 2-D array ``(n_series,
        length)`` (scikit-learn's feature matrix); queries may have other lengths.

    Notes
    -----
    Series are laid out as everywhere in wavewarp: a 2-D array ``(n_series, length)`` of
    univariate series, a 3-D array ``(n_series, length, dim)`` (aeon's ``(n_cases, n_channels,
    n_timepoints)`` is ``X.transpose(0, 2, 1)``), or a list of series of any lengths (lists of
    ragged series go through ``GridSearchCV`` and ``cross_val_score`` unchanged). Ties between
    neighbours at equal distances are broken by the smaller training index, ties between classes
    in the vote by the smaller class label (as scikit-learn).

    Without scikit-learn installed the class still works (it then has ``get_params``,
    ``set_params`` and ``score`` of its own) but is not a scikit-learn estimator.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV             # doctest: +SKIP
    >>> search = GridSearchCV(wavewarp.KNeighborsClassifier("dtw"),
    ...                       {"window": [0.0, 0.05, 0.1, 0.2, None]})  # doctest: +SKIP
    >>> search.fit(X_train, y_train).score(X_test, y_test)            # doctest: +SKIP
    """

    def __init__(
        self,
        measure: MeasureLike = "dtw",
        n_neighbors: int = 1,
        *,
        window: Optional[float] = None,
        radius: Optional[int] = None,
        weights: Weights = "uniform",
        nu: Optional[float] = None,
        lmbda: Optional[float] = None,
        degree: Optional[int] = None,
        backend: str = "auto",
        threads: Optional[int] = None,
    ) -> None:
        # scikit-learn's rule: store the parameters as given; they are checked by fit
        self.measure = measure
        self.n_neighbors = n_neighbors
        self.window = window
        self.radius = radius
        self.weights = weights
        self.nu = nu
        self.lmbda = lmbda
        self.degree = degree
        self.backend = backend
        self.threads = threads

    # ------------------------------------------------------------------------------ checks

    def _make_measure(self) -> Measure:
        params = {k: v for k, v in (("nu", self.nu), ("lmbda", self.lmbda), ("degree", self.degree)) if v is not None}
        if isinstance(self.measure, Measure):
            given = [k for k in ("window", "radius", "nu", "lmbda", "degree") if getattr(self, k) is not None]
            if given:
                raise ValueError(f"measure is a Measure, which holds its window and parameters: "
                                 f"{', '.join(given)} must be None")
            return self.measure
        return Measure(self.measure, window=self.window, radius=self.radius, **params)

    def _check_settings(self) -> None:
        k = self.n_neighbors
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"n_neighbors must be an integer, not {type(k).__name__}")
        if k < 1:
            raise ValueError(f"n_neighbors must be >= 1, not {k}")
        if not (callable(self.weights) or self.weights in ("uniform", "distance")):
            raise ValueError(f"weights must be 'uniform', 'distance' or a callable, not {self.weights!r}")
        backend_name(self.backend)

    def _check_fitted(self) -> None:
        if not hasattr(self, "X_fit_"):
            message = (f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                       "appropriate arguments before using this estimator.")
            try:
                from sklearn.exceptions import NotFittedError
            except ImportError:
                raise AttributeError(message) from None
            raise NotFittedError(message)

    # ------------------------------------------------------------------------------ fit

    def fit(self, X: Any, y: Any) -> "KNeighborsClassifier":
        """Remembers the training series and their labels (nothing is computed yet).

        Parameters
        ----------
        X : array_like or list of series
            Training series: ``(n_series, length)``, ``(n_series, length, dim)`` or a list of
            series of any lengths.
        y : array_like
            ``(n_series,)`` class labels (any sortable type).

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            Bad settings (unknown measure, parameter the measure does not have, window outside
            [0, 1], n_neighbors < 1 or above the number of series...) or bad data, checked as
            :func:`wavewarp.pairwise` checks it (no series, empty series, NaN or infinite values,
            values that are not real numbers), lengths of X and y that differ, y not 1-D or not
            class labels (real values, NaN or infinity).
        """
        self._check_settings()
        measure = self._make_measure()
        X_fit, n, length = _training_series(X)
        y = _check_labels(y, n)
        if self.n_neighbors > n:
            raise ValueError(f"n_neighbors ({self.n_neighbors}) is larger than the number of training series ({n})")
        classes, encoded = np.unique(y, return_inverse=True)
        self.classes_ = classes
        self._y = encoded.reshape(-1)
        self.measure_ = measure
        self.n_samples_fit_ = n
        self.X_fit_ = X_fit
        # scikit-learn's n_features_in_ describes a feature matrix: only a 2-D array of equal-length
        # univariate series is one (queries may still have other lengths: the measures are elastic)
        if length is not None:
            self.n_features_in_ = length
        elif hasattr(self, "n_features_in_"):
            del self.n_features_in_
        return self

    # ------------------------------------------------------------------------------ predict

    def kneighbors(
        self, X: Any, n_neighbors: Optional[int] = None, return_distance: bool = True
    ) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """The nearest training series of each series of X.

        Parameters
        ----------
        X : array_like or list of series
            Query series, laid out as in :meth:`fit`.
        n_neighbors : int, optional
            How many (default: the estimator's ``n_neighbors``).
        return_distance : bool
            Also return the distances.

        Returns
        -------
        distances : numpy.ndarray
            ``(n_queries, n_neighbors)``, nearest first (only with ``return_distance``).
        indices : numpy.ndarray
            ``(n_queries, n_neighbors)`` positions in the training set.
        """
        self._check_fitted()
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        _count_series(X, "X")
        indices, distances = knn(X, self.X_fit_, k, self.measure_, backend=self.backend, threads=self.threads)
        return (distances, indices) if return_distance else indices

    def _weights(self, distances: np.ndarray) -> np.ndarray:
        if self.weights == "uniform":
            return np.ones_like(distances, dtype=np.float64)
        if self.weights == "distance":
            distances = distances.astype(np.float64)
            with np.errstate(divide="ignore"):
                weights = 1.0 / distances
            exact = distances == 0.0
            rows = exact.any(axis=1)
            weights[rows] = exact[rows]  # neighbours at distance 0 take all the weight
            return weights
        assert callable(self.weights)
        weights = np.asarray(self.weights(distances), dtype=np.float64)
        if weights.shape != distances.shape:
            raise ValueError(f"the weights callable returned shape {weights.shape}, expected {distances.shape}")
        return weights

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities: the neighbours' (weighted) votes, normalised.

        Parameters
        ----------
        X : array_like or list of series
            Query series, laid out as in :meth:`fit`.

        Returns
        -------
        numpy.ndarray
            ``(n_queries, n_classes)``, columns in the order of ``classes_``.
        """
        distances, indices = self.kneighbors(X)
        weights = self._weights(distances)
        labels = self._y[indices]
        proba = np.zeros((labels.shape[0], len(self.classes_)))
        rows = np.repeat(np.arange(labels.shape[0]), labels.shape[1])
        np.add.at(proba, (rows, labels.ravel()), weights.ravel())
        total = proba.sum(axis=1, keepdims=True)
        total[total == 0.0] = 1.0
        return proba / total

    def predict(self, X: Any) -> np.ndarray:
        """The most voted class of each query (ties: the smaller label).

        Parameters
        ----------
        X : array_like or list of series
            Query series, laid out as in :meth:`fit`.

        Returns
        -------
        numpy.ndarray
            ``(n_queries,)`` labels, of the dtype of ``classes_``.
        """
        self._check_fitted()
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    if hasattr(_BaseEstimator, "__sklearn_tags__"):  # scikit-learn >= 1.6

        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()
            try:  # series: 2-D and 3-D arrays and lists of ragged series, not a feature matrix
                tags.input_tags.three_d_array = True
            except AttributeError:
                pass
            return tags
