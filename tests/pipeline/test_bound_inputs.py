"""Bound inputs refused up front with a message that names them (s6-polish's new-user sweep)."""

from __future__ import annotations

import json

import pytest

from certbound import OptionError
from certbound.pipeline import BoundSettings
from certbound.pipeline._bound import spectra_from_report


@pytest.mark.parametrize("m", [0, -1])
def test_p_grid_m_below_one_is_refused(m):
    with pytest.raises(OptionError, match="`p_grid_m` must be ≥ 1"):
        BoundSettings(p_grid_m=m)


def test_p_grid_m_one_is_accepted():
    assert BoundSettings(p_grid_m=1).p_grid_m == 1


def _report(tmp_path, layers, num_layers=2):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"options": {"scale_logits": False, "layers": layers},
                                "config": {"num_layers": num_layers}, "matrices": []}))
    return str(path)


@pytest.mark.parametrize("layers", [[0], [1], [0, 2]])
def test_a_report_of_some_layers_is_refused_naming_the_file(tmp_path, layers):
    path = _report(tmp_path, layers)
    with pytest.raises(ValueError, match=r"s\.json: the report covers layers .* only \(the spectra of some layers\); "
                                         r"the bound needs every layer"):
        spectra_from_report(path, scale_logits=False)


@pytest.mark.parametrize("layers", [None, [0, 1], [1, 0]])
def test_a_report_of_every_layer_is_read(tmp_path, layers):
    spectra, cfg = spectra_from_report(_report(tmp_path, layers), scale_logits=False)
    assert spectra == {} and cfg["num_layers"] == 2
