"""Packing collections of series for the C module.

A *collection* (the ``X``, ``Y`` and ``queries`` arguments) is one of

* a 3-D array ``(n_series, length, dim)``,
* a 2-D array ``(n_series, length)``: univariate series, as in aeon and scikit-learn,
* a list (or tuple, or 1-D object array) of 1-D ``(length,)`` or 2-D ``(length, dim)`` arrays,
  possibly of different lengths.

A 1-D array (or a list of numbers) is refused: it could be one series (aeon's reading) or that
many series of one sample (scikit-learn's), and the result's first axis would not be ``len(X)``.
The error says to pass ``X[None]`` for one series.

Host arrays are NumPy arrays or anything NumPy can read. GPU arrays are objects exposing
``__cuda_array_interface__`` (CuPy, PyTorch, Numba); they stay on the GPU.

A *pack* is what the C module reads: the values as one C-contiguous buffer, the time stamps likewise
(or None), the series' start offsets in samples (or None when all series have one length), and the
sizes. Host data is copied only when NumPy must change its dtype or layout, or when ragged series
have to be joined into one buffer.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, List, NamedTuple, Optional, Sequence

import numpy as np

_CUDA_INTERFACE = "__cuda_array_interface__"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# One-sample series of at least this many dimensions give a LayoutWarning. aeon's univariate
# series have tens of time points or more, while genuine one-sample multivariate series (edge
# cases, the tests' among them) have few channels: below this they are taken as meant.
_LAYOUT_WARNING_MIN_DIM = 4


class LayoutWarning(UserWarning):
    """Input whose shape looks like another library's layout: series of one sample of many
    dimensions (at least 4), as aeon's ``(n_channels, n_timepoints)`` series read in wavewarp's
    ``(length, dim)``. Where such series are meant, silence it with
    ``warnings.filterwarnings("ignore", category=wavewarp.LayoutWarning)``."""


def _user_stacklevel() -> int:
    """The stacklevel of warnings.warn, called from here, that points at the first caller outside
    the package: the line of the user's code that passed the input."""
    frame = sys._getframe(1)  # the function that calls warnings.warn: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn_single_sample_pair(dim: int) -> None:
    """LayoutWarning for two series that are each one sample of `dim` values, most likely aeon's
    (n_channels, n_timepoints) read as (length, dim); called by the C module's distance(), which sees
    the shapes first. Both, so that a one-sample multivariate series beside a longer one stays quiet."""
    if dim < _LAYOUT_WARNING_MIN_DIM:
        return
    warnings.warn(
        f"a and b have shape (1, {dim}): wavewarp reads a series as (length, dim), so each is one "
        f"sample of {dim} values and the distance compares single samples (for DTW their squared "
        f"Euclidean distance). aeon's (n_channels, n_timepoints) series are read as a.T and b.T, "
        f"univariate ones also as 1-D arrays",
        LayoutWarning,
        stacklevel=_user_stacklevel(),
    )


def _all_single_samples(pack: "Pack") -> bool:
    """Whether every series of a pack has length 1 and a dim that suggests a transposed layout."""
    if pack.dim < _LAYOUT_WARNING_MIN_DIM or pack.count == 0:
        return False
    if pack.offsets is None:
        return pack.length == 1
    return bool(np.all(np.diff(pack.offsets) == 1))


def warn_if_single_samples(**packs: "Pack") -> None:
    """LayoutWarning when every series of every given collection (by argument name) is one sample
    of many dimensions: aeon's (n_cases, n_channels, n_timepoints) read as (n_series, length, dim).
    All of them, so that multivariate collections that merely include such series stay quiet."""
    if not packs or not all(_all_single_samples(pack) for pack in packs.values()):
        return
    names = " and ".join(packs)
    dim = next(iter(packs.values())).dim
    fixes = " and ".join(f"[x.T for x in {what}]" if pack.offsets is not None else f"{what}.transpose(0, 2, 1)"
                         for what, pack in packs.items())
    warnings.warn(
        f"every series of {names} has length 1 and dim {dim}: wavewarp reads a collection as "
        f"(n_series, length, dim), so each series is one sample of {dim} values and the distances "
        f"compare single samples (for DTW their squared Euclidean distance). aeon's (n_cases, "
        f"n_channels, n_timepoints) collection is read as {fixes}",
        LayoutWarning,
        stacklevel=_user_stacklevel(),
    )


class Pack(NamedTuple):
    """A collection as the C module reads it (see the module docstring)."""

    values: Any
    stamps: Any
    offsets: Optional[np.ndarray]
    count: int
    length: int
    dim: int
    is_f32: bool


def cuda_interface(obj: Any, what: str) -> Optional[dict]:
    """Returns ``obj.__cuda_array_interface__``, or None for objects that have none.

    Parameters
    ----------
    obj : object
        Any object.
    what : str
        The argument's name, for error messages.
    """
    if isinstance(obj, np.ndarray):
        return None
    try:
        return getattr(obj, _CUDA_INTERFACE)
    except AttributeError:
        return None
    except RuntimeError as exc:  # e.g. a PyTorch tensor that requires grad
        raise ValueError(f"{what}: cannot read the GPU array: {exc}") from exc


def _library_of(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def device_contiguous(obj: Any) -> Any:
    """A C-contiguous copy of a GPU array, made on the GPU by the array's own library.

    Parameters
    ----------
    obj : CuPy array, PyTorch tensor or Numba device array
        A GPU array whose ``__cuda_array_interface__`` has non-contiguous strides.
    """
    library = _library_of(obj)
    if library == "torch":
        return obj.contiguous()
    if library == "cupy":
        import cupy

        return cupy.ascontiguousarray(obj)
    raise ValueError(
        f"GPU array of type {type(obj).__name__} is not C-contiguous and wavewarp does not know how "
        "to copy it on the GPU: make it C-contiguous first"
    )


def _device_concatenate(arrays: Sequence[Any], what: str, dim: Optional[int] = None) -> Any:
    """Joins GPU arrays along their first axis, on the GPU, with their own library; with `dim`,
    each array is first viewed as (length, dim) (1-D series become one column)."""
    library = _library_of(arrays[0])
    if any(_library_of(a) != library for a in arrays):
        raise ValueError(f"{what}: GPU arrays of one collection must come from one library")
    if library == "torch":
        import torch

        parts = [a.reshape(-1, dim) for a in arrays] if dim is not None else list(arrays)
        return torch.cat(parts, dim=0).contiguous()
    if library == "cupy":
        import cupy

        parts = [a.reshape(-1, dim) for a in arrays] if dim is not None else list(arrays)
        return cupy.ascontiguousarray(cupy.concatenate(parts, axis=0))
    raise ValueError(
        f"{what}: lists of GPU arrays are joined with CuPy or PyTorch; for {type(arrays[0]).__name__} "
        "pass one 2-D or 3-D array instead"
    )


def _device_shape_dtype(obj: Any, iface: dict, what: str) -> tuple:
    typestr = iface.get("typestr")
    if typestr not in ("<f4", "<f8"):
        raise ValueError(f"{what}: GPU arrays must be float32 or float64, not typestr {typestr!r}")
    return tuple(int(n) for n in iface["shape"]), typestr == "<f4"


class _Opened(NamedTuple):
    """A collection looked at but not converted yet."""

    kind: str  # "host" (one ndarray), "device" (one GPU array) or "list"
    obj: Any  # the ndarray / GPU array, or the list of _Opened items
    is_f32: bool
    device: bool


def _open_item(obj: Any, what: str) -> _Opened:
    iface = cuda_interface(obj, what)
    if iface is not None:
        _, is_f32 = _device_shape_dtype(obj, iface, what)
        return _Opened("device", obj, is_f32, True)
    try:
        arr = np.asarray(obj)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: expected an array of numbers: {exc}") from exc
    return _Opened("host", arr, arr.dtype == np.float32, False)


def one_dimensional_error(what: str, length: Any, is_list: bool = False) -> ValueError:
    """The error for a 1-D array (or a list of numbers) given as a collection."""
    form = "a list of numbers" if is_list else "a 1-D array"
    return ValueError(
        f"{what} is {form}, but a collection of series is expected: pass {what}[None] (or "
        f"np.reshape({what}, (1, -1))) for one series, or a 2-D array (n_series, length), a 3-D array "
        f"(n_series, length, dim) or a list of series (a 1-D array of {length} values could be one "
        f"series or {length} series of one sample, so it is refused)"
    )


def open_collection(obj: Any, what: str) -> _Opened:
    """Looks at a collection argument without converting it.

    Parameters
    ----------
    obj : array, GPU array or list of arrays
        The collection (see the module docstring).
    what : str
        The argument's name, for error messages.

    Raises
    ------
    ValueError
        An empty list, a list mixing GPU and host arrays, a 1-D array or a list of numbers.
    TypeError
        A SciPy sparse matrix (NumPy would read it as one object, of 0 dimensions).
    """
    if type(obj).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{what} is a sparse matrix, but series are dense: pass {what}.toarray()")
    if isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype == object):
        items = [_open_item(item, f"{what}[{i}]") for i, item in enumerate(obj)]
        if not items:
            raise ValueError(f"{what} is empty: a collection needs at least one series")
        device = items[0].device
        if any(item.device != device for item in items):
            raise ValueError(f"{what}: a collection cannot mix GPU arrays and host arrays")
        if not device and all(item.obj.ndim == 0 for item in items):
            raise one_dimensional_error(what, len(items), is_list=True)
        return _Opened("list", items, all(item.is_f32 for item in items), device)
    opened = _open_item(obj, what)
    shape = (
        _device_shape_dtype(opened.obj, cuda_interface(opened.obj, what), what)[0]
        if opened.device
        else opened.obj.shape
    )
    if len(shape) == 1:
        raise one_dimensional_error(what, shape[0])
    return opened


def _target_dtype(is_f32: bool) -> np.dtype:
    return np.dtype(np.float32) if is_f32 else np.dtype(np.float64)


def _host_convert(arr: np.ndarray, dtype: np.dtype, what: str) -> np.ndarray:
    """C-contiguous array of `dtype`; copies only when `arr` is not one already."""
    if not np.can_cast(arr.dtype, dtype, casting="same_kind"):
        raise ValueError(f"{what}: cannot convert an array of dtype {arr.dtype} to {dtype}")
    return np.ascontiguousarray(arr, dtype=dtype)


def _series_shape(shape: tuple, what: str) -> tuple:
    """(length, dim) of one series of a list."""
    if len(shape) == 1:
        return shape[0], 1
    if len(shape) == 2:
        return shape[0], shape[1]
    raise ValueError(
        f"{what}: a series must be 1-D (length,) or 2-D (length, dim), got {len(shape)} dimensions"
    )


def _collection_shape(shape: tuple, what: str) -> tuple:
    """(count, length, dim) of a collection given as one array."""
    if len(shape) == 1:
        raise one_dimensional_error(what, shape[0])
    if len(shape) == 2:
        return shape[0], shape[1], 1
    if len(shape) == 3:
        return shape
    raise ValueError(
        f"{what}: a collection must be a 2-D (n_series, length) or 3-D (n_series, length, dim) "
        f"array or a list of series, got {len(shape)} dimensions"
    )


def _join(arrays: List[np.ndarray], shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Concatenates along axis 0 into a new C-contiguous array (np.concatenate alone may return a
    Fortran-ordered one when its inputs are)."""
    out = np.empty(shape, dtype=dtype)
    np.concatenate(arrays, axis=0, out=out, casting="same_kind")
    return out


def _offsets(lengths: List[int]) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.uintp)
    np.cumsum(np.asarray(lengths, dtype=np.uintp), out=offsets[1:])
    return offsets


def pack(opened: _Opened, stamps: Any, is_f32: bool, what: str, stamps_what: str) -> Pack:
    """Converts an opened collection (and its time stamps) into a :class:`Pack`.

    Parameters
    ----------
    opened : _Opened
        From :func:`open_collection`.
    stamps : array, list of arrays or None
        Time stamps: None (1, 2, ..., length for every series), a ``(n_series, length)`` array, a
        ``(length,)`` array shared by every series of one length (host arrays only), or a list with
        one 1-D array per series.
    is_f32 : bool
        Pack as float32 (else float64). Host data is converted; GPU data must already match.
    what, stamps_what : str
        The arguments' names, for error messages.
    """
    dtype = _target_dtype(is_f32)
    if opened.kind == "list":
        items = opened.obj
        shapes = []
        for i, item in enumerate(items):
            shape = (
                _device_shape_dtype(item.obj, cuda_interface(item.obj, what), what)[0]
                if item.device
                else item.obj.shape
            )
            shapes.append(_series_shape(shape, f"{what}[{i}]"))
        dim = shapes[0][1]
        for i, (_, d) in enumerate(shapes):
            if d != dim:
                raise ValueError(f"{what}[{i}] has dim {d} but {what}[0] has dim {dim}")
        lengths = [length for length, _ in shapes]
        offsets = _offsets(lengths)
        if opened.device:
            _check_device_dtypes([item.obj for item in items], is_f32, what)
            values = _device_concatenate([item.obj for item in items], what, dim)
        else:
            arrays = []
            for i, item in enumerate(items):
                arr = item.obj
                if not np.can_cast(arr.dtype, dtype, casting="same_kind"):
                    raise ValueError(f"{what}[{i}]: cannot convert an array of dtype {arr.dtype} to {dtype}")
                arrays.append(arr.reshape(lengths[i], dim))
            values = _join(arrays, (sum(lengths), dim), dtype)
        packed_stamps = _pack_list_stamps(stamps, lengths, opened.device, is_f32, stamps_what)
        return Pack(values, packed_stamps, offsets, len(items), 0, dim, is_f32)

    if opened.device:
        iface = cuda_interface(opened.obj, what)
        shape, _ = _device_shape_dtype(opened.obj, iface, what)
        count, length, dim = _collection_shape(shape, what)
        _check_device_dtypes([opened.obj], is_f32, what)
        values = opened.obj if _device_is_contiguous(iface) else device_contiguous(opened.obj)
    else:
        count, length, dim = _collection_shape(opened.obj.shape, what)
        values = _host_convert(opened.obj, dtype, what)
    packed_stamps = _pack_array_stamps(stamps, count, length, opened.device, is_f32, stamps_what)
    return Pack(values, packed_stamps, None, count, length, dim, is_f32)


def _device_is_contiguous(iface: dict) -> bool:
    strides = iface.get("strides")
    if strides is None:
        return True
    shape = iface["shape"]
    expected = 4 if iface["typestr"] == "<f4" else 8
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


def _check_device_dtypes(arrays: Sequence[Any], is_f32: bool, what: str) -> None:
    for arr in arrays:
        _, arr_f32 = _device_shape_dtype(arr, cuda_interface(arr, what), what)
        if arr_f32 != is_f32:
            raise ValueError(
                f"{what}: GPU arrays must all be float32 or all float64 (wavewarp does not cast on "
                "the GPU; convert them first)"
            )


def _pack_array_stamps(stamps: Any, count: int, length: int, device: bool, is_f32: bool,
                       what: str) -> Any:
    """Stamps of a collection given as one array: (count, length), or (length,) shared."""
    if stamps is None:
        return None
    iface = cuda_interface(stamps, what)
    if (iface is not None) != device:
        raise ValueError(f"{what}: time stamps must live where the values live (both GPU or both host)")
    if device:
        shape, _ = _device_shape_dtype(stamps, iface, what)
        if shape not in ((count, length), (count * length,)) and not (count == 1 and shape == (length,)):
            raise ValueError(f"{what}: GPU time stamps must have shape ({count}, {length}), got {shape}")
        _check_device_dtypes([stamps], is_f32, what)
        return stamps if _device_is_contiguous(iface) else device_contiguous(stamps)
    arr = np.asarray(stamps)
    if arr.shape == (length,):
        arr = np.broadcast_to(arr, (count, length))
    if arr.shape != (count, length):
        raise ValueError(
            f"{what}: time stamps must have shape ({count}, {length}) or ({length},), got {arr.shape}"
        )
    return _host_convert(arr, _target_dtype(is_f32), what)


def _pack_list_stamps(stamps: Any, lengths: List[int], device: bool, is_f32: bool, what: str) -> Any:
    """Stamps of a list collection: a list with one 1-D array per series."""
    if stamps is None:
        return None
    if not isinstance(stamps, (list, tuple)) or len(stamps) != len(lengths):
        raise ValueError(f"{what}: give a list with one 1-D array of time stamps per series")
    opened = [_open_item(s, f"{what}[{i}]") for i, s in enumerate(stamps)]
    for i, (item, length) in enumerate(zip(opened, lengths)):
        if item.device != device:
            raise ValueError(f"{what}[{i}]: time stamps must live where the values live")
        shape = (
            _device_shape_dtype(item.obj, cuda_interface(item.obj, what), what)[0] if device else item.obj.shape
        )
        if shape != (length,):
            raise ValueError(f"{what}[{i}] must have shape ({length},), got {shape}")
    if device:
        _check_device_dtypes([item.obj for item in opened], is_f32, what)
        return _device_concatenate([item.obj for item in opened], what)
    dtype = _target_dtype(is_f32)
    for i, item in enumerate(opened):
        if not np.can_cast(item.obj.dtype, dtype, casting="same_kind"):
            raise ValueError(f"{what}[{i}]: cannot convert an array of dtype {item.obj.dtype} to {dtype}")
    return _join([item.obj for item in opened], (sum(lengths),), dtype)
