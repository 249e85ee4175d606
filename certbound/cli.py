"""The ``certbound`` command line: argument parsing and wiring only.

Every sub-command lives in its own module of :mod:`certbound._commands`
(``NAME``, ``HELP``, ``add_arguments``, ``run``); this module discovers them,
so adding a command never touches this file.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from types import ModuleType

from certbound._blas import single_threaded
from certbound._errors import OptionError
from certbound._optional import MissingDependencyError
from certbound.ball import FloatEnvironmentError, check_float_environment
from certbound.report.writers import check_output_path

__all__ = ["main", "build_parser", "check_file_options", "error_text", "option_flags", "INPUT_FILE_OPTIONS",
           "OUTPUT_FILE_OPTIONS"]


def _command_modules() -> list[ModuleType]:
    from certbound import _commands

    mods = []
    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"certbound._commands.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per command module.

    Returns
    -------
    argparse.ArgumentParser
        The parser (each sub-parser's defaults carry its ``run`` function and flag names).

    Examples
    --------
    >>> args = build_parser().parse_args(["spectrum", "all-MiniLM-L6-v2", "--layers", "0-1"])
    >>> args.command, args.model, args.layers, args.spectrum_mode, args._flags["spectrum_mode"]
    ('spectrum', 'all-MiniLM-L6-v2', '0-1', 'auto', '--spectrum-mode')
    """
    from certbound._version import __version__

    parser = argparse.ArgumentParser(
        prog="certbound",
        description="Certified generalization-bound numbers for trained Transformers.",
    )
    parser.add_argument("--version", action="version", version=f"certbound {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run, _flags=option_flags(p, getattr(mod, "OPTION_FLAGS", None)), _parser=p)
    return parser


def option_flags(parser: argparse.ArgumentParser, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Library parameter name → the command's flag, for re-spelling :class:`~certbound.OptionError` messages.

    Every visible long option maps its ``dest`` (``seq_len`` → ``--seq-len``);
    hidden (deprecated) aliases are skipped. A command whose library
    parameters are named otherwise than its ``dest`` gives them in ``extra``
    (its module's ``OPTION_FLAGS``, e.g. ``{"ps": "--p"}``).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        One command's parser.
    extra : dict, optional
        Further parameter names and their flags (they win over the ``dest`` rule).

    Returns
    -------
    dict
        ``{parameter: flag}``.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--seq-len", type=int)
    >>> _ = p.add_argument("--old", dest="seq_len", help=argparse.SUPPRESS)
    >>> option_flags(p, {"logit_scale": "--no-logit-scale"})
    {'seq_len': '--seq-len', 'logit_scale': '--no-logit-scale'}
    """
    flags: dict[str, str] = {}
    for action in parser._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs and action.help != argparse.SUPPRESS and action.dest != "help":
            flags.setdefault(action.dest, longs[0])
    flags.update(extra or {})
    return flags


#: Options naming files a command reads / writes (argparse ``dest`` → flag), checked
#: before any work so that a typo costs no computation and leaves no file behind.
INPUT_FILE_OPTIONS = {"config": "--config", "mapping": "--mapping", "constraints": "--constraints",
                      "spectra": "--spectra"}
OUTPUT_FILE_OPTIONS = {"json": "--json", "json_path": "--json", "csv": "--csv", "csv_path": "--csv",
                       "latex": "--latex", "latex_path": "--latex", "markdown": "--markdown"}


def check_file_options(args: argparse.Namespace) -> None:
    """Refuse missing input files and unwritable output paths, naming the option.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments (the dests of :data:`INPUT_FILE_OPTIONS` and :data:`OUTPUT_FILE_OPTIONS`).

    Raises
    ------
    OSError or ValueError
        Naming the option, for a missing input, an unwritable output, one file given twice, or two
        outputs to stdout (`-`).

    Examples
    --------
    >>> ok = argparse.Namespace(config=None, json_path="-", latex_path="out.tex")
    >>> check_file_options(ok)
    >>> check_file_options(argparse.Namespace(mapping="no-such-mapping.json"))
    Traceback (most recent call last):
    ...
    FileNotFoundError: --mapping: 'no-such-mapping.json': no such file
    >>> check_file_options(argparse.Namespace(json_path="-", csv_path="-"))
    Traceback (most recent call last):
    ...
    ValueError: --json and --csv both write to stdout ('-'): give one of them a file name
    """
    for dest, flag in INPUT_FILE_OPTIONS.items():
        path = getattr(args, dest, None)
        if isinstance(path, str) and path:
            if not os.path.exists(path):
                raise FileNotFoundError(f"{flag}: {path!r}: no such file")
            if os.path.isdir(path):
                raise IsADirectoryError(f"{flag}: {path!r} is a directory, not a file")
    outputs: dict[str, str] = {}
    stdout: str | None = None
    for dest, flag in OUTPUT_FILE_OPTIONS.items():
        path = getattr(args, dest, None)
        if isinstance(path, str) and path:
            check_output_path(path, flag)
            if path == "-":
                if stdout is not None:
                    raise ValueError(f"{stdout} and {flag} both write to stdout ('-'): give one of them a file name")
                stdout = flag
                continue
            if os.path.abspath(path) in outputs:
                raise ValueError(f"{flag} and {outputs[os.path.abspath(path)]} name the same file {path!r}")
            outputs[os.path.abspath(path)] = flag


def error_text(exc: BaseException) -> str:
    """The message of an input error as the CLI prints it: an OS error names its file first.

    ``open`` and friends raise ``OSError`` whose text is
    ``[Errno 2] No such file or directory: 'x.toml'``; the CLI says
    ``x.toml: no such file or directory`` (as ``ls`` and ``cp`` do). Other
    errors (and OS errors certbound raised with its own message) keep theirs.

    Parameters
    ----------
    exc : BaseException
        The error.

    Returns
    -------
    str
        The message.

    Examples
    --------
    >>> error_text(FileNotFoundError(2, "No such file or directory", "claims.toml"))
    'claims.toml: no such file or directory'
    >>> error_text(PermissionError(13, "Permission denied", "out.json"))
    'out.json: permission denied'
    >>> error_text(FileNotFoundError("matrix 'w.npy': no such file"))
    "matrix 'w.npy': no such file"
    """
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        where = os.fsdecode(exc.filename)
        if exc.filename2 is not None:
            where += f" -> {os.fsdecode(exc.filename2)}"
        return f"{where}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    return str(exc)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the process exit code.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 for a usage or input error (message on stderr), 130 on Ctrl-C, 141 on a closed pipe.

    Examples
    --------
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     main(["bound", "no-such-model", "--n", "1e6", "--delta", "1.5"])
    2
    >>> print(err.getvalue().strip())
    certbound bound: error: --delta must lie in (0, 1), got 1.5
    """
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            # As parse_args would, but the command's parser says it: its usage and "certbound CMD: error: ...".
            getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # usage errors (exit 2), --help and --version (exit 0): the code, not an exception
        return int(exc.code or 0)
    if getattr(args, "_run", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        # Every command prints certified numbers (or trains for them): refuse up front in a
        # floating-point environment outside the model (the kernel checks again per certificate).
        check_float_environment()
        check_file_options(args)
        # One BLAS thread for the whole command; the kernel raises it for the
        # few products large enough to profit (certbound._blas).
        with single_threaded():
            return int(args._run(args) or 0)
    except BrokenPipeError:
        # The reader went away (``certbound … | head``): stop quietly, as `yes | head` does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("certbound: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, FloatEnvironmentError, MissingDependencyError) as exc:
        # Input problems (missing file, corrupt tensor, bad option), a missing
        # optional dependency and a floating-point environment the certificates do not cover end the run
        # cleanly with the reason; output files are written atomically elsewhere. A library error about
        # an option names it as a parameter (`seq_len`): here it is spelled as this command's flag.
        msg = exc.spelled(args._flags) if isinstance(exc, OptionError) else error_text(exc)
        print(f"certbound {args.command}: error: {msg}", file=sys.stderr)
        return 2
