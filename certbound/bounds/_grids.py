"""Index grid, peeling grids and prior masses of Theorem 2 (spec §6.1, §6.4).

``proofs/theory-theorems.md`` §6.1 (grids and priors), §6.3 (peeling). All grids
and priors must be fixed before seeing the sample (they may depend on the
architecture, ``n`` and ``δ``); the grid *levels* used are determined by the
trained weights.

Examples
--------
>>> p_grid_m(2, 4)          # ⌈2 + ln 4⌉
4
>>> [str(p) for p in p_grid(2)]
['0', '1/2', '1', '3/2', '2']
>>> k, v = grid_round_up(1.2, 1, 16)      # 2^{5/16} = 1.2419… ≥ 1.2
>>> k, round(float(v.mid()), 4)
(5, 1.2419)
>>> round(float(two_sided_log_inv_prior(5).mid()), 3)      # ln(3·6·7/2)
4.143
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from certbound.bounds._arbutil import prec, Number, as_arb, ceil_upper, upper_float

__all__ = [
    "p_grid_m",
    "p_grid",
    "grid_value",
    "grid_round_up",
    "two_sided_prior",
    "two_sided_log_inv_prior",
    "two_sided_prior_mass",
    "log_inv_prior",
]


def p_grid_m(n_layers: int, d_model: int) -> int:
    """Default grid resolution ``m = ⌈L + ln max(N, 2)⌉`` (natural log, as the authors' code; spec §6.1).

    Evaluated in Arb; ``ln N`` is irrational for ``N ≥ 2`` so the ceiling is
    decided exactly at working precision.
    """
    with prec():
        x = arb(int(n_layers)) + arb(max(int(d_model), 2)).log()
        lo = math.floor(float(x.mid()))
        if bool(x > lo) and bool(x < lo + 1):
            return lo + 1
        return int(ceil_upper(x))


def p_grid(m: int) -> list[Fraction]:
    """``𝒫_m = {0, 1/m, …, 2}`` (``2m + 1`` points), exact rationals (spec §6.1)."""
    if not (isinstance(m, int) and m >= 1):
        raise ValueError(f"grid resolution m must be a positive integer, got {m!r}")
    return [Fraction(i, m) for i in range(2 * m + 1)]


def grid_value(base: Number, steps: int, k: int) -> arb:
    """``base · 2^{k/steps}`` as a ball."""
    with prec():
        return as_arb(base) * arb(2) ** (arb(int(k)) / int(steps))


def grid_round_up(x: Number, base: Number, steps: int) -> tuple[int, arb]:
    """Smallest-found grid level ``k`` with ``base·2^{k/steps} ≥ x``, verified in Arb (spec §6.3).

    ``k = ⌈steps·log₂(x_up/base)⌉`` from the upper endpoint ``x_up`` of ``x``
    (floats only *propose* k), then ``base·2^{k/steps} ≥ x`` is **proved** in
    ball arithmetic, increasing ``k`` while undecided. Returns ``(k, grid
    value ball)``; the value is ``< 2^{1/steps}·x_up`` up to the one-step
    correction (spec §9 item 11). ``x ≤ 0`` (e.g. ``Ŝ = 0``) returns level 0
    (any level is valid then, spec §11 (i)).
    """
    if not (isinstance(steps, int) and steps >= 1):
        raise ValueError(f"grid steps per octave must be a positive integer, got {steps!r}")
    with prec():
        xa, b = as_arb(x), as_arb(base)
        if not bool(b > 0):
            raise ValueError(f"grid base must be > 0, got {base!r}")
        xu = upper_float(xa)
        if not math.isfinite(xu):
            raise ValueError(f"cannot place an unbounded quantity {xa} on a grid")
        if xu <= 0:
            k = 0
        else:
            ratio = xu / upper_float(b)
            k = math.ceil(steps * math.log2(ratio)) if ratio > 0 else 0
            # float log2 may be off by an ulp: step back while still provably above
            while bool(grid_value(b, steps, k - 1) >= xa):
                k -= 1
        while not bool(grid_value(b, steps, k) >= xa):
            k += 1
        return k, grid_value(b, steps, k)


def two_sided_prior(k: int) -> Fraction:
    """``π(k) = 2 / (3(|k|+1)(|k|+2))``, a probability on ℤ (spec §6.1).

    >>> two_sided_prior(0)
    Fraction(1, 3)
    """
    k = abs(int(k))
    return Fraction(2, 3 * (k + 1) * (k + 2))


def two_sided_prior_mass(K: int) -> Fraction:
    """``Σ_{|k|≤K} π(k) = 1 − 4/(3(K+2))`` exactly (spec §9 item 11).

    >>> two_sided_prior_mass(3) == sum(two_sided_prior(k) for k in range(-3, 4))
    True
    """
    return sum((two_sided_prior(k) for k in range(-K, K + 1)), Fraction(0))


def two_sided_log_inv_prior(k: int) -> arb:
    """``ln(1/π(k)) = ln(3(|k|+1)(|k|+2)/2)`` as a ball."""
    k = abs(int(k))
    with prec():
        return (arb(3 * (k + 1) * (k + 2)) / 2).log()


def log_inv_prior(
    m: int,
    matrices: "list[tuple[Fraction, int | None, int]]",
    spectral_levels: "list[int]" = (),  # type: ignore[assignment]
    readout_level: int | None = None,
) -> arb:
    """``ln(1/π(κ))`` of spec §6.4 (``proofs/theory-theorems.md`` §6.1, §6.4).

    ``matrices``: one ``(p_j, k_j, r̄_j)`` per non-readout matrix — Schatten
    level ``k_j`` for ``p_j > 0`` (prior ``2/(3(|k|+1)(|k|+2))``), ignored for
    ``p_j = 0`` (uniform prior ``1/(r̄_j + 1)`` on the rank level); every matrix
    pays ``ln(2m + 1)`` for its index. ``spectral_levels`` (mode (ii)) and
    ``readout_level`` add the two-sided prior of each spectral grid level.

    >>> round(float(log_inv_prior(4, [(Fraction(0), None, 2), (Fraction(1), 1, 4)], [0]).mid()), 4)
    8.7889
    """
    with prec():
        tot = arb(0)
        for p, k, rbar in matrices:
            tot += arb(2 * m + 1).log()
            tot += arb(int(rbar) + 1).log() if Fraction(p) == 0 else two_sided_log_inv_prior(int(k))
        for q in spectral_levels:
            tot += two_sided_log_inv_prior(int(q))
        if readout_level is not None:
            tot += two_sided_log_inv_prior(int(readout_level))
        return tot
