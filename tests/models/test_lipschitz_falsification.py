"""Empirical falsification of Lemma 1.6 and F4 (spec §1.5–1.6, proofs/theory-lipschitz.md) on the model:
measured output changes under random single-matrix and input perturbations never exceed the factors
α, γ computed by certbound.bounds (with the realised spectral norms as constraints, spec §9 item 4)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certbound.models import PiTransformer, PiTransformerConfig

lip = pytest.importorskip("certbound.bounds")  # alpha, gamma, layer_lip, TransformerSpec
spec_mod = lip

TOL = 1e-10  # float evaluation of f, the norms and the factors


def _spec(cfg: PiTransformerConfig):
    return spec_mod.TransformerSpec(
        n_layers=cfg.n_layers, n_heads=cfg.n_heads, d_model=cfg.d_model, seq_len=cfg.seq_len,
        ffn_kind=cfg.ffn_kind, d_ff=cfg.d_ff, d_head=cfg.d_head, residual=cfg.residual,
        softmax_lip=cfg.softmax_lip, activation="relu")


def _constraints(net: PiTransformer):
    """Realised spectral norms (float SVD, inflated by 1e-12 relative) keyed (layer, head, type)."""
    c = {}
    for m in net.theory_matrices():
        if m.kind != "readout":
            c[(m.layer, m.head, m.kind)] = float(np.linalg.norm(m.matrix(), 2)) * (1 + 1e-12)
    return c


def _upper(x) -> float:
    return float(x.mid()) + float(x.rad())


def _perturbed(net: PiTransformer, name: str, delta: np.ndarray) -> PiTransformer:
    p = dict(net.params)
    p[name] = p[name] + delta
    return PiTransformer(net.config, p)


def _two_inf(Z):
    return float(np.linalg.norm(Z, axis=-1).max())


configs = st.builds(
    PiTransformerConfig,
    d_model=st.integers(2, 5), n_layers=st.integers(1, 3), n_heads=st.integers(1, 2),
    d_head=st.just(1) | st.just(2), seq_len=st.integers(1, 4),
    ffn_kind=st.sampled_from(["single", "two"]), d_ff=st.integers(1, 6), residual=st.booleans(),
    readout_norm=st.sampled_from([1.0, 2.0]),
)


@settings(max_examples=30)
@given(cfg=configs, seed=st.integers(0, 10**6), wscale=st.sampled_from([0.5, 1.0, 3.0]),
       pscale=st.sampled_from([1e-6, 1e-3, 0.1, 1.0]), pick=st.integers(0, 10**6))
def test_single_matrix_perturbation_lemma_1_6(cfg, seed, wscale, pscale, pick):
    net = PiTransformer.random(cfg, seed=seed, scale=wscale)
    spec = _spec(cfg)
    c = _constraints(net)
    alphas = lip.alpha(spec, c)
    slots = spec.slots()
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(6, cfg.seq_len, cfg.d_model))
    f, rec = net.forward(X, return_intermediates=True)
    worst = 0.0
    for trial in range(4):
        k = (pick + trial) % (len(slots) + 1)
        if k == len(slots):  # readout: |Δf| ≤ |Z (w − ŵ)|, Z the final [CLS] row
            d = rng.normal(size=cfg.d_model) * pscale
            g = _perturbed(net, "readout.w", d).forward(X)
            bound = np.abs(rec.final[:, 0, :] @ d)
            assert np.all(np.abs(g - f) <= bound + TOL)
            continue
        slot = slots[k]
        layer, head = slot.layer, slot.head
        dh = cfg.d_head
        # Perturb the matrix W_j itself through one of its factors (hats are arbitrary matrices).
        if slot.type in ("QK", "VO"):
            s = slice(head * dh, (head + 1) * dh)
            wq, wk, wv, wo = net.head_factors(layer, head)
            name = f"blocks.{layer}.attn." + ("W_Q" if slot.type == "QK" else "W_V")
            d_full = np.zeros_like(net.params[name])
            d_full[:, s] = rng.normal(size=(cfg.d_model, dh)) * pscale
            dW = d_full[:, s] @ (wk.T if slot.type == "QK" else wo)  # ΔA or ΔV
            Z = rec.inputs[layer]
        else:
            name = f"blocks.{layer}.ffn.{slot.type}"
            d_full = rng.normal(size=net.params[name].shape) * pscale
            dW = d_full
            Z = {"M": rec.ffn_hidden[layer] if cfg.ffn_kind == "single" else None,
                 "M_in": rec.after_attention[layer], "M_out": rec.ffn_hidden[layer]}[slot.type]
        g = _perturbed(net, name, d_full).forward(X)
        factor = _upper(cfg.readout_norm * alphas[layer] * lip.gamma(spec, c, slot))
        # Lemma 1.6, per sample: |f − f̂| ≤ C_w α^(l) γ_j ‖Z (W_j − Ŵ_j)‖_{2→∞}.
        rhs = np.array([factor * _two_inf(Z[i] @ dW) for i in range(len(X))])
        lhs = np.abs(g - f)
        assert np.all(lhs <= rhs * (1 + 1e-9) + TOL), (slot, lhs, rhs)
        worst = max(worst, float(np.max(lhs / np.maximum(rhs, 1e-300))))
    assert worst <= 1 + 1e-9


@settings(max_examples=30)
@given(cfg=configs, seed=st.integers(0, 10**6), wscale=st.sampled_from([0.5, 1.0, 3.0]),
       pscale=st.sampled_from([1e-6, 1e-3, 0.1, 1.0]))
def test_input_perturbation_alpha(cfg, seed, wscale, pscale):
    """F4 chained through all blocks: |f(X) − f(X')| ≤ C_w Π_k Lip_k ‖X − X'‖_{2→∞} for unit-row X, X'."""
    net = PiTransformer.random(cfg, seed=seed, scale=wscale)
    spec = _spec(cfg)
    c = _constraints(net)
    total = lip.alpha(spec, c)[0] * lip.layer_lip(spec, c, 0)
    factor = _upper(cfg.readout_norm * total)
    rng = np.random.default_rng(seed + 1)
    X = rng.normal(size=(8, cfg.seq_len, cfg.d_model))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    Xp = X + rng.normal(size=X.shape) * pscale
    Xp /= np.maximum(1.0, np.linalg.norm(Xp, axis=-1, keepdims=True))
    lhs = np.abs(net.forward(Xp) - net.forward(X))
    rhs = factor * np.linalg.norm(Xp - X, axis=-1).max(axis=-1)
    assert np.all(lhs <= rhs * (1 + 1e-9) + TOL)


def test_falsification_is_sensitive():
    """The check is not vacuous: on a 1-layer single-head net an adversarial-ish search reaches a
    sizeable fraction of the Lemma 1.6 factor for VO (γ = F_l = c(M) with ReLU, no residual)."""
    cfg = PiTransformerConfig(d_model=3, n_layers=1, n_heads=1, d_head=2, seq_len=1, readout_norm=1.0)
    spec = _spec(cfg)
    best = 0.0
    for seed in range(40):
        net = PiTransformer.random(cfg, seed=seed, scale=0.3)
        c = _constraints(net)
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(20, 1, 3))
        f, rec = net.forward(X, return_intermediates=True)
        wq, wk, wv, wo = net.head_factors(0, 0)
        d = np.zeros_like(net.params["blocks.0.attn.W_V"])
        d[:, :2] = rng.normal(size=(3, 2)) * 1e-4
        g = _perturbed(net, "blocks.0.attn.W_V", d).forward(X)
        slot = spec.slots()[1]
        factor = _upper(cfg.readout_norm * lip.alpha(spec, c)[0] * lip.gamma(spec, c, slot))
        dW = d[:, :2] @ wo
        rhs = np.array([factor * _two_inf(rec.inputs[0][i] @ dW) for i in range(20)])
        best = max(best, float(np.max(np.abs(g - f) / rhs)))
    assert best > 0.2, best


def test_lemma_1_6_on_the_shipped_model_and_task_inputs():
    """Same check on the trained demo weights and real task inputs, every matrix perturbed in turn."""
    from certbound.models import SparseMajorityTask, demo_checkpoint_path, load_pi_checkpoint

    net, meta = load_pi_checkpoint(demo_checkpoint_path())
    cfg = net.config
    task = SparseMajorityTask.from_json_dict(meta["task"])
    X, _ = task.sample(64, stream=1)
    spec = _spec(cfg)
    c = _constraints(net)
    alphas = lip.alpha(spec, c)
    f, rec = net.forward(X, return_intermediates=True)
    rng = np.random.default_rng(0)
    dh = cfg.d_head
    for slot in spec.slots():
        for pscale in (1e-5, 1e-2):
            if slot.type in ("QK", "VO"):
                s = slice(slot.head * dh, (slot.head + 1) * dh)
                _, wk, _, wo = net.head_factors(slot.layer, slot.head)
                name = f"blocks.{slot.layer}.attn." + ("W_Q" if slot.type == "QK" else "W_V")
                d = np.zeros_like(net.params[name])
                d[:, s] = rng.normal(size=(cfg.d_model, dh)) * pscale
                dW = d[:, s] @ (wk.T if slot.type == "QK" else wo)
                Z = rec.inputs[slot.layer]
            else:
                name = f"blocks.{slot.layer}.ffn.{slot.type}"
                d = dW = rng.normal(size=net.params[name].shape) * pscale
                # the matrix's input: φ(Y) for M (variant P), Y for M_in and φ(Y M_in) for M_out (variant B)
                Z = rec.after_attention[slot.layer] if slot.type == "M_in" else rec.ffn_hidden[slot.layer]
            g = _perturbed(net, name, d).forward(X)
            factor = _upper(cfg.readout_norm * alphas[slot.layer] * lip.gamma(spec, c, slot))
            rhs = np.array([factor * _two_inf(Z[i] @ dW) for i in range(len(X))])
            assert np.all(np.abs(g - f) <= rhs * (1 + 1e-9) + TOL), slot
