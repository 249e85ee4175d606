"""Certified output enclosures contain the exact network value (mpmath at 200 bits, an independent transcription
of spec §1.3) and the float forward pass, for every one-block variant; and they are tight."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certbound.models import PiTransformer, PiTransformerConfig, SparseMajorityTask
from certbound.models.certified_forward import _dn, _up, check_round_to_nearest, enclose_outputs


def _mp_forward(net: PiTransformer, X: np.ndarray) -> mpmath.mpf:
    """f(X) for one input, in mpmath, with the matrices A = W_Q W_Kᵀ and V = W_V W_O formed exactly."""
    cfg = net.config
    P = {k: mpmath.matrix(v.tolist()) if v.ndim == 2 else mpmath.matrix(v.tolist()) for k, v in net.params.items()}

    def proj(row):
        nrm = mpmath.sqrt(sum(x * x for x in row))
        return [x / max(mpmath.mpf(1), nrm) for x in row]

    def vecmat(v, M):
        return [mpmath.fsum(v[i] * M[i, j] for i in range(M.rows)) for j in range(M.cols)]

    rows = [proj([mpmath.mpf(float(x)) for x in r]) for r in X]
    att = [mpmath.mpf(0)] * cfg.d_model
    dh = cfg.d_head
    for h in range(cfg.n_heads):
        cols = range(h * dh, (h + 1) * dh)
        wq = mpmath.matrix([[P["blocks.0.attn.W_Q"][i, c] for c in cols] for i in range(cfg.d_model)])
        wk = mpmath.matrix([[P["blocks.0.attn.W_K"][i, c] for c in cols] for i in range(cfg.d_model)])
        wv = mpmath.matrix([[P["blocks.0.attn.W_V"][i, c] for c in cols] for i in range(cfg.d_model)])
        wo = mpmath.matrix([[P["blocks.0.attn.W_O"][c, j] for j in range(cfg.d_model)] for c in cols])
        A, V = wq * wk.T, wv * wo
        q = vecmat(rows[0], A)
        logits = [mpmath.fsum(q[i] * r[i] for i in range(cfg.d_model)) for r in rows]
        m = max(logits)
        e = [mpmath.exp(u - m) for u in logits]
        z = mpmath.fsum(e)
        for r, w in zip(rows, e):
            v = vecmat(r, V)
            att = [a + w / z * b for a, b in zip(att, v)]
    y = proj([a + b for a, b in zip(att, rows[0])] if cfg.residual else att)
    if cfg.ffn_kind == "single":
        ff = vecmat([max(x, 0) for x in y], P["blocks.0.ffn.M"])
    else:
        ff = vecmat([max(x, 0) for x in vecmat(y, P["blocks.0.ffn.M_in"])], P["blocks.0.ffn.M_out"])
    x = proj([a + b for a, b in zip(y, ff)] if cfg.residual else ff)
    w = net.params["readout.w"]
    return mpmath.fsum(x[i] * mpmath.mpf(float(w[i])) for i in range(cfg.d_model))


@settings(max_examples=12, deadline=None)
@given(seq_len=st.integers(2, 6), heads=st.integers(1, 2), d_head=st.integers(1, 2),
       ffn=st.sampled_from(["single", "two"]), residual=st.booleans(), seed=st.integers(0, 10**6),
       scale=st.sampled_from([0.5, 2.0, 6.0]))
def test_enclosure_contains_the_exact_output(seq_len, heads, d_head, ffn, residual, seed, scale):
    task = SparseMajorityTask(seq_len=seq_len, n_relevant=1, label_noise=0.2, seed=seed % 7)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=heads, d_head=d_head, seq_len=seq_len,
                              ffn_kind=ffn, d_ff=3, residual=residual, readout_norm=2.0)
    net = PiTransformer.random(cfg, seed=seed, scale=scale)
    symbols, _ = task.symbols_and_labels(4, stream=1)
    enc = enclose_outputs(net, task, symbols)
    X = task.embed(symbols)
    with mpmath.workprec(200):
        for i in range(len(symbols)):
            ref = _mp_forward(net, X[i])
            assert mpmath.mpf(float(enc.lower[i])) <= ref <= mpmath.mpf(float(enc.upper[i])), i
    f = net.forward(X)
    assert np.all(enc.lower <= f) and np.all(f <= enc.upper)
    assert np.max(enc.upper - enc.lower) < 1e-8  # tight: far below any margin that matters


def test_margin_lower_bounds_and_errors():
    task = SparseMajorityTask(seq_len=5, n_relevant=3, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=1, seq_len=5)
    net = PiTransformer.random(cfg, seed=1)
    symbols, y = task.symbols_and_labels(30, stream=1)
    enc = enclose_outputs(net, task, symbols)
    m = enc.margin_lower(y)
    assert np.all(m <= y * net.forward(task.embed(symbols)))
    deep = PiTransformer.random(PiTransformerConfig(d_model=task.d_model, n_layers=2, n_heads=1, d_head=1,
                                                    seq_len=5), seed=1)
    with pytest.raises(NotImplementedError):
        enclose_outputs(deep, task, symbols)
    with pytest.raises(ValueError, match="symbols"):
        enclose_outputs(net, task, symbols[:, :2])
    with pytest.raises(ValueError, match="0 or 1"):
        enclose_outputs(net, task, symbols + 2)


@given(x=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_outward_steps_pass_the_neighbouring_floats(x):
    check_round_to_nearest()
    a = np.array([x])
    with np.errstate(over="ignore"):  # near the largest float the step may overflow to ±inf: still a bound
        assert _dn(a)[0] <= np.nextafter(x, -np.inf) and _up(a)[0] >= np.nextafter(x, np.inf)


def test_enclosure_refuses_a_flush_to_zero_environment(monkeypatch):
    # The outward steps need gradual underflow as well as round to nearest (demo-task §2): under FTZ/DAZ,
    # _dn(0) = 0 although a tiny negative exact value may have been flushed to 0. The rounding-only probe
    # cannot see this, so the enclosure must run the full environment check (simulated failure here).
    import certbound.ball as ball

    task = SparseMajorityTask(seq_len=4, n_relevant=1, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=1, seq_len=4)
    net = PiTransformer.random(cfg, seed=3)
    symbols, _ = task.symbols_and_labels(3, stream=1)
    monkeypatch.setattr(ball, "_float_environment_problems",
                        lambda: ["subnormal results are flushed to zero (FTZ)"])
    with pytest.raises(ball.FloatEnvironmentError, match="FTZ"):
        enclose_outputs(net, task, symbols)


def test_enclosure_ignores_the_callers_numpy_error_mode():
    # tiny weights make intermediate results subnormal; np.seterr(all="raise") must not abort the certificate
    task = SparseMajorityTask(seq_len=4, n_relevant=1, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=1, seq_len=4, ffn_kind="two",
                              d_ff=2)
    net = PiTransformer.random(cfg, seed=3)
    net.params["blocks.0.ffn.M_out"] = net.params["blocks.0.ffn.M_out"] * 1e-300
    symbols, _ = task.symbols_and_labels(3, stream=1)
    with np.errstate(all="raise"):
        enc = enclose_outputs(net, task, symbols)
    f = net.forward(task.embed(symbols))
    assert np.all(enc.lower <= f) and np.all(f <= enc.upper)


@pytest.mark.parametrize("scales", [(1e-300, 1.0, 1e3), (1e3, 1e-160, 1.0), (10.0, 100.0, 1e-20)])
def test_enclosure_contains_the_exact_output_at_extreme_weight_scales(scales):
    # per-tensor scales from subnormal products to softmax logits of ~1e3 (most exponentials underflow):
    # the outward steps' η terms and the Arb exponentials must still keep the exact value inside
    task = SparseMajorityTask(seq_len=5, n_relevant=1, seed=2)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=2, d_head=1, seq_len=5, ffn_kind="two",
                              d_ff=3, residual=True, readout_norm=2.0)
    net = PiTransformer.random(cfg, seed=11)
    att, ffn, val = scales
    for name in ("blocks.0.attn.W_Q", "blocks.0.attn.W_K"):
        net.params[name] = net.params[name] * np.sqrt(att)
    net.params["blocks.0.attn.W_V"] = net.params["blocks.0.attn.W_V"] * val
    net.params["blocks.0.ffn.M_in"] = net.params["blocks.0.ffn.M_in"] * ffn
    symbols, _ = task.symbols_and_labels(4, stream=3)
    enc = enclose_outputs(net, task, symbols)
    X = task.embed(symbols)
    with mpmath.workprec(400):
        for i in range(len(symbols)):
            ref = _mp_forward(net, X[i])
            assert mpmath.mpf(float(enc.lower[i])) <= ref <= mpmath.mpf(float(enc.upper[i])), i


def test_softmax_underflow_gives_the_trivial_enclosure_with_a_warning():
    # logits ~1e4: for inputs that miss the table's largest logit every selected exponential underflows, so the
    # denominator's enclosure reaches 0; those inputs get |f| ≤ ‖w‖₂ (still containing the exact value), not a crash
    task = SparseMajorityTask(seq_len=4, n_relevant=1, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=2, d_head=1, seq_len=4, readout_norm=2.0)
    net = PiTransformer.random(cfg, seed=16)
    for name in ("blocks.0.attn.W_Q", "blocks.0.attn.W_K"):
        net.params[name] = net.params[name] * 100.0
    symbols = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=np.int8)
    with pytest.warns(UserWarning, match="trivial enclosure"):
        enc = enclose_outputs(net, task, symbols)
    w = float(np.linalg.norm(net.params["readout.w"]))
    trivial = enc.upper - enc.lower > w  # the inputs that failed
    assert trivial.any() and not trivial.all()
    X = task.embed(symbols)
    with mpmath.workprec(400):
        for i in range(len(symbols)):
            ref = _mp_forward(net, X[i])
            assert mpmath.mpf(float(enc.lower[i])) <= ref <= mpmath.mpf(float(enc.upper[i])), i
