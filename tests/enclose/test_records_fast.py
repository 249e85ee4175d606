"""Tests for the record speed-ups: batched ‖A Bᵀ‖_{2,1}, fast JSON forms.

References are independent of the code under test: exact Fractions and mpmath
at 400 bits for the column norms, and for the JSON forms the exact ends
computed here from the ball's midpoint and radius with Fractions and decimal.
"""

from __future__ import annotations

import decimal
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb

from certbound.ball import _ball_to_json_fractions, ball_to_json, lower_fraction, upper_fraction, working_precision
from certbound.enclose import enclose_singular_values_of_product, norm_21_of_product
from certbound.enclose.quantities import norm_21_of_products


def _exact_column_norm_sum(A: np.ndarray, B: np.ndarray) -> mpmath.mpf:
    FA = [[Fraction(float(x)) for x in row] for row in A]
    FB = [[Fraction(float(x)) for x in row] for row in B]
    d = A.shape[1]
    with mpmath.workprec(400):
        total = mpmath.mpf(0)
        for j in range(B.shape[0]):
            c = sum((sum(FA[i][k] * FB[j][k] for k in range(d)) ** 2 for i in range(A.shape[0])), Fraction(0))
            total += mpmath.sqrt(mpmath.mpf(c.numerator) / c.denominator)
    return total


@pytest.mark.parametrize("stack_bytes", [1, 2000, 1 << 21])  # one head per stack, a few, all
def test_norm_21_of_products_matches_single_evaluations_and_contains_exact(stack_bytes, monkeypatch):
    import certbound.enclose.quantities as q

    monkeypatch.setattr(q, "_STACK_BYTES", stack_bytes)
    rng = np.random.default_rng(11)
    As = [rng.standard_normal((14, 3)) * 0.05 for _ in range(4)] + [rng.standard_normal((9, 2))]
    Bs = [rng.standard_normal((12, 3)) * 0.05 for _ in range(4)] + [rng.standard_normal((8, 2))]
    # unsafe scale, zero factor and d(m+n) > mn go through the single function
    As += [rng.standard_normal((6, 2)) * 1e-250, np.zeros((5, 2)), rng.standard_normal((3, 3))]
    Bs += [rng.standard_normal((7, 2)) * 1e250, rng.standard_normal((4, 2)), rng.standard_normal((3, 3))]
    got = norm_21_of_products(As, Bs)
    assert len(got) == len(As)
    for A, B, g in zip(As, Bs, got):
        single = norm_21_of_product(A, B)
        assert lower_fraction(g) == lower_fraction(single) and upper_fraction(g) == upper_fraction(single)
        v = _exact_column_norm_sum(A, B)
        lo, hi = lower_fraction(g), upper_fraction(g)
        with mpmath.workprec(400):
            assert mpmath.mpf(lo.numerator) / lo.denominator <= v <= mpmath.mpf(hi.numerator) / hi.denominator
    with pytest.raises(ValueError):
        norm_21_of_products(As[:2], Bs[:1])


@pytest.mark.parametrize("batch_bytes", [64 << 20, 400])  # whole layers; one head per batch
def test_records_batched_equal_single_records(batch_bytes, monkeypatch):
    import certbound.pipeline._spectrum as sp
    from certbound.checkpoints import TheoryMatrix
    from certbound.pipeline._spectrum import certify_theory_matrices, certify_theory_matrix

    monkeypatch.setattr(sp, "HEAD_BATCH_BYTES", batch_bytes)
    calls, separate = [], []
    real = sp.enclose_singular_values_and_norms_21_of_products
    monkeypatch.setattr(sp, "enclose_singular_values_and_norms_21_of_products",
                        lambda As, Bs, mode: calls.append(len(As)) or real(As, Bs, mode=mode))
    real_n21 = sp.norm_21_of_products
    monkeypatch.setattr(sp, "norm_21_of_products", lambda As, Bs: separate.append(len(As)) or real_n21(As, Bs))

    rng = np.random.default_rng(3)
    ms = [TheoryMatrix(0, h, "QK", (10, 10), factors=(rng.standard_normal((10, 2)), rng.standard_normal((10, 2))))
          for h in range(3)]
    ms.append(TheoryMatrix(0, None, "M_in", (4, 6), dense=rng.standard_normal((4, 6))))
    ms += [TheoryMatrix(1, h, "VO", (10, 10), factors=(rng.standard_normal((10, 2)), rng.standard_normal((10, 2))))
           for h in range(2)]
    batched = certify_theory_matrices(ms, "auto", ["0.5", "1", "2"])
    # ‖·‖_{2,1} of the heads computed with their enclosures, one call per batch (320 bytes per head)
    assert calls == ([3, 2] if batch_bytes > 1000 else [1, 1, 1, 1, 1]) and separate == []
    assert batched == [certify_theory_matrix(m, "auto", ["0.5", "1", "2"]) for m in ms]
    enc = enclose_singular_values_of_product(*ms[0].factors, mode="auto")
    assert batched[0]["sigma"][0] == ball_to_json(enc.sigma[0])


def _reference_json(x: arb, digits: int) -> dict:
    """ball_to_json's documented form, computed here from mid and radius with Fractions and decimal."""
    def dy(v):
        m, e = (int(t) for t in v.man_exp())
        return Fraction(m) * Fraction(2) ** e
    mid, rad = dy(x.mid()), dy(x.rad())
    lo, hi = mid - rad, mid + rad
    fm = float(x.mid())
    finite = fm not in (float("inf"), float("-inf"))
    plo, phi = (min(lo, Fraction(fm)), max(hi, Fraction(fm))) if finite else (lo, hi)

    def dec(q, rounding):
        if q == 0:
            return "0"
        k = q.denominator.bit_length() - 1
        exact = decimal.Decimal(q.numerator * 5**k).scaleb(-k, decimal.Context(prec=decimal.MAX_PREC,
                                                                             Emax=decimal.MAX_EMAX,
                                                                             Emin=decimal.MIN_EMIN))
        out = decimal.Context(prec=digits, rounding=rounding, Emax=10**9, Emin=-(10**9)).plus(exact)
        return (format(out, "g") if abs(out.adjusted()) < 16 else format(out, "e")).replace("E", "e")

    def ds(q):
        k = q.denominator.bit_length() - 1
        return f"{q.numerator}*2^{-k}" if k else f"{q.numerator}"

    return {"lower": dec(plo, decimal.ROUND_FLOOR), "upper": dec(phi, decimal.ROUND_CEILING),
            "mid": fm if finite else None,
            "exact": {"lower": ds(lo), "upper": ds(hi)}}


def _random_balls(n: int, seed: int) -> list[arb]:
    rng = random.Random(seed)
    out = []
    for prec in (30, 53, 128, 300):
        with working_precision(prec):
            for _ in range(n):
                e = rng.choice([0, 1, -1, 5, -30, -200, 300, -1074, 1023, -1100, 2000])
                x = arb(rng.uniform(-10, 10)) * arb(2) ** e
                r = rng.choice([0, 1e-30, 1e-11, 0.5, 3])
                if r:
                    x = x + arb(0, r) * arb(2) ** rng.choice([0, e, e - 60])
                if rng.random() < 0.3:
                    x = x / 3
                if rng.random() < 0.1:
                    x = arb(rng.randint(-10**6, 10**6)) * arb(10) ** rng.randint(-5, 5)
                if rng.random() < 0.05:
                    x = arb(rng.choice([0.0, 1.0, 100.0, 1e16, 1e17, 123456789012345678.0, 0.1]))
                out.append(x)
    return out


@pytest.mark.parametrize("digits", [17, 5, 1])
def test_ball_to_json_fast_path_gives_the_same_strings(digits):
    balls = _random_balls(400, digits) + [arb(0), arb(-0.0), arb(1) / 3, -arb(2).sqrt(), arb(2) ** 5000,
                                          arb(7) * arb(2) ** -1100]
    for x in balls:
        ref = _reference_json(x, digits)
        assert ball_to_json(x, digits) == ref == _ball_to_json_fractions(x, digits)


def test_ball_to_json_outside_the_fast_path():
    for x in (arb.pos_inf(), arb(0).union(arb.pos_inf()), arb(2) ** -200000, arb(3) * arb(2) ** -131080):
        assert ball_to_json(x) == _ball_to_json_fractions(x, 17)
