"""Option parsers shared by several commands (one meaning of each option everywhere)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from certbound.checkpoints import PACKAGED_CHECKPOINTS
from certbound.enclose.gram import TRIDIAGONAL_MIN_ORDER
from certbound.enclose.reconstruct import RECONSTRUCT_MIN_ORDER
from certbound.pipeline import DEFAULT_SPECTRUM_MODE, SPECTRUM_MODES
from certbound.report.writers import write_all

__all__ = ["LAYERS_HELP", "MAPPING_HELP", "MODEL_HELP", "SPECTRUM_MODE_FLAG", "SPECTRUM_MODE_HELP", "DeprecatedAlias",
           "STDOUT", "add_spectrum_mode_option", "make_output_directory", "parse_layers",
           "write_outputs"]

#: The one description of a MODEL argument (every command reads models with the same loader).
MODEL_HELP = ("model directory, weights file (.safetensors, .bin, .onnx, *.index.json), a packaged checkpoint "
              f"name ({', '.join(PACKAGED_CHECKPOINTS)}) or a Hugging Face id already in the local cache")

#: The one description of ``--mapping``.
MAPPING_HELP = ("JSON file mapping tensor names for an unsupported architecture (the error for an unknown "
                "architecture prints an example; README: 'Any other model')")

#: The one meaning of ``--layers``: 0-based layer indices.
LAYERS_HELP = "only these layers: 0-based indices, comma-separated (e.g. 0,5) or a range a-b (e.g. 0-3)"

#: The one name of the certificate-mode option in every command (``bound``'s ``--mode`` is the theorem's).
SPECTRUM_MODE_FLAG = "--spectrum-mode"

#: The one help text of the certificate-mode option.
SPECTRUM_MODE_HELP = ("certificate mode of the singular-value kernel (default auto: per matrix the cheapest "
                      "certificate with sigma widths <= 1e-8 relative (Gram-matrix certificate for dense matrices, "
                      "Gram-factor route for heads), else fast; every mode is certified). The certificate used is "
                      "recorded per matrix: fast, tight, arb, gram (Theorem G), gram-tri (Theorem G-T: tridiagonal "
                      f"and Sturm counts, from order {TRIDIAGONAL_MIN_ORDER}), gram-rec (Theorem G-R, auto from order "
                      f"{RECONSTRUCT_MIN_ORDER} where it is cheaper and meets the target), fast+gram or fast+gram-tri (auto where gram missed the "
                      "target, and on small matrices, where both cost about the same), product (per-head products), zero, or trivial ([0, inf], with a warning)")


def parse_layers(text: str | None, option: str = "--layers") -> list[int] | None:
    """``"0,5"`` → ``[0, 5]``; ``"0-3"`` → ``[0, 1, 2, 3]``; ``None``/``""`` → ``None`` (all layers).

    Parameters
    ----------
    text : str or None
        The option's value.
    option : str
        The flag named in error messages.

    Returns
    -------
    list of int or None
        Sorted, distinct, nonnegative layer indices; ``None`` for all layers.

    Examples
    --------
    >>> parse_layers("0,5"), parse_layers("1-3"), parse_layers(None)
    ([0, 5], [1, 2, 3], None)
    >>> parse_layers("x")
    Traceback (most recent call last):
    ...
    ValueError: --layers: 'x' is not a list of 0-based layer indices (e.g. 0,5 or 0-3)
    """
    if not text:
        return None
    out: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part[1:]:
                a, b = (int(v) for v in part.split("-", 1))
                if a > b:
                    raise ValueError
                out.extend(range(a, b + 1))
            else:
                out.append(int(part))
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not a list of 0-based layer indices (e.g. 0,5 or 0-3)") from None
    if any(i < 0 for i in out):
        raise ValueError(f"{option}: layer indices are 0-based and nonnegative, got {text!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"{option}: {text!r} repeats a layer")
    return sorted(out)


#: The output file name meaning standard output, in every command's ``--json``/``--csv``/``--latex``/``--markdown``.
STDOUT = "-"


def write_outputs(outputs: list[tuple[str, str]]) -> bool:
    """Write each ``(path, text)``: the files all or none (:func:`~certbound.report.writers.write_all`), then ``-`` to stdout.

    Parameters
    ----------
    outputs : list of (str, str)
        Output paths (``"-"``: standard output, at most one; the CLI checks that) and their texts.

    Returns
    -------
    bool
        Whether a text went to standard output (then the command prints no table of its own there).

    Examples
    --------
    >>> write_outputs([("-", "{}\\n")])
    {}
    True
    >>> write_outputs([])
    False
    """
    write_all([(p, t) for p, t in outputs if p != STDOUT])
    to_stdout = [t for p, t in outputs if p == STDOUT]
    for text in to_stdout:
        sys.stdout.write(text)
    sys.stdout.flush()
    return bool(to_stdout)


def make_output_directory(path: str, option: str = "--out") -> str:
    """Create the output directory ``path`` (its parent must exist), before any work; refuse a file there.

    The one rule of every command's ``--out DIR``: a typo in the parent is an
    error, not a silently created tree.

    Parameters
    ----------
    path : str
        The directory (created if missing).
    option : str
        The flag named in error messages.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    NotADirectoryError
        If ``path`` exists and is not a directory.
    FileNotFoundError
        If its parent directory does not exist.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.path.isdir(make_output_directory(os.path.join(d, "figs")))
    True
    >>> make_output_directory(os.path.join(d, "no", "figs"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: --out: cannot create '.../no/figs': directory .../no does not exist
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"{option}: {path!r} exists and is not a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"{option}: cannot create {path!r}: directory {parent} does not exist")
    os.makedirs(path, exist_ok=True)
    return path


class DeprecatedAlias(argparse.Action):
    """A hidden old spelling of an option: stores like the new one and says on stderr to use that.

    Give it ``help=argparse.SUPPRESS``, the new option's ``dest`` and
    ``new=`` the new option's flag (named in the warning). The bench scripts
    use it for their old flags too.

    Parameters
    ----------
    option_strings : list of str
        The old flag(s).
    dest : str
        The new option's destination.
    new : str
        The new flag.
    **kwargs
        Passed to :class:`argparse.Action` (``choices``, ``help``, …).

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


def add_spectrum_mode_option(parser: argparse.ArgumentParser, *, deprecated_alias: str | None = None,
                             default: str = DEFAULT_SPECTRUM_MODE, help_text: str = SPECTRUM_MODE_HELP) -> None:
    """``--spectrum-mode``: the certificate-mode option of every command that certifies a spectrum.

    One name, one set of modes (:data:`certbound.pipeline.SPECTRUM_MODES`), one
    default (``auto``), stored as ``args.spectrum_mode`` (the library keyword
    ``spectrum_mode``).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    deprecated_alias : str, optional
        An old spelling (``"--mode"`` in ``spectrum``, ``proxies``, ``sweep``,
        ``demo``, ``demo-figure`` before session 4) that still works, hidden from
        ``--help``, with a deprecation warning on stderr.
    default : str
        The default mode (``auto``, the library's; a bench script may keep its own).
    help_text : str
        The help text (:data:`SPECTRUM_MODE_HELP`; a bench script whose default differs says so).

    Examples
    --------
    >>> p = argparse.ArgumentParser(prog="certbound spectrum")
    >>> add_spectrum_mode_option(p, deprecated_alias="--mode")
    >>> p.parse_args([]).spectrum_mode, p.parse_args(["--spectrum-mode", "gram"]).spectrum_mode
    ('auto', 'gram')
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     p.parse_args(["--mode", "tight"]).spectrum_mode
    'tight'
    >>> print(err.getvalue().strip())
    certbound spectrum: warning: --mode is deprecated, use --spectrum-mode (same values)
    """
    if default not in SPECTRUM_MODES:
        raise ValueError(f"add_spectrum_mode_option: unknown default mode {default!r}; one of {SPECTRUM_MODES}")
    parser.add_argument(SPECTRUM_MODE_FLAG, choices=SPECTRUM_MODES, default=default, help=help_text)
    if deprecated_alias is not None:
        parser.add_argument(deprecated_alias, dest="spectrum_mode", choices=SPECTRUM_MODES, action=DeprecatedAlias,
                            new=SPECTRUM_MODE_FLAG, help=argparse.SUPPRESS)
