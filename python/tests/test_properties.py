"""Property tests (hypothesis) of the public functions over shapes, dtypes, memory layouts and
values: every result equals the plain full-matrix reference (reference_measures.py), and every bad
input is a ValueError or TypeError, never a crash or a wrong number.

Runs are deterministic by default (the "wavewarp-ci" profile: derandomized, no example database
written into the tree); WW_HYPOTHESIS_PROFILE=explore draws new examples each run, and more.
"""

from __future__ import annotations

import os
from typing import Any, List, Optional, Tuple

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import wavewarp  # noqa: E402
from reference_measures import dtw_reference, radius_from_window, twed_reference  # noqa: E402

settings.register_profile(
    "wavewarp-ci", max_examples=60, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "explore", max_examples=400, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("WW_HYPOTHESIS_PROFILE", "wavewarp-ci"))

# dtypes NumPy converts to float64 (or float32, kept) without loss of meaning
DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint16, np.bool_]
LAYOUTS = ["c", "fortran", "strided", "reversed"]


# ------------------------------------------------------------------------------------ strategies


@st.composite
def measures(draw) -> Tuple[str, dict, Optional[float], Optional[int]]:
    """(name, params, window, radius): DTW or TWED with parameters, and at most one band."""
    name = draw(st.sampled_from(["dtw", "twed"]))
    params = {}
    if name == "twed" and draw(st.booleans()):
        params = {
            "nu": draw(st.floats(0.0, 2.0)),
            "lmbda": draw(st.floats(0.0, 3.0)),
            "degree": draw(st.integers(1, 4)),
        }
    band = draw(st.sampled_from(["none", "window", "radius"]))
    window = draw(st.floats(0.0, 1.0)) if band == "window" else None
    radius = draw(st.integers(0, 12)) if band == "radius" else None
    return name, params, window, radius


def _values(draw, dtype, shape) -> np.ndarray:
    """Finite values of a dtype, small enough that float32 sums stay accurate."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype == np.bool_:
        flat = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = draw(st.lists(st.integers(max(int(info.min), -1000), min(int(info.max), 1000)),
                             min_size=size, max_size=size))
    else:
        flat = draw(st.lists(st.floats(-1000.0, 1000.0, width=16 if dtype == np.float16 else 64),
                             min_size=size, max_size=size))
    return np.array(flat, dtype=dtype).reshape(shape)


def _with_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """The same values in another memory layout (a view where it can be)."""
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "strided":
        buffer = np.zeros((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
        buffer[::2] = a
        return buffer[::2]
    if layout == "reversed":
        return np.ascontiguousarray(a[::-1])[::-1]
    return np.ascontiguousarray(a)


@st.composite
def series(draw, dim: int, dtype=None, max_length: int = 12) -> np.ndarray:
    """One series: (length,) when dim is 1 (or (length, 1)), else (length, dim)."""
    dtype = dtype or draw(st.sampled_from(DTYPES))
    length = draw(st.integers(1, max_length))
    shape = (length,) if dim == 1 and draw(st.booleans()) else (length, dim)
    return _with_layout(_values(draw, dtype, shape), draw(st.sampled_from(LAYOUTS)))


@st.composite
def collections(draw, dim: int, max_count: int = 5):
    """(collection, series as float64 (length, dim) arrays): a 2-D or 3-D array, or a list."""
    count = draw(st.integers(1, max_count))
    dtype = draw(st.sampled_from(DTYPES))
    form = draw(st.sampled_from(["array", "list"] if dim > 1 else ["array", "list", "2d"]))
    if form == "list":
        items = [draw(series(dim, dtype)) for _ in range(count)]
        as64 = [np.asarray(s, dtype=np.float64).reshape(len(s), dim) for s in items]
        return items, as64, dtype
    length = draw(st.integers(1, 12))
    shape = (count, length) if form == "2d" or (dim == 1 and draw(st.booleans())) else (count, length, dim)
    values = _with_layout(_values(draw, dtype, shape), draw(st.sampled_from(LAYOUTS)))
    as64 = [np.asarray(values[i], dtype=np.float64).reshape(length, dim) for i in range(count)]
    return values, as64, dtype


# ------------------------------------------------------------------------------------ references


def reference(x: np.ndarray, y: np.ndarray, m: Tuple[str, dict, Optional[float], Optional[int]]) -> float:
    name, params, window, radius = m
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if window is not None:
        radius = radius_from_window(window, len(x), len(y))
    if name == "dtw":
        return dtw_reference(x, y, radius)
    return twed_reference(x, y, params.get("nu", 0.001), params.get("lmbda", 1.0), params.get("degree", 2), radius)


def _close(got: Any, want: Any, f32: bool) -> bool:
    # float32 data is computed in float32: an error of a few ulps per cell on values below ~1e3
    rtol, atol = (2e-4, 2e-3) if f32 else (1e-10, 1e-9)
    return bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _is_f32(*dtypes) -> bool:
    return all(np.dtype(d) == np.float32 for d in dtypes)


# ------------------------------------------------------------------------------------ properties


@given(data=st.data(), m=measures(), dim=st.integers(1, 3))
def test_distance_equals_reference(data, m, dim):
    a = data.draw(series(dim))
    b = data.draw(series(dim))
    name, params, window, radius = m
    got = wavewarp.distance(a, b, name, window, radius, backend="cpu", **params)
    want = reference(a, b, m)
    f32 = _is_f32(a.dtype, b.dtype)
    assert isinstance(got, np.float32 if f32 else float)
    assert _close(got, want, f32), (got, want)
    # symmetric, and the twed function is the same call
    assert _close(wavewarp.distance(b, a, name, window, radius, backend="cpu", **params), want, f32)
    if name == "twed":
        assert wavewarp.twed(a, b, window=window, radius=radius, backend="cpu", **params) == got


@given(data=st.data(), m=measures(), dim=st.integers(1, 3), with_y=st.booleans())
def test_pairwise_equals_reference(data, m, dim, with_y):
    X, xs, x_dtype = data.draw(collections(dim))
    Y, ys, y_dtype = data.draw(collections(dim)) if with_y else (None, xs, x_dtype)
    name, params, window, radius = m
    got = wavewarp.pairwise(X, Y, name, window, radius, backend="cpu", **params)
    f32 = _is_f32(x_dtype, y_dtype)
    assert got.shape == (len(xs), len(ys)) and got.dtype == (np.float32 if f32 else np.float64)
    want = np.array([[reference(x, y, m) for y in ys] for x in xs])
    if Y is None:
        np.fill_diagonal(want, 0.0)
        assert np.array_equal(got, got.T)
    assert _close(got, want, f32), (got, want)
    if name == "twed":
        again = wavewarp.twed_pairwise(X, Y, window=window, radius=radius, backend="cpu", **params)
        assert np.array_equal(again, got)


@given(data=st.data(), m=measures(), dim=st.integers(1, 3))
def test_knn_equals_reference(data, m, dim):
    Q, qs, q_dtype = data.draw(collections(dim, max_count=3))
    X, xs, x_dtype = data.draw(collections(dim))
    k = data.draw(st.integers(1, len(xs)))
    name, params, window, radius = m
    indices, distances = wavewarp.knn(Q, X, k, name, window, radius, backend="cpu", **params)
    f32 = _is_f32(q_dtype, x_dtype)
    assert indices.shape == distances.shape == (len(qs), k)
    full = np.array([[reference(q, x, m) for x in xs] for q in qs])
    for i in range(len(qs)):
        assert len(set(indices[i].tolist())) == k  # k different series
        assert _close(distances[i], full[i, indices[i]], f32)  # the distances of those series
        assert _close(distances[i], np.sort(full[i])[:k], f32)  # and the k smallest
        assert np.all(np.diff(distances[i]) >= 0)
    if name == "twed":
        ti, td = wavewarp.twed_knn(Q, X, k, window=window, radius=radius, backend="cpu", **params)
        assert np.array_equal(ti, indices) and np.array_equal(td, distances)


@given(data=st.data(), m=measures(), dim=st.integers(1, 2))
def test_index_equals_pairwise(data, m, dim):
    X, xs, _ = data.draw(collections(dim))
    Q, qs, _ = data.draw(collections(dim, max_count=3))
    name, params, window, radius = m
    with wavewarp.Index(X, name, window, radius, backend="cpu", **params) as index:
        try:
            got = index.pairwise(Q)
        except ValueError as exc:  # queries of another precision than the index's: refused, clearly
            assert "float32" in str(exc)
            return
    want = wavewarp.pairwise(Q, X, name, window, radius, backend="cpu", **params)
    assert np.array_equal(got, want)


# ------------------------------------------------------------------------------------ bad input


BAD_VALUES = [np.nan, np.inf, -np.inf]


@given(data=st.data(), dim=st.integers(1, 3), bad=st.sampled_from(BAD_VALUES),
       dtype=st.sampled_from([np.float64, np.float32, np.float16]))
def test_non_finite_values_are_named(data, dim, bad, dtype):
    a = np.array(data.draw(series(dim, dtype=np.float64)), dtype=dtype)
    b = data.draw(series(dim, dtype=np.float64))
    where = data.draw(st.integers(0, a.size - 1))
    a[np.unravel_index(where, a.shape)] = bad  # a keeps its layout (maybe Fortran)
    sample, component = divmod(where, dim)
    word = "NaN" if np.isnan(bad) else ("inf" if bad > 0 else "-inf")
    position = f"sample {sample}, component {component}" if a.ndim == 2 and dim > 1 else f"sample {sample}"
    with pytest.raises(ValueError, match=rf"a: {position} \(0-based\) is {word}"):
        wavewarp.distance(a, b, data.draw(st.sampled_from(["dtw", "twed"])), backend="cpu")
    X = [b, a, b]
    with pytest.raises(ValueError, match=rf"X: series 1, {position} \(0-based\) is {word}"):
        wavewarp.pairwise(X, backend="cpu")
    with pytest.raises(ValueError, match=rf"X: series 1, {position} \(0-based\) is {word}"):
        wavewarp.twed_knn([b], X, 1, backend="cpu")


def _bad_calls(a: np.ndarray, X: np.ndarray) -> List[Tuple[str, Any]]:
    return [
        ("empty series", lambda: wavewarp.distance(a[:0], a)),
        ("3-D series", lambda: wavewarp.distance(a.reshape(1, len(a), -1), a)),
        ("dims differ", lambda: wavewarp.distance(a.reshape(len(a), -1), np.ones((3, 7)))),
        ("complex", lambda: wavewarp.distance(a + 1j, a)),
        ("strings", lambda: wavewarp.distance(a.astype(str), a)),
        ("objects", lambda: wavewarp.distance(np.array([object()] * len(a)), a)),
        ("1-D collection", lambda: wavewarp.pairwise(a)),
        ("1-D queries", lambda: wavewarp.knn(a, X, 1)),
        ("list of numbers", lambda: wavewarp.pairwise(list(a))),
        ("4-D collection", lambda: wavewarp.pairwise(X[None, :, :, None])),
        ("empty collection", lambda: wavewarp.pairwise(X[:0])),
        ("empty list", lambda: wavewarp.knn([], X, 1)),
        ("k = 0", lambda: wavewarp.knn(X, X, 0)),
        ("k too large", lambda: wavewarp.knn(X, X, len(X) + 1)),
        ("k float", lambda: wavewarp.knn(X, X, 1.0)),
        ("window > 1", lambda: wavewarp.pairwise(X, window=1.5)),
        ("negative radius", lambda: wavewarp.pairwise(X, radius=-1)),
        ("window and radius", lambda: wavewarp.distance(a, a, window=0.5, radius=2)),
        ("float radius", lambda: wavewarp.distance(a, a, radius=2.5)),
        ("dtw parameter", lambda: wavewarp.distance(a, a, "dtw", nu=0.1)),
        ("negative nu", lambda: wavewarp.twed(a, a, nu=-1.0)),
        ("nan lambda", lambda: wavewarp.twed(a, a, lmbda=float("nan"))),
        ("degree 0", lambda: wavewarp.twed_pairwise(X, degree=0)),
        ("unknown measure", lambda: wavewarp.distance(a, a, "euclid")),
        ("unknown backend", lambda: wavewarp.pairwise(X, backend="gpu")),
        ("decreasing stamps", lambda: wavewarp.twed(a, a, ta=np.arange(len(a))[::-1] * 1.0)),
        ("stamps of DTW", lambda: wavewarp.distance(a, a, "dtw", ta=np.arange(len(a)) * 1.0)),
        ("ragged dims", lambda: wavewarp.pairwise([a, np.ones((len(a), 2))])),
    ]


@settings(max_examples=20)
@given(data=st.data(), case=st.sampled_from([name for name, _ in _bad_calls(np.ones(3), np.ones((2, 3)))]))
def test_bad_input_is_a_clear_exception(data, case):
    a = data.draw(series(1, dtype=np.float64, max_length=8)).reshape(-1)
    if case in ("decreasing stamps",) and len(a) < 2:
        a = np.r_[a, a]
    X = np.vstack([a, a[::-1], a * 2])
    call = dict(_bad_calls(a, X))[case]
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert str(info.value)  # a message, always
