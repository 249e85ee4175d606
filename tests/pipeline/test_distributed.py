"""``certbound spectrum --dask local``: a LocalCluster of two worker processes gives the serial results."""

import json
from fractions import Fraction

import pytest

from certbound.cli import main
from tests.checkpoints.synth_checkpoints import make_checkpoint

pytest.importorskip("distributed")


def _balls(obj, where="$"):
    """Every certified quantity {lower, upper, ...} in a record, by place."""
    if isinstance(obj, dict):
        if "lower" in obj and "upper" in obj and "mid" in obj:
            yield where, Fraction(obj["lower"]), Fraction(obj["upper"])
            return
        for k, v in obj.items():
            yield from _balls(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _balls(v, f"{where}[{i}]")


def test_dask_local_gives_the_serial_certificates(tmp_path, capsys):
    d = tmp_path / "model"
    make_checkpoint(str(d), "gpt2", L=2, N=16, H=4, F=32)  # fused QKV: tasks slice one tensor
    serial, dist = tmp_path / "serial.json", tmp_path / "dask.json"
    assert main(["spectrum", str(d), "--json", str(serial), "--quiet"]) == 0
    assert main(["spectrum", str(d), "--json", str(dist), "--quiet", "--dask", "local", "--jobs", "2"]) == 0
    a, b = json.loads(serial.read_text()), json.loads(dist.read_text())
    assert a["weights_sha256"] == b["weights_sha256"]
    assert [(r["layer"], r["head"], r["type"]) for r in a["matrices"]] == \
        [(r["layer"], r["head"], r["type"]) for r in b["matrices"]]
    assert all(r["certified"] for r in a["matrices"] + b["matrices"])
    print("serial == dask JSON:", a == b)
    if a != b:  # another BLAS (threads) in the workers may round differently: balls must still intersect
        for ra, rb in zip(a["matrices"], b["matrices"]):
            pa, pb = list(_balls(ra)), list(_balls(rb))
            assert [p for p, *_ in pa] == [p for p, *_ in pb]
            for (p, lo1, hi1), (_, lo2, hi2) in zip(pa, pb):
                assert max(lo1, lo2) <= min(hi1, hi2), p
    assert sorted(x.name for x in tmp_path.iterdir()) == ["dask.json", "model", "serial.json"]


def test_dask_needs_a_reachable_scheduler(tmp_path, capsys):
    d = tmp_path / "model"
    make_checkpoint(str(d), "bert", L=1, N=8, H=2, F=12)
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        assert main(["spectrum", str(d), "--quiet", "--dask", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
