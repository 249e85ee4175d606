"""A layer's QK and VO heads are one task, so one kernel batch; the report is that of one task per type.

Session 7 (issue 13): the kernel's stacked per-head path costs less per head for 2H heads per call than for H.
The plan merges the two head types of a layer into one task; the loader yields all QK heads, then all VO heads,
so the report order, the weights digest and every record stay those of the old per-type plan (compared here
against that plan, restored by monkeypatching the merge away).
"""

from __future__ import annotations

import json

import pytest

import certbound.pipeline._spectrum as spectrum_mod
import certbound.pipeline._streaming as streaming_mod
from certbound.checkpoints import open_checkpoint
from certbound.pipeline import spectrum_run
from certbound.pipeline._streaming import plan_tasks
from tests.checkpoints.synth_checkpoints import make_checkpoint


@pytest.mark.parametrize("arch", ["bert", "gpt2"])
def test_a_layers_heads_are_one_batch_and_the_report_is_unchanged(tmp_path, monkeypatch, arch):
    d = tmp_path / arch
    H = 3
    make_checkpoint(str(d), arch, L=2, N=12, H=H, F=16)
    ck, layout = open_checkpoint(str(d))
    ck.close()
    tasks = plan_tasks(layout, layout.matrix_types)
    assert [t.types for t in tasks if t.layer == 0][0] == ("QK", "VO")
    assert all(not ({"QK", "VO"} & set(t.types)) or t.types == ("QK", "VO") for t in tasks)

    sizes: list[int] = []
    real = spectrum_mod.enclose_singular_values_and_norms_21_of_products

    def spy(As, Bs, **k):
        sizes.append(len(As))
        return real(As, Bs, **k)

    monkeypatch.setattr(spectrum_mod, "enclose_singular_values_and_norms_21_of_products", spy)
    merged = spectrum_run(str(d), ps=("0.5", "1", "2")).report()
    assert sizes == [2 * H, 2 * H]  # per layer: H QK heads and H VO heads in one call

    sizes.clear()
    monkeypatch.setattr(streaming_mod, "_head_types_together", lambda groups: groups)  # the per-type plan
    per_type = spectrum_run(str(d), ps=("0.5", "1", "2")).report()
    assert sizes == [H] * 4
    assert [(r["layer"], r["head"], r["type"]) for r in merged["matrices"]] == \
        [(r["layer"], r["head"], r["type"]) for r in per_type["matrices"]]
    assert json.dumps(merged, sort_keys=True) == json.dumps(per_type, sort_keys=True)
