"""S_p, ‖·‖_F, ‖·‖_* from the float ends (Lemma 8.2) and the float-interval JSON form.

References do not share code with what they test: mpmath interval arithmetic
(``mpmath.iv`` at 300 bits) and exact Fractions for the sums; the per-σ Arb
evaluation (written out here) for the width claim of proofs/enclosure.md §8;
for the JSON form, ``ball_to_json`` itself on balls whose exact ends are floats,
and an integer floor/ceiling to ``digits`` significant digits.
"""

from __future__ import annotations

import math
import random
import dataclasses
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb

from certbound.ball import (
    _json_of_ends,
    ball_to_json,
    float_interval_to_json,
    lower_fraction,
    upper_fraction,
    working_precision,
)
from certbound.enclose import (
    enclose_singular_values,
    enclose_singular_values_of_product,
    frobenius_norm,
    nuclear_norm,
    schatten_quantity,
    stable_rank,
)
from certbound.enclose.quantities import norms_and_schatten, norms_and_schatten_intervals
from certbound.enclose.svd import _build_from_bounds

U = 2.0**-53
DYADIC_PS = [Fraction(1, 2), Fraction(1), Fraction(2), Fraction(1, 4), Fraction(3, 4), Fraction(3, 2),
             Fraction(5, 4), Fraction(1, 8), Fraction(7, 4), Fraction(255, 128)]


def _width_factor(p: Fraction) -> float:
    """e^{ε_p} of proofs/enclosure.md §8 (Lemma 8.2, width), with a hair of slack for exp()'s own rounding."""
    a, j = p.numerator, p.denominator.bit_length() - 1
    eps = ((9 if j else 3) * a + 2 * float(p)) * U
    return math.exp(eps) * (1 + 1e-3 * U)


def _iv_sum(values: list[float], p: Fraction) -> mpmath.iv.mpf:
    """Rigorous interval for Σ v^p (mpmath interval arithmetic at 300 bits)."""
    iv = mpmath.iv
    old = iv.prec
    iv.prec = 300
    try:
        pv = iv.mpf(p.numerator) / p.denominator
        total = iv.mpf(0)
        for v in values:
            if v > 0:
                total += iv.mpf(v) ** pv
        return total
    finally:
        iv.prec = old


def _synthetic(lo: np.ndarray, hi: np.ndarray):
    """An enclosure with exactly these float ends (the stacked path's builder)."""
    z = arb(0)
    return _build_from_bounds((len(lo), len(lo)), lo, hi, "fast", z, z, z, len(lo))


def _random_ends(rng: random.Random, n: int, scale_exp: int) -> tuple[np.ndarray, np.ndarray]:
    mids = sorted((rng.random() * 2.0**rng.randint(scale_exp - 30, scale_exp) for _ in range(n)), reverse=True)
    lo, hi = [], []
    for m in mids:
        w = m * rng.choice([0.0, 2.0**-52, 1e-15, 1e-9, 1e-3, 0.5, 1.0])
        lo.append(max(m - w, 0.0))
        hi.append(m + w)
    if n and rng.random() < 0.3:
        hi[-1] = lo[-1] = 0.0  # a σ proved 0
    if n > 1 and rng.random() < 0.3:
        lo[-2] = 0.0  # a σ whose ball reaches 0
    return np.array(lo), np.array(hi)


def _per_sigma_arb(enc, p: Fraction) -> arb:
    """The per-σ Arb evaluation (the code before Lemma 8.2), written out: Σ hull(lo^p, hi^p) over σᵢ ≠ 0."""
    with working_precision(128):
        pa = arb(p.numerator) / p.denominator
        total = arb(0)
        for s in enc.sigma:
            lo, hi = s.lower(), s.upper()
            if hi > 0:
                total += (lo ** pa if lo > 0 else arb(0)).union(hi ** pa)
        return total


def _check_against_references(enc, p: Fraction, got) -> None:
    lo_g, hi_g = (got if isinstance(got, tuple) else (float(lower_fraction(got)), float(upper_fraction(got))))
    keep = enc.upper > 0
    ref_lo = _iv_sum(enc.lower[keep].tolist(), p)
    ref_hi = _iv_sum(enc.upper[keep].tolist(), p)
    assert mpmath.mpf(lo_g) <= ref_lo.a  # below every point of Σ lo^p ≤ S_p
    assert mpmath.mpf(hi_g) >= ref_hi.b
    old = _per_sigma_arb(enc, p)
    f = _width_factor(p)
    old_lo, old_hi = lower_fraction(old), upper_fraction(old)
    assert Fraction(lo_g) >= old_lo / Fraction(f) if old_lo > 0 else lo_g >= 0
    assert Fraction(hi_g) <= old_hi * Fraction(f)


@pytest.mark.parametrize("seed", [*range(20), *(pytest.param(s, marks=pytest.mark.slow) for s in range(20, 100))])
def test_float_schatten_sums_contain_exact_sums_and_are_within_the_stated_factor(seed):
    rng = random.Random(seed)
    lo, hi = _random_ends(rng, rng.choice([1, 2, 3, 7, 40, 384]), rng.choice([-400, -20, 0, 3, 60, 400]))
    enc = _synthetic(lo, hi)
    for p in DYADIC_PS:
        _, _, (got,) = norms_and_schatten_intervals(enc, [p])
        if np.all(enc.upper == 0):
            assert got == (0.0, 0.0)
            continue
        assert isinstance(got, tuple)  # the float route applied
        _check_against_references(enc, p, got)


@pytest.mark.parametrize("kind", ["fast", "gram", "auto", "product", "tight"])
def test_float_schatten_on_kernel_enclosures(kind):
    rng = np.random.default_rng(5)
    if kind == "product":
        enc = enclose_singular_values_of_product(rng.standard_normal((30, 4)), rng.standard_normal((20, 4)))
    else:
        W = rng.standard_normal((12, 30)) * np.logspace(0, -9, 12)[:, None]
        enc = enclose_singular_values(W, mode=kind)
    fro, nuc, sps = norms_and_schatten_intervals(enc, DYADIC_PS)
    for p, got in zip(DYADIC_PS, sps):
        _check_against_references(enc, p, got)
    _check_against_references(enc, Fraction(1), nuc)
    # ‖·‖_F = √S₂: contains the exact square roots of the exact sums of squared ends, within e^{8u} of the Arb √.
    keep = enc.upper > 0
    s2_lo = sum((Fraction(float(v)) ** 2 for v in enc.lower[keep]), Fraction(0))
    s2_hi = sum((Fraction(float(v)) ** 2 for v in enc.upper[keep]), Fraction(0))
    assert Fraction(fro[0]) ** 2 <= s2_lo and Fraction(fro[1]) ** 2 >= s2_hi
    with working_precision(128):
        old = _per_sigma_arb(enc, Fraction(2)).sqrt()
    f = Fraction(math.exp(8 * U) * (1 + 1e-3 * U))
    assert Fraction(fro[0]) >= lower_fraction(old) / f and Fraction(fro[1]) <= upper_fraction(old) * f


def test_balls_of_the_public_functions_hold_the_float_ends():
    rng = np.random.default_rng(2)
    enc = enclose_singular_values(rng.standard_normal((9, 14)))
    fro, nuc, (s_half, s1, s2) = norms_and_schatten_intervals(enc, ["0.5", 1, 2.0])
    assert s1 == nuc
    balls = norms_and_schatten(enc, ["0.5", 1, 2.0])
    for ends, ball in [(fro, balls[0]), (nuc, balls[1]), (s_half, balls[2][0]), (s2, balls[2][2])]:
        assert lower_fraction(ball) <= Fraction(ends[0]) and upper_fraction(ball) >= Fraction(ends[1])
        assert lower_fraction(ball) >= 0
    for f, ball in [(frobenius_norm, balls[0]), (nuclear_norm, balls[1])]:
        assert f(enc).mid() == ball.mid() and f(enc).rad() == ball.rad()
    assert schatten_quantity(enc, "1/2").mid() == balls[2][0].mid()
    sr = stable_rank(enc)
    W = np.random.default_rng(2).standard_normal((9, 14))
    with mpmath.workprec(300):
        M = mpmath.matrix(W.tolist())
        fro2 = sum(mpmath.mpf(float(x)) ** 2 for x in W.ravel())
        s1 = mpmath.svd_r(M, compute_uv=False)[0]
        truth = fro2 / s1**2
    assert float(lower_fraction(sr)) <= float(truth) <= float(upper_fraction(sr))


def test_zero_matrix_and_proved_zero_sigmas_give_exact_zero():
    enc = enclose_singular_values(np.zeros((3, 4)))
    fro, nuc, (s,) = norms_and_schatten_intervals(enc, ["0.5"])
    assert fro == nuc == s == (0.0, 0.0)
    assert frobenius_norm(enc).is_zero() and schatten_quantity(enc, 2).is_zero()


def test_non_dyadic_p_and_unusable_ends_go_through_arb():
    rng = np.random.default_rng(3)
    enc = enclose_singular_values(rng.standard_normal((6, 8)))
    for p in [0.3, Fraction(1, 2**11), Fraction(1, 1031), arb(1) / 3]:  # 0.3 as a float is a/2^54; inexact ball
        _, _, (got,) = norms_and_schatten_intervals(enc, [p])
        assert not isinstance(got, tuple)
    for p in ["1/3", "0.3", Fraction(1, 1024), "2/3", "1e-3"]:  # rationals with b ≤ 1024: Lemma 8.3
        _, _, (got,) = norms_and_schatten_intervals(enc, [p])
        assert isinstance(got, tuple)
    # infinite upper ends (a trivial enclosure): Arb, [.., inf]
    z = arb(0)
    triv = _build_from_bounds((2, 2), np.array([1.0, 0.0]), np.array([np.inf, np.inf]), "fast", z, z, z, 2)
    _, _, (got,) = norms_and_schatten_intervals(triv, [2])
    assert not isinstance(got, tuple) and not got.is_finite()
    # squares that overflow: the float route gives up, Arb gets the right (finite) answer
    big = _synthetic(np.array([1e200, 1e200]), np.array([1e200, 1e200]))
    _, _, (got,) = norms_and_schatten_intervals(big, [2])
    with working_precision(256):
        assert not isinstance(got, tuple) and got.contains(2 * arb(1e200) ** 2)
    with pytest.raises(ValueError):
        norms_and_schatten_intervals(enc, [2.5])
    with pytest.raises(ValueError):
        schatten_quantity(enc, "-1")
    assert norms_and_schatten_intervals(enc, [0])[2][0].contains(6)


def test_tiny_and_subnormal_ends_stay_sound():
    lo = np.array([3e-160, 1e-170, 5e-320, 0.0])
    hi = np.array([4e-160, 2e-170, 6e-320, 5e-324])
    enc = _synthetic(lo, hi)
    for p in DYADIC_PS:
        _, _, (got,) = norms_and_schatten_intervals(enc, [p])
        keep = enc.upper > 0
        assert mpmath.mpf(got[0]) <= _iv_sum(enc.lower[keep].tolist(), p).a
        assert mpmath.mpf(got[1]) >= _iv_sum(enc.upper[keep].tolist(), p).b


# --------------------------------------------------------------------------- JSON of float intervals


def _floor_digits(q: Fraction, digits: int) -> Fraction:
    """Largest decimal with `digits` significant digits ≤ q (q ≠ 0), by integer arithmetic."""
    e = math.floor(math.log10(abs(q.numerator)) - math.log10(q.denominator)) if q else 0
    for E in (e - 1, e, e + 1):  # find E with 10^E ≤ |q| < 10^(E+1)
        if Fraction(10) ** E <= abs(q) < Fraction(10) ** (E + 1):
            break
    unit = Fraction(10) ** (E - digits + 1)
    return math.floor(q / unit) * unit


def _ceil_digits(q: Fraction, digits: int) -> Fraction:
    return -_floor_digits(-q, digits)


def _float_pairs(rng: random.Random) -> list[tuple[float, float]]:
    out = [(0.0, 0.0), (0.0, 1.0), (-0.0, 5e-324), (5e-324, 5e-324), (1.0, 1.0), (0.1, 0.3), (-2.5, 3.0),
           (2.0**1023, 1.7976931348623157e308), (-1.7976931348623157e308, 1.7976931348623157e308),
           (2.0**-1022, 2.0**-1021), (1e16, 1e16 + 2), (123456789.0, 2.0**70), (-1e-300, -1e-310)]
    for _ in range(3000):
        kind = rng.random()
        a = rng.uniform(-1, 1) * 2.0 ** rng.randint(-1074, 1023)
        if kind < 0.3:
            b = a + abs(a) * rng.choice([0, 2.0**-52, 1e-12, 1e-3, 1.0])
        elif kind < 0.5:
            b = float(np.nextafter(a, np.inf))
        elif kind < 0.6:
            a = float(rng.randint(-10**6, 10**6))
            b = a + rng.randint(0, 1000)
        else:
            b = rng.uniform(-1, 1) * 2.0 ** rng.randint(-1074, 1023)
        if math.isfinite(a) and math.isfinite(b):
            out.append((min(a, b), max(a, b)))
    for _ in range(500):  # near and below the normal range: the midpoint's rounding at the subnormal boundary
        a, b = (rng.randint(-2**60, 2**60) * 2.0**-1074 / 2.0 ** rng.randint(0, 60) for _ in range(2))
        out.append((min(a, b), max(a, b)))
    return out


def test_float_interval_json_is_the_exact_interval_form():
    rng = random.Random(1)
    for lo, hi in _float_pairs(rng):
        for digits in (17, 6):
            got = float_interval_to_json(lo, hi, digits)
            # reference: the Fraction formatter on the exact ends, with the nearest float to the exact midpoint
            mid = float((Fraction(lo) + Fraction(hi)) / 2)
            assert got == _json_of_ends(Fraction(lo), Fraction(hi), mid, digits), (lo, hi, digits)
            # independent checks of the numbers the strings denote
            assert got["mid"] == mid and lo <= mid <= hi
            assert Fraction(got["lower"]) == (_floor_digits(Fraction(lo), digits) if lo else 0)
            assert Fraction(got["upper"]) == (_ceil_digits(Fraction(hi), digits) if hi else 0)
            ex = got["exact"]
            for s, v in ((ex["lower"], lo), (ex["upper"], hi)):
                m, _, e = s.partition("*2^")
                assert Fraction(int(m)) * Fraction(2) ** int(e or 0) == Fraction(v)


def test_float_interval_json_equals_ball_to_json_on_balls_with_float_ends():
    rng = random.Random(2)
    n = 0
    for _ in range(4000):
        x = rng.uniform(-1, 1) * 2.0 ** rng.randint(-1070, 1000)
        with working_precision(2200):
            if rng.random() < 0.3:
                ball = arb(x)  # exact
            else:
                # rad = (2^29 + 1)·2^t (what Arb's radius rounding gives for 2^(t+29)), ends floats for suitable t
                t = math.frexp(x)[1] - 53 - 29 + rng.randint(0, 40)
                ball = arb(x) + arb(0, arb(2) ** (t + 29))
        lo, hi = lower_fraction(ball), upper_fraction(ball)
        try:
            flo, fhi = float(lo), float(hi)
        except OverflowError:
            continue
        if Fraction(flo) != lo or Fraction(fhi) != hi:
            continue  # an end is not a float
        n += 1
        assert float_interval_to_json(flo, fhi) == ball_to_json(ball), (flo, fhi)
    assert n > 1500


def test_float_interval_json_rejects_non_intervals():
    for lo, hi in [(1.0, 0.5), (math.nan, 1.0), (0.0, math.inf), (-math.inf, 0.0)]:
        with pytest.raises(ValueError):
            float_interval_to_json(lo, hi)


def test_record_prints_the_float_ends():
    from certbound.checkpoints import TheoryMatrix
    from certbound.pipeline._spectrum import certify_theory_matrix

    W = np.random.default_rng(4).standard_normal((5, 7))
    ps = ["0.5", "1", "2", "1/3", "1/2048"]
    rec = certify_theory_matrix(TheoryMatrix(0, None, "M_in", W.shape, dense=W), ps=ps)
    enc = enclose_singular_values(W, mode="auto")
    fro, nuc, sps = norms_and_schatten_intervals(enc, ps)
    assert rec["frobenius_norm"] == float_interval_to_json(*fro)
    assert rec["nuclear_norm"] == float_interval_to_json(*nuc)
    for p, v in zip(ps[:4], sps):
        assert rec["schatten"][p] == float_interval_to_json(*v)
    assert rec["schatten"]["1/2048"] == ball_to_json(sps[4])  # neither lemma: the Arb ball
    with mpmath.workprec(300):
        s = mpmath.svd_r(mpmath.matrix(W.tolist()), compute_uv=False)
        truth = {"0.5": sum(mpmath.sqrt(v) for v in s), "1": sum(s), "2": sum(v**2 for v in s),
                 "1/3": sum(mpmath.cbrt(v) for v in s), "1/2048": sum(v ** (mpmath.mpf(1) / 2048) for v in s)}
        for p, t in truth.items():
            d = rec["schatten"][p]
            lo, hi = Fraction(d["lower"]), Fraction(d["upper"])
            assert mpmath.mpf(lo.numerator) / lo.denominator <= t <= mpmath.mpf(hi.numerator) / hi.denominator


def test_frobenius_ends_of_single_sigmas_enclose_them():
    # One σ = x exactly: ‖·‖_F = x, so both ends of √S₂ are tested with no slack from a sum of many terms.
    rng = random.Random(7)
    for _ in range(2000):
        x = rng.uniform(0.5, 1.0) * 2.0 ** rng.randint(-500, 500)
        enc = _synthetic(np.array([x]), np.array([x]))
        fro, nuc, (s_half,) = norms_and_schatten_intervals(enc, [Fraction(1, 2)])
        assert fro[0] <= x <= fro[1] and nuc[0] <= x <= nuc[1]
        assert Fraction(s_half[0]) ** 2 <= Fraction(x) <= Fraction(s_half[1]) ** 2


def test_sqrt_interval_steps_outward():
    from certbound.enclose.quantities import _sqrt_interval

    rng = random.Random(8)
    for _ in range(500):
        s = rng.uniform(0.5, 1.0) * 2.0 ** rng.randint(-900, 900)
        lo, hi = _sqrt_interval((s, s))
        assert Fraction(lo) ** 2 <= Fraction(s) <= Fraction(hi) ** 2
    assert _sqrt_interval((0.0, 0.0)) == (0.0, 0.0)


def test_sigma_json_zero_tail_is_the_per_sigma_form():
    from certbound.pipeline._spectrum import _is_exact_zero, _sigma_json, _zero_json

    rng = np.random.default_rng(9)
    enc = enclose_singular_values_of_product(rng.standard_normal((20, 3)), rng.standard_normal((15, 3)))
    k = int(np.count_nonzero(enc.upper > 0))
    assert k < len(enc.sigma)  # a zero tail
    reference = [_zero_json() if (i >= k and _is_exact_zero(s)) else ball_to_json(s) for i, s in enumerate(enc.sigma)]
    got = _sigma_json(enc)
    assert got == reference
    assert len({id(d) for d in got}) == len(got) and len({id(d["exact"]) for d in got}) == len(got)  # fresh dicts
    # a tail that is not all exact zeros goes entry by entry
    z = arb(0)
    with working_precision(128):
        odd = dataclasses.replace(enc, sigma=enc.sigma[:k] + (z.union(arb(-1e-300)),) + enc.sigma[k + 1:])
    got = _sigma_json(odd)
    assert got[k] == ball_to_json(odd.sigma[k]) and got[k] != _zero_json() and got[k + 1] == _zero_json()


def test_ball_to_json_midpoint_widening_near_the_skip_threshold():
    # Exact midpoints just off a float (up to half a spacing) with radii around that spacing: where the
    # nearest float to the midpoint falls outside the ball the printed ends must widen to it, as the
    # Fraction path does (ball_to_json skips the comparison only when the radius provably covers it).
    from certbound.ball import _ball_to_json_fractions

    rng = random.Random(10)
    n_widened = 0
    for _ in range(3000):
        E = rng.choice([rng.randint(-1060, 1000), -1022, -1021, -1020, 0, 1])
        f = rng.uniform(1, 2) * 2.0 ** (E - 1)
        spacing = Fraction(math.ulp(f))
        off = spacing * Fraction(rng.choice([1, 3, 7, 15]), 16) * rng.choice([1, -1])
        with working_precision(2200):
            m = arb(f) + arb(off.numerator) / off.denominator
            r = arb(2) ** (math.frexp(f)[1] - rng.randint(50, 58)) * rng.choice([1, 3, 5])
            x = m + arb(0, r)
        got, ref = ball_to_json(x), _ball_to_json_fractions(x, 17)
        assert got == ref, (f, off, r)
        n_widened += not lower_fraction(x) <= Fraction(got["mid"]) <= upper_fraction(x)
    assert n_widened > 100  # the widening case is exercised


RATIONAL_PS = [Fraction(1, 3), Fraction(2, 3), Fraction(3, 10), Fraction(5, 3), Fraction(1, 1000), Fraction(7, 5),
               Fraction(1, 7), Fraction(1023, 1024), Fraction(2, 1023)]


@pytest.mark.parametrize("seed", [*range(8), *(pytest.param(s, marks=pytest.mark.slow) for s in range(8, 60))])
def test_rational_schatten_sums_contain_exact_sums_and_stay_narrow(seed):
    rng = random.Random(100 + seed)
    scale = rng.choice([-300, -20, 0, 3, 60, 300])
    lo, hi = _random_ends(rng, rng.choice([1, 2, 5, 40, 384]), scale)
    enc = _synthetic(lo, hi)
    for p in RATIONAL_PS:
        _, _, (got,) = norms_and_schatten_intervals(enc, [p])
        if np.all(enc.upper == 0):
            assert got == (0.0, 0.0)
            continue
        if not isinstance(got, tuple):
            # t^a or c^b left the float range (no scaling is tried): the Arb evaluation, which must contain
            assert abs(scale) == 300 or p.numerator * p.denominator > 1000
            keep = enc.upper > 0
            lo_b, hi_b = _iv_sum(enc.lower[keep].tolist(), p), _iv_sum(enc.upper[keep].tolist(), p)
            glo, ghi = lower_fraction(got), upper_fraction(got)
            with mpmath.workprec(3000):
                assert mpmath.mpf(glo.numerator) / glo.denominator <= lo_b.a
                assert mpmath.mpf(ghi.numerator) / ghi.denominator >= hi_b.b
            continue
        keep = enc.upper > 0
        assert mpmath.mpf(got[0]) <= _iv_sum(enc.lower[keep].tolist(), p).a
        assert mpmath.mpf(got[1]) >= _iv_sum(enc.upper[keep].tolist(), p).b
        # width: both candidates verified for every end, so each term is within 2·(k_c + k_d) ≤ 64 units of u
        old = _per_sigma_arb(enc, p)
        f = Fraction(math.exp((64 + 2 * float(p) + 3) * U))
        old_lo, old_hi = lower_fraction(old), upper_fraction(old)
        assert Fraction(got[0]) >= old_lo / f if old_lo > 0 else got[0] >= 0
        assert Fraction(got[1]) <= old_hi * f


def test_verified_power_bounds_single_values():
    from certbound.enclose.quantities import _verified_power_bounds

    rng = random.Random(11)
    for a, b in [(1, 3), (2, 3), (3, 10), (5, 3), (1, 1000), (1, 7)]:
        t = np.array([rng.uniform(0.5, 1) * 2.0 ** rng.randint(-200, 200) for _ in range(300)] + [8.0, 27.0, 1.0])
        c, d = _verified_power_bounds(t, a, b)
        for ti, ci, di in zip(t.tolist(), c.tolist(), d.tolist()):
            # c ≤ t^(a/b) ≤ d  ⟺  c^b ≤ t^a ≤ d^b, decided exactly
            assert Fraction(ci) ** b <= Fraction(ti) ** a <= Fraction(di) ** b
            assert di <= ci * (1 + 70 * U)  # a few dozen ulps at most
    # t^a overflows a float: no float bounds (the caller then uses Arb)
    assert _verified_power_bounds(np.array([1e300]), 5, 3) is None


def test_rational_path_on_kernel_enclosure_and_huge_values():
    rng = np.random.default_rng(12)
    enc = enclose_singular_values(rng.standard_normal((10, 20)) * np.logspace(0, -6, 10)[:, None])
    for p in RATIONAL_PS:
        _, _, (got,) = norms_and_schatten_intervals(enc, [p])
        if p.numerator * p.denominator > 1000:  # (1e-6)^1023 underflows: Arb
            continue
        assert isinstance(got, tuple)
        _check_reference_only(enc, p, got)
    big = _synthetic(np.array([1e300, 1e250]), np.array([1e300, 1e250]))
    _, _, (got,) = norms_and_schatten_intervals(big, [Fraction(5, 3)])  # t^5 overflows: Arb
    assert not isinstance(got, tuple)
    with working_precision(3000):
        truth = arb(1e300) ** (arb(5) / 3) + arb(1e250) ** (arb(5) / 3)
        assert got.overlaps(truth) and got.lower() <= truth.lower() and got.upper() >= truth.upper()


def _check_reference_only(enc, p, got) -> None:
    keep = enc.upper > 0
    assert mpmath.mpf(got[0]) <= _iv_sum(enc.lower[keep].tolist(), p).a
    assert mpmath.mpf(got[1]) >= _iv_sum(enc.upper[keep].tolist(), p).b


@pytest.mark.parametrize("seed", range(3))
def test_verified_power_bounds_survive_bad_candidates(seed, monkeypatch):
    # The candidate is only a guess: off by up to ±40 units of u (or worse), the accepted ends must still be
    # bounds, decided exactly.
    import certbound.enclose.quantities as q

    rng = np.random.default_rng(seed)
    good = q._power_candidate

    def bad(t, a, b):
        r = good(t, a, b)
        return r * (1 + rng.integers(-40, 41, r.shape) * U) * np.where(rng.random(r.shape) < 0.05, 1.5, 1.0)

    monkeypatch.setattr(q, "_power_candidate", bad)
    for a, b in [(1, 3), (2, 3), (3, 10), (5, 3), (1, 7)]:
        t = np.ldexp(rng.uniform(1, 2, 400), rng.integers(-100, 100, 400))
        out = q._verified_power_bounds(t, a, b)
        if out is None:
            continue  # a candidate 1.5× off passes no step: the caller uses Arb
        for ti, ci, di in zip(t.tolist(), out[0].tolist(), out[1].tolist()):
            assert Fraction(ci) ** b <= Fraction(ti) ** a <= Fraction(di) ** b
    monkeypatch.setattr(q, "_power_candidate", lambda t, a, b: good(t, a, b) * (1 + rng.integers(-6, 7, t.shape) * U))
    for a, b in [(1, 3), (2, 3), (3, 10), (5, 3), (1, 7)]:
        t = np.ldexp(rng.uniform(1, 2, 400), rng.integers(-100, 100, 400))
        c, d = q._verified_power_bounds(t, a, b)  # ±6 u: always within the 16 steps
        for ti, ci, di in zip(t.tolist(), c.tolist(), d.tolist()):
            assert Fraction(ci) ** b <= Fraction(ti) ** a <= Fraction(di) ** b
