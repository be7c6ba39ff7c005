"""The Python API: golden cases, shapes, dtypes, layouts, ragged collections, stamps, errors."""

from __future__ import annotations

import numpy as np
import pytest

import wavewarp
from conftest import reference_twed

# ----------------------------------------------------------------------------------- golden cases


def test_golden_cases_through_twed(golden):
    for case in golden:
        got = wavewarp.twed(case.a, case.b, case.ta, case.tb, nu=case.nu, lmbda=case.lmbda,
                            degree=case.degree, backend="cpu")
        assert isinstance(got, float)
        assert got == pytest.approx(case.expect, rel=1e-12), f"case {case.ident}"


def test_golden_cases_univariate_as_1d(golden):
    univariate = [c for c in golden if c.a.shape[1] == 1]
    assert univariate
    for case in univariate:
        got = wavewarp.twed(case.a[:, 0], case.b[:, 0], case.ta, case.tb, case.nu, case.lmbda,
                            case.degree)
        assert got == pytest.approx(case.expect, rel=1e-12), f"case {case.ident}"


def test_golden_cases_through_pairwise_and_knn(golden):
    for case in golden:
        D = wavewarp.twed_pairwise([case.a], [case.b], tX=[case.ta], tY=[case.tb], nu=case.nu,
                                   lmbda=case.lmbda, degree=case.degree)
        assert D.shape == (1, 1)
        assert D[0, 0] == pytest.approx(case.expect, rel=1e-12), f"case {case.ident}"
        idx, dist = wavewarp.twed_knn([case.a], [case.b], 1, tqueries=[case.ta], tX=[case.tb],
                                      nu=case.nu, lmbda=case.lmbda, degree=case.degree)
        assert idx.tolist() == [[0]]
        assert dist[0, 0] == pytest.approx(case.expect, rel=1e-12), f"case {case.ident}"


def test_golden_cases_in_float32(golden):
    for case in golden:
        scale = max(np.abs(case.a).max(), np.abs(case.b).max(), 1.0)
        got = wavewarp.twed(case.a.astype(np.float32), case.b.astype(np.float32),
                            case.ta.astype(np.float32), case.tb.astype(np.float32),
                            case.nu, case.lmbda, case.degree)
        assert isinstance(got, np.float32)
        # float32 inputs round the data: compare relative to the distance's magnitude
        assert abs(float(got) - case.expect) <= 1e-5 * max(case.expect, scale), f"case {case.ident}"


def test_reference_oracle_matches_golden(golden):
    """The NumPy oracle used below is itself checked against the golden file."""
    for case in golden[:20]:
        got = reference_twed(case.a, case.b, case.ta, case.tb, case.nu, case.lmbda, case.degree)
        assert got == pytest.approx(case.expect, rel=1e-12)


# ----------------------------------------------------------------------------------- one pair


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("dim", [1, 3])
def test_twed_matches_oracle(rng, degree, dim):
    a = rng.normal(size=(17, dim))
    b = rng.normal(size=(23, dim))
    ta = np.cumsum(rng.uniform(0.1, 2.0, size=17))
    tb = np.cumsum(rng.uniform(0.1, 2.0, size=23))
    for nu, lmbda in [(0.001, 1.0), (0.5, 0.25), (0.0, 0.0)]:
        want = reference_twed(a, b, ta, tb, nu, lmbda, degree)
        assert wavewarp.twed(a, b, ta, tb, nu, lmbda, degree) == pytest.approx(want, rel=1e-12)


def test_twed_keywords_defaults_and_symmetry(rng):
    a, b = rng.normal(size=40), rng.normal(size=31)
    d = wavewarp.twed(a, b)
    assert d == wavewarp.twed(a, b, None, None, 0.001, 1.0, 2, "auto")
    assert d == pytest.approx(wavewarp.twed(b, a), rel=1e-14)
    assert d == pytest.approx(reference_twed(a, b), rel=1e-12)
    assert wavewarp.twed(a, a) == 0.0
    assert wavewarp.twed(a, b, backend="cpu", threads=1) == pytest.approx(d, rel=1e-12)  # GPU under auto


def test_1d_and_column_are_the_same_series(rng):
    a, b = rng.normal(size=25), rng.normal(size=30)
    assert wavewarp.twed(a, b) == wavewarp.twed(a[:, None], b[:, None])


def test_array_likes_and_integer_input():
    assert wavewarp.twed([1, 2, 3], (3, 2, 1)) == pytest.approx(
        reference_twed([1.0, 2, 3], [3.0, 2, 1]), rel=1e-14)
    d = wavewarp.twed(np.arange(5), np.arange(5)[::-1].copy())
    assert isinstance(d, float)


@pytest.mark.parametrize(
    "transform",
    [
        lambda x: np.asfortranarray(x),
        lambda x: np.repeat(x, 2, axis=0)[::2],  # strided rows
        lambda x: x[::-1][::-1],  # negative-stride view of the same values
        lambda x: x.astype(x.dtype.newbyteorder()),  # non-native byte order
        lambda x: np.lib.stride_tricks.as_strided(x, x.shape, x.strides),
    ],
    ids=["fortran", "strided", "reversed-view", "byteswapped", "as_strided"],
)
def test_any_memory_layout(rng, transform):
    a = rng.normal(size=(20, 3))
    b = rng.normal(size=(26, 3))
    want = wavewarp.twed(a, b)
    assert wavewarp.twed(transform(a), transform(b)) == want
    X = rng.normal(size=(5, 12, 3))
    np.testing.assert_array_equal(wavewarp.twed_pairwise(transform(X)), wavewarp.twed_pairwise(X))
    np.testing.assert_array_equal(wavewarp.twed_pairwise(X[:, ::2]), wavewarp.twed_pairwise(X[:, ::2].copy()))


# ----------------------------------------------------------------------------------- dtypes


def test_result_dtype_follows_input(rng):
    a64, b64 = rng.normal(size=(30, 2)), rng.normal(size=(35, 2))
    a32, b32 = a64.astype(np.float32), b64.astype(np.float32)
    assert type(wavewarp.twed(a64, b64)) is float
    assert type(wavewarp.twed(a32, b32)) is np.float32
    assert type(wavewarp.twed(a32, b64)) is float  # mixed: computed as float64
    X32 = rng.normal(size=(6, 20, 2)).astype(np.float32)
    assert wavewarp.twed_pairwise(X32).dtype == np.float32
    assert wavewarp.twed_pairwise(X32, X32.astype(np.float64)).dtype == np.float64
    assert wavewarp.twed_pairwise(X32.astype(np.float64)).dtype == np.float64
    assert wavewarp.twed_pairwise(X32.astype(np.int32)).dtype == np.float64
    idx, dist = wavewarp.twed_knn(X32[:2], X32, 3)
    assert idx.dtype == np.intp and dist.dtype == np.float32
    idx, dist = wavewarp.twed_knn(X32[:2].astype(np.float64), X32, 3)
    assert dist.dtype == np.float64


def test_float32_and_float64_agree(rng):
    X = rng.normal(size=(12, 64, 3))
    D64 = wavewarp.twed_pairwise(X)
    D32 = wavewarp.twed_pairwise(X.astype(np.float32))
    np.testing.assert_allclose(D32, D64, rtol=2e-6, atol=1e-6)
    a, b = X[0], X[1]
    # a GPU computes float32 pairs in float32: a little more rounding than the CPU's float64 sweep
    assert float(wavewarp.twed(a.astype(np.float32), b.astype(np.float32))) == pytest.approx(
        wavewarp.twed(a, b), rel=1e-5)


# ----------------------------------------------------------------------------------- collections


def test_pairwise_shapes(rng):
    X3 = rng.normal(size=(7, 15, 2))
    D = wavewarp.twed_pairwise(X3)
    assert D.shape == (7, 7)
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    assert D[2, 5] == pytest.approx(wavewarp.twed(X3[2], X3[5]), rel=1e-14)
    Y3 = rng.normal(size=(4, 11, 2))
    DY = wavewarp.twed_pairwise(X3, Y3)
    assert DY.shape == (7, 4)
    assert DY[6, 3] == pytest.approx(wavewarp.twed(X3[6], Y3[3]), rel=1e-14)
    # 2-D collections are univariate (n_series, length), like aeon and scikit-learn
    X2 = rng.normal(size=(5, 9))
    D2 = wavewarp.twed_pairwise(X2)
    assert D2.shape == (5, 5)
    assert D2[0, 4] == pytest.approx(wavewarp.twed(X2[0], X2[4]), rel=1e-14)
    # a 1-D collection is refused (issue 12): one series is X2[0][None]
    assert wavewarp.twed_pairwise(X2[0][None], X2).shape == (1, 5)


def test_ragged_lists(rng):
    lengths = [5, 17, 1, 33, 17, 8]
    series = [rng.normal(size=n) for n in lengths]
    D = wavewarp.twed_pairwise(series)
    assert D.shape == (6, 6)
    for i in range(6):
        for j in range(6):
            want = 0.0 if i == j else wavewarp.twed(series[i], series[j])
            assert D[i, j] == pytest.approx(want, rel=1e-13)
    multi = [rng.normal(size=(n, 4)) for n in lengths]
    others = [rng.normal(size=(n, 4)) for n in (3, 40)]
    DM = wavewarp.twed_pairwise(multi, others)
    assert DM.shape == (6, 2)
    assert DM[3, 1] == pytest.approx(reference_twed(multi[3], others[1]), rel=1e-12)
    # tuples, object arrays and mixed float32/float64 members are collections too
    obj = np.empty(len(series), dtype=object)
    obj[:] = series
    np.testing.assert_array_equal(wavewarp.twed_pairwise(obj), D)
    np.testing.assert_array_equal(wavewarp.twed_pairwise(tuple(series)), D)


def test_equal_length_list_equals_array(rng):
    X = rng.normal(size=(6, 21, 2))
    np.testing.assert_array_equal(wavewarp.twed_pairwise(list(X)), wavewarp.twed_pairwise(X))
    np.testing.assert_array_equal(wavewarp.twed_pairwise(list(X), X), wavewarp.twed_pairwise(X, X))


def test_knn(rng):
    X = rng.normal(size=(30, 20))
    Q = X[[3, 7]] + 1e-3
    idx, dist = wavewarp.twed_knn(Q, X, 4)
    assert idx.shape == dist.shape == (2, 4)
    assert idx[:, 0].tolist() == [3, 7]
    full = wavewarp.twed_pairwise(Q, X)
    np.testing.assert_allclose(dist, np.take_along_axis(full, idx, axis=1), rtol=1e-14)
    np.testing.assert_array_equal(idx, np.argsort(full, axis=1, kind="stable")[:, :4])
    # ragged queries and data
    Xr = [rng.normal(size=n) for n in (10, 30, 20, 5)]
    idx, dist = wavewarp.twed_knn([Xr[2]], Xr, 4)
    assert idx[0, 0] == 2 and dist[0, 0] == 0.0
    idx1, _ = wavewarp.twed_knn(Xr[1][None], Xr, 1)  # one query
    assert idx1.tolist() == [[1]]


def test_pairwise_stamps(rng):
    X = rng.normal(size=(4, 10))
    T = np.cumsum(rng.uniform(0.5, 1.5, size=(4, 10)), axis=1)
    D = wavewarp.twed_pairwise(X, tX=T, nu=0.3)
    assert D[1, 2] == pytest.approx(reference_twed(X[1], X[2], T[1], T[2], nu=0.3), rel=1e-12)
    shared = np.arange(10) * 2.0
    Ds = wavewarp.twed_pairwise(X, tX=shared, nu=0.3)
    assert Ds[0, 3] == pytest.approx(reference_twed(X[0], X[3], shared, shared, nu=0.3), rel=1e-12)
    ragged = [rng.normal(size=n) for n in (4, 9)]
    stamps = [np.cumsum(rng.uniform(0, 1, size=n)) for n in (4, 9)]
    Dr = wavewarp.twed_pairwise(ragged, tX=stamps, nu=0.2)
    assert Dr[0, 1] == pytest.approx(reference_twed(ragged[0], ragged[1], stamps[0], stamps[1], nu=0.2),
                                     rel=1e-12)
    # default stamps are 1..n
    np.testing.assert_array_equal(wavewarp.twed_pairwise(X, tX=np.arange(1, 11)), wavewarp.twed_pairwise(X))


def test_contexts_are_reused(rng):
    a, b = rng.normal(size=50), rng.normal(size=50)
    wavewarp.twed(a, b)
    wavewarp.twed_pairwise(np.stack([a, b]))
    before = wavewarp._wavewarp._contexts_created()
    for _ in range(200):
        wavewarp.twed(a, b)
        wavewarp.twed_pairwise(np.stack([a, b]))
    assert wavewarp._wavewarp._contexts_created() == before


def test_information():
    assert wavewarp.describe("cpu", 1).startswith("cpu (1 thread")
    assert isinstance(wavewarp.cuda_available(), bool)
    assert wavewarp.library_version == wavewarp.__version__
    assert issubclass(wavewarp.WavewarpError, RuntimeError)


# ----------------------------------------------------------------------------------- bad input

_a = np.linspace(0.0, 1.0, 8)
_X = np.zeros((3, 8))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: wavewarp.twed(np.zeros(0), _a), ValueError, "empty"),
        (lambda: wavewarp.twed(np.zeros((4, 0)), np.zeros((4, 0))), ValueError, "shape"),
        (lambda: wavewarp.twed(np.array([1.0, np.nan]), _a), ValueError, "NaN or infinite"),
        (lambda: wavewarp.twed(_a, np.array([np.inf])), ValueError, "NaN or infinite"),
        (lambda: wavewarp.twed(_a, _a, nu=-1.0), ValueError, "invalid parameter"),
        (lambda: wavewarp.twed(_a, _a, lmbda=-0.5), ValueError, "invalid parameter"),
        (lambda: wavewarp.twed(_a, _a, nu=float("nan")), ValueError, "invalid parameter"),
        (lambda: wavewarp.twed(_a, _a, degree=0), ValueError, "degree"),
        (lambda: wavewarp.twed(_a, _a, degree=2.5), TypeError, "integer"),
        (lambda: wavewarp.twed(_a, _a, nu="x"), TypeError, None),
        (lambda: wavewarp.twed(_a, _a, _a[::-1].copy(), None), ValueError, "stamps"),
        (lambda: wavewarp.twed(_a, _a, np.arange(3.0), None), ValueError, "time stamps"),
        # beyond half the dtype's range: differences would overflow (NaN with nu = 0)
        (lambda: wavewarp.twed(_a, _a, np.r_[np.arange(7.0), 1e308], None, nu=0.0), ValueError, "stamps"),
        (lambda: wavewarp.twed(_a.astype(np.float32), _a.astype(np.float32),
                               np.r_[np.arange(7.0), 3e38].astype(np.float32), None), ValueError, "stamps"),
        (lambda: wavewarp.twed(_a, _a, None, np.ones((8, 2))), ValueError, "1-D"),
        (lambda: wavewarp.twed(np.zeros((8, 2)), np.zeros((8, 3))), ValueError, "same dim"),
        (lambda: wavewarp.twed(np.zeros((2, 8, 1)), _a), ValueError, "twed_pairwise"),
        (lambda: wavewarp.twed(3.0, _a), ValueError, "0 dimensions"),
        (lambda: wavewarp.twed(["a", "b"], _a), ValueError, "convert"),
        (lambda: wavewarp.twed(_a + 1j, _a), ValueError, "convert"),
        (lambda: wavewarp.twed(object(), _a), ValueError, "convert|array of numbers"),
        (lambda: wavewarp.twed([[1.0], [2.0, 3.0]], _a), ValueError, "array of numbers"),
        (lambda: wavewarp.twed(_a, _a, backend="gpu"), ValueError, "backend"),
        (lambda: wavewarp.twed(_a, _a, threads=0), ValueError, "threads"),
        (lambda: wavewarp.twed_pairwise(np.zeros((2, 3, 4, 5))), ValueError, "4 dimensions"),
        (lambda: wavewarp.twed_pairwise([]), ValueError, "empty"),
        (lambda: wavewarp.twed_pairwise(np.zeros((0, 5))), ValueError, "empty"),
        (lambda: wavewarp.twed_pairwise([_a, np.zeros(0)]), ValueError, "empty"),
        (lambda: wavewarp.twed_pairwise([_a, np.zeros((8, 2))]), ValueError, "dim"),
        (lambda: wavewarp.twed_pairwise([_a, np.zeros((2, 2, 2))]), ValueError, "dimensions"),
        (lambda: wavewarp.twed_pairwise(_X, np.zeros((2, 8, 3))), ValueError, "dim"),
        (lambda: wavewarp.twed_pairwise(np.full((3, 8), np.nan)), ValueError, "NaN"),
        (lambda: wavewarp.twed_pairwise(_X, tX=np.ones((3, 7))), ValueError, "time stamps"),
        (lambda: wavewarp.twed_pairwise([_a], tX=[np.ones(7)]), ValueError, "shape"),
        (lambda: wavewarp.twed_pairwise([_a], tX=np.ones(8)), ValueError, "list"),
        (lambda: wavewarp.twed_pairwise(_X, tX=np.ones((3, 8)) * [[1], [2], [3]] - np.arange(8)),
         ValueError, "stamps"),
        (lambda: wavewarp.twed_pairwise(_X, tY=np.ones((3, 8))), ValueError, "tY"),
        (lambda: wavewarp.twed_pairwise(_X, backend="tpu"), ValueError, "backend"),
        (lambda: wavewarp.twed_pairwise(_X, progress="yes"), TypeError, "progress"),
        (lambda: wavewarp.twed_pairwise(np.array([["x", "y"]])), ValueError, "convert"),
        (lambda: wavewarp.twed_knn(_X, _X, 0), ValueError, "k must be"),
        (lambda: wavewarp.twed_knn(_X, _X, 4), ValueError, "k must be"),
        (lambda: wavewarp.twed_knn(_X, _X, 1.5), TypeError, "integer"),
        (lambda: wavewarp.twed_knn(np.zeros((1, 8, 2)), _X, 1), ValueError, "dim"),
        (lambda: wavewarp.twed_knn(_X, _X, 1, nu=-1), ValueError, "invalid parameter"),
    ],
)
def test_bad_input_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "status, error",
    [(1, ValueError), (2, ValueError), (3, ValueError), (4, ValueError), (5, ValueError), (6, ValueError),
     (7, ValueError), (8, MemoryError), (9, MemoryError), (10, wavewarp.WavewarpError),
     (11, wavewarp.WavewarpError), (12, wavewarp.WavewarpError), (13, wavewarp.WavewarpError),
     (14, wavewarp.WavewarpError), (15, ValueError), (16, ValueError), (17, wavewarp.WavewarpError),
     (18, wavewarp.WavewarpError), (19, wavewarp.WavewarpError), (20, ValueError), (99, wavewarp.WavewarpError)],
)
def test_status_mapping(status, error):
    """Every C status becomes the documented exception, with the C library's message."""
    with pytest.raises(error) as info:
        wavewarp._wavewarp._raise_status(status)
    assert str(info.value)
    assert type(info.value) is error


def test_cuda_backend_without_gpu_is_a_wavewarp_error():
    if wavewarp.cuda_available():
        pytest.skip("a GPU is usable here: backend='cuda' works")
    with pytest.raises(wavewarp.WavewarpError, match="CUDA|GPU"):
        wavewarp.twed(_a, _a, backend="cuda")
    with pytest.raises(wavewarp.WavewarpError, match="CUDA|GPU"):
        wavewarp.twed_pairwise(_X, backend="cuda")


def test_errors_leave_the_module_usable(rng):
    a = rng.normal(size=10)
    for _ in range(50):
        with pytest.raises(ValueError):
            wavewarp.twed(a, np.array([np.nan]))
    assert wavewarp.twed(a, a) == 0.0


# --------------------------------------------------------------------------- several GPUs


@pytest.mark.parametrize("bad", ["some", [], [-1], [0, "x"], [True], 3.5, list(range(65))])
def test_devices_argument_errors(bad):
    with pytest.raises((ValueError, TypeError)):
        wavewarp.twed_pairwise(_X, devices=bad)
    with pytest.raises((ValueError, TypeError)):
        wavewarp.twed_knn(_X, _X, 1, devices=bad)


def test_devices_do_not_apply_to_the_cpu():
    with pytest.raises(ValueError, match="does not apply"):
        wavewarp.twed_pairwise(_X, backend="cpu", devices=[0])
    with pytest.raises(ValueError, match="does not apply"):
        wavewarp.twed_knn(_X, _X, 1, backend="cpu", devices="all")


def test_devices_without_gpu_is_a_wavewarp_error():
    if wavewarp.cuda_available():
        pytest.skip("a GPU is usable here: devices work (test_gpu.py)")
    for devices in ([0], [0, 0], "all"):
        with pytest.raises(wavewarp.WavewarpError, match="CUDA|GPU"):
            wavewarp.twed_pairwise(_X, devices=devices)
        with pytest.raises(wavewarp.WavewarpError, match="CUDA|GPU"):
            wavewarp.twed_knn(_X, _X, 2, devices=devices)


def test_backend_names_ignore_case():
    """backend="CPU" means "cpu" at every entry point, as --backend CPU does in the CLI (a
    case-sensitive check refused it in some functions and not others)."""
    rng = np.random.default_rng(5)
    X, Y = rng.random((4, 9)), rng.random((3, 7))
    images = rng.random((3, 5, 6))
    want = {
        "distance": wavewarp.distance(X[0], X[1], "dtw", backend="cpu"),
        "twed": wavewarp.twed(X[0], X[1], backend="cpu"),
        "pairwise": wavewarp.pairwise(X, Y, "dtw", backend="cpu"),
        "knn": wavewarp.knn(Y, X, 2, "twed", backend="cpu")[1],
        "index": wavewarp.Index(X, "dtw", backend="cpu").knn(Y, 2)[1],
        "soft_dtw": wavewarp.soft_dtw(X[0], X[1], backend="cpu"),
        "soft_dtw_grad": wavewarp.soft_dtw_grad(X[0], X[1], backend="cpu")[1],
        "ted": wavewarp.ted("{a{b}{c}}", "{a{d}}", backend="cpu"),
        "image_pairwise": wavewarp.image_pairwise(images, backend="cpu"),
        "classifier": wavewarp.KNeighborsClassifier(backend="cpu").fit(X, [0, 1, 0, 1]).predict(Y),
    }
    for name in ("CPU", "Cpu", "AUTO", "Auto"):
        got = {
            "distance": wavewarp.distance(X[0], X[1], "dtw", backend=name),
            "twed": wavewarp.twed(X[0], X[1], backend=name),
            "pairwise": wavewarp.pairwise(X, Y, "dtw", backend=name),
            "knn": wavewarp.knn(Y, X, 2, "twed", backend=name)[1],
            "index": wavewarp.Index(X, "dtw", backend=name).knn(Y, 2)[1],
            "soft_dtw": wavewarp.soft_dtw(X[0], X[1], backend=name),
            "soft_dtw_grad": wavewarp.soft_dtw_grad(X[0], X[1], backend=name)[1],
            "ted": wavewarp.ted("{a{b}{c}}", "{a{d}}", backend=name),
            "image_pairwise": wavewarp.image_pairwise(images, backend=name),
            "classifier": wavewarp.KNeighborsClassifier(backend=name).fit(X, [0, 1, 0, 1]).predict(Y),
        }
        for key, value in want.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-12, atol=0, err_msg=f"{key}, backend={name!r}")
    assert wavewarp.Index(X, backend="CPU").backend == "cpu"
    for bad in ("gpu", "cpu ", "c\u0440u", "", 3, None, b"cpu"):  # \u0440: a Cyrillic letter like p
        with pytest.raises(ValueError, match="backend"):
            wavewarp.distance(X[0], X[1], backend=bad)
        with pytest.raises(ValueError, match="backend"):
            wavewarp.pairwise(X, backend=bad)
        with pytest.raises(ValueError, match="backend"):
            wavewarp.ted("{a}", "{b}", backend=bad)
