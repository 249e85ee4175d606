"""Hostile claims files: huge exponents, huge literals, deep nesting, long chains.

Each case must end promptly with exit 2 and a message with a caret (an input
error), or with a correct verdict — never a hang, a traceback or exit 1 for
a problem in the input. The subprocess timeout only guards against a hang.
"""

import subprocess
import sys
from fractions import Fraction

import pytest
from flint import arb

from certbound.audit import ClaimsFileError, parse_claims
from certbound.audit._expr import MAX_NESTING, ExpressionError, parse_expression
from certbound.ball import ENDPOINT_BITS, bounded_endpoints, decimal_lower, decimal_upper


def _claims(quantity: str, value: str = "1", relation: str = "<=") -> str:
    return f'title = "t"\n[[claim]]\nid = "a"\nquantity = "{quantity}"\nrelation = "{relation}"\nvalue = "{value}"\n'


def _audit(tmp_path, text: str) -> subprocess.CompletedProcess:
    p = tmp_path / "claims.toml"
    p.write_text(text)
    return subprocess.run([sys.executable, "-m", "certbound", "audit", str(p)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("quantity, value, needle", [
    ("1e999999999", "1", "exponent out of range"),
    ("2", "1e999999999", "exponent out of range"),
    ("(" * 10_000 + "1" + ")" * 10_000, "1", "nested more than"),
    ("-" * 5_000 + "1", "1", "nested more than"),
    ("+".join(["1"] * 5_000), "1", "deeper than"),
    ("1" * 20_000, "1", "too many digits"),
])
def test_hostile_input_is_an_input_error(tmp_path, quantity, value, needle):
    r = _audit(tmp_path, _claims(quantity, value))
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert "^" in r.stderr  # a caret under the problem (quantity and value both show where)


def test_power_tower_is_refuted_promptly(tmp_path):
    # 10^(10^10) is a valid real number: a verdict, not an input error.
    r = _audit(tmp_path, _claims("10**10**10", "1"))
    assert r.returncode == 1, r.stderr  # refuted
    assert "REFUTED" in r.stdout


def test_tiny_power_is_confirmed(tmp_path):
    r = _audit(tmp_path, _claims("10**(-10**10)", "1e-10000", "<="))
    assert r.returncode == 0, r.stdout + r.stderr


def test_functions_needs_no_claims_file():
    r = subprocess.run([sys.executable, "-m", "certbound", "audit", "--functions"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "Scalar functions" in r.stdout


def test_missing_claims_file_argument_exits_2():
    r = subprocess.run([sys.executable, "-m", "certbound", "audit"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "CLAIMS" in r.stderr


def test_nesting_limit_is_exact():
    parse_expression("(" * MAX_NESTING + "1" + ")" * MAX_NESTING)
    with pytest.raises(ExpressionError):
        parse_expression("(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1))


def test_value_literal_bounds_in_parser():
    with pytest.raises(ValueError, match="exponent out of range"):
        parse_claims(_claims("1", "1e10001"))
    parse_claims(_claims("1", "1e10000"))


# --------------------------------------------------- bounded end points (ball.py)


def _exact_ends(x: arb) -> tuple[Fraction, Fraction]:
    m, e = (int(v) for v in x.mid().man_exp())
    r, f = (int(v) for v in x.rad().man_exp())
    mid = Fraction(m) * Fraction(2) ** e
    rad = Fraction(r) * Fraction(2) ** f
    return mid - rad, mid + rad


@pytest.mark.parametrize("x", [arb(1) / 3, -arb(7) / 5, arb(2) ** 4000 / 3, arb(2) ** -5000 / 7, arb(0),
                               arb("1 +/- 1e-30")])
def test_bounded_endpoints_exact_in_range(x):
    assert bounded_endpoints(x) == _exact_ends(x)


@pytest.mark.parametrize("x, lo_ok, hi_ok", [
    (arb(10) ** (10**10), lambda lo: lo == 2**ENDPOINT_BITS, lambda hi: hi is None),
    (-(arb(10) ** (10**10)), lambda lo: lo is None, lambda hi: hi == -(2**ENDPOINT_BITS)),
    (arb(2) ** -(10**10), lambda lo: lo == 0, lambda hi: hi == Fraction(1, 2**ENDPOINT_BITS)),
    (-(arb(2) ** -(10**10)), lambda lo: lo == -Fraction(1, 2**ENDPOINT_BITS), lambda hi: hi == 0),
    # mid 1, radius 2^-(10^10): the radius is rounded up to one grid step
    (arb(1, arb(2) ** -(10**10)), lambda lo: lo == 1 - Fraction(1, 2**ENDPOINT_BITS),
     lambda hi: hi == 1 + Fraction(1, 2**ENDPOINT_BITS)),
])
def test_bounded_endpoints_outward_beyond_range(x, lo_ok, hi_ok):
    lo, hi = bounded_endpoints(x)
    assert lo_ok(lo) and hi_ok(hi)


def test_decimal_printers_of_astronomical_balls_are_outward_and_prompt():
    x = arb(10) ** (10**10)
    assert decimal_upper(x) == "inf"
    assert float(decimal_lower(x).split("e")[1]) > 39000  # a valid (capped) lower bound
    y = arb(2) ** -(10**10)
    assert decimal_lower(y) == "0" and Fraction(decimal_upper(y)) > 0


def test_unusable_model_alias_is_reported_once(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[models]\nm = "does-not-exist"\n\n[[claim]]\nid = "x"\nmodel = "m"\n'
                 'quantity = \'sigma(layer=0, type="M_in", i=1)\'\nrelation = "<="\nvalue = "1.0"\n')
    with pytest.raises(ClaimsFileError) as info:
        parse_claims(f.read_text(), str(f), str(tmp_path))
    msg = str(info.value)
    assert "1 problem(s)" in msg and "[models] m: model file or directory not found" in msg
    assert "claim 1" not in msg
