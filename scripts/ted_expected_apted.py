#!/usr/bin/env python3
"""Expected tree edit distances for tests/test_ted.c, computed once with the PyPI `apted` package.

For every X-TED file pair of ../shared/data/trees/{swissport,python}/ with 100 to 500 nodes per
tree, the unit-cost distance of the trees (i, i + 1) of its lines. apted takes seconds per pair,
so CI reads the committed result (tests/data/ted_expected.txt) instead of running this.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install apted
    /tmp/v/bin/python scripts/ted_expected_apted.py ../shared/data/trees > tests/data/ted_expected.txt
"""
import ast
import sys
import time
from pathlib import Path

from apted import APTED, Config


class Node:
    """A tree node as apted's default Config reads it (name, children)."""

    def __init__(self, name):
        self.name = name
        self.children = []


def read_trees(labels_path, adjacency_path):
    labels = labels_path.read_text().splitlines()
    adjacency = adjacency_path.read_text().splitlines()
    trees = []
    for names, lists in zip(labels, adjacency):
        names = names.split()
        children = ast.literal_eval(lists)
        assert len(names) == len(children)
        nodes = [Node(n) for n in names]
        for parent, kids in enumerate(children):
            nodes[parent].children = [nodes[k] for k in kids]
        trees.append(nodes[0])
    return trees


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/trees")
    print("# dataset nodes i j distance: unit-cost TED of trees i and i + 1 (apted %s)"
          % __import__("importlib.metadata").metadata.version("apted"))
    for dataset in ("swissport", "python"):
        for n in (100, 200, 300, 400, 500):
            trees = read_trees(root / dataset / f"{dataset}_nodes_{n}.txt",
                               root / dataset / f"{dataset}_nodes_adj_{n}.txt")
            for i in range(len(trees) - 1):
                start = time.perf_counter()
                d = APTED(trees[i], trees[i + 1], Config()).compute_edit_distance()
                print(f"{dataset} {n} {i} {i + 1} {d}", flush=True)
                print(f"  {dataset} {n} ({i}, {i + 1}): {d} in {time.perf_counter() - start:.1f} s",
                      file=sys.stderr)


if __name__ == "__main__":
    main()
