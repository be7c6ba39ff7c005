"""wavewarp: the exact Time Warp Edit Distance (TWED), in linear memory, on CPUs and NVIDIA GPUs.

Three functions cover the uses: :func:`twed` (one pair), :func:`twed_pairwise` (a distance
matrix) and :func:`twed_knn` (nearest neighbours). :class:`TwedIndex` prepares a collection once
(on the GPU with the CUDA backend) for repeated ``pairwise`` / ``knn`` queries, like a FAISS index.
They run the wavewarp C library with the GIL released; long calls can be interrupted with Ctrl-C
and can draw a progress bar.

Series layout
-------------
A series is a 1-D array ``(length,)`` (univariate) or a 2-D array ``(length, dim)``: one row per
sample. A collection (``X``, ``Y``, ``queries``) is a 3-D array ``(n_series, length, dim)``, a 2-D
array ``(n_series, length)`` of univariate series, or a list of series of any lengths. float32 input
gives float32 results, anything else is computed as float64. Arrays with
``__cuda_array_interface__`` (CuPy, PyTorch, Numba) are read on the GPU where they are, without a
copy to the host.

Definition
----------
Marteau's TWED (IEEE TPAMI 2009) with a zero sample at time 0 in front of each series::

    delete in a: D[i-1, j]   + ||a_i - a_{i-1}|| + nu (ta_i - ta_{i-1}) + lmbda
    delete in b: D[i, j-1]   + ||b_j - b_{j-1}|| + nu (tb_j - tb_{j-1}) + lmbda
    match:       D[i-1, j-1] + ||a_i - b_j|| + ||a_{i-1} - b_{j-1}||
                             + nu (|ta_i - tb_j| + |ta_{i-1} - tb_{j-1}|)

``||.||`` is the L_degree norm (degree=2: Euclidean); time stamps default to 1, 2, ..., length.

Relation to aeon
----------------
``aeon.distances.twe_distance(x, y, nu=nu, lmbda=lmbda)`` (no window) equals
``wavewarp.twed(x.T, y.T, nu=nu, lmbda=lmbda, degree=2)`` for aeon's 2-D ``(n_channels,
n_timepoints)`` series, and ``wavewarp.twed(x, y, nu=nu, lmbda=lmbda)`` for 1-D series (where every
degree gives the same result). aeon's 3-D collections ``(n_cases, n_channels, n_timepoints)`` map
to ``X.transpose(0, 2, 1)``; 2-D ``(n_cases, n_timepoints)`` collections are read identically.
aeon has no time stamps: it uses sample indices, our default; stamps ``t0 + c * (1..n)`` with one
``t0`` for both series equal aeon with ``nu * c``, other stamps have no aeon form. aeon has no
other norm than the Euclidean one, and wavewarp has no window (Sakoe-Chiba / Itakura)
constraint: with a window the two differ (aeon's result is then >= ours).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays
from ._index import TwedIndex
from ._progress import Progress
from ._progress import callback_for as _progress_callback
from ._wavewarp import WavewarpError, built_with_cuda, library_version
from ._wavewarp import cuda_available as _cuda_available
from ._wavewarp import describe as _describe
from ._wavewarp import knn as _knn
from ._wavewarp import pairwise as _pairwise
from ._wavewarp import twed as _twed

__version__ = "0.2.0"

#: ``None`` (one GPU), ``"all"`` or GPU ordinals, e.g. ``(0, 1)``
Devices = Optional[Union[str, Sequence[int]]]

__all__ = [
    "twed",
    "twed_pairwise",
    "twed_knn",
    "TwedIndex",
    "WavewarpError",
    "cuda_available",
    "describe",
    "built_with_cuda",
    "library_version",
    "__version__",
]

def twed(
    a: Any,
    b: Any,
    ta: Any = None,
    tb: Any = None,
    nu: float = 0.001,
    lmbda: float = 1.0,
    degree: int = 2,
    backend: str = "auto",
    threads: Optional[int] = None,
) -> float:
    """Time Warp Edit Distance between two series.

    Parameters
    ----------
    a, b : array_like or GPU array
        The series: 1-D ``(length,)`` or 2-D ``(length, dim)``, any lengths, the same dim. Any
        memory layout; host arrays are copied only if not C-contiguous float32/float64. Arrays
        exposing ``__cuda_array_interface__`` are read on the GPU in place (C-contiguous ones
        without any copy).
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

    Returns
    -------
    float
        The distance; a ``numpy.float32`` when both series are float32.

    Raises
    ------
    ValueError
        Bad input: wrong shapes, empty series, NaN/inf values, decreasing stamps, negative
        parameters, an unknown backend.
    MemoryError
        Out of host or GPU memory.
    WavewarpError
        Anything else from the library, e.g. backend="cuda" without a GPU or a CUDA build.
    """
    return _twed(a, b, ta, tb, nu, lmbda, degree, backend, threads)


def _check_backend(backend: str) -> None:
    if backend not in ("auto", "cpu", "cuda"):
        raise ValueError(f"backend must be 'auto', 'cpu' or 'cuda', not {backend!r}")


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
) -> np.ndarray:
    """Matrix of TWED distances between the series of X and those of Y (or of X).

    Parameters
    ----------
    X : array_like, GPU array, or list of series
        A collection: 3-D ``(n_series, length, dim)``, 2-D ``(n_series, length)`` (univariate, as
        in aeon and scikit-learn), 1-D ``(length,)`` (a single series), or a list of 1-D / 2-D
        series of any lengths and one dim.
    Y : like X, optional
        Second collection; None computes X against itself (each pair once, mirrored, zero
        diagonal).
    tX, tY : array_like or list, optional
        Time stamps: ``(n_series, length)`` arrays, a ``(length,)`` array shared by all series of
        an equal-length collection, or for lists one 1-D array per series.
    nu, lmbda, degree, backend, threads
        As in :func:`twed`. ``threads`` CPU threads share the matrix.
    progress : bool or callable
        True draws a progress bar on standard error; a callable is called as
        ``progress(done_cells, total_cells)`` about every 0.1 s. Off by default.
    devices : None, "all" or sequence of int
        Several GPUs of this host: the matrix's rows are spread over them (host data; GPU
        arrays stay on the first). Implies ``backend="cuda"``; the call then makes its own
        context instead of reusing one. None (default): one GPU, as chosen by ``backend``.

    Returns
    -------
    numpy.ndarray
        ``(n_X, n_Y)`` distances, float32 when all series are float32, else float64. The matrix
        always lives on the host, also for GPU input.

    Raises
    ------
    ValueError, MemoryError, WavewarpError
        As in :func:`twed`.
    KeyboardInterrupt
        Ctrl-C cancels the computation cleanly (checked about every 0.1 s).
    """
    _check_backend(backend)
    x_opened = _arrays.open_collection(X, "X")
    y_opened = _arrays.open_collection(Y, "Y") if Y is not None else None
    is_f32 = x_opened.is_f32 and (y_opened is None or y_opened.is_f32)
    x_pack = _arrays.pack(x_opened, tX, is_f32, "X", "tX")
    y_pack = _arrays.pack(y_opened, tY, is_f32, "Y", "tY") if y_opened is not None else None
    if y_pack is not None and y_pack.dim != x_pack.dim:
        raise ValueError(f"X has dim {x_pack.dim} but Y has dim {y_pack.dim}")
    if y_pack is None and tY is not None:
        raise ValueError("tY given without Y")
    callback, bar = _progress_callback(progress, "wavewarp.twed_pairwise")
    try:
        return _pairwise(x_pack, y_pack, nu, lmbda, degree, backend, threads, callback, devices)
    finally:
        if bar is not None:
            bar.close()


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
) -> Tuple[np.ndarray, np.ndarray]:
    """The k series of X nearest to each query, by TWED.

    Parameters
    ----------
    queries : like X
        A collection of query series (see :func:`twed_pairwise`; a 1-D array is one query).
    X : array_like, GPU array, or list of series
        The collection searched.
    k : int
        Neighbours per query, 1 <= k <= number of series in X.
    tqueries, tX : optional
        Time stamps, as in :func:`twed_pairwise`.
    nu, lmbda, degree, backend, threads, progress, devices
        As in :func:`twed_pairwise`.

    Returns
    -------
    indices : numpy.ndarray
        ``(n_queries, k)`` indices into X (numpy.intp), nearest first, ties by smaller index.
    distances : numpy.ndarray
        ``(n_queries, k)`` distances, float32 when all series are float32, else float64.

    Raises
    ------
    ValueError, MemoryError, WavewarpError, KeyboardInterrupt
        As in :func:`twed_pairwise`; ValueError also for k out of range.
    """
    _check_backend(backend)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, not {type(k).__name__}")
    q_opened = _arrays.open_collection(queries, "queries")
    x_opened = _arrays.open_collection(X, "X")
    is_f32 = q_opened.is_f32 and x_opened.is_f32
    q_pack = _arrays.pack(q_opened, tqueries, is_f32, "queries", "tqueries")
    x_pack = _arrays.pack(x_opened, tX, is_f32, "X", "tX")
    if q_pack.dim != x_pack.dim:
        raise ValueError(f"queries have dim {q_pack.dim} but X has dim {x_pack.dim}")
    if not 1 <= k <= x_pack.count:
        raise ValueError(f"k must be between 1 and the number of series in X ({x_pack.count}), not {k}")
    callback, bar = _progress_callback(progress, "wavewarp.twed_knn")
    try:
        indices, distances = _knn(q_pack, x_pack, int(k), nu, lmbda, degree, backend, threads, callback, devices)
    finally:
        if bar is not None:
            bar.close()
    if is_f32:
        distances = distances.astype(np.float32)
    return indices, distances


def cuda_available() -> bool:
    """True when this build of wavewarp has the CUDA backend and a GPU is usable."""
    return _cuda_available()


def describe(backend: str = "auto", threads: Optional[int] = None) -> str:
    """What a computation with these settings runs on, e.g. ``"cpu (2 threads, avx2)"``.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
        As in :func:`twed`.
    threads : int, optional
        As in :func:`twed`.
    """
    return _describe(backend, threads)
