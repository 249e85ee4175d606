"""Exact references for symmetric tridiagonal matrices (no certbound code, no floating point).

A float is a dyadic rational, so a float tridiagonal ``T`` (diagonal ``d``, off-diagonal ``e``)
and a float shift ``μ`` are exact :class:`fractions.Fraction` data, and the inertia of
``T − μI`` is decided exactly by symmetric elimination — Sylvester's law of inertia, the
same argument as :mod:`tests.enclose.exact_inertia`, but in O(n) for the tridiagonal case:

* the pivots are ``q₁ = d₁ − μ``, ``qᵢ = dᵢ − μ − eᵢ₋₁²/qᵢ₋₁`` (an LDLᵀ congruence);
* a zero pivot ``qᵢ = 0`` with ``eᵢ ≠ 0`` is taken as the 2×2 pivot ``[[0, eᵢ], [eᵢ, x]]``
  (determinant ``−eᵢ² < 0``: one positive, one negative eigenvalue); its Schur complement
  subtracts ``eᵢ₊₁²·(B⁻¹)₂₂ = 0`` from the next diagonal, so the recurrence restarts at
  ``qᵢ₊₂ = dᵢ₊₂ − μ``;
* a zero pivot with ``eᵢ = 0`` (or at the end) is a zero eigenvalue of ``T − μI``.

From the inertia, with eigenvalues ``λ₁ ≤ … ≤ λₙ`` of T (**ascending**, as LAPACK's Sturm
counts; :func:`eigenvalue_in_descending` for the descending order of Theorem G):

* ``#{λ < μ} = n₋``  and  ``#{λ ≤ μ} = n₋ + n₀``;
* ``lo ≤ λₖ ≤ hi``  ⟺  ``#{λ < lo} ≤ k − 1``  and  ``#{λ ≤ hi} ≥ k``  (k 1-based).

:func:`isolate` brackets every eigenvalue by exact bisection on these counts (rational
intervals as narrow as asked for), :func:`dense` gives T as a Fraction matrix for the
cross-check against :func:`tests.enclose.exact_inertia.inertia`, and
:func:`weyl_count_window` is what the float Sturm lemma promises for a computed count.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "frac",
    "tridiagonal_inertia",
    "count_below",
    "count_at_most",
    "eigenvalue_in",
    "eigenvalue_in_descending",
    "gershgorin",
    "isolate",
    "dense",
    "weyl_count_window",
]


def frac(x) -> Fraction:
    """The exact value of a float (or an int / Fraction)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"not a finite float: {x!r}")
    return Fraction(*x.as_integer_ratio())


def _fracs(v) -> list[Fraction]:
    if isinstance(v, np.ndarray):
        v = v.tolist()
    return [frac(x) for x in v]


def tridiagonal_inertia(d, e, mu) -> tuple[int, int, int]:
    """``(n₊, n₋, n₀)`` of ``T − μI`` exactly; T symmetric tridiagonal with diagonal d, off-diagonal e.

    >>> tridiagonal_inertia([0.0, 0.0], [1.0], 0.0)   # eigenvalues ±1
    (1, 1, 0)
    >>> tridiagonal_inertia([1.0, 1.0, 1.0], [0.0, 0.0], 1.0)
    (0, 0, 3)
    >>> tridiagonal_inertia([2.0, 2.0, 2.0], [1.0, 1.0], 2.0)   # 2 − √2, 2, 2 + √2
    (1, 1, 1)
    """
    d, e, mu = _fracs(d), _fracs(e), frac(mu)
    n = len(d)
    if len(e) != max(n - 1, 0):
        raise ValueError(f"e has {len(e)} entries, expected {max(n - 1, 0)}")
    pos = neg = zero = 0
    i = 0
    q = None  # the current pivot qᵢ (None: restart at dᵢ − μ)
    while i < n:
        qi = d[i] - mu if q is None else q
        if qi != 0:
            if qi > 0:
                pos += 1
            else:
                neg += 1
            q = d[i + 1] - mu - e[i] * e[i] / qi if i + 1 < n else None
            i += 1
        elif i + 1 < n and e[i] != 0:
            # 2×2 pivot [[0, eᵢ], [eᵢ, ·]]: one positive and one negative eigenvalue; the next
            # Schur complement subtracts e_{i+1}²·(B⁻¹)₂₂ = 0.
            pos += 1
            neg += 1
            q = None
            i += 2
        else:
            zero += 1  # the block splits off with the eigenvalue 0 (of T − μI)
            q = None
            i += 1
    return pos, neg, zero


def count_below(d, e, mu) -> int:
    """``#{λ(T) < μ}`` exactly."""
    return tridiagonal_inertia(d, e, mu)[1]


def count_at_most(d, e, mu) -> int:
    """``#{λ(T) ≤ μ}`` exactly."""
    _, neg, zero = tridiagonal_inertia(d, e, mu)
    return neg + zero


def eigenvalue_in(d, e, k: int, lo, hi) -> bool:
    """``lo ≤ λₖ(T) ≤ hi`` exactly, with λ ascending and k **1-based** (``None`` = ∓∞).

    >>> eigenvalue_in([2.0, 2.0], [1.0], 1, 1.0, 1.0), eigenvalue_in([2.0, 2.0], [1.0], 2, 3.0, 3.0)
    (True, True)
    >>> eigenvalue_in([2.0, 2.0], [1.0], 1, 1.0 + 2.0**-52, 2.0)
    False
    """
    n = len(d)
    if not 1 <= k <= n:
        raise ValueError(f"k = {k} not in 1..{n}")
    if lo is not None and count_below(d, e, lo) > k - 1:
        return False
    if hi is not None and count_at_most(d, e, hi) < k:
        return False
    return True


def eigenvalue_in_descending(d, e, i: int, lo, hi) -> bool:
    """``lo ≤ λ₍ᵢ₎(T) ≤ hi`` with λ **descending** and i **0-based** (the indexing of Theorem G)."""
    return eigenvalue_in(d, e, len(d) - i, lo, hi)


def gershgorin(d, e) -> tuple[Fraction, Fraction]:
    """Exact Gershgorin interval ``[min(dᵢ − |eᵢ₋₁| − |eᵢ|), max(dᵢ + |eᵢ₋₁| + |eᵢ|)]``."""
    d, e = _fracs(d), _fracs(e)
    n = len(d)
    r = [(abs(e[i - 1]) if i > 0 else 0) + (abs(e[i]) if i < n - 1 else 0) for i in range(n)]
    return min(a - b for a, b in zip(d, r)), max(a + b for a, b in zip(d, r))


def isolate(d, e, width) -> list[tuple[Fraction, Fraction]]:
    """Rational ``[aₖ, bₖ]`` with ``aₖ ≤ λₖ ≤ bₖ`` and ``bₖ − aₖ ≤ width`` for every k (ascending), by exact bisection.

    Each bisection step decides with one exact count which half holds λₖ (``#{λ < c} ≤ k − 1``
    ⟺ ``λₖ ≥ c``), so the brackets are proved, not approximated.

    >>> [a <= x <= b and b - a <= Fraction(1, 2**20) for (a, b), x in zip(isolate([2.0, 2.0], [1.0], Fraction(1, 2**20)), [1, 3])]
    [True, True]
    """
    d, e = _fracs(d), _fracs(e)
    n = len(d)
    width = frac(width)
    if width <= 0:
        raise ValueError("isolate: width must be > 0")
    lo0, hi0 = gershgorin(d, e)
    out = []
    for k in range(1, n + 1):
        a, b = lo0, hi0  # invariant: a ≤ λₖ ≤ b
        while b - a > width:
            c = (a + b) / 2
            _, below, zero = tridiagonal_inertia(d, e, c)
            if below <= k - 1 < below + zero:
                a = b = c  # λₖ = c exactly
            elif below <= k - 1:
                a = c  # λₖ ≥ c
            else:
                b = c  # λₖ < c
        out.append((a, b))
    return out


def dense(d, e) -> list[list[Fraction]]:
    """T as a dense Fraction matrix (for :func:`tests.enclose.exact_inertia.inertia`)."""
    d, e = _fracs(d), _fracs(e)
    n = len(d)
    T = [[Fraction(0)] * n for _ in range(n)]
    for i in range(n):
        T[i][i] = d[i]
        if i + 1 < n:
            T[i][i + 1] = T[i + 1][i] = e[i]
    return T


def weyl_count_window(d, e, mu, rho) -> tuple[int, int]:
    """``(#{λ(T) < μ − ρ}, #{λ(T) < μ + ρ})``: the range of ``#{λ(T̄) < μ}`` over all symmetric T̄ with ‖T̄ − T‖₂ ≤ ρ.

    By Weyl, ``|λₖ(T̄) − λₖ(T)| ≤ ρ``; so a float count that is the exact count of *some* such T̄
    lies in this window (its two ends are attained by T̄ = T ± ρI).
    """
    mu, rho = frac(mu), frac(rho)
    return count_below(d, e, mu - rho), count_below(d, e, mu + rho)
