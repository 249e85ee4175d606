"""Certified singular values from the Gram matrix (``mode="gram"``).

For a wide or tall W the full SVD *with vectors* (needed by Theorem R) costs
several values-only SVDs. This module certifies σ(W) from the small side's
Gram matrix instead: with W m×n, m ≤ n (else Wᵀ), G = W Wᵀ (m×m) has
eigenvalues σᵢ(W)², and one SYRK plus one m×m ``eigh`` are cheaper than a
values-only SVD of W (measured ≈ 0.65–0.8× for n = 4m, ``bench/bench_gram.py``).

Theorem G (proofs/enclosure-gram.md §1). Let Ĝ be any real m×m matrix,
U ∈ ℝ^{m×m}, λ ∈ ℝ^m, with ``‖UᵀU − I‖₂ ≤ α < 1``, ``‖Ĝ − WWᵀ‖₂ ≤ β`` and
``‖Ĝ − U diag(λ) Uᵀ‖₂ ≤ e``. With λ₍₁₎ ≥ … ≥ λ₍ₘ₎ the *signed* sorted λ, and
θ ranging over [1 − α, 1 + α],

    min_θ θλ₍ᵢ₎ − β − e ≤ σᵢ(W)² ≤ max_θ θλ₍ᵢ₎ + β + e .

Ĝ is ``fl(W Wᵀ)`` (β: a-priori rounding bound of the SYRK, Lemma G.1), U, λ
come from LAPACK ``syevd`` (α: Lemma 3.1 of proofs/enclosure.md; e: Lemma
3.2 with X = Y = U, s = λ).

Widths: the absolute error in σᵢ² is ≈ γ_n‖|W||W|ᵀ‖₂, so σᵢ's relative width
grows like n·u·(σ₁/σᵢ)²·(stable-rank-like factor); small singular values are
much wider than in fast mode, and σᵢ ≲ √(β + e) only gets a lower bound of 0.
Use ``fast``/``tight`` when small singular values matter.

Meaning of the :class:`~certbound.enclose.svd.SingularValueEnclosure` fields
in this mode (all scaled back to W's units): ``alpha`` bounds ‖UᵀU − I‖₂;
``beta`` bounds ‖Ĝ − WWᵀ‖₂ (or ‖Ĝ − WᵀW‖₂ for tall W) and ``residual``
bounds ‖Ĝ − U diag(λ) Uᵀ‖₂ — both in *squared* units of W.

>>> import numpy as np
>>> W = np.array([[3.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
>>> enc = enclose_singular_values_gram(W)
>>> enc.mode, [bool(lo <= t <= hi) for lo, hi, t in zip(enc.lower, enc.upper, [4, 3])]
('gram', [True, True])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
from flint import arb

from certbound.ball import arb_from_float, under_float_model, working_precision
from certbound.enclose import fperror
from certbound.enclose._input import BLOCK_ENTRIES
from certbound.enclose.svd import SingularValueEnclosure, enclose_singular_values

__all__ = [
    "abs_gram_norm_upper",
    "rounded_gram",
    "theorem_g_intervals",
    "certify_gram",
    "unscaled_gram_ok",
    "UNSCALED_EXPONENT_RANGE",
    "enclose_singular_values_gram",
]

#: Theorem G is applied to W itself, without the power-of-two scaled copy, when
#: its largest |entry| lies in [2^-E, 2^E) (:func:`unscaled_gram_ok`,
#: proofs/enclosure-gram.md §3).
UNSCALED_EXPONENT_RANGE = 256


def _row_blocks(rows: int, cols: int) -> list[tuple[int, int]]:
    """Row ranges of ≈ BLOCK_ENTRIES entries each (at least one row)."""
    step = max(1, BLOCK_ENTRIES // max(cols, 1))
    return [(i, min(i + step, rows)) for i in range(0, rows, step)]


def unscaled_gram_ok(W: np.ndarray) -> bool:
    """Whether Theorem G may run on W without scaling it first (a quality choice; any W is sound).

    True when ``2^-E ≤ max|w| < 2^E`` with E = :data:`UNSCALED_EXPONENT_RANGE`:
    then no Gram entry, eigenvalue or residual product can come near
    overflow, and the underflow terms (4nmη and the like) are below 2^-500
    relative to ‖W‖₂². Proof that the unscaled certificate is valid:
    proofs/enclosure-gram.md §3.

    >>> unscaled_gram_ok(np.array([[0.02, -1.5]])), unscaled_gram_ok(np.array([[1e-300]]))
    (True, False)
    """
    if W.size == 0:
        return False
    amax = max(float(W.max()), -float(W.min()))
    return 2.0**-UNSCALED_EXPONENT_RANGE <= amax < 2.0**UNSCALED_EXPONENT_RANGE


def abs_gram_norm_upper(Ws: np.ndarray, iterations: int = 1) -> arb:
    """Ball whose upper end bounds ``‖ |Ws| |Ws|ᵀ ‖₂`` (Ws: m×n float data).

    N = |Ws||Ws|ᵀ is symmetric and nonnegative, so ‖N‖₂ = ρ(N), and for every
    positive vector x, ``ρ(N) ≤ maxᵢ (Nx)ᵢ / xᵢ`` (Collatz–Wielandt). Starting
    from x = 𝟙 (which gives ‖N‖_∞, Lemma 2.4's bound) each iteration feeds the
    upward-rounded ``Nx`` back in as the next x (a power iteration); the
    numerators are upward bounds (Lemma 2.2, monotone chains) and each
    quotient is bounded by ``(fl(zᵢ/xᵢ) + η/2)/(1 − u)``. The smallest bound
    over the iterations is returned. Cost: 2·(iterations + 1) matrix–vector
    products with |Ws|. Proof: proofs/enclosure-gram.md §2, Lemma G.2.

    >>> W = np.array([[1.0, -1.0], [1.0, 1.0]])   # |W||W|ᵀ = 2·𝟙𝟙ᵀ, norm 4
    >>> b = abs_gram_norm_upper(W)
    >>> bool(4 <= b.upper() < 4 * (1 + 1e-14))
    True
    """
    m, n = Ws.shape
    if m == 0 or n == 0:
        return arb(0)
    x = np.ones(m)
    best = arb.pos_inf()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for _ in range(iterations + 1):
            # z ≥ |Ws|(|Ws|ᵀx) = Nx entrywise, z > 0 (the inflation adds c > 0).
            z = _abs_matvec_upper(Ws, _abs_rmatvec_upper(Ws, x))
            r = float(np.max(z / x))
            if np.isfinite(r):
                with working_precision():
                    bound = (arb_from_float(r) + arb(fperror.ETA)) / (1 - arb(fperror.UNIT_ROUNDOFF))
                if bound.upper() < best.upper():
                    best = bound
            if not np.all(np.isfinite(z)):
                break
            x = z  # positive floats: a valid next test vector
    return best


def _abs_matvec_upper(Ws: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``fperror.matvec_nonneg_upper(|Ws|, y)`` computed over row blocks (no |Ws| copy).

    Entry i is the bound of one dot product of length n whichever block holds
    row i, so the result is the same entrywise bound (Lemma 2.2 of
    proofs/enclosure.md; proofs/enclosure-gram.md §2, "Blockwise evaluation").
    """
    m, n = Ws.shape
    z = np.empty(m)
    for a, b in _row_blocks(m, n):
        z[a:b] = fperror.matvec_nonneg_upper(np.abs(Ws[a:b]), y)
    return z


def _abs_rmatvec_upper(Ws: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``fperror.matvec_nonneg_upper(|Ws|ᵀ, x)`` computed over column blocks (no |Ws| copy)."""
    m, n = Ws.shape
    y = np.empty(n)
    for a, b in _row_blocks(n, m):
        y[a:b] = fperror.matvec_nonneg_upper(np.abs(Ws[:, a:b]).T, x)
    return y


def rounded_gram(Ws: np.ndarray, extra_residual: arb | None = None) -> tuple[np.ndarray, arb]:
    """Float Gram matrix ``Ĝ = fl(Ws Wsᵀ)`` of a wide Ws and a bound β ≥ ‖Ĝ − WWᵀ‖₂.

    Here W = Ws + Δ is the matrix actually certified, with ``‖Δ‖₂ ≤
    extra_residual`` (the rounding of an inexact power-of-two scaling, 0 if
    None). If BLAS did not return an exactly symmetric Ĝ, its lower triangle
    is mirrored (each entry is still one rounded dot product of two rows).

    Soundness (proofs/enclosure-gram.md §2, Lemma G.1): entrywise
    ``|Ĝ − WsWsᵀ| ≤ γ_k|Ws||Ws|ᵀ + 4nη`` with k = n, or k = b + q when Ĝ is
    the running sum of q column-chunk SYRKs (Lemmas 2.1, 2.5 of
    proofs/enclosure.md), so ``‖Ĝ − WsWsᵀ‖₂ ≤ γ_k‖|Ws||Ws|ᵀ‖₂ + 4nmη`` (norm by
    :func:`abs_gram_norm_upper`); and ``‖WWᵀ − WsWsᵀ‖₂ ≤ 2‖Ws‖₂‖Δ‖₂ + ‖Δ‖₂²``.

    >>> G, beta = rounded_gram(np.array([[1.0, 2.0, 3.0]]))
    >>> G.tolist(), bool(beta.upper() < 1e-13)
    ([[14.0]], True)
    """
    m, n = Ws.shape
    k = fperror.chunked_gamma_length(n)
    with np.errstate(over="ignore", invalid="ignore"):
        if k == n:
            G = Ws @ Ws.T  # numpy dispatches this pattern to BLAS syrk (symmetric result)
        else:
            # Column chunks, running sum (Lemma 2.5): γ_{b+q} instead of γ_n.
            # One m×m chunk buffer is reused (np.matmul(…, out=) is the same SYRK).
            G = Gc = None
            for a, b in fperror._chunk_bounds(n):
                Wc = np.ascontiguousarray(Ws[:, a:b])
                if G is None:
                    G = Wc @ Wc.T
                    continue
                Gc = np.matmul(Wc, Wc.T, out=Gc)
                G += Gc
            del Gc
    # Mirror the strict lower triangle if BLAS did not return a symmetric Ĝ
    # (row by row, in place: no m×m temporaries).
    for i in range(1, m):
        if not np.array_equal(G[i, :i], G[:i, i]):
            G[:i, i] = G[i, :i]
    with working_precision():
        beta = fperror.gamma(k) * abs_gram_norm_upper(Ws) + 4 * n * m * arb(fperror.ETA)
        if extra_residual is not None and not extra_residual.upper() == 0:
            d = extra_residual.upper()
            beta = beta + 2 * fperror.norm2_upper(Ws) * d + d * d
    return G, beta


def theorem_g_intervals(
    lam: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem G: balls for σᵢ(W) from eigenvalue approximations λ of Ĝ ≈ WWᵀ.

    ``lam`` are the (signed) approximate eigenvalues; α, β, e as in the
    module docstring (upper ends are used). The balls are multiplied by
    ``2**scale_exponent`` (exact). Returns None if α is not certified < 1 or
    a bound is not finite. Proof: proofs/enclosure-gram.md §1.

    Each σᵢ² lies in [ℓᵢ, hᵢ] with ℓᵢ = θ₋λ₍ᵢ₎ − β − e, hᵢ = θ₊λ₍ᵢ₎ + β + e,
    where (θ₋, θ₊) = (1−α, 1+α) for λ₍ᵢ₎ ≥ 0 and (1+α, 1−α) for λ₍ᵢ₎ < 0;
    then σᵢ ∈ [√max(ℓᵢ, 0), √hᵢ], every operation in Arb.

    >>> [str(b) for b in theorem_g_intervals(np.array([4.0, -0.0]), arb(0), arb(0), arb(0))]
    ['2.00000000000000', '0']
    """
    with working_precision():
        a, b, ee = alpha.upper(), beta.upper(), e.upper()
        if not (a.is_finite() and b.is_finite() and ee.is_finite()):
            return None
        if not a < 1:
            return None
        c = b + ee  # the Weyl shift; rounding it up keeps it an upper bound
        c = c.upper()
        two = arb(2) ** scale_exponent
        shrink, grow = 1 - a, 1 + a  # θ's range [1 − α, 1 + α]
        out = []
        for li in sorted((float(x) for x in lam), reverse=True):
            lv = arb_from_float(li)
            # θλ is smallest at θ = 1 − α for λ ≥ 0 and at θ = 1 + α for λ < 0.
            lo_factor, hi_factor = (shrink, grow) if li >= 0 else (grow, shrink)
            lo = (lv * lo_factor - c).lower()
            hi = (lv * hi_factor + c).upper()
            if not hi >= 0:
                # Impossible when the hypotheses hold (σᵢ² ≥ 0); refuse rather than guess.
                return None
            slo = lo.sqrt().lower() if lo > 0 else arb(0)
            shi = hi.sqrt().upper()
            out.append(slo.union(shi) * two)
        return out


def _float_eigh(G: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Float eigen-decomposition ``G ≈ U diag(λ) Uᵀ`` (LAPACK syevd); None on failure.

    Nothing about its accuracy is assumed: Theorem G only uses bounds
    computed afterwards from U and λ as exact data. scipy's ``syevd`` wrapper
    returns U in its one copy of G (numpy's ``eigh`` holds a further m×m
    array): workspace 2m² + 6m, i.e. three m×m arrays besides G, not four.
    """
    try:
        lam, U = scipy.linalg.eigh(G, driver="evd", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not (np.all(np.isfinite(lam)) and np.all(np.isfinite(U))):
        return None
    return lam, U


def certify_gram(
    Ws: np.ndarray, extra_residual: arb, scale_exponent: int
) -> tuple[list[arb], arb, arb, arb, str] | None:
    """Gram certificate for a (scaled or unscaled) matrix; the ``_certify_dense`` contract.

    Parameters
    ----------
    Ws : float64 2-D array (any shape): the power-of-two scaled matrix, or
        the matrix itself with ``extra_residual = 0``, ``scale_exponent = 0``
        (valid for any float data, proofs/enclosure-gram.md §3). Not modified.
    extra_residual : arb, bound on ‖Δ‖₂ where Ws + Δ is the exact scaled matrix.
    scale_exponent : the σ's are multiplied by ``2**scale_exponent``.

    Returns
    -------
    ``(sigma, alpha, beta, e, "gram")`` with ``sigma`` the k = min(m, n) balls
    (descending), α ≥ ‖UᵀU − I‖₂, β ≥ ‖Ĝ − Gram‖₂ and e ≥ ‖Ĝ − UΛUᵀ‖₂ (β, e
    scaled by ``4**scale_exponent``), or None when the certificate fails
    (LAPACK error, non-finite output, α ≥ 1): the caller falls back.
    Proof: proofs/enclosure-gram.md §1–§3.
    """
    if Ws.shape[0] > Ws.shape[1]:
        Ws = Ws.T  # σ(W) = σ(Wᵀ); work with the small side
    G, beta = rounded_gram(Ws, extra_residual)
    if not np.all(np.isfinite(G)):
        return None
    eig = _float_eigh(G)
    if eig is None:
        return None
    lam, U = eig
    e = fperror.residual_norm_bound(G, U, lam, U)  # Lemma 3.2, in column blocks (no m×m temporaries)
    del G  # Ĝ is not needed after e: α's products reuse its memory
    alpha = fperror.gram_deviation_bound(U)
    del U
    sig = theorem_g_intervals(lam, alpha, beta, e, scale_exponent)
    if sig is None:
        return None
    with working_precision():
        four = arb(2) ** (2 * scale_exponent)
        return sig, alpha, beta * four, e * four, "gram"


@under_float_model
def enclose_singular_values_gram(W: Any, exact_rank: bool = False) -> SingularValueEnclosure:
    """Certified singular values of the stored W through its Gram matrix.

    Parameters
    ----------
    W : array_like, 2-D, any supported dtype (converted to float64 exactly).
    exact_rank : also compute the exact rank over ℚ and set σᵢ = 0 for
        i > rank (as :func:`~certbound.enclose.svd.enclose_singular_values`).

    Returns
    -------
    SingularValueEnclosure
        ``mode == "gram"`` on success. If the Gram certificate fails, the
        fast-mode chain of ``enclose_singular_values`` is tried (its mode is
        reported), and at worst the trivial enclosure [0, ∞] with a
        ``CertificateWarning``.

    Notes
    -----
    Soundness: Theorem G and Lemmas G.1–G.3, proofs/enclosure-gram.md.
    Memory: W itself is certified when its range allows (no scaled copy);
    besides W, at most about four m×m arrays (m the small side) are alive
    (Ĝ, and syevd's copy and 2m² workspace).
    Cost: one SYRK (m²n flops), one m×m ``eigh`` with vectors, one m×m SYRK
    and one m×m GEMM, plus O(mn) passes. Measured with one BLAS thread
    (``bench/bench_gram.py``): ≈ 0.65× a values-only SVD at 768×3072 and
    ≈ 0.8× at 384×1536, ≈ 0.2–0.3× fast mode. Small σᵢ are enclosed less
    tightly than in fast mode (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.random.default_rng(0).standard_normal((4, 40))
    >>> enc = enclose_singular_values_gram(W)
    >>> s = np.linalg.svd(W, compute_uv=False)
    >>> bool(np.all(enc.lower <= s) and np.all(s <= enc.upper)), enc.rank
    (True, RankBounds(lower=4, upper=4))
    """
    # mode="gram" of the shared driver: same input checks, scaling, fallback
    # chain (Gram → fast → gesvd → arb → trivial) and exact-rank handling.
    return enclose_singular_values(W, mode="gram", exact_rank=exact_rank)
