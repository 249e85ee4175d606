"""Atomic output files: text, JSON and CSV.

Every report file certbound writes goes through this module so that a failed
or interrupted run never leaves a partial file behind: the content is written
to a temporary file in the *same directory* (so the final rename stays on one
file system), flushed and fsync'ed, and then moved over the target with
:func:`os.replace`, which is atomic on POSIX and Windows. On any error the
temporary file is removed and the target is untouched.

Examples
--------
>>> import json, os, tempfile
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "out.json")
>>> write_json(p, {"a": 1})
>>> json.load(open(p))
{'a': 1}
>>> sorted(os.listdir(d))
['out.json']
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import tempfile
from typing import IO, Any, Iterable, Iterator, Sequence

__all__ = [
    "atomic_open",
    "atomic_write_text",
    "atomic_write_bytes",
    "write_json",
    "json_text",
    "write_csv",
    "csv_text",
    "check_output_path",
    "write_all",
    "stage_tempfile",
    "set_usual_permissions",
]


def _current_umask() -> int:
    # os.umask can only be read by setting it; restore immediately.
    mask = os.umask(0)
    os.umask(mask)
    return mask


def stage_tempfile(path: str) -> tuple[int, str]:
    """Create the temporary file that will replace ``path``: ``(fd, name)``, in ``path``'s directory.

    Refuses a missing directory or a ``path`` that is a directory, naming it.
    The caller writes and fsyncs through ``fd``, calls
    :func:`set_usual_permissions`, then ``os.replace(name, path)`` (or removes
    ``name`` on failure).

    Parameters
    ----------
    path : str
        The file the staged one will replace.

    Returns
    -------
    tuple of (int, str)
        An open file descriptor and the temporary file's name (in ``path``'s directory).

    Raises
    ------
    FileNotFoundError
        If ``path``'s directory does not exist.
    IsADirectoryError
        If ``path`` is a directory.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> fd, tmp = stage_tempfile(os.path.join(d, "x.txt")); os.close(fd)
    >>> os.path.dirname(tmp) == d, os.path.basename(tmp).startswith(".x.txt.")
    (True, True)
    >>> stage_tempfile("/")
    Traceback (most recent call last):
    ...
    IsADirectoryError: cannot write /: it is a directory
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot write {path}: it is a directory")
    return tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")


def set_usual_permissions(tmp: str) -> None:
    """Give a staged file the usual ``0o666 & ~umask`` permissions (``mkstemp`` makes it private, ``0o600``).

    Parameters
    ----------
    tmp : str
        The staged file (from :func:`stage_tempfile`).

    Examples
    --------
    >>> import os, stat, tempfile
    >>> fd, tmp = stage_tempfile(os.path.join(tempfile.mkdtemp(), "x.txt")); os.close(fd)
    >>> oct(stat.S_IMODE(os.stat(tmp).st_mode))
    '0o600'
    >>> set_usual_permissions(tmp)
    >>> stat.S_IMODE(os.stat(tmp).st_mode) == 0o666 & ~_current_umask()
    True
    """
    os.chmod(tmp, 0o666 & ~_current_umask())


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8",
                newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file that replaces ``path`` only if the block succeeds.

    ``mode`` is ``"w"`` (text) or ``"wb"`` (bytes). The target directory must
    exist (an ``OSError`` naming it is raised otherwise). The final file gets
    the usual permissions ``0o666 & ~umask`` (a plain temporary file would be
    private, ``0o600``).

    Parameters
    ----------
    path : str or path
        The target file.
    mode : {"w", "wb"}
        Text or bytes.
    encoding : str, optional
        Text encoding (``"utf-8"``; ignored for bytes).
    newline : str, optional
        Passed to :func:`open` (``""``: no newline translation).

    Yields
    ------
    file object
        The temporary file; ``path`` is replaced when the block ends without an error.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> try:
    ...     with atomic_open(p) as f:
    ...         _ = f.write("partial")
    ...         raise RuntimeError("boom")
    ... except RuntimeError:
    ...     pass
    >>> os.path.exists(p), os.listdir(os.path.dirname(p))
    (False, [])
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode must be 'w' or 'wb', not {mode!r}")
    path = os.fspath(path)
    fd, tmp = stage_tempfile(path)
    try:
        if "b" in mode:
            f: IO[Any] = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        set_usual_permissions(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_output_path(path: str | os.PathLike[str] | None, option: str) -> None:
    """Refuse, before any work, an output path that cannot be written (``None`` and ``"-"`` pass).

    The message names the option, the path and the problem.

    Parameters
    ----------
    path : str or path, optional
        The output file (``None``, ``""`` or ``"-"``: nothing to check).
    option : str
        The option named in the message (``"--json"``).

    Raises
    ------
    FileNotFoundError
        If the directory does not exist.
    IsADirectoryError
        If ``path`` is a directory.
    PermissionError
        If the directory, or an existing file at ``path``, is not writable.

    Examples
    --------
    >>> check_output_path("/nonexistent-dir/x.json", "--json")
    Traceback (most recent call last):
    ...
    FileNotFoundError: --json: cannot write '/nonexistent-dir/x.json': directory /nonexistent-dir does not exist
    """
    if path is None or os.fspath(path) in ("", "-"):
        return
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{option}: cannot write {path!r}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{option}: cannot write {path!r}: it is a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise PermissionError(f"{option}: cannot write {path!r}: directory {directory} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise PermissionError(f"{option}: cannot write {path!r}: the file is not writable")


def write_all(files: Sequence[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several files all-or-nothing: every one is staged first, then all are renamed into place.

    If staging any file fails, no target is touched. (The renames themselves
    are atomic per file and happen only after every file has been written
    and flushed.)

    Parameters
    ----------
    files : sequence of (path, str or bytes)
        Targets and their contents (text is written as UTF-8).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> try:
    ...     write_all([(os.path.join(d, "a.txt"), "A"), (os.path.join(d, "no", "b.txt"), "B")])
    ... except OSError:
    ...     pass
    >>> os.listdir(d)
    []
    >>> write_all([(os.path.join(d, "a.txt"), "A"), (os.path.join(d, "b.txt"), b"B")])
    >>> sorted(os.listdir(d))
    ['a.txt', 'b.txt']
    """
    staged: list[tuple[str, str]] = []
    try:
        for path, data in files:
            path = os.fspath(path)
            fd, tmp = stage_tempfile(path)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
            set_usual_permissions(tmp)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically.

    Parameters
    ----------
    path : str or path
        The target file.
    text : str
        Its content (newlines written as given).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.txt")
    >>> atomic_write_text(p, "hello\\n")
    >>> open(p).read()
    'hello\\n'
    """
    with atomic_open(path, "w", newline="") as f:
        f.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically.

    Parameters
    ----------
    path : str or path
        The target file.
    data : bytes
        Its content.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "b.bin")
    >>> atomic_write_bytes(p, bytes([0, 255]))
    >>> open(p, "rb").read()
    b'\\x00\\xff'
    """
    with atomic_open(path, "wb", encoding=None) as f:
        f.write(data)


def _check_finite(obj: Any, where: str = "$") -> None:
    # json.dumps(allow_nan=False) also refuses NaN/inf, but without saying
    # where; a report with a NaN is a bug upstream, so name the place.
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"refusing to write non-finite number {obj!r} at {where} into JSON")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _check_finite(v, f"{where}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _check_finite(v, f"{where}[{i}]")


def json_text(obj: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text (no NaN/Infinity, which JSON does not allow), newline-terminated.

    Certified bounds that are infinite are written as the *strings*
    ``"inf"``/``"-inf"`` by :func:`certbound.ball.ball_to_json`, never as floats.

    Parameters
    ----------
    obj : object
        JSON-serialisable data.
    indent : int, optional
        Indentation (``None``: one line).

    Returns
    -------
    str
        The JSON text and a newline.

    Raises
    ------
    ValueError
        For a NaN or infinite float, naming where it is (``$.a[2]``).

    Examples
    --------
    >>> json_text({"x": [1, 2.5]}, indent=None)
    '{"x": [1, 2.5]}\\n'
    >>> json_text({"x": float("nan")})
    Traceback (most recent call last):
    ...
    ValueError: refusing to write non-finite number nan at $.x into JSON
    """
    _check_finite(obj)
    return json.dumps(obj, indent=indent, allow_nan=False, ensure_ascii=False) + "\n"


def write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    """Serialise ``obj`` as strict JSON and write it to ``path`` atomically.

    The text is produced completely *before* the file is touched, so a
    serialisation error leaves no file behind.

    Parameters
    ----------
    path : str or path
        The target file.
    obj : object
        JSON-serialisable data (:func:`json_text`).
    indent : int, optional
        Indentation.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json")
    >>> write_json(p, {"x": float("inf")})
    Traceback (most recent call last):
    ...
    ValueError: refusing to write non-finite number inf at $.x into JSON
    >>> os.path.exists(p)
    False
    """
    atomic_write_text(path, json_text(obj, indent=indent))


def csv_text(rows: Iterable[Sequence[Any] | dict[str, Any]], header: Sequence[str]) -> str:
    """CSV text (RFC 4180, ``\\r\\n`` line ends) with a header line.

    Rows are sequences in header order or dicts keyed by header names (a
    missing key is an error, so a typo cannot silently produce an empty
    column). ``None`` becomes an empty field.

    Parameters
    ----------
    rows : iterable of sequences or dicts
        The data rows.
    header : sequence of str
        Column names.

    Returns
    -------
    str
        The CSV text, header first.

    Raises
    ------
    ValueError
        For a row of the wrong length, or a dict row with a missing or unknown column.

    Examples
    --------
    >>> csv_text([[1, "a,b"], {"n": 2, "s": None}], ["n", "s"]).splitlines()
    ['n,s', '1,"a,b"', '2,']
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    header = list(header)
    w.writerow(header)
    for i, row in enumerate(rows):
        if isinstance(row, dict):
            extra = set(row) - set(header)
            if extra:
                raise ValueError(f"CSV row {i} has columns not in the header: {sorted(extra)}")
            try:
                row = [row[h] for h in header]
            except KeyError as exc:
                raise ValueError(f"CSV row {i} lacks column {exc.args[0]!r}") from None
        else:
            row = list(row)
            if len(row) != len(header):
                raise ValueError(f"CSV row {i} has {len(row)} fields, header has {len(header)}")
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def write_csv(path: str | os.PathLike[str], rows: Iterable[Sequence[Any] | dict[str, Any]],
              header: Sequence[str]) -> None:
    """Write rows as CSV (see :func:`csv_text`) to ``path`` atomically.

    Parameters
    ----------
    path : str or path
        The target file.
    rows : iterable of sequences or dicts
        The data rows.
    header : sequence of str
        Column names.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> write_csv(p, [[1, 2]], ["a", "b"])
    >>> open(p, newline="").read()
    'a,b\\r\\n1,2\\r\\n'
    """
    atomic_write_text(path, csv_text(rows, header))
