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
>>> light_index_prior(Fraction(0), 5), light_index_prior(Fraction(1, 5), 5)
(Fraction(1, 2), Fraction(1, 20))
>>> light_spectral_prior(-495, 16), light_spectral_prior(-31, 16, coarse=True)   # π₁(-30)/32, π₁(-31)/2
(Fraction(1, 47616), Fraction(1, 3168))
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
    "PRIOR_FAMILIES",
    "COARSE_SPECTRAL_THRESHOLD",
    "light_index_prior",
    "light_rank_prior",
    "light_spectral_prior",
    "index_log_inv_prior",
    "rank_log_inv_prior",
    "spectral_log_inv_prior",
    "spectral_grid_round_up",
]

#: Prior families of Theorem 2: ``"spec"`` (§6.1: uniform index and rank priors, one-resolution spectral
#: grid) and ``"light"`` (§6.1b, the default: mass ½ on p = 0 and on s = r̄ given p = 0, two-resolution
#: spectral grid).
PRIOR_FAMILIES = ("light", "spec")

#: Light priors: spectral radii whose certified σ₁ is below this use the coarse (one step per octave)
#: resolution. A heuristic (any choice is valid, both resolutions are in the union bound, §6.1b).
COARSE_SPECTRAL_THRESHOLD = Fraction(1, 2**20)


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


# ---------------------------------------------------------------------------
# Light priors (proofs/theory-theorems.md §6.1b, Lemma 6.1b)


def _check_family(prior: str) -> None:
    if prior not in PRIOR_FAMILIES:
        raise ValueError(f"prior family must be one of {PRIOR_FAMILIES}, got {prior!r}")


def light_index_prior(p: Fraction, m: int) -> Fraction:
    """``π_P(0) = 1/2``, ``π_P(p) = 1/(4m)`` on ``𝒫_m ∖ {0}`` (Lemma 6.1b(a): sums to 1).

    >>> sum(light_index_prior(p, 3) for p in p_grid(3))
    Fraction(1, 1)
    """
    if not (isinstance(m, int) and m >= 1):
        raise ValueError(f"grid resolution m must be a positive integer, got {m!r}")
    p = Fraction(p)
    if not (0 <= p <= 2 and (p * m).denominator == 1):
        raise ValueError(f"p = {p} is not on the grid P_{m}")
    return Fraction(1, 2) if p == 0 else Fraction(1, 4 * m)


def light_rank_prior(s: int, rank_bound: int) -> Fraction:
    """``π(r̄ | p=0) = 1/2``, ``π(s | p=0) = 1/(2r̄)`` for ``s < r̄`` (Lemma 6.1b(b): sums to 1).

    >>> light_rank_prior(4, 4), light_rank_prior(0, 4)
    (Fraction(1, 2), Fraction(1, 8))
    """
    s, r = int(s), int(rank_bound)
    if r < 1 or not 0 <= s <= r:
        raise ValueError(f"need 0 <= s <= rank bound (>= 1), got s={s}, rank bound={r}")
    return Fraction(1, 2) if s == r else Fraction(1, 2 * r)


def light_spectral_prior(level: int, steps: int, coarse: bool = False) -> Fraction:
    """Two-resolution spectral prior (Lemma 6.1b(c)).

    Fine level ``q`` (value ``c₀ 2^{q/ν}``): ``π₁(⌈q/ν⌉)/(2ν)``; coarse level
    ``j`` (value ``c₀ 2^j``): ``π₁(j)/2``; ``π₁`` is :func:`two_sided_prior`.

    >>> light_spectral_prior(0, 16), light_spectral_prior(0, 16, coarse=True)
    (Fraction(1, 96), Fraction(1, 6))
    """
    if not (isinstance(steps, int) and steps >= 1):
        raise ValueError(f"grid steps per octave must be a positive integer, got {steps!r}")
    level = int(level)
    if coarse:
        return two_sided_prior(level) / 2
    octave = -((-level) // steps)  # ⌈level/steps⌉ exactly (integers)
    return two_sided_prior(octave) / (2 * steps)


def index_log_inv_prior(p: Fraction, m: int, prior: str = "light") -> arb:
    """``ln 1/π_P(p)``: ``ln(2m+1)`` (§6.1, ``"spec"``) or ``ln 2`` / ``ln 4m`` (§6.1b, ``"light"``)."""
    _check_family(prior)
    with prec():
        if prior == "spec":
            return arb(2 * int(m) + 1).log()
        q = light_index_prior(p, m)
        return (arb(q.denominator) / q.numerator).log()


def rank_log_inv_prior(s: int, rank_bound: int, prior: str = "light") -> arb:
    """``ln 1/π(s | p=0)``: ``ln(r̄+1)`` (``"spec"``) or ``ln 2`` / ``ln 2r̄`` (``"light"``)."""
    _check_family(prior)
    with prec():
        if prior == "spec":
            return arb(int(rank_bound) + 1).log()
        q = light_rank_prior(s, rank_bound)
        return (arb(q.denominator) / q.numerator).log()


def spectral_log_inv_prior(level: int, steps: int, prior: str = "light", coarse: bool = False) -> arb:
    """``ln 1/π`` of a spectral (or readout) grid level: §6.1 (``"spec"``, one resolution) or §6.1b."""
    _check_family(prior)
    if prior == "spec":
        if coarse:
            raise ValueError("the spec prior has no coarse spectral resolution")
        return two_sided_log_inv_prior(level)
    q = light_spectral_prior(level, steps, coarse)
    with prec():
        return (arb(q.denominator) / q.numerator).log()


def spectral_grid_round_up(x: Number, base: Number, steps: int, prior: str = "light") -> tuple[int, arb, bool, arb]:
    """Place a certified radius on the spectral grid and price it: ``(level, value, coarse, ln 1/π)``.

    Lemma 6.2 rounding (verified in Arb) on the fine grid ``base·2^{q/steps}``,
    or — light priors, ``x`` below :data:`COARSE_SPECTRAL_THRESHOLD` — on the
    coarse grid ``base·2^j`` (proofs/theory-theorems.md §6.1b).

    >>> q, v, coarse, cost = spectral_grid_round_up(5e-10, 1, 16)
    >>> q, coarse, round(float(cost.mid()), 3)          # octave 2^-30 ≥ 5e-10, cost ln(2·(3/2)·31·32)
    (-30, True, 7.998)
    """
    _check_family(prior)
    coarse = prior == "light" and bool(as_arb(x) < as_arb(COARSE_SPECTRAL_THRESHOLD))
    level, value = grid_round_up(x, base, 1 if coarse else steps)
    return level, value, coarse, spectral_log_inv_prior(level, steps, prior, coarse)
