"""Shared fixtures: the project's shared data (golden cases, data sets) and small helpers."""

from __future__ import annotations

import os
import signal
import warnings
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True, scope="session")
def sigint_raises_keyboard_interrupt():
    """The Ctrl-C tests send SIGINT to this process and expect KeyboardInterrupt. A shell starts a
    background job with SIGINT ignored, and Python then installs no handler for it: the tests give
    it Python's own handler for the session, so they test the library, not how pytest was started."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, previous)


def cli_path() -> Path:
    """The wavewarp CLI: $WW_CLI (scripts/test.sh sets it to its build's), else build/src/cli/wavewarp
    (or build-cpu/) beside the package's sources; the test skips with the reason when there is none."""
    given = os.environ.get("WW_CLI")
    if given:
        path = Path(given)
        assert path.is_file(), f"WW_CLI={given} is not a file"
        return path
    for build in ("build", "build-cpu"):
        path = REPO_ROOT / build / "src" / "cli" / "wavewarp"
        if path.is_file():
            return path
    pytest.skip("no wavewarp CLI built (set WW_CLI, or build with cmake -S . -B build)")


def shared_dir() -> Optional[Path]:
    """WW_SHARED_DIR, else ../shared beside the repository (as the C tests look for it)."""
    path = Path(os.environ.get("WW_SHARED_DIR", REPO_ROOT.parent / "shared"))
    return path if path.is_dir() else None


class GoldenCase(NamedTuple):
    ident: int
    a: np.ndarray  # (nA, dim)
    ta: np.ndarray
    b: np.ndarray
    tb: np.ndarray
    degree: int
    nu: float
    lmbda: float
    expect: float


def load_golden() -> List[GoldenCase]:
    """Parses golden/twed.txt (its header describes the format)."""
    base = shared_dir()
    path = base / "golden" / "twed.txt" if base else None
    if path is None or not path.is_file():
        pytest.skip(f"golden cases not found (looked for {path}); set WW_SHARED_DIR")
    cases: List[GoldenCase] = []
    header: List[str] = []
    fields: Dict[str, List[float]] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split()
        if words[0] == "case":
            header = words
            fields = {}
        elif words[0] in ("A", "TA", "B", "TB"):
            fields[words[0]] = [float(w) for w in words[1:]]
        elif words[0] == "expect":
            _, ident, na, nb, dim, degree, nu, lmbda = header
            na, nb, dim = int(na), int(nb), int(dim)
            cases.append(
                GoldenCase(
                    int(ident),
                    np.array(fields["A"]).reshape(na, dim),
                    np.array(fields["TA"]),
                    np.array(fields["B"]).reshape(nb, dim),
                    np.array(fields["TB"]),
                    int(degree),
                    float(nu),
                    float(lmbda),
                    float(words[1]),
                )
            )
    assert cases, f"no cases parsed from {path}"
    return cases


@pytest.fixture(scope="session")
def golden() -> List[GoldenCase]:
    return load_golden()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240917)


def reference_twed(a, b, ta=None, tb=None, nu=0.001, lmbda=1.0, degree=2) -> float:
    """Marteau's recurrence over the full matrix, in plain NumPy: the tests' independent oracle.

    a, b: (length,) or (length, dim); ta, tb: stamps or None for 1..length.
    """
    a = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    b = np.asarray(b, dtype=np.float64).reshape(len(b), -1)
    na, nb = len(a), len(b)
    ta = np.arange(1, na + 1, dtype=np.float64) if ta is None else np.asarray(ta, dtype=np.float64)
    tb = np.arange(1, nb + 1, dtype=np.float64) if tb is None else np.asarray(tb, dtype=np.float64)
    # sample 0: the zero vector at time 0
    a = np.vstack([np.zeros((1, a.shape[1])), a])
    b = np.vstack([np.zeros((1, b.shape[1])), b])
    ta = np.concatenate([[0.0], ta])
    tb = np.concatenate([[0.0], tb])

    def norm(v: np.ndarray) -> float:
        return float(np.sum(np.abs(v) ** degree) ** (1.0 / degree))

    D = np.full((na + 1, nb + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, na + 1):
        del_a = norm(a[i] - a[i - 1]) + nu * (ta[i] - ta[i - 1]) + lmbda
        for j in range(1, nb + 1):
            del_b = norm(b[j] - b[j - 1]) + nu * (tb[j] - tb[j - 1]) + lmbda
            match = (
                D[i - 1, j - 1]
                + norm(a[i] - b[j])
                + norm(a[i - 1] - b[j - 1])
                + nu * (abs(ta[i] - tb[j]) + abs(ta[i - 1] - tb[j - 1]))
            )
            D[i, j] = min(D[i - 1, j] + del_a, D[i, j - 1] + del_b, match)
    return float(D[na, nb])


# ------------------------------------------------------------------------------ aeon's data sets

#: aeon's classification data sets shipped inside its package (read offline, nothing downloaded):
#: name -> (equal lengths, multivariate)
AEON_DATASETS = {
    "GunPoint": (True, False),
    "ItalyPowerDemand": (True, False),
    "ArrowHead": (True, False),
    "UnitTest": (True, False),
    "OSULeaf": (True, False),
    "ACSF1": (True, False),
    "BasicMotions": (True, True),
    "JapaneseVowels": (False, True),
    "PickupGestureWiimoteZ": (False, False),
}


def load_aeon_dataset(name: str, split: str):
    """(X, y) of one of aeon's bundled data sets, in aeon's layout: a 3-D array (n_cases,
    n_channels, n_timepoints) or, for unequal lengths, a list of (n_channels, n_timepoints)."""
    datasets = pytest.importorskip("aeon.datasets", reason="aeon is not installed: pip install aeon")
    loaders = {
        "GunPoint": "load_gunpoint",
        "ItalyPowerDemand": "load_italy_power_demand",
        "ArrowHead": "load_arrow_head",
        "BasicMotions": "load_basic_motions",
        "JapaneseVowels": "load_japanese_vowels",
        "OSULeaf": "load_osuleaf",  # deprecated in aeon 1.6, to go in 1.7
        "ACSF1": "load_acsf1",  # likewise
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the deprecation notices
        if name in loaders:
            loader = getattr(datasets, loaders[name], None)
            if loader is None:
                pytest.skip(f"this aeon ({datasets.__name__}) no longer ships {name}")
            return loader(split=split)
        return datasets.load_classification(name, split=split, extract_path=None)  # shipped with aeon


def aeon_to_wavewarp(X):
    """aeon's (n_cases, n_channels, n_timepoints) array or list of (n_channels, n_timepoints) -> ours."""
    if isinstance(X, np.ndarray):
        return X.transpose(0, 2, 1)
    return [x.T for x in X]
