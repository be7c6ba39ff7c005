"""1-NN accuracy on scikit-learn's handwritten digits (1,797 8 x 8 images): the elastic image
distance (wavewarp.image_knn) against plain Euclidean 1-NN on the same split, with times.

    python bench/bench_image_digits.py        (needs numpy, scikit-learn and wavewarp installed)

Prints a Markdown table for bench/results/image.md.
"""

import os
import platform
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import wavewarp


def main() -> None:
    digits = load_digits()
    X, y = digits.images, digits.target
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    print(f"scikit-learn digits, stratified half/half split (random_state=0): {len(Xtr)} train, {len(Xte)} test; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {wavewarp.describe('cpu')}\n")
    print("| method | 1-NN accuracy | seconds |")
    print("|---|---|---|")
    A = Xtr.reshape(len(Xtr), -1)
    B = Xte.reshape(len(Xte), -1)
    t = time.perf_counter()
    d = (B * B).sum(1)[:, None] - 2 * B @ A.T + (A * A).sum(1)[None, :]
    acc = np.mean(ytr[d.argmin(1)] == yte)
    print(f"| Euclidean (pixels as a 64-vector) | {acc:.4f} | {time.perf_counter() - t:.3f} |")
    for squared in (False, True):
        t = time.perf_counter()
        idx, _ = wavewarp.image_knn(Xte, Xtr, k=1, squared=squared)
        acc = np.mean(ytr[idx[:, 0]] == yte)
        name = "image distance, squared pixel distance" if squared else "image distance, absolute pixel difference"
        print(f"| {name} | {acc:.4f} | {time.perf_counter() - t:.3f} |")


if __name__ == "__main__":
    main()
