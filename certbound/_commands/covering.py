"""``certbound covering W.npy --eps E --rows M``: Lemma A (explicit Theorem 4.1) for one stored matrix.

Certifies the singular values of ``W`` (``a × b``, row-vector convention
``x ↦ xW``) and, for each Schatten index ``p`` (``--p`` or the grid
``{0, 1/m, …, 2}``), evaluates in Arb an upper bound on
``ln N(𝒲, ε, d_U)`` for the smallest class of ``proofs/theory-covering.md`` §A
that provably contains ``W``: ``rank ≤ r̄`` (``--rank``, default the certified
rank upper bound), ``‖·‖₂ ≤ c`` (certified σ₁), ``S_p ≤ s`` (certified upper
end of ``S_p``), over any ``M`` rows of norm ≤ ρ. The analysis parameters
(τ, ε split, sphere-net δ) are float-optimised and then evaluated exactly.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

import numpy as np

from certbound._commands._options import add_spectrum_mode_option, write_outputs
from certbound.pipeline import covering_report, parse_count, parse_number
from certbound.report.writers import json_text

__all__ = ["NAME", "HELP", "OPTION_FLAGS", "add_arguments", "load_npy_matrix", "run"]

NAME = "covering"
HELP = "certified log covering number (Lemma A / Theorem 4.1) of the constraint class of one stored matrix"

#: covering_report's parameters whose flag is not ``--`` + their dest.
OPTION_FLAGS = {"ps": "--p"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound covering``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("matrix", help="a .npy file holding a 2-D float array W (rows = inputs, x -> xW)")
    parser.add_argument("--eps", required=True, metavar="E", help="accuracy ε > 0 (in d_U)")
    parser.add_argument("--rows", required=True, metavar="M", help="number of rows M of U (e.g. n*T)")
    parser.add_argument("--rho", default="1", metavar="R", help="bound on the row norms (input radius, default 1)")
    parser.add_argument("--p", metavar="P,P,...", help="Schatten indices in [0, 2] (default: the grid with --p-grid-m)")
    parser.add_argument("--p-grid-m", type=int, default=8, metavar="M", help="grid {0, 1/m, ..., 2} (default m = 8)")
    parser.add_argument("--rank", type=int, metavar="R",
                        help="rank bound of the class (default: the certified rank upper bound); a value below it is "
                             "accepted only if the exact rank of W over Q (FLINT) is <= R")
    add_spectrum_mode_option(parser)
    parser.add_argument("--json", metavar="FILE", help="write the result as JSON ('-' for stdout)")


def _num(text: str, what: str) -> Any:
    return parse_number(text, what)


def load_npy_matrix(path: str) -> np.ndarray:
    """The array stored in the ``.npy`` file ``path``, with an error naming the file and the problem.

    Parameters
    ----------
    path : str
        A file written by ``numpy.save``.

    Returns
    -------
    ndarray
        Its array (shape and dtype are checked later, by the kernel).

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If there is no such file.
    ValueError
        If the file is not a ``.npy`` file (an ``.npz`` archive, text, …) or
        holds Python objects.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> np.save(os.path.join(d, "w.npy"), np.eye(2)); load_npy_matrix(os.path.join(d, "w.npy")).shape
    (2, 2)
    >>> np.savez(os.path.join(d, "w.npz"), W=np.eye(2))
    >>> load_npy_matrix(os.path.join(d, "w.npz"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../w.npz: an .npz archive, not a .npy file (save one array with numpy.save)
    """
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except FileNotFoundError:
        raise FileNotFoundError(f"matrix {path!r}: no such file (a .npy file holding a 2-D array)") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"matrix {path!r} is a directory, not a .npy file") from None
    if magic[:2] == b"PK":
        raise ValueError(f"{path}: an .npz archive, not a .npy file (save one array with numpy.save)")
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file (no NumPy header; write the matrix with numpy.save)")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"{path}: not a plain .npy array ({exc})") from None


def run(args: argparse.Namespace) -> int:
    """Run ``certbound covering`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments :func:`add_arguments` defines.

    Returns
    -------
    int
        The exit status: 0 on success.

    Raises
    ------
    ValueError, OSError
        For bad options or files; :func:`certbound.cli.main` prints them as
        ``certbound: error: …`` (exit status 2).
    """
    eps = _num(args.eps, "--eps")
    if not eps > 0:
        raise ValueError("--eps must be > 0")
    rho = _num(args.rho, "--rho")
    if not rho > 0:
        raise ValueError("--rho must be > 0")
    rows = parse_count(args.rows, "--rows")
    ps = None
    if args.p:
        try:
            ps = [Fraction(t.strip()) for t in args.p.split(",") if t.strip()]
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"--p: {args.p!r} is not a comma-separated list of numbers") from None
    if args.p_grid_m < 1:
        raise ValueError("--p-grid-m must be ≥ 1")
    # --json's directory is checked before any work by certbound.cli.check_file_options
    W = load_npy_matrix(args.matrix)
    rep = covering_report(W, eps=eps, rows=rows, rho=rho, ps=ps, p_grid_m=args.p_grid_m, rank=args.rank,
                          spectrum_mode=args.spectrum_mode, name=args.matrix)
    best_text = rep.pop("_best_text")
    cells = rep.pop("_cells")
    counting_text = rep.pop("_counting_text")
    if write_outputs([(args.json, json_text(rep))] if args.json else []):
        return 0  # the JSON went to stdout
    print(f"certbound covering — Lemma A for {args.matrix} ({rep['shape'][0]}x{rep['shape'][1]}), "
          f"eps = {args.eps}, rows = {rows}, rho = {args.rho}")
    print(f"class: rank <= {rep['rank_bound']} ({rep['rank_source']}), ||W||_2 <= {rep['spectral_radius']['upper']}")
    print(f"{'p':>6} {'S_p radius':>14} {'ln N <=':>14}  choice")
    # Every number printed is an upward-rounded decimal of the certified ball, never a cut string.
    for d, (s_text, n_text) in zip(rep["results"], cells):
        print(f"{d['p']:>6} {s_text:>14} {n_text:>14}  {d['choice']}")
    print(f"best: p = {rep['best']['p']}, ln N <= {best_text}  (parameter counting: {counting_text})")
    return 0
