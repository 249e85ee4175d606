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

from typing import Any

import numpy as np
from flint import arb

from certbound.ball import under_float_model, working_precision
from certbound.enclose import fperror
from certbound.enclose._input import as_exact_float64_matrix, power_of_two_scaling
from certbound.enclose.svd import (
    MODES,
    SingularValueEnclosure,
    _build,
    _certify_dense,
    _zero_enclosure,
    trivial_enclosure,
)

__all__ = ["enclose_singular_values_of_product"]


def _thin_qr_certified(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, arb, arb]:
    """Float QR of A plus bounds α ≥ ‖QᵀQ − I‖₂ and e ≥ ‖A − QR‖₂."""
    Q, R = np.linalg.qr(A, mode="reduced")
    alpha = fperror.gram_deviation_bound(Q)
    # A − Q R = A − Q diag(1) (Rᵀ)ᵀ: the residual lemma with s = 1.
    e = fperror.residual_norm_bound(A, Q, np.ones(R.shape[0]), R.T)
    return Q, R, alpha, e


@under_float_model
def enclose_singular_values_of_product(A: Any, B: Any, mode: str = "fast") -> SingularValueEnclosure:
    """Certified singular values of ``A @ B.T`` (never formed).

    Parameters
    ----------
    A : array_like, m×d
    B : array_like, n×d
        Thin factors as stored (any float dtype; converted exactly).
    mode : {"fast", "tight", "arb", "gram"}
        Certificate mode for the small d×d core (the factor QRs always use
        the fast a-priori bounds).

    Returns
    -------
    SingularValueEnclosure
        Shape (m, n); ``sigma[i]`` is exactly 0 for i ≥ min(d, m, n) and
        ``rank.upper ≤ d``. Proof: Lemma P, proofs/enclosure.md §6.

    Raises
    ------
    ValueError
        If the inner dimensions differ, an entry is NaN/Inf, or the mode is unknown.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    A = as_exact_float64_matrix(A, "A")
    B = as_exact_float64_matrix(B, "B")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"inner dimensions differ: A is {A.shape}, B is {B.shape} (W = A @ B.T)")
    m, n, d = A.shape[0], B.shape[0], A.shape[1]
    shape = (m, n)
    k = min(m, n)
    if k == 0 or d == 0 or not np.any(A) or not np.any(B):
        return _zero_enclosure(shape)
    # Exact power-of-two scaling of each factor; the product scales by 2^(a+b).
    As, ea, exa = power_of_two_scaling(A)
    Bs, eb, exb = power_of_two_scaling(B)
    QA, RA, alA, eA = _thin_qr_certified(As)
    QB, RB, alB, eB = _thin_qr_certified(Bs)
    dA, dB = RA.shape[0], RB.shape[0]
    r = min(dA, dB)  # structural rank bound, also ≤ d
    with working_precision():
        # Rounded subnormals from scaling down enter the factor residuals (§5).
        if not exa:
            eA = eA + arb(A.size).sqrt() * arb(2) ** -1075
        if not exb:
            eB = eB + arb(B.size).sqrt() * arb(2) ** -1075
        normB = fperror.norm2_upper(Bs) + (arb(0) if exb else arb(B.size).sqrt() * arb(2) ** -1075)
        normQARA = fperror.norm2_upper(As) + eA
        eps = normQARA * eB + eA * normB
        if not (alA.upper() < 1 and alB.upper() < 1 and eps.is_finite()):
            return trivial_enclosure(shape, "factor QR certificate failed", r)
        # C = R_A R_Bᵀ: fl(C) and the Weyl perturbation of its rounding.
        Cf = RA @ RB.T
        dC = fperror.gamma(d) * fperror.abs_product_norm2_upper(RA, None, RB.T) + 2 * d * arb(
            fperror.ETA
        ) * arb(dA * dB).sqrt()
    res = _certify_dense(Cf, mode, dC, 0)
    if res is None:
        return trivial_enclosure(shape, "certificate of the small core failed", r)
    sig_c, alC, beC, eC, used = res
    with working_precision():
        a_, b_ = alA.upper(), alB.upper()
        down = ((1 - a_) * (1 - b_)).sqrt()
        up = ((1 + a_) * (1 + b_)).sqrt()
        two = arb(2) ** (-(ea + eb))
        sigma = []
        for i in range(r):
            c = sig_c[i]
            lo = (c.lower() * down - eps).lower()
            hi = (c.upper() * up + eps).upper()
            if not lo > 0:
                lo = arb(0)
            sigma.append(lo.union(hi) * two)
        sigma += [arb(0)] * (k - r)
        residual = (eps + eC * up) * two
    return _build(shape, sigma, "product", alA, alB, residual, rank_upper=r)
