"""Elastic image matching (issue 11): the distance of the approximate 2D DP of image matching.

Each row of one image is matched with each row of the other by a 1D dynamic program (Sakoe-Chiba's
symmetric form, slope constraint 1), then a 1D dynamic program over the matrix of row distances
matches the rows. The distance tolerates local horizontal and vertical stretching; it is symmetric,
0 between an image and itself, and +inf when no path exists (one image more than about twice as
high or as wide as the other). See the C header (``ww_image``) for the exact recursion.

Images are NumPy arrays ``(height, width)`` (gray) or ``(height, width, channels)``; uint8 and
float32 pixels are computed in float32 (about 1e-6 relative), anything else in float64. A set of
images is a list of such arrays (sizes may differ), a 3-D array ``(count, height, width)`` of gray
images or a 4-D array ``(count, height, width, channels)``. CuPy and PyTorch arrays are accepted
and copied to the host. Matrices and kNN searches run on the GPU engine when a GPU is usable and the
work is large (``backend="auto"``), or always with ``backend="cuda"`` (float arithmetic there); one
pair and the warping map run on the CPU.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ._measure import backend_name, check_flag
from ._progress import Progress
from ._progress import callback_for as _progress_callback
from ._wavewarp import image_knn as _image_knn
from ._wavewarp import image_map as _image_map
from ._wavewarp import image_pairwise as _image_pairwise


def _to_host(obj: Any) -> Any:
    """A GPU array (CuPy, PyTorch) copied to a NumPy array; anything else as it is."""
    if hasattr(obj, "__cuda_array_interface__") or type(obj).__module__.startswith("torch"):
        if hasattr(obj, "get"):  # CuPy
            return obj.get()
        if hasattr(obj, "detach"):  # PyTorch
            return obj.detach().cpu().numpy()
    return obj


def _image(obj: Any, what: str) -> np.ndarray:
    a = np.asarray(_to_host(obj))
    if a.ndim not in (2, 3):
        raise ValueError(f"{what} must be a 2-D (height, width) or 3-D (height, width, channels) array, "
                         f"not an array of shape {a.shape}")
    if a.dtype != np.uint8 and a.dtype != np.float32:
        if a.dtype.kind not in "biuf":
            raise TypeError(f"{what} has pixels of dtype {a.dtype}; numbers are needed")
        a = a.astype(np.float64)
    return np.ascontiguousarray(a)


def _gpu_stack(X: Any) -> bool:
    """Whether X is a stack of images in GPU memory that the GPU engine can read in place: a CuPy
    array or a CUDA tensor, 3-D or 4-D, C-contiguous, of uint8, float32 or float64."""
    if isinstance(X, (list, tuple)):
        return False
    try:
        iface = X.__cuda_array_interface__
    except Exception:  # no interface, or a tensor that refuses it (one that requires grad)
        return False
    shape, typestr = tuple(iface.get("shape", ())), iface.get("typestr")
    if len(shape) not in (3, 4) or typestr not in ("|u1", "<f4", "<f8"):
        return False
    strides, expected = iface.get("strides"), int(typestr[2:])
    if strides is not None:
        for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
            if extent > 1 and stride != expected:
                return False
            expected *= extent
    return True


def _images(X: Any, what: str) -> Any:
    """A list of host images (NumPy arrays), or a GPU stack as it is (see _gpu_stack)."""
    if _gpu_stack(X):
        return X
    if isinstance(X, (list, tuple)):
        return [_image(x, f"{what}[{k}]") for k, x in enumerate(X)]
    a = np.asarray(_to_host(X))
    if a.ndim not in (3, 4):
        raise ValueError(f"{what} must be a list of images, a 3-D array (count, height, width) or a 4-D array "
                         f"(count, height, width, channels), not an array of shape {a.shape}")
    return [_image(x, f"{what}[{k}]") for k, x in enumerate(a)]


def _sets(X: Any, Y: Any, x_what: str, y_what: str, backend: str) -> Tuple[Any, Any]:
    """The image sets of a call: GPU stacks stay on the GPU (the GPU engine reads them in place)
    when both are (or Y is None) and the backend is not "cpu"; otherwise every set is on the host."""
    on_gpu = backend_name(backend) != "cpu" and _gpu_stack(X) and (Y is None or _gpu_stack(Y))
    if on_gpu:
        return X, Y
    xs = _images(_to_host(X) if _gpu_stack(X) else X, x_what)
    ys = None if Y is None else _images(_to_host(Y) if _gpu_stack(Y) else Y, y_what)
    return xs, ys


def image_distance(a: Any, b: Any, return_map: bool = False, *, squared: bool = False,
                   threads: Optional[int] = None) -> Any:
    """The elastic distance between two images.

    Parameters
    ----------
    a, b : array_like
        Images ``(height, width)`` or ``(height, width, channels)``, one channel count for both;
        their sizes may differ.
    return_map : bool
        Also return the warping map: an ``(count, 4)`` integer array of matched pixels
        ``(i, n, j, m)`` (pixel ``a[i, n]`` matched with ``b[j, m]``) in path order. Every pixel of
        both images appears at least once; a pixel matched with several (a repeated row or pixel)
        once per match. :func:`image_warp` warps ``a`` onto ``b`` with it. Empty when the distance
        is +inf.
    squared : bool
        The squared Euclidean distance between pixels instead of the Euclidean one (``|a - b|``
        for gray pixels).
    threads : int, optional
        CPU threads (None: all cores).

    Returns
    -------
    float, or (float, ndarray) with ``return_map``
    """
    A, B = _image(a, "a"), _image(b, "b")
    squared = check_flag(squared, "squared")
    if check_flag(return_map, "return_map"):
        distance, matches = _image_map([A], [B], squared, threads)
        return float(distance), matches
    return float(_image_pairwise([A], [B], squared, threads, None, "cpu")[0, 0])


def image_pairwise(X: Any, Y: Any = None, *, squared: bool = False, threads: Optional[int] = None,
                   progress: Progress = False, backend: str = "auto") -> np.ndarray:
    """Matrix of elastic distances between the images of X and those of Y (or of X).

    Parameters
    ----------
    X, Y : list of images, or 3-D / 4-D array
        Images of any sizes and one channel count. Y None: X against itself (each pair once,
        mirrored, zero diagonal). A stack on the GPU (CuPy array, CUDA tensor; C-contiguous uint8,
        float32 or float64) is read there in place when both sets are and the backend is not
        "cpu"; otherwise GPU arrays are copied to the host.
    squared, threads
        As in :func:`image_distance`.
    progress : bool or callable
        True draws a progress bar on standard error; a callable is called as
        ``progress(done_cells, total_cells)`` about every 0.1 s. Ctrl-C interrupts the call.
    backend : {"auto", "cpu", "cuda"}
        "auto": the GPU engine for large work when a GPU is usable, else the CPU.

    Returns
    -------
    ndarray of float64, ``(len(X), len(Y))``
    """
    xs, ys = _sets(X, Y, "X", "Y", backend)
    squared = check_flag(squared, "squared")
    callback, bar = _progress_callback(progress, "wavewarp.image_pairwise")
    try:
        return _image_pairwise(xs, ys, squared, threads, callback, backend)
    finally:
        if bar is not None:
            bar.close()


def image_knn(queries: Any, X: Any, k: int = 1, *, squared: bool = False, threads: Optional[int] = None,
              progress: Progress = False, backend: str = "auto") -> Tuple[np.ndarray, np.ndarray]:
    """The k nearest images of X for each query, by elastic distance (arguments as in
    :func:`image_pairwise`).

    Returns
    -------
    (indices, distances) : ``(len(queries), k)`` arrays (intp, float64), nearest first, ties broken
        by the smaller index.
    """
    qs, xs = _sets(queries, X, "queries", "X", backend)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, not {k!r}")
    squared = check_flag(squared, "squared")
    callback, bar = _progress_callback(progress, "wavewarp.image_knn")
    try:
        return _image_knn(qs, xs, int(k), squared, threads, callback, backend)
    finally:
        if bar is not None:
            bar.close()


def image_warp(a: Any, matches: Any, shape: Tuple[int, int]) -> np.ndarray:
    """Warps image ``a`` onto the grid of the other image of a map.

    Parameters
    ----------
    a : array_like
        The first image of :func:`image_distance` (``(height, width[, channels])``).
    matches : array_like
        The map, ``(count, 4)`` rows ``(i, n, j, m)``.
    shape : (height, width)
        The other image's height and width.

    Returns
    -------
    ndarray ``(height, width[, channels])`` of float64: at ``[j, m]`` the pixel of ``a`` matched
    with it (the mean of them where several are).
    """
    A = np.asarray(_to_host(a), dtype=np.float64)
    M = np.asarray(matches, dtype=np.intp).reshape(-1, 4)
    h, w = int(shape[0]), int(shape[1])
    out = np.zeros((h, w) + A.shape[2:], dtype=np.float64)
    counts = np.zeros((h, w), dtype=np.float64)
    if len(M):
        np.add.at(out, (M[:, 2], M[:, 3]), A[M[:, 0], M[:, 1]])
        np.add.at(counts, (M[:, 2], M[:, 3]), 1.0)
    counts = np.where(counts == 0, 1.0, counts)
    return out / (counts if out.ndim == 2 else counts[:, :, None])
