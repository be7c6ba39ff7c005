"""Tree edit distance (issue 13): ``Tree``, ``ted`` and ``ted_pairwise``.

A tree is ordered and labelled; its nodes are numbered in preorder. Labels may be any hashable
values: they are mapped to integer ids consistently across the trees of one call (equal labels,
equal ids), so only equality matters.
"""

from __future__ import annotations

import ast
import os
import xml.etree.ElementTree as ElementTree
from typing import Any, Callable, Hashable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _wavewarp
from ._measure import check_flag, check_real

__all__ = ["Tree", "ted", "ted_pairwise", "read_bracket_trees", "read_xted_trees"]


class Tree:
    """An ordered, labelled tree: ``parents[i]`` is the parent of node i in preorder (-1 for the
    root, node 0), ``labels[i]`` its label. ``Tree([], [])`` is the empty tree.

    Make one from preorder parents and labels (``Tree(parents, labels)``), from children lists
    (:meth:`from_children`), from nested ``(label, [children])`` tuples (:meth:`from_nested`), from
    the bracket notation (:meth:`from_bracket`), from X-TED's files (:meth:`from_xted`), from a
    Python syntax tree (:meth:`from_ast`, labels: node type names) or an ElementTree element
    (:meth:`from_element`, labels: tags). The structure is checked when the tree is used (a parent
    array out of preorder or with two roots raises ValueError).
    """

    __slots__ = ("parents", "labels")

    def __init__(self, parents: Sequence[int], labels: Optional[Sequence[Hashable]] = None):
        self.parents: List[int] = [int(p) for p in parents]
        self.labels: List[Hashable] = list(labels) if labels is not None else [None] * len(self.parents)
        if len(self.labels) != len(self.parents):
            raise ValueError(f"a tree needs one label per node: {len(self.parents)} parents, "
                             f"{len(self.labels)} labels")

    def __len__(self) -> int:
        return len(self.parents)

    def __repr__(self) -> str:
        text = self.to_bracket() if self.parents else ""
        return f"Tree.from_bracket({text[:60] + '...' if len(text) > 60 else text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tree) and self.parents == other.parents and self.labels == other.labels

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_parents(cls, parents: Sequence[int], labels: Optional[Sequence[Hashable]] = None) -> "Tree":
        """The same as ``Tree(parents, labels)``."""
        return cls(parents, labels)

    @classmethod
    def from_children(cls, children: Sequence[Sequence[int]], labels: Optional[Sequence[Hashable]] = None) -> "Tree":
        """From children lists: ``children[i]`` are the children of node i in order, node 0 is the
        root (X-TED's adjacency). Nodes are renumbered in preorder (no change when they already
        are); every node but the root must be listed exactly once, and be reachable from node 0."""
        n = len(children)
        labels = list(labels) if labels is not None else [None] * n
        if len(labels) != n:
            raise ValueError(f"a tree needs one label per node: {n} children lists, {len(labels)} labels")
        if n == 0:
            return cls([], [])
        listed = [False] * n
        for kids in children:
            for c in kids:
                if not 0 < c < n or listed[c]:
                    raise ValueError(f"malformed children lists: node {c} is out of range, the root, "
                                     "or listed twice")
                listed[c] = True
        parents: List[int] = []
        out_labels: List[Hashable] = []
        stack: List[Tuple[int, int]] = [(0, -1)]
        while stack:
            node, parent = stack.pop()
            parents.append(parent)
            out_labels.append(labels[node])
            me = len(parents) - 1
            stack.extend((c, me) for c in reversed(list(children[node])))
        if len(parents) != n:
            raise ValueError("malformed children lists: some nodes are not reachable from node 0")
        return cls(parents, out_labels)

    @classmethod
    def from_nested(cls, nested: Any) -> "Tree":
        """From ``(label, [children])`` tuples, children being tuples of the same form; a bare
        ``(label,)`` or ``(label, [])`` is a leaf."""
        parents: List[int] = []
        labels: List[Hashable] = []
        stack: List[Tuple[Any, int]] = [(nested, -1)]
        while stack:
            node, parent = stack.pop()
            if not isinstance(node, (tuple, list)) or not 1 <= len(node) <= 2:
                raise ValueError(f"a nested tree node is (label, [children]), not {node!r}")
            parents.append(parent)
            labels.append(node[0])
            me = len(parents) - 1
            kids = list(node[1]) if len(node) == 2 else []
            stack.extend((c, me) for c in reversed(kids))
        return cls(parents, labels)

    @classmethod
    def from_bracket(cls, text: str) -> "Tree":
        """From the bracket notation of APTED and tree-similarity, e.g. ``"{a{b}{c{d}}}"``, with
        ``\\{``, ``\\}`` and ``\\\\`` as escapes in labels (labels are strings)."""
        parents, labels = _wavewarp.tree_parse_bracket(text)
        return cls(parents, labels)

    @classmethod
    def from_xted(cls, labels_line: str, adjacency_line: str) -> "Tree":
        """From one line of X-TED's ``*_nodes_N.txt`` (labels in preorder, separated by white
        space) and the matching line of ``*_nodes_adj_N.txt`` (children lists)."""
        parents, labels = _wavewarp.tree_parse_xted(labels_line, adjacency_line)
        return cls(parents, labels)

    @classmethod
    def _from_walk(cls, root: Any, label: Callable[[Any], Hashable], children: Callable[[Any], Iterable[Any]]) -> "Tree":
        parents: List[int] = []
        labels: List[Hashable] = []
        stack: List[Tuple[Any, int]] = [(root, -1)]
        while stack:
            node, parent = stack.pop()
            parents.append(parent)
            labels.append(label(node))
            me = len(parents) - 1
            stack.extend((c, me) for c in reversed(list(children(node))))
        return cls(parents, labels)

    @classmethod
    def from_ast(cls, node: ast.AST) -> "Tree":
        """From a Python syntax tree (``ast.parse(...)``): labels are the node types' names,
        children ``ast.iter_child_nodes`` in order."""
        return cls._from_walk(node, lambda n: type(n).__name__, ast.iter_child_nodes)

    @classmethod
    def from_element(cls, element: ElementTree.Element) -> "Tree":
        """From an ``xml.etree.ElementTree`` element: labels are the tags, children the
        sub-elements in document order."""
        return cls._from_walk(element, lambda e: e.tag if isinstance(e.tag, str) else str(e.tag), list)

    # ------------------------------------------------------------------ output

    def children(self) -> List[List[int]]:
        """The children lists of the nodes (preorder numbers)."""
        kids: List[List[int]] = [[] for _ in self.parents]
        for i, p in enumerate(self.parents):
            if p >= 0:
                kids[p].append(i)
        return kids

    def to_bracket(self) -> str:
        """The bracket notation (labels as ``str()``, escaped); the empty tree has none."""
        if not self.parents:
            raise ValueError("the empty tree has no bracket notation")
        kids = self.children()
        out: List[str] = []
        stack: List[Union[int, str]] = [0]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            text = str(self.labels[item]).replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}")
            out.append("{" + text)
            stack.append("}")
            stack.extend(reversed(kids[item]))
        return "".join(out)


TreeLike = Union[Tree, str, ast.AST, ElementTree.Element, tuple]


def as_tree(obj: Any) -> Tree:
    """A Tree from anything ``ted`` accepts."""
    if isinstance(obj, Tree):
        return obj
    if isinstance(obj, str):
        return Tree.from_bracket(obj)
    if isinstance(obj, ast.AST):
        return Tree.from_ast(obj)
    if isinstance(obj, ElementTree.Element):
        return Tree.from_element(obj)
    if isinstance(obj, tuple):
        return Tree.from_nested(obj)
    raise TypeError("a tree is a wavewarp.Tree, a bracket string, nested (label, [children]) tuples, "
                    f"an ast.AST or an ElementTree element, not {type(obj).__name__}")


def _pack(trees: Sequence[Tree], ids: dict) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parents, label ids (shared dictionary `ids`) and offsets of trees, one after the other."""
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    for k, t in enumerate(trees):
        offsets[k + 1] = offsets[k] + len(t.parents)
    parents = np.empty(int(offsets[-1]), dtype=np.int32)
    labels = np.empty(int(offsets[-1]), dtype=np.int32)
    for k, t in enumerate(trees):
        lo, hi = int(offsets[k]), int(offsets[k + 1])
        try:
            parents[lo:hi] = t.parents
        except OverflowError:
            raise ValueError("malformed tree: a parent index is out of range") from None
        labels[lo:hi] = [ids.setdefault(label, len(ids)) for label in t.labels]
    return parents, labels, offsets


def _costs(delete_cost: Any, insert_cost: Any, relabel_cost: Any) -> Tuple[float, float, float]:
    return (check_real(delete_cost, "delete_cost", ">= 0"), check_real(insert_cost, "insert_cost", ">= 0"),
            check_real(relabel_cost, "relabel_cost", ">= 0"))


def ted(a: Any, b: Any, delete_cost: float = 1, insert_cost: float = 1, relabel_cost: float = 1,
        backend: str = "auto", mapping: bool = False, threads: Optional[int] = None) -> Any:
    """The tree edit distance of a and b (Zhang and Shasha; APTED computes the same value): the
    least total cost of deleting nodes (children take the node's place), inserting nodes and
    relabelling nodes (free between equal labels). Costs are finite and >= 0 (ValueError else);
    with unit costs the result is an integer (as a float).

    A tree is a :class:`Tree`, a bracket string, nested ``(label, [children])`` tuples, an
    ``ast.AST`` or an ``ElementTree.Element``. With ``mapping=True`` the result is
    ``(distance, edits)``: an optimal edit mapping as a list of ``(node_a, node_b)`` preorder
    numbers, ``node_b`` None for a deletion and ``node_a`` None for an insertion; its costs sum to
    the distance (the mapping is computed on the CPU). backend "cuda" computes on the GPU (a first
    engine, identical results, not yet faster: "auto" uses the CPU); without a GPU it raises
    WavewarpError.
    """
    ta, tb = as_tree(a), as_tree(b)
    ids: dict = {}
    pa, la, _ = _pack([ta], ids)
    pb, lb, _ = _pack([tb], ids)
    mapping = check_flag(mapping, "mapping")
    result = _wavewarp.ted(pa, la, pb, lb, *_costs(delete_cost, insert_cost, relabel_cost), backend, threads,
                           mapping)
    if not mapping:
        return result
    distance, pairs = result
    edits = [(None if x < 0 else int(x), None if y < 0 else int(y)) for x, y in pairs.tolist()]
    return distance, edits


def ted_pairwise(trees: Sequence[Any], others: Optional[Sequence[Any]] = None, delete_cost: float = 1,
                 insert_cost: float = 1, relabel_cost: float = 1, backend: str = "auto",
                 threads: Optional[int] = None, progress: Optional[Callable[[int, int], Any]] = None) -> np.ndarray:
    """Distance matrix (float64) of trees against others, or against themselves (each unordered
    pair computed once when insert_cost == delete_cost; zero diagonal). Labels are mapped to ids
    across both collections. Pairs run in parallel on `threads` CPU threads (None: all cores).
    progress(done, total) is called now and then (units: node pairs); an exception it raises,
    or Ctrl-C, stops the call."""
    xs = [as_tree(t) for t in trees]
    ys = None if others is None else [as_tree(t) for t in others]
    if not xs or (ys is not None and not ys):
        raise ValueError("empty input: no trees")
    ids: dict = {}
    parents, labels, offsets = _pack(xs + (ys or []), ids)
    return _wavewarp.ted_pairwise(parents, labels, offsets, len(xs), ys is None,
                                  *_costs(delete_cost, insert_cost, relabel_cost), backend, threads, progress)


def read_bracket_trees(path: Union[str, os.PathLike]) -> List[Tree]:
    """One bracket tree per non-blank line of a text file."""
    with open(path, encoding="utf-8") as f:
        return [Tree.from_bracket(line) for line in f if line.strip()]


def read_xted_trees(labels_path: Union[str, os.PathLike], adjacency_path: Union[str, os.PathLike]) -> List[Tree]:
    """The trees of X-TED's pair of files (``*_nodes_N.txt`` and ``*_nodes_adj_N.txt``), one per
    line; files with different numbers of lines raise ValueError."""
    with open(labels_path, encoding="utf-8") as f:
        labels = [line for line in f.read().split("\n")]
    with open(adjacency_path, encoding="utf-8") as f:
        adjacency = [line for line in f.read().split("\n")]
    for lines in (labels, adjacency):  # the final newline (or blank lines) of each file
        while lines and not lines[-1].strip():
            lines.pop()
    if len(labels) != len(adjacency):
        raise ValueError(f"X-TED files do not match: {len(labels)} label lines, {len(adjacency)} adjacency lines")
    return [Tree.from_xted(lab, adj) for lab, adj in zip(labels, adjacency)]
