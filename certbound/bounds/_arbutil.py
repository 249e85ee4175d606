"""Small Arb helpers shared by the bound modules (private).

Conventions used by every bound in :mod:`certbound.bounds`:

* Every input number becomes an Arb ball that *contains* it: ints and floats
  exactly (a binary64 value is a dyadic rational), Fractions as the quotient
  ball ``arb(num) / arb(den)``, decimal strings and Decimals as the exact
  decimal (never through a rounding ``float()``).
* Integer parts of a ball (``⌊·⌋``, ``⌈·⌉``) are taken at the **upper**
  endpoint (spec §7.1 step 5): every use in the theory is nondecreasing in
  its argument, so an integer computed from the upper end is ≥ the one of
  the true value.
* Float-chosen analysis parameters (τ, splits, δ, partition points) are turned
  into exact dyadic numbers before any Arb evaluation (spec §11 erratum 5).

Examples
--------
>>> from fractions import Fraction
>>> from flint import arb
>>> as_arb(Fraction(1, 3)).contains(arb(1) / 3)
True
>>> ceil_upper(arb(5) / 2), floor_upper(arb(5) / 2)
(3, 2)
"""

from __future__ import annotations

import contextlib
import decimal
import math
from fractions import Fraction
from typing import Union

from flint import arb, ctx

from certbound.ball import DEFAULT_PREC, arb_from_float, upper_fraction, working_precision

__all__ = [
    "Number",
    "prec",
    "as_arb",
    "ceil_upper",
    "floor_upper",
    "exact_dyadic",
    "is_proved_ge",
    "upper_float",
]

#: Anything that can be turned into a ball containing it.
Number = Union[int, float, Fraction, arb]


_NULL = contextlib.nullcontext()


def prec() -> contextlib.AbstractContextManager:
    """``working_precision(DEFAULT_PREC)`` unless the precision is already at least that (cheap no-op).

    >>> with prec():
    ...     pass
    """
    return _NULL if ctx.prec >= DEFAULT_PREC else working_precision(DEFAULT_PREC)


def as_arb(x: Number) -> arb:
    """A ball containing ``x`` (exact for ints, floats and dyadic Fractions).

    >>> as_arb(0.5).is_exact(), as_arb(3).is_exact()
    (True, True)
    """
    if isinstance(x, arb):
        return x
    if type(x) is float:
        if math.isfinite(x):
            return arb(x)
        return arb_from_float(x)
    if isinstance(x, bool):
        raise TypeError("bool is not a number here")
    if isinstance(x, int):
        return arb(x)
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return arb(x.numerator)
        return arb(x.numerator) / arb(x.denominator)
    if isinstance(x, float):
        return arb_from_float(x)
    # Decimal strings and Decimals are exact decimals ("0.1" is 1/10), never rounded
    # through a binary float (which may round either way).
    if isinstance(x, (str, decimal.Decimal)):
        try:
            q = Fraction(x.strip() if isinstance(x, str) else x)
        except (ValueError, ZeroDivisionError, OverflowError):
            raise ValueError(f"not a finite number: {x!r}") from None
        return as_arb(q)
    # numpy scalars and the like: integers exactly; binary floats (incl. long double)
    # through their exact integer ratio, never through a rounding float().
    try:
        xi = int(x)  # type: ignore[arg-type]
        if xi == x:
            return arb(xi)
    except (TypeError, ValueError, OverflowError):
        pass
    ratio = getattr(x, "as_integer_ratio", None)
    if ratio is not None:
        try:
            num, den = ratio()
        except (ValueError, OverflowError):  # NaN / inf
            return arb_from_float(float(x))  # type: ignore[arg-type]
        q = Fraction(num, den)
        f = float(q)
        return arb(f) if Fraction(f) == q else as_arb(q)  # exact when it is a binary64 value
    if hasattr(x, "numerator") and hasattr(x, "denominator"):  # numbers.Rational (e.g. fmpq)
        return as_arb(Fraction(int(x.numerator), int(x.denominator)))
    raise TypeError(f"cannot turn {type(x).__name__} {x!r} into a certified ball")


def _upper_q(x: arb) -> Fraction | None:
    if x.is_nan():
        return None
    return upper_fraction(x)


def ceil_upper(x: arb) -> int | float:
    """``⌈u⌉`` for the upper endpoint ``u`` of ``x`` (``math.inf`` if unbounded).

    This is ≥ ``⌈t⌉`` for every point ``t`` of the ball.

    >>> ceil_upper(arb(2))
    2
    """
    q = _upper_q(x)
    if q is None:
        return math.inf
    return -((-q.numerator) // q.denominator)


def floor_upper(x: arb) -> int | float:
    """``⌊u⌋`` for the upper endpoint ``u`` of ``x`` (``math.inf`` if unbounded).

    >>> floor_upper(arb(7) / 2)
    3
    """
    q = _upper_q(x)
    if q is None:
        return math.inf
    return q.numerator // q.denominator


def exact_dyadic(x: float | Fraction | int) -> Fraction:
    """The exact rational value of a float (a dyadic), or the value itself.

    Analysis parameters chosen by float search are pinned to this exact value
    before the Arb evaluation.

    >>> exact_dyadic(0.1) == Fraction(0.1)
    True
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    xf = float(x)
    if not math.isfinite(xf):
        raise ValueError(f"analysis parameter must be finite, got {x!r}")
    return Fraction(xf)


def is_proved_ge(x: arb, y: arb) -> bool:
    """True only if ``x ≥ y`` holds for *every* pair of points of the balls.

    Used for branch selection (spec §11 erratum 5): an undecided comparison
    returns False, and callers then take the branch that is valid anyway.

    >>> is_proved_ge(arb(2), arb(1)), is_proved_ge(arb(1) / 3, arb(1) / 3)
    (True, False)
    """
    return bool(x >= y)


def upper_float(x: arb) -> float:
    """A float ≥ the upper endpoint (``inf`` if unbounded); for float search only."""
    from certbound.ball import float_upper

    if x.is_nan():
        return math.inf
    return float_upper(x)
