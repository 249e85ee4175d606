"""Referee tests of the float Sturm counts' *evaluation* (Lemma S, normalised guard) against exact replays.

:func:`certbound.enclose.tridiagonal.sturm_counts` may evaluate the recurrence in any way that
produces the floats of Lemma S in its order (blocks of pivot rows, Python scalars for few
shifts, …). The reference here, :func:`tests.enclose.exact_rounding.normalised_sturm_reference`,
replays the recurrence with every operation rounded exactly (integer arithmetic, ties to even),
so on the normalised path (|dᵢ|, |eᵢ| < 2, eᵢ = 0 or |eᵢ| ≥ 2⁻³⁰⁰, |μ| ≤ 8) both the validity flag
(every |qᵢ| ≥ 2⁻⁴⁰⁰) and every valid count must agree *exactly*; the counts must moreover lie
in Lemma S's exact Weyl window. The inputs plant zero, tiny (just below / at 2⁻⁴⁰⁰) and NaN-making
pivots at the rows where an evaluation could split its work (63, 64, 65, 127, 128, 129, the last
row), and use 1 … 13 and many shifts (both sides of any few-shift special case).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from certbound.enclose import tridiagonal as tri
from tests.enclose.exact_rounding import normalised_sturm_reference
from tests.enclose.exact_tridiagonal import eigenvalue_in_descending, weyl_count_window

TAU = 2.0**-400
EDGE_ROWS = [0, 1, 62, 63, 64, 65, 126, 127, 128, 129, 191, 192]
SIZES = [1, 2, 3, 63, 64, 65, 128, 129, 130, 193]
_S = int(getattr(tri, "SCALAR_SHIFTS", 12))  # both sides of the few-shift special case, wherever it is set
SHIFT_COUNTS = sorted({1, 2, 5, 11, 12, 13, 14, 40, max(1, _S - 1), _S, _S + 1})


def _normalised_case(rng, k: int):
    """d, e of a normalised T (|d|, |e| < 2; e = 0 or |e| ≥ 2⁻³⁰⁰), with a planted pivot event and its shift."""
    kind = int(rng.integers(0, 6))
    d = rng.uniform(-1.9, 1.9, k)
    e = rng.uniform(-1.9, 1.9, k - 1) * rng.choice([1.0, 1.0, 2.0**-20, 2.0**-280], k - 1)
    e[rng.random(k - 1) < 0.05] = 0.0
    e[rng.random(k - 1) < 0.05] = float(rng.choice([2.0**-300, -(2.0**-300), 2.0**-299]))
    rows = [r for r in EDGE_ROWS if r < k] + [k - 1]
    r = int(rng.choice(rows))
    planted = None
    if kind == 0 and r > 0:  # exact zero pivot at row r: the block splits (e_{r-1} = 0) and μ = d_r
        e[r - 1] = 0.0
        planted = float(d[r])
    elif kind == 1:  # 0/0 = NaN from row r on (e_{r-1} = e_r = 0, μ = d_r), or a zero q₁
        if r > 0:
            e[r - 1] = 0.0
        if r < k - 1:
            e[r] = 0.0
        planted = float(d[r])
    elif kind == 2:  # a tiny pivot at row r: at, just below or just above the guard 2⁻⁴⁰⁰ (μ = 0)
        if r > 0:
            e[r - 1] = 0.0
        d[r] = float(rng.choice([TAU, np.nextafter(TAU, 0), np.nextafter(TAU, 1), -TAU, 2.0**-450, 5e-324]))
        planted = 0.0
    elif kind == 3:  # integer-like data: exact eigenvalue hits at (half-)integer shifts
        d = rng.integers(-1, 2, k).astype(float)
        e = rng.choice([0.0, 1.0, -1.0, 0.5], k - 1)
        planted = float(rng.choice([0.0, 1.0, -1.0, 0.5, 1.5]))
    return d, e, planted


def _shifts(rng, d, e, planted, w: int) -> np.ndarray:
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    lam = np.linalg.eigvalsh(T)
    pool = np.concatenate([lam, np.nextafter(lam, 2), np.nextafter(lam, -2), d, rng.uniform(-8, 8, 8),
                           [0.0, -0.0, 8.0, -8.0, 1.0, -1.0]])
    mus = rng.choice(pool, w)
    if planted is not None:
        mus[rng.integers(0, w, max(1, w // 3))] = planted
    return mus.astype(float)


def _check_exact_replay(seed: int, cases: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    valid_seen = invalid_seen = 0
    for _ in range(cases):
        k = int(rng.choice(SIZES))
        d, e, planted = _normalised_case(rng, k)
        w = int(rng.choice(SHIFT_COUNTS))
        mus = _shifts(rng, d, e, planted, w)
        counts, valid = tri.sturm_counts(d, e, mus)
        rho = tri.sturm_perturbation(e)
        for t, mu in enumerate(mus.tolist()[:14]):  # all of a few-shift call, 14 of a longer one
            c_ref, v_ref = normalised_sturm_reference(d, e, mu)
            assert bool(valid[t]) == v_ref, ("validity differs from the exact replay", k, w, t, mu, bool(valid[t]))
            if v_ref:
                assert int(counts[t]) == c_ref, ("count differs from the exact replay", k, w, t, mu)
                if t < 3:  # and it is in Lemma S's exact window
                    lo, hi = weyl_count_window(d, e, mu, rho)
                    assert lo <= c_ref <= hi, (k, mu, c_ref, lo, hi)
                valid_seen += 1
            else:
                invalid_seen += 1
    return valid_seen, invalid_seen


def test_normalised_sturm_counts_replay_exactly():
    valid_seen, invalid_seen = _check_exact_replay(6101, 60)
    assert valid_seen > 200 and invalid_seen > 30, (valid_seen, invalid_seen)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_normalised_sturm_counts_replay_exactly_sweep(seed):
    _check_exact_replay(6200 + seed, 1500)


def test_normalised_guard_at_its_threshold_on_every_row():
    # A pivot of exactly 2⁻⁴⁰⁰ passes, its predecessor fails, on each side of every row an evaluation might split at.
    for k in (63, 64, 65, 129):
        for r in [x for x in EDGE_ROWS if x < k] + [k - 1]:
            for piv, ok in ((TAU, True), (np.nextafter(TAU, 0), False), (-TAU, True), (-np.nextafter(TAU, 0), False)):
                d = np.full(k, 1.0)
                e = np.full(k - 1, 0.25)
                if r > 0:
                    e[r - 1] = 0.0
                d[r] = piv
                ref = {mu: normalised_sturm_reference(d, e, mu) for mu in (0.0, 3.0)}
                assert ref[0.0][1] == ok and ref[3.0][1], (k, r, piv)
                for w in (1, _S, _S + 1, 30):
                    mus = np.zeros(w)
                    mus[1::2] = 3.0  # all pivots ≈ −2 there: valid, and a different count
                    counts, valid = tri.sturm_counts(d, e, mus)
                    for t in range(w):
                        c_ref, v_ref = ref[float(mus[t])]
                        assert bool(valid[t]) == v_ref, (k, r, piv, w, t)
                        if v_ref:
                            assert counts[t] == c_ref, (k, r, piv, w, t)


def _check_brackets_long(seed: int, cases: int) -> None:
    # Whole brackets at orders spanning several pivot blocks, with approximations that force the retry path.
    rng = np.random.default_rng(seed)
    for _ in range(cases):
        k = int(rng.choice([64, 65, 129]))
        d, e, _ = _normalised_case(rng, k)
        d = d * float(rng.choice([1.0, 2.0**-30, 2.0**40]))
        e = e * float(rng.choice([1.0, 2.0**-30]))
        lam = np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1))
        how = int(rng.integers(0, 4))
        if how == 0:
            approx = lam
        elif how == 1:  # a few eigenvalues far off (only they are retried)
            approx = lam.copy()
            idx = rng.integers(0, k, int(rng.integers(1, 13)))
            approx[idx] = approx[idx] * (1 + 1e-3) + 1e-3 * np.max(np.abs(lam))
        elif how == 2:  # many off: the retry has many shifts
            approx = lam * (1 + 1e-6 * rng.standard_normal(k))
        else:
            approx = np.nextafter(lam, rng.choice([-np.inf, np.inf], k))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lo, hi = tri.tridiagonal_eigenvalue_bounds(d, e, approx=approx, spread=float(rng.choice([0.0, 2.0**-40])))
        for i in rng.choice(k, 6, replace=False).tolist() + [0, k - 1]:
            a = None if lo[i] == -np.inf else float(lo[i])
            b = None if hi[i] == np.inf else float(hi[i])
            assert eigenvalue_in_descending(d, e, i, a, b), ("λ(T) outside its bracket", k, i, lo[i], hi[i])


def test_brackets_across_pivot_blocks_contain_the_exact_eigenvalues():
    _check_brackets_long(6102, 8)


@pytest.mark.slow
def test_brackets_across_pivot_blocks_sweep():
    _check_brackets_long(6300, 200)
