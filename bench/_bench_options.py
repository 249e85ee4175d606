"""Command-line options shared by the bench scripts (bench-local: the scripts use only certbound's public API).

The certificate-mode option is spelled as in the CLI (``--spectrum-mode``, one
of :data:`certbound.pipeline.SPECTRUM_MODES`); an old spelling stays as a
hidden alias that warns on stderr (:class:`DeprecatedAlias`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from certbound.pipeline import DEFAULT_SPECTRUM_MODE, SPECTRUM_MODES

__all__ = ["DeprecatedAlias", "add_spectrum_mode_option"]


class DeprecatedAlias(argparse.Action):
    """A hidden old spelling of an option: stores like the new one and says on stderr to use that.

    Give it ``help=argparse.SUPPRESS``, the new option's ``dest`` and ``new=`` the new option's flag.

    Parameters
    ----------
    option_strings : list of str
        The old flag(s).
    dest : str
        The new option's destination.
    new : str
        The new flag, named in the warning.
    **kwargs
        Passed to :class:`argparse.Action` (``choices``, ``help``, ...).

    Examples
    --------
    >>> import contextlib, io
    >>> p = argparse.ArgumentParser(prog="bench_model.py")
    >>> _ = p.add_argument("--spectrum-modes", default="auto")
    >>> _ = p.add_argument("--modes", dest="spectrum_modes", action=DeprecatedAlias, new="--spectrum-modes",
    ...                    help=argparse.SUPPRESS)
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     p.parse_args(["--modes", "fast,auto"]).spectrum_modes
    'fast,auto'
    >>> print(err.getvalue().strip())
    bench_model.py: warning: --modes is deprecated, use --spectrum-modes (same values)
    """

    def __init__(self, option_strings: list[str], dest: str, *, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is deprecated, use {self.new} (same values)",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_spectrum_mode_option(parser: argparse.ArgumentParser, *, default: str = DEFAULT_SPECTRUM_MODE,
                             deprecated_alias: str | None = None) -> None:
    """``--spectrum-mode`` (stored as ``args.spectrum_mode``), the CLI's name and modes, with this bench's default.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The script's parser.
    default : str
        The script's default mode (the library's, ``auto``, unless a script keeps its own).
    deprecated_alias : str, optional
        An old spelling (``"--mode"``) that still works, hidden from ``--help``, with a warning on stderr.

    Examples
    --------
    >>> p = argparse.ArgumentParser(prog="bench_spectrum.py")
    >>> add_spectrum_mode_option(p, default="fast", deprecated_alias="--mode")
    >>> p.parse_args([]).spectrum_mode, p.parse_args(["--spectrum-mode", "gram"]).spectrum_mode
    ('fast', 'gram')
    >>> add_spectrum_mode_option(argparse.ArgumentParser(), default="exact")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: add_spectrum_mode_option: unknown default mode 'exact'; one of fast, ...
    """
    if default not in SPECTRUM_MODES:
        raise ValueError(f"add_spectrum_mode_option: unknown default mode {default!r}; "
                         f"one of {', '.join(SPECTRUM_MODES)}")
    parser.add_argument("--spectrum-mode", choices=SPECTRUM_MODES, default=default,
                        help=f"certificate mode of the singular-value kernel, as in `certbound spectrum "
                             f"--spectrum-mode` (its --help lists the recorded certificates; default: {default})")
    if deprecated_alias is not None:
        parser.add_argument(deprecated_alias, dest="spectrum_mode", choices=SPECTRUM_MODES, action=DeprecatedAlias,
                            new="--spectrum-mode", help=argparse.SUPPRESS)
