"""Exact (Fraction) references for Householder data: reflectors, compact-WY blocks, Q T Qᵀ (no certbound code).

LAPACK's ``dsytrd`` (lower) returns reflectors Hᵢ = I − τᵢvᵢvᵢᵀ, i = 0 … k−2 (0-based), with
vᵢ[i+1] = 1, vᵢ[i+2:] = c[i+2:, i] and zeros above; T = QᵀGQ for Q = H₀H₁⋯H_{k−2}. Whatever floats
LAPACK (or a liar standing in for it) returns, the exact matrices defined by them are formed here in
rationals, so a certificate's α ≥ ‖QᵀQ − I‖₂ and e ≥ ‖Ĝ − QTQᵀ‖₂ can be checked exactly
(:func:`tests.enclose.exact_inertia.symmetric_norm_at_most`).

>>> import numpy as np
>>> Q = reflector_product([[Fraction(0)], [Fraction(1)]], [Fraction(2)])   # H = I − 2e₁e₁ᵀ on k = 2
>>> [[int(x) for x in r] for r in Q]
[[1, 0], [0, -1]]
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["F", "lower_reflectors", "reflector_product", "wy_block", "block_product", "identity", "mat_sub",
           "tridiagonal_dense", "qtqt", "orthogonality_defect", "mp_singular_values"]


def F(x) -> Fraction:
    """The exact rational value of a finite float (or int/Fraction)."""
    if isinstance(x, Fraction):
        return x
    return Fraction(float(x)) if not isinstance(x, int) else Fraction(x)


def identity(k: int) -> list:
    return [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]


def mat_sub(A: list, B: list) -> list:
    return [[a - b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _matmul(A: list, B: list) -> list:
    Bt = list(zip(*B))
    return [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in Bt] for row in A]


def lower_reflectors(c: np.ndarray, tau: np.ndarray) -> tuple[list, list]:
    """``(V, τ)`` of dsytrd(lower)'s output as exact rationals: V is k×(k−1), column i is vᵢ (vᵢ[i+1] = 1).

    A non-finite entry of c (or τ) has no rational value: it is returned as None.
    """
    c = np.asarray(c, dtype=np.float64)
    k = c.shape[0]
    V = [[Fraction(0)] * max(k - 1, 0) for _ in range(k)]
    for i in range(k - 1):
        V[i + 1][i] = Fraction(1)
        for r in range(i + 2, k):
            V[r][i] = F(c[r, i]) if np.isfinite(c[r, i]) else None
    return V, [F(t) if np.isfinite(t) else None for t in np.asarray(tau, dtype=np.float64)[: k - 1]]


def reflector_product(V: list, tau: list) -> list:
    """Q = ∏ᵢ (I − τᵢvᵢvᵢᵀ) (in column order of V), exactly; V is k×r (lists of rationals)."""
    k = len(V)
    Q = identity(k)
    for i, t in enumerate(tau):
        v = [V[r][i] for r in range(k)]
        # Q ← Q (I − t v vᵀ) = Q − t (Q v) vᵀ
        w = [sum((Q[r][s] * v[s] for s in range(k)), Fraction(0)) for r in range(k)]
        for r in range(k):
            tw = t * w[r]
            if tw:
                Q[r] = [q - tw * vs for q, vs in zip(Q[r], v)]
    return Q


def wy_block(V: list, T: list) -> list:
    """I − V T Vᵀ exactly (V k×b, T b×b, any real entries)."""
    k = len(V)
    VT = _matmul(V, T)
    Vt = [list(col) for col in zip(*V)]
    P = _matmul(VT, Vt) if Vt else [[Fraction(0)] * k for _ in range(k)]
    return mat_sub(identity(k), P)


def block_product(blocks: list) -> list:
    """Q₁Q₂⋯ of exact k×k matrices."""
    Q = blocks[0]
    for B in blocks[1:]:
        Q = _matmul(Q, B)
    return Q


def tridiagonal_dense(d, e) -> list:
    k = len(d)
    T = [[Fraction(0)] * k for _ in range(k)]
    for i in range(k):
        T[i][i] = F(d[i])
    for i in range(k - 1):
        T[i][i + 1] = T[i + 1][i] = F(e[i])
    return T


def qtqt(Q: list, d, e) -> list:
    """Q T Qᵀ exactly, T = tridiag(e, d, e)."""
    T = tridiagonal_dense(d, e)
    QT = _matmul(Q, T)
    return _matmul(QT, [list(c) for c in zip(*Q)])


def orthogonality_defect(Q: list) -> list:
    """QᵀQ − I exactly."""
    Qt = [list(c) for c in zip(*Q)]
    return mat_sub(_matmul(Qt, Q), identity(len(Q)))


def mp_singular_values(W: np.ndarray, dps: int = 60) -> list:
    """σ(W) of the exact stored matrix by mpmath at ``dps`` digits (descending); error ≪ 10^(−dps/2) relative.

    The float entries convert to mpf exactly (dps ≥ 16 keeps all 53 bits); mpmath's SVD is an iterative
    high-precision computation, accurate to far below any certified width we check against (we allow a
    relative slack of 10^(−dps/3) in :func:`tests.enclose.exact_known.contains_mp`-style comparisons).
    """
    import mpmath

    with mpmath.workdps(dps):
        A = mpmath.matrix([[mpmath.mpf(float(x)) for x in row] for row in np.asarray(W, dtype=np.float64)])
        s = mpmath.svd_r(A, compute_uv=False)
        return sorted((s[i] for i in range(min(np.shape(W)))), reverse=True)
