"""Issue 12 items 1, 2 and 5: rank bounds are certified, never trusted; covering's table is printed outward.

References: exact ranks by Fraction elimination, singular values by mpmath,
decimal table cells compared as exact rationals with the JSON's exact
endpoints.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from certbound.bounds import BoundOptions, TransformerSpec, certified_spectrum, theorem2_posthoc_bound
from certbound.cli import main
from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product
from tests.enclose.reference import mp_singular_values
from tests.enclose.test_input_guards import _fraction_rank

rng = np.random.default_rng(2026)
A16, B16 = rng.standard_normal((16, 4)), rng.standard_normal((16, 4))
FORMED = A16 @ B16.T  # formed in floating point: the stored matrix has full rank in general


def _mp_schatten(W, p):
    return mpmath.fsum(s**p for s in mp_singular_values(W) if s > 0)


# -- item 1 ------------------------------------------------------------------------------------------------


def test_formed_product_is_not_given_the_structural_rank():
    assert _fraction_rank(FORMED) == 16
    enc = enclose_singular_values(FORMED)
    with pytest.raises(ValueError, match="not certified"):
        certified_spectrum(enc, 4)  # before the fix: the top 4 upper ends, S_1/12 ≈ 4.95 < true 5.54
    exact = enclose_singular_values(FORMED, exact_rank=True)
    with pytest.raises(ValueError, match="exceeds|not certified"):
        certified_spectrum(exact, 4)


def test_product_enclosure_certifies_the_structural_rank():
    enc = enclose_singular_values_of_product(A16, B16)
    cs = certified_spectrum(enc, 4)
    assert cs.rank_upper == 4
    # the exact product has rank ≤ 4 and S_p over its 4 values is below the certified upper end
    with mpmath.workprec(320):
        A = mpmath.matrix(A16.tolist())
        B = mpmath.matrix(B16.tolist())
        s = mpmath.svd_r(A * B.T, compute_uv=False)
        truth = mpmath.fsum(abs(s[i]) ** (mpmath.mpf(1) / 12) for i in range(4))
    assert truth <= mpmath.mpf(cs.schatten_upper(Fraction(1, 12)).upper())


def test_dense_low_rank_matrix_with_its_exact_rank_is_accepted():
    W = np.outer([1.0, 2.0, -3.0, 0.5], [1.0, 0.25, 4.0, -1.0]) + np.outer([0.0, 1.0, 1.0, 2.0], [2.0, 0.0, 1.0, 1.0])
    assert _fraction_rank(W) == 2
    with pytest.raises(ValueError, match="not certified"):
        certified_spectrum(enclose_singular_values(W), 2)  # rank ≤ 2 is not visible to the float certificate
    cs = certified_spectrum(enclose_singular_values(W, exact_rank=True), 2)
    assert cs.rank_upper == 2 and len(cs.upper) == 2


def test_theorem2_refuses_dense_per_head_spectra_with_uncertified_rank():
    spec = TransformerSpec(n_layers=1, n_heads=1, d_model=16, seq_len=4, ffn_kind="single", d_head=4)
    dense = enclose_singular_values(FORMED)
    ffn = enclose_singular_values(np.eye(16) * 0.5)
    spectra = {(0, 0, "QK"): dense, (0, 0, "VO"): enclose_singular_values_of_product(A16, B16), (0, None, "M"): ffn}
    with pytest.raises(ValueError, match="not certified"):
        theorem2_posthoc_bound(spec, spectra, n_samples=10**6, delta=0.1)
    spectra[(0, 0, "QK")] = enclose_singular_values_of_product(A16, B16)
    theorem2_posthoc_bound(spec, spectra, n_samples=10**6, delta=0.1)  # certified ranks: a number


def test_trusting_the_structural_rank_is_no_longer_an_option():
    assert BoundOptions().trust_structural_rank is False
    with pytest.raises(ValueError, match="no longer accepted"):
        BoundOptions(trust_structural_rank=True)


# -- item 2 ------------------------------------------------------------------------------------------------


def _full_rank_with_tiny_values():
    X = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    W = np.zeros((6, 6))
    W[:3, :3] = X
    W[3:, 3:] = np.diag([1e-19, 3e-19, 7e-19])
    perm = [4, 0, 5, 2, 1, 3]
    return W[perm][:, perm[::-1]]


def test_covering_rank_below_the_true_rank_is_refused(tmp_path, capsys):
    W = _full_rank_with_tiny_values()
    assert _fraction_rank(W) == 6 and min(mp_singular_values(W)) < 1e-18
    assert enclose_singular_values(W).rank.lower <= 3  # the float certificate cannot see the tiny values
    path = tmp_path / "W.npy"
    np.save(path, W)
    code = main(["covering", str(path), "--eps", "0.01", "--rows", "100", "--rank", "3"])
    out = capsys.readouterr()
    assert code == 2 and "rank 6" in out.err and "certified" not in out.out


def test_covering_rank_below_the_enclosure_bound_but_true_is_accepted(tmp_path, capsys):
    W = np.outer([1.0, 2.0, 3.0, 1.0, 0.0, 2.0], [1.0, -1.0, 0.5, 2.0, 1.0, 3.0])
    W = W + np.outer([0.0, 1.0, 1.0, 2.0, 5.0, 1.0], [2.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    W = W + np.outer([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0, 0.0, 3.0])
    assert _fraction_rank(W) == 3
    path, js = tmp_path / "W.npy", tmp_path / "c.json"
    np.save(path, W)
    assert main(["covering", str(path), "--eps", "0.01", "--rows", "100", "--rank", "3", "--json", str(js)]) == 0
    d = json.loads(js.read_text())
    assert d["rank_bound"] == 3 and "exact rank 3" in d["rank_source"]
    assert main(["covering", str(path), "--eps", "0.01", "--rows", "100", "--rank", "2"]) == 2


# -- item 5 ------------------------------------------------------------------------------------------------


def _exact(s: str) -> Fraction:
    m, _, e = s.partition("*2^")
    return Fraction(int(m)) * Fraction(2) ** int(e or 0)


@pytest.mark.parametrize("scale", [1e12, 2.0**-40, 1e150])
def test_covering_table_cells_are_upper_bounds_of_the_json(tmp_path, capsys, scale):
    W = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0], [1.0, 0.0, 1.0]]) * scale
    path, js = tmp_path / "W.npy", tmp_path / "c.json"
    np.save(path, W)
    assert main(["covering", str(path), "--eps", "1e-3", "--rows", "1e20", "--p", "0,1/3,1,2",
                 "--json", str(js)]) == 0
    out = capsys.readouterr().out
    d = json.loads(js.read_text())
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(tau|rank|split|tail|counting|\S)", line)
        if m and m.group(1) in {r["p"] for r in d["results"]}:
            rows[m.group(1)] = (m.group(2), m.group(3))
    assert set(rows) == {r["p"] for r in d["results"]}
    for r in d["results"]:
        s_cell, n_cell = rows[r["p"]]
        for cell, q in ((s_cell, r["schatten_radius"]), (n_cell, r["log_covering_number"])):
            exact_upper = _exact(q["exact"]["upper"])
            printed = Fraction(cell)
            assert printed >= exact_upper, (cell, q)
            assert printed <= exact_upper * (1 + Fraction(1, 10**5)) + Fraction(1, 10**300), (cell, q)
    best = re.search(r"ln N <= (\S+)\s+\(parameter counting: (\S+)\)", out)
    assert Fraction(best.group(1)) >= _exact(d["best"]["log_covering_number"]["exact"]["upper"])
    assert Fraction(best.group(2)) >= _exact(d["parameter_counting"]["exact"]["upper"])
