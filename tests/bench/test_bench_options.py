"""The bench scripts spell the certificate mode as the CLI does: ``--spectrum-mode``, old ``--mode`` hidden.

``SCRIPT --old VALUE --help`` parses the old spelling (which warns on stderr) and then prints the help
and exits, so nothing is benchmarked.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"

#: script → (new flag, old flag, a value both accept)
SCRIPTS = {
    "bench_spectrum.py": ("--spectrum-mode", "--mode", "auto"),
    "bench_llm_shape.py": ("--spectrum-mode", "--mode", "gram"),
    "bench_model.py": ("--spectrum-modes", "--modes", "fast,auto"),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_new_flag_shown_old_one_hidden_and_warned(script):
    new, old, value = SCRIPTS[script]
    env = dict(os.environ, PYTHONPATH=str(BENCH.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, str(BENCH / script), old, value, "--help"], capture_output=True,
                         text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    assert re.search(rf"^\s+{re.escape(new)}\b", res.stdout, re.MULTILINE), res.stdout
    assert not re.search(rf"{re.escape(old)}\b(?!-)", res.stdout.replace(new, "")), res.stdout
    assert f"{script}: warning: {old} is deprecated, use {new} (same values)" in res.stderr


def test_bench_spectrum_rejects_an_unknown_mode_by_its_new_name():
    env = dict(os.environ, PYTHONPATH=str(BENCH.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, str(BENCH / "bench_spectrum.py"), "--spectrum-mode", "exact"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 2
    assert "--spectrum-mode: invalid choice: 'exact'" in res.stderr
