"""Exact references by Sylvester's law of inertia (no certbound code, no floating point).

Every float is a dyadic rational, so the matrices the kernel certifies — ``XᵀX − I``,
``W − X diag(s) Yᵀ``, ``WᵀW`` — are exact :class:`fractions.Fraction` matrices. For a
symmetric rational matrix ``A`` the numbers of positive, negative and zero eigenvalues
are found exactly by symmetric elimination (congruence), and that decides, with no
tolerance at all:

* ``‖M‖₂ ≤ B`` for symmetric M  ⟺  ``B·I − M ⪰ 0`` and ``B·I + M ⪰ 0``;
* ``‖R‖₂ ≤ B`` for any R        ⟺  ``B²·I − RRᵀ ⪰ 0`` (the smaller Gram matrix);
* ``σᵢ(W) ≤ h``                 ⟺  ``WᵀW − h²I`` has at most i − 1 positive eigenvalues;
* ``σᵢ(W) ≥ ℓ``                 ⟺  ``WᵀW − ℓ²I`` has at least i nonnegative eigenvalues.

A bound that is off by a single ulp — or by 2⁻¹⁰⁷⁴ — is caught. Sizes up to about
10×10 take milliseconds.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "fractions_of",
    "matmul",
    "transpose",
    "inertia",
    "symmetric_norm_at_most",
    "norm_at_most",
    "gram_deviation",
    "residual",
    "smaller_gram",
    "singular_value_in",
    "upper_fraction",
    "lower_fraction",
]


def fractions_of(A) -> list:
    """The exact value of a float array (1-D or 2-D) as nested lists of Fractions."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim == 1:
        return [Fraction(*float(x).as_integer_ratio()) for x in A]
    return [[Fraction(*float(x).as_integer_ratio()) for x in row] for row in A]


def matmul(A: list, B: list) -> list:
    """``A B`` for Fraction lists A (p×k), B (k×q)."""
    cols = list(zip(*B))
    return [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in cols] for row in A]


def transpose(A: list) -> list:
    return [list(r) for r in zip(*A)]


def inertia(A: list) -> tuple[int, int, int]:
    """``(n₊, n₋, n₀)`` of a symmetric Fraction matrix, exactly.

    Symmetric Gaussian elimination is a congruence, which keeps the inertia (Sylvester).
    If every remaining diagonal entry is 0 but some ``a_ij ≠ 0``, the congruence
    ``row_i += row_j, col_i += col_j`` makes the pivot ``2a_ij ≠ 0``.

    >>> inertia([[Fraction(0), Fraction(1)], [Fraction(1), Fraction(0)]])
    (1, 1, 0)
    """
    n = len(A)
    A = [list(r) for r in A]
    active = list(range(n))
    pos = neg = 0
    while active:
        p = next((i for i in active if A[i][i] != 0), None)
        if p is None:
            pair = next(((i, j) for i in active for j in active if i < j and A[i][j] != 0), None)
            if pair is None:
                break  # the rest is the zero matrix
            i, j = pair
            for k in range(n):
                A[i][k] += A[j][k]
            for k in range(n):
                A[k][i] += A[k][j]
            p = i
        d = A[p][p]
        pos, neg = (pos + 1, neg) if d > 0 else (pos, neg + 1)
        active.remove(p)
        row = A[p]
        for i in active:
            f = A[i][p] / d
            if f:
                Ai = A[i]
                for j in active:
                    Ai[j] -= f * row[j]
    return pos, neg, n - pos - neg


def _shift(G: list, t: Fraction) -> list:
    return [[g - (t if i == j else 0) for j, g in enumerate(row)] for i, row in enumerate(G)]


def symmetric_norm_at_most(M: list, B: Fraction) -> bool:
    """``‖M‖₂ ≤ B`` for a symmetric Fraction matrix M."""
    if not M:
        return B >= 0
    minus = _shift([[-x for x in r] for r in M], -B)  # B·I − M
    plus = _shift(M, -B)  # B·I + M
    return inertia(minus)[1] == 0 and inertia(plus)[1] == 0


def smaller_gram(R: list) -> list:
    """``RRᵀ`` or ``RᵀR``, whichever is smaller."""
    if len(R) <= len(R[0]):
        return matmul(R, transpose(R))
    return matmul(transpose(R), R)


def norm_at_most(R: list, B: Fraction) -> bool:
    """``‖R‖₂ ≤ B`` for any Fraction matrix R (``B²I − Gram ⪰ 0``)."""
    if B < 0:
        return False
    if not R or not R[0]:
        return True
    G = smaller_gram(R)
    return inertia([[(B * B if i == j else 0) - g for j, g in enumerate(row)] for i, row in enumerate(G)])[1] == 0


def gram_deviation(X) -> list:
    """``XᵀX − I`` exactly."""
    Xf = fractions_of(X)
    return _shift(matmul(transpose(Xf), Xf), Fraction(1))


def residual(W, X, s, Y) -> list:
    """``W − X diag(s) Yᵀ`` exactly."""
    Wf, Xf, sf, Yf = fractions_of(W), fractions_of(X), fractions_of(s), fractions_of(Y)
    m, n, r = len(Wf), len(Wf[0]), len(sf)
    return [[Wf[i][j] - sum((Xf[i][l] * sf[l] * Yf[j][l] for l in range(r)), Fraction(0)) for j in range(n)]
            for i in range(m)]


def singular_value_in(gram: list, i: int, lo: Fraction, hi: Fraction) -> bool:
    """``lo ≤ σ_{i+1}(W) ≤ hi`` (i 0-based; ``gram`` = :func:`smaller_gram` of W)."""
    n_above_hi = inertia(_shift(gram, hi * hi))[0]
    if hi < 0 or n_above_hi > i:
        return False
    if lo <= 0:
        return True
    p, _, z = inertia(_shift(gram, lo * lo))
    return p + z >= i + 1


def _dyadic_of(x) -> Fraction:
    man, exp = x.man_exp()  # an exact arf / mag: no rounding
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _mid_rad(ball) -> tuple[Fraction, Fraction] | None:
    # From the exact midpoint and radius: ``ball.upper()``/``lower()`` would round the
    # end outward to the *current* precision (53 bits outside a precision context), and
    # a reference that widens the ball it checks could hide a miss below that rounding.
    if not ball.is_finite():
        return None
    return _dyadic_of(ball.mid()), _dyadic_of(ball.rad())


def upper_fraction(ball) -> Fraction | None:
    """The exact upper end ``mid + rad`` of a python-flint ``arb`` (None if infinite)."""
    mr = _mid_rad(ball)
    return None if mr is None else mr[0] + mr[1]


def lower_fraction(ball) -> Fraction | None:
    """The exact lower end ``mid − rad`` of a python-flint ``arb`` (None if infinite)."""
    mr = _mid_rad(ball)
    return None if mr is None else mr[0] - mr[1]
