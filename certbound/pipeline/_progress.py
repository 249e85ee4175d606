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
import threading
import time
from typing import Any, Callable, Protocol, Union

__all__ = ["ProgressCallback", "ProgressSpec", "TerminalProgress", "progress_reporter"]


class ProgressCallback(Protocol):
    """``progress(done, total, label)``: ``done`` of ``total`` steps finished, the last was ``label``."""

    def __call__(self, done: int, total: int, label: str) -> None: ...


#: What a ``progress=`` argument accepts (see the module docstring).
ProgressSpec = Union[None, bool, str, Callable[[int, int, str], None]]


class TerminalProgress:
    """A one-line progress bar with elapsed time and ETA on a stream (default stderr), only on a terminal.

    A background thread redraws the line once a second, so the clock (and the
    ETA) keeps moving while one long matrix is being certified; :meth:`close`
    stops it and erases the line, leaving no counter on screen.

    >>> import io
    >>> bar = TerminalProgress(io.StringIO())  # not a terminal: draws nothing
    >>> bar(1, 2, "layer 0 M_in"); bar.close(); bar.stream.getvalue()
    ''
    >>> _eta_text(30.0, 1, 4), _eta_text(5.0, 0, 4), _eta_text(3725.0, 1, 2)
    ('ETA 1:30', 'ETA --:--', 'ETA 1:02:05')
    """

    def __init__(self, stream: Any = None, *, tick: float = 1.0):
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self._state = (0, 1, "")
        self._drawn = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tick = tick

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._state = (done, max(total, 1), label)
            self._draw()
        if self._thread is None and done < total:
            self._thread = threading.Thread(target=self._run, name="certbound-progress", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            with self._lock:
                if self._drawn:
                    self._draw()

    def _draw(self) -> None:
        done, total, label = self._state
        width = 24
        k = int(width * done / total)
        el = time.monotonic() - self.t0
        line = (f"[{'#' * k}{'.' * (width - k)}] {done}/{total} {_clock(el)} {_eta_text(el, done, total)}"
                f"  {label[:36]}")
        self.stream.write("\r" + line.ljust(96)[:96])
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Stop the clock and erase the bar (so that the next output starts on a clean line)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            if self.enabled and self._drawn:
                self.stream.write("\r" + " " * 96 + "\r")
                self.stream.flush()
                self._drawn = False


def _clock(seconds: float) -> str:
    s = int(seconds)
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


def _eta_text(elapsed: float, done: int, total: int) -> str:
    """Remaining time at the average rate so far (``--:--`` before the first step)."""
    if done <= 0:
        return "ETA --:--"
    return "ETA " + _clock(elapsed / done * max(total - done, 0))


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

    Parameters
    ----------
    progress : None, bool, "auto" or callable
        ``None``/``False``: silent; ``True``/``"auto"``: a bar on a terminal's stderr;
        a callable ``progress(done, total, label)``: called after every step.
    total : int
        The number of steps.

    Returns
    -------
    reporter
        An object with ``step(label)`` and ``close()``.

    Raises
    ------
    TypeError
        For anything else than the accepted forms.

    Examples
    --------
    >>> seen = []
    >>> r = progress_reporter(lambda done, total, label: seen.append((done, total, label)), 2)
    >>> r.step("a"); r.step("b"); r.close()
    >>> seen
    [(1, 2, 'a'), (2, 2, 'b')]
    """
    if progress is None or progress is False:
        return _Reporter(None, total)
    if progress is True or progress == "auto":
        return _Reporter(TerminalProgress(), total)
    if callable(progress):
        return _Reporter(progress, total)
    raise TypeError(f"progress must be None, True, 'auto' or a callable (done, total, label), not {progress!r}")
