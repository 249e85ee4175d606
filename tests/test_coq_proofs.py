"""The machine-checked proofs in proofs/coq/ compile and use only allowed axioms.

Runs ``proofs/coq/check.py`` (what ``make -C proofs/coq`` runs). Without Coq
the check is skipped with a reason, unless ``CERTBOUND_REQUIRE_COQ=1`` (set by
``.ci/run``), which turns the skip into a failure: CI never skips it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

COQ_DIR = Path(__file__).resolve().parents[1] / "proofs" / "coq"
CHECK = COQ_DIR / "check.py"
REQUIRED = os.environ.get("CERTBOUND_REQUIRE_COQ") == "1"
INSTALL = "apt-get install coq libcoq-flocq libcoq-interval libcoq-coquelicot"


def _missing_coq_reason() -> str | None:
    """Why the Coq check cannot run here (None if it can)."""
    coqc = shutil.which("coqc")
    if coqc is None:
        return f"coqc not found (Debian: {INSTALL})"
    with tempfile.TemporaryDirectory() as tmp:
        probe_file = Path(tmp) / "Probe.v"
        probe_file.write_text(
            "From Flocq Require Import Core. From Interval Require Import Tactic.\n"
            "From Coquelicot Require Import Coquelicot.\n"
        )
        probe = subprocess.run([coqc, "-q", str(probe_file)], capture_output=True, text=True, cwd=tmp)
    if probe.returncode != 0:
        return f"Flocq/Interval/Coquelicot not loadable by coqc ({INSTALL}): {probe.stderr.strip()[:200]}"
    return None


def _require_coq() -> None:
    reason = _missing_coq_reason()
    if reason is None:
        return
    if REQUIRED:
        pytest.fail(f"CERTBOUND_REQUIRE_COQ=1 but the Coq check cannot run: {reason}")
    pytest.skip(f"machine-checked proofs not checked: {reason}; CI sets CERTBOUND_REQUIRE_COQ=1")


def _run_check(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(directory / "check.py")], capture_output=True, text=True)


def test_coq_development_checks() -> None:
    _require_coq()
    proc = _run_check(COQ_DIR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK:" in proc.stdout and "only allowed axioms" in proc.stdout


def _mini_project(tmp_path: Path, source: str) -> Path:
    for name in ("check.py", "allowed_axioms.txt"):
        shutil.copy(COQ_DIR / name, tmp_path / name)
    (tmp_path / "_CoqProject").write_text("-R . Mini\nMini.v\n")
    (tmp_path / "Mini.v").write_text(source)
    return tmp_path


def test_check_rejects_admitted_without_compiling(tmp_path: Path) -> None:
    # The keyword scan runs before coqc is looked up, so this needs no Coq.
    d = _mini_project(tmp_path, "Lemma l : 1 = 2.\nProof.\nAdmitted.\n")
    proc = _run_check(d)
    assert proc.returncode == 1 and "forbidden keyword 'Admitted'" in proc.stdout


def test_check_ignores_keywords_in_comments(tmp_path: Path) -> None:
    _require_coq()
    d = _mini_project(tmp_path, "(* no Axiom (* nested admit *) here *)\nLemma l : 1 = 1.\nProof. reflexivity. Qed.\n")
    proc = _run_check(d)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_rejects_unlisted_axiom(tmp_path: Path) -> None:
    _require_coq()
    src = (
        "From Coq Require Import ProofIrrelevance.\n"
        "Lemma l : forall p q : True, p = q.\nProof. intros; apply proof_irrelevance. Qed.\n"
    )
    proc = _run_check(_mini_project(tmp_path, src))
    assert proc.returncode == 1, proc.stdout
    assert "NOT ALLOWED: Mini.Mini.l uses" in proc.stdout and "proof_irrelevance" in proc.stdout


def test_check_rejects_disabled_kernel_checks(tmp_path: Path) -> None:
    d = _mini_project(tmp_path, "Unset Guard Checking.\nLemma l : 1 = 1.\nProof. reflexivity. Qed.\n")
    proc = _run_check(d)
    assert proc.returncode == 1 and "forbidden keyword" in proc.stdout


def test_parse_assumptions_flags_every_kind_of_assumption() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("coq_check", CHECK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = (
        "@@CHECK A\nClosed under the global context\n"
        "@@CHECK B\nAxioms:\nClassical_Prop.classic : forall P : Prop, P \\/ ~ P\n"
        "Foo.bar\n  : nat\n"
        "Fixpoints relying on the guard condition not being checked:\nM.f\n"
    )
    used = mod.parse_assumptions(out)
    assert used["A"] == set()
    assert {"Classical_Prop.classic", "Foo.bar"} <= used["B"]
    assert any(name.startswith("<Fixpoints") for name in used["B"])
