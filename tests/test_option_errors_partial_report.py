"""A spectrum report of some layers given to a bound: one message, right for the library and for the CLI.

The report was made by the library's ``spectrum_run(layers=...)`` or the CLI's ``spectrum --layers``; the bound
(``BoundSettings(spectra=...)`` in the library, ``bound --spectra`` in the CLI) has no layer option of its own.
So the message may name neither ``layers`` nor ``--layers`` as if the caller could pass it to the bound; it
names the file, the layers covered and the remedy, and both callers see the same text.
"""

from __future__ import annotations

import json
import re

import pytest

import certbound
from certbound.cli import main
from certbound.models import demo_checkpoint_path
from certbound.pipeline import BoundSettings

DEMO = str(demo_checkpoint_path())
_WANT = ("the report covers layers [0] only (the spectra of some layers); the bound needs every layer: "
         "give a spectrum report of every layer (certified with no layer selection)")


def _partial_report(tmp_path) -> str:
    path = tmp_path / "part.json"
    path.write_text(json.dumps({"options": {"scale_logits": False, "layers": [0]},
                                "config": {"num_layers": 2}, "matrices": []}))
    return str(path)


def _no_option_named(text: str) -> bool:
    return "`" not in text and not re.search(r"(?<![\w-])--[a-z]", text) and "layers`" not in text


def test_the_library_message_names_the_file_and_no_option(tmp_path) -> None:
    path = _partial_report(tmp_path)
    with pytest.raises(ValueError) as exc:
        certbound.open_model(DEMO).bound(10**6, "0.01", BoundSettings(spectra=path))
    assert str(exc.value) == f"{path}: {_WANT}"
    assert _no_option_named(str(exc.value))


def test_the_cli_prints_the_same_message(tmp_path, capsys) -> None:
    path = _partial_report(tmp_path)
    assert main(["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--spectra", path]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}: {_WANT}" in err, err
    assert _no_option_named(err.split("error:", 1)[1])
