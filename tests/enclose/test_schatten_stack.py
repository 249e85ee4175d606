"""norms_and_schatten_intervals_of_many: the same values as norms_and_schatten_intervals per enclosure.

The per-enclosure function is the reference for equality (its soundness is tested in test_schatten_float.py
against mpmath and Fractions); the stacked sums are also checked against exact Fractions of the float ends.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from certbound.ball import float_model_scope
from certbound.enclose import enclose_singular_values, enclose_singular_values_of_product
from certbound.enclose.quantities import norms_and_schatten_intervals, norms_and_schatten_intervals_of_many


def _with_ends(enc, lower, upper):
    return dataclasses.replace(enc, lower=np.asarray(lower, dtype=np.float64), upper=np.asarray(upper, dtype=np.float64))


def _same(x, y) -> bool:
    """Equal intervals: float pairs equal, or balls with equal midpoints and radii (arb == tests certainty)."""
    if isinstance(x, tuple) or isinstance(y, tuple):
        return x == y
    return bool(x.mid() == y.mid() and x.rad() == y.rad())


def _same_result(g, r) -> bool:
    return _same(g[0], r[0]) and _same(g[1], r[1]) and len(g[2]) == len(r[2]) and all(map(_same, g[2], r[2]))


def _encs(seed: int):
    rng = np.random.default_rng(seed)
    base = {n: enclose_singular_values(rng.standard_normal((n, n))) for n in (1, 5, 8)}
    out = []
    for _ in range(40):
        n = int(rng.choice([1, 5, 8]))
        hi = np.sort(np.abs(rng.standard_normal(n)) * 10.0 ** rng.integers(-200, 150))[::-1].copy()
        lo = hi * (1 - rng.random(n) * 1e-6)
        z = int(rng.integers(0, n + 1))  # a zero tail
        if z:
            hi[n - z:] = 0.0
            lo[n - z:] = 0.0
        out.append(_with_ends(base[n], lo, hi))
    e5 = base[5]
    out += [
        _with_ends(e5, [1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0.5, 0.0, 0.0, 0.0]),  # lower 0 below a positive upper
        _with_ends(e5, np.zeros(5), np.zeros(5)),  # all proved 0: (0, 0)
        _with_ends(e5, [1.0, 0.25, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]),  # upper end 0 decides, not lower
        _with_ends(e5, np.ones(5), [1.0, 1.0, np.inf, 1.0, 1.0]),  # unusable: per-σ Arb path
        _with_ends(e5, [1.0, -1.0, 0.0, 0.0, 0.0], np.ones(5)),  # negative lower end: unusable
        _with_ends(e5, [1e300] * 5, [1.5e300] * 5),  # S_2 overflows: the per-enclosure fallback
        _with_ends(e5, [1e154] * 5, [1.2e154] * 5),
        base[8],
        base[8],
    ]
    return out


@pytest.mark.parametrize("ps", [[0.5, 1, 2], ["1/4", "3/2"], [2], [0.5, "1/3"], [0, 1], ["0.5", 0.5, 1.0]])
@pytest.mark.parametrize("seed", [0, 1])
def test_same_values_as_per_enclosure(ps, seed) -> None:
    encs = _encs(seed)
    with float_model_scope():
        got = norms_and_schatten_intervals_of_many(encs, ps)
        ref = [norms_and_schatten_intervals(e, ps) for e in encs]
    assert len(got) == len(ref)
    assert all(_same_result(g, r) for g, r in zip(got, ref))
    assert sum(isinstance(g[1], tuple) for g in got) > len(got) // 2  # most go through the stacked float path


def test_stacked_sums_contain_the_exact_sums() -> None:
    encs = [e for e in _encs(3) if np.isfinite(e.upper).all() and (e.lower >= 0).all()]
    with float_model_scope():
        got = norms_and_schatten_intervals_of_many(encs, [1, 2])
    for e, (fro, nuc, (s1, s2)) in zip(encs, got):
        if not isinstance(s2, tuple):
            continue
        lo, hi = [Fraction(x) for x in e.lower if x >= 0], [Fraction(x) for x in e.upper]
        assert Fraction(s1[0]) <= sum(lo) and sum(hi) <= Fraction(s1[1]) and s1 == nuc
        assert Fraction(s2[0]) <= sum(x * x for x in lo) and sum(x * x for x in hi) <= Fraction(s2[1])
        assert Fraction(fro[0]) ** 2 <= Fraction(s2[0]) and Fraction(s2[1]) <= Fraction(fro[1]) ** 2


def test_real_heads_batch() -> None:
    rng = np.random.default_rng(5)
    encs = [enclose_singular_values_of_product(rng.standard_normal((24, 4)), rng.standard_normal((24, 4)))
            for _ in range(6)]
    with float_model_scope():
        got = norms_and_schatten_intervals_of_many(encs, [0.5, 1, 2])
        assert all(_same_result(g, norms_and_schatten_intervals(e, [0.5, 1, 2])) for g, e in zip(got, encs))


def test_bad_p() -> None:
    with pytest.raises(ValueError):
        norms_and_schatten_intervals_of_many([], [3])
