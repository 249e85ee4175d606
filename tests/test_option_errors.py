"""Errors about options name the option as the caller spells it: the parameter in the library, the flag in the CLI.

A library user never sees ``--seq-len`` (there is no such thing in Python); a CLI user sees the flag, not the
parameter. The library writes each name once, in backticks (``certbound.OptionError``); ``certbound.cli``
re-spells it with the command's flags.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import pickle
import re

import numpy as np
import pytest

import certbound
from certbound import OptionError
from certbound.audit import audit_file
from certbound.cli import build_parser, main, option_flags
from certbound.models import demo_checkpoint_path
from certbound.pipeline import BoundSettings, covering_report, parse_count, parse_number, parse_schatten_indices

PACKAGE = pathlib.Path(certbound.__file__).resolve().parent
DEMO = str(demo_checkpoint_path())
CLAIM = '[[claim]]\nid = "e"\nquantity = "exp(1)"\nrelation = ">"\nvalue = "2"\n'

#: A flag in a message: two dashes, then a letter, not inside a word ("pip install --no-deps" is pip's own flag).
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
_ALLOWED = {"--no-deps"}


def _message_strings(node: ast.AST) -> list[str]:
    """The literal text pieces of an expression (string constants and f-string parts)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


@functools.lru_cache(maxsize=None)
def _library_messages() -> list[tuple[str, int, str]]:
    """(module, line, text) of every message outside the CLI layer: raises, warnings, exceptions built anywhere."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("_commands/") or rel == "cli.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                target = node.exc
            elif isinstance(node, ast.Call) and (_callee(node) == "warn"
                                                 or _callee(node).endswith(("Error", "Exception", "Warning"))):
                target = node  # warnings.warn(...), and an exception built before it is raised
            else:
                continue
            out.extend((rel, node.lineno, text) for text in _message_strings(target))
    return out


def test_the_scan_sees_raises_and_warnings():
    texts = [t for _, _, t in _library_messages()]
    assert any("`seq_len` must be ≥ 1" in t for t in texts)  # a raise
    assert any("stored matrices inside the layers" in t for t in texts)  # a warnings.warn
    assert any("is out of range: at most 1e" in t for t in texts)  # an exception built, raised later


def test_no_library_error_or_warning_names_a_cli_flag():
    bad = [f"{rel}:{line}: {text!r}" for rel, line, text in _library_messages()
           if set(_FLAG.findall(text)) - _ALLOWED]
    assert bad == []


def test_option_error_is_a_value_error_that_respells_and_pickles():
    exc = OptionError("`margin` is required when `loss` is 'ramp'; `other` stays")
    assert isinstance(exc, ValueError) and exc.options == ("margin", "loss", "other")
    assert exc.spelled({"margin": "--margin", "loss": "--loss"}) == \
        "--margin is required when --loss is 'ramp'; `other` stays"
    back = pickle.loads(pickle.dumps(exc))  # raised in a worker process, re-raised in the parent
    assert type(back) is OptionError and str(back) == str(exc)


def test_option_flags_come_from_the_parser_and_skip_hidden_aliases():
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    flags = option_flags(sub["bound"], {"logit_scale": "--no-logit-scale"})
    assert flags["seq_len"] == "--seq-len" and flags["spectrum_mode"] == "--spectrum-mode"
    assert flags["mode"] == "--mode" and flags["logit_scale"] == "--no-logit-scale"
    assert option_flags(sub["spectrum"])["spectrum_mode"] == "--spectrum-mode"  # not the hidden --mode


#: (library call, its message) and (argv, the CLI's message) for the same bad option.
CASES = [
    (lambda: BoundSettings(seq_len=0), "`seq_len` must be ≥ 1",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--seq-len", "0"], "--seq-len must be ≥ 1"),
    (lambda: BoundSettings(loss="ramp"), "`margin` (the a-priori margin γ > 0) is required when `loss` is 'ramp'",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--loss", "ramp"],
     "--margin (the a-priori margin γ > 0) is required when --loss is 'ramp'"),
    (lambda: BoundSettings(margin="0.1"), "`margin` is only used when `loss` is 'ramp'",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--margin", "0.1"], "--margin is only used when --loss is"),
    (lambda: BoundSettings(mode="fixed"), "`mode` 'fixed' needs `constraints`",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--mode", "fixed"], "--mode 'fixed' needs --constraints"),
    (lambda: BoundSettings(readout_norm="x"), "`readout_norm`: 'x' is not a number",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--readout-norm", "x"], "--readout-norm: 'x' is not a number"),
    (lambda: certbound.open_model(DEMO).bound(10**6, "0.01", residual=True),
     "`residual`: this certbound-pi model has no residual connections",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--residual"],
     "--residual: this certbound-pi model has no residual connections"),
    (lambda: certbound.open_model(DEMO).bound(10**6, "0.01", softmax_lip="1/2"),
     "`softmax_lip` 1/2 is below the certbound-pi config's softmax_lip",
     ["bound", DEMO, "--n", "1e6", "--delta", "0.01", "--softmax-lip", "1/2"],
     "--softmax-lip 1/2 is below the certbound-pi config's softmax_lip"),
    (lambda: certbound.open_model(DEMO).bound("1.5", "0.01"), "`n`: '1.5' is not a positive integer",
     ["bound", DEMO, "--n", "1.5", "--delta", "0.01"], "--n: '1.5' is not a positive integer"),
    (lambda: certbound.open_model(DEMO).spectra(jobs=0), "`jobs` must be at least 1, not 0",
     ["spectrum", DEMO, "--jobs", "0"], "--jobs must be at least 1, not 0"),
    (lambda: certbound.open_model(DEMO).spectra(p="3"), "`p`: 3 is not in (0, 2]",
     ["spectrum", DEMO, "--p", "3"], "--p: 3 is not in (0, 2]"),
    (lambda: list(certbound.checkpoints.theory_matrices(DEMO, scale_logits=True)), "drop `scale_logits`",
     ["spectrum", DEMO, "--scale-logits"], "drop --scale-logits"),
    (lambda: covering_report(np.eye(3), eps=1, rows=1, rank=0), "`rank` must lie in [1, min(a, b)] = [1, 3]",
     ["covering", "EYE3", "--eps", "1", "--rows", "1", "--rank", "0"], "--rank must lie in [1, min(a, b)] = [1, 3]"),
    (lambda: covering_report(np.eye(3), eps=1, rows=1, ps=[3]), "`ps`: 3 is not in [0, 2]",
     ["covering", "EYE3", "--eps", "1", "--rows", "1", "--p", "3"], "--p: 3 is not in [0, 2]"),
    (lambda: audit_file(CLAIM, max_prec=64), "`max_prec` must be at least 128, got 64",
     ["audit", "CLAIM", "--max-prec", "64"], "--max-prec must be at least 128, got 64"),
]


@pytest.mark.parametrize("call, library_message, argv, cli_message", CASES,
                         ids=[c[2][0] + ":" + c[1][:24] for c in CASES])
def test_the_library_names_the_parameter_and_the_cli_the_flag(call, library_message, argv, cli_message,
                                                                tmp_path, capsys):
    with pytest.raises(OptionError) as exc:
        call()
    assert library_message in str(exc.value) and not _FLAG.findall(str(exc.value))
    files = {"EYE3": tmp_path / "eye3.npy", "CLAIM": tmp_path / "claims.toml"}
    np.save(files["EYE3"], np.eye(3))
    files["CLAIM"].write_text(CLAIM)
    argv = [str(files.get(a, a)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert cli_message in err and "`" not in err.split("error:", 1)[1].split("(")[0], err


def test_helpers_name_what_their_caller_gives():
    for call, needle in [(lambda: parse_count("x"), "`n`: 'x' is not a number"),
                         (lambda: parse_count("x", "--rows"), "--rows: 'x' is not a number"),
                         (lambda: parse_number("x", "claim 3: p"), "claim 3: p: 'x' is not a number"),
                         (lambda: parse_schatten_indices("", "ps"), "`ps`: give at least one Schatten index")]:
        with pytest.raises(OptionError, match=re.escape(needle)):
            call()


@pytest.mark.parametrize("call, needle", [
    (lambda: certbound.pipeline.run_demo(delta="2", search_nonvacuous=False), "`delta` must lie in (0, 1), got 2"),
    (lambda: certbound.pipeline.run_demo(n=0, search_nonvacuous=False), "the sample size `n` must be a positive"),
    (lambda: certbound.open_model(DEMO).proxies("papers"), "`variant` must be one of paper, corrected, both"),
    (lambda: certbound.open_model(DEMO).spectra(layers=[5]), "`layers`: layer 5 out of range"),
    (lambda: certbound.open_model(DEMO).bound(10, "0.1", BoundSettings(), seq_len=3), "give either `settings`"),
    # ε ≤ 0, ρ ≤ 0 gave the trivial ball [-inf, inf] without a word
    (lambda: covering_report(np.eye(3), eps="0", rows=10), "`eps` must be > 0, got '0'"),
    (lambda: covering_report(np.eye(3), eps=1, rows=10, rho=-1), "`rho` must be > 0, got -1"),
    (lambda: covering_report(np.eye(3), eps=1, rows=0), "`rows` must be a positive integer, got 0"),
])
def test_more_library_errors_name_their_parameter(call, needle):
    with pytest.raises(OptionError, match=re.escape(needle)) as exc:
        call()
    assert not _FLAG.findall(str(exc.value))


def test_option_error_shows_its_public_name():
    import traceback

    err = certbound.OptionError("`jobs` must be at least 1, not 0")
    assert traceback.format_exception_only(err)[0].startswith("certbound.OptionError: `jobs`")
    assert pickle.loads(pickle.dumps(err)).args == err.args
