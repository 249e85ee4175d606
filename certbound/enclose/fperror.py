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
import scipy.linalg.blas
from flint import arb

from certbound.ball import arb_from_float, float_upper, working_precision  # noqa: F401 (float_upper: the doctests use it)

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
    "symmetric_residual_norm_bound",
    "tridiagonal_residual_norm_bound",
    "tridiagonal_abs_matvec_upper",
    "symmetric_residual_block_columns",
    "syrk_rows_upper",
    "mirror_upper",
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

    Parameters
    ----------
    k : int
        The number of roundings on a path (0 ≤ k ≤ 2⁴⁰, where k·u ≤ 2⁻¹³).

    Returns
    -------
    arb
        A ball containing γ_k (evaluated at the working precision).

    Raises
    ------
    ValueError
        If k is negative or above 2⁴⁰.

    Examples
    --------
    >>> gamma(1).upper() > arb(2) ** -53
    True
    >>> bool(gamma(0) == 0), bool(gamma(100).upper() < 101 * arb(2) ** -53)
    (True, True)
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


def _inflate_in_place(v: np.ndarray, k: int) -> np.ndarray:
    """:func:`_inflate` written into v (a temporary of the caller): ``v ← fl(fl(v + c)·f)``, the same floats.

    Without numpy's error-state context (≈ 5 µs per call): call it under
    ``np.errstate(over="ignore")`` (an overflow gives +∞, a valid bound).
    """
    if k > _MAX_K:
        raise ValueError("dimension too large for the a-priori error model")
    np.add(v, 2.0 * (k + 2) * ETA, out=v)
    np.multiply(v, 1.0 + 2.0 * (k + 2) * _U, out=v)
    return v


def matvec_nonneg_upper(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Entrywise float upper bound on the exact product ``M @ v``, M, v ≥ 0.

    ``fl(M @ v)`` (any order) followed by :func:`_inflate` with k = M's inner
    length (Lemma 2.2 of proofs/enclosure.md).

    Parameters
    ----------
    M : (m, k) float64 array
        Nonnegative.
    v : (k,) float64 array
        Nonnegative.

    Returns
    -------
    (m,) float64 array
        Floats ≥ (Mv)ᵢ (+∞ where the product overflows).

    Examples
    --------
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
    additions); the code divides by the smaller ``1 − γ_k``.

    Parameters
    ----------
    values : array_like of float64
        Nonnegative floats (any shape; flattened).

    Returns
    -------
    arb
        A ball whose upper end is ≥ the exact sum (+∞ if the float sum overflows).

    Examples
    --------
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
    """Ball whose lower end is ≤ the exact sum of nonnegative floats.

    Any summation order: ``fl(Σ)/(1 + γ_k) ≤ Σ`` (machine-checked in
    proofs/coq/Summation.v, ``sum_nonneg_bounds``).

    Parameters
    ----------
    values : array_like of float64
        Nonnegative floats (any shape; flattened).

    Returns
    -------
    arb
        A ball whose lower end is ≤ the exact sum (``arb(0)`` if the float sum overflows).

    Examples
    --------
    >>> from certbound.ball import float_lower
    >>> float_lower(sum_nonneg_lower(np.full(10, 0.1))) <= 1.0
    True
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    k = max(v.size, 1)
    s = float(np.sum(v))
    if not np.isfinite(s):
        return arb(0)
    with working_precision():
        return arb_from_float(s) / (1 + gamma(k))


def _sumsq_upper(M: np.ndarray) -> arb:
    """Ball whose upper end bounds the exact ``Σ m_ij²`` of a float matrix."""
    v = np.asarray(M, dtype=np.float64).ravel(order="K")  # a view of a C- or F-contiguous M (any order: any tree)
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

    Parameters
    ----------
    M : (m, n) float64 array
        Any float matrix (C- or F-ordered).
    overwrite : bool
        Take |M| in place (M is then overwritten; for the caller's own scratch arrays).

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖M‖₂ (+∞ when both norm bounds overflow).

    Examples
    --------
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
    (:func:`matvec_nonneg_upper`). Cost O((m+n)k) (proofs/enclosure.md §2, Lemma 2.4).

    Parameters
    ----------
    A : (m, k) float64 array
        Any float matrix.
    d : (k,) float64 array or None
        The middle diagonal (None: the identity).
    B : (k, n) float64 array
        Any float matrix.
    absA, absB : float64 arrays, optional
        Precomputed ``|A|``, ``|B|`` (exact), to save the passes.

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖|A| diag(|d|) |B|‖₂ (+∞ if a bound overflows).

    Examples
    --------
    >>> A = np.array([[1.0, -1.0], [0.0, 2.0]])
    >>> b = abs_product_norm2_upper(A, np.array([1.0, 0.5]), A.T)   # N = |A| diag(1, ½) |A|ᵀ = [[1.5, 1], [1, 2]]
    >>> bool(2.78 <= float_upper(b) <= 3.0 * (1 + 1e-14))             # ‖N‖₂ ≈ 2.78 ≤ √(‖N‖₁‖N‖_∞) = 3
    True
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
#: running sum has the error constant γ_{b+q−1} instead of γ_m (q chunks).
CHUNK = 256


def _chunk_bounds(k: int, chunk: int | None = None) -> list[tuple[int, int]]:
    chunk = CHUNK if chunk is None else chunk  # read at call time (tests shrink CHUNK)
    return [(i, min(i + chunk, k)) for i in range(0, k, chunk)]


def chunked_gamma_length(k: int, chunk: int | None = None) -> int:
    """Effective length for γ of a chunked length-k dot product (Lemma 2.5): b + q − 1, or k if not chunked.

    A chunk's dot product has at most b roundings on any path (b products, ≤ b − 1
    additions, FMA or not) and the q chunk results at most q − 1 additions, hence
    γ_b + γ_{q−1} + γ_bγ_{q−1} ≤ γ_{b+q−1} (proofs/enclosure.md §2, Lemma 2.5).

    Parameters
    ----------
    k : int
        Length of the dot products.
    chunk : int, optional
        Chunk length b (default :data:`CHUNK`); the products are chunked only when ``k > 2·chunk``.

    Returns
    -------
    int
        ``b + ⌈k/b⌉ − 1`` when chunked, else ``k``.

    >>> chunked_gamma_length(100), chunked_gamma_length(16384), chunked_gamma_length(384, 128)
    (100, 319, 130)
    """
    chunk = CHUNK if chunk is None else chunk
    if k <= 2 * chunk:
        return k
    return chunk + -(-k // chunk) - 1


def _row_chunks(m: int, chunk: int | None = None) -> list[tuple[int, int]]:
    """Row ranges of the chunked Gram products: one range when m ≤ 2·chunk (Lemma 2.5)."""
    chunk = CHUNK if chunk is None else chunk
    return _chunk_bounds(m, chunk) if m > 2 * chunk else [(0, m)]


#: scipy's BLAS takes 32-bit dimensions: larger outputs use numpy's SYRK.
_SCIPY_BLAS_LIMIT = 2**31 - 1


def syrk_rows_upper(A: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``fl(A Aᵀ)`` by one BLAS ``dsyrk``: an m×m Fortran-ordered array, valid in its upper triangle.

    Each upper entry (i ≤ j) is one rounded dot product of rows i and j of A
    (the model of proofs/enclosure.md §2). The strictly lower triangle is not
    written (0 in a new array, unchanged in ``out``); :func:`mirror_upper` fills it.

    Parameters
    ----------
    A : (m, k) float64 array
        C- or F-contiguous (a C-ordered A is passed to BLAS as the
        Fortran-ordered Aᵀ, no copy).
    out : (m, m) Fortran-ordered float64 array, optional
        Buffer to overwrite (``beta = 0``: its upper triangle is not read).

    Returns
    -------
    numpy.ndarray
        ``out`` or a new array.

    >>> syrk_rows_upper(np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[5.0, 11.0], [0.0, 25.0]]
    """
    m = A.shape[0]
    if m * m > _SCIPY_BLAS_LIMIT or A.size > _SCIPY_BLAS_LIMIT:
        G = np.asfortranarray(A @ A.T)
        if out is None:
            return G
        out[...] = G
        return out
    # A C-ordered m×k array is the Fortran-ordered k×m matrix Aᵀ: then C = (Aᵀ)ᵀ(Aᵀ).
    a, trans = (A, 0) if A.flags.f_contiguous else (np.ascontiguousarray(A).T, 1)
    if out is None:
        return scipy.linalg.blas.dsyrk(1.0, a, trans=trans, lower=0)
    return scipy.linalg.blas.dsyrk(1.0, a, beta=0.0, c=out, trans=trans, lower=0, overwrite_c=1)


def mirror_upper(G: np.ndarray) -> None:
    """Copy the strict upper triangle of the square G onto its strict lower triangle, in place.

    Blocks of 64 rows: no m×m temporaries. Afterwards ``G == G.T`` exactly.

    Parameters
    ----------
    G : (m, m) float64 array
        Any memory order; modified in place.

    Returns
    -------
    None

    >>> G = np.array([[1.0, 2.0], [0.0, 3.0]]); mirror_upper(G); G.tolist()
    [[1.0, 2.0], [2.0, 3.0]]
    """
    m = G.shape[0]
    step = 64
    for a in range(0, m, step):
        b = min(a + step, m)
        D = G[a:b, a:b]
        np.copyto(D, D.T, where=_strict_lower_mask(b - a))  # reads the strict upper part only
        if b < m:
            G[b:, a:b] = G[a:b, b:].T


_LOWER_MASKS: dict[int, np.ndarray] = {}


def _strict_lower_mask(w: int) -> np.ndarray:
    """The w×w boolean mask of the strict lower triangle (cached: mirror_upper's blocks are ≤ 64 wide)."""
    mask = _LOWER_MASKS.get(w)
    if mask is None:
        mask = _LOWER_MASKS[w] = np.tri(w, k=-1, dtype=bool)
        mask.flags.writeable = False
    return mask


def gram_deviation_bound(X: np.ndarray, chunk: int | None = None, triangle: bool = False,
                         absX: np.ndarray | None = None, block_columns: int | None = None) -> arb:
    """Ball whose upper end bounds ``‖XᵀX − I‖₂`` for a float m×r matrix X.

    ``G = fl(XᵀX)`` has ``|G − XᵀX| ≤ γ|X|ᵀ|X| + 4mη`` entrywise, γ = γ_m,
    or γ_{b+q−1} when m > 2b and G is accumulated from q row chunks of ≤ b
    rows (Lemma 2.5); ``G − I`` is then formed exactly (off-diagonal entries
    unchanged; diagonal entries in [1/2, 2] subtract exactly by Sterbenz's
    lemma). ``‖|X|ᵀ|X|‖₂ ≤ max(|X|ᵀ(|X|𝟙))`` (a symmetric nonnegative
    matrix) is accumulated over the same row chunks, so no m×r copy ``|X|``
    is made. Returns +∞ when a diagonal entry falls outside [1/2, 2] (the
    factor is far from orthonormal and the certificate would fail anyway).
    Proof: proofs/enclosure.md §3, Lemma 3.1.

    Parameters
    ----------
    X : (m, r) float64 array
        Any float matrix (in practice a computed singular or eigenvector basis).
    chunk : int, optional
        Row-chunk length b of Lemma 2.5 (default :data:`CHUNK`; rows are chunked when ``m > 2·chunk``);
        a smaller b gives a smaller constant γ_{b+q−1} at the price of more, smaller SYRKs.
    triangle : bool
        Accumulate only the upper triangles of the chunk SYRKs (scipy's
        ``dsyrk`` on a contiguous copy of each chunk, :func:`syrk_rows_upper`)
        and mirror once at the end: the same entrywise floats model, fewer
        passes (the Gram route, ``certify_gram``). Default: numpy's SYRK per chunk.
    absX : (m, r) float64 array, optional
        ``|X|`` if the caller has it: the chain ``|X|ᵀ(|X|𝟙)`` is then taken from it
        (the same bound, Lemma 2.2, with whole-matrix products instead of chunk sums).
    block_columns : int, optional
        With ``absX``: form fl(XᵀX) in column blocks J of this width, rows ``:J₁``
        only (one GEMM per block and row chunk, the running sum over the chunks in
        a block buffer), the strictly lower blocks as mirrors (:func:`_gram_block_columns`;
        the same entrywise floats model). Faster than both SYRK forms (measured,
        one thread: 1.84 vs 2.46 ms at r = 384, 13.6 vs 15.3 ms at r = 768, chunk 96).

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖XᵀX − I‖₂ (+∞ when a diagonal entry of
        fl(XᵀX) is outside [1/2, 2] or a bound overflows).

    >>> float_upper(gram_deviation_bound(np.eye(4)[:, :2])) < 1e-15
    True
    """
    X = np.asarray(X, dtype=np.float64)
    m, r = X.shape
    if r == 0:
        return arb(0)
    chunk = CHUNK if chunk is None else chunk
    k = chunked_gamma_length(m, chunk)
    G = Gc = None
    w = np.zeros(r)  # running sum of |X_c|ᵀ v_c: fl(|X|ᵀ v), an m-term sum by some tree
    if absX is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            if block_columns is not None:
                G = _gram_block_columns(X, chunk, block_columns)
            else:
                G = _gram_columns_upper_triangle(X, chunk, None) if triangle else _gram_chunk_sum(X, chunk)
            w = absX.T @ _inflate(absX.sum(axis=1), r)  # fl(|X|ᵀv), v ≥ |X|𝟙: an m-term sum by some tree
        return _gram_deviation_finish(G, w, m, r, k)
    if triangle:
        G = _gram_columns_upper_triangle(X, chunk, w)
        return _gram_deviation_finish(G, w, m, r, k)
    with np.errstate(over="ignore", invalid="ignore"):
        for a, b in _row_chunks(m, chunk):
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
    return _gram_deviation_finish(G, w, m, r, k)


def _gram_chunk_sum(X: np.ndarray, chunk: int) -> np.ndarray:
    """fl(XᵀX) as the running sum of numpy SYRKs of the row chunks (Lemma 3.1's floats)."""
    G = Gc = None
    m = X.shape[0]
    for a, b in _row_chunks(m, chunk):
        Xc = X[a:b]
        if G is None:
            G = Xc.T @ Xc
            Gc = np.empty_like(G) if m > b else None
        else:
            Gc = np.matmul(Xc.T, Xc, out=Gc)
            G += Gc
    return G


def _gram_block_columns(X: np.ndarray, chunk: int, nb: int) -> np.ndarray:
    """fl(XᵀX) by column blocks: rows ``:J₁`` of block column J as the running sum over the row chunks of GEMMs.

    Lemma 3.1's floats (proofs/enclosure-gram.md §1a, α of Q̂): every computed entry
    (i, j), i < J₁, is the running sum over the row chunks c (in order) of one
    chunk dot product ``fl(X_c[:, i]ᵀ X_c[:, j])`` of ≤ ``chunk`` terms; the entries
    of the strictly lower blocks (i ≥ J₁ > j) are copies of their mirrors, which
    satisfy the same entrywise bound (XᵀX and |X|ᵀ|X| are symmetric). The
    diagonal blocks hold both (i, j) and (j, i), each computed. A C-ordered r×r array.
    """
    m, r = X.shape
    chunks = _row_chunks(m, chunk)
    G = np.empty((r, r))
    nb = max(1, min(nb, r))
    Pbuf, Sbuf = np.empty(r * nb), np.empty(r * nb)
    for j0 in range(0, r, nb):
        j1 = min(j0 + nb, r)
        w = j1 - j0
        P = Pbuf[: j1 * w].reshape(j1, w)
        S = Sbuf[: j1 * w].reshape(j1, w)
        for c, (a, b) in enumerate(chunks):
            Xc = X[a:b]
            np.matmul(Xc[:, :j1].T, Xc[:, j0:j1], out=S if c == 0 else P)  # fl(X_cᵀX_c) rows :J₁, columns J
            if c:
                S += P  # running sum: one rounded addition per entry and chunk
        G[:j1, j0:j1] = S
        if j0:
            G[j0:j1, :j0] = S[:j0].T  # the mirrors of the strictly upper blocks
    return G


def _gram_columns_upper_triangle(X: np.ndarray, chunk: int, w: np.ndarray | None) -> np.ndarray:
    """fl(XᵀX) as the running sum of the upper triangles of row-chunk SYRKs, mirrored; adds fl(|X|ᵀv) to w.

    Lemma 3.1's floats: each entry (i ≤ j) is the running sum over the row chunks
    of one chunk dot product of columns i, j; the lower triangle is its mirror.
    """
    m, r = X.shape
    G = Gc = None
    bufs: dict[int, np.ndarray] = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for a, b in _row_chunks(m, chunk):
            buf = bufs.get(b - a)
            if buf is None:
                buf = bufs[b - a] = np.empty((r, b - a))
            np.copyto(buf, X[a:b].T)  # X_cᵀ, C-contiguous: BLAS reads it without a copy
            if G is None:
                G = syrk_rows_upper(buf)
            else:
                Gc = syrk_rows_upper(buf, out=Gc if Gc is not None else np.zeros((r, r), order="F"))
                G += Gc  # running sum: one rounded addition per entry and chunk
            if w is not None:
                aXcT = np.abs(buf, out=buf)  # |X_c|ᵀ, in place
                v = _inflate(aXcT.sum(axis=0), r)  # ≥ the exact row sums |X_c|𝟙 (Lemma 2.2)
                w += aXcT @ v
        mirror_upper(G)
    return G


def _gram_deviation_finish(G: np.ndarray, w: np.ndarray, m: int, r: int, k: int) -> arb:
    """Lemma 3.1 from G = fl(XᵀX) (our own array, overwritten) and w = fl(|X|ᵀv)."""
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

    Parameters
    ----------
    m : int
        Rows of the residual (each block is m × nb).
    n : int
        Its columns.

    Returns
    -------
    int
        The block width nb: between RESIDUAL_BLOCK_MIN_COLUMNS and
        RESIDUAL_BLOCK_MAX_COLUMNS, at most ⌈n/4⌉ (then at least 1) and at most n.

    Examples
    --------
    >>> residual_block_columns(768, 3072), residual_block_columns(4096, 16384), residual_block_columns(64, 100)
    (768, 256, 64)
    """
    nb = RESIDUAL_BLOCK_BYTES // (8 * max(m, 1))
    # ≤ a quarter of the columns: a block is never a large part of a small matrix
    nb = min(nb, RESIDUAL_BLOCK_MAX_COLUMNS, -(-n // 4))
    return max(1, min(n, max(RESIDUAL_BLOCK_MIN_COLUMNS, nb)))


def scale_by_power_of_two(a: np.ndarray, k: int, out: np.ndarray | None = None) -> np.ndarray:
    """``fl(2^k·a)`` entrywise, correctly rounded — the product of ``_input.power_of_two_scaling``.

    One multiplication by the float 2^k when it is normal (−1022 ≤ k ≤ 1023),
    else ``ldexp`` (also correctly rounded): exact unless a result is subnormal
    (proofs/enclosure.md §5).

    Parameters
    ----------
    a : float64 array
        The data.
    k : int
        The exponent.
    out : float64 array, optional
        Where to write the result (may be ``a`` itself).

    Returns
    -------
    float64 array
        ``fl(2^k·a)`` (``out`` if given).

    Examples
    --------
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

    Parameters
    ----------
    W : (m, n) float64 array
        The matrix (any memory order).
    X : (m, r) float64 array
        Left factor (approximate left singular vectors).
    s : (r,) float64 array
        Middle diagonal (approximate singular values).
    Y : (n, r) float64 array
        Right factor (approximate right singular vectors).
    scale_exponent : int
        The bound is for ``fl(2^scale_exponent·W)`` (0: W itself).

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖W' − X diag(s) Yᵀ‖₂ (+∞ if an entry or a bound is not finite).

    Examples
    --------
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
        b = CHUNK if chunked else r
        apriori = gamma(b + 1) * (arb_from_float(ninf_N) * arb_from_float(n1_N)).sqrt()
        return _residual_bound_finish(float(ss_final), ss_inter, n1_R, ninf_R, m * n, r, maxrow, apriori)


def _residual_bound_finish(ss_final: float, ss_inter: np.ndarray, n1_R: float, ninf_R: float, entries: int,
                           r: int, maxrow: float, apriori: arb) -> arb:
    """The last step of Lemma 3.2′ (and 3.4), in Arb: ``(1+2u)N(R̂) + 2uΣ_c N(R̂_c) + apriori + under``.

    Parameters
    ----------
    ss_final : float
        ``fl(Σ)`` of the squares of the computed residual R̂'s entries (one tree of ``entries`` squares).
    ss_inter : ndarray
        The same for each intermediate R̂_c, c < q.
    n1_R, ninf_R : float
        Floats ≥ ‖R̂‖₁ and ≥ ‖R̂‖_∞ (or non-finite: then only the Frobenius bound is used).
    entries : int
        Number of entries of R̂ (m·n).
    r : int
        Inner length of the residual products (Lemma 2.1's underflow term).
    maxrow : float
        Float ≥ max_i Σ_l |x_il|.
    apriori : arb
        γ_{b+1} times a bound of ‖|X||S||Y|ᵀ‖₂.

    Returns
    -------
    arb
        A ball whose upper end bounds ‖W − X diag(s) Yᵀ‖₂ (proofs/enclosure.md §3).
    """
    # Frobenius bounds: each total is one tree of `entries` rounded squares (Lemma 2.2 / _sumsq_upper);
    # N(R̂) = min(‖R̂‖_F bound, √(‖R̂‖₁‖R̂‖_∞)) (Lemma 2.3, valid for any matrix).
    denom = 1 - gamma(entries)
    nR = ((arb_from_float(ss_final) + 2 * entries * arb(ETA)) / denom).sqrt()
    if np.isfinite(n1_R) and np.isfinite(ninf_R):
        hoelder = (arb_from_float(n1_R) * arb_from_float(ninf_R)).sqrt()
        if hoelder.upper() < nR.upper():
            nR = hoelder
    inter = arb(0)
    for x in ss_inter.tolist():
        inter += ((arb_from_float(x) + 2 * entries * arb(ETA)) / denom).sqrt()
    under = (4 * r + 4 * arb_from_float(maxrow) + 4) * arb(ETA) * arb(entries).sqrt()
    return (1 + 2 * arb(_U)) * nR + 2 * arb(_U) * inter + apriori + under


def symmetric_residual_block_columns(m: int) -> int:
    """Columns per block of :func:`symmetric_residual_norm_bound`: ≈ m/8 (at least 32, at most m).

    Block column J computes the rows ``:J₁`` only, so the GEMM flops are
    ``(1/2 + 1/(2·blocks))·2m³``; eight blocks give 56 % of the full product
    while each GEMM keeps ≥ 32 output columns (measured: 1.5 vs 2.2 ms for the
    full GEMM at m = 384, 11 vs 17 ms at m = 768; 48–96 columns were best).

    Parameters
    ----------
    m : int
        Order of the symmetric matrix.

    Returns
    -------
    int
        The block width.

    >>> symmetric_residual_block_columns(384), symmetric_residual_block_columns(768), symmetric_residual_block_columns(10)
    (48, 96, 10)
    """
    return max(1, min(m, max(32, -(-m // 8))))


def symmetric_residual_norm_bound(
    G: np.ndarray, U: np.ndarray, lam: np.ndarray, chunk: int | None = None, symmetric: bool = False
) -> arb:
    """Ball whose upper end bounds ``‖G − U diag(λ) Uᵀ‖₂`` for an *exactly symmetric* float G (Lemma 3.4).

    The residual R = G − UΛUᵀ is symmetric, so only its upper block triangle
    is computed: column block J gives the rows ``:J₁`` of Lemma 3.2′'s floats
    ``V_J = fl(diag(λ) U_Jᵀ)``, ``R_c = fl(R_{c−1} − fl(U_c V_{J,c}))`` (inner
    chunks of ≤ ``chunk`` columns of U when r > 2·chunk), each entry the same
    rounded expression as in :func:`residual_norm_bound` with W = G, X = Y = U,
    s = λ. The missing strictly-lower blocks are the mirrors of computed ones,
    and Lemma 3.2′'s bound holds for the completion R̃ of the computed entries
    (proofs/enclosure.md §3, Lemma 3.4): ‖R̃‖_F² counts off-diagonal blocks
    twice, ‖R̃‖₁ and ‖R̃‖_∞ are accumulated separately (the diagonal blocks hold
    both (i, j) and (j, i), rounded differently, so R̃ is not symmetric), and
    ``‖|U||Λ||U|ᵀ‖₂ ≤ max |U|(|Λ||U|ᵀ𝟙)`` (a symmetric nonnegative matrix).
    About 56 % of the GEMM flops of the full residual.

    Parameters
    ----------
    G : (m, m) float64 array
        Exactly symmetric (checked, ``ValueError`` otherwise, unless
        ``symmetric=True``), e.g. the mirrored Gram matrix of
        :func:`certbound.enclose.gram.rounded_gram`.
    U : (m, r) float64 array
        Any float matrix (an approximate eigenvector basis).
    lam : (r,) float64 array
        Any float vector (approximate eigenvalues, signed).
    chunk : int, optional
        Inner chunk length b of Lemma 3.2′ (default :data:`CHUNK`; inner dimension chunked when r > 2b).
    symmetric : bool
        The caller guarantees G == Gᵀ exactly (e.g. it mirrored G itself): skip the check.

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖G − U diag(λ) Uᵀ‖₂ (+∞ if a computed
        entry or a bound is not finite).

    >>> import numpy as np
    >>> Q = np.array([[0.6, -0.8], [0.8, 0.6]])
    >>> G = Q @ np.diag([4.0, 1.0]) @ Q.T
    >>> float_upper(symmetric_residual_norm_bound(G, Q, np.array([4.0, 1.0]))) < 1e-14
    True
    """
    G = np.asarray(G, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64).reshape(-1)
    m, r = U.shape
    if G.shape != (m, m) or lam.shape != (r,):
        raise ValueError(f"symmetric_residual_norm_bound: shapes G {G.shape}, U {U.shape}, lam {lam.shape}")
    if m == 0:
        return arb(0)
    if not symmetric and not np.array_equal(G, G.T, equal_nan=True):
        raise ValueError("symmetric_residual_norm_bound: G is not exactly symmetric")
    chunk = CHUNK if chunk is None else chunk
    chunked = r > 2 * chunk
    inner = _chunk_bounds(r, chunk) if chunked else [(0, r)]
    d = np.abs(lam)

    def middle(v: np.ndarray) -> np.ndarray:
        return _inflate(d * v, 1)  # ≥ |Λ|v (one rounded product per entry, Lemma 2.2)

    with np.errstate(over="ignore", invalid="ignore"):
        rowU, rho_N = _abs_sandwich_rho(U, middle)
        # V_J = fl(diag(λ) U_Jᵀ): the columns J of Lemma 3.2′'s V.
        blocks = _symmetric_residual_blocks(G, U, lambda j0, j1: lam[:, None] * U[j0:j1].T, inner)
    if blocks is None:
        return arb.pos_inf()  # a non-finite entry (or an overflowing square) somewhere
    ss_final, ss_inter, n1_R, ninf_R = blocks
    with np.errstate(over="ignore", invalid="ignore"):
        maxrow = float(np.max(_inflate(rowU, r))) if r else 0.0
    if not (rho_N.is_finite() and np.isfinite(maxrow)):
        return arb.pos_inf()
    with working_precision():
        b = chunk if chunked else r
        # √(‖R̃‖₁‖R̃‖_∞) with both sums: the diagonal blocks hold both (i, j) and
        # (j, i), each its own rounded chain, so R̃ is not symmetric (Lemma 3.4).
        return _residual_bound_finish(ss_final, ss_inter, n1_R, ninf_R, m * m, r, maxrow,
                                      gamma(b + 1) * rho_N)


def tridiagonal_residual_norm_bound(
    G: np.ndarray, Q: np.ndarray, d: np.ndarray, e: np.ndarray, chunk: int | None = None,
    symmetric: bool = False, absQ: np.ndarray | None = None,
) -> arb:
    """Ball whose upper end bounds ``‖G − Q T Qᵀ‖₂``, T = tridiag(e, d, e), for an exactly symmetric float G (Lemma 3.4-T).

    Lemma 3.4 with diag(λ) replaced by the symmetric tridiagonal T
    (proofs/enclosure-gram.md §2, Lemma 3.4-T): ``Y = fl(QT)`` entrywise (each entry
    a rounded sum of ≤ 3 rounded products, so ``|Y − QT| ≤ γ₃|Q||T| + 6η``),
    ``V_J = Y_Jᵀ``, and the same upper block triangle of
    ``R_c = fl(R_{c−1} − fl(Q_c V_{J,c}))`` as :func:`symmetric_residual_norm_bound`;
    the a-priori term is ``γ_{b+3}ρ(|Q||T||Q|ᵀ)`` (Collatz–Wielandt, as in
    Lemma 3.4) and the underflow constant uses ``3·max row sum of |Q|``.

    Parameters
    ----------
    G : (m, m) float64 array
        Exactly symmetric (checked, ``ValueError`` otherwise, unless ``symmetric=True``).
    Q : (m, m) float64 array
        Any float matrix (an approximate orthogonal basis).
    d : (m,) float64 array
        Diagonal of T.
    e : (m−1,) float64 array
        Off-diagonal of T.
    chunk : int, optional
        Inner chunk length b (default :data:`CHUNK`; chunked when m > 2b).
    symmetric : bool
        The caller guarantees G == Gᵀ exactly: skip the check.
    absQ : (m, m) float64 array, optional
        ``|Q|`` if the caller has it (exact: absolute values of floats).

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖G − QTQᵀ‖₂ (+∞ if a computed entry or a bound is not finite).

    >>> import numpy as np
    >>> T = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> float_upper(tridiagonal_residual_norm_bound(T, np.eye(2), np.array([2.0, 3.0]), np.array([1.0]))) < 1e-14
    True
    """
    G = np.asarray(G, dtype=np.float64)
    Q = np.asarray(Q, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    m, r = Q.shape
    if G.shape != (m, m) or r != m or d.shape != (m,) or e.shape != (max(m - 1, 0),):
        raise ValueError(f"tridiagonal_residual_norm_bound: shapes G {G.shape}, Q {Q.shape}, d {d.shape}, e {e.shape}")
    if m == 0:
        return arb(0)
    if not symmetric and not np.array_equal(G, G.T, equal_nan=True):
        raise ValueError("tridiagonal_residual_norm_bound: G is not exactly symmetric")
    chunk = CHUNK if chunk is None else chunk
    chunked = m > 2 * chunk
    inner = _chunk_bounds(m, chunk) if chunked else [(0, m)]
    ad, ae = np.abs(d), np.abs(e)

    def middle(v: np.ndarray) -> np.ndarray:
        return tridiagonal_abs_matvec_upper(ad, ae, v)

    with np.errstate(over="ignore", invalid="ignore"):
        aQ = np.abs(Q) if absQ is None else absQ
        rowQ, rho_N = _abs_sandwich_rho(aQ, middle, absolute=True)
        # Y = fl(QT): y_il = fl(fl(fl(q_il d_l) + fl(q_{i,l−1} e_{l−1})) + fl(q_{i,l+1} e_l)), whole (in Q's memory
        # order: contiguous passes; per-block rows of an F-ordered Q were strided); V_J = (rows J of Y)ᵀ.
        Y = Q * d
        Y[:, 1:] += Q[:, :-1] * e
        Y[:, :-1] += Q[:, 1:] * e
        blocks = _symmetric_residual_blocks(G, Q, lambda j0, j1: Y[j0:j1].T, inner)
    if blocks is None:
        return arb.pos_inf()
    ss_final, ss_inter, n1_R, ninf_R = blocks
    with np.errstate(over="ignore", invalid="ignore"):
        # 3·max row sum (≥, one step up): the underflow constant of Lemma 3.4-T.
        maxrow3 = float(np.nextafter(3.0 * float(np.max(_inflate(rowQ, m))), np.inf))
    if not (rho_N.is_finite() and np.isfinite(maxrow3)):
        return arb.pos_inf()
    with working_precision():
        b = chunk if chunked else m
        return _residual_bound_finish(ss_final, ss_inter, n1_R, ninf_R, m * m, m, maxrow3,
                                      gamma(b + 3) * rho_N)


def tridiagonal_abs_matvec_upper(ad: np.ndarray, ae: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Floats ≥ |T|v entrywise for T = tridiag(e, d, e), given ``ad = |d|``, ``ae = |e|`` and a float v ≥ 0.

    Each entry is a rounded sum of ≤ 3 rounded nonnegative products, so
    ``_inflate(·, 3)`` bounds it (Lemma 2.2 with k = 3, any order; Lemma 3.4-T).

    Parameters
    ----------
    ad : (k,) float64 array
        ``|d|``, the absolute diagonal of T.
    ae : (k−1,) float64 array
        ``|e|``, the absolute off-diagonal of T.
    v : (k,) float64 array
        Nonnegative.

    Returns
    -------
    (k,) float64 array
        Floats ≥ (|T|v)ᵢ.

    Examples
    --------
    >>> u = tridiagonal_abs_matvec_upper(np.array([1.0, 2.0]), np.array([3.0]), np.array([1.0, 1.0]))
    >>> bool(np.all(u >= [4.0, 5.0])) and bool(np.all(u <= [4.0 + 1e-14, 5.0 + 1e-14]))
    True
    """
    t = ad * v
    t[:-1] += ae * v[1:]
    t[1:] += ae * v[:-1]
    return _inflate(t, 3)


def _abs_sandwich_rho(U: np.ndarray, middle, absolute: bool = False) -> tuple[np.ndarray, arb]:
    """Row sums of |U| and a ball bounding ρ(|U| M |U|ᵀ) for a nonnegative symmetric M given by ``middle``.

    ``middle(v)`` must return floats ≥ M v for float v ≥ 0 (M = |Λ| or |T|).
    First z₁ ≥ N𝟙 = |U|·middle(|U|ᵀ𝟙), then one Collatz–Wielandt step
    (:func:`_collatz_wielandt_step`); all chains upward (Lemma 2.2, monotonicity).
    ``absolute=True``: U is already |U| (one array for every product, no chunked copies).
    """
    m, r = U.shape
    if absolute:
        rowU = U.sum(axis=1)
        t = middle(_inflate(U.sum(axis=0), m))  # ≥ M|U|ᵀ𝟙
        z1 = _inflate(U @ t, r)  # ≥ N𝟙 (N = |U| M |U|ᵀ, symmetric)
        return rowU, _collatz_wielandt_step(U, middle, z1, absolute=True)
    cU = np.zeros(r)
    rowU = np.empty(m)
    for a, b in _row_chunks(m):
        aUc = np.abs(U[a:b])
        cU += aUc.sum(axis=0)
        rowU[a:b] = aUc.sum(axis=1)
    t = middle(_inflate(cU, m))  # ≥ M|U|ᵀ𝟙
    rowN = np.empty(m)  # ≥ N𝟙 for N = |U| M |U|ᵀ (after _inflate), N symmetric
    for a, b in _row_chunks(m):
        rowN[a:b] = np.abs(U[a:b]) @ t
    return rowU, _collatz_wielandt_step(U, middle, _inflate(rowN, r))


def _symmetric_residual_blocks(G: np.ndarray, U: np.ndarray, v_columns, inner: list[tuple[int, int]]
                               ) -> tuple[float, np.ndarray, float, float] | None:
    """The upper block triangle of ``R_c = fl(R_{c−1} − fl(U_c V_{J,c}))`` (Lemma 3.4's evaluation).

    ``v_columns(j0, j1)`` returns the r×w float block V_J. Returns
    ``(Σ_final, Σ_inter, n1, ninf)``: the float sums of squares of the symmetric
    completions R̃ (final) and R̃_c (c < q), and floats ≥ ‖R̃‖₁, ‖R̃‖_∞; None
    when some sum is not finite.
    """
    m = U.shape[0]
    q = len(inner)
    rowR = np.zeros(m)  # row sums of |R̃|, running over blocks (m terms per row)
    colR = np.zeros(m)  # column sums of |R̃|: they differ from the row sums in the diagonal blocks
    ss_inter = np.zeros(max(q - 1, 0))  # Σ (R̃_c)_ij², c < q
    ss_final = 0.0
    nb = symmetric_residual_block_columns(m)
    Pbuf, Rbuf = np.empty(m * nb), np.empty(m * nb)
    matmul, subtract = np.matmul, np.subtract  # positional out: the loop is per-call overhead bound at m ≤ 768
    for j0 in range(0, m, nb):
        j1 = min(j0 + nb, m)
        w = j1 - j0
        P = Pbuf[: j1 * w].reshape(j1, w)
        R = Rbuf[: j1 * w].reshape(j1, w)
        VJ = v_columns(j0, j1)  # r×w: the columns J of V
        # G[:J₁, J] — for an F-ordered G read as the transpose of G[J, :J₁] (the same entries: G is exactly
        # symmetric), a row-major view like P and R.
        GJ = G[j0:j1, :j1].T if G.flags.f_contiguous else G[:j1, j0:j1]
        UJ = U[:j1]
        diag, off = R[j0:].reshape(-1), (R[:j0].reshape(-1) if j0 else None)  # views of R, made once per block
        for c, (a, b) in enumerate(inner):
            matmul(UJ[:, a:b], VJ[a:b], P)
            subtract(GJ if c == 0 else R, P, R)
            if c < q - 1:
                ss_inter[c] += _sumsq_sym(diag, off)
        ss_final += _sumsq_sym(diag, off)
        aR = np.abs(R, out=P)
        rs = aR.sum(axis=1)
        rowR[:j1] += rs  # rows :J₁ of the computed block column
        colR[j0:j1] += aR.sum(axis=0)  # columns J: blocks (I, J), I ≤ J, as computed
        if j0:
            rowR[j0:j1] += aR[:j0].sum(axis=0)  # mirrored strictly-upper part: rows J
            colR[:j0] += rs[:j0]  # ... and its mirror's columns :J₀
    if not (np.isfinite(ss_final) and np.all(np.isfinite(ss_inter))):
        return None
    ninf_R = float(np.max(_inflate(rowR, m)))  # ≥ ‖R̃‖_∞
    n1_R = float(np.max(_inflate(colR, m)))  # ≥ ‖R̃‖₁ (R̃ is not symmetric inside diagonal blocks)
    return float(ss_final), ss_inter, n1_R, ninf_R


def _collatz_wielandt_step(U: np.ndarray, middle, z1: np.ndarray, absolute: bool = False) -> arb:
    """Ball whose upper end bounds ‖N‖₂ = ρ(N), N = |U| M |U|ᵀ (M ≥ 0 symmetric), given floats z1 ≥ N𝟙.

    ``middle(v)`` returns floats ≥ Mv for float v ≥ 0 (M = |Λ|: ``_inflate(d ⊙ v, 1)``;
    M = |T| tridiagonal: a 3-term chain, Lemma 3.4-T). Lemma G.2's argument
    (N symmetric nonnegative: ρ(N) ≤ maxᵢ (Nx)ᵢ/xᵢ for every x > 0) with x = 𝟙
    and x = z1 (> 0: `_inflate` adds a positive constant); z2 ≥ N·z1 by the chain
    ``_inflate(|U| middle(_inflate(|U|ᵀz1, m)), r)`` (Lemma 2.2 with monotonicity),
    over row chunks of U (``absolute=True``: U is already |U|, used whole). Each quotient is bounded by ``(fl(z2ᵢ/xᵢ) + η/2)/(1 − u)``;
    the smaller bound is returned (+∞ if neither is finite). Proof:
    proofs/enclosure.md §3, Lemma 3.4.
    """
    m, r = U.shape
    best = arb.pos_inf()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        if absolute:
            z2 = _inflate(U @ middle(_inflate(U.T @ z1, m)), r)  # ≥ N z1
        else:
            y = np.zeros(r)
            for a, b in _row_chunks(m):
                y += np.abs(U[a:b]).T @ z1[a:b]
            t2 = middle(_inflate(y, m))  # ≥ M|U|ᵀz1
            z2 = np.empty(m)
            for a, b in _row_chunks(m):
                z2[a:b] = np.abs(U[a:b]) @ t2
            z2 = _inflate(z2, r)  # ≥ N z1
        for r_ in (float(np.max(z1)), float(np.max(z2 / z1))):
            if np.isfinite(r_):
                with working_precision():
                    bound = (arb_from_float(r_) + arb(ETA)) / (1 - arb(_U))
                if bound.upper() < best.upper():
                    best = bound
    return best


def _sumsq_sym(diag: np.ndarray, off: np.ndarray | None) -> float:
    """``fl(Σ)`` of the squares of the symmetric completion's entries in one block column.

    The block column J holds the rows ``:J₁``: ``diag`` is its diagonal block
    (rows ``j0:``, flattened; each entry once), ``off`` its rows ``:j0``
    (flattened; None when j0 = 0), strictly-upper entries whose mirrors are not
    computed (counted twice: ``2·fl(s)`` is exact, and equals the float sum
    ``fl(s + s)`` of the two copies, so the total is one tree of squares).
    """
    s = float(diag @ diag)
    if off is not None:
        s += 2.0 * float(off @ off)
    return s
