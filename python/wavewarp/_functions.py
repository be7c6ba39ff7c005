"""The computing functions: one pair, distance matrices and nearest neighbours, for every measure.

The generic functions (:func:`distance`, :func:`pairwise`, :func:`knn`) take a measure; the TWED
functions of version 0.1 (:func:`twed`, :func:`twed_pairwise`, :func:`twed_knn`) are the same
calls with the TWED measure. All of them end in the same three entry points of the C module.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays
from ._measure import Measure, MeasureLike, backend_name, check_stamps, resolve
from ._progress import Progress
from ._progress import callback_for as _progress_callback
from ._wavewarp import distance as _distance
from ._wavewarp import knn as _knn
from ._wavewarp import pairwise as _pairwise

#: ``None`` (one GPU), ``"all"`` or GPU ordinals, e.g. ``(0, 1)``
Devices = Optional[Union[str, Sequence[int]]]

Spec = Tuple[Any, ...]

# the measures by name without parameters or window: no Measure to build on the fast path
_PLAIN_SPECS = {name: Measure(name)._spec for name in ("dtw", "twed")}


@functools.lru_cache(maxsize=256)
def _cached_spec(key: Tuple[Any, ...]) -> Spec:
    measure, (_, window), (_, radius), params = key
    return resolve(measure, window, radius, {k: v for k, _, v in params})._spec


def _spec_of(measure: MeasureLike, window: Any, radius: Any, params: dict) -> Spec:
    """The spec of a call's measure arguments; a name with the same window, radius and parameters
    as a recent call reuses its checked spec (the key holds the types: radius=True stays an error)."""
    if isinstance(measure, Measure):
        if window is None and radius is None and not params:
            return measure._spec
        return resolve(measure, window, radius, params)._spec  # raises: the Measure holds them
    if window is None and radius is None and not params:
        spec = _PLAIN_SPECS.get(measure) if isinstance(measure, str) else None
        if spec is not None:
            return spec
    try:
        key = (measure, (type(window), window), (type(radius), radius),
               tuple(sorted((k, type(v), v) for k, v in params.items())))
        hash(key)
    except TypeError:  # unhashable arguments: checked (and refused) without the cache
        return resolve(measure, window, radius, params)._spec
    return _cached_spec(key)


def _check_y_is_not_a_measure(Y: Any, function: str) -> None:
    """pairwise(X, "dtw") puts the measure in Y's place: say so, rather than that a str has 0
    dimensions."""
    if isinstance(Y, (str, Measure)):
        raise TypeError(f"Y must be a collection of series or None, not {type(Y).__name__} {Y!r}: "
                        f"to compare X with itself under a measure, pass it by name: "
                        f"{function}(X, measure={Y!r})")


def _check_k(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, not {type(k).__name__}")


def _uses_stamps(spec: Spec) -> bool:
    return spec[0] == "twed"


def _reject_stamps(spec: Spec, **stamps: Any) -> None:
    if not _uses_stamps(spec):
        check_stamps(Measure(spec[0]), **stamps)


# ------------------------------------------------------------------------------------------ one pair


def distance(
    a: Any,
    b: Any,
    measure: MeasureLike = "dtw",
    window: Optional[float] = None,
    radius: Optional[int] = None,
    *,
    ta: Any = None,
    tb: Any = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    **params: Any,
) -> float:
    """The distance between two series under a measure (DTW by default).

    Parameters
    ----------
    a, b : array_like or GPU array
        The series: 1-D ``(length,)`` or 2-D ``(length, dim)`` (one row per sample), any lengths,
        the same dim. Any memory layout; host arrays are copied only if not C-contiguous
        float32/float64. Arrays exposing ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) are
        read on the GPU in place.
    measure : {"dtw", "twed"} or Measure
        ``"dtw"``: squared Euclidean local cost, no square root (aeon's ``dtw_distance``; tslearn's
        ``dtw`` and dtaidistance's ``distance_fast`` return the square root of this value).
        ``"twed"``: as :func:`twed`. A :class:`Measure` holds its parameters and window itself.
    window : float, optional
        aeon's Sakoe-Chiba window, a fraction in [0, 1] of the shorter series: the radius is
        ``int(window * min(len(a), len(b)))``. None or 1.0: no window.
    radius : int, optional
        The Sakoe-Chiba radius in samples (>= 0). Not together with ``window``.
    ta, tb : array_like, optional
        Time stamps (TWED only; see :func:`twed`). Given to DTW they are a ValueError.
    backend : {"auto", "cpu", "cuda"}
        "auto" takes the GPU when this build has CUDA and a GPU is present (and the GPU computes
        the measure; the CPU otherwise), else the CPU. "cuda" with a measure or window the GPU
        does not compute raises WavewarpError.
    threads : int, optional
        CPU threads of the context (None: all cores). One pair uses one thread.
    **params
        The measure's parameters: TWED's ``nu``, ``lmbda``, ``degree``; DTW takes none (any
        parameter given to it is a ValueError).

    Returns
    -------
    float
        The distance; a ``numpy.float32`` when both series are float32. ``inf`` never occurs: the
        window always holds a path from corner to corner.

    Raises
    ------
    ValueError
        Bad input: wrong shapes, empty series, NaN/inf values (the message names the series and
        sample, e.g. "a: sample 17 (0-based) is NaN"), an unknown measure, a parameter the
        measure does not have, negative parameters, a window outside [0, 1], a negative radius,
        window and radius both, stamps given to DTW, an unknown backend.
    TypeError
        A parameter of the wrong type (e.g. a float radius or degree, a bool for a number such as
        ``nu=True``, anything but a bool for a flag such as ``divergence``).
    MemoryError
        Out of host or GPU memory.
    WavewarpError
        Anything else from the library, e.g. backend="cuda" without a GPU, or for a measure the
        GPU does not compute.

    Warns
    -----
    LayoutWarning
        a and b both of shape ``(1, dim)`` with dim >= 4: most likely aeon's ``(n_channels,
        n_timepoints)`` series, to be passed as ``a.T`` and ``b.T``.
    """
    return _distance(a, b, ta, tb, _spec_of(measure, window, radius, params), backend, threads)


_NU, _LMBDA, _DEGREE = 0.001, 1.0, 2  # TWED's defaults (aeon's), the very objects of twed's signature
_TWED_DEFAULT_SPEC = ("twed", _NU, _LMBDA, _DEGREE, None, None)


def twed(
    a: Any,
    b: Any,
    ta: Any = None,
    tb: Any = None,
    nu: float = _NU,
    lmbda: float = _LMBDA,
    degree: int = _DEGREE,
    backend: str = "auto",
    threads: Optional[int] = None,
    *,
    window: Optional[float] = None,
    radius: Optional[int] = None,
) -> float:
    """Time Warp Edit Distance between two series: ``distance(a, b, "twed", ...)``.

    Parameters
    ----------
    a, b : array_like or GPU array
        The series, as in :func:`distance`.
    ta, tb : array_like, optional
        Time stamps, one per sample, finite and non-decreasing, at most half the dtype's largest
        value in magnitude; default 1, 2, ..., length.
        Converted to the dtype of the values. Must live where the values live (host or GPU).
    nu : float
        Stiffness, >= 0: weight of the time difference of matched samples.
    lmbda : float
        Deletion penalty, >= 0.
    degree : int
        p of the L_p norm between samples, >= 1 (2 = Euclidean). Univariate series: |x - y| for
        every p.
    backend : {"auto", "cpu", "cuda"}
        "auto" takes the GPU when this build has CUDA and a GPU is present, else the CPU.
    threads : int, optional
        CPU threads of the context (None: all cores). One pair uses one thread.
    window, radius : optional
        A Sakoe-Chiba window, as in :func:`distance`; as aeon's ``twe_distance(window=...)``, it is
        laid on the samples without the padding sample in front.

    Returns
    -------
    float
        The distance; a ``numpy.float32`` when both series are float32.

    Raises
    ------
    ValueError, MemoryError, WavewarpError
        As in :func:`distance`.
    """
    if nu is _NU and lmbda is _LMBDA and degree is _DEGREE and window is None and radius is None:
        spec = _TWED_DEFAULT_SPEC  # the common call: no tuple to build (a small call costs ~1 us)
    else:
        spec = ("twed", nu, lmbda, degree, radius, window)
    return _distance(a, b, ta, tb, spec, backend, threads)


# ------------------------------------------------------------------------------------------ matrices


def _matrix(X: Any, Y: Any, tX: Any, tY: Any, spec: Spec, backend: str, threads: Optional[int],
            progress: Progress, devices: Devices, label: str) -> np.ndarray:
    backend_name(backend)
    _reject_stamps(spec, tX=tX, tY=tY)
    x_opened = _arrays.open_collection(X, "X")
    y_opened = _arrays.open_collection(Y, "Y") if Y is not None else None
    is_f32 = x_opened.is_f32 and (y_opened is None or y_opened.is_f32)
    x_pack = _arrays.pack(x_opened, tX, is_f32, "X", "tX")
    y_pack = _arrays.pack(y_opened, tY, is_f32, "Y", "tY") if y_opened is not None else None
    if y_pack is not None and y_pack.dim != x_pack.dim:
        raise ValueError(f"X has dim {x_pack.dim} but Y has dim {y_pack.dim}")
    if y_pack is None and tY is not None:
        raise ValueError("tY given without Y")
    _arrays.warn_if_single_samples(**({"X": x_pack} if y_pack is None else {"X": x_pack, "Y": y_pack}))
    callback, bar = _progress_callback(progress, label)
    try:
        return _pairwise(x_pack, y_pack, spec, backend, threads, callback, devices)
    finally:
        if bar is not None:
            bar.close()


def pairwise(
    X: Any,
    Y: Any = None,
    measure: MeasureLike = "dtw",
    window: Optional[float] = None,
    radius: Optional[int] = None,
    *,
    tX: Any = None,
    tY: Any = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    progress: Progress = False,
    devices: Devices = None,
    **params: Any,
) -> np.ndarray:
    """Matrix of distances between the series of X and those of Y (or of X), under a measure.

    Parameters
    ----------
    X : array_like, GPU array, or list of series
        A collection: 3-D ``(n_series, length, dim)``, 2-D ``(n_series, length)`` (univariate, as
        in aeon and scikit-learn), or a list of 1-D / 2-D series of any lengths and one dim. A 1-D
        array is a ValueError (one series is ``x[None]``): the matrix has ``len(X)`` rows.
    Y : like X, optional
        Second collection; None computes X against itself (each pair once, mirrored, zero
        diagonal).
    measure, window, radius, **params
        The measure, as in :func:`distance`. A window fraction gives each pair its own radius,
        ``int(window * min(n, m))``.
    tX, tY : array_like or list, optional
        Time stamps (TWED only): ``(n_series, length)`` arrays, a ``(length,)`` array shared by all
        series of an equal-length collection, or for lists one 1-D array per series.
    backend, threads
        As in :func:`distance`. ``threads`` CPU threads share the matrix.
    progress : bool or callable
        True draws a progress bar on standard error; a callable is called as
        ``progress(done_cells, total_cells)`` about every 0.1 s. Off by default.
    devices : None, "all" or sequence of int
        Several GPUs of this host: the matrix's rows are spread over them (host data; GPU arrays
        stay on the first). Implies ``backend="cuda"``; the call then makes its own context
        instead of reusing one. None (default): one GPU, as chosen by ``backend``.

    Returns
    -------
    numpy.ndarray
        ``(n_X, n_Y)`` distances, float32 when all series are float32, else float64. The matrix
        always lives on the host, also for GPU input.

    Raises
    ------
    ValueError, TypeError, MemoryError, WavewarpError
        As in :func:`distance`; TypeError also for a measure given in Y's place
        (``pairwise(X, "dtw")``: pass ``measure="dtw"``).
    KeyboardInterrupt
        Ctrl-C cancels the computation cleanly (checked about every 0.1 s).

    Warns
    -----
    LayoutWarning
        Every series of X (and of Y) of length 1 and dim >= 4: most likely aeon's ``(n_cases,
        n_channels, n_timepoints)``, to be passed as ``X.transpose(0, 2, 1)``.
    """
    _check_y_is_not_a_measure(Y, "pairwise")
    spec = _spec_of(measure, window, radius, params)
    return _matrix(X, Y, tX, tY, spec, backend, threads, progress, devices, "wavewarp.pairwise")


def twed_pairwise(
    X: Any,
    Y: Any = None,
    *,
    tX: Any = None,
    tY: Any = None,
    nu: float = 0.001,
    lmbda: float = 1.0,
    degree: int = 2,
    backend: str = "auto",
    threads: Optional[int] = None,
    progress: Progress = False,
    devices: Devices = None,
    window: Optional[float] = None,
    radius: Optional[int] = None,
) -> np.ndarray:
    """Matrix of TWED distances: ``pairwise(X, Y, "twed", ...)``.

    Parameters
    ----------
    X, Y, tX, tY, backend, threads, progress, devices, window, radius
        As in :func:`pairwise`.
    nu, lmbda, degree
        As in :func:`twed`.

    Returns
    -------
    numpy.ndarray
        ``(n_X, n_Y)`` distances, float32 when all series are float32, else float64.

    Raises
    ------
    ValueError, MemoryError, WavewarpError, KeyboardInterrupt
        As in :func:`pairwise`.
    """
    spec = ("twed", nu, lmbda, degree, radius, window)
    return _matrix(X, Y, tX, tY, spec, backend, threads, progress, devices, "wavewarp.twed_pairwise")


# ------------------------------------------------------------------------------------------ neighbours


def _neighbours(queries: Any, X: Any, k: Any, tqueries: Any, tX: Any, spec: Spec, backend: str,
                threads: Optional[int], progress: Progress, devices: Devices,
                label: str) -> Tuple[np.ndarray, np.ndarray]:
    backend_name(backend)
    _check_k(k)
    _reject_stamps(spec, tqueries=tqueries, tX=tX)
    q_opened = _arrays.open_collection(queries, "queries")
    x_opened = _arrays.open_collection(X, "X")
    is_f32 = q_opened.is_f32 and x_opened.is_f32
    q_pack = _arrays.pack(q_opened, tqueries, is_f32, "queries", "tqueries")
    x_pack = _arrays.pack(x_opened, tX, is_f32, "X", "tX")
    if q_pack.dim != x_pack.dim:
        raise ValueError(f"queries have dim {q_pack.dim} but X has dim {x_pack.dim}")
    _arrays.warn_if_single_samples(queries=q_pack, X=x_pack)
    if not 1 <= k <= x_pack.count:
        raise ValueError(f"k must be between 1 and the number of series in X ({x_pack.count}), not {k}")
    callback, bar = _progress_callback(progress, label)
    try:
        indices, distances = _knn(q_pack, x_pack, int(k), spec, backend, threads, callback, devices)
    finally:
        if bar is not None:
            bar.close()
    if is_f32:
        distances = distances.astype(np.float32)
    return indices, distances


def knn(
    queries: Any,
    X: Any,
    k: int,
    measure: MeasureLike = "dtw",
    window: Optional[float] = None,
    radius: Optional[int] = None,
    *,
    tqueries: Any = None,
    tX: Any = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    progress: Progress = False,
    devices: Devices = None,
    **params: Any,
) -> Tuple[np.ndarray, np.ndarray]:
    """The k series of X nearest to each query, under a measure.

    Parameters
    ----------
    queries : like X
        A collection of query series (see :func:`pairwise`; one query ``q`` is ``q[None]``).
    X : array_like, GPU array, or list of series
        The collection searched.
    k : int
        Neighbours per query, 1 <= k <= number of series in X.
    measure, window, radius, **params
        The measure, as in :func:`distance`.
    tqueries, tX : optional
        Time stamps (TWED only), as in :func:`pairwise`.
    backend, threads, progress, devices
        As in :func:`pairwise`.

    Returns
    -------
    indices : numpy.ndarray
        ``(n_queries, k)`` indices into X (numpy.intp), nearest first, ties by smaller index.
    distances : numpy.ndarray
        ``(n_queries, k)`` distances, float32 when all series are float32, else float64.

    Raises
    ------
    ValueError, TypeError, MemoryError, WavewarpError, KeyboardInterrupt
        As in :func:`pairwise`; ValueError also for k out of range, TypeError for a k that is not
        an integer.
    """
    spec = _spec_of(measure, window, radius, params)
    return _neighbours(queries, X, k, tqueries, tX, spec, backend, threads, progress, devices, "wavewarp.knn")


def twed_knn(
    queries: Any,
    X: Any,
    k: int,
    *,
    tqueries: Any = None,
    tX: Any = None,
    nu: float = 0.001,
    lmbda: float = 1.0,
    degree: int = 2,
    backend: str = "auto",
    threads: Optional[int] = None,
    progress: Progress = False,
    devices: Devices = None,
    window: Optional[float] = None,
    radius: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray]:
    """The k series of X nearest to each query by TWED: ``knn(queries, X, k, "twed", ...)``.

    Parameters
    ----------
    queries, X, k, tqueries, tX, backend, threads, progress, devices, window, radius
        As in :func:`knn`.
    nu, lmbda, degree
        As in :func:`twed`.

    Returns
    -------
    indices, distances : numpy.ndarray
        As in :func:`knn`.

    Raises
    ------
    ValueError, TypeError, MemoryError, WavewarpError, KeyboardInterrupt
        As in :func:`knn`.
    """
    spec = ("twed", nu, lmbda, degree, radius, window)
    return _neighbours(queries, X, k, tqueries, tX, spec, backend, threads, progress, devices, "wavewarp.twed_knn")
