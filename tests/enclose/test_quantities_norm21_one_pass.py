"""norm_21's one-pass column sums (proofs/enclosure.md §8, "One pass": quantities._unscaled_column_sumsq).

The reference for the floats is a left-to-right Python sum of the squares of the entries scaled with
math.ldexp (correctly rounded, no numpy), with k from max|w| read by Python's abs/max; the reference for "the same
ball" is the scaled evaluation itself (quantities._scaled_column_sumsq), which the one pass replaces.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from certbound.enclose import quantities as Q


def _reference_sums(W: np.ndarray) -> tuple[list[float], int]:
    vals = [[float(x) for x in row] for row in W.tolist()]
    amax = max(abs(x) for row in vals for x in row)
    k = -(math.frexp(amax)[1] - 1)
    out = []
    for j in range(W.shape[1]):
        x = math.ldexp(vals[0][j], k)
        s = x * x
        for i in range(1, W.shape[0]):
            x = math.ldexp(vals[i][j], k)
            s += x * x
        out.append(s)
    return out, k


def _scaled(W: np.ndarray) -> tuple[np.ndarray, int, bool]:
    X, transposed, owned, amax = Q._norm_operand(W)
    return Q._scaled_column_sumsq(X, transposed, owned, amax)


def _binade_edges(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
    """Entries whose max sits on a binade edge: 2^e exactly or the float just below 2^(e+1)."""
    e = int(rng.integers(-500, 500))
    W = rng.uniform(0.3, 1.0, (m, n)) * 2.0**e * rng.choice([-1.0, 1.0], (m, n))
    W.flat[int(rng.integers(W.size))] = math.ldexp(1.0, e + 1) * (1 - 2.0**-53) * rng.choice([-1.0, 1.0])
    if rng.random() < 0.5:
        W.flat[int(rng.integers(W.size))] = math.ldexp(1.0, e + 1)  # the max is a power of two
    return W


def _matrices(rng: np.random.Generator, count: int):
    for t in range(count):
        m, n = int(rng.integers(1, 40)), int(rng.integers(2, 40))
        kind = t % 4
        if kind == 0:
            W = rng.standard_normal((m, n)) * 2.0 ** float(rng.integers(-520, 520))
        elif kind == 1:
            W = _binade_edges(rng, m, n)
        elif kind == 2:  # near (iii): 2^2k·min q close to 2^-1021, k ≤ 0 (a large max entry)
            e = int(rng.integers(0, 500))
            W = rng.uniform(1.0, 1.1, (m, n)) * 2.0 ** (e - 510.5)
            W.flat[int(rng.integers(W.size))] = 1.5 * 2.0**e
            if rng.random() < 0.5:
                W.flat[int(rng.integers(W.size))] = 0.99 * 2.0 ** (e - 510.5)  # below: declined
        else:  # near (i): entries just above 2^-511, the smallest whose square is above 2^-1022
            W = rng.uniform(1.0, 4.0, (m, n)) * 2.0**-511
            W.flat[int(rng.integers(W.size))] = 2.0**-511 * (1 + 2.0**-52)  # square 2^-1022(1 + 2^-51): taken
            if rng.random() < 0.5:
                W.flat[int(rng.integers(W.size))] = 2.0**-511  # square exactly 2^-1022: declined
        yield np.asfortranarray(W) if t % 2 and min(W.shape) >= 2 else W


@pytest.mark.parametrize("block_entries", [None, 7])
def test_one_pass_sums_are_the_scaled_sums(block_entries, monkeypatch):
    if block_entries is not None:
        monkeypatch.setattr(Q, "_SUMSQ_BLOCK_ENTRIES", block_entries)
        monkeypatch.setattr(Q, "_TRANSPOSE_BLOCK_ENTRIES", 5)
        monkeypatch.setattr(Q, "_TRANSPOSED_ROWS", 5)  # Wᵀ's blocks of 5 rows copied 2 at a time: partial and
        monkeypatch.setattr(Q, "_TRANSPOSED_PIECE", 2)  # one-row pieces and last blocks
    rng = np.random.default_rng(12)
    taken = [0, 0, 0, 0]
    for t, W in enumerate(_matrices(rng, 240)):
        got = Q._unscaled_column_sumsq(W)
        v, k, exact = _scaled(W)
        if got is None:
            continue
        taken[t % 4] += 1
        v1, k1, shape = got
        assert shape == W.shape and k1 == k and exact
        assert np.array_equal(v1, v), (W.shape, k)
        ref, k_ref = _reference_sums(W)
        assert k1 == k_ref and v1.tolist() == ref
    # each kind of matrix is taken often, and the edge kinds are also declined often
    assert taken[0] >= 50 and taken[1] == 60 and 10 <= taken[2] <= 50 and 10 <= taken[3] <= 50, taken


@pytest.mark.parametrize("make", [
    lambda W: W.__setitem__((1, 1), 0.0),                      # a zero entry
    lambda W: W.__setitem__((0, 1), 2.0**-512),                # a square below 2^-1022
    lambda W: W.__setitem__((2, 0), np.nan),
    lambda W: W.__setitem__((2, 0), -np.inf),
    lambda W: W.__setitem__((2, 0), 2.0**600),                 # its square overflows
    lambda W: W.__setitem__(slice(None), 1e300),               # the column sums overflow
    lambda W: W.__setitem__((0, 0), 2.0**400),                 # (iii): 2^-1018·2^-800 < 2^-1021
])
def test_declines_where_the_scaled_evaluation_must_run(make):
    W = np.full((4, 3), 2.0**-509)
    W[3, 2] = 0.75
    assert Q._unscaled_column_sumsq(W) is not None
    make(W)
    assert Q._unscaled_column_sumsq(W) is None


@pytest.mark.parametrize("W", [
    np.ones((5, 1)),                                  # one column: einsum's own loop
    np.asfortranarray(np.ones((1, 5))),               # one row (C and F order): the C path takes it
    np.ones((6, 4))[:, ::2],                          # not contiguous
    np.ones((3, 3), dtype=np.float32),
    np.zeros((0, 3)),
])
def test_layouts_left_to_the_scaled_evaluation(W):
    got = Q._unscaled_column_sumsq(W)
    if W.ndim == 2 and W.shape[0] == 1 and W.dtype == np.float64:
        assert got is not None and got[0].tolist() == _reference_sums(W)[0]
    else:
        assert got is None


def test_norm_21_takes_the_one_pass_and_keeps_its_ball(monkeypatch):
    rng = np.random.default_rng(2)
    W = rng.standard_normal((30, 17)) * 0.05
    want = Q.norm_21(W)
    calls = []
    real = Q._scaled_column_sumsq
    monkeypatch.setattr(Q, "_scaled_column_sumsq", lambda *a: calls.append(1) or real(*a))
    got = Q.norm_21(W)
    assert not calls and got.mid() == want.mid() and got.rad() == want.rad()
    monkeypatch.setattr(Q, "_unscaled_column_sumsq", lambda W: None)
    again = Q.norm_21(W)
    assert calls and again.mid() == want.mid() and again.rad() == want.rad()
