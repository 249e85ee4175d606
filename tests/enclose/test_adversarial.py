"""Adversarial kernel checks (referee of issue 13): wrong LAPACK outputs, exact spectra at chunk boundaries.

References share no code with the kernel: exact spectra of matrices built from
dyadic orthogonal matrices with integer arithmetic (int64, checked), and
mpmath's SVD at 300 bits.
"""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.lapack

from certbound.enclose import CertificateWarning, enclose_singular_values, fperror
from certbound.enclose.product import enclose_singular_values_of_products


def _hadamard(n: int) -> np.ndarray:
    H = np.array([[1]], dtype=np.int64)
    while H.shape[0] < n:
        H = np.block([[H, H], [H, -H]])
    return H


def _block_hadamard(N: int, maxblock: int) -> tuple[np.ndarray, int]:
    """Integer M and t with M / 2^t orthogonal: Hadamard blocks of sizes 4^j (common denominator)."""
    sizes, left, b = [], N, maxblock
    while left:
        while b > left:
            b //= 4
        sizes.append(b)
        left -= b
    tb = int(round(np.log2(max(sizes)))) // 2
    M = np.zeros((N, N), dtype=np.int64)
    o = 0
    for b in sizes:
        M[o:o + b, o:o + b] = _hadamard(b) * 2 ** (tb - int(round(np.log2(b))) // 2)
        o += b
    return M, tb


def dyadic_orthogonal(N: int, rng: np.random.Generator, maxblock: int = 256) -> tuple[np.ndarray, int]:
    """Dense integer Q and t with Q / 2^t exactly orthogonal (two permuted block-Hadamard stages)."""
    M1, t1 = _block_hadamard(N, maxblock)
    M2, t2 = _block_hadamard(N, max(1, maxblock // 4))
    Q = M1[:, rng.permutation(N)] @ (M2 * rng.choice([-1, 1], N)[:, None]).T
    Q = Q[rng.permutation(N)][:, rng.permutation(N)]
    assert np.array_equal(Q @ Q.T, 4 ** (t1 + t2) * np.eye(N, dtype=np.int64))
    return Q, t1 + t2


def exact_matrix(m: int, n: int, s: np.ndarray, rng: np.random.Generator, maxblock: int = 256) -> np.ndarray:
    """The float matrix (Q1/2^t1)[:, :k] diag(s) (Q2/2^t2)[:, :k]ᵀ, exactly (checked in int64); σ = sorted |s|."""
    Q1, t1 = dyadic_orthogonal(m, rng, maxblock)
    Q2, t2 = dyadic_orthogonal(n, rng, maxblock)
    k = len(s)
    Wi = (Q1[:, :k] * s) @ Q2[:, :k].T
    assert np.abs(Wi).max() < 2**53  # every partial sum below is an integer < 2^53: float-exact
    Wf = (Q1[:, :k].astype(float) * s.astype(float)) @ Q2[:, :k].T.astype(float)
    assert np.array_equal(Wf.astype(np.int64), Wi)
    return np.ldexp(Wf, -(t1 + t2))


def _spectra(k: int, rng: np.random.Generator) -> list[np.ndarray]:
    decay = np.maximum(1, np.round(2**25 * np.arange(1, k + 1) ** -1.5)).astype(np.int64)
    clustered = rng.choice([0, 1, 2**12, 2**25, 2**25 - 1], k)
    equal = np.full(k, 12345, dtype=np.int64)
    return [decay * rng.choice([-1, 1], k), clustered, equal]


def _assert_contains(enc, true: np.ndarray, what) -> None:
    ok = (enc.lower <= true) & (true <= enc.upper)
    assert np.all(ok), (what, np.flatnonzero(~ok)[:5])


@pytest.mark.parametrize("shape", [(9, 9), (8, 13), (13, 5), (1, 17), (17, 1)])
@pytest.mark.parametrize("scale", [0, -1000, 990])
def test_exact_spectra_on_the_chunked_paths(shape, scale, monkeypatch):
    """CHUNK shrunk to 3: Lemmas 2.5, 3.1, 3.2' and G.1 chunked, 9 = 3·3 and 13, 17 not divisible."""
    monkeypatch.setattr(fperror, "CHUNK", 3)
    rng = np.random.default_rng(sum(shape) + abs(scale))
    m, n = shape
    for s in _spectra(min(m, n), rng):
        W = np.ldexp(exact_matrix(m, n, s, rng, maxblock=4), scale)
        true = np.ldexp(np.sort(np.abs(s).astype(float))[::-1], scale)
        for mode in ("fast", "gram", "auto", "tight"):
            enc = enclose_singular_values(W, mode=mode)
            assert enc.certified
            _assert_contains(enc, true, (shape, scale, mode))


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(513, 513), (512, 700), (257, 1025), (1025, 300), (767, 769)])
def test_exact_spectra_at_chunk_boundaries(shape):
    """The real CHUNK (256): sizes at and across the 2·CHUNK threshold, exact spectra."""
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    m, n = shape
    for s in _spectra(min(m, n), rng):
        W = exact_matrix(m, n, s, rng)
        true = np.sort(np.abs(s).astype(float))[::-1]
        for mode in ("fast", "gram", "auto"):
            enc = enclose_singular_values(W, mode=mode)
            assert enc.certified
            _assert_contains(enc, true, (shape, mode))


def test_exact_spectra_of_batched_heads():
    """A = Q₁[:, :d] diag(a) H, B = Q₂[:, :d] diag(b) H with H orthogonal: σ(ABᵀ) = sorted |a∘b| exactly."""
    rng = np.random.default_rng(13)
    m, n, d = 80, 96, 16
    Q1, t1 = dyadic_orthogonal(m, rng, 16)
    Q2, t2 = dyadic_orthogonal(n, rng, 16)
    H, th = dyadic_orthogonal(d, rng, 16)
    As, Bs, trues = [], [], []
    for j, cond in enumerate([1, 2**10, 2**18, 1]):
        a = rng.integers(2**18 // cond, 2**18 + 1, d) * rng.choice([-1, 1], d)
        b = rng.integers(2**18 // cond, 2**18 + 1, d)
        if j == 3:
            a[5] = 0  # rank d − 1: the Gram-factor route must decline, the QR route certify
        As.append(np.ldexp(((Q1[:, :d] * a) @ H).astype(float), -(t1 + th) + 300 * j))
        Bs.append(np.ldexp(((Q2[:, :d] * b) @ H).astype(float), -(t2 + th) - 200 * j))
        t = np.zeros(min(m, n))
        t[:d] = np.ldexp(np.sort(np.abs(a * b).astype(float))[::-1], 100 * j)
        trues.append(t)
    for mode in ("fast", "auto", "gram"):
        for enc, t in zip(enclose_singular_values_of_products(As, Bs, mode=mode), trues):
            assert enc.certified
            _assert_contains(enc, t, mode)


# --- wrong LAPACK outputs: Theorems R, G and Lemmas P, P-G hold for ANY X, s, Y / U, λ / Q, R / L, X --------


def _perturber(rng: np.random.Generator):
    hows = ["noise", "big", "flip", "shuffle", "zero", "tiny", "huge", None]

    def perturb(a):
        a = np.array(a, dtype=np.float64, copy=True)
        how = hows[rng.integers(0, len(hows))]
        if how == "noise":
            a += 1e-9 * rng.standard_normal(a.shape)
        elif how == "big":
            a += 1e-3 * rng.standard_normal(a.shape)
        elif how == "flip":
            a = -a
        elif how == "shuffle" and a.ndim and a.shape[-1] > 1:
            a = a[..., rng.permutation(a.shape[-1])]
        elif how in ("zero", "tiny", "huge") and a.size:
            a.flat[rng.integers(0, a.size)] = {"zero": 0.0, "tiny": 2.0**-1074, "huge": 1e300}[how]
        return a

    return perturb


def _mp_sv(M) -> list:
    with mpmath.workprec(300):
        if M.rows < M.cols:
            M = M.T
        s = mpmath.svd_r(M, compute_uv=False)
        return sorted((abs(s[i]) for i in range(min(M.rows, M.cols))), reverse=True)


def _mp(a: np.ndarray):
    return mpmath.matrix([[mpmath.mpf(float(x)) for x in r] for r in a])


def _contains_mp(enc, ref, rank: int | None = None) -> bool:
    with mpmath.workprec(400):
        for i, t in enumerate(ref):
            t = t if rank is None or i < rank else mpmath.mpf(0)
            if not (mpmath.mpf(float(enc.lower[i])) <= t
                    and (not np.isfinite(enc.upper[i]) or t <= mpmath.mpf(float(enc.upper[i])))):
                return False
    return True


def _wrong_lapack_cases(n_cases: int, seed: int, monkeypatch) -> None:
    rng = np.random.default_rng(seed)
    perturb = _perturber(rng)
    real = {"svd": np.linalg.svd, "eigh": np.linalg.eigh, "qr": np.linalg.qr, "chol": np.linalg.cholesky,
            "inv": np.linalg.inv, "ssvd": scipy.linalg.svd, "dgesdd": scipy.linalg.lapack.dgesdd}

    def svd(a, *args, **kw):
        out = real["svd"](a, *args, **kw)
        return out if kw.get("compute_uv", True) is False else tuple(perturb(x) for x in out)

    def ssvd(a, *args, **kw):
        return tuple(perturb(x) for x in real["ssvd"](a, *args, **kw))

    def dgesdd(a, *args, **kw):  # the dense kernel's gesdd (svd._gesdd_thin)
        u, s, vt, info = real["dgesdd"](a, *args, **kw)
        return perturb(u), perturb(s), perturb(vt), info

    monkeypatch.setattr(np.linalg, "svd", svd)
    monkeypatch.setattr(scipy.linalg, "svd", ssvd)
    monkeypatch.setattr(scipy.linalg.lapack, "dgesdd", dgesdd)
    monkeypatch.setattr(np.linalg, "eigh", lambda a, *p, **k: tuple(perturb(x) for x in real["eigh"](a, *p, **k)))
    monkeypatch.setattr(np.linalg, "qr", lambda a, *p, **k: tuple(perturb(x) for x in real["qr"](a, *p, **k)))
    monkeypatch.setattr(np.linalg, "cholesky", lambda a, *p, **k: perturb(real["chol"](a, *p, **k)))
    monkeypatch.setattr(np.linalg, "inv", lambda a, *p, **k: perturb(real["inv"](a, *p, **k)))
    for it in range(n_cases):
        monkeypatch.setattr(fperror, "CHUNK", [256, 2][it % 2])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if it % 2 == 0:
                m, n = int(rng.integers(1, 7)), int(rng.integers(1, 7))
                W = rng.standard_normal((m, n)) * 2.0 ** int(rng.integers(-300, 300))
                ref = _mp_sv(_mp(W))
                for mode in ("fast", "gram", "auto", "tight"):
                    enc = enclose_singular_values(W, mode=mode)
                    assert _contains_mp(enc, ref), (it, mode, enc.mode)
                    assert enc.certified or any(issubclass(w.category, CertificateWarning) for w in caught)
            else:
                m, n, d = int(rng.integers(1, 8)), int(rng.integers(1, 8)), int(rng.integers(1, 5))
                As = [rng.standard_normal((m, d)) * 2.0 ** int(rng.integers(-100, 100)) for _ in range(3)]
                Bs = [rng.standard_normal((n, d)) for _ in range(3)]
                refs = [_mp_sv(_mp(A) * _mp(B).T) for A, B in zip(As, Bs)]
                for mode in ("fast", "auto", "gram", "tight"):
                    for enc, ref in zip(enclose_singular_values_of_products(As, Bs, mode=mode), refs):
                        assert _contains_mp(enc, ref, rank=d), (it, mode)


def test_wrong_lapack_outputs_never_give_wrong_enclosures(monkeypatch):
    """Perturbed, sign-flipped, permuted (unsorted), zeroed, subnormal and huge LAPACK outputs."""
    _wrong_lapack_cases(24, 0, monkeypatch)


@pytest.mark.slow
def test_wrong_lapack_outputs_sweep(monkeypatch):
    _wrong_lapack_cases(600, 1, monkeypatch)


def test_tight_mode_falls_back_when_lapack_returns_huge_entries(monkeypatch):
    """Tight mode's 2^256 input limit must make the certificate fail over, not crash the call."""
    real = np.linalg.svd

    def huge(a, *args, **kw):
        U, s, Vt = real(a, *args, **kw)
        U = U.copy()
        U[0, 0] = 1e300
        return U, s, Vt

    real_dgesdd = scipy.linalg.lapack.dgesdd

    def huge_dgesdd(a, *args, **kw):  # the dense kernel's gesdd (svd._gesdd_thin)
        u, s, vt, info = real_dgesdd(a, *args, **kw)
        u = u.copy()
        u[0, 0] = 1e300
        return u, s, vt, info

    monkeypatch.setattr(np.linalg, "svd", huge)
    monkeypatch.setattr(scipy.linalg.lapack, "dgesdd", huge_dgesdd)
    W = np.diag([3.0, 2.0, 1.0])
    enc = enclose_singular_values(W, mode="tight")  # gesdd garbage → gesvd (scipy, unpatched) certifies
    assert enc.certified and np.all(enc.lower <= [3, 2, 1]) and np.all([3, 2, 1] <= enc.upper)
