"""CLI errors a new user meets: they name the option, exit 2, cost no computation, leave no file behind."""

import os
import subprocess
import sys

import pytest

from certbound.cli import main

DEMO = os.path.join(os.path.dirname(__file__), "..", "certbound", "models", "data", "demo")


@pytest.mark.parametrize("argv, needle", [
    (["bound", DEMO, "--n", "1e400", "--delta", "0.01"], "--n: '1e400' is out of range"),
    (["bound", DEMO, "--n", "1e100000000", "--delta", "0.01"], "out of range"),
    (["bound", DEMO, "--n", "10**100000000", "--delta", "0.01"], "out of range"),
    (["bound", DEMO, "--n", "1000", "--delta", "0.01", "--config", "/nope.json"], "--config: '/nope.json': no such"),
    (["spectrum", DEMO, "--mapping", "/nope.json"], "--mapping: '/nope.json': no such"),
    (["bound", DEMO, "--n", "1000", "--delta", "0.01", "--json", "/nonexistent-dir/x.json"], "--json: cannot write"),
    (["spectrum", DEMO, "--csv", os.sep], "--csv: cannot write"),
    (["sweep", "--out", "/etc/passwd"], "--out: '/etc/passwd' exists and is not a directory"),
    (["bound", DEMO, "--n", "1000", "--delta", "0.01", "--partition-ratio", "nan"], "--partition-ratio: nan is not"),
    (["bound", DEMO, "--n", "1000", "--delta", "0.01", "--partition-ratio", "inf"], "--partition-ratio: inf is not"),
    (["spectrum", DEMO, "--layers", "0,x"], "--layers: '0,x' is not a list of 0-based layer indices"),
    (["bound", DEMO, "--n", "100", "--delta", "1e-999999999"], "--delta: '1e-999999999' is out of range"),
    (["bound", DEMO, "--n", "100", "--delta", "0.01", "--readout-norm", "1e999999999"], "--readout-norm: '1e9"),
    (["bound", DEMO, "--n", "1e-999999999", "--delta", "0.01"], "--n: '1e-999999999' is out of range"),
    (["bound", DEMO, "--n", "1000", "--delta", "0.01", "--top", "-1"], "--top must be >= 0"),
    (["sweep", DEMO, "--out", "/nonexistent-dir/x", "--digits", "0"], "--digits must be >= 1"),
    (["proxies", DEMO, "--digits", "0"], "--digits must be >= 1"),
])
def test_bad_option_names_the_option(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize("argv, needle", [
    (["demo", "--delta", "1e-999999999"], "argument --delta: '1e-999999999' is out of range"),
    (["demo", "--n", "1e400"], "argument --n: '1e400' is out of range"),
])
def test_demo_bad_numbers_are_usage_errors(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_same_file_twice_is_refused(tmp_path, capsys):
    p = str(tmp_path / "x")
    assert main(["bound", DEMO, "--n", "1000", "--delta", "0.01", "--json", p, "--latex", p]) == 2
    assert "name the same file" in capsys.readouterr().err
    assert not os.path.exists(p)


def test_second_output_failing_leaves_no_first_file(tmp_path, monkeypatch):
    # The second output's directory disappears after the up-front check: nothing may be written.
    from certbound.report import writers

    ok = tmp_path / "a.json"
    real = writers.write_all

    def failing(files):
        files = list(files)
        return real(files[:1] + [(str(tmp_path / "gone" / "b.tex"), "x")])

    monkeypatch.setattr("certbound._commands._options.write_all", failing)  # what every command writes with
    with pytest.raises(OSError):
        from certbound._commands import bound as cmd
        import argparse

        p = argparse.ArgumentParser()
        cmd.add_arguments(p)
        cmd.run(p.parse_args([DEMO, "--n", "1000", "--delta", "0.01", "--json", str(ok), "--latex",
                              str(tmp_path / "b.tex"), "--quiet"]))
    assert not ok.exists()


def test_broken_pipe_is_quiet():
    # `certbound … | head`: the reader is gone before certbound writes (a pipe whose read end is closed):
    # no "Broken pipe" traceback or "Exception ignored" message on stderr.
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "certbound", "audit", "--functions"], stdout=w,
                           stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(w)
    err = p.stderr.decode()
    assert "Traceback" not in err and "Broken pipe" not in err and "Exception ignored" not in err


def test_train_demo_never_overwrites_silently(tmp_path, capsys):
    out = tmp_path / "model"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["train-demo", "--out", str(out), "--quiet"]) == 2
    assert "not empty" in capsys.readouterr().err and (out / "keep.txt").read_text() == "mine"


def test_mapping_with_an_unknown_layout_is_refused(tmp_path, capsys):
    m = tmp_path / "m.json"
    m.write_text('{"layout": "bogus"}')
    assert main(["spectrum", DEMO, "--mapping", str(m), "--quiet"]) == 2
    assert "layout must be" in capsys.readouterr().err


def test_sweep_without_matplotlib_says_which_extra(tmp_path):
    # A Python where matplotlib cannot be imported: a one-line message naming the extra, exit 2, no traceback.
    code = ("import sys; sys.modules['matplotlib'] = None; from certbound.cli import main; "
            f"sys.exit(main(['sweep', {str(DEMO)!r}, '--out', {str(tmp_path / 'o')!r}, '--no-random-grid']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert "pip install 'certbound[plot]'" in r.stderr and "Traceback" not in r.stderr


def test_a_missing_file_is_named_without_errno(tmp_path, capsys):
    missing = tmp_path / "claims.toml"
    assert main(["audit", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"certbound audit: error: {missing}: no such file or directory" in err and "Errno" not in err


def _npz(path):
    import numpy as np

    with open(path, "wb") as fh:
        np.savez(fh, W=np.eye(2))


@pytest.mark.parametrize("make, needle", [
    (lambda p: p.write_text('{"W": [[1, 2]]}'), "not a .npy file (no NumPy header"),
    (_npz, "an .npz archive, not a .npy file"),
    (lambda p: p.mkdir(), "is a directory, not a .npy file"),
])
def test_covering_names_what_is_wrong_with_the_matrix_file(tmp_path, capsys, make, needle):
    path = tmp_path / "w.npy"
    make(path)
    assert main(["covering", str(path), "--eps", "0.1", "--rows", "4"]) == 2
    err = capsys.readouterr().err
    assert needle in err and str(path) in err and "pickled" not in err


@pytest.mark.parametrize("content, needle", [
    ("[1, 2]", "entry 0: expected an object {layer, head, type, p, schatten_radius, spectral_radius}, got int 1"),
    ('[{"layer": 0, "type": "M", "p": 1}]', "entry 0: missing key 'schatten_radius'"),
    ('[{"layer": 0, "type": "M", "p": "1/0", "schatten_radius": 1, "spectral_radius": 1}]',
     "entry 0: p: '1/0' is not an exact number"),
    ('[{"layer": 0, "type": "M", "p": 1, "schatten_radius": 1, "spectral_radius": 1},'
     ' {"layer": 0, "type": "M", "p": 0.5, "schatten_radius": 2, "spectral_radius": 1}]',
     "entry 1: a second constraint for layer 0 M (one per matrix)"),
])
def test_malformed_constraints_are_refused_before_any_certificate(tmp_path, capsys, monkeypatch, content, needle):
    import certbound.pipeline._bound as bound_mod

    path = tmp_path / "c.json"
    path.write_text(content)

    def no_spectra(*args, **kwargs):
        raise AssertionError("certified spectra before reading the constraints")

    monkeypatch.setattr(bound_mod, "model_spectra_of", no_spectra)
    argv = ["bound", DEMO, "--n", "1000", "--delta", "0.01", "--mode", "fixed", "--constraints", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}: {needle}" in err and "Traceback" not in err


def test_demo_figure_out_needs_an_existing_parent_and_is_checked_before_work(tmp_path, capsys, monkeypatch):
    import certbound._commands.demo_figure as demo_figure

    models = tmp_path / "models"
    models.mkdir()
    os.symlink(os.path.abspath(DEMO), models / "n1000")
    monkeypatch.setattr(demo_figure, "demo_point", lambda *a, **k: pytest.fail("evaluated before checking --out"))
    for out, needle in ((tmp_path / "no" / "figs", "--out: cannot create"),
                        (tmp_path / "file", "exists and is not a directory")):
        if out.name == "file":
            out.write_text("x")
        assert main(["demo-figure", "--models", str(models), "--n", "1000", "--out", str(out)]) == 2
        assert needle in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_demo_names_a_missing_model_directory(tmp_path, capsys):
    missing = str(tmp_path / "my-model")
    assert main(["demo", "--model", missing]) == 2
    err = capsys.readouterr().err
    assert f"certbound demo: error: --model: {missing!r}: no such file or directory" in err
    assert "not a certbound-pi checkpoint" not in err


def test_demo_figure_names_a_missing_models_directory(tmp_path, capsys):
    missing = str(tmp_path / "models")
    assert main(["demo-figure", "--models", missing, "--out", str(tmp_path / "figs")]) == 2
    assert f"--models: {missing!r}: no such directory (pass --train" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == []  # no --out directory made either


def test_sweep_checks_every_model_name_before_certifying_any(tmp_path, capsys):
    out = tmp_path / "results"
    missing = str(tmp_path / "no-such-model")
    assert main(["sweep", DEMO, missing, "--out", str(out), "--no-random-grid", "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such file or directory" in err
    assert "certifying" not in err  # nothing was certified first
    assert not out.exists()


def test_a_sweep_failing_midway_leaves_no_directory_it_made(tmp_path, capsys):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(DEMO, broken)
    (broken / "model.safetensors").write_bytes(b"\0" * 16)  # exists, so only reading it fails
    out = tmp_path / "results"
    assert main(["sweep", DEMO, str(broken), "--out", str(out), "--no-random-grid", "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert "  demo: L=1" in err and "error: " in err  # the first model was certified, the second failed
    assert not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    assert main(["sweep", str(broken), "--out", str(kept), "--no-random-grid", "--no-figures"]) == 2
    assert kept.is_dir()  # a directory that existed before is left alone


@pytest.mark.parametrize("argv", [["covering", "W.npy", "--eps", "0.01", "--rows", "10", "--quiet"],
                                  ["spectrum", DEMO, "--quite"], ["demo", "--jsn", "x.json"]])
def test_an_unknown_flag_is_reported_by_its_command(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    unknown = [a for a in argv if a in ("--quiet", "--quite", "--jsn")][0]
    assert f"certbound {argv[0]}: error: unrecognized arguments: {unknown}" in err
    assert err.startswith(f"usage: certbound {argv[0]} ")  # the command's usage, not the top-level one


def test_a_sweep_failing_while_drawing_keeps_the_previous_outputs(tmp_path, monkeypatch, capsys):
    from certbound.report import figures

    def quick_save(fig, out_dir, stem, caption):  # the figures' bytes do not matter here, where they go does
        paths = {}
        for ext in ("pdf", "png"):
            paths[ext] = os.path.join(out_dir, f"{stem}.{ext}")
            with open(paths[ext], "w") as f:
                f.write(f"{stem} {caption}")
        return {**paths, "caption": caption}

    monkeypatch.setattr(figures, "save_figure", quick_save)
    out = tmp_path / "results"
    args = ["sweep", DEMO, "--out", str(out), "--no-random-grid"]  # one tiny model: three figures
    assert main(args) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"sweep.json", "norms_vs_N.pdf", "singular_values.png", "contribution_curves.png"} <= set(before)

    def broken(*a, **k):
        raise ValueError("drawing failed")

    monkeypatch.setattr(figures, "plot_contribution_curves", broken)  # after the other two are drawn
    assert main(args + ["--spectrum-mode", "fast"]) == 2  # other captions: a figure written now would differ
    assert "drawing failed" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no new figure, no staging directory


def test_a_records_file_that_cannot_be_made_is_named_with_its_json(tmp_path, monkeypatch, capsys):
    from certbound._commands import spectrum

    def refuse(path, *a, **k):  # as a read-only file system does (root passes the up-front access checks)
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(spectrum, "RecordStore", refuse)
    out = tmp_path / "x.json"
    assert main(["spectrum", DEMO, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert (f"error: {out}.records.jsonl: permission denied (the records file of --json {str(out)!r}; "
            "choose another place with --records FILE)") in err
    assert main(["spectrum", DEMO, "--json", str(out), "--records", str(tmp_path / "r.jsonl")]) == 2
    assert f"error: {tmp_path / 'r.jsonl'}: permission denied\n" in capsys.readouterr().err  # a named file: as is
    assert os.listdir(tmp_path) == []
