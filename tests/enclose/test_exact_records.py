"""Referee tests of the records' spectral quantities and their JSON against exact references.

Three layers, each against a reference that shares no code with certbound:

* the spectral quantities of an enclosure (``spectral_norm``, ``frobenius_norm``,
  ``nuclear_norm``, ``schatten_quantity``, ``norms_and_schatten``, ``stable_rank``) on
  *fabricated* enclosures with adversarial float ends (subnormal, 2^±1000 — whose squares
  overflow a float —, exact powers, ties, zeros, repeated values, long lists): each result must
  contain the quantity for every spectrum inside the balls; the extremes Σℓᵢ^p and Σhᵢ^p are
  evaluated exactly (Fractions, p ∈ {1, 2}) or by mpmath at 700 bits (asserted up to a relative 2^-550);
* whole records (``certify_theory_matrices``) of dense matrices and per-head products whose
  singular values are known exactly by construction (:mod:`tests.enclose.exact_known`), with
  and without a logit scale 1/√d: every ball of the record contains the exact value;
* every emitted JSON ball form: its ``exact`` ends parse to rationals that enclose the Arb ball
  (captured where it is formed) and the true value, its decimal ends lie outside the exact
  ends, ``mid`` lies between the decimal ends, and the record's JSON text parses back to it.

Fast cases run by default; ``-m slow`` runs many more seeds.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb

from certbound import ball as ball_mod
from certbound.enclose import quantities
from certbound.enclose.svd import RankBounds, SingularValueEnclosure
from tests.enclose.exact_inertia import lower_fraction, upper_fraction
from tests.enclose.exact_known import contains_mp, known_matrix, known_product, mp_of

PREC = 700  # mpmath bits; containment is asserted up to a relative 2^-550 (REL)
REL = 550
PS = [Fraction(1, 2), 1, 2, "1/3", 0.7, Fraction(2, 3), 1e-3, "2", 1.5, 0.25, Fraction(3, 256), Fraction(255, 128),
      Fraction(1, 256), "0.75", Fraction(7, 4)]  # dyadic a/2^j with j ≤ 8 and others


# ------------------------------------------------------------ fabricated


def _float_ends(rng, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Descending float ends 0 ≤ lo ≤ hi of k balls, adversarial."""
    kind = int(rng.integers(0, 8))
    if kind == 0:
        hi = np.sort(rng.uniform(0, 3, k))[::-1]
    elif kind == 1:  # subnormal and tiny
        hi = np.sort(rng.integers(0, 50, k) * 5e-324)[::-1]
    elif kind == 2:  # huge: σ² overflows a float
        hi = np.sort(rng.uniform(0.5, 1, k) * 2.0 ** float(rng.choice([511, 512, 600, 1000, 1023])))[::-1]
    elif kind == 3:  # exact powers of two and four (σ^p exact for p = 1/2, 1/4, 2)
        hi = np.sort(np.ldexp(1.0, 4 * rng.integers(-200, 200, k)))[::-1]
    elif kind == 4:  # just below / above powers of two
        hi = np.sort(np.ldexp(rng.choice([1 - 2.0**-53, 1 + 2.0**-52, 1.0], k), rng.integers(-1074, 1000, k)))[::-1]
    elif kind == 5:  # repeated values, a zero tail
        v = float(rng.uniform(0.1, 10))
        hi = np.array([v] * (k - k // 3) + [0.0] * (k // 3))
    elif kind == 6:  # graded over the whole range
        hi = np.sort(np.ldexp(rng.uniform(1, 2, k), rng.integers(-1074, 1023, k)))[::-1]
    else:
        hi = np.sort(rng.standard_normal(k) ** 2 * 1e-150)[::-1]
    hi = np.where(np.isfinite(hi), hi, 1.0)
    how = int(rng.integers(0, 4))
    if how == 0:
        lo = hi.copy()  # point balls
    elif how == 1:
        lo = hi * (1 - rng.uniform(0, 1e-9, k))
    elif how == 2:
        lo = np.where(rng.random(k) < 0.3, 0.0, hi * rng.uniform(0, 1, k))
    else:
        lo = np.nextafter(hi, 0.0)
    lo = np.maximum.accumulate(np.minimum(lo, hi)[::-1])[::-1]  # descending, as _build makes them
    lo = np.minimum(lo, hi)
    return lo, hi


def fabricated_enclosure(rng, k: int | None = None) -> SingularValueEnclosure:
    """A SingularValueEnclosure whose balls are the exact hulls of adversarial descending float ends."""
    k = int(rng.integers(0, 12)) if k is None else k
    lo, hi = _float_ends(rng, k)
    with ball_mod.working_precision():
        sigma = tuple(arb(float(a)) if a == b else arb(float(a)).union(arb(float(b))) for a, b in zip(lo, hi))
    rl = int(np.count_nonzero(lo > 0))
    ru = int(np.count_nonzero(hi > 0))
    return SingularValueEnclosure(shape=(k, k + int(rng.integers(0, 3))), sigma=sigma, lower=lo, upper=hi,
                                  mode="fast", certified=True, alpha=arb(0), beta=arb(0), residual=arb(0),
                                  rank=RankBounds(rl, max(ru, rl)))


def _ball_ends(x) -> tuple[Fraction, Fraction]:
    lo, hi = lower_fraction(x), upper_fraction(x)
    return max(lo, Fraction(0)) if lo is not None else Fraction(0), hi


def _p_mp(p) -> mpmath.mpf:
    q = Fraction(p) if not isinstance(p, float) else Fraction(*p.as_integer_ratio())
    return mp_of(q)


def _sum_pow(ends: list[Fraction], p) -> mpmath.mpf:
    pm = _p_mp(p)
    return mpmath.fsum(mpmath.power(mp_of(x), pm) for x in ends if x > 0)


def _exact_sum_pow(ends: list[Fraction], p) -> Fraction | None:
    q = Fraction(p) if not isinstance(p, float) else Fraction(*p.as_integer_ratio())
    if q in (1, 2):
        return sum((x ** int(q) for x in ends), Fraction(0))
    return None


def check_contains(ball, lo_value, hi_value, what) -> None:
    """The ball contains the whole range [lo_value, hi_value] (Fractions exactly, mpf up to 2^-1500 relative)."""
    blo, bhi = lower_fraction(ball), upper_fraction(ball)
    for v in (lo_value, hi_value):
        if isinstance(v, Fraction):
            assert (blo is None or blo <= v) and (bhi is None or v <= bhi), (what, str(ball), v)
        else:
            assert contains_mp(blo, bhi, v, REL), (what, str(ball), mpmath.nstr(v, 30))


def check_spectral_quantities(enc: SingularValueEnclosure) -> None:
    # σᵢ lies in its ball *and* in [lower[i], upper[i]] (both are the enclosure's contract): the
    # quantities must contain their values on every spectrum in the intersection.
    ends = [_ball_ends(x) for x in enc.sigma]
    los = [max(e[0], Fraction(float(f))) for e, f in zip(ends, enc.lower)]
    his = [min(e[1], Fraction(float(f))) if math.isfinite(f) else e[1] for e, f in zip(ends, enc.upper)]
    assert all(h is not None for h in his)
    with mpmath.workprec(PREC):
        # spectral norm: σ₁ ∈ its ball
        s1 = quantities.spectral_norm(enc)
        if enc.sigma:
            check_contains(s1, los[0], his[0], "spectral_norm")
        else:
            check_contains(s1, Fraction(0), Fraction(0), "spectral_norm")
        ref = {}
        for p in PS + [1, 2]:
            ex_lo, ex_hi = _exact_sum_pow(los, p), _exact_sum_pow(his, p)
            ref[str(p)] = (ex_lo if ex_lo is not None else _sum_pow(los, p),
                           ex_hi if ex_hi is not None else _sum_pow(his, p))
        for p in PS:
            check_contains(quantities.schatten_quantity(enc, p), *ref[str(p)], ("S_p", p))
        fro, nuc, sps = quantities.norms_and_schatten(enc, PS)
        for p, v in zip(PS, sps):
            check_contains(v, *ref[str(p)], ("norms_and_schatten S_p", p))
        check_contains(nuc, *ref["1"], "nuclear (norms_and_schatten)")
        check_contains(quantities.nuclear_norm(enc), *ref["1"], "nuclear_norm")
        f_lo, f_hi = ref["2"]
        fl = mpmath.sqrt(mp_of(f_lo)) if isinstance(f_lo, Fraction) else mpmath.sqrt(f_lo)
        fh = mpmath.sqrt(mp_of(f_hi)) if isinstance(f_hi, Fraction) else mpmath.sqrt(f_hi)
        check_contains(fro, fl, fh, "frobenius (norms_and_schatten)")
        check_contains(quantities.frobenius_norm(enc), fl, fh, "frobenius_norm")
        # p = 0: the certified rank interval
        r0 = quantities.schatten_quantity(enc, 0)
        check_contains(r0, Fraction(enc.rank.lower), Fraction(enc.rank.upper), "S_0")
        # stable rank at two spectra inside the balls: the upper ends made non-increasing and
        # the lower ends made non-increasing (kept only where they stay inside every ball)
        sr = quantities.stable_rank(enc)
        down = [min(his[: i + 1]) for i in range(len(his))]
        up = [max(los[i:]) for i in range(len(los))]
        for vec in (down, up):
            if all(a <= v <= b for a, v, b in zip(los, vec, his)) and vec and vec[0] > 0:
                v = sum((x * x for x in vec), Fraction(0)) / (vec[0] * vec[0])
                check_contains(sr, v, v, "stable_rank")


def _check_fabricated(seed: int, cases: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(cases):
        check_spectral_quantities(fabricated_enclosure(rng))


def test_spectral_quantities_on_fabricated_enclosures():
    _check_fabricated(501, 60)


def test_spectral_quantities_on_long_enclosures():
    # k = 250: a path that treats σ's in bulk (floats, vectors) must agree with the extremes
    rng = np.random.default_rng(502)
    for _ in range(2):
        check_spectral_quantities(fabricated_enclosure(rng, 250))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_spectral_quantities_on_fabricated_enclosures_sweep(seed):
    _check_fabricated(5000 + seed, 1500)


def test_spectral_quantities_on_arb_balls_not_hulls_of_floats():
    # Balls with 128-bit ends inside their outward float ends (as scaled_enclosure makes them):
    # every result must contain the quantity for every σ in the *balls*.
    rng = np.random.default_rng(503)
    for _ in range(40):
        base = fabricated_enclosure(rng)
        with ball_mod.working_precision():
            c = (arb(1) / int(rng.choice([3, 7, 32, 96]))).sqrt()
            sigma = tuple(s * c for s in base.sigma)
        enc = SingularValueEnclosure(
            shape=base.shape, sigma=sigma,
            lower=np.array([max(ball_mod.float_lower(s), 0.0) for s in sigma]),
            upper=np.array([ball_mod.float_upper(s) for s in sigma]),
            mode="fast", certified=True, alpha=arb(0), beta=arb(0), residual=arb(0), rank=base.rank)
        check_spectral_quantities(enc)


# ---------------------------------------------------- JSON ball forms


def _parse_exact(s: str) -> Fraction | None:
    if s in ("inf", "-inf"):
        return None
    if "*2^" in s:
        a, b = s.split("*2^")
        return Fraction(int(a)) * Fraction(2) ** int(b)
    return Fraction(int(s))


def _parse_decimal(s: str) -> Fraction | None:
    if s in ("inf", "-inf"):
        return None
    return Fraction(s)


def check_ball_form(q: dict, ball=None, truth=None, what="") -> tuple[Fraction | None, Fraction | None]:
    """A ``ball_to_json`` form is consistent and encloses ``ball`` (an arb) and ``truth`` (Fraction or mpf)."""
    assert set(q) >= {"lower", "upper", "exact"}, (what, q)
    elo, ehi = _parse_exact(q["exact"]["lower"]), _parse_exact(q["exact"]["upper"])
    dlo, dhi = _parse_decimal(q["lower"]), _parse_decimal(q["upper"])
    assert (q["exact"]["lower"] == "-inf") == (elo is None) and (q["exact"]["upper"] == "inf") == (ehi is None)
    if elo is not None and ehi is not None:
        assert elo <= ehi, (what, q)
    if elo is not None:
        assert dlo is not None and dlo <= elo, ("decimal lower above the exact lower end", what, q)
    if ehi is not None:
        assert dhi is not None and dhi >= ehi, ("decimal upper below the exact upper end", what, q)
    if q.get("mid") is not None:
        fm = Fraction(float(q["mid"]))
        assert (dlo is None or dlo <= fm) and (dhi is None or fm <= dhi), ("mid outside", what, q)
    if ball is not None:
        blo, bhi = lower_fraction(ball), upper_fraction(ball)
        assert (elo is None) or (blo is not None and elo <= blo), ("exact lower end inside the ball", what, q, str(ball))
        assert (ehi is None) or (bhi is not None and bhi <= ehi), ("exact upper end inside the ball", what, q, str(ball))
    if truth is not None:
        if isinstance(truth, Fraction):
            assert (elo is None or elo <= truth) and (ehi is None or truth <= ehi), (what, q, truth)
        else:
            assert contains_mp(elo, ehi, truth, REL), (what, q, mpmath.nstr(truth, 30))
    return elo, ehi


def _adversarial_ball(rng):
    with ball_mod.working_precision(int(rng.choice([53, 128, 300]))):
        kind = int(rng.integers(0, 7))
        if kind == 0:
            return arb(float(rng.standard_normal())) / int(rng.integers(1, 100))
        if kind == 1:
            return arb(float(rng.uniform(0, 1))).union(arb(float(rng.uniform(1, 2))))
        if kind == 2:
            return arb(mid=(int(rng.integers(-2**62, 2**62)), int(rng.integers(-3000, 3000))),
                       rad=(int(rng.integers(0, 2**30)), int(rng.integers(-3000, 3000))))
        if kind == 3:
            return arb(float(np.ldexp(1.0, int(rng.integers(-1074, 1023)))))
        if kind == 4:
            return arb(0).union(arb.pos_inf()) if rng.random() < 0.5 else arb(0)
        if kind == 5:
            return (arb(2) ** int(rng.integers(-20000, 20000))) * (arb(1) / 3)
        return arb(5e-324) * int(rng.integers(1, 10))


def test_ball_to_json_encloses_adversarial_balls():
    rng = np.random.default_rng(511)
    for _ in range(1500):
        x = _adversarial_ball(rng)
        check_ball_form(ball_mod.ball_to_json(x, int(rng.choice([1, 3, 17, 30]))), ball=x, what=str(x))


# ------------------------------------------------ whole records, known σ


def _capture_ball_forms(monkeypatch) -> list:
    """Wrap every ball_to_json the records use: each (ball, form) pair is checked for enclosure."""
    import certbound.pipeline._spectrum as spectrum

    seen = []
    orig = ball_mod.ball_to_json

    def wrapped(x, *args, **kw):
        q = orig(x, *args, **kw)
        seen.append((x, q))
        return q

    monkeypatch.setattr(spectrum, "ball_to_json", wrapped)
    return seen


def _exact_norm_21(W) -> mpmath.mpf:
    """‖W‖_{2,1} (sum of column norms) of a float array or a Fraction matrix (list of rows)."""
    rows = [[Fraction(float(x)) for x in row] for row in W] if isinstance(W, np.ndarray) else W
    total = mpmath.mpf(0)
    for col in zip(*rows):
        q = sum((x * x for x in col), Fraction(0))
        total += mpmath.sqrt(mp_of(q))
    return total


def _exact_product(A: np.ndarray, B: np.ndarray) -> list:
    Af, Bf = [[Fraction(float(x)) for x in r] for r in A], [[Fraction(float(x)) for x in r] for r in B]
    return [[sum((a * b for a, b in zip(ra, rb)), Fraction(0)) for rb in Bf] for ra in Af]


def check_record(rec: dict, spec, scale2: Fraction, W_exact: np.ndarray | None, ps, what="") -> None:
    """Every ball of the record contains the exact value (σᵢ = √scale2·√c2·|dᵢ|)."""
    c = mpmath.sqrt(mp_of(scale2 * spec.c2))
    sig = [c * mp_of(x) for x in spec.d]
    true_rank = sum(1 for x in spec.d if x)
    assert rec["rank"]["lower"] <= true_rank <= rec["rank"]["upper"], (what, rec["rank"], true_rank)
    check_ball_form(rec["spectral_norm"], truth=sig[0] if sig else mpmath.mpf(0), what=(what, "spectral"))
    check_ball_form(rec["frobenius_norm"], truth=mpmath.sqrt(mpmath.fsum(s * s for s in sig)), what=(what, "fro"))
    check_ball_form(rec["nuclear_norm"], truth=mpmath.fsum(sig), what=(what, "nuclear"))
    for p in ps:
        q = rec["schatten"][str(p)]
        pm = _p_mp(p)
        if pm == 0:
            continue
        check_ball_form(q, truth=mpmath.fsum(mpmath.power(s, pm) for s in sig if s > 0), what=(what, "S_p", p))
    if "sigma" in rec:
        assert len(rec["sigma"]) == len(sig)
        for i, (q, s) in enumerate(zip(rec["sigma"], sig)):
            check_ball_form(q, truth=s, what=(what, "sigma", i))
    if W_exact is not None and len(W_exact):
        check_ball_form(rec["norm_21"], truth=_exact_norm_21(W_exact) * mpmath.sqrt(mp_of(scale2)),
                        what=(what, "norm_21"))
    # the record's JSON text (template path for "sigma") parses back to the same record
    from certbound.pipeline._streaming import _record_json_text

    assert json.loads(_record_json_text(rec)) == json.loads(json.dumps(rec))


def _check_records(seed: int, cases: int, monkeypatch, modes=("auto", "gram", "fast")) -> None:
    from certbound.checkpoints import TheoryMatrix
    from certbound.pipeline._spectrum import certify_theory_matrices

    rng = np.random.default_rng(seed)
    seen = _capture_ball_forms(monkeypatch)
    ps = [0.5, 1, 2, "1/3", Fraction(3, 4), 0]
    with mpmath.workprec(PREC):
        for _ in range(cases):
            ms, refs = [], []
            for h in range(int(rng.integers(1, 4))):
                d = int(rng.choice([1, 1, 32, 64, 2, 3]))
                if rng.random() < 0.5:
                    m, n = int(rng.integers(1, 10)), int(rng.integers(1, 14))
                    got = known_matrix(rng, m, n)
                    if got is None:
                        continue
                    W, spec = got
                    ms.append(TheoryMatrix(0, None, "M_in", W.shape, dense=W, logit_scale_d=d))
                    refs.append((spec, Fraction(1, d), W))
                else:
                    m, n, dd = int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.integers(1, 5))
                    scales = (int(rng.choice([0, -300, 200, -540])), int(rng.choice([0, 0, -540, 100])))
                    got = known_product(rng, m, n, dd, scales)
                    if got is None:
                        continue
                    A, B, spec = got
                    ms.append(TheoryMatrix(0, h, "QK", (m, n), factors=(A, B), logit_scale_d=d))
                    refs.append((spec, Fraction(1, d), _exact_product(A, B)))
            if not ms:
                continue
            for mode in modes:
                seen.clear()
                recs = certify_theory_matrices(ms, mode, ps, include_sigma=bool(rng.random() < 0.8))
                for rec, (spec, s2, W) in zip(recs, refs):
                    check_record(rec, spec, s2, W, ps, (mode, rec["type"], rec["shape"]))
                for x, q in seen:
                    check_ball_form(q, ball=x, what="captured")


def test_records_contain_known_values(monkeypatch):
    _check_records(521, 25, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_records_contain_known_values_sweep(seed, monkeypatch):
    _check_records(5200 + seed, 200, monkeypatch, modes=("auto", "gram", "fast", "tight"))


# ----------------------- repeated point values: every rounding of the power chain in one direction


def _point_enclosure(v: float, n: int) -> SingularValueEnclosure:
    with ball_mod.working_precision():
        x = arb(v)
    return SingularValueEnclosure(shape=(n, n), sigma=(x,) * n, lower=np.full(n, v), upper=np.full(n, v),
                                  mode="fast", certified=True, alpha=arb(0), beta=arb(0), residual=arb(0),
                                  rank=RankBounds(n if v > 0 else 0, n if v > 0 else 0))


def _check_repeated(seed: int, cases: int) -> None:
    # n equal σᵢ = v: the power chain rounds every term the same way, so a missing outward step is not
    # averaged out by the sum. Decided exactly: for p = a/2^j, B ≥ n·v^p ⟺ (B/n)^(2^j) ≥ v^a.
    rng = np.random.default_rng(seed)
    dyadic = [Fraction(1, 2), Fraction(3, 4), Fraction(3, 2), Fraction(7, 4), Fraction(1, 4), Fraction(5, 8), 1, 2,
              Fraction(3, 8), Fraction(15, 16), Fraction(255, 128),
              # rational p = a/b (Lemma 8.3's verified candidates), decided the same way: (B/n)^b vs v^a
              Fraction(1, 3), Fraction(2, 3), Fraction(5, 7), Fraction(1023, 1024), Fraction(1, 10), Fraction(19, 10)]
    for _ in range(cases):
        v = float(np.ldexp(rng.uniform(1, 2), int(rng.choice([0, 0, -3, 5, -40, -520, -1000, 300]))))
        n = int(rng.choice([1, 2, 3, 5, 8, 64, 333]))
        enc = _point_enclosure(v, n)
        V = Fraction(v)
        for p in dyadic:
            q = Fraction(p)
            a, b = q.numerator, q.denominator
            x = quantities.schatten_quantity(enc, q if b & (b - 1) == 0 else f"{a}/{b}")
            lo, hi = lower_fraction(x), upper_fraction(x)
            target = V ** a
            assert lo is None or lo <= 0 or (lo / n) ** b <= target, ("S_p lower end above", v, n, p, str(x))
            assert hi is None or (hi / n) ** b >= target, ("S_p upper end below", v, n, p, str(x))
        fro = quantities.frobenius_norm(enc)
        lo, hi = lower_fraction(fro), upper_fraction(fro)
        assert lo is None or lo <= 0 or lo * lo <= n * V * V, ("‖·‖_F lower end above", v, n, str(fro))
        assert hi is None or hi * hi >= n * V * V, ("‖·‖_F upper end below", v, n, str(fro))


def test_spectral_quantities_on_repeated_point_values():
    _check_repeated(531, 150)


@pytest.mark.slow
def test_spectral_quantities_on_repeated_point_values_sweep():
    _check_repeated(532, 5000)


# ------------------------------------------------ float ends printed directly


def test_float_interval_to_json_exact():
    # The JSON form of [lo, hi] for float ends (Lemma 8.2's quantities): the exact ends are the floats
    # themselves, the decimals lie outside them, and mid is *the* float nearest to (lo + hi)/2.
    rng = np.random.default_rng(541)
    specials = [0.0, -0.0, 5e-324, -5e-324, 2.0**-1022, 2.0**-1021, 1.7976931348623157e308, -1.7976931348623157e308,
                1.0, 1 - 2.0**-53, 2.0**1020, 2.0**1023, -(2.0**-1022)]
    for _ in range(3000):
        if rng.random() < 0.3:
            a, b = (float(rng.choice(specials)) for _ in range(2))
        else:
            e = int(rng.integers(-1074, 1024))
            a = float(np.ldexp(rng.uniform(-2, 2), e))
            b = math.nextafter(a, math.inf) if rng.random() < 0.3 else float(np.ldexp(rng.uniform(-2, 2),
                                                                                          e + int(rng.integers(-3, 4))))
        if not (math.isfinite(a) and math.isfinite(b)):
            continue
        lo, hi = min(a, b), max(a, b)
        d = ball_mod.float_interval_to_json(lo, hi, int(rng.choice([1, 3, 17, 25])))
        elo, ehi = check_ball_form(d, what=(lo, hi))
        assert elo == Fraction(lo) and ehi == Fraction(hi), (lo, hi, d)
        m = (Fraction(lo) + Fraction(hi)) / 2
        fm = float(d["mid"])
        assert Fraction(lo) <= Fraction(fm) <= Fraction(hi), (lo, hi, d)
        for nb in (math.nextafter(fm, -math.inf), math.nextafter(fm, math.inf)):  # no float is nearer to the midpoint
            if math.isfinite(nb):
                assert abs(Fraction(fm) - m) <= abs(Fraction(float(nb)) - m), (lo, hi, fm)


def test_spectral_quantities_with_a_wrong_power_function(monkeypatch):
    # Lemma 8.3 assumes nothing about numpy.power's accuracy: its candidates are verified exactly. With
    # candidates off by a few ulps either way, far off, or garbage, every result must stay an enclosure.
    orig = quantities._power_candidate
    rng = np.random.default_rng(551)

    def spoiled(t, a, b):
        r = np.asarray(orig(t, a, b), dtype=np.float64)
        how = int(rng.integers(0, 6))
        with np.errstate(all="ignore"):
            if how == 0:
                return r * (1 + 3 * 2.0**-53)
            if how == 1:
                return r * (1 - 5 * 2.0**-53)
            if how == 2:
                return r * (1 + rng.choice([-1.0, 1.0], r.shape) * 2.0**-44)
            if how == 3:
                return np.where(rng.random(r.shape) < 0.5, 2 * r, 0.5 * r)
            if how == 4:
                return np.full_like(r, rng.choice([0.0, np.inf, np.nan]))
        return r

    monkeypatch.setattr(quantities, "_power_candidate", spoiled)
    _check_repeated(552, 60)
    _check_fabricated(553, 20)
