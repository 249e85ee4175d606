"""The worked example: a float bisection kl-inverse returning a midpoint lands on the unsafe side."""

import importlib.util
import os

import mpmath

from certbound.audit import audit_claims, parse_claims

_HERE = os.path.dirname(__file__)
_EXAMPLE = os.path.join(_HERE, "..", "..", "examples", "audit", "kl_inverse_float_bisection.py")


def _load_example():
    spec = importlib.util.spec_from_file_location("kl_example", _EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _reference_upper(q, c):
    """p* by 300-bit mpmath bisection (independent of certbound)."""
    mpmath.mp.prec = 300
    q, c = mpmath.mpf(q), mpmath.mpf(c)
    kl = lambda p: (q * mpmath.log(q / p) if q > 0 else 0) + (1 - q) * mpmath.log((1 - q) / (1 - p))
    lo, hi = q, mpmath.mpf(1)
    for _ in range(200):
        m = (lo + hi) / 2
        lo, hi = (lo, m) if kl(m) > c else (m, hi)
    return lo


def test_verdicts_match_reference_and_some_are_unsafe():
    ex = _load_example()
    cf = parse_claims(ex.claims_toml())
    verdicts = audit_claims(cf)
    unsafe = 0
    for (q, c), v in zip(ex.CASES, verdicts):
        p_star = _reference_upper(q, c)
        float_value = mpmath.mpf(v.claim.value.text)
        expected = "confirmed" if float_value > p_star else "refuted"
        assert v.status == expected, (q, c, v.status, float_value, p_star)
        unsafe += v.status == "refuted"
    assert unsafe >= 1  # the midpoint does land below the true bound


def test_certified_inverse_is_safe_where_the_float_is_not():
    from certbound.audit.scalars import safe_kl_inverse_upper

    ex = _load_example()
    for q, c in ex.CASES:
        assert mpmath.mpf(safe_kl_inverse_upper(q, c).numerator) / safe_kl_inverse_upper(q, c).denominator >= _reference_upper(q, c)
