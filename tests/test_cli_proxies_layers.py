"""``--layers`` of ``certbound proxies`` and ``layers=`` of ``Model.proxies``: one prefix rule, one message.

The rule (the proxies are defined for a prefix sub-network 0..K-1) is checked once, in the library
(:func:`certbound.pipeline._proxies.prefix_depth_of`); the CLI passes its parsed ``--layers`` list on and
prints the library's message with the parameter spelled as the flag.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from safetensors.numpy import save_file

import certbound
from certbound.cli import main

N, FF, LAYERS = 8, 16, 3


@pytest.fixture(scope="module")
def bert3(tmp_path_factory):
    """A 3-layer BERT-named checkpoint with random weights (no torch needed)."""
    d = tmp_path_factory.mktemp("bert3")
    rng = np.random.default_rng(7)
    w = {}
    for i in range(LAYERS):
        for k, s in [("attention.self.query", (N, N)), ("attention.self.key", (N, N)),
                     ("attention.self.value", (N, N)), ("attention.output.dense", (N, N)),
                     ("intermediate.dense", (FF, N)), ("output.dense", (N, FF))]:
            w[f"encoder.layer.{i}.{k}.weight"] = rng.standard_normal(s).astype(np.float32)
    save_file(w, os.path.join(d, "model.safetensors"))
    cfg = {"model_type": "bert", "hidden_size": N, "num_attention_heads": 2, "num_hidden_layers": LAYERS,
           "intermediate_size": FF}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return str(d)


RULE = "the proxies are defined for a prefix sub-network 0..K-1"


@pytest.mark.parametrize("cli, lib", [("1-2", [1, 2]), ("0,2", [0, 2]), ("2", [2])])
def test_a_non_prefix_is_refused_with_the_same_message_by_the_library_and_the_cli(bert3, tmp_path, capsys, cli, lib):
    with pytest.raises(certbound.OptionError) as info:
        certbound.open_model(bert3).proxies("paper", layers=lib)
    assert str(info.value).startswith(f"`layers` {lib}: {RULE}")

    out = tmp_path / "p.json"
    assert main(["proxies", bert3, "--variant", "paper", "--layers", cli, "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"certbound proxies: error: {info.value.spelled({'layers': '--layers'})}"
    assert err.startswith(f"certbound proxies: error: --layers {lib}: {RULE}")
    assert not out.exists()


def test_a_layer_out_of_range_is_named_by_both(bert3, capsys):
    with pytest.raises(certbound.OptionError, match=r"`layers`: layer 3 out of range \(model has 3 layers"):
        certbound.open_model(bert3).proxies("paper", layers=[0, 1, 2, 3])
    assert main(["proxies", bert3, "--layers", "0-3"]) == 2
    assert "error: --layers: layer 3 out of range (model has 3 layers" in capsys.readouterr().err


@pytest.mark.parametrize("cli, depth", [("0-1", 2), ("1,0", 2), ("0", 1), ("0-2", 3)])
def test_a_prefix_gives_that_depth_in_both(bert3, tmp_path, cli, depth):
    out = tmp_path / "p.json"
    assert main(["proxies", bert3, "--variant", "paper", "--layers", cli, "--json", str(out), "--no-grid"]) == 0
    rep = json.loads(out.read_text())
    lib = certbound.open_model(bert3).proxies("paper", layers=list(range(depth)))
    assert lib.info["used_layers"] == depth
    assert rep["model"]["used_layers"] == depth
