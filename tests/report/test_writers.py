"""Atomic writers: complete files or nothing, strict JSON, faithful CSV."""

import csv
import io
import json
import os
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from certbound.report.writers import (
    atomic_open,
    atomic_write_bytes,
    atomic_write_text,
    csv_text,
    json_text,
    write_csv,
    write_json,
)


def test_text_round_trip_and_no_temp_left(tmp_path):
    p = tmp_path / "a.txt"
    atomic_write_text(p, "x\r\ny\n\u03c3")
    assert p.read_bytes() == "x\r\ny\n\u03c3".encode()
    assert os.listdir(tmp_path) == ["a.txt"]


def test_bytes_round_trip(tmp_path):
    p = tmp_path / "b.bin"
    atomic_write_bytes(p, b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"


def test_failure_keeps_old_content_and_leaves_no_temp(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_open(p) as f:
            f.write("new partial")
            raise RuntimeError("fail mid-write")
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]


def test_unserialisable_json_writes_nothing(tmp_path):
    p = tmp_path / "r.json"
    with pytest.raises(ValueError, match=r"\$\.m\[1\]"):
        write_json(p, {"m": [1.0, float("inf")]})
    with pytest.raises(TypeError):
        write_json(p, {"m": object()})
    assert os.listdir(tmp_path) == []


def test_missing_directory_is_oserror_naming_it(tmp_path):
    p = tmp_path / "nope" / "r.csv"
    with pytest.raises(OSError, match="nope"):
        write_csv(p, [], ["a"])


def test_permissions_follow_umask_not_tempfile_private(tmp_path):
    old = os.umask(0o022)
    try:
        p = tmp_path / "perm.txt"
        atomic_write_text(p, "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(p.stat().st_mode) == 0o644


def test_json_strict_and_newline():
    assert json.loads(json_text({"a": [1, 2.5, "inf"]})) == {"a": [1, 2.5, "inf"]}
    assert json_text({}).endswith("\n")
    with pytest.raises(ValueError, match="nan"):
        json_text([float("nan")])


@given(st.lists(st.tuples(st.integers(), st.text(alphabet=st.characters(blacklist_categories=("Cs",)),
                                                   max_size=8)), max_size=6))
def test_csv_round_trips_through_the_csv_reader(rows):
    text = csv_text(rows, ["n", "s"])
    back = list(csv.reader(io.StringIO(text, newline="")))
    assert back[0] == ["n", "s"]
    assert back[1:] == [[str(n), s] for n, s in rows]


def test_csv_dict_rows_and_errors(tmp_path):
    p = tmp_path / "t.csv"
    write_csv(p, [{"a": 1, "b": None}], ["a", "b"])
    assert p.read_bytes() == b"a,b\r\n1,\r\n"
    with pytest.raises(ValueError, match="lacks column 'b'"):
        csv_text([{"a": 1}], ["a", "b"])
    with pytest.raises(ValueError, match="not in the header"):
        csv_text([{"a": 1, "b": 2, "c": 3}], ["a", "b"])
    with pytest.raises(ValueError, match="3 fields"):
        csv_text([[1, 2, 3]], ["a", "b"])


# ----------------------------------------------------------------------------- plain-text tables

from certbound.report.table import format_table  # noqa: E402


def test_table_alignment_and_no_trailing_spaces():
    t = format_table([["QK", "1.5", None], ["M_in", "12.25", "x"]], ["type", "s1", "note"])
    lines = t.split("\n")
    assert lines[0] == "type     s1  note"
    assert lines[1] == "----  -----  ----"
    assert lines[2] == "QK      1.5  -"
    assert lines[3] == "M_in  12.25  x"
    assert all(line == line.rstrip() for line in lines)


def test_table_row_length_checked():
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        format_table([["a"]], ["x", "y"])
    with pytest.raises(ValueError, match="align"):
        format_table([["a"]], ["x"], align=["^"])
