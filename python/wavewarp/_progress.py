"""A plain progress bar on standard error, for ``progress=True``."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, TextIO, Tuple, Union

Progress = Union[bool, Callable[[int, int], Any]]
"""The ``progress`` argument: True (a bar on stderr), False, or a callable(done, total)."""


class ProgressBar:
    """Draws ``label [#####.....]  42.0%  1.2 s, 1.7 s left`` on one line of a stream.

    The C library reports progress in DP cells (done, total); the binding calls this object at most
    every 0.1 s from the computing thread, with the GIL held.

    Parameters
    ----------
    label : str
        Text in front of the bar.
    stream : file-like, optional
        Where to draw; standard error by default.
    width : int
        Number of characters of the bar itself.
    """

    def __init__(self, label: str, stream: Optional[TextIO] = None, width: int = 30) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.drawn = False
        self.last = (-1, -1)

    def __call__(self, done: int, total: int) -> None:
        if (done, total) == self.last:  # the library may report the end twice
            return
        self.last = (done, total)
        elapsed = time.monotonic() - self.start
        if total > 0:
            fraction = min(done / total, 1.0)
            filled = int(round(fraction * self.width))
            bar = "#" * filled + "." * (self.width - filled)
            left = f", {elapsed * (1 - fraction) / fraction:.1f} s left" if 0 < fraction < 1 else ""
            text = f"\r{self.label} [{bar}] {100 * fraction:5.1f}%  {elapsed:.1f} s{left}"
        else:  # total unknown: show the work done so far
            text = f"\r{self.label} {done:,} cells  {elapsed:.1f} s"
        self.stream.write(text)
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Ends the bar's line (when something was drawn)."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def callback_for(progress: Any, label: str) -> Tuple[Any, Optional[ProgressBar]]:
    """The callable to hand to the C module for a ``progress`` argument, and the bar to close.

    Parameters
    ----------
    progress : bool, None or callable
        True: a :class:`ProgressBar` labelled `label`; False/None: no reports; a callable is used
        as it is.
    label : str
        The bar's label.
    """
    if progress is True:
        bar = ProgressBar(label)
        return bar, bar
    if progress is False or progress is None:
        return None, None
    if callable(progress):
        return progress, None
    raise TypeError("progress must be True, False or a callable(done, total)")
