"""Soft-DTW (Cuturi and Blondel 2017): values, divergences, exact gradients, batches, barycenters.

The value is ``R[n, m]`` of::

    R[i, j] = ||x_i - y_j||_2^2 + softmin_gamma(R[i-1, j-1], R[i-1, j], R[i, j-1])
    softmin_gamma(a, b, c) = -gamma log(exp(-a / gamma) + exp(-b / gamma) + exp(-c / gamma))

(tslearn's ``soft_dtw``), and the divergence ``sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2``
(pytorch-softdtw-cuda's ``normalize=True``). Gradients come from the exact backward recursion
(the expected alignment matrix), in memory linear in the longer series when the table does not
fit (checkpointed rows). :func:`wavewarp.pairwise`, :func:`wavewarp.knn` and :class:`Index` take
``measure="softdtw"`` with ``gamma`` and ``divergence`` too.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from . import _arrays
from ._functions import _spec_of, distance
from ._measure import backend_name, check_flag
from ._wavewarp import softdtw_batch as _softdtw_batch
from ._wavewarp import softdtw_gradient as _softdtw_gradient

__all__ = ["soft_dtw", "soft_dtw_grad", "soft_dtw_batch", "softdtw_barycenter"]


def soft_dtw(
    x: Any,
    y: Any,
    gamma: float = 1.0,
    window: Optional[float] = None,
    radius: Optional[int] = None,
    *,
    divergence: bool = False,
    backend: str = "auto",
    threads: Optional[int] = None,
) -> float:
    """The soft-DTW value (or divergence) of two series.

    Parameters
    ----------
    x, y : array_like
        1-D ``(length,)`` or 2-D ``(length, dim)`` series of any lengths, the same dim.
    gamma : float
        The smoothing, > 0 (as gamma -> 0 the value tends to DTW, ``measure="dtw"``).
    window, radius : optional
        The Sakoe-Chiba window, as in :func:`wavewarp.distance`.
    divergence : bool
        The soft-DTW divergence ``sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2`` (>= 0, 0 for x = y).
    backend, threads
        As in :func:`wavewarp.distance` (soft-DTW runs on the CPU).

    Returns
    -------
    float
        A ``numpy.float32`` when both series are float32. May be negative (not the divergence).
    """
    return distance(x, y, "softdtw", window, radius, backend=backend, threads=threads, gamma=gamma,
                    divergence=divergence)


def _reshape_like(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    return grad.reshape(like.shape)


def soft_dtw_grad(
    x: Any,
    y: Any,
    gamma: float = 1.0,
    window: Optional[float] = None,
    radius: Optional[int] = None,
    *,
    divergence: bool = False,
    backend: str = "auto",
    threads: Optional[int] = None,
) -> Tuple[float, np.ndarray, np.ndarray]:
    """The soft-DTW value (or divergence) and its exact gradients with respect to x and y.

    Parameters are those of :func:`soft_dtw`.

    Returns
    -------
    (value, grad_x, grad_y)
        The value, and float64 arrays shaped like x and y (float32 when both are float32).
    """
    backend_name(backend)
    spec = _spec_of("softdtw", window, radius, {"gamma": gamma, "divergence": divergence})
    value, gx, gy = _softdtw_gradient(x, y, spec, backend, threads)
    xa, ya = np.asarray(x), np.asarray(y)
    f32 = xa.dtype == np.float32 and ya.dtype == np.float32
    gx, gy = _reshape_like(gx, xa), _reshape_like(gy, ya)
    if f32:
        return np.float32(value), gx.astype(np.float32), gy.astype(np.float32)
    return value, gx, gy


def _unpack(flat: np.ndarray, pack: _arrays.Pack, like: Any) -> Any:
    """Gradients (samples, dim) back in the layout of the collection they belong to."""
    if pack.offsets is None:
        arr = np.asarray(like) if not isinstance(like, np.ndarray) else like
        return flat.reshape(arr.shape)
    out = []
    for i, item in enumerate(like):
        out.append(flat[pack.offsets[i]:pack.offsets[i + 1]].reshape(np.shape(item)))
    return out


def soft_dtw_batch(
    X: Any,
    Y: Any,
    gamma: float = 1.0,
    window: Optional[float] = None,
    radius: Optional[int] = None,
    *,
    divergence: bool = False,
    grad: bool = True,
    backend: str = "auto",
    threads: Optional[int] = None,
) -> Tuple[np.ndarray, Any, Any]:
    """Values (and gradients) of the aligned pairs (X[b], Y[b]) of two collections, in one call.

    Parameters
    ----------
    X, Y : collections
        ``(B, N, D)`` and ``(B, M, D)`` arrays (or ``(B, N)`` of univariate series), or lists of B
        series of any lengths (pair b: X[b] with Y[b]).
    grad : bool
        Compute the gradients too.
    Other parameters as in :func:`soft_dtw`.

    Returns
    -------
    (values, grad_X, grad_Y)
        values ``(B,)``; the gradients laid out like X and Y (arrays, or lists for lists), None
        without ``grad``. float32 when X and Y are float32, else float64.
    """
    backend_name(backend)
    grad = check_flag(grad, "grad")
    spec = _spec_of("softdtw", window, radius, {"gamma": gamma, "divergence": divergence})
    xo, yo = _arrays.open_collection(X, "X"), _arrays.open_collection(Y, "Y")
    is_f32 = xo.is_f32 and yo.is_f32
    xp, yp = _arrays.pack(xo, None, is_f32, "X", "tX"), _arrays.pack(yo, None, is_f32, "Y", "tY")
    _arrays.warn_if_single_samples(X=xp, Y=yp)
    values, gx, gy = _softdtw_batch(xp, yp, spec, backend, threads, grad)
    if not grad:
        return values, None, None
    return values, _unpack(gx, xp, X), _unpack(gy, yp, Y)


def _resample(series: np.ndarray, length: int) -> np.ndarray:
    """Linear interpolation of a (n, d) series onto `length` equally spaced points."""
    n = series.shape[0]
    if n == length:
        return series
    src = np.linspace(0.0, 1.0, n)
    dst = np.linspace(0.0, 1.0, length)
    return np.stack([np.interp(dst, src, series[:, k]) for k in range(series.shape[1])], axis=1)


def softdtw_barycenter(
    X: Any,
    gamma: float = 1.0,
    weights: Optional[Any] = None,
    method: str = "L-BFGS-B",
    tol: float = 1e-3,
    max_iter: int = 50,
    init: Optional[Any] = None,
    *,
    threads: Optional[int] = None,
) -> np.ndarray:
    """The soft-DTW barycenter of a set of series (tslearn's ``softdtw_barycenter`` semantics).

    Minimises ``sum_i weights[i] * sdtw(Z, X[i])`` over Z with ``scipy.optimize.minimize``
    (``method``, ``tol``, ``options={"maxiter": max_iter}``), the value and gradient of every term
    in one batched call.

    Parameters
    ----------
    X : collection
        ``(n, length, dim)`` or ``(n, length)`` array, or a list of series of any lengths.
    gamma : float
        The smoothing, > 0.
    weights : array_like, optional
        One weight per series (default: ones).
    method, tol, max_iter
        As tslearn's (``scipy.optimize.minimize``); ``max_iter=0`` returns the initial guess.
    init : array_like, optional
        The initial barycenter ``(length, dim)``; default the weighted Euclidean mean (of the series
        linearly resampled to the longest length when lengths differ).

    Returns
    -------
    numpy.ndarray
        The barycenter, ``(length, dim)`` float64.
    """
    try:
        from scipy.optimize import minimize
    except ImportError as error:
        raise ImportError("softdtw_barycenter needs SciPy (scipy.optimize): pip install scipy") from error

    if isinstance(X, np.ndarray) and X.dtype != object:
        arr = np.asarray(X, dtype=np.float64)
        series: List[np.ndarray] = [s.reshape(s.shape[0], -1) for s in (arr if arr.ndim == 3 else arr[..., None])]
    else:
        series = [np.asarray(s, dtype=np.float64).reshape(len(s), -1) for s in X]
    if not series:
        raise ValueError("X is empty: a barycenter needs at least one series")
    n = len(series)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape[0] != n:
        raise ValueError(f"weights has {w.shape[0]} entries for {n} series")
    if init is None:
        length = max(s.shape[0] for s in series)
        stacked = np.stack([_resample(s, length) for s in series])
        barycenter = np.tensordot(w, stacked, axes=1) / w.sum()
    else:
        barycenter = np.array(init, dtype=np.float64)
        if barycenter.ndim == 1:
            barycenter = barycenter[:, None]
    if max_iter <= 0:
        return barycenter
    shape = barycenter.shape
    # the series are packed once; each evaluation packs n copies of Z as one (n, length, dim) array
    # and sums the weighted gradients with one tensordot (the per-series Python work of a list
    # of pairs cost as much as the computing on short series)
    spec = _spec_of("softdtw", None, None, {"gamma": gamma, "divergence": False})
    ypack = _arrays.pack(_arrays.open_collection(series, "X"), None, False, "X", "tX")
    copies, values, gz = np.empty((n,) + shape), np.empty(n), np.empty((n,) + shape)
    xpack = _arrays.Pack(copies, None, None, n, shape[0], shape[1], False)

    def objective(z: np.ndarray) -> Tuple[float, np.ndarray]:
        copies[...] = z.reshape(shape)
        # into the arrays above; the series' gradients (None) are not computed
        _softdtw_batch(xpack, ypack, spec, "auto", threads, True, values, gz, None)
        g = np.tensordot(w, gz, axes=1)
        return float(np.dot(w, values)), g.ravel()

    with _one_blas_thread():
        res = minimize(objective, barycenter.ravel(), method=method, jac=True, tol=tol,
                       options=dict(maxiter=max_iter))
    return res.x.reshape(shape)


def _one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread (threadpoolctl's, when installed).

    SciPy's L-BFGS-B calls BLAS on vectors of the barycenter's size: with OpenBLAS's threads each
    call cost 6.5 ms instead of 0.06 ms on a 2-core machine, and its threads spinning between calls
    took a core from the soft-DTW batches (bench/results/cpu-softdtw.md).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
