"""Independent references for the kernel tests: exact spectra and mpmath.

Nothing here calls certbound: matrices with exactly known singular values are
built from Sylvester–Hadamard matrices (entries ±1, so H/√n is orthogonal and
dyadic when n is a power of 4), checked for exactness with Fractions, and
anything else is referenced with mpmath's SVD at 320 bits.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np


def hadamard_orthogonal(n: int) -> np.ndarray:
    """Orthogonal n×n matrix with dyadic entries ±2^{-k}, n = 4^k (n = 1 allowed)."""
    H = np.array([[1.0]])
    while H.shape[0] < n:
        H = np.block([[H, H], [H, -H]])
    assert H.shape[0] == n
    k = int(round(np.log2(n))) // 2
    assert 4**k == n, "n must be a power of 4 for a dyadic scale"
    return H / 2.0**k


def exact_fraction_matrix(W: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(x)) for x in row] for row in np.asarray(W, dtype=np.float64)]


def built_exactly(Qm: np.ndarray, sigma: np.ndarray, Qn: np.ndarray, W: np.ndarray) -> bool:
    """True if the float W equals Qm[:, :r] diag(σ) Qn[:, :r]ᵀ exactly (Fractions)."""
    r = len(sigma)
    m, n = W.shape
    for i in range(m):
        for j in range(n):
            exact = sum(Fraction(Qm[i, k]) * Fraction(sigma[k]) * Fraction(Qn[j, k]) for k in range(r))
            if Fraction(float(W[i, j])) != exact:
                return False
    return True


def mp_singular_values(W: np.ndarray, prec: int = 320) -> list[mpmath.mpf]:
    """Singular values of the exact float matrix by mpmath at ``prec`` bits, descending."""
    W = np.asarray(W, dtype=np.float64)
    m, n = W.shape
    k = min(m, n)
    if k == 0:
        return []
    with mpmath.workprec(prec):
        M = mpmath.matrix([[mpmath.mpf(float(x)) for x in row] for row in W])
        if m < n:
            M = M.T
        s = mpmath.svd_r(M, compute_uv=False)
        vals = sorted((abs(s[i]) for i in range(k)), reverse=True)
    return vals


def mp_product_singular_values(A: np.ndarray, B: np.ndarray, prec: int = 320) -> list[mpmath.mpf]:
    """Singular values of the exact product A Bᵀ (formed in mpmath), descending."""
    with mpmath.workprec(prec):
        MA = mpmath.matrix([[mpmath.mpf(float(x)) for x in row] for row in A])
        MB = mpmath.matrix([[mpmath.mpf(float(x)) for x in row] for row in B])
        P = MA * MB.T
        m, n = P.rows, P.cols
        if m < n:
            P = P.T
        s = mpmath.svd_r(P, compute_uv=False)
        return sorted((abs(s[i]) for i in range(min(m, n))), reverse=True)


def fraction_rank(W: np.ndarray) -> int:
    """Exact rank over ℚ by Gaussian elimination on Fractions."""
    M = exact_fraction_matrix(W)
    rows, cols = len(M), len(M[0]) if M else 0
    r = 0
    for c in range(cols):
        piv = next((i for i in range(r, rows) if M[i][c] != 0), None)
        if piv is None:
            continue
        M[r], M[piv] = M[piv], M[r]
        for i in range(rows):
            if i != r and M[i][c] != 0:
                f = M[i][c] / M[r][c]
                M[i] = [a - f * b for a, b in zip(M[i], M[r])]
        r += 1
        if r == rows:
            break
    return r


def contains_value(lower: float, upper: float, value) -> bool:
    """lower ≤ value ≤ upper, compared exactly (value may be an mpf or Fraction)."""
    v = mpmath.mpf(value) if not isinstance(value, Fraction) else value
    if isinstance(v, Fraction):
        return Fraction(lower) <= v <= (Fraction(upper) if np.isfinite(upper) else v)
    with mpmath.workprec(400):
        return mpmath.mpf(lower) <= v and (not np.isfinite(upper) or v <= mpmath.mpf(upper))
