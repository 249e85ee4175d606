"""The factors the spectrum pipeline hands to the product kernel (pipeline._spectrum._kernel_factor).

A C-contiguous float64 factor is passed as it is (the kernel rejects NaN/Inf itself); any other factor is converted
once with all of as_exact_float64_matrix's checks. Either way a non-finite entry is an error naming the factor, in
every mode, and the records are those of exactly converted factors.
"""

from __future__ import annotations

import numpy as np
import pytest

from certbound.checkpoints import TheoryMatrix
from certbound.enclose import MODES
from certbound.pipeline._spectrum import _kernel_factor, certify_theory_matrices, enclose_theory_matrices


def _heads(factors):
    return [TheoryMatrix(0, h, "QK", (a.shape[0], b.shape[0]), factors=(a, b)) for h, (a, b) in enumerate(factors)]


def test_c_contiguous_float64_is_passed_as_it_is():
    a = np.arange(12.0).reshape(4, 3)
    assert _kernel_factor(a, "A") is a


@pytest.mark.parametrize("make", [lambda a: a.astype(np.float32), lambda a: np.asfortranarray(a),
                                  lambda a: np.repeat(a, 2, axis=1)[:, ::2], lambda a: a.tolist()])
def test_other_factors_are_converted_exactly(make):
    a = np.arange(12.0).reshape(4, 3) / 8
    got = _kernel_factor(make(a), "A")
    assert got.dtype == np.float64 and got.flags.c_contiguous and np.array_equal(got, a)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_factor_is_an_error_in_every_mode(mode, which, bad):
    rng = np.random.default_rng(0)
    fs = [(rng.standard_normal((6, 2)), rng.standard_normal((5, 2))) for _ in range(3)]
    fs[1][which][3, 1] = bad
    with pytest.raises(ValueError, match=f"{'AB'[which]}: matrix has 1 NaN/Inf entries"):
        certify_theory_matrices(_heads(fs), mode, ["1"], include_sigma=False)
    with pytest.raises(ValueError, match=f"{'AB'[which]}: matrix has 1 NaN/Inf entries"):
        list(enclose_theory_matrices(_heads(fs), mode))


def test_records_do_not_depend_on_the_factors_layout():
    rng = np.random.default_rng(1)
    fs = [(rng.standard_normal((7, 3)), rng.standard_normal((6, 3))) for _ in range(2)]
    c = certify_theory_matrices(_heads(fs), "auto", ["0.5", "1"])
    f32 = [(a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)) for a, b in fs]
    c32 = certify_theory_matrices(_heads(f32), "auto", ["0.5", "1"])
    c32_raw = certify_theory_matrices(_heads([(a.astype(np.float32), np.asfortranarray(b.astype(np.float32)))
                                              for a, b in fs]), "auto", ["0.5", "1"])
    assert c32 == c32_raw
    assert len(c) == 2 and all(r["certified"] for r in c)
