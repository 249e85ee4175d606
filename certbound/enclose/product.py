"""Singular values of a product ``W = A Bᵀ`` without forming it.

Attention's per-head query–key and value–output matrices are such products of
thin factors (A: m×d, B: n×d, d ≪ m, n). The certified object is the *exact*
product of the stored factors — not a rounded formed product.

Lemma P (proofs/enclosure.md §6). Let ``A = Q_A R_A + E_A`` and
``B = Q_B R_B + E_B`` exactly (Q, R float64 from a thin QR; E the exact
residuals), ``‖Q_AᵀQ_A − I‖₂ ≤ α_A < 1``, ``‖Q_BᵀQ_B − I‖₂ ≤ α_B < 1``, and let
``C = R_A R_Bᵀ`` (exact, d_A×d_B). Then for i ≤ min(d_A, d_B)

    σᵢ(C)√((1−α_A)(1−α_B)) − ε ≤ σᵢ(A Bᵀ) ≤ σᵢ(C)√((1+α_A)(1+α_B)) + ε,
    ε = ‖Q_A R_A‖₂‖E_B‖₂ + ‖E_A‖₂‖B‖₂,

and σᵢ(A Bᵀ) = 0 exactly for i > min(d_A, d_B) (rank ≤ d). σᵢ(C) is
enclosed by Theorem R applied to ``fl(C)`` with the rounding of ``fl(C)``
added to its residual (Weyl). Cost O((m+n)d² + d³).

:func:`enclose_singular_values_of_products` certifies a list of products at
once: same-shaped ones (the heads of a layer) share stacked QRs, one batched
SVD of the d×d cores and stacked a-priori bounds finished in floats with
directed rounding (:mod:`._stacked`, proofs/enclosure.md §10) — the same
Lemma P, without per-head Python and numpy call overhead.

Mode ``auto`` first tries Lemma 11.2 (proofs/enclosure.md §11, Theorem G for
a product): σᵢ(ABᵀ)² are the eigenvalues of ``G_A^{1/2} G_B G_A^{1/2}``
(``G = FᵀF``), within ``‖AᵀA‖₂‖BᵀB − LLᵀ‖₂`` of those of ``LᵀAᵀAL`` for a
float Cholesky factor L of ``fl(BᵀB)``, which Theorem G encloses from one
batched ``eigh`` — the float pipeline's own work (two Gram matrices, one
Cholesky, one small eigenproblem) plus a-posteriori bounds; products whose
balls miss auto's width target go to Lemma P-G and then Lemma P.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> A, B = rng.standard_normal((30, 4)), rng.standard_normal((20, 4))
>>> enc = enclose_singular_values_of_product(A, B)
>>> s = np.linalg.svd(A @ B.T, compute_uv=False)
>>> bool(np.all(enc.lower[:4] <= s[:4]) and np.all(s[:4] <= enc.upper[:4]))
True
>>> enc.rank.upper, float(enc.upper[4])
(4, 0.0)
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
from flint import arb
from scipy.linalg.blas import dgemm as _dgemm
from scipy.linalg.blas import dtrmm as _dtrmm
import scipy.linalg.lapack as _lapack
from scipy.linalg.lapack import dtrtri as _dtrtri

from certbound._blas import single_threaded
from certbound.ball import float_lower, float_upper, under_float_model, working_precision
from certbound.enclose import _stacked, fperror
from certbound.enclose._input import as_exact_float64_matrix, power_of_two_scaling
from certbound.enclose._stacked import down, up
from certbound.enclose.fperror import ETA
from certbound.enclose.gram import SHIFT_SPREAD, _outward_sqrt, _outward_squares
from certbound.enclose.quantities import _norm_21_from_gram_stack, _norm_21_from_quadratic_forms, norm_21_of_products
from certbound.enclose.tridiagonal import tridiagonal_eigenvalue_bounds
from certbound.enclose.svd import (
    AUTO_RELATIVE_TARGET,
    AUTO_SPECTRUM_FRACTION,
    MODES,
    RankBounds,
    SingularValueEnclosure,
    _build,
    _build_from_bounds,
    _certify_dense,
    _hull_balls,
    _zero_enclosure,
    trivial_enclosure,
)

__all__ = ["enclose_singular_values_of_product", "enclose_singular_values_of_products",
           "enclose_singular_values_and_norms_21_of_products"]

_MIN_NORMAL = 2.0**-1022


def enclose_singular_values_of_product(A: Any, B: Any, mode: str = "fast") -> SingularValueEnclosure:
    """Certified singular values of ``A @ B.T`` (never formed).

    Parameters
    ----------
    A : array_like, m×d
    B : array_like, n×d
        Thin factors as stored (any float dtype; converted exactly).
    mode : {"fast", "tight", "arb", "gram", "auto"}
        Certificate mode for the small d×d core (the factor QRs always use
        the fast a-priori bounds). ``auto``: Lemma 11.2 (Theorem G for the
        product) where its balls meet auto's width target, else Lemma P-G or
        Lemma P with a ``fast`` core. Default ``"fast"``, as every kernel
        function (the pipeline and the CLI default to ``"auto"`` and pass it).

    Returns
    -------
    SingularValueEnclosure
        Shape (m, n); ``sigma[i]`` is exactly 0 for i ≥ min(d, m, n) and
        ``rank.upper ≤ d``. Proof: Lemma P, proofs/enclosure.md §6 (§10 for
        the stacked evaluation it shares with
        :func:`enclose_singular_values_of_products`); in mode ``auto``
        Lemma 11.2 or Lemma P-G (§11).

    Raises
    ------
    ValueError
        If the inner dimensions differ, an entry is NaN/Inf, or the mode is unknown.
    """
    return enclose_singular_values_of_products([A], [B], mode=mode)[0]


@under_float_model
def enclose_singular_values_of_products(
    As: Sequence[Any], Bs: Sequence[Any], mode: str = "fast"
) -> list[SingularValueEnclosure]:
    """Certified singular values of every ``As[i] @ Bs[i].T`` (never formed), batched.

    Products whose factors have the same shapes (e.g. all heads of one
    layer) are certified together: one stacked QR per side, one batched SVD
    of the small cores, stacked a-priori bounds. The result for each product
    is the enclosure :func:`enclose_singular_values_of_product` documents.

    Parameters
    ----------
    As, Bs : sequences of array_like, ``As[i]`` m_i×d_i and ``Bs[i]`` n_i×d_i.
    mode : as for :func:`enclose_singular_values_of_product` (default ``"fast"``).

    Returns
    -------
    list of SingularValueEnclosure, in input order.

    Raises
    ------
    ValueError
        Different lengths, inner dimensions that differ, NaN/Inf entries, unknown mode.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> As = [rng.standard_normal((20, 3)) for _ in range(4)]
    >>> Bs = [rng.standard_normal((15, 3)) for _ in range(4)]
    >>> encs = enclose_singular_values_of_products(As, Bs)
    >>> ref = [np.linalg.svd(a @ b.T, compute_uv=False)[:3] for a, b in zip(As, Bs)]  # rank 3
    >>> all(bool(np.all((e.lower[:3] <= s) & (s <= e.upper[:3]))) for e, s in zip(encs, ref))
    True
    >>> [e.rank.upper for e in encs], float(encs[0].upper[3])
    ([3, 3, 3, 3], 0.0)
    """
    return _enclose_products(As, Bs, mode, norms_21=False)[0]


@under_float_model
def enclose_singular_values_and_norms_21_of_products(
    As: Sequence[Any], Bs: Sequence[Any], mode: str = "fast"
) -> tuple[list[SingularValueEnclosure], list[arb]]:
    """:func:`enclose_singular_values_of_products` and ``‖As[i] @ Bs[i].T‖_{2,1}`` together.

    The enclosures are those :func:`enclose_singular_values_of_products`
    returns; each norm ball contains ``‖As[i] @ Bs[i].T‖_{2,1}`` as
    :func:`certbound.enclose.quantities.norm_21_of_products`' does. Where
    Lemma 11.2 or Lemma P-G certifies a product (mode ``"auto"``), its norm
    reuses that route's Gram matrix ``fl(AᵀA)`` of the left factor and its
    bound on ‖|A|ᵀ|A|‖₂, which are what Lemma 8.1 needs (proofs/enclosure.md
    §8, "Shared with Lemma P-G"); every other product's norm comes from
    :func:`~certbound.enclose.quantities.norm_21_of_products`.

    Parameters
    ----------
    As, Bs : sequences of array_like, ``As[i]`` m_i×d_i and ``Bs[i]`` n_i×d_i.
    mode : as for :func:`enclose_singular_values_of_product` (default ``"fast"``, the kernel's default;
        the pipeline passes ``"auto"``).

    Returns
    -------
    encs : list of SingularValueEnclosure, in input order.
    norms : list of arb
        Nonnegative balls containing ``‖As[i] @ Bs[i].T‖_{2,1}``, in input order.

    Raises
    ------
    ValueError
        As :func:`enclose_singular_values_of_products`.

    Notes
    -----
    The default mode was ``"auto"`` until session 6; it is now ``"fast"``, the default of every
    other kernel function (:func:`certbound.enclose.enclose_singular_values`,
    :func:`enclose_singular_values_of_product`, :func:`enclose_singular_values_of_products`;
    README, "The certified kernel"). Every mode is certified, so the balls stay valid; a caller
    that relied on the old default now gets ``fast``'s enclosures (and their norms from
    :func:`~certbound.enclose.quantities.norm_21_of_products`) and should pass ``mode="auto"`` for the
    old behaviour, as :func:`certbound.pipeline._spectrum.enclose_theory_matrices` does.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> As = [rng.standard_normal((20, 3)) for _ in range(2)]
    >>> Bs = [rng.standard_normal((15, 3)) for _ in range(2)]
    >>> encs, n21 = enclose_singular_values_and_norms_21_of_products(As, Bs, mode="auto")
    >>> [bool(x.contains(float(np.linalg.norm(a @ b.T, axis=0).sum()))) for x, a, b in zip(n21, As, Bs)]
    [True, True]
    """
    encs, norms, factors = _enclose_products(As, Bs, mode, norms_21=True)
    rest = [i for i, x in enumerate(norms) if x is None]
    if rest:
        for i, x in zip(rest, norm_21_of_products([factors[i][0] for i in rest], [factors[i][1] for i in rest])):
            norms[i] = x
    return encs, norms  # type: ignore[return-value]


def _enclose_products(As: Sequence[Any], Bs: Sequence[Any], mode: str, norms_21: bool
                      ) -> tuple[list[SingularValueEnclosure], list[arb | None], list[tuple[np.ndarray, np.ndarray]]]:
    """The body of :func:`enclose_singular_values_of_products` (and of the variant with norms).

    Parameters
    ----------
    As, Bs, mode : as for :func:`enclose_singular_values_of_products`.
    norms_21 : bool
        Also return ‖·‖_{2,1} balls where the Gram matrices of Lemma 11.2 or Lemma P-G give them (None elsewhere).

    Returns
    -------
    encs : list of SingularValueEnclosure
    norms : list of arb or None
    factors : list of (A, B)
        The exact float64 factors, for the caller's remaining norms.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if len(As) != len(Bs):
        raise ValueError(f"{len(As)} left factors but {len(Bs)} right factors")
    out: list[SingularValueEnclosure | None] = [None] * len(As)
    norms: list[arb | None] = [None] * len(As)
    factors: list[tuple[np.ndarray, np.ndarray]] = []
    groups: dict[tuple[tuple[int, int], tuple[int, int]], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    unchecked: set[int] = set()  # float64 factors taken as they are: finiteness still to be checked
    for i, (A, B) in enumerate(zip(As, Bs)):
        A, a_ok = _float64_factor(A, "A")
        B, b_ok = _float64_factor(B, "B")
        if not (a_ok and b_ok):
            unchecked.add(i)
        if A.shape[1] != B.shape[1]:
            raise ValueError(f"inner dimensions differ: A is {A.shape}, B is {B.shape} (W = A @ B.T)")
        factors.append((A, B))
        shape = (A.shape[0], B.shape[0])
        if min(shape) == 0 or A.shape[1] == 0 or not _has_nonzero(A) or not _has_nonzero(B):
            if i in unchecked:  # (the other factor may hold NaN/Inf)
                _check_finite([i], factors)
            out[i] = _zero_enclosure(shape)
            continue
        groups.setdefault((A.shape, B.shape), []).append((i, A, B))
    if mode != "auto":
        _check_finite(unchecked, factors)
    with single_threaded():  # small products: one BLAS thread (certbound._blas)
        for items in groups.values():
            idx = [t[0] for t in items]
            As_g, Bs_g = [t[1] for t in items], [t[2] for t in items]
            done: list[SingularValueEnclosure | None] = [None] * len(items)
            if mode == "auto":
                # Lemma 11.2 (Theorem G on LᵀAᵀAL) where it meets the target; Lemma P-G (Gram
                # factors, no m×d Q formed) for the others; Lemma P with QR factors for the rest.
                done, n21, finite = _certify_stack_theorem_g(As_g, Bs_g, norms_21)
                # A NaN/Inf entry makes its column's diagonal Gram entry NaN/Inf: only those factors need
                # the full check (which raises the usual error); the others are finite.
                _check_finite(unchecked.intersection(i for i, f in zip(idx, finite) if not f), factors)
                for i, x in zip(idx, n21):
                    norms[i] = x
                again = [j for j, e in enumerate(done) if e is None]
                if again:
                    more, n21 = _certify_stack_gram([As_g[j] for j in again], [Bs_g[j] for j in again],
                                                    norms_21 and any(norms[idx[j]] is None for j in again))
                    for j, enc, x in zip(again, more, n21):
                        done[j] = enc
                        if norms[idx[j]] is None:
                            norms[idx[j]] = x
            rest = [j for j, e in enumerate(done) if e is None]
            if rest:
                for j, enc in zip(rest, _certify_stack([As_g[j] for j in rest], [Bs_g[j] for j in rest],
                                                       "fast" if mode == "auto" else mode)):
                    done[j] = enc
            for i, enc in zip(idx, done):
                out[i] = enc
    return out, norms, factors  # type: ignore[return-value]


def _float64_factor(F: Any, name: str) -> tuple[np.ndarray, bool]:
    """``(F as exact float64, checked)``: a C-contiguous 2-D float64 ndarray is taken as it is, unchecked.

    Everything else goes through :func:`~certbound.enclose._input.as_exact_float64_matrix` (conversion
    and all its checks, ``checked`` True). For an unchecked factor the caller must still reject NaN/Inf
    entries (:func:`_check_finite`) before any bound on it is returned.
    """
    if type(F) is np.ndarray and F.dtype == np.float64 and F.ndim == 2 and F.flags.c_contiguous:
        return F, False
    return as_exact_float64_matrix(F, name), True


def _check_finite(indices: Any, factors: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Run :func:`~certbound.enclose._input.as_exact_float64_matrix`'s checks on the factors of these products.

    Raises
    ------
    ValueError
        For a NaN/Inf entry, with the message of the unbatched check.
    """
    for i in sorted(indices):
        as_exact_float64_matrix(factors[i][0], "A")
        as_exact_float64_matrix(factors[i][1], "B")


def _has_nonzero(F: np.ndarray) -> bool:
    """``bool(np.any(F))`` for a nonempty array, without a pass over F when its first entry is nonzero.

    Parameters
    ----------
    F : ndarray, nonempty

    Returns
    -------
    bool
        Whether some entry of F is nonzero.
    """
    return bool(F.flat[0] != 0) or bool(np.any(F))


def _scaled_stack(Fs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact power-of-two scaling of each factor (§5), stacked.

    Vectorised :func:`power_of_two_scaling`: slice j is multiplied by 2^k_j with
    max|·| ∈ [1, 2); exact unless scaling down makes entries subnormal.

    Parameters
    ----------
    Fs : list of h ndarrays of one shape (p, q)

    Returns
    -------
    S : ndarray (h, p, q)
        The scaled factors.
    k : ndarray (h,) of int
        The exponents (S_j = fl(2^k_j F_j)).
    exact : ndarray (h,) of bool
        Where the scaling was exact.
    """
    S = np.stack(Fs)
    amax = np.maximum(S.max(axis=(1, 2)), -S.min(axis=(1, 2)))
    if not np.all(amax > 0):  # (zero factors are handled before; keep the scalar path for safety)
        sc = [power_of_two_scaling(F) for F in Fs]
        return np.stack([t[0] for t in sc]), np.array([t[1] for t in sc]), np.array([t[2] for t in sc])
    k = -(np.frexp(amax)[1] - 1)
    if not np.all((k >= -1022) & (k <= 1023)):
        sc = [power_of_two_scaling(F) for F in Fs]
        return np.stack([t[0] for t in sc]), np.array([t[1] for t in sc]), np.array([t[2] for t in sc])
    exact = np.ones(len(Fs), dtype=bool)
    down_ = np.flatnonzero(k < 0)
    if len(down_):
        A = np.abs(S[down_])
        tiny = np.ldexp(1.0, -1022 - k[down_])[:, None, None]
        exact[down_] = ~np.any((A > 0) & (A < tiny), axis=(1, 2))
    S *= np.ldexp(1.0, k)[:, None, None]  # a power of two, exact where `exact`
    return S, k, exact


def _sqrt_product_bounds(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float bounds ``lo ≤ √((1−a)(1−b))`` and ``hi ≥ √((1+a)(1+b))`` for 0 ≤ a, b < 1 (Lemma 10.1).

    Parameters
    ----------
    a, b : ndarrays of floats in [0, 1)

    Returns
    -------
    lo, hi : ndarrays
        Elementwise bounds (lo clamped at 0; each operation stepped one float outward).
    """
    with np.errstate(invalid="ignore"):
        lo = down(np.sqrt(down(down(1.0 - a) * down(1.0 - b))))
        hi = up(np.sqrt(up(up(1.0 + a) * up(1.0 + b))))
    return np.where(np.isfinite(lo), np.maximum(lo, 0.0), 0.0), hi


def _core_fast_stacked(C: np.ndarray, dC: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Theorem R for every core at once (fast mode; proofs/enclosure.md §1, §10).

    Parameters
    ----------
    C : ndarray, shape (h, p, q)
        The float cores ``fl(R_A R_Bᵀ)``.
    dC : ndarray, shape (h,)
        Float upper bounds on ``‖fl(C) − C‖₂`` (added to the residual: Weyl).

    Returns
    -------
    lower, upper : ndarrays (h, min(p, q))
        Float bounds on the σᵢ of the exact cores (valid where ``ok``).
    ok : ndarray (h,) of bool
        Where the certificate succeeded.
    e : ndarray (h,)
        The residual bounds used (including dC).
    """
    h, p, q = C.shape
    k = min(p, q)
    try:
        U, s, Vt = np.linalg.svd(C, full_matrices=False)
    except np.linalg.LinAlgError:
        return np.zeros((h, k)), np.full((h, k), np.inf), np.zeros(h, dtype=bool), np.full(h, np.inf)
    finite = np.all(np.isfinite(U.reshape(h, -1)), axis=1) & np.all(np.isfinite(Vt.reshape(h, -1)), axis=1) & \
        np.all(np.isfinite(s), axis=1)
    V = Vt.transpose(0, 2, 1)
    if p == q:  # ‖UᵀU − I‖₂ and ‖VᵀV − I‖₂ as one stack of 2h slices (each as on its own, §10)
        g = _stacked.gram_deviation_upper(np.concatenate([U, V]))
        al, be = g[:h], g[h:]
    else:
        al = _stacked.gram_deviation_upper(U)
        be = _stacked.gram_deviation_upper(V)
    e = up(_stacked.residual_norm_upper(C, U, s, V) + dC)
    ok = finite & (al < 1) & (be < 1) & np.isfinite(e)
    s = -np.sort(-np.abs(s), axis=1)  # Theorem R uses the sorted |sᵢ|
    dn, upf = _sqrt_product_bounds(np.where(ok, al, 0.0), np.where(ok, be, 0.0))
    lo = np.maximum(down(down(s * dn[:, None]) - e[:, None]), 0.0)
    hi = up(up(s * upf[:, None]) + e[:, None])
    return lo, hi, ok, e


def _certify_stack(As: list[np.ndarray], Bs: list[np.ndarray], mode: str) -> list[SingularValueEnclosure]:
    """Lemma P for h same-shaped products (nonzero factors); proofs/enclosure.md §6 and §10.

    Parameters
    ----------
    As, Bs : lists of h ndarrays, m×d and n×d
        Exact float64 factors, none zero.
    mode : str
        The core's certificate: ``"fast"`` batched (§10); any other mode per core through
        :func:`svd._certify_dense` with its fallbacks.

    Returns
    -------
    list of h SingularValueEnclosure
        Trivial (with a warning) where a factor or core certificate failed.
    """
    h = len(As)
    m, d = As[0].shape
    n = Bs[0].shape[0]
    shape = (m, n)
    k = min(m, n)
    SA, ea, exa = _scaled_stack(As)
    SB, eb, exb = _scaled_stack(Bs)
    QA, RA = np.linalg.qr(SA)  # stacked Householder QR (LAPACK geqrf per slice)
    QB, RB = np.linalg.qr(SB)
    dA, dB = RA.shape[1], RB.shape[1]
    r = min(dA, dB)  # structural rank bound, also ≤ d
    alA = _stacked.gram_deviation_upper(QA)
    alB = _stacked.gram_deviation_upper(QB)
    eA = _stacked.residual_norm_upper(SA, QA, None, RA.transpose(0, 2, 1))
    eB = _stacked.residual_norm_upper(SB, QB, None, RB.transpose(0, 2, 1))
    with working_precision():
        # Rounded subnormals from scaling down enter the factor residuals (§5).
        sub_a = float_upper(arb(m * d).sqrt() * arb(2) ** -1075)
        sub_b = float_upper(arb(n * d).sqrt() * arb(2) ** -1075)
        dC_const = float_upper(2 * d * arb(ETA) * arb(dA * dB).sqrt())
    with np.errstate(over="ignore", invalid="ignore"):
        eA = up(eA + np.where(exa, 0.0, sub_a))
        eB = up(eB + np.where(exb, 0.0, sub_b))
        normB = up(_stacked.norm2_upper(SB) + np.where(exb, 0.0, sub_b))
        normQARA = up(_stacked.norm2_upper(SA) + eA)
        eps = up(up(normQARA * eB) + up(eA * normB))
        ok_factors = (alA < 1) & (alB < 1) & np.isfinite(eps)
        # C = R_A R_Bᵀ: fl(C) and the Weyl perturbation of its rounding.
        C = np.matmul(RA, RB.transpose(0, 2, 1))
        dC = up(up(_stacked.gamma_upper(d) * _stacked.abs_product_norm2_upper(
            np.abs(RA), None, np.abs(RB).transpose(0, 2, 1))) + dC_const)
    if mode == "fast":
        lo_c, hi_c, ok_c, e_c = _core_fast_stacked(C, dC)
    else:
        lo_c, hi_c, ok_c, e_c = np.zeros((h, r)), np.full((h, r), np.inf), np.zeros(h, dtype=bool), np.full(h, np.inf)
    lo_c, hi_c = lo_c[:, :r], hi_c[:, :r]
    dn, upf = _sqrt_product_bounds(np.where(ok_factors, alA, 0.0), np.where(ok_factors, alB, 0.0))
    out: list[SingularValueEnclosure | None] = [None] * h
    batched = ok_factors & ok_c
    sel = np.flatnonzero(batched)
    if len(sel):  # the batched core certificates: finished as one stack (each row as in the loop below)
        with np.errstate(over="ignore", invalid="ignore"):
            lo = np.maximum(down(down(lo_c[sel] * dn[sel, None]) - eps[sel, None]), 0.0)
            hi = up(up(hi_c[sel] * upf[sel, None]) + eps[sel, None])
            resid = up(eps[sel] + up(e_c[sel] * upf[sel]))
        for j, enc in zip(sel.tolist(), _finish_stack(shape, k, r, lo, hi, -(ea[sel] + eb[sel]), alA[sel], alB[sel],
                                                      resid)):
            out[j] = enc
    for j in np.flatnonzero(~batched).tolist():
        if not ok_factors[j]:
            out[j] = trivial_enclosure(shape, "factor QR certificate failed", r)
            continue
        # The batched core certificate failed (or another mode was asked
        # for): the per-matrix chain, with its driver/mode fallbacks.
        with working_precision():
            res = _certify_dense(C[j], mode, arb(float(dC[j])), 0)
        if res is None:
            out[j] = trivial_enclosure(shape, "certificate of the small core failed", r)
            continue
        lc = np.array([max(float_lower(x), 0.0) for x in res[0]])
        hc = np.array([float_upper(x) for x in res[0]])
        eC = float_upper(res[3])
        with np.errstate(over="ignore", invalid="ignore"):
            lo = np.maximum(down(down(lc * dn[j]) - eps[j]), 0.0)
            hi = up(up(hc * upf[j]) + eps[j])
            # residual field: ε + e_C·√((1+α_A)(1+α_B)) (in the scaled units)
            resid = float(up(eps[j] + up(eC * upf[j])))
        t = -int(ea[j] + eb[j])
        out[j] = _finish(shape, k, r, lo, hi, t, float(alA[j]), float(alB[j]), resid)
    return out  # type: ignore[return-value]


#: Lemma P-G is used (mode "auto") only when both factor bounds α ≤ this:
#: the σᵢ then carry a relative width ≲ α from the factors, far below the
#: 1e-8 target of mode "auto" (proofs/enclosure.md §11).
GRAM_FACTOR_MAX_ALPHA = 2.0**-33


@functools.lru_cache(maxsize=None)
def _gram_underflow_upper(m: int, d: int) -> float:
    """A float ≥ 2mdη: the underflow part of ‖AᵀA − fl(AᵀA)‖₂ for an m×d factor (§11)."""
    with working_precision():
        return float_upper(2 * m * d * arb(ETA))


@functools.lru_cache(maxsize=None)
def _core_underflow_upper(d: int, dA: int, dB: int) -> float:
    """A float ≥ 2dη√(d_A d_B): the underflow part of ‖fl(R_A R_Bᵀ) − R_A R_Bᵀ‖₂ (§6)."""
    with working_precision():
        return float_upper(2 * d * arb(ETA) * arb(dA * dB).sqrt())


def _upper_triangular_inverses(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float approximations X ≈ R⁻¹ for a stack of upper triangular R (LAPACK dtrtri).

    Any X serves Lemma 11.1 (δ ≥ ‖I − XR‖₂ is computed for the X returned).

    Parameters
    ----------
    R : ndarray (h, d, d)
        Upper triangular slices (here transposed C-ordered Cholesky factors: column-major, no copy).

    Returns
    -------
    X : ndarray (h, d, d)
        The inverses (0 where LAPACK reported a zero diagonal entry).
    ok : ndarray (h,) of bool
        False for those slices.
    """
    h, d, _ = R.shape
    X = np.empty_like(R)
    ok = np.ones(h, dtype=bool)
    for j in range(h):
        inv, info = _dtrtri(R[j], lower=0)  # R[j] (a transposed C-ordered L) is already column-major
        ok[j] = info == 0
        X[j] = inv if info == 0 else 0.0
    return X, ok


def _cholesky_stack(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float Cholesky factors ``L`` (lower) of a stack of Gram matrices; slice by slice if the batched call fails.

    Nothing about their accuracy is assumed (the callers bound ‖Ĝ − LLᵀ‖₂ a posteriori).

    Parameters
    ----------
    G : ndarray (h, d, d)

    Returns
    -------
    L : ndarray (h, d, d)
        The identity where a slice is not numerically positive definite.
    ok : ndarray (h,) of bool
        False for those slices.
    """
    h, d, _ = G.shape
    ok = np.ones(h, dtype=bool)
    try:
        return np.linalg.cholesky(G), ok
    except np.linalg.LinAlgError:
        L = np.zeros((h, d, d))
        for j in range(h):
            try:
                L[j] = np.linalg.cholesky(G[j])
            except np.linalg.LinAlgError:
                ok[j] = False
                L[j] = np.eye(d)
        return L, ok


def _gram_factor_stack(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gram factors of a stack of factors (Lemma 11.1, proofs/enclosure.md §11): ``(R, alpha)``.

    :func:`_gram_factor_chain` without its Gram matrices.

    Parameters
    ----------
    S : ndarray, shape (h, m, d)

    Returns
    -------
    R, alpha : as :func:`_gram_factor_chain`.
    """
    R, alpha, _, _ = _gram_factor_chain(S)
    return R, alpha


def _gram_factor_chain(S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gram factors of a stack of factors (Lemma 11.1, proofs/enclosure.md §11), with the Gram matrices used.

    Parameters
    ----------
    S : ndarray, shape (h, m, d)
        Exact float64 factors (already power-of-two scaled), one per slice.

    Returns
    -------
    R : ndarray, shape (h, d, d)
        Upper triangular float matrices; ``Q := S_j R_j⁻¹`` (exact, never
        formed) gives ``S_j = Q R_j`` exactly.
    alpha : ndarray, shape (h,)
        Float upper bounds on ``‖QᵀQ − I‖₂`` per slice; +∞ where the
        certificate fails (Cholesky or inversion fails, δ ≥ 1, overflow).
    G : ndarray, shape (h, d, d)
        ``fl(S_jᵀS_j)`` (one SYRK per slice: each entry one rounded dot product of length m).
    nK : ndarray, shape (h,)
        Floats ≥ ‖|S_j|ᵀ|S_j|‖₂ (Lemma 3.1's chain).
    """
    h, m, d = S.shape
    # syrk per slice; each entry one rounded dot product. Cholesky reads the lower triangle; eRR is
    # computed for the whole Ĝ, whose every entry obeys Lemma 2.1, so Ĝ need not be symmetric (it is).
    G = np.stack([F.T @ F for F in S])
    nK = _stacked.abs_gram_norm2_upper(np.abs(S))
    with np.errstate(over="ignore", invalid="ignore"):
        errG = up(up(_stacked.gamma_upper(m) * nK) + _gram_underflow_upper(m, d))
    L, ok = _cholesky_stack(G)
    R = L.transpose(0, 2, 1)
    X, inverted = _upper_triangular_inverses(R)  # X ≈ R⁻¹ (any matrix would do)
    ok &= inverted
    with np.errstate(over="ignore", invalid="ignore"):
        # ‖Ĝ − RᵀR‖₂ = ‖Ĝ − L·Lᵀ‖₂ and δ ≥ ‖I − X R‖₂ = ‖I − X·Lᵀ‖₂: both Lemma 3.2 with Y = L.
        eRR = _stacked.residual_norm_upper(G, L, None, L)
        delta = _stacked.residual_norm_upper(np.broadcast_to(np.eye(d), (h, d, d)), X, None, L)
        ok &= np.isfinite(delta) & (delta < 1)
        rinv = up(_stacked.norm2_upper(X) / down(1.0 - np.where(ok, delta, 0.0)))  # ≥ ‖R⁻¹‖₂
        a = up(up(rinv * rinv) * up(errG + eRR))
    alpha = np.where(ok & np.isfinite(a), a, np.inf)
    return R, alpha, G, nK


def _certify_stack_gram(As: list[np.ndarray], Bs: list[np.ndarray], norms_21: bool = False
                        ) -> tuple[list[SingularValueEnclosure | None], list[arb | None]]:
    """Lemma P-G for h same-shaped products (proofs/enclosure.md §11, evaluated as in §10).

    Parameters
    ----------
    As, Bs : lists of h ndarrays, m×d and n×d
        Exact float64 factors with nonzero entries somewhere, same shapes within each list.
    norms_21 : bool
        Also evaluate ``‖A Bᵀ‖_{2,1}`` by Lemma 8.1 from the Gram matrices of
        the left factors computed here (proofs/enclosure.md §8, "Shared with
        Lemma P-G").

    Returns
    -------
    encs : list of SingularValueEnclosure or None
        None where the route fails or misses :data:`GRAM_FACTOR_MAX_ALPHA`
        (the caller takes the QR route of Lemma P for those).
    norms : list of arb or None
        With ``norms_21``, nonnegative balls containing ``‖A_j B_jᵀ‖_{2,1}``;
        None where not evaluated here (the caller uses
        :func:`certbound.enclose.quantities.norm_21_of_products` for those).
    """
    h = len(As)
    m, d = As[0].shape
    n = Bs[0].shape[0]
    n21: list[arb | None] = [None] * h
    if d > min(m, n):
        return [None] * h, n21  # the factors cannot have full column rank
    shape = (m, n)
    k = min(m, n)
    # One stack per side: stacking A and B together (2h slices) was measured slower (12 heads of
    # 384×32: a 2.4 MB stack and its temporaries leave the 1 MB L2 cache).
    SA, ea, exa = _scaled_stack(As)
    SB, eb, exb = _scaled_stack(Bs)
    RA, alA, GA, nKA = _gram_factor_chain(SA)
    RB, alB = _gram_factor_stack(SB)
    if norms_21 and d * (m + n) <= m * n:
        # Lemma 8.1 on the exactly scaled factors: S_A S_Bᵀ = 2^(k_A+k_B)·A Bᵀ, so the norm is the
        # scaled one times 2^-(k_A+k_B) (its float ends scaled back exactly).
        idx = np.flatnonzero(exa & exb)
        every = len(idx) == h  # (no copies of the stacks then)
        balls = _norm_21_from_gram_stack(GA if every else GA[idx], nKA if every else nKA[idx],
                                         SB if every else SB[idx], m, ea[idx] + eb[idx])
        for j, ball in zip(idx.tolist(), balls):
            n21[j] = ball
    # Inexact scaling (subnormals rounded) is left to the QR route.
    use = exa & exb & (alA <= GRAM_FACTOR_MAX_ALPHA) & (alB <= GRAM_FACTOR_MAX_ALPHA)
    if not np.any(use):
        return [None] * h, n21
    with np.errstate(over="ignore", invalid="ignore"):
        C = np.matmul(RA, RB.transpose(0, 2, 1))
        dC = up(up(_stacked.gamma_upper(d) * _stacked.abs_product_norm2_upper(
            np.abs(RA), None, np.abs(RB).transpose(0, 2, 1))) + _core_underflow_upper(d, d, d))
    lo_c, hi_c, ok_c, e_c = _core_fast_stacked(C, dC)
    dn, upf = _sqrt_product_bounds(np.where(use, alA, 0.0), np.where(use, alB, 0.0))
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.maximum(down(lo_c * dn[:, None]), 0.0)
        hi = up(hi_c * upf[:, None])
        resid = up(e_c * upf)
    sel = np.flatnonzero(use & ok_c)
    out: list[SingularValueEnclosure | None] = [None] * h
    for j, enc in zip(sel.tolist(), _finish_stack(shape, k, d, lo[sel], hi[sel], -(ea[sel] + eb[sel]),
                                                  alA[sel], alB[sel], resid[sel])):
        out[j] = enc
    return out, n21


def _abs_congruence_norm_upper(aR: np.ndarray, G: np.ndarray, absolute: np.ndarray | None = None) -> np.ndarray:
    """Floats ≥ ‖|R| |G| |R|ᵀ‖₂ per slice (one chain of three nonnegative matrix–vector products; §11, Lemma 11.2).

    With K = max(|G|, |G|ᵀ) ≥ |G| entrywise, N = |R|K|R|ᵀ is symmetric, nonnegative and ≥ |R||G||R|ᵀ,
    so ‖|R||G||R|ᵀ‖₂ ≤ ‖N‖₂ ≤ ‖N‖_∞ = max(|R|(K(|R|ᵀ𝟙))) (F4, monotonicity), each product bounded upward
    by Lemma 2.2.

    Parameters
    ----------
    aR : ndarray (h, d, d)
        |R| (already taken).
    G : ndarray (h, d, d)
    absolute : ndarray (h, d, d), optional
        ``|G|`` if the caller has it already (not recomputed).

    Returns
    -------
    ndarray (h,)
        Float upper bounds (+∞ where a step overflowed).
    """
    h, d, _ = aR.shape
    aG = np.abs(G) if absolute is None else absolute
    K = np.maximum(aG, aG.transpose(0, 2, 1))
    with np.errstate(over="ignore", invalid="ignore"):
        v = _stacked._mv(aR.transpose(0, 2, 1), _stacked._ones(h, d))
        out = _stacked._mv(aR, _stacked._mv(K, v)).max(axis=1)
    return np.where(np.isfinite(out), out, np.inf)


#: From this inner dimension d on, mode ``auto``'s Lemma 11.2 certifies the d×d matrices M̂ by Lemma 11.3 (Theorem
#: G-T on a Householder tridiagonal: ``dsytrd``, ``dorgqr``, ``dsterf`` and stacked Sturm counts) instead of Theorem G
#: on a batched ``eigh`` with eigenvectors. Measured (one thread, loaded machine, CPU per 24 slices of the heads' M̂,
#: the certificate's own bounds included): d = 64 (GPT-2): 8.6–8.9 against 9.9–10.3 ms; d = 32 (MiniLM): 2.15–2.32
#: against 2.17–2.37 — no gain, so the 384×32 heads keep Theorem G (session 8, /tmp/s8h/ends.py).
THEOREM_GT_MIN_INNER = 48


def _theorem_g_ends(M: np.ndarray, beta: np.ndarray, eps: np.ndarray, ok: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Lemma 11.2 (c) by Theorem G: σᵢ's float ends from one batched ``eigh`` of M̂ (proofs/enclosure.md §11).

    Parameters
    ----------
    M : ndarray (h, d, d)
        The matrices M̂ of :func:`_congruence_core`.
    beta, eps : ndarrays (h,)
        Its floats β ≥ ‖M̂ − LᵀAᵀAL‖₂ and ε ≥ ‖AᵀA‖₂‖BᵀB − LLᵀ‖₂.
    ok : ndarray (h,) of bool
        Where the slices are usable so far.

    Returns
    -------
    (lo, hi, alpha, e, ok) or None
        Float ends (h, d), descending, with lo ≤ σᵢ(A Bᵀ) ≤ hi where ``ok``; α ≥ ‖UᵀU − I‖₂ and
        e ≥ ‖M̂ − UΛUᵀ‖₂ per slice. None when the batched ``eigh`` raised.
    """
    h, d, _ = M.shape
    if not np.all(ok):
        M = np.where(ok[:, None, None], M, np.eye(d))  # failed slices: a harmless stand-in for eigh
    try:
        lam, U = np.linalg.eigh(M)  # ascending; reads one triangle (Theorem G needs no symmetry of M̂)
    except np.linalg.LinAlgError:
        return None
    ok = ok & np.isfinite(lam).all(axis=1) & np.isfinite(U.reshape(h, -1)).all(axis=1)
    aU = np.abs(U)
    alU = _stacked.gram_deviation_upper(U, aU)  # ≥ ‖UᵀU − I‖₂ (Lemma 3.1)
    e = _stacked.residual_norm_upper(M, U, lam, U, aU)  # ≥ ‖M̂ − UΛUᵀ‖₂ (Lemma 3.2, s = λ; symmetric chain)
    c = up(up(beta + e) + eps)
    ok &= (alU < 1) & np.isfinite(c)
    # Lemma G.4 for every head at once: c̄ ≥ β + e + ε, g⁺ ≥ 1 + α, 0 ≤ g⁻ ≤ 1 − α (Lemma 10.1).
    a = np.where(ok, alU, 0.0)
    grow = up(1.0 + a)[:, None]
    shrink = np.maximum(down(1.0 - a), 0.0)[:, None]
    lv = np.sort(lam, axis=1)[:, ::-1]  # λ₍ᵢ₎ descending, with signs (Theorem G; eigh's order is not relied on)
    pos = lv >= 0
    lsq, hsq = _outward_squares(lv, np.where(pos, shrink, grow), np.where(pos, grow, shrink),
                                np.where(ok, c, 0.0)[:, None])
    ok &= (hsq >= 0).all(axis=1) & np.isfinite(hsq).all(axis=1)
    lo, hi = _outward_sqrt(lsq, np.where(ok[:, None], hsq, 0.0))
    return lo, hi, alU, e, ok


def _householder_stack(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per slice: Q̂, d, e with ``M̂ ≈ Q̂ tridiag(e, d, e) Q̂ᵀ`` and approximate eigenvalues (LAPACK, nothing assumed).

    ``dsytrd`` (lower triangle, optimal blocked workspace), then Q̂ by ``dorgqr`` in the layout of
    :func:`~certbound.enclose.tridiagonal.tridiagonal_from_reflectors`, then ``dsterf`` for the approximations —
    the floats of :func:`~certbound.enclose.tridiagonal.householder_tridiagonal` and of
    :func:`~certbound.enclose.tridiagonal.tridiagonal_eigenvalue_bounds`' default shifts, the LAPACK routines
    called as ``scipy.linalg.lapack`` attributes. Lemma 11.3 bounds everything about them a posteriori
    (proofs/enclosure.md §11).

    Parameters
    ----------
    M : ndarray (h, d, d)

    Returns
    -------
    Q : ndarray (h, d, d)
        A transposed view of a C-ordered stack of the Q̂ᵀ (each slice copied from LAPACK's Fortran-ordered Q̂
        as one block).
    dg, off : ndarrays (h, d) and (h, d − 1)
    lam : ndarray (h, d)
        Ascending approximations (any floats would do).
    ok : ndarray (h,) of bool
        False where LAPACK reported an error or returned non-finite values (those slices hold the identity and
        zeros).
    """
    h, d, _ = M.shape
    Qt = np.zeros((h, d, d))
    dg, off, lam = np.zeros((h, d)), np.zeros((h, d - 1)), np.zeros((h, d))
    ok = np.zeros(h, dtype=bool)
    lwork = _dsytrd_lwork(d)
    dsytrd, dorgqr, dsterf = _lapack.dsytrd, _lapack.dorgqr, _lapack.dsterf  # (module attributes: patchable)
    # tridiagonal.tridiagonal_from_reflectors' dorgqr layout, its buffers made once: reflector i (v(i+1) = 1, v(i+2:)
    # below c's subdiagonal) is column i+1 of a d×d array whose column 0 is the identity reflector (τ = 0), so
    # dorgqr returns Q̂ = H₀H₁⋯ = [[1, 0], [0, Q₁]] in place.
    V = np.zeros((d, d), order="F")
    t = np.zeros(d)
    for j in range(h):
        try:
            c, dj, ej, tau, info = dsytrd(M[j], lower=1, lwork=lwork)
            if info != 0:
                continue
            V[:, 0] = 0.0
            V[0, 1:] = 0.0
            V[1:, 1:] = c[1:, :-1]
            t[1:] = tau[: d - 1]
            q, _work, info = dorgqr(V, t, lwork=max(64 * d, 1))
            if info != 0:
                continue
            lj, info = dsterf(dj, ej) if d > 1 else (dj.copy(), 0)  # (f2py copies d and e: dj, ej stay T's)
        except (ValueError, np.linalg.LinAlgError):
            continue
        if info != 0:
            continue
        Qt[j], dg[j], off[j], lam[j] = q.T, dj, ej, lj
        ok[j] = True
    ok &= np.isfinite(dg).all(axis=1) & np.isfinite(off).all(axis=1)  # (Q̂'s finiteness: its bounds are tested)
    Qt[~ok] = np.eye(d)
    return Qt.transpose(0, 2, 1), dg, off, lam, ok


@functools.lru_cache(maxsize=None)
def _dsytrd_lwork(d: int) -> int:
    """LAPACK's optimal workspace for ``dsytrd`` at order d (queried once per d)."""
    lw, info = _lapack.dsytrd_lwork(d, lower=1)
    return max(int(lw), 1) if info == 0 else max(d, 1)


def _theorem_gt_ends(M: np.ndarray, beta: np.ndarray, eps: np.ndarray, ok: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lemma 11.2 (c) by Theorem G-T (Lemma 11.3): σᵢ's float ends without eigenvectors (proofs/enclosure.md §11).

    Per slice Q̂, T = tridiag(e, d, e) from :func:`_householder_stack`; α ≥ ‖Q̂ᵀQ̂ − I‖₂ (Lemma 3.1, stacked),
    e ≥ ‖M̂ − Q̂TQ̂ᵀ‖₂ (:func:`._stacked.tridiagonal_residual_norm_upper`), c̄ ≥ β + e + ε, brackets
    aᵢ ≤ λᵢ(T) ≤ bᵢ by stacked Sturm counts (:func:`._stacked.tridiagonal_eigenvalue_brackets`; where that
    fast path does not certify a slice, :func:`~certbound.enclose.tridiagonal.tridiagonal_eigenvalue_bounds`
    on it), then Lemma G.4's float ends with λ := aᵢ for the lower and λ := bᵢ for the upper end, the sign
    choice of g± made per end (as ``gram.tridiagonal_theorem_g_float_bounds``).

    Parameters, Returns
    -------------------
    As :func:`_theorem_g_ends` (α and e those of Q̂ and T; never None).
    """
    h, d, _ = M.shape
    if not np.all(ok):
        M = np.where(ok[:, None, None], M, np.eye(d))  # failed slices: a harmless stand-in for LAPACK
    Q, dg, off, lam, done = _householder_stack(M)
    ok = ok & done
    aQ = np.abs(Q)
    alQ = _stacked.gram_deviation_upper(Q, aQ)  # ≥ ‖Q̂ᵀQ̂ − I‖₂ (Lemma 3.1)
    e = _stacked.tridiagonal_residual_norm_upper(M, Q, dg, off, aQ)  # ≥ ‖M̂ − Q̂TQ̂ᵀ‖₂ (Lemma 11.3)
    c = up(up(beta + e) + eps)
    ok &= (alQ < 1) & np.isfinite(c)
    spread = np.where(ok, SHIFT_SPREAD * c, 0.0)  # (any δ ≥ 0 is valid; this one as gram._certify_tridiagonal)
    lv, hv, fast = _stacked.tridiagonal_eigenvalue_brackets(dg, off, lam, spread)
    for j in np.flatnonzero(ok & ~fast).tolist():
        lv[j], hv[j] = tridiagonal_eigenvalue_bounds(dg[j], off[j], approx=lam[j], spread=float(spread[j]))
    ok &= np.isfinite(lv).all(axis=1) & np.isfinite(hv).all(axis=1)
    a = np.where(ok, alQ, 0.0)
    grow = up(1.0 + a)[:, None]
    shrink = np.maximum(down(1.0 - a), 0.0)[:, None]
    cc = np.where(ok, c, 0.0)[:, None]
    lsq, _ = _outward_squares(lv, np.where(lv >= 0, shrink, grow), np.where(lv >= 0, grow, shrink), cc)
    _, hsq = _outward_squares(hv, np.where(hv >= 0, shrink, grow), np.where(hv >= 0, grow, shrink), cc)
    ok &= (hsq >= 0).all(axis=1) & np.isfinite(hsq).all(axis=1) & np.isfinite(lsq).all(axis=1)
    lo, hi = _outward_sqrt(np.where(ok[:, None], lsq, 0.0), np.where(ok[:, None], hsq, 0.0))
    return lo, hi, alQ, e, ok


def _certify_stack_theorem_g(As: list[np.ndarray], Bs: list[np.ndarray], norms_21: bool = False
                             ) -> tuple[list[SingularValueEnclosure | None], list[arb | None], np.ndarray]:
    """Lemma 11.2 (Theorem G for a product) for h same-shaped products; proofs/enclosure.md §11, evaluated as in §10.

    σᵢ(ABᵀ)² are the eigenvalues of ``G_A^{1/2} G_B G_A^{1/2}`` (G = FᵀF exactly). With L a float
    Cholesky factor of ``Ĝ_B = fl(BᵀB)`` these are within ``ε ≥ ‖AᵀA‖₂‖BᵀB − LLᵀ‖₂`` (Weyl) of the
    eigenvalues of ``LᵀAᵀAL``, which Theorem G (proofs/enclosure-gram.md §1) encloses from one batched
    ``eigh`` of ``M̂ = fl(fl(Lᵀ Ĝ_A) L)``, all σᵢ at once by Lemma G.4's float ends. No inverse, no
    orthonormal factor and no scaling (every bound holds for any float data; a non-finite one fails).

    Parameters
    ----------
    As, Bs : lists of h ndarrays, m×d and n×d
        Exact float64 factors with nonzero entries somewhere, same shapes within each list.
    norms_21 : bool
        Also evaluate ``‖A Bᵀ‖_{2,1}`` by Lemma 8.1 from the Gram matrices of the left factors
        (proofs/enclosure.md §8, "Shared with Lemma P-G").

    Returns
    -------
    encs : list of SingularValueEnclosure or None
        None where the route fails or where its widths miss mode ``auto``'s target
        (:func:`certbound.enclose.svd.meets_width_target`'s test on the float ends, proofs/enclosure.md
        §12): the caller takes Lemma P-G (:func:`_certify_stack_gram`) for those.
    norms : list of arb or None
        As :func:`_certify_stack_gram`'s.
    finite : ndarray (h,) of bool
        Where every diagonal entry of ``fl(AᵀA)`` and ``fl(BᵀB)`` is finite, which implies that every
        entry of A and B is (a NaN or ±∞ entry makes its column's sum of squares NaN or +∞); False
        everywhere when the route did not run (d > min(m, n)).
    """
    h = len(As)
    m, d = As[0].shape
    n = Bs[0].shape[0]
    n21: list[arb | None] = [None] * h
    out: list[SingularValueEnclosure | None] = [None] * h
    if d > min(m, n):
        return out, n21, np.zeros(h, dtype=bool)
    GA, nKA = _grams_and_abs_gram_norms(As)
    # ‖·‖_{2,1} (Lemma 8.1): its forms b_jᵀĜ_A b_j and ‖b_j‖² computed in the pass over B that forms Ĝ_B
    forms = (GA, np.empty((h, n)), np.empty((h, n))) if norms_21 and d * (m + n) <= m * n else None
    GB, nKB = _grams_and_abs_gram_norms(Bs, chain=False, forms=forms)  # (ν_B only enters ε)
    idx = np.arange(d)
    finite = np.isfinite(GA[:, idx, idx]).all(axis=1) & np.isfinite(GB[:, idx, idx]).all(axis=1)
    L, M, beta, eps, ok = _congruence_core(GA, GB, nKA, nKB, m, n)
    ok &= finite
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if d >= THEOREM_GT_MIN_INNER:  # Lemma 11.3: Theorem G-T on a Householder tridiagonal of M̂, no eigenvectors
            lo, hi, alU, e, ok = _theorem_gt_ends(M, beta, eps, ok)
        else:  # Theorem G on M̂ with U, λ from one batched eigh
            ends = _theorem_g_ends(M, beta, eps, ok)
            if ends is None:
                return out, n21, finite
            lo, hi, alU, e, ok = ends
        # Mode auto's width target (§12): a decision on the float ends, not a bound.
        ok &= np.all(hi - lo <= AUTO_RELATIVE_TARGET * np.maximum(0.5 * (lo + hi), AUTO_SPECTRUM_FRACTION * hi[:, :1]),
                     axis=1)
    sel = np.flatnonzero(ok)
    for j, enc in zip(sel.tolist(), _finish_stack((m, n), min(m, n), d, lo[sel], hi[sel], np.zeros(len(sel), np.int64),
                                                  alU[sel], up(beta[sel] + eps[sel]), e[sel])):
        out[j] = enc
    if forms is not None and len(sel):
        # Lemma 8.1 with the same Ĝ_A and ν_A, unscaled: kept for the accepted products only (their scales were
        # sane; the others get Lemma P-G's scaled evaluation from the caller).
        # Lemma 8.1's β ≥ max|b_jl|: max_l ‖b_l‖ ≤ √max_l _inflate(fl(BᵀB)_ll, n) (Lemma 2.2; no pass over B)
        with np.errstate(over="ignore", invalid="ignore"):
            bmax = up(np.sqrt(fperror._inflate(GB[sel][:, idx, idx], n).max(axis=1)))
        # the accepted products' forms (computed with Ĝ_B above), the float finish once for them (§8)
        every = len(sel) == h
        _, t, bb = forms
        balls = _norm_21_from_quadratic_forms(t if every else t[sel], bb if every else bb[sel],
                                              nKA if every else nKA[sel], m, d, bmax)
        for j, ball in zip(sel.tolist(), balls):
            n21[j] = ball
    return out, n21, finite


#: Factor stacks are formed in chunks of at most this many bytes (each pass over a stack then stays in a
#: typical 1–2 MiB L2 cache; measured on 12 heads of 384×32 and 768×64).
FACTOR_CHUNK_BYTES = 3 << 19

#: Up to this inner dimension d a factor's Gram matrix ``FᵀF`` is one BLAS GEMM of Fᵀ with itself
#: (:func:`_gram_into`), above it numpy's SYRK. Measured (one thread, factors not in cache, CPU per factor):
#: GEMM/SYRK 0.51 at 384×16, 0.53–0.61 at 256–768×32 (MiniLM's heads: 16.7 against 27.5 µs), 0.73 at
#: 384×48, 0.94 at 512×64, 1.21–1.27 at 768–1024×64 (GPT-2's heads), 1.4 at d = 128.
GRAM_GEMM_MAX_INNER = 48


def _gram_into(F: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = fl(FᵀF)`` for a C-contiguous float64 m×d factor: each entry one rounded dot product of length m.

    For d ≤ :data:`GRAM_GEMM_MAX_INNER` one ``dgemm`` of Fᵀ with itself (scipy's BLAS wrapper: ``F.T`` is
    Fortran-ordered, no copy), else ``numpy.matmul(F.T, F)`` (numpy's SYRK for one buffer, its triangle
    mirrored). Either is a classical evaluation of every entry's dot product in some order (Lemma 2.1,
    proofs/enclosure.md §11 *Evaluation*); on MiniLM's factors both give the same bits.

    Parameters
    ----------
    F : ndarray (m, d)
    out : ndarray (d, d), written
    """
    if F.shape[1] <= GRAM_GEMM_MAX_INNER:
        out[...] = _dgemm(1.0, F.T, F.T, trans_b=True)
    else:
        np.matmul(F.T, F, out=out)


def _chunks(h: int, item_bytes: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering range(h) in balanced chunks of ≤ FACTOR_CHUNK_BYTES (at least one item each)."""
    q = max(1, -(-h * item_bytes // FACTOR_CHUNK_BYTES))
    edges = [round(i * h / q) for i in range(q + 1)]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


#: From this inner dimension d on, Lemma 8.1's ``T`` is one TRMM by Ĝ's doubled upper triangle
#: (:func:`_doubled_upper_triangles`: half the multiplications) instead of one GEMM by Ĝ. Measured (one
#: thread, factors not in cache, CPU per right factor for T and its row-wise dot product with it): TRMM/GEMM
#: 1.17–1.18 at d = 32 (384 and 768 rows), 0.85 at 384×48, 0.71–0.74 at 512–1024×64 (GPT-2's heads: 147
#: against 205 µs), 0.62 at 768×128.
FORMS_TRMM_MIN_INNER = 48


def _doubled_upper_triangles(G: np.ndarray) -> np.ndarray:
    """Per slice, ``V = triu(G, 1)·2 + diag(G)``: G's upper triangle with the strictly upper part doubled.

    With Ĝ' := triu(G) + triu(G, 1)ᵀ (G's upper triangle mirrored, symmetric), ``V + Vᵀ = 2Ĝ'``, so
    ``bᵀVb = bᵀĜ'b`` and ``|b|ᵀ|V||b| = |b|ᵀ|Ĝ'||b|`` for every vector b, and every entry of Ĝ' is an entry
    of G. Doubling is exact (an overflow gives ±∞, which makes the forms non-finite: the route fails).
    proofs/enclosure.md §8, "Shared with Lemma P-G".

    Parameters
    ----------
    G : ndarray (h, d, d)

    Returns
    -------
    ndarray (h, d, d)
        C-ordered slices, zero below the diagonal.

    Examples
    --------
    >>> _doubled_upper_triangles(np.array([[[1.0, 2.0], [2.5, 3.0]]])).tolist()
    [[[1.0, 4.0], [0.0, 3.0]]]
    """
    V = np.triu(G, 1)
    V *= 2.0
    idx = np.arange(G.shape[-1])
    V[:, idx, idx] = G[:, idx, idx]
    return V


def _grams_and_abs_gram_norms(Fs: list[np.ndarray], chain: bool = True,
                              forms: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                              ) -> tuple[np.ndarray, np.ndarray]:
    """``fl(FᵀF)`` and a float ν ≥ ‖|F|ᵀ|F|‖₂ for each factor (proofs/enclosure.md §11, §10).

    The Gram matrices come from one product per factor straight from its own memory (:func:`_gram_into`:
    GEMM or SYRK by d; each entry one rounded dot product of length m, Lemma 2.1; no stack of the factors
    is formed); ν is Lemma 3.1's one chain (:func:`._stacked.abs_gram_norm2_upper`) on a chunk buffer of
    |F| (chunks of :data:`FACTOR_CHUNK_BYTES`), or, without ``chain``, ‖F‖_F² bounded from the diagonal
    of fl(FᵀF) (‖|F|ᵀ|F|‖₂ ≤ ‖|F|‖_F² = Σ_l ‖f_l‖², each ‖f_l‖² ≤ _inflate(fl(FᵀF)_ll, m) and their sum
    by Lemma 2.2: no pass over F; ≈ 1.4× the chain's ν on MiniLM's heads).

    Parameters
    ----------
    Fs : list of h ndarrays, each m×d (float64)
    chain : bool
        ν by Lemma 3.1's chain (else from the Gram diagonal).
    forms : (Ĝ, t, bb), optional
        Lemma 8.1's forms of the factors as right factors of products whose left Gram matrices are
        ``Ĝ`` (h, d, d), written into ``t`` and ``bb`` (h, m) while each factor is in cache:
        ``t[j] = fl(Σ_l T_il f_il)`` with ``T = fl(F_j Ĝ_j)`` — for d ≥ :data:`FORMS_TRMM_MIN_INNER`
        ``T = fl(F_j V_j)`` by one TRMM, V_j = :func:`_doubled_upper_triangles` of Ĝ_j — and
        ``bb[j] = fl(Σ_l f_il²)`` per row i (proofs/enclosure.md §8, "Shared with Lemma P-G").

    Returns
    -------
    G : ndarray (h, d, d)
    nu : ndarray (h,)
        +∞ where a step overflowed (or the factor holds NaN/Inf).
    """
    h = len(Fs)
    m, d = Fs[0].shape
    G = np.empty((h, d, d))
    nu = np.empty(h)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow makes a bound non-finite (the route fails)
        T = np.empty((m, d)) if forms is not None else None
        V = _doubled_upper_triangles(forms[0]) if forms is not None and d >= FORMS_TRMM_MIN_INNER else None
        for j, F in enumerate(Fs):
            _gram_into(F, G[j])
            if forms is not None:  # Lemma 8.1's T and the row-wise forms, F still in cache
                if V is None:  # T = fl(F Ĝ), one GEMM
                    np.matmul(F, forms[0][j], out=T)
                    TF = T
                else:  # T = fl(F V), one TRMM: (F V)ᵀ = Vᵀ Fᵀ with Vᵀ = V[j].T lower triangular, Fortran-ordered
                    np.copyto(T, F)
                    TF = _dtrmm(1.0, V[j].T, T.T, side=0, lower=1, overwrite_b=1).T  # T itself unless copied
                np.einsum("ij,ij->i", TF, F, out=forms[1][j])
                np.einsum("ij,ij->i", F, F, out=forms[2][j])
        if chain:  # |F| written once into a chunk buffer for the chain
            edges = _chunks(h, m * d * 8)
            buf = np.empty((max(b - a for a, b in edges), m, d))
            for a, b in edges:
                for j in range(a, b):
                    np.abs(Fs[j], out=buf[j - a])
                nu[a:b] = _stacked.abs_gram_norm2_upper(buf[:b - a])
    if not chain:
        idx = np.arange(d)
        with np.errstate(over="ignore", invalid="ignore"):
            nu = fperror._inflate(fperror._inflate(G[:, idx, idx], m).sum(axis=1), d)
        nu = np.where(np.isfinite(nu), nu, np.inf)
    return G, nu


def _congruence_core(GA: np.ndarray, GB: np.ndarray, nKA: np.ndarray, nKB: np.ndarray, m: int, n: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lemma 11.2's matrix ``M̂ = fl(fl(Lᵀ Ĝ_A) L)`` and its bounds β and ε (proofs/enclosure.md §11, *Evaluation*).

    Parameters
    ----------
    GA, GB : ndarrays (h, d, d)
        ``fl(AᵀA)`` and ``fl(BᵀB)`` (each entry one rounded dot product of length m, resp. n).
    nKA, nKB : ndarrays (h,)
        Floats ≥ ‖|A|ᵀ|A|‖₂, ‖|B|ᵀ|B|‖₂.
    m, n : int
        The row counts of A and B.

    Returns
    -------
    L : ndarray (h, d, d)
        Float Cholesky factors of Ĝ_B (the identity where Cholesky failed).
    M : ndarray (h, d, d)
        ``fl(fl(Lᵀ Ĝ_A) L)``.
    beta, eps : ndarrays (h,)
        Floats ≥ ‖M̂ − LᵀAᵀAL‖₂ and ≥ ‖AᵀA‖₂‖BᵀB − LLᵀ‖₂ (+∞ where a step overflowed).
    ok : ndarray (h,) of bool
        False where Cholesky failed or a bound is not finite.
    """
    h, d, _ = GA.shape
    L, ok = _cholesky_stack(GB)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        errA = up(up(_stacked.gamma_upper(m) * nKA) + _gram_underflow_upper(m, d))  # ≥ ‖AᵀA − Ĝ_A‖₂
        errB = up(up(_stacked.gamma_upper(n) * nKB) + _gram_underflow_upper(n, d))  # ≥ ‖BᵀB − Ĝ_B‖₂
        Lt = L.transpose(0, 2, 1)
        M = np.matmul(np.matmul(Lt, GA), L)
        aL = np.abs(L)  # |L| once, for nL, N and the Cholesky residual
        # β = γ_{2d}N + ‖L‖₂²‖AᵀA − Ĝ_A‖₂ + 2d²η(1 + 2‖|L|‖₂), N ≥ ‖|L|ᵀ|Ĝ_A||L|‖₂
        nL = _stacked.norm2_upper(L, aL)  # Lemma 2.3 (min(Frobenius, Hölder)) reads |L| only: ≥ ‖|L|‖₂ too
        aG = np.abs(GA)  # |Ĝ_A| once, for N and ‖Ĝ_A‖₂
        N = _abs_congruence_norm_upper(aL.transpose(0, 2, 1), GA, aG)
        under = up(_core_underflow_upper(d, d, d) * up(1.0 + 2.0 * nL))
        beta = up(up(up(_stacked.gamma_upper(2 * d) * N) + up(up(nL * nL) * errA)) + under)
        # ε = (‖Ĝ_A‖₂ + ‖AᵀA − Ĝ_A‖₂)(‖BᵀB − Ĝ_B‖₂ + ‖Ĝ_B − LLᵀ‖₂)
        eRR = _stacked.residual_norm_upper(GB, L, None, L, aL)  # (Y is X: the symmetric chain, §10)
        # ‖Ĝ_A‖₂ ≤ √(‖Ĝ_A‖₁‖Ĝ_A‖_∞) (F4; Lemma 2.2 for the sums), the roots taken first: no overflow below 2¹⁰²⁴
        n1 = _stacked._mv(aG.transpose(0, 2, 1), _stacked._ones(h, d)).max(axis=1)  # column sums (Lemma 2.2)
        ninf = _stacked._mv(aG, _stacked._ones(h, d)).max(axis=1)  # row sums
        nGA = up(up(np.sqrt(n1)) * up(np.sqrt(ninf)))
        eps = up(up(nGA + errA) * up(errB + eRR))
    ok &= np.isfinite(beta) & np.isfinite(eps) & np.isfinite(M.reshape(h, -1)).all(axis=1)
    return L, M, beta, eps, ok


def _finish_stack(shape: tuple[int, int], k: int, r: int, lo: np.ndarray, hi: np.ndarray, t: np.ndarray,
                  alA: np.ndarray, alB: np.ndarray, resid: np.ndarray) -> list[SingularValueEnclosure]:
    """:func:`_finish` for a stack of products of one shape, the float work vectorised.

    Parameters
    ----------
    shape : (int, int)
        ``(m, n)`` of every product.
    k : int
        ``min(m, n)``.
    r : int
        The structural rank bound.
    lo, hi : ndarrays (h, r)
        Float bounds on the σᵢ of the scaled products.
    t : ndarray (h,) of int
        Exponents: the products' values are 2^t times the scaled ones.
    alA, alB, resid : ndarrays (h,)
        The certificate's α_A, α_B and residual (scaled units) per product.

    Returns
    -------
    list of SingularValueEnclosure
        The h enclosures, as :func:`_finish` returns them one by one.
    """
    h = lo.shape[0]
    if h == 0:
        return []
    t = np.asarray(t, dtype=np.int64)
    with np.errstate(over="ignore", under="ignore"):
        lo2, hi2 = np.ldexp(lo, t[:, None]), np.ldexp(hi, t[:, None])
    finite = np.isfinite(hi).all(axis=1)
    # As in _finish: lower ends need fl > 2⁻¹⁰²² (strict), upper ends fl ≥ 2⁻¹⁰²².
    exact = (np.isfinite(hi2).all(axis=1) & ((lo == 0) | (np.abs(lo2) > _MIN_NORMAL)).all(axis=1)
             & ((hi == 0) | (np.abs(hi2) >= _MIN_NORMAL)).all(axis=1))
    z = np.zeros((h, k - r))
    # svd._build_from_bounds row by row, its array work done once for the stack: clamp at 0, tighten
    # monotonically (σ₁ ≥ σ₂ ≥ …), count the nonzero ends. The k − r exact zeros are appended after the
    # tightening: they cannot change a running max from the right of nonnegative ends, nor a running
    # min from the left of the first r.
    lower = np.maximum.accumulate(np.maximum(lo2, 0.0)[:, ::-1], axis=1)[:, ::-1]
    upper = np.minimum.accumulate(hi2, axis=1)
    live = np.count_nonzero(upper > 0, axis=1).tolist()  # upper ends are non-increasing: zeros are a suffix
    rank_lower = np.count_nonzero(lower > 0, axis=1).tolist()
    lower = np.concatenate([lower, z], axis=1)  # fresh arrays: each enclosure gets a row of them
    upper = np.concatenate([upper, z], axis=1)
    # Python floats once for the stack (only the first r ends can be nonzero: live ≤ r).
    good_mask = finite & exact
    good = good_mask.tolist()
    al_a, al_b, res = alA.tolist(), alB.tolist(), resid.tolist()
    # The balls of every good product's live ends in one svd._hull_balls call (elementwise: per product the balls
    # _build_from_bounds makes; its non-finite fallback is per call, so ends near the overflow go per product).
    live_mask = (np.arange(r) < np.asarray(live)[:, None]) & good_mask[:, None]
    lo_live, hi_live = lower[:, :r][live_mask], upper[:, :r][live_mask]  # row-major: product by product
    balls = _hull_balls(lo_live, hi_live) if np.all(hi_live < 2.0**1000) else None
    pos = 0
    zero = arb(0)
    tails: dict[int, tuple[arb, ...]] = {}
    out = []
    with working_precision():
        for j, tj in enumerate(t.tolist()):
            if not good[j]:
                out.append(_finish(shape, k, r, lo[j], hi[j], tj, al_a[j], al_b[j], res[j]))
                continue
            n_live = live[j]
            tail = tails.get(k - n_live)
            if tail is None:
                tail = tails[k - n_live] = (zero,) * (k - n_live)
            if balls is None:
                sigma = tuple(_hull_balls(lower[j, :n_live], upper[j, :n_live])) + tail
            else:
                sigma = tuple(balls[pos:pos + n_live]) + tail
                pos += n_live
            residual = arb(res[j]) if tj == 0 else arb(res[j]) * _pow2(tj)
            out.append(SingularValueEnclosure(
                shape=shape, sigma=sigma, lower=lower[j], upper=upper[j], mode="product", certified=True,
                alpha=arb(al_a[j]), beta=arb(al_b[j]), residual=residual,
                rank=_rank_bounds(rank_lower[j], max(r, rank_lower[j]))))
    return out


@functools.lru_cache(maxsize=1024)
def _rank_bounds(lower: int, upper: int) -> RankBounds:
    """``RankBounds(lower, upper)``, one shared instance per pair (the dataclass is frozen)."""
    return RankBounds(lower, upper)


@functools.lru_cache(maxsize=4096)
def _pow2(t: int) -> arb:
    """The exact ball 2^t (cached: one per exponent).

    Parameters
    ----------
    t : int
        The exponent.

    Returns
    -------
    arb
        2^t, exact (a power of two is exact at any precision).
    """
    with working_precision():
        return arb(2) ** t


def _finish(shape: tuple[int, int], k: int, r: int, lo: np.ndarray, hi: np.ndarray, t: int,
            alA: float, alB: float, resid: float, mode: str = "product") -> SingularValueEnclosure:
    """Scale the bounds back by 2^t and pad with the exact zeros past the structural rank r.

    Parameters
    ----------
    shape : (int, int)
        ``(m, n)`` of the product.
    k : int
        ``min(m, n)``.
    r : int
        The structural rank bound.
    lo, hi : ndarrays (r,)
        Float bounds on the σᵢ of the scaled product.
    t : int
        The product's values are 2^t times the scaled ones.
    alA, alB, resid : float
        α_A, α_B and the residual (scaled units), recorded in the enclosure.
    mode : str
        The mode recorded.

    Returns
    -------
    SingularValueEnclosure
        Trivial (with a warning) when an upper bound is not finite.
    """
    with working_precision():
        two = arb(2) ** t
        alpha, beta, residual = arb(alA), arb(alB), arb(resid) * two
        if not np.all(np.isfinite(hi)):
            return trivial_enclosure(shape, "non-finite bound of the product certificate", r)
        with np.errstate(over="ignore", under="ignore"):
            lo2, hi2 = np.ldexp(lo, t), np.ldexp(hi, t)
        # ldexp is exact when the exact result is a normal float (or 0 from 0): an upper end ≥ 2⁻¹⁰²² is
        # at least the exact one; a lower end needs fl > 2⁻¹⁰²² (a tie below 2⁻¹⁰²² rounds up to it:
        # proofs/coq/TheoremRFloat.v, ldexp_tie_counterexample).
        exact = (np.all(np.isfinite(hi2)) and np.all((lo == 0) | (np.abs(lo2) > _MIN_NORMAL))
                 and np.all((hi == 0) | (np.abs(hi2) >= _MIN_NORMAL)))
        if exact:
            z = np.zeros(k - r)
            return _build_from_bounds(shape, np.concatenate([lo2, z]), np.concatenate([hi2, z]), mode,
                                      alpha, beta, residual, rank_upper=r)
        # Leaving the normal range: scale the exact hulls in Arb instead (exact), convert outward in _build.
        sigma = [arb(a).union(arb(b)) * two for a, b in zip(lo.tolist(), hi.tolist())]
        sigma += [arb(0)] * (k - r)
        return _build(shape, sigma, mode, alpha, beta, residual, rank_upper=r)
