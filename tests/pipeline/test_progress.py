"""The shared progress bar: ticks while a long step runs, shows an ETA, leaves nothing on screen."""

import io
import time

from certbound.pipeline._progress import TerminalProgress, progress_reporter


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_ticks_during_a_long_step_and_erases_itself():
    stream = _Terminal()
    bar = TerminalProgress(stream, tick=0.01)
    rep = progress_reporter(bar, total=3)
    rep.step("layer 0 QK")
    deadline = time.monotonic() + 30
    while stream.getvalue().count("\r") < 4 and time.monotonic() < deadline:  # redrawn without a new step
        time.sleep(0.01)
    assert stream.getvalue().count("\r") >= 4
    assert "1/3" in stream.getvalue() and "ETA" in stream.getvalue()
    rep.close()
    assert stream.getvalue().endswith("\r" + " " * 96 + "\r")  # erased: no counter left after the run
    n = len(stream.getvalue())
    time.sleep(0.05)
    assert len(stream.getvalue()) == n  # the clock thread has stopped


def test_bar_is_silent_off_a_terminal():
    stream = io.StringIO()
    rep = progress_reporter(TerminalProgress(stream, tick=0.01), total=2)
    rep.step("a")
    rep.step("b")
    rep.close()
    assert stream.getvalue() == ""
