"""ball._decimal_round_float against _decimal_round_dyadic (its Outward.v-backed reference) and exact Fractions."""

import decimal
import math
import random
from fractions import Fraction

import pytest

from certbound.ball import _decimal_round_dyadic, _decimal_round_float, _float_end_decimal, float_interval_to_json

_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _floats(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    out = [1.0, -1.0, 4.0, 2.0**60, 2.0**1023, math.ldexp(1.0, -1074), math.ldexp(1.0, -1022), 3.0, 1e22, 0.1,
           math.nextafter(1.0, 0.0), 123456789.0, 9007199254740993.0, -2.0**52, 1e16, 1e-16, 99999999999999999.0,
           float.fromhex("0x1.fffffffffffffp+1023"), 5e-324 * 12345]
    while len(out) < n:
        e = rng.randint(-1080, 1023)
        try:
            x = math.ldexp(rng.random() + 0.5, e) * rng.choice((1, -1))
        except OverflowError:
            continue
        if x != 0 and math.isfinite(x):
            out.append(x)
        # decimal-looking floats: short decimals, where trailing zeros and exactness matter
        out.append(float(f"{rng.randint(1, 10**rng.randint(1, 18))}e{rng.randint(-30, 30)}"))
    return out


def test_decimal_of_float_is_the_dyadic_decimal() -> None:
    # The exact Decimal the reference forms in Python integers: same coefficient and exponent.
    for x in _floats(20_000, 0):
        n, d = x.as_integer_ratio()
        k = d.bit_length() - 1
        assert decimal.Decimal(x).as_tuple() == decimal.Decimal(n * 5**k).scaleb(-k, _EXACT).as_tuple(), x


@pytest.mark.parametrize("digits", [1, 3, 16, 17, 25])
@pytest.mark.parametrize("rounding", [decimal.ROUND_FLOOR, decimal.ROUND_CEILING])
def test_same_string_as_dyadic_reference_and_directed(digits: int, rounding: str) -> None:
    for x in _floats(3000, digits):
        n, d = x.as_integer_ratio()
        s = _decimal_round_float(x, digits, rounding)
        assert s == _decimal_round_dyadic(n, d.bit_length() - 1, digits, rounding), x
        q, fx = Fraction(s), Fraction(x)
        assert (q <= fx) if rounding == decimal.ROUND_FLOOR else (q >= fx), (x, s)
        assert len(decimal.Decimal(s).as_tuple().digits) <= digits


@pytest.mark.parametrize("digits", [1, 3, 17, 25])
@pytest.mark.parametrize("rounding", [decimal.ROUND_FLOOR, decimal.ROUND_CEILING])
def test_float_end_decimal_is_the_dyadic_decimal(digits: int, rounding: str) -> None:
    # float_interval_to_json's ends: from the ratio (one division), integers and 0 included.
    for x in _floats(3000, 100 + digits) + [0.0, 7.0, -3.0, 2.0**80]:
        n, d = x.as_integer_ratio()
        want = "0" if n == 0 else _decimal_round_dyadic(n, d.bit_length() - 1, digits, rounding)
        assert _float_end_decimal(x, n, d, digits, rounding) == want, x


def test_float_interval_json_uses_the_same_strings() -> None:
    xs = sorted(abs(x) for x in _floats(2000, 7))
    for lo, hi in zip(xs, xs[1:]):
        d = float_interval_to_json(lo, hi)
        nl, dl = lo.as_integer_ratio()
        nh, dh = hi.as_integer_ratio()
        assert d["lower"] == _decimal_round_dyadic(nl, dl.bit_length() - 1, 17, decimal.ROUND_FLOOR)
        assert d["upper"] == _decimal_round_dyadic(nh, dh.bit_length() - 1, 17, decimal.ROUND_CEILING)


def _dyadics(n: int, seed: int) -> list[tuple[int, int]]:
    """(num, k): num odd, k ≥ 1 — short exact quotients, 17-digit boundaries, σ-like 60-70-bit ends, huge/tiny."""
    rng = random.Random(seed)
    out = [(1, 1), (1, 2), (3, 1), (1, 60), (2**53 - 1, 1), (10**17 + 1, 1), (5**20 | 1, 3), (1, 1074), (1, 1200),
           (2**200 + 1, 3), (99999999999999999, 1), (199999999999999999, 1), (2**67 - 1, 68)]
    while len(out) < n:
        kind = rng.randrange(4)
        if kind == 0:
            num, k = rng.getrandbits(rng.randint(1, 80)) | 1, rng.randint(1, 90)
        elif kind == 1:
            num, k = rng.getrandbits(66) | 1, rng.randint(55, 80)
        elif kind == 2:  # values just around a power of ten, where a directed rounding carries
            k = rng.randint(1, 70)
            num = ((10 ** rng.randint(0, 20)) << k) + rng.choice((-1, 1)) * (rng.getrandbits(rng.randint(1, 8)) | 1)
            num |= 1
        else:
            num, k = rng.getrandbits(rng.randint(1, 300)) | 1, rng.randint(1, 1300)
        out.append((num * rng.choice((1, -1)), k))
    return out


@pytest.mark.parametrize("digits", [1, 2, 16, 17, 30])
@pytest.mark.parametrize("rounding", [decimal.ROUND_FLOOR, decimal.ROUND_CEILING])
def test_quotient_is_the_dyadic_decimal(digits: int, rounding: str) -> None:
    from certbound.ball import _decimal_round_quotient, _rounding_context

    ctx = _rounding_context(digits, rounding)
    for num, k in _dyadics(3000, digits):
        exact = decimal.Decimal(num * 5**k).scaleb(-k, _EXACT)
        assert ctx.divide(decimal.Decimal(num), decimal.Decimal(1 << k)).as_tuple() == ctx.plus(exact).as_tuple()
        s = _decimal_round_quotient(num, k, digits, rounding)
        assert s == _decimal_round_dyadic(num, k, digits, rounding), (num, k)
        q = Fraction(s)
        assert (q <= Fraction(num, 1 << k)) if rounding == decimal.ROUND_FLOOR else (q >= Fraction(num, 1 << k))
