"""Every command's ``--help`` says the same thing about the same option, and states its defaults."""

from __future__ import annotations

import argparse

import pytest

from certbound._commands._options import MAPPING_HELP, MODEL_HELP
from certbound.checkpoints import PACKAGED_CHECKPOINTS
from certbound.cli import build_parser


def _commands():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


COMMANDS = _commands()
_NO_VALUE = (argparse._HelpAction, argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._VersionAction)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_with_a_default_states_it(name):
    missing = [a.option_strings[0] for a in COMMANDS[name]._actions
               if a.option_strings and a.help != argparse.SUPPRESS and not isinstance(a, _NO_VALUE)
               and a.default is not None and a.default is not False and "default" not in (a.help or "")]
    assert missing == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_model_and_mapping_are_described_once(name):
    for a in COMMANDS[name]._actions:
        if not a.option_strings and a.dest in ("model", "models"):
            assert MODEL_HELP in a.help, a.dest
        if a.dest == "mapping":
            assert a.help == MAPPING_HELP and a.metavar == "FILE"


def test_model_help_names_every_packaged_checkpoint():
    assert all(name in MODEL_HELP for name in PACKAGED_CHECKPOINTS)
    assert sum(not a.option_strings and a.dest in ("model", "models") for c in COMMANDS.values()
               for a in c._actions) >= 4
