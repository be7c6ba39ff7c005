"""wavewarp: exact elastic distances between time series (DTW, TWED), on CPUs and NVIDIA GPUs.

Three functions cover the uses: :func:`distance` (one pair), :func:`pairwise` (a distance matrix)
and :func:`knn` (nearest neighbours), each for a ``measure``: ``"dtw"`` (the default) or
``"twed"``, optionally with a Sakoe-Chiba ``window`` (aeon's fraction of the shorter series) or
``radius`` (samples). :class:`Index` prepares a collection once (on the GPU with the CUDA backend)
for repeated ``pairwise`` / ``knn`` queries, like a FAISS index. :class:`KNeighborsClassifier`
is a scikit-learn estimator on top of them. The TWED functions of version 0.1 stay:
:func:`twed`, :func:`twed_pairwise`, :func:`twed_knn` and :class:`TwedIndex`. Everything runs the
wavewarp C library with the GIL released; long calls can be interrupted with Ctrl-C and can draw
a progress bar.

Series layout
-------------
A series is a 1-D array ``(length,)`` (univariate) or a 2-D array ``(length, dim)``: one row per
sample. A collection (``X``, ``Y``, ``queries``) is a 3-D array ``(n_series, length, dim)``, a 2-D
array ``(n_series, length)`` of univariate series, or a list of series of any lengths; a 1-D array
is refused there (one series is ``x[None]``). Series of one sample of many dimensions (all of a
collection's) are most likely aeon's ``(n_channels, n_timepoints)`` layout read as ``(length,
dim)``: they give a :class:`LayoutWarning`. float32 input
gives float32 results, anything else is computed as float64. Arrays with
``__cuda_array_interface__`` (CuPy, PyTorch, Numba) are read on the GPU where they are, without a
copy to the host.

Measures
--------
DTW, with the squared Euclidean distance between samples::

    D[i, j] = ||a_i - b_j||_2^2 + min(D[i-1, j], D[i, j-1], D[i-1, j-1]),   distance D[n, m]

without a square root at the end: aeon's ``dtw_distance``; tslearn's ``dtw`` and dtaidistance's
``distance_fast`` return the square root of this value. DTW has no parameters and no time stamps.

Marteau's TWED (IEEE TPAMI 2009) with a zero sample at time 0 in front of each series::

    delete in a: D[i-1, j]   + ||a_i - a_{i-1}|| + nu (ta_i - ta_{i-1}) + lmbda
    delete in b: D[i, j-1]   + ||b_j - b_{j-1}|| + nu (tb_j - tb_{j-1}) + lmbda
    match:       D[i-1, j-1] + ||a_i - b_j|| + ||a_{i-1} - b_{j-1}||
                             + nu (|ta_i - tb_j| + |ta_{i-1} - tb_{j-1}|)

``||.||`` is the L_degree norm (degree=2: Euclidean); time stamps default to 1, 2, ..., length.

Windows: ``window=f`` is aeon's: radius ``int(f * min(n, m))`` per pair; ``radius=r`` is a fixed
number of samples. For equal lengths the band is ``|i - j| <= r``; for unequal lengths aeon 1.6's
band along the diagonal from corner to corner (in exact integers; see the README for the few
length pairs where aeon's floating-point floors make its band narrower, and for how tslearn's and
dtaidistance's bands differ for unequal lengths).

Relation to aeon
----------------
``aeon.distances.dtw_distance(x, y, window=w)`` equals ``wavewarp.distance(x.T, y.T, "dtw",
window=w)`` for aeon's 2-D ``(n_channels, n_timepoints)`` series (1-D series as they are), and
``twe_distance(x, y, nu=nu, lmbda=lmbda, window=w)`` equals ``wavewarp.twed(x.T, y.T, nu=nu,
lmbda=lmbda, window=w)``. aeon's 3-D collections ``(n_cases, n_channels, n_timepoints)`` map to
``X.transpose(0, 2, 1)``; 2-D ``(n_cases, n_timepoints)`` collections are read identically. aeon
has no time stamps: it uses sample indices, our default; stamps ``t0 + c * (1..n)`` with one ``t0``
for both series equal aeon with ``nu * c``, other stamps have no aeon form.
"""

from __future__ import annotations

from typing import Any, Optional

from ._arrays import LayoutWarning
from ._functions import Devices, distance, knn, pairwise, twed, twed_knn, twed_pairwise
from ._image import image_distance, image_knn, image_pairwise, image_warp
from ._index import Index, TwedIndex
from ._measure import MEASURES, Measure
from ._ted import Tree, read_bracket_trees, read_xted_trees, ted, ted_pairwise
from ._softdtw import soft_dtw, soft_dtw_batch, soft_dtw_grad, softdtw_barycenter
from ._wavewarp import WavewarpError, built_with_cuda, library_version
from ._wavewarp import cuda_available as _cuda_available
from ._wavewarp import describe as _describe

__version__ = "0.2.0"

__all__ = [
    "distance",
    "pairwise",
    "knn",
    "Index",
    "Measure",
    "MEASURES",
    "KNeighborsClassifier",
    "twed",
    "twed_pairwise",
    "twed_knn",
    "TwedIndex",
    "WavewarpError",
    "LayoutWarning",
    "cuda_available",
    "describe",
    "built_with_cuda",
    "library_version",
    "Devices",
    "__version__",
    "Tree",
    "ted",
    "ted_pairwise",
    "read_bracket_trees",
    "read_xted_trees",
    "image_distance",
    "image_pairwise",
    "image_knn",
    "image_warp",
    "soft_dtw",
    "soft_dtw_grad",
    "soft_dtw_batch",
    "softdtw_barycenter",
]


def __getattr__(name: str) -> Any:
    # KNeighborsClassifier is loaded on first use: it imports scikit-learn (when installed), which
    # takes longer than importing wavewarp itself.
    if name == "KNeighborsClassifier":
        from ._neighbors import KNeighborsClassifier

        globals()[name] = KNeighborsClassifier
        return KNeighborsClassifier
    raise AttributeError(f"module 'wavewarp' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | {"KNeighborsClassifier"})


def cuda_available() -> bool:
    """True when this build of wavewarp has the CUDA backend and a GPU is usable."""
    return _cuda_available()


def describe(backend: str = "auto", threads: Optional[int] = None) -> str:
    """What a computation with these settings runs on, e.g. ``"cpu (2 threads, avx2)"``.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
        As in :func:`distance`.
    threads : int, optional
        As in :func:`distance`.
    """
    return _describe(backend, threads)
