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


def _good_record(**over):
    rec = {"layer": 0, "head": 1, "type": "QK", "certified": True, "rank": {"lower": 1, "upper": 2},
           "sigma": [{"exact": {"lower": "3*2^-1", "upper": "2"}}, {"exact": {"lower": "0", "upper": "1*2^-3"}}]}
    rec.update(over)
    return rec


def _records_report(tmp_path, matrices):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"options": {"scale_logits": False, "layers": None},
                                "config": {"num_layers": 1}, "matrices": matrices}))
    return str(path)


def test_a_well_formed_record_is_read_exactly(tmp_path):
    from fractions import Fraction

    from certbound.ball import lower_fraction, upper_fraction

    spectra, _ = spectra_from_report(_records_report(tmp_path, [_good_record()]), scale_logits=False)
    enc = spectra[(0, 1, "QK")]
    # each σ ball contains its record's exact interval (ball_from_json), and only a hair more
    for s, (lo, hi) in zip(enc.sigma, [(Fraction(3, 2), Fraction(2)), (Fraction(0), Fraction(1, 8))]):
        assert lo - Fraction(1, 2**20) <= lower_fraction(s) <= lo and hi <= upper_fraction(s) <= hi + Fraction(1, 2**20)
    assert (enc.rank.lower, enc.rank.upper) == (1, 2) and 2.0 <= enc.upper[0] <= 2.0 + 2**-20


@pytest.mark.parametrize("matrices, needle", [
    ([_good_record(sigma=[{"exact": {"lower": "abc", "upper": "1"}}])],
     r"matrix record 0 \(layer 0 head 1 QK\) is malformed \(not an exact dyadic end 'abc'"),
    ([_good_record(sigma=[{"exact": {"lower": 5, "upper": "1"}}])], r"record 0 .*not an exact dyadic end 5 "),
    ([_good_record(sigma=[{"lower": "1"}])], r"record 0 \(layer 0 head 1 QK\) is malformed \(missing field 'exact'\)"),
    ([_good_record(), _good_record(type="M_in", head=None, sigma="x")], r"record 1 \(layer 0 M_in\) is malformed"),
    ([_good_record(rank={"lower": 1})], r"record 0 .* is malformed \(missing field 'upper'\)"),
    ([_good_record(rank={"lower": "one", "upper": 2})], r"record 0 .* is malformed \(invalid literal"),
    ([{k: v for k, v in _good_record().items() if k != "sigma"}],
     r"record 0 \(layer 0 head 1 QK\) has no \"sigma\" list: a report written without its σ lists"),
    ([_good_record(), 7], r"matrix record 1 is not a JSON object"),
    ({"0": _good_record()}, r"its \"matrices\" is not a list of records"),
])
def test_a_malformed_record_is_refused_naming_the_file_and_the_record(tmp_path, matrices, needle):
    # Before session 7 these ended in a bare KeyError/TypeError traceback or "invalid literal for int()".
    with pytest.raises(ValueError, match=r"s\.json: .*" + needle):
        spectra_from_report(_records_report(tmp_path, matrices), scale_logits=False)


def test_a_binary_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ValueError, match=r"s\.json: not a JSON spectrum report \(not UTF-8 text: invalid start byte at "
                                         r"byte 0\)"):
        spectra_from_report(str(path), scale_logits=False)


def test_binary_constraints_and_config_files_are_refused_naming_them(tmp_path, capsys):
    # Before: "'utf-8' codec can't decode byte 0xff in position 0" with no file named (CLI --constraints, --config).
    from certbound.cli import main
    from certbound.models import demo_checkpoint_path

    path = tmp_path / "c.json"
    path.write_bytes(b"\xff\xfe\x00binary")
    demo = str(demo_checkpoint_path())
    assert main(["bound", demo, "--n", "1e6", "--delta", "0.1", "--mode", "fixed", "--constraints", str(path)]) == 2
    assert f"error: {path}: invalid JSON (not UTF-8 text: invalid start byte at byte 0)" in capsys.readouterr().err
    assert main(["spectrum", demo, "--config", str(path)]) == 2
    assert f"error: {path}: not valid JSON (not UTF-8 text: invalid start byte at byte 0)" in capsys.readouterr().err
