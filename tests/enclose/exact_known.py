"""Float matrices whose singular values are known exactly by construction (no certbound code).

``W = Q₁ diag(d) Q₂ᵀ`` with integer factors whose columns are orthogonal and of equal norm
(``QᵢᵀQᵢ = cᵢ²I``: signed permutations, Sylvester–Hadamard matrices, the Pythagorean
block ``[[3, −4], [4, 3]]`` and Kronecker products of these), so that

    σ(W) = c₁c₂·|d|   and   σ(W)² = c₁²c₂²·d²   exactly (Fractions).

Every entry of W is checked to be exactly representable as a float64 (the construction is
redone in Fractions), so the stored matrix *is* the one with those singular values. Products
``A Bᵀ`` of thin factors with known σ (the per-head case) use ``A = Q₁ diag(a)``,
``B = Q₂ diag(b)``: ``σ(ABᵀ) = c₁c₂|a·b|``.

The exact Schatten sums ``S_p = Σσᵢ^p`` are evaluated by mpmath at high precision
(:func:`schatten_mp`); for p ∈ {1, 2} and c₁c₂ rational they are exact Fractions.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np

__all__ = [
    "KnownSpectrum",
    "orthogonal_integer_columns",
    "known_matrix",
    "known_product",
    "exact_float_matrix",
    "mp_of",
    "schatten_mp",
    "contains_mp",
]


class KnownSpectrum:
    """The exact spectrum ``σᵢ = √(c2)·|dᵢ|`` (descending), stored as ``c2`` and the Fractions ``|dᵢ|``."""

    def __init__(self, c2: Fraction, d: list[Fraction], k: int):
        d = sorted((abs(x) for x in d), reverse=True)
        self.c2 = Fraction(c2)
        self.d = d + [Fraction(0)] * (k - len(d))  # σᵢ = 0 beyond the inner dimension

    def sq(self, i: int) -> Fraction:
        """σᵢ² exactly (0-based)."""
        return self.c2 * self.d[i] ** 2

    def __len__(self) -> int:
        return len(self.d)

    def sigma_mp(self, i: int) -> mpmath.mpf:
        return mpmath.sqrt(mp_of(self.c2)) * mp_of(self.d[i])


def mp_of(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _signed_permutation(rng, n: int) -> np.ndarray:
    P = np.zeros((n, n), dtype=np.int64)
    P[np.arange(n), rng.permutation(n)] = rng.choice([-1, 1], n)
    return P


_H2 = np.array([[1, 1], [1, -1]], dtype=np.int64)
_PY = np.array([[3, -4], [4, 3]], dtype=np.int64)


def orthogonal_integer_columns(rng, n: int, r: int, kind: str | None = None) -> tuple[np.ndarray, int]:
    """An n×r integer matrix Q with ``QᵀQ = c²I`` (r ≤ n), and c²; rows and columns randomly signed and permuted.

    ``kind``: ``"perm"`` (c² = 1), ``"hadamard"``/``"pythagoras"``/``"mixed"`` (Kronecker
    products of H₂ and [[3,−4],[4,3]] padded by a signed permutation), random if None.
    """
    assert r <= n
    kind = kind or str(rng.choice(["perm", "hadamard", "pythagoras", "mixed"]))
    if kind == "perm" or n < 2:
        return _signed_permutation(rng, n)[:, :r], 1
    blocks = {"hadamard": [_H2], "pythagoras": [_PY], "mixed": [_H2, _PY]}[kind]
    K, c2 = np.ones((1, 1), dtype=np.int64), 1
    while K.shape[0] * 2 <= n:
        B = blocks[int(rng.integers(0, len(blocks)))]
        K, c2 = np.kron(K, B), c2 * int((B[:, 0] ** 2).sum())
        if rng.random() < 0.3:
            break
    # Pad to n×n with a block diagonal of copies of K and a scaled signed permutation
    # only where that keeps every column norm² equal to c²: use copies of K only.
    t = K.shape[0]
    reps = n // t
    Q = np.zeros((n, n), dtype=np.int64)
    for b in range(reps):
        Q[b * t:(b + 1) * t, b * t:(b + 1) * t] = K @ _signed_permutation(rng, t)
    cols = reps * t
    if cols < r:  # not enough columns of norm c: fall back to a signed permutation
        return _signed_permutation(rng, n)[:, :r], 1
    Q = Q[:, :cols]
    Q = _signed_permutation(rng, n) @ Q @ _signed_permutation(rng, cols)
    return Q[:, :r], c2


def exact_float_matrix(F: list) -> np.ndarray | None:
    """The float64 array of a Fraction matrix if every entry is a float exactly, else None."""
    out = np.empty((len(F), len(F[0]) if F else 0))
    for i, row in enumerate(F):
        for j, q in enumerate(row):
            try:
                x = q.numerator / q.denominator if q else 0.0
            except OverflowError:
                return None
            if Fraction(x) != q:
                return None
            out[i, j] = x
    return out


def _diag_values(rng, r: int) -> list[Fraction]:
    """r dyadic values |dᵢ|: graded, clustered, repeated, zeros, subnormal, huge."""
    kind = int(rng.integers(0, 7))
    if kind == 0:  # small integers: repeated values, zeros
        v = [Fraction(int(x)) for x in rng.integers(0, 4, r)]
    elif kind == 1:  # clustered: K + j with K = 2^b (σ's differing in their last bits)
        b = int(rng.integers(10, 50))
        v = [Fraction(2**b + int(j)) for j in rng.integers(0, 3, r)]
    elif kind == 2:  # graded over many binades
        v = [Fraction(int(rng.integers(1, 2**20))) * Fraction(2) ** -int(e) for e in rng.integers(0, 60, r)]
    elif kind == 3:  # rank deficient: a few nonzero, the rest 0
        v = [Fraction(int(rng.integers(1, 2**30))) if rng.random() < 0.4 else Fraction(0) for _ in range(r)]
    elif kind == 4:  # full 53-bit mantissas
        v = [Fraction(int(rng.integers(2**52, 2**53))) for _ in range(r)]
    elif kind == 5:  # one huge, the rest tiny (σ_r far below √(γ_n)σ₁)
        v = [Fraction(2**30)] + [Fraction(int(rng.integers(0, 5))) for _ in range(r - 1)]
    else:  # all equal
        v = [Fraction(int(rng.integers(1, 9)))] * r
    return v[:r]


def known_matrix(rng, m: int, n: int, scale_exponent: int | None = None):
    """``(W, spectrum)``: an m×n float matrix and its exact :class:`KnownSpectrum`, or None if not representable.

    ``scale_exponent``: W is multiplied by 2^e (exactly, or the draw is rejected); random if None
    (0, ±500, subnormal range, near overflow).
    """
    k = min(m, n)
    r = int(rng.integers(0, k + 1)) if rng.random() < 0.3 else k
    Q1, c1 = orthogonal_integer_columns(rng, m, r)
    Q2, c2 = orthogonal_integer_columns(rng, n, r)
    d = _diag_values(rng, r)
    if scale_exponent is None:
        scale_exponent = int(rng.choice([0, 0, 0, 500, -500, -1000, -1060, -1074, 900, -300]))
    f = Fraction(2) ** scale_exponent
    d = [x * f for x in d]
    W = _exact_product(Q1, d, Q2) if m and n else np.zeros((m, n))
    if W is None:
        return None
    return W, KnownSpectrum(Fraction(c1 * c2), d, k)


def _exact_product(Q1: np.ndarray, d: list[Fraction], Q2: np.ndarray) -> np.ndarray | None:
    """The float64 array of ``Q₁ diag(d) Q₂ᵀ`` (integer Q's, dyadic d) if exactly representable, else None.

    Exact integer arithmetic: d = D·2^-E with integers D and one common E.
    """
    m, n, r = Q1.shape[0], Q2.shape[0], len(d)
    if r == 0:
        return np.zeros((m, n))
    E = max(x.denominator.bit_length() - 1 for x in d)
    D = np.array([int(x * 2**E) for x in d] + [0], dtype=object)[:r]
    P = (Q1.astype(object) * D[None, :]).dot(Q2.astype(object).T)  # exact Python ints
    return exact_float_matrix([[Fraction(int(v), 2**E) for v in row] for row in P])


def known_product(rng, m: int, n: int, dd: int, scale_exponents: tuple[int, int] = (0, 0)):
    """``(A, B, spectrum)`` with A m×dd, B n×dd and the exact spectrum of ``A Bᵀ`` (min(m, n) values), or None."""
    r = min(dd, m, n)
    Q1, c1 = orthogonal_integer_columns(rng, m, r)
    Q2, c2 = orthogonal_integer_columns(rng, n, r)
    a = [x * Fraction(2) ** scale_exponents[0] for x in _diag_values(rng, r)]
    b = [x * Fraction(2) ** scale_exponents[1] for x in _diag_values(rng, r)]
    Af = [[int(Q1[i, l]) * a[l] for l in range(r)] + [Fraction(0)] * (dd - r) for i in range(m)]
    Bf = [[int(Q2[j, l]) * b[l] for l in range(r)] + [Fraction(0)] * (dd - r) for j in range(n)]
    A, B = exact_float_matrix(Af), exact_float_matrix(Bf)
    if A is None or B is None:
        return None
    # extra zero columns in random positions (the same ones in A and B keep ABᵀ)
    p = rng.permutation(dd)
    return A[:, p], B[:, p], KnownSpectrum(Fraction(c1 * c2), [x * y for x, y in zip(a, b)], min(m, n))


def schatten_mp(spec: KnownSpectrum, p) -> mpmath.mpf:
    """``Σᵢ σᵢ^p`` over σᵢ > 0 at the current mpmath precision (p an mpf/Fraction/int)."""
    pm = mp_of(Fraction(p)) if not isinstance(p, mpmath.mpf) else p
    c = mp_of(spec.c2)
    total = mpmath.mpf(0)
    for x in spec.d:
        if x:
            total += mpmath.power(c, pm / 2) * mpmath.power(mp_of(x), pm)
    return total


def contains_mp(lo: Fraction | None, hi: Fraction | None, t: mpmath.mpf, rel: int = 1500) -> bool:
    """``lo ≤ t ≤ hi`` up to a relative 2^-rel (t from mpmath at ≥ rel + 100 bits); None = unbounded."""
    slack = mpmath.mpf(2) ** -rel
    ok_lo = lo is None or mp_of(lo) <= t * (1 + slack) + mpmath.mpf(2) ** -20000
    ok_hi = hi is None or t <= mp_of(hi) * (1 + slack) + mpmath.mpf(2) ** -20000
    return bool(ok_lo and ok_hi)
