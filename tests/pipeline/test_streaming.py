"""The streaming engine: tasks cover the serial order, records on disk, resume by digest."""

import json
import os

import numpy as np
import pytest

from certbound.checkpoints import open_checkpoint, theory_matrices
from certbound.pipeline._streaming import (
    MatrixTask,
    MemoryRecordStore,
    ModelSource,
    RecordStore,
    combined_sha256,
    matrix_key,
    matrix_sha256,
    plan_tasks,
    run_serial,
    write_report_json,
)
from certbound.report.writers import json_text
from tests.checkpoints.synth_checkpoints import make_checkpoint


class _Counting:
    """A stand-in certify: a record naming the matrix and its exact Frobenius norm², counting calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, m):
        self.calls.append(matrix_key(m))
        w = m.to_dense()
        return {"layer": m.layer, "head": m.head, "type": m.type, "fro2": float(np.sum(w * w))}


@pytest.mark.parametrize("arch,raw", [("bert", False), ("bert", True), ("gpt2", True), ("distilbert", False)])
def test_tasks_concatenate_to_the_serial_order(tmp_path, arch, raw):
    d = tmp_path / arch
    make_checkpoint(str(d), arch, L=3, N=8, H=2, F=12)
    ck, layout = open_checkpoint(str(d))
    types = layout.matrix_types + (("W_Q", "W_K", "W_V", "W_O") if raw else ())
    with ck:
        serial = {(matrix_key(m), matrix_sha256(m)) for m in theory_matrices(ck, layout=layout, raw=raw,
                                                                             layers=[2, 0])}
    store = MemoryRecordStore()
    tasks = plan_tasks(layout, layout.matrix_types, raw=raw, layers=[2, 0])
    # One task per layer for the per-head products (QK and VO heads: one kernel batch), one per other type.
    heads = tuple(t for t in layout.matrix_types if t in ("QK", "VO"))
    groups = ([heads] if heads else []) + [(t,) for t in layout.matrix_types if t not in heads] + \
        ([("W_Q", "W_K"), ("W_V", "W_O")] if raw else [])
    assert [(t.layer, t.types) for t in tasks] == [(layer, g) for layer in (2, 0) for g in groups]
    got = run_serial(ModelSource(str(d), layout), tasks, _Counting(), store)
    # Every matrix exactly once, by layer (in the order asked for), then by type, heads ascending.
    assert {(o.key, o.sha256) for o in got} == serial and len(got) == len(serial)
    assert [o.key for o in got] == sorted((o.key for o in got), key=lambda k: (
        (2, 0).index(k[0]), types.index(k[2]), -1 if k[1] is None else k[1]))
    assert store.added == len(serial) and store.reused == 0


def test_plan_rejects_out_of_range_layers(tmp_path):
    make_checkpoint(str(tmp_path / "m"), "bert", L=2, N=8, H=2, F=12)
    ck, layout = open_checkpoint(str(tmp_path / "m"))
    ck.close()
    with pytest.raises(ValueError, match="layer 5 out of range"):
        plan_tasks(layout, layout.matrix_types, layers=[5])


def test_digest_sees_every_value_and_the_identity():
    from certbound.checkpoints import TheoryMatrix

    a = np.arange(6.0).reshape(2, 3)
    base = TheoryMatrix(0, 1, "QK", (2, 2), factors=(a[:, :2], a[:, 1:]))
    same = TheoryMatrix(0, 1, "QK", (2, 2), factors=(a[:, :2].copy(), np.ascontiguousarray(a[:, 1:])))
    assert matrix_sha256(base) == matrix_sha256(same)  # strides do not matter, values do
    b = a.copy()
    b[1, 2] = np.nextafter(b[1, 2], np.inf)
    others = [TheoryMatrix(0, 1, "QK", (2, 2), factors=(a[:, :2], b[:, 1:])),
              TheoryMatrix(0, 0, "QK", (2, 2), factors=(a[:, :2], a[:, 1:])),
              TheoryMatrix(0, 1, "VO", (2, 2), factors=(a[:, :2], a[:, 1:])),
              TheoryMatrix(0, 1, "QK", (2, 2), factors=(a[:, :2], a[:, 1:]), logit_scale_d=2)]
    assert len({matrix_sha256(m) for m in [base, *others]}) == 5


def _store_lines(p):
    return [json.loads(x) for x in open(p, encoding="utf-8").read().splitlines()]


def test_resume_reuses_only_records_of_the_same_values(tmp_path):
    d = tmp_path / "m"
    stored = make_checkpoint(str(d), "bert", L=2, N=8, H=2, F=12)
    ck, layout = open_checkpoint(str(d))
    ck.close()
    tasks = plan_tasks(layout, layout.matrix_types)
    p = tmp_path / "r.jsonl"
    first = _Counting()
    with RecordStore(p, {"mode": "fast"}, resume=False) as store:
        out1 = run_serial(ModelSource(str(d), layout), tasks, first, store)
    n = len(out1)
    assert len(first.calls) == n and len(_store_lines(p)) == n + 1
    again = _Counting()
    with RecordStore(p, {"mode": "fast"}, resume=True) as store:
        out2 = run_serial(ModelSource(str(d), layout), tasks, again, store)
        assert store.reused == n and store.added == 0
    assert again.calls == [] and out2 == out1
    # Other weights under the same names and shapes: layer 1's FFN input matrix changes.
    name = "bert.encoder.layer.1.intermediate.dense.weight"
    stored[name] = stored[name] * 2
    make_checkpoint(str(d), "bert", L=2, N=8, H=2, F=12)  # rewrite with the same seed ...
    from tests.checkpoints.synth_checkpoints import write_safetensors

    write_safetensors(str(d / "model.safetensors"), stored)  # ... then with the changed tensor
    third = _Counting()
    with RecordStore(p, {"mode": "fast"}, resume=True) as store:
        out3 = run_serial(ModelSource(str(d), layout), tasks, third, store)
        assert third.calls == [(1, None, "M_in")]
        rec = store.get((1, None, "M_in"), out3[[o.key for o in out3].index((1, None, "M_in"))].sha256)
    assert rec["fro2"] == pytest.approx(4 * first_rec(p, (1, None, "M_in"))["fro2"])
    with pytest.raises(ValueError, match="other values"):
        RecordStore(p, {"mode": "fast"}, resume=True).get((1, None, "M_in"), out1[-2].sha256)


def first_rec(p, key):
    for obj in _store_lines(p)[1:]:
        if tuple(obj["key"]) == key:
            return obj["record"]
    raise KeyError(key)


def test_store_cuts_a_partial_line_and_refuses_other_settings(tmp_path):
    p = tmp_path / "r.jsonl"
    with RecordStore(p, {"mode": "fast", "p": ["1"]}, resume=False) as s:
        s.add((0, 0, "QK"), "0" * 64, {"x": 1})
        s.add((0, 1, "QK"), "1" * 64, {"x": 2})
    whole = p.read_bytes()
    p.write_bytes(whole[:-7])  # crash in the middle of the second record
    with RecordStore(p, {"mode": "fast", "p": ["1"]}, resume=True) as s:
        assert s.known() == {(0, 0, "QK"): "0" * 64}
        s.add((0, 1, "QK"), "1" * 64, {"x": 2})
    assert p.read_bytes() == whole
    with pytest.raises(ValueError, match="mode: 'fast' there, 'tight' now"):
        RecordStore(p, {"mode": "tight", "p": ["1"]}, resume=True)
    (tmp_path / "other.jsonl").write_text('{"not": "a store"}\n')
    with pytest.raises(ValueError, match="not a certbound records file"):
        RecordStore(tmp_path / "other.jsonl", {}, resume=True)
    fresh = RecordStore(p, {"mode": "tight"}, resume=False)  # not resuming: started afresh
    fresh.close()
    assert len(_store_lines(p)) == 1


@pytest.mark.parametrize("records", [[], [{"a": 1}], [{"sigma": [{"lower": "1e-3", "mid": 0.1}], "h": None},
                                                     {"w": ["ünï", "a\nb"]}, {}]])
def test_streamed_report_json_is_json_text(tmp_path, records):
    p = tmp_path / "r.json"
    head = {"model": "x", "config": {"n": [1, 2]}, "weights_sha256": combined_sha256(["a" * 64])}
    write_report_json(p, head, iter(records))
    assert p.read_text(encoding="utf-8") == json_text({**head, "matrices": records})


def test_streamed_report_json_refuses_nan_and_leaves_no_file(tmp_path):
    p = tmp_path / "r.json"
    with pytest.raises(ValueError, match="non-finite"):
        write_report_json(p, {"model": "x"}, iter([{"a": 1.0}, {"b": float("nan")}]))
    assert os.listdir(tmp_path) == []


def test_the_library_reads_no_test_hook():
    # the kill -9 test (tests/pipeline/test_resume.py) installs its hook in the child process itself
    root = os.path.dirname(__import__("certbound").__file__)
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    assert "CERTBOUND_TEST" not in fh.read(), f


def test_a_task_knows_no_records_by_default():
    assert MatrixTask(0, 0, ("QK",)).known == ()


@pytest.mark.parametrize("reverse_layers", [False, True])
def test_tasks_of_a_model_with_a_readout_keep_it_last(reverse_layers):
    # certbound's shipped demo model (certbound-pi): its FFN matrices and a learned readout.
    from certbound.pipeline._spectrum import _report_types

    d = os.path.join(os.path.dirname(__import__("certbound").__file__), "models", "data", "demo")
    ck, layout = open_checkpoint(d)
    layers = list(range(layout.num_layers))[::-1] if reverse_layers else None
    with ck:
        types = _report_types(layout)
        assert "readout" in types
        serial = [matrix_key(m) for m in theory_matrices(ck, layout=layout, types=types, layers=layers)]
    got = run_serial(ModelSource(d, layout), plan_tasks(layout, types, layers=layers), _Counting(),
                     MemoryRecordStore())
    assert sorted(map(str, (o.key for o in got))) == sorted(map(str, serial)) and len(got) == len(serial)
    assert serial[-1][2] == "readout" and sum(k[2] == "readout" for k in serial) == 1


def test_record_store_flushes_every_record_and_fsyncs_at_most_per_interval(tmp_path, monkeypatch):
    """Each record reaches the OS at once (a reader sees it: kill -9 loses nothing); fsync is rate-limited."""
    from certbound.pipeline import _streaming

    calls = []
    real_fsync = os.fsync
    monkeypatch.setattr(_streaming.os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd)))
    monkeypatch.setattr(_streaming, "FSYNC_INTERVAL", 3600.0)
    path = tmp_path / "r.jsonl"
    store = _streaming.RecordStore(path, {"mode": "auto"}, resume=False)
    n0 = len(calls)  # the header is synced
    for i in range(5):
        store.add((0, i, "QK"), "ab" * 32, {"i": i})
        with open(path, "rb") as f:  # another file object: what a resumed run would read
            assert f.read().count(b"\n") == i + 2
    assert len(calls) == n0  # no fsync per record within the interval
    store.close()
    assert len(calls) == n0 + 1  # ... but on close
    monkeypatch.setattr(_streaming, "FSYNC_INTERVAL", 0.0)
    with _streaming.RecordStore(path, {"mode": "auto"}, resume=True) as s2:
        k = len(calls)
        s2.add((1, 0, "QK"), "cd" * 32, {"i": 9})
        assert len(calls) == k + 1 and len(s2.known()) == 6
