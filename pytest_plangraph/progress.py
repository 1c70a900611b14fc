"""Progress lines on stderr for long work (``verify`` over many criteria, ``impact --since``
over a long history, ``init`` on a big tree), shown only when stderr is a terminal.

A person watching a terminal sees one line rewritten in place (``plangraph: verify 12/340
step-x/ac-y``) and erased when the work ends; a pipe, a file, CI logs and the tests' captured
output get nothing, so no output that a program reads ever changes. ``PLANGRAPH_PROGRESS=0``
turns it off on a terminal too.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import TextIO

_EVERY_S = 0.1
"""At most this often a line is redrawn: a terminal is slow next to a loop over files."""


class Progress:
    """One task's progress line. Use as a context manager; call :meth:`step` per item done
    and :meth:`stage` when the task moves to a new part."""

    def __init__(self, task: str, total: int | None = None, stream: TextIO | None = None) -> None:
        self.task = task
        self.total = total
        self.done = 0
        self._stream = sys.stderr if stream is None else stream
        self.enabled = _terminal(self._stream) and os.environ.get("PLANGRAPH_PROGRESS") != "0"
        self._last = 0.0
        self._width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def step(self, what: str = "") -> None:
        """One more item done (*what* names it)."""
        self.done += 1
        self._draw(what, force=self.total is not None and self.done >= self.total)

    def stage(self, what: str) -> None:
        """The task moves on to *what* (always drawn)."""
        self._draw(what, force=True)

    def close(self) -> None:
        """Erase the line."""
        if self.enabled and self._width:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

    def _draw(self, what: str, *, force: bool) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < _EVERY_S:
            return
        self._last = now
        count = f" {self.done}/{self.total}" if self.total is not None else ""
        line = f"plangraph: {self.task}{count} {what}".rstrip()[:120]
        self._write("\r" + line.ljust(self._width))
        self._width = max(self._width, len(line))

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # a closed terminal must not stop the work
            self.enabled = False


def _terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
