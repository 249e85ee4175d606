"""The ramp loss with margin γ and the certified 0-1 test error (Corollary T3, Lemma T3.1).

``proofs/theory-theorems.md`` §T3. For labels ``y ∈ {−1, +1}`` and a margin
``γ > 0`` fixed before the data (or on an a-priori grid, §6.1b),

    ℓ_γ(v, y) = min{1, max{0, 1 − y·v/γ}}

has values in ``[0, 1]`` (``B_ℒ = 1``), is ``1/γ``-Lipschitz in ``v``
(``L_ℒ = 1/γ``) and dominates the 0-1 loss ``1{y·v ≤ 0}``. With the certified
gap bound ``Ḡ`` of Theorem 2 for this loss and an upper bound ``û`` on the
training ramp loss ``R̂_γ`` (same sample),

    P(y·f(X) ≤ 0) ≤ R_γ(f) ≤ R̂_γ(f) + Ḡ ≤ û + Ḡ.

Examples
--------
>>> from fractions import Fraction as F
>>> ramp_loss_constants("0.25")
(Fraction(1, 1), Fraction(4, 1))
>>> ramp_loss(np.array([-1.0, 0.0, 0.125, 0.25, 3.0]), F(1, 4)).tolist()
[1.0, 1.0, 0.5, 0.0, 0.0]
>>> u = empirical_ramp_loss_upper(np.array([-1.0, 0.125, 0.25, 3.0]), F(1, 4))   # (1 + 1/2 + 0 + 0)/4, rounded up
>>> F(3, 8) <= u < F(3, 8) + F(1, 2**50)
True
>>> float(zero_one_error_bound(arb("0.1"), F(3, 8)).upper()) >= 0.475
True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterable, Union

import numpy as np
from flint import arb

from certbound.ball import check_float_environment, upper_fraction
from certbound.bounds._arbutil import as_arb, prec

__all__ = [
    "ramp_loss_constants",
    "ramp_loss",
    "empirical_ramp_loss_upper",
    "ramp_upper_from_violations",
    "combine_ramp_upper",
    "zero_one_error_bound",
]

ExactNumber = Union[int, float, Fraction, str]

# Margins of modulus below this keep g⁺ − m̃ finite (Lemma T3.1 needs no overflow).
_MARGIN_LIMIT = 2.0**1000


def _exact(x: ExactNumber, what: str) -> Fraction:
    """An exact rational from an int, a float (its binary64 value), a Fraction or a decimal string."""
    if isinstance(x, bool):
        raise ValueError(f"{what} must be a number, got {x!r}")
    try:
        q = Fraction(x) if not isinstance(x, str) else Fraction(x.strip())
    except (ValueError, ZeroDivisionError, TypeError):
        raise ValueError(f"{what}: {x!r} is not an exact number") from None
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return q


def _margin(gamma: ExactNumber) -> Fraction:
    g = _exact(gamma, "margin γ")
    if g <= 0:
        raise ValueError(f"the margin γ must be > 0, got {gamma!r}")
    return g


def ramp_loss_constants(gamma: ExactNumber) -> tuple[Fraction, Fraction]:
    """``(B_ℒ, L_ℒ) = (1, 1/γ)`` of the ramp loss (Lemma T3.0), exact; pass them to Theorem 1/2.

    ``γ`` must be fixed before seeing the sample (theory-theorems §6.5); a
    decimal string is read exactly (``"0.1"`` is 1/10).

    >>> ramp_loss_constants(0.5)
    (Fraction(1, 1), Fraction(2, 1))
    """
    g = _margin(gamma)
    return Fraction(1), 1 / g


def ramp_loss(margins: np.ndarray, gamma: ExactNumber) -> np.ndarray:
    """Float values ``min(1, max(0, 1 − m/γ))`` of the margins ``m = y·f(x)`` (measurement only, not certified).

    >>> ramp_loss(np.array([0.05]), "0.1").tolist()
    [0.5]
    """
    g = float(_margin(gamma))
    m = np.asarray(margins, dtype=np.float64)
    return np.clip(1.0 - m / g, 0.0, 1.0)


def _float_up(q: Fraction) -> float:
    """The smallest-found float ``≥ q`` (exact comparison)."""
    f = float(q)
    while Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


def _exact_sum_nonneg(u: np.ndarray) -> Fraction:
    """The exact sum of nonnegative finite floats (mantissa/exponent split; no rounding anywhere)."""
    u = u[u > 0]
    if u.size == 0:
        return Fraction(0)
    mant, expo = np.frexp(u)                       # u = mant·2^expo, mant ∈ [1/2, 1), exact
    big = np.ldexp(mant, 53).astype(np.int64)       # integer mantissas < 2^53, exact
    hi, lo = big >> 26, big & ((1 << 26) - 1)        # < 2^27 each: sums of ≤ 2^36 terms fit in int64
    if u.size >= 2**36:
        raise ValueError("too many margins for the exact summation (≥ 2^36)")
    total = Fraction(0)
    for e in np.unique(expo):
        sel = expo == e
        s = (int(hi[sel].sum()) << 26) + int(lo[sel].sum())
        total += Fraction(s) * Fraction(2) ** (int(e) - 53)
    return total


def empirical_ramp_loss_upper(margins: np.ndarray, gamma: ExactNumber, *,
                              forward_error: ExactNumber = 0) -> Fraction:
    """Lemma T3.1: a certified upper bound ``û ≥ R̂_γ = (1/n) Σ ℓ_γ(m_i)`` from float margins.

    ``proofs/theory-theorems.md`` §T3 (Lemma T3.1).

    Parameters
    ----------
    margins : array of float
        ``m̃_i ≈ y_i·f(X_i)`` for the **whole** training sample of the gap bound
        (or a chunk of it, see :func:`combine_ramp_upper`). Lower ends of
        certified margin enclosures (e.g. ``OutputEnclosure.margin_lower``)
        can be passed with ``forward_error=0``.
    gamma : number
        The a-priori margin γ > 0 (exact; decimal strings read exactly).
    forward_error : number
        ``τ ≥ max_i |m̃_i − m_i|``, a proven bound on the float forward-pass
        error against the exact network (the caller's responsibility;
        ``0`` when the margins are certified lower bounds: ℓ_γ is
        nonincreasing in the margin).

    Returns
    -------
    Fraction
        ``min{1, Σ_i u_i/(nγ)}`` with ``u_i = min{γ⁺, max{0, succ(fl(g⁺ − m̃_i))}}``,
        ``γ⁺ ≥ γ`` and ``g⁺ ≥ γ + τ`` floats; the sum is exact.

    >>> u = empirical_ramp_loss_upper(np.array([1.0, 2.0]), 1, forward_error=0.5)   # (ℓ(0.5) + ℓ(1.5))/2 = 1/4
    >>> Fraction(1, 4) <= u < Fraction(1, 4) + Fraction(1, 2**50)
    True
    """
    check_float_environment()
    g = _margin(gamma)
    tau = _exact(forward_error, "forward_error")
    if tau < 0:
        raise ValueError(f"forward_error must be ≥ 0, got {forward_error!r}")
    m = np.asarray(margins, dtype=np.float64).ravel()
    n = m.size
    if n == 0:
        raise ValueError("need at least one margin")
    if not np.all(np.isfinite(m)):
        raise ValueError("margins must be finite (a NaN or infinite network output cannot be certified)")
    if np.any(np.abs(m) >= _MARGIN_LIMIT):
        raise ValueError("margins of modulus ≥ 2^1000 are not supported (overflow in Lemma T3.1)")
    g_up = _float_up(g)
    gt_up = _float_up(g + tau)
    if not math.isfinite(gt_up):
        raise ValueError("γ + forward_error overflows a float")
    with np.errstate(over="raise", invalid="raise"):
        t = gt_up - m                                       # correctly rounded: exact ≤ succ(t)
        # a float difference rounds to 0 only when it is exactly 0 (gradual underflow): keep those at 0
        t_up = np.where(t == 0, 0.0, np.nextafter(t, np.inf))
        u = np.minimum(g_up, np.maximum(0.0, t_up))
    total = _exact_sum_nonneg(u)
    return min(Fraction(1), total / (n * g))


def ramp_upper_from_violations(violations: int, n_samples: int) -> Fraction:
    """``û = #{i : m̃_i < γ + τ}/n`` (valid since ``ℓ_γ(m) ≤ 1{m < γ}``, Lemma T3.0(iii)); exact.

    >>> ramp_upper_from_violations(3, 12)
    Fraction(1, 4)
    """
    k, n = int(violations), int(n_samples)
    if n < 1 or not 0 <= k <= n or k != violations or n != n_samples:
        raise ValueError(f"need integers 0 ≤ violations ≤ n_samples, n_samples ≥ 1; got {violations!r}, {n_samples!r}")
    return Fraction(k, n)


def combine_ramp_upper(parts: Iterable[tuple[Fraction, int]]) -> Fraction:
    """``û = Σ n_k û_k / Σ n_k`` for a training set processed in chunks ``(û_k, n_k)`` (exact).

    >>> combine_ramp_upper([(Fraction(1, 2), 2), (Fraction(0), 6)])
    Fraction(1, 8)
    """
    num, den = Fraction(0), 0
    for u, k in parts:
        u = Fraction(u)
        if not (0 <= u <= 1) or int(k) != k or k < 1:
            raise ValueError(f"each chunk needs 0 ≤ û_k ≤ 1 and n_k ≥ 1, got ({u}, {k})")
        num += u * int(k)
        den += int(k)
    if den == 0:
        raise ValueError("no chunks")
    return num / den


def zero_one_error_bound(gap: Any, empirical_ramp_upper: ExactNumber, *, margin: ExactNumber | None = None) -> arb:
    """Corollary T3: the certified ``P(y·f(X) ≤ 0) ≤ û + Ḡ`` (a ball; its upper endpoint is the bound).

    ``proofs/theory-theorems.md`` §T3.

    Parameters
    ----------
    gap : BoundResult or arb
        The certified gap bound ``Ḡ`` for the ramp loss (Theorem 1/2 with
        ``loss_bound ≥ 1`` and ``loss_lipschitz ≥ 1/γ``), used through its upper
        endpoint; a ``BoundResult`` is checked to have such constants when
        ``margin`` is given.
    empirical_ramp_upper : number
        ``û ≥ R̂_γ`` on the same training sample (e.g. from
        :func:`empirical_ramp_loss_upper`), exact.
    margin : number, optional
        γ, to check the loss constants of a ``BoundResult``.

    >>> float(zero_one_error_bound(arb(0.25), 0.125).upper())
    0.375
    """
    u = _exact(empirical_ramp_upper, "empirical_ramp_upper")
    if not 0 <= u <= 1:
        raise ValueError(f"the empirical ramp loss bound must lie in [0, 1], got {u}")
    g = getattr(gap, "bound", gap)
    with prec():
        if margin is not None and hasattr(gap, "loss_lipschitz"):
            gm = _margin(margin)
            if not (bool(gap.loss_bound >= 1) and bool(gap.loss_lipschitz * gm.numerator >= gm.denominator)):
                raise ValueError("the gap bound was not computed for the ramp loss of this margin "
                                 f"(need loss_bound ≥ 1 and loss_lipschitz ≥ 1/γ = {1 / gm})")
        ga = as_arb(g)
        q = upper_fraction(ga) if ga.is_finite() else None
        if q is None:
            return arb.pos_inf()
        return as_arb(u + q)
