"""The σ-list template of stage_report_json writes exactly what json.dumps(indent=2) writes.

The reference is the standard library's encoder itself (json.dumps with the
same options), on real records and on records built to miss the template.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest
from flint import arb

from certbound.ball import ball_to_json
from certbound.checkpoints import TheoryMatrix
from certbound.pipeline._spectrum import certify_theory_matrices
from certbound.pipeline._streaming import _record_json_text, write_report_json
from certbound.report.writers import json_text


def _plain(rec):
    json_text(rec, indent=None)  # the finiteness check of the plain path
    return json.dumps(rec, indent=2, allow_nan=False, ensure_ascii=False)


def _records():
    rng = np.random.default_rng(0)
    ms = [TheoryMatrix(0, h, "QK", (8, 8), factors=(rng.standard_normal((8, 2)), rng.standard_normal((8, 2))))
          for h in range(2)]
    ms.append(TheoryMatrix(0, None, "M_in", (3, 5), dense=rng.standard_normal((3, 5))))
    return certify_theory_matrices(ms, "auto", ["0.5", "1", "2"])


def _variants():
    base = _records()
    out = list(base)
    r = dict(base[0])
    r["warnings"] = ["ünïcode \"quoted\" \\ back\nslash", "\u2028"]  # after sigma, escapes, non-ASCII
    out.append(r)
    r = dict(base[1])
    r["sigma"] = [dict(q, lower="λ \t") for q in r["sigma"]] + [ball_to_json(arb(0).union(arb.pos_inf()))]
    out.append(r)
    r = dict(base[2])
    r["sigma"] = [dict(base[2]["sigma"][0], extra=1)] + base[2]["sigma"]  # not the ball form: plain path
    out.append(r)
    r = dict(base[2])
    r["sigma"] = []
    out.append(r)
    r = dict(base[0])
    r["sigma"] = [dict(q, mid=None) for q in r["sigma"]] + [dict(r["sigma"][0], mid=5)]  # an int mid
    out.append(r)
    r = {"sigma": base[0]["sigma"], "layer": 1, "nested": {"sigma": "\0certbound-sigma-list\0"}}
    out.append(r)  # the placeholder text occurs twice: plain path
    out.append({"layer": 0, "sigma": "not a list"})
    return out


@pytest.mark.parametrize("i", range(10))
def test_record_text_equals_json_dumps(i):
    rec = _variants()[i]
    assert _record_json_text(rec) == _plain(rec)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_mid_raises_the_plain_paths_error(bad):
    rec = dict(_records()[0])
    rec["sigma"] = list(rec["sigma"]) + [dict(rec["sigma"][0], mid=bad)]
    with pytest.raises(ValueError) as plain:
        _plain(rec)
    with pytest.raises(ValueError) as fast:
        _record_json_text(rec)
    assert str(fast.value) == str(plain.value) and "$.sigma[" in str(fast.value)
    rec = dict(_records()[0], spectral_norm={"mid": bad})
    with pytest.raises(ValueError, match=r"\$\.spectral_norm\.mid"):
        _record_json_text(rec)


def test_report_file_equals_json_text():
    recs = _variants()[:6]
    head = {"model": "m", "options": {"p": ["1"]}}
    path = os.path.join(tempfile.mkdtemp(), "r.json")
    write_report_json(path, head, iter(recs))
    with open(path, encoding="utf-8") as f:
        assert f.read() == json_text({**head, "matrices": recs})


def _zero(**over):
    q = {"lower": "0", "upper": "0", "mid": 0.0, "exact": {"lower": "0", "upper": "0"}}
    q.update(over)
    return q


@pytest.mark.parametrize("tail", [
    [_zero() for _ in range(5)],
    [_zero(mid=-0.0), _zero()],  # -0.0 == 0.0 for dicts, not for json
    [{"upper": "0", "lower": "0", "mid": 0.0, "exact": {"lower": "0", "upper": "0"}}, _zero()],  # key order
    [_zero(exact={"upper": "0", "lower": "0"}), _zero()],
    [_zero(mid=0), _zero()],  # an int 0
    [_zero(mid=False), _zero()],  # False == 0.0 too
    [_zero(extra=1), _zero()],
    [_zero(), {"lower": "1", "upper": "2", "mid": 1.5, "exact": {"lower": "1", "upper": "2"}}, _zero()],
    [_zero(lower="0.0"), _zero()],
])
def test_zero_tail_text_equals_json_dumps(tail):
    # Session 7: the σᵢ proved 0 at the end of a σ list are written as one constant text; the exact-zero form
    # must be the one json.dumps writes that way, every near miss must take the general path.
    rec = dict(_records()[0])
    rec["sigma"] = list(rec["sigma"]) + tail
    assert _record_json_text(rec) == _plain(rec)
    rec["sigma"] = tail
    assert _record_json_text(rec) == _plain(rec)


def test_zero_tail_with_a_nan_raises_the_plain_paths_error():
    rec = dict(_records()[0])
    rec["sigma"] = list(rec["sigma"]) + [_zero(mid=float("nan")), _zero()]
    with pytest.raises(ValueError) as plain:
        _plain(rec)
    with pytest.raises(ValueError) as fast:
        _record_json_text(rec)
    assert str(fast.value) == str(plain.value)
