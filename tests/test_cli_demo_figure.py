"""`certbound demo-figure`: one point per model at its own n; PNG + PDF (Type 42 fonts) + JSON; clear errors."""

from __future__ import annotations

import json

import pytest

from certbound.cli import main

pytest.importorskip("matplotlib")


def _model(directory, n: int, seed: int) -> None:
    from certbound.models import PiTransformer, PiTransformerConfig, SparseMajorityTask, save_pi_checkpoint

    task = SparseMajorityTask(seq_len=6, n_relevant=3, label_noise=0.1, seed=0)
    cfg = PiTransformerConfig(d_model=task.d_model, n_layers=1, n_heads=1, d_head=1, seq_len=6, ffn_kind="two",
                              d_ff=2)
    save_pi_checkpoint(PiTransformer.random(cfg, seed=seed), directory,
                       extra={"task": task.to_json_dict(), "data": {"n_train": n, "n_test": 300},
                              "error_bound": {"loss": {"kind": "ramp", "margin": 1.0}}})


def test_demo_figure_from_existing_models(tmp_path, capsys):
    for i, n in enumerate((200, 800)):
        _model(tmp_path / "models" / f"n{n}", n, seed=i)
    out = tmp_path / "fig"
    assert main(["demo-figure", "--models", str(tmp_path / "models"), "--n", "200,800", "--out", str(out)]) == 0
    png, pdf = (out / "demo_vs_n.png").read_bytes(), (out / "demo_vs_n.pdf").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType (Type 42) embedded, no Type 3 fonts
    d = json.loads((out / "demo_vs_n.json").read_text())
    assert [p["n_train"] for p in d["points"]] == [200, 800]
    for p in d["points"]:
        assert p["error_bound"] >= p["test_error"] and p["gap_bound"] >= p["measured_gap"]
        assert p["input_counting"] > 0
    assert all(c["gap_bound"] > 0 for c in d["counterfactual"])
    # the counterfactual curve is one fixed set of weights: it falls with n (from 1e3 to 1e7)
    b = [c["gap_bound"] for c in d["counterfactual"]]
    assert b[-1] < b[0]
    capsys.readouterr()
    # a missing model without --train is a clear input error
    assert main(["demo-figure", "--models", str(tmp_path / "models"), "--n", "200,400", "--out", str(out)]) == 2
    assert "n = [400]" in capsys.readouterr().err
    assert main(["demo-figure", "--n", "ten", "--out", str(out)]) == 2


def test_demo_figure_json_records_no_machine_local_path(tmp_path, capsys, monkeypatch):
    models = tmp_path / "models"
    _model(models / "n200", 200, seed=0)
    cfg = models / "n200" / "config.json"
    meta = json.loads(cfg.read_text())
    meta["training"] = {"command": f"certbound train-demo --out {models / 'n200'} --seed 0 --n-train 200"}
    cfg.write_text(json.dumps(meta))
    monkeypatch.chdir(tmp_path)
    # given relative: recorded as given; given absolute: only its last component
    for given, name in (("models", "models/n200"), (str(models), "models/n200")):
        out = tmp_path / "fig"
        assert main(["demo-figure", "--models", given, "--n", "200", "--out", str(out), "--spectrum-mode", "fast"]) == 0
        capsys.readouterr()
        text = (out / "demo_vs_n.json").read_text()
        assert str(tmp_path) not in text
        d = json.loads(text)
        assert d["points"][0]["model_path"] == name
        assert d["points"][0]["command"] == f"certbound train-demo --out {name} --seed 0 --n-train 200"
        assert d["command"] == "certbound demo-figure --models models --n 200 --spectrum-mode fast"
        assert d["spectrum_mode"] == "fast"


def test_the_committed_figure_json_is_portable():
    from pathlib import Path

    d = json.loads((Path(__file__).parent.parent / "docs" / "figures" / "demo_vs_n.json").read_text())
    assert d["command"].startswith("certbound demo-figure --models certbound-demo-models ")
    for p in d["points"]:
        assert p["model_path"] == f"certbound-demo-models/n{p['n_train']}"
        assert f"--out {p['model_path']} " in p["command"] and "/tmp" not in p["command"]


@pytest.mark.slow
def test_docs_figure_record_matches_what_the_code_computes_for_the_shipped_model():
    """docs/figures/demo_vs_n.json is the output of its recorded command; its n = 10⁶ model is the shipped one.

    A documentation check (not a correctness reference): a change that moves the demo's certified numbers must
    regenerate the figure with the JSON's ``"command"`` (README, "The certificate against n").
    """
    import pathlib

    from certbound.models import demo_checkpoint_path
    from certbound.pipeline._demo import demo_point

    doc = json.loads((pathlib.Path(__file__).resolve().parents[1] / "docs" / "figures" / "demo_vs_n.json").read_text())
    assert "--spectrum-mode " + doc["spectrum_mode"] in doc["command"]
    last = doc["points"][-1]
    p = demo_point(demo_checkpoint_path(), spectrum_mode=doc["spectrum_mode"])
    assert p.n_train == last["n_train"] == 10**6
    assert (p.gap_bound, p.error_bound, p.test_error, p.train_error) == \
        (last["gap_bound"], last["error_bound"], last["test_error"], last["train_error"])


def test_a_failed_record_write_leaves_no_figure(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    from certbound._commands import demo_figure

    _model(tmp_path / "models" / "n200", 200, seed=0)
    out = tmp_path / "fig"

    def full_disk(files):
        raise OSError(28, "No space left on device", str(list(files)[0][0]))

    monkeypatch.setattr(demo_figure, "write_all", full_disk)
    def quick_plot(points, out_dir, *, counterfactual, caption):  # where the figure goes matters, not its bytes
        paths = {ext: str(Path(out_dir) / f"demo_vs_n.{ext}") for ext in ("pdf", "png")}
        for p in paths.values():
            Path(p).write_text(caption)
        return {**paths, "caption": caption}

    monkeypatch.setattr(demo_figure, "plot_demo_vs_n", quick_plot)
    monkeypatch.setattr(demo_figure, "counterfactual_curve", lambda *a, **k: [(1000, 5.0), (10**6, 0.5)])
    assert main(["demo-figure", "--models", str(tmp_path / "models"), "--n", "200", "--out", str(out),
                 "--spectrum-mode", "fast"]) == 2
    assert "demo_vs_n.json: no space left on device" in capsys.readouterr().err
    assert list(out.iterdir()) == []  # neither the figure nor its staging directory
