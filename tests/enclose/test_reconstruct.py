"""Theorem G-R (certbound.enclose.reconstruct) against exact rational arithmetic and mpmath.

The references share no code with the module: Q = Q₁⋯Q_K is formed *exactly* (Fractions) from the
very floats V_j, T_j the code used, and α, e are checked against exact Frobenius norms (≥ the
spectral norms they bound); singular values against mpmath eigenvalues of the exact Gram matrix.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from certbound.enclose import reconstruct
from certbound.enclose.gram import rounded_gram


def _exact(A: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(x)) for x in row] for row in np.asarray(A, dtype=np.float64)]


def _mul(A, B):
    Bt = list(zip(*B))
    return [[sum((a * b for a, b in zip(r, c)), Fraction(0)) for c in Bt] for r in A]


def _sub(A, B):
    return [[a - b for a, b in zip(r, s)] for r, s in zip(A, B)]


def _eye(k):
    return [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]


def _fro2(A) -> Fraction:
    return sum((x * x for r in A for x in r), Fraction(0))


def _exact_q(rec, k: int):
    """Q = Q₀Q₁⋯ with Q_j = I − V̄_j Ū_jᵀ formed exactly from the code's floats V_j, Ũ_j (proof §1)."""
    Q = _eye(k)
    for j, s in enumerate(rec.starts):
        bj, n = int(rec.bs[j]), int(rec.ns[j])
        if bj == 0:
            continue
        V, U = np.zeros((k, bj)), np.zeros((k, bj))
        V[s:, :] = rec.Vs[j, :bj, :n].T
        U[s:, :] = rec.Us[j, :bj, :n].T
        assert not np.any(rec.Vs[j, :, 0]) and not np.any(rec.Us[j, :, 0]), "row s_j of V_j, Ũ_j must be zero"
        Qj = _sub(_eye(k), _mul(_exact(V), [list(r) for r in zip(*_exact(U))]))
        Q = _mul(Q, Qj)
    return Q


def test_u_is_the_rounded_product_of_v_and_t():
    # Ũ_j = fl(V_j T_jᵀ) up to Lemma 2.5's chunk model: |Ũ − VTᵀ| ≤ γ_{b_U}|V||T|ᵀ (exact check on one case).
    W = np.random.default_rng(3).standard_normal((10, 30))
    G = _sym_gram(W)
    c, d, e, tau = reconstruct.householder_reflectors(G)
    rec = reconstruct._reconstruct(G, c, d, e, tau, 3, 32, 128)
    u = Fraction(1, 2**53)
    for j, s in enumerate(rec.starts):
        bj, n = int(rec.bs[j]), int(rec.ns[j])
        V, T, U = rec.Vs[j, :bj, :n].T, rec.small[0, j, :bj, :bj], rec.Us[j, :bj, :n].T
        exact = _mul(_exact(V), [list(r) for r in zip(*_exact(T))])
        bound = _mul(_exact(np.abs(V)), [list(r) for r in zip(*_exact(np.abs(T)))])
        for r in range(n):
            for l in range(bj):
                assert abs(Fraction(float(U[r, l])) - exact[r][l]) <= 3 * bj * u * bound[r][l] + Fraction(1, 2**1000)


def _check_exact(G: np.ndarray, ref, block: int, chunk: int, symm_chunk: int, chunk_u: int | None = None) -> None:
    """α ≥ ‖QᵀQ − I‖_F, e_rec ≥ ‖Â₀ − QTQᵀ‖_F, e ≥ ‖G − QTQᵀ‖_F, all exactly (or the code refused)."""
    c, d, e, tau = ref
    k = G.shape[0]
    rec = reconstruct._reconstruct(G, c, d, e, tau, block, chunk, symm_chunk, chunk_u=chunk_u)
    if rec is None:
        return
    out = reconstruct._bounds(G, d, e, rec, chunk, symm_chunk)
    alpha, r, a_priori = out if out is not None else (None, None, None)
    if chunk_u is None:   # reconstruction_bounds' own path (Ũ unchunked)
        total = reconstruct.reconstruction_bounds(G, c, d, e, tau, block=block, chunk=chunk, symm_chunk=symm_chunk)
        assert (out is None) == (total is None)
        if out is None:
            return
        assert total[0] == alpha and total[1] >= r + a_priori
        e_total = total[1]
    else:
        if out is None:
            return
        e_total = float(np.nextafter(r + a_priori, np.inf))
    Q = _exact_q(rec, k)
    Qt = [list(x) for x in zip(*Q)]
    assert _fro2(_sub(_mul(Qt, Q), _eye(k))) <= Fraction(alpha) ** 2
    T = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    QTQ = _mul(_mul(Q, _exact(T)), Qt)
    A0 = np.tril(rec.X) + np.tril(rec.X, -1).T        # the symmetric matrix of the lower triangle
    assert _fro2(_sub(_exact(A0), QTQ)) <= Fraction(a_priori) ** 2
    assert _fro2(_sub(_exact(G), QTQ)) <= Fraction(e_total) ** 2


def _sym_gram(W: np.ndarray) -> np.ndarray:
    G, _ = rounded_gram(np.ascontiguousarray(W))
    return G


@pytest.mark.parametrize("k, n, block, chunk, symm_chunk", [
    (6, 20, 2, 32, 128), (9, 30, 3, 2, 2), (12, 40, 4, 3, 5), (12, 40, 16, 32, 3), (14, 50, 1, 4, 4),
])
def test_reconstruction_bounds_exact(k, n, block, chunk, symm_chunk):
    rng = np.random.default_rng(k * 100 + block)
    W = rng.standard_normal((k, n)) * np.geomspace(1.0, 1e-3, k)[:, None]   # decaying, trained-like spectrum
    G = _sym_gram(W)
    ref = reconstruct.householder_reflectors(G)
    _check_exact(G, ref, block, chunk, symm_chunk)
    assert reconstruct.reconstruction_bounds(G, *ref, block=block, chunk=chunk, symm_chunk=symm_chunk) is not None


def test_chunked_u_exact():
    # U = V Tᵀ with its inner b in chunks of 2 (Lemma 2.5), and every other chunked path at once.
    rng = np.random.default_rng(21)
    G = _sym_gram(rng.standard_normal((13, 30)) * np.geomspace(1.0, 1e-2, 13)[:, None])
    ref = reconstruct.householder_reflectors(G)
    _check_exact(G, ref, 6, 3, 3, chunk_u=2)
    _check_exact(G, ref, 5, 4, 2, chunk_u=3)


def test_skipped_reflectors_exact():
    # A block-diagonal Ĝ: LAPACK skips reflectors (τ = 0) in the middle, the code leaves them out of V_j.
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 12))
    B = rng.standard_normal((6, 12))
    G = np.zeros((11, 11))
    G[:5, :5] = A @ A.T
    G[5:, 5:] = B @ B.T
    G[0, :] = 0.0
    G[:, 0] = 0.0
    G[0, 0] = 2.0
    G = np.triu(G) + np.triu(G, 1).T
    ref = reconstruct.householder_reflectors(G)
    assert np.any(ref[3][:-1] == 0)
    _check_exact(G, ref, 4, 2, 3)
    _check_exact(G, ref, 3, 32, 128)


@pytest.mark.parametrize("seed", range(4))
def test_garbage_reflectors_never_wrong(seed):
    # LAPACK may lie: arbitrary floats in c, d, e, τ give a bound that holds exactly, or None.
    rng = np.random.default_rng(seed)
    k = 8
    W = rng.standard_normal((k, 20))
    G = _sym_gram(W)
    c, d, e, tau = reconstruct.householder_reflectors(G)
    if seed == 0:
        c = rng.standard_normal((k, k))
    elif seed == 1:
        c = c + 1e-6 * rng.standard_normal((k, k))
        tau = rng.standard_normal(k - 1)
    elif seed == 2:
        d = d * (1 + 1e-3 * rng.standard_normal(k))
        e = -e
    else:
        c = c * 1e3
    c = np.asfortranarray(c)
    _check_exact(G, (c, d, e, tau), 3, 2, 3)


def test_nonfinite_reflectors_refused():
    G = _sym_gram(np.random.default_rng(5).standard_normal((8, 20)))
    c, d, e, tau = reconstruct.householder_reflectors(G)
    c = c.copy(order="F")
    c[5, 2] = np.nan
    assert reconstruct.reconstruction_bounds(G, c, d, e, tau, block=3) is None
    c[5, 2] = np.inf
    assert reconstruct.reconstruction_bounds(G, c, d, e, tau, block=3) is None


def _mp_singular_values(W: np.ndarray) -> list:
    """σᵢ(W), descending, from mpmath's eigenvalues of the exact Gram matrix (60 digits)."""
    with mpmath.workdps(60):
        Wm = mpmath.matrix(W.tolist())
        G = Wm * Wm.T
        ev = mpmath.eigsy(G, eigvals_only=True)
        return sorted((mpmath.sqrt(max(x, 0)) for x in ev), reverse=True)


@pytest.mark.parametrize("shape, block", [((20, 50), 4), ((24, 30), 32), ((30, 90), 8)])
def test_certify_reconstructed_contains_mpmath(shape, block):
    rng = np.random.default_rng(shape[0])
    W = rng.standard_normal(shape) * np.geomspace(1.0, 1e-2, shape[0])[:, None]
    G, beta = rounded_gram(W)
    out = reconstruct.certify_reconstructed(G, beta, 0, block=block)
    assert out is not None
    sig, alpha, e, mode = out
    assert mode == "gram-rec" and len(sig) == shape[0]
    for ball, s in zip(sig, _mp_singular_values(W)):
        assert mpmath.mpf(ball.lower()) <= s <= mpmath.mpf(ball.upper())
    # the widths are those of an a-priori certificate: finite, and far below the values themselves
    assert all(float(x.upper()) - float(x.lower()) < 1e-6 * float(sig[0].upper()) for x in sig)


def test_certify_reconstructed_scaled_units():
    # scale_exponent t: σ's are multiplied by 2^t exactly.
    W = np.random.default_rng(7).standard_normal((16, 40))
    G, beta = rounded_gram(W)
    a = reconstruct.certify_reconstructed(G, beta, 0, block=4)[0]
    b = reconstruct.certify_reconstructed(G, beta, 3, block=4)[0]
    assert all(float(y.lower()) == 8 * float(x.lower()) and float(y.upper()) == 8 * float(x.upper())
               for x, y in zip(a, b))


def test_blas_helpers_exact_on_views():
    # Small integers: every product is exact, so the helpers must reproduce numpy's exact results.
    rng = np.random.default_rng(11)
    big = np.asfortranarray(rng.integers(-4, 5, (9, 9)).astype(np.float64))
    A = big[2:7, 1:4]                     # F-ordered view, ld 9
    B = np.ascontiguousarray(rng.integers(-4, 5, (3, 2)).astype(np.float64))   # C-ordered: op T
    C = np.zeros((6, 2), order="F")[:5]
    reconstruct._gemm(A, B, C)
    assert np.array_equal(C, A @ B)
    reconstruct._gemm(big[1:4, 2:7].T, B, C)   # a transposed F view
    assert np.array_equal(C, big[1:4, 2:7].T @ B)
    S = big[3:8, 3:8]
    Sym = np.tril(S) + np.tril(S, -1).T
    Y = np.zeros((5, 3), order="F")
    reconstruct._symm_lower(S, A[:, :3], Y)
    assert np.array_equal(Y, Sym @ A[:, :3])
    X = np.asfortranarray(big.copy())
    V = np.asfortranarray(rng.integers(-3, 4, (5, 2)).astype(np.float64))
    Wm = np.asfortranarray(rng.integers(-3, 4, (5, 2)).astype(np.float64))
    before = X.copy()
    reconstruct._syr2k_lower_minus(V, Wm, X[4:, 4:])
    ref = before[4:, 4:] - V @ Wm.T - Wm @ V.T
    assert np.array_equal(np.tril(X[4:, 4:]), np.tril(ref))
    assert np.array_equal(np.triu(X[4:, 4:], 1), np.triu(before[4:, 4:], 1))
    assert np.array_equal(X[:4], before[:4])
    with pytest.raises(ValueError):
        reconstruct._gemm(A, B, np.zeros((5, 2)))           # C-ordered output refused
    with pytest.raises(ValueError):
        reconstruct._gemm(big[::2, ::2], B[:, :1], np.zeros((5, 1), order="F"))


def test_norm_helpers_against_mpmath():
    rng = np.random.default_rng(13)
    A = rng.standard_normal((3, 5, 5))
    bound = reconstruct._spectral_norm_upper_stack(A)
    with mpmath.workdps(40):
        for Aj, bj in zip(A, bound):
            s = max(mpmath.svd_r(mpmath.matrix(Aj.tolist()), compute_uv=False))
            assert s <= bj <= 1.2 * s
    B = np.abs(rng.standard_normal((3, 4, 9)))        # stacks of |A_j|ᵀ (4 × 9)
    sq = reconstruct._abs_norm_sq_upper(B, 9)
    C = np.abs(rng.standard_normal((3, 4, 4)))
    ch = reconstruct._chain_norm_sq_upper([B.transpose(0, 2, 1), C])   # ‖|A||C|‖₂²
    with mpmath.workdps(40):
        for Bj, Cj, x, y in zip(B, C, sq, ch):
            Am = mpmath.matrix(Bj.T.tolist())
            assert max(mpmath.svd_r(Am, compute_uv=False)) ** 2 <= x
            N = Am * mpmath.matrix(Cj.tolist())
            assert max(mpmath.svd_r(N, compute_uv=False)) ** 2 <= y


def test_input_errors():
    G = np.eye(4)
    ref = reconstruct.householder_reflectors(G)
    with pytest.raises(ValueError):
        reconstruct.reconstruction_bounds(G, *ref, block=0)
    with pytest.raises(ValueError):
        reconstruct.reconstruction_bounds(np.eye(5), *ref)
    with pytest.raises(ValueError):
        reconstruct.householder_reflectors(np.zeros((3, 4)))
    assert reconstruct.householder_reflectors(np.array([[np.nan, 0.0], [0.0, 1.0]])) is None


def test_predict_and_shared_reflectors():
    W = np.random.default_rng(17).standard_normal((24, 70))
    G, beta = rounded_gram(W)
    ref = reconstruct.householder_reflectors(G)
    seen = []

    def yes(est):
        seen.append(est)
        return True

    full = reconstruct.certify_reconstructed(G, beta, 0, block=4, reflectors=ref, predict=yes)
    assert full is not None and len(seen) == 2       # from d, e only (before _prepare), then after the static bounds
    # the estimates are of the same order as the final a-priori ē (they decide, they do not bound)
    assert all(0.3 * float(full[2].upper()) <= x <= 3.0 * float(full[2].upper()) for x in seen)
    assert reconstruct.certify_reconstructed(G, beta, 0, block=4, reflectors=ref, predict=lambda est: False) is None
    # the shared reflectors give the same certificate as computing them inside
    own = reconstruct.certify_reconstructed(G, beta, 0, block=4)
    assert [(x.lower(), x.upper()) for x in own[0]] == [(x.lower(), x.upper()) for x in full[0]]
    assert G.flags.writeable and np.array_equal(G, rounded_gram(W)[0])    # G only read


def test_non_symmetric_gram_is_certified_from_all_entries():
    # s7-ref's D1: a Ĝ whose lower triangle is off by δ (β covers it) — the residual must see every entry.
    from flint import arb

    rng = np.random.default_rng(1)
    k, n = 12, 20
    W = np.outer(np.ones(k), rng.standard_normal(n)) + 0.01 * rng.standard_normal((k, n))
    G, beta0 = rounded_gram(W)
    delta = 2.0**-20 * float(np.abs(G).max())
    Gn = G.copy()
    Gn[np.tril_indices(k, -1)] += delta
    beta = beta0 + arb(delta) * arb(k * (k - 1) // 2).sqrt()     # ‖Gn − WWᵀ‖ ≤ ‖G − WWᵀ‖ + δ‖tril(𝟙𝟙ᵀ, −1)‖_F
    out = reconstruct.certify_reconstructed(Gn, beta, 0, block=4)
    assert out is not None
    for ball, s in zip(out[0], _mp_singular_values(W)):
        assert mpmath.mpf(ball.lower()) <= s <= mpmath.mpf(ball.upper())


def test_an_early_refusal_skips_the_preparation(monkeypatch):
    # A refused G-R must be cheap (the auto hook at k = 384): predict's first call comes before _prepare.
    W = np.random.default_rng(19).standard_normal((20, 50))
    G, beta = rounded_gram(W)
    ref = reconstruct.householder_reflectors(G)

    def boom(*a, **kw):
        raise AssertionError("_prepare ran although predict refused")

    monkeypatch.setattr(reconstruct, "_prepare", boom)
    assert reconstruct.certify_reconstructed(G, beta, 0, block=4, reflectors=ref, predict=lambda est: False) is None
