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
import os
from fractions import Fraction
from typing import Any

from certbound.pipeline import parse_count, parse_number

__all__ = ["NAME", "HELP", "add_arguments", "run", "covering_report"]

NAME = "covering"
HELP = "certified log covering number (Lemma A / Theorem 4.1) of the constraint class of one stored matrix"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", help="a .npy file holding a 2-D float array W (rows = inputs, x -> xW)")
    parser.add_argument("--eps", required=True, metavar="E", help="accuracy ε > 0 (in d_U)")
    parser.add_argument("--rows", required=True, metavar="M", help="number of rows M of U (e.g. n*T)")
    parser.add_argument("--rho", default="1", metavar="R", help="bound on the row norms (input radius, default 1)")
    parser.add_argument("--p", metavar="P,P,...", help="Schatten indices in [0, 2] (default: the grid with --p-grid-m)")
    parser.add_argument("--p-grid-m", type=int, default=8, metavar="M", help="grid {0, 1/m, ..., 2} (default m = 8)")
    parser.add_argument("--rank", type=int, metavar="R",
                        help="rank bound of the class (default: the certified rank upper bound); a value below it is "
                             "accepted only if the exact rank of W over Q (FLINT) is <= R")
    parser.add_argument("--spectrum-mode", choices=("fast", "tight", "arb"), default="fast")
    parser.add_argument("--json", metavar="FILE", help="write the result as JSON")


def _num(text: str, what: str) -> Any:
    return parse_number(text, what)


def covering_report(W: Any, *, eps: Any, rows: int, rho: Any = 1, ps: list[Fraction] | None = None,
                    p_grid_m: int = 8, rank: int | None = None, mode: str = "fast", name: str = "W") -> dict:
    """Certified Lemma A bounds for the classes containing ``W``; JSON-ready dict (Q = ball_to_json)."""
    import numpy as np

    from certbound.ball import DEFAULT_PREC, ball_to_json, decimal_upper, working_precision
    from certbound.bounds import LinearMapClass, certified_spectrum, choose_cover, log_cover_linear_map, p_grid
    from certbound.bounds._arbutil import as_arb
    from certbound.bounds._covering import log_cover_tail_volume
    from certbound.enclose import enclose_singular_values

    W = np.asarray(W)
    if W.ndim != 2 or W.size == 0:
        raise ValueError(f"{name}: expected a non-empty 2-D array, got shape {W.shape}")
    if not np.issubdtype(W.dtype, np.floating) and not np.issubdtype(W.dtype, np.integer):
        raise ValueError(f"{name}: unsupported dtype {W.dtype}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name}: the matrix contains NaN or Inf")
    a, b = W.shape
    if rank is not None and not 1 <= rank <= min(a, b):
        raise ValueError(f"--rank must lie in [1, min(a, b)] = [1, {min(a, b)}]")
    enc = enclose_singular_values(W.astype(np.float64), mode=mode)
    if not enc.certified:
        raise ValueError(f"{name}: the singular-value certificate failed")
    rank_source = None
    if rank is not None and rank < enc.rank.upper:
        # The class {rank <= R} must provably contain W: certify rank(W) <= R exactly (FLINT), never on trust.
        enc = enclose_singular_values(W.astype(np.float64), mode=mode, exact_rank=True)
        if enc.rank.upper > rank:
            raise ValueError(f"--rank {rank}: the stored {name} has rank {enc.rank.upper} (exact, over Q), so the "
                             f"class rank <= {rank} does not contain it")
        rank_source = f"given (--rank), certified: exact rank {enc.rank.upper}"
    elif rank is not None:
        rank_source = f"given (--rank), certified by the enclosure (rank <= {enc.rank.upper})"
    r_arch = rank if rank is not None else max(int(enc.rank.upper), 1)
    cs = certified_spectrum(enc, r_arch, name=name)
    with working_precision(DEFAULT_PREC):
        c = cs.sigma1
        if not bool(c > 0):
            c = as_arb(2.0**-1074)  # W = 0: any positive radius is valid
        e = as_arb(eps)
        r = as_arb(rho)
        results = []
        for p in (ps if ps is not None else p_grid(p_grid_m)):
            p = Fraction(p)
            if not 0 <= p <= 2:
                raise ValueError(f"--p: {p} is not in [0, 2]")
            s = cs.schatten_upper(p)
            cls = LinearMapClass(a, b, r_arch, p, s, c, int(rows))
            from certbound.ball import float_lower

            est, choice = choose_cover(cls, float_lower(e / r))
            val = log_cover_linear_map(cls, e, choice, rho=r)
            results.append({"p": str(p), "schatten_radius": ball_to_json(s), "log_covering_number": ball_to_json(val),
                             "choice": choice.describe(), "_val": val,
                             # table cells: directed-rounding printer, 6 digits (fits the 14-wide column)
                             "_cells": (decimal_upper(s, _TABLE_DIGITS), decimal_upper(val, _TABLE_DIGITS))})
        from certbound.bounds._arbutil import upper_float

        best = min(results, key=lambda d: upper_float(d["_val"]))
        counting = log_cover_tail_volume(a, b, c, e / r)
        out = {
            "matrix": name,
            "shape": [a, b],
            "eps": str(eps),
            "rows": int(rows),
            "rho": str(rho),
            "rank_bound": r_arch,
            "rank_source": cs.rank_source if rank_source is None else rank_source,
            "spectral_radius": ball_to_json(c),
            "parameter_counting": ball_to_json(counting),
            "results": [{k: v for k, v in d.items() if not k.startswith("_")} for d in results],
            "best": {"p": best["p"], "log_covering_number": best["log_covering_number"]},
            "statement": (f"ln N(class, eps, d_U) <= log_covering_number for the class {{rank <= {r_arch}, "
                          f"||.||_2 <= spectral_radius, S_p <= schatten_radius}} of {a}x{b} matrices (which "
                          f"contains the stored W, certified), d_U = max over any {int(rows)} rows u with "
                          f"||u|| <= rho of ||u(W - W')||_2 (proofs/theory-covering.md, Lemma A)"),
        }
        out["_best_text"] = decimal_upper(best["_val"], _TABLE_DIGITS)
        out["_cells"] = [d["_cells"] for d in results]
        out["_counting_text"] = decimal_upper(counting, _TABLE_DIGITS)
    return out


#: Significant digits of the table's upper ends: "-1.23457e-300" is 13 characters, inside the 14-wide columns.
_TABLE_DIGITS = 6


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from certbound.report.writers import atomic_write_text, json_text

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
    if args.json:
        d = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(d):
            raise OSError(f"--json: directory {d} does not exist")
    try:
        W = np.load(args.matrix, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"{args.matrix}: not a plain .npy array ({exc})") from None
    rep = covering_report(W, eps=eps, rows=rows, rho=rho, ps=ps, p_grid_m=args.p_grid_m, rank=args.rank,
                          mode=args.spectrum_mode, name=args.matrix)
    best_text = rep.pop("_best_text")
    cells = rep.pop("_cells")
    counting_text = rep.pop("_counting_text")
    if args.json:
        atomic_write_text(args.json, json_text(rep))
    print(f"certbound covering — Lemma A for {args.matrix} ({rep['shape'][0]}x{rep['shape'][1]}), "
          f"eps = {args.eps}, rows = {rows}, rho = {args.rho}")
    print(f"class: rank <= {rep['rank_bound']} ({rep['rank_source']}), ||W||_2 <= {rep['spectral_radius']['upper']}")
    print(f"{'p':>6} {'S_p radius':>14} {'ln N <=':>14}  choice")
    # Every number printed is an upward-rounded decimal of the certified ball, never a cut string.
    for d, (s_text, n_text) in zip(rep["results"], cells):
        print(f"{d['p']:>6} {s_text:>14} {n_text:>14}  {d['choice']}")
    print(f"best: p = {rep['best']['p']}, ln N <= {best_text}  (parameter counting: {counting_text})")
    return 0
