"""Measures: which elastic distance, its parameters and its window.

A :class:`Measure` is what every computing function of the package computes: ``"twed"`` (the Time
Warp Edit Distance, with ``nu``, ``lmbda``, ``degree``) or ``"dtw"`` (Dynamic Time Warping, no
parameters), optionally restricted to a Sakoe-Chiba window given either as aeon's ``window``
(a fraction of the shorter series) or as a ``radius`` in samples. The functions accept a measure
name with keyword arguments (``measure="dtw", window=0.1``) or a ready :class:`Measure`.

The C module reads a measure as a *spec*, the tuple ``(name, nu, lmbda, degree, radius, window)``
(TWED's parameters None for DTW; at most one of radius and window not None).
"""

from __future__ import annotations

import numbers
import operator
from types import MappingProxyType
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from ._wavewarp import measure_check as _measure_check
from ._wavewarp import measure_radius as _measure_radius

__all__ = ["Measure", "MEASURES"]

#: The measures and their parameters with defaults (aeon's for TWED).
MEASURES: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "twed": MappingProxyType({"nu": 0.001, "lmbda": 1.0, "degree": 2}),
    "dtw": MappingProxyType({}),
    "softdtw": MappingProxyType({"gamma": 1.0, "divergence": False}),
})

_STAMPED = frozenset({"twed"})  # the measures that read time stamps


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"measure must be a name ('twed', 'dtw' or 'softdtw') or a wavewarp.Measure, not {type(name).__name__}")
    key = name.lower()
    if key not in MEASURES:
        raise ValueError(f"unknown measure {name!r}: wavewarp has " + " and ".join(repr(k) for k in MEASURES))
    return key


def check_flag(value: Any, name: str) -> bool:
    """A boolean parameter as a bool: only bool or numpy.bool_, since bool("no") is True."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return bool(value)


def backend_name(backend: Any) -> str:
    """The backend as one of "auto", "cpu", "cuda", whatever its case (as in the CLI)."""
    name = backend.lower() if isinstance(backend, str) else None
    if name not in ("auto", "cpu", "cuda"):
        raise ValueError(f"backend must be 'auto', 'cpu' or 'cuda', not {backend!r}")
    return name


def check_real(value: Any, name: str, bounds: str) -> float:
    """A real-valued parameter as a float; bools are refused (gamma=True is a slip, not 1.0). The
    bounds (e.g. "> 0") are checked by the library; here they only complete the message."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number {bounds}, not {value!r}")
    return float(value)


def _owners_note(params: Any) -> str:
    """Which measures the given parameter names belong to, e.g. " (gamma: softdtw's)": a parameter
    given to the wrong measure is a common slip, and the note says which measure was meant."""
    owned = []
    for param in sorted(params):
        owners = [name for name, defaults in MEASURES.items() if param in defaults]
        if owners:
            owned.append(f"{param}: {' and '.join(owners)}'s")
    return f" ({'; '.join(owned)})" if owned else ""


def _check_params(name: str, params: Mapping[str, Any]) -> Dict[str, Any]:
    """The full parameter dict of measure `name`: defaults, overridden by `params` (names checked)."""
    allowed = MEASURES[name]
    unknown = [key for key in params if key not in allowed]
    if unknown:
        given = ", ".join(sorted(unknown))
        note = _owners_note(unknown)
        if not allowed:
            raise ValueError(f"{name} takes no parameters, got {given}{note}")
        raise ValueError(f"unknown parameter{'s' if len(unknown) > 1 else ''} {given} for {name}: "
                         f"it takes {', '.join(allowed)}{note}")
    full = dict(allowed)
    full.update(params)
    return full


def _check_window(window: Any, radius: Any) -> Tuple[Optional[float], Optional[int]]:
    if window is not None and radius is not None:
        raise ValueError("give window (aeon's fraction of the shorter series) or radius (samples), not both")
    if window is not None:
        if isinstance(window, bool) or not isinstance(window, numbers.Real):
            raise TypeError(f"window must be None or a number between 0 and 1, not {window!r}")
        window = float(window)
        if not 0.0 <= window <= 1.0:  # NaN too
            raise ValueError(f"window must be between 0 and 1 (aeon's fraction of the shorter series), not {window!r}")
    if radius is not None:
        if isinstance(radius, bool):
            raise TypeError(f"radius must be None or an integer number of samples, not {radius!r}")
        try:
            radius = operator.index(radius)
        except TypeError:
            raise TypeError(f"radius must be None or an integer number of samples, not {radius!r}") from None
        if radius < 0:
            raise ValueError(f"radius must be >= 0, not {radius}")
    return window, radius


class Measure:
    """An elastic measure: its name, its parameters and its window; immutable.

    Parameters
    ----------
    name : {"dtw", "twed"}
        ``"dtw"``: Dynamic Time Warping with the squared Euclidean distance between samples and no
        square root at the end (aeon's ``dtw_distance``; tslearn and dtaidistance return the square
        root of this value). No parameters. ``"twed"``: the Time Warp Edit Distance, parameters
        ``nu`` (0.001), ``lmbda`` (1.0) and ``degree`` (2), as in :func:`wavewarp.twed`.
        ``"softdtw"``: soft-DTW (Cuturi and Blondel 2017), squared Euclidean cost, parameters
        ``gamma`` (1.0, > 0) and ``divergence`` (False; True: the soft-DTW divergence
        ``sdtw(a, b) - (sdtw(a, a) + sdtw(b, b)) / 2``), as in :func:`wavewarp.soft_dtw`.
    window : float, optional
        aeon's Sakoe-Chiba window: a fraction in [0, 1] of the shorter series of each pair; the
        radius is ``int(window * min(n, m))`` samples, per pair. 1.0 (or None) means no window.
    radius : int, optional
        The Sakoe-Chiba radius in samples, the same for every pair (0 keeps the diagonal path
        only, for equal lengths). dtaidistance's ``window=w`` is ``radius=w - 1`` for series of
        equal lengths. Give ``window`` or ``radius``, not both.
    **params
        The measure's parameters (TWED: ``nu``, ``lmbda``, ``degree``); DTW takes none. A parameter
        the measure does not have is a ValueError, never ignored.

    Notes
    -----
    The band (see the README, "The measure"): for equal lengths the cells with ``|i - j| <=
    radius``; for unequal lengths aeon 1.6's band, which follows the diagonal from corner to
    corner, computed in exact integers (aeon's floating-point floors make its band one cell
    narrower at a few length pairs, the first being 22 and 43). TWED's window is applied as in
    aeon's ``twe_distance``: on the samples, without the padding sample in front.

    Examples
    --------
    >>> wavewarp.Measure("dtw", window=0.1)
    Measure('dtw', window=0.1)
    >>> wavewarp.Measure("twed", nu=0.01)
    Measure('twed', nu=0.01, lmbda=1.0, degree=2)
    """

    __slots__ = ("_name", "_params", "_window", "_radius", "_spec")

    def __init__(
        self, name: str = "dtw", *, window: Optional[float] = None, radius: Optional[int] = None, **params: Any
    ) -> None:
        key = _check_name(name)
        full = _check_params(key, params)
        window, radius = _check_window(window, radius)
        if key == "twed":
            spec = (key, full["nu"], full["lmbda"], full["degree"], radius, window)
        elif key == "softdtw":
            full = {"gamma": check_real(full["gamma"], "gamma", "> 0"),
                    "divergence": check_flag(full["divergence"], "divergence")}
            spec = (key, full["gamma"], full["divergence"], None, radius, window)
        else:
            spec = (key, None, None, None, radius, window)
        _measure_check(spec)  # the library's checks of the values (ValueError / TypeError)
        if key == "twed":  # stored as the numbers the library reads
            full = {"nu": float(full["nu"]), "lmbda": float(full["lmbda"]), "degree": operator.index(full["degree"])}
            spec = (key, full["nu"], full["lmbda"], full["degree"], radius, window)
        setter = object.__setattr__
        setter(self, "_name", key)
        setter(self, "_params", full)
        setter(self, "_window", window)
        setter(self, "_radius", radius)
        setter(self, "_spec", spec)

    # ---------------------------------------------------------------------------- properties

    @property
    def name(self) -> str:
        """``"dtw"`` or ``"twed"``."""
        return self._name

    @property
    def params(self) -> Dict[str, Any]:
        """The parameters, defaults included (a copy): TWED's nu, lmbda, degree; ``{}`` for DTW."""
        return dict(self._params)

    @property
    def window(self) -> Optional[float]:
        """aeon's window fraction, or None."""
        return self._window

    @property
    def radius(self) -> Optional[int]:
        """The fixed radius in samples, or None."""
        return self._radius

    @property
    def uses_stamps(self) -> bool:
        """Whether the measure reads time stamps (TWED does; DTW does not and rejects them)."""
        return self._name in _STAMPED

    def radius_for(self, n: int, m: int) -> Optional[int]:
        """The radius used for a pair of series of lengths n and m (None: no window).

        ``int(window * min(n, m))`` for a window fraction, computed in double as aeon does; the
        radius itself for a fixed one.
        """
        return _measure_radius(self._spec, operator.index(n), operator.index(m))

    def __getattr__(self, attr: str) -> Any:
        # only called for names that are not found otherwise: nu, lmbda, degree of a TWED measure
        try:
            params = object.__getattribute__(self, "_params")
        except AttributeError:
            params = {}
        if attr in params:
            return params[attr]
        raise AttributeError(f"{type(self).__name__} has no attribute {attr!r}")

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError("a Measure is immutable: make a new one")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError("a Measure is immutable")

    def __repr__(self) -> str:
        parts = [repr(self._name)] + [f"{k}={v!r}" for k, v in self._params.items()]
        if self._window is not None:
            parts.append(f"window={self._window!r}")
        if self._radius is not None:
            parts.append(f"radius={self._radius!r}")
        return f"Measure({', '.join(parts)})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Measure):
            return NotImplemented
        return self._spec == other._spec

    def __hash__(self) -> int:
        return hash(self._spec)

    def __reduce__(self) -> Any:
        return (_rebuild, (self._name, self._window, self._radius, self._params))

    def __copy__(self) -> "Measure":
        return self

    def __deepcopy__(self, memo: Any) -> "Measure":
        return self


def _rebuild(name: str, window: Optional[float], radius: Optional[int], params: Dict[str, Any]) -> Measure:
    return Measure(name, window=window, radius=radius, **params)


MeasureLike = Union[str, Measure]


def resolve(measure: MeasureLike, window: Any, radius: Any, params: Mapping[str, Any]) -> Measure:
    """The Measure of a call's ``measure``, ``window``, ``radius`` and ``**params`` arguments."""
    if isinstance(measure, Measure):
        if window is not None or radius is not None or params:
            given = [k for k, v in (("window", window), ("radius", radius)) if v is not None] + sorted(params)
            raise ValueError(
                f"measure is a Measure, which holds its parameters and window: {', '.join(given)} cannot "
                "also be given (make the Measure with them)"
            )
        return measure
    return Measure(measure, window=window, radius=radius, **params)


def check_stamps(measure: Measure, **stamps: Any) -> None:
    """ValueError when time stamps are given to a measure that does not use them."""
    if measure.uses_stamps:
        return
    for name, value in stamps.items():
        if value is not None:
            raise ValueError(f"{name}: {measure.name} does not use time stamps; leave them out")
