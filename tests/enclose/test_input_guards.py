"""Issue 12 items 7, 11, 12: masked input refused, the mod-p modulus validated, exact ranks propagated."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import (
    RankBounds,
    enclose_singular_values,
    enclose_singular_values_of_product,
    exact_rank,
    norm_11,
    norm_21,
    rank_lower_bound_modp,
    schatten_quantity,
)
from certbound.enclose.gram import enclose_singular_values_gram

# -- item 7 ------------------------------------------------------------------------------------------------

MASKED = np.ma.masked_array([[1.0, 5.0], [2.0, 3.0]], mask=[[False, True], [False, False]])


@pytest.mark.parametrize(
    "call",
    [
        lambda W: enclose_singular_values(W),
        lambda W: enclose_singular_values(W, mode="arb"),
        lambda W: enclose_singular_values_gram(W),
        lambda W: enclose_singular_values_of_product(W, np.eye(2)),
        lambda W: enclose_singular_values_of_product(np.eye(2), W),
        norm_21,
        norm_11,
        exact_rank,
        rank_lower_bound_modp,
    ],
)
def test_masked_array_is_refused(call):
    with pytest.raises(ValueError, match="MaskedArray"):
        call(MASKED)
    # an explicit fill is a plain array and is certified
    call(MASKED.filled(0.0))


# -- item 11 -----------------------------------------------------------------------------------------------


BAD_MODULI = [4, 6, 9, 15, 1, 0, -7, 2**64 + 13, 2**70, 1.5, True, "7"]


def test_bad_modulus_is_a_clear_value_error_in_process():
    # In a subprocess: before the fix, 4 and 6 abort the interpreter (FLINT abort, uncatchable).
    script = textwrap.dedent(f"""
        import numpy as np
        from certbound.enclose import rank_lower_bound_modp
        for p in {BAD_MODULI!r}:
            try:
                print("RETURNED", rank_lower_bound_modp(np.eye(3), prime=p), flush=True)
            except ValueError as exc:
                print("VALUE_ERROR", exc, flush=True)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    lines = res.stdout.splitlines()
    assert res.returncode == 0, f"process died ({res.returncode}) after {lines}: {res.stderr[-500:]}"
    assert len(lines) == len(BAD_MODULI)
    for p, line in zip(BAD_MODULI, lines):
        assert line.startswith("VALUE_ERROR") and "prime" in line, (p, line)


@pytest.mark.parametrize("p", [2, 3, 7, 2**61 - 1, 2**64 - 59])
def test_prime_moduli_still_work(p):
    # M = [[1, 2], [3, 4]]: det −2, so rank 2 mod every odd prime and 1 mod 2 (independent: integer minors).
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert rank_lower_bound_modp(W, prime=p) == (1 if p == 2 else 2)


# -- item 12 -----------------------------------------------------------------------------------------------


def _fraction_rank(W) -> int:
    """Rank over ℚ by Gaussian elimination in Fractions (independent reference)."""
    M = [[Fraction(float(x)) for x in row] for row in W]
    rank, cols = 0, len(M[0]) if M else 0
    for c in range(cols):
        piv = next((r for r in range(rank, len(M)) if M[r][c] != 0), None)
        if piv is None:
            continue
        M[rank], M[piv] = M[piv], M[rank]
        for r in range(len(M)):
            if r != rank and M[r][c] != 0:
                f = M[r][c] / M[rank][c]
                M[r] = [a - f * b for a, b in zip(M[r], M[rank])]
        rank += 1
    return rank


CASES = [
    np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-52]]),  # σ_min ≈ 1.1e-16: below fast mode's resolution
    np.array([[1.0, 1.0, 1.0], [1.0, 1.0 + 2.0**-52, 1.0], [2.0, 2.0, 2.0]]),  # rank 2, σ₂ tiny, σ₃ = 0
    np.outer([1.0, 3.0, 2.0**-30], [1.0, 2.0 + 2.0**-50, 5.0]) + np.diag([0.0, 0.0, 2.0**-60]),
]


@pytest.mark.parametrize("W", CASES)
@pytest.mark.parametrize("mode", ["fast", "tight", "arb", "gram"])
def test_exact_rank_is_both_rank_bounds(W, mode):
    r = _fraction_rank(W)
    enc = enclose_singular_values(W, mode=mode, exact_rank=True)
    assert enc.rank == RankBounds(r, r)
    s0 = schatten_quantity(enc, 0)
    assert s0.is_exact() and s0 == r
    assert all(float(u) == 0.0 for u in enc.upper[r:])


def test_the_issue_case_had_a_gap_without_exact_rank():
    # Sanity: the certificate alone cannot see σ₂ > 0 here, so propagation is what makes rank exact.
    W = CASES[0]
    assert enclose_singular_values(W).rank.lower < _fraction_rank(W) == 2


# -- the float64 fast path of as_exact_float64_matrix (session 6) -------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "both"])
@pytest.mark.parametrize("layout", ["c", "f", "view"])
def test_float64_fast_path_refuses_every_non_finite_entry(bad, layout):
    """Every NaN/±∞ entry is refused, with the count and first position of the general path's message."""
    from certbound.enclose._input import as_exact_float64_matrix

    rng = np.random.default_rng(3)
    for _ in range(20):
        W = rng.standard_normal((int(rng.integers(1, 9)), int(rng.integers(1, 9))))
        i, j = int(rng.integers(W.shape[0])), int(rng.integers(W.shape[1]))
        if bad == "both":  # +∞ and −∞ (their sum is NaN)
            W[i, j] = np.inf
            W[(i + 1) % W.shape[0], j] = -np.inf
        else:
            W[i, j] = bad
        X = np.asfortranarray(W) if layout == "f" else (np.repeat(W, 2, axis=1)[:, ::2] if layout == "view" else W)
        ref = [(a, b) for a in range(W.shape[0]) for b in range(W.shape[1]) if not np.isfinite(W[a, b])]
        with pytest.raises(ValueError, match=rf"^A: matrix has {len(ref)} NaN/Inf entries \(first at \({ref[0][0]}, {ref[0][1]}\)\)"):
            as_exact_float64_matrix(X, "A")


def test_float64_fast_path_keeps_finite_entries_whose_sum_overflows():
    """A finite matrix whose float sum overflows is accepted unchanged (the sum test only decides the finite case)."""
    from certbound.enclose._input import _all_finite, as_exact_float64_matrix

    W = np.full((3, 4), 1.7e308)
    with np.errstate(over="ignore"):
        assert not np.isfinite(W.sum())
    assert _all_finite(W)
    assert as_exact_float64_matrix(W) is W
    W[1, 2] = -1.7e308  # mixed signs, still finite
    assert as_exact_float64_matrix(W) is W
    F = np.asfortranarray(W)
    out = as_exact_float64_matrix(F)
    assert out.flags.c_contiguous and np.array_equal(out, W)
    assert as_exact_float64_matrix(np.zeros((0, 3))).shape == (0, 3)


# -- any_tiny_nonzero (power_of_two_scaling's exactness test) --------------------------------------------------

@pytest.mark.parametrize("plant", ["none", "tiny", "negative-tiny", "zeros", "zeros-and-tiny", "nan", "at-threshold"])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_any_tiny_nonzero_is_the_entrywise_definition_across_blocks(plant, layout, monkeypatch):
    """Whether some entry has 0 < |w| < t, against the definition entry by entry (Python floats), with blocks
    smaller than the matrix (the decision per block must not miss a block or read past one)."""
    from certbound.enclose import _input

    monkeypatch.setattr(_input, "BLOCK_ENTRIES", 37)
    rng = np.random.default_rng(len(plant) + len(layout))
    t = 2.0**-1010
    W = rng.standard_normal((23, 19)) * 2.0**-990
    where = (22, 18) if plant == "negative-tiny" else (17, 5)  # (22, 18): the last, partial block
    if "zeros" in plant:
        W[rng.random(W.shape) < 0.3] = 0.0
    if "tiny" in plant:
        W[where] = (-1 if plant.startswith("negative") else 1) * 2.0**-1050
    if plant == "nan":
        W[where] = np.nan
    if plant == "at-threshold":
        W[where] = -t  # |w| = t is not below it
    V = {"C": W, "F": np.asfortranarray(W), "strided": np.repeat(W, 2, axis=1)[:, ::2]}[layout]
    expected = any(0 < abs(float(x)) < t for x in W.ravel().tolist())
    assert _input.any_tiny_nonzero(V, t) is expected
    assert expected == (plant in ("tiny", "negative-tiny", "zeros-and-tiny"))
