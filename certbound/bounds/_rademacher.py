"""Rademacher estimates of the loss class beyond chaining: the floor (Lemma C0) and the one-step bound (Lemma C2).

``proofs/theory-chaining.md`` §C (Lemma C0), §C2 (Lemma C2), §C3 (the reported
minimum). For the loss class ``𝒢(κ)|_S`` (entries in ``[0, B_ℒ]``) and every
sample satisfying (A1):

* Lemma C0 (diameter): ``R̂(𝒢|_S) ≤ B_ℒ/2``;
* Lemma C2 (one step): ``R̂(𝒢|_S) ≤ 𝔒_n(α) = α + (B_ℒ/2)·√(2 Ĥ/n)`` for every
  ``α > 0`` and ``Ĥ ≥ ln N(ℱ(κ)|_S, α/L_ℒ, d^∞)``;
* Theorem R (Dudley, :mod:`certbound.bounds._dudley`): ``R̂ ≤ 𝔇_n``.

The reported term is the minimum of the three (§C3): each is a valid,
sample-independent upper bound of the same quantity, so choosing the smallest
costs nothing in the union bound. α is chosen by a float search
(:func:`one_step_cutoff`) and the value is re-evaluated in Arb
(:func:`one_step_bound`).

Examples
--------
>>> from fractions import Fraction as F
>>> float(diameter_bound(4).mid())
2.0
>>> v = one_step_bound(F(1, 8), 50, 10**4, 1)     # 1/8 + (1/2)·√(100/10⁴) = 0.175
>>> round(float(v.mid()), 12)
0.175
>>> name, value = certified_rademacher_minimum({"diameter": diameter_bound(1), "one-step": v})
>>> name, round(float(value.mid()), 3)
('one-step', 0.175)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Mapping, Sequence

import numpy as np
from flint import arb

from certbound.ball import upper_fraction
from certbound.bounds._arbutil import Number, as_arb, exact_dyadic, prec

__all__ = [
    "RADEMACHER_METHODS",
    "diameter_bound",
    "one_step_bound",
    "one_step_cutoff",
    "one_step_float",
    "certified_rademacher_minimum",
]

#: Names of the estimates, in the order used to break ties (the simplest first).
RADEMACHER_METHODS = ("diameter", "one-step", "dudley")


def _positive_int(n: object, what: str = "n_samples") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{what} must be an integer ≥ 1, got {n!r}")
    return int(n)


def diameter_bound(loss_bound: Number) -> arb:
    """Lemma C0 for the loss class: ``R̂(𝒢(κ)|_S) ≤ B_ℒ/2`` for every sample (the trivial floor).

    ``proofs/theory-chaining.md`` §C (Lemma C0): centre ``c₀ = (B_ℒ/2)·1``,
    Cauchy–Schwarz with ``‖σ‖₂ = √n``; the loss values lie in ``[0, B_ℒ]``.

    Parameters
    ----------
    loss_bound : number
        ``B_ℒ > 0`` (A2).

    Returns
    -------
    arb
        A ball containing ``B_ℒ/2``; its upper endpoint is the bound.

    >>> float(diameter_bound(1).mid())
    0.5
    """
    with prec():
        b = as_arb(loss_bound)
        if not bool(b > 0):
            raise ValueError(f"loss_bound must be > 0, got {loss_bound!r}")
        return b / 2


def one_step_bound(cutoff: Number, entropy: Number, n_samples: int, loss_bound: Number) -> arb:
    """Lemma C2: ``𝔒_n(α) = α + (B_ℒ/2)·√(2Ĥ/n)``, an upper bound on ``R̂(𝒢(κ)|_S)``.

    ``proofs/theory-chaining.md`` §C2. Valid for every ``α > 0`` whenever
    ``Ĥ ≥ ln N(ℱ(κ)|_S, α/L_ℒ, d^∞)`` (e.g. the Arb value of
    ``Ĥ_net(α/L_ℒ)``, Corollary B1): the Corollary C1 cover at accuracy α lies
    in ``[0, B_ℒ]ⁿ``, so Massart's lemma applies with radius ``√n·B_ℒ/2``.

    Parameters
    ----------
    cutoff : number
        The scale α > 0 (an exact number; a float is read exactly).
    entropy : number or arb
        ``Ĥ``; a ball is used through its upper endpoint (an unbounded or NaN
        ball gives ``+∞``, a valid but useless bound).
    n_samples : int
        ``n ≥ 1``.
    loss_bound : number
        ``B_ℒ > 0``.

    Returns
    -------
    arb
        Its upper endpoint is the certified value.

    >>> float(one_step_bound(0.5, 0, 10, 1).mid())      # a single cover element: only α remains
    0.5
    """
    n = _positive_int(n_samples)
    with prec():
        a = as_arb(exact_dyadic(cutoff) if isinstance(cutoff, float) else cutoff)
        if not bool(a > 0):
            raise ValueError(f"the one-step scale α must be > 0, got {cutoff!r}")
        b = as_arb(loss_bound)
        if not bool(b > 0):
            raise ValueError(f"loss_bound must be > 0, got {loss_bound!r}")
        h = as_arb(entropy)
        q = upper_fraction(h) if h.is_finite() else None
        if q is None:
            return arb.pos_inf()
        root = as_arb(max(q, Fraction(0))).sqrt()
        return a + b / 2 * root * (arb(2) / n).sqrt()


def one_step_float(cutoffs: np.ndarray, entropies: np.ndarray, n_samples: int, loss_bound: float) -> np.ndarray:
    """Float values of ``α + (B_ℒ/2)√(2Ĥ/n)`` (search only; see :func:`one_step_bound` for the certified value).

    >>> one_step_float(np.array([0.1]), np.array([50.0]), 10**4, 1.0).round(6).tolist()
    [0.15]
    """
    a = np.asarray(cutoffs, dtype=float)
    h = np.maximum(np.asarray(entropies, dtype=float), 0.0)
    return a + 0.5 * float(loss_bound) * np.sqrt(2.0 * h / float(n_samples))


def one_step_cutoff(entropy_float: Callable[[np.ndarray], np.ndarray], n_samples: int, loss_bound: float,
                    *, lowest: float | None = None, ratio: float = 1.25, refine: int = 8) -> float:
    """Float search of the scale α of Lemma C2 (an analysis parameter; any α > 0 is valid).

    Scans a geometric grid from ``B_ℒ/2`` down to ``lowest`` (default
    ``1e-10·B_ℒ``) with ``entropy_float(α_array) → Ĥ`` (float estimates at the
    loss accuracies α, i.e. ``Ĥ_net(α/L_ℒ)``), then refines around the best
    point on a finer geometric grid of ``refine`` points per side. Returns the
    float α with the smallest float objective; the caller re-evaluates
    :func:`one_step_bound` in Arb at (the exact value of) that α.

    >>> a = one_step_cutoff(lambda x: 100.0 + 0 * x, 10**6, 1.0)   # flat entropy: α as small as allowed
    >>> a < 1e-9
    True
    """
    n = _positive_int(n_samples)
    if not (math.isfinite(loss_bound) and loss_bound > 0):
        raise ValueError(f"loss_bound must be a finite float > 0, got {loss_bound!r}")
    if not ratio > 1:
        raise ValueError(f"ratio must be > 1, got {ratio}")
    top = loss_bound / 2
    lowest = loss_bound * 1e-10 if lowest is None else float(lowest)
    k = int(math.ceil(math.log(top / lowest) / math.log(ratio)))
    grid = top * ratio ** -np.arange(k + 1, dtype=float)
    vals = one_step_float(grid, entropy_float(grid), n, loss_bound)
    i = int(np.argmin(vals))
    if refine > 0:
        fine = grid[i] * ratio ** (np.linspace(-1.0, 1.0, 2 * refine + 1))
        fine = fine[(fine > 0) & (fine <= top)]
        fv = one_step_float(fine, entropy_float(fine), n, loss_bound)
        j = int(np.argmin(fv))
        if fv[j] < vals[i]:
            return float(fine[j])
    return float(grid[i])


def certified_rademacher_minimum(estimates: Mapping[str, arb]) -> tuple[str, arb]:
    """§C3: the estimate with the smallest upper endpoint, and its ball.

    Every entry must be a certified upper bound of ``R̂(𝒢(κ)|_S)`` valid for
    every sample (Lemma C0, Lemma C2, Theorem R); the minimum of valid bounds
    is valid and needs no union bound (``proofs/theory-chaining.md`` §C3).
    Ties go to the earlier name of :data:`RADEMACHER_METHODS` (then insertion
    order). NaN balls are never chosen.

    >>> certified_rademacher_minimum({"dudley": arb(3), "diameter": arb(2)})[0]
    'diameter'
    """
    if not estimates:
        raise ValueError("need at least one Rademacher estimate")
    order = {m: i for i, m in enumerate(RADEMACHER_METHODS)}
    best_name, best_q = None, None
    for name in sorted(estimates, key=lambda m: order.get(m, len(order))):
        v = estimates[name]
        if v.is_nan():
            continue
        q = upper_fraction(v) if v.is_finite() else None
        if best_name is None or (q is not None and (best_q is None or q < best_q)):
            best_name, best_q = name, q
    if best_name is None:
        raise ValueError("every Rademacher estimate is NaN")
    return best_name, estimates[best_name]


def _exact_cutoff(alpha: float) -> Fraction:
    """The exact dyadic value of a float-chosen α (Lemma C2 holds for every α > 0)."""
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"α must be a finite float > 0, got {alpha!r}")
    return exact_dyadic(alpha)


def _split_contributions(parts: Sequence[arb], total: arb, n_samples: int, loss_bound: arb) -> list[arb]:
    """Per-matrix shares ``(B_ℒ/2)√(2/n)·Ĥ_j/√Ĥ`` of the one-step entropy term (report only; they sum to it)."""
    with prec():
        if not (total.is_finite() and bool(total > 0)):
            return [arb(0)] * len(parts)
        root = total.upper().sqrt()
        f = loss_bound / 2 * (arb(2) / int(n_samples)).sqrt() / root
        return [f * p for p in parts]


def _slope_weights(entropies_at: Callable[[Sequence[Fraction], float], np.ndarray], n_matrices: int, eta: float,
                   *, iterations: int = 2, step: float = 1.01) -> list[Fraction]:
    """Corollary B1's weight heuristic ``w_j ∝ d_j = −∂H_j/∂ln ε_j`` (theory-network §B1), as exact weights.

    ``entropies_at(weights, η)`` returns the float per-matrix entropies. Any
    weights with ``Σ w_j ≤ 1`` and ``w_j > 0`` are valid (Corollary B1), so
    this only *chooses*: the weights are exact dyadic rationals whose exact
    sum is checked to be ≤ 1; matrices with zero slope keep a small share.
    """
    J = int(n_matrices)
    w = np.full(J, 1.0 / J)
    for _ in range(max(1, int(iterations))):
        wf = [Fraction(x) for x in w]
        hp = entropies_at(wf, eta * step)
        hm = entropies_at(wf, eta / step)
        d = np.maximum((hm - hp) / (2 * math.log(step)), 0.0)
        if not np.all(np.isfinite(d)) or d.sum() <= 0:
            break
        d = np.maximum(d, 1e-6 * d.sum() / J)
        w = d / d.sum()
    out = [exact_dyadic(float(x) * (1 - 2.0**-30)) for x in w]
    if any(x <= 0 for x in out) or sum(out, Fraction(0)) > 1:
        return [Fraction(1, J)] * J
    return out
