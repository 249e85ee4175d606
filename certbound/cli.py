"""The ``certbound`` command line: argument parsing and wiring only.

Every sub-command lives in its own module of :mod:`certbound._commands`
(``NAME``, ``HELP``, ``add_arguments``, ``run``); this module discovers them,
so adding a command never touches this file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from types import ModuleType

from certbound.ball import FloatEnvironmentError

__all__ = ["main", "build_parser"]


def _command_modules() -> list[ModuleType]:
    from certbound import _commands

    mods = []
    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"certbound._commands.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per command module."""
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
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("certbound: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, FloatEnvironmentError) as exc:
        # Input problems (missing file, corrupt tensor, bad option) and a
        # floating-point environment the certificates do not cover end the run
        # cleanly with the reason; output files are written atomically elsewhere.
        print(f"certbound {args.command}: error: {exc}", file=sys.stderr)
        return 2
