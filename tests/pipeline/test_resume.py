"""``certbound spectrum --resume`` after ``kill -9``: no finished matrix redone, the same final JSON."""

import json
import os
import signal
import subprocess
import sys

import numpy as np

from certbound.cli import main
from tests.checkpoints.synth_checkpoints import make_checkpoint, write_safetensors

L, N, H, F = 2, 16, 4, 32
TOTAL = L * (2 * H + 2)
KILL_AFTER = 7  # among layer 0's VO heads: a task (all VO heads of a layer) is cut in the middle


#: The child: the CLI's main with RecordStore.add wrapped so that the process SIGKILLs itself right after
#: its k-th record is on disk (add returns after fsync) -- a deterministic stand-in for `kill -9` mid-run.
#: The hook lives here, in the test; the library has none.
_KILL_AFTER_K_RECORDS = """
import os, signal, sys
from certbound.pipeline import _streaming
k, add = int(sys.argv[1]), _streaming.RecordStore.add
def add_then_die(self, *args, **kwargs):
    add(self, *args, **kwargs)
    if self.added >= k:
        os.kill(os.getpid(), signal.SIGKILL)
_streaming.RecordStore.add = add_then_die
from certbound.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _killed_run(d, out, k=KILL_AFTER):
    """``certbound spectrum`` in a child process that SIGKILLs itself after its k-th record is on disk."""
    r = subprocess.run([sys.executable, "-c", _KILL_AFTER_K_RECORDS, str(k), "spectrum", str(d), "--json", str(out),
                        "--quiet"], capture_output=True, text=True, timeout=600)
    assert r.returncode == -signal.SIGKILL, r.stderr
    return out.parent / (out.name + ".records.jsonl")


def _resume(d, out, capsys):
    assert main(["spectrum", str(d), "--json", str(out), "--quiet", "--resume"]) == 0
    err = capsys.readouterr().err
    reused, certified = (int(err.split(" matrices reused")[0].split()[-1]),
                         int(err.split("), ")[1].split()[0]))
    return reused, certified


def test_kill_9_then_resume_redoes_nothing_and_gives_the_same_json(tmp_path, capsys):
    d = tmp_path / "model"
    make_checkpoint(str(d), "bert", L=L, N=N, H=H, F=F)
    ref = tmp_path / "ref.json"
    assert main(["spectrum", str(d), "--json", str(ref), "--quiet"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["model", "ref.json"]  # records file removed after success
    out = tmp_path / "out.json"
    records = _killed_run(d, out)
    assert not out.exists()  # no partial report
    lines = records.read_text().splitlines()
    assert len(lines) == 1 + KILL_AFTER
    done = [json.loads(x) for x in lines[1:]]
    capsys.readouterr()
    reused, certified = _resume(d, out, capsys)
    assert (reused, certified) == (KILL_AFTER, TOTAL - KILL_AFTER)
    assert out.read_bytes() == ref.read_bytes()
    assert not records.exists()
    # The reused records are exactly the ones written before the kill.
    final = json.loads(out.read_text())["matrices"]
    assert final[:KILL_AFTER] == [r["record"] for r in done]


def test_resume_never_reuses_a_record_of_other_weights(tmp_path, capsys):
    d = tmp_path / "model"
    stored = make_checkpoint(str(d), "bert", L=L, N=N, H=H, F=F)
    out = tmp_path / "out.json"
    records = _killed_run(d, out)
    # New values, same names and shapes: layer 0's key projection (all its QK heads change).
    name = "bert.encoder.layer.0.attention.self.key.weight"
    stored[name] = np.flipud(stored[name]).copy()
    write_safetensors(str(d / "model.safetensors"), stored)
    capsys.readouterr()
    reused, certified = _resume(d, out, capsys)
    # Records 0..H-1 were QK heads of the old key weights, H..6 VO heads (unchanged).
    assert (reused, certified) == (KILL_AFTER - H, TOTAL - KILL_AFTER + H)
    fresh = tmp_path / "fresh.json"
    assert main(["spectrum", str(d), "--json", str(fresh), "--quiet"]) == 0
    assert out.read_bytes() == fresh.read_bytes()
    assert not records.exists()


def test_resume_refuses_records_of_other_settings(tmp_path, capsys):
    d = tmp_path / "model"
    make_checkpoint(str(d), "bert", L=1, N=8, H=2, F=12)
    out = tmp_path / "out.json"
    _killed_run(d, out, k=2)
    capsys.readouterr()
    assert main(["spectrum", str(d), "--json", str(out), "--quiet", "--resume", "--spectrum-mode", "tight"]) == 2
    err = capsys.readouterr().err
    assert "other settings" in err and "mode: 'auto' there, 'tight' now" in err
    assert not out.exists()


def test_resume_needs_a_records_file(tmp_path, capsys):
    d = tmp_path / "model"
    make_checkpoint(str(d), "bert", L=1, N=8, H=2, F=12)
    assert main(["spectrum", str(d), "--resume", "--quiet"]) == 2
    assert "--resume needs" in capsys.readouterr().err
