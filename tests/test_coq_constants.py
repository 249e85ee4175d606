"""The code's constants sit on the side of the machine-checked theorems (proofs/coq/).

Each test names the Coq theorem whose statement (or hypothesis) it checks the
code against. References are exact rationals (``fractions.Fraction``) or the
decimal bounds proved in Coq, never the code's own output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from flint import arb

from certbound.ball import float_lower, float_upper, lower_fraction, upper_fraction, working_precision
from certbound.bounds import _grids
from certbound.bounds._spec import activation_constants, gelu_lipschitz
from certbound.bounds.proxies import gelu_lipschitz_constant
from certbound.enclose import fperror, tight

U = Fraction(1, 2**53)
ETA = Fraction(1, 2**1074)
DBL_MAX = Fraction((2**53 - 1) * 2**971)


def test_model_constants_are_the_coq_model() -> None:
    # FPModel.u = 2^-53, FPModel.eta = 2^-1074.
    assert Fraction(fperror.UNIT_ROUNDOFF) == U
    assert Fraction(fperror.ETA) == ETA


@pytest.mark.parametrize("k", [1, 2, 3, 768, 3072, 10**6, 2**40])
def test_gamma_ball_contains_coq_gamma(k: int) -> None:
    # Summation.gamma k = k u / (1 - k u): every bound uses the ball's upper end.
    exact = k * U / (1 - k * U)
    g = fperror.gamma(k)
    assert lower_fraction(g) <= exact <= upper_fraction(g)


def test_gamma_refuses_k_beyond_the_proved_range() -> None:
    # FastCertificate.inflate_upper needs k <= 2^40; fperror must refuse larger k.
    assert fperror._MAX_K <= 2**40
    with pytest.raises(ValueError):
        fperror.gamma(fperror._MAX_K + 1)


@pytest.mark.parametrize("k", [1, 5, 768, 2**20, 2**40])
def test_inflate_constants_are_exact_floats(k: int) -> None:
    # FastCertificate.inflate_c_format / inflate_f_format: the float computations of c and f in
    # _inflate are exact, so inflate_upper applies to exactly these values.
    f = 1.0 + 2.0 * (k + 2) * fperror._U
    c = 2.0 * (k + 2) * fperror.ETA
    assert Fraction(f) == 1 + 2 * (k + 2) * U
    assert Fraction(c) == 2 * (k + 2) * ETA
    # and _inflate(v, k) is fl(fl(v + c) * f): check on a value against the exact bound of
    # inflate_upper's conclusion for the largest S allowed by its hypothesis.
    v = 0.7
    s_max = (Fraction(v) + k * ETA) / (1 - k * U / (1 - k * U))
    assert Fraction(float(fperror._inflate(v, k))) >= s_max


def test_gelu_constant_on_the_proved_side() -> None:
    # Scalars.gelu_constant_enclosure: 1.1289041451 <= L <= 1.1289041452, and
    # Scalars.gelu_closed_form: L = (1 + erf 1)/2 + e^-1/sqrt(pi), the expression the code evaluates.
    lo, hi = Fraction("1.1289041451"), Fraction("1.1289041452")
    for ball in (gelu_lipschitz(), gelu_lipschitz_constant(), activation_constants("gelu")[0]):
        assert upper_fraction(ball) >= lo  # the reported upper end is >= the true constant's proved lower bound
        assert lower_fraction(ball) <= hi  # and the ball is consistent with the proved enclosure
        assert upper_fraction(ball) - lower_fraction(ball) < Fraction(1, 10**20)


@pytest.mark.parametrize("name", ["gelu_tanh", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"])
def test_tanh_gelu_constant_is_the_proved_bound(name: str) -> None:
    # Scalars.tanh_gelu_core proves |psi_t'| < 1.128994 on [-6, 6]; the code must use at least that.
    L = activation_constants(name)[0]
    assert upper_fraction(L) >= Fraction("1.128994")  # the upper end is what the bound uses


@pytest.mark.parametrize("K", [0, 1, 2, 7, 50])
def test_two_sided_prior_mass_is_the_closed_form(K: int) -> None:
    # Priors.prior_mass_closed_form: sum_{|k|<=K} pi(k) = 1 - 4/(3(K+2)) <= 1.
    assert _grids.two_sided_prior_mass(K) == 1 - Fraction(4, 3 * (K + 2))
    for k in range(-K, K + 1):
        assert _grids.two_sided_prior(k) == Fraction(2, 3 * (abs(k) + 1) * (abs(k) + 2))


@pytest.mark.parametrize("m", [1, 2, 5, 9])
def test_light_index_prior_sums_to_one(m: int) -> None:
    # Priors.light_index_prior_mass: 1/2 + 2m/(4m) = 1.
    assert sum(_grids.light_index_prior(p, m) for p in _grids.p_grid(m)) == 1


@pytest.mark.parametrize("r", [1, 2, 64])
def test_light_rank_prior_sums_to_one(r: int) -> None:
    # Priors.light_rank_prior_mass: 1/2 + r/(2r) = 1.
    assert sum(_grids.light_rank_prior(s, r) for s in range(r + 1)) == 1


@pytest.mark.parametrize("nu", [1, 3, 16])
@pytest.mark.parametrize("j", [-4, -1, 0, 1, 5])
def test_light_spectral_octave_carries_pi_j(nu: int, j: int) -> None:
    # Priors.octave_of_fine_level + light_spectral_octave_mass: the nu fine levels
    # q = (j-1)nu + i (1 <= i <= nu) and the coarse level j together carry pi(j).
    fine = sum(_grids.light_spectral_prior((j - 1) * nu + i, nu) for i in range(1, nu + 1))
    coarse = _grids.light_spectral_prior(j, nu, coarse=True)
    assert fine + coarse == Fraction(2, 3 * (abs(j) + 1) * (abs(j) + 2))


def test_tight_constants_meet_the_coq_hypotheses() -> None:
    # Tight.extract_*: 1 <= b <= 26 and mu - b >= -537; Tight.parts_product_exact: k 2^(2b) <= 2^53;
    # Tight.two_product_exact: |a|, |b| >= 2^-450 gives |ab| >= 2^-900 >= 2^-969; Veltkamp factor 2^27 + 1.
    assert tight._MIN_UNIT_EXP >= -537
    assert 2 * tight._TP_MIN_EXP >= -969
    assert tight._VELTKAMP == 2.0**27 + 1
    for k in [1, 2, 3, 768, 3072, 10**6, 2**51]:
        b = tight.bits_per_part(k)
        assert 1 <= b <= 26 and k * 4**b <= 2**53


def _largest_float_le(q: Fraction) -> float:
    """Independent reference for Outward.float_down_greatest: scan the floats next to float(q)."""
    if q > DBL_MAX:
        return float(DBL_MAX)
    if q < -DBL_MAX:
        return -math.inf
    f = float(q)
    while Fraction(f) > q:
        f = math.nextafter(f, -math.inf)
    while math.isfinite(math.nextafter(f, math.inf)) and Fraction(math.nextafter(f, math.inf)) <= q:
        f = math.nextafter(f, math.inf)
    return f


@pytest.mark.parametrize(
    "q",
    [
        Fraction(2**-1022) - Fraction(1, 2**1075),  # 53-bit, rounds up to 2^-1022 (the old bug)
        Fraction(2**-1022) + Fraction(1, 2**1075),
        -Fraction(2**-1022) + Fraction(1, 2**1075),
        Fraction(1, 2**1076),  # below the smallest subnormal
        -Fraction(1, 2**1076),
        Fraction(3, 2**1075),  # between two subnormals
        DBL_MAX + 1,  # beyond the float range (the other old bug)
        DBL_MAX + Fraction(2**969),  # float(q) overflows
        -(DBL_MAX + Fraction(2**969)),
        Fraction(2**60 + 1, 2**60),  # needs more than 53 bits
    ],
)
def test_outward_endpoints_match_the_proved_spec(q: Fraction) -> None:
    # Outward.float_down_greatest / float_up_least: the largest float (or -inf) <= q and the
    # least float (or +inf) >= q, through the public float_lower/float_upper on an exact ball.
    k = q.denominator.bit_length() - 1
    assert q.denominator == 1 << k
    with working_precision(4096):
        x = arb(q.numerator) * arb(2) ** (-k)
    assert x.is_exact()
    lo, hi = float_lower(x), float_upper(x)
    assert lo == _largest_float_le(q)
    assert hi == -_largest_float_le(-q)


@pytest.mark.parametrize(
    "entries",
    [
        [2.0**1000, 2.0**-1022 * 3],  # k < 0: the small entry becomes subnormal (inexact possible)
        [2.0**1000, 2.0**-20],  # k < 0, everything stays normal: exact
        [2.0**-1060, 2.0**-1074],  # subnormal matrix, k > 0 (ldexp path): exact
        [1.5, -0.75],  # k = 0
        [3.0 * 2.0**600, 2.0**-500 + 2.0**-552],
    ],
)
def test_power_of_two_scaling_exact_flag(entries: list[float]) -> None:
    # Scaling.scale_exact_flag / scale_error: exact when no nonzero |w| < 2^(-1022-k); otherwise
    # every entry is off by at most eta/2.
    import numpy as np

    from certbound.enclose._input import power_of_two_scaling

    W = np.array([entries], dtype=np.float64)
    Ws, k, exact = power_of_two_scaling(W)
    scale = Fraction(2) ** k
    errors = [abs(Fraction(float(s)) - Fraction(float(w)) * scale) for s, w in zip(Ws.ravel(), W.ravel())]
    assert all(e <= ETA / 2 for e in errors)
    if exact:
        assert all(e == 0 for e in errors)
    assert 1 <= float(np.abs(Ws).max()) < 2
