"""Soft-DTW (issue 14): values, divergences and gradients against a plain NumPy reference written
here from the definition, tslearn's soft_dtw and softdtw_barycenter, finite differences, and
torch.autograd.gradcheck (double) for the PyTorch layer."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import wavewarp
from reference_measures import sakoe_chiba_cells


def _as_2d(x):
    x = np.asarray(x, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def sdtw_reference(x, y, gamma, radius=None):
    """(value, grad_x, grad_y): the full tables R and E (Cuturi and Blondel, algorithm 2)."""
    x, y = _as_2d(x), _as_2d(y)
    n, m = len(x), len(y)
    band = sakoe_chiba_cells(n, m, radius)
    C = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    R = np.full((n + 2, m + 2), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if not band[i - 1, j - 1]:
                continue
            v = -np.array([R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]]) / gamma
            mx = v.max()
            R[i, j] = C[i - 1, j - 1] - gamma * (np.log(np.exp(v - mx).sum()) + mx)
    value = R[n, m]
    Rb = R.copy()
    Rb[~np.pad(band, ((1, 1), (1, 1)), constant_values=False)] = -np.inf
    Cp = np.zeros((n + 2, m + 2))
    Cp[1:n + 1, 1:m + 1] = C
    E = np.zeros((n + 2, m + 2))
    E[n, m] = 1.0
    for i in range(n, 0, -1):
        for j in range(m, 0, -1):
            if (i, j) == (n, m) or not band[i - 1, j - 1]:
                continue
            e = 0.0
            for di, dj in ((1, 0), (0, 1), (1, 1)):
                if i + di <= n and j + dj <= m:
                    e += E[i + di, j + dj] * np.exp((Rb[i + di, j + dj] - Rb[i, j] - Cp[i + di, j + dj]) / gamma)
            E[i, j] = e
    Em = E[1:n + 1, 1:m + 1]
    gx = 2 * (Em.sum(1)[:, None] * x - Em @ y)
    gy = 2 * (Em.sum(0)[:, None] * y - Em.T @ x)
    return value, gx, gy


def _pair(rng, n, m, d):
    return rng.standard_normal((n, d)), rng.standard_normal((m, d))


@pytest.mark.parametrize("n,m,d", [(1, 1, 1), (1, 9, 2), (7, 1, 1), (15, 15, 1), (23, 31, 3)])
@pytest.mark.parametrize("gamma", [0.01, 0.3, 1.0, 5.0])
def test_softdtw_values_and_gradients_match_reference(n, m, d, gamma):
    rng = np.random.default_rng(n * 100 + m)
    x, y = _pair(rng, n, m, d)
    want, wx, wy = sdtw_reference(x, y, gamma)
    got = wavewarp.soft_dtw(x, y, gamma=gamma)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    v, gx, gy = wavewarp.soft_dtw_grad(x, y, gamma=gamma)
    assert v == pytest.approx(want, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(gx, wx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gy, wy, rtol=1e-10, atol=1e-12)
    assert gx.shape == x.shape and gy.shape == y.shape


@pytest.mark.parametrize("radius", [0, 2, 5])
def test_softdtw_window(radius):
    rng = np.random.default_rng(radius)
    for n, m in ((20, 20), (17, 29)):
        x, y = _pair(rng, n, m, 2)
        want, wx, wy = sdtw_reference(x, y, 0.5, radius)
        assert wavewarp.soft_dtw(x, y, 0.5, radius=radius) == pytest.approx(want, rel=1e-12)
        v, gx, gy = wavewarp.soft_dtw_grad(x, y, 0.5, radius=radius)
        np.testing.assert_allclose(gx, wx, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gy, wy, rtol=1e-10, atol=1e-12)
        # the window changes the value (it is respected), and window= is aeon's fraction
        assert v != pytest.approx(wavewarp.soft_dtw(x, y, 0.5), rel=1e-9)
        frac = wavewarp.soft_dtw(x, y, 0.5, window=0.2)
        assert frac == pytest.approx(sdtw_reference(x, y, 0.5, int(0.2 * min(n, m)))[0], rel=1e-12)


def test_softdtw_matches_tslearn():
    tslearn_metrics = pytest.importorskip("tslearn.metrics")
    rng = np.random.default_rng(5)
    for n, m, d in ((30, 30, 1), (40, 25, 3), (1, 5, 2)):
        x, y = _pair(rng, n, m, d)
        for gamma in (0.1, 1.0, 3.0):
            want = tslearn_metrics.soft_dtw(x, y, gamma=gamma)
            assert wavewarp.soft_dtw(x, y, gamma=gamma) == pytest.approx(want, rel=1e-10)


def test_softdtw_finite_differences():
    rng = np.random.default_rng(11)
    x, y = _pair(rng, 12, 9, 2)
    for divergence in (False, True):
        _, gx, gy = wavewarp.soft_dtw_grad(x, y, 0.7, divergence=divergence)
        h = 1e-6
        for arr, g in ((x, gx), (y, gy)):
            for idx in [(0, 0), (3, 1), (arr.shape[0] - 1, 0)]:
                keep = arr[idx]
                arr[idx] = keep + h
                up = wavewarp.soft_dtw(x, y, 0.7, divergence=divergence)
                arr[idx] = keep - h
                down = wavewarp.soft_dtw(x, y, 0.7, divergence=divergence)
                arr[idx] = keep
                assert g[idx] == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-7)


def test_softdtw_divergence_and_gamma_limit():
    rng = np.random.default_rng(3)
    for _ in range(10):
        x, y = _pair(rng, rng.integers(1, 30), rng.integers(1, 30), 2)
        assert wavewarp.soft_dtw(x, x, 0.8, divergence=True) == 0.0
        assert wavewarp.soft_dtw(x, y, 0.8, divergence=True) >= -1e-12
        dtw = wavewarp.distance(x, y, "dtw")
        assert abs(wavewarp.soft_dtw(x, y, gamma=1e-6) - dtw) <= 1e-6 * np.log(3) * (len(x) + len(y))
    # the measure spelled as a Measure and through distance()
    m = wavewarp.Measure("softdtw", gamma=0.5, divergence=True)
    assert m.params == {"gamma": 0.5, "divergence": True}
    assert wavewarp.distance(x, y, m) == wavewarp.soft_dtw(x, y, 0.5, divergence=True)


def test_softdtw_pairwise_knn_index():
    rng = np.random.default_rng(8)
    X = [rng.standard_normal((int(rng.integers(3, 20)), 2)) for _ in range(9)]
    for divergence in (False, True):
        D = wavewarp.pairwise(X, measure="softdtw", gamma=0.5, divergence=divergence)
        for i in range(9):
            for j in range(9):
                want = wavewarp.soft_dtw(X[i], X[j], 0.5, divergence=divergence)
                assert D[i, j] == pytest.approx(want, rel=1e-12, abs=1e-12)
        idx, dist = wavewarp.knn(X, X, 2, measure="softdtw", gamma=0.5, divergence=divergence)
        np.testing.assert_allclose(dist[:, 0], D.min(axis=1), rtol=1e-12)
        ix = wavewarp.Index(X, measure="softdtw", gamma=0.5, divergence=divergence)
        np.testing.assert_allclose(ix.pairwise(X), D, rtol=1e-12, atol=1e-12)


def test_softdtw_batch_mixed_lengths_and_f32():
    rng = np.random.default_rng(4)
    X = [rng.standard_normal((int(rng.integers(1, 25)), 3)) for _ in range(11)]
    Y = [rng.standard_normal((int(rng.integers(1, 25)), 3)) for _ in range(11)]
    values, gX, gY = wavewarp.soft_dtw_batch(X, Y, gamma=0.9)
    for b in range(11):
        v, gx, gy = wavewarp.soft_dtw_grad(X[b], Y[b], 0.9)
        assert values[b] == v
        np.testing.assert_array_equal(gX[b], gx)
        np.testing.assert_array_equal(gY[b], gy)
    A = rng.standard_normal((5, 16, 2)).astype(np.float32)
    B = rng.standard_normal((5, 12, 2)).astype(np.float32)
    v32, g32, _ = wavewarp.soft_dtw_batch(A, B, gamma=1.0)
    v64, g64, _ = wavewarp.soft_dtw_batch(A.astype(np.float64), B.astype(np.float64), gamma=1.0)
    assert v32.dtype == np.float32 and g32.dtype == np.float32 and g32.shape == A.shape
    np.testing.assert_allclose(v32, v64, rtol=1e-5)
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5)
    values, gx, gy = wavewarp.soft_dtw_batch(A, B, grad=False)
    assert gx is None and gy is None


def test_softdtw_bad_input():
    x = np.zeros((4, 2))
    for gamma in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="gamma"):
            wavewarp.soft_dtw(x, x, gamma=gamma)
    with pytest.raises(TypeError):
        wavewarp.soft_dtw(x, x, gamma="1")
    bad = x.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        wavewarp.soft_dtw_grad(bad, x)
    with pytest.raises(ValueError, match="NaN"):
        wavewarp.soft_dtw_batch([x], [bad])
    with pytest.raises(ValueError):
        wavewarp.soft_dtw(np.zeros((0, 2)), x)
    with pytest.raises(ValueError, match="dim"):
        wavewarp.soft_dtw_grad(x, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="as many"):
        wavewarp.soft_dtw_batch([x, x], [x])
    with pytest.raises(ValueError, match="dim"):
        wavewarp.soft_dtw_batch([x], [np.zeros((3, 3))])
    with pytest.raises(ValueError, match="parameter"):
        wavewarp.distance(x, x, "dtw", gamma=1.0)


def test_softdtw_barycenter_matches_tslearn():
    tslearn_barycenters = pytest.importorskip("tslearn.barycenters")
    rng = np.random.default_rng(1)
    X = np.cumsum(rng.standard_normal((12, 30, 1)), axis=1)
    want = tslearn_barycenters.softdtw_barycenter(X, gamma=1.0, max_iter=50)
    got = wavewarp.softdtw_barycenter(X, gamma=1.0, max_iter=50)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    w = rng.uniform(0.5, 2.0, 12)
    want = tslearn_barycenters.softdtw_barycenter(X, gamma=0.5, weights=w, max_iter=20)
    got = wavewarp.softdtw_barycenter(X, gamma=0.5, weights=w, max_iter=20)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_softdtw_barycenter_ragged_list_matches_per_series_objective():
    """The barycenter's batched objective (series packed once, gradients of Z only, one tensordot)
    against the same L-BFGS-B over a sum of wavewarp.soft_dtw_grad calls, series of several lengths
    in dim 2 with weights and an initial guess."""
    scipy_optimize = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(7)
    series = [np.cumsum(rng.standard_normal((n, 2)), axis=0) for n in (9, 14, 1, 20, 11)]
    w = rng.uniform(0.5, 2.0, len(series))
    init = rng.standard_normal((12, 2))

    def objective(z):
        Z = z.reshape(init.shape)
        value, grad = 0.0, np.zeros_like(Z)
        for k, s in enumerate(series):
            v, gz, _ = wavewarp.soft_dtw_grad(Z, s, 0.7)
            value += w[k] * v
            grad += w[k] * gz
        return value, grad.ravel()

    want = scipy_optimize.minimize(objective, init.ravel(), method="L-BFGS-B", jac=True, tol=1e-3,
                                   options=dict(maxiter=15)).x.reshape(init.shape)
    for threads in (1, 2):
        got = wavewarp.softdtw_barycenter(series, gamma=0.7, weights=w, init=init, max_iter=15, threads=threads)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------------------ PyTorch

def test_torch_module_without_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    monkeypatch.delitem(sys.modules, "wavewarp.torch", raising=False)
    with pytest.raises(ImportError, match="needs PyTorch"):
        importlib.import_module("wavewarp.torch")
    assert wavewarp.soft_dtw(np.zeros(3), np.ones(2)) > 0  # the package works without it


def test_torch_softdtw_gradcheck_and_values():
    torch = pytest.importorskip("torch")
    from wavewarp.torch import SoftDTW

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 7, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    y = torch.randn(3, 5, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    for normalize in (False, True):
        layer = SoftDTW(gamma=0.5, normalize=normalize)
        assert torch.autograd.gradcheck(lambda a, b: layer(a, b), (x, y), eps=1e-6, atol=1e-6)
        values = layer(x, y)
        assert values.shape == (3,)
        for b in range(3):
            want = wavewarp.soft_dtw(x[b].detach().numpy(), y[b].detach().numpy(), 0.5, divergence=normalize)
            assert values[b].item() == pytest.approx(want, rel=1e-12)
    # lists of different lengths, float32, the window
    xs = [torch.randn(n, 3, generator=gen, requires_grad=True) for n in (4, 9, 1)]
    ys = [torch.randn(n, 3, generator=gen) for n in (6, 2, 5)]
    out = SoftDTW(gamma=1.0, radius=2)(xs, ys)
    assert out.dtype == torch.float32 and out.shape == (3,)
    out.sum().backward()
    for b in range(3):
        _, gx, _ = wavewarp.soft_dtw_grad(xs[b].detach().numpy(), ys[b].numpy(), 1.0, radius=2)
        np.testing.assert_allclose(xs[b].grad.numpy(), gx, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        SoftDTW()(torch.zeros(2, 3, 1), torch.zeros(3, 3, 1))
    with pytest.raises(ValueError):
        SoftDTW(gamma=0.0)


def test_torch_softdtw_cuda_tensors_match_cpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not wavewarp.cuda_available():
        pytest.skip("GPU test: no CUDA device for torch, or wavewarp built without CUDA")
    from wavewarp.torch import SoftDTW

    gen = torch.Generator().manual_seed(3)
    for dtype, rtol in ((torch.float64, 1e-9), (torch.float32, 1e-5)):
        for normalize in (False, True):
            x = torch.randn(16, 300, 2, generator=gen, dtype=dtype)
            y = torch.randn(16, 257, 2, generator=gen, dtype=dtype)
            layer = SoftDTW(gamma=1.0, normalize=normalize)
            xc, yc = x.cuda().requires_grad_(True), y.cuda().requires_grad_(True)
            out = layer(xc, yc)
            out.sum().backward()
            xh, yh = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
            ref = layer(xh, yh)
            ref.sum().backward()
            assert out.device.type == "cuda"
            np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=rtol)
            np.testing.assert_allclose(xc.grad.cpu().numpy(), xh.grad.numpy(), rtol=1e-3, atol=1e-3)
            np.testing.assert_allclose(yc.grad.cpu().numpy(), yh.grad.numpy(), rtol=1e-3, atol=1e-3)
    x = torch.randn(2, 6, 2, dtype=torch.float64, device="cuda", requires_grad=True)
    y = torch.randn(2, 5, 2, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: SoftDTW(gamma=0.5)(a, b), (x, y), eps=1e-6, atol=1e-6)


def test_torch_softdtw_rival_arguments():
    """pytorch-softdtw-cuda's constructor works unchanged: use_cuda first or by keyword, bandwidth
    as the radius for equal lengths (an error for unequal ones), dist_func None only."""
    torch = pytest.importorskip("torch")
    from wavewarp.torch import SoftDTW

    g = torch.Generator().manual_seed(3)
    x = torch.rand(3, 20, 2, generator=g, dtype=torch.float64)
    y = torch.rand(3, 20, 2, generator=g, dtype=torch.float64)
    ours = SoftDTW(0.5, True)
    assert ours.gamma == 0.5 and ours.normalize
    for layer in (SoftDTW(False, 0.5, True), SoftDTW(use_cuda=False, gamma=0.5, normalize=True),
                  SoftDTW(True, gamma=0.5, normalize=True)):
        assert torch.equal(layer(x, y), ours(x, y))
    banded = SoftDTW(False, 1.0, False, 3.7)
    assert torch.equal(banded(x, y), SoftDTW(gamma=1.0, radius=3)(x, y))
    assert torch.equal(SoftDTW(gamma=1.0, bandwidth=0)(x, y), SoftDTW(gamma=1.0)(x, y))  # <= 0: no band
    with pytest.raises(ValueError, match="equal lengths"):
        banded(x, y[:, :15])
    with pytest.raises(ValueError, match="not several"):
        SoftDTW(gamma=1.0, bandwidth=2, radius=2)
    with pytest.raises(NotImplementedError, match="dist_func"):
        SoftDTW(True, 1.0, False, None, lambda a, b: a)
    with pytest.raises(TypeError, match="multiple values"):
        SoftDTW(1.0, gamma=2.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        SoftDTW(gama=1.0)
    with pytest.raises(TypeError, match="at most"):
        SoftDTW(1.0, False, None, None, 5)
    # the rival's "no band": bandwidth inf or NaN; numpy's bool as use_cuda
    assert torch.equal(SoftDTW(gamma=1.0, bandwidth=float("inf"))(x, y), SoftDTW(gamma=1.0)(x, y))
    assert torch.equal(SoftDTW(gamma=1.0, bandwidth=float("nan"))(x, y), SoftDTW(gamma=1.0)(x, y))
    assert torch.equal(SoftDTW(np.bool_(True), 0.5, True)(x, y), ours(x, y))
    assert "bandwidth=3" in repr(banded)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_torch_softdtw_one_input_requires_grad(device):
    """Gradients when only x or only y requires them (the layer asks the engine for that one only),
    with and without normalize: equal to those of a call where both require them."""
    torch = pytest.importorskip("torch")
    from wavewarp.torch import SoftDTW

    if device == "cuda" and not (torch.cuda.is_available() and wavewarp.cuda_available()):
        pytest.skip("GPU test: no CUDA device for torch, or wavewarp built without CUDA")
    g = torch.Generator().manual_seed(5)
    x0 = torch.rand(4, 30, 2, generator=g, dtype=torch.float64).to(device)
    y0 = torch.rand(4, 25, 2, generator=g, dtype=torch.float64).to(device)
    for normalize in (False, True):
        layer = SoftDTW(gamma=0.8, normalize=normalize)
        xb, yb = x0.clone().requires_grad_(True), y0.clone().requires_grad_(True)
        layer(xb, yb).sum().backward()
        xa = x0.clone().requires_grad_(True)
        layer(xa, y0).sum().backward()
        ya = y0.clone().requires_grad_(True)
        layer(x0, ya).sum().backward()
        assert torch.allclose(xa.grad, xb.grad, rtol=1e-12, atol=0)
        assert torch.allclose(ya.grad, yb.grad, rtol=1e-12, atol=0)
