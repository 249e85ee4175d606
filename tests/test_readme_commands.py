"""The README's and docs' ``certbound`` command lines use only options the commands have.

Every ``certbound CMD …`` in README.md (code blocks and inline code), the notebooks' scripts, the examples
and the shipped model's README is checked flag by flag against ``CMD``'s parser: a renamed or removed
option that a document still shows fails here. The commands recorded in docs/figures/*.json must parse
completely (they are re-run to regenerate the figures).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shlex

import pytest

from certbound.cli import build_parser

ROOT = pathlib.Path(__file__).resolve().parent.parent


def command_flags() -> dict[str, set[str]]:
    """Sub-command name → every option string its parser accepts (hidden aliases included)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {o for a in p._actions for o in a.option_strings} for name, p in sub.choices.items()}


#: ``certbound CMD`` and the rest of its command line (up to a closing backtick, a table bar or a shell comment).
COMMAND = re.compile(r"certbound ([a-z][a-z-]*)((?:[^`|#\n])*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def unknown_flags(text: str, flags: dict[str, set[str]]) -> list[tuple[int, str, str]]:
    """``(line, command, flag)`` for each flag a ``certbound CMD`` line of ``text`` uses that CMD does not have."""
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in COMMAND.finditer(line):
            cmd = m.group(1)
            if cmd in flags:
                bad += [(n, cmd, f) for f in FLAG.findall(m.group(2)) if f not in flags[cmd]]
    return bad


def test_the_check_sees_an_unknown_flag():
    flags = {"spectrum": {"--json", "--layers"}}
    text = "run `certbound spectrum m --json x --layer 0` or\n$ certbound spectrum m --layers 0  # --anything\n"
    assert unknown_flags(text, flags) == [(1, "spectrum", "--layer")]


def test_readme_command_lines_use_existing_options():
    flags = command_flags()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(COMMAND.findall(text)) > 20  # the pattern still finds the README's commands
    assert unknown_flags(text, flags) == []


DOCUMENTS = sorted([*ROOT.glob("notebooks/*.py"), *ROOT.glob("examples/**/*.py"), *ROOT.glob("examples/**/*.toml"),
                    ROOT / "certbound" / "models" / "data" / "demo" / "README.md"])


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_other_documents_use_existing_options(document):
    assert unknown_flags(document.read_text(encoding="utf-8"), command_flags()) == []


@pytest.mark.parametrize("record", sorted((ROOT / "docs").rglob("*.json")), ids=lambda p: p.name)
def test_recorded_commands_in_docs_parse(record):
    doc = json.loads(record.read_text(encoding="utf-8"))
    commands = [doc.get("command")] + [p.get("command") for p in doc.get("points", [])]
    commands = [c for c in commands if c]
    assert commands
    parser = build_parser()
    for c in commands:
        argv = shlex.split(c)
        assert argv[0] == "certbound"
        _, extra = parser.parse_known_args(argv[1:])
        assert extra == [], c
