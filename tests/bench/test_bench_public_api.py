"""The bench scripts use only certbound's public API (or bench-local code), and the bench-local helpers work.

bench/ is outside the package, so tests/test_import_graph.py does not see it. Here every ``import`` of
every bench script (an AST walk, so imports inside functions count too) is checked: no module or name
with a leading underscore below ``certbound``. bench_gram.py and bench_model.py (the dense-route and
whole-model benches, which time the pipeline's internals on purpose) are left out of that check (see
:data:`OTHERS`), not out of the ``--help`` run, which every script must pass.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import doctest
import importlib.util
import io
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
#: Not checked: they time the pipeline's private stages on purpose (bench_model.py: pipeline._spectrum's
#: certify/enclose_theory_matrices and _blas.single_threaded; its options come from bench/_bench_options.py).
OTHERS = {"bench_gram.py", "bench_model.py"}
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name not in OTHERS)


def private_certbound_imports(source: str) -> set[str]:
    """Dotted names of the private certbound modules or names that ``source`` imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
            found |= {m for m in mods if m.split(".")[0] == "certbound" and any(p.startswith("_") for p in m.split("."))}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "certbound":
            parts = node.module.split(".")
            for a in node.names:
                if any(p.startswith("_") for p in parts) or a.name.startswith("_"):
                    found.add(f"{node.module}.{a.name}")
    return found


def test_the_check_sees_private_imports():
    src = ("import certbound.enclose\nfrom certbound.pipeline import _spectrum as s\n"
           "def f():\n    from certbound._commands._options import X\n    import certbound._blas\n"
           "from certbound.ball import decimal_upper\n")
    assert private_certbound_imports(src) == {"certbound.pipeline._spectrum", "certbound._commands._options.X",
                                              "certbound._blas"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_scripts_import_no_private_certbound_name(script):
    assert private_certbound_imports(script.read_text(encoding="utf-8")) == set()


def _bench_options():
    spec = importlib.util.spec_from_file_location("_bench_options", BENCH / "_bench_options.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_options_doctests():
    mod = _bench_options()
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 6 and res.failed == 0


def test_spectrum_mode_option_has_the_libraries_modes_and_the_scripts_default():
    from certbound.pipeline import SPECTRUM_MODES

    mod = _bench_options()
    p = argparse.ArgumentParser(prog="b.py")
    mod.add_spectrum_mode_option(p, default="tight", deprecated_alias="--mode")
    assert p.parse_args([]).spectrum_mode == "tight"
    for m in SPECTRUM_MODES:
        assert p.parse_args(["--spectrum-mode", m]).spectrum_mode == m
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        p.parse_args(["--spectrum-mode", "exact"])
    assert "invalid choice: 'exact'" in err.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert p.parse_args(["--mode", "arb"]).spectrum_mode == "arb"
    assert "b.py: warning: --mode is deprecated, use --spectrum-mode (same values)" in err.getvalue()
    assert "--mode" not in p.format_help()


@pytest.mark.parametrize("script", sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_")),
                         ids=lambda p: p.name)
def test_every_bench_script_prints_its_help(script):
    """``--help`` imports the script and builds its parser: a renamed certbound name fails here, not in a bench run."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(BENCH.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"usage: {script.name}")
    first = script.read_text(encoding="utf-8").split('"""')[1].splitlines()[0].strip()
    assert "".join(first.split()) in "".join(res.stdout.split())  # its description: the docstring's first line
