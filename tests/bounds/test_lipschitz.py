"""Lipschitz facts F1, F2, F4 and Lemma 1.6 on small Π-Transformers; α vs the paper's formula (spec §9 items 4, 12).

Network outputs are evaluated in mpmath at 60 digits (errors ~1e-55), bounds in
Arb; a measured change is compared with the bound's upper end.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from certbound.ball import upper_fraction
from certbound.bounds import TransformerSpec, alpha, gamma, paper_alpha, scale
from certbound.enclose import enclose_singular_values
from certbound.testing import pi_transformer_output, small_pi_transformers

mp = mpmath.mp


def _mp_upper(x: arb) -> mpmath.mpf:
    q = upper_fraction(x)
    return mpmath.mpf(q.numerator) / q.denominator


def _norm(v):
    return mpmath.sqrt(mpmath.fsum(x * x for x in v))


def _pi(z):
    n = _norm(z)
    return [x / max(mpmath.mpf(1), n) for x in z]


vec = st.lists(st.floats(-4, 4, allow_nan=False, allow_infinity=False, width=32), min_size=3, max_size=3)


@given(vec, vec)
def test_f1_projection_nonexpansive(z, y):
    with mpmath.workdps(50):
        z = [mpmath.mpf(x) for x in z]
        y = [mpmath.mpf(x) for x in y]
        lhs = _norm([a - b for a, b in zip(_pi(z), _pi(y))])
        assert lhs <= _norm([a - b for a, b in zip(z, y)]) * (1 + mpmath.mpf(10) ** -45)
        assert _norm(_pi(z)) <= 1 + mpmath.mpf(10) ** -45


def _sm(u):
    m = max(u)
    e = [mpmath.exp(x - m) for x in u]
    s = mpmath.fsum(e)
    return [x / s for x in e]


@given(st.lists(st.floats(-6, 6, width=32), min_size=2, max_size=5), st.data())
def test_f2_softmax_constant_one(u, data):
    v = data.draw(st.lists(st.floats(-6, 6, width=32), min_size=len(u), max_size=len(u)))
    with mpmath.workdps(50):
        u = [mpmath.mpf(x) for x in u]
        v = [mpmath.mpf(x) for x in v]
        l1 = mpmath.fsum(abs(a - b) for a, b in zip(_sm(u), _sm(v)))
        assert l1 <= max(abs(a - b) for a, b in zip(u, v)) * (1 + mpmath.mpf(10) ** -45)


def test_f2_adversarial_pair_shows_one_is_best():
    with mpmath.workdps(50):
        for t in ("1e-3", "1e-6"):
            t = mpmath.mpf(t)
            l1 = mpmath.fsum(abs(a - b) for a, b in zip(_sm([t, -t]), _sm([0, 0])))
            ratio = l1 / t  # = tanh(t)/t → 1
            assert ratio <= 1 and ratio > 1 - t


def _sigma1(W) -> arb:
    enc = enclose_singular_values(np.asarray(W, dtype=np.float64))
    assert enc.certified
    return enc.sigma[0].upper()


def _att(X, As, Vs, mp_):
    out = None
    Xt = list(zip(*X))
    for A, V in zip(As, Vs):
        logits = [[mp_.fsum(mp_.fsum(x[i] * A[i][j] for i in range(len(x))) * y for j, y in enumerate(col))
                   for col in Xt and [list(r) for r in X]] for x in X]
        P = [_sm(row) for row in logits]
        PX = [[mp_.fsum(P[t][s] * X[s][k] for s in range(len(X))) for k in range(len(X[0]))] for t in range(len(X))]
        H = [[mp_.fsum(r[i] * V[i][j] for i in range(len(r))) for j in range(len(V[0]))] for r in PX]
        out = H if out is None else [[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(out, H)]
    return out


@given(st.integers(0, 2**31), st.sampled_from([0.3, 1.0, 3.0]), st.integers(1, 2))
def test_f4_attention_input_lipschitz(seed, scl, H):
    rng = np.random.default_rng(seed)
    N, T = 3, 3
    q = lambda a: np.round(a * 2**16) / 2**16  # noqa: E731
    As = [q(rng.standard_normal((N, N)) * scl) for _ in range(H)]
    Vs = [q(rng.standard_normal((N, N))) for _ in range(H)]
    with mpmath.workdps(60):
        X = [_pi([mpmath.mpf(float(v)) for v in r]) for r in q(rng.standard_normal((T, N)))]
        Xp = [_pi([x + mpmath.mpf(float(d)) for x, d in zip(r, dr)]) for r, dr in zip(X, q(rng.standard_normal((T, N)) * 0.1))]
        Am = [[[mpmath.mpf(float(v)) for v in r] for r in A] for A in As]
        Vm = [[[mpmath.mpf(float(v)) for v in r] for r in V] for V in Vs]
        d_out = max(_norm([a - b for a, b in zip(r1, r2)]) for r1, r2 in zip(_att(X, Am, Vm, mpmath), _att(Xp, Am, Vm, mpmath)))
        d_in = max(_norm([a - b for a, b in zip(r1, r2)]) for r1, r2 in zip(X, Xp))
    lip = sum((_sigma1(V) * (1 + 2 * _sigma1(A)) for A, V in zip(As, Vs)), arb(0))  # c_sm = 1
    assert d_out <= _mp_upper(lip) * d_in * (1 + mpmath.mpf(10) ** -40)


@given(small_pi_transformers(), st.data())
def test_lemma_1_6_single_matrix_perturbation(net, data):
    spec = net.spec
    slots = spec.slots()
    j = data.draw(st.integers(0, len(slots)))  # len(slots) = the readout
    seed = data.draw(st.integers(0, 2**31))
    size = data.draw(st.sampled_from([1e-3, 0.1, 1.0]))
    rng = np.random.default_rng(seed)
    q = lambda a: np.round(a * 2**20) / 2**20  # noqa: E731
    c = {s.key: _sigma1(net.weights[s.key]) for s in slots}  # realised norms as constraints
    cw = arb(sum(F(float(x)) ** 2 for x in net.readout).numerator) / sum(F(float(x)) ** 2 for x in net.readout).denominator
    cw = cw.sqrt()
    f0, inputs = pi_transformer_output(net, return_inputs=True)
    with mpmath.workdps(60):
        if j == len(slots):
            dw = q(rng.standard_normal(spec.d_model) * size)
            f1 = pi_transformer_output(net, readout=net.readout + dw)
            Z = inputs["readout"][0]
            bound_mp = abs(mpmath.fsum(z * mpmath.mpf(float(d)) for z, d in zip(Z, dw)))
            assert abs(f1 - f0) <= bound_mp * (1 + mpmath.mpf(10) ** -40) + mpmath.mpf(10) ** -50
            return
        slot = slots[j]
        dW = q(rng.standard_normal((slot.n_in, slot.n_out)) * size)
        w2 = dict(net.weights)
        w2[slot.key] = net.weights[slot.key] + dW
        f1 = pi_transformer_output(net, weights=w2)
        Z = inputs[slot.key]
        zdw = max(_norm([mpmath.fsum(z[i] * mpmath.mpf(float(dW[i, k])) for i in range(slot.n_in))
                         for k in range(slot.n_out)]) for z in Z)
    K = scale(spec, c, slot, cw, with_radius=False)  # C_w α^(l) γ_j
    assert abs(f1 - f0) <= _mp_upper(K) * zdw * (1 + mpmath.mpf(10) ** -40) + mpmath.mpf(10) ** -50


dy = st.builds(lambda k: F(k, 64), st.integers(1, 256))


@given(st.integers(1, 4), st.lists(dy, min_size=12, max_size=12))
def test_alpha_equals_paper_formula_at_csm_2(L, vals):
    spec = TransformerSpec(L, 1, 4, 3, ffn_kind="single", activation="relu", softmax_lip=2, act_lip=F(113, 100))
    c, it = {}, iter(vals * 2)
    for s in spec.slots():
        c[s.key] = next(it)
    ours, paper = alpha(spec, c), paper_alpha(spec, c)
    for layer in range(L):
        exact = F(1)
        for k in range(layer + 1, L):
            exact *= F(113, 100) * c[(k, None, "M")] * c[(k, 0, "VO")] * (1 + 4 * c[(k, 0, "QK")])
        ex = arb(exact.numerator) / exact.denominator
        assert ours[layer].overlaps(ex) and paper[layer].overlaps(ex)
        assert ours[layer].overlaps(paper[layer])


def test_gamma_table_variant_b_residual():
    spec = TransformerSpec(1, 1, 4, 3, ffn_kind="two", d_ff=8, residual=True, activation="relu", softmax_lip=2)
    c = {(0, 0, "QK"): 0.5, (0, 0, "VO"): 2, (0, None, "M_in"): 3, (0, None, "M_out"): 0.25}
    s = {x.type: x for x in spec.slots()}
    # G = 1 + F = 1 + L_φ c(M_in) c(M_out) = 1.75
    assert gamma(spec, c, s["QK"]).overlaps(arb("7"))  # c_sm c(V) G = 2·2·1.75
    assert gamma(spec, c, s["VO"]).overlaps(arb("1.75"))
    assert gamma(spec, c, s["M_in"]).overlaps(arb("0.25"))
    assert gamma(spec, c, s["M_out"]).overlaps(arb(1))
