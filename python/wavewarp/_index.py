"""Index: a collection prepared once for repeated queries under one measure, as a FAISS index.

:class:`TwedIndex` is its TWED case, with the TWED parameters as arguments.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays
from ._measure import Measure, MeasureLike, backend_name, check_stamps, resolve
from ._progress import Progress
from ._progress import callback_for as _progress_callback
from ._wavewarp import index_create as _index_create

__all__ = ["Index", "TwedIndex"]


def _precision(is_f32: bool) -> str:
    return "float32" if is_f32 else "float64"


class Index:
    """A collection of series prepared once for repeated queries under one measure, like a FAISS index.

    Building the index checks and copies the series and, with the CUDA backend, converts them and
    computes their per-sample terms (TWED's deletion costs) once, keeping the result in GPU memory;
    each query then pays only for its own series and the distances. With the CPU backend the index
    keeps a private host copy. Either way the caller's arrays may be modified or deleted once the
    index is built. The measure (name, parameters, window) is part of the index.

    ``index.pairwise(Q)`` equals ``pairwise(Q, X, measure, ...)`` and ``index.knn(Q, k)`` equals
    ``knn(Q, X, k, measure, ...)`` with the index's measure.

    Parameters
    ----------
    X : array_like, GPU array, or list of series
        The collection, as for :func:`wavewarp.pairwise`: 3-D ``(n_series, length, dim)``, 2-D
        ``(n_series, length)`` (univariate), or a list of series of any lengths and one dim (a
        1-D array is a ValueError: one series is ``x[None]``). float32 input makes a float32 index, anything else a float64
        one. Arrays with ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) are read on the GPU.
    measure : {"dtw", "twed"} or Measure
        The measure, as in :func:`wavewarp.distance`; fixed for the index's lifetime.
    window, radius, **params
        The measure's window and parameters, as in :func:`wavewarp.distance`.
    backend : {"auto", "cpu", "cuda"}
        As in :func:`wavewarp.distance`; "auto" with GPU arrays means "cuda". With "auto", an
        index of host series under a measure (or window) that the GPU does not compute is kept and
        computed on the CPU.
    threads : int, optional
        CPU threads of the index's context (None: all cores).
    tX : array_like or list, optional
        Time stamps of X (TWED only), as in :func:`wavewarp.pairwise`.

    Attributes
    ----------
    measure : Measure
        The measure the index computes.
    dim : int
        Dimension of the samples; queries must have the same.
    dtype : numpy.dtype
        float32 or float64: the precision of the index, of its queries and of its results.
    backend : str
        The backend of the index's context: "cpu" or "cuda".

    Notes
    -----
    Each index owns a library context (threads, GPU stream, scratch memory) for its lifetime; the
    C index is freed before that context, by :meth:`close`, by leaving a ``with`` block, or when the
    object is garbage collected. Calls on one index from several threads run one at a time (the
    GIL is released while they compute and while they wait); use one index per thread for
    parallel queries.

    Raises
    ------
    ValueError, TypeError, MemoryError, WavewarpError
        As in :func:`wavewarp.pairwise`.

    Examples
    --------
    >>> index = wavewarp.Index(X_train, "dtw", window=0.1)    # doctest: +SKIP
    >>> D = index.pairwise(X_test)                           # doctest: +SKIP
    >>> indices, distances = index.knn(X_test, k=5)          # doctest: +SKIP
    """

    def __init__(
        self,
        X: Any,
        measure: MeasureLike = "dtw",
        window: Optional[float] = None,
        radius: Optional[int] = None,
        *,
        backend: str = "auto",
        threads: Optional[int] = None,
        tX: Any = None,
        **params: Any,
    ) -> None:
        self._build(X, resolve(measure, window, radius, params), backend, threads, tX)

    def _build(self, X: Any, measure: Measure, backend: str, threads: Optional[int], tX: Any) -> None:
        backend = backend_name(backend)
        check_stamps(measure, tX=tX)
        opened = _arrays.open_collection(X, "X")
        pack = _arrays.pack(opened, tX, opened.is_f32, "X", "tX")
        _arrays.warn_if_single_samples(X=pack)
        self._index = _index_create(pack, measure._spec, backend, threads)
        self._measure = measure

    @property
    def measure(self) -> Measure:
        """The measure of the index (name, parameters, window)."""
        return self._measure

    # ------------------------------------------------------------------------------ properties

    def __len__(self) -> int:
        """Number of indexed series (also after :meth:`close`)."""
        return self._index.count

    @property
    def dim(self) -> int:
        """Dimension of the samples (1 for univariate series)."""
        return self._index.dim

    @property
    def dtype(self) -> np.dtype:
        """``numpy.dtype('float32')`` or ``numpy.dtype('float64')``."""
        return np.dtype(np.float32 if self._index.is_f32 else np.float64)

    @property
    def backend(self) -> str:
        """The backend of the index's context: "cpu" or "cuda" (with "auto", host series under a
        measure the GPU does not compute are kept and computed on the CPU all the same)."""
        return self._index.backend

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._index.closed

    def describe(self) -> str:
        """What the index computes on, e.g. ``"cuda (NVIDIA H100, sm_90)"``."""
        return self._index.description

    def __repr__(self) -> str:
        state = ", closed" if self.closed else ""
        measure = self._measure
        if type(self) is Index:
            described = f"measure={measure!r}"
        else:  # TwedIndex: its parameters, as it takes them
            described = ", ".join(f"{k}={v!r}" for k, v in measure.params.items())
            for key in ("window", "radius"):
                if getattr(measure, key) is not None:
                    described += f", {key}={getattr(measure, key)!r}"
        return (
            f"{type(self).__name__}(n={len(self)}, dim={self.dim}, dtype={self.dtype.name}, "
            f"backend={self.backend!r}, {described}{state})"
        )

    # ------------------------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Frees the index (GPU or host memory) and its context now; calling it again does nothing.

        A call running in another thread is waited for. Afterwards :meth:`pairwise` and
        :meth:`knn` raise ValueError; ``len()``, ``dim`` and ``dtype`` still answer.
        """
        self._index.close()

    def __getstate__(self) -> Any:
        raise TypeError(
            f"a {type(self).__name__} cannot be pickled or copied: its series live in the library (maybe "
            "on the GPU); keep the data and build a new index from it"
        )

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------------------ queries

    def _check_open(self) -> None:
        if self._index.closed:
            raise ValueError(f"operation on a closed {type(self).__name__}")

    def _queries(self, queries: Any, tqueries: Any) -> _arrays.Pack:
        self._check_open()
        check_stamps(self._measure, tqueries=tqueries)
        opened = _arrays.open_collection(queries, "queries")
        is_f32 = self._index.is_f32
        if opened.is_f32 != is_f32:
            raise ValueError(
                f"queries are {_precision(opened.is_f32)} but the index holds {_precision(is_f32)} "
                f"series: convert them first (e.g. .astype(numpy.{_precision(is_f32)}))"
            )
        pack = _arrays.pack(opened, tqueries, is_f32, "queries", "tqueries")
        if pack.dim != self.dim:
            raise ValueError(f"queries have dim {pack.dim} but the index has dim {self.dim}")
        return pack

    def pairwise(self, queries: Any, progress: Progress = False, *, tqueries: Any = None) -> np.ndarray:
        """Distances of every query to every indexed series, under the index's measure.

        Parameters
        ----------
        queries : array_like, GPU array, or list of series
            A collection, as X of :func:`wavewarp.pairwise` (one query ``q`` is ``q[None]``), of the
            index's dim and precision (float32 queries for a float32 index, float64 or any other
            non-float32 numbers for a float64 one). Host and GPU queries are both accepted by a
            CUDA index; a CPU index takes host queries.
        progress : bool or callable
            As in :func:`wavewarp.pairwise`.
        tqueries : array_like or list, optional
            Time stamps of the queries (TWED only), as tY of :func:`wavewarp.pairwise`.

        Returns
        -------
        numpy.ndarray
            ``(n_queries, len(index))`` distances of the index's dtype, on the host: the same
            values as ``pairwise(queries, X, index.measure)``.

        Raises
        ------
        ValueError
            Bad queries (wrong dim or precision, empty, NaN/inf...), or a closed index.
        MemoryError, WavewarpError
            As in :func:`wavewarp.pairwise`.
        KeyboardInterrupt
            Ctrl-C cancels the computation cleanly (checked about every 0.1 s).
        """
        pack = self._queries(queries, tqueries)
        callback, bar = _progress_callback(progress, f"wavewarp.{type(self).__name__}.pairwise")
        try:
            return self._index.pairwise(pack, callback)
        finally:
            if bar is not None:
                bar.close()

    def knn(
        self, queries: Any, k: int, progress: Progress = False, *, tqueries: Any = None
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The k indexed series nearest to each query.

        Parameters
        ----------
        queries : like in :meth:`pairwise`
            The query series.
        k : int
            Neighbours per query, 1 <= k <= ``len(index)``.
        progress : bool or callable
            As in :func:`wavewarp.pairwise`.
        tqueries : optional
            Time stamps of the queries, as in :meth:`pairwise`.

        Returns
        -------
        indices : numpy.ndarray
            ``(n_queries, k)`` positions in the indexed collection (numpy.intp, i.e. int64 on
            64-bit platforms), nearest first, ties by smaller index.
        distances : numpy.ndarray
            ``(n_queries, k)`` distances of the index's dtype, as :func:`wavewarp.knn` gives.

        Raises
        ------
        ValueError
            As in :meth:`pairwise`, and for k out of range.
        TypeError
            k not an integer.
        MemoryError, WavewarpError, KeyboardInterrupt
            As in :meth:`pairwise`.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k must be an integer, not {type(k).__name__}")
        self._check_open()
        if not 1 <= k <= len(self):
            raise ValueError(f"k must be between 1 and the number of series in the index ({len(self)}), not {k}")
        pack = self._queries(queries, tqueries)
        callback, bar = _progress_callback(progress, f"wavewarp.{type(self).__name__}.knn")
        try:
            indices, distances = self._index.knn(pack, int(k), callback)
        finally:
            if bar is not None:
                bar.close()
        if self._index.is_f32:
            distances = distances.astype(np.float32)
        return indices, distances


class TwedIndex(Index):
    """An :class:`Index` of the TWED measure, with its parameters as arguments (the name of 0.1).

    ``TwedIndex(X, nu, lmbda, degree, ...)`` is ``Index(X, "twed", nu=nu, lmbda=lmbda,
    degree=degree, ...)``: ``index.pairwise(Q)`` equals ``twed_pairwise(Q, X, ...)`` and
    ``index.knn(Q, k)`` equals ``twed_knn(Q, X, k, ...)`` with the index's parameters.

    Parameters
    ----------
    X : array_like, GPU array, or list of series
        The collection, as in :class:`Index`.
    nu, lmbda, degree : float, float, int
        The TWED parameters, as in :func:`wavewarp.twed`; fixed for the index's lifetime.
    backend, threads, tX
        As in :class:`Index`.
    window, radius : optional
        A Sakoe-Chiba window, as in :func:`wavewarp.twed`.

    Attributes
    ----------
    nu, lmbda, degree : float, float, int
        The TWED parameters it was built with (also in ``index.measure``).

    Examples
    --------
    >>> index = wavewarp.TwedIndex(X_train, nu=0.01)         # doctest: +SKIP
    >>> D = index.pairwise(X_test)                           # doctest: +SKIP
    >>> indices, distances = index.knn(X_test, k=5)          # doctest: +SKIP
    """

    def __init__(
        self,
        X: Any,
        nu: float = 0.001,
        lmbda: float = 1.0,
        degree: int = 2,
        backend: str = "auto",
        threads: Optional[int] = None,
        *,
        tX: Any = None,
        window: Optional[float] = None,
        radius: Optional[int] = None,
    ) -> None:
        measure = Measure("twed", nu=nu, lmbda=lmbda, degree=degree, window=window, radius=radius)
        self._build(X, measure, backend, threads, tX)
        self.nu = measure.nu
        self.lmbda = measure.lmbda
        self.degree = measure.degree
