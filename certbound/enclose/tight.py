"""Tight mode: near-exact residuals of the SVD certificate by error-free splitting.

Theorem R (``proofs/enclosure.md`` §1) needs upper bounds on ``‖XᵀX − I‖₂``,
``‖YᵀY − I‖₂`` and ``‖W − X diag(s) Yᵀ‖₂`` for the float matrices of a
computed SVD. Fast mode (:mod:`.fperror`) bounds the rounding error of one
BLAS product a priori (relative size ``γ_k ≈ k·2⁻⁵³`` of ``|X|ᵀ|X|``), which
dominates the tiny true residuals. Here the products are computed
*near-exactly* with ordinary float64 GEMM, following Ozaki, Ogita, Oishi and
Rump (Numer. Algorithms 59, 2012):

1. Each operand is split error-free, line by line (per row or per column,
   whichever is *not* summed over), into ``A = A₁ + A'`` where ``A₁``'s
   entries are integer multiples of a per-line power of two ``unit`` with at
   most ``b = ⌊(53 − log₂ k)/2⌋`` significant bits (k = inner dimension) and
   ``|A'| ≤ unit``; then every partial sum of ``A₁B₁ᵀ`` is an integer
   multiple of ``unit_A·unit_B`` below ``2⁵³·unit_A·unit_B``, so GEMM
   computes it **exactly**, in any order, blockwise or not, with or without
   FMA (Lemmas T2, T3).
2. The leading product is exact; the others have one operand of relative
   size 2⁻ᵇ and are computed by plain GEMM, whose a-priori error
   ``γ_k|A||B|`` is then ≈ 2⁻ᵇγ_k ≈ 10⁻¹⁸ of the data: about 1–2 % of the
   true residuals of a LAPACK SVD at 768×3072, far below tight mode's
   width target (Lemma T1; one split level suffices, §3–§4). For the Gram
   matrix ``2(XᵀX − I) = 2(X₁ᵀX₁ − I) + N + Nᵀ`` with ``N = X'ᵀ(X + X₁)``:
   one exact SYRK and one GEMM.
3. ``diag(s)`` is handled exactly: ``Y diag(s) = Z_hi + Z_lo`` by Dekker's
   TwoProduct (Ogita–Rump–Oishi 2005), entry by entry (Lemma T4).
4. The terms are added with plain float operations in decreasing order of
   size; each addition's rounding error is at most ``u`` times its computed
   result, which is already ≈ 2⁻²¹ of the data after the first step (Lemma T5).
5. The spectral norm of the small computed matrix ``F`` is bounded by repeated
   Gram squaring, ``‖F‖₂ ≤ ‖FFᵀ‖₂^{1/2} ≤ … ≤ ‖G_L‖_F^{1/2^L}``, each Gram
   product done in float with its a-priori error added (Lemma T6); this is
   within a factor ``rank^{1/2^{L+1}}`` (≤ 1.6 for L = 3) of ‖F‖₂, unlike the
   Frobenius norm's ``√rank``. The levels after the first large one are
   computed in binary32 (half the time) with binary32's error terms and the
   roundings added (Lemma T6′), so the residual can afford L = 4 (within
   0.2–1.5 % of ‖F‖₂ on SVD residuals).

The work is done in blocks of rows (about 2¹⁹ entries per buffer, reused),
because first-touch page faults of fresh large temporaries cost more than
the arithmetic on some virtual machines; blocking changes only the
summation order, which every lemma allows.

Every scalar step is done in Arb; floats only ever appear as exact data or as
values whose error is bounded in the proof. Floating-point model (proofs/
enclosure-tight.md §1): IEEE 754 binary64, round to nearest even, gradual
underflow, any summation order and blocking in BLAS, with or without FMA,
no Strassen-type or reduced-precision GEMM (OpenBLAS ``dgemm``/``dsyrk`` and
``ssyrk`` are classical); numpy element-wise operations and casts are single
correctly rounded operations (no contraction into FMA); the binary32 levels
of Lemma T6′ use the same model in binary32.

Inputs must be finite with ``max|entry| ≤ 2²⁵⁶`` (scale by a power of two
first, as :func:`certbound.enclose.svd.enclose_singular_values` does). Lines of
an operand whose splitting unit would fall below ``2⁻⁵³⁷`` (tiny entries) are
left in the float remainder, so products of units never underflow; their
underflow is covered by the ``η = 2⁻¹⁰⁷⁴`` slack of the a-priori bounds.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> W = rng.uniform(-1, 1, (30, 50))
>>> X, s, Yt = np.linalg.svd(W, full_matrices=False)
>>> alpha = gram_deviation_bound_tight(X)
>>> e = residual_norm_bound_tight(W, X, s, Yt.T)
>>> bool(alpha.upper() < 1e-13), bool(e.upper() < 1e-13)
(True, True)
>>> bool(gram_deviation_bound_tight(np.eye(3)[:, :2]).upper() < 1e-300)   # exactly orthonormal
True
"""

from __future__ import annotations

import numpy as np
from flint import arb

from certbound.ball import arb_from_float, working_precision
from certbound.enclose.fperror import ETA, UNIT_ROUNDOFF, gamma

__all__ = [
    "gram_deviation_bound_tight",
    "residual_norm_bound_tight",
    "spectral_norm_upper",
    "split_error_free",
    "bits_per_part",
    "MAX_ABS_ENTRY",
]

#: Largest entry magnitude accepted (keeps every intermediate far from overflow).
MAX_ABS_ENTRY = 2.0**256

# A part's unit is a power of two ≥ 2^_MIN_UNIT_EXP, so a product of two units
# is ≥ 2⁻¹⁰⁷⁴ and exact products of parts never underflow (Lemma T3).
_MIN_UNIT_EXP = -537

# Dekker's TwoProduct is applied only where both factors are ≥ 2^_TP_MIN_EXP in
# magnitude; then no intermediate of it is subnormal (Lemma T4).
_TP_MIN_EXP = -450
_VELTKAMP = 134217729.0  # 2²⁷ + 1

# Rows per block: about this many entries per block buffer.
_BLOCK_ENTRIES = 1 << 19

# Inner-dimension chunk of the residual's float GEMMs: each chunk's product is
# subtracted on its own, so its a-priori error has γ_c, not γ_r (§4).
_CHUNK = 256

_U = UNIT_ROUNDOFF


# --------------------------------------------------------------------------
# Arb helpers: rigorous upper bounds from float data — Lemma T1
# --------------------------------------------------------------------------


def _pow2(e: int) -> arb:
    """The exact ball 2^e (constructed from mantissa and exponent, no rounding)."""
    return arb((1, int(e)))


def _abs_max(A: np.ndarray) -> float:
    """max|A| without an |A| temporary (NaN if A has NaN)."""
    return float(max(np.max(A), -np.min(A)))


def _scale_pow2(A: np.ndarray, k: int, out: np.ndarray | None = None) -> np.ndarray:
    """``A·2^k`` by float multiplications with powers of two.

    Multiplying by a power of two only changes exponents: upward (k > 0,
    results ≤ 2 here) it is exact, also for subnormal inputs; downward each
    result is exact unless it is subnormal, then off by ≤ η/2 per step — at
    most two steps for |k| ≤ 2000, so ≤ η per entry in total (Lemma T1(c)).
    ``out`` may be A itself (in place).
    """
    out = np.multiply(A, 1.0, out=out)
    while k != 0:
        step = max(-1000, min(k, 1000))
        out *= 2.0**step
        k -= step
    return out


def _sumsq_upper(M: np.ndarray) -> arb:
    """Ball whose upper end bounds ``Σ m²`` over a float array (any layout, ≤ 2-D).

    ``ŝ = fl(Σ m²)`` (a classical dot product: any order, FMA or not) satisfies
    ``|ŝ − s| ≤ γ_N s + 2Nη`` (Lemma T1(a)), hence ``s ≤ (ŝ + 2Nη)/(1 − γ_N)``.
    If ``ŝ`` is not in ``[2⁻⁶⁰⁰, 2⁶⁰⁰]`` (tiny data whose squares may underflow,
    or overflow), M is first scaled by 2^k to ``max|M| ∈ [1, 2)`` so that the
    slack stays relatively negligible (upward exact; downward each entry
    moves by ≤ η, Lemma T1(c)); the result is the same bound for the scaled
    matrix, rescaled exactly.
    """
    N = M.size
    if N == 0:
        return arb(0)
    # einsum's own loop: unlike BLAS ddot it does not wake threads, which costs
    # milliseconds on a loaded machine.
    subs = "i,i->" if M.ndim == 1 else "ij,ij->"
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        s = float(np.einsum(subs, M, M))
    kexp = 0
    if not (2.0**-600 <= s <= 2.0**600):
        amax = _abs_max(M)
        if amax == 0.0:
            return arb(0)
        if not np.isfinite(amax):
            return arb.pos_inf()
        kexp = 1 - int(np.frexp(amax)[1])
        s = float(np.einsum(subs, *(2 * [_scale_pow2(M, kexp)])))  # ≤ 4N: no overflow
    with working_precision():
        ss = (arb_from_float(s) + 2 * N * arb(ETA)) / (1 - gamma(N))
        if kexp < 0:
            ss = (ss.sqrt() + arb(N).sqrt() * arb(ETA)) ** 2
        return ss * _pow2(-2 * kexp)


def _frobenius_upper(M: np.ndarray) -> arb:
    """Ball whose upper end bounds ``‖M‖_F`` of a float matrix (exact data)."""
    with working_precision():
        return _sumsq_upper(M).sqrt()


def _gemm_error(A_fro: arb, B_fro: arb, k: int, m: int, n: int) -> arb:
    """Bound on ``‖fl(AB) − AB‖₂`` for a float GEMM (A m×k, B k×n).

    Entrywise ``|fl(AB) − AB| ≤ γ_k|A||B| + 2kη`` (Lemma T1(a)) and
    ``‖|A||B|‖₂ ≤ ‖A‖_F‖B‖_F``, ``‖2kη·𝟙𝟙ᵀ‖₂ = 2kη√(mn)`` (Lemma T1(b)).
    """
    with working_precision():
        return gamma(k) * A_fro * B_fro + 2 * k * arb(ETA) * arb(m * n).sqrt()


def _sum_arb(values) -> arb:
    s = arb(0)
    for v in values:
        s = s + v
    return s


def _validate(A: object, name: str, ndim: int = 2) -> np.ndarray:
    a = np.asarray(A)
    if a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if a.dtype.kind not in "fiub":
        raise ValueError(f"{name}: unsupported dtype {a.dtype}")
    f = np.asarray(a, dtype=np.float64)  # exact widening; layout kept (no transpose copy)
    if a.dtype.kind in "iu" and not np.array_equal(f.astype(a.dtype), a):
        raise ValueError(f"{name}: integer entries not exactly representable in float64")
    if f.size:
        amax = _abs_max(f)
        if not np.isfinite(amax):
            raise ValueError(f"{name}: NaN or Inf entries; only finite matrices can be certified")
        if amax > MAX_ABS_ENTRY:
            raise ValueError(
                f"{name}: entries exceed 2^256 in magnitude; scale the inputs by a power of two first"
            )
    return f


def _row_blocks(n: int, width: int):
    """Slices covering range(n) in blocks of about _BLOCK_ENTRIES / width rows."""
    step = max(1, min(n, _BLOCK_ENTRIES // max(width, 1)))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


# --------------------------------------------------------------------------
# Error-free splitting (Ozaki et al. 2012) — Lemma T2, Corollary T2′
# --------------------------------------------------------------------------


def bits_per_part(k: int) -> int:
    """Largest b with ``k·2^{2b} ≤ 2⁵³``: parts of ≤ b bits multiply exactly.

    With inner dimension k, a sum of k products of two b-bit parts (relative
    to per-line units) stays below ``2⁵³`` units, hence exact (Lemma T3).

    Parameters
    ----------
    k : int
        The product's inner dimension, ``1 ≤ k ≤ 2⁵¹``.

    Returns
    -------
    int
        ``b`` (at most 26).

    Examples
    --------
    >>> bits_per_part(768), bits_per_part(3072), bits_per_part(1)
    (21, 20, 26)
    """
    if k < 1 or k > 2**51:
        raise ValueError(f"inner dimension {k} outside [1, 2^51]")
    b = 26
    while k << (2 * b) > 1 << 53:
        b -= 1
    return b


class _SplitParams:
    """Per-line shifts σ₁ = 2^{μ+53−b}, σ₂ = 2^{μ−b+53−b} and masks (Corollary T2′).

    ``amax`` holds each line's maximum |entry| (keepdims shape, so it
    broadcasts against the matrix); ``μ`` comes from ``frexp`` (``amax < 2^μ``).
    Level 1 is skipped (part 0, remainder = line) on zero lines and where the
    unit ``2^{μ−b}`` would be < 2^-537; level 2 (unit ``2^{μ−2b}``) likewise.
    """

    def __init__(self, amax: np.ndarray, b: int) -> None:
        _, mu = np.frexp(amax)
        ok1 = (amax > 0) & (mu - b >= _MIN_UNIT_EXP)
        ok2 = ok1 & (mu - 2 * b >= _MIN_UNIT_EXP)
        self.sigma1 = np.ldexp(1.0, np.where(ok1, mu + 53 - b, 0))
        self.sigma2 = np.ldexp(1.0, np.where(ok2, mu + 53 - 2 * b, 0))
        self.bad1 = None if ok1.all() else ~ok1
        self.bad2 = None if ok2.all() else ~ok2


def _extract(A: np.ndarray, sigma: np.ndarray, bad: np.ndarray | None, P: np.ndarray, R: np.ndarray) -> None:
    """ExtractScalar on every line: ``P = fl(fl(σ + A) − σ)``, ``R = fl(A − P)``.

    Lemma T2: ``A = P + R`` exactly; P is a multiple of the line's unit with
    ≤ b bits; ``|R| ≤ unit``. Masked lines (``bad``) get ``P = 0``, ``R = A``.
    σ is explicitly broadcast: numpy's implicit broadcasting of ``+`` against
    a column is several times slower.
    """
    s = np.broadcast_to(sigma, A.shape)
    np.add(A, s, out=P)
    np.subtract(P, s, out=P)  # two separately rounded numpy operations
    if bad is not None:
        np.multiply(P, np.broadcast_to(~bad, A.shape), out=P)  # exact: × 1 or × 0
    np.subtract(A, P, out=R)  # exact (Lemma T2 (b)); equal to A on masked lines


def split_error_free(
    A: np.ndarray, axis: int, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split ``A = A₁ + A₂ + T`` exactly into two b-bit parts and a remainder.

    What it is for: exact matrix products from ordinary float64 GEMM. If A
    and B are split along their inner dimension k, every product of parts,
    e.g. ``A₁ @ B₁.T``, is computed **exactly** by any classical GEMM (any
    order or blocking, FMA or not; Lemma T3), so ``A Bᵀ`` is a short sum of
    exact products plus small, bounded ones (the Ozaki–Ogita–Oishi–Rump
    scheme). Tight mode itself needs only the first level and calls the
    in-place ``_extract`` on reused buffers; this function is the tested
    entry point to the splitting (Lemma T2 / Corollary T2′, machine-checked
    in ``proofs/coq/Tight.v``), for callers building their own near-exact
    products or exact references.

    Guarantees (Corollary T2′), with ``max|line| < 2^μ``: the split is exact;
    ``A₁`` is a multiple of ``2^{μ−b}`` with ``|A₁| ≤ 2^μ``, ``A₂`` a multiple
    of ``2^{μ−2b}`` with ``|A₂| ≤ 2^{μ−b}``, both units ≥ 2⁻⁵³⁷ (else the
    part is 0 on that line); ``|A'| ≤ 2^{μ−b}``, ``|T| ≤ 2^{μ−2b}`` where split.

    Parameters
    ----------
    A : array_like, 2-D
        Finite float64 entries with ``max|A| ≤ 2²⁵⁶`` (:data:`MAX_ABS_ENTRY`).
    axis : int
        The axis along which each line's maximum is taken — the axis summed
        over in the product (``axis=1`` for the rows of a left factor A in
        ``A @ Bᵀ``, ``axis=0`` for the columns of X in ``XᵀX``).
    k : int
        The product's inner dimension; the parts have ``b = bits_per_part(k)`` bits.

    Returns
    -------
    tuple of four ndarrays
        ``(A₁, A₂, T, A')`` with ``A = A₁ + A₂ + T`` and ``A' = A − A₁ = A₂ + T``
        (the first remainder), each of A's shape.

    Examples
    --------
    >>> A = np.array([[1/3, -2/7, 0.1]])
    >>> A1, A2, T, Ap = split_error_free(A, axis=1, k=1000)
    >>> bool(np.all(A1 + A2 + T == A)), bool(np.all(np.abs(T) <= 2.0**-42))
    (True, True)

    The product of the leading parts is exact in float64 (checked in rationals):

    >>> from fractions import Fraction
    >>> rng = np.random.default_rng(0)
    >>> A, B = rng.standard_normal((3, 500)), rng.standard_normal((4, 500))
    >>> A1, B1 = split_error_free(A, axis=1, k=500)[0], split_error_free(B, axis=1, k=500)[0]
    >>> P = A1 @ B1.T
    >>> all(Fraction(P[i, j]) == sum(Fraction(a) * Fraction(b) for a, b in zip(A1[i], B1[j]))
    ...     for i in range(3) for j in range(4))
    True
    """
    A = np.asarray(A, dtype=np.float64)
    b = bits_per_part(k)
    amax = np.maximum(np.max(A, axis=axis, keepdims=True), -np.min(A, axis=axis, keepdims=True))
    sp = _SplitParams(amax, b)
    A1, Ap, A2, T = (np.empty_like(A) for _ in range(4))
    _extract(A, sp.sigma1, sp.bad1, A1, Ap)
    _extract(Ap, sp.sigma2, sp.bad2, A2, T)
    return A1, A2, T, Ap


# --------------------------------------------------------------------------
# Spectral norm of a computed float matrix — Lemma T6
# --------------------------------------------------------------------------


def spectral_norm_upper(F: np.ndarray, levels: int = 3, single_from: int | None = None) -> arb:
    """Ball whose upper end bounds ``‖F‖₂`` for a float matrix F (exact data).

    Gram squaring (proofs/enclosure-tight.md, Lemma T6): with ``G₀ = F``
    (oriented so the Gram matrix is the smaller one), ``G₁ = fl(G₀G₀ᵀ)`` and
    ``G_{j+1} = fl(G_jᵀG_j)``,

        ‖G_j‖₂² ≤ ‖G_{j+1}‖₂ + γ_k‖G_j‖_F² + 2k·a·η,     ‖G_L‖₂ ≤ ‖G_L‖_F,

    where k is the product's inner dimension and a its output size; every
    level may also stop at ``‖G_j‖₂ ≤ ‖G_j‖_F``. F is first scaled by an exact
    power of two to ``max|F| ∈ [1, 2)`` (scaling down rounds at most ``η``
    per entry, added as slack). The result is at most about
    ``rank^{1/2^{L+1}}·‖F‖₂`` (≤ 1.6‖F‖₂ for rank ≤ 2000, L = 3).

    With ``single_from = j₀`` the Gram products of levels ``j ≥ j₀`` are done
    in binary32 (twice as fast), each input rounded to binary32 after an
    exact power-of-two scaling, with binary32's a-priori errors and the
    rounding added (Lemma T6′); if these terms loosen the result by more
    than 2⁻⁷, the all-binary64 chain is computed as well and the smaller
    bound returned.

    Parameters
    ----------
    F : array_like, 2-D
        The float matrix (its entries are the exact data).
    levels : int
        The number L ≥ 0 of Gram squarings (0: the Frobenius norm).
    single_from : int, optional
        The first level computed in binary32 (Lemma T6′); ``None``: all in binary64.

    Returns
    -------
    flint.arb
        A ball whose upper end is a rigorous upper bound on ``‖F‖₂``.

    Examples
    --------
    >>> float(spectral_norm_upper(np.diag([3.0, 4.0])).upper()) >= 4.0
    True
    >>> abs(float(spectral_norm_upper(np.ones((5, 7))).upper()) - 35**0.5) < 1e-9
    True
    >>> 4.0 <= float(spectral_norm_upper(np.diag([3.0, 4.0]), 4, single_from=0).upper()) < 4.01
    True
    """
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2:
        raise ValueError(f"spectral_norm_upper: expected a 2-D matrix, got shape {F.shape}")
    if levels < 0 or (single_from is not None and single_from < 0):
        raise ValueError(f"spectral_norm_upper: levels={levels}, single_from={single_from} must be >= 0")
    return _spectral_norm_upper(F, levels, overwrite=False, single_from=single_from)


# binary32: unit roundoff and smallest subnormal (Lemma T6′).
_U32 = 2.0**-24
_ETA32 = 2.0**-149
# A binary32 level is used only if its inner dimension k has k·u₃₂ ≤ 2⁻⁸.
_MAX_K32 = 1 << 16
# Loosening by the binary32 terms above which the binary64 chain is also computed.
_LOOSE32 = 2.0**-7
# Lemma T6′ settings of the two theorems: Gram squaring levels, first binary32 level.
# ‖D̂‖ (r×r): all levels in binary32; R̂ (m×n): the first (m×m×n) level in binary64,
# where binary32's γ_n‖R̂‖_F² would cost about 1 % at n = 3072.
_GRAM_LEVELS, _GRAM_SINGLE_FROM = 3, 0
_RES_LEVELS, _RES_SINGLE_FROM = 4, 1


def _gamma32(k: int) -> arb:
    """Ball containing ``γ_k = k·u/(1 − k·u)`` for binary32 (u = 2⁻²⁴)."""
    with working_precision():
        ku = arb(k) * _pow2(-24)
        return ku / (1 - ku)


def _fro_of(A: np.ndarray) -> arb:
    """``‖A‖_F`` upper bound; binary32 data is widened exactly to binary64 first."""
    return _frobenius_upper(A if A.dtype == np.float64 else A.astype(np.float64))


def _to_single(C: np.ndarray, fro_C: arb) -> tuple[np.ndarray, int, arb]:
    """``A = fl₃₂(fl₆₄(2^κ C))`` with ``max|2^κ C| ∈ [1, 2)``, and ``d ≥ ‖A − 2^κ C‖_F``.

    For binary64 C: per entry ``|A − 2^κ c| ≤ η₆₄ + u₃₂(2^κ|c| + η₆₄) + η₃₂/2 ≤
    u₃₂2^κ|c| + η₃₂`` (Lemma T1(c) for the scaling, one rounding to binary32),
    so ``d = u₃₂2^κ‖C‖_F + √N·η₃₂`` (Lemma T6′(b)).
    """
    kappa = 1 - int(np.frexp(_abs_max(C))[1])
    A = _scale_pow2(C, kappa).astype(np.float32)  # round to nearest (IEEE conversion)
    with working_precision():
        d = _U32 * fro_C * _pow2(kappa) + arb(C.size).sqrt() * arb(_ETA32)
    return A, kappa, d


def _gram_chain(
    Fs: np.ndarray | None, levels: int, single_from: int | None, first: tuple | None = None
) -> tuple[arb, arb]:
    """Lemma T6/T6′ on ``Fs`` (p×q, p ≤ q): (bound on ‖Fs‖₂, the same without error terms).

    Level j has input ``A_j`` and output ``C_j = fl(A_jA_jᵀ)`` (j = 0) or
    ``fl(A_jᵀA_j)``. ``A₀ = Fs``; the next input is ``C_j`` itself after a
    binary64 level, and ``2^κC_j`` rounded to binary32 before (and after)
    a binary32 level, with ``‖C_j‖₂ ≤ 2^{−κ}(‖A_{j+1}‖₂ + d)``. With
    ``first = (‖A₀‖_F, err₀, C₀)`` level 0 was done by the caller (``Fs`` is
    not needed; C₀ symmetric, finite, not modified) and the chain starts at 1.
    """
    steps = []  # per level j: (κ_j, d_j, ‖A_j‖_F, err_j or None on overflow, ‖C_j‖_F)
    A, fro_A, kappa, d, j0 = Fs, None, 0, arb(0), 0
    if first is not None:
        fro_A0, err0, A = first
        fro_A = _fro_of(A)
        steps.append((0, arb(0), fro_A0, err0, fro_A))
        j0 = 1
    p, q = A.shape
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for j in range(j0, levels):
            inner = q if j == 0 else p
            single = single_from is not None and j >= single_from and inner <= _MAX_K32
            if single and A.dtype == np.float64:
                fro_src = _fro_of(A) if fro_A is None else fro_A
                A, kappa, d = _to_single(A, fro_src)
                with working_precision():
                    fro_A = fro_src * _pow2(kappa) + d  # ‖A‖_F ≤ ‖2^κ·source‖_F + d
            if fro_A is None:
                fro_A = _fro_of(A)
            # numpy uses BLAS syrk for these patterns: a classical product.
            C = A @ A.T if j == 0 else A.T @ A
            cmax = _abs_max(C)
            if not np.isfinite(cmax):
                if not steps:
                    steps.append((kappa, d, fro_A, None, None))
                break
            with working_precision():
                if C.dtype == np.float32:
                    err = _gamma32(inner) * fro_A**2 + 2 * inner * p * arb(_ETA32)
                else:
                    err = gamma(inner) * fro_A**2 + 2 * inner * p * arb(ETA)
            fro_C = _fro_of(C)
            steps.append((kappa, d, fro_A, err, fro_C))
            kappa, d, fro_A, A = 0, arb(0), fro_C, C
            if C.dtype == np.float32 and j + 1 < levels and cmax > 0:
                # Stay in binary32, rescaled by an exact power of two to max ∈ [1, 2):
                # exact unless a result is subnormal, then off by ≤ η₃₂/2 (Lemma T6′(b)).
                kappa = 1 - int(np.frexp(cmax)[1])
                if -126 <= kappa <= 126:
                    np.multiply(C, np.float32(2.0**kappa), out=C)
                    with working_precision():
                        d = arb(C.size).sqrt() * arb(_ETA32) / 2
                        fro_A = fro_C * _pow2(kappa) + d
                else:
                    kappa = 0
    if not steps:  # levels = 0
        fro = _fro_of(Fs)
        return fro, fro
    with working_precision():
        # Unwind (Lemma T6′(c)): c = bound on ‖C_j‖₂, starting from ‖C_{L−1}‖_F;
        # a_j = min(‖A_j‖_F, √(c_j + err_j)); c_{j−1} = min(‖C_{j−1}‖_F, 2^{−κ_j}(a_j + d_j)).
        c = c0 = steps[-1][4]
        for j in range(len(steps) - 1, -1, -1):
            kappa, d, fro_A, err, _ = steps[j]
            if err is None:  # the level's product overflowed
                a = a0 = fro_A
            else:
                via = (c + err).sqrt()
                a = via if via.upper() < fro_A.upper() else fro_A
                a0 = c0.sqrt()
            c, c0 = (a + d) * _pow2(-kappa), a0 * _pow2(-kappa)
            if j > 0 and steps[j - 1][4].upper() < c.upper():
                c = steps[j - 1][4]
        return c, c0


def _chain_bound(Fs: np.ndarray | None, levels: int, single_from: int | None, first: tuple | None = None) -> arb:
    """:func:`_gram_chain`'s bound; also the all-binary64 chain if binary32 loosened it by > 2⁻⁷ (Lemma T6′)."""
    bound, ideal = _gram_chain(Fs, levels, single_from, first)
    if single_from is not None and bound.upper() > ideal.upper() * (1 + _LOOSE32):
        bound64, _ = _gram_chain(Fs, levels, None, first)
        if bound64.upper() < bound.upper():
            bound = bound64
    return bound


def _spectral_norm_upper(
    F: np.ndarray, levels: int = 3, overwrite: bool = False, single_from: int | None = None
) -> arb:
    """:func:`spectral_norm_upper`; with ``overwrite=True`` F is scaled in place."""
    if F.size == 0:
        return arb(0)
    amax = _abs_max(F)
    if not np.isfinite(amax):
        return arb.pos_inf()
    if amax == 0.0:
        return arb(0)
    kexp = 1 - int(np.frexp(amax)[1])  # max|F·2^kexp| ∈ [1, 2)
    Fs = _scale_pow2(F, kexp, out=F if overwrite else None)
    if Fs.shape[0] > Fs.shape[1]:
        Fs = Fs.T
    bound = _chain_bound(Fs, levels, single_from)
    with working_precision():
        # Scaling up is exact; scaling down may round subnormal results by ≤ η.
        slack = arb(0) if kexp >= 0 else arb(F.size).sqrt() * arb(ETA)
        return (bound + slack) * _pow2(-kexp)


# --------------------------------------------------------------------------
# ‖XᵀX − I‖₂ — proofs/enclosure-tight.md §3
# --------------------------------------------------------------------------


def _syrk_accumulate(A: np.ndarray, C: np.ndarray) -> None:
    """Upper triangle of ``C += AᵀA`` by BLAS dsyrk, in place (C Fortran-ordered)."""
    from scipy.linalg.blas import dsyrk

    # A (h×r, C-ordered) is the Fortran-ordered r×h matrix Aᵀ: no copy.
    out = dsyrk(1.0, A.T, beta=1.0, c=C, trans=0, lower=0, overwrite_c=1)
    if out is not C:  # scipy copied (unexpected layout): keep the result
        C[...] = out


def _syrk_rows_accumulate(A: np.ndarray, C: np.ndarray) -> None:
    """Upper triangle of ``C += AAᵀ`` by BLAS dsyrk, in place (A C-contiguous, C Fortran-ordered)."""
    from scipy.linalg.blas import dsyrk

    # A (m×h, C-ordered) is the Fortran-ordered h×m matrix Aᵀ: no copy; trans=1 gives (Aᵀ)ᵀAᵀ.
    out = dsyrk(1.0, A.T, beta=1.0, c=C, trans=1, lower=0, overwrite_c=1)
    if out is not C:  # scipy copied (unexpected layout): keep the result
        C[...] = out


def _symmetrize_upper(C: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle is that of C (exact: copies and zeros added)."""
    U = np.triu(C)
    U += np.triu(C, 1).T
    return U


def gram_deviation_bound_tight(X: np.ndarray) -> arb:
    """Rigorous upper bound on ``‖XᵀX − I‖₂`` for a float64 m×r matrix X.

    Returns a ball whose upper end ``B`` is the bound (use ``.upper()``; the
    ball is a narrow enclosure of the computed bound, not of the norm).

    Method (proofs/enclosure-tight.md §3, Theorem T-Gram): split X once per
    column (``X = X₁ + X'``, Lemma T2, inner dimension m) and use the exact
    identity ``2(XᵀX − I) = 2(X₁ᵀX₁ − I) + N + Nᵀ`` with
    ``N = X'ᵀ(X + X₁)``. ``X₁ᵀX₁`` is an exact SYRK (Lemma T3, accumulated
    over row blocks, still exact); ``N`` one plain GEMM of relative size
    2⁻ᵇ (per row block of h rows), whose a-priori error is ≈ 2⁻ᵇγ_h
    relative. The sum ``D̂`` is formed
    with float additions (each off by ≤ u·|result|, Lemma T5); then
    ``‖XᵀX − I‖₂ ≤ (‖D̂‖₂ + u·Σ‖partial sums‖_F)/2 + (GEMM error)`` with
    ``‖D̂‖₂`` from :func:`spectral_norm_upper`.

    Parameters
    ----------
    X : array_like, 2-D
        The m×r float matrix (finite, ``max|X| ≤ 2²⁵⁶``; float32 etc. widen exactly).

    Returns
    -------
    flint.arb
        A ball whose upper end bounds ``‖XᵀX − I‖₂``.

    Examples
    --------
    >>> bool(gram_deviation_bound_tight(np.array([[1.0], [1.0]])).upper() >= 1)
    True
    """
    X = _validate(X, "X")
    m, r = X.shape
    if r == 0:
        return arb(0)
    if m == 0:
        return arb(1)  # XᵀX − I = −I_r
    b = bits_per_part(m)
    # Lines are columns (the inner index is the row): global column maxima.
    sp = _SplitParams(np.maximum(np.max(X, axis=0, keepdims=True), -np.min(X, axis=0, keepdims=True)), b)
    # P₁₁ is symmetric: BLAS syrk accumulates its upper triangle in place
    # (C := AᵀA + C, a classical evaluation: Lemma T3 applies).
    P11 = np.zeros((r, r), order="F")
    N, tmp = np.zeros((r, r)), np.empty((r, r))
    blocks = _row_blocks(m, r)
    nb = blocks[0].stop - blocks[0].start
    B1, Bp, BH = (np.empty((nb, r)) for _ in range(3))
    ss_Xp, ss_H, blk_err, fro_N = [], [], [], []
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for J in blocks:
            h = J.stop - J.start
            X1, Xp, H = B1[:h], Bp[:h], BH[:h]
            XJ = X[J]
            _extract(XJ, sp.sigma1, sp.bad1, X1, Xp)
            # Exact block products accumulate exactly (Lemma T3: every partial
            # sum over any subset of rows is representable).
            _syrk_accumulate(X1, P11)
            np.add(XJ, X1, out=H)  # Ĥ = fl(X + X₁): off by ≤ u|Ĥ|
            # Float block product (inner dimension h: γ_h, not γ_m) added into N̂;
            # each addition after the first is off by ≤ u|N̂| (Lemma T5).
            np.matmul(Xp.T, H, out=tmp)
            N += tmp
            ss_Xp.append(_sumsq_upper(Xp))
            ss_H.append(_sumsq_upper(H))
            with working_precision():
                blk_err.append(
                    gamma(h) * (ss_Xp[-1] * ss_H[-1]).sqrt() + 2 * h * arb(ETA) * r
                )
            if len(blk_err) > 1:
                fro_N.append(_frobenius_upper(N))
        del B1, Bp, BH
        # Ŝ₀ = 2P₁₁ − 2I from the upper triangle: P₁₁ + P₁₁ᵀ has the
        # off-diagonal p_ij and the diagonal 2p_ii (adding zeros, doubling:
        # exact); doubling again is exact, and the diagonal 2p_ii − 2 is one
        # rounded subtraction.
        S = np.add(P11, P11.T, out=tmp)
        d = np.diag_indices(r)
        diag = 2.0 * P11[d]
        S *= 2.0
        S[d] = diag - 2.0
        del P11
        fro_partials = [_frobenius_upper(S)]
        S += N
        fro_partials.append(_frobenius_upper(S))
        S += N.T
        fro_partials.append(_frobenius_upper(S))
        del N
    with working_precision():
        add_err = _U * _sum_arb(fro_partials)
        fXp, fH = (_sum_arb(ss).sqrt() for ss in (ss_Xp, ss_H))
        # N − N̂ = (X'ᵀĤ − N̂) + X'ᵀ(X + X₁ − Ĥ); each enters 2(XᵀX − I) twice.
        # X'ᵀĤ − N̂: the block products' errors (Lemma T1(b) with inner dimension h)
        # and the roundings of the accumulation (Lemma T5).
        n_err = _sum_arb(blk_err) + _U * _sum_arb(fro_N) + _U * fXp * fH
        norm = _spectral_norm_upper(S, _GRAM_LEVELS, overwrite=True, single_from=_GRAM_SINGLE_FROM)
        return (norm + add_err) / 2 + n_err


# --------------------------------------------------------------------------
# ‖W − X diag(s) Yᵀ‖₂ — proofs/enclosure-tight.md §4
# --------------------------------------------------------------------------


def _two_product(
    a: np.ndarray, b: np.ndarray, p: np.ndarray, e: np.ndarray, w1: np.ndarray, w2: np.ndarray, w3: np.ndarray
) -> np.ndarray | None:
    """Dekker's TwoProduct of a (h×r) by a row b (r,) into ``p``, ``e``: ``a·b = p + e``.

    Ogita–Rump–Oishi (2005), Algorithm 3.3 with Veltkamp's splitting; exact
    when no intermediate underflows or overflows, which holds where both
    factors are 0 or ≥ 2^{-450} in magnitude and ≤ 2^{256} (Lemma T4).
    Elsewhere ``e`` is set to 0 and the entry is reported in the returned
    boolean mask (None if there is none); the caller bounds
    ``|a·b − p| ≤ u|p| + η/2`` there. ``w1, w2, w3`` are scratch buffers.
    """
    tiny = 2.0**_TP_MIN_EXP
    c = b * _VELTKAMP
    b1 = c - (c - b)
    b2 = b - b1
    bad_b = (b != 0) & (np.abs(b) < tiny)
    # Explicit broadcasting: numpy's implicit row broadcasting is slower here.
    B, B1, B2 = (np.broadcast_to(v, a.shape) for v in (b, b1, b2))
    np.multiply(a, B, out=p)
    # Veltkamp's split of a: a = a1 + a2 (26 + 26 bits).
    a1 = np.multiply(a, _VELTKAMP, out=w1)
    a2 = np.subtract(a1, a, out=w2)
    np.subtract(a1, a2, out=a1)  # a1 = c − (c − a)
    np.subtract(a, a1, out=a2)
    # e = a2·b2 − (((p − a1·b1) − a2·b1) − a1·b2)
    np.multiply(a1, B1, out=e)
    np.subtract(p, e, out=e)
    np.multiply(a2, B1, out=w3)
    e -= w3
    np.multiply(a1, B2, out=w3)
    e -= w3
    np.multiply(a2, B2, out=w3)
    np.subtract(w3, e, out=e)
    np.abs(a, out=w3)
    bad_a = (w3 < tiny) & (w3 > 0)
    if bad_b.any():
        bad_a |= np.broadcast_to(bad_b, a.shape) & (w3 > 0)
    if not bad_a.any():
        return None
    e[bad_a] = 0.0
    return bad_a


def residual_norm_bound_tight(W: np.ndarray, X: np.ndarray, s: np.ndarray, Y: np.ndarray) -> arb:
    """Rigorous upper bound on ``‖W − X diag(s) Yᵀ‖₂`` (W m×n, X m×r, s (r,), Y n×r).

    Returns a ball whose upper end is the bound (use ``.upper()``).

    Method (proofs/enclosure-tight.md §4, Theorem T-Res): W and s are first
    scaled by one exact power of two (up only) so that the larger of
    ``max|W|``, ``max|s|`` lies in [1, 2). ``Z = Y diag(s) = Z_hi + Z_lo``
    by TwoProduct; X and ``Z_hi`` are split once per row (inner dimension
    r): ``X = X₁ + X'``, ``Z_hi = Z₁ + Z'``, and with
    ``Z'' = fl(Z' + Z_lo) = Z' + Z_lo − δ``:

        X Zᵀ = X₁Z₁ᵀ                   (exact GEMM)
             + X₁Z''ᵀ + X'Z_hiᵀ          (float GEMMs, relative size 2⁻ᵇ)
             + X₁δᵀ + X'Z_loᵀ            (bounded a priori)

    ``R̂`` is ``W`` minus the three computed products, by float subtractions
    (column block by column block of W, i.e. row block by row block of Y;
    the problem is transposed first if m > n); ``‖R‖₂ ≤ ‖R̂‖₂ + (all error
    terms)`` with ``‖R̂‖₂`` from Lemma T6′, whose first level ``R̂R̂ᵀ`` (m×m)
    is accumulated block by block, so R̂ itself is never stored.

    Parameters
    ----------
    W : array_like, 2-D
        The m×n matrix (finite, ``max|W| ≤ 2²⁵⁶``).
    X : array_like, 2-D
        The m×r left factor.
    s : array_like, 1-D
        The r factors of the diagonal.
    Y : array_like, 2-D
        The n×r right factor (not transposed).

    Returns
    -------
    flint.arb
        A ball whose upper end bounds ``‖W − X diag(s) Yᵀ‖₂``.

    Examples
    --------
    >>> W = np.array([[2.0, 0.0], [0.0, 1.0]])
    >>> e = residual_norm_bound_tight(W, np.eye(2), np.array([2.0, 1.0 + 2**-40]), np.eye(2))
    >>> bool(2.0**-40 <= e.upper() <= 2.0**-40 * (1 + 1e-9))
    True
    """
    W = _validate(W, "W")
    X = _validate(X, "X")
    s = _validate(s, "s", ndim=1)
    Y = _validate(Y, "Y")
    m, n = W.shape
    r = s.shape[0]
    if X.shape != (m, r) or Y.shape != (n, r):
        raise ValueError(
            f"shape mismatch: W {W.shape}, X {X.shape}, s {s.shape}, Y {Y.shape}; "
            "expected X (m, r), s (r,), Y (n, r)"
        )
    if m == 0 or n == 0:
        return arb(0)
    if r == 0:
        return spectral_norm_upper(W)
    if m > n:
        # ‖R‖₂ = ‖Rᵀ‖₂ with Rᵀ = Wᵀ − Y diag(s) Xᵀ: block along the longer side, so
        # that the Gram matrix of Lemma T6′'s first level is the smaller one.
        W, X, Y = W.T, Y, X
        m, n = n, m
    # Exact upward scaling of W and s by 2^kexp: R scales by exactly 2^kexp.
    big = max(_abs_max(W), _abs_max(s))
    kexp = max(0, 1 - int(np.frexp(big)[1])) if big > 0 else 0
    if kexp:
        W = _scale_pow2(W, kexp)
        s = _scale_pow2(s, kexp)
    b = bits_per_part(r)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        X1, Xp = np.empty_like(X), np.empty_like(X)
        amax = np.maximum(np.max(X, axis=1, keepdims=True), -np.min(X, axis=1, keepdims=True))
        sx = _SplitParams(amax, b)
        _extract(X, sx.sigma1, sx.bad1, X1, Xp)
        nc = -(-r // _CHUNK)
        chunks = [slice(r * i // nc, r * (i + 1) // nc) for i in range(nc)]
        fro_X1c = [_frobenius_upper(X1[:, c]) for c in chunks]
        fro_Xpc = [_frobenius_upper(Xp[:, c]) for c in chunks]
        blocks = _row_blocks(n, max(r, m))
        nb = blocks[0].stop - blocks[0].start
        Zhi_, Zlo_, Z1_, Zpp_, w_ = (np.empty((nb, r)) for _ in range(5))
        S_, P_ = np.empty(m * nb), np.empty(m * nb)  # contiguous m×h views for every h
        # Lemma T6′, level 0 accumulated over the blocks: upper triangle of
        # C₀ = fl(Σ_J (2^κ R̂_J)(2^κ R̂_J)ᵀ), κ from the first nonzero block.
        C0 = np.zeros((m, m), order="F")
        kappa = None
        ss = {key: [] for key in ("S0", "S2", "Ssc", "Zlo", "inv")}
        ss_steps = []  # ‖Ŝ_k‖_F² of every subtraction after the first, per block (Lemma T5)
        ss_Zpp, ss_Zhi = [[] for _ in chunks], [[] for _ in chunks]
        n_invalid = 0
        for J in blocks:
            h = J.stop - J.start
            Zhi, Zlo, Z1, Zpp, w = (buf[:h] for buf in (Zhi_, Zlo_, Z1_, Zpp_, w_))
            SJ, prod = S_[: m * h].reshape(m, h), P_[: m * h].reshape(m, h)
            # Z1, Zpp serve as TwoProduct scratch before they hold parts.
            invalid = _two_product(Y[J], s, Zhi, Zlo, Z1, Zpp, w)
            if invalid is not None:
                n_invalid += int(np.count_nonzero(invalid))
                ss["inv"].append(_sumsq_upper(Zhi[invalid]))
            # Lines are rows of Z_hi: each lies inside the block.
            amax = np.maximum(np.max(Zhi, axis=1, keepdims=True), -np.min(Zhi, axis=1, keepdims=True))
            sz = _SplitParams(amax, b)
            _extract(Zhi, sz.sigma1, sz.bad1, Z1, Zpp)  # Zpp holds Z' = Z_hi − Z₁ here
            np.add(Zpp, Zlo, out=Zpp)  # Z'' = fl(Z' + Z_lo), |δ| ≤ u|Z''|
            np.matmul(X1, Z1.T, out=prod)  # exact (Lemma T3)
            np.subtract(W[:, J], prod, out=SJ)  # largest term first: the result is small
            ss["S0"].append(_sumsq_upper(SJ))
            for A_, B_, ssB in ((X1, Zpp, ss_Zpp), (Xp, Zhi, ss_Zhi)):
                for i, c in enumerate(chunks):
                    np.matmul(A_[:, c], B_[:, c].T, out=prod)  # plain GEMM, relative size 2⁻ᵇ
                    SJ -= prod
                    ss_steps.append(_sumsq_upper(SJ))
                    ssB[i].append(_sumsq_upper(B_[:, c]))
            ss["Zlo"].append(_sumsq_upper(Zlo))
            ss["S2"].append(ss_steps[-1])  # the block of the final Ŝ
            if kappa is None:
                bmax = _abs_max(SJ)
                if bmax > 0:
                    kappa = 1 - int(np.frexp(bmax)[1])  # this block's max·2^κ ∈ [1, 2)
            if kappa is not None:
                if kappa:
                    _scale_pow2(SJ, kappa, out=SJ)  # exact up; down ≤ η per entry (Lemma T1(c))
                ss["Ssc"].append(_sumsq_upper(SJ))
                _syrk_rows_accumulate(SJ, C0)
        del Zhi_, Zlo_, Z1_, Zpp_, w_, S_, P_
        if kappa is not None:
            C0 = _symmetrize_upper(C0)
    with working_precision():
        fro = {key: _sum_arb(v).sqrt() for key, v in ss.items()}
        # Lemma T5: the first subtraction, then the 2·nc chunk subtractions, each block's
        # k-th partial sum combined over the blocks (‖M‖_F² = Σ_J ‖M_J‖_F²).
        nsteps = 2 * len(chunks)
        add_err = _U * (
            fro["S0"] + _sum_arb(_sum_arb(ss_steps[k::nsteps]).sqrt() for k in range(nsteps))
        )
        fX1, fXp = _frobenius_upper(X1), _frobenius_upper(Xp)
        del X1, Xp
        fro["Zpp"] = _sum_arb(_sum_arb(v) for v in ss_Zpp).sqrt()
        fro["Zhi"] = _sum_arb(_sum_arb(v) for v in ss_Zhi).sqrt()
        # Lemma T1(b) per chunk c (inner dimension |c|): X₁_cZ''_cᵀ and X'_cZ_hi,cᵀ.
        gemm_err = _sum_arb(
            _gemm_error(fro_X1c[i], _sum_arb(ss_Zpp[i]).sqrt(), c.stop - c.start, m, n)
            + _gemm_error(fro_Xpc[i], _sum_arb(ss_Zhi[i]).sqrt(), c.stop - c.start, m, n)
            for i, c in enumerate(chunks)
        )
        # X₁δᵀ (|δ| ≤ u|Z''|), X'Z_loᵀ, and X·ΔZᵀ where |ΔZ| ≤ u|Z_hi| + η/2 on the
        # entries TwoProduct was not applied to (Lemma T4).
        apriori = _U * fX1 * fro["Zpp"] + fXp * fro["Zlo"]
        if n_invalid:
            dZ = _U * fro["inv"] + arb(n_invalid).sqrt() * arb(ETA) / 2
            apriori = apriori + _frobenius_upper(X) * dZ
        if kappa is None:  # R̂ = 0
            norm = arb(0)
        else:
            fro_sc = _sum_arb(ss["Ssc"]).sqrt()
            norm = fro["S2"]  # ‖R̂‖₂ ≤ ‖R̂‖_F, also if C₀ overflowed
            if np.isfinite(_abs_max(C0)) and fro_sc.is_finite():
                err0 = gamma(n) * fro_sc**2 + 2 * n * m * arb(ETA)
                chain = _chain_bound(None, _RES_LEVELS, _RES_SINGLE_FROM, first=(fro_sc, err0, C0))
                # Scaling up was exact; scaling down rounded subnormal results by ≤ η each.
                slack = arb(0) if kappa >= 0 else arb(m * n).sqrt() * arb(ETA)
                via_chain = (chain + slack) * _pow2(-kappa)
                if via_chain.upper() < norm.upper():
                    norm = via_chain
        bound = norm + add_err + gemm_err + apriori
        return bound * _pow2(-kexp)
