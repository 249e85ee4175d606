"""``certbound spectrum MODEL``: certified spectra of every matrix the theory uses.

For each layer ℓ and head h of a checkpoint (see :mod:`certbound.checkpoints`
for which matrices and how they are sliced) this certifies all singular values
(per-head QK/VO through the product path, never formed) and reports σ₁,
‖·‖_F, ‖·‖_*, ‖·‖_{2,1}, S_p at a few p and certified rank bounds, as a table,
and optionally as JSON (``--json``) and CSV (``--csv``). Output files are
written atomically after everything is computed, so an error leaves none;
with ``--json`` each record is also appended to a records file as soon as it
is certified, so ``--resume`` continues an interrupted run.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from certbound.ball import ball_from_json, decimal_upper
from certbound.pipeline import parse_schatten_indices, spectrum_run, spectrum_store_settings
from certbound.pipeline._results import matrix_type_label, spectrum_csv_rows
from certbound.pipeline._streaming import MemoryRecordStore, RecordStore, stage_report_json
from certbound.report.table import format_table
from certbound._commands._options import (
    LAYERS_HELP,
    MAPPING_HELP,
    MODEL_HELP,
    STDOUT,
    add_spectrum_mode_option,
    parse_layers,
    write_outputs,
)
from certbound.report.writers import check_output_path, csv_text, json_text

__all__ = ["NAME", "HELP", "add_arguments", "run", "format_report_table"]

NAME = "spectrum"
HELP = "certify the singular values of every QK/VO head and FFN matrix of a checkpoint"

_DEFAULT_P = "0.5,1,2"
_TABLE_DIGITS = 6


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``certbound spectrum``'s arguments to its parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser (made by :func:`certbound.cli.build_parser`).
    """
    parser.add_argument("model", help=MODEL_HELP)
    parser.add_argument("--json", metavar="FILE", help="write the full report (every σᵢ) as JSON ('-' for stdout)")
    parser.add_argument("--csv", metavar="FILE", help="write one row per matrix as CSV ('-' for stdout)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel worker processes (default 1)")
    add_spectrum_mode_option(parser, deprecated_alias="--mode")  # the certificate used: each record's "mode"
    parser.add_argument("--raw", action="store_true", help="also certify the raw per-layer W_Q, W_K, W_V, W_O")
    parser.add_argument("--scale-logits", action="store_true",
                        help="fold the attention logit scale 1/sqrt(d_h) into QK")
    parser.add_argument("--p", default=_DEFAULT_P, metavar="P,P,...",
                        help=f"Schatten indices p in (0, 2] to report S_p for (default {_DEFAULT_P}; "
                             "decimals/fractions are taken exactly)")
    parser.add_argument("--layers", metavar="L,L,...", help=LAYERS_HELP)
    parser.add_argument("--config", metavar="FILE", help="config.json to use instead of the one next to the weights")
    parser.add_argument("--mapping", metavar="FILE", help=MAPPING_HELP)
    parser.add_argument("--quiet", action="store_true", help="do not print the table")
    parser.add_argument("--records", metavar="FILE",
                        help="append each certified matrix's record to this JSON Lines file as it is done "
                             "(default with --json: FILE.records.jsonl next to it, removed after success)")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the records file of an interrupted run: matrices whose record certified "
                             "the same exact values (sha256 checked) are not certified again")
    parser.add_argument("--dask", metavar="ADDRESS",
                        help="certify on a Dask cluster: a scheduler address (tcp://host:8786) or 'local' for a "
                             "LocalCluster of --jobs worker processes; workers read the model from the same path "
                             "(needs certbound[dask])")


def _shorten_upper(q: dict[str, Any]) -> str:
    """An upper bound with fewer digits, rounded up again (never below the certified upper end)."""
    return decimal_upper(ball_from_json(q), _TABLE_DIGITS)


def format_report_table(report: dict[str, Any]) -> str:
    """The human-readable table: certified *upper* bounds, rounded up.

    Parameters
    ----------
    report : dict
        A ``certbound spectrum`` report (as ``--json`` writes it).

    Returns
    -------
    str
        The table text.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from certbound.ball import upper_fraction, ball_from_json
    >>> from certbound.models import demo_checkpoint_path
    >>> from certbound.pipeline import spectrum_run
    >>> report = spectrum_run(demo_checkpoint_path(), include_sigma=False).report()
    >>> lines = format_report_table(report).splitlines()
    >>> header = next(i for i, line in enumerate(lines) if line.startswith("layer"))
    >>> rows = lines[header + 2:header + 2 + len(report["matrices"])]
    >>> [row.split()[2] for row in rows]
    ['QK', 'VO', 'M_in', 'M_out', 'readout']
    >>> all(Fraction(row.split()[4]) >= upper_fraction(ball_from_json(r["spectral_norm"]))  # rounded up
    ...     for row, r in zip(rows, report["matrices"]))
    True
    """
    ps = report["options"]["p"]
    header = ["layer", "head", "type", "shape", "sigma1<=", "fro<=", *[f"S_{p}<=" for p in ps], "rank"]
    rows = []
    for r in report["matrices"]:
        rk = r["rank"]
        rank = str(rk["lower"]) if rk["lower"] == rk["upper"] else f"[{rk['lower']}, {rk['upper']}]"
        rows.append([r["layer"], r["head"], matrix_type_label(r) + ("" if r["certified"] else "*"),
                     f"{r['shape'][0]}x{r['shape'][1]}", _shorten_upper(r["spectral_norm"]),
                     _shorten_upper(r["frobenius_norm"]), *[_shorten_upper(r["schatten"][p]) for p in ps], rank])
    c = report["config"]
    head = (f"{report['model']}\n{c['architecture']}: {c['num_layers']} layers, width {c['hidden_size']}, "
            f"{c['num_heads']} heads of {c['head_dim']}, "
            + (f"{c['num_key_value_heads']} key/value heads, " if c.get("num_key_value_heads") else "")
            + ("encoder-decoder (layers numbered encoder first), " if len(c.get("stacks", [])) > 1 else "")
            + ("variant P (one FFN matrix M)" if c.get("ffn_kind") == "single" else f"FFN {c['intermediate_size']}")
            + ("; QK includes the 1/sqrt(d_h) logit scale" if report["options"]["scale_logits"] else "")
            + "\nAll numbers are certified upper bounds (rounded up); rank = certified bounds.")
    foot = "\n* = certificate failed; the trivial enclosure [0, inf] is reported" \
        if any(not r["certified"] for r in report["matrices"]) else ""
    return head + "\n\n" + format_table(rows, header) + foot


def run(args: argparse.Namespace) -> int:
    """Run ``certbound spectrum`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments :func:`add_arguments` defines.

    Returns
    -------
    int
        The exit status: 0 on success.

    Raises
    ------
    ValueError, OSError
        For bad options or files; :func:`certbound.cli.main` prints them as
        ``certbound: error: …`` (exit status 2).
    """
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, not {args.jobs}")
    ps = parse_schatten_indices(args.p)
    layers = parse_layers(args.layers)
    # Fail before the (long) computation if an output cannot be written.
    check_output_path(args.json, "--json")
    check_output_path(args.csv, "--csv")
    if args.records == STDOUT:
        raise ValueError("--records: the records file must be a file (it is appended to and read back on --resume)")
    to_file = bool(args.json) and args.json != STDOUT
    records_path = args.records or (args.json + ".records.jsonl" if to_file else None)
    if args.resume and records_path is None:
        raise ValueError("--resume needs the records file of the interrupted run: give --json FILE "
                         "(its records are FILE.records.jsonl) or --records FILE")
    check_output_path(records_path, "--records")
    include_sigma = bool(args.json)
    if records_path is None:
        store = MemoryRecordStore()
    else:
        try:
            store = RecordStore(records_path, spectrum_store_settings(args.spectrum_mode, ps, include_sigma),
                                resume=args.resume)
        except OSError as exc:
            if args.records or exc.strerror is None:
                raise
            # The records file is one the user did not name: say where it comes from.
            raise type(exc)(exc.errno, f"{exc.strerror} (the records file of --json {args.json!r}; "
                                       "choose another place with --records FILE)", records_path) from None
    try:
        run = spectrum_run(args.model, spectrum_mode=args.spectrum_mode, raw=args.raw,
                           scale_logits=args.scale_logits, ps=ps, layers=layers, jobs=args.jobs, config=args.config, mapping=args.mapping,
                           include_sigma=include_sigma, progress=True, store=store, dask=args.dask)
        if args.resume:
            print(f"certbound spectrum: resumed from {records_path}: {store.reused} matrices reused (same sha256), "
                  f"{store.added} certified", file=sys.stderr)
        # The table and CSV need no σ lists: a small in-memory report; the JSON streams from the store.
        report = run.report(include_sigma=False)
        outputs = []
        if args.csv:
            header, rows = spectrum_csv_rows(report)
            outputs.append((args.csv, csv_text(rows, header)))
        # All-or-nothing as write_all: the JSON is streamed into a staged file first ('-': stdout, in memory).
        staged = stage_report_json(args.json, run.head, run.records()) if to_file else None
        if args.json == STDOUT:
            outputs.append((STDOUT, json_text(run.report())))
    except BaseException:
        store.close()
        if records_path is not None and not args.resume and store.added == 0:
            os.unlink(records_path)  # nothing certified: no records file worth keeping
        elif records_path is not None:
            # Say what the file left behind is (the outputs themselves were not written).
            print(f"certbound spectrum: kept the {store.added} record(s) certified before the error in "
                  f"{records_path} (--resume reuses them; delete it otherwise); no --json/--csv file written",
                  file=sys.stderr)
        raise
    store.close()
    try:
        to_stdout = write_outputs(outputs)
    except BaseException:
        if staged is not None:
            staged.discard()
        raise
    if staged is not None:
        staged.commit()
    if records_path is not None and not args.records:
        os.unlink(records_path)  # the JSON holds everything now
    if not args.quiet and not to_stdout:
        print(format_report_table(report))
    failed = [r for r in report["matrices"] if not r["certified"]]
    if failed:
        print(f"certbound spectrum: warning: {len(failed)} certificate(s) failed (trivial enclosures reported)",
              file=sys.stderr)
    return 0
