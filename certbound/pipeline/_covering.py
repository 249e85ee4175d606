"""Lemma A (explicit Theorem 4.1) for one stored matrix: the computation behind ``certbound covering``.

Certifies the singular values of ``W`` (``a × b``, row-vector convention
``x ↦ xW``) and, for each Schatten index ``p``, evaluates in Arb an upper
bound on ``ln N(𝒲, ε, d_U)`` for the smallest class of
``proofs/theory-covering.md`` §A that provably contains ``W``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from certbound._errors import OptionError
from certbound.ball import DEFAULT_PREC, ball_to_json, decimal_upper, float_lower, working_precision
from certbound.bounds import LinearMapClass, certified_spectrum, choose_cover, log_cover_linear_map, p_grid
from certbound.bounds._arbutil import as_arb, upper_float
from certbound.bounds._covering import log_cover_tail_volume
from certbound.enclose import enclose_singular_values
from certbound.pipeline._bound import parse_number
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, spectrum_mode_keyword

__all__ = ["covering_report"]

#: Significant digits of the table's upper ends: "-1.23457e-300" is 13 characters, inside the 14-wide columns.
_TABLE_DIGITS = 6


def covering_report(W: Any, *, eps: Any, rows: int, rho: Any = 1, ps: list[Fraction] | None = None,
                    p_grid_m: int = 8, rank: int | None = None, spectrum_mode: str = DEFAULT_SPECTRUM_MODE,
                    name: str = "W", mode: str | None = None) -> dict:
    """Certified Lemma A bounds for the classes containing ``W``; JSON-ready dict (Q = ball_to_json).

    Parameters
    ----------
    W : array_like, 2-D
        The stored matrix (``a × b``, row-vector convention ``x ↦ xW``), certified as float64.
    eps : number
        The covering radius ε > 0 (a string is read as an exact decimal).
    rows : int
        The number of rows M ≥ 1 of U in d_U (e.g. n·T).
    rho : number
        The bound ρ > 0 on the row norms of U (the input radius).
    ps : list of Fraction, optional
        Schatten indices in [0, 2] (default: the grid ``p_grid(p_grid_m)``).
    p_grid_m : int
        Resolution of the default grid {0, 1/m, …, 2}.
    rank : int, optional
        The class's rank bound (default: the certified rank upper bound); a value below it is
        accepted only when the exact rank of W over ℚ is ≤ ``rank``.
    spectrum_mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode of the singular-value kernel (:data:`certbound.pipeline.SPECTRUM_MODES`;
        default ``"auto"``); recorded as ``spectrum_mode``, the certificate used as ``certificate``.
    name : str
        The matrix's name in messages and in the result.
    mode : str, optional
        Deprecated name of ``spectrum_mode`` (warns).

    Returns
    -------
    dict
        ``results`` (per p: the Schatten radius and the certified ``log_covering_number`` ball,
        whose upper end is the bound), ``best``, ``parameter_counting``, ``statement``; keys
        starting with ``_`` are the command's table cells.

    Examples
    --------
    >>> import numpy as np
    >>> rep = covering_report(np.diag([2.0, 1.0]), eps="0.1", rows=10, ps=[1])
    >>> rep["rank_bound"], rep["spectrum_mode"], rep["results"][0]["p"]
    (2, 'auto', '1')
    """
    mode = spectrum_mode_keyword(spectrum_mode, mode)
    # ε ≤ 0 or ρ ≤ 0 would give the trivial ball [-∞, ∞]: a bad input, refused
    for what, value in (("eps", eps), ("rho", rho)):
        if not parse_number(value, what) > 0:
            raise OptionError(f"`{what}` must be > 0, got {value!r}")
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise OptionError(f"`rows` must be a positive integer, got {rows!r}")
    W = np.asarray(W)
    if W.ndim != 2 or W.size == 0:
        raise ValueError(f"{name}: expected a non-empty 2-D array, got shape {W.shape}")
    if not np.issubdtype(W.dtype, np.floating) and not np.issubdtype(W.dtype, np.integer):
        raise ValueError(f"{name}: unsupported dtype {W.dtype}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name}: the matrix contains NaN or Inf")
    a, b = W.shape
    if rank is not None and not 1 <= rank <= min(a, b):
        raise OptionError(f"`rank` must lie in [1, min(a, b)] = [1, {min(a, b)}]")
    enc = enclose_singular_values(W.astype(np.float64), mode=mode)
    if not enc.certified:
        raise ValueError(f"{name}: the singular-value certificate failed")
    rank_source = None
    if rank is not None and rank < enc.rank.upper:
        # The class {rank <= R} must provably contain W: certify rank(W) <= R exactly (FLINT), never on trust.
        enc = enclose_singular_values(W.astype(np.float64), mode=mode, exact_rank=True)
        if enc.rank.upper > rank:
            raise OptionError(f"`rank` {rank}: the stored {name} has rank {enc.rank.upper} (exact, over Q), so the "
                             f"class rank <= {rank} does not contain it")
        rank_source = f"given (rank), certified: exact rank {enc.rank.upper}"
    elif rank is not None:
        rank_source = f"given (rank), certified by the enclosure (rank <= {enc.rank.upper})"
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
                raise OptionError(f"`ps`: {p} is not in [0, 2]")
            s = cs.schatten_upper(p)
            cls = LinearMapClass(a, b, r_arch, p, s, c, int(rows))
            est, choice = choose_cover(cls, float_lower(e / r))
            val = log_cover_linear_map(cls, e, choice, rho=r)
            results.append({"p": str(p), "schatten_radius": ball_to_json(s), "log_covering_number": ball_to_json(val),
                             "choice": choice.describe(), "_val": val,
                             # table cells: directed-rounding printer, 6 digits (fits the 14-wide column)
                             "_cells": (decimal_upper(s, _TABLE_DIGITS), decimal_upper(val, _TABLE_DIGITS))})
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
            "spectrum_mode": mode,
            "certificate": enc.mode,
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

