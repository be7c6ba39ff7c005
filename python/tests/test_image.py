"""Elastic image matching (issue 11): wavewarp.image_distance / image_pairwise / image_knn /
image_warp against a plain reference, on random images and scikit-learn's digits."""

import math
import os
import signal
import sys

import numpy as np
import pytest

import wavewarp


def ref_dpa(d):
    """The 1D DPA of a matrix of local distances, written out directly."""
    n, m = d.shape
    D = np.full((n, m), np.inf)
    for i in range(n):
        for j in range(m):
            if i == 0 and j == 0:
                D[0, 0] = 2 * d[0, 0]
                continue
            best = np.inf
            if i >= 1 and j >= 2:
                best = min(best, D[i - 1, j - 2] + 2 * d[i, j - 1] + d[i, j])
            if i >= 1 and j >= 1:
                best = min(best, D[i - 1, j - 1] + 2 * d[i, j])
            if i >= 2 and j >= 1:
                best = min(best, D[i - 2, j - 1] + 2 * d[i - 1, j] + d[i, j])
            D[i, j] = best
    return D[n - 1, m - 1] / (n + m)


def ref_image(x, y, squared=False):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim == 2:
        x, y = x[:, :, None], y[:, :, None]
    r = np.empty((x.shape[0], y.shape[0]))
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            diff = x[i][:, None, :] - y[j][None, :, :]
            s = (diff * diff).sum(axis=2)
            r[i, j] = ref_dpa(s if squared else np.sqrt(s))
    return ref_dpa(r)


def test_random_images_match_reference():
    rng = np.random.default_rng(11)
    for t in range(24):
        c = 3 if t % 2 else None
        h1, w1 = rng.integers(1, 9, size=2)
        h2, w2 = (h1 + rng.integers(0, 3), w1 + rng.integers(0, 3)) if t % 3 else rng.integers(1, 9, size=2)
        shape1 = (h1, w1) + ((c,) if c else ())
        shape2 = (h2, w2) + ((c,) if c else ())
        dtype = [np.uint8, np.float32, np.float64][t % 3]
        if dtype is np.uint8:
            a = rng.integers(0, 256, size=shape1).astype(np.uint8)
            b = rng.integers(0, 256, size=shape2).astype(np.uint8)
        else:
            a = rng.standard_normal(shape1).astype(dtype)
            b = rng.standard_normal(shape2).astype(dtype)
        squared = bool(t % 4 == 1)
        want = ref_image(a, b, squared)
        got = wavewarp.image_distance(a, b, squared=squared)
        back = wavewarp.image_distance(b, a, squared=squared)
        if math.isinf(want):
            assert math.isinf(got) and math.isinf(back)
        else:
            assert got == pytest.approx(want, rel=1e-12 if dtype is np.float64 else 2e-5)
            assert got == back
        assert wavewarp.image_distance(a, a) == 0.0


def test_pairwise_knn_ragged_lists():
    rng = np.random.default_rng(3)
    X = [rng.random((rng.integers(4, 9), rng.integers(4, 9))).astype(np.float32) for _ in range(9)]
    Y = [rng.random((rng.integers(4, 9), rng.integers(4, 9))) for _ in range(5)]
    M = wavewarp.image_pairwise(X, Y, backend="cpu")  # exact equality with image_distance (CPU)
    assert M.shape == (9, 5) and M.dtype == np.float64
    for i in range(9):
        for j in range(5):
            assert M[i, j] == wavewarp.image_distance(X[i], Y[j]) or (np.isinf(M[i, j]) and np.isinf(
                wavewarp.image_distance(X[i], Y[j])))
    S = wavewarp.image_pairwise(X, backend="cpu")
    assert np.all(np.diag(S) == 0)
    assert np.array_equal(S, S.T)
    idx, dist = wavewarp.image_knn(Y, X, k=3, backend="cpu")
    assert idx.shape == (5, 3) and dist.shape == (5, 3)
    full = wavewarp.image_pairwise(Y, X, backend="cpu")
    for q in range(5):
        order = sorted(range(9), key=lambda j: (full[q, j], j))[:3]
        assert list(idx[q]) == order
        assert np.array_equal(dist[q], full[q, order])
    # a 3-D stack of gray images and a 4-D stack of color images
    stack = rng.integers(0, 256, size=(4, 6, 7)).astype(np.uint8)
    assert wavewarp.image_pairwise(stack).shape == (4, 4)
    color = rng.random((3, 5, 5, 3))
    assert wavewarp.image_pairwise(color, color[:2]).shape == (3, 2)
    calls = []
    wavewarp.image_pairwise(stack, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1][0] == calls[-1][1] > 0


def test_map_and_warp_recover_a_stretch():
    h, w1, w2 = 10, 20, 30
    i = np.arange(h)[:, None]
    x = 40 * np.sin(0.35 * np.arange(w1)[None, :] + 0.5 * i) + 3 * np.arange(w1)[None, :]
    src = np.arange(w2) * (w1 - 1) / (w2 - 1)
    y = np.stack([np.interp(src, np.arange(w1), x[r]) for r in range(h)])
    d, matches = wavewarp.image_distance(x, y, return_map=True)
    assert d == wavewarp.image_distance(x, y)
    assert matches.shape[1] == 4
    assert np.all(matches[:, 0] == matches[:, 2])  # rows with themselves
    assert np.all(np.abs(matches[:, 1] - src[matches[:, 3]]) <= 1.0)  # the stretch, within a pixel
    warped = wavewarp.image_warp(x, matches, y.shape)
    assert warped.shape == y.shape
    assert np.max(np.abs(warped - y)) < 20
    # every pixel of both images is matched
    assert len({(a, b) for a, b in matches[:, :2]}) == h * w1
    assert len({(a, b) for a, b in matches[:, 2:]}) == h * w2
    # identity map for an image with itself
    d0, m0 = wavewarp.image_distance(x, x, return_map=True)
    assert d0 == 0 and np.array_equal(m0[:, :2], m0[:, 2:])
    # no path: +inf and an empty map
    dinf, minf = wavewarp.image_distance(np.ones((2, 2)), np.ones((2, 9)), return_map=True)
    assert math.isinf(dinf) and minf.shape == (0, 4)


def test_digits_matrix_equals_reference():
    datasets = pytest.importorskip("sklearn.datasets")
    digits = datasets.load_digits()
    images = digits.images  # (1797, 8, 8) float64 in 0..16
    X, Y = images[:10], images[100:112]
    M = wavewarp.image_pairwise(X, Y, backend="cpu")
    for i in range(len(X)):
        for j in range(len(Y)):
            assert M[i, j] == pytest.approx(ref_image(X[i], Y[j]), rel=1e-12)
    # 1-NN on a small split: far above chance (0.1); the comparison with Euclidean 1-NN is in
    # bench/results/image.md (the elastic distance is below it on these coarse 8 x 8 digits)
    idx, _ = wavewarp.image_knn(images[1500:1600], images[:500], k=1)
    acc = np.mean(digits.target[:500][idx[:, 0]] == digits.target[1500:1600])
    assert acc > 0.6


def test_bad_input_is_a_clear_error():
    good = np.zeros((3, 3))
    with pytest.raises(ValueError, match="no pixels|empty"):
        wavewarp.image_distance(np.zeros((0, 3)), good)
    bad = good.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        wavewarp.image_distance(good, bad)
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match=r"X\[1\] has a NaN or infinite pixel"):
        wavewarp.image_pairwise([good, bad])
    with pytest.raises(ValueError, match="channels"):
        wavewarp.image_distance(np.zeros((3, 3, 3)), good)
    with pytest.raises(ValueError, match="2-D"):
        wavewarp.image_distance(np.zeros(3), good)
    with pytest.raises(ValueError):
        wavewarp.image_pairwise(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="no pixels|empty"):
        wavewarp.image_pairwise([])
    with pytest.raises(ValueError, match="k must be"):
        wavewarp.image_knn([good], [good], k=2)
    with pytest.raises(TypeError):
        wavewarp.image_distance(np.array([["a"]]), good)


def test_gpu_arrays_are_accepted():
    torch = pytest.importorskip("torch")
    a = torch.rand(5, 6)
    b = torch.rand(6, 6)
    assert wavewarp.image_distance(a, b) == pytest.approx(wavewarp.image_distance(a.numpy(), b.numpy()))


def test_gpu_engine_matches_cpu():
    if not wavewarp.cuda_available():
        pytest.skip("GPU test: no CUDA backend in this build or no GPU on this machine")
    rng = np.random.default_rng(5)
    X = rng.integers(0, 256, size=(300, 28, 28)).astype(np.uint8)
    g = wavewarp.image_pairwise(X[:5], X, backend="cuda")
    c = wavewarp.image_pairwise(X[:5], X, backend="cpu")
    np.testing.assert_allclose(g, c, rtol=1e-5)
    gi, gd = wavewarp.image_knn(X[:5], X, k=2, backend="cuda")
    assert np.all(gi[:, 0] == np.arange(5)) and np.all(gd[:, 0] == 0)


@pytest.mark.skipif(wavewarp.cuda_available(), reason="a GPU is usable: stand-in host pointers must not reach it")
def test_gpu_stack_without_gpu_is_a_clear_error():
    """A stack claiming GPU memory (a stand-in whose __cuda_array_interface__ points at host memory,
    never read) on a machine without a usable GPU: a clear error, nothing read, no result."""

    class StandIn:
        def __init__(self, host: np.ndarray, typestr: str = ""):
            self.host = host
            self.__cuda_array_interface__ = {"shape": host.shape, "typestr": typestr or host.dtype.str,
                                             "data": (host.ctypes.data, False), "version": 3,
                                             "strides": None, "stream": None}

    X = np.zeros((4, 6, 6), dtype=np.uint8)
    with pytest.raises(ValueError, match="GPU"):
        wavewarp.image_pairwise(StandIn(X))
    with pytest.raises(ValueError, match="GPU"):
        wavewarp.image_knn(StandIn(X[:1]), StandIn(X), k=2)
    # backend "cpu" or a host set beside it: the stand-in is not a CuPy/PyTorch array, nothing to copy
    with pytest.raises((TypeError, ValueError)):
        wavewarp.image_pairwise(StandIn(X), backend="cpu")


def test_gpu_stacks_are_read_in_place():
    """CUDA tensors (and CuPy arrays) holding stacks of images: the GPU engine reads them where they
    are, with the same bits as the same images from the host; errors stay clear."""
    if not wavewarp.cuda_available():
        pytest.skip("GPU test: no CUDA backend in this build or no GPU on this machine")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("GPU test: PyTorch has no CUDA device here")
    rng = np.random.default_rng(11)
    X = rng.integers(0, 256, size=(200, 28, 28)).astype(np.uint8)
    F = rng.random((30, 20, 24, 3)).astype(np.float32)
    Xg, Fg = torch.from_numpy(X).cuda(), torch.from_numpy(F).cuda()
    host = wavewarp.image_pairwise(X[:4], X, backend="cuda")
    np.testing.assert_array_equal(wavewarp.image_pairwise(Xg[:4], Xg), host)
    np.testing.assert_array_equal(wavewarp.image_pairwise(Fg, backend="cuda"), wavewarp.image_pairwise(F, backend="cuda"))
    gi, gd = wavewarp.image_knn(Xg[:4], Xg, k=2)
    hi, hd = wavewarp.image_knn(X[:4], X, k=2, backend="cuda")
    np.testing.assert_array_equal(gi, hi)
    np.testing.assert_array_equal(gd, hd)
    # backend "cpu", or one set on the host: copied to the host, the CPU or GPU engine as asked
    np.testing.assert_allclose(wavewarp.image_pairwise(Xg[:2], Xg[:10], backend="cpu"), host[:2, :10], rtol=1e-5)
    np.testing.assert_array_equal(wavewarp.image_pairwise(Xg[:4], X, backend="cuda"), host)
    bad = Fg.clone()
    bad[3, 5, 6, 1] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        wavewarp.image_pairwise(bad)
    # a stack that is not C-contiguous: copied to the host
    np.testing.assert_array_equal(wavewarp.image_pairwise(Fg[:, ::2], backend="cuda"),
                                  wavewarp.image_pairwise(np.ascontiguousarray(F[:, ::2]), backend="cuda"))
    cupy = pytest.importorskip("cupy")
    Xc = cupy.asarray(X)
    np.testing.assert_array_equal(wavewarp.image_pairwise(Xc[:4], Xc), host)


def test_other_dtypes_and_byte_orders():
    a = np.arange(20, dtype=">f4").reshape(4, 5)
    b = np.arange(20, dtype=np.int64).reshape(4, 5)[::-1]  # not contiguous, integers
    want = wavewarp.image_distance(a.astype(np.float64), np.ascontiguousarray(b, dtype=np.float64))
    assert wavewarp.image_distance(a, b) == want
    assert wavewarp.image_distance(a.astype(bool), a.astype(bool)) == 0.0


def test_more_bad_input_is_a_clear_error():
    """Zero-size images of every kind, mismatched channels between X and Y, bad parameters."""
    good = np.zeros((3, 3))
    for empty in (np.zeros((3, 0)), np.zeros((0, 3)), np.zeros((3, 3, 0))):
        with pytest.raises(ValueError, match="no pixels"):
            wavewarp.image_distance(empty, empty)
    with pytest.raises(ValueError, match="no pixels"):
        wavewarp.image_pairwise(np.zeros((2, 3, 0)))
    with pytest.raises(ValueError, match="no pixels"):
        wavewarp.image_pairwise([good, np.zeros((0, 3))])
    color = np.zeros((3, 3, 3))
    with pytest.raises(ValueError, match="same number of channels"):
        wavewarp.image_pairwise([good], [color])
    with pytest.raises(ValueError, match="same number of channels"):
        wavewarp.image_knn([good], [color], k=1)
    with pytest.raises(ValueError, match=r"X\[1\] has a NaN or infinite pixel"):
        wavewarp.image_knn([good], [good, np.full((2, 2), np.inf, dtype=np.float32)], k=1)
    with pytest.raises(ValueError, match="k must be"):
        wavewarp.image_knn([good], [good], k=0)
    with pytest.raises(TypeError, match="k must be an integer"):
        wavewarp.image_knn([good], [good], k=1.5)
    for threads in (0, -1):
        with pytest.raises(ValueError, match="threads must be"):
            wavewarp.image_pairwise([good], threads=threads)
    with pytest.raises(ValueError, match="backend must be"):
        wavewarp.image_pairwise([good], backend="tpu")
    with pytest.raises(TypeError, match="progress must be"):
        wavewarp.image_knn([good], [good], progress="yes")


@pytest.fixture
def fast_polling():
    previous = wavewarp._wavewarp._set_poll_interval(0.01)
    yield
    wavewarp._wavewarp._set_poll_interval(previous)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
@pytest.mark.parametrize("function", ["image_pairwise", "image_knn"])
def test_ctrl_c_cancels_image_calls(fast_polling, function):
    """Ctrl-C during a matrix or a kNN search over images stops it (KeyboardInterrupt) before the end."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 256, size=(300, 28, 28, 3)).astype(np.uint8)
    reports = []

    def report(done, total):
        reports.append((done, total))
        if len(reports) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    call = getattr(wavewarp, function)
    args = (X[:40], X) if function == "image_pairwise" else (X[:40], X, 1)
    # Python's own SIGINT handler, also where the tests run in a background job (SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            call(*args, threads=1, progress=report, backend="cpu")  # the GPU engine polls between chunks of 1M pairs
    finally:
        signal.signal(signal.SIGINT, previous)
    done, total = reports[-1]
    assert done < total, "the call ran to the end instead of stopping"
    # and the next call works
    assert wavewarp.image_pairwise(X[:2], X[:3]).shape == (2, 3)
