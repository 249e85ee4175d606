"""Stacked (batched) a-priori error bounds: :mod:`.fperror` for h matrices at once.

The small per-head products of a Transformer layer (h = 12 heads of 768×64
factors, say) cost far more in Python and numpy call overhead than in
arithmetic when each gets its own calls. Here every bound of
:mod:`.fperror` is evaluated for a stack ``(h, ·, ·)`` of matrices with one
numpy call per step, and finished in floats with *directed rounding by one
step*: after each correctly rounded operation the result is moved one float
outward (``np.nextafter``), which bounds the exact result of that operation
(proofs/enclosure.md §10, Lemma 10.1). Every returned array holds, per
stacked matrix, a float **upper bound** on the quantity named (+∞ when an
intermediate overflowed or a hypothesis failed — the caller then falls back).

The stacked products (``numpy.matmul`` on 3-D arrays: one BLAS GEMM per
slice, or numpy's own loops) and stacked LAPACK calls are ordinary float64
operations in some summation order, with or without FMA — inside the model
of proofs/enclosure.md §2 — so Lemmas 2.1–2.4, 3.1 and 3.2 hold for each
slice exactly as for the unstacked functions (§10).

>>> import numpy as np
>>> X = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 50, 5)))[0]
>>> bool(np.all(gram_deviation_upper(X) < 1e-13))
True
"""

from __future__ import annotations

import functools

import numpy as np

from certbound.ball import float_upper, working_precision
from certbound.enclose.fperror import _MAX_K, ETA, UNIT_ROUNDOFF, gamma
from certbound.enclose.tridiagonal import _rho_factor

__all__ = [
    "up",
    "down",
    "gamma_upper",
    "norm2_upper",
    "abs_product_norm2_upper",
    "abs_gram_norm2_upper",
    "abs_symmetric_product_norm2_upper",
    "gram_deviation_upper",
    "residual_norm_upper",
    "tridiagonal_residual_norm_upper",
    "tridiagonal_eigenvalue_brackets",
]

_INF = np.inf


def up(x: np.ndarray) -> np.ndarray:
    """One float toward +∞: an upper bound of the exact result of the correctly rounded operation that gave x.

    Parameters
    ----------
    x : ndarray
        Results of one correctly rounded operation each.

    Returns
    -------
    ndarray
        ``nextafter(x, +∞)`` (Lemma 10.1).

    Examples
    --------
    >>> float(up(np.array([1.0]))[0]) == 1.0 + 2.0**-52
    True
    """
    return np.nextafter(x, _INF)


def down(x: np.ndarray) -> np.ndarray:
    """One float toward −∞: a lower bound of the exact result of the operation that gave x.

    Parameters
    ----------
    x : ndarray
        Results of one correctly rounded operation each.

    Returns
    -------
    ndarray
        ``nextafter(x, −∞)`` (Lemma 10.1).

    Examples
    --------
    >>> float(down(np.array([1.0]))[0]) == 1.0 - 2.0**-53
    True
    """
    return np.nextafter(x, -_INF)


@functools.lru_cache(maxsize=None)
def gamma_upper(k: int) -> float:
    """A float ≥ γ_k (Higham's constant, evaluated in Arb, rounded up).

    Parameters
    ----------
    k : int
        The number of roundings, k·u < 1.

    Returns
    -------
    float
        ≥ γ_k = k·u/(1 − k·u) (cached per k).

    Examples
    --------
    >>> gamma_upper(2) >= 2 * 2.0**-53
    True
    """
    return float_upper(gamma(k))


@functools.lru_cache(maxsize=None)
def _inv_one_minus_gamma_upper(k: int) -> float:
    with working_precision():
        return float_upper(1 / (1 - gamma(k)))


@functools.lru_cache(maxsize=None)
def _inflate_constants(k: int) -> tuple[float, float]:
    """:func:`.fperror._inflate`'s floats ``(c, f) = (2(k+2)η, 1 + 2(k+2)u)`` for k terms (cached per k)."""
    if k > _MAX_K:
        raise ValueError("dimension too large for the a-priori error model")
    return 2.0 * (k + 2) * ETA, 1.0 + 2.0 * (k + 2) * UNIT_ROUNDOFF


def _inflate_in_place(v: np.ndarray, k: int) -> np.ndarray:
    """:func:`.fperror._inflate` written into v (a fresh temporary of the caller): ``v ← fl(fl(v + c)·f)``.

    The same two operations on the same floats, hence the same results (proofs/enclosure.md §2,
    Lemma 2.2); without numpy's error-state context, so the caller suppresses overflow warnings.
    """
    c, f = _inflate_constants(k)
    np.add(v, c, out=v)
    np.multiply(v, f, out=v)
    return v


@functools.lru_cache(maxsize=64)
def _ones(h: int, k: int) -> np.ndarray:
    """A read-only (h, k) array of ones (cached: the 𝟙 of the matrix–vector chains)."""
    x = np.ones((h, k))
    x.flags.writeable = False
    return x


def _mv(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Stacked :func:`.fperror.matvec_nonneg_upper`: upper bounds on ``M @ v`` (M, v ≥ 0).

    ``_inflate(fl(M @ v), k)`` with k = M's inner length, evaluated in place in the product's fresh
    result (:func:`_inflate_in_place`); call it under ``np.errstate(over="ignore")``.
    """
    return _inflate_in_place(np.matmul(M, v[..., None])[..., 0], M.shape[-1])


def norm2_upper(M: np.ndarray, absolute: np.ndarray | None = None) -> np.ndarray:
    """Per-slice upper bounds on ``‖M_h‖₂`` for a stack M (h, p, q): Lemma 2.3, min(Frobenius, Hölder).

    Both norms read |M| only, so the bound is also one on ``‖|M_h|‖₂`` and ``norm2_upper(|M|)`` is the same.

    Parameters
    ----------
    M : (h, p, q) float64 array
        The stack.
    absolute : (h, p, q) float64 array, optional
        ``|M|`` if the caller has it already (not recomputed; used in place of M).

    Returns
    -------
    (h,) float64 array
        ≥ ‖M_h‖₂ per slice (+∞ after an overflow).

    Examples
    --------
    >>> float(norm2_upper(np.eye(3)[None])[0]) >= 1.0
    True
    """
    h, p, q = M.shape
    if p == 0 or q == 0:
        return np.zeros(h)
    k = p * q
    with np.errstate(over="ignore", invalid="ignore"):
        A = np.abs(M) if absolute is None else absolute
        # Σ m² as one dot product per slice and the column/row sums of |M| as products with 𝟙 (BLAS:
        # 3–4× faster than numpy's reductions on small slices; each a sum of rounded nonnegative terms
        # in some order, which is all Lemma 2.2 and _sumsq_upper assume).
        flat = A.reshape(h, 1, k)
        s = np.matmul(flat, flat.transpose(0, 2, 1))[:, 0, 0]
        # Σ m² ≤ (fl(Σ m²) + 2kη)/(1 − γ_k) (fperror._sumsq_upper), each step rounded up.
        fro = up(np.sqrt(up(up(s + 2 * k * ETA) * _inv_one_minus_gamma_upper(k))))
        n1 = _mv(A.transpose(0, 2, 1), _ones(h, p)).max(axis=1)  # column sums, p terms each
        ninf = _mv(A, _ones(h, q)).max(axis=1)  # row sums, q terms each
        hoelder = up(np.sqrt(up(n1 * ninf)))
    out = np.minimum(fro, hoelder)
    return np.where(np.isfinite(out), out, _INF)


def abs_product_norm2_upper(
    Aa: np.ndarray, d: np.ndarray | None, Ba: np.ndarray
) -> np.ndarray:
    """Per-slice upper bounds on ``‖ |A| diag(|d|) |B| ‖₂`` for stacks |A| (h, m, k), |B| (h, k, n) (Lemma 2.4).

    ``Aa``, ``Ba`` must already be the entrywise absolute values.

    Parameters
    ----------
    Aa : (h, m, k) float64 array
        |A| per slice.
    d : (h, k) float64 array or None
        The middle diagonal (its absolute value is taken); None for the identity.
    Ba : (h, k, n) float64 array
        |B| per slice.

    Returns
    -------
    (h,) float64 array
        ≥ ‖|A_h| diag(|d_h|) |B_h|‖₂ per slice (+∞ after an overflow).

    Examples
    --------
    >>> I = np.eye(2)[None]
    >>> float(abs_product_norm2_upper(I, np.array([[3.0, 1.0]]), I)[0]) >= 3.0
    True
    """
    h, m, k = Aa.shape
    n = Ba.shape[2]
    if m == 0 or n == 0 or k == 0:
        return np.zeros(h)
    with np.errstate(over="ignore", invalid="ignore"):
        r = _mv(Ba, _ones(h, n))
        c = _mv(Aa.transpose(0, 2, 1), _ones(h, m))
        if d is not None:
            dd = np.abs(d)
            r = _inflate_in_place(dd * r, 1)
            c = _inflate_in_place(dd * c, 1)
        ninf = _mv(Aa, r).max(axis=1)
        n1 = _mv(Ba.transpose(0, 2, 1), c).max(axis=1)
        out = up(np.sqrt(up(ninf * n1)))
    return np.where(np.isfinite(out), out, _INF)


def abs_gram_norm2_upper(aX: np.ndarray) -> np.ndarray:
    """Per-slice upper bounds on ``‖ |X|ᵀ|X| ‖₂`` for a stack |X| (h, m, r) (Lemma 3.1's chain).

    N = |X|ᵀ|X| is symmetric and nonnegative, so ``‖N‖₂ ≤ ‖N‖_∞ =
    max_j (|X|ᵀ(|X|𝟙))_j`` (F4 with ‖N‖₁ = ‖N‖_∞): one chain of two
    nonnegative matrix–vector products bounded upward by Lemma 2.2 — half
    of :func:`abs_product_norm2_upper`'s work, and never larger than its
    ``√(‖N‖₁‖N‖_∞)`` (proofs/enclosure.md §3, Lemma 3.1; §10).

    Parameters
    ----------
    aX : ndarray, shape (h, m, r)
        The entrywise absolute values |X| (already taken).

    Returns
    -------
    ndarray, shape (h,)
        Float upper bounds (+∞ where a step overflowed).

    >>> float(abs_gram_norm2_upper(np.ones((1, 3, 2)))[0]) >= 6.0   # ‖𝟙𝟙ᵀ‖₂ = 6 for the 3×2 ones
    True
    """
    h, m, r = aX.shape
    if m == 0 or r == 0:
        return np.zeros(h)
    with np.errstate(over="ignore", invalid="ignore"):
        v = _mv(aX, _ones(h, r))  # ≥ |X|𝟙
        out = _mv(aX.transpose(0, 2, 1), v).max(axis=1)  # ≥ max_j (|X|ᵀ|X|𝟙)_j
    return np.where(np.isfinite(out), out, _INF)


def abs_symmetric_product_norm2_upper(aX: np.ndarray, d: np.ndarray | None) -> np.ndarray:
    """Per-slice upper bounds on ``‖ |X| diag(|d|) |X|ᵀ ‖₂`` for a stack |X| (h, m, r): one chain.

    N = |X| diag(|d|) |X|ᵀ is symmetric and nonnegative, so ``‖N‖₂ ≤ ‖N‖_∞ = max_i (|X|(|d| ∘
    (|X|ᵀ𝟙)))_i`` (F4 with ‖N‖₁ = ‖N‖_∞), each product bounded upward by Lemma 2.2 — the same
    vectors as the first chain of :func:`abs_product_norm2_upper` with Y = X, whose second chain
    would repeat them, and never larger than its ``√(‖N‖₁‖N‖_∞)`` (proofs/enclosure.md §10).

    Parameters
    ----------
    aX : (h, m, r) float64 array
        |X| per slice (already taken).
    d : (h, r) float64 array or None
        The middle diagonal (its absolute value is taken); None for the identity.

    Returns
    -------
    (h,) float64 array
        ≥ ‖|X_h| diag(|d_h|) |X_h|ᵀ‖₂ per slice (+∞ after an overflow).

    Examples
    --------
    >>> float(abs_symmetric_product_norm2_upper(np.ones((1, 2, 3)), np.array([[1.0, -2.0, 0.5]]))[0]) >= 7.0
    True
    """
    h, m, r = aX.shape
    if m == 0 or r == 0:
        return np.zeros(h)
    with np.errstate(over="ignore", invalid="ignore"):
        c = _mv(aX.transpose(0, 2, 1), _ones(h, m))  # ≥ |X|ᵀ𝟙
        if d is not None:
            c = _inflate_in_place(np.abs(d) * c, 1)
        out = _mv(aX, c).max(axis=1)
    return np.where(np.isfinite(out), out, _INF)


def gram_deviation_upper(X: np.ndarray, absolute: np.ndarray | None = None) -> np.ndarray:
    """Per-slice upper bounds on ``‖X_hᵀX_h − I‖₂`` for a stack X (h, m, r) (Lemma 3.1).

    Parameters
    ----------
    X : ndarray (h, m, r)
        The stack of (near-)orthonormal factors.
    absolute : ndarray (h, m, r), optional
        ``|X|`` if the caller has it already (not recomputed).

    Returns
    -------
    ndarray (h,)
        Float upper bounds, +∞ for a slice with a diagonal entry of fl(XᵀX)
        outside [1/2, 2] (where the Sterbenz step is not exact) or a non-finite bound.
    """
    h, m, r = X.shape
    if r == 0:
        return np.zeros(h)
    with np.errstate(over="ignore", invalid="ignore"):
        G = np.matmul(X.transpose(0, 2, 1), X)
    idx = np.arange(r)
    dg = G[:, idx, idx]
    ok = ((dg >= 0.5) & (dg <= 2.0)).all(axis=1)
    G[:, idx, idx] -= 1.0  # exact by Sterbenz where ok
    aX = np.abs(X) if absolute is None else absolute
    with np.errstate(over="ignore", invalid="ignore"):
        err = up(gamma_upper(m) * abs_gram_norm2_upper(aX))
        out = up(up(norm2_upper(G, np.abs(G, out=G)) + err) + up(2.0 * m * r * ETA))  # (G is a temporary)
    return np.where(ok & np.isfinite(out), out, _INF)


def residual_norm_upper(W: np.ndarray, X: np.ndarray, s: np.ndarray | None, Y: np.ndarray,
                        absolute: np.ndarray | None = None) -> np.ndarray:
    """Per-slice upper bounds on ``‖W_h − X_h diag(s_h) Y_hᵀ‖₂`` (Lemma 3.2).

    Parameters
    ----------
    W : ndarray (h, m, n)
    X : ndarray (h, m, r)
    s : ndarray (h, r), or None for s = 𝟙
        With s = 𝟙 (a QR or Cholesky residual) V = fl(diag(s)Yᵀ) = Yᵀ exactly and
        Lemma 2.4's chain for ``|X||Y|ᵀ`` needs no diagonal step.
    Y : ndarray (h, n, r)
        When ``Y is X`` (a Cholesky or eigen-residual ``W − X diag(s) Xᵀ``) the a-priori term's
        ``|X||S||X|ᵀ`` is symmetric: one chain (:func:`abs_symmetric_product_norm2_upper`), never
        larger than Lemma 2.4's two.
    absolute : ndarray (h, m, r), optional
        ``|X|`` if the caller has it already (not recomputed).

    Returns
    -------
    ndarray (h,)
        Float upper bounds (+∞ where the residual or a bound is not finite).
    """
    h, m, n = W.shape
    r = X.shape[2]
    with np.errstate(over="ignore", invalid="ignore"):
        V = Y.transpose(0, 2, 1) if s is None else s[:, :, None] * Y.transpose(0, 2, 1)
        R = np.matmul(X, V)
        np.subtract(W, R, out=R)
        aX = np.abs(X) if absolute is None else absolute
        if Y is X:
            apriori = up(gamma_upper(r + 1) * abs_symmetric_product_norm2_upper(aX, s))
        else:
            apriori = up(gamma_upper(r + 1) * abs_product_norm2_upper(aX, s, np.abs(Y).transpose(0, 2, 1)))
        maxrow = _mv(aX, _ones(h, r)).max(axis=1) if r else np.zeros(h)  # ≥ max_i Σ_l |x_il|
        # (4r + 4·max row sum + 4)·η·√(mn), each operation rounded up.
        c = up(up(4.0 * r + 4.0) + up(4.0 * maxrow))
        under = up(up(c * ETA) * up(np.sqrt(float(m * n))))
        main = up((1.0 + 2.0 * UNIT_ROUNDOFF) * norm2_upper(R, np.abs(R, out=R)))  # (R̂ is a temporary)
        out = up(up(main + apriori) + under)
    # A non-finite entry of R makes norm2_upper(R) non-finite (its Σr² is ±∞ or NaN), hence `out`.
    return np.where(np.isfinite(out), out, _INF)


def tridiagonal_residual_norm_upper(W: np.ndarray, X: np.ndarray, dg: np.ndarray, off: np.ndarray,
                                    absolute: np.ndarray | None = None) -> np.ndarray:
    """Per-slice upper bounds on ``‖W_h − X_h T_h X_hᵀ‖₂``, ``T_h = tridiag(off_h, dg_h, off_h)`` (Lemma 11.3).

    proofs/enclosure.md §11, Lemma 11.3: with ``Y = fl(X T)`` (each entry a rounded sum of ≤ 3 rounded
    products), ``R̂ = fl(W − fl(Y Xᵀ))`` (one classical product of inner length r, any order),
    ``N_T = |X||T||X|ᵀ`` and κ = 2r + 12·maxᵢ Σₗ |x_il|,
    ``‖W − XTXᵀ‖₂ ≤ (1 + 2u)‖|R̂|‖₂ + γ_{r+3}‖N_T‖₂ + κη√(mn)``; ‖N_T‖₂ ≤ ‖N_T‖_∞ by one chain
    ``_mv(|X|, _inflate(|T|·_mv(|X|ᵀ, 𝟙), 3))`` (N_T is symmetric and nonnegative), every scalar step
    rounded up (Lemma 10.1). W need not be symmetric: every entry of R̂ is computed.

    Parameters
    ----------
    W : ndarray (h, m, m)
    X : ndarray (h, m, r)
    dg : ndarray (h, r)
        The diagonals of the T_h.
    off : ndarray (h, r − 1)
        Their off-diagonals.
    absolute : ndarray (h, m, r), optional
        ``|X|`` if the caller has it already (not recomputed).

    Returns
    -------
    ndarray (h,)
        Float upper bounds (+∞ where the residual or a bound is not finite).

    Examples
    --------
    >>> X = np.eye(2)[None]
    >>> W = np.array([[[2.0, 1.0], [1.0, 3.0]]])
    >>> float(tridiagonal_residual_norm_upper(W, X, np.array([[2.0, 3.0]]), np.array([[1.0]]))[0]) < 1e-14  # a priori only
    True
    """
    h, m, n = W.shape
    r = X.shape[2]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        # Yᵀ = fl(X T)ᵀ row by row of Xᵀ (contiguous rows; no copy when X is a transposed C-ordered stack):
        # y_il = fl(fl(fl(d_l x_il) + fl(e_{l-1} x_{i,l-1})) + fl(e_l x_{i,l+1})), the terms that exist.
        Xt = X.transpose(0, 2, 1)
        if not Xt.flags.c_contiguous:
            Xt = np.ascontiguousarray(Xt)
        Yt = Xt * dg[:, :, None]
        if r > 1:
            Yt[:, 1:] += Xt[:, :-1] * off[:, :, None]
            Yt[:, :-1] += Xt[:, 1:] * off[:, :, None]
        R = np.matmul(Yt.transpose(0, 2, 1), Xt)  # fl(Y Xᵀ), inner length r
        np.subtract(W, R, out=R)
        aX = np.abs(X) if absolute is None else absolute
        # ‖N_T‖₂ ≤ max(|X|(|T|(|X|ᵀ𝟙))): Lemma 2.2 per product, the middle one with k = 3 terms
        c = _mv(aX.transpose(0, 2, 1), _ones(h, m))
        w = np.abs(dg) * c
        if r > 1:
            ae = np.abs(off)
            w[:, :-1] += ae * c[:, 1:]
            w[:, 1:] += ae * c[:, :-1]
        nT = _mv(aX, _inflate_in_place(w, 3)).max(axis=1) if r else np.zeros(h)
        apriori = up(gamma_upper(r + 3) * nT)
        maxrow = _mv(aX, _ones(h, r)).max(axis=1) if r else np.zeros(h)  # ≥ max_i Σ_l |x_il|
        kappa = up(2.0 * r + up(12.0 * maxrow))  # (2r + 12·maxrow), rounded up
        under = up(up(kappa * ETA) * up(np.sqrt(float(m * n))))
        main = up((1.0 + 2.0 * UNIT_ROUNDOFF) * norm2_upper(R, np.abs(R, out=R)))  # (R̂ is a temporary)
        out = up(up(main + apriori) + under)
    return np.where(np.isfinite(out), out, _INF)


#: The normalised Sturm recurrence (proofs/enclosure-gram.md §1a, *Normalised guard*): off-diagonals of the
#: scaled T must be 0 or ≥ this in magnitude, and every pivot ≥ _STURM_TAU (the one test).
_STURM_TINY = 2.0**-300
_STURM_TAU = 2.0**-400


#: A float K ≥ 2(√((1+u)²/(1−u)³) − 1): Lemma S's ρ ≤ K·max|eᵢ| (Arb, rounded up once; the per-matrix path's K).
_sturm_rho_factor = _rho_factor


def tridiagonal_eigenvalue_brackets(dg: np.ndarray, off: np.ndarray, approx: np.ndarray, spread: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Floats ``lo ≤ λᵢ(T_h) ≤ hi`` (descending i) for a stack of T_h = tridiag(off_h, dg_h, off_h): one Sturm pair each.

    :func:`certbound.enclose.tridiagonal.tridiagonal_eigenvalue_bounds` for all slices at once, on its
    common path only (proofs/enclosure.md §11, *Evaluation of Lemma 11.3's brackets*): T_h is scaled by a
    power of two to max|T_h| ∈ [1, 2) (slices where that is inexact, or with an off-diagonal below 2⁻³⁰⁰
    after scaling, are left to the caller); the shifts are μ = λ̂ⱼ ∓ δⱼ around the sorted approximations,
    δⱼ = spread + 2ρ + 8·ulp(λ̂ⱼ), ρ = up(K·max|eᵢ|) ≥ Lemma S's ρ; the recurrence of Lemma S in its order
    (``s = fl(e·e)``, ``q₁ = fl(d₁ − μ)``, ``qᵢ = fl(fl(dᵢ − μ) − fl(sᵢ₋₁/qᵢ₋₁))``) for every shift of every
    slice, valid under the normalised guard (min |qᵢ| ≥ 2⁻⁴⁰⁰, shifts strictly inside Gershgorin's
    interval); Corollary S with the eigenvalue's *own* two shifts: count(λ̂ⱼ − δⱼ) ≤ j − 1 gives
    λⱼ ≥ pred(fl(μ − ρ)), count(λ̂ⱼ + δⱼ) ≥ j gives λⱼ ≤ succ(fl(μ + ρ)) (j ascending, 1-based), and a
    shift beyond Gershgorin's interval gives that end. A slice is ``ok`` only when every eigenvalue got
    both bounds; the ends are scaled back by ``ldexp``, one step outward where the round trip shows it
    inexact. Proof: proofs/enclosure.md §11, Lemma 11.3 (*Evaluation*), with enclosure-gram.md §1a.

    Parameters
    ----------
    dg : ndarray (h, r)
    off : ndarray (h, r − 1)
    approx : ndarray (h, r)
        Approximate eigenvalues of each T_h (any order; any floats are valid, poor ones only fail ``ok``).
    spread : ndarray (h,)
        Extra half-widths δ of the shift pairs, ≥ 0, in T_h's units.

    Returns
    -------
    lo, hi : ndarrays (h, r)
        Descending; meaningful where ``ok``.
    ok : ndarray (h,) of bool

    Examples
    --------
    >>> lo, hi, ok = tridiagonal_eigenvalue_brackets(np.array([[2.0, 2.0]]), np.array([[1.0]]),
    ...                                              np.array([[1.0, 3.0]]), np.zeros(1))
    >>> bool(ok[0]) and bool(lo[0, 0] <= 3.0 <= hi[0, 0] and lo[0, 1] <= 1.0 <= hi[0, 1])
    True
    """
    h, r = dg.shape
    ok = (np.isfinite(dg).all(axis=1) & np.isfinite(off).all(axis=1) & np.isfinite(approx).all(axis=1)
          & np.isfinite(spread) & (spread >= 0))
    with np.errstate(all="ignore"):
        tmax = np.maximum(np.abs(dg).max(axis=1, initial=0.0), np.abs(off).max(axis=1, initial=0.0))
        ok &= tmax > 0
        t = np.where(ok, 1 - np.frexp(np.where(ok, tmax, 1.0))[1], 0).astype(np.int64)
        tc = t[:, None]
        ds, es = np.ldexp(dg, tc), np.ldexp(off, tc)
        ok &= (np.ldexp(ds, -tc) == dg).all(axis=1) & (np.ldexp(es, -tc) == off).all(axis=1)  # 2^t·T exact
        ae = np.abs(es)
        ok &= ((es == 0) | (ae >= _STURM_TINY)).all(axis=1)
        ds = np.where(ok[:, None], ds, 0.0)  # (other slices: harmless values, never used)
        es = np.where(ok[:, None], es, 0.0)
        ae = np.abs(es)
        rho = up(_sturm_rho_factor() * ae.max(axis=1, initial=0.0))
        # Gershgorin on the scaled T (tridiagonal.gershgorin_bounds, one step outward per rounding)
        a = np.zeros((h, r))
        if r > 1:
            a[:, :-1] = ae
            a[:, 1:] = np.where(a[:, 1:] == 0, ae, up(a[:, 1:] + ae))
        glo = np.where(a == 0, ds, down(ds - a)).min(axis=1)
        ghi = np.where(a == 0, ds, up(ds + a)).max(axis=1)
        lam = np.sort(np.where(ok[:, None], np.ldexp(approx, tc), 0.0), axis=1)
        delta = np.ldexp(np.where(ok, spread, 0.0), t)[:, None] + 2.0 * rho[:, None] + 8.0 * np.spacing(np.abs(lam))
        mu = np.concatenate([lam - delta, lam + delta], axis=1)  # (h, 2r): lower shifts, then upper ones
        inside = np.isfinite(mu) & (mu > glo[:, None]) & (mu < ghi[:, None])
        run = np.where(inside, mu, 0.0)  # |μ| ≤ 8 for every shift run (the others' counts are not used)
        Q = ds.T[:, :, None] - run[None, :, :]  # fl(dᵢ − μ), every row i (axis 0: each row contiguous)
        s = (es * es).T[:, :, None]  # fl(eᵢ·eᵢ), once
        buf = np.empty((h, 2 * r))
        for i in range(1, r):
            np.divide(s[i - 1], Q[i - 1], out=buf)  # fl(sᵢ₋₁/qᵢ₋₁)
            np.subtract(Q[i], buf, out=Q[i])  # fl(fl(dᵢ − μ) − fl(sᵢ₋₁/qᵢ₋₁))
        counts = np.count_nonzero(Q < 0, axis=0)
        valid = inside & (np.abs(Q, out=Q).min(axis=0) >= _STURM_TAU)  # (NaN fails; Q is a temporary)
        j = np.arange(r)
        # Corollary S with the own shift, or Gershgorin's end where the shift lies beyond it (no ρ needed there)
        low_ok, high_ok = valid[:, :r] & (counts[:, :r] <= j), valid[:, r:] & (counts[:, r:] >= j + 1)
        low_g, high_g = mu[:, :r] <= glo[:, None], mu[:, r:] >= ghi[:, None]
        ok &= (low_ok | low_g).all(axis=1) & (high_ok | high_g).all(axis=1)
        lo_s = np.where(low_ok, down(run[:, :r] - rho[:, None]), glo[:, None])
        hi_s = np.where(high_ok, up(run[:, r:] + rho[:, None]), ghi[:, None])
        lo, hi = np.ldexp(lo_s, -tc), np.ldexp(hi_s, -tc)
        lo = np.where(np.ldexp(lo, tc) == lo_s, lo, down(lo))
        hi = np.where(np.ldexp(hi, tc) == hi_s, hi, up(hi))
    return lo[:, ::-1], hi[:, ::-1], ok
