"""torch training: the torch forward pass equals the numpy one; training is deterministic with the seed."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from certbound.models import PiTransformer, PiTransformerConfig, SparseMajorityTask  # noqa: E402
from certbound.models.network import loss_values  # noqa: E402
from certbound.models.training import (  # noqa: E402
    TrainSettings, learning_rate_at, torch_forward, torch_loss, train_demo_model, train_pi_transformer,
)

configs = st.builds(
    PiTransformerConfig,
    d_model=st.integers(2, 6), n_layers=st.integers(1, 3), n_heads=st.integers(1, 3),
    d_head=st.just(1) | st.just(2), seq_len=st.integers(1, 5),
    ffn_kind=st.sampled_from(["single", "two"]), d_ff=st.integers(1, 7), residual=st.booleans(),
)


@settings(max_examples=25)
@given(cfg=configs, seed=st.integers(0, 10**6), scale=st.sampled_from([0.3, 1.0, 4.0]))
def test_torch_forward_equals_numpy_forward(cfg, seed, scale):
    net = PiTransformer.random(cfg, seed=seed, scale=scale)
    X = np.random.default_rng(seed).normal(size=(4, cfg.seq_len, cfg.d_model)) * 2
    y = np.where(np.arange(4) % 2 == 0, 1.0, -1.0)
    params = {k: torch.tensor(v) for k, v in net.params.items()}
    out_t = torch_forward(params, cfg, torch.tensor(X)).numpy()
    out_n = net.forward(X)
    np.testing.assert_allclose(out_t, out_n, rtol=1e-12, atol=1e-13)
    lt = float(torch_loss(torch.tensor(out_n), torch.tensor(y), cfg))
    assert abs(lt - float(loss_values(out_n, y, cfg).mean())) < 1e-13


def _tiny():
    task = SparseMajorityTask(seq_len=6, n_relevant=3, label_noise=0.1, seed=2)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=2, d_head=2, seq_len=task.seq_len,
                              readout_norm=1.5)
    return task, cfg


def test_training_is_deterministic_with_the_seed():
    task, cfg = _tiny()
    s = TrainSettings(seed=3, epochs=3, batch_size=16, learning_rate=0.05, warmup_steps=2, weight_decay=1e-3,
                      log_every=4)
    a = train_demo_model(task, cfg, 64, s)
    b = train_demo_model(task, cfg, 64, s)
    c = train_demo_model(task, cfg, 64, replace(s, seed=4))
    for k in a.model.params:
        assert np.array_equal(a.model.params[k], b.model.params[k]), k
    assert any(not np.array_equal(a.model.params[k], c.model.params[k]) for k in a.model.params)
    assert a.history == b.history
    assert a.steps == 3 * 4
    # readout constraint ‖w‖ ≤ C_w holds for the stored float vector after training
    assert np.linalg.norm(a.model.params["readout.w"]) <= cfg.readout_norm


def test_streamed_training_equals_training_on_the_materialised_set():
    # The streamed batches (regenerated slice by slice with PCG64.advance) must be exactly the
    # batches of the whole set drawn at once; 50 is not a multiple of the batch size.
    task, cfg = _tiny()
    s = TrainSettings(seed=1, epochs=2, batch_size=16, learning_rate=0.05, warmup_steps=3)
    X, y = task.sample(50, stream=1)
    a = train_demo_model(task, cfg, 50, s)
    b = train_pi_transformer(cfg, X, y, s)
    for k in a.model.params:
        assert np.array_equal(a.model.params[k], b.model.params[k]), k
    assert a.steps == b.steps == 2 * 4


def test_training_reduces_the_loss():
    task, cfg = _tiny()
    r = train_demo_model(task, cfg, 256, TrainSettings(seed=0, epochs=15, batch_size=32, learning_rate=0.05,
                                                       warmup_steps=5, log_every=8))
    assert r.history[-1]["train_loss"] < r.history[0]["train_loss"]


def test_learning_rate_schedule_against_its_definition():
    s = TrainSettings(learning_rate=0.3, warmup_steps=4, final_lr_fraction=0.1)
    total = 24
    lrs = [learning_rate_at(k, total, s) for k in range(total)]
    assert lrs[:4] == pytest.approx([0.075, 0.15, 0.225, 0.3])
    for k in range(4, total):  # cosine from 0.3 down towards 0.03 over the 20 remaining steps
        t = (k - 4) / 20
        assert lrs[k] == pytest.approx(0.03 + 0.27 * (1 + math.cos(math.pi * t)) / 2)
    assert all(b <= a for a, b in zip(lrs[4:], lrs[5:]))


def test_settings_validation():
    for bad in (dict(epochs=0), dict(batch_size=0), dict(learning_rate=-1.0), dict(final_lr_fraction=2.0),
                dict(warmup_steps=-1), dict(weight_decay=-0.1)):
        with pytest.raises(ValueError):
            TrainSettings(**bad)
