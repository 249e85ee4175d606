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
