"""The numpy forward pass is the model class of spec §1.3 (explicit-bound.md), checked against an
independent loop-by-loop transcription; Π outputs have rows in the unit ball; the loss has range [0, B_L]."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from certbound.models import LossSpec, PiTransformer, PiTransformerConfig, loss_values, project_rows


def _configs():
    return st.builds(
        PiTransformerConfig,
        d_model=st.integers(2, 6),
        n_layers=st.integers(1, 3),
        n_heads=st.integers(1, 3),
        d_head=st.just(1) | st.just(2),
        seq_len=st.integers(1, 5),
        ffn_kind=st.sampled_from(["single", "two"]),
        d_ff=st.integers(1, 7),
        residual=st.booleans(),
        readout_norm=st.sampled_from([0.5, 1.0, 3.0]),
    )


def _reference_forward(net: PiTransformer, X: np.ndarray) -> float:
    """Spec §1.3 for ONE input, written with explicit loops and formed matrices A, V."""
    cfg = net.config

    def proj(z):
        nz = math.sqrt(sum(float(v) ** 2 for v in z))
        return z / max(1.0, nz)

    X = np.array([proj(row) for row in X])
    T = X.shape[0]
    for layer in range(cfg.n_layers):
        att = np.zeros_like(X)
        for h in range(cfg.n_heads):
            wq, wk, wv, wo = net.head_factors(layer, h)
            A, V = wq @ wk.T, wv @ wo
            for t in range(T):
                logits = [float(X[t] @ A @ X[s]) for s in range(T)]
                mx = max(logits)
                e = [math.exp(u - mx) for u in logits]
                p = [v / sum(e) for v in e]
                att[t] += sum(p[s] * (X[s] @ V) for s in range(T))
        Y = np.array([proj(r) for r in (X + att if cfg.residual else att)])
        if cfg.ffn_kind == "single":
            ff = np.maximum(Y, 0) @ net.params[f"blocks.{layer}.ffn.M"]
        else:
            ff = np.maximum(Y @ net.params[f"blocks.{layer}.ffn.M_in"], 0) @ net.params[f"blocks.{layer}.ffn.M_out"]
        X = np.array([proj(r) for r in (Y + ff if cfg.residual else ff)])
    return float(X[0] @ net.params["readout.w"])


@given(cfg=_configs(), seed=st.integers(0, 10**6), scale=st.sampled_from([0.3, 1.0, 5.0]))
def test_forward_equals_reference_and_rows_in_unit_ball(cfg, seed, scale):
    net = PiTransformer.random(cfg, seed=seed, scale=scale)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, cfg.seq_len, cfg.d_model)) * rng.choice([0.1, 1.0, 10.0])
    out, rec = net.forward(X, return_intermediates=True)
    ref = np.array([_reference_forward(net, x) for x in X])
    np.testing.assert_allclose(out, ref, rtol=1e-11, atol=1e-12)
    # the fast path (row 0 only in the last block) computes the same function
    np.testing.assert_allclose(net.forward(X), ref, rtol=1e-11, atol=1e-12)
    # Every Π output (input projection, after attention, after the FFN) has rows of norm ≤ 1.
    assert len(rec.projected) == 1 + 2 * cfg.n_layers
    for Z in rec.projected:
        assert np.linalg.norm(Z, axis=-1).max() <= 1 + 1e-12
    # F6: |f| ≤ ‖w‖ ≤ C_w.
    assert np.abs(out).max() <= cfg.readout_norm * (1 + 1e-12)


def test_projection_is_the_unit_ball_projection():
    Z = np.array([[3.0, 4.0], [0.0, 0.0], [0.6, 0.8], [-0.1, 0.2]])
    P = project_rows(Z)
    assert P.tolist() == [[0.6, 0.8], [0.0, 0.0], [0.6, 0.8], [-0.1, 0.2]]


def test_single_input_shape_and_bad_shape():
    cfg = PiTransformerConfig(d_model=3, n_layers=1, n_heads=1, d_head=1, seq_len=2)
    net = PiTransformer.random(cfg, seed=0)
    x = np.ones((2, 3))
    assert np.isscalar(net.forward(x)) or net.forward(x).shape == ()
    with pytest.raises(ValueError, match="inputs must have shape"):
        net.forward(np.ones((2, 2, 4)))


def test_theory_matrices_order_shapes_and_products():
    cfg = PiTransformerConfig(d_model=5, n_layers=2, n_heads=2, d_head=2, seq_len=3, ffn_kind="two", d_ff=7)
    net = PiTransformer.random(cfg, seed=3)
    mats = list(net.theory_matrices())
    assert [(m.layer, m.head, m.kind) for m in mats] == [
        (0, 0, "QK"), (0, 0, "VO"), (0, 1, "QK"), (0, 1, "VO"), (0, None, "M_in"), (0, None, "M_out"),
        (1, 0, "QK"), (1, 0, "VO"), (1, 1, "QK"), (1, 1, "VO"), (1, None, "M_in"), (1, None, "M_out"),
        (2, None, "readout"),
    ]
    assert len(mats) == cfg.n_matrices
    P = net.params
    # Head 1 of layer 1: columns 2:4 of W_Q, W_K, W_V and rows 2:4 of W_O.
    A = P["blocks.1.attn.W_Q"][:, 2:4] @ P["blocks.1.attn.W_K"][:, 2:4].T
    V = P["blocks.1.attn.W_V"][:, 2:4] @ P["blocks.1.attn.W_O"][2:4, :]
    np.testing.assert_array_equal(mats[8].matrix(), A)
    np.testing.assert_array_equal(mats[9].matrix(), V)
    assert mats[8].rank_arch == 2 and mats[4].rank_arch == 5 and mats[-1].rank_arch == 1
    assert mats[4].shape == (5, 7) and mats[5].shape == (7, 5) and mats[-1].shape == (5, 1)
    assert np.linalg.matrix_rank(A) <= 2


@given(v=st.floats(-50, 50), v2=st.floats(-50, 50), y=st.sampled_from([-1.0, 1.0]),
       clip=st.sampled_from([0.5, 1.0, 4.0, 9.0]))
def test_clipped_logistic_range_and_lipschitz(v, v2, y, clip):
    cfg = PiTransformerConfig(d_model=2, n_layers=1, n_heads=1, d_head=1, seq_len=1, loss=LossSpec(clip=clip))
    spec = cfg.loss
    a, b = loss_values(np.array([v, v2]), np.array([y, y]), cfg)
    # Range [0, B_L] for EVERY real v (not only |v| ≤ C_w), with a float-rounding slack.
    assert -1e-12 <= a <= spec.loss_bound + 1e-12
    assert abs(a - b) <= spec.loss_lip * abs(v - v2) + 1e-12
    # Independent check of the exact range claim ln(1+e^C) − ln(1+e^{−C}) = C, via mpmath at 300 bits.
    import mpmath

    with mpmath.workprec(300):
        c = mpmath.mpf(clip)
        assert abs(mpmath.log1p(mpmath.e**c) - mpmath.log1p(mpmath.e**-c) - c) < mpmath.mpf(2) ** -280


def test_ramp_loss():
    cfg = PiTransformerConfig(d_model=2, n_layers=1, n_heads=1, d_head=1, seq_len=1,
                              loss=LossSpec(kind="ramp", margin=0.5))
    v = loss_values(np.array([-1.0, 0.0, 0.25, 0.5, 2.0]), np.ones(5), cfg)
    assert [Fraction(x) for x in v] == [1, 1, Fraction(1, 2), 0, 0]
    assert cfg.loss.loss_bound == 1.0 and cfg.loss.loss_lip == 2.0


def test_random_init_is_deterministic_and_readout_within_bound():
    cfg = PiTransformerConfig(d_model=4, n_layers=1, n_heads=2, d_head=2, seq_len=3, readout_norm=0.25)
    a, b = PiTransformer.random(cfg, seed=5), PiTransformer.random(cfg, seed=5)
    c = PiTransformer.random(cfg, seed=6)
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert not np.array_equal(a.params["blocks.0.attn.W_Q"], c.params["blocks.0.attn.W_Q"])
    assert np.linalg.norm(a.params["readout.w"]) <= 0.25
