"""Issue 12 items 4 and 10: the floating-point environment is checked, numpy's error state is local.

The environments are set for real (``tests/fpenv.py``: libm's ``fesetround``
and the MXCSR through ``fesetenv``); the first test shows, independently of
certbound, that numpy's arithmetic does change under each of them — so a
refusal in the later tests is a refusal of an environment that really is
outside the model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import mpmath
import numpy as np
import pytest

from certbound.ball import FloatEnvironmentError, check_float_environment
from certbound.bounds import TransformerSpec, theorem2_posthoc_bound
from certbound.enclose import (
    enclose_singular_values,
    enclose_singular_values_of_product,
    exact_rank,
    norm_11,
    norm_11_of_product,
    norm_21,
    norm_21_of_product,
    rank_lower_bound_modp,
)
from certbound.enclose.gram import enclose_singular_values_gram
from certbound.enclose.quantities import norms_and_schatten_intervals
from tests import fpenv
from tests.enclose.reference import mp_singular_values

needs_fpenv = pytest.mark.skipif(not fpenv.AVAILABLE, reason=fpenv.REASON)

TINY = 2.0**-1074
#: All-subnormal matrix 2⁻¹⁰⁷⁴·M: the issue's "σ = [0, 0] exactly" input under FTZ/DAZ.
SUBNORMAL = np.array([[3.0, 1.0], [1.0, 2.0]]) * TINY
#: An enclosure made in the default environment (the Schatten sums are then evaluated under the test's).
DIAG_34 = enclose_singular_values(np.diag([3.0, 4.0]))


def _observed_effect(name: str) -> bool:
    """Independent evidence that numpy's arithmetic is outside round-to-nearest/gradual underflow."""
    one, small, tiny = np.array([1.0]), np.array([2.0**-54]), np.array([TINY])
    up = (one + small)[0] != 1.0
    down = (-one - small)[0] != -1.0
    zero = (one + 3 * small)[0] == 1.0  # nearest gives 1 + 2⁻⁵²
    ftz = (np.array([2.0**-1022]) * 0.5).view(np.uint64)[0] == 0
    daz = (tiny * 2.0**52).view(np.uint64)[0] == 0
    return {"upward": up, "downward": down, "toward_zero": zero and not down,
            "ftz": ftz, "daz": daz, "ftz+daz": ftz and daz}[name]


@needs_fpenv
@pytest.mark.parametrize("name", fpenv.ENVIRONMENTS)
def test_helper_really_changes_numpy_arithmetic(name):
    assert not _observed_effect(name)
    with fpenv.environment(name):
        changed = _observed_effect(name)
    assert changed, f"{name}: numpy arithmetic did not change; the environment tests would be vacuous"
    assert not _observed_effect(name)  # restored


def _kernel_calls():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((6, 2)) * 1e175, rng.standard_normal((5, 2)) * 1e175  # σ₁ ≈ 1e350
    W = rng.standard_normal((4, 3))
    return {
        "svd_fast_subnormal": lambda: enclose_singular_values(SUBNORMAL),
        "svd_arb_subnormal": lambda: enclose_singular_values(SUBNORMAL, mode="arb"),
        "svd_tight": lambda: enclose_singular_values(W, mode="tight"),
        "svd_gram": lambda: enclose_singular_values(W, mode="gram"),
        "gram": lambda: enclose_singular_values_gram(W),
        "product_huge": lambda: enclose_singular_values_of_product(A, B),
        "norm_21": lambda: norm_21(W * 1e300),
        "norm_11": lambda: norm_11(W),
        "norm_21_of_product": lambda: norm_21_of_product(A, B),
        "norm_11_of_product": lambda: norm_11_of_product(A, B),
        "exact_rank": lambda: exact_rank(SUBNORMAL),
        "norms_and_schatten_intervals": lambda: norms_and_schatten_intervals(DIAG_34, ["0.5", 2]),
        "rank_modp": lambda: rank_lower_bound_modp(SUBNORMAL),
    }


@needs_fpenv
@pytest.mark.parametrize("name", fpenv.ENVIRONMENTS)
@pytest.mark.parametrize("call", sorted(_kernel_calls()))
def test_every_kernel_entry_refuses_a_non_default_environment(name, call):
    f = _kernel_calls()[call]
    with fpenv.environment(name):
        with pytest.raises(FloatEnvironmentError, match="floating-point environment"):
            f()
    f()  # and works again once the environment is restored


@needs_fpenv
@pytest.mark.parametrize("name", fpenv.ENVIRONMENTS)
def test_check_names_the_problem(name):
    words = {"upward": "upward", "downward": "downward", "toward_zero": "toward zero", "ftz": "FTZ",
             "daz": "DAZ", "ftz+daz": "FTZ"}[name]
    with fpenv.environment(name):
        with pytest.raises(FloatEnvironmentError) as info:
            check_float_environment()
    assert words in str(info.value)
    check_float_environment()


@needs_fpenv
@pytest.mark.parametrize("name", ["ftz+daz", "downward"])
def test_bound_evaluation_refuses_too(name):
    spec = TransformerSpec(n_layers=1, n_heads=1, d_model=2, seq_len=2, ffn_kind="single")
    spectra = {(0, 0, "QK"): [1.0, 0.5], (0, 0, "VO"): [1.0], (0, None, "M"): [0.5, 0.25]}
    theorem2_posthoc_bound(spec, spectra, n_samples=100, delta=0.1)  # valid input: a number here
    with fpenv.environment(name):
        with pytest.raises(FloatEnvironmentError):
            theorem2_posthoc_bound(spec, spectra, n_samples=100, delta=0.1)


@needs_fpenv
@pytest.mark.parametrize("name", ["ftz", "toward_zero"])
def test_lemma_a_refuses_too(name):
    from fractions import Fraction

    from certbound.bounds import LinearMapClass, log_cover_linear_map

    cls = LinearMapClass(4, 4, 2, Fraction(1), 3, 2, 100)
    assert log_cover_linear_map(cls, Fraction(1, 10)).is_finite()
    with fpenv.environment(name):
        with pytest.raises(FloatEnvironmentError):
            log_cover_linear_map(cls, Fraction(1, 10))


@needs_fpenv
def test_cli_refuses_with_a_clear_message(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, SUBNORMAL)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {root!r})
        from tests import fpenv
        from certbound.cli import main
        with fpenv.environment("ftz+daz"):
            code = main(["covering", {str(path)!r}, "--eps", "0.1", "--rows", "4"])
        sys.exit(code)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "floating-point environment" in res.stderr and "DAZ" in res.stderr
    assert "Traceback" not in res.stderr and "contains the stored W" not in res.stdout


@needs_fpenv
@pytest.mark.parametrize("argv", [["audit", "--functions"], ["bound", "MODEL", "--n", "10", "--delta", "0.1"],
                                  ["proxies", "MODEL"]])
def test_every_cli_command_refuses_up_front(argv, capsys):
    from certbound.cli import main

    with fpenv.environment("downward"):
        code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "floating-point environment" in err and "downward" in err


# -- item 10: the caller's numpy error state cannot break certbound's own arithmetic ----------------------


def _contains_mp(enc, ref):
    return all(mpmath.mpf(lo) <= t <= mpmath.mpf(hi) for lo, hi, t in zip(enc.lower, enc.upper, ref))


@pytest.mark.parametrize("mode", ["fast", "tight", "arb", "gram"])
def test_seterr_raise_does_not_break_the_kernel(mode):
    ref = mp_singular_values(SUBNORMAL)
    assert ref[1] > 0
    with np.errstate(all="raise"):
        enc = enclose_singular_values(SUBNORMAL, mode=mode)
        n21 = norm_21(SUBNORMAL)
        huge = norm_21(np.array([[1e300, 1e300], [1e300, -1e300]]))
        with pytest.raises(FloatingPointError):  # the caller's setting is still in force outside
            np.array([1e308]) * 10
    assert _contains_mp(enc, ref)
    col = sum(mpmath.sqrt(sum(mpmath.mpf(float(x)) ** 2 for x in SUBNORMAL[:, j])) for j in range(2))
    assert n21.lower() >= 0 and n21.lower() <= col <= n21.upper() and n21.upper() < 1e-300
    truth = 2 * mpmath.sqrt(2 * mpmath.mpf(1e300) ** 2)
    assert huge.is_finite() and mpmath.mpf(huge.lower()) <= truth <= mpmath.mpf(huge.upper())
