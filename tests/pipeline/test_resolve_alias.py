"""``resolve_model_name`` (what a model argument names) and its deprecated old name ``resolve_packaged_name``."""

from __future__ import annotations

import os
import warnings

import pytest

import certbound.pipeline as pipeline
from certbound.pipeline import resolve_model, resolve_model_name, resolve_packaged_name


def test_an_existing_path_and_an_unknown_name_pass_through(tmp_path):
    d = str(tmp_path / "model")
    os.mkdir(d)
    assert resolve_model_name(d) == d
    assert resolve_model_name(tmp_path / "model") == d  # path-like
    assert resolve_model_name("no/such/dir/x") == "no/such/dir/x"
    with pytest.raises(FileNotFoundError, match="no/such/dir/x: no such file or directory"):
        resolve_model("no/such/dir/x")


def test_a_packaged_name_gives_its_directory():
    from certbound.checkpoints import find_packaged_checkpoint

    try:
        where = str(find_packaged_checkpoint("all-MiniLM-L6-v2"))
    except LookupError as exc:
        pytest.skip(f"packaged checkpoint unavailable: {exc}")
    assert resolve_model_name("all-MiniLM-L6-v2") == where
    assert resolve_model_name("sentence-transformers/all-MiniLM-L6-v2") == where


def test_the_old_name_warns_and_gives_the_same_result(tmp_path):
    for arg in (str(tmp_path), "no/such/dir/x"):
        with pytest.warns(DeprecationWarning, match="use resolve_model_name") as rec:
            got = resolve_packaged_name(arg)
        assert got == resolve_model_name(arg)
        assert rec[0].filename == __file__  # the warning points at the caller


def test_the_new_name_does_not_warn_and_both_are_exported(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve_model_name(str(tmp_path))
    assert {"resolve_model_name", "resolve_packaged_name", "resolve_model"} <= set(pipeline.__all__)
