"""PyTorch layer: :class:`SoftDTW`, a ``torch.nn.Module`` computing soft-DTW values (or divergences)
of batches of series, differentiable through wavewarp's exact backward pass.

A drop-in replacement for pytorch-softdtw-cuda's ``SoftDTW`` (its arguments ``use_cuda``, ``gamma``,
``normalize``, ``bandwidth`` and ``dist_func`` are accepted, by keyword or in its positional order
``SoftDTW(use_cuda, gamma, normalize, bandwidth, dist_func)``): forward takes ``(B, N, D)`` and ``(B, M, D)`` tensors (or two
lists of B tensors ``(n_b, D)`` of different lengths) and returns the ``(B,)`` values. Needs
torch (``pip install torch``); the rest of wavewarp does not. (B, N, D) CUDA tensors are computed on their GPU in place (wavewarp
built with CUDA); lists of tensors on the CPU engines.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

try:
    import torch as _torch
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "wavewarp.torch needs PyTorch, which is not installed: pip install torch "
        "(the rest of wavewarp works without it)"
    ) from error

import numpy as np

from ._functions import _spec_of
from ._wavewarp import cuda_available as _cuda_available
from ._wavewarp import softdtw_batch as _softdtw_batch
from . import _arrays

__all__ = ["SoftDTW"]

TensorOrList = Union["_torch.Tensor", Sequence["_torch.Tensor"]]


def _host_array(t: "_torch.Tensor") -> np.ndarray:
    # lists of tensors, and CUDA tensors where wavewarp has no GPU, run on the CPU engines: copied to
    # the host (and the gradients back to their device)
    return t.detach().to("cpu").contiguous().numpy()


def _on_gpu(x: "_torch.Tensor", y: "_torch.Tensor") -> bool:
    return x.is_cuda and y.is_cuda and x.device == y.device and _cuda_available()


def _gpu_batch(spec: Any, x: "_torch.Tensor", y: "_torch.Tensor", want_x: bool, want_y: bool) -> Any:
    """The batch on the tensors' GPU, in place: no copy to the host. The library waits for the
    producer's stream (the tensors' __cuda_array_interface__) and synchronises its own before it
    returns, so the results are complete on PyTorch's current stream."""
    dtype = _torch.float32 if x.dtype == _torch.float32 and y.dtype == _torch.float32 else _torch.float64
    xc = x.detach().to(dtype).contiguous()
    yc = y.detach().to(dtype).contiguous()
    B, N, D = xc.shape
    M = yc.shape[1]
    is_f32 = dtype == _torch.float32
    values = _torch.empty(B, device=x.device, dtype=dtype)
    gx = _torch.empty_like(xc) if want_x else None  # only the gradients autograd asks for
    gy = _torch.empty_like(yc) if want_y else None
    with _torch.cuda.device(x.device):
        _softdtw_batch(_arrays.Pack(xc, None, None, B, N, D, is_f32), _arrays.Pack(yc, None, None, B, M, D, is_f32),
                       spec, "cuda", None, want_x or want_y, values, gx, gy)
    return values, gx, gy


class _Batch(_torch.autograd.Function):
    """values[b] = sdtw(xs[b], ys[b]) over lists of tensors; backward scales the stored gradients."""

    @staticmethod
    def forward(ctx: Any, spec: Any, count: int, *tensors: "_torch.Tensor") -> "_torch.Tensor":  # type: ignore[override]
        xs, ys = tensors[:count], tensors[count:]
        dtype = xs[0].dtype
        is_f32 = all(t.dtype == _torch.float32 for t in tensors)
        npdt = np.float32 if is_f32 else np.float64
        xh = [_host_array(t).astype(npdt, copy=False).reshape(t.shape[0], -1) for t in xs]
        yh = [_host_array(t).astype(npdt, copy=False).reshape(t.shape[0], -1) for t in ys]
        xp = _arrays.pack(_arrays.open_collection(xh, "X"), None, is_f32, "X", "tX")
        yp = _arrays.pack(_arrays.open_collection(yh, "Y"), None, is_f32, "Y", "tY")
        want = any(t.requires_grad for t in tensors)
        values, gx, gy = _softdtw_batch(xp, yp, spec, "cpu", None, want)
        if want:
            grads = []
            for flat, pack, like in ((gx, xp, xs), (gy, yp, ys)):
                for i, t in enumerate(like):
                    g = flat[pack.offsets[i]:pack.offsets[i + 1]].reshape(t.shape)
                    grads.append(_torch.from_numpy(np.ascontiguousarray(g)).to(device=t.device, dtype=t.dtype))
            ctx.save_for_backward(*grads)
        ctx.count = count
        return _torch.from_numpy(np.asarray(values)).to(device=xs[0].device, dtype=dtype)

    @staticmethod
    def backward(ctx: Any, grad_output: "_torch.Tensor") -> Any:  # type: ignore[override]
        grads = ctx.saved_tensors
        count = ctx.count
        out: List[Optional[_torch.Tensor]] = [None, None]
        for k, g in enumerate(grads):
            b = k % count
            out.append(g * grad_output[b].to(g.dtype))
        return tuple(out)


class _Dense(_torch.autograd.Function):
    """values[b] = sdtw(x[b], y[b]) for (B, N, D) and (B, M, D) tensors, in one batched call."""

    @staticmethod
    def forward(ctx: Any, spec: Any, x: "_torch.Tensor", y: "_torch.Tensor") -> "_torch.Tensor":  # type: ignore[override]
        want = x.requires_grad or y.requires_grad
        if _on_gpu(x, y):
            values, gx, gy = _gpu_batch(spec, x, y, x.requires_grad, y.requires_grad)
            if want:
                ctx.save_for_backward(gx.to(x.dtype) if gx is not None else None,
                                      gy.to(y.dtype) if gy is not None else None)
            return values.to(x.dtype)
        is_f32 = x.dtype == _torch.float32 and y.dtype == _torch.float32
        npdt = np.float32 if is_f32 else np.float64
        xh = np.ascontiguousarray(_host_array(x), dtype=npdt)
        yh = np.ascontiguousarray(_host_array(y), dtype=npdt)
        B, N, D = xh.shape
        M = yh.shape[1]
        xp = _arrays.Pack(xh, None, None, B, N, D, is_f32)
        yp = _arrays.Pack(yh, None, None, B, M, D, is_f32)
        values, gx, gy = _softdtw_batch(xp, yp, spec, "cpu", None, want)
        if want:
            ctx.save_for_backward(_torch.from_numpy(gx.reshape(x.shape)).to(device=x.device, dtype=x.dtype),
                                  _torch.from_numpy(gy.reshape(y.shape)).to(device=y.device, dtype=y.dtype))
        return _torch.from_numpy(np.asarray(values)).to(device=x.device, dtype=x.dtype)

    @staticmethod
    def backward(ctx: Any, grad_output: "_torch.Tensor") -> Any:  # type: ignore[override]
        gx, gy = ctx.saved_tensors
        scale = grad_output.reshape(-1, 1, 1)
        return (None, gx * scale.to(gx.dtype) if gx is not None and ctx.needs_input_grad[1] else None,
                gy * scale.to(gy.dtype) if gy is not None and ctx.needs_input_grad[2] else None)


class SoftDTW(_torch.nn.Module):
    """Soft-DTW of aligned pairs of series, differentiable.

    Parameters
    ----------
    gamma : float
        The smoothing, > 0.
    normalize : bool
        The soft-DTW divergence ``sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2`` (pytorch-softdtw-cuda's
        ``normalize=True``).
    window : float, optional
        aeon's Sakoe-Chiba window (fraction of the shorter series), as in :func:`wavewarp.distance`.
    radius : int, optional
        The Sakoe-Chiba radius in samples. Not with ``window``.
    use_cuda : bool, optional
        pytorch-softdtw-cuda's argument, accepted (also as the first positional argument, in its
        order ``SoftDTW(use_cuda, gamma, normalize, bandwidth, dist_func)``) and not needed: the work
        runs on the tensors' device.
    bandwidth : float, optional
        pytorch-softdtw-cuda's band: cells with ``|i - j| > bandwidth`` are left out when
        ``bandwidth > 0``; the same as ``radius=floor(bandwidth)``, for series of equal lengths only
        (``ValueError`` otherwise: its band is not the family's window there).
    dist_func : None
        pytorch-softdtw-cuda's custom cost; only None (the squared Euclidean cost, computed inside
        wavewarp's kernels): another raises ``NotImplementedError``.

    Forward: ``x`` ``(B, N, D)`` and ``y`` ``(B, M, D)`` tensors (``(B, N)``: univariate), or two
    lists of B tensors ``(n_b, D)`` / ``(n_b,)``; returns the ``(B,)`` values (the dtype of x).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        # ours: SoftDTW(gamma, normalize, window, radius); pytorch-softdtw-cuda's, whose first
        # argument is the bool use_cuda: SoftDTW(use_cuda, gamma, normalize, bandwidth, dist_func)
        rival = bool(args) and isinstance(args[0], (bool, np.bool_))
        order = ("use_cuda", "gamma", "normalize", "bandwidth", "dist_func") if rival else \
            ("gamma", "normalize", "window", "radius")
        known = ("gamma", "normalize", "window", "radius", "use_cuda", "bandwidth", "dist_func")
        if len(args) > len(order):
            raise TypeError(f"SoftDTW takes at most {len(order)} positional arguments ({', '.join(order)}), "
                            f"got {len(args)}")
        given = dict(zip(order, args))
        for name, value in kwargs.items():
            if name not in known:
                raise TypeError(f"SoftDTW got an unexpected keyword argument {name!r}")
            if name in given:
                raise TypeError(f"SoftDTW got multiple values for argument {name!r}")
            given[name] = value
        gamma = given.get("gamma", 1.0)
        if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, (int, float, np.integer, np.floating)):
            raise TypeError(f"gamma must be a number, not {gamma!r}")
        window, radius = given.get("window"), given.get("radius")
        bandwidth = given.get("bandwidth")
        if given.get("dist_func") is not None:
            raise NotImplementedError("SoftDTW(dist_func=...): wavewarp computes the squared Euclidean cost "
                                      "inside its kernels; other costs are not supported (leave dist_func None)")
        # pytorch-softdtw-cuda's band: cells with |i - j| > bandwidth pruned when bandwidth > 0, the
        # family's radius for equal lengths (checked in forward: its band differs for unequal ones)
        self.bandwidth: Optional[int] = None
        # as the rival: no band for bandwidth <= 0, NaN or infinite; a band past 2^31 is none too
        if bandwidth is not None and np.isfinite(float(bandwidth)) and 0 < float(bandwidth) < 2.0**31:
            if window is not None or radius is not None:
                raise ValueError("SoftDTW: give bandwidth, window or radius, not several")
            self.bandwidth = int(np.floor(float(bandwidth)))
            radius = self.bandwidth
        self.use_cuda = given.get("use_cuda")  # accepted; the work runs where the tensors are
        self.gamma = float(gamma)
        self.normalize = bool(given.get("normalize", False))
        self.window = window
        self.radius = radius
        self._spec = _spec_of("softdtw", window, radius, {"gamma": self.gamma, "divergence": self.normalize})

    @staticmethod
    def _bandwidth_lengths(n: int, m: int) -> str:
        return (f"SoftDTW(bandwidth=...) on series of lengths {n} and {m}: pytorch-softdtw-cuda's band "
                "(|i - j| <= bandwidth) is the family's Sakoe-Chiba window only for equal lengths; use "
                "radius= or window= (wavewarp's window, scaled to the lengths) for unequal ones")

    def extra_repr(self) -> str:
        text = f"gamma={self.gamma}, normalize={self.normalize}, window={self.window}, radius={self.radius}"
        return text + (f", bandwidth={self.bandwidth}" if self.bandwidth is not None else "")

    def forward(self, x: TensorOrList, y: TensorOrList) -> "_torch.Tensor":
        if isinstance(x, _torch.Tensor) and isinstance(y, _torch.Tensor):
            if x.dim() not in (2, 3) or y.dim() not in (2, 3):
                raise ValueError(f"x and y must be (B, N, D) or (B, N) tensors, got shapes {tuple(x.shape)} and "
                                 f"{tuple(y.shape)}")
            if x.shape[0] != y.shape[0]:
                raise ValueError(f"x and y must hold as many series, got {x.shape[0]} and {y.shape[0]}")
            if x.shape[0] == 0 or x.shape[1] == 0 or y.shape[1] == 0:
                raise ValueError(f"x and y must be non-empty, got shapes {tuple(x.shape)} and {tuple(y.shape)}")
            x3 = x if x.dim() == 3 else x.unsqueeze(-1)
            y3 = y if y.dim() == 3 else y.unsqueeze(-1)
            if self.bandwidth is not None and x3.shape[1] != y3.shape[1]:
                raise ValueError(self._bandwidth_lengths(x3.shape[1], y3.shape[1]))
            if x3.shape[2] != y3.shape[2]:
                raise ValueError(f"x has dim {x3.shape[2]} but y has dim {y3.shape[2]}")
            return _Dense.apply(self._spec, x3, y3)
        else:
            xs, ys = list(x), list(y)
            if len(xs) != len(ys):
                raise ValueError(f"x and y must hold as many series, got {len(xs)} and {len(ys)}")
        if not xs:
            raise ValueError("x and y are empty: a batch needs at least one pair")
        if self.bandwidth is not None:
            for xt, yt in zip(xs, ys):
                if isinstance(xt, _torch.Tensor) and isinstance(yt, _torch.Tensor) and xt.shape[0] != yt.shape[0]:
                    raise ValueError(self._bandwidth_lengths(xt.shape[0], yt.shape[0]))
        for what, seq in (("x", xs), ("y", ys)):
            for i, t in enumerate(seq):
                if not isinstance(t, _torch.Tensor):
                    raise TypeError(f"{what}[{i}] is a {type(t).__name__}, not a torch.Tensor")
                if t.dim() not in (1, 2) or t.shape[0] == 0:
                    raise ValueError(f"{what}[{i}]: a series must be a non-empty (length,) or (length, dim) tensor, "
                                     f"got shape {tuple(t.shape)}")
        return _Batch.apply(self._spec, len(xs), *xs, *ys)
