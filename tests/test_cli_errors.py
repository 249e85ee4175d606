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

    monkeypatch.setattr("certbound._commands.bound.write_all", failing)
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
