"""Referee tests of blocked evaluations of Lemma 3.1's Gram matrix (session 6) against exact references.

``fperror.gram_deviation_bound(X, chunk, absX=|X|, block_columns=nb)`` (α of Theorem G-T's Q̂,
proofs/enclosure-gram.md §1a) forms fl(XᵀX) by column blocks, rows ``:J₁`` only, mirrors for the
strictly lower blocks. Checked exactly (Fractions, :mod:`tests.enclose.exact_inertia`):

* the entrywise model of Lemma 3.1 / 2.5 — |G − XᵀX| ≤ γ_k|X|ᵀ|X| + 4mη, k = b + ⌈m/b⌉ − 1 when m > 2b,
  else m — for every entry, at block widths and chunk lengths that do and do not divide the sizes;
* α ≥ ‖XᵀX − I‖₂ on near-orthonormal, Householder, rank-deficient and badly scaled X;
* α under a *legal* adversarial BLAS: every GEMM returns, entry by entry, the float nearest to the
  point of [XᵀX ∓ 0.4γ_k|X|ᵀ|X|] closest to the identity (Lemma 2.1 allows any such value), so the
  computed G hides the deviation and only the a-priori γ term covers it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import fperror
from tests.enclose.exact_inertia import fractions_of, gram_deviation, matmul, symmetric_norm_at_most, transpose
from tests.enclose.exact_inertia import upper_fraction

U = Fraction(1, 2**53)
ETA = Fraction(1, 2**1074)


def _gamma(k: int) -> Fraction:
    return k * U / (1 - k * U)


def _k_of(m: int, b: int) -> int:
    """Lemma 2.5's length: b + ⌈m/b⌉ − 1 for chunked (m > 2b) sums, m otherwise (written out, not imported)."""
    return b + -(-m // b) - 1 if m > 2 * b else m


def _case(rng, m: int, r: int) -> np.ndarray:
    kind = int(rng.integers(0, 7))
    if kind == 0:  # near orthonormal columns
        X = np.linalg.qr(rng.standard_normal((m, max(m, r))))[0][:, :r] if r <= m else rng.standard_normal((m, r))
    elif kind == 1:  # integer, rank deficient
        X = rng.integers(-2, 3, (m, max(1, r // 2))).astype(float) @ rng.integers(-2, 3, (max(1, r // 2), r))
    elif kind == 2:  # tiny: products in the subnormals (the 4mη term)
        X = rng.standard_normal((m, r)) * 2.0**-537
    elif kind == 3:  # subnormal entries
        X = rng.integers(-9, 10, (m, r)) * 5e-324
    elif kind == 4:  # the orthonormal-ish factor of a Householder reduction, slightly inflated
        A = rng.standard_normal((m, m))
        X = np.linalg.qr(A)[0] * (1 + 2.0**-40)
        X = np.hstack([X] * (r // m + 1))[:, :r]  # r > m: repeated columns
    elif kind == 5:  # one column repeated (clusters of identical columns)
        X = np.repeat(rng.standard_normal((m, 1)), r, axis=1) / np.sqrt(m)
    else:
        X = rng.standard_normal((m, r))
    return np.asarray(X, dtype=float)


def _check_entrywise(seed: int, cases: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        m, r = int(rng.integers(1, 15)), int(rng.integers(1, 10))
        X = _case(rng, m, r)
        b = int(rng.choice([1, 2, 3, 4, 96]))
        nb = int(rng.choice([1, 2, 3, 5, 64]))
        G = fperror._gram_block_columns(X, b, nb)
        assert G.shape == (r, r)
        Xf = fractions_of(X)
        XtX = matmul(transpose(Xf), Xf)
        aXf = [[abs(x) for x in row] for row in Xf]
        N = matmul(transpose(aXf), aXf)
        g = _gamma(_k_of(m, b))
        Gf = fractions_of(G)
        for i in range(r):
            for j in range(r):
                assert abs(Gf[i][j] - XtX[i][j]) <= g * N[i][j] + 4 * m * ETA, (
                    "fl(XᵀX) entry outside Lemma 3.1's model", m, r, b, nb, i, j, G[i, j], float(XtX[i][j]))
        checked += 1
    return checked


def test_block_column_gram_satisfies_the_entrywise_model():
    assert _check_entrywise(6401, 120) == 120


@pytest.mark.slow
def test_block_column_gram_satisfies_the_entrywise_model_sweep():
    _check_entrywise(6402, 3000)


def _alpha(X, b, nb):
    return fperror.gram_deviation_bound(X, chunk=b, absX=np.abs(X), block_columns=nb)


def _check_alpha(seed: int, cases: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        m, r = int(rng.integers(1, 12)), int(rng.integers(1, 9))
        X = _case(rng, m, r)
        b, nb = int(rng.choice([1, 2, 3, 96])), int(rng.choice([1, 2, 3, 64]))
        B = upper_fraction(_alpha(X, b, nb))
        if B is None:  # +∞: a diagonal entry outside [1/2, 2]
            continue
        assert symmetric_norm_at_most(gram_deviation(X), B), ("α < ‖XᵀX − I‖₂", X.tolist(), b, nb)
        checked += 1
    return checked


def test_alpha_by_block_columns_bounds_the_exact_deviation():
    assert _check_alpha(6403, 150) > 40


def test_alpha_by_block_columns_refuses_non_finite_factors():
    X = np.linalg.qr(np.random.default_rng(6404).standard_normal((9, 9)))[0]
    for bad in (np.nan, np.inf, -np.inf):
        Y = X.copy()
        Y[4, 7] = bad
        for nb in (1, 4, 64):
            assert not _alpha(Y, 3, nb).upper().is_finite() or _alpha(Y, 3, nb).upper() >= 1


class _SnapToIdentityNumpy:
    """numpy, except ``matmul(a, b, out)`` is a legal but hostile BLAS for Gram blocks XᵀX.

    Each entry is the float nearest to the point of [p − cγ_k|a||b|, p + cγ_k|a||b|] (p the exact
    dot product, k the inner length, c = (k − 1.5)/k) closest to ``share`` on "diagonal" entries
    (column i of a equal to column j of b as vectors) and to 0 elsewhere: within Lemma 2.1's
    γ_k|a|ᵀ|b| + kη for k ≥ 2 (the clip moves ≤ cγ_k|a|ᵀ|b|, the rounding ≤ u(1 + cγ_k)|a|ᵀ|b| + η/2
    ≤ 1.5u|a|ᵀ|b| + η/2 ≤ (1 − c)γ_k|a|ᵀ|b| + kη). For k = 1 it returns the correctly rounded product.
    """

    def __init__(self, share: Fraction):
        self.share = share

    def __getattr__(self, name):
        return getattr(np, name)

    def matmul(self, a, b, out=None, **kw):
        k = a.shape[-1]
        if k == 1 or a.ndim != 2:
            r = np.matmul(a, b)
        else:
            af, bf = fractions_of(a), fractions_of(b)
            P = matmul(af, bf)
            N = matmul([[abs(x) for x in row] for row in af], [[abs(x) for x in row] for row in bf])
            g = Fraction(2 * k - 3, 2 * k) * _gamma(k)
            bT = np.asarray(b).T
            r = np.empty((a.shape[0], b.shape[1]))
            for i in range(a.shape[0]):
                for j in range(b.shape[1]):
                    target = self.share if np.array_equal(a[i], bT[j]) else Fraction(0)
                    lo, hi = P[i][j] - g * N[i][j], P[i][j] + g * N[i][j]
                    r[i, j] = float(min(max(target, lo), hi))
        if out is None:
            return r
        out[...] = r
        return out


def test_alpha_by_block_columns_under_a_hostile_legal_blas(monkeypatch):
    rng = np.random.default_rng(6405)
    hidden = 0
    for _ in range(24):
        m = int(rng.integers(2, 10))
        r = int(rng.integers(1, m + 1))
        b = int(rng.choice([2, 3, 96]))
        nb = int(rng.choice([1, 2, 64]))
        q = len(fperror._row_chunks(m, b))
        Q = np.linalg.qr(rng.standard_normal((m, m)))[0][:, :r]
        if rng.random() < 0.5:  # every column in one chunk only: |X|ᵀ|X| diagonal, the γ term exactly what is hidden
            Q = np.eye(m)[:, rng.permutation(m)[:r]]
        # inflate so that XᵀX − I ≈ 0.8γ_k on the diagonal (k the GEMMs' inner length): hidden by the hostile BLAS
        X = Q * (1 + 0.4 * (min(b, m) - 1.5) * 2.0**-53)
        monkeypatch.setattr(fperror, "np", _SnapToIdentityNumpy(Fraction(1, q)))
        G = fperror._gram_block_columns(X, b, nb)
        B = upper_fraction(_alpha(X, b, nb))
        monkeypatch.undo()
        assert B is not None
        D = gram_deviation(X)
        assert symmetric_norm_at_most(D, B), ("α < ‖XᵀX − I‖₂ under a legal BLAS", X.tolist(), b, nb)
        hidden += int(np.max(np.abs(G - np.eye(r))) < float(max(abs(D[i][i]) for i in range(r))))
    assert hidden >= 6, hidden  # the adversary did hide the deviation from the computed G in many cases


def test_mirror_upper_makes_the_gram_exactly_symmetric():
    # Lemma 3.4(-T)'s evaluation reads Ĝ's lower part as the mirror of its upper part (Ĝ exactly symmetric):
    # mirror_upper must copy every strict-upper entry and leave the upper triangle as it was, in either order.
    rng = np.random.default_rng(6406)
    for m in list(range(0, 40)) + [63, 64, 65, 127, 129, 200]:
        for order in "CF":
            G = np.asarray(rng.standard_normal((m, m)), order=order)
            U = np.triu(G)
            fperror.mirror_upper(G)
            assert np.array_equal(G, G.T) and np.array_equal(np.triu(G), U), (m, order)


# ---------------------------------------------------------------- β of Ĝ (Lemma G.1 with Lemma 2.5) under a hostile SYRK


def _hostile_syrk(c_of_b):
    """``syrk_rows_upper`` returning, per upper entry, the float nearest to (AAᵀ)ᵢⱼ + c·γ_b(|A||A|ᵀ)ᵢⱼ (b = A's columns).

    With c = (b − 1.5)/b this is within Lemma 2.1's γ_b|a|ᵀ|b| + bη (as for :class:`_SnapToIdentityNumpy`):
    a legal BLAS whose every rounding error points the same way, so Ĝ − WWᵀ ≈ cγ_b|W||W|ᵀ in norm.
    """

    def syrk(A, out=None):
        m, b = A.shape
        Af = fractions_of(A)
        c = c_of_b(b) * _gamma(b) if b >= 2 else Fraction(0)
        G = np.zeros((m, m), order="F") if out is None else out
        for i in range(m):
            for j in range(i, m):
                ex = sum((x * y for x, y in zip(Af[i], Af[j])), Fraction(0))
                ab = sum((abs(x) * abs(y) for x, y in zip(Af[i], Af[j])), Fraction(0))
                G[i, j] = float(ex + c * ab)
        return G

    return syrk


@pytest.mark.parametrize("per_chunk", [False, True])
def test_beta_of_the_chunked_gram_under_a_hostile_syrk(per_chunk, monkeypatch):
    from certbound.enclose import gram

    monkeypatch.setattr(fperror, "syrk_rows_upper", _hostile_syrk(lambda b: Fraction(2 * b - 3, 2 * b)))
    if per_chunk:  # Lemma G.2′: ρ(N) ≤ Σ_C ρ(N_C), one Collatz–Wielandt step per chunk
        monkeypatch.setattr(gram, "PER_CHUNK_POWER_MIN_ORDER", 1)
        monkeypatch.setattr(gram, "PER_CHUNK_POWER_MIN_ENTRIES", 1)
    rng = np.random.default_rng(6407 + per_chunk)
    for _ in range(10):
        m = int(rng.integers(1, 5))
        b = int(rng.choice([2, 3, 5]))
        n = int(rng.integers(2 * b + 1, 8 * b))
        W = np.abs(rng.standard_normal((m, n))) if rng.random() < 0.7 else rng.standard_normal((m, n))
        W = np.asarray(W if rng.random() < 0.5 else np.asfortranarray(W))
        G, beta = gram.rounded_gram(W, None, chunk=b)
        Wf = fractions_of(W)
        D = [[g - x for g, x in zip(rg, rx)] for rg, rx in zip(fractions_of(G), matmul(Wf, transpose(Wf)))]
        B = upper_fraction(beta)
        assert B is not None and symmetric_norm_at_most(D, B), ("β < ‖Ĝ − WWᵀ‖₂ under a legal SYRK", m, n, b)
