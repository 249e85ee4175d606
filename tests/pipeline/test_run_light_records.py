"""SpectrumRun keeps the σ-less records from its digest pass; records(include_sigma=False) gives the same dicts.

Since session 7 the table/CSV read of a run with a records file no longer parses that file a second time:
``spectrum_run_of`` keeps each record without its σ list while it computes the records digest. Compared
here against the records read back from the store and stripped, for a file-backed and an in-memory store.
"""

from __future__ import annotations

import pytest

from certbound.models import demo_checkpoint_path
from certbound.pipeline import spectrum_run
from certbound.pipeline._spectrum import spectrum_store_settings
from certbound.pipeline._streaming import MemoryRecordStore, RecordStore


@pytest.mark.parametrize("on_disk", [False, True])
def test_light_records_are_the_stored_records_without_sigma(tmp_path, on_disk):
    store = (RecordStore(tmp_path / "r.jsonl", spectrum_store_settings("auto", ["1"], True), resume=False)
             if on_disk else MemoryRecordStore())
    with store:
        run = spectrum_run(str(demo_checkpoint_path()), ps=["1"], store=store)
        assert run.light is not None and len(run.light) == len(run.outcomes)
        want = [{k: v for k, v in store.get(o.key, o.sha256).items() if k != "sigma"} for o in run.outcomes]
        got = list(run.records(include_sigma=False))
        assert got == want and all("sigma" not in r for r in got)
        assert run.report(include_sigma=False)["matrices"] == want
        got[0]["layer"] = "edited"  # a fresh top-level dict per call
        assert next(run.records(include_sigma=False))["layer"] != "edited"
        full = list(run.records())
        assert all("sigma" in r for r in full) and [{k: v for k, v in r.items() if k != "sigma"} for r in full] == want


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_tapped_digest_is_the_digest_of_the_stored_records(tmp_path, jobs):
    from certbound.pipeline._spectrum import records_digest
    from tests.checkpoints.synth_checkpoints import make_checkpoint

    d = tmp_path / "m"
    make_checkpoint(str(d), "bert", L=2, N=8, H=2, F=12)
    path = tmp_path / "r.jsonl"
    settings = spectrum_store_settings("auto", ["0.5", "1"], True)
    with RecordStore(path, settings, resume=False) as store:
        run = spectrum_run(str(d), ps=["0.5", "1"], store=store, jobs=jobs)
        stored = list(run.records())  # parsed back from the file
        assert run.head["records_sha256"] == records_digest(run.head["weights_sha256"], stored)
        assert run.light == [{k: v for k, v in r.items() if k != "sigma"} for r in stored]
    # Resumed: every record is reused from the file (none certified): the digest comes from the store alone.
    with RecordStore(path, settings, resume=True) as store:
        again = spectrum_run(str(d), ps=["0.5", "1"], store=store)
        assert store.reused == len(stored) and store.added == 0
        assert again.head == run.head and again.light == run.light


def test_a_full_tap_falls_back_to_reading_the_store(monkeypatch):
    import certbound.pipeline._spectrum as spectrum_mod

    class Counting(MemoryRecordStore):
        gets = 0

        def get(self, key, sha256):
            Counting.gets += 1
            return super().get(key, sha256)

    ref = spectrum_run(str(demo_checkpoint_path()), ps=["1"], store=Counting())
    assert Counting.gets == 0  # every record came from the tap
    monkeypatch.setattr(spectrum_mod, "_TAP_CHARACTERS", 10)  # the first record overflows it
    run = spectrum_run(str(demo_checkpoint_path()), ps=["1"], store=Counting())
    assert Counting.gets == len(run.outcomes)  # read back from the store instead
    assert run.head == ref.head and run.light == ref.light
