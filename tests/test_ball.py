"""Outward rounding of floats and decimal strings, checked with exact Fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from flint import arb
from hypothesis import example, given, strategies as st

from certbound.ball import (
    arb_from_float,
    ball_from_json,
    ball_to_json,
    decimal_lower,
    decimal_upper,
    exact_fraction,
    float_lower,
    float_upper,
    lower_fraction,
    upper_fraction,
    working_precision,
)

finite = st.floats(allow_nan=False, allow_infinity=False)


@given(finite, st.integers(1, 25))
@example(0.1, 1)
@example(-0.0, 3)
@example(5e-324, 2)
@example(1.7976931348623157e308, 5)
def test_decimal_strings_round_outward(x, digits):
    b = arb_from_float(x)
    assert exact_fraction(b) == Fraction(x)
    lo, hi = decimal_lower(b, digits), decimal_upper(b, digits)
    assert Fraction(lo) <= Fraction(x) <= Fraction(hi)
    # Directed rounding to `digits` significant digits: never more than one unit away.
    if x != 0:
        unit = Fraction(10) ** (math.floor(math.log10(abs(x))) - digits + 1)
        assert Fraction(hi) - Fraction(lo) <= 2 * unit


@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**9), st.integers(1, 20))
def test_balls_of_rationals_print_outward(q, digits):
    with working_precision(64):
        b = arb(q.numerator) / q.denominator
    assert Fraction(decimal_lower(b, digits)) <= lower_fraction(b) <= q
    assert q <= upper_fraction(b) <= Fraction(decimal_upper(b, digits))
    assert Fraction(float_lower(b)) <= q <= Fraction(float_upper(b))


def test_known_values():
    third = arb(1) / 3
    assert decimal_lower(third, 3) == "0.333" and decimal_upper(third, 3) == "0.334"
    assert decimal_lower(-third, 3) == "-0.334" and decimal_upper(-third, 3) == "-0.333"
    # The float 1e300 is 1.0000000000000000525…e300: rounding its multiple up must show it.
    with working_precision(200):  # the product is then exact
        big = arb_from_float(1e300) * 7
    assert decimal_upper(big, 2) == "7.1e+300" and decimal_lower(big, 2) == "7.0e+300"
    assert decimal_upper(arb_from_float(0.5), 2) == "0.5"
    assert float_upper(arb(0)) == 0.0 and math.copysign(1, float_upper(arb(0))) == 1


def test_infinite_and_json_round_trip():
    inf_ball = arb(0).union(arb.pos_inf())
    assert decimal_upper(inf_ball) == "inf" and float_upper(inf_ball) == math.inf
    with working_precision(200):
        x = arb(2).sqrt()
    js = ball_to_json(x)
    assert Fraction(js["lower"]) <= lower_fraction(x) and upper_fraction(x) <= Fraction(js["upper"])
    assert ball_from_json(js).contains(x)


@given(st.fractions(min_value=-4, max_value=4, max_denominator=10**6), st.integers(-1120, 1100))
@example(Fraction(3, 7), -1074)
@example(Fraction(-3, 7), 1023)
def test_float_endpoints_outward_across_the_range(q, k):
    with working_precision(80):
        b = (arb(q.numerator) / q.denominator) * arb(2) ** k
    lo, hi = float_lower(b), float_upper(b)
    lf, uf = lower_fraction(b), upper_fraction(b)
    assert math.isinf(lo) or Fraction(lo) <= lf
    assert math.isinf(hi) or uf <= Fraction(hi)
    assert not (math.isinf(lo) and lo > 0) and not (math.isinf(hi) and hi < 0)


# Issue 12 item 13: ``mid`` lies inside the printed [lower, upper] for every ball, narrow ones included.
def _narrow_balls():
    from flint import arb

    from certbound.ball import working_precision

    out = []
    with working_precision(300):
        out += [arb(1) / 3, arb(2).sqrt(), -arb(10).log(), arb(7) / 10**20, arb(1) / 3 * arb(2) ** 1000]
        out += [arb(2) ** -1100, -(arb(3) ** -700), arb(2) ** -1075 * 3, arb(1) + arb(2) ** -60]
        out += [arb(0.1) + arb(2) ** -80 * k for k in range(-3, 4)]
        out += [(arb(1) / 3).union(arb(1) / 3 + arb(2) ** -200)]
    out += [arb(1.5), arb(0), arb(1, 1e-30), arb(2.0**-1074, 2.0**-1080)]
    return out


@pytest.mark.parametrize("x", _narrow_balls(), ids=str)
def test_ball_to_json_mid_inside_printed_interval(x):
    from fractions import Fraction

    from certbound.ball import ball_to_json, lower_fraction, upper_fraction

    d = ball_to_json(x)
    mid, lo, hi = Fraction(d["mid"]), Fraction(d["lower"]), Fraction(d["upper"])
    assert lo <= mid <= hi
    # printed ends still enclose the exact ball, and differ from it by less than one float spacing
    assert lo <= lower_fraction(x) and upper_fraction(x) <= hi
    spacing = Fraction(abs(math.ulp(d["mid"]))) if d["mid"] != 0 else Fraction(2) ** -1074
    assert hi - lo <= (upper_fraction(x) - lower_fraction(x)) + 2 * spacing + (abs(hi) + abs(lo)) / 10**15


@pytest.mark.parametrize("e", [14_000, 15_000, 60_000, -60_000])
def test_ball_to_json_huge_and_tiny_balls_do_not_crash(e):
    """Balls beyond Python's 4300-digit int → str limit still print, exactly and outward.

    Reference: the exact value 2^e/3 the ball contains, as a Fraction; the ``exact`` strings are
    parsed and the decimal strings read by :mod:`decimal`, not by the code under test.
    """
    import sys
    from decimal import Decimal

    with working_precision(256):
        x = arb(2) ** e / 3  # inexact: nonzero radius
    d = ball_to_json(x)  # raised ValueError (int → str digit limit) for e ≥ 14 284

    def parse(s: str) -> Fraction:
        if "*2^" in s:
            m, k = s.split("*2^")
            return Fraction(int(m)) * Fraction(2) ** int(k)
        return Fraction(int(s))

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # the reference parses big integers freely
    try:
        lo, hi = parse(d["exact"]["lower"]), parse(d["exact"]["upper"])
        assert lo <= Fraction(2) ** e / 3 <= hi
        assert Fraction(Decimal(d["lower"])) <= lo and Fraction(Decimal(d["upper"])) >= hi
    finally:
        sys.set_int_max_str_digits(old)
    assert ball_from_json(d).contains(x)


# -- float-model scopes: one check per scope for `under_callers_float_model` functions ---------------------


def _counting_checks(monkeypatch):
    import certbound.ball as ball

    calls = []
    real = ball.check_float_environment
    monkeypatch.setattr(ball, "check_float_environment", lambda: (calls.append(1), real())[1])
    return calls


def test_scope_depth_nests_and_is_restored_after_an_exception():
    from certbound.ball import float_model_scope, in_float_model_scope

    assert not in_float_model_scope()
    with float_model_scope():
        with float_model_scope():
            assert in_float_model_scope()
        assert in_float_model_scope()
    assert not in_float_model_scope()
    with pytest.raises(KeyError):
        with float_model_scope():
            raise KeyError("x")
    assert not in_float_model_scope()


def test_scope_is_per_thread():
    import threading

    from certbound.ball import float_model_scope, in_float_model_scope

    seen = []
    with float_model_scope():
        t = threading.Thread(target=lambda: seen.append(in_float_model_scope()))
        t.start()
        t.join()
    assert seen == [False]


def test_callers_scope_checks_once_and_plain_entry_points_every_time(monkeypatch):
    import numpy as np

    from certbound.ball import float_model_scope, under_callers_float_model, under_float_model

    calls = _counting_checks(monkeypatch)

    @under_callers_float_model
    def once():
        return float(np.float64(1e308) * 10)  # numpy errors ignored in both cases

    @under_float_model
    def every():
        return 1

    assert once() == math.inf and len(calls) == 1  # outside a scope: its own check
    calls.clear()
    with float_model_scope(), np.errstate(all="raise"):
        assert [once() for _ in range(3)] == [math.inf] * 3
        assert len(calls) == 1  # the scope's
        every()
        assert len(calls) == 2


def test_norms_and_schatten_intervals_checks_outside_a_scope_only(monkeypatch):
    import numpy as np

    from certbound.ball import float_model_scope
    from certbound.enclose import enclose_singular_values
    from certbound.enclose.quantities import norms_and_schatten_intervals

    enc = enclose_singular_values(np.diag([3.0, 4.0]))
    calls = _counting_checks(monkeypatch)
    fro, nuc, (s1,) = norms_and_schatten_intervals(enc, ["1"])
    assert len(calls) == 1
    assert fro[0] <= 5 <= fro[1] and nuc[0] <= 7 <= nuc[1] and s1 == nuc
    with float_model_scope():
        assert norms_and_schatten_intervals(enc, ["1"]) == (fro, nuc, [s1])
    assert len(calls) == 2
