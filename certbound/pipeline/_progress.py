"""Progress reporting shared by the CLI and the library: one callback protocol.

Every long pipeline step (certifying the matrices of a model) reports through a
*progress callback* ``progress(done, total, label)``: ``done`` of ``total``
matrices are finished, the last one was ``label``. Callers pass

* ``None`` or ``False``: silent (the library default);
* ``True`` or ``"auto"``: a one-line bar on stderr, drawn only when stderr is a
  terminal (the CLI's choice; logs, pipes and CI output stay clean);
* any callable with that signature (a notebook widget, a logger, a test).

>>> seen = []
>>> rep = progress_reporter(lambda done, total, label: seen.append((done, total, label)), total=2)
>>> rep.step("layer 0 head 0 QK"); rep.step("layer 0 M_in"); rep.close()
>>> seen
[(1, 2, 'layer 0 head 0 QK'), (2, 2, 'layer 0 M_in')]
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Protocol, Union

__all__ = ["ProgressCallback", "ProgressSpec", "TerminalProgress", "progress_reporter"]


class ProgressCallback(Protocol):
    """``progress(done, total, label)``: ``done`` of ``total`` steps finished, the last was ``label``."""

    def __call__(self, done: int, total: int, label: str) -> None: ...


#: What a ``progress=`` argument accepts (see the module docstring).
ProgressSpec = Union[None, bool, str, Callable[[int, int, str], None]]


class TerminalProgress:
    """A one-line progress bar on a stream (default stderr), drawn only when it is a terminal.

    >>> import io
    >>> bar = TerminalProgress(io.StringIO())  # not a terminal: draws nothing
    >>> bar(1, 2, "layer 0 M_in"); bar.close(); bar.stream.getvalue()
    ''
    """

    def __init__(self, stream: Any = None):
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self._drawn = False

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        width = 30
        total = max(total, 1)
        k = int(width * done / total)
        el = time.monotonic() - self.t0
        self.stream.write(f"\r[{'#' * k}{'.' * (width - k)}] {done}/{total} {el:6.1f}s {label[:40]:<40}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar (so that the next output starts on a clean line)."""
        if self.enabled and self._drawn:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
            self._drawn = False


class _Reporter:
    """Counts finished steps and forwards them to one callback."""

    def __init__(self, callback: Callable[[int, int, str], None] | None, total: int):
        self.callback = callback
        self.total = int(total)
        self.done = 0

    def step(self, label: str) -> None:
        self.done += 1
        if self.callback is not None:
            self.callback(self.done, self.total, label)

    def close(self) -> None:
        close = getattr(self.callback, "close", None)
        if callable(close):
            close()


def progress_reporter(progress: ProgressSpec, total: int) -> _Reporter:
    """A step counter for ``total`` steps that reports to ``progress`` (see the module docstring).

    Raises ``TypeError`` for anything else than the accepted forms.
    """
    if progress is None or progress is False:
        return _Reporter(None, total)
    if progress is True or progress == "auto":
        return _Reporter(TerminalProgress(), total)
    if callable(progress):
        return _Reporter(progress, total)
    raise TypeError(f"progress must be None, True, 'auto' or a callable (done, total, label), not {progress!r}")
