"""Referee tests of ``quantities.norm_21`` (session 6: in-place reads, row blocks, Fortran order) against mpmath.

``‖W‖_{2,1} = Σⱼ ‖W_{:,j}‖₂`` is evaluated exactly enough: each column's Σ w² exactly in Fractions, its
square root and the sum by mpmath at 400 bits; the ball must contain it (relative slack 2⁻³⁵⁰, far below
any rounding the code does). Layouts: C- and Fortran-ordered float64 (read in place), strided views,
float32 / float16 / integer inputs (converted copies, scaled in place), one row, one column; scales
that overflow the squares, that make entries subnormal after scaling (the inexact flag), subnormal
matrices and zeros; row blocks and transposing blocks shrunk to a few entries so that every block
edge is crossed; NaN/±∞ anywhere must raise ``ValueError``.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from certbound.enclose import quantities
from tests.enclose.exact_inertia import lower_fraction, upper_fraction
from tests.enclose.exact_known import contains_mp

def _exact_norm_21(W: np.ndarray) -> mpmath.mpf:
    rows = [[Fraction(float(x)) for x in row] for row in np.asarray(W, dtype=np.float64)]
    with mpmath.workprec(400):
        total = mpmath.mpf(0)
        for col in zip(*rows):
            q = sum((x * x for x in col), Fraction(0))
            total += mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator)
        return +total


def _matrix(rng) -> np.ndarray:
    m, n = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    kind = int(rng.integers(0, 8))
    W = rng.standard_normal((m, n))
    if kind == 1:  # squares overflow without scaling
        W = W * 2.0**1000
    elif kind == 2:  # one huge entry: scaling down makes the others subnormal (inexact flag)
        W = W * 2.0**-1040
        W[int(rng.integers(0, m)), int(rng.integers(0, n))] = 2.0 ** int(rng.integers(0, 40))
    elif kind == 3:  # subnormal matrix (scaling up, exact)
        W = rng.integers(-50, 51, (m, n)) * 5e-324
    elif kind == 4:  # zero columns, zero matrix
        W[:, rng.random(n) < 0.5] = 0.0
        if rng.random() < 0.3:
            W[:] = 0.0
    elif kind == 5:  # full mantissas at max |w| just below a power of two
        W = np.nextafter(np.ldexp(1.0, rng.integers(-3, 3, (m, n))), 0) * rng.choice([-1.0, 1.0], (m, n))
    elif kind == 6:  # integers
        W = rng.integers(-4, 5, (m, n)).astype(float)
    return np.asarray(W, dtype=np.float64)


def _layouts(rng, W: np.ndarray):
    """W in several memory layouts / dtypes that all hold the same exact values (or close ones, returned)."""
    yield W, W  # C order
    yield np.asfortranarray(W), W  # Fortran order: read as Wᵀ in place (two or more rows and columns)
    big = np.zeros((2 * W.shape[0], W.shape[1] + 1))
    big[::2, 1:] = W
    yield big[::2, 1:], W  # strided view
    with np.errstate(over="ignore"):
        w32, w16 = W.astype(np.float32), W.astype(np.float16)
    if np.all(np.isfinite(w32)):
        yield w32, w32.astype(np.float64)  # converted copy (owned: scaled in place)
        yield np.asfortranarray(w32), w32.astype(np.float64)
    if np.all(np.isfinite(w16)):
        yield w16, w16.astype(np.float64)
    yield np.rint(np.clip(W, -2**20, 2**20)).astype(np.int64), np.rint(np.clip(W, -2**20, 2**20))


def _check(seed: int, cases: int, monkeypatch, blocks: tuple[int, int] | None) -> int:
    if blocks is not None:
        monkeypatch.setattr(quantities, "_SUMSQ_BLOCK_ENTRIES", blocks[0])
        monkeypatch.setattr(quantities, "_TRANSPOSE_BLOCK_ENTRIES", blocks[1])
        monkeypatch.setattr(quantities, "_MAX_MIN_BLOCK_ENTRIES", blocks[1], raising=False)  # max/min by blocks
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        W = _matrix(rng)
        for X, exact_of in _layouts(rng, W):
            before = np.array(X, copy=True)
            ball = quantities.norm_21(X)
            assert np.array_equal(np.asarray(X), before), "norm_21 modified its input"
            t = _exact_norm_21(exact_of)
            with mpmath.workprec(400):
                ok = contains_mp(lower_fraction(ball), upper_fraction(ball), t, rel=350)
            assert ok, ("‖W‖_{2,1} outside the ball", X.dtype, X.flags.f_contiguous, X.shape, W.tolist(), str(ball))
            checked += 1
    return checked


def test_norm_21_contains_the_exact_value(monkeypatch):
    assert _check(6501, 40, monkeypatch, None) > 200


@pytest.mark.parametrize("blocks", [(1, 1), (3, 2), (7, 5)])
def test_norm_21_contains_the_exact_value_across_block_edges(blocks, monkeypatch):
    assert _check(6502 + blocks[0], 25, monkeypatch, blocks) > 120


@pytest.mark.slow
@pytest.mark.parametrize("blocks", [None, (1, 1), (2, 3), (5, 7), (16, 4)])
def test_norm_21_sweep(blocks, monkeypatch):
    _check(6600 + (blocks or (0,))[0], 600, monkeypatch, blocks)


@pytest.mark.parametrize("max_min_block", [None, 1, 2])
def test_norm_21_refuses_non_finite_entries_in_every_layout(max_min_block, monkeypatch):
    if max_min_block is not None:  # the finiteness read by blocks of rows (any block may hold the bad entry)
        monkeypatch.setattr(quantities, "_MAX_MIN_BLOCK_ENTRIES", max_min_block, raising=False)
    rng = np.random.default_rng(6503)
    for bad in (np.nan, np.inf, -np.inf):
        for shape in ((1, 1), (1, 5), (5, 1), (4, 6), (6, 4)):
            W = rng.standard_normal(shape)
            W[int(rng.integers(0, shape[0])), int(rng.integers(0, shape[1]))] = bad
            for X in (W, np.asfortranarray(W), W.astype(np.float32), np.asfortranarray(W.astype(np.float32))):
                with pytest.raises(ValueError):
                    quantities.norm_21(X)


def test_norm_21_layouts_give_the_same_ball():
    # Not soundness: the in-place readers keep the floats of the whole-matrix form (one ball per matrix).
    rng = np.random.default_rng(6504)
    for _ in range(30):
        W = _matrix(rng)
        balls = {str(quantities.norm_21(X)) for X in (W, np.asfortranarray(W), W.copy(order="K")[:, :],
                                                      np.ascontiguousarray(W.T).T)}
        assert len(balls) == 1, (W.tolist(), balls)
