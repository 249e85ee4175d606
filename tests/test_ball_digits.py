"""The digit count of the four decimal-printing entry points of certbound.ball: one rule, no silent clamping.

``decimal_lower``, ``decimal_upper``, ``ball_to_json`` and ``float_interval_to_json`` take ``digits``
significant digits; before session 7 a count below 1 was silently raised to 1 (and 2.7 truncated to 2).
Each now refuses anything but an integer >= 1 with a ValueError naming the function, and accepts any
integer type (numpy's too) giving the strings of the same Python int.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from certbound.ball import ball_to_json, decimal_lower, decimal_upper, float_interval_to_json, working_precision

with working_precision(256):
    _THIRD = arb(1) / 3  # 1/3 within 2^-256: its 30-digit ends are those of 1/3

_ENTRY_POINTS = {
    "decimal_lower": lambda d: decimal_lower(_THIRD, d),
    "decimal_upper": lambda d: decimal_upper(_THIRD, d),
    "ball_to_json": lambda d: ball_to_json(_THIRD, d),
    "float_interval_to_json": lambda d: float_interval_to_json(0.1, 0.3, d),
}


@pytest.mark.parametrize("name", sorted(_ENTRY_POINTS))
@pytest.mark.parametrize("bad", [0, -1, -17, 2.5, 1.0, "3", None, True])
def test_digits_other_than_an_integer_of_at_least_one_are_refused(name: str, bad: object) -> None:
    with pytest.raises(ValueError, match=rf"^{name}: digits must be an integer >= 1 \(significant digits\), got "):
        _ENTRY_POINTS[name](bad)


@pytest.mark.parametrize("name", sorted(_ENTRY_POINTS))
@pytest.mark.parametrize("digits", [1, 2, 17, 40])
def test_integer_types_give_the_strings_of_the_python_int(name: str, digits: int) -> None:
    want = _ENTRY_POINTS[name](digits)
    for kind in (np.int64, np.int32, np.uint8):
        assert _ENTRY_POINTS[name](kind(digits)) == want


@pytest.mark.parametrize("digits", [1, 2, 5, 17, 30])
def test_one_digit_and_more_round_outward_against_fractions(digits: int) -> None:
    # Reference: the exact 1/3 and the exact floats, with the unit in the last printed place.
    lo, hi = Fraction(decimal_lower(_THIRD, digits)), Fraction(decimal_upper(_THIRD, digits))
    unit = Fraction(1, 10**digits)
    assert lo <= Fraction(1, 3) <= hi and hi - lo <= 2 * unit
    d = float_interval_to_json(0.1, 0.3, digits)
    assert Fraction(d["lower"]) <= Fraction(0.1) and Fraction(0.3) <= Fraction(d["upper"])
    assert Fraction(0.1) - Fraction(d["lower"]) < unit and Fraction(d["upper"]) - Fraction(0.3) < unit
    b = ball_to_json(_THIRD, digits)  # (its ends may be widened to the float nearest 1/3: no float is inside)
    assert Fraction(b["lower"]) <= Fraction(1, 3) <= Fraction(b["upper"])
    wide = arb(0.1).union(arb(0.3))  # holds floats: ball_to_json's ends are the ball's own
    assert (ball_to_json(wide, digits)["lower"], ball_to_json(wide, digits)["upper"]) == \
        (decimal_lower(wide, digits), decimal_upper(wide, digits))
