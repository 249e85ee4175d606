"""Option parsers shared by several commands (one meaning of each option everywhere)."""

from __future__ import annotations

import argparse

from certbound.pipeline import DEFAULT_SPECTRUM_MODE, SPECTRUM_MODES

__all__ = ["LAYERS_HELP", "SPECTRUM_MODE_HELP", "add_spectrum_mode_option", "parse_layers", "prefix_depth"]

#: The one meaning of ``--layers``: 0-based layer indices.
LAYERS_HELP = "only these layers: 0-based indices, comma-separated (e.g. 0,5) or a range a-b (e.g. 0-3)"

#: The one help text of the certificate-mode option (``--mode``; ``--spectrum-mode`` in ``bound``/``covering``).
SPECTRUM_MODE_HELP = ("certificate mode of the singular-value kernel (default auto: per matrix the cheapest "
                      "certificate with sigma widths <= 1e-8 relative (Gram-matrix certificate for dense matrices, "
                      "Gram-factor route for heads), else fast; every mode is certified)")


def parse_layers(text: str | None, option: str = "--layers") -> list[int] | None:
    """``"0,5"`` → ``[0, 5]``; ``"0-3"`` → ``[0, 1, 2, 3]``; ``None``/``""`` → ``None`` (all layers).

    >>> parse_layers("0,5"), parse_layers("1-3"), parse_layers(None)
    ([0, 5], [1, 2, 3], None)
    >>> parse_layers("x")
    Traceback (most recent call last):
    ...
    ValueError: --layers: 'x' is not a list of 0-based layer indices (e.g. 0,5 or 0-3)
    """
    if not text:
        return None
    out: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part[1:]:
                a, b = (int(v) for v in part.split("-", 1))
                if a > b:
                    raise ValueError
                out.extend(range(a, b + 1))
            else:
                out.append(int(part))
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not a list of 0-based layer indices (e.g. 0,5 or 0-3)") from None
    if any(i < 0 for i in out):
        raise ValueError(f"{option}: layer indices are 0-based and nonnegative, got {text!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"{option}: {text!r} repeats a layer")
    return sorted(out)


def prefix_depth(layers: list[int] | None, option: str = "--layers") -> int | None:
    """The depth K of a prefix ``0..K-1`` (what the proxies of a sub-network need), or ``None`` for all layers.

    >>> prefix_depth([0, 1, 2])
    3
    >>> prefix_depth([0, 2])
    Traceback (most recent call last):
    ...
    ValueError: --layers: the proxies are defined for a prefix sub-network 0..K-1; got [0, 2] (e.g. --layers 0-1)
    """
    if layers is None:
        return None
    if layers != list(range(len(layers))):
        raise ValueError(f"{option}: the proxies are defined for a prefix sub-network 0..K-1; got {layers} "
                         f"(e.g. --layers 0-{max(len(layers) - 1, 0)})")
    return len(layers)


def add_spectrum_mode_option(parser: argparse.ArgumentParser, flag: str = "--mode") -> None:
    """The certificate-mode option of every command that certifies a spectrum: one set of modes, one default.

    ``flag`` is ``--mode``, or ``--spectrum-mode`` where ``--mode`` means something else (``bound``).

    >>> p = argparse.ArgumentParser()
    >>> add_spectrum_mode_option(p)
    >>> p.parse_args([]).mode, p.parse_args(["--mode", "gram"]).mode
    ('auto', 'gram')
    """
    parser.add_argument(flag, choices=SPECTRUM_MODES, default=DEFAULT_SPECTRUM_MODE, help=SPECTRUM_MODE_HELP)
