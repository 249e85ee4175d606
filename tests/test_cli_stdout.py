"""``-`` as an output file means standard output, in every command, and then stdout carries only that text."""

from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import pytest

from certbound.cli import main

DEMO = os.path.join(os.path.dirname(__file__), "..", "certbound", "models", "data", "demo")


def _in(tmp_path):
    return sorted(os.listdir(tmp_path))


def test_spectrum_json_and_csv_to_stdout_match_the_files(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["spectrum", DEMO, "--json", "r.json", "--csv", "r.csv", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["spectrum", DEMO, "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads((tmp_path / "r.json").read_text())  # nothing but the JSON on stdout
    assert main(["spectrum", DEMO, "--csv", "-"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == list(csv.reader(io.StringIO((tmp_path / "r.csv").read_text())))
    assert _in(tmp_path) == ["r.csv", "r.json"]  # no file named '-', no records file left


def test_bound_covering_proxies_json_to_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["theorem"].startswith("Theorem 2") and doc["n"] == 1000000
    np.save(tmp_path / "w.npy", np.diag([3.0, 1.0]))
    assert main(["covering", "w.npy", "--eps", "0.1", "--rows", "4", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["shape"] == [2, 2]
    from tests.report.test_figures import write_tiny_bert

    write_tiny_bert(tmp_path / "tiny")
    assert main(["proxies", "tiny", "--variant", "paper", "--csv", "-"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][:3] == ["model", "variant", "layer"] and len(rows) > 1
    assert _in(tmp_path) == ["tiny", "w.npy"]


@pytest.mark.parametrize("argv", [
    ["spectrum", DEMO, "--json", "-", "--csv", "-"],
    ["bound", DEMO, "--n", "10", "--delta", "0.5", "--json", "-", "--latex", "-"],
    ["audit", "--functions", "--json", "-", "--markdown", "-"],
])
def test_two_outputs_to_stdout_are_refused(argv, capsys):
    assert main(argv) == 2
    assert "both write to stdout ('-')" in capsys.readouterr().err


def test_spectrum_records_file_cannot_be_stdout(capsys):
    assert main(["spectrum", DEMO, "--records", "-"]) == 2
    assert "--records: the records file must be a file" in capsys.readouterr().err
