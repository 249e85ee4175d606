"""Certified derived quantities: norms, Schatten quantities, stable rank.

Each function returns an Arb ball that contains the exact quantity of the
stored matrix. Those computed from a :class:`SingularValueEnclosure` are
monotone functions of the σᵢ evaluated on their enclosures
(proofs/enclosure.md §8); the entrywise norms are computed from the matrix
with the rounding bounds of :mod:`.fperror`.

>>> import numpy as np
>>> from certbound.enclose import enclose_singular_values
>>> enc = enclose_singular_values(np.diag([3.0, 4.0]))
>>> spectral_norm(enc).contains(4), frobenius_norm(enc).contains(5)
(True, True)
>>> schatten_quantity(enc, 0)   # certified rank interval
2.00000000000000
"""

from __future__ import annotations

import functools
import math
import warnings
from fractions import Fraction
from typing import Any, NamedTuple, Tuple, Union

import numpy as np
from flint import arb

from certbound.ball import (
    arb_from_float,
    arb_sum,
    float_upper,
    lower_fraction,
    nonnegative_interval,
    under_callers_float_model,
    under_float_model,
    upper_fraction,
    working_precision,
)
from certbound.enclose import _stacked, fperror
from certbound.enclose._input import as_exact_float64_matrix, exact_float64_operand, power_of_two_scaling
from certbound.enclose.svd import CertificateWarning, SingularValueEnclosure

__all__ = [
    "spectral_norm",
    "frobenius_norm",
    "nuclear_norm",
    "schatten_quantity",
    "stable_rank",
    "norm_21",
    "norm_11",
    "norm_21_of_product",
    "norm_21_of_products",
    "norm_11_of_product",
    "norms_and_schatten",
    "norms_and_schatten_intervals",
    "norms_and_schatten_intervals_of_many",
    "Interval",
    "FLOAT_SCHATTEN_MAX_ROOTS",
    "FLOAT_SCHATTEN_MAX_DENOMINATOR",
    "as_arb_exponent",
]


def as_arb_exponent(p: Any) -> arb:
    """An exponent as an Arb ball: floats exactly, Fractions and decimal strings as tight balls.

    Parameters
    ----------
    p : int, float, Fraction, str, arb or numpy scalar
        The exponent: a float (also ``numpy.longdouble``) or ``Decimal`` by its
        exact value, a string such as ``"1/3"`` or ``"0.3"`` as the decimal or
        fraction it spells, an arb as given.

    Returns
    -------
    arb
        A ball containing the exponent (exact for ints, floats and dyadic
        fractions).

    Raises
    ------
    ValueError
        For a non-finite number or a string that is not a number.
    TypeError
        For anything else (None, a list, …).

    Examples
    --------
    >>> (as_arb_exponent("1/3") * 3).contains(1)
    True
    >>> as_arb_exponent("1/0")
    Traceback (most recent call last):
    ...
    ValueError: exponent '1/0' is not a number (e.g. 1, 0.5, "1/3")
    """
    with working_precision():
        if isinstance(p, arb):
            return p
        if isinstance(p, (int, np.integer)):
            return arb(int(p))
        if isinstance(p, str):
            return _exponent_of_string(p)
        if not isinstance(p, Fraction) and hasattr(p, "as_integer_ratio"):
            # float, numpy floats *including longdouble*, Decimal: the exact
            # value (float(p) would round a longdouble or a Decimal).
            try:
                p = Fraction(*p.as_integer_ratio())
            except (OverflowError, ValueError) as exc:
                raise ValueError(f"exponent {p!r} is not a finite number") from exc
        if isinstance(p, Fraction):
            return arb(p.numerator) / p.denominator
        try:
            x = float(p)
        except (TypeError, ValueError):
            raise TypeError(f"exponent must be a number or a numeric string, not {type(p).__name__} {p!r:.40}") from None
        return arb_from_float(x)


@functools.lru_cache(maxsize=256)
def _exponent_of_string(p: str) -> arb:
    """An exponent given as a decimal or ratio string, exactly (never through a float).

    Cached: the records parse the same few strings for every matrix (Arb balls are immutable).
    """
    try:
        q = Fraction(p)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f'exponent {p!r} is not a number (e.g. 1, 0.5, "1/3")') from None
    with working_precision():
        return arb(q.numerator) / q.denominator


#: A spectral sum as :func:`norms_and_schatten_intervals` returns it: float ends ``(lo, hi)`` with
#: ``lo ≤ value ≤ hi`` (Lemmas 8.2, 8.3), or an Arb ball where no float evaluation applies.
Interval = Union[Tuple[float, float], arb]

#: S_p with p = a/2^j (an exact dyadic) is evaluated from the float ends of the σᵢ (Lemma 8.2,
#: proofs/enclosure.md §8) when j is at most this; other exponents go through Arb per σᵢ.
FLOAT_SCHATTEN_MAX_ROOTS = 8

#: A rational p = a/b that Lemma 8.2 does not take is evaluated in floats (Lemma 8.3) when b is at most this.
FLOAT_SCHATTEN_MAX_DENOMINATOR = 1 << 10


def _pow_interval(x: arb, p: arb) -> arb:
    """Ball containing ``{t^p : t ∈ x, t ≥ 0}`` for p > 0 (monotone in t): the per-σ Arb evaluation.

    Parameters
    ----------
    x : arb
        A ball for some t ≥ 0 (its negative part is ignored).
    p : arb
        The exponent, a ball > 0.

    Returns
    -------
    arb
        The hull of ``lower(x)^p`` and ``upper(x)^p`` (``0^p = 0``); ``[0, ∞]`` for an unbounded x.
    """
    lo, hi = x.lower(), x.upper()
    if not hi.is_finite():
        return arb(0).union(arb.pos_inf())
    hi_p = hi ** p if hi > 0 else arb(0)
    lo_p = lo ** p if lo > 0 else arb(0)
    return lo_p.union(hi_p)


def _dyadic_exponent(q: Fraction | None) -> tuple[int, int] | None:
    """``(a, j)`` with ``q = a/2^j`` in lowest terms, for q ∈ (0, 2] with j ≤ FLOAT_SCHATTEN_MAX_ROOTS; else None.

    >>> _dyadic_exponent(Fraction(3, 4)), _dyadic_exponent(Fraction(2)), _dyadic_exponent(Fraction(1, 3))
    ((3, 2), (2, 0), None)
    """
    if q is None or not 0 < q <= 2:
        return None
    j = q.denominator.bit_length() - 1
    if q.denominator != 1 << j or j > FLOAT_SCHATTEN_MAX_ROOTS:
        return None
    return q.numerator, j


def _dyadic_key(x: arb) -> Fraction | None:
    """Exact value of an exact finite ball (a dict key), else None."""
    if not (x.is_exact() and x.is_finite()):
        return None
    man, exp = (int(v) for v in x.man_exp())
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2 ** (-exp))


def _rational_exponent(q: Fraction | None) -> tuple[int, int] | None:
    """``(a, b)`` with ``q = a/b`` in lowest terms, for a q ∈ (0, 2] that Lemma 8.2 does not take and b ≤ FLOAT_SCHATTEN_MAX_DENOMINATOR.

    >>> _rational_exponent(Fraction(1, 3)), _rational_exponent(Fraction(1, 2)), _rational_exponent(Fraction(1, 2**20 + 1))
    ((1, 3), None, None)
    """
    if q is None or not 0 < q <= 2 or _dyadic_exponent(q) is not None or q.denominator > FLOAT_SCHATTEN_MAX_DENOMINATOR:
        return None
    return q.numerator, q.denominator


def _exact_exponent(p: Any, pa: arb) -> Fraction | None:
    """The exact rational value of the exponent p as :func:`as_arb_exponent` reads it (None if not known exactly)."""
    if isinstance(p, arb):
        return _dyadic_key(p)
    if isinstance(p, (int, np.integer)):
        return Fraction(int(p))
    if isinstance(p, str):
        return Fraction(p)  # the parse as_arb_exponent made (it succeeded)
    if isinstance(p, Fraction):
        return p
    if hasattr(p, "as_integer_ratio"):
        return Fraction(*p.as_integer_ratio())
    return _dyadic_key(pa)


class _Exponent(NamedTuple):
    """A validated Schatten index: its ball, exact value, and the float evaluation that applies (None: not that one)."""

    ball: arb
    key: Fraction | None
    dyadic: tuple[int, int] | None  # (a, j), p = a/2^j: Lemma 8.2
    ident: tuple[int, int] | None  # (numerator, denominator) of key: a cheap dict key
    rational: tuple[int, int] | None = None  # (a, b), p = a/b not dyadic: Lemma 8.3


def _exponent(p: Any) -> _Exponent:
    """p as an :class:`_Exponent` (cached for hashable p: records parse the same few for every matrix).

    Raises ``ValueError`` unless p is 0 or in (0, 2].
    """
    if not isinstance(p, arb):
        try:
            return _exponent_cached(p)
        except TypeError:  # unhashable
            pass
    return _make_exponent(p)


def _make_exponent(p: Any) -> _Exponent:
    pa = as_arb_exponent(p)
    with working_precision():
        if not (pa == 0 or (pa > 0 and pa <= 2)):
            raise ValueError(f"Schatten index p must be 0 or in (0, 2], got {p!r}")
    key = _exact_exponent(p, pa)
    return _Exponent(pa, key, _dyadic_exponent(key), None if key is None else (key.numerator, key.denominator),
                     _rational_exponent(key))


_exponent_cached = functools.lru_cache(maxsize=256)(_make_exponent)
_ONE, _TWO = _make_exponent(1), _make_exponent(2)


def _step_down(x: np.ndarray) -> np.ndarray:
    # pred(x), clamped at 0: every quantity bounded here is ≥ 0 (Lemma 10.1).
    return np.maximum(np.nextafter(x, -np.inf), 0.0)


def _step_up(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.inf)


def _directed_powers(lo: np.ndarray, hi: np.ndarray, a: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Floats ``L ≤ lo^p`` and ``H ≥ hi^p`` entrywise, ``p = a/2^j``, for float arrays 0 ≤ lo, hi (Lemma 8.2).

    j square roots, then the a-th power by binary powering (square-and-multiply);
    every operation is correctly rounded and followed by one step outward
    (pred for L, clamped at 0; succ for H), so by Lemma 10.1 and monotonicity
    each step keeps the bound (proofs/enclosure.md §8). An overflow shows as
    an infinite H (the caller checks).

    Parameters
    ----------
    lo, hi : numpy.ndarray
        Nonnegative float arrays (lower and upper ends).
    a : int
        Numerator of p, ≥ 1.
    j : int
        Binary exponent of p's denominator, ≥ 0.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``L`` and ``H``; for p = 1 the inputs themselves.

    >>> L, H = _directed_powers(np.array([4.0]), np.array([4.0]), 3, 1)   # 4^(3/2) = 8
    >>> bool(L[0] <= 8 <= H[0]), bool(H[0] - L[0] < 1e-13)
    (True, True)
    """
    for _ in range(j):
        lo, hi = _step_down(np.sqrt(lo)), _step_up(np.sqrt(hi))
    L: np.ndarray | None = None
    H: np.ndarray | None = None
    while True:
        if a & 1:
            L = lo if L is None else _step_down(L * lo)
            H = hi if H is None else _step_up(H * hi)
        a >>= 1
        if not a:
            assert L is not None and H is not None
            return L, H
        lo, hi = _step_down(lo * lo), _step_up(hi * hi)


def _float_ends(enc: SingularValueEnclosure) -> tuple[np.ndarray, np.ndarray] | None:
    """The float ends ``(lower, upper)`` of the σᵢ not proved 0 (upper end > 0); None unless they are usable.

    Usable: finite, nonnegative, one pair per σᵢ (the enclosure's own arrays,
    ``lower[i] ≤ σᵢ ≤ upper[i]``). σᵢ with float upper end 0 are exactly 0 and
    contribute 0 to every S_p, p > 0.
    """
    lower, upper = enc.lower, enc.upper
    n = len(enc.sigma)
    if len(lower) != n or len(upper) != n or not (np.isfinite(upper).all() and (lower >= 0).all()):
        return None
    keep = upper > 0
    return lower[keep], upper[keep]


def _fsum_outward(L: np.ndarray, H: np.ndarray) -> tuple[float, float] | None:
    """``(max(pred(fsum L), 0), succ(fsum H))``: floats below ΣLᵢ and above ΣHᵢ (Lemma 8.2's sums; body: _fsum_outward_lists).

    ``math.fsum`` is the correctly rounded exact sum of its floats, so one step
    outward bounds the exact sum (Lemma 10.1). None if a sum overflows.

    Parameters
    ----------
    L, H : numpy.ndarray
        Nonnegative floats (lower and upper bounds of the terms).

    Returns
    -------
    (float, float) or None
        The two ends, the lower one ≥ 0.

    >>> _fsum_outward(np.array([1.0, 2.0]), np.array([1.0, 2.0]))   # one float each side of 3
    (2.9999999999999996, 3.0000000000000004)
    """
    return _fsum_outward_lists(L.tolist(), H.tolist())


def _fsum_outward_lists(L: list[float], H: list[float]) -> tuple[float, float] | None:
    """:func:`_fsum_outward` of two lists of floats."""
    try:
        s_lo, s_hi = math.fsum(L), math.fsum(H)
    except (OverflowError, ValueError):
        return None
    s_hi = math.nextafter(s_hi, math.inf)
    if not math.isfinite(s_hi):
        return None
    return max(math.nextafter(s_lo, -math.inf), 0.0), s_hi


def _schatten_float_sum(lo: np.ndarray, hi: np.ndarray, a: int, j: int) -> tuple[float, float] | None:
    """``(s_lo, s_hi)`` floats with ``s_lo ≤ Σσᵢ^p ≤ s_hi`` for p = a/2^j, from ends ``lo ≤ σᵢ ≤ hi`` (Lemma 8.2).

    The powers by :func:`_directed_powers`; each of the two sums is
    ``math.fsum`` (the correctly rounded exact sum of its floats) followed by
    one step outward (Lemma 10.1). None if a bound overflows.

    Parameters
    ----------
    lo, hi : numpy.ndarray
        Float ends of the σᵢ, ``0 ≤ lo``, ``hi`` finite.
    a, j : int
        p = a/2^j.

    Returns
    -------
    (float, float) or None
        The two ends, ``s_lo ≥ 0``.

    >>> lo, hi = _schatten_float_sum(np.array([1.0, 4.0]), np.array([1.0, 4.0]), 1, 1)   # √1 + √4
    >>> lo < 3 < hi, hi - lo < 4e-15
    (True, True)
    """
    if not hi.size:
        return 0.0, 0.0
    L, H = _directed_powers(lo, hi, a, j)
    return _fsum_outward(L, H)


def _directed_int_power(x: np.ndarray, n: int, up: bool) -> np.ndarray:
    """Floats ≥ x^n (``up``) or ≤ x^n entrywise, n ≥ 1, x ≥ 0: square-and-multiply, one step outward per product.

    Lemma 8.3 (proofs/enclosure.md §8). Upward, an overflow gives +∞; downward
    it gives the largest float, still ≤ the exact product.
    """
    step = _step_up if up else _step_down
    out: np.ndarray | None = None
    while True:
        if n & 1:
            out = x if out is None else step(out * x)
        n >>= 1
        if not n:
            assert out is not None
            return out
        x = step(x * x)


#: Lemma 8.3 tries the candidates pred^k / succ^k of numpy's power at these k (then gives up: Arb).
_ROOT_CANDIDATE_STEPS = (1, 2, 4, 8, 16)


def _power_candidate(t: np.ndarray, a: int, b: int) -> np.ndarray:
    """An approximation of t^(a/b) (its accuracy is not assumed anywhere: Lemma 8.3 verifies what it keeps).

    Computed on t = m·2^(bq + rem), rem ∈ [0, b), as (m·2^rem)^(a/b)·2^(aq), so that the rounding of the
    exponent a/b costs little (its effect grows with |log t|).
    """
    m, e = np.frexp(t)
    q, rem = np.divmod(e, b)
    return np.ldexp(np.power(np.ldexp(m, rem), a / b), q * a)


def _verified_power_bounds(t: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Floats ``c ≤ t^(a/b) ≤ d`` entrywise for floats t > 0, each end proved by exact comparison (Lemma 8.3).

    ``r ≈ t^(a/b)`` from ``numpy.power`` is only a candidate (no accuracy assumed);
    ``c = pred^k(r)`` is accepted once ``⌈c^b⌉ ≤ ⌊t^a⌋`` and ``d = succ^k(r)``
    once ``⌊d^b⌋ ≥ ⌈t^a⌉`` (directed integer powers, :func:`_directed_int_power`),
    the first k of :data:`_ROOT_CANDIDATE_STEPS` that passes, per entry.

    Parameters
    ----------
    t : numpy.ndarray
        Positive finite floats.
    a, b : int
        p = a/b, a, b ≥ 1.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray) or None
        ``c`` and ``d``; None if some entry passed no candidate or t^a overflows.

    >>> c, d = _verified_power_bounds(np.array([8.0, 2.0]), 1, 3)
    >>> bool(c[0] <= 2 <= d[0]), bool(c[1] ** 3 <= 2 <= d[1] ** 3)
    (True, True)
    """
    with np.errstate(all="ignore"):
        r = _power_candidate(t, a, b)
        ta_lo = _directed_int_power(t, a, up=False)
        ta_hi = _directed_int_power(t, a, up=True)
        if not (np.isfinite(r).all() and np.isfinite(ta_hi).all()):
            return None
        c = d = r
        lo, hi = np.zeros_like(t), np.zeros_like(t)
        lo_ok, hi_ok = np.zeros(t.shape, dtype=bool), np.zeros(t.shape, dtype=bool)
        for k in range(1, _ROOT_CANDIDATE_STEPS[-1] + 1):
            c, d = _step_down(c), _step_up(d)
            if k not in _ROOT_CANDIDATE_STEPS:
                continue
            new = ~lo_ok & (_directed_int_power(c, b, up=True) <= ta_lo)
            lo, lo_ok = np.where(new, c, lo), lo_ok | new
            new = ~hi_ok & np.isfinite(d) & (_directed_int_power(d, b, up=False) >= ta_hi)
            hi, hi_ok = np.where(new, d, hi), hi_ok | new
            if lo_ok.all() and hi_ok.all():
                return lo, hi
    return None


def _schatten_rational_sum(lo: np.ndarray, hi: np.ndarray, a: int, b: int) -> tuple[float, float] | None:
    """``(s_lo, s_hi)`` floats with ``s_lo ≤ Σσᵢ^p ≤ s_hi`` for p = a/b, from ends ``lo ≤ σᵢ ≤ hi`` (Lemma 8.3).

    ``loᵢ^p`` is bounded below by :func:`_verified_power_bounds`' c (0 for
    loᵢ = 0), ``hiᵢ^p`` above by its d; the sums are ``math.fsum`` one step
    outward, as in :func:`_schatten_float_sum`. None if a bound could not be
    verified or overflows.

    Parameters
    ----------
    lo, hi : numpy.ndarray
        Float ends of the σᵢ, ``0 ≤ lo``, ``0 < hi`` finite.
    a, b : int
        p = a/b.

    Returns
    -------
    (float, float) or None
        The two ends, ``s_lo ≥ 0``.

    >>> s_lo, s_hi = _schatten_rational_sum(np.array([8.0, 0.0]), np.array([8.0, 1.0]), 1, 3)   # 8^(1/3) + [0, 1]
    >>> s_lo <= 2 and 3 <= s_hi, s_hi - s_lo < 1 + 1e-14
    (True, True)
    """
    if not hi.size:
        return 0.0, 0.0
    pos = lo > 0
    n_pos = int(np.count_nonzero(pos))
    bounds = _verified_power_bounds(np.concatenate([lo[pos], hi]), a, b)
    if bounds is None:
        return None
    L = np.zeros_like(lo)
    L[pos] = bounds[0][:n_pos]
    H = bounds[1][n_pos:]
    return _fsum_outward(L, H)


_UNSET: Any = object()


def _schatten_interval(enc: SingularValueEnclosure, p: _Exponent, ends: Any = _UNSET) -> Interval:
    """S_p (p > 0) as float ends when Lemma 8.2 or 8.3 applies, else the per-σ Arb sum over the σᵢ not proved 0.

    ``ends``: :func:`_float_ends` of ``enc`` if already computed.
    """
    if p.dyadic is not None or p.rational is not None:
        if ends is _UNSET:
            ends = _float_ends(enc)
        if ends is None:
            out = None
        elif p.dyadic is not None:
            out = _schatten_float_sum(ends[0], ends[1], *p.dyadic)
        else:
            out = _schatten_rational_sum(ends[0], ends[1], *p.rational)
        if out is not None:
            return out
    with working_precision():
        upper = enc.upper
        skip = len(upper) == len(enc.sigma)  # σᵢ with float upper end 0 are 0: they add exactly 0
        return arb_sum(_pow_interval(s, p.ball) for i, s in enumerate(enc.sigma) if not (skip and upper[i] == 0))


def _interval_ball(x: Interval) -> arb:
    """An :data:`Interval` as a ball: the Arb hull of float ends (lower end kept ≥ 0), a ball unchanged."""
    if not isinstance(x, tuple):
        return x
    lo, hi = x
    with working_precision():
        if lo == hi:
            return arb(lo)
        if lo > 0:
            return arb(lo).union(arb(hi))
        return nonnegative_interval(arb(lo), arb(hi))


def _sqrt_interval(x: Interval) -> Interval:
    """√ of a nonnegative :data:`Interval`: correctly rounded square roots one step outward (Lemma 10.1)."""
    if not isinstance(x, tuple):
        with working_precision():
            return _nonneg(x).sqrt()
    lo, hi = x
    return (max(math.nextafter(math.sqrt(lo), -math.inf), 0.0),
            math.nextafter(math.sqrt(hi), math.inf) if hi > 0 else 0.0)


def spectral_norm(enc: SingularValueEnclosure) -> arb:
    """Ball containing ‖W‖₂ = σ₁ (0 for an empty matrix).

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.

    Returns
    -------
    arb
        ``enc.sigma[0]`` itself.
    """
    return enc.sigma[0] if enc.sigma else arb(0)


@under_float_model
def frobenius_norm(enc: SingularValueEnclosure) -> arb:
    """Ball containing ‖W‖_F = (Σσᵢ²)^{1/2} (√ of S₂ from Lemma 8.2, proofs/enclosure.md §8).

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.

    Returns
    -------
    arb
        A ball containing ‖W‖_F, lower end ≥ 0.
    """
    return _interval_ball(_sqrt_interval(_schatten_interval(enc, _TWO)))


@under_float_model
def nuclear_norm(enc: SingularValueEnclosure) -> arb:
    """Ball containing the nuclear norm Σσᵢ (S₁, Lemma 8.2).

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.

    Returns
    -------
    arb
        A ball containing ‖W‖_*.
    """
    return _interval_ball(_schatten_interval(enc, _ONE))


def _nonneg(x: arb) -> arb:
    # Intersect with [0, ∞): the true value is a sum of squares.
    lo = x.lower()
    return (lo if lo > 0 else arb(0)).union(x.upper())


@under_float_model
def schatten_quantity(enc: SingularValueEnclosure, p: Any) -> arb:
    """Ball containing ``S_p(W) = Σᵢ σᵢ^p`` (p ∈ (0, 2]) or rank(W) (p = 0).

    At p = 0 the result is the certified rank interval ``[rank.lower,
    rank.upper]`` (never a float "numerical rank"); for p > 0 the sum over
    nonzero σᵢ, evaluated on the enclosures (t ↦ t^p is increasing): from the
    float ends for an exact dyadic p = a/2^j with j ≤
    :data:`FLOAT_SCHATTEN_MAX_ROOTS` (0.5, 1, 2, 0.25, 1.5, …: Lemma 8.2,
    proofs/enclosure.md §8) or an exact rational a/b with b ≤
    :data:`FLOAT_SCHATTEN_MAX_DENOMINATOR` ("1/3", "0.3": Lemma 8.3), per σᵢ
    in Arb for any other p (or when a float bound overflows).

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.
    p : int, float, Fraction, str or arb
        The Schatten index (see :func:`as_arb_exponent`).

    Returns
    -------
    arb
        A ball containing S_p(W) (the rank interval at p = 0).

    Raises
    ------
    ValueError
        If p is neither 0 nor in (0, 2].

    >>> import numpy as np
    >>> from certbound.enclose import enclose_singular_values
    >>> enc = enclose_singular_values(np.diag([4.0, 1.0]))
    >>> schatten_quantity(enc, 0.5).contains(3)
    True
    """
    return _interval_ball(_schatten_or_rank(enc, _exponent(p)))


def _schatten_or_rank(enc: SingularValueEnclosure, p: _Exponent, ends: Any = _UNSET) -> Interval:
    if p.key == 0:
        return arb(enc.rank.lower).union(arb(enc.rank.upper))
    return _schatten_interval(enc, p, ends)


@under_callers_float_model
def norms_and_schatten_intervals(enc: SingularValueEnclosure, ps: Any) -> tuple[Interval, Interval, list[Interval]]:
    """‖W‖_F, ‖W‖_* and S_p for each p in ``ps``, as float ends where Lemma 8.2 or 8.3 applies.

    Each value is an :data:`Interval`: a pair of floats ``(lo, hi)`` with
    ``lo ≤ value ≤ hi`` (S_p for an exact dyadic p by Lemma 8.2, for another
    exact rational with a small denominator by Lemma 8.3, ‖W‖_* = S₁,
    ‖W‖_F = √S₂ with correctly rounded square roots one step outward), or an
    Arb ball (other p; the rank interval at p = 0). Each distinct exact
    exponent is summed once. :func:`norms_and_schatten` gives the same
    values as balls; ``certbound spectrum`` prints the float ends directly
    (:func:`certbound.ball.float_interval_to_json`). Soundness:
    proofs/enclosure.md §8 (Lemmas 8.2, 8.3).

    The floating-point environment is checked on entry, except inside a
    caller's :func:`certbound.ball.float_model_scope`, whose entry checked it
    (:func:`certbound.ball.under_callers_float_model`): a pipeline that calls
    this once per matrix of a model inside one scope pays one check.

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.
    ps : iterable
        Schatten indices, each 0 or in (0, 2] (see :func:`as_arb_exponent`).

    Returns
    -------
    (Interval, Interval, list of Interval)
        Frobenius norm, nuclear norm, and S_p per p, in order.

    Raises
    ------
    ValueError
        If some p is neither 0 nor in (0, 2].

    >>> import numpy as np
    >>> from certbound.enclose import enclose_singular_values
    >>> enc = enclose_singular_values(np.diag([3.0, 4.0]))
    >>> fro, nuc, (s2,) = norms_and_schatten_intervals(enc, ["2"])
    >>> fro[0] <= 5 <= fro[1], nuc[0] <= 7 <= nuc[1], s2[0] <= 25 <= s2[1]
    (True, True, True)
    """
    cache: dict[tuple[int, int], Interval] = {}
    ends = _float_ends(enc)

    def s_p(p: _Exponent) -> Interval:
        if p.ident is not None and p.ident in cache:
            return cache[p.ident]
        v = _schatten_or_rank(enc, p, ends)
        if p.ident is not None:
            cache[p.ident] = v
        return v

    out = [s_p(_exponent(p)) for p in ps]
    nuclear = s_p(_ONE)
    fro = _sqrt_interval(s_p(_TWO))
    return fro, nuclear, out


@under_callers_float_model
def norms_and_schatten_intervals_of_many(encs: Any, ps: Any) -> list[tuple[Interval, Interval, list[Interval]]]:
    """:func:`norms_and_schatten_intervals` of each enclosure: the same values, Lemma 8.2's powers in one pass per length.

    When every p is an exact dyadic (Lemma 8.2: the default 0.5, 1, 2), the
    float ends of enclosures with the same number of σᵢ are stacked into one
    array each and :func:`_directed_powers` runs once on the stack; the σᵢ
    proved 0 (upper end 0, which :func:`_float_ends` drops) are masked to 0
    after every power, so each row's two ``math.fsum`` see the same nonzero
    floats plus exact zeros, i.e. the same sums, and a row with no such σᵢ
    gives (0, 0) as the per-enclosure path does (proofs/enclosure.md §8,
    *Stacked evaluation*). Any other enclosure (a single one of its length,
    unusable float ends, a sum that overflows) and any other ``ps`` go
    through :func:`norms_and_schatten_intervals` itself.

    Parameters
    ----------
    encs : sequence of SingularValueEnclosure
        Certified singular values of each matrix.
    ps : iterable
        Schatten indices, each 0 or in (0, 2].

    Returns
    -------
    list of (Interval, Interval, list of Interval)
        Per enclosure, in order: as :func:`norms_and_schatten_intervals`.

    Raises
    ------
    ValueError
        If some p is neither 0 nor in (0, 2].

    >>> import numpy as np
    >>> from certbound.enclose import enclose_singular_values
    >>> encs = [enclose_singular_values(np.diag([3.0, 4.0])), enclose_singular_values(np.diag([1.0, 0.0]))]
    >>> norms_and_schatten_intervals_of_many(encs, [2]) == [norms_and_schatten_intervals(e, [2]) for e in encs]
    True
    """
    ps = list(ps)
    encs = list(encs)
    exps = [_exponent(p) for p in ps]
    out: list[Any] = [None] * len(encs)
    if all(e.dyadic is not None for e in exps):
        dyadics = list(dict.fromkeys([e.dyadic for e in exps] + [_ONE.dyadic, _TWO.dyadic]))
        groups: dict[int, list[int]] = {}
        for i, enc in enumerate(encs):
            n = len(enc.sigma)
            if n and len(enc.lower) == n and len(enc.upper) == n:
                groups.setdefault(n, []).append(i)
        for idx in groups.values():
            if len(idx) < 2:
                continue
            lo = np.stack([encs[i].lower for i in idx]).astype(np.float64, copy=False)
            hi = np.stack([encs[i].upper for i in idx]).astype(np.float64, copy=False)
            usable = np.isfinite(hi).all(axis=1) & (lo >= 0).all(axis=1)  # _float_ends' test, per row
            keep = hi > 0
            cols = keep.any(axis=0)  # σᵢ proved 0 in every row (a head's zero tail) need no column at all
            keep, lo, hi = keep[:, cols], lo[:, cols], hi[:, cols]
            lo, hi = np.where(keep, lo, 0.0), np.where(keep, hi, 0.0)
            empty = ~keep.any(axis=1)
            sums: dict[tuple[int, int], list[Any]] = {}
            for a, j in dyadics:
                with np.errstate(over="ignore", invalid="ignore"):
                    L, H = _directed_powers(lo, hi, a, j)
                # masked σᵢ: lo = 0 keeps L at 0 (√0 = 0, 0·x = 0, pred clamped at 0); H steps up from 0, so mask it
                L, H = L.tolist(), np.where(keep, H, 0.0).tolist()
                sums[(a, j)] = [(0.0, 0.0) if empty[r] else _fsum_outward_lists(L[r], H[r]) for r in range(len(idx))]
            for r, i in enumerate(idx):
                if not usable[r] or any(sums[d][r] is None for d in dyadics):
                    continue
                out[i] = (_sqrt_interval(sums[_TWO.dyadic][r]), sums[_ONE.dyadic][r],
                          [sums[e.dyadic][r] for e in exps])
    return [v if v is not None else norms_and_schatten_intervals(enc, ps) for v, enc in zip(out, encs)]


def norms_and_schatten(enc: SingularValueEnclosure, ps: Any) -> tuple[arb, arb, list[arb]]:
    """``(frobenius_norm(enc), nuclear_norm(enc), [schatten_quantity(enc, p) for p in ps])``.

    The same balls as the separate calls, each sum computed once
    (:func:`norms_and_schatten_intervals`, whose float ends are turned into
    their Arb hulls): S_p for exponents that are equal exact balls is shared,
    the nuclear norm is S₁ and the Frobenius norm is √S₂ (proofs/enclosure.md §8).

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.
    ps : iterable
        Schatten indices, each 0 or in (0, 2].

    Returns
    -------
    (arb, arb, list of arb)
        Balls for ‖W‖_F, ‖W‖_* and each S_p.

    >>> import numpy as np
    >>> from certbound.enclose import enclose_singular_values
    >>> enc = enclose_singular_values(np.diag([3.0, 4.0]))
    >>> fro, nuc, (s1, s2) = norms_and_schatten(enc, ["1", 2])
    >>> fro.contains(5), nuc.contains(7), s1.contains(7), s2.contains(25)
    (True, True, True, True)
    """
    fro, nuclear, out = norms_and_schatten_intervals(enc, ps)
    return _interval_ball(fro), _interval_ball(nuclear), [_interval_ball(v) for v in out]


@under_float_model
def stable_rank(enc: SingularValueEnclosure) -> arb:
    """Ball containing the stable rank ‖W‖_F² / ‖W‖₂² (0 for W = 0).

    ‖W‖_F² = S₂ from Lemma 8.2, divided by σ₁² in Arb, intersected with the
    always-true range [1, rank] (proofs/enclosure.md §8).

    Parameters
    ----------
    enc : SingularValueEnclosure
        Certified singular values of W.

    Returns
    -------
    arb
        A ball containing the stable rank.
    """
    with working_precision():
        s1 = spectral_norm(enc)
        if s1.upper() == 0:
            return arb(0)
        lo1 = s1.lower()
        if not lo1 > 0:
            # σ₁ may be 0: stable rank ∈ [1, rank] (1 ≤ ‖W‖_F²/‖W‖₂² ≤ rank).
            return arb(1).union(arb(max(enc.rank.upper, 1)))
        f2 = _interval_ball(_schatten_interval(enc, _TWO))
        out = f2 / (s1 * s1)
        # Intersect with the always-true range [1, rank] (proofs/enclosure.md §8):
        # the independent enclosures of ‖W‖_F² and σ₁² can let `out` dip below 1.
        lo, hi = out.lower(), out.upper()
        top = arb(max(enc.rank.upper, 1))
        return (lo if lo > 1 else arb(1)).union(hi if hi < top else top)


def _column_sumsq_bounds(M: np.ndarray, abs_err: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Float lower/upper bounds on the exact column sums of squares of a float matrix.

    With ``v = fl(Σᵢ mᵢⱼ²)``: ``exact ≤ (v + 2kη)/(1−γ_k)`` and
    ``exact ≥ (v − 2kη)/(1+γ_k)`` (proofs/enclosure.md §2, Lemma 2.2).
    """
    with np.errstate(over="ignore"):
        v = np.einsum("ij,ij->j", M, M)
    return _sumsq_bounds_of(v, M.shape[0])


def _sumsq_bounds_of(v: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_column_sumsq_bounds` from the float sums ``v = fl(Σ mᵢⱼ²)`` of k squares each (any order)."""
    hi = fperror._inflate(v, k)
    g = 2.0 * (k + 2) * fperror.UNIT_ROUNDOFF
    lo = np.maximum((v - 2.0 * (k + 2) * fperror.ETA) * (1.0 - g) * (1.0 - 2.0**-52), 0.0)
    return lo, hi


@under_float_model
def norm_21(W: Any) -> arb:
    """Ball containing ``‖W‖_{2,1} = Σⱼ ‖W_{:,j}‖₂`` (sum of column norms).

    Row-vector orientation as in the reference paper: columns of the array as
    stored. Proof: proofs/enclosure.md §8.

    The matrix is first scaled by an exact power of two so that its largest
    entry lies in [1, 2): squares can neither overflow (entries ≥ 2⁵¹²) nor
    underflow for a tiny matrix; entries that scaling down makes subnormal
    move by at most 2⁻¹⁰⁷⁵, i.e. each column norm by at most √m·2⁻¹⁰⁷⁵,
    which is added (proofs/enclosure.md §8, "Scaled entrywise norms").

    Parameters
    ----------
    W : array_like
        A 2-D float64 matrix (exactly representable entries; see
        :func:`certbound.enclose._input.as_exact_float64_matrix`).

    Returns
    -------
    arb
        A ball containing ‖W‖_{2,1}, lower end ≥ 0.

    Raises
    ------
    ValueError
        For a non-2-D, non-finite or inexactly converted input.

    Examples
    --------
    >>> import numpy as np
    >>> norm_21(np.array([[3.0, 0.0], [4.0, 1.0]])).contains(6)
    True
    >>> norm_21(np.array([[3e300], [4e300]])).contains(arb(5e300))
    True
    """
    one_pass = _unscaled_column_sumsq(W)
    if one_pass is not None:
        # One pass over W (proofs/enclosure.md §8, "One pass"): the floats of the scaled evaluation below.
        v, k, (m, n) = one_pass
        X, exact = W, True
    else:
        X, transposed, owned, amax = _norm_operand(W)
        m, n = X.shape[::-1] if transposed else X.shape
        if X.size == 0:
            return arb(0)
        v, k, exact = _scaled_column_sumsq(X, transposed, owned, amax)
    bounds = _sumsq_bounds_of(v, m)
    # W = 0 read off the column sums, not by a pass over W: if W ≠ 0 then max|Ws| ∈ [1, 2), so its column's
    # fl(Σ w²) ≥ 1 and that lower bound is > 0; if W = 0 every lower bound is 0.
    if not bounds[0].any():
        return arb(0)
    out = _norm21_from_columns(X, None, bounds)
    return _scaled_back(out, k, arb(0) if exact else arb(n) * arb(m).sqrt(), "norm_21")


#: Entries per row block of :func:`_scaled_column_sumsq` (1 MiB of float64: a block stays in cache
#: between its scaling, its squares and their sum).
_SUMSQ_BLOCK_ENTRIES = 1 << 17
#: Entries per transposing copy of :func:`_row_sums_in_order` (128 KiB).
_TRANSPOSE_BLOCK_ENTRIES = 1 << 14


def _scaled_column_sumsq(X: np.ndarray, transposed: bool, owned: bool,
                         amax: float | None) -> tuple[np.ndarray, int, bool]:
    """``(v, k, exact)``: v = ``fl(Σᵢ (2ᵏwᵢⱼ)²)`` per column j of W (i in order); the scaling's k and flag.

    ``X`` is W (``transposed`` False) or Wᵀ (True), C-contiguous. The floats
    are those that ``np.einsum("ij,ij->j", Ws, Ws)`` gives on the scaled
    C-ordered matrix ``Ws, k, exact = power_of_two_scaling(W)``, which is what
    :func:`norm_21` computed before (for two or more columns einsum adds the
    squares row after row, as this function does; one column takes einsum
    itself), but in one pass over X by row blocks instead of a scaled
    C-ordered copy of all of W and a second pass over it: each block is
    scaled by the same 2ᵏ (k comes from ``amax`` alone) and squared, and its
    squares are added in the order of i: for W, to the running column sums
    row after row (the running sums folded into the block's first row, then
    ``np.add.reduce`` down the rows); for Wᵀ, whose rows are W's columns,
    along each row from left to right (:func:`_row_sums_in_order`). A
    Fortran-ordered W so needs no C-ordered copy. ``exact`` is the AND of the blocks' flags, i.e.
    no entry of W became subnormal (proofs/enclosure.md §8, "Scaled entrywise
    norms"). Any order of the additions would be sound (Lemma 2.2); this one
    keeps the floats, hence the ball, of the whole-matrix form.

    Parameters
    ----------
    X : numpy.ndarray
        W or Wᵀ: finite C-contiguous float64, nonempty (W with two or more
        rows and columns when ``transposed``).
    transposed : bool
        X is Wᵀ.
    owned : bool
        X is the caller's own copy (scaled and squared in place).
    amax : float or None
        ``max(X.max(), −X.min())`` if already read.

    Returns
    -------
    tuple
        ``(v, k, exact)``, v of length W's number of columns.
    """
    rows, cols = X.shape
    if cols == 1 and not transposed:
        # One column: einsum's own loop (a dot product with several accumulators), on the scaled copy as before.
        Xs, k, exact = power_of_two_scaling(X, inplace=owned, amax=amax)
        with np.errstate(over="ignore"):
            return np.einsum("ij,ij->j", Xs, Xs), k, exact
    if amax is None:
        amax = max(float(X.max()), -float(X.min()))
    step = max(1, _SUMSQ_BLOCK_ENTRIES // cols)
    in_place = owned and X.flags.writeable
    buf = None if in_place else np.empty((min(step, rows), cols))  # one block's scaled squares, reused
    v: np.ndarray | None = None
    parts: list[np.ndarray] = []
    k, exact = 0, True
    with np.errstate(over="ignore"):
        for i in range(0, rows, step):
            block = X[i:i + step]
            room = None if buf is None else buf[:block.shape[0]]
            scaled, k, block_exact = power_of_two_scaling(block, inplace=in_place, amax=amax, out=room)
            exact = exact and block_exact
            # squared where the scaled block is (the buffer or the caller's copy); an unscaled block of the
            # caller's W (k = 0) is squared into the buffer
            sq = np.multiply(scaled, scaled, out=scaled if (in_place or scaled is not block) else room)
            if transposed:
                parts.append(_row_sums_in_order(sq))
                continue
            if v is not None:
                sq[0] += v
            v = np.add.reduce(sq, axis=0)
    if transposed:
        return np.concatenate(parts), k, exact
    assert v is not None
    return v, k, exact


#: Rows of Wᵀ per transposed block of :func:`_unscaled_column_sumsq` (half of it above 1024 columns), copied
#: :data:`_TRANSPOSED_PIECE` rows at a time (measured fastest at 384×1536 and 768×3072, both orientations).
_TRANSPOSED_ROWS = 128
_TRANSPOSED_PIECE = 16
#: Squares above this bound are normal floats whose scaling by any power of two that keeps them normal is exact.
_MIN_NORMAL = 2.0**-1022


def _unscaled_column_sumsq(W: Any) -> tuple[np.ndarray, int, tuple[int, int]] | None:
    """:func:`_scaled_column_sumsq`'s ``(v, k)`` and W's shape from one pass over W's unscaled squares, or None.

    For a float64 ndarray W in C order (X = W) or, with two or more rows and
    columns, in Fortran order (X = Wᵀ), with two or more columns: the squares
    ``q = fl(w²)`` of X's row blocks are formed in a buffer (no scaled copy) and
    added in the order of :func:`_scaled_column_sumsq` (down W's columns, i
    in order: for W the same blocks and fold; for Wᵀ a few of its rows at a time
    copied transposed into the buffer, so that their sums run down the buffer's
    rows instead of :func:`_row_sums_in_order`'s many small copies), giving
    ``v₀ = fl(Σᵢ wᵢⱼ²)``, while the smallest and largest q of each block are read
    from the buffer (still in cache). When every q is a
    normal float (``min q > 2⁻¹⁰²²``: no zero, no tiny entry) and every v₀ is
    finite (so no square or partial sum overflowed, and no entry was NaN or
    infinite), the exponent of max|W| is read off ``max q = fl(max|W|²)``,
    k is :func:`~certbound.enclose._input.power_of_two_scaling`'s, and
    ``v = 2²ᵏ·v₀`` exactly, with ``exact`` True, provided also the smallest
    scaled square ``2²ᵏ·min q`` is at least 2⁻¹⁰²¹: rounding in the normal range
    commutes with scaling by 2²ᵏ, so each square and partial sum of the scaled
    evaluation is 2²ᵏ times the unscaled one (proofs/enclosure.md §8, "One pass").
    Any other case returns None (the caller takes the scaled evaluation).

    Parameters
    ----------
    W : Any
        The matrix as given to :func:`norm_21`.

    Returns
    -------
    tuple or None
        ``(v, k, (m, n))``: the column sums of the scaled squares, the scaling exponent, W's shape.
    """
    if not (type(W) is np.ndarray and W.dtype == np.float64 and W.ndim == 2 and W.size):
        return None
    if W.flags.c_contiguous and W.shape[1] >= 2:
        X, transposed = W, False
    elif W.flags.f_contiguous and min(W.shape) >= 2:
        X, transposed = W.T, True
    else:
        return None
    rows, cols = X.shape
    qmin, qmax = math.inf, 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        if transposed:
            # X's rows are W's columns: a few rows at a time are copied transposed into a buffer (W's own
            # layout for them, C-ordered), squared there and added down the buffer's rows, i.e. each of X's
            # rows from left to right (np.add.reduce over axis 0 of a C-ordered array of two or more columns
            # adds row after row; a single row is summed by np.add.accumulate, a running sum).
            step = max(2, _TRANSPOSED_ROWS if cols <= 1024 else _TRANSPOSED_ROWS // 2)
            piece = max(1, _TRANSPOSED_PIECE)
            v0 = np.empty(rows)
            buf = np.empty((cols, min(step, rows)))
            for i in range(0, rows, step):
                b = min(step, rows - i)
                T = buf if b == buf.shape[1] else np.empty((cols, b))
                for j in range(0, b, piece):  # a few rows per copy: numpy's transposing copy is fastest so
                    np.copyto(T[:, j:j + piece], X[i + j:i + min(j + piece, b)].T)
                sq = np.multiply(T, T, out=T)
                lo, hi = float(sq.min()), float(sq.max())
                if not lo > _MIN_NORMAL:  # a zero, a tiny entry or a NaN: the scaled evaluation
                    return None
                qmin, qmax = min(qmin, lo), max(qmax, hi)
                v0[i:i + b] = np.add.reduce(sq, axis=0) if b > 1 else np.add.accumulate(sq[:, 0])[-1:]
        else:
            step = max(1, _SUMSQ_BLOCK_ENTRIES // cols)
            buf = np.empty((min(step, rows), cols))  # one block's squares, reused
            v: np.ndarray | None = None
            for i in range(0, rows, step):
                block = X[i:i + step]
                sq = np.multiply(block, block, out=buf[:block.shape[0]])
                lo, hi = float(sq.min()), float(sq.max())
                if not lo > _MIN_NORMAL:  # a zero, a tiny entry or a NaN: the scaled evaluation
                    return None
                qmin, qmax = min(qmin, lo), max(qmax, hi)
                if v is not None:
                    sq[0] += v
                v = np.add.reduce(sq, axis=0)
            assert v is not None
            v0 = v
    if not (math.isfinite(qmax) and np.isfinite(v0).all()):
        return None
    # max|W| ∈ [2^e, 2^(e+1)) gives fl(max|W|²) ∈ [2^2e, 2^(2e+2)): its binade is 2e or 2e + 1.
    k = -((math.frexp(qmax)[1] - 1) // 2)
    if math.ldexp(qmin, 2 * k) < 2.0**-1021:
        return None
    return v0 * math.ldexp(1.0, 2 * k), k, (W.shape[0], W.shape[1])


def _row_sums_in_order(S: np.ndarray) -> np.ndarray:
    """Each row's sum ``(…(s₀ + s₁) + …) + s_last`` (left to right), for a C-contiguous 2-D array.

    By column blocks of the transpose (cache-sized transposing copies), added
    with ``np.add.reduce`` down their rows, which for a C-contiguous array of two
    or more columns adds row after row; the running sums are folded into each
    block's first row. One row is summed by ``np.add.accumulate`` (a running sum).
    """
    r, c = S.shape
    if r == 1:
        # One row: np.add.reduce would sum it as a vector, with several accumulators; a running sum is in order.
        return np.add.accumulate(S[0])[-1:]
    step = max(1, _TRANSPOSE_BLOCK_ENTRIES // r)
    v: np.ndarray | None = None
    for j in range(0, c, step):
        T = np.ascontiguousarray(S[:, j:j + step].T)
        if v is not None:
            T[0] += v
        v = np.add.reduce(T, axis=0)
    assert v is not None
    return v


#: Above this many entries :func:`_max_min` reads X by blocks of this many (4 MiB), each block's max and min
#: in turn, so the second reduction finds the block in cache (one pass from memory instead of two).
_MAX_MIN_BLOCK_ENTRIES = 1 << 19


def _max_min(X: np.ndarray) -> tuple[float, float]:
    """``(X.max(), X.min())`` as floats, or a non-finite pair as soon as a block holds NaN or ±inf.

    A nonempty C-contiguous float array. The reductions propagate NaN, so a block with a NaN gives NaN and a
    block with an infinite entry an infinite max or min; every block finite means the global max and min are
    the largest block max and the smallest block min.
    """
    n = X.shape[1]
    if X.size <= 2 * _MAX_MIN_BLOCK_ENTRIES:
        return float(X.max()), float(X.min())
    rows = max(1, _MAX_MIN_BLOCK_ENTRIES // n)
    hi, lo = -math.inf, math.inf
    for i in range(0, X.shape[0], rows):
        block = X[i:i + rows]
        bh, bl = float(block.max()), float(block.min())
        if not (math.isfinite(bh) and math.isfinite(bl)):
            return bh, bl
        hi, lo = max(hi, bh), min(lo, bl)
    return hi, lo


def _norm_operand(W: Any) -> tuple[np.ndarray, bool, bool, float | None]:
    """``(X, transposed, owned, amax)`` for :func:`norm_21`: X = W, or Wᵀ, exact C-contiguous float64.

    A float64 ndarray that is C-contiguous (X = W) or, with two or more rows
    and columns, Fortran-contiguous (X = Wᵀ, a view: ``transposed`` True) is
    used as it is, not copied, and its finiteness is read off ``X.max()``
    and ``X.min()``, the read that the scaling needs anyway (returned as
    ``amax = max(X.max(), −X.min())``): both reductions return NaN if some
    entry is NaN, and an infinite entry makes one of them infinite, so both
    are finite exactly when every entry is (proofs/enclosure.md §8, "Scaled
    entrywise norms"); a non-finite one is reported by
    :func:`~certbound.enclose._input.as_exact_float64_matrix` with its usual
    message. Any other input goes through
    :func:`~certbound.enclose._input.exact_float64_operand` (a C-ordered
    exact copy or W itself; ``amax`` None).
    """
    if type(W) is np.ndarray and W.dtype == np.float64 and W.ndim == 2:
        X = W if W.flags.c_contiguous else W.T if W.flags.f_contiguous and min(W.shape) >= 2 else None
        if X is not None:
            if not X.size:
                return X, X is not W, False, None
            hi, lo = _max_min(X)
            if not (math.isfinite(hi) and math.isfinite(lo)):
                as_exact_float64_matrix(W)  # raises ValueError naming the first NaN/Inf entry
                raise AssertionError("norm_21: a non-finite max or min of finite entries")  # pragma: no cover
            return X, X is not W, False, max(hi, -lo)
    X, _, owned = exact_float64_operand(W, allow_transpose=False)
    return X, False, owned, None


def _scaled_back(out: arb, k: int, perturbation_quanta: arb, what: str, warn: bool = True) -> arb:
    """``2⁻ᵏ·(out ± perturbation_quanta·2⁻¹⁰⁷⁵)`` as a nonnegative ball; warn if unbounded.

    ``out`` encloses the norm of the scaled float matrix, which differs from
    2ᵏ times the exact one by at most ``perturbation_quanta·2⁻¹⁰⁷⁵`` (the
    subnormal roundings of scaling down, proofs/enclosure.md §8).
    """
    with working_precision():
        lo, hi = out.lower(), out.upper()
        if perturbation_quanta != 0:
            d = perturbation_quanta * arb(2) ** -1075
            lo, hi = lo - d, hi + d
        two = arb(2) ** (-k)
        res = nonnegative_interval(lo * two, hi * two)
    if warn and not res.is_finite():
        warnings.warn(f"{what}: a float bound overflowed even after power-of-two scaling; "
                      "returning the valid but trivial enclosure [0, inf]", CertificateWarning, stacklevel=3)
    return res


def _norm21_from_columns(M: np.ndarray, colerr: np.ndarray | None,
                         bounds: tuple[np.ndarray, np.ndarray] | None = None) -> arb:
    """Ball for Σⱼ‖M_{:,j}‖₂ (± colerr[j] per column), vectorised.

    Column sums of squares are bounded by Lemma 2.2; ``fl(√x)`` is correctly
    rounded, and each further float step is one rounding, so multiplying by
    ``1 ± 2⁻⁵⁰`` (≥ four units of roundoff) after every step keeps the bounds
    directed; the final sums of nonnegative floats are finished in Arb
    (proofs/enclosure.md §8). ``bounds``: :func:`_column_sumsq_bounds` of M if already computed.
    """
    if M.size == 0:
        return arb(0)
    lo, hi = bounds if bounds is not None else _column_sumsq_bounds(M)
    up, down = 1.0 + 2.0**-50, 1.0 - 2.0**-50
    with np.errstate(over="ignore", invalid="ignore"):
        c_hi = np.sqrt(hi) * up
        c_lo = np.sqrt(lo) * down
        if colerr is not None:
            # Triangle inequality: the exact column norm is within ±colerr[j].
            c_hi = (c_hi + colerr * up) * up
            c_lo = np.maximum((c_lo - colerr * up) * down, 0.0)
    # After an overflow (inf − inf) a lower end may be NaN: 0 is always a valid lower end.
    c_lo = np.where(np.isnan(c_lo), 0.0, c_lo)
    with working_precision():
        return nonnegative_interval(fperror.sum_nonneg_lower(c_lo), fperror.sum_nonneg_upper(c_hi))


@under_float_model
def norm_11(W: Any) -> arb:
    """Ball containing ``‖W‖_{1,1} = Σᵢⱼ |wᵢⱼ|``.

    ``math.fsum`` returns the correctly rounded exact sum, so the ball is the
    float result ± one ulp — after an exact power-of-two scaling to max |w| in
    [1, 2), so the sum cannot overflow and a tiny matrix's ulp is not a
    subnormal one (entries that scaling down rounds move by ≤ 2⁻¹⁰⁷⁵ each,
    which is added; proofs/enclosure.md §8).

    Parameters
    ----------
    W : array_like
        A 2-D float64 matrix (exactly representable entries).

    Returns
    -------
    arb
        A ball containing ‖W‖_{1,1}, lower end ≥ 0.

    Raises
    ------
    ValueError
        For a non-2-D, non-finite or inexactly converted input.

    Examples
    --------
    >>> import numpy as np
    >>> norm_11(np.array([[0.5, -0.25], [0.125, 0.0]])).contains(arb(0.875))
    True
    """
    W = as_exact_float64_matrix(W)
    if W.size == 0 or not np.any(W):
        return arb(0)
    Ws, k, exact = power_of_two_scaling(W)
    s = math.fsum(np.abs(Ws).ravel().tolist())  # ≤ 2·size: no overflow
    with working_precision():
        out = nonnegative_interval(arb_from_float(math.nextafter(s, -math.inf)),
                                   arb_from_float(math.nextafter(s, math.inf)))
    return _scaled_back(out, k, arb(0) if exact else arb(W.size), "norm_11")


def _formed_product_with_error(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``fl(A Bᵀ)`` and a float upper bound on the entrywise rounding error."""
    d = A.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow → inf → an infinite (valid) bound
        P = A @ B.T
        N = np.abs(A) @ np.abs(B).T  # nonnegative: exact ≤ inflate(N)
    err = fperror._inflate(fperror._inflate(N, d) * (2.0 * (d + 2) * fperror.UNIT_ROUNDOFF), 1)
    # γ_d ≤ (d+2)u; the factor-2 slack above also absorbs this addition's rounding.
    err = err + 4.0 * (d + 2) * fperror.ETA
    return P, err


@under_float_model
def norm_21_of_product(A: Any, B: Any) -> arb:
    """Ball containing ``‖A Bᵀ‖_{2,1}`` for thin factors (the m×n product is not needed).

    Column j of W = A Bᵀ is ``A b_j`` (b_j = row j of B), so its squared norm
    is ``b_jᵀ (AᵀA) b_j``: with the d×d Gram matrix this costs O((m+n)d²)
    instead of the O(mnd) of forming W (:func:`_norm_21_of_product_gram`,
    Lemma 8.1 of proofs/enclosure.md §8). When d(m+n) > mn, or when a float
    overflow makes the Gram path give up, the product is formed in floats
    instead: ``|fl(A Bᵀ) − A Bᵀ| ≤ γ_d |A||B|ᵀ + 2dη`` entrywise, so each
    column norm of the exact product lies within the float column norm ± the
    norm of that error column (triangle inequality). Proof: proofs/enclosure.md §8.

    Parameters
    ----------
    A : array_like, m×d
    B : array_like, n×d
        The stored factors (converted exactly to float64; W = A Bᵀ).

    Returns
    -------
    arb
        A nonnegative ball containing ``Σ_j ‖(A Bᵀ)_{:,j}‖₂`` (exactly 0 for a zero factor).

    Raises
    ------
    ValueError
        If the inner dimensions differ, or an entry is NaN/Inf or not exactly representable in float64.

    Examples
    --------
    >>> import numpy as np
    >>> norm_21_of_product(np.array([[3.0], [4.0]]), np.array([[1.0], [-2.0]])).contains(15)
    True
    """
    A = as_exact_float64_matrix(A, "A")
    B = as_exact_float64_matrix(B, "B")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"inner dimensions differ: A is {A.shape}, B is {B.shape}")
    m, n, d = A.shape[0], B.shape[0], A.shape[1]
    if m == 0 or n == 0 or d == 0 or not np.any(A) or not np.any(B):
        return arb(0)

    def unscaled(A: np.ndarray, B: np.ndarray) -> arb:
        out = _norm_21_of_product_gram(A, B) if d * (m + n) <= m * n else None
        return _norm_21_of_product_formed(A, B) if out is None else out

    # Column j moves by ≤ 5d√m·2⁻¹⁰⁷⁵ under scaling (proofs/enclosure.md §8): n columns.
    return _product_norm(A, B, unscaled, n * arb(m).sqrt(), "norm_21_of_product")


@under_float_model
def norm_21_of_products(As: Any, Bs: Any) -> list[arb]:
    """``[norm_21_of_product(A, B) for A, B in zip(As, Bs)]``, same-shaped products as one stack.

    The products whose factors have equal shapes, safe scales (no scaling
    needed, see :func:`norm_21_of_product`) and d(m+n) ≤ mn are evaluated by
    Lemma 8.1 with one stacked numpy call per step (the lemma holds slice by
    slice for any summation order: proofs/enclosure.md §8, "Batched"); each
    ball is finished exactly as in the single evaluation. Every other
    product, and any whose stacked evaluation is not finite, goes through
    :func:`norm_21_of_product` itself (which may warn).

    Parameters
    ----------
    As, Bs : sequences of array_like
        ``As[i]`` m_i×d_i and ``Bs[i]`` n_i×d_i (W_i = A_i B_iᵀ).

    Returns
    -------
    list of arb
        Nonnegative balls containing ``‖As[i] @ Bs[i].T‖_{2,1}``, in input order.

    Raises
    ------
    ValueError
        Different lengths, inner dimensions that differ, NaN/Inf entries.

    >>> import numpy as np
    >>> As = [np.array([[3.0], [4.0]]), np.array([[1.0], [0.0]])]
    >>> Bs = [np.array([[1.0], [-2.0]]), np.array([[2.0], [2.0]])]
    >>> [bool(x.contains(v)) for x, v in zip(norm_21_of_products(As, Bs), [15, 4])]
    [True, True]
    """
    As, Bs = list(As), list(Bs)
    if len(As) != len(Bs):
        raise ValueError(f"{len(As)} left factors but {len(Bs)} right factors")
    out: list[arb | None] = [None] * len(As)
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for i, (A, B) in enumerate(zip(As, Bs)):
        A = as_exact_float64_matrix(A, "A")
        B = as_exact_float64_matrix(B, "B")
        m, d = A.shape
        n = B.shape[0]
        if B.shape[1] == d and m and n and d and d * (m + n) <= m * n:
            groups.setdefault((A.shape, B.shape), []).append((i, A, B))
        else:
            out[i] = norm_21_of_product(A, B)
    for (sa, sb), items in groups.items():
        # Stacks of about _STACK_BYTES (larger ones run slower: every elementwise step
        # leaves the cache), split into equal parts.
        step = max(1, _STACK_BYTES // (8 * (sa[0] + sb[0]) * sa[1]))
        parts = -(-len(items) // step)
        step = -(-len(items) // parts)
        for c in range(0, len(items), step):
            part = items[c:c + step]
            SA, SB = np.stack([t[1] for t in part]), np.stack([t[2] for t in part])
            # The stacked route needs safe scales (as _product_norm's unscaled evaluation).
            safe = _safe_scale_stack(SA) & _safe_scale_stack(SB)
            if not np.all(safe):
                keep = np.flatnonzero(safe)
                for j in np.flatnonzero(~safe).tolist():
                    out[part[j][0]] = norm_21_of_product(part[j][1], part[j][2])
                part, SA, SB = [part[j] for j in keep.tolist()], SA[keep], SB[keep]
                if not part:
                    continue
            res = _norm_21_of_product_gram_stack(SA, SB)
            for (i, A, B), r in zip(part, res):
                out[i] = norm_21_of_product(A, B) if r is None else r
    return out  # type: ignore[return-value]


#: Target size of the factor stacks of :func:`norm_21_of_products` (measured: heads of 384×32 gain from stacks of 10,
#: 768×64 heads gain nothing from stacking: their cost is the arithmetic).
_STACK_BYTES = 1 << 21


def _safe_scale_stack(S: np.ndarray) -> np.ndarray:
    """Per slice of S: max|S_j| nonzero with binary exponent inside ±_SAFE_FACTOR_EXPONENT.

    The test :func:`_product_norm` makes before its unscaled evaluation, vectorised.

    Parameters
    ----------
    S : ndarray (h, p, q)

    Returns
    -------
    ndarray (h,) of bool
    """
    mx = np.maximum(S.max(axis=(1, 2)), -S.min(axis=(1, 2)))
    return (mx > 0) & (np.abs(np.frexp(mx)[1]) <= _SAFE_FACTOR_EXPONENT)


#: Factor scales (binary exponents of max|A| and of max|B|) inside which no float
#: step of the product norms (Gram entries, q_j ~ m·d²·max|A|²·max|B|², formed
#: products) can overflow or lose the result to underflow: they run unscaled.
_SAFE_FACTOR_EXPONENT = 200


def _product_norm(A: np.ndarray, B: np.ndarray, unscaled: Any, columns_factor: arb, what: str) -> arb:
    """A product norm at any scale: unscaled when safe, else on power-of-two-scaled factors.

    Scaled: both factors get max |entry| in [1, 2) (``A_s = fl(2ᵃA)``,
    ``B_s = fl(2ᵇB)``), so no float step can overflow; if a scaling rounded a
    subnormal, every entry of ``A_s B_sᵀ`` is within ``5d·2⁻¹⁰⁷⁵`` of
    ``2^{a+b} A Bᵀ`` and ``columns_factor`` converts that to the norm
    (proofs/enclosure.md §8, "Scaled entrywise norms"). When the product is
    much smaller than max|A|·max|B| (large factors meeting small ones) the
    scaled product underflows and the ball is loose; then the unscaled
    evaluation is tried too and the two valid balls are intersected.

    Parameters
    ----------
    A, B : ndarrays, m×d and n×d
        Exact float64 factors, neither zero.
    unscaled : callable ``(A, B) -> arb``
        The evaluation on factors as given (a ball, possibly infinite).
    columns_factor : arb
        Converts the entrywise scaling perturbation 5d·2⁻¹⁰⁷⁵ into the norm's.
    what : str
        The name used in the warning.

    Returns
    -------
    arb
        A nonnegative ball containing the norm (returned as computed when its
        lower end is already ≥ 0).
    """
    ea = math.frexp(float(np.max(np.abs(A))))[1]
    eb = math.frexp(float(np.max(np.abs(B))))[1]
    if max(abs(ea), abs(eb)) <= _SAFE_FACTOR_EXPONENT:
        out = unscaled(A, B)
        if out.is_finite():
            return out if out.lower() >= 0 else nonnegative_interval(out, out)
    As, a, exa = power_of_two_scaling(A)
    Bs, b, exb = power_of_two_scaling(B)
    quanta = arb(0) if exa and exb else arb(5 * A.shape[1]) * columns_factor
    out = _scaled_back(unscaled(As, Bs), a + b, quanta, what, warn=False)
    with working_precision():
        loose = not out.is_finite() or not (out.rad() < out.upper() * 2.0**-20)
    if loose:
        out = _intersect(out, unscaled(A, B))
    if not out.is_finite():
        warnings.warn(f"{what}: a float bound overflowed even after power-of-two scaling; "
                      "returning the valid but trivial enclosure [0, inf]", CertificateWarning, stacklevel=3)
    return out


def _intersect(x: arb, y: arb) -> arb:
    """Nonnegative ball for the intersection of two enclosures of the same nonnegative number."""
    lx, ly = lower_fraction(x), lower_fraction(y)
    hx, hy = upper_fraction(x), upper_fraction(y)
    lo = max(v for v in (lx, ly, Fraction(0)) if v is not None)
    his = [v for v in (hx, hy) if v is not None]
    with working_precision():
        if not his:
            return nonnegative_interval(_fraction_arb(lo), arb.pos_inf())
        return nonnegative_interval(_fraction_arb(lo), _fraction_arb(min(his)))


def _fraction_arb(q: Fraction) -> arb:
    # An exact endpoint (dyadic) as an exact ball: precision raised to hold it.
    with working_precision(max(abs(q.numerator).bit_length(), q.denominator.bit_length(), 64) + 8):
        return arb(q.numerator) / q.denominator


def _norm_21_of_product_formed(A: np.ndarray, B: np.ndarray) -> arb:
    """‖A Bᵀ‖_{2,1} from the float product and its entrywise error (proofs/enclosure.md §8)."""
    P, err = _formed_product_with_error(A, B)
    _, errn = _column_sumsq_bounds(err)
    return _norm21_from_columns(P, np.sqrt(errn) * (1 + 2.0**-50))


def _norm_21_of_product_gram(A: np.ndarray, B: np.ndarray) -> arb | None:
    """‖A Bᵀ‖_{2,1} through ``Ĝ = fl(AᵀA)``; None if a float step overflowed.

    Lemma 8.1 (proofs/enclosure.md §8): with ``t_j = fl(Σ_l fl(BĜ)_jl b_jl)``,
    ``q_j ≥ ‖|A|ᵀ|A|‖₂‖b_j‖² ≥ |b_j|ᵀ|A|ᵀ|A||b_j|`` (upward chains, Lemmas 2.2, 3.1) and β = max|B|,

        |‖A b_j‖² − t_j| ≤ c₁ q_j + c₀,
        c₁ = γ_m + (2γ_d + γ_d²)(1 + γ_m),
        c₀ = 2mη(dβ)²(1 + γ_d)² + 2d²βη(1 + γ_d) + 2dη.

    Square roots and the per-column float steps are finished with the
    one-rounding arguments of the lemma; the sums of the n column bounds in
    Arb (:func:`fperror.sum_nonneg_lower` / ``sum_nonneg_upper``).
    """
    m, d = A.shape
    n = B.shape[0]
    if n == 0 or d == 0 or m == 0:
        return arb(0)  # every column of W is zero (or there are none)
    return _norm_21_of_product_gram_stack(A[None], B[None])[0]


def _norm_21_of_product_gram_stack(A: np.ndarray, B: np.ndarray) -> list[arb | None]:
    """:func:`_norm_21_of_product_gram` for a stack of products, one ball (or None) per slice.

    Each stacked step is, per slice, the evaluation Lemma 8.1 describes (a
    rounded product or sum in some order: proofs/enclosure.md §8, "Batched");
    c₀ (which depends on β) is bounded per slice in floats rounded upward,
    and the two final sums are taken per slice in Arb, as in the single case.

    Parameters
    ----------
    A : ndarray, shape (h, m, d)
    B : ndarray, shape (h, n, d)
        Exact float64 factors, m, n, d ≥ 1 (slice j is the product A_j B_jᵀ).

    Returns
    -------
    list of arb or None
        Per slice a nonnegative ball containing ``‖A_j B_jᵀ‖_{2,1}``, or None
        where a float step overflowed (the caller then takes another route).
    """
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        # Ĝ: each entry one dot product of length m (Lemma 2.1). Per slice, so that
        # numpy's F.T @ F dispatch to BLAS SYRK (half the flops of a stacked GEMM) applies.
        G = np.stack([F.T @ F for F in A])
        nK = _stacked.abs_gram_norm2_upper(np.abs(A))
    return _norm_21_from_gram_stack(G, nK, B, A.shape[1])


def _norm_21_from_gram_stack(G: np.ndarray, nK: np.ndarray, B: np.ndarray, m: int,
                             exponents: np.ndarray | None = None, beta: np.ndarray | None = None) -> list[arb | None]:
    """Lemma 8.1 from a given Gram stack: ``‖A_j B_jᵀ‖_{2,1}`` where only ``Ĝ_j = fl(A_jᵀA_j)`` is at hand.

    The part of :func:`_norm_21_of_product_gram_stack` after the Gram
    matrices, for a caller that has them already (the Lemma P-G route of
    :mod:`.product` computes the same Ĝ and the same bound on ‖|A|ᵀ|A|‖₂).

    Parameters
    ----------
    G : ndarray, shape (h, d, d)
        ``fl(A_jᵀA_j)``, each entry one rounded dot product of length m (Lemma 2.1).
    nK : ndarray, shape (h,)
        Floats ≥ ‖|A_j|ᵀ|A_j|‖₂ (e.g. :func:`._stacked.abs_gram_norm2_upper`).
    B : ndarray, shape (h, n, d)
        Exact float64 right factors.
    m : int
        The left factors' row count (the dot-product length of Ĝ), m ≥ 1.
    exponents : ndarray (h,) of int, optional
        For factors scaled exactly by powers of two (A_j = 2^a A′_j, B_j = 2^b B′_j):
        t_j = a + b, and the balls returned are for ``A′_j B′_jᵀ`` (the norm times
        2^-t_j: the two float sums are scaled back by ``ldexp`` — exact for a normal
        result — before the balls are formed, else the ball is scaled in Arb).
    beta : ndarray (h,), optional
        Floats ≥ max|b_jl| of each slice (Lemma 8.1 needs only an upper bound); computed from B if omitted.

    Returns
    -------
    list of arb or None
        As :func:`_norm_21_of_product_gram_stack`.
    """
    h, n, d = B.shape
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        bb = np.einsum("hij,hij->hi", B, B)  # fl(Σ_l b_jl²)
        t = np.einsum("hij,hij->hi", np.matmul(B, G), B)  # t_j ≈ b_jᵀ Ĝ b_j
        if beta is None:
            beta = np.maximum(B.max(axis=(1, 2)), -B.min(axis=(1, 2)))
    return _norm_21_from_quadratic_forms(t, bb, nK, m, d, beta, exponents)


def _norm_21_from_quadratic_forms(t: np.ndarray, bb: np.ndarray, nK: np.ndarray, m: int, d: int, beta: np.ndarray,
                                  exponents: np.ndarray | None = None) -> list[arb | None]:
    """Lemma 8.1's balls from the float quadratic forms ``t_j = fl(Σ_l T_jl b_jl)`` and ``fl(Σ_l b_jl²)``.

    The part of :func:`_norm_21_from_gram_stack` after the products (proofs/enclosure.md §8,
    *Evaluation*), for h products at once.

    Parameters
    ----------
    t, bb : ndarrays, shape (h, n)
        Per product and row j of B: ``t_j`` as Lemma 8.1 computes it, and ``fl(Σ_l b_jl²)``.
    nK : ndarray, shape (h,)
        Floats ≥ ‖|A|ᵀ|A|‖₂.
    m, d : int
        The left factors' row count and the inner dimension.
    beta : ndarray (h,)
        Floats ≥ max|b_jl| per product.
    exponents : ndarray (h,) of int, optional
        As for :func:`_norm_21_from_gram_stack`.

    Returns
    -------
    list of arb or None
        As :func:`_norm_21_of_product_gram_stack`.
    """
    h, n = t.shape
    inflate = fperror._inflate
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        # q_j ≥ |b_j|ᵀK|b_j| with K = |A|ᵀ|A| through K's norm: |b_j|ᵀK|b_j| ≤ ‖K‖₂‖b_j‖₂² (K symmetric
        # positive semidefinite), ‖K‖₂ by Lemma 3.1's chain, ‖b_j‖₂² by Lemma 2.2 (no d×d |A|ᵀ|A|, no |B|K).
        q = inflate(nK[:, None] * inflate(bb, d), 1)
        c1f = _lemma81_constants(m, d)[0]
        c0f = _lemma81_c0_upper(m, d, beta)[:, None]
        # e_j ≥ c₁q_j + c₀: one rounded product, then one sum of two nonnegative floats.
        e = inflate(inflate(c1f * q, 1) + c0f, 1)
        hi = np.sqrt(np.maximum(t, 0.0) + e)  # ‖A b_j‖ ≤ hi_j·(1 + 2u)
        lo = np.sqrt(np.maximum(t - e, 0.0))  # ‖A b_j‖ ≥ lo_j·(1 − 2u)
        s_hi, s_lo = hi.sum(axis=1), lo.sum(axis=1)  # any order (fperror.sum_nonneg_upper/lower)
    finite = (np.isfinite(hi).all(axis=1) & np.isfinite(lo).all(axis=1) & np.isfinite(c0f[:, 0])
              & np.isfinite(s_hi)).tolist()
    back = [0] * h
    if exponents is not None:
        t = -np.asarray(exponents, dtype=np.int64)
        with np.errstate(over="ignore", under="ignore"):
            lo2, hi2 = np.ldexp(s_lo, t), np.ldexp(s_hi, t)
        # exact when the result is a normal float (or 0 from 0), as in product._finish
        exact = (np.isfinite(hi2) & ((s_lo == 0) | (lo2 > 2.0**-1022)) & ((s_hi == 0) | (hi2 > 2.0**-1022)))
        s_lo, s_hi = np.where(exact, lo2, s_lo), np.where(exact, hi2, s_hi)
        back = np.where(exact, 0, t).tolist()
    f_lo, f_hi = _lemma81_sum_factors(n)
    out: list[arb | None] = []
    with working_precision():
        for j, (a, b) in enumerate(zip(s_lo.tolist(), s_hi.tolist())):
            if not finite[j]:
                out.append(None)
                continue
            low = (arb(a) * f_lo).lower()
            up = (arb(b) * f_hi).upper()
            if back[j]:  # the float sums could not be scaled back exactly: the ends, exactly in Arb
                two = arb(2) ** back[j]
                low, up = (low * two).lower(), (up * two).upper()
            ball = low.union(up) if low > 0 else None
            out.append(ball if ball is not None and ball.lower() >= 0 else nonnegative_interval(low, up))
    return out


def _lemma81_c0_upper(m: int, d: int, beta: np.ndarray) -> np.ndarray:
    """Floats ≥ Lemma 8.1's c₀ = 2mη(dβ)²(1+γ_d)² + 2d²βη(1+γ_d) + 2dη, one per β (proofs/enclosure.md §8).

    c₀ = η·K with K = 2m(dβ)²(1+γ_d)² + 2d²β(1+γ_d) + 2d. Every float step
    on nonnegative operands is moved one float up (Lemma 10.1), the
    constants 1+γ_d and (1+γ_d)² are floats above them, so each
    intermediate bounds its exact counterpart from above; the last step is
    the one multiplication by η = 2⁻¹⁰⁷⁴ (a subnormal result: Lemma 10.1
    needs no normality). +∞ (or NaN) where a step overflows.

    Parameters
    ----------
    m, d : int
        The factor shape (A is m×d).
    beta : ndarray
        Floats β = max|b_jl| ≥ 0, one per product.

    Returns
    -------
    ndarray
        Float upper bounds on c₀, shape of ``beta``.

    >>> float(_lemma81_c0_upper(4, 2, np.array([1.0]))[0]) > 0
    True
    """
    _, g1, g2 = _lemma81_constants(m, d)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        beta = np.asarray(beta, dtype=np.float64)
        db = _up(d * beta)
        K = _up(_up(_up(_up(_up(db * db) * (2.0 * m)) * g2) + _up(_up(beta * (2.0 * d * d)) * g1)) + 2.0 * d)
        return _up(K * fperror.ETA)


def _up(x: np.ndarray) -> np.ndarray:
    """One float toward +∞ (Lemma 10.1: bounds the exact result of the operation that gave x).

    Parameters
    ----------
    x : ndarray

    Returns
    -------
    ndarray
        ``nextafter(x, +∞)``.
    """
    return np.nextafter(x, np.inf)


@functools.lru_cache(maxsize=None)
def _lemma81_constants(m: int, d: int) -> tuple[float, float, float]:
    """Floats ≥ c₁ = γ_m + (2γ_d + γ_d²)(1 + γ_m), ≥ 1 + γ_d and ≥ (1 + γ_d)² (Lemma 8.1).

    Parameters
    ----------
    m, d : int
        The factor shape (A is m×d).

    Returns
    -------
    tuple of three floats
        Evaluated in Arb, rounded up (``float_upper``).
    """
    with working_precision():
        gd, gm = fperror.gamma(d), fperror.gamma(m)
        return float_upper(gm + (2 * gd + gd * gd) * (1 + gm)), float_upper(1 + gd), float_upper((1 + gd) ** 2)


@functools.lru_cache(maxsize=None)
def _lemma81_sum_factors(n: int) -> tuple[arb, arb]:
    """Balls for (1 − 2u)/(1 + γ_n) and (1 + 2u)/(1 − γ_n): the n-term sums of Lemma 8.1 finished.

    Σⱼ of n nonnegative floats lies in [fl(Σ)/(1 + γ_{n−1}), fl(Σ)/(1 − γ_{n−1})]
    (any order: Lemma 2.2's sum version, as ``fperror.sum_nonneg_lower/upper``), and
    each column bound carries the factor 1 ∓ 2u of Lemma 8.1's square roots.

    Parameters
    ----------
    n : int
        The number of columns summed.

    Returns
    -------
    tuple of two arb
        Balls containing the lower and the upper factor.
    """
    with working_precision():
        u2 = 2 * arb(fperror.UNIT_ROUNDOFF)
        g = fperror.gamma(max(n, 1))  # γ_n ≥ γ_{n−1}, as the sum_nonneg_* functions use
        return (1 - u2) / (1 + g), (1 + u2) / (1 - g)


@under_float_model
def norm_11_of_product(A: Any, B: Any) -> arb:
    """Ball containing ``‖A Bᵀ‖_{1,1}`` (entrywise |·| sum of the exact product).

    Both factors are scaled by exact powers of two first (max entry in
    [1, 2)), so the formed product and both sums stay far from overflow at
    any input scale; the result is scaled back exactly in Arb
    (proofs/enclosure.md §8).

    Parameters
    ----------
    A : array_like, m×d
    B : array_like, n×d
        The stored factors (converted exactly to float64; W = A Bᵀ).

    Returns
    -------
    arb
        A nonnegative ball containing ``Σ_{ij} |(A Bᵀ)_{ij}|`` (exactly 0 for a zero factor).

    Raises
    ------
    ValueError
        If the inner dimensions differ, or an entry is NaN/Inf or not exactly representable in float64.

    Examples
    --------
    >>> import numpy as np
    >>> norm_11_of_product(np.array([[1e300], [-2e300]]), np.array([[3e300]])).contains(arb(9) * arb(10) ** 600)
    True
    """
    A = as_exact_float64_matrix(A, "A")
    B = as_exact_float64_matrix(B, "B")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"inner dimensions differ: A is {A.shape}, B is {B.shape}")
    m, n = A.shape[0], B.shape[0]
    if m == 0 or n == 0 or A.shape[1] == 0 or not np.any(A) or not np.any(B):
        return arb(0)
    # Each of the m·n entries moves by ≤ 5d·2⁻¹⁰⁷⁵ under scaling.
    return _product_norm(A, B, _norm_11_of_product_formed, arb(m * n), "norm_11_of_product")


def _norm_11_of_product_formed(A: np.ndarray, B: np.ndarray) -> arb:
    """‖A Bᵀ‖_{1,1} from the float product ± the sum of its entrywise error bound; [0, ∞] on overflow."""
    P, err = _formed_product_with_error(A, B)
    try:
        s = math.fsum(np.abs(P).ravel().tolist())
        e = math.fsum(err.ravel().tolist())
    except (OverflowError, ValueError):  # inf/NaN entries or an overflowing exact sum
        return arb(0).union(arb.pos_inf())
    if not (math.isfinite(s) and math.isfinite(e)):
        return arb(0).union(arb.pos_inf())
    with working_precision():
        # fsum is correctly rounded: widen each by one ulp.
        lo = arb_from_float(math.nextafter(s, -math.inf)) - arb_from_float(math.nextafter(e, math.inf))
        hi = arb_from_float(math.nextafter(s, math.inf)) + arb_from_float(math.nextafter(e, math.inf))
        return nonnegative_interval(lo, hi)
