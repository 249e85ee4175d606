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
    "RESIDUAL_BLOCK_BYTES",
    "RESIDUAL_BLOCK_MIN_COLUMNS",
    "RESIDUAL_BLOCK_MAX_COLUMNS",
    "residual_block_columns",
    "scale_by_power_of_two",
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


def _row_chunks(m: int) -> list[tuple[int, int]]:
    """Row ranges of the chunked Gram products: one range when m ≤ 2·CHUNK (Lemma 2.5)."""
    return _chunk_bounds(m) if m > 2 * CHUNK else [(0, m)]


def gram_deviation_bound(X: np.ndarray) -> arb:
    """Ball whose upper end bounds ``‖XᵀX − I‖₂`` for a float m×r matrix X.

    ``G = fl(XᵀX)`` has ``|G − XᵀX| ≤ γ|X|ᵀ|X| + 4mη`` entrywise, γ = γ_m,
    or γ_{b+q} when m > 2b and G is accumulated from q row chunks of ≤ b
    rows (Lemma 2.5); ``G − I`` is then formed exactly (off-diagonal entries
    unchanged; diagonal entries in [1/2, 2] subtract exactly by Sterbenz's
    lemma). ``‖|X|ᵀ|X|‖₂ ≤ max(|X|ᵀ(|X|𝟙))`` (a symmetric nonnegative
    matrix) is accumulated over the same row chunks, so no m×r copy ``|X|``
    is made. Returns +∞ when a diagonal entry falls outside [1/2, 2] (the
    factor is far from orthonormal and the certificate would fail anyway).
    Proof: proofs/enclosure.md §3, Lemma 3.1.

    >>> float_upper(gram_deviation_bound(np.eye(4)[:, :2])) < 1e-15
    True
    """
    X = np.asarray(X, dtype=np.float64)
    m, r = X.shape
    if r == 0:
        return arb(0)
    k = chunked_gamma_length(m)
    G = Gc = None
    w = np.zeros(r)  # running sum of |X_c|ᵀ v_c: fl(|X|ᵀ v), an m-term sum by some tree
    with np.errstate(over="ignore", invalid="ignore"):
        for a, b in _row_chunks(m):
            Xc = X[a:b]
            if G is None:
                G = Xc.T @ Xc  # numpy calls BLAS syrk for this pattern (≤ CHUNK rows when chunked)
                Gc = np.empty_like(G) if m > b else None
            else:
                Gc = np.matmul(Xc.T, Xc, out=Gc)  # one chunk buffer, reused (syrk as well)
                G += Gc  # running sum: one rounded addition per entry and chunk
            aXc = np.abs(Xc)  # a chunk of |X| only
            v = _inflate(aXc.sum(axis=1), r)  # ≥ the exact row sums |X_c|𝟙 (Lemma 2.2)
            w += aXc.T @ v
    dg = np.diag(G)
    if not np.all((dg >= 0.5) & (dg <= 2.0)):
        return arb.pos_inf()
    G[np.diag_indices(r)] -= 1.0  # exact by Sterbenz (1/2 ≤ g_ii ≤ 2); G is our own array
    wmax = float(np.max(_inflate(w, m)))  # ≥ ‖|X|ᵀ|X|‖_∞ ≥ ‖|X|ᵀ|X|‖₂ (Lemma 2.2, monotonicity)
    if not np.isfinite(wmax):
        return arb.pos_inf()
    with working_precision():
        err = gamma(k) * arb_from_float(wmax) + 4 * m * r * arb(ETA)
        return norm2_upper(G, overwrite=True) + err


#: Target size in bytes of one column block of the residual (``residual_norm_bound``):
#: its m×nb working arrays stay in the last-level cache while the q inner
#: chunks are subtracted and the block's norms are accumulated.
RESIDUAL_BLOCK_BYTES = 2**23
#: Bounds on the block width: narrow blocks make each GEMM repack X (measured
#: 2.19 s → 1.65 s at 2048×8192 going from 64 to 512 columns).
RESIDUAL_BLOCK_MIN_COLUMNS = 64
RESIDUAL_BLOCK_MAX_COLUMNS = 1024


def residual_block_columns(m: int, n: int) -> int:
    """Columns per output block of the blocked residual: ≈ RESIDUAL_BLOCK_BYTES / (8m), clamped, ≤ n.

    >>> residual_block_columns(768, 3072), residual_block_columns(4096, 16384), residual_block_columns(64, 100)
    (768, 256, 64)
    """
    nb = RESIDUAL_BLOCK_BYTES // (8 * max(m, 1))
    # ≤ a quarter of the columns: a block is never a large part of a small matrix
    nb = min(nb, RESIDUAL_BLOCK_MAX_COLUMNS, -(-n // 4))
    return max(1, min(n, max(RESIDUAL_BLOCK_MIN_COLUMNS, nb)))


def scale_by_power_of_two(a: np.ndarray, k: int, out: np.ndarray | None = None) -> np.ndarray:
    """``fl(2^k·a)`` entrywise, correctly rounded — the product of ``_input.power_of_two_scaling``.

    >>> scale_by_power_of_two(np.array([3.0, -0.5]), -1).tolist()
    [1.5, -0.25]
    """
    # 2^k is a normal float only for -1022 ≤ k ≤ 1023; ldexp is correctly rounded too.
    if -1022 <= k <= 1023:
        return np.multiply(a, np.ldexp(1.0, k), out=out)
    return np.ldexp(a, k, out=out)


def residual_norm_bound(W: np.ndarray, X: np.ndarray, s: np.ndarray, Y: np.ndarray, scale_exponent: int = 0) -> arb:
    """Ball whose upper end bounds ``‖W' − X diag(s) Yᵀ‖₂``, ``W' = fl(2^scale_exponent·W)`` (all float data).

    With ``V = fl(diag(s) Yᵀ)``, ``R₀ = W`` and ``R_c = fl(R_{c−1} − fl(X_c V_c))``
    over q column chunks of X of ≤ b = CHUNK columns (leading singular
    vectors first; one chunk, b = r, when r ≤ 2·CHUNK), ``R̂ = R_q`` and

    ``‖R‖₂ ≤ (1+2u) N(R̂) + 2u Σ_{c<q} N(R_c) + γ_{b+1}‖|X||S||Y|ᵀ‖₂ + (underflow terms)``

    (proofs/enclosure.md §3, Lemmas 3.2, 3.2′). The m×n arrays R_c are never
    formed: the output is computed in column blocks J (:func:`residual_block_columns`),
    each ``R_c[:, J]`` from ``W[:, J]`` and ``V[:, J] = fl(diag(s) Y[J]ᵀ)`` — the same
    floats entry by entry — and each block's Frobenius sums, row and column
    sums of ``|R̂[:, J]|`` and the rows of ``|Y|`` needed by Lemma 2.4 are
    accumulated while the block is in cache (Lemma 3.3). Workspace: two m×nb
    blocks and an r×nb block (r ≤ m), vectors. With ``scale_exponent = k`` the
    blocks of ``W' = fl(2^k W)`` (:func:`scale_by_power_of_two`, the same floats as
    the kernel's scaled copy) are formed in the block buffer, so the scaled
    m×n matrix need not exist.

    >>> import numpy as np
    >>> W = np.diag([3.0, 1.0])
    >>> float_upper(residual_norm_bound(W, np.eye(2), np.array([3.0, 1.0]), np.eye(2))) < 1e-14
    True
    """
    W = np.asarray(W, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    m, n = W.shape
    if m > n:
        # ‖W − X S Yᵀ‖₂ = ‖Wᵀ − Y S Xᵀ‖₂: block the wide orientation, whose column
        # blocks are contiguous rows of a C-ordered W (Lemma 3.3).
        return residual_norm_bound(W.T, Y, s, X, scale_exponent)
    r = X.shape[1]
    if m == 0 or n == 0:
        return arb(0)
    chunked = r > 2 * CHUNK
    inner = _chunk_bounds(r) if chunked else [(0, r)]
    q = len(inner)
    d = np.abs(s)
    with np.errstate(over="ignore", invalid="ignore"):
        # 𝟙ᵀ|X| and the row sums of |X|, over row chunks of X (no m×r copy |X|).
        cX = np.zeros(r)
        rowX = np.empty(m)
        for a, b in _row_chunks(m):
            aXc = np.abs(X[a:b])
            cX += aXc.sum(axis=0)
            rowX[a:b] = aXc.sum(axis=1)
        t = _inflate(d * _inflate(cX, m), 1)  # ≥ |S||X|ᵀ𝟙 (Lemma 2.2, one product per entry)
        cY = np.zeros(r)  # running 𝟙ᵀ|Y| over the row blocks of Y
        colN = np.empty(n)  # ≥ 𝟙ᵀ(|X||S||Y|ᵀ) = |Y| t, per block
        colR = np.empty(n)  # column sums of |R̂| (complete within a block)
        rowR = np.zeros(m)  # row sums of |R̂|, running over blocks
        ss_inter = np.zeros(max(q - 1, 0))  # Σ (R_c)_ij², c < q, running over blocks
        ss_final = 0.0
        nb = residual_block_columns(m, n)
        bufs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for j0 in range(0, n, nb):
            j1 = min(j0 + nb, n)
            w = j1 - j0
            if w not in bufs:
                bufs[w] = (np.empty((m, w)), np.empty((m, w)))
            P, R = bufs[w]
            YJ = Y[j0:j1]
            VJ = s[:, None] * YJ.T  # r×w: the columns J of fl(diag(s) Yᵀ)
            for c, (a, b) in enumerate(inner):
                np.matmul(X[:, a:b], VJ[a:b], out=P)
                if c == 0 and scale_exponent:
                    scale_by_power_of_two(W[:, j0:j1], scale_exponent, out=R)  # R₀[:, J] = W'[:, J]
                    np.subtract(R, P, out=R)
                else:
                    np.subtract(W[:, j0:j1] if c == 0 else R, P, out=R)
                if c < q - 1:
                    flat = R.reshape(-1)
                    ss_inter[c] += flat @ flat
            flat = R.reshape(-1)
            ss_final += flat @ flat
            aR = np.abs(R, out=P)
            colR[j0:j1] = aR.sum(axis=0)
            rowR += aR.sum(axis=1)
            # |Y_J| (w×r; r ≤ m in the kernel) in P's buffer, free again: no fourth block
            buf = P.reshape(-1)[: w * r] if w * r <= P.size else np.empty(w * r)
            aYJ = np.abs(YJ, out=buf.reshape(w, r))
            colN[j0:j1] = aYJ @ t
            cY += aYJ.sum(axis=0)
        if not (np.isfinite(ss_final) and np.all(np.isfinite(ss_inter))):
            return arb.pos_inf()  # a non-finite entry (or an overflowing square) somewhere
        rY = _inflate(d * _inflate(cY, n), 1)  # ≥ |S||Y|ᵀ𝟙
        rowN = np.empty(m)
        for a, b in _row_chunks(m):
            rowN[a:b] = np.abs(X[a:b]) @ rY
        ninf_N = float(np.max(_inflate(rowN, r)))  # ≥ ‖|X||S||Y|ᵀ‖_∞
        n1_N = float(np.max(_inflate(colN, r)))  # ≥ ‖|X||S||Y|ᵀ‖_1
        n1_R = float(np.max(_inflate(colR, m)))  # ≥ ‖R̂‖_1
        ninf_R = float(np.max(_inflate(rowR, n)))  # ≥ ‖R̂‖_∞
        maxrow = float(np.max(_inflate(rowX, r))) if r else 0.0
    if not (np.isfinite(ninf_N) and np.isfinite(n1_N) and np.isfinite(maxrow)):
        return arb.pos_inf()
    with working_precision():
        mn = m * n
        # Frobenius bounds: each total is one tree of mn rounded squares (Lemma 2.2 / _sumsq_upper).
        denom = 1 - gamma(mn)
        fro_final = ((arb_from_float(float(ss_final)) + 2 * mn * arb(ETA)) / denom).sqrt()
        nR = fro_final
        if np.isfinite(n1_R) and np.isfinite(ninf_R):
            hoelder = (arb_from_float(n1_R) * arb_from_float(ninf_R)).sqrt()
            if hoelder.upper() < fro_final.upper():
                nR = hoelder
        inter = arb(0)
        for x in ss_inter.tolist():
            inter += ((arb_from_float(x) + 2 * mn * arb(ETA)) / denom).sqrt()
        b = CHUNK if chunked else r
        apriori = gamma(b + 1) * (arb_from_float(ninf_N) * arb_from_float(n1_N)).sqrt()
        under = (4 * r + 4 * arb_from_float(maxrow) + 4) * arb(ETA) * arb(mn).sqrt()
        return (1 + 2 * arb(_U)) * nR + 2 * arb(_U) * inter + apriori + under
