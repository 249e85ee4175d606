"""Referee tests of the Theorem G route (modes ``gram`` and ``auto``) against exact references.

Two references, neither sharing code with certbound:

* matrices with singular values known exactly by construction (:mod:`tests.enclose.exact_known`:
  ``W = Q₁ diag(d) Q₂ᵀ`` with integer orthogonal-column factors), where a ball [ℓ, h] is checked
  by ``ℓ² ≤ σᵢ² ≤ h²`` in Fractions — cheap enough for medium sizes (up to 64×96), chunked
  Gram products and row blocks;
* Sylvester inertia (:mod:`tests.enclose.exact_inertia`) for arbitrary small matrices.

Inputs aimed at Theorem G and its float evaluation: subnormal entries, 2^±500 … 2^-1074 and
near-overflow scales, the ends of the unscaled range (2^±256), rank-deficient matrices whose
Gram matrix has exact zero eigenvalues (LAPACK returns ±tiny λ: the negative-λ branch),
clustered and repeated σ, graded spectra, and ``eigh`` outputs perturbed, unsorted, negated or
sign-flipped on purpose. The float evaluation of Theorem G (``theorem_g_intervals`` and any
float route) is checked end by end against exact rationals. No tolerance anywhere.

Fast cases run by default; ``-m slow`` runs many more seeds.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.lapack
from flint import arb

from certbound.enclose import enclose_singular_values, enclose_singular_values_of_products, fperror, gram
from certbound.enclose import product as product_mod
from tests.enclose.exact_inertia import fractions_of, lower_fraction, singular_value_in, smaller_gram, upper_fraction
from tests.enclose.exact_known import known_matrix, known_product

GRAM_MODES = ("gram", "auto")
JUST_BELOW = 1 - 2.0**-53


# ---------------------------------------------------------------- checks


def _ends(x) -> tuple[Fraction, Fraction | None]:
    lo, hi = lower_fraction(x), upper_fraction(x)
    assert lo is not None, f"ball unbounded below: {x}"
    return max(lo, Fraction(0)), hi


def check_known(enc, spec, what="") -> None:
    """Every ball and float end of ``enc`` contains the exactly known σᵢ (ℓ² ≤ σᵢ² ≤ h²)."""
    assert len(enc.sigma) == len(spec) == len(enc.lower) == len(enc.upper)
    for i, x in enumerate(enc.sigma):
        s2 = spec.sq(i)
        lo, hi = _ends(x)
        if hi is None:
            assert not enc.certified, (what, i)
        else:
            assert hi >= 0 and hi * hi >= s2, ("σ above the ball", what, enc.mode, i, str(x), s2)
        assert lo * lo <= s2, ("σ below the ball", what, enc.mode, i, str(x), s2)
        fl, fu = float(enc.lower[i]), float(enc.upper[i])
        assert fl >= 0 and Fraction(fl) ** 2 <= s2, ("float lower end above σ", what, enc.mode, i, fl, s2)
        if math.isfinite(fu):
            assert Fraction(fu) ** 2 >= s2, ("float upper end below σ", what, enc.mode, i, fu, s2)
        # the float ends lie inside the ball's ends (or the ball is the hull of them)
        if hi is not None and math.isfinite(fu):
            assert Fraction(fl) <= hi and lo <= Fraction(fu)


def check_inertia(W_exact: np.ndarray, enc) -> None:
    """Sylvester inertia: every ball and float end contains σᵢ of the exact stored matrix."""
    m, n = W_exact.shape
    G = smaller_gram(fractions_of(W_exact))
    for i in range(min(m, n)):
        lo, hi = _ends(enc.sigma[i])
        if hi is None:
            assert not enc.certified
        else:
            assert singular_value_in(G, i, lo, hi), (enc.mode, i, str(enc.sigma[i]), W_exact.tolist())
        fu = float(enc.upper[i])
        hf = Fraction(fu) if math.isfinite(fu) else Fraction(10) ** 700
        assert singular_value_in(G, i, Fraction(float(enc.lower[i])), hf), (enc.mode, i, W_exact.tolist())


# ------------------------------------------------------- adversarial eigh


def install_wrong_eigh(rng, monkeypatch, p_wrong: float = 0.6) -> None:
    """scipy's ``eigh`` and the LAPACK symmetric eigensolvers return perturbed/unsorted/negated/flipped results."""

    def spoil(lam, U):
        if rng.random() > p_wrong:
            return lam, U
        lam, U = np.array(lam, copy=True), np.array(U, copy=True)
        how = int(rng.integers(0, 8))
        k = len(lam)
        if how == 0:
            lam *= 1 + 1e-6 * rng.standard_normal(k)
        elif how == 1 and k > 1:
            p = rng.permutation(k)
            lam, U = lam[p], U[:, p]
        elif how == 2:  # zero eigenvalues reported as negative (or positive) tiny values
            j = int(np.argmin(np.abs(lam)))
            lam[j] = -abs(lam[j]) - float(rng.choice([1e-300, 1e-20, 5e-324])) * max(1.0, float(np.max(np.abs(lam))))
        elif how == 3 and k:
            U[:, int(rng.integers(0, k))] *= -1
        elif how == 4:
            U += 1e-10 * rng.standard_normal(U.shape)
        elif how == 5:
            lam = -lam  # garbage: must be refused or still enclose
        elif how == 6 and k:
            U[int(rng.integers(0, k)), int(rng.integers(0, k))] = float(rng.choice([0.0, 5e-324, 2.0**-500]))
        else:
            lam = lam + float(rng.choice([1e-300, -1e-300, 1e-12])) * max(1.0, float(np.max(np.abs(lam), initial=0)))
        return lam, U

    orig_eigh = scipy.linalg.eigh

    def eigh(a, *args, **kw):
        out = orig_eigh(a, *args, **kw)
        if isinstance(out, tuple) and len(out) == 2:
            return spoil(*out)
        return out

    monkeypatch.setattr(scipy.linalg, "eigh", eigh)
    for name in ("dsyevd", "dsyevr", "dsyev"):
        orig = getattr(scipy.linalg.lapack, name, None)
        if orig is None:
            continue

        def wrapped(*args, __orig=orig, **kw):
            out = __orig(*args, **kw)
            if isinstance(out, tuple) and len(out) >= 3 and np.ndim(out[0]) == 1 and np.ndim(out[1]) == 2:
                w, v = spoil(out[0], out[1])
                return (w, v, *out[2:])
            return out

        monkeypatch.setattr(scipy.linalg.lapack, name, wrapped)


def _random_internals(rng, monkeypatch) -> None:
    """Chunked Gram SYRKs (Lemma 2.5) and row blocks of |W| at tiny sizes."""
    monkeypatch.setattr(fperror, "CHUNK", int(rng.choice([256, 1, 2, 3, 5])))
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MIN_COLUMNS", int(rng.choice([64, 1, 2])))
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_MAX_COLUMNS", int(rng.choice([1024, 1, 3])))
    monkeypatch.setattr(fperror, "RESIDUAL_BLOCK_BYTES", int(rng.choice([2**23, 8, 40])))
    monkeypatch.setattr(gram, "BLOCK_ENTRIES", int(rng.choice([1 << 18, 1, 3, 7])))
    _gram_chunks(monkeypatch, int(rng.choice([128, 1, 2, 3])), int(rng.choice([128, 1, 2, 3])),
                 int(rng.choice([128, 1, 2, 3])))


def _gram_chunks(monkeypatch, gram_chunk: int, alpha_chunk: int, residual_chunk: int) -> None:
    """The Gram route's chunk lengths (Lemma 2.5): Ĝ's column chunks, UᵀU's row chunks, the residual's inner chunks."""
    monkeypatch.setattr(gram, "ALPHA_CHUNK", alpha_chunk)
    monkeypatch.setattr(gram, "RESIDUAL_CHUNK", residual_chunk)
    # rounded_gram's default chunk (GRAM_CHUNK) is bound at definition: wrap it
    orig = gram.rounded_gram.__wrapped__ if hasattr(gram.rounded_gram, "__wrapped__") else gram.rounded_gram

    def rounded_gram(Ws, extra_residual=None, chunk=gram_chunk):
        return orig(Ws, extra_residual, chunk=chunk)

    rounded_gram.__wrapped__ = orig
    monkeypatch.setattr(gram, "rounded_gram", rounded_gram)


# --------------------------------------------------- whole enclosures, known σ


def _layout(rng, W):
    t = rng.choice(["C", "F", "T", "view"])
    if t == "F":
        return np.asfortranarray(W)
    if t == "T":
        return np.ascontiguousarray(W.T).T  # F-ordered view of a C array
    if t == "view":
        big = np.zeros((W.shape[0], 2 * W.shape[1]))
        big[:, ::2] = W
        return big[:, ::2]
    return W.copy()


def _check_known_enclosures(seed: int, cases: int, monkeypatch, max_dim: int, wrong_eigh: bool) -> int:
    rng = np.random.default_rng(seed)
    if wrong_eigh:
        install_wrong_eigh(rng, monkeypatch)
    done = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while done < cases:
            _random_internals(rng, monkeypatch)
            m, n = int(rng.integers(1, max_dim + 1)), int(rng.integers(1, max_dim + 1))
            if rng.random() < 0.5:
                m, n = min(m, n), max(m, n) * int(rng.integers(1, 4))  # wide, as the FFN matrices
            got = known_matrix(rng, m, n)
            if got is None:
                continue
            W, spec = got
            Win = _layout(rng, W)
            before = Win.copy()
            for mode in GRAM_MODES:
                enc = enclose_singular_values(Win, mode=mode)
                assert np.array_equal(Win, before), "the caller's array was written"
                check_known(enc, spec, (m, n, mode))
            done += 1
    return done


def test_gram_auto_contain_known_singular_values(monkeypatch):
    _check_known_enclosures(401, 60, monkeypatch, max_dim=12, wrong_eigh=False)


def test_gram_auto_contain_known_singular_values_under_wrong_eigh(monkeypatch):
    _check_known_enclosures(402, 40, monkeypatch, max_dim=10, wrong_eigh=True)


def test_gram_auto_known_medium(monkeypatch):
    # Medium sizes: chunked SYRKs with the real CHUNK at n > 512 and the row-block matvecs.
    rng = np.random.default_rng(403)
    shapes = [(32, 600), (600, 24), (48, 48), (16, 1030)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m, n in shapes:
            got = None
            while got is None:
                got = known_matrix(rng, m, n, scale_exponent=int(rng.choice([0, -500, 500, -1060])))
            W, spec = got
            for mode in GRAM_MODES:
                check_known(enclose_singular_values(W, mode=mode), spec, (m, n, mode))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_gram_auto_contain_known_singular_values_sweep(seed, monkeypatch):
    _check_known_enclosures(4100 + seed, 400, monkeypatch, max_dim=24 if seed % 2 else 8, wrong_eigh=bool(seed % 3 == 1))


# ------------------------------------------------ whole enclosures, inertia


def _adversarial(rng, m, n) -> np.ndarray:
    kind = int(rng.integers(0, 11))
    k = min(m, n)
    if kind == 0:
        W = rng.standard_normal((m, n))
    elif kind == 1:  # low rank over the rationals: exact zero eigenvalues of the Gram matrix
        r = int(rng.integers(0, k))
        W = (rng.integers(-3, 4, (m, r)) @ rng.integers(-3, 4, (r, n))).astype(np.float64)
    elif kind == 2:  # rank one plus tiny: λ's far below the Weyl shift c
        W = np.outer(rng.standard_normal(m), rng.standard_normal(n))
        W = W + 2.0 ** -int(rng.integers(20, 80)) * rng.standard_normal((m, n))
    elif kind == 3:  # clustered: near-orthogonal rows of equal norm
        q, _ = np.linalg.qr(rng.standard_normal((max(m, n), max(m, n))))
        W = q[:m, :n].copy()
        W = W * (1 + 2.0 ** -int(rng.integers(30, 52)) * rng.standard_normal(W.shape))
    elif kind == 4:
        W = rng.standard_normal((m, n)) * np.ldexp(1.0, rng.integers(-1074, 1000, (m, n)))
    elif kind == 5:
        W = rng.standard_normal((m, n)) * np.ldexp(1.0, rng.choice([-500, 0, 500], m))[:, None]
    elif kind == 6:  # subnormal
        W = rng.integers(-50, 50, (m, n)) * 5e-324
    elif kind == 7:  # near overflow
        W = rng.standard_normal((m, n)) * 2.0**1021
    elif kind == 8:  # the max at the ends of Theorem G's unscaled range
        W = rng.uniform(-1, 1, (m, n))
        W = W / np.max(np.abs(W)) * 2.0 ** (int(rng.choice([-256, -255, 255, 256, -257])) - 1)
        W = W * float(rng.choice([1.0, 1.999, JUST_BELOW, 2.0]))
    elif kind == 9:  # a zero row / column and duplicates: zero eigenvalues
        W = rng.standard_normal((m, n))
        W[int(rng.integers(0, m))] = 0.0
        if m > 1:
            W[0] = W[-1]
    else:  # entries 2^±k with one huge row: the Gram matrix's small eigenvalues lost in its rounding
        W = rng.standard_normal((m, n))
        W[0] *= 2.0**60
    W = np.where(np.isfinite(W), W, 1.0)
    return W


def _check_inertia_enclosures(seed: int, cases: int, monkeypatch, wrong_eigh: bool) -> None:
    rng = np.random.default_rng(seed)
    if wrong_eigh:
        install_wrong_eigh(rng, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            _random_internals(rng, monkeypatch)
            m, n = int(rng.integers(1, 7)), int(rng.integers(1, 9))
            W = _adversarial(rng, m, n)
            Win = _layout(rng, W) if rng.random() < 0.8 else W.astype(np.float32) if np.all(np.abs(W) < 1e38) else W
            W_exact = np.asarray(Win, dtype=np.float64)
            for mode in GRAM_MODES:
                check_inertia(W_exact, enclose_singular_values(Win, mode=mode))


def test_gram_auto_inertia(monkeypatch):
    _check_inertia_enclosures(411, 40, monkeypatch, wrong_eigh=False)


def test_gram_auto_inertia_under_wrong_eigh(monkeypatch):
    _check_inertia_enclosures(412, 30, monkeypatch, wrong_eigh=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_gram_auto_inertia_sweep(seed, monkeypatch):
    _check_inertia_enclosures(4200 + seed, 500, monkeypatch, wrong_eigh=bool(seed % 2))


# --------------------------------------------------------- Theorem G, end by end


def _exact_arb(q: Fraction) -> arb:
    return arb(q.numerator) / q.denominator if q.denominator == 1 else arb(q.numerator) * arb(2) ** -(
        q.denominator.bit_length() - 1)


def theorem_g_ends_ok(lam: float, a: Fraction, b: Fraction, e: Fraction, t: int, lo: Fraction, hi: Fraction) -> bool:
    """[lo, hi] ⊇ 2^t·[√max(θ⁻λ − c, 0), √(θ⁺λ + c)] with c = b + e, decided exactly."""
    L, H = lo / Fraction(2) ** t, hi / Fraction(2) ** t
    q = Fraction(lam)
    lo_sq = (1 - a) * q - (b + e) if q >= 0 else (1 + a) * q - (b + e)
    hi_sq = (1 + a) * q + (b + e) if q >= 0 else (1 - a) * q + (b + e)
    lo_ok = L <= 0 or L * L <= lo_sq
    hi_ok = H >= 0 and H * H >= hi_sq
    return lo_ok and hi_ok


def _theorem_g_tight_case(rng):
    """α, β + e zero or a few units of 2⁻⁵³ / 2⁻¹⁰⁷⁴ (no slack from them), λ of full mantissa near powers of
    four, and scales that put the ends just above, at or below 2⁻¹⁰²² or deep in the subnormals."""
    k = int(rng.integers(1, 7))
    lam = np.ldexp(rng.uniform(1, 4, k), 2 * rng.integers(-3, 4, k))
    if rng.random() < 0.3:
        lam = np.ldexp(1.0 + rng.integers(-4, 5, k) * 2.0**-52, 2 * rng.integers(-3, 4, k))
    a = Fraction(int(rng.choice([0, 0, 1, 3])), 2**53)
    b = Fraction(int(rng.choice([0, 0, 1, 7])), 2**1074)
    e = Fraction(int(rng.choice([0, 0, 1])), 2**1074)
    t = int(rng.choice([0, -1022, -1023, -1021, -1024, -1030, -1050, -1060, -1070, -1073, 1000]))
    if rng.random() < 0.5:  # σ within a few ulps of 2⁻¹⁰²² after scaling: balls straddling the normal range
        j = int(rng.integers(-3, 4))
        lam = np.ldexp(1.0 + rng.integers(-12, 6, k) * 2.0**-52, 2 * j)
        a = Fraction(int(rng.integers(0, 9)), 2**53)
        if rng.random() < 0.4:  # wide balls: the lower end deep in the subnormals, the upper one normal
            a = Fraction(float(rng.uniform(0.3, 1))) * (1 - Fraction(1, 2**60))
        t = -1022 - j
    elif rng.random() < 0.3:  # c just below λ₍₁₎: ℓ₁ tiny (its end subnormal after scaling), h₁ normal
        b = Fraction(float(np.max(lam))) * (1 - Fraction(1, 2 ** int(rng.integers(1, 80))))
        t = int(rng.choice([-1022, -1021, -1020, -1000]))
    return lam, a, b, e, t


def _theorem_g_case(rng):
    if rng.random() < 0.4:
        return _theorem_g_tight_case(rng)
    k = int(rng.integers(1, 7))
    lam = rng.uniform(-0.1, 2, k) * np.ldexp(1.0, rng.integers(-80, 3, k))
    how = rng.random()
    if how < 0.2:
        lam[rng.random(k) < 0.5] = float(rng.choice([0.0, -0.0, 5e-324, -5e-324, 2.0**-1022]))
    elif how < 0.3:
        lam = lam * 2.0 ** float(rng.choice([-1000, -1070, 900, 1000]))
    elif how < 0.4:  # λ of full mantissa around a power of four (√ exact or just off)
        lam = np.ldexp(1.0 + rng.integers(-3, 4, k) * 2.0**-52, 2 * rng.integers(-10, 10, k))
    a = Fraction(float(rng.uniform(0, 1))) * Fraction(2) ** int(rng.choice([-52, -40, -10, -1, 0])) * Fraction(
        int(rng.choice([1, 1, 0])))
    if a >= 1:
        a = Fraction(1) - Fraction(2) ** -53
    b = Fraction(float(rng.uniform(0, 1))) * Fraction(2) ** int(rng.choice([-1074, -1000, -60, -52, -10, 0]))
    e = Fraction(float(rng.uniform(0, 1))) * Fraction(2) ** int(rng.choice([-1074, -60, -52, -30]))
    if rng.random() < 0.2:
        b = Fraction(0)
    if rng.random() < 0.2:
        e = Fraction(0)
    t = int(rng.choice([0, 0, 0, 3, -3, -500, -1000, -1060, 500, 1000]))
    return lam, a, b, e, t


def check_theorem_g_function(fn, seed: int, cases: int) -> int:
    """``fn(lam, alpha, beta, e, t)`` (Theorem G's contract) against exact rationals; returns the number checked."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(cases):
        lam, a, b, e, t = _theorem_g_case(rng)
        out = fn(lam, _exact_arb(a), _exact_arb(b), _exact_arb(e), t)
        if out is None:
            continue  # refusing is always sound (the caller falls back)
        order = sorted((float(x) for x in lam), reverse=True)
        assert len(out) == len(order)
        for x, li in zip(out, order):
            lo, hi = lower_fraction(x), upper_fraction(x)
            assert lo is not None and hi is not None
            assert theorem_g_ends_ok(li, a, b, e, t, lo, hi), (li, a, b, e, t, str(x))
            checked += 1
        for name in ("lower", "upper"):
            if not hasattr(out, name):
                break
        else:
            for lf, hf, li in zip(out.lower, out.upper, order):
                assert theorem_g_ends_ok(li, a, b, e, t, Fraction(float(lf)), Fraction(float(hf))), (li, a, b, e, t)
    return checked


def _theorem_g_functions():
    fns = {"theorem_g_intervals": gram.theorem_g_intervals}
    for name in dir(gram):  # a float route of Theorem G, whatever its name (theorem_g_float_bounds, …)
        if name.startswith("theorem_g") and name != "theorem_g_intervals" and callable(getattr(gram, name)):
            fns[name] = getattr(gram, name)
    return fns


@pytest.mark.parametrize("name", sorted(_theorem_g_functions()))
def test_theorem_g_ends_exact(name):
    assert check_theorem_g_function(_theorem_g_functions()[name], 31, 500) > 500


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_theorem_g_functions()))
def test_theorem_g_ends_exact_sweep(name):
    check_theorem_g_function(_theorem_g_functions()[name], 32, 30000)


# ------------------------------------------------------ per-head products


def _check_known_products(seed: int, cases: int, modes, monkeypatch) -> None:
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            _random_internals(rng, monkeypatch)
            m, n, dd = int(rng.integers(1, 20)), int(rng.integers(1, 20)), int(rng.integers(1, 6))
            h = int(rng.integers(1, 5))
            e = (int(rng.choice([0, 0, -300, -600, 300, -540])), int(rng.choice([0, 0, -300, 200, -540])))
            items = [known_product(rng, m, n, dd, e) for _ in range(h)]
            items = [t for t in items if t is not None]
            if not items:
                continue
            As, Bs = [t[0] for t in items], [t[1] for t in items]
            for mode in modes:
                for enc, (_, _, spec) in zip(enclose_singular_values_of_products(As, Bs, mode=mode), items):
                    check_known(enc, spec, ("product", mode))


def test_products_contain_known_singular_values(monkeypatch):
    _check_known_products(421, 40, ("auto", "gram", "fast"), monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_products_contain_known_singular_values_sweep(seed, monkeypatch):
    _check_known_products(4300 + seed, 400, ("auto", "gram", "fast", "tight"), monkeypatch)


# -------------------------------------- β: the rounding error of Ĝ itself


def _exact_small_gram(W: np.ndarray) -> list:
    """``W Wᵀ`` (or ``WᵀW``, the smaller) in exact integer arithmetic: entries m·2^e with one common e."""
    if W.shape[0] > W.shape[1]:
        W = W.T
    mant, ex = np.frexp(W)  # W = mant·2^ex, mant·2^53 an integer
    E = int(np.min(ex[W != 0])) - 53 if np.any(W) else 0
    ints = np.array([[int(Fraction(float(x)) / Fraction(2) ** E) for x in row] for row in W], dtype=object)
    P = ints.dot(ints.T)
    scale = Fraction(2) ** (2 * E)
    return [[Fraction(int(v)) * scale for v in row] for row in P]


@pytest.mark.parametrize("n", [1200, 2500])
def test_gram_rounding_of_long_same_sign_dot_products_is_covered(n, monkeypatch):
    # One or two rows of n same-sign full-mantissa entries, Ĝ as a running sum of many chunk SYRKs:
    # fl(WWᵀ) then carries an accumulated rounding error of tens of units in the last place, far more
    # than e's γ_{b+1}ρ(N_U) and α's terms (eigh of a 1×1 or 2×2 matrix is nearly exact): only
    # β = γ_k‖|W||W|ᵀ‖₂ + 4nmη covers it. The test asserts that it did exercise such an error.
    rng = np.random.default_rng(n)
    worst = Fraction(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for trial in range(8):
            c = [1, 3, 1, 7, 3, 1, 128, 2][trial]
            _gram_chunks(monkeypatch, c, c, c)
            m = 1 + trial % 2
            W = 1 + rng.integers(1, 2**52, (m, n)) * 2.0**-52
            W = W * float(rng.choice([1.0, 2.0**-530, 2.0**200, 2.0**-1000]))
            if trial % 3 == 2:
                W = W.T.copy()  # tall: its Gram matrix is WᵀW
            G = _exact_small_gram(W)
            Gh, _ = gram.rounded_gram(W if W.shape[0] <= W.shape[1] else W.T)
            worst = max(worst, abs(Fraction(float(Gh[0, 0])) - G[0][0]) / G[0][0])
            for mode in GRAM_MODES:
                enc = enclose_singular_values(W, mode=mode)
                for i in range(min(W.shape)):
                    lo, hi = _ends(enc.sigma[i])
                    assert hi is not None and singular_value_in(G, i, lo, hi), (mode, n, trial, i, str(enc.sigma[i]))
    assert worst > 8 * Fraction(2) ** -53, float(worst)  # the rounding of Ĝ mattered


# ------------------------------------------ per-head products, inertia


def _factor_pair(rng, m, n, d):
    """Thin factors for Lemma P / P-G: well and ill conditioned, scaled, near-dependent, integer, subnormal."""
    kind = int(rng.integers(0, 8))
    A, B = rng.standard_normal((m, d)), rng.standard_normal((n, d))
    if kind == 1:  # graded columns: Gram factors near the GRAM_FACTOR_MAX_ALPHA threshold or beyond
        A = A * np.ldexp(1.0, rng.integers(-12, 1, d))[None, :]
    elif kind == 2 and d > 1:  # nearly dependent columns
        A[:, -1] = A[:, 0] * (1 + 2.0 ** -int(rng.integers(10, 40))) + 2.0 ** -int(rng.integers(20, 50)) * A[:, -1]
    elif kind == 3:
        A, B = rng.integers(-2, 3, (m, d)).astype(float), rng.integers(-2, 3, (n, d)).astype(float)
    elif kind == 4:
        A = A * 2.0 ** float(rng.choice([-500, 500, -1000, 300]))
        B = B * 2.0 ** float(rng.choice([-500, 200, -60]))
    elif kind == 5:  # subnormal entries: inexact power-of-two scaling
        A = np.where(rng.random((m, d)) < 0.5, A * 2.0**-1070, A * 2.0**-1030)
    elif kind == 6:  # orthonormal-ish columns: α tiny, the P-G route
        q, _ = np.linalg.qr(rng.standard_normal((max(m, d), max(m, d))))
        A = q[:m, :d] * float(rng.choice([1.0, 2.0**-300, 3.0]))
    if rng.random() < 0.2:
        A[:, int(rng.integers(0, d))] = 0.0
    A = np.where(np.isfinite(A), A, 1.0)
    return A, B


def _check_inertia_products(seed: int, cases: int, monkeypatch, modes=("auto", "gram", "fast")) -> None:
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(cases):
            _random_internals(rng, monkeypatch)
            m, n, d = int(rng.integers(1, 7)), int(rng.integers(1, 7)), int(rng.integers(1, 5))
            h = int(rng.integers(1, 5))
            pairs = [_factor_pair(rng, m, n, d) for _ in range(h)]
            if rng.random() < 0.2:  # another shape in the same call: two stacks
                pairs.append(_factor_pair(rng, n, m, d))
            As, Bs = [p[0] for p in pairs], [p[1] for p in pairs]
            runs = [(mode, enclose_singular_values_of_products(As, Bs, mode=mode), None) for mode in modes]
            encs, norms = product_mod.enclose_singular_values_and_norms_21_of_products(As, Bs, mode="auto")
            runs.append(("auto+norms", encs, norms))
            for mode, encs, norms in runs:
                for j, ((A, B), enc) in enumerate(zip(pairs, encs)):
                    P = [[sum((a * b for a, b in zip(ra, rb)), Fraction(0)) for rb in fractions_of(B)]
                         for ra in fractions_of(A)]
                    if norms is not None:
                        _check_norm_21(norms[j], P, (A, B))
                    G = smaller_gram(P)
                    for i in range(min(A.shape[0], B.shape[0])):
                        lo, hi = _ends(enc.sigma[i])
                        if hi is None:
                            assert not enc.certified
                            continue
                        assert singular_value_in(G, i, lo, hi), (mode, i, str(enc.sigma[i]), A.tolist(), B.tolist())
                        fu = float(enc.upper[i])
                        assert singular_value_in(G, i, Fraction(float(enc.lower[i])),
                                                 Fraction(fu) if math.isfinite(fu) else Fraction(10) ** 700)


def _check_norm_21(ball, P, what) -> None:
    """The ball contains ‖P‖_{2,1} (P an exact Fraction matrix), mpmath at 700 bits up to 2^-550 relative."""
    import mpmath

    from tests.enclose.exact_known import contains_mp, mp_of

    with mpmath.workprec(700):
        t = mpmath.fsum(mpmath.sqrt(mp_of(sum((x * x for x in col), Fraction(0)))) for col in zip(*P))
        lo, hi = lower_fraction(ball), upper_fraction(ball)
        assert lo is None or lo >= 0 or hi is None, ("negative lower end of a norm", str(ball))
        assert contains_mp(lo, hi, t, 550), ("‖AB^T‖_{2,1} outside its ball", str(ball), mpmath.nstr(t, 20), what)


def test_products_inertia(monkeypatch):
    _check_inertia_products(431, 30, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_products_inertia_sweep(seed, monkeypatch):
    _check_inertia_products(4400 + seed, 400, monkeypatch, modes=("auto", "gram", "fast", "tight"))


# ------------------- σ at the bottom of the normal range: ldexp of the float ends back


@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, -2, 5])
def test_singular_values_at_the_smallest_normal_are_enclosed(k, monkeypatch):
    # σ = (1 + k·2⁻⁵²)·2⁻¹⁰²² exactly (k < 0: just below, subnormal): the float ends are
    # computed on scaled data and brought back with ldexp; an end scaled to just below 2⁻¹⁰²² can
    # tie and round *up* to 2⁻¹⁰²² (proofs/coq/TheoremRFloat.v's counterexample for a lemma-level
    # `lo2 ≥ 2⁻¹⁰²²` test). The lower ends must stay ≤ σ whatever the route (dense modes, Lemma P, P-G).
    from tests.enclose.exact_known import KnownSpectrum

    top = Fraction(1) + Fraction(k, 2**52)  # k < 0: σ = 2⁻¹⁰²² − |k|·2⁻¹⁰⁷⁴, subnormal
    sig = top * Fraction(2) ** -1022
    rng = np.random.default_rng(700 + k)
    for m, n in ((1, 1), (2, 3), (3, 2), (4, 4)):
        r = min(m, n)
        d = [sig] + [sig * 2 ** int(rng.integers(0, 3)) for _ in range(r - 1)]
        W = np.zeros((m, n))
        pm, pn = rng.permutation(m), rng.permutation(n)
        for l in range(r):
            W[pm[l], pn[l]] = float(d[l]) * float(rng.choice([-1.0, 1.0]))
        assert all(Fraction(float(x)) == x for x in d)
        spec = KnownSpectrum(Fraction(1), d, r)
        for mode in ("fast", "tight", "gram", "auto"):
            check_known(enclose_singular_values(W, mode=mode), spec, ("dense", mode, k))
        # products: A = P diag(a), B = P' diag(b) with a·b = d, both factors normal (exact scaling)
        a = [Fraction(2) ** -511 * (x / sig) * top for x in d]
        b = [x / y for x, y in zip(d, a)]
        A, B = np.zeros((m, r)), np.zeros((n, r))
        for l in range(r):
            A[pm[l], l], B[pn[l], l] = float(a[l]), float(b[l])
        assert all(Fraction(float(x)) == x for x in a + b)
        for mode in ("auto", "fast", "gram"):
            (enc,) = enclose_singular_values_of_products([A], [B], mode=mode)
            check_known(enc, spec, ("product", mode, k))


# ------------------------------------- e: Lemma 3.4, the symmetric residual


def _symmetric_residual_case(rng, m, r, kind=None):
    U = rng.standard_normal((m, r))
    lam = rng.standard_normal(r) * float(rng.choice([1.0, 2.0**-600, 2.0**300]))
    kind = int(rng.integers(0, 7)) if kind is None else kind
    if kind == 0:  # one heavy row: ‖N_U‖_∞ ≫ ρ(N_U)
        U[0] *= 2.0 ** int(rng.integers(3, 30))
    elif kind == 1:  # graded rows
        U *= np.ldexp(1.0, rng.integers(-20, 20, (m, 1)))
    elif kind in (2, 5, 6):
        U = rng.integers(-3, 4, (m, r)) * 2.0**-10
        lam = rng.integers(-3, 4, r).astype(float)
    with np.errstate(all="ignore"):
        P = U @ (lam[:, None] * U.T)
    if kind == 3:  # G unrelated to U, λ (any symmetric float matrix)
        G = rng.standard_normal((m, m))
        G = np.triu(G) + np.triu(G, 1).T
    else:  # G = the mirrored upper triangle of the kernel's own products: the computed upper residual is 0
        G = np.triu(P) + np.triu(P, 1).T
        if kind == 4:
            G = G + np.diag(rng.standard_normal(m)) * 2.0**-40
        if kind == 5:  # R ≈ 𝟙𝟙ᵀ: ‖R‖₂ = ‖R‖_∞ = ‖R‖_F = m, every row and square of R̃ counts
            G = G + 1.0
        if kind == 6:  # R ≈ vvᵀ, v = 1 on the last 8 rows, ½ above: the largest rows lie in the last block
            v = np.where(np.arange(m) >= m - 8, 1.0, 0.5)
            G = G + np.outer(v, v)
    return G, U, lam


def _check_symmetric_residual(seed: int, cases: int, max_m: int, min_m: int = 1, kind=None, order: str = "C") -> None:
    from certbound.ball import float_upper
    from tests.enclose.exact_inertia import norm_at_most, residual

    rng = np.random.default_rng(seed)
    for _ in range(cases):
        m, r = int(rng.integers(min_m, max_m + 1)), int(rng.integers(1, 5))
        G, U, lam = _symmetric_residual_case(rng, m, r, kind)
        G = np.asarray(G, order=order)  # F: as rounded_gram returns Ĝ (its blocks are read as transposes)
        if not np.all(np.isfinite(G)):
            continue
        chunk = int(rng.choice([128, 1, 2]))
        e = fperror.symmetric_residual_norm_bound(G, U, lam, chunk=chunk, symmetric=True)
        eu = float_upper(e)
        if not math.isfinite(eu):
            continue
        assert norm_at_most(residual(G, U, lam, U), Fraction(eu)), (G.tolist(), U.tolist(), lam.tolist(), chunk)


def test_symmetric_residual_bound_exact():
    # Lemma 3.4 (proofs/enclosure.md §3): one block below 33 rows, several above (nb ≥ 32), inner chunks 1, 2.
    _check_symmetric_residual(441, 40, 12)
    for kind in (5, 6):  # two column blocks (nb = 32): the mirrored row sums and doubled squares count
        _check_symmetric_residual(442, 1, 40, min_m=40, kind=kind)


@pytest.mark.parametrize("nb", [None, 1, 3])
def test_symmetric_residual_bound_exact_fortran_ordered(nb, monkeypatch):
    # Ĝ as certify_gram has it (Fortran order): the blocks G[:J₁, J] are read as G[J, :J₁]ᵀ (session 6); column
    # blocks of nb give several blocks at small sizes (None: the default width, one block here).
    if nb is not None:
        monkeypatch.setattr(fperror, "symmetric_residual_block_columns", lambda m: min(nb, m))
    _check_symmetric_residual(443 + (nb or 0), 25, 9, order="F")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_symmetric_residual_bound_exact_sweep(seed):
    _check_symmetric_residual(4500 + seed, 600, 20)


# -------------------------- α: Lemma 3.1 with upper-triangle chunk SYRKs (used for m > 512)


def test_gram_deviation_upper_triangles_exact():
    # certify_gram uses triangle=True only above 512 rows; the lemma is the same for any size, so
    # it is checked here on small factors with tiny chunks (ragged last chunk, one-row chunks).
    from tests.enclose.exact_inertia import gram_deviation, symmetric_norm_at_most
    from tests.enclose.test_exact_containment import _factor, _orthonormal

    rng = np.random.default_rng(461)
    cases = [np.array([[1.0], [2.0**-27]]), np.array([[1.0, 2.0**-27], [2.0**-27, 1.0], [2.0**-28, -(2.0**-28)]])]
    for _ in range(60):
        m, r = int(rng.integers(1, 9)), int(rng.integers(1, 6))
        X = _orthonormal(rng, m, r) if rng.random() < 0.6 else _factor(rng, m, r)
        if rng.random() < 0.3:
            X = X * (1 + 2.0 ** -int(rng.integers(10, 50)) * rng.standard_normal(X.shape))
        cases.append(X)
    for X in cases:
        for chunk in (1, 2, 3, 128):
            B = upper_fraction(fperror.gram_deviation_bound(X, chunk=chunk, triangle=True))
            if B is not None:
                assert symmetric_norm_at_most(gram_deviation(X), B), (X.tolist(), chunk)


@pytest.mark.parametrize("total", [1000, 1040, 1060, 1068, 1074, 1080, 1100, 1500])
def test_product_norms_and_sigma_at_tiny_scales(total):
    # ‖AB^T‖_{2,1} and σ of products scaled by 2^-total (well-conditioned factors: Lemma P-G runs): the
    # float sums and ends are scaled back by ldexp only when that is exact, else in Arb (4e09fcb, §10).
    rng = np.random.default_rng(total)
    for _ in range(3):
        m, n, d = int(rng.integers(3, 7)), int(rng.integers(3, 7)), int(rng.integers(1, 3))
        a = total // 2 + int(rng.integers(-20, 21))
        A = rng.standard_normal((m, d)) * 2.0**-a
        B = rng.standard_normal((n, d)) * 2.0 ** -(total - a)
        encs, norms = product_mod.enclose_singular_values_and_norms_21_of_products([A, A * 3], [B, B], mode="auto")
        for F, enc, nb in zip((A, A * 3), encs, norms):
            P = [[sum((x * y for x, y in zip(ra, rb)), Fraction(0)) for rb in fractions_of(B)] for ra in fractions_of(F)]
            _check_norm_21(nb, P, (F, B))
            G = smaller_gram(P)
            for i in range(min(m, n)):
                lo, hi = _ends(enc.sigma[i])
                assert hi is not None and singular_value_in(G, i, lo, hi), (total, i, str(enc.sigma[i]))
