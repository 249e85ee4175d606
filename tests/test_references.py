"""Issue 12 item 17: no dangling references in the shipped code and proofs.

Every ``proofs/<file>.md`` named in the package exists, and nothing points at
files outside the repository (absolute ``/work/...`` paths, the never-shipped
``coord/`` notes).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT = sorted([*ROOT.glob("certbound/**/*.py"), *ROOT.glob("proofs/*.md"), ROOT / "README.md"])


@pytest.mark.parametrize("path", TEXT, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert "/work/" not in text, f"{path}: absolute path to a machine-local file"
    assert "coord/" not in text, f"{path}: reference to the unshipped coord/ notes"


def test_every_named_proof_file_exists():
    missing = set()
    for path in TEXT:
        for name in re.findall(r"proofs/([A-Za-z0-9_-]+\.md)", path.read_text(encoding="utf-8")):
            if not (ROOT / "proofs" / name).exists():
                missing.add((str(path.relative_to(ROOT)), name))
    assert not missing, sorted(missing)
