"""Referee tests of Theorem G-R, term by term: each bound of Lemmas R.1 and R.3 against the exact error it bounds.

test_exact_reconstruct.py checks the two end results α ≥ ‖QᵀQ − I‖₂ and ē ≥ ‖Ĝ − QTQᵀ‖₂ exactly. Those
totals have slack (ē is 5–25× the exact error even when a worst-case BLAS makes every rounding as large
as Lemma 2.1 allows), and no single term of Lemma R.3's Δ is more than ~30 % of it — so last session a
mutant that dropped one term, or replaced one γ_n by γ_b, was not caught by any test (s7-ref's note).

Here every product the reconstruction computes is captured (spies on the module's BLAS helpers; the
b×b floats from the reconstruction record) and its **exact** rounding error is compared with the
bound the code evaluated for it, block by block (proofs/enclosure-reconstruct.md §2–§3):

* Lemmas R.1, R.1′: f ≥ ‖R̃T − I‖₂, e_S ≥ ‖VᵀV − S̃‖₂, t ≥ ‖T‖₂, σ_S ≥ ‖S̃‖₂, ν ≥ ‖V‖₂,
  e_U ≥ ‖Ũ − VTᵀ‖₂, ε ≥ ‖QⱼᵀQⱼ − I‖₂ with Qⱼ = I − VŨᵀ (session 8's form, s8-recon);
* Lemma R.3's table: e_Y ≥ ‖Y − XŨ‖₂, e_M ≥ ‖M − ŨᵀY‖₂,
  e_W + e_H/2 ≥ ‖W − (Y − VM/2)‖₂, e_5 ≥ ‖X′ − (X − VWᵀ − WVᵀ)‖₂, and the hypothesis
  φ ≥ ‖X‖_F of the block's input X;
* Lemma R.3's conclusion Δ_j ≥ ‖X′ − QⱼXQⱼᵀ‖₂ for every block;
* Lemma R.2: the product P ≥ ∏(1 + ε_j);
* the compositions, exactly on the code's own term values: ε⁰ ≥ ‖Q⁰ⱼᵀQ⁰ⱼ − I‖₂ (Q⁰ = I − VTVᵀ), Lemma R.1′'s
  ε ≥ ε⁰ + 2√(1 + ε⁰)νe_U + (νe_U)², h ≥ ½(1 + √(1 + ε)), Δ_j ≥ e_5 + 2ν(h·e_Y + ½ν·e_M + ½e_H + e_W), and
  Lemma R.4's E ≥ P·Σ Δ_j, ē ≥ E — so that a mutant which drops a term or a factor where the terms are
  *combined* fails too (the per-term checks alone cannot see that).

All with exact rationals (Sylvester inertia, :mod:`tests.enclose.exact_inertia`), under the honest BLAS
and under a legal worst-case BLAS (:mod:`tests.enclose.exact_blas`), where every entry's error is
pushed to the edge of its Lemma 2.1 window — so a γ that is too small, or a missing term, shows.

The per-term values are read from ``reconstruct._BREAKDOWN`` (the module's diagnostics hook) and the
reconstruction's static record; the weighted forms there are divided back (a relative 1e-12 is allowed
for that float division — far below any mutant's effect).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from certbound.enclose import reconstruct as rec
from tests.enclose.exact_blas import HostileFortranBlas, HostileNumpy, _int, _val, _view
from tests.enclose.exact_inertia import fractions_of, matmul, norm_at_most, symmetric_norm_at_most, transpose
from tests.enclose.exact_reflectors import identity, mat_sub, wy_block
from tests.enclose.test_exact_reconstruct import _gram_input

# The breakdown stores the terms weighted (e.g. ν²t·e_Z, each product rounded to nearest, no step up): un-weighting
# them exactly in rationals leaves a relative error ≤ 4u either way, so those terms get this much slack. Every
# bound read directly (static record, Δ_j's own floats) is compared exactly.
_SLACK = Fraction(1) + Fraction(1, 2**49)


def _sym_lower(A) -> np.ndarray:
    A = np.array(A, dtype=np.float64)
    return np.tril(A) + np.tril(A, -1).T


class _Spy:
    """Snapshots, per reconstruction block, the floats X (input), U, Y, V, W and X′ (output) of its BLAS calls.

    The module's ctypes BLAS (``reconstruct._BLAS``: the real one, or a worst-case stand-in) is wrapped, so the
    spy sees the calls whatever helper or raw-address convention the loop uses; with Y unchunked each block is
    one dsymm (X·U → Y) and one dsyr2k (X − VWᵀ − WVᵀ).
    """

    def __init__(self, mp, blas: dict | None = None, chunk_u: int | None = None):
        self.calls: list[dict] = []
        self.records: list = []
        inner = dict(blas if blas is not None else rec._fortran_blas())
        recon = rec._reconstruct

        def dsymm(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc):
            m_, n_ = _int(m), _int(n)
            assert _val(side) in (b"L", b"l") and _val(uplo) in (b"L", b"l"), "dsymm: side/uplo as modelled"
            X = _sym_lower(_view(a, m_, m_, _int(lda)))
            U = np.array(_view(b, m_, n_, _int(ldb)))
            inner["dsymm"](side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
            self.calls.append(dict(X=X, U=U, Y=np.array(_view(c, m_, n_, _int(ldc)))))

        def dsyr2k(uplo, trans, n, kk, alpha, a, lda, b, ldb, beta, c, ldc):
            n_, k_ = _int(n), _int(kk)
            assert _val(uplo) in (b"L", b"l") and _val(trans) in (b"N", b"n"), "dsyr2k: uplo/trans as modelled"
            V, W = np.array(_view(a, n_, k_, _int(lda))), np.array(_view(b, n_, k_, _int(ldb)))
            before = _sym_lower(_view(c, n_, n_, _int(ldc)))
            inner["dsyr2k"](uplo, trans, n, kk, alpha, a, lda, b, ldb, beta, c, ldc)
            self.calls[-1].update(V=V, W=W, Xb=before, Xa=_sym_lower(_view(c, n_, n_, _int(ldc))))

        def spy_reconstruct(*a, **kw):
            if chunk_u is not None:  # Ũ's inner b in chunks (Lemma 2.5; the default is one product)
                kw["chunk_u"] = chunk_u
            out = recon(*a, **kw)
            if out is not None:
                self.records.append(out)
            return out

        mp.setattr(rec, "_BLAS", dict(inner, dsymm=dsymm, dsyr2k=dsyr2k))
        mp.setattr(rec, "_reconstruct", spy_reconstruct)


def _le(norm_ok, E, bound, what, slack=Fraction(1)):
    b = (bound if isinstance(bound, Fraction) else Fraction(float(bound))) * slack
    assert norm_ok(E, b), ("a term's bound is below the exact error it bounds", what, float(bound))


def _check_terms(G, ref, block, chunk, spy, bd, what, ebar=None) -> dict:
    """Every per-term bound of one reconstruction against its exact error; returns the measured ratios."""
    record = spy.records[0]
    st = record.static
    act = np.flatnonzero(np.asarray(record.bs) > 0)
    K = len(act)
    assert len(spy.calls) == K, ("one dsymm + dsyr2k per active block (unchunked Y)", len(spy.calls), K)
    calls = spy.calls[::-1]  # the loop runs j = K−1 … 0
    arr = {}
    for key, v in st.items():  # per-block arrays, and scalars (e.g. the cap C) broadcast
        if isinstance(v, (np.ndarray, np.floating, float)) and np.asarray(v).size in (1, K):
            arr[key] = np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(-1), (K,))
    nu, t2 = arr["nu"], arr["t2"]

    def fr(key, jj):
        return Fraction(float(np.broadcast_to(np.asarray(bd[key], dtype=np.float64).reshape(-1), (K,))[jj]))

    def raw(key, jj):  # _bounds' breakdown stores the terms as they enter Δ_j: divide the weights back, exactly
        if key + "_raw" in bd:
            return fr(key + "_raw", jj), Fraction(1)
        n_, t_ = Fraction(float(nu[jj])), Fraction(float(t2[jj]))
        w = {"e5": Fraction(1), "eZ": n_ * n_ * t_, "eM": n_ * n_, "eH": n_, "eW": 2 * n_}[key]
        return fr(key, jj) / w, (_SLACK if key != "e5" else Fraction(1))  # (session 7's breakdown)

    def delta(jj):
        if "delta" in bd:
            return fr("delta", jj), Fraction(1)
        return sum(fr(key, jj) for key in ("e5", "eY", "eM", "eH", "eW")), _SLACK
    ratios: dict = {}
    prod = Fraction(1)
    for jj, j in enumerate(act):
        c = calls[jj]
        bj, n = int(record.bs[j]), int(record.ns[j])
        V = fractions_of(np.asarray(record.Vs[j, :bj, :n]).T)
        T = fractions_of(np.asarray(record.small[0, j, :bj, :bj]))
        St = fractions_of(np.asarray(record.small[1, j, :bj, :bj]))
        Rt = fractions_of(np.asarray(record.small[2, j, :bj, :bj]))
        M = fractions_of(np.asarray(record.small[3, j, :bj, :bj]))       # M = fl(ŨᵀY)
        Ut = fractions_of(np.asarray(record.Us[j, :bj, :n]).T)            # Ũ_j (session 8: Q_j = I − VŨᵀ)
        assert fractions_of(c["V"]) == V, ("dsyr2k's V is the record's V_j", what, j)
        assert np.array_equal(c["X"], c["Xb"]), ("X unchanged between dsymm and dsyr2k", what, j)
        X, U, Y, W = (fractions_of(c[key]) for key in ("X", "U", "Y", "W"))
        assert U == Ut, ("dsymm's right operand is the record's Ũ_j", what, j)
        Xa, Xb = fractions_of(c["Xa"]), fractions_of(c["Xb"])
        Vt, Tt = transpose(V), transpose(T)
        tag = (what, "block", int(j), bj, n)
        # Lemma R.1
        S = matmul(Vt, V)
        _le(norm_at_most, mat_sub(matmul(Rt, T), identity(bj)), arr["F"][jj], ("f", tag))
        _le(symmetric_norm_at_most, mat_sub(S, St), arr["eS"][jj], ("e_S", tag))
        _le(norm_at_most, T, t2[jj], ("t", tag))
        _le(symmetric_norm_at_most, St, arr["s2"][jj], ("σ_S", tag))
        _le(norm_at_most, V, nu[jj], ("ν", tag))
        Qj = mat_sub(identity(n), matmul(V, transpose(Ut)))              # Q_j = I − VŨᵀ (proof §1)
        QtQ = mat_sub(matmul(transpose(Qj), Qj), identity(n))
        _le(symmetric_norm_at_most, QtQ, arr["eps"][jj], ("ε", tag))
        prod *= 1 + Fraction(float(arr["eps"][jj]))
        # Lemma R.3's hypotheses on the block's input
        fro2 = sum(x * x for row in X for x in row)
        assert fro2 <= Fraction(float(arr["phi"][jj])) ** 2, ("φ < ‖X‖_F", tag)
        # Lemma R.3's table
        E_U = mat_sub(U, matmul(V, Tt))
        E_Y = mat_sub(Y, matmul(X, U))
        E_M = mat_sub(M, matmul(transpose(U), Y))
        half_VM = [[x / 2 for x in row] for row in matmul(V, M)]
        E_HW = mat_sub(W, mat_sub(Y, half_VM))
        VWt = matmul(V, transpose(W))
        E_5 = mat_sub(Xa, mat_sub(mat_sub(Xb, VWt), transpose(VWt)))
        _le(norm_at_most, E_U, arr["eU"][jj], ("e_U", tag))
        _le(norm_at_most, E_Y, arr["eY"][jj], ("e_Y", tag))
        _le(norm_at_most, E_M, *raw("eM", jj)[:1], ("e_M", tag), raw("eM", jj)[1])
        (ew, sw), (eh, sh) = raw("eW", jj), raw("eH", jj)
        _le(norm_at_most, E_HW, ew + eh / 2, ("e_W + e_H/2", tag), max(sw, sh))
        _le(symmetric_norm_at_most, E_5, *raw("e5", jj)[:1], ("e_5", tag), raw("e5", jj)[1])
        # Lemma R.3's conclusion for the block
        D = mat_sub(Xa, matmul(matmul(Qj, Xb), transpose(Qj)))
        _le(symmetric_norm_at_most, D, *delta(jj)[:1], ("Δ_j", tag), delta(jj)[1])
        if "eps0" in st and "delta" in bd:  # session 8's form: the compositions, exactly, from the code's own floats
            _check_compositions(V, T, n, {key: Fraction(float(arr[key][jj])) for key in ("eps0", "eps", "nu", "eU",
                                                                                         "hq", "eY")},
                                {key: raw(key, jj)[0] for key in ("e5", "eM", "eH", "eW")}, delta(jj)[0], tag)
        for key, E, bound in (("eY", E_Y, Fraction(float(arr["eY"][jj]))), ("e5", E_5, raw("e5", jj)[0])):
            mx = max((abs(x) for row in E for x in row), default=Fraction(0))
            ratios.setdefault(key, []).append(float(mx / bound) if bound else 0.0)
    assert Fraction(float(st["Pr"])) >= prod, ("P < ∏(1 + ε_j)", what)
    if "acc" in bd and "delta" in bd:  # Lemma R.4: E = P·Σ Δ_j, evaluated upward; ē ≥ r + E ≥ E
        total = sum((fr("delta", jj) for jj in range(K)), Fraction(0))
        assert Fraction(float(bd["acc"])) >= Fraction(float(st["Pr"])) * total, ("acc < P·Σ Δ_j", what)
        if ebar is not None:
            assert Fraction(float(ebar)) >= Fraction(float(bd["acc"])), ("ē < the a-priori part", what)
    return ratios


def _sqrt_at_least(y: Fraction, x: Fraction) -> bool:
    """y ≥ √x (x ≥ 0), exactly."""
    return y >= 0 and y * y >= x


def _check_compositions(V, T, n, f: dict, r: dict, delta_j: Fraction, tag) -> None:
    """The formulas of Lemma R.1, R.1′ and R.3 (proofs/enclosure-reconstruct.md §2–§3, session 8's form) evaluated
    exactly on the code's own term values: each composed float must be ≥ its formula (every step rounded up).

    A mutant that drops a term of Δ_j, or halves h, or leaves Ũ's rounding out of ε, passes every per-term check
    above but fails here.
    """
    Q0 = wy_block(V, T)  # Lemma R.1's Q⁰ = I − VTVᵀ
    _le(symmetric_norm_at_most, mat_sub(matmul(transpose(Q0), Q0), identity(n)), f["eps0"], ("ε⁰", tag))
    ne = f["nu"] * f["eU"]
    # ε ≥ ε⁰ + 2√(1 + ε⁰)·νe_U + (νe_U)²  (Lemma R.1′)
    rest = f["eps"] - f["eps0"] - ne * ne
    assert ne == 0 and rest >= 0 or ne > 0 and _sqrt_at_least(rest / (2 * ne), 1 + f["eps0"]), ("ε below R.1′", tag)
    # h ≥ ½(1 + √(1 + ε))
    assert _sqrt_at_least(2 * f["hq"] - 1, 1 + f["eps"]), ("h below ½(1 + √(1 + ε))", tag)
    # Δ_j ≥ e_5 + 2ν(h·e_Y + ½ν·e_M + ½e_H + e_W)  (Lemma R.3)
    formula = r["e5"] + 2 * f["nu"] * (f["hq"] * f["eY"] + f["nu"] * r["eM"] / 2 + r["eH"] / 2 + r["eW"])
    assert delta_j >= formula, ("Δ_j below Lemma R.3's formula", tag, float(delta_j), float(formula))


def _run(seed: int, cases: int, monkeypatch, how: str | None, max_k: int = 9, blocks=(1, 2, 3, 4, 32),
         min_k: int = 3) -> int:
    rng = np.random.default_rng(seed)
    done = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            k = int(rng.integers(min_k, max_k + 1))
            G = _gram_input(rng, k)
            ref = rec.householder_reflectors(G)
            if ref is None:
                continue
            block = int(rng.choice(list(blocks)))
            chunk = int(rng.choice([1, 2, 3, 32]))
            bd: dict = {}
            with monkeypatch.context() as mp:
                mp.setattr(rec, "_BREAKDOWN", bd)
                blas = None
                if how is not None:
                    h = how if how != "mixed" else str(rng.choice(["up", "down", "random", "sign", "shrink"]))
                    blas = HostileFortranBlas(h, rng).functions()
                    mp.setattr(rec, "np", HostileNumpy(h, rng, sums=True))
                spy = _Spy(mp, blas, chunk_u=[None, None, 1, 2, 3][int(rng.integers(0, 5))])
                out = rec.reconstruction_bounds(G, *ref, block=block, chunk=chunk, symm_chunk=128)
            if out is None or not bd:
                continue
            _check_terms(G, ref, block, chunk, spy, bd, (k, block, chunk, how), ebar=out[1])
            done += 1
    return done


def test_reconstruction_terms_exact(monkeypatch):
    assert _run(8201, 12, monkeypatch, None) >= 8


@pytest.mark.parametrize("how", ["up", "down", "sign", "random"])
def test_reconstruction_terms_exact_under_a_worst_case_blas(how, monkeypatch):
    assert _run(8210 + len(how), 4, monkeypatch, how) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_reconstruction_terms_exact_sweep(seed, monkeypatch):
    _run(8300 + seed, 60, monkeypatch, None if seed % 3 == 0 else "mixed", max_k=12)


# ---------------------------------------------------------------- T_j not the inverse: Lemma R.1's F-term carries ε


class _LyingInverse:
    """A stand-in for the module's triangular inversion (``np.linalg.inv`` on the stack, or LAPACK ``dtrtri`` per
    block, whichever the code uses): the true inverse times (1 + δ·ρ) entrywise, ρ ∈ [−1, 1] random, δ = 2⁻²⁰ …
    2⁻⁴⁰. Any float upper-triangular T_j defines a valid Q (proof §1), so every bound must hold for it — and then
    F = R̃T − I is ~δ, the term 2tf dominates ε and the check of ε is nearly tight (b = 1: ε = 4δ(1 + O(δ)))."""

    def __init__(self, rng, base):
        self.rng, self.base = rng, base

    def __getattr__(self, name):
        return getattr(self.base, name)

    def _lie(self, A):
        A = np.array(A, dtype=np.float64)
        delta = float(self.rng.choice([2.0**-20, 2.0**-30, 2.0**-40]))
        return A * (1 + delta * self.rng.uniform(-1, 1, A.shape))

    def inv(self, A):  # np.linalg.inv of a stack
        return self._lie(np.linalg.inv(A))

    def dtrtri(self, c, *a, **kw):  # scipy.linalg.lapack.dtrtri: (inverse, info)
        inv_, info = self.base.dtrtri(c, *a, **kw)
        return (self._lie(inv_) if info == 0 else inv_), info


class _NumpyWithLinalg:
    """``np`` (or a HostileNumpy) whose ``linalg.inv`` is a :class:`_LyingInverse`'s."""

    def __init__(self, base, lying):
        self._base, self.linalg = base, lying

    def __getattr__(self, name):
        return getattr(self._base, name)


def _run_lying_t(seed: int, cases: int, monkeypatch, how: str | None, blocks=(1, 2, 3)) -> int:
    import scipy.linalg.lapack as lapack

    rng = np.random.default_rng(seed)
    done = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            k = int(rng.integers(4, 10))
            G = _gram_input(rng, k)
            ref = rec.householder_reflectors(G)
            if ref is None:
                continue
            block = int(rng.choice(list(blocks)))
            bd: dict = {}
            with monkeypatch.context() as mp:
                mp.setattr(rec, "_BREAKDOWN", bd)
                h = how if how != "mixed" else str(rng.choice(["up", "down", "random", "sign", "shrink"]))
                base = np if how is None else HostileNumpy(h, rng, sums=True)
                blas = None if how is None else HostileFortranBlas(h, rng).functions()
                mp.setattr(rec, "np", _NumpyWithLinalg(base, _LyingInverse(rng, np.linalg)))
                if hasattr(rec, "_lapack"):
                    mp.setattr(rec, "_lapack", _LyingInverse(rng, lapack))
                spy = _Spy(mp, blas)
                out = rec.reconstruction_bounds(G, *ref, block=block, chunk=32, symm_chunk=128)
            if out is None or not bd:
                continue
            _check_terms(G, ref, block, 32, spy, bd, ("lying T", k, block, how), ebar=out[1])
            done += 1
    return done


def test_reconstruction_terms_exact_with_a_perturbed_core(monkeypatch):
    assert _run_lying_t(8401, 10, monkeypatch, None) >= 6


@pytest.mark.parametrize("how", ["down", "up"])
def test_reconstruction_terms_exact_with_single_reflector_blocks_under_a_worst_case_blas(how, monkeypatch):
    # b = 1: S̃ = fl(vᵀv) pushed to its window's edge, T = 2/S̃ (or perturbed): ν, σ_S, e_S and ε are nearly
    # tight (measured ε exact/bound 0.2–0.7; at n = 12 "down" leaves σ_S ≈ ‖v‖²(1 − 5u)), so a missing e_S or
    # t²e_S term shows.
    assert _run(8420 + len(how), 3, monkeypatch, how, blocks=(1,), min_k=11, max_k=13) >= 2
    assert _run_lying_t(8430 + len(how), 3, monkeypatch, how, blocks=(1,)) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_reconstruction_terms_exact_with_a_perturbed_core_sweep(seed, monkeypatch):
    _run_lying_t(8500 + seed, 40, monkeypatch, None if seed % 2 else "mixed", blocks=(1, 2, 3, 4, 32))
