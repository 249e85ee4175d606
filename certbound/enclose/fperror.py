"""A-priori floating-point error bounds for BLAS products and norms.

Everything here bounds an *exact* real quantity of float64 data computed
with ordinary float64 operations. The floating-point model (``proofs/
enclosure.md`` §2): IEEE 754 binary64, round to nearest, any summation order
and blocking, with or without FMA; no Strassen-type or reduced-precision
GEMM. Then for every operation ``fl(a∘b) = (a∘b)(1+δ) + η`` with
``|δ| ≤ u = 2⁻⁵³`` and ``|η| ≤ 2⁻¹⁰⁷⁵`` (``η = 0`` for ± ), and a dot product
of length k obeys ``|fl(xᵀy) − xᵀy| ≤ γ_k |x|ᵀ|y| + 2k·2⁻¹⁰⁷⁴`` with
``γ_k = ku/(1−ku)`` (Higham 2002, §3.1 and Lemma 3.1; the underflow term as
in Demmel 1984 / Rump 2012).

Vectors are bounded with floats plus an explicit inflation; scalars are
finished in Arb.

>>> import numpy as np
>>> X = np.linalg.qr(np.random.default_rng(0).standard_normal((50, 5)))[0]
>>> float_upper(gram_deviation_bound(X)) < 1e-13
True
"""

from __future__ import annotations

import numpy as np
from flint import arb

from certbound.ball import arb_from_float, float_upper, working_precision

__all__ = [
    "UNIT_ROUNDOFF",
    "ETA",
    "gamma",
    "matvec_nonneg_upper",
    "sum_nonneg_upper",
    "sum_nonneg_lower",
    "norm2_upper",
    "abs_product_norm2_upper",
    "gram_deviation_bound",
    "residual_norm_bound",
    "CHUNK",
    "chunked_gamma_length",
]

#: Unit roundoff of binary64 with round to nearest.
UNIT_ROUNDOFF = 2.0**-53
#: Smallest positive subnormal binary64 number (underflow quantum).
ETA = 2.0**-1074

_U = UNIT_ROUNDOFF
_MAX_K = 2**40  # keeps k·u ≤ 2⁻¹³, far inside every inequality used below


def gamma(k: int) -> arb:
    """Ball containing ``γ_k = k·u / (1 − k·u)`` (Higham's constant).

    >>> gamma(1).upper() > arb(2) ** -53
    True
    """
    if k < 0 or k > _MAX_K:
        raise ValueError(f"gamma: k={k} out of range")
    with working_precision():
        ku = arb(k) * arb(2) ** -53
        return ku / (1 - ku)


def _inflate(v: np.ndarray, k: int) -> np.ndarray:
    """Float upper bounds on exact nonnegative sums of k rounded products.

    If ``v = fl(Σ_{j≤k} a_j b_j)`` with ``a, b ≥ 0`` then the exact sum is at
    most ``(v + kη)/(1 − γ_k)``; the returned ``fl(fl(v + c)·f)`` with
    ``c = 2(k+2)η`` and ``f = 1 + 2(k+2)u`` dominates it although its own two
    operations round (proofs/enclosure.md §2, Lemma 2.2).
    """
    if k > _MAX_K:
        raise ValueError("dimension too large for the a-priori error model")
    f = 1.0 + 2.0 * (k + 2) * _U  # exact in binary64 since 2(k+2) < 2^52
    c = 2.0 * (k + 2) * ETA
    with np.errstate(over="ignore"):
        return (v + c) * f


def matvec_nonneg_upper(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Entrywise float upper bound on the exact product ``M @ v``, M, v ≥ 0.

    >>> import numpy as np
    >>> M = np.full((3, 4), 0.1); v = np.full(4, 0.3)
    >>> bool(np.all(matvec_nonneg_upper(M, v) >= 0.12))
    True
    """
    with np.errstate(over="ignore"):
        return _inflate(M @ v, M.shape[-1])


def sum_nonneg_upper(values: np.ndarray) -> arb:
    """Ball whose upper end bounds the exact sum of nonnegative floats.

    Any summation order: ``Σ ≤ fl(Σ)/(1 − γ_{k−1})`` (no underflow error in
    additions).

    >>> float_upper(sum_nonneg_upper(np.full(10, 0.1))) >= 1.0
    True
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    k = max(v.size, 1)
    with np.errstate(over="ignore"):
        s = float(np.sum(v))
    if not np.isfinite(s):
        return arb.pos_inf()
    with working_precision():
        return arb_from_float(s) / (1 - gamma(k))


def sum_nonneg_lower(values: np.ndarray) -> arb:
    """Ball whose lower end is ≤ the exact sum of nonnegative floats."""
    v = np.asarray(values, dtype=np.float64).ravel()
    k = max(v.size, 1)
    s = float(np.sum(v))
    if not np.isfinite(s):
        return arb(0)
    with working_precision():
        return arb_from_float(s) / (1 + gamma(k))


def _sumsq_upper(M: np.ndarray) -> arb:
    """Ball whose upper end bounds the exact ``Σ m_ij²`` of a float matrix."""
    v = np.ascontiguousarray(M, dtype=np.float64).ravel()
    k = max(v.size, 1)
    with np.errstate(over="ignore"):
        s = float(v @ v)
    if not np.isfinite(s):
        return arb.pos_inf()
    with working_precision():
        # k rounded products and k−1 additions: γ_k, plus k underflow quanta.
        return (arb_from_float(s) + 2 * k * arb(ETA)) / (1 - gamma(k))


def norm2_upper(M: np.ndarray, overwrite: bool = False) -> arb:
    """Ball whose upper end bounds ``‖M‖₂`` for a float matrix M (exact data).

    Uses ``‖M‖₂ ≤ min(‖M‖_F, √(‖M‖₁‖M‖_∞))`` with rigorous upward bounds of
    each norm (proofs/enclosure.md §2, Lemma 2.3).

    >>> import numpy as np
    >>> float_upper(norm2_upper(np.eye(3))) >= 1.0
    True
    """
    M = np.asarray(M, dtype=np.float64)
    if M.size == 0:
        return arb(0)
    with working_precision():
        fro = _sumsq_upper(M).sqrt()
        A = np.abs(M, out=M) if overwrite else np.abs(M)
        n1 = float(np.max(_inflate(A.sum(axis=0), M.shape[0])))
        ninf = float(np.max(_inflate(A.sum(axis=1), M.shape[1])))
        if np.isfinite(n1) and np.isfinite(ninf):
            hoelder = (arb_from_float(n1) * arb_from_float(ninf)).sqrt()
            if hoelder.upper() < fro.upper():
                return hoelder
        return fro


def abs_product_norm2_upper(
    A: np.ndarray,
    d: np.ndarray | None,
    B: np.ndarray,
    absA: np.ndarray | None = None,
    absB: np.ndarray | None = None,
) -> arb:
    """Upper bound on ``‖ |A| diag(|d|) |B| ‖₂`` (A: m×k, B: k×n, floats).

    For the nonnegative matrix ``N = |A| D |B|``, ``‖N‖₂ ≤ √(‖N‖₁‖N‖_∞)``, and
    both norms are maxima of products ``N𝟙`` and ``𝟙ᵀN`` evaluated as chains of
    nonnegative matrix–vector products, each bounded upward
    (:func:`matvec_nonneg_upper`). Cost O((m+n)k). ``absA``/``absB`` may pass
    precomputed ``|A|``/``|B|``.
    """
    Aa = np.abs(A) if absA is None else absA
    Ba = np.abs(B) if absB is None else absB
    m, k = Aa.shape
    n = Ba.shape[1]
    if m == 0 or n == 0 or k == 0:
        return arb(0)
    dd = np.ones(k) if d is None else np.abs(np.asarray(d, dtype=np.float64))
    with np.errstate(over="ignore"):
        # ‖N‖_∞ = max row sum = max(|A| D (|B| 𝟙)).
        r = matvec_nonneg_upper(Ba, np.ones(n))
        r = _inflate(dd * r, 1)  # one rounded product per entry
        rowsums = matvec_nonneg_upper(Aa, r)
        # ‖N‖₁ = max column sum = max(|B|ᵀ D (|A|ᵀ 𝟙)).
        c = matvec_nonneg_upper(Aa.T, np.ones(m))
        c = _inflate(dd * c, 1)
        colsums = matvec_nonneg_upper(Ba.T, c)
    ninf, n1 = float(np.max(rowsums)), float(np.max(colsums))
    if not (np.isfinite(ninf) and np.isfinite(n1)):
        return arb.pos_inf()
    with working_precision():
        return (arb_from_float(ninf) * arb_from_float(n1)).sqrt()


#: Chunk length of the chunked products (Lemmas 2.5, 3.1, 3.2 of proofs/enclosure.md):
#: a length-m dot product evaluated as ⌈m/b⌉ BLAS chunks of ≤ b terms plus a
#: running sum has the error constant γ_{b+q} instead of γ_m (q chunks).
CHUNK = 256


def _chunk_bounds(k: int) -> list[tuple[int, int]]:
    return [(i, min(i + CHUNK, k)) for i in range(0, k, CHUNK)]


def chunked_gamma_length(k: int) -> int:
    """Effective length for γ of a chunked length-k dot product (Lemma 2.5): b + q, or k if not chunked.

    >>> chunked_gamma_length(100), chunked_gamma_length(16384)
    (100, 320)
    """
    if k <= 2 * CHUNK:
        return k
    return CHUNK + -(-k // CHUNK)


def gram_deviation_bound(X: np.ndarray, absX: np.ndarray | None = None) -> arb:
    """Ball whose upper end bounds ``‖XᵀX − I‖₂`` for a float m×r matrix X.

    ``G = fl(XᵀX)`` has ``|G − XᵀX| ≤ γ|X|ᵀ|X| + 4mη`` entrywise, γ = γ_m,
    or γ_{b+q} when m > 2b and G is accumulated from q row chunks of ≤ b
    rows (Lemma 2.5); ``G − I`` is then formed exactly (off-diagonal entries
    unchanged; diagonal entries in [1/2, 2] subtract exactly by Sterbenz's
    lemma). Returns +∞ when a diagonal entry falls outside [1/2, 2] (the
    factor is far from orthonormal and the certificate would fail anyway).
    Proof: proofs/enclosure.md §3, Lemma 3.1.
    """
    X = np.asarray(X, dtype=np.float64)
    m, r = X.shape
    if r == 0:
        return arb(0)
    k = chunked_gamma_length(m)
    with np.errstate(over="ignore", invalid="ignore"):
        if k == m:
            G = X.T @ X  # numpy calls BLAS syrk for this pattern
        else:
            G = None
            for a, b in _chunk_bounds(m):
                Xc = X[a:b]
                Gc = Xc.T @ Xc  # syrk on ≤ CHUNK rows
                if G is None:
                    G = Gc
                else:
                    G += Gc  # running sum: one rounded addition per entry and chunk
    dg = np.diag(G)
    if not np.all((dg >= 0.5) & (dg <= 2.0)):
        return arb.pos_inf()
    D = G.copy() if k == m else G
    D[np.diag_indices(r)] -= 1.0  # exact by Sterbenz (1/2 ≤ g_ii ≤ 2)
    with working_precision():
        aX = np.abs(X) if absX is None else absX
        err = gamma(k) * abs_product_norm2_upper(X.T, None, X, aX.T, aX) + 4 * m * r * arb(ETA)
        return norm2_upper(D) + err


def residual_norm_bound(
    W: np.ndarray,
    X: np.ndarray,
    s: np.ndarray,
    Y: np.ndarray,
    absX: np.ndarray | None = None,
    absY: np.ndarray | None = None,
) -> arb:
    """Ball whose upper end bounds ``‖W − X diag(s) Yᵀ‖₂`` (all float data).

    Computes ``V = fl(diag(s) Yᵀ)`` and ``R̂ = fl(W − fl(X V))`` with one
    GEMM — or, when the inner dimension r exceeds 2·CHUNK, ``R₀ = W``,
    ``R_c = fl(R_{c−1} − fl(X_c V_c))`` over column chunks of X (leading
    singular vectors first) — and bounds
    ``‖R‖₂ ≤ N(R̂) + 2u Σ_c N(R_c) + γ_{b+1}‖|X||S||Y|ᵀ‖₂ + (underflow terms)``
    with b the chunk length (b = r unchunked: then this is
    ``(1+2u)N(R̂) + γ_{r+1}…``). Proof: proofs/enclosure.md §3, Lemma 3.2.
    """
    W = np.asarray(W, dtype=np.float64)
    m, n = W.shape
    r = X.shape[1]
    aX = np.abs(X) if absX is None else absX
    aY = np.abs(Y) if absY is None else absY
    chunked = r > 2 * CHUNK
    with np.errstate(over="ignore", invalid="ignore"):
        V = s[:, None] * Y.T
        if not chunked:
            R = X @ V
            np.subtract(W, R, out=R)  # in place: one m×n array, not two
            partial = []
        else:
            R = W.copy()
            P = np.empty_like(R)
            partial = []  # N(R_c) bounds of the intermediate residuals R_1 … R_{q−1}
            bounds = _chunk_bounds(r)
            for j, (a, b) in enumerate(bounds):
                np.matmul(X[:, a:b], V[a:b], out=P)
                np.subtract(R, P, out=R)
                if j < len(bounds) - 1:
                    if not np.isfinite(R).all():
                        return arb.pos_inf()
                    partial.append(_sumsq_upper(R).sqrt())
    if not np.isfinite(R).all():
        return arb.pos_inf()
    with working_precision():
        b = CHUNK if chunked else r
        apriori = gamma(b + 1) * abs_product_norm2_upper(X, s, Y.T, aX, aY.T)
        maxrow = float(np.max(aX.sum(axis=1))) if r else 0.0
        under = (4 * r + 4 * arb_from_float(maxrow) + 4) * arb(ETA) * arb(m * n).sqrt()
        inter = arb(0)
        for x in partial:
            inter += x
        return (1 + 2 * arb(_U)) * norm2_upper(R, overwrite=True) + 2 * arb(_U) * inter + apriori + under
