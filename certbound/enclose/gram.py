"""Certified singular values from the Gram matrix (``mode="gram"``).

For a wide or tall W the full SVD *with vectors* (needed by Theorem R) costs
several values-only SVDs. This module certifies σ(W) from the small side's
Gram matrix instead: with W m×n, m ≤ n (else Wᵀ), G = W Wᵀ (m×m) has
eigenvalues σᵢ(W)², and one SYRK plus one m×m ``eigh`` are cheaper than a
values-only SVD of W (measured ≈ 0.65–0.8× for n = 4m, ``bench/bench_gram.py``).
From order :data:`TRIDIAGONAL_MIN_ORDER` on, not even the eigenvectors are
needed: a tridiagonal T and Sturm counts take their place (Theorem G-T below).

Theorem G (proofs/enclosure-gram.md §1). Let Ĝ be any real m×m matrix,
U ∈ ℝ^{m×m}, λ ∈ ℝ^m, with ``‖UᵀU − I‖₂ ≤ α < 1``, ``‖Ĝ − WWᵀ‖₂ ≤ β`` and
``‖Ĝ − U diag(λ) Uᵀ‖₂ ≤ e``. With λ₍₁₎ ≥ … ≥ λ₍ₘ₎ the *signed* sorted λ, and
θ ranging over [1 − α, 1 + α],

    min_θ θλ₍ᵢ₎ − β − e ≤ σᵢ(W)² ≤ max_θ θλ₍ᵢ₎ + β + e .

Ĝ is ``fl(W Wᵀ)`` (upper-triangle chunked SYRKs, mirrored; β: a-priori
rounding bound, Lemma G.1). By default U, λ are replaced by a Householder
tridiagonalisation (Theorem G-T, §1a: Ĝ ≈ Q̂TQ̂ᵀ from LAPACK ``dsytrd`` +
``dorgqr``; α: Lemma 3.1 on Q̂; e: Lemma 3.4-T; the eigenvalues of T enclosed
by rigorous Sturm counts, :mod:`.tridiagonal`), at about the cost of the
values-only ``eigvalsh`` plus one ``dorgqr``, a half GEMM and a SYRK; if that
fails, U, λ come from LAPACK ``syevd`` (Theorem G; α: Lemma 3.1 of
proofs/enclosure.md; e: Lemma 3.4, the symmetric residual). Either way the
enclosures of all σᵢ are evaluated at once in floats with one step outward
per operation (Lemma G.4; :func:`theorem_g_intervals`, in Arb, is the
reference and the fallback). The recorded mode is ``"gram-tri"`` (Theorem G-T,
for m ≥ :data:`TRIDIAGONAL_MIN_ORDER`) or ``"gram"`` (Theorem G).

Widths: the absolute error in σᵢ² is ≈ γ_n‖|W||W|ᵀ‖₂, so σᵢ's relative width
grows like n·u·(σ₁/σᵢ)²·(stable-rank-like factor); small singular values are
much wider than in fast mode, and σᵢ ≲ √(β + e) only gets a lower bound of 0.
Use ``fast``/``tight`` when small singular values matter.

Meaning of the :class:`~certbound.enclose.svd.SingularValueEnclosure` fields
in this mode (all scaled back to W's units): ``alpha`` bounds ‖Q̂ᵀQ̂ − I‖₂
(mode ``gram``: ‖UᵀU − I‖₂); ``beta`` bounds ‖Ĝ − WWᵀ‖₂ (or ‖Ĝ − WᵀW‖₂ for
tall W) and ``residual`` bounds ‖Ĝ − Q̂TQ̂ᵀ‖₂ (‖Ĝ − U diag(λ) Uᵀ‖₂) — both
in *squared* units of W.

>>> import numpy as np
>>> W = np.array([[3.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
>>> enc = enclose_singular_values_gram(W)
>>> enc.mode, [bool(lo <= t <= hi) for lo, hi, t in zip(enc.lower, enc.upper, [4, 3])]
('gram', [True, True])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg
import scipy.linalg.blas
from flint import arb

from certbound.ball import arb_from_float, float_lower, float_upper, under_float_model, working_precision
from certbound.enclose import fperror, tridiagonal
from certbound.enclose._input import BLOCK_ENTRIES
from certbound.enclose.svd import (
    _MIN_NORMAL,
    AUTO_RELATIVE_TARGET,
    AUTO_SPECTRUM_FRACTION,
    SingularValueEnclosure,
    _BallsWithEnds,
    _hull_balls,
    enclose_singular_values,
    meets_width_target,
)

__all__ = [
    "abs_gram_norm_upper",
    "rounded_gram",
    "theorem_g_intervals",
    "theorem_g_float_bounds",
    "tridiagonal_theorem_g_float_bounds",
    "tridiagonal_theorem_g_intervals",
    "certify_gram",
    "unscaled_gram_ok",
    "UNSCALED_EXPONENT_RANGE",
    "GRAM_CHUNK",
    "GRAM_SMALL_CHUNK",
    "GRAM_SMALL_CHUNK_MAX_ORDER",
    "AUTO_GRAM_CHUNK",
    "auto_gram_chunk",
    "PER_CHUNK_POWER_MIN_ORDER",
    "PER_CHUNK_POWER_MIN_ENTRIES",
    "ALPHA_CHUNK",
    "RESIDUAL_CHUNK",
    "TRIDIAGONAL_RESIDUAL_CHUNK",
    "TRIDIAGONAL_MIN_ORDER",
    "RECONSTRUCT_ESTIMATE_MARGIN",
    "RECONSTRUCT_PREFILTER",
    "RECONSTRUCT_MEDIAN_TARGET",
    "TRIDIAGONAL_ALPHA_CHUNK",
    "TRIDIAGONAL_ALPHA_BLOCK",
    "SHIFT_SPREAD",
    "enclose_singular_values_gram",
]

#: Theorem G is applied to W itself, without the power-of-two scaled copy, when
#: its largest |entry| lies in [2^-E, 2^E) (:func:`unscaled_gram_ok`,
#: proofs/enclosure-gram.md §3).
UNSCALED_EXPONENT_RANGE = 256

#: From this order of the Gram matrix and this many entries of Ws on, ρ(|Ws||Ws|ᵀ) is bounded by Σ_C ρ(N_C)
#: over the SYRK's column chunks, each by a Collatz–Wielandt step inside the chunk's loop step (Lemma G.2′): no
#: second pass over Ws. Measured (one thread, loaded machine): 768×3072 46.1 vs 50.4 ms for Ĝ and β, 384×1536
#: with chunks of 128 (GRAM_SMALL_CHUNK) 8.7–9.1 vs 9.1–9.8 ms; bound 0.2–5 % above the global power iteration's
#: (proofs/enclosure-gram.md §2). The order equals TRIDIAGONAL_MIN_ORDER: Theorem G-T's smaller e more than pays.
PER_CHUNK_POWER_MIN_ORDER = 192
PER_CHUNK_POWER_MIN_ENTRIES = 1 << 19

#: Chunk lengths b of the Gram route's chunked products (Lemma 2.5 of
#: proofs/enclosure.md: error constant γ_{b+q−1} for q chunks): the SYRK of Ĝ
#: (β), the SYRK of UᵀU (α) and the inner dimension of the residual (e).
#: Measured (proofs/enclosure-gram.md §5): 128 for α and e costs ≈ nothing and
#: makes them 2–5× smaller; for Ĝ every chunk rewrites the m×m output, so
#: 128 instead of 256 cost 7–11 % of the SYRK at 768×3072 under load — there Ĝ keeps 256.
GRAM_CHUNK = 256
#: Gram orders m ≤ GRAM_SMALL_CHUNK_MAX_ORDER (Ĝ of ≤ 1.6 MB, cache-resident across the chunk SYRKs) use column
#: chunks of GRAM_SMALL_CHUNK: measured (one thread, loaded machine) at 384×1536 as fast as 256 (7.1–9.8 ms
#: either way, 1536×384 within +5 %) with β 0.53× (γ_139 instead of γ_261); at 512×2048 +2 %, 768×3072 +11 %.
GRAM_SMALL_CHUNK = 128
GRAM_SMALL_CHUNK_MAX_ORDER = 448
#: Mode ``auto`` (:func:`certify_gram`'s ``chunk``): Ĝ in column chunks of 256 at every order from
#: TRIDIAGONAL_MIN_ORDER on (:func:`auto_gram_chunk`) — at m ≤ GRAM_SMALL_CHUNK_MAX_ORDER half as many chunk SYRKs,
#: running-sum adds and per-chunk β steps as mode ``gram``'s 128, for β ≈ 1.9× (γ_261 instead of γ_139 at 384×1536).
#: Measured (session 8, one thread, loaded machine, all-MiniLM-L6-v2's 12 FFN matrices, auto = Theorem G-T, per
#: matrix min/median): 128: 25.5/27.5 ms, 256: 24.2/26.9, 512: 24.3/26.4; median relative width 1.2e-11 → 1.7e-11
#: (256; max 5.7e-10 → 8.6e-10) or 2.7e-11 (512), 60× inside auto's target. At 768×3072 (GRAM_CHUNK = 256 already)
#: 512 gained nothing measurable (Ĝ and β min 48.6 vs 49.0 ms). Mode ``gram`` keeps 128 below order 449, and so does
#: ``auto`` below TRIDIAGONAL_MIN_ORDER (the Gram route costs < 1–4 ms there; small matrices are intersected with
#: the fast chain).
AUTO_GRAM_CHUNK = 256
ALPHA_CHUNK = 128
RESIDUAL_CHUNK = 128


def auto_gram_chunk(shape: tuple[int, ...]) -> int | None:
    """Mode ``auto``'s column-chunk length for Ĝ (:data:`AUTO_GRAM_CHUNK`), or None for the default by order.

    :data:`AUTO_GRAM_CHUNK` from Gram order (the small side) :data:`TRIDIAGONAL_MIN_ORDER` on; below it the
    default chunks of :func:`rounded_gram` (the same Ĝ as mode ``gram``). A speed choice: any chunk length is
    sound (Lemma G.1 with k = b + q − 1).

    Parameters
    ----------
    shape : (m, n)
        Shape of the matrix (either orientation: the Gram order is min(m, n)).

    Returns
    -------
    int or None
        The chunk length for :func:`certify_gram`'s ``chunk``, or None (its default).

    Examples
    --------
    >>> auto_gram_chunk((384, 1536)), auto_gram_chunk((64, 2000))
    (256, None)
    """
    return AUTO_GRAM_CHUNK if min(int(shape[0]), int(shape[1])) >= TRIDIAGONAL_MIN_ORDER else None


def unscaled_gram_ok(W: np.ndarray, amax: float | None = None) -> bool:
    """Whether Theorem G may run on W without scaling it first (a quality choice; any W is sound).

    True when ``2^-E ≤ max|w| < 2^E`` with E = :data:`UNSCALED_EXPONENT_RANGE`:
    then no Gram entry, eigenvalue or residual product can come near
    overflow, and the underflow terms (4nmη and the like) are below 2^-500
    relative to ‖W‖₂². Proof that the unscaled certificate is valid:
    proofs/enclosure-gram.md §3.

    Parameters
    ----------
    W : (m, n) float64 array
        The matrix.
    amax : float, optional
        ``max|w|`` if the caller has it (computed from W otherwise).

    Returns
    -------
    bool
        Whether max|w| lies in [2^-E, 2^E) (False for an empty or non-finite W).

    Examples
    --------
    >>> unscaled_gram_ok(np.array([[0.02, -1.5]])), unscaled_gram_ok(np.array([[1e-300]]))
    (True, False)
    """
    if W.size == 0:
        return False
    if amax is None:
        amax = max(float(W.max()), -float(W.min()))
    return 2.0**-UNSCALED_EXPONENT_RANGE <= amax < 2.0**UNSCALED_EXPONENT_RANGE


def _gram_chunks(n: int, chunk: int) -> list[tuple[int, int]]:
    """Column chunks of the Gram SYRKs: ≤ ``chunk`` columns when n > 2·chunk, else one (Lemma 2.5)."""
    if n == 0:
        return []
    return fperror._chunk_bounds(n, chunk) if n > 2 * chunk else [(0, n)]


def _abs_chunks(m: int, n: int) -> list[tuple[int, int]]:
    """Column chunks of the |Ws| passes: ≈ ``BLOCK_ENTRIES / 2`` entries (1 MiB, in cache for two products)."""
    step = max(1, (BLOCK_ENTRIES // 2) // max(m, 1))
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def _abs_gram_matvec_upper(Ws: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Float vector ``z ≥ |Ws|(|Ws|ᵀx)`` entrywise (x ≥ 0), one pass over Ws in column chunks.

    Per chunk C (in cache): ``y_C = _inflate(fl(|Ws_C|ᵀx), m) ≥ |Ws_C|ᵀx`` (each
    entry complete: all m rows are in the chunk) and the running sum
    ``fl(Σ_C fl(|Ws_C| y_C))``, whose entries are n-term sums of nonnegative
    products by some tree, so ``_inflate(·, n)`` bounds ``|Ws|y`` (Lemma 2.2 with
    monotonicity; proofs/enclosure-gram.md §2, "Blockwise evaluation"). No |Ws| copy.
    """
    m, n = Ws.shape
    z = np.zeros(m)
    bufs: dict[int, np.ndarray] = {}
    for a, b in _abs_chunks(m, n):
        Wc = Ws[:, a:b]
        buf = bufs.get(b - a)
        if buf is None:
            buf = bufs[b - a] = np.empty_like(Wc)  # C- or F-ordered like the chunk
        aW = np.abs(Wc, out=buf)
        y = fperror._inflate(aW.T @ x, m)
        z += aW @ y
    return fperror._inflate(z, n)


def abs_gram_norm_upper(Ws: np.ndarray, iterations: int = 1, first: np.ndarray | None = None) -> arb:
    """Ball whose upper end bounds ``‖ |Ws| |Ws|ᵀ ‖₂`` (Ws: m×n float data).

    N = |Ws||Ws|ᵀ is symmetric and nonnegative, so ‖N‖₂ = ρ(N), and for every
    positive vector x, ``ρ(N) ≤ maxᵢ (Nx)ᵢ / xᵢ`` (Collatz–Wielandt). Starting
    from x = 𝟙 (which gives ‖N‖_∞, Lemma 2.4's bound) each iteration feeds the
    upward-rounded ``Nx`` back in as the next x (a power iteration); the
    numerators are upward bounds (Lemma 2.2, monotone chains) and each
    quotient is bounded by ``(fl(zᵢ/xᵢ) + η/2)/(1 − u)``. The smallest bound
    over the iterations is returned. Cost: one pass over Ws per iteration
    (both products of a column chunk while it is in cache). Proof:
    proofs/enclosure-gram.md §2, Lemma G.2.

    Parameters
    ----------
    Ws : (m, n) float64 array
        Any float matrix (C- or F-ordered); not modified.
    iterations : int
        Power-iteration steps after the first product N𝟙.
    first : (m,) float64 array, optional
        An already computed float vector ≥ N𝟙 entrywise (e.g. accumulated by
        :func:`rounded_gram` during its SYRKs); then the first product is not recomputed.

    Returns
    -------
    arb
        A ball whose upper end is ≥ ‖|Ws||Ws|ᵀ‖₂ (+∞ if every bound overflowed).

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
        for it in range(iterations + 1):
            # z ≥ |Ws|(|Ws|ᵀx) = Nx entrywise, z > 0 (the inflation adds c > 0).
            z = first if it == 0 and first is not None else _abs_gram_matvec_upper(Ws, x)
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


def rounded_gram(
    Ws: np.ndarray, extra_residual: arb | None = None, chunk: int | None = None
) -> tuple[np.ndarray, arb]:
    """Float Gram matrix ``Ĝ = fl(Ws Wsᵀ)`` of a wide Ws and a bound β ≥ ‖Ĝ − WWᵀ‖₂.

    Here W = Ws + Δ is the matrix actually certified, with ``‖Δ‖₂ ≤
    extra_residual`` (the rounding of an inexact power-of-two scaling, 0 if
    None). Ĝ is the running sum of the upper triangles of ``dsyrk`` over
    column chunks of Ws, mirrored once at the end, so it is exactly symmetric
    (each entry one rounded chunked dot product of two rows). While a chunk is
    in cache, the first power-iteration product of :func:`abs_gram_norm_upper`
    (``N𝟙``, N = |Ws||Ws|ᵀ) is accumulated too.

    Soundness (proofs/enclosure-gram.md §2, Lemma G.1): entrywise
    ``|Ĝ − WsWsᵀ| ≤ γ_k|Ws||Ws|ᵀ + 4nη`` with k = n, or k = b + q − 1 when Ĝ is
    the running sum of q column-chunk SYRKs (Lemmas 2.1, 2.5 of
    proofs/enclosure.md), so ``‖Ĝ − WsWsᵀ‖₂ ≤ γ_k‖|Ws||Ws|ᵀ‖₂ + 4nmη`` (norm by
    :func:`abs_gram_norm_upper`); and ``‖WWᵀ − WsWsᵀ‖₂ ≤ 2‖Ws‖₂‖Δ‖₂ + ‖Δ‖₂²``.

    Parameters
    ----------
    Ws : (m, n) float64 array
        The (scaled or unscaled) matrix, m ≤ n in practice (any shape works); not modified.
    extra_residual : arb, optional
        Bound d on ‖Δ‖₂ (Lemma G.3); None or 0 for an exact Ws.
    chunk : int, optional
        Column-chunk length b of Lemma 2.5 (chunked when n > 2b); default
        :data:`GRAM_SMALL_CHUNK` for m ≤ :data:`GRAM_SMALL_CHUNK_MAX_ORDER`, else :data:`GRAM_CHUNK`.

    Returns
    -------
    G : (m, m) float64 array
        Ĝ, exactly symmetric (Fortran-ordered).
    beta : arb
        A ball whose upper end is ≥ ‖Ĝ − WWᵀ‖₂.

    >>> G, beta = rounded_gram(np.array([[1.0, 2.0, 3.0]]))
    >>> G.tolist(), bool(beta.upper() < 1e-13)
    ([[14.0]], True)
    """
    m, n = Ws.shape
    if chunk is None:
        chunk = GRAM_SMALL_CHUNK if m <= GRAM_SMALL_CHUNK_MAX_ORDER else GRAM_CHUNK
    k = fperror.chunked_gamma_length(n, chunk)
    G = Gc = None
    if m == 0:
        return np.zeros((0, 0), order="F"), arb(0)
    chunks = _gram_chunks(n, chunk)
    # Lemma G.2′: for large Gram orders ρ(N) ≤ Σ_C ρ(N_C), each bounded in the chunk's own loop step
    # (no second pass over Ws); else the global power iteration of Lemma G.2.
    per_chunk = m >= PER_CHUNK_POWER_MIN_ORDER and m * n >= PER_CHUNK_POWER_MIN_ENTRIES and len(chunks) > 1
    z = np.zeros(m)  # running fl(Σ_C |Ws_C| y_C): after _inflate, ≥ N𝟙
    rho_c: list[float] = []  # per chunk: a float r_C with ρ(N_C) ≤ (r_C + η)/(1 − u)
    ones = np.ones(m)
    bufs: dict[int, np.ndarray] = {}
    inflate = fperror._inflate_in_place
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for a, b in chunks:
            # Column chunks, running sum (Lemma 2.5): γ_{b+q−1} instead of γ_n.
            Wc = Ws[:, a:b]
            buf = bufs.get(b - a)
            if buf is None:
                buf = bufs[b - a] = np.empty_like(Wc)  # C- or F-ordered like the chunk
            if not (Wc.flags.c_contiguous or Wc.flags.f_contiguous):
                np.copyto(buf, Wc)  # one chunk copy; |·| is then taken in place
                Wc = buf
            if G is None:
                G = fperror.syrk_rows_upper(Wc)
            else:
                Gc = fperror.syrk_rows_upper(Wc, out=Gc if Gc is not None else np.zeros((m, m), order="F"))
                G += Gc  # one rounded addition per entry and chunk (a full add: faster than upper blocks)
            aW = np.abs(Wc, out=buf)  # one chunk of |Ws| (≤ m × chunk when chunked)
            # _inflate's floats in place on fresh temporaries (overflow ignored by the errstate above).
            y = inflate(ones @ aW, m)  # ≥ |Ws_C|ᵀ𝟙 (products by 1 are exact), complete within the chunk
            if per_chunk:
                z1 = inflate(aW @ y, b - a)  # ≥ N_C𝟙 > 0 (N_C = |Ws_C||Ws_C|ᵀ)
                z2 = inflate(aW @ inflate(z1 @ aW, m), b - a)  # ≥ N_C z1
                r1, r2 = float(z1.max()), float((z2 / z1).max())
                finite = [r for r in (r1, r2) if math.isfinite(r)]
                rho_c.append(min(finite) if finite else math.inf)
            else:
                z += aW @ y
        del Gc
        if G is None:
            G = np.zeros((m, m), order="F")
        fperror.mirror_upper(G)
        z = inflate(z, n)
    with working_precision():
        if per_chunk:
            # Σ_C (r_C + η)/(1 − u) = (Σ_C r_C + qη)/(1 − u), evaluated outward in Arb.
            if all(math.isfinite(r) for r in rho_c):
                total = arb(0)
                for r in rho_c:
                    total += arb_from_float(r)
                norm_n = (total + len(rho_c) * arb(fperror.ETA)) / (1 - arb(fperror.UNIT_ROUNDOFF))
            else:
                norm_n = arb.pos_inf()  # ≥ Σ_C ρ(N_C) ≥ ρ(N) = ‖N‖₂
        else:
            norm_n = abs_gram_norm_upper(Ws, first=z)
        beta = fperror.gamma(k) * norm_n + 4 * n * m * arb(fperror.ETA)
        if extra_residual is not None and not extra_residual.upper() == 0:
            d = extra_residual.upper()
            beta = beta + 2 * fperror.norm2_upper(Ws) * d + d * d
    return G, beta


def _theorem_g_scalars(alpha: arb, beta: arb, e: arb) -> tuple[float, float, float] | None:
    """Floats ``c ≥ β + e``, ``grow ≥ 1 + α``, ``0 ≤ shrink ≤ 1 − α`` of Lemma G.4 (Theorems G and G-T).

    None when α, β or e is not finite or α is not certified < 1 (the
    theorems' hypothesis). The Arb upper ends are rounded outward once
    (``float_upper``/``float_lower``, proofs/enclosure.md §5).
    """
    with working_precision():
        a, b, ee = alpha.upper(), beta.upper(), e.upper()
        if not (a.is_finite() and b.is_finite() and ee.is_finite()):
            return None
        if not a < 1:
            return None
        return float_upper(b + ee), float_upper(1 + a), max(float_lower(1 - a), 0.0)


def theorem_g_float_bounds(
    lam: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem G for all σᵢ at once in floats, one step outward per operation (proofs/enclosure-gram.md §1, Lemma G.4).

    Same contract as :func:`theorem_g_intervals`. Arb gives three floats once:
    ``g⁺ ≥ 1 + α``, ``0 ≤ g⁻ ≤ 1 − α`` and ``c̄ ≥ β + e`` (upper ends). Then, with
    λ₍ᵢ₎ sorted descending and (f⁻, f⁺) = (g⁻, g⁺) for λ₍ᵢ₎ ≥ 0, (g⁺, g⁻) for λ₍ᵢ₎ < 0,

        ℓ̄ᵢ = pred(pred(λ₍ᵢ₎·f⁻) − c̄) ≤ ℓᵢ,    h̄ᵢ = succ(succ(λ₍ᵢ₎·f⁺) + c̄) ≥ hᵢ,

    and σᵢ ∈ [pred(√ℓ̄ᵢ) (0 if ℓ̄ᵢ ≤ 0), succ(√h̄ᵢ)], each operation a correctly
    rounded float operation followed by one step outward (Lemma 10.1 of
    proofs/enclosure.md). The ends are scaled by ``2**scale_exponent`` with
    ``ldexp``, exact when every scaled end is a normal float or 0; otherwise
    (or when an end overflows) :func:`theorem_g_intervals` is used.

    Parameters
    ----------
    lam : (k,) float64 array
        Approximate eigenvalues of Ĝ (signed, any order).
    alpha, beta, e : arb
        Upper ends bound ‖UᵀU − I‖₂ (must be < 1), ‖Ĝ − WWᵀ‖₂ and ‖Ĝ − UΛUᵀ‖₂.
    scale_exponent : int
        The σ's are multiplied by ``2**scale_exponent``.

    Returns
    -------
    list of arb or None
        The k balls (descending), each the hull of its two float ends after
        monotone tightening; the ends are attached as ``.lower`` / ``.upper``
        arrays (``svd._build`` uses ends and balls as they are); None when α
        is not certified < 1, a bound is not finite or some h̄ᵢ < 0
        (impossible when the hypotheses hold).

    >>> b = theorem_g_float_bounds(np.array([1.0, 4.0]), arb(0), arb(0), arb(0))
    >>> float(b.lower[0]) <= 2.0 <= float(b.upper[0]), float(b.lower[1]) <= 1.0 <= float(b.upper[1])
    (True, True)
    """
    scalars = _theorem_g_scalars(alpha, beta, e)
    if scalars is None:
        return None
    c, grow, shrink = scalars
    if not (np.isfinite(c) and np.isfinite(grow)):
        return theorem_g_intervals(lam, alpha, beta, e, scale_exponent)
    lv = np.sort(np.asarray(lam, dtype=np.float64).reshape(-1))[::-1]
    pos = lv >= 0
    f_lo = np.where(pos, shrink, grow)  # θλ is smallest at θ = 1 − α for λ ≥ 0, at 1 + α for λ < 0
    f_hi = np.where(pos, grow, shrink)
    lsq, hsq = _outward_squares(lv, f_lo, f_hi, c)
    if not bool(np.all(hsq >= 0)):
        return None  # σᵢ² ≥ 0 > hᵢ: the hypotheses cannot hold; refuse rather than guess
    out = _balls_from_squares(lsq, hsq, scale_exponent)
    return out if out is not None else theorem_g_intervals(lam, alpha, beta, e, scale_exponent)


def _balls_from_squares(lsq: np.ndarray, hsq: np.ndarray, scale_exponent: int) -> _BallsWithEnds | None:
    """σ-balls from floats ``lsq ≤ σᵢ²/4^t ≤ hsq`` (hsq ≥ 0): Lemma G.4 (b), ``ldexp`` back, tightening.

    None when the scaled ends are not all exact (a subnormal or overflowing
    end): the caller then uses its Arb evaluation.
    """
    lo, hi = _outward_sqrt(lsq, hsq)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        lo2, hi2 = np.ldexp(lo, scale_exponent), np.ldexp(hi, scale_exponent)
    # A lower end scaled to exactly 2⁻¹⁰²² may have been rounded *up* onto it (2⁻¹⁰²²(1 − 2⁻⁵³) ties to
    # 2⁻¹⁰²²): lower ends must be strictly above; an upper end rounded up stays an upper bound.
    exact = (bool(np.all(np.isfinite(hi2))) and bool(np.all((lo == 0) | (lo2 > _MIN_NORMAL)))
             and bool(np.all((hi == 0) | (hi2 >= _MIN_NORMAL))))
    if not exact:
        return None
    # Monotone tightening (σᵢ sorted, proofs/enclosure.md §1) before the balls are made, so svd._build
    # takes them as they are (one Arb hull per σ, not two).
    lo2 = np.maximum.accumulate(lo2[::-1])[::-1]
    hi2 = np.minimum.accumulate(hi2)
    out = _BallsWithEnds(_hull_balls(lo2, hi2))
    out.lower, out.upper, out.tightened = lo2, hi2, True
    return out


def tridiagonal_theorem_g_float_bounds(
    lam_lower: np.ndarray, lam_upper: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem G-T for all σᵢ at once in floats: Lemma G.4 at the ends of the eigenvalue enclosures of T.

    Theorem G-T (proofs/enclosure-gram.md §1a): if ``λᵢ(T) ∈ [aᵢ, bᵢ]``
    (descending i), then ``min_θ θaᵢ − β − e ≤ σᵢ² ≤ max_θ θbᵢ + β + e``.
    Lemma G.4 (a) gives ``ℓ̄ᵢ`` with λ := aᵢ and ``h̄ᵢ`` with λ := bᵢ — the same
    operations (:func:`_outward_squares`, :func:`_outward_sqrt`) as
    :func:`theorem_g_float_bounds`, which is the case aᵢ = bᵢ = λ₍ᵢ₎.

    Parameters
    ----------
    lam_lower, lam_upper : (k,) float64 arrays
        ``lam_lower[i] ≤ λᵢ(T) ≤ lam_upper[i]``, λᵢ(T) descending.
    alpha, beta, e : arb
        Upper ends bound ‖Q̂ᵀQ̂ − I‖₂ (must be < 1), ‖Ĝ − WWᵀ‖₂ and ‖Ĝ − Q̂TQ̂ᵀ‖₂.
    scale_exponent : int
        The σ's are multiplied by ``2**scale_exponent``.

    Returns
    -------
    list of arb or None
        As :func:`theorem_g_float_bounds`; :func:`tridiagonal_theorem_g_intervals` when
        an end is not exactly representable after scaling; None when α is not
        certified < 1, a bound or an eigenvalue end is not finite, or some h̄ᵢ < 0.

    Raises
    ------
    ValueError
        If ``lam_lower`` and ``lam_upper`` differ in length.

    Examples
    --------
    >>> b = tridiagonal_theorem_g_float_bounds(np.array([4.0, 0.5]), np.array([4.0, 1.0]), arb(0), arb(0), arb(0))
    >>> [(float(lo) < s < float(hi)) for lo, hi, s in zip(b.lower, b.upper, [2.0, 0.8])]   # σ₂² ∈ [0.5, 1]
    [True, True]
    """
    scalars = _theorem_g_scalars(alpha, beta, e)
    if scalars is None:
        return None
    c, grow, shrink = scalars
    lv = np.asarray(lam_lower, dtype=np.float64).reshape(-1)
    hv = np.asarray(lam_upper, dtype=np.float64).reshape(-1)
    if lv.shape != hv.shape:
        raise ValueError(f"tridiagonal_theorem_g_float_bounds: {lv.size} lower but {hv.size} upper eigenvalue ends")
    if not (np.all(np.isfinite(lv)) and np.all(np.isfinite(hv))):
        return None
    if not (np.isfinite(c) and np.isfinite(grow)):
        return tridiagonal_theorem_g_intervals(lv, hv, alpha, beta, e, scale_exponent)
    # λ ≥ 0: θλ smallest at θ = 1 − α, largest at 1 + α; λ < 0: the other way round.
    lsq, _ = _outward_squares(lv, np.where(lv >= 0, shrink, grow), np.where(lv >= 0, grow, shrink), c)
    _, hsq = _outward_squares(hv, np.where(hv >= 0, shrink, grow), np.where(hv >= 0, grow, shrink), c)
    if not bool(np.all(hsq >= 0)):
        return None  # σᵢ² ≥ 0 > hᵢ: the hypotheses cannot hold; refuse rather than guess
    out = _balls_from_squares(lsq, hsq, scale_exponent)
    return out if out is not None else tridiagonal_theorem_g_intervals(lv, hv, alpha, beta, e, scale_exponent)


def tridiagonal_theorem_g_intervals(
    lam_lower: np.ndarray, lam_upper: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem G-T in Arb (the fallback of :func:`tridiagonal_theorem_g_float_bounds`; proofs/enclosure-gram.md §1a).

    ``ℓᵢ = θ₋(aᵢ)aᵢ − β − e`` and ``hᵢ = θ₊(bᵢ)bᵢ + β + e`` with θ₋(λ) = 1 − α,
    θ₊(λ) = 1 + α for λ ≥ 0 and the other way round for λ < 0; σᵢ ∈ [√max(ℓᵢ, 0), √hᵢ].

    Parameters
    ----------
    lam_lower, lam_upper, alpha, beta, e, scale_exponent
        As for :func:`tridiagonal_theorem_g_float_bounds`.

    Returns
    -------
    list of arb or None
        Balls containing σ₁ ≥ … ≥ σ_k, times ``2**scale_exponent`` (not yet
        monotonically tightened: :func:`certbound.enclose.svd._build` does); None
        when α is not certified < 1, a bound or an eigenvalue end is not
        finite, or some hᵢ < 0.

    Raises
    ------
    ValueError
        If ``lam_lower`` and ``lam_upper`` differ in length.

    Examples
    --------
    >>> [str(x) for x in tridiagonal_theorem_g_intervals(np.array([4.0]), np.array([4.0]), arb(0), arb(0), arb(0))]
    ['2.00000000000000']
    """
    lv = np.asarray(lam_lower, dtype=np.float64).reshape(-1)
    hv = np.asarray(lam_upper, dtype=np.float64).reshape(-1)
    if lv.shape != hv.shape:
        raise ValueError(f"tridiagonal_theorem_g_intervals: {lv.size} lower but {hv.size} upper eigenvalue ends")
    with working_precision():
        a, b, ee = alpha.upper(), beta.upper(), e.upper()
        if not (a.is_finite() and b.is_finite() and ee.is_finite()) or not a < 1:
            return None
        c = (b + ee).upper()
        two = arb(2) ** scale_exponent
        shrink, grow = 1 - a, 1 + a
        out = []
        for li, hi_ in zip(lv.tolist(), hv.tolist()):
            if not (np.isfinite(li) and np.isfinite(hi_)):
                return None
            lo = (arb_from_float(li) * (shrink if li >= 0 else grow) - c).lower()
            hi = (arb_from_float(hi_) * (grow if hi_ >= 0 else shrink) + c).upper()
            if not hi >= 0:
                return None
            slo = lo.sqrt().lower() if lo > 0 else arb(0)
            out.append(slo.union(hi.sqrt().upper()) * two)
        # Monotone tightening is done by svd._build (these balls carry no float ends).
        return out


def _outward_squares(lv: np.ndarray, f_lo: np.ndarray, f_hi: np.ndarray,
                     c: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Floats ``lsq ≤ λ·f_lo − c`` and ``hsq ≥ λ·f_hi + c`` entrywise (exact right-hand sides; Lemma G.4 (a)).

    One correctly rounded operation, then one step outward (Lemma 10.1), with
    monotonicity of x ↦ x ∓ c; a product with λ = ±0 and a shift by c = 0 are
    exact and need no step. ``c`` may be an array broadcasting against ``lv``
    (one c̄ per row: ``product._certify_stack_theorem_g``). NaN/±∞ results are
    the caller's to detect.
    """
    zero = lv == 0
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        pl = np.where(zero, 0.0, np.nextafter(lv * f_lo, -np.inf))  # ≤ λ·f_lo
        ph = np.where(zero, 0.0, np.nextafter(lv * f_hi, np.inf))  # ≥ λ·f_hi
        if np.ndim(c) == 0:
            lsq = np.nextafter(pl - c, -np.inf) if c else pl
            hsq = np.nextafter(ph + c, np.inf) if c else ph
        else:
            shift = c != 0
            lsq = np.where(shift, np.nextafter(pl - c, -np.inf), pl)
            hsq = np.where(shift, np.nextafter(ph + c, np.inf), ph)
    return lsq, hsq


def _outward_sqrt(lsq: np.ndarray, hsq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Floats ``lo ≤ √lsq`` (0 where lsq ≤ 0) and ``hi ≥ √hsq`` (hsq ≥ 0), entrywise (Lemma G.4 (b)).

    ``fl(√y)`` is correctly rounded (IEEE 754), so one step outward bounds √y
    (Lemma 10.1); √0 = 0 is exact.
    """
    with np.errstate(invalid="ignore"):
        lo = np.where(lsq > 0, np.nextafter(np.sqrt(np.maximum(lsq, 0.0)), -np.inf), 0.0)
        hi = np.where(hsq == 0, 0.0, np.nextafter(np.sqrt(hsq), np.inf))
    return lo, hi


def theorem_g_intervals(
    lam: np.ndarray, alpha: arb, beta: arb, e: arb, scale_exponent: int = 0
) -> list[arb] | None:
    """Theorem G: balls for σᵢ(W) from eigenvalue approximations λ of Ĝ ≈ WWᵀ (the Arb reference).

    ``lam`` are the (signed) approximate eigenvalues; α, β, e as in the
    module docstring (upper ends are used). The balls are multiplied by
    ``2**scale_exponent`` (exact). Returns None if α is not certified < 1 or
    a bound is not finite. Proof: proofs/enclosure-gram.md §1 (scalar step
    machine-checked in proofs/coq/TheoremG.v). :func:`theorem_g_float_bounds`
    is the float evaluation used by :func:`certify_gram`; this function is
    its fallback.

    Each σᵢ² lies in [ℓᵢ, hᵢ] with ℓᵢ = θ₋λ₍ᵢ₎ − β − e, hᵢ = θ₊λ₍ᵢ₎ + β + e,
    where (θ₋, θ₊) = (1−α, 1+α) for λ₍ᵢ₎ ≥ 0 and (1+α, 1−α) for λ₍ᵢ₎ < 0;
    then σᵢ ∈ [√max(ℓᵢ, 0), √hᵢ], every operation in Arb.

    Parameters
    ----------
    lam : (k,) float64 array
        Approximate eigenvalues of Ĝ (signed, any order).
    alpha, beta, e : arb
        Upper ends bound ‖UᵀU − I‖₂, ‖Ĝ − WWᵀ‖₂ and ‖Ĝ − UΛUᵀ‖₂.
    scale_exponent : int
        The σ's are multiplied by ``2**scale_exponent``.

    Returns
    -------
    list of arb or None
        The k balls, descending; None when the hypotheses are not certified.

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

    Parameters
    ----------
    G : (m, m) float64 array
        Symmetric (only one triangle is read); not modified.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(lam, U)`` (ascending λ, U Fortran-ordered), or None if LAPACK
        raised or returned non-finite values.
    """
    try:
        lam, U = scipy.linalg.eigh(G, driver="evd", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not (np.all(np.isfinite(lam)) and np.all(np.isfinite(U))):
        return None
    return lam, U


def certify_gram(
    Ws: np.ndarray, extra_residual: arb, scale_exponent: int, prefer_reconstruct: bool = False,
    chunk: int | None = None,
) -> tuple[list[arb], arb, arb, arb, str] | None:
    """Gram certificate for a (scaled or unscaled) matrix; the ``_certify_dense`` contract.

    Steps (proofs/enclosure-gram.md §1–§3): Ĝ and β (:func:`rounded_gram`),
    then Theorem G-T (:func:`_certify_tridiagonal`: Householder tridiagonal
    T and Q̂, e by Lemma 3.4-T, α by Lemma 3.1, λ(T) by rigorous Sturm
    counts, floats of Lemma G.4), mode ``"gram-tri"``; if that fails, Theorem G
    with ``syevd``'s eigenvectors (:func:`_certify_eigh`), mode ``"gram"``.
    Theorem G-T is used from order :data:`TRIDIAGONAL_MIN_ORDER` on (below
    it Theorem G is both cheaper and narrower, measured).

    Parameters
    ----------
    Ws : (m, n) float64 array
        The power-of-two scaled matrix, or the matrix itself with
        ``extra_residual = 0``, ``scale_exponent = 0`` (valid for any float
        data, proofs/enclosure-gram.md §3). Any shape (a tall Ws is
        certified as Wsᵀ); not modified.
    extra_residual : arb
        Bound on ‖Δ‖₂ where Ws + Δ is the exact scaled matrix.
    scale_exponent : int
        The σ's are multiplied by ``2**scale_exponent``.
    prefer_reconstruct : bool
        Mode ``auto``: from order :data:`certbound.enclose.reconstruct.RECONSTRUCT_MIN_ORDER`
        on, try Theorem G-R first (mode ``"gram-rec"``, no Q̂; proofs/enclosure-reconstruct.md)
        when a Sturm test (three shifts) predicts that it meets the width target
        (:func:`_reconstruct_may_meet_target`), and keep it only if it does
        (:func:`~certbound.enclose.svd.meets_width_target`, and a median relative width
        ≤ :data:`RECONSTRUCT_MEDIAN_TARGET`, :func:`_meets_median_target`); else Theorem G-T
        on the same ``dsytrd`` output.
    chunk : int, optional
        Column-chunk length of Ĝ (:func:`rounded_gram`'s; mode ``auto`` passes
        :func:`auto_gram_chunk`); default by order (:data:`GRAM_SMALL_CHUNK`, :data:`GRAM_CHUNK`).

    Returns
    -------
    tuple or None
        ``(sigma, alpha, beta, e, mode)`` with ``sigma`` the k = min(m, n)
        balls (descending; with their float ends attached when Lemma G.4's
        evaluation applied), α ≥ ‖Q̂ᵀQ̂ − I‖₂ (or ‖UᵀU − I‖₂), β ≥ ‖Ĝ − Gram‖₂
        and e ≥ ‖Ĝ − Q̂TQ̂ᵀ‖₂ (or ‖Ĝ − UΛUᵀ‖₂) (β, e scaled by
        ``4**scale_exponent``), mode ``"gram-tri"`` or ``"gram"`` (``"gram-rec"`` with
        ``prefer_reconstruct``); None when
        both certificates fail (LAPACK error, non-finite output, α ≥ 1): the
        caller falls back.
    """
    if Ws.shape[0] > Ws.shape[1]:
        Ws = Ws.T  # σ(W) = σ(Wᵀ); work with the small side
    G, beta = rounded_gram(Ws, extra_residual, chunk=chunk)
    # IEEE addition propagates NaN/±∞, so a finite sum means every entry is finite (a non-finite sum of finite
    # entries, an overflow, is decided entrywise).
    if not (np.isfinite(G.sum()) or np.all(np.isfinite(G))):
        return None
    res = (_certify_tridiagonal(G, beta, scale_exponent, prefer_reconstruct)
           if G.shape[0] >= TRIDIAGONAL_MIN_ORDER else None)
    if res is None:
        res = _certify_eigh(G, beta, scale_exponent)
    if res is None:
        return None
    sig, alpha, e, mode = res
    with working_precision():
        four = arb(2) ** (2 * scale_exponent)
        return sig, alpha, beta * four, e * four, mode


#: Theorem G-T's shift pairs around dsterf's eigenvalues have half-width
#: ``SHIFT_SPREAD·(β + e)`` (plus 2ρ and a few ulps): a negligible share of the
#: final width (σᵢ²'s enclosure is ≥ 2(β + e) wide) that absorbs LAPACK's error.
SHIFT_SPREAD = 2.0**-10

#: Inner chunk length b of Lemma 3.4-T's residual (a-priori term γ_{b+3}ρ(|Q̂||T||Q̂|ᵀ)).
#: ρ(|Q̂||T||Q̂|ᵀ) is 1.6–2× Theorem G's ρ(|U||Λ||U|ᵀ), so b is smaller than Theorem G's 128: with 64,
#: e was 0.87× Theorem G's at 384×1536 but 1.03× at 768×768 Gaussian (every σ 1 % wider); with 48 it is
#: 0.67× and 0.79×, for +0.05 ms (384) / +0.4 ms (768) against 64 (proofs/enclosure-gram.md §2, Lemma 3.4-T).
TRIDIAGONAL_RESIDUAL_CHUNK = 48

#: Row-chunk length b of α for Q̂ (Lemma 3.1, γ_{b+q−1}). α(Q̂) with Theorem G's 128 was up to 1.07× α(U) on
#: all-MiniLM-L6-v2's FFN matrices, which made the leading σᵢ (where αλ₍ᵢ₎ dominates the width) up to 4.5 %
#: wider than Theorem G's; 96 gives 0.77× (+0.17 ms at 384, +0.4 ms at 768, measured).
TRIDIAGONAL_ALPHA_CHUNK = 96
#: Column-block width of α's Gram fl(Q̂ᵀQ̂) (``fperror._gram_block_columns``: one GEMM per block and row chunk,
#: rows :J₁ only). Measured (one thread, loaded machine): 48–128 within noise at 384 and 768; 64 chosen.
TRIDIAGONAL_ALPHA_BLOCK = 64

#: Theorem G-T from this order of Ĝ on; below it Theorem G with eigenvectors is cheaper (small ``eigh`` calls
#: are fast, and the Sturm loop's per-step overhead dominates) and narrower (e's a-priori term is not chunked
#: for m ≤ 2·TRIDIAGONAL_RESIDUAL_CHUNK). Measured (trained, one thread): 128×512 3.7 vs 4.0× the peer (eigh
#: faster), 192×768 2.95 vs 3.09, 256×1024 2.77 vs 2.54 (tridiagonal faster), 384×384 3.23 vs 2.87.
TRIDIAGONAL_MIN_ORDER = 192


#: Mode ``auto``'s go/no-go for Theorem G-R multiplies Theorem G-R's estimate of its e by this factor (measured
#: final/estimate 0.85–1.18 on trained-like and Gaussian 256×1024 … 768×3072): a borderline matrix goes to
#: Theorem G-T at once instead of paying for a reconstruction that misses the target.
RECONSTRUCT_ESTIMATE_MARGIN = 1.25
#: Before any Theorem G-R work (its estimate costs ≈ 4 ms at 384×1536, 10–11 ms at 768×3072), the same test with
#: e ≈ this·√k·u·‖T‖_F, below every measured estimate (700–1500 × √k·u·‖T‖_F on trained-like and Gaussian
#: 256×1024 … 768×3072; 1100–1490 on all-mpnet-base-v2's 24 FFN matrices): a matrix that fails even then (e.g.
#: σᵢ ∝ i^-0.7 at 768×3072) skips Theorem G-R at the cost of three Sturm counts. With 600, 11 of mpnet's 16 matrices
#: that Theorem G-R cannot serve passed this test and paid ≈ 10 ms for the estimate; with 1000, 5 do, and none of
#: the 8 it serves is lost (their thresholds: 1500–4350 × the same unit).
RECONSTRUCT_PREFILTER = 1000.0
#: Mode ``auto`` keeps Theorem G-R only if, besides τ per σᵢ, the median relative width of the σᵢ ≥
#: AUTO_SPECTRUM_FRACTION·σ₁ is at most this (issue 13's width target for the default mode; Theorem G-T's median is
#: ≈ 10× smaller, so on moderately decaying spectra, σᵢ ∝ i^-0.6 at 512×2048 and 768×3072, Theorem G-R alone met τ
#: with a median of 1.5–2.9e-9).
RECONSTRUCT_MEDIAN_TARGET = 1e-9


def _reconstruct_may_meet_target(d: np.ndarray, e: np.ndarray, beta: float, e_estimate: float,
                                 margin: float = RECONSTRUCT_ESTIMATE_MARGIN) -> bool:
    """Whether Theorem G-R with e ≈ ``e_estimate`` could meet mode auto's width target on T = tridiag(e, d, e).

    A *decision*, not a bound (as :func:`~certbound.enclose.svd.meets_width_target`). With c = β + e,
    σᵢ's relative width is ≈ c/λᵢ (λᵢ = σᵢ², α negligible), at most τ for λᵢ ≥ f²λ₁; below f²λ₁ its
    absolute width ≈ c/σᵢ must be ≤ τfσ₁ (τ = AUTO_RELATIVE_TARGET, f = AUTO_SPECTRUM_FRACTION). So every
    eigenvalue must be ≥ μ = c/τ when c/τ > f²λ₁, else ≥ (c/τ)²/(f²λ₁); and the median relative width over
    the λᵢ ≥ f²λ₁ is at most :data:`RECONSTRUCT_MEDIAN_TARGET` = t_m when more than half of them are
    ≥ c/t_m. Float Sturm counts at these three shifts on T scaled to max|T| ∈ [1, 2)
    (:func:`~certbound.enclose.tridiagonal.sturm_counts`) decide — True iff their guards hold, no eigenvalue
    lies below μ and the median rule holds. c is taken ``margin`` times larger.
    """
    c = (beta + e_estimate) * margin
    ae = np.abs(e)
    t_max = max(float(np.max(np.abs(d))), float(np.max(ae)) if e.size else 0.0)
    if not (math.isfinite(c) and c >= 0 and math.isfinite(t_max) and t_max > 0):
        return False
    lam1 = float(np.max(d)) + 2.0 * (float(np.max(ae)) if e.size else 0.0)  # ≈ λ₁ (Gershgorin's upper end)
    floor = AUTO_SPECTRUM_FRACTION**2 * lam1
    thr = c / AUTO_RELATIVE_TARGET
    mu = thr if thr > floor else thr * thr / floor
    if not mu < lam1:
        return False
    mu_med = c / RECONSTRUCT_MEDIAN_TARGET
    if not mu_med < lam1:
        return False
    s = math.ldexp(1.0, tridiagonal._normalising_exponent(t_max))
    es = e * s
    es[np.abs(es) < 2.0**-300] = 0.0  # the normalised guard's range (a decision: no Weyl term needed)
    counts, valid = tridiagonal.sturm_counts(d * s, es, np.array([mu * s, floor * s, mu_med * s]))
    if not (bool(np.all(valid)) and int(counts[0]) == 0):
        return False
    k = d.size
    selected, narrow = k - int(counts[1]), k - int(counts[2])  # eigenvalues ≥ f²λ₁, and ≥ c/t_m
    return 2 * min(narrow, selected) > selected


def _meets_median_target(sigma: list[arb], target: float = RECONSTRUCT_MEDIAN_TARGET,
                         c: float = AUTO_SPECTRUM_FRACTION) -> bool:
    """Whether the median relative width of the balls with midpoint ≥ c·σ₁ is ≤ ``target`` (a decision).

    Widths and midpoints are read as floats, from the float ends when the balls carry them (as
    :func:`~certbound.enclose.svd.meets_width_target`); an empty list or a non-finite σ₁ is refused.

    >>> _meets_median_target([arb(1), arb(0.5).union(arb(0.5 + 1e-10))])
    True
    >>> _meets_median_target([arb(1).union(arb(1 + 1e-8)), arb(0.5).union(arb(0.5 + 1e-8))])
    False
    """
    if isinstance(sigma, _BallsWithEnds):
        lo, hi = np.asarray(sigma.lower, dtype=np.float64), np.asarray(sigma.upper, dtype=np.float64)
    else:
        with working_precision():
            lo = np.array([float_lower(x) for x in sigma], dtype=np.float64)
            hi = np.array([float_upper(x) for x in sigma], dtype=np.float64)
    if lo.size == 0 or not math.isfinite(float(hi[0])):
        return False
    with np.errstate(all="ignore"):
        mid = 0.5 * (lo + hi)
        sel = mid >= c * mid[0]
        rel = (hi - lo)[sel] / mid[sel]
    return bool(rel.size) and bool(np.median(rel) <= target)


def _certify_tridiagonal(G: np.ndarray, beta: arb, scale_exponent: int, prefer_reconstruct: bool = False
                         ) -> tuple[list[arb], arb, arb, str] | None:
    """Theorem G-T on the exactly symmetric Ĝ: ``(sigma, alpha, e, "gram-tri")`` or None (proofs/enclosure-gram.md §1a).

    Q̂, d, e from ``dsytrd``/``dorgqr`` (:func:`~certbound.enclose.tridiagonal.householder_tridiagonal`,
    data only), e by Lemma 3.4-T, α by Lemma 3.1 on Q̂, λᵢ(T) ∈ [aᵢ, bᵢ] by
    Sturm counts (Lemma S), then :func:`tridiagonal_theorem_g_float_bounds`.
    With ``prefer_reconstruct`` (mode auto, :func:`certify_gram`) Theorem G-R is tried first on
    the same ``dsytrd`` output, ``(sigma, alpha, e, "gram-rec")`` when it meets the width target
    (τ per σᵢ and :data:`RECONSTRUCT_MEDIAN_TARGET` for the median).
    """
    tri = None
    if prefer_reconstruct:
        from certbound.enclose import reconstruct  # lazy: reconstruct imports this module

        if G.shape[0] >= reconstruct.RECONSTRUCT_MIN_ORDER:
            ref = reconstruct.householder_reflectors(G)  # ONE dsytrd for both certificates
            if ref is None:
                return None  # dsytrd failed: Theorem G-T would too (the caller runs Theorem G)
            beta_f, d_ref, e_ref = float_upper(beta), ref[1], ref[2]
            t_fro = math.sqrt(float(d_ref @ d_ref) + 2.0 * float(e_ref @ e_ref))  # ≈ ‖T‖_F (a decision)
            rough = RECONSTRUCT_PREFILTER * math.sqrt(G.shape[0]) * fperror.UNIT_ROUNDOFF * t_fro
            if _reconstruct_may_meet_target(d_ref, e_ref, beta_f, rough, margin=1.0):
                res = reconstruct.certify_reconstructed(
                    G, beta, scale_exponent, reflectors=ref,
                    predict=lambda e_estimate: _reconstruct_may_meet_target(d_ref, e_ref, beta_f, e_estimate))
                if res is not None and meets_width_target(res[0]) and _meets_median_target(res[0]):
                    return res
            tri = tridiagonal.tridiagonal_from_reflectors(*ref)
            if tri is None:
                return None
    if tri is None:
        tri = tridiagonal.householder_tridiagonal(G)
    if tri is None:
        return None
    Q, d, e = tri
    aQ = np.abs(Q)  # |Q̂| once, for both a-priori chains (exact)
    e_res = fperror.tridiagonal_residual_norm_bound(G, Q, d, e, chunk=TRIDIAGONAL_RESIDUAL_CHUNK, symmetric=True,
                                                    absQ=aQ)
    if not e_res.upper().is_finite():
        return None
    alpha = fperror.gram_deviation_bound(Q, chunk=TRIDIAGONAL_ALPHA_CHUNK, absX=aQ, block_columns=TRIDIAGONAL_ALPHA_BLOCK)
    del Q, aQ
    with working_precision():
        if not alpha.upper() < 1:
            return None
        spread = float_upper((beta + e_res) * SHIFT_SPREAD)
    lo, hi = tridiagonal.tridiagonal_eigenvalue_bounds(d, e, spread=spread if np.isfinite(spread) else 0.0)
    sig = tridiagonal_theorem_g_float_bounds(lo, hi, alpha, beta, e_res, scale_exponent)
    if sig is None:
        return None
    return sig, alpha, e_res, "gram-tri"


def _certify_eigh(G: np.ndarray, beta: arb, scale_exponent: int) -> tuple[list[arb], arb, arb, str] | None:
    """Theorem G with ``syevd``'s U, λ: ``(sigma, alpha, e, "gram")`` or None (the fallback of Theorem G-T).

    e by Lemma 3.4 (upper block triangle of the symmetric residual), α by
    Lemma 3.1, then Lemma G.4 (:func:`theorem_g_float_bounds`).
    """
    eig = _float_eigh(G)
    if eig is None:
        return None
    lam, U = eig
    # Lemma 3.4: Ĝ is exactly symmetric (rounded_gram mirrored it), so only the
    # upper block triangle of the residual is formed (no m×m temporaries).
    e = fperror.symmetric_residual_norm_bound(G, U, lam, chunk=RESIDUAL_CHUNK, symmetric=True)
    # Upper-triangle SYRKs pay off above 512 rows (measured: 13.8 vs 16.1 ms at 768, 2.1 vs 1.9 at 384).
    alpha = fperror.gram_deviation_bound(U, chunk=ALPHA_CHUNK, triangle=U.shape[0] > 512)
    del U
    sig = theorem_g_float_bounds(lam, alpha, beta, e, scale_exponent)  # Lemma G.4 (falls back to Arb)
    if sig is None:
        return None
    return sig, alpha, e, "gram"


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
    Soundness: Theorems G-T and G and Lemmas G.1–G.4, S, 3.4-T, proofs/enclosure-gram.md.
    Memory: W itself is certified when its range allows (no scaled copy);
    besides W, at most about four m×m arrays (m the small side) are alive
    (Ĝ, Q̂, |Q̂| and fl(Q̂T); before them LAPACK's workspace).
    Cost: one SYRK (m²n flops), the m×m ``dsytrd`` + ``dsterf`` of a
    values-only ``eigvalsh``, one ``dorgqr``, the upper block triangles of
    Q̂ᵀQ̂ and of one m×m GEMM and Sturm counts at 2m shifts, plus O(mn)
    passes (measured in proofs/enclosure-gram.md §5 with ``bench/bench_gram.py``).
    Small σᵢ are enclosed less tightly than in fast mode (module docstring).

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
