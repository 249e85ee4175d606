"""Chaining with explicit constants (Lemma C/C1) and its certified Riemann form (Lemma R).

``proofs/theory-chaining.md`` (Lemmas C, C1, R; spec §4). The Dudley quantity

    𝔇_n = 4α + (12/√n) Σ_{k<K} (e_{k+1} − e_k) · √Ĥ_k,   α = e₀ < … < e_K = B_ℒ/4,

with ``Ĥ_k`` any upper bound on ``ln N(ℱ|_S, e_k/L_ℒ, d^∞_S)``, bounds the
empirical Rademacher complexity of the loss class for every sample. The
partition points are exact dyadic rationals (floats); the sum is evaluated in
Arb. Because the true integrand is nonincreasing, ``√Ĥ_k`` may be replaced by
the running minimum ``min_{k'≤k} √Ĥ_{k'}`` (spec §11 (f)).

Examples
--------
>>> from fractions import Fraction as F
>>> part = dudley_partition(F(1, 64), F(1, 4), 2.0)
>>> [str(e) for e in part]
['1/64', '1/32', '1/16', '1/8', '1/4']
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Sequence

from flint import arb

from certbound.ball import upper_fraction
from certbound.bounds._arbutil import prec, Number, as_arb, exact_dyadic

__all__ = [
    "dudley_partition",
    "dudley_cutoff",
    "dudley_bound",
    "dudley_terms",
    "upper_riemann_sum",
]


def dudley_partition(cutoff: Number, upper: Number, ratio: float = 1.05) -> list[Fraction]:
    """Geometric partition ``α = e₀ < e₁ < … < e_K = upper`` of exact rationals (Lemma R).

    ``e_k`` are the floats ``α·ratio^k`` (converted exactly) while below
    ``upper``; the last point is ``upper`` itself. Any strictly increasing
    partition is valid; this one is a convenient default.
    """
    a = Fraction(cutoff) if not isinstance(cutoff, float) else exact_dyadic(cutoff)
    u = Fraction(upper) if not isinstance(upper, float) else exact_dyadic(upper)
    if not (0 < a <= u):
        raise ValueError(f"need 0 < cutoff ≤ upper, got cutoff={float(a)}, upper={float(u)}")
    if not ratio > 1:
        raise ValueError(f"partition ratio must be > 1, got {ratio}")
    pts = [a]
    af = float(a)
    k = 1
    while True:
        e = exact_dyadic(af * ratio**k)
        if e >= u:
            break
        if e > pts[-1]:
            pts.append(e)
        k += 1
    if pts[-1] != u:
        pts.append(u)
    return pts


def dudley_cutoff(entropy_upper: Callable[[float], float], n_samples: int, upper: float,
                  *, lowest: float | None = None, ratio: float = 1.05) -> float:
    """Float choice of the cut-off α (an analysis parameter; any α ∈ (0, B_ℒ/4] is valid).

    Balances ``4α`` against the chaining integral: the optimum satisfies
    ``(12/√n)·√Ĥ(α) = 4``, i.e. ``Ĥ(α) ≤ n/9`` just above α. Scans a geometric
    grid downward from ``upper`` and returns the smallest point where the
    float entropy estimate is still ≤ n/9 (``upper`` if none).
    """
    target = n_samples / 9.0
    lowest = upper * 1e-15 if lowest is None else lowest
    e, best = upper, upper
    while e >= lowest:
        if entropy_upper(e) <= target:
            best = e
        else:
            break
        e /= ratio
    return best


def _running_min_sqrt(values: Sequence[arb], running_min: bool) -> list[arb]:
    """√(upper endpoint) of each value, optionally replaced by the running minimum."""
    out: list[arb] = []
    best_q: Fraction | None = None
    best: arb | None = None
    for v in values:
        q = upper_fraction(v) if not v.is_nan() else None
        if q is None:
            cur = arb.pos_inf()
        else:
            cur = as_arb(max(q, Fraction(0))).sqrt()
        if running_min and best is not None and (q is None or (best_q is not None and best_q <= q)):
            out.append(best)
            continue
        best, best_q = cur, q
        out.append(cur)
    return out


def _check_partition(partition: Sequence[Fraction]) -> list[Fraction]:
    """Lemma R's hypothesis: exact points ``0 < e₀ < e₁ < … < e_K`` (else a sum term could be ≤ 0)."""
    part = [exact_dyadic(e) if isinstance(e, float) else Fraction(e) for e in partition]
    if not part:
        raise ValueError("the partition needs at least one point (the cut-off α)")
    if part[0] <= 0:
        raise ValueError(f"the partition must start at a cut-off α > 0, got {float(part[0])}")
    if any(b <= a for a, b in zip(part, part[1:])):
        raise ValueError("the partition points must be strictly increasing")
    return part


def dudley_terms(partition: Sequence[Fraction], node_entropies: Sequence[arb], *, running_min: bool = True) -> list[arb]:
    """The summands ``(e_{k+1} − e_k)·√Ĥ_k`` (balls) of Lemma R's upper sum."""
    partition = _check_partition(partition)
    if len(node_entropies) != len(partition) - 1:
        raise ValueError("need one entropy bound per partition interval (len(partition) − 1)")
    with prec():
        roots = _running_min_sqrt(node_entropies, running_min)
        return [as_arb(partition[k + 1] - partition[k]) * roots[k] for k in range(len(roots))]


def dudley_bound(
    partition: Sequence[Fraction],
    node_entropies: Sequence[arb],
    n_samples: int,
    *,
    running_min: bool = True,
) -> arb:
    """``𝔇_n = 4α + (12/√n) Σ (e_{k+1} − e_k) √Ĥ_k`` (Lemma R boxed sum, spec §4).

    ``partition[0]`` is α, ``partition[-1]`` must be ``B_ℒ/4``;
    ``node_entropies[k]`` bounds ``ln N(ℱ|_S, e_k/L_ℒ, d^∞_S)``. Sound because
    the true integrand is nonincreasing (Lemma R) and Lemma C/C1 bound the
    Rademacher complexity by the integral. ``proofs/theory-chaining.md`` §C, §C1, §R.

    >>> from fractions import Fraction as F
    >>> v = dudley_bound([F(1, 4)], [], 100)           # empty sum: 4α = B_ℒ
    >>> float(v.mid())
    1.0
    """
    if isinstance(n_samples, bool) or int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be an integer ≥ 1, got {n_samples!r}")
    partition = _check_partition(partition)
    with prec():
        s = arb(0)
        for t in dudley_terms(partition, node_entropies, running_min=running_min):
            s += t
        return 4 * as_arb(partition[0]) + 12 * s / arb(int(n_samples)).sqrt()


def upper_riemann_sum(h: Callable[[Fraction], arb], partition: Sequence[Fraction]) -> arb:
    """``Σ (e_{k+1} − e_k) h(e_k)``: upper bound on ``∫ h`` for nonincreasing ``h ≥ 0`` (Lemma R).

    >>> from fractions import Fraction as F
    >>> v = upper_riemann_sum(lambda e: 1 / as_arb(e), [F(1), F(2), F(4)])   # ∫₁⁴ dx/x = ln 4
    >>> float(v.mid()), math.log(4) <= float(v.mid())
    (2.0, True)
    """
    if any(b <= a for a, b in zip(partition, partition[1:])):
        raise ValueError("the partition points must be strictly increasing")
    with prec():
        s = arb(0)
        for k in range(len(partition) - 1):
            s += as_arb(partition[k + 1] - partition[k]) * h(partition[k])
        return s
