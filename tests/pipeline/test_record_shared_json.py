"""A record's equal quantities share one JSON formation, and the record is the one formed field by field.

‖·‖_* is S₁ (the same float ends) and ``spectral_norm`` is σ₁ (the same ball as ``sigma[0]``): since session 7
``_record_of`` forms those JSON dicts once and copies them. Compared here against records formed without the
sharing (``_same_interval`` forced False, the σ list left out so σ₁ is formed on its own) and against
``ball_to_json`` / ``float_interval_to_json`` called directly; every field keeps its own dict.
"""

from __future__ import annotations

import numpy as np
import pytest

import certbound.pipeline._spectrum as spectrum_mod
from certbound.ball import ball_to_json, float_interval_to_json
from certbound.checkpoints import TheoryMatrix
from certbound.enclose import enclose_singular_values
from certbound.enclose.quantities import norms_and_schatten_intervals


def _matrices():
    rng = np.random.default_rng(7)
    out = [TheoryMatrix(0, None, "M_in", (9, 6), dense=rng.standard_normal((9, 6))),
           TheoryMatrix(0, None, "M_out", (3, 3), dense=np.diag([2.0, 0.0, 0.0]))]
    out += [TheoryMatrix(1, h, "QK", (8, 7), factors=(rng.standard_normal((8, 2)), rng.standard_normal((7, 2))),
                         logit_scale_d=2 if h == 2 else 1) for h in range(3)]
    return out


@pytest.mark.parametrize("ps", [("0.5", "1", "2"), ("1",), ("1/3", "2"), ("1", "1.0", "0.25")])
def test_shared_json_is_the_json_formed_field_by_field(monkeypatch, ps):
    full = spectrum_mod.certify_theory_matrices(_matrices(), "auto", ps, include_sigma=True)
    monkeypatch.setattr(spectrum_mod, "_same_interval", lambda v, w: False)
    alone = spectrum_mod.certify_theory_matrices(_matrices(), "auto", ps, include_sigma=False)
    for f, a in zip(full, alone):
        assert {k: v for k, v in f.items() if k != "sigma"} == a
        assert f["spectral_norm"] == f["sigma"][0] and f["spectral_norm"] is not f["sigma"][0]
        assert f["spectral_norm"]["exact"] is not f["sigma"][0]["exact"]
        if "1" in ps:
            assert f["schatten"]["1"] == f["nuclear_norm"] and f["schatten"]["1"] is not f["nuclear_norm"]
            assert f["schatten"]["1"]["exact"] is not f["nuclear_norm"]["exact"]


def test_the_shared_fields_are_the_direct_json_forms():
    W = np.random.default_rng(3).standard_normal((6, 5))
    m = TheoryMatrix(0, None, "M_in", W.shape, dense=W)
    rec = spectrum_mod.certify_theory_matrix(m, "auto", ("1", "2"))
    enc = enclose_singular_values(W, mode="auto")
    _, nuclear, (s1, _) = norms_and_schatten_intervals(enc, ("1", "2"))
    assert rec["mode"] == enc.mode
    assert rec["spectral_norm"] == ball_to_json(enc.sigma[0]) == rec["sigma"][0]
    assert rec["nuclear_norm"] == float_interval_to_json(*nuclear) == rec["schatten"]["1"] == float_interval_to_json(*s1)
    rec["nuclear_norm"]["exact"]["lower"] = "edited"  # a caller editing one field leaves the other alone
    assert rec["schatten"]["1"]["exact"]["lower"] != "edited"
