""".ts files (the UEA/UCR archive's format) written by aeon's own writer are read by the wavewarp CLI
as aeon reads them: the same series and labels, hence the same distances as wavewarp's Python
functions on aeon's arrays; and the CLI classifies aeon's BasicMotions, exported so, as wavewarp's
KNeighborsClassifier does.

The CLI binary: $WW_CLI (scripts/test.sh sets it to its build's), else build/src/cli/wavewarp
beside the package's sources; the tests skip with the reason when there is none.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import List

import numpy as np
import pytest

import wavewarp
from conftest import cli_path

aeon_datasets = pytest.importorskip("aeon.datasets")
save_to_ts_file = getattr(aeon_datasets, "save_to_ts_file", None) or getattr(aeon_datasets, "write_to_ts_file", None)


def _run(*args: str, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(cli_path()), *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    if ok:
        assert done.returncode == 0, f"wavewarp {' '.join(args)} -> {done.returncode}:\n{done.stderr}"
    return done


def _write(tmp_path: Path, X, y=None, label_type=None, name="data", suffix="") -> Path:
    if save_to_ts_file is None:
        pytest.skip("this aeon has no .ts writer (save_to_ts_file / write_to_ts_file)")
    save_to_ts_file(X, y, label_type=label_type, path=str(tmp_path), problem_name=name, file_suffix=suffix)
    return tmp_path / f"{name}{suffix}.ts"


def _ours(X) -> List[np.ndarray]:
    """aeon's (n_channels, n_timepoints) cases as wavewarp's (length, dim) series."""
    return [np.asarray(case, dtype=np.float64).T for case in X]


def _cli_matrix(tmp_path: Path, ts: Path, *options: str) -> np.ndarray:
    out = tmp_path / "d.npy"
    _run("pairwise", ts.name, "-o", out.name, "--backend", "cpu", "--quiet", *options, cwd=tmp_path)
    return np.load(out)


@pytest.mark.parametrize("measure", ["twed", "dtw"])
def test_equal_length_multivariate(tmp_path, measure):
    X, y = aeon_datasets.load_basic_motions(split="test")
    X = X[:12]
    ts = _write(tmp_path, X, y[:12], "classification", "BasicMotions", "_TEST")
    text = ts.read_text()
    assert "@dimension 6" in text and "@classLabel true" in text  # aeon's spelling, read as the archive's
    got = _cli_matrix(tmp_path, ts, "--measure", measure)
    want = wavewarp.pairwise(X.transpose(0, 2, 1), measure=measure, backend="cpu")
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    # the same arrays as .npy (count, length, dim): the CLI reads both to the same bits
    np.save(tmp_path / "same.npy", X.transpose(0, 2, 1))
    assert np.array_equal(_cli_matrix(tmp_path, tmp_path / "same.npy", "--measure", measure), got)


def test_unequal_lengths_and_no_labels(tmp_path):
    X, _ = aeon_datasets.load_japanese_vowels(split="train")
    X = X[:15]
    assert len({case.shape[1] for case in X}) > 1  # ragged
    ts = _write(tmp_path, X, None, None, "JapaneseVowels")  # no labels: each case ends with ':'
    assert "@equalLength false" in ts.read_text()
    got = _cli_matrix(tmp_path, ts)
    np.testing.assert_allclose(got, wavewarp.pairwise(_ours(X), measure="twed", backend="cpu"), rtol=1e-13)
    # the same series NaN-padded in a .npy (the CLI cuts trailing NaN padding): the same bits
    longest = max(case.shape[1] for case in X)
    padded = np.full((len(X), longest, X[0].shape[0]), np.nan)
    for i, series in enumerate(_ours(X)):
        padded[i, : len(series)] = series
    np.save(tmp_path / "same.npy", padded)
    assert np.array_equal(_cli_matrix(tmp_path, tmp_path / "same.npy"), got)
    # and a classify of a file without labels says so
    done = _run("classify", ts.name, ts.name, cwd=tmp_path, ok=False)
    assert done.returncode == 1 and "has no class labels" in done.stderr


def test_univariate_regression_target(tmp_path):
    X, y = aeon_datasets.load_covid_3month(split="train")
    X, y = X[:10], y[:10]
    ts = _write(tmp_path, X, y, "regression", "Covid3Month")
    assert "@targetlabel true" in ts.read_text().lower()
    got = _cli_matrix(tmp_path, ts, "--measure", "dtw", "--window", "3")
    np.testing.assert_allclose(got, wavewarp.pairwise(X[:, 0, :], measure="dtw", radius=3, backend="cpu"),
                               rtol=1e-13)
    # the target is read as the case's label: a 1-NN "classify" of the file against itself finds
    # each case itself, so every predicted target is the case's own
    done = _run("classify", ts.name, ts.name, "-o", "pred.csv", "--backend", "cpu", cwd=tmp_path)
    assert "accuracy: 1.0000" in done.stdout
    rows = np.loadtxt(tmp_path / "pred.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(rows[:, 1], np.asarray(y, dtype=np.float64))


def test_missing_values_are_an_error_naming_the_line(tmp_path):
    X, y = aeon_datasets.load_gunpoint(split="test")
    X = X[:5].astype(np.float64).copy()
    X[3, 0, 20] = np.nan  # aeon writes it as NaN, with "@missing True"
    ts = _write(tmp_path, X, y[:5], "classification", "GunPoint")
    text = ts.read_text()
    assert "@missing True" in text
    line = text.splitlines().index(next(l for l in text.splitlines() if l.startswith("@data"))) + 5
    done = _run("pairwise", ts.name, "-o", "d.npy", cwd=tmp_path, ok=False)
    assert done.returncode == 1
    assert f"GunPoint.ts:{line}: dimension 1, value 21: missing value (NaN) inside a series" in done.stderr
    assert not (tmp_path / "d.npy").exists()
    # '?', the archive's own mark, likewise
    ts.write_text(text.replace("NaN", "?"))
    done = _run("pairwise", ts.name, "-o", "d.npy", cwd=tmp_path, ok=False)
    assert done.returncode == 1 and f"GunPoint.ts:{line}: dimension 1, value 21: missing value '?'" in done.stderr


def test_classify_basic_motions(tmp_path):
    """aeon's BasicMotions (bundled with aeon), exported with aeon's writer, classified by the CLI:
    the accuracy and every prediction as wavewarp's KNeighborsClassifier gives them."""
    X_train, y_train = aeon_datasets.load_basic_motions(split="train")
    X_test, y_test = aeon_datasets.load_basic_motions(split="test")
    train = _write(tmp_path, X_train, y_train, "classification", "BasicMotions", "_TRAIN")
    test = _write(tmp_path, X_test, y_test, "classification", "BasicMotions", "_TEST")
    done = _run("classify", train.name, test.name, "-o", "pred.csv", "--backend", "cpu", cwd=tmp_path)
    accuracy = float(done.stdout.split("accuracy:")[1].split()[0])

    clf = wavewarp.KNeighborsClassifier("twed", backend="cpu").fit(X_train.transpose(0, 2, 1), y_train)
    predicted = clf.predict(X_test.transpose(0, 2, 1))
    assert accuracy == pytest.approx(np.mean(predicted == y_test), abs=5e-5)
    # class names are numbered by their place in @classLabel (aeon writes them sorted)
    names = list(np.unique(y_train))
    rows = np.loadtxt(tmp_path / "pred.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(rows[:, 1], [names.index(label) for label in y_test])
    np.testing.assert_array_equal(rows[:, 2], [names.index(label) for label in predicted])
    assert accuracy > 0.5  # well above chance (4 classes); 0.725 with TWED defaults

    # a test file of three classes only: aeon's header then names those three, numbered 0..2 in
    # that file; classify renumbers them by name as the training file's
    keep = y_test != "standing"
    assert len(np.unique(y_test[keep])) == 3
    subset = _write(tmp_path, X_test[keep], y_test[keep], "classification", "BasicMotions", "_TEST3")
    assert "@classLabel true badminton running walking" in subset.read_text()
    done = _run("classify", train.name, subset.name, "-o", "pred3.csv", "--backend", "cpu", cwd=tmp_path)
    accuracy3 = float(done.stdout.split("accuracy:")[1].split()[0])
    assert accuracy3 == pytest.approx(np.mean(predicted[keep] == y_test[keep]), abs=5e-5)
    rows = np.loadtxt(tmp_path / "pred3.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(rows[:, 1], [names.index(label) for label in y_test[keep]])
    np.testing.assert_array_equal(rows[:, 2], [names.index(label) for label in predicted[keep]])
