"""Tree edit distance (issue 13): wavewarp.ted / ted_pairwise / Tree against the PyPI packages
apted and zss on random trees, the tree constructors, the mapping, the shared trees and bad input."""

from __future__ import annotations

import ast
import math
import os
import random
import signal
import sys
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import wavewarp
from conftest import REPO_ROOT, shared_dir
from wavewarp import Tree

# ------------------------------------------------------------------ random trees


def random_tree(rng: random.Random, n: int, shape: str, label_count: int) -> Tree:
    parents, labels = [], []
    for i in range(n):
        labels.append("L%d" % rng.randrange(label_count))
        if i == 0:
            parents.append(-1)
        elif shape == "path":
            parents.append(i - 1)
        elif shape == "star":
            parents.append(0)
        else:  # climb from i - 1 towards the root
            v, up = i - 1, (0.7 if shape == "bushy" else 0.4)
            while v > 0 and rng.random() < up:
                v = parents[v]
            parents.append(v)
    return Tree(parents, labels)


def random_pairs(seed: int, count: int, max_n: int = 60):
    rng = random.Random(seed)
    shapes = ["random", "path", "star", "bushy"]
    for k in range(count):
        na, nb = rng.randrange(1, max_n + 1), rng.randrange(1, max_n + 1)
        labels = 2 if k % 3 == 0 else 20
        yield (random_tree(rng, na, shapes[k % 4], labels), random_tree(rng, nb, shapes[(k // 4) % 4], labels))


# ------------------------------------------------------------------ the rivals


def apted_distance(a: Tree, b: Tree, d: float = 1, i: float = 1, r: float = 1) -> float:
    apted = pytest.importorskip("apted")

    class Node:
        def __init__(self, name):
            self.name, self.children = name, []

    def build(t: Tree):
        nodes = [Node(label) for label in t.labels]
        for k, p in enumerate(t.parents):
            if p >= 0:
                nodes[p].children.append(nodes[k])
        return nodes[0]

    class Costs(apted.Config):
        def delete(self, node):
            return d

        def insert(self, node):
            return i

        def rename(self, n1, n2):
            return 0 if n1.name == n2.name else r

    return apted.APTED(build(a), build(b), Costs()).compute_edit_distance()


def zss_distance(a: Tree, b: Tree, d: float = 1, i: float = 1, r: float = 1) -> float:
    zss = pytest.importorskip("zss")

    def build(t: Tree):
        nodes = [zss.Node(label) for label in t.labels]
        for k, p in enumerate(t.parents):
            if p >= 0:
                nodes[p].addkid(nodes[k])
        return nodes[0]

    return zss.distance(build(a), build(b), zss.Node.get_children, lambda n: i, lambda n: d,
                        lambda x, y: 0 if x.label == y.label else r)


# ------------------------------------------------------------------ values


@pytest.mark.parametrize("seed", [1, 2])
def test_unit_costs_match_apted_and_zss(seed):
    for a, b in random_pairs(seed, 30):
        got = wavewarp.ted(a, b)
        assert got == apted_distance(a, b), (a, b)
        assert got == zss_distance(a, b), (a, b)
        assert got == int(got)


@pytest.mark.parametrize("costs", [(0.5, 2.0, 1.25), (3.0, 1.0, 0.3), (1.0, 1.0, 0.0)])
def test_other_costs_match_apted_and_zss(costs):
    d, i, r = costs
    for a, b in random_pairs(7, 12, max_n=30):
        got = wavewarp.ted(a, b, delete_cost=d, insert_cost=i, relabel_cost=r)
        assert got == pytest.approx(apted_distance(a, b, d, i, r), rel=1e-12, abs=1e-12)
        assert got == pytest.approx(zss_distance(a, b, d, i, r), rel=1e-12, abs=1e-12)


def test_empty_trees():
    empty, t = Tree([], []), Tree.from_bracket("{a{b}{c}}")
    assert wavewarp.ted(empty, t) == 3
    assert wavewarp.ted(t, empty, delete_cost=2.5) == 7.5
    assert wavewarp.ted(empty, empty) == 0
    assert wavewarp.ted(empty, t, mapping=True) == (3.0, [(None, 0), (None, 1), (None, 2)])


def test_mapping_cost_is_the_distance():
    for a, b in random_pairs(11, 25, max_n=40):
        d, edits = wavewarp.ted(a, b, mapping=True, delete_cost=1.5, insert_cost=0.5, relabel_cost=1.75)
        assert d == wavewarp.ted(a, b, delete_cost=1.5, insert_cost=0.5, relabel_cost=1.75)
        assert sorted(x for x, _ in edits if x is not None) == list(range(len(a)))
        assert sorted(y for _, y in edits if y is not None) == list(range(len(b)))
        cost = 0.0
        for x, y in edits:
            if x is None:
                cost += 0.5
            elif y is None:
                cost += 1.5
            elif a.labels[x] != b.labels[y]:
                cost += 1.75
        assert cost == pytest.approx(d, abs=1e-9)


def test_symmetry_and_triangle():
    rng = random.Random(5)
    trees = [random_tree(rng, rng.randrange(0, 25), "random", 4) for _ in range(8)]
    m = wavewarp.ted_pairwise(trees)
    assert np.all(np.diag(m) == 0)
    assert np.array_equal(m, m.T)
    for i in range(8):
        for j in range(8):
            for k in range(8):
                assert m[i, k] <= m[i, j] + m[j, k] + 1e-9
    # swapping insertions and deletions swaps the arguments
    asym = wavewarp.ted_pairwise(trees, delete_cost=2, insert_cost=0.5)
    swapped = wavewarp.ted_pairwise(trees, delete_cost=0.5, insert_cost=2)
    assert np.allclose(asym, swapped.T)


def test_pairwise_matches_single_calls():
    rng = random.Random(9)
    xs = [random_tree(rng, rng.randrange(1, 30), "bushy", 5) for _ in range(5)]
    ys = ["{L1{L2}{L3}}", ("L1", [("L4", [])]), Tree([], [])]
    m = wavewarp.ted_pairwise(xs, ys, relabel_cost=0.5, threads=2)
    assert m.shape == (5, 3) and m.dtype == np.float64
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            assert m[i, j] == wavewarp.ted(x, y, relabel_cost=0.5)
    calls = []
    wavewarp.ted_pairwise(xs, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]


def test_progress_exception_cancels():
    rng = random.Random(3)
    xs = [random_tree(rng, 40, "bushy", 5) for _ in range(30)]
    wavewarp._wavewarp._set_poll_interval(1e-6)
    try:
        def stop(done, total):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            wavewarp.ted_pairwise(xs, progress=stop, threads=1)
    finally:
        wavewarp._wavewarp._set_poll_interval(0.1)


def test_one_long_pair_reports_and_cancels_inside():
    """One pair (a 1 x 1 matrix) runs over the threads with progress inside it, and a callback that
    raises stops it before the end; ted() gives the same value (the same engine), with 1 and 2
    threads, and an interrupt inside ted() (SIGINT from another thread) stops it too."""
    rng = random.Random(21)
    a, b = random_tree(rng, 1500, "bushy", 30), random_tree(rng, 1400, "random", 30)
    wavewarp._wavewarp._set_poll_interval(1e-6)
    try:
        for threads in (1, 2):
            calls = []
            m = wavewarp.ted_pairwise([a], [b], threads=threads, progress=lambda d, t: calls.append((d, t)))
            assert m[0, 0] == wavewarp.ted(a, b, threads=threads) == wavewarp.ted(a, b, threads=1)
            assert len(calls) >= 3 and calls[-1][0] == calls[-1][1]
            assert all(x[0] <= y[0] for x, y in zip(calls, calls[1:]))
            seen = []

            def stop(done, total):
                seen.append((done, total))
                raise KeyboardInterrupt

            with pytest.raises(KeyboardInterrupt):
                wavewarp.ted_pairwise([a], [b], threads=threads, progress=stop)
            assert len(seen) == 1 and seen[0][0] < seen[0][1]
    finally:
        wavewarp._wavewarp._set_poll_interval(0.1)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_inside_one_ted_call():
    rng = random.Random(22)
    a, b = random_tree(rng, 4000, "bushy", 30), random_tree(rng, 4000, "bushy", 30)
    previous = wavewarp._wavewarp._set_poll_interval(0.01)
    timer = threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            wavewarp.ted(a, b, threads=1)  # about 0.5 s on one core: the interrupt comes inside it
    finally:
        timer.cancel()
        wavewarp._wavewarp._set_poll_interval(previous)
    assert wavewarp.ted("{a{b}}", "{a}") == 1  # and the next call is fine


# ------------------------------------------------------------------ trees


def test_tree_constructors_agree():
    bracket = Tree.from_bracket("{a{b}{c{d}}}")
    assert bracket.parents == [-1, 0, 0, 2] and bracket.labels == ["a", "b", "c", "d"]
    assert Tree([-1, 0, 0, 2], ["a", "b", "c", "d"]) == bracket
    assert Tree.from_parents([-1, 0, 0, 2], ["a", "b", "c", "d"]) == bracket
    assert Tree.from_children([[1, 2], [], [3], []], ["a", "b", "c", "d"]) == bracket
    # other numberings are renumbered in preorder
    assert Tree.from_children([[3, 1], [2], [], []], ["a", "c", "d", "b"]) == bracket
    assert Tree.from_nested(("a", [("b", []), ("c", [("d",)])])) == bracket
    assert Tree.from_xted("a b c d", "[[1, 2], [], [3], []]") == bracket
    assert Tree.from_bracket(bracket.to_bracket()) == bracket
    odd = Tree([-1, 0], ["x{y}", "back\\slash"])
    assert Tree.from_bracket(odd.to_bracket()) == odd
    assert Tree.from_bracket("{x\\{y\\}{b}}").labels == ["x{y}", "b"]
    assert wavewarp.ted("{a{b}{c{d}}}", bracket) == 0
    assert wavewarp.ted(("a", [("b", []), ("c", [("d", [])])]), bracket) == 0


def test_ast_and_element_trees():
    one = ast.parse("x = f(a, b) + 1")
    two = ast.parse("x = f(a) + 1")
    t = Tree.from_ast(one)
    assert t.labels[0] == "Module" and t.labels[1] == "Assign"
    walked = [type(n).__name__ for n in ast.walk(one)]
    assert sorted(t.labels) == sorted(walked)
    assert wavewarp.ted(one, two) == 2  # the Name b and its Load context
    xml_a = ET.fromstring("<r><a/><b><c/></b></r>")
    xml_b = ET.fromstring("<r><a/><c/></r>")
    assert Tree.from_element(xml_a).labels == ["r", "a", "b", "c"]
    assert wavewarp.ted(xml_a, xml_b) == 1  # delete b
    # labels mapped across a whole call: the same strings in different kinds of trees
    assert wavewarp.ted(xml_a, "{r{a}{b{c}}}") == 0


# ------------------------------------------------------------------ shared trees


def test_shared_trees_match_xted_and_apted():
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    base = shared / "data" / "trees"
    trees = wavewarp.read_xted_trees(base / "swissport" / "swissport_nodes_100.txt",
                                     base / "swissport" / "swissport_nodes_adj_100.txt")
    assert wavewarp.ted(trees[0], trees[1]) == 44
    expected = {}
    for line in (REPO_ROOT / "tests" / "data" / "ted_expected.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        name, n, i, j, d = line.split()
        expected.setdefault((name, int(n)), []).append((int(i), int(j), float(d)))
    for name in ("swissport", "python"):
        trees = wavewarp.read_xted_trees(base / name / f"{name}_nodes_100.txt", base / name / f"{name}_nodes_adj_100.txt")
        matrix = wavewarp.ted_pairwise(trees)
        for i, j, d in expected[(name, 100)]:
            assert matrix[i, j] == d


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("text", ["", "  ", "{", "{a", "{a}}", "}", "{}", "{a{}}", "{a}{b}", "a", "{a}x"])
def test_bad_brackets(text):
    with pytest.raises(ValueError, match="malformed"):
        Tree.from_bracket(text)
    with pytest.raises(ValueError):
        wavewarp.ted(text, "{a}")


@pytest.mark.parametrize("parents", [[-1, 0, 1, 0, 1], [-1, 0, -1], [0, -1], [-1, 2, 0], [-1, 1], [5], [-1, 2**40]])
def test_bad_parent_arrays(parents):
    with pytest.raises(ValueError):
        wavewarp.ted(Tree(parents), "{a}")
    with pytest.raises(ValueError):
        wavewarp.ted_pairwise([Tree(parents), "{a}"])


def test_bad_trees_otherwise():
    with pytest.raises(ValueError, match="one label per node"):
        Tree([-1, 0], ["a"])
    with pytest.raises(ValueError):
        Tree.from_children([[1], [1]], ["a", "b"])
    with pytest.raises(ValueError):
        Tree.from_children([[1], [], []], ["a", "b", "c"])
    with pytest.raises(ValueError):
        Tree.from_nested(("a", "b", "c"))
    with pytest.raises(TypeError):
        wavewarp.ted(42, "{a}")
    with pytest.raises(ValueError, match="malformed"):
        Tree.from_xted("a b c", "[[1], []]")
    with pytest.raises(ValueError, match="malformed"):
        Tree.from_xted("a b", "[[1], [], []]")
    with pytest.raises(ValueError):
        wavewarp.ted_pairwise([])
    with pytest.raises(ValueError):
        wavewarp.ted_pairwise(["{a}"], [])


def test_mismatched_xted_files(tmp_path):
    labels, adj = tmp_path / "t_nodes_3.txt", tmp_path / "t_nodes_adj_3.txt"
    labels.write_text("a b\nc\n")
    adj.write_text("[[1], []]\n")
    with pytest.raises(ValueError, match="do not match"):
        wavewarp.read_xted_trees(labels, adj)
    adj.write_text("[[1], []]\n[[1], []]\n")
    with pytest.raises(ValueError, match="malformed"):
        wavewarp.read_xted_trees(labels, adj)
    adj.write_text("[[1], []]\n[[]]")  # no final newline in one of them: fine
    assert [len(t) for t in wavewarp.read_xted_trees(labels, adj)] == [2, 1]


@pytest.mark.parametrize("cost", [-1.0, math.nan, math.inf])
def test_bad_costs(cost):
    for kw in ("delete_cost", "insert_cost", "relabel_cost"):
        with pytest.raises(ValueError, match="parameter"):
            wavewarp.ted("{a}", "{b}", **{kw: cost})
        with pytest.raises(ValueError, match="parameter"):
            wavewarp.ted_pairwise(["{a}", "{b}"], **{kw: cost})


def test_too_large_is_a_clear_error():
    n = 1_000_000
    flat = Tree([-1] + [0] * (n - 1))
    with pytest.raises(MemoryError, match="too large"):
        wavewarp.ted(flat, flat)
    with pytest.raises(MemoryError, match="too large"):
        wavewarp.ted(flat, flat, mapping=True)


def test_cuda_backend():
    """Without a GPU, backend "cuda" is a clear error; with one, the GPU engine equals the CPU."""
    if not wavewarp.cuda_available():
        with pytest.raises(wavewarp.WavewarpError):
            wavewarp.ted("{a}", "{b}", backend="cuda")
        return
    for a, b in random_pairs(21, 20, max_n=40):
        assert wavewarp.ted(a, b, backend="cuda", relabel_cost=0.75) == wavewarp.ted(a, b, backend="cpu", relabel_cost=0.75)
    trees = [t for pair in random_pairs(22, 4, max_n=30) for t in pair]
    assert np.array_equal(wavewarp.ted_pairwise(trees, backend="cuda"), wavewarp.ted_pairwise(trees, backend="cpu"))
